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
 * The hardware fences of one file form one timeline (its own fence
 * context) and signal in the order the jobs ran, which is the order they
 * were submitted: a completion that arrives early (a job the firmware
 * rejects at intake, or one on a faster slot) is held until every earlier
 * job of its file has signalled.
 *
 * A job that outlives job_timeout_ms, a device fault, or a lost or corrupt
 * completion makes the device reset: every job the firmware held fails
 * (-ETIMEDOUT for the one that timed out, -EIO for the others) and later
 * jobs run normally.
 */
#include <linux/dma-fence.h>
#include <linux/iosys-map.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/llist.h>
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


/**
 * struct wafer_job_queue - one device's job scheduling state
 * @wdev: device
 * @sched: the scheduler feeding the firmware's command ring
 * @wq: ordered queue for the scheduler's timeouts and for recovery
 * @jobs: cookie -> job, from run_job until the job is freed (the id is
 *	reserved at submit, so no other job can reuse it meanwhile)
 * @fence_lock: Protects the hardware fences and every timeline's @pending
 *	list and seqno
 * @recover_work: resets the device after a fault
 * @free_list: jobs the scheduler freed, to release from @free_work
 * @free_work: releases their buffers outside the fence-signalling paths
 * @resets: recoveries performed
 * @timeouts: jobs that timed out
 * @completed: jobs the firmware completed
 * @results: results the files of this device retain for WAIT (debugfs)
 * @busy_ns: modelled device time of those jobs
 */
struct wafer_job_queue {
	struct wafer_device *wdev;
	struct drm_gpu_scheduler sched;
	struct workqueue_struct *wq;
	struct xarray jobs;
	spinlock_t fence_lock; /* Protects hw fences, timelines' pending, seqno */
	struct work_struct recover_work;
	struct llist_head free_list;
	struct work_struct free_work;
	atomic64_t resets;
	atomic64_t timeouts;
	atomic64_t completed;
	atomic64_t results;
	atomic64_t busy_ns;
};

/**
 * struct wafer_timeline - the hardware fences of one file's jobs
 * @ref: held by the file and by each of its jobs
 * @context: their dma-fence context
 * @seqno: last seqno handed out (under the queue's fence_lock)
 * @pending: jobs run and not yet signalled, oldest first (under the
 *	queue's fence_lock)
 */
struct wafer_timeline {
	struct kref ref;
	u64 context;
	u64 seqno;
	struct list_head pending;
};

/**
 * struct wafer_file_jobs - per-file job state
 * @entity: the file's scheduler entity
 * @tl: the timeline of the file's hardware fences
 * @lock: Protects @results, @n_results and @next_seqno
 * @results: seqno -> struct wafer_job_result, until waited for
 * @n_results: entries in @results
 * @next_seqno: last seqno handed out
 */
struct wafer_file_jobs {
	struct drm_sched_entity entity;
	struct wafer_timeline *tl;
	struct mutex lock; /* Protects results, n_results and next_seqno */
	struct xarray results;
	unsigned int n_results;
	u64 next_seqno;
};

/**
 * struct wafer_job - a submitted job
 * @base: scheduler job
 * @q: device queue
 * @wfile: submitting file (reference held)
 * @tl: its file's timeline (reference held)
 * @tl_node: in @tl->pending from run_job until its hardware fence signals
 * @free_node: in the queue's free_list
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
 * @done: completed; its fence signals once the earlier jobs of @tl have
 *	(under the queue's fence_lock)
 * @status: the status it completed with (under the queue's fence_lock)
 */
