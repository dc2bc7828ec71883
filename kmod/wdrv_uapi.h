/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wafer uapi argument checks: the pure validation of every ioctl (and
 * io_uring command) argument, before anything is looked up or allocated.
 * Each returns 0 or -EINVAL with a debug message naming the field; the
 * KUnit suite kmod/tests/wdrv_uapi_test.c covers every branch.
 */
#ifndef WDRV_UAPI_H
#define WDRV_UAPI_H

#include <linux/types.h>

struct drm_device;
struct drm_wafer_bo_create;
struct drm_wafer_ctx_create;
struct drm_wafer_get_info;
struct drm_wafer_job;
struct drm_wafer_model_load;
struct drm_wafer_wait;

/* Most tokens one job may carry (also bounded by the context length). */
#define WDRV_MAX_TOKENS_PER_JOB	4096
/* Most in-syncobjs one job may wait for. */
#define WDRV_MAX_IN_SYNCOBJS		64
/* Most KV slots of one context. */
#define WDRV_MAX_KV_SLOTS		256

int wdrv_check_get_info(struct drm_device *dev, const struct drm_wafer_get_info *a);
int wdrv_check_bo_create(struct drm_device *dev, const struct drm_wafer_bo_create *a,
			 u64 max_size);
int wdrv_check_model_load(struct drm_device *dev, const struct drm_wafer_model_load *a,
			  u64 max_size);
int wdrv_check_ctx_create(struct drm_device *dev, const struct drm_wafer_ctx_create *a);
int wdrv_check_wait(struct drm_device *dev, const struct drm_wafer_wait *a);
int wdrv_job_validate(struct drm_device *dev, const struct drm_wafer_job *a,
		      u32 slots, u32 ctx_len, u64 *out_len);

#endif /* WDRV_UAPI_H */
