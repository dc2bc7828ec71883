/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wafer models and contexts: what a file loads into the device's SRAM.
 * A device holds up to its firmware's number of models at once (a draft
 * next to its target), as far as SRAM allows, each loaded by one file;
 * contexts (KV caches) belong to the file that created them and are bound
 * to one model.  A model lives as long as its loader keeps it and any
 * context (so any job) uses it: the last of them unloads it from the
 * firmware, and the others keep running.
 */
#ifndef WDRV_MODEL_H
#define WDRV_MODEL_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "wfw_abi.h"

struct drm_device;
struct drm_file;
struct wdrv_device;
struct wdrv_file;

/**
 * struct wdrv_model - a model loaded in a device
 * @ref: held by the loading file until it unloads or closes, and by each
 *	context on the model
 * @wdev: device
 * @owner: the loading file, NULL once it unloaded or closed (protected by
 *	@wdev->model_lock)
 * @id: the model's id, as the owner knows it
 * @fw_id: the firmware's id of the model (LOAD_MODEL's completion), named
 *	in every command about it
 * @n_layers: layers the device loaded (its layer range)
 * @layer_first: the range's first layer, numbered as in the full model
 * @total_layers: layers of the full model
 * @part: DRM_WAFER_PART_* the model was loaded with (its layers' part)
 * @flags: DRM_WAFER_MODEL_* of the range: what its jobs take and give, and
 *	DRM_WAFER_MODEL_ATTN / DRM_WAFER_MODEL_FFN for a part model
 * @act_size: bytes of one activation record
 * @stream_blob: weight streaming (DRM_WAFER_LOAD_STREAM): the driver's copy
 *	of the blob, which the firmware reads the weights from until the model
 *	is unloaded; NULL for a resident model
 * @stream_addr: its device window
 * @sram_bytes: SRAM the firmware placed it in (LOAD_MODEL's completion)
 * @live_contexts: contexts on it still in their file's table (not yet
 *	destroyed): an unload waits for the others, not for these
 * @unloaders: MODEL_UNLOADs of it waiting for its released contexts, each
 *	holding a reference: the references beyond these and the owner's are
 *	contexts not yet released (destroyed, waiting for their jobs)
 * @lost: a full reset dropped it from the firmware (another model's unload
 *	failed): nothing is sent about it any more (protected by
 *	@wdev->model_lock)
 * @loading: in the table, its slot reserved, while its MODEL_LOAD copies
 *	the blob and waits for the firmware (without @wdev->model_lock): no
 *	lookup finds it (protected by @wdev->model_lock)
 */
struct wdrv_model {
	struct kref ref;
	struct wdrv_device *wdev;
	struct wdrv_file *owner;
	u32 id;
	u32 fw_id;
	u32 n_layers;
	u32 layer_first;
	u32 total_layers;
	u32 part;
	u32 flags;
	u32 act_size;
	void *stream_blob;
	u64 stream_addr;
	u64 sram_bytes;
	atomic_t live_contexts;
	atomic_t unloaders;
	bool lost;
	bool loading;
};

/* Firmware ABI minors that brought layer parts, expert groups, expert parallelism. */
#define WDRV_FW_MINOR_PARTS		5
#define WDRV_FW_MINOR_EXPERT_GROUPS	6
#define WDRV_FW_MINOR_EXPERT_PARALLEL	7

/* Models one device's table holds: the firmware's limit (ABI 1.4). */
#define WDRV_MAX_MODELS		WFW_MAX_MODELS

/**
 * struct wdrv_model_table - the models a device holds (wdrv_model_table.c)
 * @slot: loaded models, NULL where free; a model stays until its last
 *	reference goes (its owner unloaded or closed, its contexts are gone)
 * @max: models the firmware holds at once (1 before firmware ABI 1.4)
 * @next_id: source of uapi model ids
 *
 * The caller of every wdrv_model_table_*() holds the device's model_lock
 * (but wdrv_model_table_count()'s: a snapshot).
 */
struct wdrv_model_table {
	struct wdrv_model *slot[WDRV_MAX_MODELS];
	u32 max;
	u32 next_id;
};

void wdrv_model_table_init(struct wdrv_model_table *t, u32 fw_abi_version);
int wdrv_model_table_add(struct wdrv_model_table *t, struct wdrv_model *model,
			 u32 file_models, u32 file_max);
bool wdrv_model_table_del(struct wdrv_model_table *t, struct wdrv_model *model);
bool wdrv_model_table_has(const struct wdrv_model_table *t, const struct wdrv_model *model);
struct wdrv_model *wdrv_model_table_find(const struct wdrv_model_table *t,
					 const struct wdrv_file *owner, u32 id);
struct wdrv_model *wdrv_model_table_owned(const struct wdrv_model_table *t,
					  const struct wdrv_file *owner);
bool wdrv_model_table_fw_known(const struct wdrv_model_table *t, u32 fw_id);
u32 wdrv_model_table_count(const struct wdrv_model_table *t);
u32 wdrv_model_table_loading(const struct wdrv_model_table *t);
u32 wdrv_model_table_others(const struct wdrv_model_table *t, u32 fw_id);
void wdrv_model_table_lose_all(struct wdrv_model_table *t);
u32 wdrv_model_table_fw_order(const struct wdrv_model_table *t,
			      struct wdrv_model *out[WDRV_MAX_MODELS]);

/**
 * struct wdrv_ctx - a context: KV cache for @slots sequences of @ctx_len
 * @ref: held by the file's table and by each job using it
 * @wdev: device
 * @model: the model it was created on (reference held)
 * @fw_id: the firmware's context id
 * @slots: sequence slots
 * @ctx_len: positions per slot
 * @release_work: frees the firmware context when the last job drops it
 * @rcu: frees it a grace period later, for wdrv_ctx_get()'s lockless lookup
 */
struct wdrv_ctx {
	struct kref ref;
	struct wdrv_device *wdev;
	struct wdrv_model *model;
	u32 fw_id;
	u32 slots;
	u32 ctx_len;
	struct work_struct release_work;
	struct rcu_head rcu;
};

int wdrv_ctx_get(struct wdrv_file *wfile, u32 id, struct wdrv_ctx **ctx);
void wdrv_ctx_put(struct wdrv_ctx *ctx);
void wdrv_file_release_models(struct wdrv_file *wfile);
void wdrv_model_get(struct wdrv_model *model);
void wdrv_model_put(struct wdrv_model *model);

int wdrv_model_load_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int wdrv_model_unload_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int wdrv_ctx_create_ioctl(struct drm_device *dev, void *data, struct drm_file *file);
int wdrv_ctx_destroy_ioctl(struct drm_device *dev, void *data, struct drm_file *file);

#endif /* WDRV_MODEL_H */
