// SPDX-License-Identifier: MIT
/*
 * conformance: a model's layer range and layer parts (attention-FFN).
 */
#include "conformance.h"

#define BAD2(field, value, name) do { j = job_base; j.field = (value); \
		reject(fd, &j, -EINVAL, (name)); } while (0)
/*
 * A middle layer range (layers 1-2 of 5): its jobs take and give
 * activation records, and each field that does not fit that is refused.
 */
void test_layer_range(void)
{
	const uint32_t act = DRM_WAFER_ACT_REC_SIZE(64);
	int fd = open_dev(), ret, st = -1;
	struct drm_wafer_model_load ml;
	struct drm_wafer_job j;
	struct bo b, in, out;
	uint32_t ctx = 0;
	uint64_t seq = 0;

	ret = bo_new(fd, &b, blob_len);
	if (ret || bo_new(fd, &in, 4 * act) || bo_new(fd, &out, 4096)) {
		wt_ok(0, "layer range: BOs (%s)", ename(ret));
		close(fd);
		return;
	}
	memcpy(b.map, blob, blob_len);
	ret = model_load_poisoned(fd, b.handle, 0, 1, 2, &ml);
	expect(ret, 0, "MODEL_LOAD layers 1-2 of 5 (a middle range)");
	wt_ok(!ret && ml.n_layers == 2 && ml.model_flags == 0 && ml.act_size == act,
	      "MODEL_LOAD output of a middle range: %u layers, model_flags 0x%x, act_size %u",
	      ml.n_layers, ml.model_flags, ml.act_size);
	if (!ret)
		ctx = ctx_new(fd, ml.model_id, 1, 64, &ret);
	if (!ctx) {
		wt_ok(0, "layer range: context (%s)", ename(ret));
		close(fd);
		return;
	}
	/* Records a previous device would give: width 64, all zero. */
	memset(in.map, 0, in.size);
	for (ret = 0; ret < 4; ret++)
		((struct drm_wafer_act_rec *)((char *)in.map + ret * act))->dim = 64;
	job_base = (struct drm_wafer_job){ .ctx_id = ctx, .n_tokens = 2,
		.flags = DRM_WAFER_JOB_IN_ACT | DRM_WAFER_JOB_OUT_ACT,
		.in_handle = in.handle, .out_handle = out.handle };
	j = job_base;
	ret = submit(fd, &j, &seq);
	ret = ret ? ret : wait_job(fd, seq, 60, &st);
	expect(ret ? ret : st, 0, "SUBMIT valid on a middle range: records in, records out");
	wt_ok(((struct drm_wafer_act_rec *)out.map)->dim == 64 &&
	      ((struct drm_wafer_act_rec *)((char *)out.map + act))->dim == 64,
	      "its output: 2 records of width 64");
	BAD2(flags, DRM_WAFER_JOB_OUT_ACT, "on a middle range without IN_ACT (token ids)");
	BAD2(flags, DRM_WAFER_JOB_IN_ACT, "on a middle range without OUT_ACT (results)");
	BAD2(top_k, 4, "OUT_ACT with top_k 4");
	BAD2(flags, job_base.flags | DRM_WAFER_JOB_ALL_POSITIONS,
	     "OUT_ACT with ALL_POSITIONS");
	BAD2(in_offset, 32, "IN_ACT in_offset 32 (not 64-byte aligned)");
	BAD2(out_offset, 8, "OUT_ACT out_offset 8 (not 64-byte aligned)");
	BAD2(in_offset, in.size - act, "IN_ACT records past the input BO (2 from its last)");
	BAD2(out_offset, 4096 - act, "OUT_ACT records past the output BO (2 from its last)");
	((struct drm_wafer_act_rec *)in.map)->dim = 65;
	j = job_base;
	ret = submit(fd, &j, &seq);
	ret = ret ? ret : wait_job(fd, seq, 60, &st);
	expect(ret ? ret : st, -EINVAL, "SUBMIT with an activation record of width 65: the job fails");
	bo_free(fd, &b);
	bo_free(fd, &in);
	bo_free(fd, &out);
	close(fd);
}

/* ------------------------------------------- layer parts (AFD) -- */

#define ACT_GAP		1024	/* the two activation buffers' distance */

/* Part @part of every layer of the test blob in @b; its context, or 0. */
static uint32_t part_ctx(int fd, struct bo *b, uint32_t part, uint32_t want_flags)
{
	struct drm_wafer_model_load ml = { .bo_handle = b->handle, .blob_size = blob_len,
					   .part = part };
	int ret = ioc(fd, DRM_IOCTL_WAFER_MODEL_LOAD, &ml);

	expect(ret, 0, "MODEL_LOAD part %u of every layer", part);
	wt_ok(!ret && ml.n_layers == N_LAYERS && ml.model_flags == want_flags &&
	      ml.part == part,
	      "MODEL_LOAD part %u output: %u layers, model_flags 0x%x (want 0x%x)", part,
	      ml.n_layers, ml.model_flags, want_flags);
	return ret ? 0 : ctx_new(fd, ml.model_id, 1, 64, NULL);
}

