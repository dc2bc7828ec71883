// SPDX-License-Identifier: MIT
/*
 * wfs_job.c - the job lifecycle (see wfs_job.h).
 */
#include "wfs_device_priv.h"

/* The latest modelled time the host may give: NOT_BEFORE's bound. */
#define WFS_HOST_TIME_MAX	WFW_NOT_BEFORE_MAX

struct wfs_job *wfs_job_get(struct wfs_device *dev, u32 idx)
{
	return &dev->job.jobs[idx];
}

/* Take a free table entry; waits while the table is full.  NULL: reset. */
static struct wfs_job *job_admit(struct wfs_device *dev, u64 cookie,
				 const struct wfw_cmd_run_job *p,
				 struct wfs_ctx *ctx, u64 not_before, u32 layer,
				 int *err)
{
	struct wfs_job_table *jt = &dev->job;
	struct wfs_sync *sy = &dev->sync;
	u32 chunk = dev->hw.prof.chunk_tokens, i;
	struct wfs_slot_state *sl = &ctx->slot[p->slot];
	struct wfs_timeline *tl = ctx->tl;
	struct wfs_job *job = NULL;

	*err = WFS_CPL_DEFERRED;
	wfs_os_mutex_lock(sy->lock);
	while (jt->active >= jt->max && !wfs_aborting(sy))
		wfs_os_cond_wait(sy->cond, sy->lock);
	if (wfs_aborting(sy))
		goto out;
	for (i = 0; i < jt->max && !job; i++) {
		if (jt->jobs[i].state == WFS_JOB_FREE)
			job = &jt->jobs[i];
	}
	if (!job) {	/* cannot happen: @active counts them */
		*err = -WFS_EIO;
		goto out;
	}
	WFS_MEMSET(job, 0, sizeof(*job));
	job->state = WFS_JOB_ACTIVE;
	job->cookie = cookie;
	job->args = *p;
	job->ctx = ctx;
	job->layer = layer;
	job->n_chunks = (p->n_tokens + chunk - 1) / chunk;
	job->host_t0 = wfs_os_now_ns();
	/* An armed hang waits for a job that has work to hang in. */
	if (!(p->flags & WFW_JOB_NOP)) {
		job->hang = jt->hang_armed;
		jt->hang_armed = 0;
	}
	/*
	 * Modelled ready time, on the tenant's timeline: see "Timeline" and
	 * "Tenants" in wfs_timing.h.  Activation records carry their own (the
	 * sender's timeline): when the host got them here says nothing about
	 * the modelled machine.
	 */
	job->t_ready = sl->pending ? 0 : sl->done_ns;
	/*
	 * An idle tenant's clock stands at its latest completion, unless the
	 * host gives a floor: its view of the whole chain (NOT_BEFORE), while
	 * that completion counts the link time of its last jobs, which this
	 * device's stages did not spend.
	 */
	if (!tl->active && tl->done_ns > job->t_ready &&
	    !(p->flags & WFW_JOB_NOT_BEFORE))
		job->t_ready = tl->done_ns;
	if (p->flags & WFW_JOB_IN_ACT)
		job->t_ready = 0;
	/* The host's floor: the chain's view of the slot (NOT_BEFORE). */
	job->t_ready = WFS_MAX(job->t_ready, not_before);
	/* An idle device: what its stages ran before delays no one. */
	for (i = 0; !jt->active && i < dev->hw.prof.stages; i++)
		dev->stages[i].idle_work = dev->stages[i].free_at;
	sl->pending++;
	ctx->active_jobs++;
	tl->active++;
	jt->active++;
out:
	wfs_os_mutex_unlock(sy->lock);
	return job;
}

/*
 * A chunk of records arrives when its latest record does (wfs_timing.h).
 * A time past WFS_HOST_TIME_MAX fails the job and is not taken: the host's
 * times are bounded as NOT_BEFORE's floor is.
 */
static u64 chunk_arrival(struct wfs_device *dev, struct wfs_job *job,
			 const struct wfs_flit *e, u64 rec, u64 t)
{
	struct wfw_act_rec h;
	u32 i;

	for (i = 0; i < e->n; i++) {
		WFS_MEMCPY(&h, e->buf + i * rec, sizeof(h));
		if (h.t_ns <= WFS_HOST_TIME_MAX) {
			t = WFS_MAX(t, h.t_ns);
			continue;
		}
		if (!job->status)
			wfs_log_printf(&dev->hw.log, 1,
				       "run: activation record %u: t_ns %llu is past the latest modelled time (2^62 ns)",
				       e->pos0 + i - job->args.start_pos,
				       (unsigned long long)h.t_ns);
		job->status = -WFS_EINVAL;
	}
	return t;
}

