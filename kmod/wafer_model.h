/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wafer models and contexts: what a file loads into the device's SRAM.
 * A device holds one model at a time, loaded by one file; contexts (KV
 * caches) belong to the file that created them.  The model lives as long as
 * its loader keeps it and any context (so any job) uses it: the last of
 * them unloads it from the firmware.
 */
#ifndef WAFER_MODEL_H
#define WAFER_MODEL_H

#include <linux/kref.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct drm_device;
struct drm_file;
struct wafer_device;
struct wafer_file;

/**
 * struct wafer_model - the model loaded in a device
 * @ref: held by the loading file until it unloads or closes, and by each
 *	context on the model
 * @wdev: device
 * @owner: the loading file, NULL once it unloaded or closed (protected by
 *	@wdev->model_lock)
 * @id: the model's id, as the owner knows it
 */
struct wafer_model {
	struct kref ref;
	struct wafer_device *wdev;
	struct wafer_file *owner;
	u32 id;
};

/**
 * struct wafer_ctx - a context: KV cache for @slots sequences of @ctx_len
 * @ref: held by the file's table and by each job using it
 * @wdev: device
 * @model: the model it was created on (reference held)
 * @fw_id: the firmware's context id
 * @slots: sequence slots
 * @ctx_len: positions per slot
 * @release_work: frees the firmware context when the last job drops it
 */
struct wafer_ctx {
	struct kref ref;
	struct wafer_device *wdev;
	struct wafer_model *model;
	u32 fw_id;
	u32 slots;
	u32 ctx_len;
	struct work_struct release_work;
};

struct wafer_ctx *wafer_ctx_get(struct wafer_file *wfile, u32 id);
void wafer_ctx_put(struct wafer_ctx *ctx);
void wafer_file_release_models(struct wafer_file *wfile);

int wafer_model_load_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int wafer_model_unload_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int wafer_ctx_create_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int wafer_ctx_destroy_ioctl(struct drm_device *dev, void *data, struct drm_file *file);

#endif /* WAFER_MODEL_H */
