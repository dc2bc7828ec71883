// SPDX-License-Identifier: MIT
/*
 * device_models.c - several models on one device (ABI 1.4).
 *
 * The shared model packed int8 (a target) and int4 (its draft), two
 * files, loaded side by side: every job's records equal each model's run
 * alone, with both models' jobs in flight at once (one worker per stage
 * and a pool); one at a time, each job's modelled latency equals the
 * model's alone too.  Unload in both orders leaves the other model
 * running with its records and latencies unchanged, and a model loaded
 * again gets a new id.  GET_INFO and GET_SRAM_MAP per model; a second
 * model that does not fit next to the first is -ENOSPC with what was
 * needed and what the other model holds, and leaves the first running;
 * a wrong model id is an error.
 */
#include "device_harness.h"
#include "wfs_pack.h"
#include "wt_model.h"
#include "wt_util.h"

#define NSEQ	4
#define PREFILL	17	/* > one 16-token chunk */
#define DECODE	3
#define NPOS	(PREFILL + DECODE)
#define NJOBS	(NSEQ * (1 + DECODE))
#define TOPK	4
#define REC	WFW_OUT_REC_SIZE(TOPK)
#define OUT	((size_t)NSEQ * NPOS * REC)

/**
 * struct mdl - one model file and what it gives alone
 * @what: its name
 * @blob: the packed file
 * @len: its bytes
 * @id: its model id on the device under test
 * @ctx: its context there
 * @out: the records of the latest run
 * @ns: the latest run's modelled latency of each job
 * @alone: the records alone on a device
 * @alone_ns: the latencies alone, one job at a time
 */
struct mdl {
	const char *what;
	void *blob;
	size_t len;
	u32 id;
	u32 ctx;
	u8 *out;
	u64 ns[NJOBS];
	u8 *alone;
	u64 alone_ns[NJOBS];
};

static u32 *tokens;	/* NSEQ x NPOS, registered with every device */

static int dev_open(struct dh *h, u32 stages, u32 sram_kib)
{
	struct wfs_device_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.numa_node = -1;
	cfg.profile = "asic";
	cfg.stages = stages;
	cfg.sram_bytes = (u64)sram_kib << 10;
	if (dh_init(h, &cfg, 64, 64))
		return -1;
	dh_region_add(h, tokens, (u64)NSEQ * NPOS * 4);
	return 0;
}

/* LOAD_MODEL of @m (its id in @m->id) and a context of NSEQ slots. */
static int load(struct dh *h, struct mdl *m, struct wfw_cpl *cpl)
{
	struct wfw_cmd c;

	dh_region_add(h, m->blob, m->len);
	dh_region_add(h, m->out, OUT);
	if (dh_load(h, m->blob, m->len, cpl))
		return cpl->status;
	m->id = cpl->model;
	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_CREATE_CONTEXT;
	c.model = m->id;
	c.ctx.slots = NSEQ;
	c.ctx.ctx_len = NPOS;
	if (dh_exec(h, &c, cpl, 10000) || cpl->status || cpl->model != m->id)
		return -1;
	m->ctx = cpl->result0;
	return 0;
}

/* DESTROY_CONTEXT and UNLOAD_MODEL of @m; 0 or the first error. */
static int unload(struct dh *h, struct mdl *m)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl;

	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_DESTROY_CONTEXT;
	c.ctx.ctx_id = m->ctx;
	if (dh_exec(h, &c, &cpl, 10000) || cpl.status)
		return -1;
	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_UNLOAD_MODEL;
	c.model = m->id;
	if (dh_exec(h, &c, &cpl, 10000))
		return -1;
	return cpl.status;
}

