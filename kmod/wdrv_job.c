// SPDX-License-Identifier: GPL-2.0-only
/*
 * wafer jobs, from creation to free, in the order a job lives them:
 *
 *  create	job_alloc() takes a job from its file's pool (or allocates
 *		one); job_free(), beside it, gives it back
 *  prepare	job_prepare() validates it against its context, pins and
 *		maps its buffers, allocates its result (its hardware fence is
 *		in it) and reserves its cookie: everything run_job and
 *		completion need, so that they allocate nothing
 *  push	job_push() gives it its seqno and queues it on its file's
 *		drm_sched entity (wdrv_job_submit(): the ioctl, and io_uring's
 *		front end in wdrv_uring.c)
 *  run		wdrv_run_job() (drm_sched, once the in-fences signalled) puts
 *		it on its file's timeline and writes the prepared command to
 *		the firmware's ring
 *  complete	the firmware's interrupt hands the completion to
 *		wdrv_job_fw_cpl(), which signals the job's hardware fence: no
 *		allocation and no sleeping lock on that path
 *  timeout	a job that outlives job_timeout_ms, a device fault, or a lost
 *		or corrupt completion makes the device reset (recover()):
 *		every job the firmware held fails (-ETIMEDOUT for the one that
 *		timed out, -EIO for the others) and later jobs run normally
 *  free	drm_sched's free_job (wdrv_free_job()) hands it to free_work,
 *		which releases its buffers and context (job_free())
 *
 * The ioctl (and io_uring's io-wq worker) may sleep while it submits.
 * io_uring's inline issue may not: with @nowait every step allocates
 * GFP_NOWAIT, takes locks by trylock, and fails with -EAGAIN where it
 * would have had to wait (a BO's first mapping, jobs with in-syncobjs),
 * undoing what it did without sleeping; io_uring then retries it from a
 * worker.  The one allocation left that may reclaim is drm_sched_job_init()'s
 * scheduler fence (a slab object; the scheduler takes no gfp flags).
 *
 * The hardware fences of one file form one timeline (its own fence
 * context) and signal in the order the jobs ran, which is the order they
 * were submitted: a completion that arrives early (a job the firmware
 * rejects at intake, or one on a faster slot) is held until every earlier
 * job of its file has signalled.
 */
#include <linux/overflow.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait_bit.h>

#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>
#include <drm/drm_syncobj.h>
#include <drm/wafer_accel.h>

#include "wdrv_gem.h"
#include "wdrv_job_priv.h"
#include "wdrv_model.h"
#include "wdrv_trace.h"
#include "wdrv_uapi.h"

/* --------------------------------------------- create and free -- */

/* What a step allocates with: @nowait ones must not sleep. */
static gfp_t job_gfp(const struct wdrv_job *job)
{
	return job->nowait ? GFP_NOWAIT | __GFP_NOWARN : GFP_KERNEL;
}

/* An allocation that failed: retried blocking if it was not allowed to wait. */
static int job_nomem(const struct wdrv_job *job)
{
	return job->nowait ? -EAGAIN : -ENOMEM;
}

static void job_release_buffers(struct wdrv_job *job)
{
	struct wdrv_dma *dma = &job->q->wdev->fw.dma;
	int i;

	for (i = 0; i < 2; i++) {
		if (job->addr[i])
			wdrv_dma_unmap(dma, job->addr[i]);
		if (job->map[i].vaddr)
			drm_gem_vunmap_unlocked(job->bo[i], &job->map[i]);
		if (job->bo[i])
			drm_gem_object_put(job->bo[i]);
	}
}

/* The per-file limit counts jobs until they finish, not until freed. */
static void job_uncount(struct wdrv_job *job)
{
	if (atomic_xchg(&job->counted, 0))
		atomic_dec(&job->wfile->unfinished);
}

static void job_finished_cb(struct dma_fence *f, struct dma_fence_cb *cb)
{
	job_uncount(container_of(cb, struct wdrv_job, finished_cb));
}

/*
 * The scheduler may free a job as soon as its finished fence reads as
 * signalled, which is before dma_fence_signal() has run the fence's
 * callbacks: finished_cb, inside the job, may still be on the list being
 * walked.  Removing it takes the fence's lock, which the signaller holds
 * until every callback has run.
 */
static void job_detach_finished_cb(struct wdrv_job *job)
{
	if (job->result && job->result->finished)
		dma_fence_remove_callback(job->result->finished, &job->finished_cb);
}

