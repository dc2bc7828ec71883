// SPDX-License-Identifier: MIT
/*
 * The pipeline backend's jobs: a caller's job becomes one job per part, run
 * on member 0, then (its activation records in link 0) on member 1, and so
 * on; the last member's results are the job's.
 *
 * Who hands a job from member to member:
 *   - chained models (kernel members, ioctl or io_uring): nobody.  All
 *     parts are queued at once, part k + 1 waiting for part k's fence
 *     through a syncobj shared by the two members, so a token crosses every
 *     member with no return to the caller; a part whose wait failed
 *     completes with -ECANCELED (the driver's rule).  io_uring may issue
 *     part k + 1 before part k: the driver then waits for part k's
 *     submission (DRM_WAFER_JOB_WAIT_SUBMIT), which is why a record's
 *     syncobjs are emptied before it is used again.  wafer_reap() collects
 *     every member's completions.
 *   - otherwise each part is posted when the previous one completed: from
 *     the member's completion thread where its backend has a completion
 *     hook (inproc: wafer_chain_hook()), else when the caller reaps
 *     (wafer_reap() drains every member).  A job that fails on a member
 *     goes no further.
 * Either way a member's jobs are taken in the order they were given to it,
 * so the jobs of a slot reach every part in submission order, and a job
 * completes with the status of its first part that failed.  A member
 * whose reap fails is dead (wafer_chain_fail(), pipe_failed()): the jobs
 * it holds fail, the others as they reach it.  The chain's lock guards the
 * records.
 */
#include <errno.h>
#include <string.h>

#include "wafer_pipe.h"

static void fifo_push(struct pipe_fifo *f, unsigned int r)
{
	f->r[(f->head + f->n++) % PIPE_MAX_INFLIGHT] = (uint8_t)r;
}

static unsigned int fifo_pop(struct pipe_fifo *f)
{
	unsigned int r = f->r[f->head];

	f->head = (f->head + 1) % PIPE_MAX_INFLIGHT;
	f->n--;
	return r;
}

static const struct pipe_model *rec_model(const struct pipe *p, const struct pipe_rec *r)
{
	return &p->models[p->ctxs[r->job.ctx_id - 1].model];
}

/* Record @r's job as part @k's member runs it. */
static void part_job(const struct pipe *p, const struct pipe_rec *r, unsigned int k,
		     struct wafer_job_hw *j)
{
	const struct pipe_model *pm = rec_model(p, r);
	unsigned int ri = (unsigned int)(r - p->rec);
	uint64_t slot = ri * pm->stride;

	*j = r->job;
	j->ctx_id = p->ctxs[r->job.ctx_id - 1].id[k];
	j->user_data = ri;
	j->in_sync = pm->chained && k ? &pm->sync_in[k - 1][ri] : NULL;
	j->out_sync = pm->chained && k + 1 < pm->n ? pm->sync_out[k][ri] : 0;
	if (k) {
		j->in = pm->link_in[k - 1];
		j->in_offset = slot;
		j->flags |= WAFER_JOB_HW_IN_ACT;
	} else {
		j->in = pipe_bo_on(r->job.in, 0);
	}
	if (k + 1 < pm->n) {
		j->out = pm->link[k];
		j->out_offset = slot;
		j->out_len = (uint64_t)r->job.n_tokens * pm->act_size;
		j->flags = (j->flags & ~WAFER_JOB_ALL_POSITIONS) | WAFER_JOB_HW_OUT_ACT;
		j->top_k = 0;
	} else {
		j->out = pipe_bo_on(r->job.out, k);
	}
	pipe_times_part(p, pm, r, k, j);
	pipe_clock_part(p, pm, r, k, j);
}

/*
 * Gives records @ri[0..n) to part @k's member in one submission (so that
 * its command processor sees them together, as it would one caller's
 * batch); returns how many it took, or -errno if none.
 */
static int parts_post(struct pipe *p, const unsigned int *ri, unsigned int n, unsigned int k)
{
	struct wafer_job_hw j[PIPE_MAX_INFLIGHT];
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++)
		part_job(p, &p->rec[ri[i]], k, &j[i]);
	ret = wafer_chain_post(&p->ch, k, j, n);
	for (i = 0; ret > 0 && i < (unsigned int)ret; i++)
		fifo_push(&p->at[k], ri[i]);
	return ret ? ret : -EAGAIN;
}

/* The first failed part's status, or 0. */
static int rec_status(const struct pipe *p, const struct pipe_rec *r)
{
	unsigned int k, n = rec_model(p, r)->n;

	for (k = 0; k < n; k++)
		if (r->status[k])
			return r->status[k];
	return 0;
}

