// SPDX-License-Identifier: MIT
/*
 * `wafer node`: a chain member's jobs.  Records arrive on the incoming
 * link (RDMA WRITE WITH IMMEDIATE into slots the device uses in place: its
 * own BOs where the NIC registers dma-bufs, else udmabuf imports);
 * each is checked (its header against the session's contexts and the
 * part, wnd_check_job()) and its job runs on the device reading its input
 * in the slot in place: token ids on the first member, the previous
 * member's activation records unchanged on the others (the device checks
 * them as strictly as a local user's).  The job writes its output into
 * the outgoing link's slot (activation records, or the results on the
 * last member), which goes on to the next member or the client.
 *
 * The modelled timeline: the first member's job takes the client's floor
 * (WFW_JOB_NOT_BEFORE); every activation record carries the modelled time
 * it arrives, which the next device starts from; the last member asks for
 * its done_ns and sends it with the results, with the first member's
 * start, so the client sees the chain's makespan.
 *
 * On a device without PRIME imports of the slots (in process), the slots'
 * bytes are copied to and from buffers of the device.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wafer_node.h"
#include "backends/wafer_chain.h"

/* A slot of a link as a buffer of the device (kernel: the PRIME import). */
static void slot_bo(struct wnd_session *s, struct wafer_link *l, unsigned int k,
		    struct wafer_bo *bo)
{
	*bo = (struct wafer_bo){ .dev = s->dev, .map = wafer_link_slot(l, k),
				 .size = wafer_link_slot_bytes(l),
				 .handle = wafer_link_slot_bo(l, k) };
}

static int fail(struct wnd_session *s, int err, const char *what)
{
	wnd_tell_error(s, err, "%s: %s", what, wafer_last_error());
	s->failed = 1;
	return err;
}

/* Runs job @hw on the device and waits for it (its timeout, and some). */
static int run_job(struct wnd_session *s, const struct wafer_job_hw *hw,
		   struct wafer_completion *c)
{
	uint64_t end = wafer_now_ns() + ((uint64_t)s->dev->info.job_timeout_ms + 2000) * 1000000;
	int r;

	do
		r = s->dev->ops->submit(s->dev, hw, 1);
	while (r == -EAGAIN && !s->stop && wafer_now_ns() < end);
	if (r < 0)
		return r;
	if (r == 0)
		return wafer_set_error(-EAGAIN, "the device took no job");
	for (;;) {
		r = s->dev->ops->reap(s->dev, c, 1, 1, end);
		if (r == 1)
			return 0;
		if (r < 0)
			return r;
		if (wafer_now_ns() >= end)
			return wafer_set_error(-ETIMEDOUT, "the job did not complete within %u ms",
					       s->dev->info.job_timeout_ms + 2000);
	}
}

/*
 * One record: its job on the device, the output on.  @copy_in/@copy_out:
 * the device's own buffers where it cannot read the slots in place.
 */
static int one_record(struct wnd_session *s, unsigned int k, size_t len,
		      struct wafer_bo *copy_in, struct wafer_bo *copy_out)
{
	const struct wafer_load_hw *p = &s->part;
	uint64_t room = wafer_link_slot_bytes(s->out) - WND_JOB_HDR;
	struct wafer_bo in, out;
	struct wafer_job_hw hw = { 0 };
	struct wafer_completion c = { 0 };
	struct wnd_job j;
	unsigned int o;
	char why[200];
	char *src;
	uint32_t in_bytes = p->embed ? 4 : p->act_size;
	uint64_t out_bytes;
	int r;