/* Job @k of @m: a prefill per slot, then single tokens. */
static void job_cmd(struct mdl *m, u32 k, struct wfw_cmd *c)
{
	u32 j = k / NSEQ, s = k % NSEQ;
	u32 pos = j ? PREFILL + j - 1 : 0, n = j ? 1 : PREFILL;

	dh_job_cmd(c, m->ctx, s, pos, n, &tokens[s * NPOS + pos],
		   m->out + ((size_t)s * NPOS + pos) * REC, n * REC, TOPK,
		   j ? 0 : WFW_JOB_ALL_POSITIONS, ((u64)m->id << 16) | k);
}

/* @m's jobs one at a time; failed jobs. */
static int run_seq(struct dh *h, struct mdl *m)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl;
	int bad = 0;
	u32 k;

	memset(m->out, 0, OUT);
	for (k = 0; k < NJOBS; k++) {
		job_cmd(m, k, &c);
		bad += dh_exec(h, &c, &cpl, 20000) || cpl.status;
		m->ns[k] = cpl.device_ns;
	}
	return bad;
}

/* Both models' jobs, alternately, all in flight; failed jobs. */
static int run_both(struct dh *h, struct mdl *a, struct mdl *b)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl;
	int bad = 0, done = 0;
	u32 k;

	memset(a->out, 0, OUT);
	memset(b->out, 0, OUT);
	for (k = 0; k < NJOBS; k++) {
		job_cmd(a, k, &c);
		bad += !!dh_submit(h, &c);
		job_cmd(b, k, &c);
		bad += !!dh_submit(h, &c);
	}
	while (done < 2 * NJOBS && dh_poll(h, &cpl, 20000)) {
		bad += !!cpl.status;
		done++;
	}
	return bad + 2 * NJOBS - done;
}

static int same(const struct mdl *m)
{
	return !memcmp(m->out, m->alone, OUT);
}

static int same_ns(const struct mdl *m)
{
	return !memcmp(m->ns, m->alone_ns, sizeof(m->ns));
}

/* Each model alone on asic/4 x 1 MiB, one job at a time. */
static int alone(struct mdl *m)
{
	struct dh *h = calloc(1, sizeof(*h));
	struct wfw_cpl cpl;
	int ret = -1;

	if (h && !dev_open(h, 0, 0) && !load(h, m, &cpl) && !run_seq(h, m)) {
		memcpy(m->alone, m->out, OUT);
		memcpy(m->alone_ns, m->ns, sizeof(m->ns));
		ret = 0;
	}
	if (h && h->dev)
		dh_fini(h);
	free(h);
	return ret;
}

/* The records of the alone run against the in-process reference. */
static int reference_diffs(const struct mdl *m)
{
	struct wfs_topk_entry tk[TOPK];
	struct wt_model w;
	int s, p, bad = 0;

	for (s = 0; s < NSEQ; s++) {
		if (wt_model_open(&w, m->blob, m->len, NPOS, 0))
			return -1;
		for (p = 0; p < NPOS; p++) {
			const struct wfw_out_rec *r = (const struct wfw_out_rec *)
				(m->alone + ((size_t)s * NPOS + p) * REC);
			u32 am = wt_model_step(&w, tokens[s * NPOS + p], (u32)p, TOPK, tk);

			bad += r->argmax != am || r->topk[0].token != tk[0].token ||
			       r->topk[0].logit != tk[0].logit;
		}
		wt_model_close(&w);
	}
	return bad;
}

/* Stage 0's SRAM map of @model: entries, and how many start "m1.". */
static int sram_map(struct dh *h, u32 model, u32 *m1, u64 *bytes)
{
	static struct wfw_sram_entry e[256];
	struct wfw_cpl cpl;
	u32 i;

	if (dh_read_cmd(h, WFW_OP_GET_SRAM_MAP, model, 0, e, sizeof(e), &cpl))
		cpl.result0 = 0;
	for (i = 0, *m1 = 0; i < cpl.result0; i++)
		*m1 += !strncmp(e[i].name, "m1.", 3);
	*bytes = cpl.value;
	return (int)cpl.result0;
}

