// SPDX-License-Identifier: GPL-2.0-only
/*
 * wafer models and contexts.  Model blobs are copied out of the BO into
 * kernel memory userspace cannot change, validated by the driver, then
 * handed to the firmware (which validates again) through a mappable DMA
 * window.
 */
#include <linux/iosys-map.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <drm/wafer_accel.h>

#include "wafer_drv.h"
#include "wafer_job.h"
#include "wafer_model.h"
#include "wafer_uapi.h"
#include "wfs_model.h"

/* Copies [offset, offset + size) of a BO into a new kernel buffer. */
static void *copy_from_bo(struct drm_device *dev, struct drm_file *file,
			  u32 handle, u64 offset, u64 size)
{
	struct drm_gem_object *obj;
	struct iosys_map map;
	void *blob = ERR_PTR(-EINVAL);
	u64 end;
	int ret;

	obj = drm_gem_object_lookup(file, handle);
	if (!obj)
		return ERR_PTR(-ENOENT);
	if (check_add_overflow(offset, size, &end) || end > obj->size) {
		drm_dbg(dev, "MODEL_LOAD: blob [%llu, +%llu) exceeds the %zu-byte BO\n",
			offset, size, obj->size);
		goto out_put;
	}
	blob = kvmalloc(size, GFP_KERNEL);
	if (!blob) {
		blob = ERR_PTR(-ENOMEM);
		goto out_put;
	}
	ret = drm_gem_vmap_unlocked(obj, &map);
	if (ret) {
		kvfree(blob);
		blob = ERR_PTR(ret);
		goto out_put;
	}
	memcpy(blob, map.vaddr + offset, size);
	drm_gem_vunmap_unlocked(obj, &map);
out_put:
	drm_gem_object_put(obj);
	return blob;
}

int wafer_model_load_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct wafer_device *wdev = to_wafer_device(dev);
	struct wafer_file *wfile = to_wafer_file(file);
	struct drm_wafer_model_load *args = data;
	struct wfw_cmd cmd = { .opcode = WFW_OP_LOAD_MODEL };
	struct wfs_model_info info;
	struct wfw_cpl cpl;
	void *blob;
	u64 addr;
	int ret;

	ret = wafer_check_model_load(dev, args, (u64)wafer_max_file_bo_mib << 20);
	if (ret)
		return ret;
	blob = copy_from_bo(dev, file, args->bo_handle, args->bo_offset, args->blob_size);
	if (IS_ERR(blob))
		return PTR_ERR(blob);
	ret = wfs_model_parse(blob, args->blob_size, &info);
	if (ret) {
		drm_dbg(dev, "MODEL_LOAD: the blob failed validation: %d\n", ret);
		/* Out-of-range offsets inside the blob are bad input, not bad pointers. */
		if (ret == -EFAULT || ret == -ERANGE || ret == -EOVERFLOW)
			ret = -EINVAL;
		goto out_free;
	}

	mutex_lock(&wdev->model_lock);
	if (wdev->model_owner) {
		ret = -EBUSY;
		drm_dbg(dev, "MODEL_LOAD: the device already holds a model\n");
		goto out_unlock;
	}
	ret = wafer_dma_map(&wdev->fw.dma, blob, args->blob_size, WAFER_DMA_MAPPABLE, &addr);
	if (ret)
		goto out_unlock;
	cmd.load.addr = addr;
	cmd.load.len = args->blob_size;
	ret = wafer_fw_ctrl(&wdev->fw, &cmd, &cpl);
	wafer_dma_unmap(&wdev->fw.dma, addr);
	if (ret == -ENOSPC) {
		args->sram_needed = cpl.value;
		drm_dbg(dev, "model does not fit: a stage needs %llu bytes, has %u KiB\n",
			cpl.value, cpl.result1);
	} else if (!ret) {
		args->sram_needed = cpl.value;
		wdev->model_owner = wfile;
		wdev->model_id = ++wdev->next_model_id;
		args->model_id = wdev->model_id;
	}
out_unlock:
	mutex_unlock(&wdev->model_lock);
out_free:
	kvfree(blob);
	return ret;
}

/*
 * Unloads the model if @wfile owns it and it is @id (0: any: the file is
 * closing, and the device forgets the owner whatever the firmware says).
 */
static int model_unload(struct wafer_device *wdev, struct wafer_file *wfile, u32 id)
{
	struct wfw_cmd cmd = { .opcode = WFW_OP_UNLOAD_MODEL };
	struct wfw_cpl cpl;
	int ret;

	mutex_lock(&wdev->model_lock);
	if (wdev->model_owner != wfile || (id && wdev->model_id != id)) {
		mutex_unlock(&wdev->model_lock);
		return -ENOENT;
	}
	ret = wafer_fw_ctrl(&wdev->fw, &cmd, &cpl);
	/* After a full reset the firmware has no model: forget ours too. */
	if (!ret || ret == -ENOENT || !id)
		wdev->model_owner = NULL;
	mutex_unlock(&wdev->model_lock);
	return ret == -ENOENT ? 0 : ret;
}

int wafer_model_unload_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_wafer_model_unload *args = data;
	struct wafer_file *wfile = to_wafer_file(file);
	int ret;

	if (args->pad || !args->model_id)
		return -EINVAL;
	/*
	 * Contexts the file destroyed may still be held by its finished jobs
	 * until the scheduler frees them, and are released in work items:
	 * let both happen, so only contexts that still exist say -EBUSY.
	 */
	ret = wafer_file_wait_idle(wfile, true);
	if (ret)
		return ret;
	flush_workqueue(wfile->wdev->wq);
	return model_unload(wfile->wdev, wfile, args->model_id);
}

