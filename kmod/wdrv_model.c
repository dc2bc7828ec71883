// SPDX-License-Identifier: GPL-2.0-only
/*
 * wafer models and contexts.  Model blobs are copied out of the BO into
 * kernel memory userspace cannot change and handed to the firmware, which
 * validates them, through a mappable DMA window.  A device holds several
 * (wdrv_model_table.c), each unloaded when its loader and every context
 * (so every job) using it are gone; the others keep running.  With
 * weight streaming the copy and its window stay until then: the firmware
 * reads the layers' weights from it at every pass.
 *
 * model_lock guards the table's bookkeeping only.  An operation that talks
 * to the firmware reserves or pins what it works on under the lock (a
 * load's slot, marked loading; a model's reference), drops the lock, waits
 * for the firmware, and retakes it to commit: another file's GET_INFO,
 * context or load never waits for this one's firmware command or its blob
 * copy.  A full reset, on a firmware that refuses to unload, is the one
 * wait made under the lock: it changes every model's state.
 */
#include <linux/highmem.h>
#include <linux/iosys-map.h>
#include <linux/lockdep.h>
#include <linux/overflow.h>
#include <linux/pagemap.h>
#include <linux/shmem_fs.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/wait_bit.h>

#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>
#include <drm/wafer_accel.h>

#include "wdrv_drv.h"
#include "wdrv_gem.h"
#include "wdrv_job.h"
#include "wdrv_model.h"
#include "wdrv_uapi.h"
#include "wfs_model.h"

/*
 * Reads the blob's header from a BO of our own (shmem): only the pages
 * holding it, so a blob is judged before anything else of it is touched.
 */
static int read_header_shmem(struct drm_gem_object *obj, u64 offset,
			     struct wfs_blob_header *h)
{
	struct address_space *mapping = obj->filp->f_mapping;
	u8 *dst = (u8 *)h;
	size_t done = 0, n;
	struct page *page;

	while (done < sizeof(*h)) {
		u64 pos = offset + done;

		page = shmem_read_mapping_page(mapping, pos >> PAGE_SHIFT);
		if (IS_ERR(page))
			return PTR_ERR(page);
		n = min_t(size_t, sizeof(*h) - done, PAGE_SIZE - offset_in_page(pos));
		memcpy_from_page(dst + done, page, offset_in_page(pos), n);
		put_page(page);
		done += n;
	}
	return 0;
}

/*
 * The firmware's own check of a blob's header (wfs_model_check_header()),
 * made from the BO before the blob is copied: a blob the firmware would
 * refuse costs no copy.  Return: 0 or the firmware's errno.
 */
static int check_header(struct drm_device *dev, const struct wfs_blob_header *h, u64 size)
{
	const char *why = NULL;
	int ret = wfs_model_check_header(h, size, &why);

	if (ret)
		drm_dbg(dev, "MODEL_LOAD: the blob's header is not valid (%d%s%s)\n", ret,
			why ? ": " : "", why ? why : "");
	return ret;
}

/*
 * Checks the header of [offset, offset + size) of a BO, then copies the
 * range into a new kernel buffer, charged to the caller's memory cgroup.
 * No lock is held: the copy may be large.
 */
static void *copy_from_bo(struct drm_device *dev, struct drm_file *file,
			  u32 handle, u64 offset, u64 size)
{
	struct wfs_blob_header h;
	struct drm_gem_object *obj;
	struct iosys_map map;
	void *blob = ERR_PTR(-EINVAL);
	bool own;
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
	if (size < sizeof(h)) {
		drm_dbg(dev, "MODEL_LOAD: a %llu-byte blob is shorter than its header\n", size);
		goto out_put;
	}
	own = obj->filp && !obj->import_attach;
	if (own) {
		ret = read_header_shmem(obj, offset, &h);
		if (!ret)
			ret = check_header(dev, &h, size);
		if (ret) {
			blob = ERR_PTR(ret);
			goto out_put;
		}
	}
	ret = wdrv_gem_vmap(obj, &map);
	if (ret == -EOPNOTSUPP)
		drm_dbg(dev, "MODEL_LOAD: BO %u maps as I/O memory (an imported dma-buf), which the device cannot reach\n",
			handle);
	if (ret) {
		blob = ERR_PTR(ret);
		goto out_put;
	}
	/* An imported BO's header, from its exporter's mapping. */
	if (!own) {
		memcpy(&h, map.vaddr + offset, sizeof(h));
		ret = check_header(dev, &h, size);
		if (ret) {
			blob = ERR_PTR(ret);
			goto out_vunmap;
		}
	}
	/* Memory the user causes is charged to the user's memory cgroup. */
	blob = kvmalloc(size, GFP_KERNEL_ACCOUNT);
	if (!blob) {
		blob = ERR_PTR(-ENOMEM);
		goto out_vunmap;
	}
	memcpy(blob, map.vaddr + offset, size);
out_vunmap:
	drm_gem_vunmap_unlocked(obj, &map);
out_put:
	drm_gem_object_put(obj);
	return blob;
}

