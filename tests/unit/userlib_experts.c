// SPDX-License-Identifier: MIT
/*
 * The firmware's per-expert load counters (GET_EXPERT_LOAD, through
 * wafer_dev_expert_load()) on an upcycled stories260K: a greedy sequence
 * is run through firmware-sim's forward pass directly, counting the experts
 * each layer selected, and then as jobs through in-process devices of
 * different placements and a two-device pipeline.  Every device's counts
 * equal the direct count entry for entry; each layer's routed entries sum
 * to tokens x top-k and its shared ones to tokens; running the job again
 * doubles every count; the imbalance in the stats is the table's, of any
 * model on the device (a dense model loaded first: the MoE one's).  A
 * model's own counts (wafer_model_expert_load(), by its id) on the
 * pipeline, and with two MoE models out of load order (the later in the
 * firmware slot a dense model freed): each its own.  The driver's debugfs
 * table read by model id: that section, whatever its place.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/wafer_backend.h"	/* wafer_experts_read() */
#include "wafer.h"
#include "wfs_moe.h"
#include "wfs_pack.h"
#include "wt_model.h"
#include "wt_util.h"

#define N	160	/* positions */
#define E	4	/* routed experts */
#define TOPK	2
#define SHARED	1
#define MAXL	8
#define ENTRIES	(MAXL * (E + SHARED))

static uint32_t seq[N];			/* BOS, then the greedy tokens */
static uint64_t want[MAXL][E];		/* routed counts, direct */
static unsigned int n_layers;

/* The sequence and its expert counts, straight from wfs_layer_forward(). */
static int reference(const void *blob, size_t len)
{
	struct wfs_topk_entry tk[1];
	struct wt_model m;
	uint32_t pos, l, i, am = 0;

	if (wt_model_open(&m, blob, len, N, 0))
		return -1;
	n_layers = m.info.n_layers;
	if (n_layers > MAXL) {
		wt_model_close(&m);
		return -1;
	}
	seq[0] = 1;
	for (pos = 0; pos < N; pos++) {
		wfs_embed(&m.ev, seq[pos], m.act);
		for (l = 0; l < n_layers; l++) {
			const struct wfs_moe_sel *sel;

			wfs_layer_forward(&m.lv[l], m.kv[l], pos, m.act, m.lscratch);
			sel = wfs_layer_moe_sel(&m.lv[l], pos, m.lscratch);
			for (i = 0; i < sel->n; i++)
				want[l][sel->expert[i]]++;
		}
		wfs_head(&m.hv, m.act, 1, tk, &am, m.hscratch);
		if (pos + 1 < N)
			seq[pos + 1] = am;
	}
	wt_model_close(&m);
	return 0;
}

/* The sequence as two jobs of N / 2 tokens (a pipeline takes 128), @runs times. */
static int run_seq(struct wafer_dev *dev, const void *blob, size_t len, int runs,
		   struct wafer_model **mp)
{
	struct wafer_bo *in = NULL, *out = NULL;
	struct wafer_completion c;
	struct wafer_ctx *ctx = NULL;
	struct wafer_model *m;
	int ret, r;

	ret = wafer_model_load(dev, blob, len, mp);
	m = *mp;
	if (!ret)
		ret = wafer_ctx_create(m, 1, N, &ctx);
	if (!ret)
		ret = wafer_bo_create(dev, sizeof(seq), &in);
	if (!ret)
		ret = wafer_bo_create(dev, WAFER_RESULT_SIZE(1), &out);
	if (!ret)
		memcpy(wafer_bo_map(in), seq, sizeof(seq));
	for (r = 0; !ret && r < 2 * runs; r++) {
		struct wafer_job j = { .ctx = ctx, .start_pos = r % 2 * N / 2, .n_tokens = N / 2,
				       .top_k = 1, .in = in, .in_offset = r % 2 * N / 2 * 4,
				       .out = out };

		ret = wafer_submit(dev, &j, 1);
		if (ret == 1)
			ret = wafer_reap(dev, &c, 1, 1, -1);
		ret = ret == 1 ? c.status : ret < 0 ? ret : -EIO;
	}
	wafer_bo_destroy(out);
	wafer_bo_destroy(in);
	wafer_ctx_destroy(ctx);
	/* the model stays loaded for the caller: its counters with it */
	return ret;
}