/* Parts @k.. of record @ri will not run: they count as done with @status. */
static void rec_fail_from(struct pipe *p, unsigned int ri, unsigned int k, int status)
{
	struct pipe_rec *r = &p->rec[ri];

	for (; k < rec_model(p, r)->n; k++) {
		pipe_set_part_done(r, k);
		r->status[k] = status;
	}
}

/* Every part of record @ri completed: it is the caller's to reap. */
static void rec_finish_if_done(struct pipe *p, unsigned int ri)
{
	struct pipe_rec *r = &p->rec[ri];

	if (!pipe_parts_done(r, rec_model(p, r)->n))
		return;
	r->finished = 1;
	r->result = rec_status(p, r);
	pipe_clock_retire(p, r, r->result);
	fifo_push(&p->finished, ri);
	pthread_cond_broadcast(&p->ch.cond);
}

/*
 * Parts @k.. of record @ri will not run (@status); it is the caller's to
 * reap unless an earlier part still runs (chained: it completes on its own).
 */
static void rec_fail(struct pipe *p, unsigned int ri, unsigned int k, int status)
{
	rec_fail_from(p, ri, k, status);
	rec_finish_if_done(p, ri);
}

/*
 * Posts records @ri[0..n) to part @k's member; those it did not take (and
 * their later parts) fail with its error, all of them if it is dead.
 */
static void parts_post_or_fail(struct pipe *p, const unsigned int *ri, unsigned int n,
				       unsigned int k)
{
	int ret = p->ch.dead[k];
	unsigned int i;

	if (!ret) {
		ret = parts_post(p, ri, n, k);
		if (ret < 0)
			ret = wafer_prefix_error(ret, "device %u", k);
	}
	for (i = ret < 0 ? 0 : (unsigned int)ret; i < n; i++)
		rec_fail(p, ri[i], k, ret < 0 ? ret : -EAGAIN);
}

/* Moves member @k's completed jobs on, oldest first, while they are done. */
static void member_advance(struct pipe *p, unsigned int k)
{
	struct pipe_fifo *f = &p->at[k];
	unsigned int next[PIPE_MAX_INFLIGHT], n = 0, ri;
	struct pipe_rec *r;

	while (f->n && pipe_part_done(&p->rec[f->r[f->head]], k)) {
		ri = fifo_pop(f);
		r = &p->rec[ri];
		if (!rec_model(p, r)->chained && k + 1 < rec_model(p, r)->n) {
			if (!r->status[k])
				next[n++] = ri;
			else
				rec_fail(p, ri, k + 1, r->status[k]);
			continue;
		}
		rec_finish_if_done(p, ri);
	}
	/* Room is certain: no member holds more than the pipeline's jobs. */
	if (n)
		parts_post_or_fail(p, next, n, k + 1);
}

/* Member @k completed @n jobs (wafer_chain_ops): mark their records, move what can go on. */
void pipe_completed(struct wafer_chain *ch, unsigned int k, const struct wafer_completion *c,
		    unsigned int n)
{
	struct pipe *p = pipe_of_chain(ch);
	struct pipe_rec *r;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (c[i].user_data >= PIPE_MAX_INFLIGHT || !p->rec[c[i].user_data].used)
			continue;	/* cannot happen: every job here is a record's */
		r = &p->rec[c[i].user_data];
		pipe_set_part_done(r, k);
		r->status[k] = c[i].status;
		r->device_ns += c[i].device_ns;
		pipe_clock_completed(p, r, k, &c[i]);
	}
	member_advance(p, k);
}

/*
 * Member @k failed with @err (wafer_chain_ops; it is dead): every job whose
 * part it holds is over with that error, so it completes with it, once.
 * The jobs upstream of it fail as they reach it (parts_post_or_fail()),
 * those past it complete as they would have, and a job submitted later
 * whose model has a part on it fails at once (submit_runs()): it would
 * reach it.
 *
 * A chained job (kernel members, syncobjs) has its later parts queued on
 * the members after the dead one already: they complete on their own (the
 * driver fails a part whose wait failed with -ECANCELED), and the job
 * with them, with the dead member's error (its first failed part's).
 */
void pipe_failed(struct wafer_chain *ch, unsigned int k, int err)
{
	struct pipe *p = pipe_of_chain(ch);
	const struct pipe_fifo *f = &p->at[k];
	struct pipe_rec *r;
	unsigned int i;

	wafer_prefix_error(err, "device %u failed", k);
	for (i = 0; i < f->n; i++) {
		r = &p->rec[f->r[(f->head + i) % PIPE_MAX_INFLIGHT]];
		if (pipe_part_done(r, k))
			continue;	/* it completed there and waits for its turn */
		pipe_set_part_done(r, k);
		r->status[k] = err;
	}
	/* Every record there is done now: each goes on, fails or finishes. */
	member_advance(p, k);
}

