/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wafer jobs: submission through drm_sched, completion from the firmware's
 * interrupt by signalling a dma-fence, per-job timeouts, and recovery by
 * resetting the device.  The ioctl and io_uring front ends both submit
 * through wafer_job_submit().
 */
#ifndef WAFER_JOB_H
#define WAFER_JOB_H

#include <linux/kref.h>
#include <linux/types.h>

struct drm_device;
struct drm_file;
struct dma_fence;
struct drm_wafer_job;
struct wafer_device;
struct wafer_file;
struct wfw_cpl;
struct seq_file;

int wafer_job_queue_init(struct wafer_device *wdev);
void wafer_job_queue_fini(struct wafer_device *wdev);
void wafer_job_queue_unplug(struct wafer_device *wdev);
void wafer_job_fw_cpl(void *owner, const struct wfw_cpl *cpl);
void wafer_job_fw_fault(void *owner, const char *why);

int wafer_file_jobs_init(struct wafer_file *wfile);
void wafer_file_jobs_fini(struct wafer_file *wfile);
int wafer_file_wait_idle(struct wafer_file *wfile, bool interruptible);

/**
 * struct wafer_job_result - what a job reports when it is done
 * @ref: held by the job and by whoever reaps it (the file's wait table, or
 *	an io_uring command)
 * @finished: the job's finished fence; its error is the job's status
 * @device_ns: modelled device time, set at completion
 */
struct wafer_job_result {
	struct kref ref;
	struct dma_fence *finished;
	u64 device_ns;
};

int wafer_job_submit(struct drm_file *file, const struct drm_wafer_job *a,
		     u64 *seqno, struct wafer_job_result **result);
void wafer_job_result_put(struct wafer_job_result *r);
int wafer_submit_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int wafer_wait_ioctl(struct drm_device *dev, void *data, struct drm_file *file);

void wafer_job_queue_show(struct wafer_device *wdev, struct seq_file *m);
u64 wafer_job_queue_busy_ns(struct wafer_device *wdev);
u32 wafer_job_queue_inflight(struct wafer_device *wdev);
u64 wafer_job_queue_completed(struct wafer_device *wdev);

#endif /* WAFER_JOB_H */
