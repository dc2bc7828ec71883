// SPDX-License-Identifier: GPL-2.0-only
/*
 * wafer jobs: per-file state, WAIT and its results table, and waiting for
 * a closing file's jobs.
 */
#include <linux/ktime.h>
#include <linux/slab.h>
#include <linux/wait_bit.h>

#include <drm/drm_print.h>
#include <drm/wafer_accel.h>

#include "wdrv_job_priv.h"
#include "wdrv_uapi.h"

static void result_release(struct kref *ref)
{
	struct wdrv_job_result *r = container_of(ref, struct wdrv_job_result, ref);
	struct dma_fence *finished = r->finished;

	/* Never ran: nothing else can refer to it. */
	if (!r->hw_fence.ops) {
		dma_fence_put(finished);
		kfree(r);
		return;
	}
	/*
	 * Frees @r once no one else holds its fence (the finished fence's
	 * parent may): @r is not touched after.
	 */
	dma_fence_put(&r->hw_fence);
	dma_fence_put(finished);
}

/**
 * wdrv_job_result_put() - drop a reference to a job's result
 * @r: the result
 */
void wdrv_job_result_put(struct wdrv_job_result *r)
{
	kref_put(&r->ref, result_release);
}

/* Drops @seqno's entry @r from @fj's results; false if it is not there. */
bool wdrv_results_drop(struct wdrv_job_queue *q, struct wdrv_file_jobs *fj,
		       unsigned long seqno, struct wdrv_job_result *r)
{
	lockdep_assert_held(&fj->lock);
	if (xa_cmpxchg(&fj->results, seqno, r, NULL, GFP_KERNEL) != r)
		return false;
	fj->n_results--;
	atomic64_dec(&q->results);
	wdrv_job_result_put(r);
	return true;
}

/*
 * Keeps at most DRM_WAFER_MAX_UNWAITED results of finished jobs, dropping
 * the oldest first; results of unfinished jobs (at most max_file_inflight)
 * stay.  Called on every submission and WAIT, so a file that never waits
 * pins no more than that.
 */
void wdrv_results_prune(struct wdrv_job_queue *q, struct wdrv_file_jobs *fj)
{
	struct wdrv_job_result *r;
	unsigned long seqno;

	lockdep_assert_held(&fj->lock);
	/* The common case, and every io_uring submission: no walk at all. */
	if (fj->n_results <= DRM_WAFER_MAX_UNWAITED)
		return;
	xa_for_each(&fj->results, seqno, r) {
		if (fj->n_results <= DRM_WAFER_MAX_UNWAITED)
			break;
		if (dma_fence_is_signaled(r->finished))
			wdrv_results_drop(q, fj, seqno, r);
	}
}

int wdrv_wait_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct wdrv_job_queue *q = to_wafer_device(dev)->queue;
	struct wdrv_file_jobs *fj = to_wafer_file(file)->jobs;
	struct drm_wafer_wait *args = data;
	struct wdrv_job_result *r;
	long timeout, ret;
	s64 now, left;

	ret = wdrv_check_wait(dev, args);
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
	wdrv_results_prune(q, fj);
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
		args->done_ns = r->done_ns;
		mutex_lock(&fj->lock);
		wdrv_results_drop(q, fj, args->seqno, r);
		mutex_unlock(&fj->lock);
		ret = 0;
	} else if (ret == 0) {
		ret = -ETIME;
	}
	wdrv_job_result_put(r);
	return ret;
}

/**
 * wdrv_file_wait_idle() - wait until every job of a file has been freed
 * @wfile: the file
 * @interruptible: a signal ends the wait (-ERESTARTSYS); otherwise it ends
 *	after twice the job timeout (-ETIMEDOUT), which every job respects
 *
 * Return: 0, -ERESTARTSYS or -ETIMEDOUT.
 */
int wdrv_file_wait_idle(struct wdrv_file *wfile, bool interruptible)
{
	long timeout = msecs_to_jiffies(2 * wdrv_job_timeout_ms + 1000);

	if (interruptible)
		return wait_var_event_interruptible(&wfile->inflight,
						    !atomic_read(&wfile->inflight));
	if (!wait_var_event_timeout(&wfile->inflight, !atomic_read(&wfile->inflight),
				    timeout))
		return -ETIMEDOUT;
	return 0;
}

int wdrv_file_jobs_init(struct wdrv_file *wfile)
{
	struct drm_gpu_scheduler *sched = &wfile->wdev->queue->sched;
	struct wdrv_file_jobs *fj;
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
void wdrv_file_jobs_fini(struct wdrv_file *wfile)
{
	struct wdrv_file_jobs *fj = wfile->jobs;
	struct wdrv_job_result *r;
	unsigned long seqno;

	drm_sched_entity_destroy(&fj->entity);
	if (wdrv_file_wait_idle(wfile, false))
		drm_err_ratelimited(&wfile->wdev->drm,
				    "a closing file still has %d jobs in flight\n",
				    atomic_read(&wfile->inflight));
	xa_for_each(&fj->results, seqno, r)
		wdrv_job_result_put(r);
	atomic64_sub(fj->n_results, &wfile->wdev->queue->results);
	xa_destroy(&fj->results);
	mutex_destroy(&fj->lock);
	wdrv_timeline_put(fj->tl);
	kfree(fj);
	wfile->jobs = NULL;
}