/*
 * The device's first model's entries (@m NULL), or @m's
 * (wafer_model_expert_load()): == the direct counts x @runs; sums; the
 * stats' imbalance (the device's: here every MoE model's is the same).
 */
static void check_model(struct wafer_dev *dev, const struct wafer_model *m, int runs,
			const char *what)
{
	struct wafer_expert_load e[ENTRIES + 1];
	struct wafer_dev_stats st;
	uint64_t routed[MAXL] = { 0 }, worst = 0;
	unsigned int i, l, bad = 0, sums = 0;
	int n = m ? wafer_model_expert_load(m, e, ENTRIES + 1) :
		    wafer_dev_expert_load(dev, e, ENTRIES + 1);

	if (!wt_ok(n == (int)(n_layers * (E + SHARED)), "%s: %d entries (%u layers x %u)", what,
		   n, n_layers, E + SHARED))
		return;
	for (i = 0; i < (unsigned int)n; i++) {
		l = e[i].layer;
		if (l >= n_layers || e[i].top_k != TOPK ||
		    e[i].expert >= (e[i].shared ? SHARED : E)) {
			bad++;
			continue;
		}
		if (e[i].shared) {
			bad += e[i].tokens != (uint64_t)N * runs;
			continue;
		}
		bad += e[i].tokens != want[l][e[i].expert] * runs;
		routed[l] += e[i].tokens;
	}
	for (l = 0; l < n_layers; l++) {
		uint64_t thr;

		sums += routed[l] == (uint64_t)N * TOPK * runs;
		thr = (uint64_t)(wafer_expert_imbalance(e, n, l) * 1000 + 1e-6);
		if (thr > worst)
			worst = thr;
	}
	wt_ok(!bad, "%s: every entry is the direct count x %d", what, runs);
	wt_ok(sums == n_layers, "%s: each layer's routed tokens are %d x top-%d x %d", what, N,
	      TOPK, runs);
	if (wafer_dev_stats(dev, &st))
		st.moe_imbalance_milli = ~0ull;
	wt_ok(st.moe_imbalance_milli == worst && worst >= 1000,
	      "%s: stats imbalance %llu/1000 == the table's worst layer (%llu)", what,
	      (unsigned long long)st.moe_imbalance_milli, (unsigned long long)worst);
}

static void check(struct wafer_dev *dev, int runs, const char *what)
{
	check_model(dev, NULL, runs, what);
}

static void on_device(const void *blob, size_t len, unsigned int stages)
{
	struct wafer_open_opts o = { .backend = WAFER_BACKEND_INPROC, .stages = stages };
	struct wafer_model *m = NULL;
	struct wafer_dev *dev;
	char what[64];

	snprintf(what, sizeof(what), "inproc, %u stages", stages);
	if (!wt_ok(wafer_open(&o, &dev) == 0, "%s: open", what))
		return;
	if (wt_ok(run_seq(dev, blob, len, 2, &m) == 0, "%s: the sequence runs twice", what))
		check(dev, 2, what);
	wafer_model_unload(m);
	wafer_close(dev);
}

/*
 * 4 asic stages of 184 KiB: the layers do not fit with their experts, the
 * firmware places the experts in groups across the stages; each routed
 * entry names the stage holding it, some another than its layer's, and
 * the counts are the direct ones.
 */
static void on_small(const void *blob, size_t len)
{
	struct wafer_open_opts o = { .backend = WAFER_BACKEND_INPROC, .profile = "asic",
				     .stages = 4, .sram_bytes = 184 << 10 };
	struct wafer_expert_load e[ENTRIES + 1];
	struct wafer_model *m = NULL;
	struct wafer_dev *dev;
	unsigned int i, placed = 0, stages = 0;
	int n, ret;

	if (!wt_ok(wafer_open(&o, &dev) == 0, "asic, 4 stages of 184 KiB: open"))
		return;
	ret = run_seq(dev, blob, len, 1, &m);
	if (wt_ok(ret == 0, "asic, 4 stages of 184 KiB: the sequence runs (%s)",
		  ret ? wafer_last_error() : "ok")) {
		check(dev, 1, "experts in groups across stages");
		n = wafer_dev_expert_load(dev, e, ENTRIES + 1);
		for (i = 0; n > 0 && i < (unsigned int)n && i <= ENTRIES; i++) {
			placed += !e[i].shared && e[i].stage < 4;
			stages |= e[i].stage < 4 ? 1u << e[i].stage : 0;
		}
		wt_ok(n > 0 && placed == n_layers * E && stages != 1,
		      "each of the %u routed experts names its stage (stages used: 0x%x)", placed,
		      stages);
	}
	wafer_model_unload(m);
	wafer_close(dev);
}

