// SPDX-License-Identifier: MIT
/*
 * The AFD backend's jobs (see wafer_afd.h): a caller's job becomes
 * micro-batches of at most a->mb tokens; each runs 2 L steps, the
 * attention then the FFN part of every layer, each posted from the
 * completion hook of the member that ran the step before (a member's
 * thread), so a micro-batch crosses the members with no return to the
 * caller, and the members take each micro-batch's steps in order.
 *
 * Step s of a micro-batch reads half s % 2 of its buffer slot and writes
 * half (s + 1) % 2: token ids (+ the slot's NOT_BEFORE floor) then the
 * layer number for step 0, else the records the step before wrote and the
 * layer number after them (WFW_JOB_LAYER's trailer, written by the host
 * before it posts the step).  The last step (the FFN of the last layer)
 * writes the results into the caller's buffer, or into the slot when
 * nobody wants them (earlier micro-batches of a job for its last position
 * only).  The modelled clock: the records carry it from member to member;
 * a slot's first step waits for the slot's last job (NOT_BEFORE).
 */
#include <errno.h>
#include <string.h>

#include "wafer_afd.h"

/* How often a step queued after its member's last completion is retried. */
#define AFD_PEND_RETRY_NS	1000000ull

/* Step @r->step without expert parallelism: a layer's attention, then its FFN. */
static void step_plain(struct afd *a, const struct afd_rec *r, struct afd_step *st)
{
	const struct afd_model *am = afd_rec_model(a, r);
	unsigned int s = r->step, l = s / 2;

	st->k = s & 1 ? afd_member(a->na, a->nf, am->L, l) : afd_member(0, a->na, am->L, l);
	st->lw = l;
	st->in = s % 2;
	st->in_rec = s ? am->act_size : 0;
	st->out = !st->in;
	st->out_rec = s + 1 == 2 * am->L ? 0 : am->act_size;
}

/* Step @r->step of micro-batch @r: its member, buffers and records. */
void wafer_afd_step_of(struct afd *a, const struct afd_rec *r, struct afd_step *st)
{
	if (a->ne)
		wafer_afd_ep_step(a, r, st);
	else
		step_plain(a, r, st);
}

/* Step @r->step of micro-batch @r: its member (*@k) and RUN_JOB (@j). */
static void step_job(struct afd *a, struct afd_rec *r, unsigned int *k, struct wafer_job_hw *j)
{
	struct afd_model *am = afd_rec_model(a, r);
	const struct afd_ctx *ac = &a->ctxs[r->job.ctx_id - 1];
	unsigned int n = r->job.n_tokens;
	struct afd_step st;
	uint64_t at;
	uint8_t *p;

	wafer_afd_step_of(a, r, &st);
	*k = st.k;
	p = afd_half(a, r, st.in);
	at = (uint64_t)n * (st.in_rec ? st.in_rec : 4);
	*j = r->job;
	j->ctx_id = ac->id[*k];
	j->user_data = (uint64_t)(r - a->rec);
	j->flags = (r->job.flags & WAFER_JOB_ALL_POSITIONS) | WAFER_JOB_HW_LAYER;
	j->layer = st.lw;
	j->in_sync = NULL;
	j->out_sync = 0;
	j->times_offset = 0;	/* the host writes the times (wafer_afd_times.c) */
	j->times_len = 0;
	j->in = am->view[*k];
	j->in_offset = afd_half_off(a, r, st.in);
	if (!st.in_rec) {
		memcpy(p + at, &ac->done_ns[r->job.slot], 8);
		j->flags |= WAFER_JOB_HW_NOT_BEFORE;
		at += 8;
	} else {
		j->flags |= WAFER_JOB_HW_IN_ACT;
	}
	memcpy(p + at, &st.lw, 4);
	if (st.out_rec) {
		j->flags = (j->flags & ~WAFER_JOB_ALL_POSITIONS) | WAFER_JOB_HW_OUT_ACT;
		j->top_k = 0;
		j->out = am->view[*k];
		j->out_offset = afd_half_off(a, r, st.out);
		j->out_len = (uint64_t)n * st.out_rec;
	} else if (r->scratch) {
		j->out = am->view[*k];
		j->out_offset = afd_half_off(a, r, st.out);
		j->out_len = WAFER_RESULT_SIZE(j->top_k);
	} else {
		j->out = afd_bo_on(r->job.out, *k);
		j->out_offset = r->out_offset;
		j->out_len = (uint64_t)WAFER_RESULT_SIZE(j->top_k) *
			     ((j->flags & WAFER_JOB_ALL_POSITIONS) ? n : 1);
	}
}

