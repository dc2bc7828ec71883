// SPDX-License-Identifier: GPL-2.0-only
/*
 * wafer jobs.
 *
 * A submitted job is validated and its buffers pinned and mapped into the
 * device address space in the ioctl (where sleeping and allocating are
 * fine).  drm_sched orders it behind its in-fences and calls run_job, which
 * only writes the prepared command to the firmware's ring.  The firmware's
 * interrupt hands the completion to wafer_job_fw_cpl(), which signals the
 * job's hardware fence: no allocation and no sleeping lock on that path.
 *
 * A job that outlives job_timeout_ms, a device fault, or a lost or corrupt
 * completion makes the device reset: every job the firmware held fails
 * (-ETIMEDOUT for the one that timed out, -EIO for the others) and later
 * jobs run normally.
 */
#include <linux/dma-fence.h>
#include <linux/iosys-map.h>
#include <linux/ktime.h>
#include <linux/overflow.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>

#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>
#include <drm/drm_syncobj.h>
#include <drm/gpu_scheduler.h>
#include <drm/wafer_accel.h>

#include "wafer_drv.h"
#include "wafer_job.h"
#include "wafer_model.h"
#include "wafer_trace.h"
#include "wafer_uapi.h"

/* Completed results a file may leave unwaited before the oldest are dropped. */
#define WAFER_MAX_UNWAITED	4096

/**
 * struct wafer_job_queue - one device's job scheduling state
 * @wdev: device
 * @sched: the scheduler feeding the firmware's command ring
 * @wq: ordered queue for the scheduler's timeouts and for recovery
 * @jobs: cookie -> job, from run_job until the job is freed (the id is
 *	reserved at submit, so no other job can reuse it meanwhile)
 * @fence_lock: Protects the hardware fences' state
 * @fence_ctx: dma-fence context of the hardware fences
 * @fence_seqno: last hardware fence seqno
 * @recover_work: resets the device after a fault
 * @resets: recoveries performed
 * @timeouts: jobs that timed out
 * @completed: jobs the firmware completed
 * @busy_ns: modelled device time of those jobs
 */
struct wafer_job_queue {
	struct wafer_device *wdev;
	struct drm_gpu_scheduler sched;
	struct workqueue_struct *wq;
	struct xarray jobs;
	spinlock_t fence_lock; /* Protects the hardware fences' state */
	u64 fence_ctx;
	atomic64_t fence_seqno;
	struct work_struct recover_work;
	atomic64_t resets;
	atomic64_t timeouts;
	atomic64_t completed;
	atomic64_t busy_ns;
};

/**
 * struct wafer_file_jobs - per-file job state
 * @entity: the file's scheduler entity
 * @lock: Protects @results and @next_seqno
 * @results: seqno -> struct wafer_job_result, until waited for
 * @next_seqno: last seqno handed out
 */
struct wafer_file_jobs {
	struct drm_sched_entity entity;
	struct mutex lock; /* Protects results and next_seqno */
	struct xarray results;
	u64 next_seqno;
};

/**
 * struct wafer_job - a submitted job
 * @base: scheduler job
 * @q: device queue
 * @wfile: submitting file (reference held)
 * @ctx: context (reference held)
 * @bo: input and output BOs (references held)
 * @map: their kernel mappings
 * @addr: their device addresses
 * @cookie: id in @q->jobs and in the firmware command
 * @cmd: the RUN_JOB command, ready for the ring
 * @hw_fence: signalled when the firmware completes the job
 * @hw_fence_live: @hw_fence was initialised by run_job
 * @result: shared with the file's wait table
 * @finished_cb: uncounts the job from @wfile->unfinished when it finishes
 * @counted: the job is still counted in @wfile->unfinished
 * @claimed: someone (completion, failure on reset) took the job to signal
 *	its hardware fence: exactly once
 */
struct wafer_job {
	struct drm_sched_job base;
	struct wafer_job_queue *q;
	struct wafer_file *wfile;
	struct wafer_ctx *ctx;
	struct drm_gem_object *bo[2];
	struct iosys_map map[2];
	u64 addr[2];
	u32 cookie;
	struct wfw_cmd cmd;
	struct dma_fence *hw_fence;
	bool hw_fence_live;
	struct wafer_job_result *result;
	struct dma_fence_cb finished_cb;
	atomic_t counted;
	atomic_t claimed;
};

