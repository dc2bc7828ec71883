// SPDX-License-Identifier: MIT
/*
 * device_map.c - layer -> stage placement: one layer per stage, contiguous
 * balanced groups when layers > stages, embedding on the first stage and
 * head on the last, greedy packing when the balanced plan does not fit,
 * -ENOSPC with the bytes needed; then the same through a real device
 * loading the shared model (placement reported by GET_STATS, -ENOSPC with a
 * log line that says how much SRAM was needed, KV capacity -ENOSPC).
 */
#include "device_harness.h"
#include "wfs_pack.h"
#include "wfs_place.h"
#include "wt_util.h"

static u64 lb[WFS_DEV_MAX_LAYERS];

static int contiguous(const struct wfs_map *m, u32 layers)
{
	u32 s, next = 0;

	for (s = 0; s < m->stages_used; s++) {
		if (m->first_layer[s] != next && m->n_layers[s])
			return 0;
		next += m->n_layers[s];
	}
	return next == layers;
}

static void test_pure(void)
{
	struct wfs_map_input in;
	struct wfs_map m;
	u32 i, s, ok;
	int ret;

	for (i = 0; i < WFS_DEV_MAX_LAYERS; i++)
		lb[i] = 1000;
	memset(&in, 0, sizeof(in));
	in.layer_bytes = lb;
	in.capacity = 100000;
	in.stage_fixed = 500;
	in.embed_bytes = 3000;
	in.head_bytes = 4000;

	in.n_layers = 5;
	in.n_stages = 16;
	wt_ok(wfs_place(&in, &m) == 0 && m.stages_used == 5 &&
	      !m.greedy && contiguous(&m, 5) && m.n_layers[0] == 1 &&
	      m.n_layers[4] == 1 && m.need[0] == 500 + 1000 + 3000 &&
	      m.need[4] == 500 + 1000 + 4000 && m.need[2] == 1500,
	      "5 layers on 16 stages: one layer per stage, embed on 0, head on 4");

	in.n_stages = 4;
	ok = wfs_place(&in, &m) == 0 && m.stages_used == 4 &&
	     contiguous(&m, 5) && m.n_layers[0] == 2 && m.n_layers[1] == 1 &&
	     m.n_layers[3] == 1;
	wt_ok(ok, "5 layers on 4 stages: groups 2,1,1,1");

	in.n_layers = 200;
	in.n_stages = 64;
	ok = wfs_place(&in, &m) == 0 && m.stages_used == 64 &&
	     contiguous(&m, 200);
	for (s = 0; s < 64; s++)
		ok &= m.n_layers[s] == (s < 200 % 64 ? 4u : 3u);
	wt_ok(ok, "200 layers on 64 stages: 8 groups of 4 then 56 of 3, contiguous");

	in.n_layers = 7;
	in.n_stages = 1;
	wt_ok(wfs_place(&in, &m) == 0 && m.stages_used == 1 &&
	      m.n_layers[0] == 7 && m.need[0] == 500 + 7000 + 3000 + 4000,
	      "7 layers on 1 stage: everything on stage 0");

	/* Balanced does not fit, greedy does: big layers up front. */
	in.n_layers = 6;
	in.n_stages = 4;
	in.capacity = 10000;
	for (i = 0; i < 6; i++)
		lb[i] = i < 2 ? 4000 : 1000;
	ret = wfs_place(&in, &m);
	ok = ret == 0 && m.greedy && contiguous(&m, 6);
	for (s = 0; s < m.stages_used; s++)
		ok &= m.need[s] <= in.capacity;
	wt_ok(ok, "balanced 2,2,1,1 overflows stage 0 (%llu > 10000): greedy packs into %u stages",
	      (unsigned long long)m.max_stage_bytes, m.stages_used);

	/* Head alone on the last stage. */
	for (i = 0; i < 6; i++)
		lb[i] = 1000;
	in.n_layers = 2;
	in.n_stages = 3;
	in.capacity = 5000;
	in.head_bytes = 4000;
	in.embed_bytes = 1000;
	ok = wfs_place(&in, &m) == 0 && m.greedy && m.stages_used == 2 &&
	     m.n_layers[0] == 2 && m.n_layers[1] == 0 &&
	     m.need[1] == 4500;
	wt_ok(ok, "a head that fits nowhere else gets the last stage to itself");

	/* Does not fit at all. */
	in.n_layers = 10;
	in.n_stages = 2;
	in.capacity = 3000;
	in.head_bytes = 100;
	in.embed_bytes = 100;
	ret = wfs_place(&in, &m);
	wt_ok(ret == -WFS_ENOSPC && m.stages_needed == 5 &&
	      m.total_bytes == 10 * 1000 + 200 + 5 * 500 &&
	      m.max_stage_bytes == 500 + 5000 + 100,
	      "10 x 1000 B on 2 x 3000 B: -ENOSPC, needs %llu B over %u stages (%llu B per stage balanced)",
	      (unsigned long long)m.total_bytes, m.stages_needed,
	      (unsigned long long)m.max_stage_bytes);
	in.capacity = 1200;
	lb[3] = 5000;
	wt_ok(wfs_place(&in, &m) == -WFS_ENOSPC && m.stages_needed == 0 &&
	      m.total_bytes >= 9 * 1000 + 5000 + 200,
	      "a layer larger than a stage: -ENOSPC, no stage count, total still reported");
	in.n_layers = 0;
	wt_ok(wfs_place(&in, &m) == -WFS_EINVAL, "0 layers: -EINVAL");
	in.n_layers = 3;
	in.n_stages = WFS_MAX_STAGES + 1;
	wt_ok(wfs_place(&in, &m) == -WFS_EINVAL, "too many stages: -EINVAL");
}

