// SPDX-License-Identifier: MIT
/*
 * The pipeline's objects destroyed while jobs that use them are in flight
 * (see wafer_pipe.h).  A job runs on one member after another, and a
 * hooked pipeline posts its next part from a member's completion thread,
 * with the caller's buffers, its context and its model's links: had one
 * of them gone by then, the part would use freed memory.  So destroying a
 * buffer, a context or a model first waits for the jobs in flight that use
 * it to finish, as the kernel keeps an object alive until its jobs are
 * done; a member that fails ends its jobs at once (wafer_pipe_fail.c), a
 * hung one is bounded by the pipeline's job timeout.  A polled pipeline
 * moves a job on only in the caller's reap: nothing runs on its own, so
 * nothing to wait for (reaping those jobs after destroying what they use
 * is the caller's error).  Finished jobs that use it keep their status
 * for the caller's reap, without WAFER_JOB_TIMES: where the times come
 * from or go to may be gone.
 */
#include "wafer_members.h"
#include "wafer_pipe.h"

/* Without a job timeout (0: none set), how long a destroy waits at most. */
#define PIPE_DRAIN_DEFAULT_MS	10000u

/** struct drain_of - what is destroyed: a buffer, or a context or model id */
struct drain_of {
	const struct wafer_bo *bo;
	uint32_t ctx, model;
};

/* Whether record @r uses @d's object. */
static int rec_uses(const struct pipe *p, const struct pipe_rec *r, const struct drain_of *d)
{
	if (d->bo)
		return r->job.in == d->bo || r->job.out == d->bo;
	if (d->ctx)
		return r->job.ctx_id == d->ctx;
	return p->ctxs[r->job.ctx_id - 1].model == d->model - 1;
}

/*
 * Records in flight that use @d's object: how many still run; those
 * finished lose WAFER_JOB_TIMES (gathered from and into what may go).
 */
static unsigned int drain_count(struct pipe *p, const struct drain_of *d)
{
	unsigned int i, running = 0;
	struct pipe_rec *r;

	for (i = 0; i < PIPE_MAX_INFLIGHT; i++) {
		r = &p->rec[i];
		if (!r->used || !rec_uses(p, r, d))
			continue;
		if (r->finished)
			r->job.flags &= ~WAFER_JOB_TIMES;
		else
			running++;
	}
	return running;
}

/* Waits (hooked) until no job in flight that uses @d's object runs. */
static void drain(struct pipe *p, const struct drain_of *d, uint32_t timeout_ms)
{
	uint64_t deadline, now;

	pthread_mutex_lock(&p->lock);
	deadline = wafer_now_ns() +
		   (uint64_t)(timeout_ms ? timeout_ms : PIPE_DRAIN_DEFAULT_MS) * 1000000ull;
	for (;;) {
		if (p->hooked)
			pipe_members_check(p);
		now = wafer_now_ns();
		if (!drain_count(p, d) || !p->hooked || now >= deadline)
			break;
		wafer_members_wait(&p->cond, &p->lock,
				   deadline - now > WAFER_MEMBERS_CHECK_NS ?
				   now + WAFER_MEMBERS_CHECK_NS : deadline);
	}
	pthread_mutex_unlock(&p->lock);
}

void pipe_drain_bo(struct pipe *p, const struct wafer_bo *bo, uint32_t timeout_ms)
{
	drain(p, &(struct drain_of){ .bo = bo }, timeout_ms);
}

void pipe_drain_ctx(struct pipe *p, uint32_t id, uint32_t timeout_ms)
{
	drain(p, &(struct drain_of){ .ctx = id }, timeout_ms);
}

void pipe_drain_model(struct pipe *p, uint32_t id, uint32_t timeout_ms)
{
	drain(p, &(struct drain_of){ .model = id }, timeout_ms);
}
