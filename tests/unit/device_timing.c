// SPDX-License-Identifier: MIT
/*
 * device_timing.c - timing model sanity: the formulas of wfs_timing.h on
 * known numbers; modelled job latency grows with tokens; with many
 * sequences in flight, spreading the same model over more stages raises
 * the aggregate modelled tokens/s, while a single job's latency grows only
 * a little; per-stage busy time is accounted; a job's NOT_BEFORE floor
 * (after its token ids) delays it, never advances it, and is read
 * through the device's DMA like the ids.
 */
#include "device_harness.h"
#include "wfs_pack.h"
#include "wfs_timing.h"
#include "wt_util.h"

#define NSEQ	16
#define PRE	16
#define DEC	8
#define REC	WFW_OUT_REC_SIZE(1)

static void test_formulas(void)
{
	struct wfs_profile p;
	struct wfs_timing_dims d = { .dim = 64, .kv_dim = 32, .hidden_dim = 172,
				     .vocab = 512, .act_bytes = 320,
				     .kv_pos_bytes = 144 };
	struct wfs_cost c = { 0 };
	u64 proj = 64 * 64 * 2 + 2 * 64 * 32 + 3 * 64 * 172;

	wfs_profile_find("asic", &p);
	wt_ok(wfs_timing_ns(&p, 1000) == 1000 &&
	      wfs_timing_ns(&p, 3000000000ull) == 3000000000ull,
	      "1 GHz: cycles = ns, no overflow at 3e9 cycles");
	wfs_profile_find("wafer", &p);
	wt_ok(wfs_timing_ns(&p, 1100) == 1000 && wfs_timing_ns(&p, 11) == 10,
	      "1.1 GHz: 1100 cycles = 1000 ns");
	wfs_timing_layer_cost(&p, &d, 50000, 0, 1, &c);
	wt_ok(c.macs == proj + 2 * 64 * 1 &&
	      c.bytes == 50000 + 144 + 144 + 2 * 320 && !c.latency,
	      "layer cost of one token at position 0: %llu MACs, %llu bytes",
	      (unsigned long long)c.macs, (unsigned long long)c.bytes);
	c.macs = c.bytes = 0;
	wfs_timing_layer_cost(&p, &d, 50000, 10, 4, &c);
	wt_ok(c.macs == 4 * proj + 2 * 64 * (11 + 12 + 13 + 14) &&
	      c.bytes == 50000 + (11 + 12 + 13 + 14) * 144 + 4 * 144 + 8 * 320,
	      "layer cost of positions 10..13: attention over 11..14 keys");
	wfs_profile_find("asic", &p);
	c.macs = 1024 * 10;
	c.bytes = 256 * 3;
	wt_ok(wfs_timing_stage_cycles(&p, &c) == 10, "roofline: compute bound");
	c.bytes = 256 * 30 + 1;
	wt_ok(wfs_timing_stage_cycles(&p, &c) == 31, "roofline: memory bound, rounded up");
	wt_ok(wfs_timing_hop_cycles(&p, 640) == 64 + 10, "hop: latency + bytes / link width");
	wt_ok(wfs_timing_rate(1000, 1000000) == 1000000 &&
	      wfs_timing_rate(5, 0) == 0 &&
	      wfs_timing_rate(1ull << 40, 1000000000ull) == 1ull << 40,
	      "rate: tokens * 1e9 / ns, no overflow");
}

/* The mesh term of wse3: reductions across the square of cores a layer fills. */
/* Weight streaming: one layer's read, latency + bytes over the store's bandwidth. */
static void test_stream(void)
{
	struct wfs_profile asic, wafer, lpu;

	wfs_profile_find("asic", &asic);
	wfs_profile_find("wafer", &wafer);
	wfs_profile_find("lpu", &lpu);
	wt_ok(wfs_timing_stream_layer_cycles(&asic, 64000) == 500 + 1000 &&
	      wfs_timing_stream_layer_cycles(&asic, 64001) == 500 + 1001 &&
	      wfs_timing_stream_layer_cycles(&wafer, 1361) == 2200 + 11 &&
	      wfs_timing_stream_layer_cycles(&asic, 0) == 0 &&
	      wfs_timing_stream_layer_cycles(&lpu, 1 << 20) == 0,
	      "stream: asic 64000 B = 500 + 1000 cycles, wafer 1361 B = 2200 + 11, "
	      "0 bytes and a profile without a store cost nothing");
}

