// SPDX-License-Identifier: MIT
/*
 * model.c - uapi_fuzz: MODEL_LOAD, MODEL_UNLOAD and drain-then-unload.
 */
#include "uapi_fuzz.h"

/* Creates a BO holding the valid blob in file @fi. */
uint32_t make_blob_bo(int fi, int fd, unsigned int gen, int corrupt, struct tctx *t)
{
	struct wt_bo b;
	int n;

	if (wt_bo_new(fd, &b, blob_len))
		return 0;
	memcpy(b.map, blob, blob_len);
	for (n = corrupt ? 1 + (int)rn(t, 3) : 0; n > 0; n--) {
		size_t at = pct(t, 60) ? rn(t, 512) : rn(t, blob_len);

		((uint8_t *)b.map)[at] ^= (uint8_t)(1u << rn(t, 8));
	}
	munmap(b.map, b.size);
	if (!corrupt) {
		add_bo(fi, gen, b.handle, b.size, 0, 0, 1);
		pthread_mutex_lock(&pool_mu);
		if (files[fi].gen == gen)
			files[fi].blob_bo = b.handle;
		pthread_mutex_unlock(&pool_mu);
	}
	return b.handle;
}

/* MODEL_LOAD flags: weight streaming (valid) or a mutated value. */
void load_flags(struct tctx *t, struct drm_wafer_model_load *ml)
{
	ml->flags = pct(t, 40) ? DRM_WAFER_LOAD_STREAM : (uint32_t)v_flags(t);
}

/* A load succeeded: the file's latest model; the one before stays loaded. */
void note_model(int fi, unsigned int gen, uint32_t id)
{
	pthread_mutex_lock(&pool_mu);
	if (files[fi].gen == gen) {
		if (files[fi].model_id)
			files[fi].prev_model_id = files[fi].model_id;
		files[fi].model_id = id;
	}
	pthread_mutex_unlock(&pool_mu);
}

