// SPDX-License-Identifier: MIT
/*
 * libwafer: the trace of a real run (wafer_trace_attach()).  The jobs of
 * one wafer_run_positions() call get WAFER_JOB_TIMES: the firmware writes
 * each chunk's modelled start, end and hop out on every stage into the
 * job's output (the same records on both backends: the device writes
 * them), in a buffer of the trace's own after the results, which go back
 * to where the caller wanted them.  Host wall time from submission to
 * completion is a process of the trace (WAFER_TRACE_HOST_PID).
 *
 * A model split over a pipeline's devices: process k is member k, its
 * records those the pipeline gathered from it (wafer_pipe_times.c).  The
 * members' clocks are one timeline, member 0's: the others take each
 * chunk at the modelled time its activation records arrive over the link
 * (their stages start at 0 when the model loads), so a chunk's link hop
 * out of one device ends where the next device may start it.  What the
 * first device does not know is when the host got the last device's
 * result: a job that waited for it (the next token of a decode loop)
 * starts there as soon as the device's own part of the previous job is
 * done, overlapping the later devices' parts in the trace as in the
 * modelled time.
 *
 * Attention-FFN disaggregation (wafer_open_afd()): process k is member k
 * again, each record one layer part of a micro-batch (wafer_afd_times.c)
 * with its link hop to the other group, on one timeline.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wafer_backend.h"

/**
 * struct wafer_trace_job - one traced job
 * @out: where the caller wanted its results
 * @out_offset: ... and at which offset
 * @off: where they are in the trace's buffer; its times follow
 * @res_len: bytes of its results
 * @times_len: bytes for its times
 * @pos0: its first position
 * @n_tokens: its tokens
 * @no: its number in the trace
 * @t_sub: host ns at submission
 * @t_done: host ns at completion (0: not reaped)
 * @device_ns: its modelled time, as its completion said
 */
struct wafer_trace_job {
	struct wafer_bo *out;
	uint64_t out_offset, off, res_len;
	uint32_t times_len;
	unsigned int pos0, n_tokens, no;
	uint64_t t_sub, t_done, device_ns;
};

/*
 * Process @pid: member @m's stages, each with its hops; of an AFD member
 * (@afd: wafer_afd_times.c), its layer parts and their link hops.
 */
static void name_device(struct wafer_trace *t, unsigned int pid, const struct wafer_dev *m,
			int afd)
{
	char name[64];
	unsigned int s;

	snprintf(name, sizeof(name), "device %d (%s, modelled ns)", m->index < 0 ? 0 : m->index,
		 m->info.profile_name);
	if (afd)
		snprintf(name, sizeof(name), "AFD member %u (%s, modelled ns)", pid,
			 m->info.profile_name);
	wafer_trace_name(t, pid, -1, name);
	if (afd) {	/* a record per layer part, on the member's first stage */
		wafer_trace_name(t, pid, 0, "layer parts (one layer's attention or FFN a job)");
		wafer_trace_name(t, pid, 1, "link to the other group");
		return;
	}
	for (s = 0; s < m->info.stages; s++) {
		snprintf(name, sizeof(name), "stage %u", s);
		wafer_trace_name(t, pid, (int)(2 * s), name);
		snprintf(name, sizeof(name), "stage %u hop out", s);
		wafer_trace_name(t, pid, (int)(2 * s + 1), name);
	}
}

int wafer_trace_attach(struct wafer_dev *dev, struct wafer_trace *t)
{
	unsigned int k, n;

	if (!dev)
		return wafer_set_error(-EINVAL, "wafer_trace_attach: no device");
	dev->trace = t;
	if (!t)
		return 0;
	n = wafer_pipe_size(dev);
	for (k = 0; k < n; k++)
		name_device(t, k, wafer_pipe_member(dev, k), !strcmp(dev->ops->name, "afd"));
	wafer_trace_name(t, WAFER_TRACE_HOST_PID, -1, "host: libwafer wall time");
	wafer_trace_name(t, WAFER_TRACE_HOST_PID, 0, "jobs, submit to completion");
	return 0;
}

/* The member (process) of the pipeline's stage *@stage; *@stage becomes its own. */
static unsigned int stage_member(struct wafer_dev *dev, uint32_t *stage)
{
	unsigned int k, n = wafer_pipe_size(dev);
	const struct wafer_dev *m;

	for (k = 0; k + 1 < n; k++) {
		m = wafer_pipe_member(dev, k);
		if (*stage < m->info.stages)
			break;
		*stage -= m->info.stages;
	}
	return k;
}

static uint64_t res_len(const struct wafer_job *j)
{
	return (uint64_t)((j->flags & WAFER_JOB_ALL_POSITIONS) ? j->n_tokens : 1) *
	       WAFER_RESULT_SIZE(j->top_k);
}