static void test_mesh(void)
{
	struct wfs_profile p;
	struct wfs_timing_dims d = { .dim = 64, .kv_dim = 32, .hidden_dim = 172,
				     .vocab = 512, .act_bytes = 320,
				     .kv_pos_bytes = 144 };
	struct wfs_cost c = { 0 }, c16 = { 0 };
	u64 w = 48889ull * 100;	/* 100 cores: a 10 x 10 square */

	wt_ok(!wfs_profile_find("wse3", &p) && p.core_sram_bytes == 48889 &&
	      p.stages * p.sram_bytes == 44000000000ull, "wse3: 44 GB in 44 stages");
	wt_ok(wfs_timing_reduce_cycles(&p, w) == 2 * 10 * p.mesh_hop_cycles,
	      "reduce over 100 cores: 2 x 10 hops");
	wt_ok(wfs_timing_reduce_cycles(&p, w + 1) == 2 * 11 * p.mesh_hop_cycles,
	      "101 cores: the side rounds up to 11");
	wt_ok(wfs_timing_reduce_cycles(&p, 1) == 2 * p.mesh_hop_cycles,
	      "one core: one hop each way");
	wfs_timing_layer_cost(&p, &d, w, 0, 1, &c);
	wfs_timing_layer_cost(&p, &d, w, 0, 16, &c16);
	wt_ok(c.latency == WFS_TIMING_LAYER_REDUCTIONS * 20ull * p.mesh_hop_cycles &&
	      c16.latency == c.latency,
	      "a layer pays %d reductions per chunk, whatever its tokens",
	      WFS_TIMING_LAYER_REDUCTIONS);
	wt_ok(wfs_timing_stage_cycles(&p, &c) ==
	      c.latency + (c.bytes + p.sram_bytes_per_cycle - 1) / p.sram_bytes_per_cycle,
	      "stage cycles: roofline + latency");
	{
		struct wfs_cost cl = { 0 };

		d.latent = 1;
		wfs_timing_layer_cost(&p, &d, w, 0, 1, &cl);
		d.latent = 0;
		wt_ok(cl.latency == (WFS_TIMING_LAYER_REDUCTIONS + 4) * 20ull * p.mesh_hop_cycles &&
		      cl.macs == c.macs, "latent attention: 4 reductions more, the same MACs");
	}
	c.latency = 0;
	wfs_timing_head_cost(&p, &d, w, 1, &c);
	wt_ok(c.latency == 20ull * p.mesh_hop_cycles, "the head: one reduction");
	wfs_profile_find("wafer", &p);
	wt_ok(!wfs_timing_reduce_cycles(&p, w), "the test profiles have no mesh");
}

/*
 * wse3: a layer bigger than a stage computes on the MAC arrays and reads
 * the SRAM of the cores its weights fill, span/64 stages' worth.
 */