void op_model_load(struct tctx *t, int fi, int fd, unsigned int gen)
{
	struct drm_wafer_model_load ml = { 0 };
	const char *invalid = NULL;
	uint32_t tmp_bo = 0;
	uint64_t size;
	int m = pct(t, 50) ? 0 : nmut(t), kind = 0, corrupt = pct(t, 10), ret;

	pthread_mutex_lock(&pool_mu);
	ml.bo_handle = files[fi].blob_bo;
	pthread_mutex_unlock(&pool_mu);
	if (corrupt) {
		tmp_bo = make_blob_bo(fi, fd, gen, 1, t);
		ml.bo_handle = tmp_bo;
	} else if (!ml.bo_handle) {
		ml.bo_handle = make_blob_bo(fi, fd, gen, 0, t);
	}
	ml.blob_size = blob_len;
	while (m--) {
		switch (rn(t, 6)) {
		case 0:
			if (pct(t, 50)) {
				load_flags(t, &ml);
			} else if (pct(t, 50)) {
				/* A layer part (valid mostly) or a mutated one. */
				ml.part = pct(t, 60) ? (uint32_t)rn(t, DRM_WAFER_PART_MAX + 1) :
				       (uint32_t)v_small(t, ml.part, DRM_WAFER_PART_MAX);
			} else if (pct(t, 50)) {
				/* Expert groups: the fuzzer's blob is dense (-EINVAL). */
				ml.expert_group = pct(t, 50) ? v_nonzero32(t) :
					(uint32_t)v_small(t, ml.expert_group,
							  DRM_WAFER_MAX_EXPERT_GROUP);
			} else {
				/* A shard's experts (a dense blob has none: -EINVAL). */
				ml.expert_first = pct(t, 50) ? (uint32_t)rn(t, 5) : v_nonzero32(t);
				ml.expert_count = pct(t, 50) ? (uint32_t)rn(t, 5) : v_nonzero32(t);
				if (pct(t, 50))
					ml.part = DRM_WAFER_PART_XSHARD;
			}
			break;
		case 5:	/* a layer range, often a valid one of the 5 layers */
			ml.layer_first = pct(t, 70) ? (uint32_t)rn(t, 5) : (uint32_t)rnd(t);
			ml.layer_count = pct(t, 70) ? (uint32_t)rn(t, 6) : (uint32_t)rnd(t);
			break;
		case 1:
			ml.bo_offset = v_off(t, 0, blob_len);
			break;
		case 2:
			ml.blob_size = v_off(t, blob_len, blob_len);
			break;
		case 3:
			ml.bo_handle = pick_handle(t, fi, 0, &size, &kind, 0);
			break;
		default:
			ml.sram_needed = rnd(t);	/* out fields: ignored */
			ml.model_id = (uint32_t)rnd(t);
		}
	}
	/* Judged on the final value: a later mutation may have made it valid. */
	if (ml.flags & ~DRM_WAFER_LOAD_FLAGS)
		invalid = "unknown flags";
	if (ml.bo_offset & 7)
		invalid = "bo_offset not 8-byte aligned";
	if (ml.layer_first && !ml.layer_count)
		invalid = "layer_first without layer_count";
	else if (ml.layer_count && (uint64_t)ml.layer_first + ml.layer_count > 5)
		invalid = "layer range outside the 5-layer blob";
	if (!ml.blob_size)
		invalid = "blob_size 0";
	if (ml.part > DRM_WAFER_PART_MAX)
		invalid = "part > DRM_WAFER_PART_MAX";
	else if (ml.part && (ml.flags & DRM_WAFER_LOAD_STREAM))
		invalid = "a layer part with LOAD_STREAM";
	if (ml.expert_group)
		invalid = ml.expert_group > DRM_WAFER_MAX_EXPERT_GROUP ?
			  "expert_group > DRM_WAFER_MAX_EXPERT_GROUP" :
			  "expert_group on a dense model";
	if (ml.part == DRM_WAFER_PART_XHOME || ml.part == DRM_WAFER_PART_XSHARD)
		invalid = "an expert-parallel part of a dense model";
	else if (ml.expert_first || ml.expert_count)
		invalid = "expert_first / expert_count on a part other than XSHARD";
	ret = raw_ioctl(fd, DRM_IOCTL_WAFER_MODEL_LOAD, &ml);
	count(OP_MODEL_LOAD, ret);
	tlog(t, OP_MODEL_LOAD, fi, ret, "bo %u off %#" PRIx64 " size %#" PRIx64
	     " flags %#x part %#x expert_group %#x experts %u+%u layers %u+%u corrupt %d"
	     " -> id %u", ml.bo_handle, ml.bo_offset, ml.blob_size, ml.flags, ml.part,
	     ml.expert_group, ml.expert_first, ml.expert_count, ml.layer_first,
	     ml.layer_count, corrupt, ret ? 0 : ml.model_id);
	if (!ret && invalid)
		sure_bug(t, OP_MODEL_LOAD, ret, "accepted %s", invalid);
	if (ret == -EFAULT)
		sure_bug(t, OP_MODEL_LOAD, ret, "no user pointer in the argument");
	/* A second load may succeed: -ENOSPC, -EMFILE, -EBUSY are its limits. */
	if (ret && ret != -EINVAL && ret != -ENOENT && ret != -EBUSY && ret != -ENOSPC &&
	    ret != -EMFILE && ret != -EPROTO && ret != -EOPNOTSUPP && ret != -EBADMSG &&
	    ret != -ENOMEM && ret != -EINTR)
		odd(t, OP_MODEL_LOAD, ret, "bo %u size %#" PRIx64, ml.bo_handle, ml.blob_size);
	if (!ret)
		note_model(fi, gen, ml.model_id);
	if (tmp_bo) {
		struct drm_gem_close c = { .handle = tmp_bo };

		gem_close(fi, fd, &c);
	}
}