/*
 * Reaps polled member @k (waiting until @deadline for @min), which moves
 * its jobs on (wafer_chain_reap()); one with nothing in flight has nothing
 * to say.  Returns the completions, or the caller's error.
 */
static int member_reap(struct pipe *p, unsigned int k, unsigned int min, uint64_t deadline)
{
	return p->ch.busy[k] ? wafer_chain_reap(&p->ch, k, min, deadline) : 0;
}

/*
 * Empties record @ri's link syncobjs: their parts wait for a fence to be
 * submitted (io_uring may issue part k + 1 before part k), which must not
 * be the one the record's last job left there.
 */
static int rec_links_reset(struct pipe *p, unsigned int ri)
{
	const struct pipe_model *pm = rec_model(p, &p->rec[ri]);
	unsigned int k;
	int ret;

	for (k = 0; pm->chained && k + 1 < pm->n; k++) {
		ret = p->ch.m[k]->ops->sync_reset(p->ch.m[k], pm->sync_out[k][ri]);
		if (ret)
			return ret;
	}
	return 0;
}

/* The first free record from @from on, or PIPE_MAX_INFLIGHT. */
static unsigned int rec_free(const struct pipe *p, unsigned int from)
{
	while (from < PIPE_MAX_INFLIGHT && p->rec[from].used)
		from++;
	return from;
}

static int submit_locked(struct pipe *p, const struct wafer_job_hw *jobs, unsigned int n)
{
	unsigned int ri[PIPE_MAX_INFLIGHT], chain[PIPE_MAX_INFLIGHT], i, r = 0, m = 0, k;
	int ret = 0;

	for (i = 0; i < n; i++, r++) {
		r = rec_free(p, r);
		if (r == PIPE_MAX_INFLIGHT)
			break;
		p->rec[r] = (struct pipe_rec){ .used = 1, .job = jobs[i], .seq = p->seq + i };
		ret = rec_links_reset(p, r);
		if (ret) {
			p->rec[r].used = 0;
			break;
		}
		pipe_clock_admit(p, &p->rec[r]);
		ri[m++] = r;
	}
	if (!m && ret)
		return ret;
	if (!m)
		return wafer_set_error(-EAGAIN, "%d jobs in flight already", PIPE_MAX_INFLIGHT);
	ret = parts_post(p, ri, m, 0);
	for (i = ret < 0 ? 0 : (unsigned int)ret; i < m; i++) {
		pipe_clock_unadmit(p, &p->rec[ri[i]]);
		p->rec[ri[i]].used = 0;
	}
	if (ret == -EAGAIN)
		return wafer_set_error(ret, "the pipeline's first device is full");
	if (ret < 0)
		return ret;
	p->seq += (unsigned int)ret;
	/* Chained: every later part at once, each waiting for the one before. */
	for (k = 1, m = 0; k < PIPE_MAX; k++, m = 0) {
		for (i = 0; i < (unsigned int)ret; i++) {
			const struct pipe_model *pm = rec_model(p, &p->rec[ri[i]]);
			int failed = pipe_part_done(&p->rec[ri[i]], k);

			if (pm->chained && k < pm->n && !failed)
				chain[m++] = ri[i];
		}
		if (!m)
			break;
		parts_post_or_fail(p, chain, m, k);
	}
	return ret;
}

/* The first dead member job @j's model has a part on, its error; or 0. */
static int job_dead(const struct pipe *p, const struct wafer_job_hw *j)
{
	return wafer_chain_dead(&p->ch, p->models[p->ctxs[j->ctx_id - 1].model].n);
}

/*
 * Jobs @jobs[0..n) need a dead member (@err): each takes a record that is
 * finished at once, for the caller's reap to complete with @err.  How many
 * were taken, or -EAGAIN if no record was free.
 */
static int jobs_fail(struct pipe *p, const struct wafer_job_hw *jobs, unsigned int n, int err)
{
	unsigned int i, r = 0;

	for (i = 0; i < n; i++, r++) {
		r = rec_free(p, r);
		if (r == PIPE_MAX_INFLIGHT)
			break;
		p->rec[r] = (struct pipe_rec){ .used = 1, .job = jobs[i], .seq = p->seq++ };
		rec_fail(p, r, 0, err);
	}
	if (!i)
		return wafer_set_error(-EAGAIN, "%d jobs in flight already", PIPE_MAX_INFLIGHT);
	return (int)i;
}

/*
 * The jobs from @jobs[0] on that all need a dead member (*@dead: the
 * first one's error) or all do not (*@dead: 0): how many.
 */
static unsigned int run_of(const struct pipe *p, const struct wafer_job_hw *jobs, unsigned int n,
			   int *dead)
{
	unsigned int i = 1;

	*dead = job_dead(p, &jobs[0]);
	while (i < n && !job_dead(p, &jobs[i]) == !*dead)
		i++;
	return i;
}

