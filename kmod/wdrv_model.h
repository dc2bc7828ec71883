/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wafer models and contexts: what a file loads into the device's SRAM.
 * A device holds one model at a time, loaded by one file; contexts (KV
 * caches) belong to the file that created them.  The model lives as long as
 * its loader keeps it and any context (so any job) uses it: the last of
 * them unloads it from the firmware.
 */
#ifndef WDRV_MODEL_H
#define WDRV_MODEL_H

#include <linux/kref.h>
#include <linux/types.h>
#include <linux/workqueue.h>

struct drm_device;
struct drm_file;
struct wdrv_device;
struct wdrv_file;

/**
 * struct wdrv_model - the model loaded in a device
 * @ref: held by the loading file until it unloads or closes, and by each
 *	context on the model
 * @wdev: device
 * @owner: the loading file, NULL once it unloaded or closed (protected by
 *	@wdev->model_lock)
 * @id: the model's id, as the owner knows it
 * @fw_id: the firmware's id of the model (LOAD_MODEL's completion), named
 *	in every command about it
 * @n_layers: layers the device loaded (its layer range)
 * @flags: DRM_WAFER_MODEL_* of the range: what its jobs take and give
 * @act_size: bytes of one activation record
 * @stream_blob: weight streaming (DRM_WAFER_LOAD_STREAM): the driver's copy
 *	of the blob, which the firmware reads the weights from until the model
 *	is unloaded; NULL for a resident model
 * @stream_addr: its device window
 */
struct wdrv_model {
	struct kref ref;
	struct wdrv_device *wdev;
	struct wdrv_file *owner;
	u32 id;
	u32 fw_id;
	u32 n_layers;
	u32 flags;
	u32 act_size;
	void *stream_blob;
	u64 stream_addr;
};

/**
 * struct wdrv_ctx - a context: KV cache for @slots sequences of @ctx_len
 * @ref: held by the file's table and by each job using it
 * @wdev: device
 * @model: the model it was created on (reference held)
 * @fw_id: the firmware's context id
 * @slots: sequence slots
 * @ctx_len: positions per slot
 * @release_work: frees the firmware context when the last job drops it
 */
struct wdrv_ctx {
	struct kref ref;
	struct wdrv_device *wdev;
	struct wdrv_model *model;
	u32 fw_id;
	u32 slots;
	u32 ctx_len;
	struct work_struct release_work;
};

int wdrv_ctx_get(struct wdrv_file *wfile, u32 id, bool nowait, struct wdrv_ctx **ctx);
void wdrv_ctx_put(struct wdrv_ctx *ctx);
void wdrv_file_release_models(struct wdrv_file *wfile);

int wdrv_model_load_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int wdrv_model_unload_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int wdrv_ctx_create_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int wdrv_ctx_destroy_ioctl(struct drm_device *dev, void *data, struct drm_file *file);

#endif /* WDRV_MODEL_H */