/* Micro-batch @r is over (@status): its job finishes with its last one. */
static void rec_done(struct afd *a, struct afd_rec *r, int status, uint64_t t_done)
{
	struct afd_job *job = &a->jobs[r->parent];
	struct afd_ctx *ac = &a->ctxs[r->job.ctx_id - 1];

	r->used = 0;
	if (status && !job->status)
		job->status = status;
	if (t_done > job->t_done)
		job->t_done = t_done;
	if (t_done > ac->done_ns[r->job.slot])
		ac->done_ns[r->job.slot] = t_done;
	if (--job->left)
		return;
	a->done[a->n_done++] = (struct wafer_completion){
		.user_data = job->user_data, .status = job->status,
		.device_ns = job->t_done > job->t0 ? job->t_done - job->t0 : 0,
		.done_ns = job->t_done,
	};
	job->used = 0;
	pthread_cond_broadcast(&a->ch.cond);
}

/* A member's submit said it has no room (now). */
static int no_room(int ret)
{
	return ret == 0 || ret == -EAGAIN || ret == -EBUSY || ret == -ENOSPC;
}

/*
 * Posts micro-batch @r's current step (lock held); 0 or -errno.  A member
 * without room, or with steps already waiting for it, queues it: steps
 * reach a member in the order they were posted.
 */
static int step_post(struct afd *a, struct afd_rec *r)
{
	struct wafer_job_hw j;
	unsigned int k;
	int ret = 0;

	step_job(a, r, &k, &j);
	if (a->ch.dead[k])
		return a->ch.dead[k];	/* it takes nothing more (wafer_afd_failed()) */
	if (!a->n_pend[k])
		ret = wafer_chain_post(&a->ch, k, &j, 1);
	if (ret == 1)
		return 0;
	if (!no_room(ret))
		return ret < 0 ? ret : -EIO;
	r->pend = ++a->pend_seq;
	r->pend_k = k;
	a->n_pend[k]++;
	return 0;
}

/* Member @k's waiting steps, oldest first, while it takes them (lock held). */
static void pend_drain(struct afd *a, unsigned int k)
{
	struct afd_rec *r, *old;
	struct wafer_job_hw j;
	unsigned int i, kk;
	int ret;

	while (a->n_pend[k]) {
		for (old = NULL, i = 0; i < AFD_MAX_INFLIGHT; i++) {
			r = &a->rec[i];
			if (r->used && r->pend && r->pend_k == k && (!old || r->pend < old->pend))
				old = r;
		}
		if (!old)
			return;
		step_job(a, old, &kk, &j);
		ret = wafer_chain_post(&a->ch, k, &j, 1);
		if (ret != 1 && no_room(ret))
			return;
		old->pend = 0;
		a->n_pend[k]--;
		if (ret != 1)
			rec_done(a, old, ret < 0 ? ret : -EIO, 0);
	}
}

/* Member @k ran a step (@c): the micro-batch's next one goes (lock held). */
static void step_done(struct afd *a, unsigned int k, const struct wafer_completion *c)
{
	struct afd_rec *r = &a->rec[c->user_data];
	struct afd_job *job = &a->jobs[r->parent];
	int ret;

	wafer_afd_times_step(a, r, k, c);
	if (!r->step && !job->started) {
		job->t0 = c->done_ns - c->device_ns;
		job->started = 1;
	}
	if (c->status || r->step + 1 == afd_rec_model(a, r)->spl * afd_rec_model(a, r)->L) {
		rec_done(a, r, c->status, c->done_ns);
	} else {
		if (a->ne)
			wafer_afd_ep_after(a, r);
		r->step++;
		if (a->ne)
			wafer_afd_ep_next(a, r);
		ret = step_post(a, r);
		if (ret)
			rec_done(a, r, ret, c->done_ns);
	}
	pend_drain(a, k);	/* a job of member k left: room for a waiting step */
}

