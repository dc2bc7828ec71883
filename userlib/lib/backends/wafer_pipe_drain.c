// SPDX-License-Identifier: MIT
/*
 * The pipeline's objects destroyed while jobs that use them are in flight
 * (see wafer_pipe.h).  A hooked pipeline posts a job's next part from a
 * member's completion thread, with the caller's buffers, its context and
 * its model's links, so destroying one of them first waits for the jobs
 * that use it (wafer_chain_drain()).  Finished jobs that use it keep their
 * status for the caller's reap, without WAFER_JOB_TIMES: where the times
 * come from or go to may be gone.
 */
#include "wafer_pipe.h"

/*
 * Records in flight that use @g's object (wafer_chain_ops): how many still
 * run; those finished lose WAFER_JOB_TIMES (gathered from and into what
 * may go).
 */
unsigned int pipe_running(struct wafer_chain *ch, const struct wafer_chain_gone *g)
{
	struct pipe *p = pipe_of_chain(ch);
	unsigned int i, running = 0;
	struct pipe_rec *r;

	for (i = 0; i < PIPE_MAX_INFLIGHT; i++) {
		r = &p->rec[i];
		if (!r->used ||
		    !wafer_chain_uses(&r->job, p->ctxs[r->job.ctx_id - 1].model + 1, g))
			continue;
		if (r->finished)
			r->job.flags &= ~WAFER_JOB_TIMES;
		else
			running++;
	}
	return running;
}