/*
 * Releases what the job holds: may sleep, take dma_resv locks, allocate.
 * The queue is touched last: once no job is live the device may go.
 */
static void job_free(struct wdrv_job *job)
{
	struct wdrv_file *wfile = job->wfile;
	struct wdrv_job_queue *q = job->q;

	job_detach_finished_cb(job);
	job_uncount(job);
	job_release_buffers(job);
	if (job->ctx)
		wdrv_ctx_put(job->ctx);
	/* With the result goes its hardware fence, if nothing else holds it. */
	if (job->result)
		wdrv_job_result_put(job->result);
	if (job->tl)
		wdrv_timeline_put(job->tl);
	while (job->n_in_fences)
		dma_fence_put(job->in_fences[--job->n_in_fences]);
	kfree(job->in_fences);
	if (atomic_dec_and_test(&wfile->inflight))
		wake_up_var(&wfile->inflight);
	/* Before the put: the pool is the file's. */
	wdrv_job_pool_put(&wfile->job_pool, job);
	wdrv_file_put(wfile);
	if (atomic_dec_and_test(&q->live))
		wake_up_var(&q->live);
}

static void job_free_work(struct work_struct *work)
{
	struct wdrv_job_queue *q = container_of(work, struct wdrv_job_queue, free_work);
	struct wdrv_job *job, *next;

	llist_for_each_entry_safe(job, next, llist_del_all(&q->free_list), free_node)
		job_free(job);
}

/*
 * Frees the job from free_work, for callers that may not sleep.  It stops
 * counting against its file's limit at once: a submission that failed
 * here is retried, and must not find its own job in the way.
 */
static void job_free_later(struct wdrv_job *job)
{
	struct wdrv_job_queue *q = job->q;

	job_uncount(job);
	if (llist_add(&job->free_node, &q->free_list))
		queue_work(system_unbound_wq, &q->free_work);
}

/* Frees a job that was not queued; from free_work where we may not sleep. */
static void job_discard(struct wdrv_job *job)
{
	if (job->nowait)
		job_free_later(job);
	else
		job_free(job);
}

/*
 * Takes a job from the file's pool (or allocates one) and counts it
 * against the file's limit of jobs in flight.
 */
static struct wdrv_job *job_alloc(struct wdrv_file *wfile, bool nowait)
{
	struct wdrv_job *job;

	job = wdrv_job_pool_get(&wfile->job_pool, nowait ?
				GFP_NOWAIT | __GFP_NOWARN | __GFP_ACCOUNT : GFP_KERNEL_ACCOUNT);
	if (!job)
		return ERR_PTR(nowait ? -EAGAIN : -ENOMEM);
	job->nowait = nowait;
	job->q = wfile->wdev->queue;
	atomic_inc(&job->q->live);
	kref_get(&wfile->ref);
	job->wfile = wfile;
	kref_get(&wfile->jobs->tl->ref);
	job->tl = wfile->jobs->tl;
	INIT_LIST_HEAD(&job->tl_node);
	atomic_inc(&wfile->inflight);
	atomic_set(&job->counted, 1);
	if (atomic_inc_return(&wfile->unfinished) > wdrv_max_file_inflight) {
		drm_dbg(&wfile->wdev->drm, "SUBMIT: %u jobs in flight already\n",
			wdrv_max_file_inflight);
		job_discard(job);
		return ERR_PTR(-EBUSY);
	}
	return job;
}

/* ----------------------------------------------------- prepare -- */

/* Looks up, range-checks, pins, maps a job buffer (@what) into the device. */
static int job_map_buffer(struct drm_device *dev, struct drm_file *file,
			  struct wdrv_job *job, int i, u32 handle, u64 offset,
			  u64 len, u32 dma_flags, const char *what)
{
	u64 end;
	int ret;

	job->bo[i] = drm_gem_object_lookup(file, handle);
	if (!job->bo[i]) {
		drm_dbg(dev, "SUBMIT: no BO with handle %u\n", handle);
		return -ENOENT;
	}
	if (check_add_overflow(offset, len, &end) || end > job->bo[i]->size) {
		drm_dbg(dev, "SUBMIT: %s [%llu, +%llu) exceeds BO %u (%zu bytes)\n",
			what, offset, len, handle, job->bo[i]->size);
		return -EINVAL;
	}
	ret = wdrv_gem_vmap_job(job->bo[i], &job->map[i], job->nowait);
	if (ret == -EOPNOTSUPP)
		drm_dbg(dev, "SUBMIT: BO %u maps as I/O memory (an imported dma-buf), which the device cannot reach\n",
			handle);
	if (ret)
		return ret;
	ret = wdrv_dma_map(&job->q->wdev->fw.dma, job->map[i].vaddr + offset,
			   len, dma_flags, job_gfp(job), &job->addr[i]);
	return ret == -ENOMEM ? job_nomem(job) : ret;
}