/*
 * One token at @pos through the layer parts: attention then FFN of each
 * layer, activation records ping-ponging between two spans of @x, the
 * last FFN writing the result into @out.  0 or the first failure.
 */
static int part_step(int fd, const uint32_t ctx[2], struct bo *x, struct bo *out,
		     uint32_t tok, uint32_t pos)
{
	uint32_t l, p, k = 0;
	uint64_t seq;
	int ret, st;

	memcpy(x->map, &tok, sizeof(tok));
	for (l = 0; l < N_LAYERS; l++) {
		for (p = 0; p < 2; p++, k++) {
			struct drm_wafer_job j = { .ctx_id = ctx[p], .start_pos = pos,
				.n_tokens = 1, .flags = DRM_WAFER_JOB_LAYER, .layer = l,
				.in_handle = x->handle, .in_offset = (k % 2) * ACT_GAP,
				.out_handle = x->handle, .out_offset = ((k + 1) % 2) * ACT_GAP };

			if (k)
				j.flags |= DRM_WAFER_JOB_IN_ACT;
			if (l + 1 < N_LAYERS || !p) {
				j.flags |= DRM_WAFER_JOB_OUT_ACT;
			} else {
				j.out_handle = out->handle;
				j.out_offset = 0;
				j.top_k = TOPK;
			}
			ret = submit(fd, &j, &seq);
			ret = ret ? ret : wait_job(fd, seq, 60, &st);
			if (ret || st)
				return ret ? ret : st;
		}
	}
	return 0;
}

/*
 * The attention and the FFN parts of every layer as two models of one
 * file: a greedy decode through them, two jobs a layer, gives the
 * reference tokens (the split changes no bit); the driver writes each
 * job's layer after its input; and what a part model's job must not be.
 */
void test_layer_parts(void)
{
	const struct drm_wafer_token_result *r;
	int fd = open_dev(), ret = 0, st;
	struct drm_wafer_job j;
	struct bo b, x, out;
	uint32_t ctx[2], pos;
	uint64_t seq;

	if (bo_new(fd, &b, blob_len) || bo_new(fd, &x, 2 * ACT_GAP) ||
	    bo_new(fd, &out, 4096)) {
		wt_ok(0, "layer parts: BOs");
		close(fd);
		return;
	}
	memcpy(b.map, blob, blob_len);
	ctx[0] = part_ctx(fd, &b, DRM_WAFER_PART_ATTN,
			  DRM_WAFER_MODEL_ATTN | DRM_WAFER_MODEL_EMBED);
	ctx[1] = part_ctx(fd, &b, DRM_WAFER_PART_FFN, DRM_WAFER_MODEL_FFN | DRM_WAFER_MODEL_HEAD);
	if (!ctx[0] || !ctx[1]) {
		wt_ok(0, "layer parts: contexts");
		close(fd);
		return;
	}
	r = out.map;
	for (pos = 0; pos < NDECODE; pos++) {
		ret = part_step(fd, ctx, &x, &out, ref_tok[pos], pos);
		if (ret || r->position != pos || r->argmax != ref_tok[pos + 1] || r->top_k != TOPK)
			break;
	}
	wt_ok(pos == NDECODE, "greedy decode of %d tokens through attention and FFN part models "
	      "matches in-process firmware-sim (first mismatch at %u, %s)", NDECODE, pos,
	      ename(ret));
	/* The driver put the layer after the token id, over what was there. */
	memcpy((char *)x.map + 4, &(uint32_t){ 0xdeadbeef }, 4);
	j = (struct drm_wafer_job){ .ctx_id = ctx[0], .n_tokens = 1,
		.flags = DRM_WAFER_JOB_LAYER | DRM_WAFER_JOB_OUT_ACT, .layer = 0,
		.in_handle = x.handle, .out_handle = x.handle, .out_offset = ACT_GAP };
	job_base = j;
	ret = submit(fd, &j, &seq);
	ret = ret ? ret : wait_job(fd, seq, 60, &st);
	expect(ret ? ret : st, 0, "SUBMIT attention of layer 0 (token ids in)");
	wt_ok(((uint32_t *)x.map)[1] == 0, "the driver wrote layer 0 after the token id (0x%x)",
	      ((uint32_t *)x.map)[1]);
	BAD2(flags, DRM_WAFER_JOB_OUT_ACT, "on a part model without DRM_WAFER_JOB_LAYER");
	BAD2(layer, N_LAYERS, "layer 5 of a 5-layer model");
	BAD2(layer, 0xffffffffu, "layer 0xffffffff");
	BAD2(layer, 1, "attention of layer 1 with token ids (no IN_ACT)");
	BAD2(pad, 1, "a part job with pad != 0");
	BAD2(in_offset, x.size - 4, "a token id and no room for the layer in the input BO");
	j.ctx_id = ctx[1];
	j.flags |= DRM_WAFER_JOB_IN_ACT;
	j.layer = N_LAYERS - 1;
	j.out_offset = 0;
	reject(fd, &j, -EINVAL, "FFN of the last layer with OUT_ACT (it gives results)");
	bo_free(fd, &b);
	bo_free(fd, &x);
	bo_free(fd, &out);
	close(fd);
}