/*
 * Unloads model @fw_id from the firmware; model_lock not held (the command
 * is waited for without it).  Nothing uses it any more (no context, so no
 * job): contexts whose destruction a reset lost go with it.  A firmware
 * that still refuses (a command that timed out) is reset in full rather
 * than left holding a model nobody can unload, unless other models run
 * there: then it stays for the orphan scan of the next load to retry, and
 * their jobs are not disturbed.  The full reset, a broken firmware's path,
 * is made under model_lock, so that no model's state changes meanwhile.
 */
static void model_fw_unload(struct wdrv_device *wdev, u32 fw_id)
{
	struct wfw_cmd cmd = { .opcode = WFW_OP_UNLOAD_MODEL, .model = fw_id };
	struct wfw_cpl cpl;
	u32 others;
	int ret;

	lockdep_assert_not_held(&wdev->model_lock);
	cmd.unload.flags = WFW_UNLOAD_CONTEXTS;
	ret = wdrv_fw_ctrl(&wdev->fw, &cmd, &cpl);
	/* -ENODEV: the firmware is gone, and every model with it. */
	if (!ret || ret == -ENOENT || ret == -ENODEV)
		return;
	mutex_lock(&wdev->model_lock);
	others = wdrv_model_table_others(&wdev->models, fw_id);
	if (others) {
		mutex_unlock(&wdev->model_lock);
		drm_warn(&wdev->drm, "the firmware keeps unused model %#x (%d): left beside %u other model(s), the next load retries\n",
			 fw_id, ret, others);
		return;
	}
	drm_warn(&wdev->drm, "the firmware keeps unused model %#x (%d): full reset\n", fw_id, ret);
	wdrv_fw_reset(&wdev->fw, true);
	wdrv_model_table_lose_all(&wdev->models);
	mutex_unlock(&wdev->model_lock);
}

/* Streaming: the blob copy and its window, once the firmware let go. */
static void model_stream_free(struct wdrv_device *wdev, void *blob, u64 addr)
{
	wdrv_dma_unmap(&wdev->fw.dma, addr);
	kvfree(blob);
}

/*
 * Whether firmware model @fw_id is an orphan: not the table's, and no other
 * load is under way (whose model it may be, its id not yet recorded).
 */
static bool model_fw_orphan(struct wdrv_device *wdev, u32 fw_id)
{
	bool orphan;

	mutex_lock(&wdev->model_lock);
	orphan = !wdrv_model_table_fw_known(&wdev->models, fw_id) &&
		 wdrv_model_table_loading(&wdev->models) == 1;
	mutex_unlock(&wdev->model_lock);
	return orphan;
}

/*
 * A firmware model the table does not know is one whose load's outcome a
 * timeout, a reset or a kill hid, and nobody owns it.  List the models by
 * index and unload each such by its id (no command may name "the only
 * model" while there are several); the table's stay.  Runs in a load,
 * without model_lock; while other loads are under way, unknown models are
 * left for a later load's scan.
 */
static int model_fw_orphans(struct wdrv_device *wdev)
{
	struct wfw_info *fi = kzalloc(sizeof(*fi), GFP_KERNEL);
	struct wfw_cpl cpl;
	u32 i = 0, tries;
	int ret = 0;

	lockdep_assert_not_held(&wdev->model_lock);
	if (!fi)
		return -ENOMEM;
	/*
	 * A failed GET_INFO fails the load: an orphan left at a lower
	 * index would be what GET_INFO of "model 0" describes after it.
	 * An unloaded orphan's successors move down one index.
	 */
	for (tries = 0; tries < 2 * WDRV_MAX_MODELS && i < WDRV_MAX_MODELS; tries++) {
		ret = wdrv_fw_ctrl_read(&wdev->fw, WFW_OP_GET_INFO, i, 0, fi, sizeof(*fi), &cpl);
		if (ret || !fi->model_loaded)
			break;
		if (!model_fw_orphan(wdev, fi->model_id)) {
			i++;
			continue;
		}
		drm_dbg(&wdev->drm, "unloading orphaned firmware model %#x\n", fi->model_id);
		model_fw_unload(wdev, fi->model_id);
	}
	kfree(fi);
	return ret;
}

/*
 * Takes @model, which no file can find any more (no owner), off the
 * firmware and out of the table.  It stays in the table while the firmware
 * unloads it: a load's orphan scan then knows its id, and a full reset
 * counts it.
 */