/*
 * Runs of jobs that need a dead member complete at once (with its error),
 * the others go to the members; in order, as long as all were taken.
 */
static int submit_runs(struct pipe *p, const struct wafer_job_hw *jobs, unsigned int n)
{
	unsigned int done = 0, len;
	int ret = 0, dead;

	while (done < n) {
		len = run_of(p, jobs + done, n - done, &dead);
		ret = dead ? jobs_fail(p, jobs + done, len, dead) :
			     submit_locked(p, jobs + done, len);
		if (ret > 0)
			done += (unsigned int)ret;
		if (ret < (int)len)
			break;
	}
	return done ? (int)done : ret;
}

int wafer_pipe_submit(struct wafer_dev *dev, const struct wafer_job_hw *jobs, unsigned int n)
{
	struct pipe *p = pipe_of(dev);
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++) {
		if (jobs[i].flags & WAFER_JOB_NOP)
			return wafer_set_error(-EOPNOTSUPP, "job %u: NOP jobs do not run on a "
					       "pipeline", i);
		ret = pipe_times_check(p, &jobs[i], i);
		if (ret)
			return ret;
	}
	pthread_mutex_lock(&p->ch.lock);
	ret = submit_runs(p, jobs, n);
	pthread_mutex_unlock(&p->ch.lock);
	return ret;
}

/* The member holding the oldest job still running, or -1. */
static int oldest_member(const struct pipe *p)
{
	uint64_t best = UINT64_MAX;
	unsigned int k;
	int m = -1;

	for (k = 0; k < p->ch.n; k++) {
		const struct pipe_fifo *f = &p->at[k];

		if (f->n && p->rec[f->r[f->head]].seq < best) {
			best = p->rec[f->r[f->head]].seq;
			m = (int)k;
		}
	}
	return m;
}

/* Finished records into @out, up to @max in all; the new count. */
static unsigned int take_finished(struct pipe *p, struct wafer_completion *out, unsigned int got,
				  unsigned int max)
{
	struct pipe_rec *r;

	while (p->finished.n && got < max) {
		r = &p->rec[fifo_pop(&p->finished)];
		out[got++] = (struct wafer_completion){
			.user_data = r->job.user_data, .status = r->result,
			.device_ns = r->device_ns, .done_ns = r->done_ns,
		};
		if (!out[got - 1].status)
			pipe_times_gather(p, rec_model(p, r), r);
		pipe_clock_reaped(p, r, out[got - 1].status);
		r->used = 0;
	}
	return got;
}

/** struct take - what wafer_chain_wait() passes back: the reap's state */
struct take {
	struct pipe *p;
	struct wafer_completion *out;
	unsigned int got, max, min;
};

/* Takes the finished records: whether the reap has what it waits for. */
static int take_done(void *arg)
{
	struct take *t = arg;

	t->got = take_finished(t->p, t->out, t->got, t->max);
	return t->got >= t->min || t->got == t->max;
}

/* The members move jobs on themselves: wait for finished ones. */
static int reap_hooked(struct pipe *p, struct wafer_completion *out, unsigned int max,
		       unsigned int min, uint64_t deadline_ns)
{
	struct take t = { .p = p, .out = out, .max = max, .min = min };

	wafer_chain_wait(&p->ch, deadline_ns, take_done, NULL, &t);
	return (int)t.got;
}

/* The caller moves jobs on: drain every member, wait on the oldest job's. */
static int reap_polled(struct pipe *p, struct wafer_completion *out, unsigned int max,
		       unsigned int min, uint64_t deadline_ns)
{
	unsigned int got = 0, k;
	int ret, m;

	for (;;) {
		/* Whatever is done anywhere moves on, upstream first. */
		for (k = 0; k < p->ch.n; k++) {
			ret = member_reap(p, k, 0, 0);
			if (ret < 0)
				return got ? (int)got : ret;
		}
		got = take_finished(p, out, got, max);
		if (got >= min || got == max || wafer_now_ns() >= deadline_ns)
			return (int)got;
		m = oldest_member(p);
		if (m < 0)
			return (int)got;
		ret = member_reap(p, (unsigned int)m, 1, deadline_ns);
		if (ret < 0)
			return got ? (int)got : ret;
	}
}

int wafer_pipe_reap(struct wafer_dev *dev, struct wafer_completion *out, unsigned int max,
		    unsigned int min, uint64_t deadline_ns)
{
	struct pipe *p = pipe_of(dev);
	int ret;

	pthread_mutex_lock(&p->ch.lock);
	ret = p->ch.hooked ? reap_hooked(p, out, max, min, deadline_ns) :
			  reap_polled(p, out, max, min, deadline_ns);
	pthread_mutex_unlock(&p->ch.lock);
	return ret;
}