struct wafer_job {
	struct drm_sched_job base;
	struct wafer_job_queue *q;
	struct wafer_file *wfile;
	struct wafer_timeline *tl;
	struct list_head tl_node;
	struct llist_node free_node;
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
	bool done;
	int status;
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

static void timeline_release(struct kref *ref)
{
	kfree(container_of(ref, struct wafer_timeline, ref));
}

static void timeline_put(struct wafer_timeline *tl)
{
	kref_put(&tl->ref, timeline_release);
}

/*
 * Signals the jobs of @tl that are done, oldest first, up to the first one
 * that is not: a later fence of a timeline never signals before an earlier
 * one.  A signalled job may be freed once the lock is dropped.
 */
static void timeline_signal_locked(struct wafer_timeline *tl)
{
	struct wafer_job *job, *next;

	list_for_each_entry_safe(job, next, &tl->pending, tl_node) {
		if (!job->done)
			break;
		list_del_init(&job->tl_node);
		if (job->status)
			dma_fence_set_error(job->hw_fence, job->status);
		dma_fence_signal_locked(job->hw_fence);
	}
}

/*
 * Completes a job the caller has claimed: records its status and signals
 * its hardware fence once every earlier job of its file has signalled.
 * Nothing of the job is touched after the lock is dropped.
 */
static void job_complete(struct wafer_job *job, int status, u64 device_ns)
{
	struct wafer_job_queue *q = job->q;
	unsigned long flags;

	job->result->device_ns = device_ns;
	spin_lock_irqsave(&q->fence_lock, flags);
	job->status = status;
	job->done = true;
	timeline_signal_locked(job->tl);
	spin_unlock_irqrestore(&q->fence_lock, flags);
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
	bool fence_cookie;

	fence_cookie = dma_fence_begin_signalling();
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
		drm_err(&wdev->drm, "completion for unknown job %llu\n", cpl->cookie);
		goto out;
	}
	atomic64_inc(&wdev->queue->completed);
	atomic64_add(cpl->device_ns, &wdev->queue->busy_ns);
	atomic64_add(cpl->device_ns, &job->wfile->busy_ns);
	trace_wafer_job_complete(wdev->index, job->cookie, cpl->status, cpl->device_ns);
	job_complete(job, cpl->status, cpl->device_ns);
out:
	dma_fence_end_signalling(fence_cookie);
}

/* Gives the job its hardware fence, next on its file's timeline. */
static void job_fence_init(struct wafer_job *job)
{
	struct wafer_job_queue *q = job->q;
	unsigned long flags;

	spin_lock_irqsave(&q->fence_lock, flags);
	dma_fence_init(job->hw_fence, &wafer_hw_fence_ops, &q->fence_lock,
		       job->tl->context, ++job->tl->seqno);
	list_add_tail(&job->tl_node, &job->tl->pending);
	spin_unlock_irqrestore(&q->fence_lock, flags);
	job->hw_fence_live = true;
}

static struct dma_fence *wafer_run_job(struct drm_sched_job *sj)
{
	struct wafer_job *job = to_wafer_job(sj);
	struct wafer_job_queue *q = job->q;
	struct dma_fence *fence;
	int ret = 0;

	job_fence_init(job);
	/*
	 * The cookie was reserved at submit and stays the job's until it is
	 * freed: storing allocates nothing, and no other job can reuse it.
	 * Every job that ran is in q->jobs, so that recovery finds it.
	 */
	xa_store(&q->jobs, job->cookie, job, GFP_NOWAIT);
	/* The reference returned is taken first: signalling may free the job. */
	fence = dma_fence_get(job->hw_fence);
	if (unlikely(sj->s_fence->finished.error))
		ret = sj->s_fence->finished.error;
	else if (unlikely(drm_dev_is_unplugged(&q->wdev->drm)))
		ret = -ENODEV;
	if (!ret) {
		trace_wafer_job_start(q->wdev->index, job->cookie);
		ret = wafer_fw_post(&q->wdev->fw, &job->cmd);
	}
	/* Failed without reaching the firmware: still in its file's order. */
	if (ret && job_claim(job))
		job_complete(job, ret, 0);
	return fence;
}

/*
 * Fails every job the firmware held; the device has just been reset (or
 * unplugged: then every job fails with -ENODEV).  The scheduler is stopped,
 * so no job is freed meanwhile.  The order jobs are failed in does not
 * matter: each timeline signals oldest first.
 */