/*
 * wafer info -m --moe on those stages shows where the groups are (the
 * library's placement above); on the default device, with room, nothing.
 */
static void cli_info(const char *model)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char cmd[1024], *out = malloc(65536);
	int rc;

	if (!out)
		return;
	snprintf(cmd, sizeof(cmd), "%s/bin/wafer info -b inproc --profile asic --stages 4 "
		 "--sram-kib 184 -m %s --moe 4,2,1 2>&1", build, model);
	rc = wt_capture(cmd, out, 65536);
	wt_ok(rc == 0 && strstr(out, "\nexperts:  across stages: L0 0@s") &&
	      strstr(out, "; L4 ") && strstr(out, "@s3"),
	      "wafer info --profile asic --stages 4 --sram-kib 184 -m --moe 4,2,1: the experts' stages");
	if (rc)
		wt_diag("%.800s", out);
	snprintf(cmd, sizeof(cmd), "%s/bin/wafer info -b inproc -m %s --moe 4,2,1 2>&1", build,
		 model);
	rc = wt_capture(cmd, out, 65536);
	wt_ok(rc == 0 && strstr(out, "ffn:      mixture of experts") && !strstr(out, "experts:  "),
	      "wafer info -m --moe with room: no experts line (every expert with its layer)");
	if (rc)
		wt_diag("%.800s", out);
	free(out);
}

static void on_pipeline(const void *blob, size_t len)
{
	struct wafer_open_opts o[2] = { { .backend = WAFER_BACKEND_INPROC },
					{ .backend = WAFER_BACKEND_INPROC } };
	struct wafer_pipe_opts po = { .n_devices = 2, .devices = o };
	struct wafer_model *m = NULL;
	struct wafer_dev *dev;
	int ret;

	if (!wt_ok(wafer_open_pipeline(&po, &dev) == 0, "pipeline of 2: open"))
		return;
	ret = run_seq(dev, blob, len, 1, &m);
	if (wt_ok(ret == 0, "pipeline of 2: the sequence runs (%s)", ret ? wafer_last_error() : "ok")) {
		check(dev, 1, "pipeline of 2");
		check_model(dev, m, 1, "pipeline of 2, wafer_model_expert_load()");
	}
	wafer_model_unload(m);
	wafer_close(dev);
}

/* A dense model: no entries, no imbalance. */
static void dense(const void *blob, size_t len)
{
	struct wafer_open_opts o = { .backend = WAFER_BACKEND_INPROC };
	struct wafer_dev_stats st;
	struct wafer_model *m = NULL;
	struct wafer_dev *dev;

	if (wafer_open(&o, &dev))
		return;
	wt_ok(wafer_dev_expert_load(dev, NULL, 0) == 0, "no model: no entries");
	wt_ok(wafer_model_load(dev, blob, len, &m) == 0 &&
	      wafer_dev_expert_load(dev, NULL, 0) == 0 && !wafer_dev_stats(dev, &st) &&
	      !st.moe_imbalance_milli, "a dense model: no entries, imbalance 0");
	wafer_model_unload(m);
	wafer_close(dev);
}

/*
 * Two models on one device, the dense one first (the firmware's model 0):
 * the stats' imbalance is the worst layer of any model, the MoE one's,
 * while the table is the first model's (none); the MoE model alone after
 * the dense one's unload: its entries.
 */
