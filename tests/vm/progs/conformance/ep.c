// SPDX-License-Identifier: MIT
/*
 * conformance: expert parallelism, a MoE model on one device loaded as
 * attention, its FFN home and shards of its routed experts.
 */
#include "conformance.h"

#define EP_SHARDS	2
#define EP_MODELS	(2 + EP_SHARDS)	/* attention, home, shards */
#define EP_LW(l, ph)	((l) | (uint32_t)(ph) << DRM_WAFER_XPHASE_SHIFT)

/*
 * The MoE model on one device as four models: attention, the FFN home and
 * two shards of its routed experts; the exchange BO's buffers A, B, C are
 * @gap bytes apart (a record and the layer word after it).
 */
struct ep {
	int fd;
	uint32_t ctx[EP_MODELS], model[EP_MODELS];
	uint32_t dim, hidden, act, xrec, gap;
	struct bo x, out;
};

/* Part @part of the MoE blob in @b (a shard: experts [first, +count)). */
static int ep_load(struct ep *e, uint32_t k, struct bo *b, size_t len, uint32_t part,
		   uint32_t first, uint32_t count, uint32_t want_flags, uint32_t want_act,
		   const char *what)
{
	struct drm_wafer_model_load ml = { .bo_handle = b->handle, .blob_size = len,
		.part = part, .expert_first = first, .expert_count = count };
	int ret = ioc(e->fd, DRM_IOCTL_WAFER_MODEL_LOAD, &ml);

	expect(ret, 0, "MODEL_LOAD %s of the MoE model: part %u, experts [%u, +%u)", what, part,
	       first, count);
	wt_ok(!ret && ml.n_layers == N_LAYERS && ml.model_flags == want_flags &&
	      ml.act_size == want_act,
	      "MODEL_LOAD %s output: %u layers, model_flags 0x%x (want 0x%x), act_size %u "
	      "(want %u)", what, ml.n_layers, ml.model_flags, want_flags, ml.act_size, want_act);
	e->model[k] = ret ? 0 : ml.model_id;
	e->ctx[k] = ret ? 0 : ctx_new(e->fd, ml.model_id, 1, 64, NULL);
	return e->ctx[k] ? 0 : -1;
}

/* One job of member @k: records from buffer @in to @out (< 0: results). */
static int ep_job(struct ep *e, uint32_t k, uint32_t pos, uint32_t lw, uint32_t in, int out)
{
	struct drm_wafer_job j = { .ctx_id = e->ctx[k], .start_pos = pos, .n_tokens = 1,
		.flags = DRM_WAFER_JOB_LAYER | DRM_WAFER_JOB_IN_ACT | DRM_WAFER_JOB_OUT_ACT,
		.layer = lw, .in_handle = e->x.handle, .in_offset = (uint64_t)in * e->gap,
		.out_handle = e->x.handle, .out_offset = (uint64_t)(out < 0 ? 0 : out) * e->gap };
	uint64_t seq;
	int ret, st;

	if (!k && !lw)
		j.flags &= ~DRM_WAFER_JOB_IN_ACT;	/* attention of layer 0: a token */
	if (out < 0) {
		j.flags &= ~DRM_WAFER_JOB_OUT_ACT;
		j.out_handle = e->out.handle;
		j.top_k = TOPK;
	}
	ret = submit(e->fd, &j, &seq);
	ret = ret ? ret : wait_job(e->fd, seq, 60, &st);
	return ret ? ret : st;
}

static uint64_t ep_t_ns(const uint8_t *rec)
{
	uint64_t t;

	memcpy(&t, rec + offsetof(struct drm_wafer_act_rec, t_ns), sizeof(t));
	return t;
}

/*
 * A shard's reply @s into the home's record @h: UP's units [u0, u1) of a1
 * and a3, or DOWN's s64 sum added; the home goes on at the latest reply.
 */