static void fail_held_jobs(struct wafer_job_queue *q, struct drm_sched_job *bad)
{
	bool gone = drm_dev_is_unplugged(&q->wdev->drm);
	struct wafer_job *job;
	unsigned long cookie;

	xa_for_each(&q->jobs, cookie, job) {
		if (job_claim(job))
			job_complete(job, gone ? -ENODEV : &job->base == bad ? -ETIMEDOUT : -EIO, 0);
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

/*
 * Resets the device and fails the jobs it held.  This is a fence-signalling
 * critical section: nothing here may wait for a fence, allocate or take a
 * lock held around such a wait; jobs drm_sched_stop() frees are released
 * from free_work.
 */
static void recover(struct wafer_job_queue *q, struct drm_sched_job *bad,
		    const char *why)
{
	struct wafer_device *wdev = q->wdev;
	bool gone = drm_dev_is_unplugged(&wdev->drm);
	bool fence_cookie;

	if (!gone)
		drm_err(&wdev->drm, "resetting the device: %s\n", why);
	fence_cookie = dma_fence_begin_signalling();
	drm_sched_stop(&q->sched, bad);
	/* Unplugged: also drop the model and contexts, nothing will use them. */
	wafer_fw_reset(&wdev->fw, gone);
	fail_held_jobs(q, bad);
	drm_sched_start(&q->sched);
	dma_fence_end_signalling(fence_cookie);
	atomic64_inc(&q->resets);
}

static enum drm_gpu_sched_stat wafer_timedout_job(struct drm_sched_job *sj)
{
	struct wafer_job *job = to_wafer_job(sj);
	struct wafer_job_queue *q = job->q;

	atomic64_inc(&q->timeouts);
	trace_wafer_job_timeout(q->wdev->index, job->cookie);
	recover(q, sj, "a job timed out");
	if (drm_dev_is_unplugged(&q->wdev->drm))
		return DRM_GPU_SCHED_STAT_ENODEV;
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

	drm_err(&wdev->drm, "firmware: %s\n", why);
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

/* Releases what the job holds: may sleep, take dma_resv locks, allocate. */
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
	if (job->tl)
		timeline_put(job->tl);
	if (atomic_dec_and_test(&job->wfile->inflight))
		wake_up_var(&job->wfile->inflight);
	wafer_file_put(job->wfile);
	kfree(job);
}

static void wafer_free_work(struct work_struct *work)
{
	struct wafer_job_queue *q = container_of(work, struct wafer_job_queue, free_work);
	struct wafer_job *job, *next;

	llist_for_each_entry_safe(job, next, llist_del_all(&q->free_list), free_node)
		job_free(job);
}

/*
 * Also called by drm_sched_stop() in recovery, inside its signalling
 * section: the job leaves q->jobs here (no allocation), the rest is
 * released from free_work.
 */
static void wafer_free_job(struct drm_sched_job *sj)
{
	struct wafer_job *job = to_wafer_job(sj);
	struct wafer_job_queue *q = job->q;

	drm_sched_job_cleanup(sj);
	xa_erase(&q->jobs, job->cookie);
	job->cookie = 0;
	if (llist_add(&job->free_node, &q->free_list))
		queue_work(system_unbound_wq, &q->free_work);
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

/* Drops @seqno's entry @r from @fj's results; false if it is not there. */
static bool results_drop(struct wafer_job_queue *q, struct wafer_file_jobs *fj,
			 unsigned long seqno, struct wafer_job_result *r)
{
	lockdep_assert_held(&fj->lock);
	if (xa_cmpxchg(&fj->results, seqno, r, NULL, GFP_KERNEL) != r)
		return false;
	fj->n_results--;
	atomic64_dec(&q->results);
	wafer_job_result_put(r);
	return true;
}

/*
 * Keeps at most DRM_WAFER_MAX_UNWAITED results of finished jobs, dropping
 * the oldest first; results of unfinished jobs (at most max_file_inflight)
 * stay.  Called on every submission and WAIT, so a file that never waits
 * pins no more than that.
 */
static void prune_results(struct wafer_job_queue *q, struct wafer_file_jobs *fj)
{
	struct wafer_job_result *r;
	unsigned long seqno;

	lockdep_assert_held(&fj->lock);
	xa_for_each(&fj->results, seqno, r) {
		if (fj->n_results <= DRM_WAFER_MAX_UNWAITED)
			break;
		if (dma_fence_is_signaled(r->finished))
			results_drop(q, fj, seqno, r);
	}
}

/* Allocates a job and counts it against its file's limit of jobs in flight. */
static struct wafer_job *job_alloc(struct wafer_file *wfile)
{
	struct wafer_job *job = kzalloc(sizeof(*job), GFP_KERNEL);

	if (!job)
		return ERR_PTR(-ENOMEM);
	job->q = wfile->wdev->queue;
	kref_get(&wfile->ref);
	job->wfile = wfile;
	kref_get(&wfile->jobs->tl->ref);
	job->tl = wfile->jobs->tl;
	INIT_LIST_HEAD(&job->tl_node);
	atomic_inc(&wfile->inflight);
	atomic_set(&job->counted, 1);
	if (atomic_inc_return(&wfile->unfinished) > wafer_max_file_inflight) {
		drm_dbg(&wfile->wdev->drm, "SUBMIT: %u jobs in flight already\n",
			wafer_max_file_inflight);
		job_free(job);
		return ERR_PTR(-EBUSY);
	}
	return job;
}

/* Fills the RUN_JOB command run_job will post. */
static void job_build_cmd(struct wafer_job *job, const struct drm_wafer_job *a, u64 out_len)
{
	job->cmd.opcode = WFW_OP_RUN_JOB;
	job->cmd.cookie = job->cookie;
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
}

/*
 * Validates the job against its context, maps its buffers, allocates its
 * result and hardware fence and reserves its cookie: everything run_job
 * and completion need, so that they allocate nothing.
 */
static int job_prepare(struct drm_file *file, struct wafer_job *job,
		       const struct drm_wafer_job *a)
{
	struct drm_device *dev = file->minor->dev;
	u64 out_len;
	u32 cookie;
	int ret;

	job->ctx = wafer_ctx_get(job->wfile, a->ctx_id);
	if (!job->ctx) {
		drm_dbg(dev, "SUBMIT: no context %u in this file\n", a->ctx_id);
		return -ENOENT;
	}
	ret = wafer_job_validate(dev, a, job->ctx->slots, job->ctx->ctx_len, &out_len);
	if (ret)
		return ret;
	ret = job_map_buffer(dev, file, job, 0, a->in_handle, a->in_offset,
			     (u64)a->n_tokens * sizeof(u32), 0);
	if (ret)
		return ret;
	ret = job_map_buffer(dev, file, job, 1, a->out_handle, a->out_offset,
			     out_len, WAFER_DMA_WRITE);
	if (ret)
		return ret;
	job->result = kzalloc(sizeof(*job->result), GFP_KERNEL);
	if (!job->result)
		return -ENOMEM;
	/* job_free() drops this reference, whatever fails next. */
	kref_init(&job->result->ref);
	job->hw_fence = kzalloc(sizeof(*job->hw_fence), GFP_KERNEL);
	if (!job->hw_fence)
		return -ENOMEM;
	ret = xa_alloc(&job->q->jobs, &cookie, NULL, xa_limit_32b, GFP_KERNEL);
	if (ret)
		return ret;
	job->cookie = cookie;
	job_build_cmd(job, a, out_len);
	return 0;
}

/*
 * Gives the job its seqno (and its place in the file's results, for
 * WAIT) and queues it.  Nothing can fail once the job is armed.
 */
static int job_push(struct wafer_file_jobs *fj, struct wafer_job *job,
		    const struct drm_wafer_job *a, struct drm_syncobj *out_sync,
		    u64 *seqno, struct wafer_job_result **result)
{
	u64 s;
	int ret;

	guard(mutex)(&fj->lock);
	s = fj->next_seqno + 1;
	if (seqno) {
		ret = xa_insert(&fj->results, s, job->result, GFP_KERNEL);
		if (ret)
			return ret;
		fj->n_results++;
		atomic64_inc(&job->q->results);
	}
	fj->next_seqno = s;
	prune_results(job->q, fj);
	drm_sched_job_arm(&job->base);
	job->result->finished = dma_fence_get(&job->base.s_fence->finished);
	if (dma_fence_add_callback(job->result->finished, &job->finished_cb, job_finished_cb))
		job_uncount(job);
	/* One reference for the file's table or the caller. */
	kref_get(&job->result->ref);
	if (out_sync)
		drm_syncobj_replace_fence(out_sync, job->result->finished);
	if (seqno)
		*seqno = s;
	else
		*result = job->result;
	trace_wafer_job_submit(job->q->wdev->index, job->cookie, a->ctx_id, a->slot,
			       a->start_pos, a->n_tokens);
	drm_sched_entity_push_job(&job->base);
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
	struct drm_syncobj *out_sync = NULL;
	struct wafer_job *job;
	int ret;

	job = job_alloc(wfile);
	if (IS_ERR(job))
		return PTR_ERR(job);
	ret = job_prepare(file, job, a);
	if (ret)
		goto err_free;
	if (a->out_syncobj) {
		out_sync = drm_syncobj_find(file, a->out_syncobj);
		if (!out_sync) {
			ret = -ENOENT;
			goto err_free;
		}
	}
	ret = drm_sched_job_init(&job->base, &wfile->jobs->entity, 1, wfile, file->client_id);
	if (ret)
		goto err_free;
	ret = add_in_syncobjs(job, file, a);
	if (ret)
		goto err_cleanup;
	ret = job_push(wfile->jobs, job, a, out_sync, seqno, result);
	if (ret)
		goto err_cleanup;
	if (out_sync)
		drm_syncobj_put(out_sync);
	return 0;

err_cleanup:
	drm_sched_job_cleanup(&job->base);
err_free:
	if (out_sync)
		drm_syncobj_put(out_sync);
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

int wafer_wait_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct wafer_job_queue *q = to_wafer_device(dev)->queue;
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
	prune_results(q, fj);
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
		results_drop(q, fj, args->seqno, r);
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
	fj->tl = kzalloc(sizeof(*fj->tl), GFP_KERNEL);
	if (!fj->tl) {
		ret = -ENOMEM;
		goto err_free;
	}
	kref_init(&fj->tl->ref);
	fj->tl->context = dma_fence_context_alloc(1);
	INIT_LIST_HEAD(&fj->tl->pending);
	ret = drm_sched_entity_init(&fj->entity, DRM_SCHED_PRIORITY_NORMAL, &sched,
				    1, NULL);
	if (ret)
		goto err_free;
	mutex_init(&fj->lock);
	xa_init(&fj->results);
	wfile->jobs = fj;
	return 0;

err_free:
	kfree(fj->tl);
	kfree(fj);
	return ret;
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
		drm_err(&wfile->wdev->drm, "a closing file still has %d jobs in flight\n",
			atomic_read(&wfile->inflight));
	xa_for_each(&fj->results, seqno, r)
		wafer_job_result_put(r);
	atomic64_sub(fj->n_results, &wfile->wdev->queue->results);
	xa_destroy(&fj->results);
	mutex_destroy(&fj->lock);
	timeline_put(fj->tl);
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
	INIT_WORK(&q->recover_work, wafer_recover_work);
	init_llist_head(&q->free_list);
	INIT_WORK(&q->free_work, wafer_free_work);
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
	flush_work(&q->free_work);
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

	seq_printf(m, "resets: %lld\ntimeouts: %lld\nresults retained: %lld\n",
		   atomic64_read(&q->resets), atomic64_read(&q->timeouts),
		   atomic64_read(&q->results));
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

#if IS_ENABLED(CONFIG_DRM_ACCEL_WAFER_KUNIT_TEST)
#include "tests/wafer_job_test.c"
#endif