/* GET_INFO and the SRAM map of each model, and the device's. */
static void info_and_map(struct dh *h, const struct mdl *a, const struct mdl *b)
{
	struct wfw_info ia, ib, i0;
	u32 ma, mb, m0;
	u64 ba, bb, b0;
	int na, nb, n0;

	na = dh_info_model(h, a->id, &ia) || dh_info_model(h, b->id, &ib) ||
	     dh_info_model(h, 0, &i0);
	wt_ok(!na && ia.models == 2 && ia.model_id == a->id && ib.model_id == b->id &&
	      i0.model_id == a->id && ia.max_slots_at_max_ctx && ib.max_slots_at_max_ctx &&
	      ia.stages_used && ib.stages_used && ia.vocab == ib.vocab,
	      "GET_INFO per model: 2 models, ids 0x%x 0x%x (model 0: the first), %u and %u stages",
	      ia.model_id, ib.model_id, ia.stages_used, ib.stages_used);
	na = sram_map(h, a->id, &ma, &ba);
	nb = sram_map(h, b->id, &mb, &bb);
	n0 = sram_map(h, 0, &m0, &b0);
	wt_ok(na > 0 && nb > 0 && !ma && mb == (u32)nb && m0 == mb && n0 == na + nb &&
	      b0 == ba + bb,
	      "SRAM map of stage 0 per model: %d + %d blocks (the second's named m1.*), %llu + %llu bytes = the stage's %llu",
	      na, nb, (unsigned long long)ba, (unsigned long long)bb, (unsigned long long)b0);
}

/* GET_STATS of stage 0 for @model: its status; @ss the record. */
static int stats_of(struct dh *h, u32 model, struct wfw_stage_stats *ss)
{
	struct wfw_cpl cpl;

	return dh_read_cmd(h, WFW_OP_GET_STATS, model, 0, ss, sizeof(*ss), &cpl);
}

/* GET_STATS per model: each model's layers on stage 0, one stage's counters. */
static void stats(struct dh *h, const struct mdl *a, const struct mdl *b)
{
	struct wfw_stage_stats sa, sb;
	int bad = stats_of(h, b->id + (1u << WFW_MODEL_IDX_BITS), &sb);
	int ra = stats_of(h, a->id, &sa), rb = stats_of(h, b->id, &sb);

	wt_ok(!ra && !rb && bad == -ENOENT && sa.n_layers && sb.n_layers &&
	      (sa.flags & WFW_STAGE_EMBED) && (sb.flags & WFW_STAGE_EMBED) &&
	      sa.chunks == sb.chunks && sa.sram_used == sb.sram_used,
	      "GET_STATS per model: stage 0 holds %u and %u layers of each, the stage's counters "
	      "shared; a stale id -> %d (-ENOENT)", sa.n_layers, sb.n_layers, bad);
}

/* WFW_MAX_MODELS models at once, and -EBUSY for one more. */
static void most_models(struct mdl *m)
{
	struct dh *h = calloc(1, sizeof(*h));
	struct wfw_cpl cpl;
	u32 ids[WFW_MAX_MODELS + 1];
	struct wfw_info info;
	int i, n = 0, ret, un = 0;

	if (!h || dev_open(h, 0, 4096))
		goto out;
	dh_region_add(h, m->blob, m->len);
	for (i = 0; i < WFW_MAX_MODELS; i++) {
		n += !dh_load(h, m->blob, m->len, &cpl);
		ids[i] = cpl.model;
	}
	ret = dh_load(h, m->blob, m->len, &cpl);
	dh_info(h, &info);
	wt_ok(n == WFW_MAX_MODELS && ret == -EBUSY && info.models == WFW_MAX_MODELS,
	      "%d models of %s on asic/4 x 4 MiB, one more -> %d (-EBUSY)", n, m->what, ret);
	for (i = 0; i < n; i++) {
		struct wfw_cmd c;

		memset(&c, 0, sizeof(c));
		c.opcode = WFW_OP_UNLOAD_MODEL;
		c.model = ids[i];
		un += !dh_exec(h, &c, &cpl, 10000) && !cpl.status;
	}
	wt_ok(un == n && !dh_info(h, &info) && !info.models && !info.sram_used,
	      "all %d unloaded by id: no SRAM used", un);
out:
	if (h && h->dev)
		dh_fini(h);
	free(h);
}