static void ep_merge(const struct ep *e, uint8_t *h, const uint8_t *s, int down, uint64_t *t)
{
	struct drm_wafer_xrec_hdr xh;
	uint32_t a1 = DRM_WAFER_XREC_A1_OFF(e->dim), a3 = DRM_WAFER_XREC_A3_OFF(e->dim, e->hidden);
	uint32_t y = DRM_WAFER_XREC_Y_OFF(e->dim, e->hidden), i;
	uint64_t hv, sv;

	if (ep_t_ns(s) > *t)
		*t = ep_t_ns(s);
	if (down) {
		for (i = 0; i < e->dim; i++) {
			memcpy(&hv, h + y + 8 * i, 8);
			memcpy(&sv, s + y + 8 * i, 8);
			hv += sv;	/* s64 sums: exact in any order */
			memcpy(h + y + 8 * i, &hv, 8);
		}
		return;
	}
	memcpy(&xh, s + DRM_WAFER_XREC_HDR_OFF(e->dim), sizeof(xh));
	memcpy(h + a1 + 8 * xh.u0, s + a1 + 8 * xh.u0, 8 * (xh.u1 - xh.u0));
	memcpy(h + a3 + 8 * xh.u0, s + a3 + 8 * xh.u0, 8 * (xh.u1 - xh.u0));
}

/* Each shard runs phase @ph on buffer @in, its reply merged into @in. */
static int ep_exchange(struct ep *e, uint32_t l, uint32_t pos, uint32_t ph, uint32_t in)
{
	uint8_t *h = (uint8_t *)e->x.map + (size_t)in * e->gap;
	uint8_t *c = (uint8_t *)e->x.map + 2 * (size_t)e->gap;
	uint64_t t = 0;
	uint32_t s;
	int ret;

	for (s = 0; s < EP_SHARDS; s++) {
		ret = ep_job(e, 2 + s, pos, EP_LW(l, ph), in, 2);
		if (ret)
			return ret;
		ep_merge(e, h, c, ph == DRM_WAFER_XPHASE_DOWN, &t);
	}
	if (t > ep_t_ns(h))
		memcpy(h + offsetof(struct drm_wafer_act_rec, t_ns), &t, sizeof(t));
	return 0;
}

/*
 * Layer @l of a token at @pos: attention (A -> B), the home's ROUTE
 * (A -> B), UP on each shard (B), GLU (B -> A), DOWN on each (A), FIN
 * (A -> B, or the results of the last layer).
 */
static int ep_layer(struct ep *e, uint32_t l, uint32_t pos)
{
	uint8_t *a = e->x.map, *b = a + e->gap;
	int last = l + 1 == N_LAYERS, ret;

	ret = ep_job(e, 0, pos, l, 0, 1);
	if (ret)
		return ret;
	memset(a, 0, e->xrec);
	memcpy(a, b, e->act);	/* the activation record opens the expert record */
	ret = ep_job(e, 1, pos, EP_LW(l, DRM_WAFER_XPHASE_ROUTE), 0, 1);
	ret = ret ? ret : ep_exchange(e, l, pos, DRM_WAFER_XPHASE_UP, 1);
	ret = ret ? ret : ep_job(e, 1, pos, EP_LW(l, DRM_WAFER_XPHASE_GLU), 1, 0);
	ret = ret ? ret : ep_exchange(e, l, pos, DRM_WAFER_XPHASE_DOWN, 0);
	ret = ret ? ret : ep_job(e, 1, pos, EP_LW(l, DRM_WAFER_XPHASE_FIN), 0, last ? -1 : 1);
	if (!ret && !last)
		memcpy(a, b, e->act);	/* the next attention's input */
	return ret;
}