int wafer_trace_run_begin(struct wafer_dev *dev, struct wafer_job *j, unsigned int n,
			  struct wafer_trace_run *tr)
{
	uint64_t total = 0, now;
	unsigned int i;
	int ret;

	memset(tr, 0, sizeof(*tr));
	if (!dev->trace)
		return 0;
	tr->jobs = calloc(n, sizeof(*tr->jobs));
	if (!tr->jobs)
		return wafer_set_error(-ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		struct wafer_trace_job *t = &tr->jobs[i];

		t->out = j[i].out;
		t->out_offset = j[i].out_offset;
		t->res_len = res_len(&j[i]);
		t->times_len = (uint32_t)wafer_times_len(dev, j[i].n_tokens);
		t->off = total;
		total += t->res_len + t->times_len;
	}
	ret = wafer_bo_create(dev, total, &tr->bo);
	if (ret) {
		free(tr->jobs);
		tr->jobs = NULL;
		return ret;
	}
	memset(wafer_bo_map(tr->bo), 0, total);
	tr->dev = dev;
	tr->n = n;
	wafer_trace_host_t0(dev->trace);
	now = wafer_now_ns();
	for (i = 0; i < n; i++) {
		struct wafer_trace_job *t = &tr->jobs[i];

		j[i].out = tr->bo;
		j[i].out_offset = t->off;
		j[i].flags |= WAFER_JOB_TIMES;
		j[i].times_offset = (uint32_t)t->res_len;
		j[i].times_len = t->times_len;
		t->pos0 = j[i].start_pos;
		t->n_tokens = j[i].n_tokens;
		t->no = wafer_trace_next_job(dev->trace);
		t->t_sub = now;
	}
	return 0;
}

void wafer_trace_run_done(struct wafer_trace_run *tr, const struct wafer_completion *c)
{
	if (!tr->jobs || c->user_data >= tr->n)
		return;
	tr->jobs[c->user_data].t_done = wafer_now_ns();
	tr->jobs[c->user_data].device_ns = c->device_ns;
}

/* The device's records of one job: each chunk on each stage, and its hop out. */
static int job_events(struct wafer_trace_run *tr, const struct wafer_trace_job *t)
{
	const struct wafer_chunk_time *r = (const void *)((const char *)wafer_bo_map(tr->bo) +
							  t->off + t->res_len);
	unsigned int i, k = t->times_len / sizeof(*r);
	char name[48];
	int ret = 0;

	for (i = 0; i < k && !ret; i++) {
		struct wafer_trace_event e = { .name = name, .pos0 = r[i].pos0,
					       .n_tokens = r[i].n_tokens, .job = t->no };
		uint32_t stage = r[i].stage;

		if (!(r[i].flags & WAFER_CHUNK_VALID))
			continue;
		e.pid = stage_member(tr->dev, &stage);
		snprintf(name, sizeof(name), "job %u: %u+%u", t->no, r[i].pos0, r[i].n_tokens);
		e.cat = "stage";
		e.tid = 2 * stage;
		e.start_ns = r[i].start_ns;
		e.dur_ns = r[i].end_ns - r[i].start_ns;
		ret = wafer_trace_add(tr->dev->trace, &e);
		e.cat = (r[i].flags & WAFER_CHUNK_LINK) ? "link" : "hop";
		e.tid = 2 * stage + 1;
		e.start_ns = r[i].end_ns;
		e.dur_ns = r[i].hop_end_ns - r[i].end_ns;
		if (!ret)
			ret = wafer_trace_add(tr->dev->trace, &e);
	}
	return ret;
}

static int host_event(struct wafer_trace_run *tr, const struct wafer_trace_job *t)
{
	uint64_t t0 = wafer_trace_host_t0(tr->dev->trace);
	char name[48];
	struct wafer_trace_event e = {
		.name = name, .cat = "job", .pid = WAFER_TRACE_HOST_PID, .tid = 0,
		.start_ns = t->t_sub - t0, .dur_ns = t->t_done - t->t_sub, .pos0 = t->pos0,
		.n_tokens = t->n_tokens, .job = t->no, .device_ns = t->device_ns,
	};

	snprintf(name, sizeof(name), "job %u: %u+%u", t->no, t->pos0, t->n_tokens);
	return wafer_trace_add(tr->dev->trace, &e);
}

int wafer_trace_run_end(struct wafer_trace_run *tr, int ok)
{
	const char *src = tr->bo ? wafer_bo_map(tr->bo) : NULL;
	unsigned int i;
	int ret = 0;

	for (i = 0; ok && i < tr->n && !ret; i++) {
		const struct wafer_trace_job *t = &tr->jobs[i];

		memcpy((char *)wafer_bo_map(t->out) + t->out_offset, src + t->off, t->res_len);
		ret = job_events(tr, t);
		if (!ret && t->t_done)
			ret = host_event(tr, t);
	}
	wafer_bo_destroy(tr->bo);
	free(tr->jobs);
	memset(tr, 0, sizeof(*tr));
	return ret;
}
