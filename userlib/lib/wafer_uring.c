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
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <liburing.h>

#include "wafer_internal.h"
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
 */
struct uring_path {
	struct io_uring ring;
	unsigned int inflight;
	unsigned int cq_entries;
	uint64_t *ud;
	uint8_t *done_ns;
	unsigned int *free_id;
	unsigned int n_free;
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

static int uring_init(int fd, const struct wafer_info *info, void **priv)
{
	struct io_uring_params params = {
		.flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32,
	};
	struct uring_path *p;
	int ret;

	*priv = NULL;
	if (!(info->caps & DRM_WAFER_CAP_URING_SUBMIT))
		return wafer_set_error(-EOPNOTSUPP,
				       "the driver does not take io_uring submissions");
	p = calloc(1, sizeof(*p));
	if (!p)
		return wafer_set_error(-ENOMEM, "out of memory");
	ret = io_uring_queue_init_params(URING_ENTRIES, &p->ring, &params);
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
		return wafer_set_error(ret, "io_uring_submit: %s", strerror(-ret));
	p->inflight += queued;
	return (int)queued;
}

static int uring_reap(void *priv, struct wafer_completion *out, unsigned int max,
		      unsigned int min, uint64_t deadline_ns)
{
	struct uring_path *p = priv;
	unsigned int n = 0;

	while (n < max && p->inflight) {
		struct io_uring_cqe *cqe;
		int ret = io_uring_peek_cqe(&p->ring, &cqe);
		unsigned int id;

		if (ret == -EAGAIN) {
			struct __kernel_timespec ts;
			int64_t left;

			if (n >= min)
				break;
			left = (int64_t)deadline_ns - (int64_t)wafer_now_ns();
			if (left <= 0)
				break;
			ts.tv_sec = left / 1000000000ll;
			ts.tv_nsec = left % 1000000000ll;
			ret = io_uring_wait_cqe_timeout(&p->ring, &cqe, &ts);
			if (ret == -ETIME || ret == -EINTR)
				continue;
		}
		if (ret)
			return n ? (int)n : wafer_set_error(ret, "reaping io_uring completions: %s",
							    strerror(-ret));
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
