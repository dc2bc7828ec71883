// SPDX-License-Identifier: MIT
/*
 * device_bounds.c - a blob deeper than a device's load table.
 *
 * A blob may hold WFS_MAX_LAYERS (1024) layers, a device loads a range of
 * at most WFS_DEV_MAX_LAYERS (256): LOAD_MODEL of more is -E2BIG with a log
 * line naming the field, and any range of a deeper blob loads, wherever it
 * starts.  A 513-layer tiny blob (tests/common/wt_tinyblob.h):
 *   - loaded whole, or as 257 layers: -E2BIG; a range past the blob: -EINVAL;
 *   - ranges [0, +1), [256, +1), [300, +2), [512, +1) loaded side by side
 *     (four models), described by GET_INFO, unloaded, then a small model
 *     loads and runs (a load that wrote past its table would have broken
 *     the other models' state or the device's, and freeing it crashes);
 *   - split as [0, +256), [256, +256), [512, +1) on one device, tokens to
 *     activation records to activation records to results: every result
 *     record equals the in-process reference of the whole model, with the
 *     middle range resident and with its weights streamed;
 *   - a 300-layer MoE blob: [280, +2) with expert groups across the stages,
 *     and the FFN and attention parts of layer 290, load and unload.
 */
#include "device_harness.h"
#include "wt_model.h"
#include "wt_tinyblob.h"
#include "wt_util.h"

#define DEEP	513
#define NPOS	6
#define TOPK	4
#define REC	WFW_OUT_REC_SIZE(TOPK)

static u8 *deep;
static size_t deep_len;
static u32 act_bytes;

static struct dh *dev_open(void)
{
	/* wafer: 16 stages of 4 MiB, room for the three ranges at once. */
	struct dh *h = dh_new("wafer", 0, 0);

	if (h)
		dh_region_add(h, deep, deep_len);
	return h;
}

static void dev_close(struct dh *h)
{
	dh_fini(h);
	free(h);
}

static int unload(struct dh *h, u32 model)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl = { 0 };

	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_UNLOAD_MODEL;
	c.model = model;
	if (dh_exec(h, &c, &cpl, 10000))
		return -ETIMEDOUT;
	return cpl.status;
}

static int64_t ctx_create(struct dh *h, u32 model, u32 ctx_len)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl = { 0 };

	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_CREATE_CONTEXT;
	c.model = model;
	c.ctx.slots = 1;
	c.ctx.ctx_len = ctx_len;
	if (dh_exec(h, &c, &cpl, 10000))
		return -ETIMEDOUT;
	return cpl.status ? cpl.status : (int64_t)cpl.result0;
}

static int run(struct dh *h, struct wfw_cmd *c)
{
	struct wfw_cpl cpl = { 0 };

	if (dh_exec(h, c, &cpl, 20000))
		return -ETIMEDOUT;
	return cpl.status;
}

/* A small model loads on @h and runs a job: the device is sound. */
static int small_model_runs(struct dh *h)
{
	static u8 blob[WT_TINY_MAX];
	static u32 tok[1] = { 3 };
	static u8 out[REC];
	size_t len = wt_tiny_build(blob, WT_TINY_INT8);
	struct wfw_cmd c;
	struct wfw_cpl cpl = { 0 };
	int64_t ctx;
	int ret;

	dh_region_add(h, blob, len);
	dh_region_add(h, tok, sizeof(tok));
	dh_region_add(h, out, sizeof(out));
	ret = dh_load(h, blob, len, &cpl);
	if (ret)
		return ret;
	ctx = ctx_create(h, cpl.model, 4);
	if (ctx < 0)
		return (int)ctx;
	dh_job_cmd(&c, (u32)ctx, 0, 0, 1, tok, out, REC, TOPK, 0, 0);
	return run(h, &c);
}

static int log_has(struct dh *h, const char *what)
{
	static char log[64 << 10];

	return dh_read_log(h, log, sizeof(log)) > 0 && strstr(log, what);
}

/* LOAD_MODEL of layers [@first, +@count) of the deep blob is @want. */
static void load_is(struct dh *h, u32 first, u32 count, int want, const char *what)
{
	struct wfw_cpl cpl = { 0 };
	int ret = dh_load_range(h, deep, deep_len, 0, first, count, 0, &cpl);

	wt_ok(ret == want, "%s: %d (%d)", what, want, ret);
}

