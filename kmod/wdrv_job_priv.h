/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wafer jobs, inside the job layer: the structures a job's life
 * (wdrv_job.c), its file's pool (wdrv_job_pool.c) and WAIT with its
 * results table (wdrv_wait.c) share.  Everything else goes through wdrv_job.h.
 */
#ifndef WDRV_JOB_PRIV_H
#define WDRV_JOB_PRIV_H

#include <linux/dma-fence.h>
#include <linux/iosys-map.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include <drm/gpu_scheduler.h>

#include "wdrv_drv.h"
#include "wdrv_job.h"

/**
 * struct wdrv_job_queue - one device's job scheduling state
 * @wdev: device
 * @sched: the scheduler feeding the firmware's command ring
 * @wq: ordered queue for the scheduler's timeouts and for recovery
 * @jobs: cookie -> job, from run_job until the scheduler frees the job;
 *	the id is reserved from submit on, and still while the job waits in
 *	its file's pool for reuse (wdrv_job_pool.h)
 * @fence_lock: Protects the hardware fences and every timeline's @pending
 *	list and seqno
 * @recover_work: resets the device after a fault
 * @free_list: jobs the scheduler freed, to release from @free_work
 * @free_work: releases their buffers outside the fence-signalling paths
 * @live: jobs allocated and not yet freed, of every file; the device waits
 *	for none to be left before its firmware goes (wdrv_job_queue_drain())
 * @resets: recoveries performed
 * @timeouts: jobs that timed out
 * @completed: jobs the firmware completed
 * @busy_ns: modelled device time of those jobs
 * @results: results the files of this device retain for WAIT (debugfs)
 */
struct wdrv_job_queue {
	struct wdrv_device *wdev;
	struct drm_gpu_scheduler sched;
	struct workqueue_struct *wq;
	struct xarray jobs;
	spinlock_t fence_lock; /* Protects hw fences, timelines' pending, seqno */
	struct work_struct recover_work;
	struct llist_head free_list;
	struct work_struct free_work;
	atomic_t live;
	atomic64_t resets;
	atomic64_t timeouts;
	atomic64_t completed;
	atomic64_t busy_ns;
	atomic64_t results;
};

/**
 * struct wdrv_timeline - the hardware fences of one file's jobs
 * @ref: held by the file and by each of its jobs
 * @context: their dma-fence context
 * @seqno: last seqno handed out (under the queue's fence_lock)
 * @pending: jobs run and not yet signalled, oldest first (under the
 *	queue's fence_lock)
 */
struct wdrv_timeline {
	struct kref ref;
	u64 context;
	u64 seqno;
	struct list_head pending;
};

/**
 * struct wdrv_file_jobs - per-file job state
 * @entity: the file's scheduler entity
 * @tl: the timeline of the file's hardware fences
 * @lock: Protects @results, @n_results and @next_seqno
 * @results: seqno -> struct wdrv_job_result, until waited for
 * @n_results: entries in @results
 * @next_seqno: last seqno handed out
 */
struct wdrv_file_jobs {
	struct drm_sched_entity entity;
	struct wdrv_timeline *tl;
	struct mutex lock; /* Protects results, n_results and next_seqno */
	struct xarray results;
	unsigned int n_results;
	u64 next_seqno;
};

/**
 * struct wdrv_job - a submitted job
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
 * @cookie: id in @q->jobs and in the firmware command (a job from the
 *	pool comes with it)
 * @cmd: the RUN_JOB command, ready for the ring
 * @layer_at: with DRM_WAFER_JOB_LAYER, where in @map[0] the firmware reads
 *	the layer (after the input); NULL otherwise
 * @layer: the layer run_job writes there (validated at submit)
 * @times_at: with DRM_WAFER_JOB_TIMES, the job's chunk time records in
 *	@map[1] (read at completion for the file's per-stage time); NULL
 *	otherwise
 * @times_n: records that fit there
 * @hw_fence: signalled when the firmware completes the job (@result's own)
 * @result: shared with the file's wait table
 * @in_fences: the fences of its in-syncobjs (references held): a job
 *	whose input failed upstream does not run
 * @n_in_fences: entries in @in_fences
 * @finished_cb: uncounts the job from @wfile->unfinished when it finishes
 * @counted: the job is still counted in @wfile->unfinished
 * @claimed: someone (completion, failure on reset) took the job to signal
 *	its hardware fence: exactly once
 * @done: completed; its fence signals once the earlier jobs of @tl have
 *	(under the queue's fence_lock)
 * @status: the status it completed with (under the queue's fence_lock)
 * @nowait: being submitted from io_uring's inline issue, where no step may
 *	sleep (wdrv_job.c)
 */
struct wdrv_job {
	struct drm_sched_job base;
	struct wdrv_job_queue *q;
	struct wdrv_file *wfile;
	struct wdrv_timeline *tl;
	struct list_head tl_node;
	struct llist_node free_node;
	struct wdrv_ctx *ctx;
	struct drm_gem_object *bo[2];
	struct iosys_map map[2];
	u64 addr[2];
	u32 cookie;
	struct wfw_cmd cmd;
	void *layer_at;
	u32 layer;
	const void *times_at;
	u32 times_n;
	struct dma_fence *hw_fence;
	struct wdrv_job_result *result;
	struct dma_fence **in_fences;
	u32 n_in_fences;
	struct dma_fence_cb finished_cb;
	atomic_t counted;
	atomic_t claimed;
	bool done;
	int status;
	bool nowait;
};

static inline struct wdrv_job *to_wafer_job(struct drm_sched_job *sj)
{
	return container_of(sj, struct wdrv_job, base);
}

u64 wdrv_job_stage_ns(atomic64_t *stage_ns, u32 stages, const void *times,
		      u32 max, u32 chunks);
void wdrv_timeline_put(struct wdrv_timeline *tl);
bool wdrv_results_drop(struct wdrv_job_queue *q, struct wdrv_file_jobs *fj,
		       unsigned long seqno, struct wdrv_job_result *r);
void wdrv_results_prune(struct wdrv_job_queue *q, struct wdrv_file_jobs *fj);

#endif /* WDRV_JOB_PRIV_H */
