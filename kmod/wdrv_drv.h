/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wafer: DRM accel driver for a simulated wafer-scale LLM inference device.
 * Device core: the per-device and per-file structures the upper layers
 * (buffers, models and contexts, jobs, front ends) build on.
 */
#ifndef WDRV_DRV_H
#define WDRV_DRV_H

#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include <drm/drm_device.h>
#include <drm/drm_file.h>

#include "wdrv_fw.h"
#include "wdrv_job_pool.h"
#include "wdrv_model.h"
#include "wdrv_params.h"
#include "wfs_profile.h"

#define WDRV_DRIVER_NAME	"wafer"
#define WDRV_DRIVER_DESC	"Simulated wafer-scale LLM inference accelerator"
#define WDRV_DRIVER_MAJOR	0
#define WDRV_DRIVER_MINOR	1
#define WDRV_DRIVER_PATCHLEVEL	0

struct wdrv_file_jobs;
struct wdrv_job_queue;
struct wdrv_file;
struct wdrv_model;

/**
 * struct wdrv_fw_stats - the firmware's counters as sysfs shows them
 * @lock: Protects every member below
 * @work: refreshes them with one GET_INFO (wdrv_sysfs.c)
 * @done: woken when a refresh ends
 * @running: a refresh is under way
 * @valid: @tokens, @makespan_ns and @bottleneck_ns were read at least once
 * @gen: refreshes ended so far
 * @err: the last refresh's error, 0 when it succeeded
 * @completed: jobs the device had completed when the values were asked for
 * @tokens: firmware's tokens counter
 * @makespan_ns: firmware's modelled makespan
 * @bottleneck_ns: firmware's busiest stage's modelled busy time
 * @moe_imbalance: firmware's expert load imbalance of its most imbalanced
 *	MoE layer, in thousandths (0: no MoE layer ran)
 */
struct wdrv_fw_stats {
	spinlock_t lock; /* Protects the members below */
	struct work_struct work;
	wait_queue_head_t done;
	bool running;
	bool valid;
	u64 gen;
	int err;
	u64 completed;
	u64 tokens;
	u64 makespan_ns;
	u64 bottleneck_ns;
	u64 moe_imbalance;
};

/**
 * struct wdrv_heartbeat - watch on the firmware's HEARTBEAT register
 * @work: samples it every period (wdrv_heartbeat.c; only the work writes
 *	the members below)
 * @beat: HEARTBEAT at the last sample
 * @resets: RESET_COUNT at the last sample
 * @idle: the device was idle at the last sample
 * @stalls: stopped heartbeats detected (debugfs)
 */
struct wdrv_heartbeat {
	struct delayed_work work;
	u32 beat;
	u32 resets;
	bool idle;
	u32 stalls;
};

/**
 * struct wdrv_device - one simulated accelerator
 * @drm: the DRM device; /dev/accel/accelN
 * @index: index among the devices this module created (0..num_devices-1)
 * @numa_node: node of the device's SRAM and threads, or NUMA_NO_NODE
 * @fw: firmware interface (the device itself sits behind it)
 * @queue: job scheduling state (wdrv_job.c)
 * @wq: ordered work: context release, recovery
 * @model_lock: Protects @models (bookkeeping only: never held across a
 *	wait for the firmware but a full reset's; see wdrv_model.c)
 * @models: the models the firmware holds, each with its owner (wdrv_model.c)
 * @stats: the firmware counters sysfs serves
 * @hb: the heartbeat watch
 */
struct wdrv_device {
	struct drm_device drm;
	unsigned int index;
	int numa_node;
	struct wdrv_fw fw;
	struct wdrv_job_queue *queue;
	struct workqueue_struct *wq;
	struct mutex model_lock; /* Protects models */
	struct wdrv_model_table models;
	struct wdrv_fw_stats stats;
	struct wdrv_heartbeat hb;
};

/* Stages a file accounts time to: as many as a device can have. */
#define WDRV_MAX_STAGES		WFS_MAX_STAGES

/**
 * struct wdrv_file - per open file state
 * @wdev: the device
 * @ref: held by the file and by every BO it created (memory accounting
 *	outlives the file while its BOs do, e.g. exported ones)
 * @bo_bytes: bytes of BOs created through this file and not yet freed
 * @inflight: jobs submitted through this file and not yet freed
 * @unfinished: jobs submitted and not yet finished (max_file_inflight)
 * @busy_ns: modelled device time of this file's completed jobs (fdinfo)
 * @stage_ns: modelled time each stage was busy with this file's completed
 *	jobs, as far as they asked for their chunk times (fdinfo,
 *	wdrv_job_stage_ns())
 * @uring_inline: io_uring commands issued inline (non-blocking) to the end,
 *	queued or failed (fdinfo)
 * @uring_punted: inline issues that returned -EAGAIN, to be retried from
 *	an io-wq worker (fdinfo)
 * @uring_blocking: commands issued blocking: such retries and IOSQE_ASYNC
 *	(fdinfo)
 * @owns_models: models of the device's table this file loaded and did not
 *	unload (changed under @wdev->model_lock; read without it once the
 *	file is closing)
 * @lock: Serialises changes to @contexts (lookups use RCU)
 * @contexts: context id -> struct wdrv_ctx (wdrv_model.c)
 * @jobs: per-file job state (wdrv_wait.c)
 * @job_pool: freed jobs of this file, for its next submissions; lives as
 *	long as @ref, which every job holds (wdrv_job_pool.c)
 */
struct wdrv_file {
	struct wdrv_device *wdev;
	struct kref ref;
	atomic64_t bo_bytes;
	atomic_t inflight;
	atomic_t unfinished;
	atomic64_t busy_ns;
	atomic64_t stage_ns[WDRV_MAX_STAGES];
	atomic64_t uring_inline;
	atomic64_t uring_punted;
	atomic64_t uring_blocking;
	u32 owns_models;
	struct mutex lock; /* Serialises changes to contexts */
	struct xarray contexts;
	struct wdrv_file_jobs *jobs;
	struct wdrv_job_pool job_pool;
};

static inline struct wdrv_device *to_wafer_device(struct drm_device *drm)
{
	return container_of(drm, struct wdrv_device, drm);
}

static inline struct wdrv_file *to_wafer_file(struct drm_file *file)
{
	return file->driver_priv;
}

void wdrv_file_put(struct wdrv_file *wfile);

#ifdef CONFIG_DEBUG_FS
void wdrv_debugfs_init(struct wdrv_device *wdev);
#else
static inline void wdrv_debugfs_init(struct wdrv_device *wdev) { }
#endif

#endif /* WDRV_DRV_H */