/* Member @k ran steps @c[0..n) (wafer_chain_ops): each micro-batch's next one goes. */
void wafer_afd_completed(struct wafer_chain *ch, unsigned int k,
			 const struct wafer_completion *c, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		step_done(afd_of_chain(ch), k, &c[i]);
}

/*
 * Member @k failed with @err (wafer_chain_ops; it is dead): every
 * micro-batch whose step it holds, or that waits for room on it, is over
 * with that error, so its job completes with it, once.  Every micro-batch
 * crosses every member, so the others fail as they reach it (step_post()),
 * and a job submitted later fails at once (job_start()).
 */
void wafer_afd_failed(struct wafer_chain *ch, unsigned int k, int err)
{
	struct afd *a = afd_of_chain(ch);
	struct afd_step st;
	struct afd_rec *r;
	const char *group;
	unsigned int i;

	group = afd_group(a, k, &i);
	wafer_prefix_error(err, "%s device %u failed", group, i);
	for (i = 0; i < AFD_MAX_INFLIGHT; i++) {
		r = &a->rec[i];
		if (!r->used)
			continue;
		wafer_afd_step_of(a, r, &st);
		if (st.k != k)
			continue;	/* held by a live member: failed when it reaches @k */
		if (r->pend) {
			r->pend = 0;
			a->n_pend[k]--;
		}
		rec_done(a, r, err, 0);
	}
}

static int free_recs(const struct afd *a, unsigned int *idx, unsigned int want)
{
	unsigned int i, n = 0;

	for (i = 0; i < AFD_MAX_INFLIGHT && n < want; i++)
		if (!a->rec[i].used)
			idx[n++] = i;
	return n == want;
}

/* A NOP, a job with nothing to run, or one a dead member fails: completed at once. */
static void job_now(struct afd *a, const struct wafer_job_hw *j, int status)
{
	a->done[a->n_done++] = (struct wafer_completion){ .user_data = j->user_data,
							  .status = status };
	pthread_cond_broadcast(&a->ch.cond);
}

/* Job @j as micro-batches, their first steps posted; 0, or -EAGAIN if it does not fit. */
static int job_start(struct afd *a, const struct wafer_job_hw *j)
{
	unsigned int idx[AFD_MAX_INFLIGHT], mb = a->mb, nmb = (j->n_tokens + mb - 1) / mb, i, b;
	unsigned int size = WAFER_RESULT_SIZE(j->top_k), all = j->flags & WAFER_JOB_ALL_POSITIONS;
	struct afd_rec *r;
	int ret = 0;

	if (wafer_chain_dead(&a->ch, afd_members(a))) {
		/* it would cross that member */
		job_now(a, j, wafer_chain_dead(&a->ch, afd_members(a)));
		return 0;
	}
	for (b = 0; b < AFD_MAX_JOBS && a->jobs[b].used; b++)
		;
	if (b == AFD_MAX_JOBS || !free_recs(a, idx, nmb))
		return -EAGAIN;
	a->jobs[b] = (struct afd_job){ .used = 1, .user_data = j->user_data, .left = nmb };
	for (i = 0; i < nmb; i++) {
		r = &a->rec[idx[i]];
		*r = (struct afd_rec){ .used = 1, .job = *j, .parent = b, .no = i };
		r->job.start_pos = j->start_pos + i * mb;
		r->job.n_tokens = j->n_tokens - i * mb < mb ? j->n_tokens - i * mb : mb;
		r->out_offset = j->out_offset + (all ? (uint64_t)i * mb * size : 0);
		r->scratch = !all && i + 1 < nmb;
		memcpy(afd_half(a, r, 0), (const uint8_t *)j->in->map + j->in_offset +
		       4ull * i * mb, 4ull * r->job.n_tokens);
	}
	/* Posted in order, so each member takes them in order. */
	for (i = 0; i < nmb; i++) {
		r = &a->rec[idx[i]];
		ret = ret ? ret : step_post(a, r);
		if (ret)
			rec_done(a, r, ret, 0);
	}
	return 0;
}