static void model_drop(struct wdrv_device *wdev, struct wdrv_model *model)
{
	bool held;

	mutex_lock(&wdev->model_lock);
	held = wdrv_model_table_has(&wdev->models, model);
	mutex_unlock(&wdev->model_lock);
	if (held)
		model_fw_unload(wdev, model->fw_id);
	mutex_lock(&wdev->model_lock);
	wdrv_model_table_del(&wdev->models, model);
	mutex_unlock(&wdev->model_lock);
}

static void model_release(struct kref *ref)
{
	struct wdrv_model *model = container_of(ref, struct wdrv_model, ref);
	struct wdrv_device *wdev = model->wdev;

	model_drop(wdev, model);
	/* Unloaded (or reset in full): no stage reads the weights any more. */
	if (model->stream_blob)
		model_stream_free(wdev, model->stream_blob, model->stream_addr);
	kfree(model);
}

/* The caller must not hold model_lock: the last put unloads. */
static void model_put(struct wdrv_model *model)
{
	lockdep_assert_not_held(&model->wdev->model_lock);
	kref_put(&model->ref, model_release);
}

/**
 * wdrv_model_get() - pin a model found in the table
 * @model: a model of the device's table, not loading
 *
 * Taken under model_lock; an unload of it waits until the pin goes, as
 * for a context, so its firmware id stays valid without the lock.
 */
void wdrv_model_get(struct wdrv_model *model)
{
	lockdep_assert_held(&model->wdev->model_lock);
	kref_get(&model->ref);
}

/**
 * wdrv_model_put() - drop a pin (wdrv_model_get())
 * @model: the model
 *
 * Without model_lock held; wakes an unload waiting for it.
 */
void wdrv_model_put(struct wdrv_model *model)
{
	model_put(model);
	smp_mb();	/* the put before the waiters' check */
	wake_up_var(model);
}

/*
 * Contexts on @model not yet released (live, or destroyed and waiting for
 * their jobs): its references beyond the owner's and the waiting unloads'.
 * Only meaningful while the owner holds it.
 */
static int model_contexts(struct wdrv_model *model)
{
	return kref_read(&model->ref) - 1 - atomic_read(&model->unloaders);
}

/*
 * Maps @blob and sends LOAD_MODEL; model_lock not held.  *@taken:
 * the firmware layer took @blob (the command may still read it).  *@kept:
 * a streaming load succeeded, and @blob stays mapped at this address.
 */
static int model_fw_load(struct wdrv_device *wdev, void *blob,
			 const struct drm_wafer_model_load *args,
			 struct wfw_cpl *cpl, bool *taken, u64 *kept)
{
	struct wfw_cmd cmd = { .opcode = WFW_OP_LOAD_MODEL };
	u64 len = args->blob_size;
	int ret;

	lockdep_assert_not_held(&wdev->model_lock);
	*taken = false;
	*kept = 0;
	ret = model_fw_orphans(wdev);
	if (ret)
		return ret;
	ret = wdrv_dma_map(&wdev->fw.dma, blob, len, WDRV_DMA_MAPPABLE, GFP_KERNEL,
			   &cmd.load.addr);
	if (ret)
		return ret;
	cmd.load.len = len;
	cmd.load.layer_first = args->layer_first;
	cmd.load.layer_count = args->layer_count;
	cmd.load.part = args->part;
	cmd.load.expert_group = args->expert_group;
	cmd.load.expert_first = args->expert_first;
	cmd.load.expert_count = args->expert_count;
	/* The firmware's flags (wfw_uapi_ties.h). */
	cmd.load.flags = args->flags;
	ret = wdrv_fw_ctrl_buf(&wdev->fw, &cmd, cpl, blob, cmd.load.addr, taken);
	if (!*taken && !ret && (args->flags & DRM_WAFER_LOAD_STREAM))
		*kept = cmd.load.addr;
	else if (!*taken)
		wdrv_dma_unmap(&wdev->fw.dma, cmd.load.addr);
	return ret;
}

/*
 * The loaded model as GET_INFO describes it.  Expert groups on a range
 * without MoE layers are refused (the firmware ignores them there): -EINVAL.
 */