static struct wafer_job *to_wafer_job(struct drm_sched_job *sj)
{
	return container_of(sj, struct wafer_job, base);
}

static const char *wafer_fence_driver_name(struct dma_fence *f)
{
	return "wafer";
}

static const char *wafer_fence_timeline_name(struct dma_fence *f)
{
	return "wafer-firmware";
}

static const struct dma_fence_ops wafer_hw_fence_ops = {
	.get_driver_name = wafer_fence_driver_name,
	.get_timeline_name = wafer_fence_timeline_name,
};

static void result_release(struct kref *ref)
{
	struct wafer_job_result *r = container_of(ref, struct wafer_job_result, ref);

	dma_fence_put(r->finished);
	kfree(r);
}

/**
 * wafer_job_result_put() - drop a reference to a job's result
 * @r: the result
 */
void wafer_job_result_put(struct wafer_job_result *r)
{
	kref_put(&r->ref, result_release);
}

/* True for the one caller that gets to complete @job. */
static bool job_claim(struct wafer_job *job)
{
	return !atomic_xchg(&job->claimed, 1);
}

/*
 * Completes a job the caller has claimed.  The job may be freed as soon as
 * its fence signals, so the fence is held across the signal and nothing of
 * the job is touched after.
 */
static void job_signal(struct wafer_job *job, int status, u64 device_ns)
{
	struct dma_fence *f = dma_fence_get(job->hw_fence);

	job->result->device_ns = device_ns;
	if (status)
		dma_fence_set_error(f, status);
	dma_fence_signal(f);
	dma_fence_put(f);
}

/**
 * wafer_job_fw_cpl() - firmware completion of a job (the interrupt path)
 * @owner: the device
 * @cpl: verified completion record
 */
void wafer_job_fw_cpl(void *owner, const struct wfw_cpl *cpl)
{
	struct wafer_device *wdev = owner;
	struct wafer_job *job = NULL;

	/*
	 * Jobs leave q->jobs only when freed (under the xa_lock), so one found
	 * under it is alive; once claimed it stays so until we signal it.
	 */
	if (cpl->cookie && cpl->cookie <= U32_MAX) {
		xa_lock(&wdev->queue->jobs);
		job = xa_load(&wdev->queue->jobs, cpl->cookie);
		if (job && !job_claim(job))
			job = NULL;
		xa_unlock(&wdev->queue->jobs);
	}
	if (!job) {
		drm_err_ratelimited(&wdev->drm, "completion for unknown job %llu\n", cpl->cookie);
		return;
	}
	atomic64_inc(&wdev->queue->completed);
	atomic64_add(cpl->device_ns, &wdev->queue->busy_ns);
	atomic64_add(cpl->device_ns, &job->wfile->busy_ns);
	trace_wafer_job_complete(wdev->index, job->cookie, cpl->status, cpl->device_ns);
	job_signal(job, cpl->status, cpl->device_ns);
}

static struct dma_fence *wafer_run_job(struct drm_sched_job *sj)
{
	struct wafer_job *job = to_wafer_job(sj);
	struct wafer_job_queue *q = job->q;
	struct dma_fence *fence;
	int ret;

	if (unlikely(sj->s_fence->finished.error))
		return NULL;

	dma_fence_init(job->hw_fence, &wafer_hw_fence_ops, &q->fence_lock,
		       q->fence_ctx, atomic64_inc_return(&q->fence_seqno));
	job->hw_fence_live = true;
	if (unlikely(drm_dev_is_unplugged(&q->wdev->drm))) {
		dma_fence_set_error(job->hw_fence, -ENODEV);
		dma_fence_signal(job->hw_fence);
		return dma_fence_get(job->hw_fence);
	}
	/*
	 * The cookie was reserved at submit and stays the job's until it is
	 * freed: storing allocates nothing, and no other job can reuse it.
	 */
	xa_store(&q->jobs, job->cookie, job, GFP_NOWAIT);
	trace_wafer_job_start(q->wdev->index, job->cookie);
	ret = wafer_fw_post(&q->wdev->fw, &job->cmd);
	/* The reference returned is taken first: signalling may free the job. */
	fence = dma_fence_get(job->hw_fence);
	if (ret && job_claim(job))
		job_signal(job, ret, 0);
	return fence;
}

