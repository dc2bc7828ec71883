// SPDX-License-Identifier: MIT
/*
 * The pipeline backend's jobs: a caller's job becomes one job per part, run
 * on member 0, then (its activation records in link 0) on member 1, and so
 * on; the last member's results are the job's.
 *
 * Each member's jobs move on in the order they were given to it, so the
 * jobs of a slot reach every part in submission order.  A job that fails on
 * a member goes no further: it completes with that member's status.
 *
 * The host hands a job from member to member when reaping (wafer_reap()
 * on the pipeline drains every member), so a token crosses the members
 * with one reap per member.
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
}

/* Gives record @ri to part @k's member; 0 or -errno. */
static int part_post(struct pipe *p, unsigned int ri, unsigned int k)
{
	struct pipe_rec *r = &p->rec[ri];
	struct wafer_job_hw j;
	int ret;

	part_job(p, r, k, &j);
	ret = p->m[k]->ops->submit(p->m[k], &j, 1);
	if (ret != 1)
		return ret < 0 ? ret : -EAGAIN;
	r->at = k;
	r->done = 0;
	fifo_push(&p->at[k], ri);
	p->busy[k]++;
	return 0;
}

static void rec_finish(struct pipe *p, unsigned int ri, int status)
{
	p->rec[ri].status = status;
	fifo_push(&p->finished, ri);
}

/* Moves member @k's completed jobs on, oldest first, while they are done. */
static void member_advance(struct pipe *p, unsigned int k)
{
	struct pipe_fifo *f = &p->at[k];
	unsigned int ri;
	int ret;

	while (f->n && p->rec[f->r[f->head]].done) {
		ri = fifo_pop(f);
		if (p->rec[ri].status || k + 1 == rec_model(p, &p->rec[ri])->n) {
			rec_finish(p, ri, p->rec[ri].status);
			continue;
		}
		/* Room is certain: no member holds more than the pipeline's jobs. */
		ret = part_post(p, ri, k + 1);
		if (ret)
			rec_finish(p, ri, wafer_prefix_error(ret, "device %u", k + 1));
	}
}

/* Reaps member @k (waiting until @deadline for @min) and moves jobs on. */
static int member_reap(struct pipe *p, unsigned int k, unsigned int min, uint64_t deadline)
{
	struct wafer_completion c[PIPE_MAX_INFLIGHT];
	struct pipe_rec *r;
	int n, i;

	if (!p->busy[k])
		return 0;
	n = p->m[k]->ops->reap(p->m[k], c, PIPE_MAX_INFLIGHT, min, deadline);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		if (c[i].user_data >= PIPE_MAX_INFLIGHT || !p->rec[c[i].user_data].used)
			continue;	/* cannot happen: every job here is a record's */
		r = &p->rec[c[i].user_data];
		r->done = 1;
		r->status = c[i].status;
		r->device_ns += c[i].device_ns;
		p->busy[k]--;
	}
	member_advance(p, k);
	return n;
}

int wafer_pipe_submit(struct wafer_dev *dev, const struct wafer_job_hw *jobs, unsigned int n)
{
	struct pipe *p = pipe_of(dev);
	unsigned int i, ri = 0;
	int ret;

	for (i = 0; i < n; i++) {
		while (ri < PIPE_MAX_INFLIGHT && p->rec[ri].used)
			ri++;
		if (ri == PIPE_MAX_INFLIGHT)
			break;
		p->rec[ri] = (struct pipe_rec){ .used = 1, .job = jobs[i], .seq = p->seq };
		ret = part_post(p, ri, 0);
		if (ret) {
			p->rec[ri].used = 0;
			if (i)
				break;
			return ret == -EAGAIN ?
			       wafer_set_error(ret, "the pipeline's first device is full") : ret;
		}
		p->seq++;
	}
	return i ? (int)i : wafer_set_error(-EAGAIN, "%d jobs in flight already",
					    PIPE_MAX_INFLIGHT);
}

/* The member holding the oldest job still running, or -1. */
static int oldest_member(const struct pipe *p)
{
	uint64_t best = UINT64_MAX;
	unsigned int k;
	int m = -1;

	for (k = 0; k < p->n; k++) {
		const struct pipe_fifo *f = &p->at[k];

		if (f->n && p->rec[f->r[f->head]].seq < best) {
			best = p->rec[f->r[f->head]].seq;
			m = (int)k;
		}
	}
	return m;
}

int wafer_pipe_reap(struct wafer_dev *dev, struct wafer_completion *out, unsigned int max,
		    unsigned int min, uint64_t deadline_ns)
{
	struct pipe *p = pipe_of(dev);
	unsigned int got = 0, k;
	struct pipe_rec *r;
	int ret, m;

	for (;;) {
		/* Whatever is done anywhere moves on, upstream first. */
		for (k = 0; k < p->n; k++) {
			ret = member_reap(p, k, 0, 0);
			if (ret < 0)
				return got ? (int)got : ret;
		}
		while (p->finished.n && got < max) {
			r = &p->rec[fifo_pop(&p->finished)];
			out[got++] = (struct wafer_completion){
				.user_data = r->job.user_data, .status = r->status,
				.device_ns = r->device_ns,
			};
			r->used = 0;
		}
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