static int model_fw_info(struct wdrv_device *wdev, struct wdrv_model *model,
			 const struct wfw_info *fi, u32 expert_group)
{
	if (!fi->model_loaded || !fi->act_rec_size || fi->model_id != model->fw_id)
		return -EIO;
	if (expert_group && !fi->moe_layers) {
		drm_dbg(&wdev->drm, "MODEL_LOAD: expert_group %u on layers without experts (a dense model)\n",
			expert_group);
		return -EINVAL;
	}
	model->n_layers = fi->n_layers;
	model->layer_first = fi->layer_first;
	model->total_layers = fi->total_layers;
	model->flags = fi->model_flags & (DRM_WAFER_MODEL_EMBED | DRM_WAFER_MODEL_HEAD |
					  DRM_WAFER_MODEL_STREAM | DRM_WAFER_MODEL_ATTN |
					  DRM_WAFER_MODEL_FFN | DRM_WAFER_MODEL_XHOME |
					  DRM_WAFER_MODEL_XSHARD);
	model->act_size = fi->act_rec_size;
	return 0;
}

/* What the loaded range's jobs take and give, from the firmware's GET_INFO of it. */
static int model_fw_query(struct wdrv_device *wdev, struct wdrv_model *model, u32 expert_group)
{
	struct wfw_info *fi = kzalloc(sizeof(*fi), GFP_KERNEL_ACCOUNT);
	struct wfw_cpl cpl;
	int ret;

	if (!fi)
		return -ENOMEM;
	ret = wdrv_fw_ctrl_read_model(&wdev->fw, WFW_OP_GET_INFO, model->fw_id, 0, 0, fi,
				      sizeof(*fi), &cpl);
	if (!ret)
		ret = model_fw_info(wdev, model, fi, expert_group);
	kfree(fi);
	return ret;
}

/*
 * Header, section tables and alignment beyond the weights: a blob larger
 * than all SRAM by more than this can never load whole, so is not copied.
 */
#define WDRV_MODEL_BLOB_SLACK	SZ_1M

static int check_blob_size(struct wdrv_device *wdev, u64 size, u32 flags, u32 layer_count)
{
	u64 sram = (u64)wdev->fw.info.num_stages * wdev->fw.info.sram_bytes;
	bool host = (flags & DRM_WAFER_LOAD_STREAM) || layer_count;

	/*
	 * Streamed weights stay in host memory, and a layer range takes only
	 * its layers of a blob that may be far larger than one device (a
	 * chain of one layer per device): the BO limit bounds those, and
	 * kvmalloc()'s INT_MAX (the kernel copy is one allocation); the
	 * firmware says whether what it keeps fits.
	 */
	if (size <= sram + WDRV_MODEL_BLOB_SLACK)
		return 0;
	if (host && size <= INT_MAX)
		return 0;
	if (host) {
		drm_dbg(&wdev->drm, "MODEL_LOAD: a %llu-byte streamed or layer-range blob exceeds %d bytes\n",
			size, INT_MAX);
		return -EINVAL;
	}
	drm_dbg(&wdev->drm, "MODEL_LOAD: a %llu-byte blob exceeds the device's %llu bytes of SRAM\n",
		size, sram);
	return -EINVAL;
}

/*
 * Layer parts came with firmware ABI 1.5, expert groups with 1.6, the
 * expert-parallel parts (and their expert range) with 1.7.
 */
