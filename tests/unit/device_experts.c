// SPDX-License-Identifier: MIT
/*
 * device_experts.c - GET_EXPERT_LOAD on the device itself, with stories260K
 * upcycled to 4 experts top-2 + 1 shared over 2 stages: the table's shape
 * (5 layers x 5 entries, shared first, top_k, layer numbers; all 0 before
 * any job), paging by
 * entry index and buffer length, GET_INFO's moe_layers and
 * moe_imbalance_milli computed from the same counts, counts that follow
 * the jobs exactly (a second job adds its tokens), and an unload that
 * clears them (a reload starts from zero).
 */
#include "device_harness.h"
#include "wafer.h"
#include "wfs_pack.h"
#include "wt_util.h"

#define LAYERS	5
#define PER	5	/* 1 shared + 4 routed */
#define ALL	(LAYERS * PER)
#define N	48

static struct dh *h;
static struct wfw_expert_load *buf;
static u32 *in;
static u8 *out;

/* GET_EXPERT_LOAD from entry @index into buf[0..]: status; cpl kept. */
static int get(u32 index, u32 len, struct wfw_cpl *cpl)
{
	struct wfw_cmd c;

	memset(&c, 0, sizeof(c));
	memset(buf, 0xee, (ALL + 4) * sizeof(*buf));
	c.opcode = WFW_OP_GET_EXPERT_LOAD;
	c.buf.addr = (u64)(uintptr_t)buf;
	c.buf.len = len;
	c.buf.index = index;
	if (dh_exec(h, &c, cpl, 10000))
		return -ETIMEDOUT;
	return cpl->status;
}

static int run(u32 ctx, u32 pos)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl;

	dh_job_cmd(&c, ctx, 0, pos, N, in, out, 4096, 1, 0, 0);
	if (dh_exec(h, &c, &cpl, 30000))
		return -ETIMEDOUT;
	return cpl.status;
}

/* Shape, sums to tokens x top-k; returns 1000 x the worst max/mean. */
static u64 check_table(const struct wfw_expert_load *e, u64 tokens, int *ok)
{
	u64 worst = 0, sum, max;
	u32 l, x;

	*ok = 1;
	for (l = 0; l < LAYERS; l++) {
		const struct wfw_expert_load *s = e + l * PER;

		*ok &= s[0].layer == l && s[0].flags == WFW_EXPERT_SHARED && s[0].expert == 0 &&
		       s[0].tokens == tokens;
		for (x = 1, sum = 0, max = 0; x < PER; x++) {
			*ok &= s[x].layer == l && !s[x].flags && s[x].expert == x - 1 &&
			       s[x].top_k == 2;
			sum += s[x].tokens;
			max = s[x].tokens > max ? s[x].tokens : max;
		}
		*ok &= sum == 2 * tokens;
		if (sum && max * 4 * 1000 / sum > worst)
			worst = max * 4 * 1000 / sum;
	}
	return worst;
}

static void test_table(u32 ctx)
{
	struct wfw_expert_load full[ALL];
	struct wfw_info info;
	struct wfw_cpl cpl = { 0 };
	u64 worst;
	int ok, worst_ok;

	ok = get(0, 4096, &cpl) == 0 && cpl.result0 == ALL && cpl.result1 == ALL &&
	     cpl.result2 == LAYERS;
	check_table(buf, 0, &worst_ok);
	wt_ok(ok && worst_ok, "before any job: %u of %u entries, %u MoE layers, every count 0",
	      cpl.result0, cpl.result1, cpl.result2);
	if (!wt_ok(run(ctx, 0) == 0, "a job of %d tokens", N))
		return;
	ok = get(0, ALL * sizeof(*buf), &cpl) == 0 && cpl.result0 == ALL && cpl.result1 == ALL;
	wt_ok(ok, "the whole table: %u entries", cpl.result0);
	memcpy(full, buf, sizeof(full));
	worst = check_table(full, N, &ok);
	wt_ok(ok, "5 layers x (shared, experts 0-3): shared %d tokens, routed %d x 2", N, N);
	ok = dh_info(h, &info) == 0;
	wt_ok(ok && info.moe_layers == LAYERS &&
	      info.moe_imbalance_milli == worst && worst >= 1000 && worst <= 2000,
	      "GET_INFO: %u MoE layers, imbalance %u/1000 == the table's %llu", info.moe_layers,
	      info.moe_imbalance_milli, (unsigned long long)worst);

	wt_ok(get(3, 2 * sizeof(*buf) + 23, &cpl) == 0 && cpl.result0 == 2 &&
	      !memcmp(buf, full + 3, 2 * sizeof(*buf)) && buf[2].layer == 0xeeeeeeee,
	      "paged: from entry 3, room for 2 (+23 bytes): entries 3-4, nothing after");
	wt_ok(get(ALL - 1, 4096, &cpl) == 0 && cpl.result0 == 1 &&
	      !memcmp(buf, full + ALL - 1, sizeof(*buf)), "from the last entry: 1 written");
	ok = get(ALL, 4096, &cpl) == 0 && cpl.result0 == 0 && cpl.result1 == ALL;
	wt_ok(ok, "from past the end: none written, %u in all", cpl.result1);
	wt_ok(get(0, sizeof(*buf) - 1, &cpl) == 0 && cpl.result0 == 0 &&
	      buf[0].layer == 0xeeeeeeee, "a buffer smaller than one entry: none written");

	if (!wt_ok(run(ctx, N) == 0, "a second job of %d tokens", N))
		return;
	ok = get(0, 4096, &cpl) == 0;
	check_table(buf, 2 * N, &ok);
	wt_ok(ok && cpl.result0 == ALL, "after it: shared %d tokens, routed %d x 2", 2 * N, 2 * N);
}