static void two_models(const void *dense_blob, size_t dlen, const void *blob, size_t len)
{
	struct wafer_open_opts o = { .backend = WAFER_BACKEND_INPROC };
	struct wafer_model *d = NULL, *m = NULL;
	struct wafer_dev_stats st = { 0 };
	struct wafer_dev *dev;
	int ret;

	if (!wt_ok(wafer_open(&o, &dev) == 0, "two models: open"))
		return;
	ret = wafer_model_load(dev, dense_blob, dlen, &d);
	ret = ret ? ret : run_seq(dev, blob, len, 1, &m);
	if (wt_ok(ret == 0, "a dense model, then an MoE one beside it runs (%s)",
		  ret ? wafer_last_error() : "ok")) {
		ret = wafer_dev_stats(dev, &st);
		wt_ok(!ret && st.moe_imbalance_milli >= 1000,
		      "two models: the stats' imbalance is the second (MoE) model's: %llu/1000",
		      (unsigned long long)st.moe_imbalance_milli);
		wt_ok(wafer_dev_expert_load(dev, NULL, 0) == 0,
		      "two models: the table is the first (dense) model's: no entries");
		ret = wafer_dev_expert_load_model(dev, 1, NULL, 0);
		wt_ok(ret == (int)(n_layers * (E + SHARED)) &&
		      wafer_dev_expert_load_model(dev, 2, NULL, 0) == -ENOENT,
		      "two models: the second model's entries (%d), no third", ret);
		wafer_model_unload(d);
		d = NULL;
		check(dev, 1, "the MoE model alone after the dense one's unload");
	}
	wafer_model_unload(d);
	wafer_model_unload(m);
	wafer_close(dev);
}

/*
 * Models out of load order (as a kernel device shared with other
 * processes holds them): a dense model, the MoE model run twice, the dense
 * one unloaded and the MoE model again, run once, which takes the freed
 * firmware slot 0.  wafer_model_expert_load() gives each MoE model its own
 * counts (x1, x2) and the dense one none, where the device's first model
 * (what `wafer info -m` and `wafer run --expert-load` took) is the one
 * loaded last.
 */
static void out_of_order(const void *dense_blob, size_t dlen, const void *blob, size_t len)
{
	struct wafer_open_opts o = { .backend = WAFER_BACKEND_INPROC };
	struct wafer_model *d = NULL, *m1 = NULL, *m2 = NULL;
	struct wafer_dev *dev;
	int ret;

	if (!wt_ok(wafer_open(&o, &dev) == 0, "out of order: open"))
		return;
	ret = wafer_model_load(dev, dense_blob, dlen, &d);
	ret = ret ? ret : run_seq(dev, blob, len, 2, &m2);
	if (!ret) {
		wafer_model_unload(d);
		d = NULL;
		ret = run_seq(dev, blob, len, 1, &m1);
	}
	ret = ret ? ret : wafer_model_load(dev, dense_blob, dlen, &d);
	if (wt_ok(ret == 0, "a dense model, an MoE one run twice, the dense one unloaded, the "
		  "MoE one again run once, a dense one (%s)", ret ? wafer_last_error() : "ok")) {
		check_model(dev, m1, 1, "the MoE model loaded last (firmware slot 0)");
		check_model(dev, m2, 2, "the MoE model loaded first (firmware slot 1)");
		wt_ok(wafer_model_expert_load(d, NULL, 0) == 0, "the dense model: no entries");
		check(dev, 1, "the device's first model: the one loaded last");
	}
	wafer_model_unload(d);
	wafer_model_unload(m1);
	wafer_model_unload(m2);
	wafer_close(dev);
}

/*
 * wafer_experts_read() of section @want of @text (@len bytes: all of it if
 * 0), or with @by_id wafer_experts_read_model() of model id @want's.
 */
static int read_section(const char *text, size_t len, int by_id, unsigned int want,
			struct wafer_expert_load *e, unsigned int max)
{
	FILE *f = fmemopen((void *)text, len ? len : strlen(text), "r");
	int n;

	if (!f)
		return -ENOMEM;
	n = by_id ? wafer_experts_read_model(f, "table", want, e, max) :
		    wafer_experts_read(f, "table", want, e, max);
	fclose(f);
	return n;
}

static int read_table(const char *text, size_t len, unsigned int nth,
		      struct wafer_expert_load *e, unsigned int max)
{
	return read_section(text, len, 0, nth, e, max);
}

static int read_model(const char *text, size_t len, uint32_t id, struct wafer_expert_load *e,
		      unsigned int max)
{
	return read_section(text, len, 1, id, e, max);
}

/*
 * The kernel backend's reader of the driver's debugfs experts table: a
 * section per model (two MoE models here): each model's rows, none past
 * the last; a table from before the sections: its rows; a header alone:
 * none; a bad row: -EPROTO.
 */
