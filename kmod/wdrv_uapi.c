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
	/* model_id names a model of the file: checked against its models. */
	if (a->info_size < 8 || !a->info_ptr) {
		drm_dbg(dev, "GET_INFO: info_size %u (min 8), info_ptr %s\n",
			a->info_size, a->info_ptr ? "set" : "NULL");
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

static bool is_ep_part(u32 part)
{
	return part == DRM_WAFER_PART_XHOME || part == DRM_WAFER_PART_XSHARD;
}

/*
 * expert_first / expert_count: a shard's routed experts, at least one,
 * the range not wrapping; zero on every other part.  Whether the range
 * ends inside the model's experts is the firmware's to say (it knows
 * the blob).
 */
static int check_expert_range(struct drm_device *dev, const struct drm_wafer_model_load *a)
{
	u32 end;

	if (a->part != DRM_WAFER_PART_XSHARD && (a->expert_first || a->expert_count)) {
		drm_dbg(dev, "MODEL_LOAD: expert_first %u / expert_count %u on part %u (only an XSHARD part takes them)\n",
			a->expert_first, a->expert_count, a->part);
		return -EINVAL;
	}
	if (a->part != DRM_WAFER_PART_XSHARD)
		return 0;
	if (!a->expert_count) {
		drm_dbg(dev, "MODEL_LOAD: expert_count 0 on an XSHARD part (at least 1)\n");
		return -EINVAL;
	}
	if (check_add_overflow(a->expert_first, a->expert_count, &end)) {
		drm_dbg(dev, "MODEL_LOAD: expert_first %u + expert_count %u overflows\n",
			a->expert_first, a->expert_count);
		return -EINVAL;
	}
	return 0;
}

int wdrv_check_model_load(struct drm_device *dev, const struct drm_wafer_model_load *a,
			  u64 max_size)
{
	int ret;

	if (a->flags & ~DRM_WAFER_LOAD_FLAGS) {
		drm_dbg(dev, "MODEL_LOAD: unknown flags 0x%x\n", a->flags);
		return -EINVAL;
	}
	if (a->part > DRM_WAFER_PART_MAX ||
	    (a->part && (a->flags & DRM_WAFER_LOAD_STREAM))) {
		drm_dbg(dev, "MODEL_LOAD: part %u (max %u; none with LOAD_STREAM)\n",
			a->part, DRM_WAFER_PART_MAX);
		return -EINVAL;
	}
	if (a->expert_group > DRM_WAFER_MAX_EXPERT_GROUP ||
	    (a->expert_group && ((a->flags & DRM_WAFER_LOAD_STREAM) ||
				 a->part == DRM_WAFER_PART_ATTN || is_ep_part(a->part)))) {
		drm_dbg(dev, "MODEL_LOAD: expert_group %u (max %u; none with LOAD_STREAM, an attention or an expert-parallel part)\n",
			a->expert_group, DRM_WAFER_MAX_EXPERT_GROUP);
		return -EINVAL;
	}
	ret = check_expert_range(dev, a);
	if (ret)
		return ret;
	if (a->layer_first && !a->layer_count) {
		drm_dbg(dev, "MODEL_LOAD: layer_first %u without a layer_count\n",
			a->layer_first);
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

#define WDRV_MODEL_PARTS	(DRM_WAFER_MODEL_ATTN | DRM_WAFER_MODEL_FFN | \
				 DRM_WAFER_MODEL_XHOME | DRM_WAFER_MODEL_XSHARD)

/*
 * Expert parallelism: the phase in the layer word's top bits is one the
 * model's part runs (ROUTE, GLU, FIN on the home, UP, DOWN on a shard);
 * every other model's is 0.
 */
static int job_check_phase(struct drm_device *dev, u32 phase, u32 model_flags)
{
	bool ok;

	if (model_flags & DRM_WAFER_MODEL_XHOME)
		ok = phase == DRM_WAFER_XPHASE_ROUTE || phase == DRM_WAFER_XPHASE_GLU ||
		     phase == DRM_WAFER_XPHASE_FIN;
	else if (model_flags & DRM_WAFER_MODEL_XSHARD)
		ok = phase == DRM_WAFER_XPHASE_UP || phase == DRM_WAFER_XPHASE_DOWN;
	else
		ok = !phase;
	if (!ok)
		drm_dbg(dev, "SUBMIT: layer's phase %u (bits 24..31) is not one the %s runs\n",
			phase, model_flags & DRM_WAFER_MODEL_XHOME ?
			"expert-parallel home (ROUTE 1, GLU 3, FIN 5)" :
			model_flags & DRM_WAFER_MODEL_XSHARD ? "expert shard (UP 2, DOWN 4)" :
			"model (0: not an expert-parallel part)");
	return ok ? 0 : -EINVAL;
}

/*
 * LAYER: a part model's job names a layer of its range; a whole-layer
 * model's names none.  *@kinds: the job's DRM_WAFER_MODEL_EMBED / HEAD:
 * a part job takes token ids only for the attention of layer 0, gives
 * results only from the FFN of the last layer (the firmware's rule).
 */
static int job_check_layer(struct drm_device *dev, const struct drm_wafer_job *a,
			   const struct wdrv_job_shape *sh, u32 *kinds)
{
	bool part = sh->model_flags & WDRV_MODEL_PARTS;
	u32 layer = a->layer & DRM_WAFER_JOB_LAYER_MASK;
	u32 phase = a->layer >> DRM_WAFER_XPHASE_SHIFT;
	bool heads;

	*kinds = sh->model_flags;
	if (!(a->flags & DRM_WAFER_JOB_LAYER) != !part) {
		drm_dbg(dev, "SUBMIT: flag LAYER %s on a model of %s\n",
			part ? "missing" : "set", part ? "layer parts" : "whole layers");
		return -EINVAL;
	}
	if (!part)
		return 0;
	if (job_check_phase(dev, phase, sh->model_flags))
		return -EINVAL;
	if (layer < sh->layer_first || layer - sh->layer_first >= sh->n_layers) {
		drm_dbg(dev, "SUBMIT: layer %u is not in the model's layers %u..%u\n",
			layer, sh->layer_first, sh->layer_first + sh->n_layers - 1);
		return -EINVAL;
	}
	if (layer || !(sh->model_flags & DRM_WAFER_MODEL_ATTN))
		*kinds &= ~DRM_WAFER_MODEL_EMBED;
	/* The head: the FFN of the last layer, of an expert home its FIN. */
	heads = (sh->model_flags & DRM_WAFER_MODEL_FFN) ||
		((sh->model_flags & DRM_WAFER_MODEL_XHOME) && phase == DRM_WAFER_XPHASE_FIN);
	if (layer + 1 != sh->total_layers || !heads)
		*kinds &= ~DRM_WAFER_MODEL_HEAD;
	return 0;
}

/* Token ids or activation records in, results or records out. */
static int job_check_io(struct drm_device *dev, const struct drm_wafer_job *a,
			const struct wdrv_job_shape *sh, struct wdrv_job_io *io)
{
	bool in_act = a->flags & DRM_WAFER_JOB_IN_ACT;
	bool out_act = a->flags & DRM_WAFER_JOB_OUT_ACT;
	u32 records, kinds;
	int ret;

	ret = job_check_layer(dev, a, sh, &kinds);
	if (ret)
		return ret;
	if (in_act == !!(kinds & DRM_WAFER_MODEL_EMBED)) {
		drm_dbg(dev, "SUBMIT: the model's layers %s the model: jobs take %s (flag IN_ACT %s)\n",
			in_act ? "start" : "do not start",
			in_act ? "token ids" : "activation records",
			in_act ? "set" : "missing");
		return -EINVAL;
	}
	if (out_act == !!(kinds & DRM_WAFER_MODEL_HEAD)) {
		drm_dbg(dev, "SUBMIT: the model's layers %s the model: jobs give %s (flag OUT_ACT %s)\n",
			out_act ? "end" : "do not end",
			out_act ? "results" : "activation records",
			out_act ? "set" : "missing");
		return -EINVAL;
	}
	if (in_act && (a->flags & DRM_WAFER_JOB_NOT_BEFORE)) {
		drm_dbg(dev, "SUBMIT: NOT_BEFORE with IN_ACT: activation records carry their own time (t_ns)\n");
		return -EINVAL;
	}
	if (out_act && (a->top_k || a->flags & DRM_WAFER_JOB_ALL_POSITIONS)) {
		drm_dbg(dev, "SUBMIT: OUT_ACT gives activation records: top_k %u and ALL_POSITIONS do not apply\n",
			a->top_k);
		return -EINVAL;
	}
	if ((in_act && !IS_ALIGNED(a->in_offset, 64)) ||
	    (out_act && !IS_ALIGNED(a->out_offset, 64))) {
		drm_dbg(dev, "SUBMIT: activation records at in_offset %llu / out_offset %llu: not 64-byte aligned\n",
			a->in_offset, a->out_offset);
		return -EINVAL;
	}
	io->in_len = (u64)a->n_tokens * (in_act ? sh->act_size : sizeof(u32));
	/* NOT_BEFORE: the floor (a __u64) follows the token ids. */
	if (a->flags & DRM_WAFER_JOB_NOT_BEFORE)
		io->in_len += sizeof(u64);
	/* LAYER: the layer number (a __u32) follows them (the driver writes it). */
	if (a->flags & DRM_WAFER_JOB_LAYER)
		io->in_len += sizeof(u32);
	records = a->flags & DRM_WAFER_JOB_ALL_POSITIONS ? a->n_tokens : 1;
	io->out_len = out_act ? (u64)a->n_tokens * sh->act_size :
		      (u64)records * DRM_WAFER_RESULT_SIZE(a->top_k);
	if (!(a->flags & DRM_WAFER_JOB_TIMES))
		return 0;
	/* The device checks that the records of every chunk and stage fit. */
	if (!a->times_len || !IS_ALIGNED(a->times_offset, 8) || a->times_offset < io->out_len ||
	    (u64)a->times_offset + a->times_len > U32_MAX) {
		drm_dbg(dev, "SUBMIT: TIMES at times_offset %u (+%u): empty, not 8-byte aligned, inside the %llu bytes of output or past 4 GiB\n",
			a->times_offset, a->times_len, io->out_len);
		return -EINVAL;
	}
	io->out_len = (u64)a->times_offset + a->times_len;
	return 0;
}

/* A NOP names a slot of its context; every field of work must be zero. */
static int job_check_nop(struct drm_device *dev, const struct drm_wafer_job *a,
			 const struct wdrv_job_shape *sh, struct wdrv_job_io *io)
{
	if ((a->flags & ~DRM_WAFER_JOB_WAIT_SUBMIT) != DRM_WAFER_JOB_NOP) {
		drm_dbg(dev, "SUBMIT: NOP with other flags 0x%x\n", a->flags);
		return -EINVAL;
	}
	if (a->n_tokens || a->start_pos || a->top_k) {
		drm_dbg(dev, "SUBMIT: NOP with n_tokens %u, start_pos %u or top_k %u (must be 0)\n",
			a->n_tokens, a->start_pos, a->top_k);
		return -EINVAL;
	}
	if (a->in_handle || a->out_handle || a->in_offset || a->out_offset) {
		drm_dbg(dev, "SUBMIT: NOP with a buffer (in/out handle or offset non-zero)\n");
		return -EINVAL;
	}
	if (a->slot >= sh->slots) {
		drm_dbg(dev, "SUBMIT: NOP on slot %u, the context has %u\n", a->slot, sh->slots);
		return -EINVAL;
	}
	io->in_len = 0;
	io->out_len = 0;
	return 0;
}

/**
 * wdrv_job_validate() - check a job descriptor against its context and model
 * @dev: for debug messages (may be NULL)
 * @a: the descriptor
 * @sh: its context's and model's shape
 * @io: out: the bytes the job reads and writes
 *
 * Return: 0 or -EINVAL, with a debug message saying which field is wrong.
 */
int wdrv_job_validate(struct drm_device *dev, const struct drm_wafer_job *a,
		      const struct wdrv_job_shape *sh, struct wdrv_job_io *io)
{
	u32 end;

	if (a->flags & ~DRM_WAFER_JOB_FLAGS) {
		drm_dbg(dev, "SUBMIT: unknown flags 0x%x\n", a->flags);
		return -EINVAL;
	}
	if (!(a->flags & DRM_WAFER_JOB_TIMES) && (a->times_offset || a->times_len)) {
		drm_dbg(dev, "SUBMIT: times_offset %u / times_len %u without DRM_WAFER_JOB_TIMES\n",
			a->times_offset, a->times_len);
		return -EINVAL;
	}
	if (a->in_syncobj_count > WDRV_MAX_IN_SYNCOBJS ||
	    (a->in_syncobj_count && !a->in_syncobjs)) {
		drm_dbg(dev, "SUBMIT: %u in-syncobjs (max %u)\n", a->in_syncobj_count,
			WDRV_MAX_IN_SYNCOBJS);
		return -EINVAL;
	}
	if (a->pad || (a->layer && !(a->flags & DRM_WAFER_JOB_LAYER))) {
		drm_dbg(dev, "SUBMIT: layer %u without DRM_WAFER_JOB_LAYER, or pad %u non-zero\n",
			a->layer, a->pad);
		return -EINVAL;
	}
	if ((a->flags & DRM_WAFER_JOB_WAIT_SUBMIT) && !a->in_syncobj_count) {
		drm_dbg(dev, "SUBMIT: DRM_WAFER_JOB_WAIT_SUBMIT without in-syncobjs\n");
		return -EINVAL;
	}
	if (a->flags & DRM_WAFER_JOB_NOP)
		return job_check_nop(dev, a, sh, io);
	if (!a->n_tokens || a->n_tokens > min(sh->ctx_len, WDRV_MAX_TOKENS_PER_JOB) ||
	    a->top_k > DRM_WAFER_MAX_TOPK) {
		drm_dbg(dev, "SUBMIT: n_tokens %u or top_k %u out of range\n",
			a->n_tokens, a->top_k);
		return -EINVAL;
	}
	if (a->slot >= sh->slots || check_add_overflow(a->start_pos, a->n_tokens, &end) ||
	    end > sh->ctx_len) {
		drm_dbg(dev, "SUBMIT: slot %u / positions %u+%u outside the context (%u x %u)\n",
			a->slot, a->start_pos, a->n_tokens, sh->slots, sh->ctx_len);
		return -EINVAL;
	}
	if (!IS_ALIGNED(a->in_offset, 4) || !IS_ALIGNED(a->out_offset, 8)) {
		drm_dbg(dev, "SUBMIT: misaligned in_offset or out_offset\n");
		return -EINVAL;
	}
	return job_check_io(dev, a, sh, io);
}