/*
 * Fails every job the firmware held; the device has just been reset (or
 * unplugged: then every job fails with -ENODEV).  The scheduler is stopped,
 * so no job is freed meanwhile.
 */
static void fail_held_jobs(struct wafer_job_queue *q, struct drm_sched_job *bad)
{
	bool gone = drm_dev_is_unplugged(&q->wdev->drm);
	struct wafer_job *job;
	unsigned long cookie;

	xa_for_each(&q->jobs, cookie, job) {
		if (job_claim(job))
			job_signal(job, gone ? -ENODEV : &job->base == bad ? -ETIMEDOUT : -EIO, 0);
		/*
		 * drm_sched_stop() detached the job from its hardware fence;
		 * reattach it so that drm_sched_start() finishes the job with
		 * the fence's status rather than -ECANCELED: our error, or
		 * that of a completion that came in after the detach (the
		 * firmware ran such a job: it must not be reported failed).
		 */
		if (!job->base.s_fence->parent)
			job->base.s_fence->parent = dma_fence_get(job->hw_fence);
	}
}

static void recover(struct wafer_job_queue *q, struct drm_sched_job *bad,
		    const char *why)
{
	struct wafer_device *wdev = q->wdev;

	bool gone = drm_dev_is_unplugged(&wdev->drm);

	if (!gone)
		drm_err_ratelimited(&wdev->drm, "resetting the device: %s\n", why);
	drm_sched_stop(&q->sched, bad);
	/* Unplugged: also drop the model and contexts, nothing will use them. */
	wafer_fw_reset(&wdev->fw, gone);
	fail_held_jobs(q, bad);
	drm_sched_start(&q->sched);
	atomic64_inc(&q->resets);
}

static enum drm_gpu_sched_stat wafer_timedout_job(struct drm_sched_job *sj)
{
	struct wafer_job *job = to_wafer_job(sj);
	struct wafer_job_queue *q = job->q;

	atomic64_inc(&q->timeouts);
	trace_wafer_job_timeout(q->wdev->index, job->cookie);
	recover(q, sj, "a job timed out");
	return DRM_GPU_SCHED_STAT_NOMINAL;
}

/**
 * wafer_job_queue_unplug() - the device is going away: fail its jobs
 * @wdev: device, already marked unplugged (drm_dev_unplug())
 *
 * Every job the firmware holds and every job still queued completes with
 * -ENODEV; new submissions already fail at drm_dev_enter().  The firmware
 * itself is stopped later, when the last file closes.  Runs as the
 * recovery work, so it is serialised with timeouts and fault recovery.
 */
void wafer_job_queue_unplug(struct wafer_device *wdev)
{
	queue_work(wdev->queue->wq, &wdev->queue->recover_work);
	flush_work(&wdev->queue->recover_work);
}

static void wafer_recover_work(struct work_struct *work)
{
	struct wafer_job_queue *q = container_of(work, struct wafer_job_queue,
						 recover_work);

	recover(q, NULL, "firmware fault");
}

/**
 * wafer_job_fw_fault() - the firmware reported a fault or lost a completion
 * @owner: the device
 * @why: what happened
 */
void wafer_job_fw_fault(void *owner, const char *why)
{
	struct wafer_device *wdev = owner;

	drm_err_ratelimited(&wdev->drm, "firmware: %s\n", why);
	if (wdev->queue)
		queue_work(wdev->queue->wq, &wdev->queue->recover_work);
}

static void job_release_buffers(struct wafer_job *job)
{
	struct wafer_dma *dma = &job->q->wdev->fw.dma;
	int i;

	for (i = 0; i < 2; i++) {
		if (job->addr[i])
			wafer_dma_unmap(dma, job->addr[i]);
		if (job->map[i].vaddr)
			drm_gem_vunmap_unlocked(job->bo[i], &job->map[i]);
		if (job->bo[i])
			drm_gem_object_put(job->bo[i]);
	}
}