static int check_load_caps(struct wdrv_device *wdev, const struct drm_wafer_model_load *args)
{
	u32 minor = WFW_ABI_VERSION_MINOR(wdev->fw.info.abi_version);
	bool ep = args->part == DRM_WAFER_PART_XHOME || args->part == DRM_WAFER_PART_XSHARD;

	if ((args->part && minor < WDRV_FW_MINOR_PARTS) ||
	    (args->expert_group && minor < WDRV_FW_MINOR_EXPERT_GROUPS) ||
	    (ep && minor < WDRV_FW_MINOR_EXPERT_PARALLEL)) {
		drm_dbg(&wdev->drm, "MODEL_LOAD: part %u / expert_group %u: the firmware (ABI 1.%u) has no layer parts (1.%u), expert groups (1.%u) or expert-parallel parts (1.%u)\n",
			args->part, args->expert_group, minor, WDRV_FW_MINOR_PARTS,
			WDRV_FW_MINOR_EXPERT_GROUPS, WDRV_FW_MINOR_EXPERT_PARALLEL);
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * A control command that failed while the device went away failed because
 * it did (an unbind resets the firmware under it): say so, not what the
 * firmware said after losing its state.
 */
static int fw_errno(struct drm_device *dev, int ret)
{
	return ret && drm_dev_is_unplugged(dev) ? -ENODEV : ret;
}

/* Firmware validation errors: a range outside the blob is bad input. */
static int load_errno(int ret)
{
	return ret == -EFAULT || ret == -ERANGE || ret == -EOVERFLOW ? -EINVAL : ret;
}

/* The loaded model, in the table already, becomes @args'; model_lock held. */
static void model_install(struct wdrv_model *model, struct drm_wafer_model_load *args)
{
	lockdep_assert_held(&model->wdev->model_lock);
	kref_init(&model->ref);
	model->loading = false;
	args->model_id = model->id;
	args->n_layers = model->n_layers;
	args->model_flags = model->flags;
	args->act_size = model->act_size;
}

/* The firmware's -ENOSPC: what the model needs, what the others left. */
static void model_nospc(struct wdrv_device *wdev, const struct drm_wafer_model_load *args,
			const struct wfw_cpl *cpl)
{
	drm_dbg(&wdev->drm, "MODEL_LOAD: the model needs %llu bytes of SRAM%s (%u KiB per stage placed), stages have %u KiB left beside %u other model(s)\n",
		cpl->value, args->flags & DRM_WAFER_LOAD_STREAM ? " (streaming its weights)" : "",
		cpl->result2, cpl->result1, wdrv_model_table_count(&wdev->models) - 1);
}

/*
 * Records the firmware's id of a loading model (under model_lock: the
 * orphan scans of other loads read it), or that the load failed.
 */
static void model_set_fw_id(struct wdrv_device *wdev, struct wdrv_model *model, u32 fw_id)
{
	mutex_lock(&wdev->model_lock);
	model->fw_id = fw_id;
	mutex_unlock(&wdev->model_lock);
}

/*
 * Makes the loaded @model @args' and the file's, unless a full reset
 * dropped it from the firmware meanwhile (-EIO).
 */
static int model_commit(struct wdrv_device *wdev, struct wdrv_model *model,
			struct drm_wafer_model_load *args)
{
	int ret = 0;

	mutex_lock(&wdev->model_lock);
	if (model->lost)
		ret = -EIO;
	else
		model_install(model, args);
	mutex_unlock(&wdev->model_lock);
	if (ret)
		drm_dbg(&wdev->drm, "MODEL_LOAD: a full reset dropped the model while it loaded\n");
	return ret;
}

/*
 * Copies the blob, has the firmware load it and learns what it holds;
 * @model is in the table, loading, and model_lock is not held: every wait
 * for the firmware is made without it.  On success the model is @args'
 * and the file's.
 */
static int model_load(struct wdrv_device *wdev, struct drm_file *file,
		      struct wdrv_model *model, struct drm_wafer_model_load *args)
{
	struct drm_device *dev = &wdev->drm;
	struct wfw_cpl cpl;
	bool taken;
	void *blob;
	u64 kept;
	int ret;

	lockdep_assert_not_held(&wdev->model_lock);
	blob = copy_from_bo(dev, file, args->bo_handle, args->bo_offset, args->blob_size);
	if (IS_ERR(blob))
		return load_errno(PTR_ERR(blob));
	/* The firmware validates the blob; the driver speaks only its ABI. */
	ret = fw_errno(dev, load_errno(model_fw_load(wdev, blob, args, &cpl, &taken, &kept)));
	if (!taken && !kept)
		kvfree(blob);
	if (!ret) {
		model_set_fw_id(wdev, model, cpl.model);
		model->part = args->part;
		ret = model_fw_query(wdev, model, args->expert_group);
		if (ret) {
			drm_dbg(dev, "MODEL_LOAD: the firmware loaded but GET_INFO refused it (%d)\n",
				ret);
			model_fw_unload(wdev, model->fw_id);
		}
	}
	if (!ret) {
		model->sram_bytes = cpl.value;
		model->stream_blob = kept ? blob : NULL;
		model->stream_addr = kept;
		ret = model_commit(wdev, model, args);
		if (ret)
			model->stream_blob = NULL;
	}
	if (kept && ret)
		model_stream_free(wdev, blob, kept);
	if (ret == -ENOSPC) {
		args->sram_needed = cpl.value;
		model_nospc(wdev, args, &cpl);
	} else if (ret == -EBUSY) {
		drm_dbg(dev, "MODEL_LOAD: the firmware holds as many models as it can\n");
	} else if (!ret) {
		args->sram_needed = cpl.value;
	} else if (ret == -EINVAL && args->part >= DRM_WAFER_PART_XHOME) {
		drm_dbg(dev, "MODEL_LOAD: the firmware refused expert-parallel part %u, experts [%u, +%u): past the model's routed experts, or a model without MoE layers (its log names the field)\n",
			args->part, args->expert_first, args->expert_count);
	} else {
		drm_dbg(dev, "MODEL_LOAD: firmware said %d\n", ret);
	}
	return ret;
}

/*
 * Enters @model, the file's, in the device's table, loading: no lookup
 * finds it until it is installed, and it counts against the file's and the
 * device's models from now.  model_lock held.
 */
static int model_table_enter(struct wdrv_device *wdev, struct wdrv_file *wfile,
			     struct wdrv_model *model)
{
	int ret;

	lockdep_assert_held(&wdev->model_lock);
	model->wdev = wdev;
	model->owner = wfile;
	model->loading = true;
	ret = wdrv_model_table_add(&wdev->models, model, wfile->owns_models,
				   wdrv_max_file_models);
	if (!ret)
		wfile->owns_models++;
	else if (ret == -EMFILE)
		drm_dbg(&wdev->drm, "MODEL_LOAD: the file holds %u models already (max_file_models)\n",
			wfile->owns_models);
	else
		drm_dbg(&wdev->drm, "MODEL_LOAD: the device holds %u models already, its most\n",
			wdev->models.max);
	return ret;
}

int wdrv_model_load_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct wdrv_device *wdev = to_wafer_device(dev);
	struct wdrv_file *wfile = to_wafer_file(file);
	struct drm_wafer_model_load *args = data;
	struct wdrv_model *model;
	int ret;

	ret = wdrv_check_model_load(dev, args, (u64)wdrv_max_file_bo_mib << 20);
	if (!ret)
		ret = check_blob_size(wdev, args->blob_size, args->flags, args->layer_count);
	if (!ret)
		ret = check_load_caps(wdev, args);
	if (ret)
		return ret;
	model = kzalloc(sizeof(*model), GFP_KERNEL_ACCOUNT);
	if (!model)
		return -ENOMEM;
	/*
	 * Whether the device and the file have room is known before copying;
	 * the slot is the load's from then, and the lock is not held while
	 * the blob is copied and the firmware loads it.
	 */
	ret = mutex_lock_killable(&wdev->model_lock);
	if (ret)
		goto out_free_model;
	ret = model_table_enter(wdev, wfile, model);
	mutex_unlock(&wdev->model_lock);
	if (ret)
		goto out_free_model;
	ret = model_load(wdev, file, model, args);
	if (!ret)
		return 0;
	mutex_lock(&wdev->model_lock);
	wdrv_model_table_del(&wdev->models, model);
	wfile->owns_models--;
	mutex_unlock(&wdev->model_lock);
out_free_model:
	kfree(model);
	return ret;
}

/* Drops a closing @wfile's hold on its model: unloaded when its last context goes. */
static int model_disown(struct wdrv_device *wdev, struct wdrv_file *wfile)
{
	struct wdrv_model *model;

	mutex_lock(&wdev->model_lock);
	model = wdrv_model_table_owned(&wdev->models, wfile);
	if (model) {
		WRITE_ONCE(model->owner, NULL);
		wfile->owns_models--;
	}
	mutex_unlock(&wdev->model_lock);
	if (!model)
		return -ENOENT;
	model_put(model);
	return 0;
}

/*
 * Unloads @wfile's model @id, refused (-EBUSY) while a context on it is
 * live.  Contexts the file destroyed may still be held by their finished
 * jobs until the scheduler frees them, and are released in work items:
 * those are waited for, so the model is gone from the device on return.
 * The device's other models, and their contexts and jobs, are not touched.
 */
static int model_unload(struct wdrv_device *wdev, struct wdrv_file *wfile, u32 id)
{
	struct wdrv_model *model;
	bool owned, drop = false;
	int ret;

	ret = mutex_lock_killable(&wdev->model_lock);
	if (ret)
		return ret;
	model = wdrv_model_table_find(&wdev->models, wfile, id);
	if (model) {
		kref_get(&model->ref);
		atomic_inc(&model->unloaders);
	}
	mutex_unlock(&wdev->model_lock);
	if (!model) {
		drm_dbg(&wdev->drm, "MODEL_UNLOAD: model %u is not loaded by this file\n", id);
		return -ENOENT;
	}

	/* Or another thread's unload of it went first (model_contexts() is moot). */
	ret = wait_var_event_interruptible(model, READ_ONCE(model->owner) != wfile ||
					   atomic_read(&model->live_contexts) ||
					   !model_contexts(model));
	mutex_lock(&wdev->model_lock);
	if (!ret && model->owner != wfile) {
		/* Another thread's MODEL_UNLOAD of it went first. */
		drm_dbg(&wdev->drm, "MODEL_UNLOAD: model %u is not loaded by this file\n", id);
		ret = -ENOENT;
	} else if (!ret && model_contexts(model)) {
		drm_dbg(&wdev->drm, "MODEL_UNLOAD: model %u has contexts\n", id);
		ret = -EBUSY;
	} else if (!ret) {
		WRITE_ONCE(model->owner, NULL);
		wfile->owns_models--;
		drop = true;
	}
	mutex_unlock(&wdev->model_lock);
	/*
	 * Gone from the device on return, whatever other unloads still hold:
	 * no file finds it any more, and both references are still held.
	 */
	if (drop)
		model_drop(wdev, model);
	mutex_lock(&wdev->model_lock);
	/*
	 * This unload's reference goes with its count, under the lock, so
	 * that another unload never counts it as a context; while the model
	 * is owned the owner's reference keeps it.
	 */
	atomic_dec(&model->unloaders);
	owned = model->owner;
	if (owned)
		refcount_dec(&model->ref.refcount);
	mutex_unlock(&wdev->model_lock);
	if (!ret)
		model_put(model);	/* the owner's */
	if (!owned)
		model_put(model);
	smp_mb();	/* the puts before the waiters' check */
	wake_up_var(model);
	return ret;
}

int wdrv_model_unload_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct drm_wafer_model_unload *args = data;
	struct wdrv_file *wfile = to_wafer_file(file);

	if (args->pad || !args->model_id)
		return -EINVAL;
	return model_unload(wfile->wdev, wfile, args->model_id);
}