static void refused(void)
{
	struct dh *h = dev_open();

	if (!wt_ok(h != NULL, "device"))
		return;
	load_is(h, 0, 0, -WFS_E2BIG, "the whole 513-layer blob");
	wt_ok(log_has(h, "the blob's 513 layers: a device loads at most 256"),
	      "its log line names the layers and the limit");
	load_is(h, 0, 257, -WFS_E2BIG, "layers [0, +257)");
	load_is(h, 200, 257, -WFS_E2BIG, "layers [200, +257)");
	wt_ok(log_has(h, "layer_count 257 layers"), "its log line names layer_count");
	load_is(h, 300, 256, -WFS_EINVAL, "layers [300, +256), past the blob's 513");
	load_is(h, 513, 1, -WFS_EINVAL, "layer 513 of 513");
	wt_ok(small_model_runs(h) == 0, "then a small model loads and runs");
	dev_close(h);
}

static void side_by_side(void)
{
	static const u32 range[4][2] = { { 0, 1 }, { 256, 1 }, { 300, 2 }, { 512, 1 } };
	struct dh *h = dev_open();
	struct wfw_info info;
	struct wfw_cpl cpl = { 0 };
	u32 id[4], i;
	int bad = 0, ret;

	if (!wt_ok(h != NULL, "device"))
		return;
	for (i = 0; i < 4; i++) {
		ret = dh_load_range(h, deep, deep_len, 0, range[i][0], range[i][1], 0, &cpl);
		id[i] = cpl.model;
		wt_ok(ret == 0 && cpl.result1 == range[i][1],
		      "layers [%u, +%u) of 513 load beside %u other(s) (%d, %u layers)",
		      range[i][0], range[i][1], i, ret, cpl.result1);
	}
	for (i = 0; i < 4; i++) {
		ret = dh_info_model(h, id[i], &info);
		bad += ret || info.layer_first != range[i][0] ||
		       info.n_layers != range[i][1] || info.total_layers != DEEP;
	}
	wt_ok(!bad, "GET_INFO describes each range (%d wrong)", bad);
	for (i = 0; i < 4; i++)
		bad += unload(h, id[i]) != 0;
	wt_ok(!bad, "each unloads (%d failed)", bad);
	wt_ok(small_model_runs(h) == 0, "then a small model loads and runs");
	dev_close(h);
}

/*
 * The model split in three ranges on one device, the middle one streamed
 * if @stream: every position's record is the reference's.
 */
static void split(const u32 *ref_argmax, const struct wfs_topk_entry *ref_topk,
		  u32 stream)
{
	static const u32 first[3] = { 0, 256, 512 }, count[3] = { 256, 256, 1 };
	struct dh *h = dev_open();
	u8 *act0 = dh_alloc(act_bytes), *act1 = dh_alloc(act_bytes);
	u8 *out = dh_alloc(REC);
	u32 *tok = dh_alloc(sizeof(u32) * NPOS), ctx[3], pos, i;
	const struct wfw_out_rec *r = (const struct wfw_out_rec *)out;
	struct wfw_cmd c;
	struct wfw_cpl cpl = { 0 };
	int64_t id;
	int bad = 0, ret;

	if (!wt_ok(h != NULL, "device"))
		return;
	dh_region_add(h, act0, act_bytes);
	dh_region_add(h, act1, act_bytes);
	dh_region_add(h, out, REC);
	dh_region_add(h, tok, sizeof(u32) * NPOS);
	for (i = 0; i < 3; i++) {
		ret = dh_load_range(h, deep, deep_len, i == 1 && stream ? WFW_LOAD_STREAM : 0,
				    first[i], count[i], 0, &cpl);
		id = ret ? ret : ctx_create(h, cpl.model, NPOS);
		if (!wt_ok(id > 0, "%slayers [%u, +%u) load with a context (%lld)",
			   i == 1 && stream ? "streamed " : "", first[i], count[i],
			   (long long)id))
			goto out;
		ctx[i] = (u32)id;
	}
	for (pos = 0; pos < NPOS; pos++) {
		tok[pos] = pos ? 3 + (pos * 5) % 3 : 1;
		dh_job_cmd(&c, ctx[0], 0, pos, 1, &tok[pos], act0, act_bytes, 0,
			   WFW_JOB_OUT_ACT, 0);
		bad += run(h, &c) != 0;
		dh_job_cmd(&c, ctx[1], 0, pos, 1, (u32 *)act0, act1, act_bytes, 0,
			   WFW_JOB_IN_ACT | WFW_JOB_OUT_ACT, 0);
		bad += run(h, &c) != 0;
		dh_job_cmd(&c, ctx[2], 0, pos, 1, (u32 *)act1, out, REC, TOPK,
			   WFW_JOB_IN_ACT, 0);
		bad += run(h, &c) != 0;
		bad += r->pos != pos || r->k != TOPK || r->argmax != ref_argmax[pos] ||
		       r->argmax_logit != ref_topk[pos * TOPK].logit ||
		       memcmp(r->topk, &ref_topk[pos * TOPK], TOPK * sizeof(*ref_topk));
	}
	wt_ok(!bad, "layers [0, +256), [256, +256)%s, [512, +1) give the reference's %u records (%d wrong)",
	      stream ? " streamed" : "", NPOS, bad);
out:
	dev_close(h);
	free(act0);
	free(act1);
	free(out);
	free(tok);
}

