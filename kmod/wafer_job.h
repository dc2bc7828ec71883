/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wafer jobs: submission through drm_sched, completion from the firmware's
 * interrupt by signalling a dma-fence, per-job timeouts, and recovery by
 * resetting the device.  The ioctl and io_uring front ends both submit
 * through wafer_job_submit().
 */
#ifndef WAFER_JOB_H
#define WAFER_JOB_H

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
void wafer_job_fw_cpl(void *owner, const struct wfw_cpl *cpl);
void wafer_job_fw_fault(void *owner, const char *why);

int wafer_file_jobs_init(struct wafer_file *wfile);
void wafer_file_jobs_fini(struct wafer_file *wfile);

int wafer_job_submit(struct drm_file *file, const struct drm_wafer_job *a,
		     u64 *seqno, struct dma_fence **finished);
int wafer_submit_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int wafer_wait_ioctl(struct drm_device *dev, void *data, struct drm_file *file);

void wafer_job_queue_show(struct wafer_device *wdev, struct seq_file *m);

#endif /* WAFER_JOB_H */
