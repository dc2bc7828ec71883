// SPDX-License-Identifier: MIT
/*
 * The io_uring submission path: one ring per opened device (a device handle
 * belongs to one thread), SQE128 + CQE32, the device fd registered, every
 * batch queued with one io_uring_submit(), completions read from the CQ
 * without a thread per job: res is the job's status, big_cqe[0] its
 * modelled device time, or its modelled completion time for a job with
 * DRM_WAFER_JOB_DONE_NS.  An SQE's user_data is the index of the
 * command's entry in a table of @cq_entries, which holds the caller's
 * user_data and what big_cqe[0] means.
 *
 * The driver may start commands that are in flight together in any order,
 * so a batch holding two jobs of one sequence slot is linked
 * (IOSQE_IO_LINK) from the first of them to the second: the second starts
 * after the first completed.  Jobs of different slots overlap freely.
 * A command that follows a link is issued when its predecessor completes,
 * long after io_uring_submit() returned and its SQE went back to the ring;
 * io_uring of Linux 6.11-6.13 then reads it from the ring's SQE, which a
 * later batch may have reused.  IOSQE_ASYNC has io_uring copy it at submit
 * (it then runs from an io-wq worker), so such commands carry it.
 *
 * Completions are task work of the thread that submits.  Where the kernel
 * has it (6.1+), the ring is IORING_SETUP_DEFER_TASKRUN: that work runs
 * only when the thread asks for completions, and a thread waiting for N of
 * them is woken once when N are there, not by every job's fence (a wakeup
 * and, on another CPU, an IPI per job otherwise).  It needs
 * IORING_SETUP_SINGLE_ISSUER: the ring is created disabled and enabled by
 * the first submit or reap, so it belongs to the thread that uses the
 * device (a server opens it in one thread and drives it from another).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <liburing.h>

#include "../wafer_internal.h"
#include "wafer_submit.h"

#define URING_ENTRIES	256

/**
 * struct uring_path - state of the io_uring path
 * @ring: the ring (SQE128 | CQE32)
 * @inflight: commands submitted and not yet reaped
 * @cq_entries: completion queue size: @inflight never exceeds it
 * @ud: per command in flight (the index its SQE carries): the caller's
 *	user_data
 * @done_ns: ... and whether big_cqe[0] is the completion time
 * @free_id: unused indices, @n_free of them
 * @n_free: see @free_id
 * @deferred: IORING_SETUP_DEFER_TASKRUN (a disabled ring until @enabled)
 * @enabled: the ring was enabled, by the thread that owns it from then on
 */
struct uring_path {
	struct io_uring ring;
	unsigned int inflight;
	unsigned int cq_entries;
	uint64_t *ud;
	uint8_t *done_ns;
	unsigned int *free_id;
	unsigned int n_free;
	int deferred;
	int enabled;
};

/* The command table: @n entries, all free. */
static int table_init(struct uring_path *p, unsigned int n)
{
	unsigned int i;

	p->ud = calloc(n, sizeof(*p->ud));
	p->done_ns = calloc(n, sizeof(*p->done_ns));
	p->free_id = calloc(n, sizeof(*p->free_id));
	if (!p->ud || !p->done_ns || !p->free_id)
		return wafer_set_error(-ENOMEM, "out of memory");
	for (i = 0; i < n; i++)
		p->free_id[i] = n - 1 - i;
	p->n_free = n;
	return 0;
}

static void table_fini(struct uring_path *p)
{
	free(p->ud);
	free(p->done_ns);
	free(p->free_id);
}

