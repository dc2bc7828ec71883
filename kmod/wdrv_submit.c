// SPDX-License-Identifier: GPL-2.0-only
/*
 * wafer jobs: submission.  A job is validated and its buffers pinned and
 * mapped into the device address space here, with everything run_job and
 * completion need; drm_sched then orders it behind its in-fences
 * (wdrv_sched.c).
 *
 * The ioctl (and io_uring's io-wq worker) may sleep here.  io_uring's
 * inline issue may not: with @nowait every step allocates GFP_NOWAIT,
 * takes locks by trylock, and fails with -EAGAIN where it would have had
 * to wait (a BO's first mapping, jobs with in-syncobjs), undoing what it
 * did without sleeping; io_uring then retries it from a worker.  The one
 * allocation left that may reclaim is drm_sched_job_init()'s scheduler
 * fence (a slab object; the scheduler takes no gfp flags).
 */
#include <linux/compat.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_print.h>
#include <drm/drm_syncobj.h>
#include <drm/wafer_accel.h>

#include "wdrv_gem.h"
#include "wdrv_job_priv.h"
#include "wdrv_model.h"
#include "wdrv_trace.h"
#include "wdrv_uapi.h"

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

/* Frees a job that was not queued; from free_work where we may not sleep. */
static void job_discard(struct wdrv_job *job)
{
	if (job->nowait)
		wdrv_job_free_later(job);
	else
		wdrv_job_free(job);
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
	/* wdrv_job_free() drops this reference, whatever fails next. */
	kref_init(&job->result->ref);
	job->result->cqe_done_ns = a->flags & DRM_WAFER_JOB_DONE_NS;
	job->hw_fence = &job->result->hw_fence;
	ret = job_reserve_cookie(job);
	if (ret)
		return ret;
	job_build_cmd(job, a, io.out_len);
	return 0;
}

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
	if (dma_fence_add_callback(job->result->finished, &job->finished_cb, wdrv_job_finished_cb))
		wdrv_job_uncount(job);
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

/*
 * DRM_IOCTL_WAFER_SUBMIT of userspace built before &drm_wafer_job.layer:
 * an 80-byte struct whose seqno sits where the job's layer and pad are
 * now.  The DRM core would zero-extend it and return the seqno 8 bytes
 * past its end, so the ioctl's size tells it apart and the old layout is
 * read and answered here.
 */
struct wdrv_submit_v1 {
	u8 job[offsetof(struct drm_wafer_job, layer)];
	u64 seqno;
};

#define WDRV_IOCTL_SUBMIT_V1 \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_WAFER_SUBMIT, struct wdrv_submit_v1)

static_assert(sizeof(struct wdrv_submit_v1) == 80);
static_assert(sizeof(struct drm_wafer_submit) != sizeof(struct wdrv_submit_v1));

static long wdrv_submit_v1(struct file *filp, void __user *arg)
{
	struct wdrv_submit_v1 __user *u = arg;
	struct drm_wafer_submit s = {};
	long ret;

	if (copy_from_user(&s.job, u->job, sizeof(u->job)))
		return -EFAULT;
	ret = drm_ioctl_kernel(filp, wdrv_submit_ioctl, &s, 0);
	/* As drm_ioctl(): the struct goes back whatever the outcome. */
	if (put_user(s.seqno, &u->seqno))
		return -EFAULT;
	return ret;
}

/**
 * wdrv_ioctl() - file_operations.unlocked_ioctl of the accel node
 * @filp: the file
 * @cmd: ioctl number
 * @arg: its argument
 *
 * Return: drm_ioctl()'s, or the old SUBMIT's result.
 */
long wdrv_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	if (cmd == WDRV_IOCTL_SUBMIT_V1)
		return wdrv_submit_v1(filp, (void __user *)arg);
	return drm_ioctl(filp, cmd, arg);
}

#ifdef CONFIG_COMPAT
/**
 * wdrv_compat_ioctl() - file_operations.compat_ioctl of the accel node
 * @filp: the file
 * @cmd: ioctl number
 * @arg: its argument (a 32-bit process's)
 *
 * Return: drm_compat_ioctl()'s, or the old SUBMIT's result.
 */
long wdrv_compat_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	if (cmd == WDRV_IOCTL_SUBMIT_V1)
		return wdrv_submit_v1(filp, compat_ptr(arg));
	return drm_compat_ioctl(filp, cmd, arg);
}
#endif