/* Sends DESTROY_CONTEXT; a reset that discards the command is retried. */
static void ctx_fw_destroy(struct wdrv_ctx *ctx)
{
	struct wdrv_device *wdev = ctx->wdev;
	struct wdrv_model *model = ctx->model;
	struct wfw_cmd cmd = { .opcode = WFW_OP_DESTROY_CONTEXT };
	struct wfw_cpl cpl;
	int ret, tries = 3;
	bool held;

	cmd.ctx.ctx_id = ctx->fw_id;
	/*
	 * Once the model is gone (a full reset) the id may be another's.  It
	 * stays: this context's reference keeps it in the table, and no full
	 * reset is made while a model other than the failing one is loaded.
	 */
	mutex_lock(&wdev->model_lock);
	held = wdrv_model_table_has(&wdev->models, ctx->model);
	mutex_unlock(&wdev->model_lock);
	if (held) {
		do {
			ret = wdrv_fw_ctrl(&wdev->fw, &cmd, &cpl);
		} while (ret == -EIO && --tries);
		/* The model's release resets the firmware if it kept the context. */
		if (ret && ret != -ENOENT && ret != -ENODEV)
			drm_err_ratelimited(&wdev->drm,
					    "destroying firmware context %u failed: %d\n",
					    ctx->fw_id, ret);
	}
	model_put(model);
	/*
	 * An unload waiting for the model's contexts to go holds a reference,
	 * so the model is still there for it; with none, the address only
	 * names a wait queue.
	 */
	smp_mb();
	wake_up_var(model);
	kfree_rcu(ctx, rcu);	/* wdrv_ctx_get() may be looking at it */
}

