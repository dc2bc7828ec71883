/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wafer jobs: submission through drm_sched, completion from the firmware's
 * interrupt by signalling a dma-fence, per-job timeouts, and recovery by
 * resetting the device.  The ioctl and io_uring front ends both submit
 * through wdrv_job_submit().
 */
#ifndef WDRV_JOB_H
#define WDRV_JOB_H

#include <linux/dma-fence.h>
#include <linux/kref.h>
#include <linux/types.h>

struct drm_device;
struct drm_file;
struct file;
struct drm_wafer_job;
struct wdrv_device;
struct wdrv_file;
struct wfw_cpl;
struct seq_file;

int wdrv_job_queue_init(struct wdrv_device *wdev);
void wdrv_job_queue_fini(struct wdrv_device *wdev);
void wdrv_job_queue_unplug(struct wdrv_device *wdev);
void wdrv_job_queue_drain(struct wdrv_device *wdev);
void wdrv_job_fw_cpl(void *owner, const struct wfw_cpl *cpl);
void wdrv_job_fw_fault(void *owner, const char *why);

int wdrv_file_jobs_init(struct wdrv_file *wfile);
void wdrv_file_jobs_fini(struct wdrv_file *wfile);
int wdrv_file_wait_idle(struct wdrv_file *wfile, bool interruptible);

/**
 * struct wdrv_job_result - what a job reports when it is done
 * @ref: held by the job and by whoever reaps it (the file's wait table, or
 *	an io_uring command)
 * @finished: the job's finished fence; its error is the job's status
 * @device_ns: modelled device time, set at completion
 * @done_ns: modelled completion time on the device's timeline, set at
 *	completion (the firmware's wfw_cpl.value)
 * @cqe_done_ns: the job asked for @done_ns in its io_uring CQE
 *	(DRM_WAFER_JOB_DONE_NS) instead of @device_ns
 * @hw_fence: the job's hardware fence, once run_job initialised it (its
 *	ops set): here rather than allocated on its own, one allocation a job
 *	less.  The result owns the reference dma_fence_init() gives; the
 *	memory goes when the last reference to either is dropped (the
 *	fence's release frees the result, after an RCU grace period)
 */
struct wdrv_job_result {
	struct kref ref;
	struct dma_fence *finished;
	u64 device_ns;
	u64 done_ns;
	bool cqe_done_ns;
	struct dma_fence hw_fence;
};

int wdrv_job_wait_submitted(struct drm_file *file, const struct drm_wafer_job *a);
int wdrv_job_submit(struct drm_file *file, const struct drm_wafer_job *a,
		    u64 *seqno, struct wdrv_job_result **result, bool nowait);
void wdrv_job_result_put(struct wdrv_job_result *r);
int wdrv_submit_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
long wdrv_ioctl(struct file *filp, unsigned int cmd, unsigned long arg);
long wdrv_compat_ioctl(struct file *filp, unsigned int cmd, unsigned long arg);
int wdrv_wait_ioctl(struct drm_device *dev, void *data, struct drm_file *file);

void wdrv_job_queue_show(struct wdrv_device *wdev, struct seq_file *m);
u64 wdrv_job_queue_busy_ns(struct wdrv_device *wdev);
u32 wdrv_job_queue_inflight(struct wdrv_device *wdev);
u64 wdrv_job_queue_completed(struct wdrv_device *wdev);

#endif /* WDRV_JOB_H */