/* A greedy decode through the four models against the in-process reference. */
static void ep_decode(struct ep *e, const void *moe, size_t len)
{
	const struct drm_wafer_token_result *r = e->out.map;
	struct wfs_topk_entry tk[TOPK];
	uint32_t tok = 1, want, pos, l, i;
	struct wt_model ref;
	int ret = 0, same = 1;

	if (wt_model_open(&ref, moe, len, 64, 0)) {
		wt_ok(0, "expert parallelism: the in-process reference");
		return;
	}
	for (pos = 0; pos < NDECODE && same; pos++) {
		want = wt_model_step(&ref, tok, pos, TOPK, tk);
		memcpy(e->x.map, &tok, sizeof(tok));
		for (l = 0; l < N_LAYERS && !ret; l++)
			ret = ep_layer(e, l, pos);
		same = !ret && r->position == pos && r->argmax == want && r->top_k == TOPK;
		for (i = 0; i < TOPK && same; i++)
			same = r->topk[i].token == tk[i].token && r->topk[i].logit == tk[i].logit;
		if (same)
			tok = want;
	}
	wt_ok(same && pos == NDECODE, "greedy decode of %d tokens through attention, the expert "
	      "home and %d expert shards as 4 models of one device: tokens and top-%d logits "
	      "match in-process firmware-sim (first mismatch at %u, %s)", NDECODE, EP_SHARDS,
	      TOPK, same ? pos : pos - 1, ename(ret));
	wt_model_close(&ref);
}

/*
 * MODEL_LOAD's expert fields: each bad value on the MoE blob in @moe and
 * the dense one in @dense, refused by the driver or (a range past the
 * experts, a model without experts) by the firmware: -EINVAL either way.
 */
static void ep_bad_loads(int fd, struct bo *moe, size_t moe_len, struct bo *dense)
{
	static const struct {
		uint32_t flags, part, group, first, count;
		int dense;
		const char *name;
	} c[] = {
		{ 0, DRM_WAFER_PART_XSHARD, 0, 0, 0, 0, "XSHARD with expert_count 0" },
		{ 0, DRM_WAFER_PART_XSHARD, 0, 0xffffffffu, 1, 0,
		  "XSHARD expert_first 0xffffffff + 1 (overflows)" },
		{ 0, DRM_WAFER_PART_XSHARD, 0, 3, 2, 0, "XSHARD experts [3, +2) of 4 (firmware)" },
		{ 0, DRM_WAFER_PART_XSHARD, 0, 4, 1, 0, "XSHARD experts [4, +1) of 4 (firmware)" },
		{ 0, DRM_WAFER_PART_XHOME, 0, 0, 1, 0, "XHOME with expert_count 1" },
		{ 0, DRM_WAFER_PART_XHOME, 0, 1, 0, 0, "XHOME with expert_first 1" },
		{ 0, DRM_WAFER_PART_FFN, 0, 1, 0, 0, "FFN part with expert_first 1" },
		{ 0, DRM_WAFER_PART_ATTN, 0, 0, 1, 0, "attention part with expert_count 1" },
		{ 0, DRM_WAFER_PART_WHOLE, 0, 0, 2, 0, "whole layers with expert_count 2" },
		{ 0, DRM_WAFER_PART_XHOME, 1, 0, 0, 0, "XHOME with expert_group 1" },
		{ 0, DRM_WAFER_PART_XSHARD, 1, 0, 2, 0, "XSHARD with expert_group 1" },
		{ DRM_WAFER_LOAD_STREAM, DRM_WAFER_PART_XSHARD, 0, 0, 2, 0, "XSHARD with LOAD_STREAM" },
		{ DRM_WAFER_LOAD_STREAM, DRM_WAFER_PART_XHOME, 0, 0, 0, 0, "XHOME with LOAD_STREAM" },
		{ 0, DRM_WAFER_PART_XHOME, 0, 0, 0, 1, "XHOME of a dense model (firmware)" },
		{ 0, DRM_WAFER_PART_XSHARD, 0, 0, 1, 1, "XSHARD of a dense model (firmware)" },
	};
	struct drm_wafer_model_unload u = { 0 };
	struct drm_wafer_model_load ml;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		ml = (struct drm_wafer_model_load){
			.bo_handle = c[i].dense ? dense->handle : moe->handle,
			.blob_size = c[i].dense ? blob_len : moe_len, .flags = c[i].flags,
			.part = c[i].part, .expert_group = c[i].group,
			.expert_first = c[i].first, .expert_count = c[i].count };
		ret = ioc(fd, DRM_IOCTL_WAFER_MODEL_LOAD, &ml);
		expect(ret, -EINVAL, "MODEL_LOAD %s", c[i].name);
		u.model_id = ml.model_id;
		if (!ret)
			ioc(fd, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u);
	}
}