static void ctx_release_work(struct work_struct *work)
{
	ctx_fw_destroy(container_of(work, struct wdrv_ctx, release_work));
}

static void ctx_release(struct kref *ref)
{
	struct wdrv_ctx *ctx = container_of(ref, struct wdrv_ctx, ref);

	/* The last reference may be a job's, dropped where we cannot sleep long. */
	queue_work(ctx->wdev->wq, &ctx->release_work);
}

void wdrv_ctx_put(struct wdrv_ctx *ctx)
{
	kref_put(&ctx->ref, ctx_release);
}

/**
 * wdrv_ctx_get() - look up a context of this file
 * @wfile: the file
 * @id: its context id
 * @ctx: out: the context with a reference held
 *
 * Takes no lock, so a submission (io_uring's inline one too) never waits
 * here: a context leaves @wfile->contexts before the file's reference on it
 * goes, and is freed a grace period after its last reference, so one found
 * under RCU is either alive or has no reference left to take.
 *
 * Return: 0, or -ENOENT for no such context.
 */
int wdrv_ctx_get(struct wdrv_file *wfile, u32 id, struct wdrv_ctx **ctx)
{
	rcu_read_lock();
	*ctx = xa_load(&wfile->contexts, id);
	if (*ctx && !kref_get_unless_zero(&(*ctx)->ref))
		*ctx = NULL;
	rcu_read_unlock();
	return *ctx ? 0 : -ENOENT;
}