static int io_uring_disabled(void)
{
	FILE *f = fopen("/proc/sys/kernel/io_uring_disabled", "r");
	int v = 0;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/* The ring: deferred task work where the kernel knows it (6.1+), else not. */
static int ring_init(struct uring_path *p, struct io_uring_params *params)
{
	const unsigned int base = IORING_SETUP_SQE128 | IORING_SETUP_CQE32;
	int ret;

	params->flags = base | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
			IORING_SETUP_R_DISABLED;
	ret = io_uring_queue_init_params(URING_ENTRIES, &p->ring, params);
	p->deferred = !ret;
	p->enabled = !p->deferred;
	if (ret != -EINVAL)
		return ret;
	memset(params, 0, sizeof(*params));
	params->flags = base;
	return io_uring_queue_init_params(URING_ENTRIES, &p->ring, params);
}

/*
 * The first submit or reap enables the ring: the calling thread becomes
 * its only issuer, and another thread's use fails with -EEXIST.
 */
static int ring_enable(struct uring_path *p)
{
	int ret;

	if (p->enabled)
		return 0;
	/* liburing 2.3 declares io_uring_enable_rings() but does not export it. */
	if (syscall(__NR_io_uring_register, p->ring.ring_fd, IORING_REGISTER_ENABLE_RINGS,
		    NULL, 0) < 0) {
		ret = -errno;
		return wafer_set_error(ret, "enabling the io_uring ring: %s", strerror(-ret));
	}
	p->enabled = 1;
	return 0;
}

/* What a ring of another thread answers, said so. */
static int ring_error(int ret, const char *what)
{
	if (ret == -EEXIST)
		return wafer_set_error(ret, "%s: the device's io_uring ring belongs to the thread "
				       "that first submitted to it", what);
	return wafer_set_error(ret, "%s: %s", what, strerror(-ret));
}

static int uring_init(int fd, const struct wafer_info *info, void **priv)
{
	struct io_uring_params params = { 0 };
	struct uring_path *p;
	int ret;

	*priv = NULL;
	if (!(info->caps & DRM_WAFER_CAP_URING_SUBMIT))
		return wafer_set_error(-EOPNOTSUPP,
				       "the driver does not take io_uring submissions");
	p = calloc(1, sizeof(*p));
	if (!p)
		return wafer_set_error(-ENOMEM, "out of memory");
	ret = ring_init(p, &params);
	if (ret) {
		free(p);
		if (ret == -EPERM || ret == -ENOSYS || io_uring_disabled())
			return wafer_set_error(-EOPNOTSUPP,
					       "io_uring is unavailable (kernel.io_uring_disabled=%d): %s",
					       io_uring_disabled(), strerror(-ret));
		return wafer_set_error(ret, "io_uring_queue_init: %s", strerror(-ret));
	}
	ret = io_uring_register_files(&p->ring, &fd, 1);
	if (ret) {
		io_uring_queue_exit(&p->ring);
		free(p);
		return wafer_set_error(ret, "registering the device fd with io_uring: %s",
				       strerror(-ret));
	}
	p->cq_entries = params.cq_entries;
	ret = table_init(p, p->cq_entries);
	if (ret) {
		table_fini(p);
		io_uring_queue_exit(&p->ring);
		free(p);
		return ret;
	}
	*priv = p;
	return 0;
}

static void uring_fini(void *priv)
{
	struct uring_path *p = priv;
	struct io_uring_cqe *cqe;

	if (!p)
		return;
	/* Commands still in flight are cancelled with the ring. */
	while (p->inflight && !io_uring_wait_cqe(&p->ring, &cqe)) {
		io_uring_cqe_seen(&p->ring, cqe);
		p->inflight--;
	}
	io_uring_queue_exit(&p->ring);
	table_fini(p);
	free(p);
}

static int same_slot(const struct drm_wafer_job *a, const struct drm_wafer_job *b)
{
	return a->ctx_id == b->ctx_id && a->slot == b->slot;
}

static int uring_submit(void *priv, const struct drm_wafer_job *jobs,
			const uint64_t *user_data, unsigned int n)
{
	struct uring_path *p = priv;
	unsigned int i, j, link_until = 0, queued = 0;
	int linked = 0, ret;

	ret = ring_enable(p);
	if (ret)
		return ret;
	if (n > p->cq_entries - p->inflight)
		n = p->cq_entries - p->inflight;
	if (!n)
		return wafer_set_error(-EAGAIN, "%u io_uring commands in flight already",
				       p->inflight);
	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&p->ring);

		if (!sqe) {
			/* SQ full: push what we have and carry on. */
			io_uring_submit(&p->ring);
			sqe = io_uring_get_sqe(&p->ring);
			if (!sqe)
				break;
		}
		memset(sqe, 0, 2 * sizeof(*sqe));
		sqe->opcode = IORING_OP_URING_CMD;
		sqe->fd = 0;
		sqe->flags = IOSQE_FIXED_FILE | (linked ? IOSQE_ASYNC : 0);
		sqe->cmd_op = DRM_WAFER_URING_CMD_SUBMIT;
		memcpy(sqe->cmd, &jobs[i], sizeof(jobs[i]));
		/* @inflight + @queued < @cq_entries: a free index is there. */
		sqe->user_data = p->free_id[--p->n_free];
		p->ud[sqe->user_data] = user_data[i];
		p->done_ns[sqe->user_data] = !!(jobs[i].flags & DRM_WAFER_JOB_DONE_NS);
		/* Link up to the next job of the same slot, so it waits for this one. */
		for (j = i + 1; j < n; j++) {
			if (same_slot(&jobs[i], &jobs[j])) {
				if (j > link_until)
					link_until = j;
				break;
			}
		}
		linked = i < link_until;
		if (linked)
			sqe->flags |= IOSQE_IO_LINK;
		queued++;
	}
	ret = io_uring_submit(&p->ring);
	if (ret < 0 && !queued)
		return ring_error(ret, "io_uring_submit");
	p->inflight += queued;
	return (int)queued;
}