/* Jobs the parts refuse: phases, the layer, where results come from. */
static void ep_bad_jobs(struct ep *e)
{
	static const struct {
		uint32_t k, lw, flags;
		const char *name;
	} c[] = {
		{ 1, 0, 0, "home, phase 0" },
		{ 1, EP_LW(0, DRM_WAFER_XPHASE_UP), 0, "home, phase UP" },
		{ 1, EP_LW(0, DRM_WAFER_XPHASE_DOWN), 0, "home, phase DOWN" },
		{ 1, EP_LW(0, 6), 0, "home, phase 6" },
		{ 1, EP_LW(0, 0xff), 0, "home, phase 0xff" },
		{ 2, EP_LW(0, DRM_WAFER_XPHASE_ROUTE), 0, "shard, phase ROUTE" },
		{ 2, EP_LW(0, DRM_WAFER_XPHASE_FIN), 0, "shard, phase FIN" },
		{ 3, 0, 0, "shard, phase 0" },
		{ 0, EP_LW(1, DRM_WAFER_XPHASE_ROUTE), 0, "attention, phase ROUTE" },
		{ 1, EP_LW(N_LAYERS, DRM_WAFER_XPHASE_ROUTE), 0, "home, ROUTE of layer 5 of 5" },
		{ 1, EP_LW(N_LAYERS - 1, DRM_WAFER_XPHASE_FIN), 0,
		  "home, FIN of the last layer with OUT_ACT (it gives results)" },
		{ 1, EP_LW(N_LAYERS - 1, DRM_WAFER_XPHASE_GLU), DRM_WAFER_JOB_OUT_ACT,
		  "home, GLU of the last layer without OUT_ACT (results)" },
		{ 1, EP_LW(0, DRM_WAFER_XPHASE_ROUTE), DRM_WAFER_JOB_IN_ACT,
		  "home, ROUTE of layer 0 without IN_ACT (token ids)" },
		{ 1, EP_LW(0, DRM_WAFER_XPHASE_ROUTE), DRM_WAFER_JOB_LAYER,
		  "home without DRM_WAFER_JOB_LAYER" },
	};
	struct drm_wafer_job j;
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		j = (struct drm_wafer_job){ .ctx_id = e->ctx[c[i].k], .n_tokens = 1,
			.flags = (DRM_WAFER_JOB_LAYER | DRM_WAFER_JOB_IN_ACT |
				  DRM_WAFER_JOB_OUT_ACT) & ~c[i].flags,
			.layer = c[i].lw, .in_handle = e->x.handle,
			.out_handle = e->x.handle, .out_offset = e->gap };
		if (!(j.flags & DRM_WAFER_JOB_LAYER))
			j.layer = 0;
		if (!(j.flags & DRM_WAFER_JOB_OUT_ACT))
			j.top_k = TOPK;
		reject(e->fd, &j, -EINVAL, c[i].name);
	}
}

/*
 * GLU on a record whose unit count no ROUTE can have written: the device
 * refuses the record, the job fails with -EINVAL.
 */
static void ep_bad_record(struct ep *e)
{
	struct drm_wafer_xrec_hdr xh = { .n_units = 0xffffffffu };
	uint8_t *b = (uint8_t *)e->x.map + e->gap;

	memset(b, 0, e->xrec);
	((struct drm_wafer_act_rec *)b)->dim = e->dim;
	memcpy(b + DRM_WAFER_XREC_HDR_OFF(e->dim), &xh, sizeof(xh));
	expect(ep_job(e, 1, 0, EP_LW(0, DRM_WAFER_XPHASE_GLU), 1, 0), -EINVAL,
	       "GLU on an expert record with n_units 0xffffffff: the job fails");
}

