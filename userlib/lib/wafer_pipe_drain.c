// SPDX-License-Identifier: MIT
/*
 * The pipeline's objects destroyed while jobs that use them are in flight
 * (see wafer_pipe.h).  A job runs on one member after another, and a
 * hooked pipeline posts its next part from a member's completion thread,
 * with the caller's buffers, its context and its model's links: had one
 * of them gone by then, the part would use freed memory.  So destroying a
 * buffer, a context or a model first waits for the jobs in flight that use
 * it to finish (wafer_members_drain()), as the kernel keeps an object
 * alive until its jobs are done; a member that fails ends its jobs at once
 * (wafer_pipe_fail.c), a hung one is bounded by the pipeline's job
 * timeout.  A polled pipeline moves a job on only in the caller's reap:
 * nothing runs on its own, so nothing to wait for (reaping those jobs
 * after destroying what they use is the caller's error).  Finished jobs
 * that use it keep their status for the caller's reap, without
 * WAFER_JOB_TIMES: where the times come from or go to may be gone.
 */
#include "wafer_members.h"
#include "wafer_pipe.h"

/** struct drain - what wafer_members_drain() passes back: the pipe, the object */
struct drain {
	struct pipe *p;
	struct wafer_members_gone g;
};

/*
 * Records in flight that use the object: how many still run; those
 * finished lose WAFER_JOB_TIMES (gathered from and into what may go).
 */
static unsigned int drain_running(void *arg)
{
	struct drain *d = arg;
	struct pipe *p = d->p;
	unsigned int i, running = 0;
	struct pipe_rec *r;

	for (i = 0; i < PIPE_MAX_INFLIGHT; i++) {
		r = &p->rec[i];
		if (!r->used ||
		    !wafer_members_uses(&r->job, p->ctxs[r->job.ctx_id - 1].model + 1, &d->g))
			continue;
		if (r->finished)
			r->job.flags &= ~WAFER_JOB_TIMES;
		else
			running++;
	}
	return running;
}

static void drain_check(void *arg)
{
	pipe_members_check(((struct drain *)arg)->p);
}

/* Waits (hooked) until no job in flight that uses @g's object runs. */
void pipe_drain(struct pipe *p, struct wafer_members_gone g, uint32_t timeout_ms)
{
	struct drain d = { .p = p, .g = g };

	pthread_mutex_lock(&p->lock);
	if (p->hooked)
		wafer_members_drain(&p->lock, &p->cond, drain_running, drain_check, &d,
				    timeout_ms);
	else
		drain_running(&d);	/* nothing runs on its own: only the times go */
	pthread_mutex_unlock(&p->lock);
}