int wdrv_ctx_create_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct wdrv_device *wdev = to_wafer_device(dev);
	struct wdrv_file *wfile = to_wafer_file(file);
	struct drm_wafer_ctx_create *args = data;
	struct wfw_cmd cmd = { .opcode = WFW_OP_CREATE_CONTEXT };
	struct wdrv_model *model;
	struct wdrv_ctx *ctx;
	struct wfw_cpl cpl;
	bool lost;
	u32 id;
	int ret;

	ret = wdrv_check_ctx_create(dev, args);
	if (ret)
		return ret;
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return -ENOMEM;
	/*
	 * The model must stay this file's until the firmware has the context:
	 * a reference pins it (an unload waits for it as for a context) while
	 * the firmware is waited for without model_lock.  The context id is
	 * reserved under the file's own lock, held until the context is in
	 * the file's table.
	 */
	mutex_lock(&wdev->model_lock);
	model = wdrv_model_table_find(&wdev->models, wfile, args->model_id);
	lost = model && model->lost;
	if (model && !lost)
		kref_get(&model->ref);
	mutex_unlock(&wdev->model_lock);
	if (!model || lost) {
		kfree(ctx);
		drm_dbg(dev, "CTX_CREATE: model %u is not loaded by this file%s\n", args->model_id,
			lost ? " (a reset lost it)" : "");
		return -ENOENT;
	}
	kref_init(&ctx->ref);
	INIT_WORK(&ctx->release_work, ctx_release_work);
	ctx->wdev = wdev;
	ctx->slots = args->kv_slots;
	ctx->ctx_len = args->ctx_len;

	mutex_lock(&wfile->lock);
	ret = xa_alloc(&wfile->contexts, &id, NULL,
		       XA_LIMIT(1, wdrv_max_file_contexts), GFP_KERNEL);
	if (ret) {
		mutex_unlock(&wfile->lock);
		wdrv_model_put(model);
		kfree(ctx);
		drm_dbg(dev, "CTX_CREATE: the file has %u contexts already\n",
			wdrv_max_file_contexts);
		return ret == -EBUSY ? -EMFILE : ret;
	}
	cmd.model = model->fw_id;
	cmd.ctx.slots = args->kv_slots;
	cmd.ctx.ctx_len = args->ctx_len;
	/* The file's contexts share a modelled timeline no other file moves. */
	cmd.ctx.tenant = file->client_id;
	ret = wdrv_fw_ctrl(&wdev->fw, &cmd, &cpl);
	if (ret) {
		xa_erase(&wfile->contexts, id);
		mutex_unlock(&wfile->lock);
		wdrv_model_put(model);
		kfree(ctx);
		drm_dbg(dev, "CTX_CREATE: firmware said %d\n", ret);
		/* ctx_len above the model's maximum is an out-of-range field. */
		return fw_errno(dev, ret == -E2BIG ? -EINVAL : ret);
	}
	ctx->fw_id = cpl.result0;
	ctx->model = model;	/* the pin becomes the context's reference */
	atomic_inc(&model->live_contexts);
	smp_mb__after_atomic();	/* before the waiters' check */
	wake_up_var(model);
	xa_store(&wfile->contexts, id, ctx, GFP_KERNEL);
	mutex_unlock(&wfile->lock);

	args->kv_bytes = cpl.value;
	args->ctx_id = id;
	return 0;
}

int wdrv_ctx_destroy_ioctl(struct drm_device *dev, void *data, struct drm_file *file)
{
	struct wdrv_file *wfile = to_wafer_file(file);
	struct drm_wafer_ctx_destroy *args = data;
	struct wdrv_ctx *ctx;

	if (args->pad)
		return -EINVAL;
	mutex_lock(&wfile->lock);
	ctx = xa_erase(&wfile->contexts, args->ctx_id);
	mutex_unlock(&wfile->lock);
	if (!ctx)
		return -ENOENT;
	atomic_dec(&ctx->model->live_contexts);
	wdrv_ctx_put(ctx);
	return 0;
}

/**
 * wdrv_file_release_models() - drop a closing file's contexts and models
 * @wfile: the file; its jobs have finished, or are past a bounded wait
 *
 * Jobs still on the device keep their contexts, and those their model: it
 * is unloaded when the last of them goes, so its SRAM becomes free again.
 * Other files' models are not touched.
 */
void wdrv_file_release_models(struct wdrv_file *wfile)
{
	bool had_contexts = !xa_empty(&wfile->contexts);
	struct wdrv_ctx *ctx;
	unsigned long id;

	xa_for_each(&wfile->contexts, id, ctx) {
		xa_erase(&wfile->contexts, id);
		atomic_dec(&ctx->model->live_contexts);
		wdrv_ctx_put(ctx);
	}
	/*
	 * Contexts no job holds are destroyed in work items: before the model,
	 * so that it is unloaded by the time close() returns.  A file without
	 * contexts does not wait for others' work, unless it owns a model
	 * (a context it destroyed before may still be queued)...
	 */
	if (had_contexts || wfile->owns_models)
		flush_workqueue(wfile->wdev->wq);
	/* Nor, if it owns no model, for the model lock. */
	while (wfile->owns_models)
		if (model_disown(wfile->wdev, wfile))
			break;
}