/* Unload clears the counters; a reload starts from zero. */
static void test_unload(void *blob, size_t len, u32 ctx)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl = { 0 };
	struct wfw_info info;
	u32 i, zero = 1;
	int ok;

	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_DESTROY_CONTEXT;
	c.ctx.ctx_id = ctx;
	if (!wt_ok(dh_exec(h, &c, &cpl, 10000) == 0 && cpl.status == 0 &&
		   dh_simple(h, WFW_OP_UNLOAD_MODEL, &cpl) == 0, "destroy the context, unload"))
		return;
	wt_ok(get(0, 4096, &cpl) == 0 && cpl.result1 == 0 && cpl.result2 == 0 &&
	      dh_info(h, &info) == 0 && !info.moe_layers && !info.moe_imbalance_milli,
	      "no model: no entries, GET_INFO moe fields 0");
	if (!wt_ok(dh_load(h, blob, len, &cpl) == 0, "reload"))
		return;
	ok = get(0, 4096, &cpl) == 0 && cpl.result0 == ALL;
	wt_ok(ok, "reloaded: %u entries", cpl.result0);
	for (i = 0; i < ALL; i++)
		zero &= !buf[i].tokens;
	wt_ok(zero, "every count starts from zero again");
}

int main(void)
{
	struct wafer_moe_opts mo = { .n_experts = 4, .top_k = 2, .n_shared = 1 };
	struct wfs_pack_opts po = { .wbits = 8, .group_size = 32 };
	struct wfs_device_config cfg = { .numa_node = -1, .profile = "asic", .stages = 2,
					 .sram_bytes = 1u << 20 };
	const char *path = wt_model_path("stories260K.bin");
	void *dense = NULL, *blob = NULL;
	struct wfs_ckpt ck;
	struct wfw_cpl cpl = { 0 };
	size_t dlen, len;
	int64_t ctx;
	u32 i;

	if (!wt_ok(path && wfs_ckpt_load(path, &ck) == 0 &&
		   wfs_pack(&ck, &po, &dense, &dlen) == 0 &&
		   wafer_moe_upcycle(dense, dlen, &mo, &blob, &len) == 0,
		   "stories260K upcycled: 4 experts top-2 + 1 shared"))
		return wt_done();
	h = calloc(1, sizeof(*h));
	buf = dh_alloc((ALL + 4) * sizeof(*buf));
	in = dh_alloc(4 * N);
	out = dh_alloc(4096);
	if (!wt_ok(h && buf && in && out && dh_init(h, &cfg, 16, 16) == 0, "a 2-stage device"))
		return wt_done();
	dh_region_add(h, blob, len);
	dh_region_add(h, buf, (ALL + 4) * sizeof(*buf));
	dh_region_add(h, in, 4 * N);
	dh_region_add(h, out, 4096);
	for (i = 0; i < N; i++)
		in[i] = 1 + (i * 37) % 500;
	i = dh_load(h, blob, len, &cpl) == 0;
	if (wt_ok(i, "load the MoE blob (%u stages used)", cpl.result0)) {
		ctx = dh_ctx_create(h, 1, 2 * N, &cpl);
		if (wt_ok(ctx > 0, "a context of %d positions", 2 * N)) {
			test_table((u32)ctx);
			test_unload(blob, len, (u32)ctx);
		}
	}
	dh_fini(h);
	free(h);
	free(buf);
	free(in);
	free(out);
	free(blob);
	free(dense);
	wfs_ckpt_free(&ck);
	return wt_done();
}