/* Wrong model ids: another model's on a context, a stale one, model 0 of two. */
static void bad_ids(struct dh *h, struct mdl *a, const struct mdl *b)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl;
	struct wfw_info info;
	int st;

	job_cmd(a, 0, &c);
	c.model = b->id;
	st = dh_exec(h, &c, &cpl, 10000) ? -ETIMEDOUT : cpl.status;
	wt_ok(st == -EINVAL, "RUN_JOB naming the other model than its context's -> %d (-EINVAL)",
	      st);
	job_cmd(a, 0, &c);
	c.model = a->id;
	st = dh_exec(h, &c, &cpl, 10000) ? -ETIMEDOUT : cpl.status;
	wt_ok(st == 0, "RUN_JOB naming its context's model -> %d", st);
	st = dh_info_model(h, a->id + (1u << WFW_MODEL_IDX_BITS), &info);
	wt_ok(st == -ENOENT, "GET_INFO of a stale model id -> %d (-ENOENT)", st);
	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_UNLOAD_MODEL;
	st = dh_exec(h, &c, &cpl, 10000) ? -ETIMEDOUT : cpl.status;
	wt_ok(st == -EINVAL, "UNLOAD_MODEL of model 0 with two loaded -> %d (-EINVAL)", st);
	c.model = a->id;
	st = dh_exec(h, &c, &cpl, 10000) ? -ETIMEDOUT : cpl.status;
	wt_ok(st == -EBUSY, "UNLOAD_MODEL of a model with a context -> %d (-EBUSY)", st);
}

/* GET_INFO's index lists the models: @a, @b, then none. */
static void list_models(struct dh *h, const struct mdl *a, const struct mdl *b)
{
	struct wfw_info i0, i1, i2;
	struct wfw_cpl cpl;
	int ok;

	ok = !dh_read_cmd(h, WFW_OP_GET_INFO, 0, 0, &i0, sizeof(i0), &cpl) &&
	     !dh_read_cmd(h, WFW_OP_GET_INFO, 0, 1, &i1, sizeof(i1), &cpl) &&
	     !dh_read_cmd(h, WFW_OP_GET_INFO, 0, 2, &i2, sizeof(i2), &cpl);
	wt_ok(ok && i0.model_id == a->id && i1.model_id == b->id && !i2.model_id &&
	      !i2.model_loaded && i2.models == 2,
	      "GET_INFO index 0, 1, 2: models 0x%x, 0x%x, none (of %u)", i0.model_id,
	      i1.model_id, i2.models);
}

/*
 * UNLOAD_MODEL with WFW_UNLOAD_CONTEXTS while @a's jobs are in flight:
 * they complete (as DESTROY_CONTEXT, the unload waits for them to retire;
 * their completions may be posted after its own), its context goes, then
 * the model; @b runs on as alone.
 */
static void unload_contexts(struct dh *h, struct mdl *a, struct mdl *b)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl;
	int bad = 0, done = 0, st = -1;
	u32 k, n = 0;

	for (k = 0; k < NJOBS; k++) {
		job_cmd(a, k, &c);
		bad += !!dh_submit(h, &c);
	}
	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_UNLOAD_MODEL;
	c.model = a->id;
	c.unload.flags = WFW_UNLOAD_CONTEXTS;
	c.cookie = 0x55;
	bad += !!dh_submit(h, &c);
	while (done < NJOBS + 1 && dh_poll(h, &cpl, 20000)) {
		done++;
		if (cpl.opcode == WFW_OP_UNLOAD_MODEL) {
			/* After every job retired (its completion may follow). */
			st = cpl.status;
			n = cpl.result0;
		} else {
			bad += !!cpl.status;
		}
	}
	bad += done != NJOBS + 1;
	wt_ok(!bad && st == 0 && n == 1 && same(a),
	      "UNLOAD_MODEL with WFW_UNLOAD_CONTEXTS, %d jobs in flight: they complete as "
	      "alone, then 1 context and the model go (%d, %u)", NJOBS, st, n);
	wt_ok(!run_seq(h, b) && same(b) && same_ns(b), "the other model runs on as alone");
}