/*
 * No completion in the CQ: with deferred task work, first run what is
 * pending (without waiting) when @n already meets @min, else wait until
 * @min - @n more are there or @deadline_ns passes, in one wakeup.
 * Returns 0 with a CQE in @cqe, 1 when the caller should stop, or an errno.
 */
static int reap_more(struct uring_path *p, unsigned int n, unsigned int min,
		     uint64_t deadline_ns, int *flushed, struct io_uring_cqe **cqe)
{
	struct __kernel_timespec ts;
	int64_t left;
	int ret;

	if (n >= min) {
		if (!p->deferred || *flushed)
			return 1;
		*flushed = 1;
		ret = io_uring_get_events(&p->ring);
		return ret < 0 ? ret : io_uring_peek_cqe(&p->ring, cqe) ? 1 : 0;
	}
	left = (int64_t)deadline_ns - (int64_t)wafer_now_ns();
	if (left <= 0)
		return 1;
	ts.tv_sec = left / 1000000000ll;
	ts.tv_nsec = left % 1000000000ll;
	ret = io_uring_wait_cqes(&p->ring, cqe, min - n, &ts, NULL);
	return ret == -ETIME || ret == -EINTR ? -EAGAIN : ret;
}

static int uring_reap(void *priv, struct wafer_completion *out, unsigned int max,
		      unsigned int min, uint64_t deadline_ns)
{
	struct uring_path *p = priv;
	unsigned int n = 0;
	int flushed = 0, ret;

	ret = ring_enable(p);
	if (ret)
		return ret;
	while (n < max && p->inflight) {
		struct io_uring_cqe *cqe;
		unsigned int id;

		ret = io_uring_peek_cqe(&p->ring, &cqe);
		if (ret == -EAGAIN) {
			ret = reap_more(p, n, min, deadline_ns, &flushed, &cqe);
			if (ret == 1)
				break;
			if (ret == -EAGAIN)
				continue;	/* timed out or interrupted: look again */
		}
		if (ret)
			return n ? (int)n : ring_error(ret, "reaping io_uring completions");
		id = (unsigned int)cqe->user_data;
		out[n].user_data = p->ud[id];
		out[n].status = cqe->res;
		out[n].device_ns = p->done_ns[id] ? 0 : cqe->big_cqe[0];
		out[n].done_ns = p->done_ns[id] ? cqe->big_cqe[0] : 0;
		p->free_id[p->n_free++] = id;
		io_uring_cqe_seen(&p->ring, cqe);
		p->inflight--;
		n++;
	}
	return (int)n;
}

const struct wafer_submit_ops wafer_submit_uring = {
	.name = "uring",
	.init = uring_init,
	.fini = uring_fini,
	.submit = uring_submit,
	.reap = uring_reap,
};