static void debugfs_table(void)
{
	static const char two[] =
		"layer expert top_k     tokens\n"
		"model 3 fw_id 0x101 moe_layers 1\n"
		"    0 s0         2         60\n"
		"    0 0          2         58\n"
		"    0 1          2         62\n"
		"model 1 fw_id 0x202 moe_layers 1\n"
		"    2 s0         2          9\n"
		"    2 0          2          7\n";
	static const char old[] =
		"layer expert top_k     tokens\n"
		"    4 s0         2         60\n"
		"    4 7          2         58\n";
	static const char bad[] =
		"layer expert top_k     tokens\n"
		"model 1 fw_id 0x101 moe_layers 1\n"
		"    0 x          2         60\n";
	struct wafer_expert_load e[8];
	int n;

	n = read_table(two, 0, 0, e, 8);
	wt_ok(n == 3 && e[0].shared && e[0].tokens == 60 && !e[2].shared && e[2].expert == 1 &&
	      e[2].tokens == 62, "debugfs table of two models: the first model's 3 rows (%d)", n);
	n = read_table(two, 0, 1, e, 8);
	wt_ok(n == 2 && e[0].layer == 2 && e[0].shared && e[1].tokens == 7,
	      "debugfs table of two models: the second model's 2 rows (%d)", n);
	n = read_table(two, 0, 2, e, 8);
	wt_ok(n == -ENOENT, "debugfs table of two models: no third (%d)", n);
	n = read_table(old, 0, 0, e, 8);
	wt_ok(n == 2 && e[1].layer == 4 && e[1].expert == 7 && e[1].top_k == 2,
	      "debugfs table without sections: its rows (%d)", n);
	n = read_table(old, 30, 0, e, 8);	/* the header line alone */
	wt_ok(n == 0 && read_table(old, 30, 1, e, 8) == -ENOENT,
	      "debugfs table of no model: no entries, no second model (%d)", n);
	n = read_table(bad, 0, 0, e, 8);
	wt_ok(n == -EPROTO && strstr(wafer_last_error(), "bad line"),
	      "debugfs table with a bad row: -EPROTO (%.60s)", wafer_last_error());
	/* By the driver's model id (the section line's), not the order. */
	n = read_model(two, 0, 1, e, 8);
	wt_ok(n == 2 && e[0].layer == 2 && e[0].shared && e[1].tokens == 7,
	      "debugfs table of two models: model id 1's 2 rows, the second section (%d)", n);
	n = read_model(two, 0, 3, e, 8);
	wt_ok(n == 3 && e[0].tokens == 60 && e[2].tokens == 62,
	      "debugfs table of two models: model id 3's 3 rows, the first section (%d)", n);
	n = read_model(two, 0, 2, e, 8);
	wt_ok(n == -ENOENT, "debugfs table of two models: no model id 2 (%d)", n);
	n = read_model(old, 0, 9, e, 8);
	wt_ok(n == 2 && e[1].expert == 7,
	      "debugfs table without sections, by model id: the device's one model's rows (%d)", n);
	n = read_model(old, 30, 9, e, 8);
	wt_ok(n == 0, "debugfs table of no model, by model id: no entries (%d)", n);
}

int main(void)
{
	struct wafer_moe_opts mo = { .n_experts = E, .top_k = TOPK, .n_shared = SHARED,
				     .gate = WFS_GATE_SOFTMAX };
	struct wfs_pack_opts po = { .wbits = 8, .group_size = 32 };
	const char *path = wt_model_path("stories260K.bin");
	void *dense_blob = NULL, *blob = NULL;
	size_t dlen, len;
	struct wfs_ckpt ck;
	int want_ok;

	if (!wt_ok(path && wfs_ckpt_load(path, &ck) == 0 &&
		   wfs_pack(&ck, &po, &dense_blob, &dlen) == 0 &&
		   wafer_moe_upcycle(dense_blob, dlen, &mo, &blob, &len) == 0,
		   "upcycle the shared model: %u experts + %u shared, top-%u", E, SHARED, TOPK))
		return wt_done();
	want_ok = reference(blob, len) == 0;
	if (wt_ok(want_ok, "direct forward pass of %d positions", N)) {
		on_device(blob, len, 0);
		on_device(blob, len, 2);
		on_pipeline(blob, len);
		on_small(blob, len);
		cli_info(path);
	}
	dense(dense_blob, dlen);
	debugfs_table();
	if (want_ok) {
		two_models(dense_blob, dlen, blob, len);
		out_of_order(dense_blob, dlen, blob, len);
	}
	free(blob);
	free(dense_blob);
	wfs_ckpt_free(&ck);
	return wt_done();
}