/* The per-file limit counts jobs until they finish, not until freed. */
static void job_uncount(struct wafer_job *job)
{
	if (atomic_xchg(&job->counted, 0))
		atomic_dec(&job->wfile->unfinished);
}

static void job_finished_cb(struct dma_fence *f, struct dma_fence_cb *cb)
{
	job_uncount(container_of(cb, struct wafer_job, finished_cb));
}

static void job_free(struct wafer_job *job)
{
	job_uncount(job);
	job_release_buffers(job);
	if (job->cookie)
		xa_erase(&job->q->jobs, job->cookie);
	if (job->ctx)
		wafer_ctx_put(job->ctx);
	if (job->result)
		wafer_job_result_put(job->result);
	if (job->hw_fence_live)
		dma_fence_put(job->hw_fence);
	else
		kfree(job->hw_fence);
	if (atomic_dec_and_test(&job->wfile->inflight))
		wake_up_var(&job->wfile->inflight);
	wafer_file_put(job->wfile);
	kfree(job);
}

static void wafer_free_job(struct drm_sched_job *sj)
{
	drm_sched_job_cleanup(sj);
	job_free(to_wafer_job(sj));
}

static const struct drm_sched_backend_ops wafer_sched_ops = {
	.run_job = wafer_run_job,
	.timedout_job = wafer_timedout_job,
	.free_job = wafer_free_job,
};

/* Looks up, range-checks, pins, maps a job buffer into the device. */
static int job_map_buffer(struct drm_device *dev, struct drm_file *file,
			  struct wafer_job *job, int i, u32 handle, u64 offset,
			  u64 len, u32 dma_flags)
{
	u64 end;
	int ret;

	job->bo[i] = drm_gem_object_lookup(file, handle);
	if (!job->bo[i]) {
		drm_dbg(dev, "SUBMIT: no BO with handle %u\n", handle);
		return -ENOENT;
	}
	if (check_add_overflow(offset, len, &end) || end > job->bo[i]->size) {
		drm_dbg(dev, "SUBMIT: [%llu, +%llu) exceeds BO %u (%zu bytes)\n",
			offset, len, handle, job->bo[i]->size);
		return -EINVAL;
	}
	ret = drm_gem_vmap_unlocked(job->bo[i], &job->map[i]);
	if (ret)
		return ret;
	return wafer_dma_map(&job->q->wdev->fw.dma, job->map[i].vaddr + offset,
			     len, dma_flags, &job->addr[i]);
}

