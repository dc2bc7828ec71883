// SPDX-License-Identifier: GPL-2.0-only
/*
 * wafer uapi argument checks.  See wdrv_uapi.h.
 */
#include <linux/align.h>
#include <linux/minmax.h>
#include <linux/overflow.h>

#include <drm/drm_device.h>
#include <drm/drm_print.h>
#include <drm/wafer_accel.h>

#include "wdrv_uapi.h"

int wdrv_check_get_info(struct drm_device *dev, const struct drm_wafer_get_info *a)
{
	if (a->pad || a->info_size < 8 || !a->info_ptr) {
		drm_dbg(dev, "GET_INFO: pad %u, info_size %u (min 8), info_ptr %s\n",
			a->pad, a->info_size, a->info_ptr ? "set" : "NULL");
		return -EINVAL;
	}
	return 0;
}

int wdrv_check_bo_create(struct drm_device *dev, const struct drm_wafer_bo_create *a,
			 u64 max_size)
{
	if (a->flags) {
		drm_dbg(dev, "BO_CREATE: unknown flags 0x%x\n", a->flags);
		return -EINVAL;
	}
	if (!a->size || a->size > max_size) {
		drm_dbg(dev, "BO_CREATE: size %llu is not in 1..%llu\n", a->size, max_size);
		return -EINVAL;
	}
	return 0;
}

int wdrv_check_model_load(struct drm_device *dev, const struct drm_wafer_model_load *a,
			  u64 max_size)
{
	if (a->flags || a->pad) {
		drm_dbg(dev, "MODEL_LOAD: non-zero flags or padding\n");
		return -EINVAL;
	}
	if (!a->blob_size || a->blob_size > max_size || !IS_ALIGNED(a->bo_offset, 8)) {
		drm_dbg(dev, "MODEL_LOAD: bad blob size %llu or offset %llu\n",
			a->blob_size, a->bo_offset);
		return -EINVAL;
	}
	return 0;
}

int wdrv_check_ctx_create(struct drm_device *dev, const struct drm_wafer_ctx_create *a)
{
	if (a->flags || a->pad) {
		drm_dbg(dev, "CTX_CREATE: non-zero flags or padding\n");
		return -EINVAL;
	}
	if (!a->kv_slots || a->kv_slots > WDRV_MAX_KV_SLOTS || !a->ctx_len) {
		drm_dbg(dev, "CTX_CREATE: kv_slots %u (1..%u) or ctx_len %u invalid\n",
			a->kv_slots, WDRV_MAX_KV_SLOTS, a->ctx_len);
		return -EINVAL;
	}
	return 0;
}

int wdrv_check_wait(struct drm_device *dev, const struct drm_wafer_wait *a)
{
	if (a->flags) {
		drm_dbg(dev, "WAIT: unknown flags 0x%x\n", a->flags);
		return -EINVAL;
	}
	return 0;
}

/**
 * wdrv_job_validate() - check a job descriptor against its context
 * @dev: for debug messages (may be NULL)
 * @a: the descriptor
 * @slots: the context's KV slots
 * @ctx_len: the context's positions per slot
 * @out_len: out: bytes of results the job writes
 *
 * Return: 0 or -EINVAL, with a debug message saying which field is wrong.
 */
int wdrv_job_validate(struct drm_device *dev, const struct drm_wafer_job *a,
		      u32 slots, u32 ctx_len, u64 *out_len)
{
	u32 end, records;

	if (a->flags & ~DRM_WAFER_JOB_FLAGS || a->pad) {
		drm_dbg(dev, "SUBMIT: unknown flags 0x%x or non-zero padding\n", a->flags);
		return -EINVAL;
	}
	if (!a->n_tokens || a->n_tokens > min(ctx_len, WDRV_MAX_TOKENS_PER_JOB) ||
	    a->top_k > DRM_WAFER_MAX_TOPK) {
		drm_dbg(dev, "SUBMIT: n_tokens %u or top_k %u out of range\n",
			a->n_tokens, a->top_k);
		return -EINVAL;
	}
	if (a->slot >= slots || check_add_overflow(a->start_pos, a->n_tokens, &end) ||
	    end > ctx_len) {
		drm_dbg(dev, "SUBMIT: slot %u / positions %u+%u outside the context (%u x %u)\n",
			a->slot, a->start_pos, a->n_tokens, slots, ctx_len);
		return -EINVAL;
	}
	if (!IS_ALIGNED(a->in_offset, 4) || !IS_ALIGNED(a->out_offset, 8)) {
		drm_dbg(dev, "SUBMIT: misaligned in_offset or out_offset\n");
		return -EINVAL;
	}
	if (a->in_syncobj_count > WDRV_MAX_IN_SYNCOBJS ||
	    (a->in_syncobj_count && !a->in_syncobjs)) {
		drm_dbg(dev, "SUBMIT: %u in-syncobjs (max %u)\n", a->in_syncobj_count,
			WDRV_MAX_IN_SYNCOBJS);
		return -EINVAL;
	}
	records = a->flags & DRM_WAFER_JOB_ALL_POSITIONS ? a->n_tokens : 1;
	*out_len = (u64)records * DRM_WAFER_RESULT_SIZE(a->top_k);
	return 0;
}