/* Expert groups and layer parts of a range past the table's size. */
static void moe_ranges(void)
{
	static const struct {
		u32 first, count, part, group;
		const char *what;
	} load[] = {
		{ 280, 2, WFW_PART_WHOLE, 1, "layers [280, +2) with expert groups of 1" },
		{ 290, 1, WFW_PART_FFN, 0, "the FFN part of layer 290" },
		{ 290, 1, WFW_PART_ATTN, 0, "the attention part of layer 290" },
		{ 299, 1, WFW_PART_FFN, 2, "the FFN part of layer 299, expert groups of 2" },
	};
	size_t cap = WT_TINY_BYTES(300), len;
	u8 *blob = dh_alloc(cap);
	struct dh *h = dh_new("asic", 4, 1 << 20);
	struct wfw_cpl cpl = { 0 };
	u32 i;
	int ret;

	if (!wt_ok(h != NULL, "device"))
		return;
	len = wt_tiny_build_n(blob, cap, WT_TINY_MOE, 300);
	dh_region_add(h, blob, len);
	for (i = 0; i < WFS_ARRAY_SIZE(load); i++) {
		ret = dh_load_group(h, blob, len, 0, load[i].first, load[i].count,
				    load[i].part, load[i].group, &cpl);
		wt_ok(ret == 0 && unload(h, cpl.model) == 0,
		      "MoE, 300 layers: %s loads and unloads (%d)", load[i].what, ret);
	}
	wt_ok(small_model_runs(h) == 0, "then a small model loads and runs");
	dev_close(h);
	free(blob);
}

int main(void)
{
	struct wfs_topk_entry ref_topk[NPOS * TOPK];
	u32 ref_argmax[NPOS], tok, pos;
	struct wfs_model_info info;
	struct wt_model ref;

	deep = dh_alloc(WT_TINY_BYTES(DEEP));
	deep_len = wt_tiny_build_n(deep, WT_TINY_BYTES(DEEP), WT_TINY_INT8, DEEP);
	if (!wt_ok(wfs_model_parse(deep, deep_len, &info) == 0 && info.n_layers == DEEP,
		   "a valid %u-layer blob", DEEP))
		return wt_done();
	act_bytes = (u32)wfs_act_bytes(&info);
	if (!wt_ok(wt_model_open(&ref, deep, deep_len, NPOS, 0) == 0, "reference"))
		return wt_done();
	for (pos = 0; pos < NPOS; pos++) {
		tok = pos ? 3 + (pos * 5) % 3 : 1;
		ref_argmax[pos] = wt_model_step(&ref, tok, pos, TOPK, &ref_topk[pos * TOPK]);
	}
	wt_model_close(&ref);

	refused();
	side_by_side();
	split(ref_argmax, ref_topk, 0);
	split(ref_argmax, ref_topk, 1);
	moe_ranges();
	free(deep);
	return wt_done();
}