/* Loads the four parts of @moe (in @b) on @e's file; 0 or -1. */
static int ep_up(struct ep *e, struct bo *b, size_t len)
{
	const uint32_t n = 4 / EP_SHARDS;	/* routed experts a shard */
	uint32_t s;
	int ret;

	ret = ep_load(e, 0, b, len, DRM_WAFER_PART_ATTN, 0, 0,
		      DRM_WAFER_MODEL_ATTN | DRM_WAFER_MODEL_EMBED, e->act, "the attention");
	ret = ret ? ret : ep_load(e, 1, b, len, DRM_WAFER_PART_XHOME, 0, 0,
				  DRM_WAFER_MODEL_XHOME | DRM_WAFER_MODEL_HEAD, e->xrec,
				  "the expert home");
	for (s = 0; s < EP_SHARDS && !ret; s++)
		ret = ep_load(e, 2 + s, b, len, DRM_WAFER_PART_XSHARD, s * n, n,
			      DRM_WAFER_MODEL_XSHARD, e->xrec,
			      s ? "the second expert shard" : "the first expert shard");
	return ret;
}

/*
 * Expert parallelism (DRM_WAFER_CAP_EXPERT_PARALLEL): stories260K upcycled
 * to 4 experts top-2 + 1 shared, its attention, FFN home and two shards of
 * two experts as four models of one file; a greedy decode, five jobs a
 * MoE layer with the shards' replies merged here through the uapi's
 * record layout, gives the in-process tokens and logits; then each bad
 * MODEL_LOAD field and job.
 */
void test_expert_parallel(void)
{
	const struct wafer_moe_opts mo = { .n_experts = 4, .top_k = 2, .n_shared = 1 };
	struct ep e = { .fd = open_dev() };
	struct wfs_model_info mi;
	struct bo b, d;
	void *moe = NULL;
	size_t len = 0;

	wt_ok(info.caps & DRM_WAFER_CAP_EXPERT_PARALLEL, "GET_INFO caps has "
	      "DRM_WAFER_CAP_EXPERT_PARALLEL (firmware 1.%u)", info.fw_version_minor);
	if (wafer_moe_upcycle(blob, blob_len, &mo, &moe, &len) || wfs_model_parse(moe, len, &mi) ||
	    bo_new(e.fd, &b, len) || bo_new(e.fd, &d, blob_len)) {
		wt_ok(0, "expert parallelism: the MoE blob and its BOs");
		free(moe);
		close(e.fd);
		return;
	}
	memcpy(b.map, moe, len);
	memcpy(d.map, blob, blob_len);
	test_model_load_v1(e.fd, &d);
	ep_bad_loads(e.fd, &b, len, &d);
	e.dim = mi.dim;
	e.hidden = mi.hidden_dim;
	e.act = DRM_WAFER_ACT_REC_SIZE(mi.dim);
	e.xrec = DRM_WAFER_XREC_SIZE(mi.dim, mi.hidden_dim);
	e.gap = (e.xrec + 64 + 63) & ~63u;
	if (ep_up(&e, &b, len) || bo_new(e.fd, &e.x, 3 * (uint64_t)e.gap) ||
	    bo_new(e.fd, &e.out, 4096)) {
		wt_ok(0, "expert parallelism: the four models, contexts and buffers");
	} else {
		ep_decode(&e, moe, len);
		ep_bad_jobs(&e);
		ep_bad_record(&e);
		bo_free(e.fd, &e.x);
		bo_free(e.fd, &e.out);
	}
	bo_free(e.fd, &b);
	bo_free(e.fd, &d);
	free(moe);
	close(e.fd);
}