static void test_span(void)
{
	struct wfs_profile p;
	struct wfs_timing_dims d = { .dim = 64, .kv_dim = 32, .hidden_dim = 172,
				     .vocab = 512, .act_bytes = 320,
				     .kv_pos_bytes = 144 };
	struct wfs_cost c = { 0 }, one = { 0 };
	u64 st = 20454ull * 48889;	/* a stage's cores x their SRAM */
	u64 w = st / 2 * 5;		/* 2.5 stages: span 160/64 */
	u64 macs = 64 * 64 * 2 + 2 * 64 * 32 + 3 * 64 * 172 + 2 * 64;
	u64 bytes = w + 144 + 144 + 2 * 320;

	wfs_profile_find("wse3", &p);
	wt_ok(p.stage_cores == 20454 && wfs_timing_span64(&p, st) == 64 &&
	      wfs_timing_span64(&p, st + 1) == 65 &&
	      wfs_timing_span64(&p, w) == 160,
	      "span: a stage's 20,454 cores' bytes 64/64, one byte more 65/64, 2.5 stages 160/64");
	wfs_timing_layer_cost(&p, &d, w, 0, 1, &c);
	wt_ok(c.macs == (macs * 64 + 159) / 160 && c.bytes == (bytes * 64 + 159) / 160 &&
	      c.latency == WFS_TIMING_LAYER_REDUCTIONS *
	      wfs_timing_reduce_cycles(&p, w),
	      "a 2.5-stage layer: MACs and bytes x 64/160, reductions over all its cores");
	wfs_timing_head_cost(&p, &d, w, 1, &one);
	wt_ok(one.bytes == ((w + 320) * 64 + 159) / 160 &&
	      one.macs == (512ull * 64 * 64 + 159) / 160, "the head alike");
	/*
	 * An MoE layer spans the cores of all its experts: 2.75 stages, 176/64;
	 * the attention over the KV spreads over them, the weights' work is
	 * on their own cores (placed): each part's full cores read their
	 * 48,889 bytes at 433,884 / 20,454 bytes a cycle, 2,305 cycles.
	 */
	{
		struct wfs_timing_moe m = { .n_experts = 8, .n_active = 2, .n_shared = 1,
					    .expert_hidden = 32, .attn_bytes = st / 2,
					    .expert_bytes = st / 4 };
		struct wfs_timing_dims dm = { .dim = 64, .kv_dim = 32, .act_bytes = 128,
					      .kv_pos_bytes = 128 };
		u64 mb = 128 + 128 + 2 * 128;
		struct wfs_cost cm = { 0 };

		wfs_timing_moe_layer_cost(&p, &dm, &m, 0, 1, &cm);
		wt_ok(wfs_timing_span64(&p, st / 2 + 9 * (st / 4)) == 176 &&
		      cm.macs == (2 * 64 * 64 + 175) / 176 && cm.bytes == (mb * 64 + 175) / 176 &&
		      cm.placed == 2305 + 2305,
		      "an MoE layer of 2.75 stages: KV work x 64/176, its parts on their own cores");
	}
	/*
	 * Spread over 5 stages (wafer plan's choice within its device's
	 * share): 102,270 cores of 24,445 B each, MACs and bytes x 64/320, the
	 * reductions across a square of side 320 (102,268 cores); a spread
	 * smaller than its bytes fill changes nothing, nor one d^2 caps.
	 */
	{
		struct wfs_timing_dims ds = d;
		struct wfs_cost cs = { 0 };
		u64 pc = (w + 102269) / 102270;

		ds.dim = 4096;
		ds.stage_layers = 1;
		ds.spread64 = 320;
		macs = 4096ull * 4096 * 2 + 2 * 4096 * 32 + 3 * 4096 * 172 + 2 * 4096;
		wfs_timing_layer_cost(&p, &ds, w, 0, 1, &cs);
		wt_ok(pc == 24445 && wfs_timing_core_bytes(&p, &ds, w) == pc &&
		      cs.macs == (macs * 64 + 319) / 320 && cs.bytes == (bytes * 64 + 319) / 320 &&
		      cs.latency == WFS_TIMING_LAYER_REDUCTIONS * 2 * 320ull * p.mesh_hop_cycles,
		      "spread over 5 stages: 24,445 B a core, x 64/320, reductions of side 320");
		ds.spread64 = 128;
		wt_ok(wfs_timing_core_bytes(&p, &ds, w) == p.core_sram_bytes,
		      "a spread of 2 stages, under the 2.5 its bytes fill: the cores they fill");
		ds.spread64 = 320;
		ds.dim = 128;
		wt_ok(wfs_timing_core_bytes(&p, &ds, w) == p.core_sram_bytes,
		      "d = 128: 16,384 cores at most, fewer than its bytes fill: those");
	}
	wfs_profile_find("lpu", &p);
	wt_ok(wfs_timing_span64(&p, w) == 64,
	      "lpu: no mesh; a group of chips holds what a chip cannot (tensor_chips)");
}

/*
 * wse3: a layer spreads over its share of its stage's cores (at most d^2),
 * never over fewer than its bytes fill; its reductions cross that region.
 */