/* Both loaded: in flight together and one at a time, each as alone. */
static void side_by_side(struct mdl *a, struct mdl *b, int workers)
{
	struct dh *h = calloc(1, sizeof(*h));
	struct wfw_cpl cpl;
	int bad;

	dh_stage_workers = workers;
	bad = !h || dev_open(h, 0, 0) || load(h, a, &cpl) || load(h, b, &cpl);
	if (!wt_ok(!bad && a->id != b->id, "workers %d: %s and %s loaded side by side (0x%x, 0x%x)",
		   workers, a->what, b->what, a->id, b->id))
		goto out;
	bad = run_both(h, a, b);
	wt_ok(!bad && same(a) && same(b),
	      "workers %d: both models' jobs in flight together: every record as alone (%d failed)",
	      workers, bad);
	bad = run_seq(h, b) + run_seq(h, a);
	wt_ok(!bad && same(a) && same(b) && same_ns(a) && same_ns(b),
	      "workers %d: one at a time next to the other: records and modelled latencies as alone",
	      workers);
	if (workers == DH_WORKERS_DEFAULT) {
		info_and_map(h, a, b);
		stats(h, a, b);
		list_models(h, a, b);
		bad_ids(h, a, b);
		unload_contexts(h, a, b);
	}
out:
	if (h && h->dev)
		dh_fini(h);
	free(h);
	dh_stage_workers = DH_WORKERS_DEFAULT;
}

/* Unload @x first: @y runs on as alone; @x loaded again gets a new id. */
static void unload_order(struct mdl *x, struct mdl *y)
{
	struct dh *h = calloc(1, sizeof(*h));
	struct wfw_info info;
	struct wfw_cpl cpl;
	u32 old;
	int bad;

	if (!wt_ok(h && !dev_open(h, 0, 0) && !load(h, y, &cpl) && !load(h, x, &cpl) &&
		   !run_both(h, x, y), "%s then %s loaded, run together", y->what, x->what))
		goto out;
	old = x->id;
	bad = unload(h, x) || run_seq(h, y) || dh_info_model(h, 0, &info);
	wt_ok(!bad && same(y) && same_ns(y) && info.models == 1 && info.model_id == y->id,
	      "%s unloaded first (%d): %s runs on, records and latencies as alone", x->what, bad,
	      y->what);
	bad = load(h, x, &cpl) || run_both(h, x, y);
	wt_ok(!bad && x->id != old && same(x) && same(y),
	      "%s loaded again: new id 0x%x (was 0x%x), both as alone", x->what, x->id, old);
	bad = unload(h, y) || run_seq(h, x);
	wt_ok(!bad && same(x) && same_ns(x),
	      "then %s unloaded: %s runs on as alone", y->what, x->what);
	bad = unload(h, x) || dh_info_model(h, 0, &info);
	wt_ok(!bad && !info.models && !info.model_loaded &&
	      !(dh_rd(h, WFW_REG_STATUS) & WFW_STATUS_MODEL) && !info.sram_used,
	      "both unloaded: no model, no SRAM used (%llu)", (unsigned long long)info.sram_used);
out:
	if (h && h->dev)
		dh_fini(h);
	free(h);
}