static int add_in_syncobjs(struct wafer_job *job, struct drm_file *file,
			   const struct drm_wafer_job *a)
{
	u32 __user *handles = u64_to_user_ptr(a->in_syncobjs);
	u32 i, h;
	int ret;

	for (i = 0; i < a->in_syncobj_count; i++) {
		if (get_user(h, handles + i))
			return -EFAULT;
		ret = drm_sched_job_add_syncobj_dependency(&job->base, file, h, 0);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * wafer_job_submit() - validate and queue a job
 * @file: submitting DRM file
 * @a: the job descriptor (a kernel copy)
 * @seqno: out: the job's sequence number in this file, for
 *	DRM_IOCTL_WAFER_WAIT; NULL when the caller reaps the job itself
 * @result: out, when @seqno is NULL: a reference to the job's result
 *
 * Return: 0 or a negative errno; nothing was queued on error.
 */
int wafer_job_submit(struct drm_file *file, const struct drm_wafer_job *a,
		     u64 *seqno, struct wafer_job_result **result)
{
	struct wafer_file *wfile = to_wafer_file(file);
	struct wafer_device *wdev = wfile->wdev;
	struct drm_device *dev = &wdev->drm;
	struct wafer_file_jobs *fj = wfile->jobs;
	struct drm_syncobj *out_sync = NULL;
	struct wafer_job *job;
	u32 cookie;
	u64 out_len, s;
	int ret;

	job = kzalloc(sizeof(*job), GFP_KERNEL);
	if (!job)
		return -ENOMEM;
	job->q = wdev->queue;
	kref_get(&wfile->ref);
	job->wfile = wfile;
	atomic_inc(&wfile->inflight);
	atomic_set(&job->counted, 1);
	if (atomic_inc_return(&wfile->unfinished) > wafer_max_file_inflight) {
		drm_dbg(dev, "SUBMIT: %u jobs in flight already\n", wafer_max_file_inflight);
		ret = -EBUSY;
		goto err_free;
	}

	job->ctx = wafer_ctx_get(wfile, a->ctx_id);
	if (!job->ctx) {
		drm_dbg(dev, "SUBMIT: no context %u in this file\n", a->ctx_id);
		ret = -ENOENT;
		goto err_free;
	}
	ret = wafer_job_validate(dev, a, job->ctx->slots, job->ctx->ctx_len, &out_len);
	if (ret)
		goto err_free;
	ret = job_map_buffer(dev, file, job, 0, a->in_handle, a->in_offset,
			     (u64)a->n_tokens * sizeof(u32), 0);
	if (ret)
		goto err_free;
	ret = job_map_buffer(dev, file, job, 1, a->out_handle, a->out_offset,
			     out_len, WAFER_DMA_WRITE);
	if (ret)
		goto err_free;

	job->result = kzalloc(sizeof(*job->result), GFP_KERNEL);
	if (!job->result) {
		ret = -ENOMEM;
		goto err_free;
	}
	/* job_free() drops this reference, whatever fails next. */
	kref_init(&job->result->ref);
	job->hw_fence = kzalloc(sizeof(*job->hw_fence), GFP_KERNEL);
	if (!job->hw_fence) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = xa_alloc(&job->q->jobs, &cookie, NULL, xa_limit_32b, GFP_KERNEL);
	if (ret)
		goto err_free;
	job->cookie = cookie;

	job->cmd.opcode = WFW_OP_RUN_JOB;
	job->cmd.cookie = cookie;
	job->cmd.job.ctx_id = job->ctx->fw_id;
	job->cmd.job.slot = a->slot;
	job->cmd.job.start_pos = a->start_pos;
	job->cmd.job.n_tokens = a->n_tokens;
	job->cmd.job.in_addr = job->addr[0];
	job->cmd.job.out_addr = job->addr[1];
	job->cmd.job.out_len = out_len;
	job->cmd.job.topk = a->top_k;
	job->cmd.job.flags = a->flags & DRM_WAFER_JOB_ALL_POSITIONS ?
			     WFW_JOB_ALL_POSITIONS : 0;

	if (a->out_syncobj) {
		out_sync = drm_syncobj_find(file, a->out_syncobj);
		if (!out_sync) {
			ret = -ENOENT;
			goto err_free;
		}
	}

	ret = drm_sched_job_init(&job->base, &fj->entity, 1, wfile, file->client_id);
	if (ret)
		goto err_sync;
	ret = add_in_syncobjs(job, file, a);
	if (ret)
		goto err_cleanup;

	mutex_lock(&fj->lock);
	s = fj->next_seqno + 1;
	if (seqno) {
		ret = xa_insert(&fj->results, s, job->result, GFP_KERNEL);
		if (ret) {
			mutex_unlock(&fj->lock);
			goto err_cleanup;
		}
	}
	fj->next_seqno = s;
	drm_sched_job_arm(&job->base);
	job->result->finished = dma_fence_get(&job->base.s_fence->finished);
	if (dma_fence_add_callback(job->result->finished, &job->finished_cb, job_finished_cb))
		job_uncount(job);
	/* One reference for the file's table or the caller. */
	kref_get(&job->result->ref);
	if (out_sync)
		drm_syncobj_replace_fence(out_sync, job->result->finished);
	if (!seqno)
		*result = job->result;
	trace_wafer_job_submit(wdev->index, cookie, a->ctx_id, a->slot, a->start_pos,
			       a->n_tokens);
	drm_sched_entity_push_job(&job->base);
	mutex_unlock(&fj->lock);

	if (out_sync)
		drm_syncobj_put(out_sync);
	if (seqno)
		*seqno = s;
	return 0;

err_cleanup:
	drm_sched_job_cleanup(&job->base);
err_sync:
	if (out_sync)
		drm_syncobj_put(out_sync);
err_free:
	job_free(job);
	return ret;
}

int wafer_submit_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_wafer_submit *args = data;
	int idx, ret;

	if (!drm_dev_enter(dev, &idx))
		return -ENODEV;
	ret = wafer_job_submit(file, &args->job, &args->seqno, NULL);
	drm_dev_exit(idx);
	return ret;
}

/* Drops results of completed jobs nobody waited for, oldest first. */
static void prune_results(struct wafer_file_jobs *fj)
{
	struct wafer_job_result *r;
	unsigned long seqno;

	lockdep_assert_held(&fj->lock);
	xa_for_each(&fj->results, seqno, r) {
		if (seqno + WAFER_MAX_UNWAITED > fj->next_seqno)
			break;
		if (!dma_fence_is_signaled(r->finished))
			continue;
		xa_erase(&fj->results, seqno);
		wafer_job_result_put(r);
	}
}

int wafer_wait_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct wafer_file_jobs *fj = to_wafer_file(file)->jobs;
	struct drm_wafer_wait *args = data;
	struct wafer_job_result *r;
	long timeout, ret;
	s64 now, left;

	ret = wafer_check_wait(dev, args);
	if (ret)
		return ret;
	mutex_lock(&fj->lock);
	if (!args->seqno || args->seqno > fj->next_seqno) {
		mutex_unlock(&fj->lock);
		return -EINVAL;
	}
	r = xa_load(&fj->results, args->seqno);
	if (r)
		kref_get(&r->ref);
	prune_results(fj);
	mutex_unlock(&fj->lock);
	if (!r)
		return -ENOENT;

	/* Absolute deadline; one in the past only polls. */
	now = ktime_get_ns();
	left = args->timeout_ns > now ? args->timeout_ns - now : 0;
	timeout = min_t(u64, nsecs_to_jiffies64(left), MAX_SCHEDULE_TIMEOUT - 1);
	ret = dma_fence_wait_timeout(r->finished, true, timeout);
	if (ret > 0 || (ret == 0 && dma_fence_is_signaled(r->finished))) {
		args->status = r->finished->error;
		args->device_ns = r->device_ns;
		mutex_lock(&fj->lock);
		if (xa_cmpxchg(&fj->results, args->seqno, r, NULL, GFP_KERNEL) == r)
			wafer_job_result_put(r);
		mutex_unlock(&fj->lock);
		ret = 0;
	} else if (ret == 0) {
		ret = -ETIME;
	}
	wafer_job_result_put(r);
	return ret;
}

