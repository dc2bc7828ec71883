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
/**
 * struct wdrv_job_shape - what a job descriptor is checked against
 * @slots: its context's KV slots
 * @ctx_len: its context's positions per slot
 * @model_flags: DRM_WAFER_MODEL_* of the model's layer range (with
 *	DRM_WAFER_MODEL_ATTN or DRM_WAFER_MODEL_FFN for a layer part model)
 * @act_size: bytes of one activation record of the model
 * @layer_first: the range's first layer, numbered as in the full model
 * @n_layers: layers in the range
 * @total_layers: layers of the full model
 */
struct wdrv_job_shape {
	u32 slots;
	u32 ctx_len;
	u32 model_flags;
	u32 act_size;
	u32 layer_first;
	u32 n_layers;
	u32 total_layers;
};

/**
 * struct wdrv_job_io - the buffer spans a valid job reads and writes
 * @in_len: bytes at in_offset
 * @out_len: bytes at out_offset
 */
struct wdrv_job_io {
	u64 in_len;
	u64 out_len;
};

int wdrv_job_validate(struct drm_device *dev, const struct drm_wafer_job *a,
		      const struct wdrv_job_shape *sh, struct wdrv_job_io *io);

#endif /* WDRV_UAPI_H */