/* The smallest one-stage asic (in 32 KiB steps) that holds @m alone. */
static u32 min_kib(struct mdl *m)
{
	struct wfw_cpl cpl;
	u32 kib;
	int ret;

	for (kib = 128; kib <= 2048; kib += 32) {
		struct dh *h = calloc(1, sizeof(*h));

		ret = h && !dev_open(h, 1, kib) ? load(h, m, &cpl) : -1;
		if (h && h->dev)
			dh_fini(h);
		free(h);
		if (!ret)
			return kib;
	}
	return 0;
}

/* @b next to @a where only @a fits: -ENOSPC saying what, @a runs on. */
static void exhaustion(struct mdl *a, struct mdl *b)
{
	static char log[16384];
	struct dh *h = calloc(1, sizeof(*h));
	u32 kib = min_kib(a), m1;
	struct wfw_info info;
	struct wfw_cpl cpl;
	char id[16];
	u64 bytes;
	int ret;

	if (!wt_ok(kib && h && !dev_open(h, 1, kib) && !load(h, a, &cpl),
		   "%s alone on asic/1 x %u KiB", a->what, kib))
		goto out;
	ret = load(h, b, &cpl);
	dh_read_log(h, log, sizeof(log));
	snprintf(id, sizeof(id), "0x%x", a->id);
	wt_ok(ret == -ENOSPC && cpl.value && cpl.result1 < kib && strstr(log, "does not fit") &&
	      strstr(log, "needs") && strstr(log, "1 other model(s) loaded") && strstr(log, id),
	      "%s next to it: -ENOSPC (%d), needs %llu bytes, %u KiB per stage left of %u, the log names the other model",
	      b->what, ret, (unsigned long long)cpl.value, cpl.result1, kib);
	wt_diag("log: %s", strstr(log, "load: model does not fit") ?
		strstr(log, "load: model does not fit") : log);
	ret = run_seq(h, a) || dh_info_model(h, 0, &info) ||
	      sram_map(h, 0, &m1, &bytes) <= 0;
	wt_ok(!ret && same(a) && info.models == 1 && !m1,
	      "after the failed load: %s runs on as alone, one model, none of the other's blocks left",
	      a->what);
out:
	if (h && h->dev)
		dh_fini(h);
	free(h);
}

static int pack(const struct wfs_ckpt *c, u32 bits, u32 group, struct mdl *m,
		const char *what)
{
	struct wfs_pack_opts o = { .wbits = bits, .group_size = group };

	memset(m, 0, sizeof(*m));
	m->what = what;
	m->out = dh_alloc(OUT);
	m->alone = malloc(OUT);
	return m->out && m->alone ? wfs_pack(c, &o, &m->blob, &m->len) : -1;
}

int main(void)
{
	const char *path = wt_model_path("stories260K.bin");
	struct mdl a, b;
	struct wfs_ckpt c;
	struct wt_rng r;
	int i;

	if (!wt_ok(path && wfs_ckpt_load(path, &c) == 0, "load %s",
		   path ? path : "stories260K.bin"))
		return wt_done();
	if (!wt_ok(!pack(&c, 8, 64, &a, "int8") && !pack(&c, 4, 32, &b, "int4"),
		   "pack int8 and int4"))
		return wt_done();
	tokens = dh_alloc((size_t)NSEQ * NPOS * 4);
	wt_rng_seed(&r, 11);
	for (i = 0; i < NSEQ * NPOS; i++)
		tokens[i] = i % NPOS ? (u32)wt_rng_range(&r, 3, c.vocab_size - 1) : 1;
	if (!wt_ok(!alone(&a) && !alone(&b) && !reference_diffs(&a) && !reference_diffs(&b),
		   "each alone on asic/4 x 1 MiB equals the in-process reference"))
		return wt_done();
	side_by_side(&a, &b, DH_WORKERS_DEFAULT);
	side_by_side(&a, &b, 0);
	unload_order(&a, &b);
	unload_order(&b, &a);
	exhaustion(&a, &b);
	exhaustion(&b, &a);
	most_models(&b);
	wfs_ckpt_free(&c);
	return wt_done();
}