/* The job's input and output buffers; a NOP has none. */
static int job_map_buffers(struct drm_device *dev, struct drm_file *file,
			   struct wdrv_job *job, const struct drm_wafer_job *a,
			   const struct wdrv_job_io *io)
{
	int ret;

	if (a->flags & DRM_WAFER_JOB_NOP)
		return 0;
	ret = job_map_buffer(dev, file, job, 0, a->in_handle, a->in_offset,
			     io->in_len, 0, a->flags & DRM_WAFER_JOB_NOT_BEFORE ?
			     "input (with NOT_BEFORE's 8-byte floor)" : "input");
	if (ret)
		return ret;
	return job_map_buffer(dev, file, job, 1, a->out_handle, a->out_offset,
			      io->out_len, WDRV_DMA_WRITE, "output");
}

/*
 * Each in-syncobj's fence becomes a scheduler dependency; the job keeps a
 * reference too, so that run_job can see whether it failed (drm_sched
 * runs a job whose dependency signalled with an error).  Adding a
 * dependency allocates GFP_KERNEL: a @nowait job with in-syncobjs is
 * retried blocking.
 */
static int add_in_syncobjs(struct wdrv_job *job, struct drm_file *file,
			   const struct drm_wafer_job *a)
{
	u32 __user *handles = u64_to_user_ptr(a->in_syncobjs);
	struct dma_fence *fence;
	u32 i, h;
	int ret;

	if (!a->in_syncobj_count)
		return 0;
	if (job->nowait)
		return -EAGAIN;
	job->in_fences = kcalloc(a->in_syncobj_count, sizeof(*job->in_fences),
				 GFP_KERNEL_ACCOUNT);
	if (!job->in_fences)
		return -ENOMEM;
	for (i = 0; i < a->in_syncobj_count; i++) {
		if (get_user(h, handles + i))
			return -EFAULT;
		ret = drm_syncobj_find_fence(file, h, 0, 0, &fence);
		if (ret) {
			drm_dbg(file->minor->dev, "SUBMIT: in-syncobj %u (handle %u) has no fence (%d)\n",
				i, h, ret);
			return ret;
		}
		job->in_fences[job->n_in_fences++] = dma_fence_get(fence);
		ret = drm_sched_job_add_dependency(&job->base, fence);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * wdrv_job_wait_submitted() - wait until every in-syncobj holds a fence
 * @file: the submitting file
 * @a: the job descriptor (a kernel copy)
 *
 * For DRM_WAFER_JOB_WAIT_SUBMIT, before drm_dev_enter() and with no lock
 * held: the wait sleeps (DRM core's WAIT_FOR_SUBMIT, at most 5 s), which
 * must hold off neither an unplug nor anything else.  The job then looks
 * its fences up again, without waiting, when it is prepared.
 *
 * Return: 0 (also for a job without the flag, or one wdrv_job_validate()
 * will refuse), or the errno of the first in-syncobj that got no fence.
 */
int wdrv_job_wait_submitted(struct drm_file *file, const struct drm_wafer_job *a)
{
	u32 __user *handles = u64_to_user_ptr(a->in_syncobjs);
	struct dma_fence *fence;
	u32 i, h;
	int ret;

	if (!(a->flags & DRM_WAFER_JOB_WAIT_SUBMIT) || !a->in_syncobjs ||
	    a->in_syncobj_count > WDRV_MAX_IN_SYNCOBJS)
		return 0;
	for (i = 0; i < a->in_syncobj_count; i++) {
		if (get_user(h, handles + i))
			return -EFAULT;
		ret = drm_syncobj_find_fence(file, h, 0, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT,
					     &fence);
		if (ret) {
			drm_dbg(file->minor->dev,
				"SUBMIT: in-syncobj %u (handle %u) got no fence while it waited (%d)\n",
				i, h, ret);
			return ret;
		}
		dma_fence_put(fence);
	}
	return 0;
}

/* Fills the RUN_JOB command run_job will post. */
static void job_build_cmd(struct wdrv_job *job, const struct drm_wafer_job *a, u64 out_len)
{
	job->cmd.opcode = WFW_OP_RUN_JOB;
	job->cmd.cookie = job->cookie;
	/* The context's model: the firmware checks the two agree. */
	job->cmd.model = job->ctx->model->fw_id;
	job->cmd.job.ctx_id = job->ctx->fw_id;
	job->cmd.job.slot = a->slot;
	job->cmd.job.start_pos = a->start_pos;
	job->cmd.job.n_tokens = a->n_tokens;
	job->cmd.job.in_addr = job->addr[0];
	job->cmd.job.out_addr = job->addr[1];
	job->cmd.job.out_len = out_len;
	job->cmd.job.topk = a->top_k;
	/* The uapi's job flags are the firmware's (wfw_uapi_ties.h) but two. */
	job->cmd.job.flags = a->flags & ~(DRM_WAFER_JOB_WAIT_SUBMIT |
					  DRM_WAFER_JOB_DONE_NS);
	job->cmd.job.times_offset = a->times_offset;
	job->cmd.job.times_len = a->times_len;
	/* A job from the pool may have had TIMES: set or clear both. */
	job->times_at = NULL;
	job->times_n = 0;
	if (a->flags & DRM_WAFER_JOB_TIMES) {
		job->times_at = job->map[1].vaddr + a->out_offset + a->times_offset;
		job->times_n = a->times_len / sizeof(struct wfw_chunk_time);
	}
}

/*
 * LAYER: the firmware (ABI 1.5) reads the layer of a part job as a u32
 * right after the input in the input buffer.  RUN_JOB's 48-byte payload
 * has no room left for it, so rather than a new firmware ABI the driver
 * puts &drm_wafer_job.layer, the value it validated, where the ABI wants
 * it, in the span it mapped for the input (the firmware checks the range
 * again when it reads it).  It is written by run_job, after the job's
 * in-fences, not here: a pipeline queued ahead may still have an earlier
 * job to read that word.  libwafer's in-process backend writes the same
 * bytes there, so both paths hand the firmware the same input.
 */
static void job_keep_layer(struct wdrv_job *job, const struct drm_wafer_job *a,
			   const struct wdrv_job_io *io)
{
	job->layer_at = job->map[0].vaddr + a->in_offset + io->in_len - sizeof(job->layer);
	job->layer = a->layer;
}

/* What @model's jobs are checked against in @ctx. */
static void job_shape(const struct wdrv_ctx *ctx, struct wdrv_job_shape *sh)
{
	const struct wdrv_model *model = ctx->model;

	sh->slots = ctx->slots;
	sh->ctx_len = ctx->ctx_len;
	sh->model_flags = model->flags;
	sh->act_size = model->act_size;
	sh->layer_first = model->layer_first;
	sh->n_layers = model->n_layers;
	sh->total_layers = model->total_layers;
}

/*
 * The job's id in its queue's table and in the firmware command: one from
 * the file's pool still has its own reserved (wdrv_job_pool.h).
 */
static int job_reserve_cookie(struct wdrv_job *job)
{
	u32 cookie;
	int ret;

	if (job->cookie)
		return 0;
	/* xa_alloc() may write the id before failing to store: only once it held. */
	ret = xa_alloc(&job->q->jobs, &cookie, NULL, xa_limit_32b, job_gfp(job));
	if (ret)
		return ret == -ENOMEM ? job_nomem(job) : ret;
	job->cookie = cookie;
	return 0;
}

/*
 * Validates the job against its context, maps its buffers, allocates its
 * result (its hardware fence is in it) and reserves its cookie: everything
 * run_job and completion need, so that they allocate nothing.
 */
static int job_prepare(struct drm_file *file, struct wdrv_job *job,
		       const struct drm_wafer_job *a)
{
	struct drm_device *dev = file->minor->dev;
	struct wdrv_job_shape sh;
	struct wdrv_job_io io;
	int ret;

	ret = wdrv_ctx_get(job->wfile, a->ctx_id, &job->ctx);
	if (ret == -ENOENT)
		drm_dbg(dev, "SUBMIT: no context %u in this file\n", a->ctx_id);
	if (ret)
		return ret;
	job_shape(job->ctx, &sh);
	ret = wdrv_job_validate(dev, a, &sh, &io);
	if (ret)
		return ret;
	ret = job_map_buffers(dev, file, job, a, &io);
	if (ret)
		return ret;
	if (a->flags & DRM_WAFER_JOB_LAYER)
		job_keep_layer(job, a, &io);
	job->result = kzalloc(sizeof(*job->result), job_gfp(job));
	if (!job->result)
		return job_nomem(job);
	/* job_free() drops this reference, whatever fails next. */
	kref_init(&job->result->ref);
	job->result->cqe_done_ns = a->flags & DRM_WAFER_JOB_DONE_NS;
	job->hw_fence = &job->result->hw_fence;
	ret = job_reserve_cookie(job);
	if (ret)
		return ret;
	job_build_cmd(job, a, io.out_len);
	return 0;
}

/* -------------------------------------------------------- push -- */

/*
 * Gives the job its seqno (and its place in the file's results, for
 * WAIT) and queues it.  Nothing can fail once the job is armed.
 */
static int job_push_locked(struct wdrv_file_jobs *fj, struct wdrv_job *job,
			   const struct drm_wafer_job *a, struct drm_syncobj *out_sync,
			   u64 *seqno, struct wdrv_job_result **result)
{
	u64 s;
	int ret;

	lockdep_assert_held(&fj->lock);
	s = fj->next_seqno + 1;
	if (seqno) {
		ret = xa_insert(&fj->results, s, job->result, job_gfp(job));
		if (ret)
			return ret == -ENOMEM ? job_nomem(job) : ret;
		fj->n_results++;
		atomic64_inc(&job->q->results);
	}
	fj->next_seqno = s;
	wdrv_results_prune(job->q, fj);
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

/* Pushes the job under its file's lock, which @nowait jobs only try. */
static int job_push(struct wdrv_file_jobs *fj, struct wdrv_job *job,
		    const struct drm_wafer_job *a, struct drm_syncobj *out_sync,
		    u64 *seqno, struct wdrv_job_result **result)
{
	int ret;

	if (!job->nowait)
		mutex_lock(&fj->lock);
	else if (!mutex_trylock(&fj->lock))
		return -EAGAIN;
	ret = job_push_locked(fj, job, a, out_sync, seqno, result);
	mutex_unlock(&fj->lock);
	return ret;
}

/**
 * wdrv_job_submit() - validate and queue a job
 * @file: submitting DRM file
 * @a: the job descriptor (a kernel copy)
 * @seqno: out: the job's sequence number in this file, for
 *	DRM_IOCTL_WAFER_WAIT; NULL when the caller reaps the job itself
 * @result: out, when @seqno is NULL: a reference to the job's result
 * @nowait: io_uring's inline issue: sleep nowhere (see the top of this file)
 *
 * Return: 0 or a negative errno; nothing was queued on error.  -EAGAIN
 * only with @nowait: the same call without it may succeed.
 */
int wdrv_job_submit(struct drm_file *file, const struct drm_wafer_job *a,
		    u64 *seqno, struct wdrv_job_result **result, bool nowait)
{
	struct wdrv_file *wfile = to_wafer_file(file);
	struct drm_syncobj *out_sync = NULL;
	struct wdrv_job *job;
	int ret;

	job = job_alloc(wfile, nowait);
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
	job_discard(job);
	return ret;
}

int wdrv_submit_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_wafer_submit *args = data;
	int idx, ret;

	ret = wdrv_job_wait_submitted(file, &args->job);
	if (ret)
		return ret;
	if (!drm_dev_enter(dev, &idx))
		return -ENODEV;
	ret = wdrv_job_submit(file, &args->job, &args->seqno, NULL, false);
	drm_dev_exit(idx);
	return ret;
}

/* --------------------------------------------------------- run -- */

static const char *wdrv_fence_driver_name(struct dma_fence *f)
{
	return "wafer";
}

static const char *wdrv_fence_timeline_name(struct dma_fence *f)
{
	return "wafer-firmware";
}

/* The fence lives in its job's result: the last reference to it frees both. */
static void wdrv_hw_fence_release(struct dma_fence *f)
{
	struct wdrv_job_result *r = container_of(f, struct wdrv_job_result, hw_fence);

	kfree_rcu(r, hw_fence.rcu);
}

static const struct dma_fence_ops wdrv_hw_fence_ops = {
	.get_driver_name = wdrv_fence_driver_name,
	.get_timeline_name = wdrv_fence_timeline_name,
	.release = wdrv_hw_fence_release,
};

/* True for the one caller that gets to complete @job. */
static bool job_claim(struct wdrv_job *job)
{
	return !atomic_xchg(&job->claimed, 1);
}

static void timeline_release(struct kref *ref)
{
	kfree(container_of(ref, struct wdrv_timeline, ref));
}

void wdrv_timeline_put(struct wdrv_timeline *tl)
{
	kref_put(&tl->ref, timeline_release);
}

/*
 * Signals the jobs of @tl that are done, oldest first, up to the first one
 * that is not: a later fence of a timeline never signals before an earlier
 * one.  A signalled job may be freed once the lock is dropped.
 */
static void timeline_signal_locked(struct wdrv_timeline *tl)
{
	struct wdrv_job *job, *next;

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
static void job_complete(struct wdrv_job *job, int status, u64 device_ns,
			 u64 done_ns)
{
	struct wdrv_job_queue *q = job->q;
	unsigned long flags;

	job->result->device_ns = device_ns;
	job->result->done_ns = done_ns;
	spin_lock_irqsave(&q->fence_lock, flags);
	job->status = status;
	job->done = true;
	timeline_signal_locked(job->tl);
	spin_unlock_irqrestore(&q->fence_lock, flags);
}

/* Gives the job its hardware fence, next on its file's timeline. */
static void job_fence_init(struct wdrv_job *job)
{
	struct wdrv_job_queue *q = job->q;
	unsigned long flags;

	spin_lock_irqsave(&q->fence_lock, flags);
	dma_fence_init(job->hw_fence, &wdrv_hw_fence_ops, &q->fence_lock,
		       job->tl->context, ++job->tl->seqno);
	list_add_tail(&job->tl_node, &job->tl->pending);
	spin_unlock_irqrestore(&q->fence_lock, flags);
}

/* -ECANCELED if an input of the job failed upstream (another device's job). */
static int job_inputs_failed(const struct wdrv_job *job)
{
	u32 i;

	for (i = 0; i < job->n_in_fences; i++) {
		if (dma_fence_get_status(job->in_fences[i]) < 0)
			return -ECANCELED;
	}
	return 0;
}

static struct dma_fence *wdrv_run_job(struct drm_sched_job *sj)
{
	struct wdrv_job *job = to_wafer_job(sj);
	struct wdrv_job_queue *q = job->q;
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
	else
		ret = job_inputs_failed(job);
	if (!ret) {
		trace_wafer_job_start(q->wdev->index, job->cookie);
		if (job->layer_at)
			memcpy(job->layer_at, &job->layer, sizeof(job->layer));
		ret = wdrv_fw_post(&q->wdev->fw, &job->cmd);
	}
	/* Failed without reaching the firmware: still in its file's order. */
	if (ret && job_claim(job))
		job_complete(job, ret, 0, 0);
	return fence;
}

/* ---------------------------------------------------- complete -- */

/**
 * wdrv_job_stage_ns() - add a job's per-stage busy time to its file's
 * @stage_ns: the file's counters, one per stage
 * @stages: stages of the device (GET_INFO)
 * @times: the job's WFW_JOB_TIMES records as the firmware left them
 * @max: records that fit there
 * @chunks: the job's pipeline chunks (its completion's result2)
 *
 * Record (chunk * stages used + stage) says when the stage started and
 * finished the chunk; a stage is busy in between, which is what the
 * firmware adds to its own per-stage busy time (GET_STATS).  The records
 * lie in the file's own output buffer, which its owner may overwrite: one
 * not marked valid, out of its place, or ending before it starts adds
 * nothing, so a file can only misstate its own time, on stages it used.
 *
 * Return: the time added, over all stages.
 */
u64 wdrv_job_stage_ns(atomic64_t *stage_ns, u32 stages, const void *times,
		      u32 max, u32 chunks)
{
	struct wfw_chunk_time t;
	u32 i, n, used = 0;
	u64 sum = 0;

	stages = min_t(u32, stages, WDRV_MAX_STAGES);
	/* The first chunk's records name the stages used, 0 up. */
	for (i = 0; i < max && i < stages; i++) {
		memcpy(&t, times + i * sizeof(t), sizeof(t));
		if (!(t.flags & WFW_CHUNK_VALID) || t.stage != i)
			break;
		used++;
	}
	if (!used)
		return 0;
	n = min_t(u64, (u64)chunks * used, max - max % used);
	for (i = 0; i < n; i++) {
		memcpy(&t, times + i * sizeof(t), sizeof(t));
		if (!(t.flags & WFW_CHUNK_VALID) || t.stage != i % used ||
		    t.end_ns < t.start_ns)
			continue;
		atomic64_add(t.end_ns - t.start_ns, &stage_ns[t.stage]);
		sum += t.end_ns - t.start_ns;
	}
	return sum;
}

/* A completed job's chunk times, to its file's stages. */
static void job_account_stages(struct wdrv_job *job, const struct wfw_cpl *cpl)
{
	if (job->times_at && !cpl->status)
		wdrv_job_stage_ns(job->wfile->stage_ns, job->q->wdev->fw.info.num_stages,
				  job->times_at, job->times_n, cpl->result2);
}

/**
 * wdrv_job_fw_cpl() - firmware completion of a job (the interrupt path)
 * @owner: the device
 * @cpl: verified completion record
 */
void wdrv_job_fw_cpl(void *owner, const struct wfw_cpl *cpl)
{
	struct wdrv_device *wdev = owner;
	struct wdrv_job *job = NULL;
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
		drm_err_ratelimited(&wdev->drm, "completion for unknown job %llu\n", cpl->cookie);
		goto out;
	}
	atomic64_inc(&wdev->queue->completed);
	atomic64_add(cpl->device_ns, &wdev->queue->busy_ns);
	atomic64_add(cpl->device_ns, &job->wfile->busy_ns);
	job_account_stages(job, cpl);
	trace_wafer_job_complete(wdev->index, job->cookie, cpl->status, cpl->device_ns);
	job_complete(job, cpl->status, cpl->device_ns, cpl->value);
out:
	dma_fence_end_signalling(fence_cookie);
}

/* ---------------------------------------- timeout and recovery -- */

/*
 * Fails every job the firmware held; the device has just been reset (or
 * unplugged: then every job fails with -ENODEV).  The scheduler is stopped,
 * so no job is freed meanwhile.  The order jobs are failed in does not
 * matter: each timeline signals oldest first.
 */
static void fail_held_jobs(struct wdrv_job_queue *q, struct drm_sched_job *bad)
{
	bool gone = drm_dev_is_unplugged(&q->wdev->drm);
	struct wdrv_job *job;
	unsigned long cookie;

	xa_for_each(&q->jobs, cookie, job) {
		if (job_claim(job))
			job_complete(job, gone ? -ENODEV :
				     &job->base == bad ? -ETIMEDOUT : -EIO, 0, 0);
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
 * Resets the device and fails the jobs it held.  Past drm_sched_stop() this
 * is a fence-signalling critical section: nothing may wait for a fence,
 * allocate or take a lock held around such a wait; jobs drm_sched_stop()
 * frees are released from free_work.  drm_sched_stop() itself stays
 * outside the annotation: it waits for the scheduler's run_job work, which
 * signals fences (each job's scheduled fence) in a section of its own, and
 * lockdep takes waiting for that work inside ours for a cycle.
 */
static void recover(struct wdrv_job_queue *q, struct drm_sched_job *bad,
		    const char *why)
{
	struct wdrv_device *wdev = q->wdev;
	bool gone = drm_dev_is_unplugged(&wdev->drm);
	bool fence_cookie;

	if (!gone)
		drm_err_ratelimited(&wdev->drm, "resetting the device: %s\n", why);
	drm_sched_stop(&q->sched, bad);
	fence_cookie = dma_fence_begin_signalling();
	/* Unplugged: also drop the model and contexts, nothing will use them. */
	wdrv_fw_reset(&wdev->fw, gone);
	fail_held_jobs(q, bad);
	drm_sched_start(&q->sched);
	dma_fence_end_signalling(fence_cookie);
	atomic64_inc(&q->resets);
}

static enum drm_gpu_sched_stat wdrv_timedout_job(struct drm_sched_job *sj)
{
	struct wdrv_job *job = to_wafer_job(sj);
	struct wdrv_job_queue *q = job->q;

	atomic64_inc(&q->timeouts);
	trace_wafer_job_timeout(q->wdev->index, job->cookie);
	recover(q, sj, "a job timed out");
	if (drm_dev_is_unplugged(&q->wdev->drm))
		return DRM_GPU_SCHED_STAT_ENODEV;
	return DRM_GPU_SCHED_STAT_NOMINAL;
}

/**
 * wdrv_job_queue_unplug() - the device is going away: fail its jobs
 * @wdev: device, already marked unplugged (drm_dev_unplug())
 *
 * Every job the firmware holds and every job still queued completes with
 * -ENODEV; new submissions already fail at drm_dev_enter().  The firmware
 * itself is stopped later, when the last file closes.  Runs as the
 * recovery work, so it is serialised with timeouts and fault recovery.
 */
void wdrv_job_queue_unplug(struct wdrv_device *wdev)
{
	queue_work(wdev->queue->wq, &wdev->queue->recover_work);
	flush_work(&wdev->queue->recover_work);
}

static void wdrv_recover_work(struct work_struct *work)
{
	struct wdrv_job_queue *q = container_of(work, struct wdrv_job_queue,
						 recover_work);

	recover(q, NULL, "firmware fault");
}

/**
 * wdrv_job_fw_fault() - the firmware reported a fault or lost a completion
 * @owner: the device
 * @why: what happened
 */
void wdrv_job_fw_fault(void *owner, const char *why)
{
	struct wdrv_device *wdev = owner;

	drm_err_ratelimited(&wdev->drm, "firmware: %s\n", why);
	if (wdev->queue)
		queue_work(wdev->queue->wq, &wdev->queue->recover_work);
}

/* -------------------------------------------------------- free -- */

/*
 * Also called by drm_sched_stop() in recovery, inside its signalling
 * section: the job leaves q->jobs here, its cookie staying reserved for
 * the job's next use from its file's pool (storing NULL in an allocating
 * xarray reserves the slot it replaces: no allocation); the rest is
 * released from free_work.
 */
static void wdrv_free_job(struct drm_sched_job *sj)
{
	struct wdrv_job *job = to_wafer_job(sj);

	drm_sched_job_cleanup(sj);
	xa_store(&job->q->jobs, job->cookie, NULL, GFP_NOWAIT);
	job_free_later(job);
}

/* ------------------------------------------ the device's queue -- */

static const struct drm_sched_backend_ops wdrv_sched_ops = {
	.run_job = wdrv_run_job,
	.timedout_job = wdrv_timedout_job,
	.free_job = wdrv_free_job,
};

int wdrv_job_queue_init(struct wdrv_device *wdev)
{
	struct wdrv_job_queue *q;
	struct drm_sched_init_args args = {
		.ops = &wdrv_sched_ops,
		.num_rqs = DRM_SCHED_PRIORITY_COUNT,
		/* Leave room in the command ring for one control command. */
		.credit_limit = WDRV_FW_CMD_ENTRIES - 1,
		.timeout = msecs_to_jiffies(wdrv_job_timeout_ms),
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
	INIT_WORK(&q->recover_work, wdrv_recover_work);
	init_llist_head(&q->free_list);
	INIT_WORK(&q->free_work, job_free_work);
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

/**
 * wdrv_job_queue_drain() - wait until every job of the device has been freed
 * @wdev: device, unplugged (wdrv_job_queue_unplug()) and without open files
 *
 * A closing file waits for its jobs for a bounded time only, and a job
 * its entity killed is freed once its in-fences signal: such a job may
 * still hold a context, and so a model, which it releases through the
 * firmware.  Unplugged, the device fails every job that reaches it, so
 * this waits at most for in-fences of other devices.  The jobs' context
 * releases are queued on @wdev->wq when this returns.
 */
void wdrv_job_queue_drain(struct wdrv_device *wdev)
{
	struct wdrv_job_queue *q = wdev->queue;

	if (q)
		wait_var_event(&q->live, !atomic_read(&q->live));
}

void wdrv_job_queue_fini(struct wdrv_device *wdev)
{
	struct wdrv_job_queue *q = wdev->queue;

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

void wdrv_job_queue_show(struct wdrv_device *wdev, struct seq_file *m)
{
	struct wdrv_job_queue *q = wdev->queue;
	struct wdrv_job *job;
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
u32 wdrv_job_queue_inflight(struct wdrv_device *wdev)
{
	struct wdrv_job_queue *q = wdev->queue;
	struct wdrv_job *job;
	unsigned long cookie;
	u32 n = 0;

	xa_lock(&q->jobs);
	xa_for_each(&q->jobs, cookie, job)
		n += !atomic_read(&job->claimed);
	xa_unlock(&q->jobs);
	return n;
}

u64 wdrv_job_queue_busy_ns(struct wdrv_device *wdev)
{
	return atomic64_read(&wdev->queue->busy_ns);
}

u64 wdrv_job_queue_completed(struct wdrv_device *wdev)
{
	return atomic64_read(&wdev->queue->completed);
}

#if IS_ENABLED(CONFIG_DRM_ACCEL_WAFER_KUNIT_TEST)
#include "tests/wdrv_job_test.c"
#endif