/**
 * wafer_file_wait_idle() - wait until every job of a file has been freed
 * @wfile: the file
 * @interruptible: a signal ends the wait (-ERESTARTSYS); otherwise it ends
 *	after twice the job timeout (-ETIMEDOUT), which every job respects
 *
 * Return: 0, -ERESTARTSYS or -ETIMEDOUT.
 */
int wafer_file_wait_idle(struct wafer_file *wfile, bool interruptible)
{
	long timeout = msecs_to_jiffies(2 * wafer_job_timeout_ms + 1000);

	if (interruptible)
		return wait_var_event_interruptible(&wfile->inflight,
						    !atomic_read(&wfile->inflight));
	if (!wait_var_event_timeout(&wfile->inflight, !atomic_read(&wfile->inflight),
				    timeout))
		return -ETIMEDOUT;
	return 0;
}

int wafer_file_jobs_init(struct wafer_file *wfile)
{
	struct drm_gpu_scheduler *sched = &wfile->wdev->queue->sched;
	struct wafer_file_jobs *fj;
	int ret;

	fj = kzalloc(sizeof(*fj), GFP_KERNEL);
	if (!fj)
		return -ENOMEM;
	ret = drm_sched_entity_init(&fj->entity, DRM_SCHED_PRIORITY_NORMAL, &sched,
				    1, NULL);
	if (ret) {
		kfree(fj);
		return ret;
	}
	mutex_init(&fj->lock);
	xa_init(&fj->results);
	wfile->jobs = fj;
	return 0;
}

/*
 * The file is closing: its queued jobs are flushed (or killed), then the
 * ones on the device are waited for (each finishes or times out), so that
 * its contexts and model can be released after.
 */
