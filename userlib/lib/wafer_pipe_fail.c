// SPDX-License-Identifier: MIT
/*
 * The pipeline backend's members that fail (see wafer_pipe.h).  A member
 * whose reap returns a fatal error (wafer_members_fatal(): a device that
 * died, a completion ring that broke) will not complete the jobs it holds:
 * it is dead from then on.  Every job whose part it holds is over with
 * that error, so it completes with it, once (as the kernel driver
 * completes every job of a device that died with -ENODEV or -EIO).  The
 * jobs upstream of it fail as they reach it (parts_post_or_fail()), those
 * past it complete as they would have, and a job submitted later whose
 * model has a part on it fails at once: it would reach it.  The member's
 * late completions (its hook may still be called) are dropped: their jobs
 * are over and their records may hold others by then.
 *
 * A chained job (kernel members, syncobjs) has its later parts queued on
 * the members after the dead one already: they complete on their own (the
 * driver fails a part whose wait failed with -ECANCELED), and the job
 * with them, with the dead member's error (its first failed part's).
 */
#include <errno.h>

#include "wafer_pipe.h"

/* Member @k failed with @err (lock held): the jobs it holds are over. */
void pipe_member_fail(struct pipe *p, unsigned int k, int err)
{
	const struct pipe_fifo *f = &p->at[k];
	struct pipe_rec *r;
	unsigned int i;

	if (p->dead[k])
		return;
	p->dead[k] = err;
	p->busy[k] = 0;	/* nothing to wait for there */
	wafer_prefix_error(err, "device %u failed", k);
	for (i = 0; i < f->n; i++) {
		r = &p->rec[f->r[(f->head + i) % PIPE_MAX_INFLIGHT]];
		if (r->done & (1u << k))
			continue;	/* it completed there and waits for its turn */
		r->done |= 1u << k;
		r->status[k] = err;
	}
	/* Every record there is done now: each goes on, fails or finishes. */
	pipe_member_advance(p, k);
}

/* The first dead member job @j's model has a part on, its error; or 0. */
int pipe_job_dead(const struct pipe *p, const struct wafer_job_hw *j)
{
	const struct pipe_model *pm = &p->models[p->ctxs[j->ctx_id - 1].model];
	unsigned int k;

	for (k = 0; k < pm->n; k++)
		if (p->dead[k])
			return p->dead[k];
	return 0;
}

/*
 * Jobs @jobs[0..n) need a dead member (@err): each takes a record that is
 * finished at once, for the caller's reap to complete with @err.  How many
 * were taken, or -EAGAIN if no record was free.
 */
int pipe_jobs_fail(struct pipe *p, const struct wafer_job_hw *jobs, unsigned int n, int err)
{
	unsigned int i, r = 0;

	for (i = 0; i < n; i++, r++) {
		r = pipe_rec_free(p, r);
		if (r == PIPE_MAX_INFLIGHT)
			break;
		p->rec[r] = (struct pipe_rec){ .used = 1, .job = jobs[i], .seq = p->seq++ };
		pipe_rec_fail(p, r, 0, err);
	}
	if (!i)
		return wafer_set_error(-EAGAIN, "%d jobs in flight already", PIPE_MAX_INFLIGHT);
	return (int)i;
}