	src = wafer_link_slot(s->in, k);
	if (wnd_get_job(src, len, &j, why, sizeof(why)) ||
	    wnd_check_job(&j, s->ctx, WAFER_PIPE_MAX_TOKENS, in_bytes,
			  p->head ? room : (uint64_t)WAFER_PIPE_MAX_TOKENS * p->act_size,
			  why, sizeof(why))) {
		wafer_set_error(-EPROTO, "link from %s: %s", wafer_link_peer(s->in), why);
		return fail(s, -EPROTO, "a bad record");
	}
	out_bytes = p->head ? j.out_len : (uint64_t)j.n_tokens * p->act_size;
	if (!p->head && out_bytes > room) {
		wafer_set_error(-EPROTO, "%u tokens of %u-byte records exceed a slot of %llu",
				j.n_tokens, p->act_size, (unsigned long long)room);
		return fail(s, -EPROTO, "the outgoing link");
	}
	r = wafer_link_acquire(s->out, &o);
	if (r)
		return fail(s, r, "the outgoing link");
	if (!j.status) {
		hw.ctx_id = s->ctx_id[j.ctx - 1];
		hw.slot = j.slot;
		hw.start_pos = j.start_pos;
		hw.n_tokens = j.n_tokens;
		hw.flags = j.flags;
		hw.top_k = j.top_k;
		hw.user_data = j.start_pos;
		slot_bo(s, s->in, k, &in);
		slot_bo(s, s->out, o, &out);
		hw.in = copy_in ? copy_in : &in;
		hw.in_offset = copy_in ? 0 : WND_JOB_HDR;
		hw.out = copy_out ? copy_out : &out;
		hw.out_offset = copy_out ? 0 : WND_JOB_HDR;
		if (p->embed && (s->dev->info.caps & WAFER_CAP_NOT_BEFORE) && !p->head) {
			/* The floor after the ids: the slot has the room. */
			memcpy(src + WND_JOB_HDR + j.payload, &j.floor_ns, sizeof(j.floor_ns));
			hw.flags |= WAFER_JOB_HW_NOT_BEFORE;
		}
		if (!p->embed)
			hw.flags |= WAFER_JOB_HW_IN_ACT;
		if (p->head) {
			hw.out_len = j.out_len;
			if (s->dev->info.caps & WAFER_CAP_NOT_BEFORE)
				hw.flags |= WAFER_JOB_HW_DONE_NS;
		} else {
			hw.out_len = out_bytes;
			hw.flags = (hw.flags & ~WAFER_JOB_ALL_POSITIONS) | WAFER_JOB_HW_OUT_ACT;
			hw.top_k = 0;
		}
		if (copy_in)
			memcpy(copy_in->map, src + WND_JOB_HDR, j.payload +
			       (hw.flags & WAFER_JOB_HW_NOT_BEFORE ? sizeof(uint64_t) : 0));
		r = run_job(s, &hw, &c);
		if (r)
			return fail(s, r, "the device");
		j.status = c.status;
		if (copy_out && !c.status)
			memcpy((char *)wafer_link_slot(s->out, o) + WND_JOB_HDR, copy_out->map,
			       out_bytes);
		if (!c.status && p->embed) {
			uint64_t t = c.done_ns;

			if (!p->head)
				t = wafer_chain_rec_t_ns((char *)wafer_link_slot(s->out, o) +
							 WND_JOB_HDR + (uint64_t)(j.n_tokens - 1) *
							 p->act_size);
			j.start_ns = t >= c.device_ns ? t - c.device_ns : 0;
		}
		if (!c.status && p->head)
			j.done_ns = c.done_ns;
		s->jobs++;
	}
	j.payload = j.status ? 0 : (uint32_t)out_bytes;
	j.floor_ns = 0;
	wnd_put_job(wafer_link_slot(s->out, o), &j);
	r = wafer_link_send(s->out, WND_JOB_HDR + j.payload, 0);
	if (!r)
		r = wafer_link_release(s->in, k, 0);
	return r ? fail(s, r, "a link") : 0;
}

/* Which memory the links' slots are, said once per process (one NIC, one device kind). */
static atomic_int slots_said;

static void *run(void *arg)
{
	struct wnd_session *s = arg;
	struct wafer_link_opts lo = { .timeout_ms = (int)s->start.timeout_ms,
				      .drm_fd = wafer_kernel_fd(s->dev) };
	struct wafer_bo *cin = NULL, *cout = NULL;
	char port[16];
	int r;

	snprintf(port, sizeof(port), "%u", s->start.port);
	r = wafer_link_connect(s->start.host, port, &lo, &s->out);
	if (r) {
		fail(s, r, "connecting the outgoing link");
		return NULL;
	}
	r = wafer_link_accept(s->lis, &s->in);
	if (r) {
		fail(s, r, "accepting the incoming link");
		return NULL;
	}
	wnd_log(s, "links up: from %s, to %s", wafer_link_peer(s->in), wafer_link_peer(s->out));
	if (!atomic_exchange(&slots_said, 1))
		wnd_log(s, "%s", wafer_link_slot_memory(s->in));
	if (lo.drm_fd < 0 &&
	    (wafer_bo_create(s->dev, wafer_link_slot_bytes(s->in), &cin) ||
	     wafer_bo_create(s->dev, wafer_link_slot_bytes(s->out), &cout))) {
		fail(s, -ENOMEM, "buffers for the slots");
		goto out;
	}
	while (!s->stop && !s->failed) {
		unsigned int k;
		size_t len;

		r = wafer_link_poll(s->in, 100);
		if (r == 0)
			continue;
		if (r < 0 || (r = wafer_link_recv(s->in, &k, &len))) {
			fail(s, r, "the incoming link");
			break;
		}
		if (one_record(s, k, len, cin, cout))
			break;
	}
out:
	if (cin)
		wafer_bo_destroy(cin);
	if (cout)
		wafer_bo_destroy(cout);
	return NULL;
}

int wnd_run_start(struct wnd_session *s)
{
	struct wafer_link_opts lo = { .slots = s->start.slots, .slot_bytes = s->start.slot_bytes,
				      .timeout_ms = (int)s->start.timeout_ms,
				      .drm_fd = wafer_kernel_fd(s->dev) };
	int r;

	if (!s->model)
		return wafer_set_error(-EINVAL, "START before a LOAD");
	if (s->running)
		return wafer_set_error(-EBUSY, "START while started (STOP first)");
	r = wafer_link_listen(s->addr ? s->addr : "0.0.0.0", "0", &lo, &s->lis);
	if (r)
		return r;
	s->stop = 0;
	s->failed = 0;
	s->told = 0;
	if (pthread_create(&s->thread, NULL, run, s)) {
		wafer_link_listener_close(s->lis);
		s->lis = NULL;
		return wafer_set_error(-EAGAIN, "no thread for the jobs");
	}
	s->running = 1;
	return wafer_link_listener_port(s->lis);
}

void wnd_run_stop(struct wnd_session *s)
{
	if (!s->running)
		return;
	s->stop = 1;
	pthread_join(s->thread, NULL);
	s->running = 0;
	wafer_link_close(s->in);
	wafer_link_close(s->out);
	wafer_link_listener_close(s->lis);
	s->in = s->out = NULL;
	s->lis = NULL;
}