/*
 * The allocation table is both placement's budget and what loading
 * allocates: over a sweep of stage counts and SRAM sizes, a load either
 * fails in placement (-ENOSPC, "does not fit") or every stage's
 * allocations succeed, and the minimum context placement kept room for
 * (1 slot x min(256, max_ctx) positions) can then be created.
 */
static void test_budget_sweep(void *blob, size_t len)
{
	static char log[8192];
	struct wfs_device_config cfg;
	struct wfw_info info;
	struct wfw_cpl cpl;
	u32 stages, kib, fits = 0, nospc = 0, bad = 0;

	for (stages = 1; stages <= 5; stages++) {
		for (kib = 64; kib <= 640; kib += 16) {
			struct dh *h = calloc(1, sizeof(*h));
			int ret;

			memset(&cfg, 0, sizeof(cfg));
			cfg.numa_node = -1;
			cfg.profile = "asic";
			cfg.stages = stages;
			cfg.sram_bytes = (u64)kib << 10;
			dh_init(h, &cfg, 16, 16);
			dh_region_add(h, blob, len);
			ret = dh_load(h, blob, len, &cpl);
			dh_read_log(h, log, sizeof(log));
			if (ret == 0) {
				fits++;
				dh_info(h, &info);
				if (dh_ctx_create(h, 1, info.max_ctx < 256 ?
						  info.max_ctx : 256, &cpl) <= 0)
					bad++;
			} else if (ret == -WFS_ENOSPC &&
				   strstr(log, "does not fit") &&
				   !strstr(log, "failed")) {
				nospc++;
			} else {
				bad++;
				wt_diag("%u x %u KiB: load %d, log: %s", stages, kib,
					ret, log);
			}
			dh_fini(h);
			free(h);
		}
	}
	wt_ok(!bad && fits && nospc,
	      "budget sweep (1..5 stages x 64..640 KiB): %u loads fit and take the minimum context, %u fail in placement, %u otherwise",
	      fits, nospc, bad);
}