static void test_region(void)
{
	struct wfs_profile p;
	struct wfs_timing_dims d = { .dim = 4096, .kv_dim = 1024, .hidden_dim = 14336,
				     .vocab = 512, .act_bytes = 8192,
				     .kv_pos_bytes = 4096, .stage_layers = 2 };
	struct wfs_cost c = { 0 };
	u64 w = 100000000ull;	/* 100 MB: 2,046 cores of 48,889 B */

	wfs_profile_find("wse3", &p);
	/* Half a stage: 20,454 / 2 = 10,227 cores, 9,779 B each. */
	wt_ok(wfs_timing_core_bytes(&p, &d, w) == 9779,
	      "two layers on a stage: 100 MB over 10,227 cores, 9,779 B each");
	wfs_timing_layer_cost(&p, &d, w, 0, 1, &c);
	wt_ok(c.latency == WFS_TIMING_LAYER_REDUCTIONS * 2 * 102ull * p.mesh_hop_cycles,
	      "its reductions cross a square of side 102 (10,226 cores)");
	d.dim = 64;
	wt_ok(wfs_timing_core_bytes(&p, &d, w) == 24415,
	      "d = 64: at most 64 x 64 = 4,096 cores, 24,415 B each");
	d.dim = 4096;
	wt_ok(wfs_timing_core_bytes(&p, &d, 600000000ull) == p.core_sram_bytes,
	      "a layer that fills its share keeps the cores its bytes fill");
	d.stage_layers = 0;
	wt_ok(wfs_timing_core_bytes(&p, &d, w) == p.core_sram_bytes,
	      "no stage count (a streaming window): the cores its bytes fill");
	wfs_profile_find("wafer", &p);
	d.stage_layers = 1;
	wt_ok(!wfs_timing_core_bytes(&p, &d, w), "the test profiles have no mesh");
}

/* A mixture-of-experts layer against a hand computation. */
static void test_moe(void)
{
	struct wfs_profile p, asic;
	struct wfs_timing_dims d = { .dim = 64, .kv_dim = 32, .act_bytes = 128,
				     .kv_pos_bytes = 128 };
	struct wfs_timing_moe m = { .n_experts = 8, .n_active = 2, .n_shared = 1,
				    .expert_hidden = 32, .attn_bytes = 48889ull * 4,
				    .expert_bytes = 48889ull * 9 };
	struct wfs_cost c = { 0 }, c4 = { 0 }, ca = { 0 }, cl = { 0 };
	u64 attn = 64 * 64 * 2 + 2 * 64 * 32 + 64 * 8, ffn = 3ull * 3 * 64 * 32;
	u64 all = m.attn_bytes + 9 * m.expert_bytes;	/* 85 cores: side 10 */

	wfs_profile_find("wse3", &p);
	wfs_timing_moe_layer_cost(&p, &d, &m, 0, 1, &c);
	/*
	 * The attention and router on their 4 full cores: 12,800 MACs at
	 * 322,830 / 20,454 a cycle and a core, 203 cycles, under reading
	 * 48,889 bytes at 433,884 / 20,454, 2,305; an expert on its 9, alike.
	 */
	wt_ok(c.macs == 2 * 64 && c.bytes == 128 + 128 + 2 * 128 && c.placed == 2305 + 2305,
	      "one token: the KV's work on the region; attention, then an expert, on their cores");
	wt_ok(c.latency == ((7 + 3) * 2 * 2 + 2 * 2 * 3 + 2 * 10) * (u64)p.mesh_hop_cycles,
	      "latency: 7 + norm, router, top-k over 4 cores, 2 over 9, dispatch and combine over "
	      "%llu cores", (unsigned long long)(all / 48889));
	wt_ok(wfs_timing_stage_cycles(&p, &c) == 1 + 2305 + 2305 + c.latency,
	      "stage cycles: the region's roofline (1), then the parts, then the latency");
	wfs_timing_moe_layer_cost(&p, &d, &m, 0, 4, &c4);
	wt_ok(c4.bytes == 4 * (128 + 2 * 128) + (1 + 2 + 3 + 4) * 128 && c4.placed == c.placed &&
	      c4.latency == c.latency,
	      "4 tokens: the cores still read their weights once (2,305 cycles > 4 x 12,800 "
	      "MACs' 811); latency once per chunk");
	/* Kimi K2's expert at 4 bits: 44,040,192 weights in 23,396,352 bytes, 479 cores. */
	{
		struct wfs_timing_moe k = { .n_experts = 384, .n_active = 8, .n_shared = 1,
					    .expert_hidden = 2048, .attn_bytes = 1,
					    .expert_bytes = 23396352 };
		struct wfs_timing_dims dk = { .dim = 7168 };
		struct wfs_cost k1 = { 0 }, k2 = { 0 }, k0 = { 0 };

		wfs_timing_moe_layer_cost(&p, &dk, &k, 0, 1, &k1);
		wfs_timing_moe_layer_cost(&p, &dk, &k, 0, 2, &k2);
		k.n_shared = 0;
		wfs_timing_moe_layer_cost(&p, &dk, &k, 0, 2, &k0);
		/*
		 * One token: 44,040,192 x 20,454 / (479 x 322,830) -> 5,826 cycles,
		 * over the SRAM's 2,303; the attention's one byte on one core,
		 * 2 x 7,168 x 7,168 + 7,168 x 384 MACs x 20,454 / 322,830.
		 */
		u64 a1 = (7168ull * 7168 * 2 + 7168ull * 384) * 20454;

		wt_ok(k1.placed == (a1 + 322829) / 322830 + 5826 &&
		      k2.placed == (2 * a1 + 322829) / 322830 + (2 * 44040192ull * 20454 +
								   479ull * 322830 - 1) /
		      (479ull * 322830) &&
		      k0.placed == (2 * a1 + 322829) / 322830 + 5826,
		      "Kimi K2's expert at 4 bits: 5,826 cycles a token on its 479 cores; the shared "
		      "one takes both tokens of a verify pass, a routed one ceil(2 x 8 / 384)");
	}
	/* Latent attention: 4 more reductions over the attention's cores. */
	d.latent = 1;
	wfs_timing_moe_layer_cost(&p, &d, &m, 0, 1, &cl);
	wt_ok(cl.latency - c.latency == 4 * 2 * 2 * (u64)p.mesh_hop_cycles &&
	      cl.placed == c.placed, "latent attention: + 4 reductions of side 2");
	d.latent = 0;
	/* Without a mesh, the old roofline: every part's MACs and bytes on the stage. */
	wfs_profile_find("asic", &asic);
	wfs_timing_moe_layer_cost(&asic, &d, &m, 0, 1, &ca);
	wt_ok(ca.macs == attn + ffn + 2 * 64 && !ca.placed && !ca.latency &&
	      ca.bytes == m.attn_bytes + 3 * m.expert_bytes + 128 + 128 + 2 * 128,
	      "asic: attention + router + 3 experts' MACs, 2 routed + 1 shared read, no mesh");
}