void wafer_file_jobs_fini(struct wafer_file *wfile)
{
	struct wafer_file_jobs *fj = wfile->jobs;
	struct wafer_job_result *r;
	unsigned long seqno;

	drm_sched_entity_destroy(&fj->entity);
	if (wafer_file_wait_idle(wfile, false))
		drm_err_ratelimited(&wfile->wdev->drm, "a closing file still has %d jobs in flight\n",
				    atomic_read(&wfile->inflight));
	xa_for_each(&fj->results, seqno, r)
		wafer_job_result_put(r);
	xa_destroy(&fj->results);
	mutex_destroy(&fj->lock);
	kfree(fj);
	wfile->jobs = NULL;
}

int wafer_job_queue_init(struct wafer_device *wdev)
{
	struct wafer_job_queue *q;
	struct drm_sched_init_args args = {
		.ops = &wafer_sched_ops,
		.num_rqs = DRM_SCHED_PRIORITY_COUNT,
		/* Leave room in the command ring for one control command. */
		.credit_limit = WAFER_FW_CMD_ENTRIES - 1,
		.timeout = msecs_to_jiffies(wafer_job_timeout_ms),
		.name = "wafer",
		.dev = wdev->drm.dev,
	};
	int ret;

	q = drmm_kzalloc(&wdev->drm, sizeof(*q), GFP_KERNEL);
	if (!q)
		return -ENOMEM;
	q->wdev = wdev;
	xa_init_flags(&q->jobs, XA_FLAGS_ALLOC1);
	spin_lock_init(&q->fence_lock);
	q->fence_ctx = dma_fence_context_alloc(1);
	INIT_WORK(&q->recover_work, wafer_recover_work);
	q->wq = alloc_ordered_workqueue("wafer%u-recover", 0, wdev->index);
	if (!q->wq)
		return -ENOMEM;
	args.timeout_wq = q->wq;
	ret = drm_sched_init(&q->sched, &args);
	if (ret) {
		destroy_workqueue(q->wq);
		return ret;
	}
	wdev->queue = q;
	return 0;
}

void wafer_job_queue_fini(struct wafer_device *wdev)
{
	struct wafer_job_queue *q = wdev->queue;

	if (!q)
		return;
	drm_sched_fini(&q->sched);
	cancel_work_sync(&q->recover_work);
	destroy_workqueue(q->wq);
	WARN_ON(!xa_empty(&q->jobs));
	xa_destroy(&q->jobs);
	wdev->queue = NULL;
}

void wafer_job_queue_show(struct wafer_device *wdev, struct seq_file *m)
{
	struct wafer_job_queue *q = wdev->queue;
	struct wafer_job *job;
	unsigned long cookie;
	unsigned int n = 0;

	seq_printf(m, "resets: %lld\ntimeouts: %lld\n",
		   atomic64_read(&q->resets), atomic64_read(&q->timeouts));
	xa_lock(&q->jobs);
	xa_for_each(&q->jobs, cookie, job) {
		seq_printf(m, "job %lu: ctx %u slot %u pos %u tokens %u\n", cookie,
			   job->cmd.job.ctx_id, job->cmd.job.slot,
			   job->cmd.job.start_pos, job->cmd.job.n_tokens);
		n++;
	}
	xa_unlock(&q->jobs);
	seq_printf(m, "in flight: %u\n", n);
}

/* Jobs posted to the firmware and not yet completed. */
u32 wafer_job_queue_inflight(struct wafer_device *wdev)
{
	struct wafer_job_queue *q = wdev->queue;
	struct wafer_job *job;
	unsigned long cookie;
	u32 n = 0;

	xa_lock(&q->jobs);
	xa_for_each(&q->jobs, cookie, job)
		n += !atomic_read(&job->claimed);
	xa_unlock(&q->jobs);
	return n;
}

u64 wafer_job_queue_busy_ns(struct wafer_device *wdev)
{
	return atomic64_read(&wdev->queue->busy_ns);
}

u64 wafer_job_queue_completed(struct wafer_device *wdev)
{
	return atomic64_read(&wdev->queue->completed);
}