static void test_device(void *blob, size_t len)
{
	static const struct {
		const char *profile;
		u32 stages;
		u64 sram;
		u32 used;
		u32 first_counts[5];
	} cases[] = {
		{ "wafer", 16, 0, 5, { 1, 1, 1, 1, 1 } },
		{ "asic", 4, 0, 4, { 2, 1, 1, 1 } },
		{ "asic", 2, 0, 2, { 3, 2 } },
		{ "asic", 1, 0, 1, { 5 } },
	};
	struct wfw_stage_stats st[16];
	struct wfs_device_config cfg;
	struct wfw_cmd c;
	struct wfw_cpl cpl;
	unsigned int i, s;
	char log[4096];

	for (i = 0; i < WFS_ARRAY_SIZE(cases); i++) {
		struct dh *h = calloc(1, sizeof(*h));
		int ok;

		memset(&cfg, 0, sizeof(cfg));
		cfg.numa_node = -1;
		cfg.profile = cases[i].profile;
		cfg.stages = cases[i].stages;
		dh_init(h, &cfg, 16, 16);
		dh_region_add(h, blob, len);
		ok = dh_load(h, blob, len, &cpl) == 0 &&
		     cpl.result0 == cases[i].used && cpl.result1 == 5;
		memset(st, 0, sizeof(st));
		dh_region_add(h, st, sizeof(st));
		memset(&c, 0, sizeof(c));
		c.opcode = WFW_OP_GET_STATS;
		c.buf.addr = (uint64_t)(uintptr_t)st;
		c.buf.len = sizeof(st);
		ok &= dh_exec(h, &c, &cpl, 5000) == 0 && cpl.status == 0 &&
		      cpl.result0 == cases[i].stages;
		for (s = 0; s < cases[i].used; s++)
			ok &= st[s].n_layers == cases[i].first_counts[s] &&
			      st[s].sram_used > 0;
		ok &= (st[0].flags & WFW_STAGE_EMBED) &&
		      (st[cases[i].used - 1].flags & WFW_STAGE_HEAD);
		wt_ok(ok, "%s/%u stages: model on %u stage(s), layers per stage as expected, embed first, head last",
		      cases[i].profile, cases[i].stages, cases[i].used);
		dh_fini(h);
		free(h);
	}

	/* Too small: 2 stages x 64 KiB. */
	{
		struct dh *h = calloc(1, sizeof(*h));
		int ret;

		memset(&cfg, 0, sizeof(cfg));
		cfg.numa_node = -1;
		cfg.profile = "asic";
		cfg.stages = 2;
		cfg.sram_bytes = 64 << 10;
		dh_init(h, &cfg, 16, 16);
		dh_region_add(h, blob, len);
		ret = dh_load(h, blob, len, &cpl);
		wt_ok(ret == -WFS_ENOSPC && cpl.value > 128 * 1024 &&
		      cpl.result2 > 64 &&
		      cpl.result1 == 64,
		      "2 x 64 KiB: LOAD_MODEL fails with -ENOSPC, needs %llu bytes, %u KiB per stage",
		      (unsigned long long)cpl.value, cpl.result2);
		dh_read_log(h, log, sizeof(log));
		wt_ok(strstr(log, "does not fit") && strstr(log, "needs"),
		      "firmware log says how much was needed");
		wt_diag("log: %s", strstr(log, "load:") ? strstr(log, "load:") : log);
		wt_ok(dh_simple(h, WFW_OP_UNLOAD_MODEL, &cpl) == -WFS_ENOENT,
		      "nothing left loaded after the failure");
		dh_fini(h);
		free(h);
	}

	/* KV capacity: contexts until -ENOSPC, then free one and retry. */
	{
		struct dh *h = calloc(1, sizeof(*h));
		struct wfw_info info;
		int64_t ids[64];
		int n = 0, ok;

		memset(&cfg, 0, sizeof(cfg));
		cfg.numa_node = -1;
		cfg.profile = "asic";
		dh_init(h, &cfg, 16, 16);
		dh_region_add(h, blob, len);
		dh_load(h, blob, len, &cpl);
		dh_info(h, &info);
		while (n < 64 && (ids[n] = dh_ctx_create(h, 1, info.max_ctx,
							 &cpl)) > 0)
			n++;
		ok = n >= 1 && cpl.status == -WFS_ENOSPC && cpl.value > 0 &&
		     (u32)n == info.max_slots_at_max_ctx;
		wt_ok(ok, "asic: %d contexts of 1 x %u positions fit (GET_INFO predicted %u), the next is -ENOSPC",
		      n, info.max_ctx, info.max_slots_at_max_ctx);
		memset(&c, 0, sizeof(c));
		c.opcode = WFW_OP_DESTROY_CONTEXT;
		c.ctx.ctx_id = (u32)ids[0];
		ok = dh_exec(h, &c, &cpl, 5000) == 0 && cpl.status == 0 &&
		     dh_ctx_create(h, 1, info.max_ctx, &cpl) > 0;
		wt_ok(ok, "destroying one frees its KV: the next create succeeds");
		dh_fini(h);
		free(h);
	}
}

int main(void)
{
	const char *path = wt_model_path("stories260K.bin");
	struct wfs_pack_opts o8 = { .wbits = 8, .group_size = 64 };
	struct wfs_ckpt c;
	void *blob;
	size_t len;

	test_pure();
	if (!wt_ok(path && wfs_ckpt_load(path, &c) == 0, "load the shared model"))
		return wt_done();
	if (wt_ok(wfs_pack(&c, &o8, &blob, &len) == 0, "pack int8")) {
		test_device(blob, len);
		test_budget_sweep(blob, len);
		free(blob);
	}
	wfs_ckpt_free(&c);
	return wt_done();
}