/* lpu: a layer split over a group of chips pays two ring all-reduces. */
static void test_tensor(void)
{
	struct wfs_profile chip, g8, g16, w;
	struct wfs_timing_dims d = { .dim = 8192, .kv_dim = 1024, .hidden_dim = 28672,
				     .vocab = 1000, .act_bytes = 16384,
				     .kv_pos_bytes = 4096 };
	struct wfs_cost c1 = { 0 }, c8 = { 0 }, c16 = { 0 };
	u64 w_layer = 1712000000ull, step8, ar8;

	wt_ok(!wfs_profile_find("lpu", &chip) && chip.id == WFS_PROFILE_LPU &&
	      chip.stages == 1 && chip.sram_bytes == 230000000ull &&
	      chip.clock_hz == 900000000ull && chip.macs_per_cycle == 104444 &&
	      chip.sram_bytes_per_cycle == 88889 && !chip.core_sram_bytes,
	      "lpu: 230 MB, 900 MHz, 188 TFLOPS / 2, 80 TB/s, no mesh");
	g8 = chip;
	g16 = chip;
	wt_ok(!wfs_profile_tensor_group(&g8, 8) && g8.tensor_chips == 8 &&
	      g8.macs_per_cycle == 8 * chip.macs_per_cycle &&
	      g8.sram_bytes_per_cycle == 8 * chip.sram_bytes_per_cycle &&
	      g8.sram_bytes == 8 * chip.sram_bytes, "a group of 8: 8 chips' SRAM, MACs, bandwidth");
	wt_ok(!wfs_profile_tensor_group(&g16, 16), "a group of 16");
	/* 16 KB over 8 chips: 2 KB a step, 2048 / 111 -> 19 cycles of link. */
	step8 = chip.link_hop_cycles + (2048 + 110) / 111;
	ar8 = 2 * 7 * step8;
	wt_ok(wfs_timing_allreduce_cycles(&g8, 16384) == ar8,
	      "all-reduce of 16 KB over 8: 2 x 7 steps of (hop + 19) cycles");
	wt_ok(!wfs_timing_allreduce_cycles(&chip, 16384), "one chip: no all-reduce");
	wfs_timing_layer_cost(&chip, &d, w_layer, 100, 1, &c1);
	wfs_timing_layer_cost(&g8, &d, w_layer, 100, 1, &c8);
	wfs_timing_layer_cost(&g16, &d, w_layer, 100, 1, &c16);
	wt_ok(c1.latency == 0 && c8.latency == 2 * ar8 && c8.macs == c1.macs &&
	      c8.bytes == c1.bytes, "a layer on 8 chips: same work, 2 all-reduces of latency");
	wt_ok(wfs_timing_stage_cycles(&g8, &c8) ==
	      2 * ar8 + (c8.bytes + g8.sram_bytes_per_cycle - 1) / g8.sram_bytes_per_cycle,
	      "8 chips: the weights read at 8 x 80 TB/s, plus the all-reduces");
	wt_ok(c16.latency > c8.latency &&
	      wfs_timing_stage_cycles(&g16, &c16) - c16.latency <
	      wfs_timing_stage_cycles(&g8, &c8) - c8.latency,
	      "more chips: less roofline time, more all-reduce latency");
	w = chip;
	wt_ok(wfs_profile_tensor_group(&w, 257) == -WFS_EINVAL &&
	      wfs_profile_tensor_group(&w, 0) == -WFS_EINVAL, "a group of 257 or 0: refused");
	wfs_profile_find("wse3", &w);
	wt_ok(wfs_profile_tensor_group(&w, 2) == -WFS_EINVAL && !wfs_profile_tensor_group(&w, 1),
	      "wse3 keeps a layer on one wafer");
}