int wafer_afd_submit(struct wafer_dev *dev, const struct wafer_job_hw *jobs, unsigned int n)
{
	struct afd *a = afd_of(dev);
	unsigned int i;
	int ret = 0;

	pthread_mutex_lock(&a->ch.lock);
	for (i = 0; i < n && !ret; i++) {
		if ((jobs[i].flags & WAFER_JOB_NOP) || !jobs[i].n_tokens) {
			job_now(a, &jobs[i], 0);
			continue;
		}
		ret = wafer_afd_times_check(a, &jobs[i], i);
		if (!ret)
			ret = job_start(a, &jobs[i]);
		if (ret)
			break;
	}
	pthread_mutex_unlock(&a->ch.lock);
	if (i)
		return (int)i;
	return ret == -EAGAIN ? wafer_set_error(-EAGAIN, "afd: %d micro-batches in flight "
						"already", AFD_MAX_INFLIGHT) : ret;
}

/* Steps wait on some member (lock held): drained, 1; else 0. */
static int pend_kick(struct afd *a)
{
	unsigned int k, any = 0;

	for (k = 0; k < afd_members(a); k++) {
		pend_drain(a, k);
		any |= a->n_pend[k] != 0;
	}
	return (int)any;
}

/*
 * Polled members (lock held): every completion any member has moves its
 * micro-batch on; if none was there, wait (until @until at most) on a
 * member that holds steps.  0; 1 when no member holds any (nothing to
 * wait for); or the caller's error (wafer_chain_reap()).
 */
static int poll_members(struct afd *a, uint64_t until)
{
	unsigned int k, got = 0, busy = 0, wait_k = 0;
	int n;

	for (k = 0; k < afd_members(a); k++) {
		n = wafer_chain_reap(&a->ch, k, 0, 0);
		if (n < 0)
			return n;
		got += (unsigned int)n;
		if (a->ch.busy[k] && !busy++)
			wait_k = k;
	}
	if (!busy)
		return got ? 0 : 1;
	if (got)
		return 0;
	/* One member holds steps: its next completion is the next event. */
	if (busy > 1 && until > wafer_now_ns() + 1000000)
		until = wafer_now_ns() + 1000000;
	n = wafer_chain_reap(&a->ch, wait_k, 1, until);
	return n < 0 ? n : 0;
}

/* The caller moves the micro-batches on: until @min jobs finished; 0 or its error. */
static int reap_polled(struct afd *a, unsigned int max, unsigned int min,
		       uint64_t deadline_ns)
{
	int ret = 0;

	while (a->n_done < min && a->n_done < max) {
		pend_kick(a);	/* a queued step waits on a member that holds others */
		ret = poll_members(a, deadline_ns);
		if (ret)	/* nothing in flight (nothing more comes), or an error */
			break;
		if (a->n_done < min && wafer_now_ns() >= deadline_ns)
			break;
	}
	return ret < 0 ? ret : 0;
}

/** struct wait - what wafer_chain_wait() passes back: the device, what the reap wants */
struct wait {
	struct afd *a;
	unsigned int max, min;
};

static int reap_done(void *arg)
{
	const struct wait *w = arg;

	return w->a->n_done >= w->min || w->a->n_done >= w->max;
}

/* A queued step waits on a member that holds others: look again soon. */
static uint64_t reap_retry_ns(void *arg)
{
	return pend_kick(((struct wait *)arg)->a) ? AFD_PEND_RETRY_NS : WAFER_CHAIN_CHECK_NS;
}

/*
 * A member's failure is no error of the reap: the jobs it held complete
 * with it as their status.  The caller's error (a polled member reaped
 * from the wrong thread) is, when no job completed.
 */
int wafer_afd_reap(struct wafer_dev *dev, struct wafer_completion *out, unsigned int max,
		   unsigned int min, uint64_t deadline_ns)
{
	struct afd *a = afd_of(dev);
	unsigned int n;
	int ret = 0;

	pthread_mutex_lock(&a->ch.lock);
	if (!a->ch.hooked)
		ret = reap_polled(a, max, min, deadline_ns);
	else
		wafer_chain_wait(&a->ch, deadline_ns, reap_done, reap_retry_ns,
				 &(struct wait){ .a = a, .max = max, .min = min });
	n = a->n_done < max ? a->n_done : max;
	memcpy(out, a->done, n * sizeof(*out));
	memmove(a->done, a->done + n, (a->n_done - n) * sizeof(*out));
	a->n_done -= n;
	pthread_mutex_unlock(&a->ch.lock);
	return n || !ret ? (int)n : ret;
}