static void ctx_fw_destroy(struct wafer_ctx *ctx)
{
	struct wfw_cmd cmd = { .opcode = WFW_OP_DESTROY_CONTEXT };
	struct wfw_cpl cpl;
	int ret;

	cmd.ctx.ctx_id = ctx->fw_id;
	ret = wafer_fw_ctrl(&ctx->wdev->fw, &cmd, &cpl);
	if (ret && ret != -ENOENT)
		drm_err_ratelimited(&ctx->wdev->drm,
				    "destroying firmware context %u failed: %d\n", ctx->fw_id, ret);
	kfree(ctx);
}

static void ctx_release_work(struct work_struct *work)
{
	ctx_fw_destroy(container_of(work, struct wafer_ctx, release_work));
}

static void ctx_release(struct kref *ref)
{
	struct wafer_ctx *ctx = container_of(ref, struct wafer_ctx, ref);

	/* The last reference may be a job's, dropped where we cannot sleep long. */
	queue_work(ctx->wdev->wq, &ctx->release_work);
}

void wafer_ctx_put(struct wafer_ctx *ctx)
{
	kref_put(&ctx->ref, ctx_release);
}

/**
 * wafer_ctx_get() - look up a context of this file
 * @wfile: the file
 * @id: its context id
 *
 * Return: the context with a reference held, or NULL.
 */
struct wafer_ctx *wafer_ctx_get(struct wafer_file *wfile, u32 id)
{
	struct wafer_ctx *ctx;

	mutex_lock(&wfile->lock);
	ctx = xa_load(&wfile->contexts, id);
	if (ctx)
		kref_get(&ctx->ref);
	mutex_unlock(&wfile->lock);
	return ctx;
}

int wafer_ctx_create_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct wafer_device *wdev = to_wafer_device(dev);
	struct wafer_file *wfile = to_wafer_file(file);
	struct drm_wafer_ctx_create *args = data;
	struct wfw_cmd cmd = { .opcode = WFW_OP_CREATE_CONTEXT };
	struct wafer_ctx *ctx;
	struct wfw_cpl cpl;
	u32 id;
	int ret;

	ret = wafer_check_ctx_create(dev, args);
	if (ret)
		return ret;
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	/*
	 * The model must stay this file's until the firmware has the context:
	 * otherwise an unload and another file's load could slip in between
	 * and the context would land on that file's model.
	 */
	mutex_lock(&wdev->model_lock);
	if (wdev->model_owner != wfile || wdev->model_id != args->model_id) {
		mutex_unlock(&wdev->model_lock);
		kfree(ctx);
		drm_dbg(dev, "CTX_CREATE: model %u is not loaded by this file\n", args->model_id);
		return -ENOENT;
	}
	kref_init(&ctx->ref);
	INIT_WORK(&ctx->release_work, ctx_release_work);
	ctx->wdev = wdev;
	ctx->slots = args->kv_slots;
	ctx->ctx_len = args->ctx_len;

	mutex_lock(&wfile->lock);
	ret = xa_alloc(&wfile->contexts, &id, NULL,
		       XA_LIMIT(1, wafer_max_file_contexts), GFP_KERNEL);
	if (ret) {
		mutex_unlock(&wfile->lock);
		mutex_unlock(&wdev->model_lock);
		kfree(ctx);
		drm_dbg(dev, "CTX_CREATE: the file has %u contexts already\n",
			wafer_max_file_contexts);
		return ret == -EBUSY ? -EMFILE : ret;
	}
	cmd.ctx.slots = args->kv_slots;
	cmd.ctx.ctx_len = args->ctx_len;
	ret = wafer_fw_ctrl(&wdev->fw, &cmd, &cpl);
	if (ret) {
		xa_erase(&wfile->contexts, id);
		mutex_unlock(&wfile->lock);
		mutex_unlock(&wdev->model_lock);
		kfree(ctx);
		drm_dbg(dev, "CTX_CREATE: firmware said %d\n", ret);
		/* ctx_len above the model's maximum is an out-of-range field. */
		return ret == -E2BIG ? -EINVAL : ret;
	}
	ctx->fw_id = cpl.result0;
	xa_store(&wfile->contexts, id, ctx, GFP_KERNEL);
	mutex_unlock(&wfile->lock);
	mutex_unlock(&wdev->model_lock);

	args->kv_bytes = cpl.value;
	args->ctx_id = id;
	return 0;
}

int wafer_ctx_destroy_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct wafer_file *wfile = to_wafer_file(file);
	struct drm_wafer_ctx_destroy *args = data;
	struct wafer_ctx *ctx;

	if (args->pad)
		return -EINVAL;
	mutex_lock(&wfile->lock);
	ctx = xa_erase(&wfile->contexts, args->ctx_id);
	mutex_unlock(&wfile->lock);
	if (!ctx)
		return -ENOENT;
	wafer_ctx_put(ctx);
	return 0;
}

/**
 * wafer_file_release_models() - drop a closing file's contexts and model
 * @wfile: the file; its jobs have finished
 */
void wafer_file_release_models(struct wafer_file *wfile)
{
	struct wafer_ctx *ctx;
	unsigned long id;

	xa_for_each(&wfile->contexts, id, ctx) {
		xa_erase(&wfile->contexts, id);
		wafer_ctx_put(ctx);
	}
	/* Context destruction runs in work items; they precede the unload. */
	flush_workqueue(wfile->wdev->wq);
	if (model_unload(wfile->wdev, wfile, 0) == -EBUSY)
		drm_err_ratelimited(&wfile->wdev->drm, "a closing file's model still has contexts\n");
}