struct run {
	u64 tps;
	u64 makespan;
	u64 lat1;
	u64 busy_max;
	u64 busy_sum;
	u32 used;
};

static int run_shape(void *blob, size_t len, const char *profile, u32 stages,
		     struct run *r)
{
	struct wfs_device_config cfg;
	struct dh *h = calloc(1, sizeof(*h));
	u32 *in = dh_alloc(NSEQ * (PRE + DEC) * 4);
	u8 *out = dh_alloc(NSEQ * (PRE + DEC) * REC);
	struct wfw_stage_stats st[64];
	struct wfw_info info;
	struct wfw_cmd c;
	struct wfw_cpl cpl;
	int64_t ctx;
	int s, j, done = 0, bad = 0;

	memset(&cfg, 0, sizeof(cfg));
	cfg.numa_node = -1;
	cfg.profile = profile;
	cfg.stages = stages;
	if (dh_init(h, &cfg, 256, 256))
		return -1;
	for (s = 0; s < NSEQ * (PRE + DEC); s++)
		in[s] = 1 + (u32)(s * 7919) % 500;
	dh_region_add(h, blob, len);
	dh_region_add(h, in, NSEQ * (PRE + DEC) * 4);
	dh_region_add(h, out, NSEQ * (PRE + DEC) * REC);
	dh_region_add(h, st, sizeof(st));
	if (dh_load(h, blob, len, &cpl))
		return -1;
	ctx = dh_ctx_create(h, NSEQ, PRE + DEC, &cpl);
	if (ctx <= 0)
		return -1;

	/* One lone 1-token job: the pipeline's latency. */
	dh_job_cmd(&c, (u32)ctx, 0, 0, 1, in, out, REC, 1, 0, 1);
	dh_exec(h, &c, &cpl, 10000);
	r->lat1 = cpl.device_ns;
	dh_hw_reset(h, 0);

	for (j = 0; j <= DEC; j++) {
		for (s = 0; s < NSEQ; s++) {
			u32 pos = j ? PRE + j - 1 : 0, n = j ? 1 : PRE;
			u32 *tok = &in[s * (PRE + DEC) + pos];

			dh_job_cmd(&c, (u32)ctx, (u32)s, pos, n, tok,
				   out + (size_t)(s * (PRE + DEC) + pos) * REC,
				   REC, 1, 0, 100 + (u64)(s * 100 + j));
			dh_submit(h, &c);
		}
	}
	while (done < NSEQ * (DEC + 1) && dh_poll(h, &cpl, 20000)) {
		bad += cpl.status != 0;
		done++;
	}
	dh_info(h, &info);
	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_GET_STATS;
	c.buf.addr = (u64)(uintptr_t)st;
	c.buf.len = sizeof(st);
	dh_exec(h, &c, &cpl, 5000);
	r->busy_sum = 0;
	for (s = 0; s < (int)cpl.result0; s++)
		r->busy_sum += st[s].modelled_busy_ns;
	r->tps = info.modelled_tokens_per_s;
	r->makespan = info.modelled_makespan_ns;
	r->busy_max = info.bottleneck_busy_ns;
	r->used = info.stages_used;
	wt_diag("%s/%u: %u stages used, %llu tokens/s modelled, makespan %llu ns, bottleneck busy %llu ns, 1-token latency %llu ns",
		profile, stages, r->used, (unsigned long long)r->tps,
		(unsigned long long)r->makespan,
		(unsigned long long)r->busy_max, (unsigned long long)r->lat1);
	dh_fini(h);
	free(h);
	free(in);
	free(out);
	return bad || done != NSEQ * (DEC + 1) ? -1 : 0;
}