int do_unload(struct tctx *t, int fi, int fd, unsigned int gen, enum op op, int mutate)
{
	struct drm_wafer_model_unload u = { 0 };
	int ret;

	pthread_mutex_lock(&pool_mu);
	u.model_id = files[fi].model_id;
	if (files[fi].prev_model_id && pct(t, 40))
		u.model_id = files[fi].prev_model_id;
	if (!u.model_id || pct(t, 10))
		u.model_id = files[(fi + (int)rn(t, nfiles)) % nfiles].stale_model_id;
	pthread_mutex_unlock(&pool_mu);
	if (mutate && pct(t, 15))
		u.pad = v_nonzero32(t);
	if (mutate && pct(t, 10))
		u.model_id = (uint32_t)v_id(t, u.model_id);
	ret = raw_ioctl(fd, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u);
	count(op, ret);
	tlog(t, op, fi, ret, "model %u pad %#x", u.model_id, u.pad);
	if (!ret && u.pad)
		sure_bug(t, op, ret, "accepted pad %#x", u.pad);
	if (!ret && !u.model_id)
		sure_bug(t, op, ret, "accepted model id 0");
	if (ret == -EFAULT)
		sure_bug(t, op, ret, "no user pointer in the argument");
	if (ret && ret != -EINVAL && ret != -ENOENT && ret != -EBUSY && ret != -EINTR &&
	    ret != -ERESTART)
		odd(t, op, ret, "model %u", u.model_id);
	if (!ret) {
		pthread_mutex_lock(&pool_mu);
		if (files[fi].gen == gen && files[fi].prev_model_id == u.model_id) {
			files[fi].stale_model_id = u.model_id;
			files[fi].prev_model_id = 0;
		}
		if (files[fi].gen == gen && files[fi].model_id == u.model_id) {
			files[fi].stale_model_id = u.model_id;
			files[fi].model_id = files[fi].prev_model_id;
			files[fi].prev_model_id = 0;
		}
		pthread_mutex_unlock(&pool_mu);
	}
	return ret;
}

int destroy_ctx(struct tctx *t, int fi, int fd, unsigned int gen, uint32_t id,
		uint32_t pad, enum op op)
{
	struct drm_wafer_ctx_destroy d = { .ctx_id = id, .pad = pad };
	int ret = raw_ioctl(fd, DRM_IOCTL_WAFER_CTX_DESTROY, &d), i;

	count(op, ret);
	tlog(t, op, fi, ret, "ctx %u pad %#x", id, pad);
	if (!ret && pad)
		sure_bug(t, op, ret, "accepted pad %#x", pad);
	if (ret == -EFAULT)
		sure_bug(t, op, ret, "no user pointer in the argument");
	if (ret && ret != -EINVAL && ret != -ENOENT)
		odd(t, op, ret, "ctx %u", id);
	if (!ret) {
		pthread_mutex_lock(&pool_mu);
		if (files[fi].gen == gen)
			for (i = 0; i < NCTX; i++)
				if (files[fi].ctx[i].id == id)
					files[fi].ctx[i].live = 0;
		pthread_mutex_unlock(&pool_mu);
	}
	return ret;
}

void op_model_unload(struct tctx *t, int fi, int fd, unsigned int gen)
{
	do_unload(t, fi, fd, gen, OP_MODEL_UNLOAD, 1);
}

/* Destroys every context of the file, then unloads: lets the model move. */
void op_drain(struct tctx *t, int fi, int fd, unsigned int gen)
{
	uint32_t ids[NCTX];
	int i, n = 0;

	pthread_mutex_lock(&pool_mu);
	for (i = 0; i < NCTX; i++)
		if (files[fi].ctx[i].live)
			ids[n++] = files[fi].ctx[i].id;
	pthread_mutex_unlock(&pool_mu);
	for (i = 0; i < n; i++)
		destroy_ctx(t, fi, fd, gen, ids[i], 0, OP_CTX_DESTROY);
	do_unload(t, fi, fd, gen, OP_DRAIN, 0);
}