/* Copy the job's tokens (or activations) into stage 0's FIFO by chunk. */
static void job_feed(struct wfs_device *dev, struct wfs_job *job)
{
	const struct wfw_cmd_run_job *p = &job->args;
	struct wfs_stage *st = &dev->stages[0];
	struct wfs_fifo *in = &st->in;
	u32 chunk = dev->hw.prof.chunk_tokens, done, n;
	u32 idx = job->ctx->model;
	u64 rec = (p->flags & WFW_JOB_IN_ACT) ? dev->models.m[idx].act_bytes : 4;
	struct wfs_flit *e;

	for (done = 0; done < p->n_tokens; done += chunk) {
		n = WFS_MIN(chunk, p->n_tokens - done);
		e = wfs_fifo_reserve(&dev->sync, in);
		if (!e)
			return;	/* reset: the job is dropped */
		e->buf = st->mdl[idx].fifo[e - in->ent];
		if (dev->hw.dma.read(dev->hw.dma_ctx, p->in_addr + rec * done,
				     e->buf, rec * n)) {
			job->status = -WFS_EFAULT;
			WFS_MEMSET(e->buf, 0, rec * n);
		}
		e->job = (u32)(job - dev->job.jobs);
		e->pos0 = p->start_pos + done;
		e->n = n;
		e->last = done + n >= p->n_tokens;
		e->t_arrive = job->t_ready;
		if (p->flags & WFW_JOB_IN_ACT)
			e->t_arrive = chunk_arrival(dev, job, e, rec,
						    e->t_arrive);
		wfs_fifo_publish(in);
	}
}

int wfs_job_submit(struct wfs_device *dev, u64 cookie,
		   const struct wfw_cmd_run_job *p, struct wfs_ctx *ctx,
		   u64 not_before, u32 layer)
{
	struct wfs_job *job;
	int err;

	job = job_admit(dev, cookie, p, ctx, not_before, layer, &err);
	if (!job)
		return err;
	/* A NOP leaves at intake: no stage sees it, it took no device time. */
	if (p->flags & WFW_JOB_NOP) {
		job->t_start = job->t_ready;
		wfs_job_retire(dev, job, job->t_ready);
		return WFS_CPL_DEFERRED;
	}
	if (job->hang)
		wfs_log_printf(&dev->hw.log, 1, "fault injection: job 0x%llx will hang",
			       (unsigned long long)job->cookie);
	job_feed(dev, job);
	return WFS_CPL_DEFERRED;
}

/* Give a job's table entry and its context's counts back (state lock). */
static void job_release_locked(struct wfs_device *dev, struct wfs_job *job)
{
	struct wfs_slot_state *sl = &job->ctx->slot[job->args.slot];

	wfs_os_mutex_assert_held(dev->sync.lock);
	if (sl->pending)
		sl->pending--;
	job->ctx->tl->active--;
	job->ctx->active_jobs--;
	dev->job.active--;
	job->state = WFS_JOB_FREE;
}

void wfs_job_retire(struct wfs_device *dev, struct wfs_job *job, u64 t_done)
{
	struct wfs_slot_state *sl = &job->ctx->slot[job->args.slot];
	struct wfs_timeline *tl = job->ctx->tl;
	struct wfs_job_table *jt = &dev->job;
	struct wfw_cpl c;
	u64 dev_ns;

	WFS_MEMSET(&c, 0, sizeof(c));
	c.cookie = job->cookie;
	c.status = job->status;
	c.opcode = WFW_OP_RUN_JOB;
	c.result0 = job->status ? 0 : job->args.n_tokens;
	c.result1 = job->records;
	c.result2 = job->n_chunks;
	c.device_ns = t_done - job->t_start;
	c.value = t_done;
	c.host_ns = wfs_os_now_ns() - job->host_t0;

	wfs_os_mutex_lock(dev->sync.lock);
	if (t_done > sl->done_ns)
		sl->done_ns = t_done;
	jt->completed++;
	if (!job->status)
		jt->tokens += job->args.n_tokens;
	if (t_done > tl->done_ns)
		tl->done_ns = t_done;
	/* The device-wide figure: the tenant's time from where it began. */
	if (WFS_ADD_OVF(tl->origin_ns, t_done, &dev_ns))
		dev_ns = ~0ull;
	if (dev_ns > jt->makespan_ns)
		jt->makespan_ns = dev_ns;
	job_release_locked(dev, job);
	wfs_os_cond_broadcast(dev->sync.cond);
	wfs_os_mutex_unlock(dev->sync.lock);

	wfs_cpl_post(&dev->hw, &dev->cpl, &c, 1);
}

u32 wfs_job_drop_all_locked(struct wfs_device *dev)
{
	u32 i, n = 0;

	wfs_os_mutex_assert_held(dev->sync.lock);
	for (i = 0; i < dev->job.max; i++) {
		struct wfs_job *job = &dev->job.jobs[i];

		if (job->state != WFS_JOB_ACTIVE)
			continue;
		job_release_locked(dev, job);
		n++;
	}
	dev->job.hang_armed = 0;
	return n;
}

void wfs_job_arm_hang(struct wfs_device *dev, u32 on)
{
	wfs_os_mutex_lock(dev->sync.lock);
	dev->job.hang_armed = on;
	wfs_os_mutex_unlock(dev->sync.lock);
}