static void test_device(void *blob, size_t len)
{
	struct wfs_device_config cfg;
	struct dh *h = calloc(1, sizeof(*h));
	u32 *in = dh_alloc(256 * 4);
	u8 *out = dh_alloc(REC);
	static const u32 ns[] = { 1, 4, 16, 17, 64, 200 };
	u64 prev = 0;
	int grows = 1;
	struct run r1, r2, r5, a1, a4;
	struct wfw_cmd c;
	struct wfw_cpl cpl;
	int64_t ctx;
	unsigned int i;

	memset(&cfg, 0, sizeof(cfg));
	cfg.numa_node = -1;
	cfg.profile = "asic";
	dh_init(h, &cfg, 16, 16);
	for (i = 0; i < 256; i++)
		in[i] = 1 + i % 500;
	dh_region_add(h, blob, len);
	dh_region_add(h, in, 256 * 4);
	dh_region_add(h, out, REC);
	dh_load(h, blob, len, &cpl);
	ctx = dh_ctx_create(h, WFS_ARRAY_SIZE(ns), 256, &cpl);
	for (i = 0; i < WFS_ARRAY_SIZE(ns); i++) {
		dh_job_cmd(&c, (u32)ctx, i, 0, ns[i], in, out, REC, 1, 0, 0);
		dh_exec(h, &c, &cpl, 10000);
		wt_diag("%u tokens: %llu ns modelled", ns[i],
			(unsigned long long)cpl.device_ns);
		grows &= cpl.status == 0 && cpl.device_ns > prev;
		prev = cpl.device_ns;
	}
	wt_ok(grows, "modelled job latency grows with the token count (1..200)");
	dh_fini(h);
	free(h);
	free(in);
	free(out);

	if (run_shape(blob, len, "wafer", 1, &r1) || run_shape(blob, len, "wafer", 2, &r2) ||
	    run_shape(blob, len, "wafer", 5, &r5) || run_shape(blob, len, "asic", 1, &a1) ||
	    run_shape(blob, len, "asic", 4, &a4)) {
		wt_ok(0, "runs with 16 sequences in flight");
		return;
	}
	wt_ok(r1.tps < r2.tps && r2.tps < r5.tps,
	      "wafer: more stages, more tokens/s with %d sequences in flight (%llu < %llu < %llu)",
	      NSEQ, (unsigned long long)r1.tps, (unsigned long long)r2.tps,
	      (unsigned long long)r5.tps);
	wt_ok(a1.tps < a4.tps, "asic: 4 stages beat 1 (%llu < %llu tokens/s)",
	      (unsigned long long)a1.tps, (unsigned long long)a4.tps);
	{
		struct wfs_profile p;
		u64 hop;

		wfs_profile_find("wafer", &p);
		hop = wfs_timing_ns(&p, wfs_timing_hop_cycles(&p, 320)) + 1;
		wt_ok(r5.lat1 > r1.lat1 && r5.lat1 <= r1.lat1 + 4 * hop,
		      "a lone token's latency grows with stages by at most the extra fabric hops (%llu -> %llu ns, hop %llu ns)",
		      (unsigned long long)r1.lat1, (unsigned long long)r5.lat1,
		      (unsigned long long)hop);
		wt_ok(a4.lat1 > a1.lat1 && a4.lat1 < a1.lat1 + a1.lat1 / 2,
		      "asic: 4 stages add little to a lone token's latency (%llu -> %llu ns)",
		      (unsigned long long)a1.lat1, (unsigned long long)a4.lat1);
	}
	wt_ok(r5.busy_max <= r5.makespan && r5.busy_sum >= r5.busy_max &&
	      r1.busy_max <= r1.makespan && r1.busy_sum == r1.busy_max,
	      "per-stage modelled busy time: bottleneck <= makespan, sums consistent");
}

/* Job at @pos of slot 0: its token id at in[4 * @pos], then its floor @t. */
static int floor_job(struct dh *h, u32 ctx, u32 *in, u8 *out, u32 pos, u64 t,
		     struct wfw_cpl *cpl)
{
	struct wfw_cmd c;

	memcpy(&in[4 * pos + 1], &t, sizeof(t));
	dh_job_cmd(&c, ctx, 0, pos, 1, &in[4 * pos], out, REC, 1, WFW_JOB_NOT_BEFORE,
		   1 + pos);
	return dh_exec(h, &c, cpl, 10000) || cpl->status;
}

static void test_not_before(void *blob, size_t len)
{
	struct wfs_device_config cfg = { .numa_node = -1, .profile = "asic" };
	struct dh *h = calloc(1, sizeof(*h));
	u32 *in = dh_alloc(64), i;
	u8 *out = dh_alloc(REC);
	struct wfw_cpl a = { 0 }, b = { 0 }, c = { 0 }, d = { 0 };
	struct wfw_cmd cmd;
	int64_t ctx;
	int ret;

	for (i = 0; i < 16; i++)
		in[i] = 1 + i * 7;
	ret = dh_init(h, &cfg, 16, 16);
	dh_region_add(h, blob, len);
	dh_region_add(h, in, 64);
	dh_region_add(h, out, REC);
	ret = ret || dh_load(h, blob, len, &a);
	ctx = ret ? -1 : dh_ctx_create(h, 1, 16, &a);
	ret = ctx <= 0 || floor_job(h, (u32)ctx, in, out, 0, 0, &a) ||
	      floor_job(h, (u32)ctx, in, out, 1, a.value + 1000000, &b) ||
	      floor_job(h, (u32)ctx, in, out, 2, 5, &c);
	wt_ok(!ret && a.value - a.device_ns == 0 && b.value - b.device_ns == a.value + 1000000 &&
	      c.value - c.device_ns == b.value,
	      "NOT_BEFORE: a floor of 0 changes nothing, a later one delays the job to it "
	      "(starts %llu, %llu), an earlier one leaves the slot's rule (%llu = %llu)",
	      (unsigned long long)(a.value - a.device_ns),
	      (unsigned long long)(b.value - b.device_ns),
	      (unsigned long long)(c.value - c.device_ns), (unsigned long long)b.value);
	/* The floor of a job at the buffer's end lies past it: a DMA fault. */
	dh_job_cmd(&cmd, (u32)ctx, 0, 3, 1, &in[15], out, REC, 1, WFW_JOB_NOT_BEFORE, 99);
	ret = dh_exec(h, &cmd, &d, 10000);
	wt_ok(!ret && d.status == -WFS_EFAULT, "NOT_BEFORE: a floor past the input's buffer "
	      "fails the job with -EFAULT (%d)", d.status);
	ret = floor_job(h, (u32)ctx, in, out, 3, WFW_NOT_BEFORE_MAX, &a) ||
	      floor_job(h, (u32)ctx, in, out, 3, WFW_NOT_BEFORE_MAX + 1, &d) != 1;
	wt_ok(!ret && d.status == -WFS_EINVAL && a.value - a.device_ns == WFW_NOT_BEFORE_MAX,
	      "NOT_BEFORE: 2^62 is the latest floor; past it the job fails with -EINVAL (%d)",
	      d.status);
	dh_fini(h);
	free(h);
	free(in);
	free(out);
}

int main(void)
{
	const char *path = wt_model_path("stories260K.bin");
	struct wfs_pack_opts o8 = { .wbits = 8, .group_size = 64 };
	struct wfs_ckpt ck;
	void *blob;
	size_t len;

	test_formulas();
	test_stream();
	test_mesh();
	test_span();
	test_region();
	test_moe();
	test_tensor();
	if (!wt_ok(path && wfs_ckpt_load(path, &ck) == 0, "load model") ||
	    !wt_ok(wfs_pack(&ck, &o8, &blob, &len) == 0, "pack"))
		return wt_done();
	test_device(blob, len);
	test_not_before(blob, len);
	free(blob);
	wfs_ckpt_free(&ck);
	return wt_done();
}
