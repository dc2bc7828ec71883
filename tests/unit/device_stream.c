// SPDX-License-Identifier: MIT
/*
 * device_stream.c - weight streaming (LOAD_MODEL with WFW_LOAD_STREAM).
 *
 * The shared model (stories260K, packed int8 and int4) on devices whose
 * SRAM cannot hold it resident (-ENOSPC without the flag): with the
 * weights streamed from host memory it loads, and 16 sequences in flight
 * (a prefill crossing chunk boundaries, then single-token jobs, all queued
 * at once) and the same jobs one at a time give records bit-identical to
 * the in-process reference and to the resident run of a larger device.
 * GET_INFO says the weights stream; the chunks in flight share streaming
 * passes (fewer passes than chunks, more modelled tokens/s than one at a
 * time); a device too small even for the window still says -ENOSPC;
 * forced streaming on a device where the model fits costs modelled time,
 * each stage's time of a lone token equal to the pass computed by hand
 * (s0 + sum max(c_l, s_l+1), wfs_timing.h).
 */
#include "device_harness.h"
#include "wfs_pack.h"
#include "wfs_timing.h"
#include "wt_model.h"
#include "wt_util.h"

#define NSEQ	16
#define PREFILL	17	/* > one 16-token chunk */
#define DECODE	3
#define NPOS	(PREFILL + DECODE)
#define CTX	NPOS
#define TOPK	4
#define REC	WFW_OUT_REC_SIZE(TOPK)

/**
 * struct run - one device run
 * @info: GET_INFO after the jobs
 * @out: NSEQ * NPOS output records
 * @bad: failed commands
 */
struct run {
	struct wfw_info info;
	u8 *out;
	int bad;
};

static u32 tokens[NSEQ][NPOS];
static u32 ref_argmax[NSEQ * NPOS];
static struct wfs_topk_entry ref_topk[NSEQ * NPOS * TOPK];

/* Records that differ from the reference. */
static int ref_diffs(const u8 *out)
{
	int i, bad = 0;

	for (i = 0; i < NSEQ * NPOS; i++) {
		const struct wfw_out_rec *r = (const struct wfw_out_rec *)(out + (size_t)i * REC);
		const struct wfs_topk_entry *t = &ref_topk[i * TOPK];

		bad += r->pos != (u32)(i % NPOS) || r->k != TOPK || r->argmax != ref_argmax[i] ||
		       r->argmax_logit != t->logit || memcmp(r->topk, t, TOPK * sizeof(*t));
	}
	return bad;
}

static int dev_open(struct dh *h, const char *profile, u32 stages, u32 sram_kib)
{
	struct wfs_device_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	cfg.numa_node = -1;
	cfg.profile = profile;
	cfg.stages = stages;
	cfg.sram_bytes = (u64)sram_kib << 10;
	return dh_init(h, &cfg, 64, 64);
}

/* LOAD_MODEL's status on a fresh device of that shape. */
static int load_status(const char *profile, u32 stages, u32 sram_kib, void *blob,
		       size_t len, u32 flags)
{
	struct dh *h = calloc(1, sizeof(*h));
	struct wfw_cpl cpl = { 0 };
	int ret = -ENOMEM;

	if (h && !dev_open(h, profile, stages, sram_kib)) {
		dh_region_add(h, blob, len);
		ret = dh_load_flags(h, blob, len, flags, &cpl);
		dh_fini(h);
	}
	free(h);
	return ret;
}

/* Submit every job (in flight: before waiting for any); wait for them all. */
static void run_jobs(struct dh *h, u32 ctx, u32 *in, u8 *out, int in_flight,
		     struct run *r)
{
	int s, j, done = 0, total = NSEQ * (1 + DECODE);
	struct wfw_cpl cpl;

	for (j = 0; j <= DECODE; j++) {
		for (s = 0; s < NSEQ; s++) {
			u32 pos = j ? PREFILL + j - 1 : 0, n = j ? 1 : PREFILL;
			struct wfw_cmd c;

			dh_job_cmd(&c, ctx, (u32)s, pos, n, &in[s * NPOS + pos],
				   out + ((size_t)s * NPOS + pos) * REC, n * REC, TOPK,
				   j ? 0 : WFW_JOB_ALL_POSITIONS, ((u64)s << 8) | (u64)j);
			r->bad += !!dh_submit(h, &c);
			if (in_flight)
				continue;
			r->bad += !dh_poll(h, &cpl, 20000) || cpl.status;
			done++;
		}
	}
	while (done < total && dh_poll(h, &cpl, 20000)) {
		r->bad += cpl.status || cpl.opcode != WFW_OP_RUN_JOB;
		done++;
	}
	r->bad += done != total;
}

static int run_device(const char *profile, u32 stages, u32 sram_kib, void *blob,
		      size_t len, u32 flags, int in_flight, struct run *r)
{
	struct dh *h = calloc(1, sizeof(*h));
	u32 *in = dh_alloc(sizeof(tokens));
	struct wfw_cpl cpl = { 0 };
	int64_t ctx;

	memset(r, 0, sizeof(*r));
	r->out = dh_alloc((size_t)NSEQ * NPOS * REC);
	if (!h || !in || !r->out || dev_open(h, profile, stages, sram_kib))
		return -1;
	memcpy(in, tokens, sizeof(tokens));
	dh_region_add(h, blob, len);
	dh_region_add(h, in, sizeof(tokens));
	dh_region_add(h, r->out, (size_t)NSEQ * NPOS * REC);
	if (dh_load_flags(h, blob, len, flags, &cpl)) {
		wt_diag("load failed: %d", cpl.status);
		return -1;
	}
	ctx = dh_ctx_create(h, NSEQ, CTX, &cpl);
	if (ctx < 0) {
		wt_diag("context failed: %lld", (long long)ctx);
		return -1;
	}
	run_jobs(h, (u32)ctx, in, r->out, in_flight, r);
	dh_info(h, &r->info);
	wt_diag("%s/%u x %u KiB, %s, %s: modelled %llu tokens/s, %llu streaming passes",
		profile, stages, sram_kib, flags ? "streaming" : "resident",
		in_flight ? "16 in flight" : "one at a time",
		(unsigned long long)r->info.modelled_tokens_per_s,
		(unsigned long long)r->info.stream_passes);
	dh_fini(h);
	free(h);
	free(in);
	return 0;
}

/* Passes of one stage one job at a time: a prefill's two chunks share one. */
#define CHUNKS_PER_STAGE	(NSEQ * (1 + DECODE))

/*
 * One at a time on a pool of one stage worker: the same records, and the
 * same modelled timeline and passes as the default workers.
 */
static void pool_of_one(const char *what, void *blob, size_t len, u32 stages, u32 kib,
			const struct run *seq)
{
	struct run p1;
	int ret;

	dh_stage_workers = 1;
	ret = run_device("asic", stages, kib, blob, len, WFW_LOAD_STREAM, 0, &p1);
	dh_stage_workers = DH_WORKERS_DEFAULT;
	wt_ok(!ret && !p1.bad && !memcmp(p1.out, seq->out, (size_t)NSEQ * NPOS * REC) &&
	      p1.info.modelled_makespan_ns == seq->info.modelled_makespan_ns &&
	      p1.info.stream_passes == seq->info.stream_passes,
	      "%s: streaming one at a time on a pool of one worker: the same records, "
	      "makespan %llu ns and %llu passes", what,
	      (unsigned long long)p1.info.modelled_makespan_ns,
	      (unsigned long long)p1.info.stream_passes);
	free(p1.out);
}

static void small_device(const char *what, void *blob, size_t len, u32 stages,
			 u32 kib, const u8 *resident)
{
	struct run fl, seq;
	size_t bytes = (size_t)NSEQ * NPOS * REC;

	wt_ok(load_status("asic", stages, kib, blob, len, 0) == -ENOSPC,
	      "%s: asic/%u x %u KiB cannot hold the model resident (-ENOSPC)", what, stages, kib);
	if (!wt_ok(run_device("asic", stages, kib, blob, len, WFW_LOAD_STREAM, 1, &fl) == 0 &&
		   run_device("asic", stages, kib, blob, len, WFW_LOAD_STREAM, 0, &seq) == 0,
		   "%s: asic/%u x %u KiB streaming: loads, a context of %d slots", what, stages,
		   kib, NSEQ))
		return;
	wt_ok(!fl.bad && !seq.bad && !ref_diffs(fl.out) && !ref_diffs(seq.out),
	      "%s: streaming, %d sequences in flight and one at a time: every record equals the reference (%d, %d bad)",
	      what, NSEQ, ref_diffs(fl.out), ref_diffs(seq.out));
	wt_ok(!memcmp(fl.out, resident, bytes) && !memcmp(seq.out, resident, bytes),
	      "%s: streaming records bit-identical to the resident run", what);
	wt_ok(fl.info.model_flags & WFW_MODEL_STREAM && fl.info.stream_bytes_per_cycle,
	      "%s: GET_INFO says the weights stream (flags %#x, %u B/cycle)", what,
	      fl.info.model_flags, fl.info.stream_bytes_per_cycle);
	wt_ok(seq.info.stream_passes == (u64)CHUNKS_PER_STAGE * fl.info.stages_used &&
	      fl.info.stream_passes < seq.info.stream_passes,
	      "%s: one at a time each chunk streams (%llu passes), in flight chunks share passes (%llu)",
	      what, (unsigned long long)seq.info.stream_passes,
	      (unsigned long long)fl.info.stream_passes);
	wt_ok(fl.info.modelled_tokens_per_s > seq.info.modelled_tokens_per_s,
	      "%s: modelled tokens/s in flight %llu > one at a time %llu", what,
	      (unsigned long long)fl.info.modelled_tokens_per_s,
	      (unsigned long long)seq.info.modelled_tokens_per_s);
	pool_of_one(what, blob, len, stages, kib, &seq);
	free(fl.out);
	free(seq.out);
}

/* One single-token job on slot 0 of context @ctx: its completion status. */
static int one_job(struct dh *h, u32 ctx, u32 *in, u8 *out)
{
	struct wfw_cpl cpl = { 0 };
	struct wfw_cmd c;

	dh_job_cmd(&c, ctx, 0, 0, 1, in, out, REC, TOPK, 0, 99);
	if (dh_submit(h, &c) || !dh_poll(h, &cpl, 20000))
		return -ETIMEDOUT;
	return cpl.status;
}

/*
 * The weights are read from host memory at every pass: a blob the host
 * took away fails the job with -EFAULT, one whose layer changed under the
 * device (validated at each read) with -EIO; restored, jobs run again.
 */
static void host_memory(const char *what, void *blob, size_t len)
{
	struct dh *h = calloc(1, sizeof(*h));
	u32 *in = dh_alloc(64);
	u8 *out = dh_alloc(REC), *copy = dh_alloc(len);
	struct wfw_cpl cpl = { 0 };
	int64_t ctx;
	struct wfs_section_range sec;
	struct wfs_model_info mi;
	int gone, changed, back;

	if (!h || !in || !out || !copy || dev_open(h, "asic", 0, 0))
		return;
	memcpy(copy, blob, len);
	in[0] = 1;
	dh_region_add(h, copy, len);
	dh_region_add(h, in, 64);
	dh_region_add(h, out, REC);
	ctx = dh_load_flags(h, copy, len, WFW_LOAD_STREAM, &cpl) ? -1 :
	      dh_ctx_create(h, 1, CTX, &cpl);
	if (!wt_ok(ctx > 0, "%s: streaming load and a context", what))
		return;
	dh_region_del(h, copy);
	gone = one_job(h, (u32)ctx, in, out);
	dh_region_add(h, copy, len);
	/* Layer 0's section header. */
	if (wfs_model_parse(copy, len, &mi) || wfs_model_layer_section(&mi, copy, 0, &sec))
		sec.offset = 0;
	memset(copy + sec.offset, 0xa5, 8);
	changed = one_job(h, (u32)ctx, in, out);
	memcpy(copy, blob, len);
	back = one_job(h, (u32)ctx, in, out);
	wt_ok(gone == -EFAULT && changed == -EIO && back == 0,
	      "%s: blob gone from host memory -> %d (-EFAULT), a layer changed -> %d (-EIO), restored -> %d",
	      what, gone, changed, back);
	dh_fini(h);
	free(h);
	free(in);
	free(out);
	free(copy);
}

/* A stage's pass over @n layers from @first: s0 + sum max(c_l, s_l+1). */
static u64 hand_pass(const struct wfs_profile *p, const struct wfs_timing_dims *d,
		     const u64 *size, u32 first, u32 n)
{
	u64 cyc = wfs_timing_stream_layer_cycles(p, size[first]), c, next;
	u32 l;

	for (l = first; l < first + n; l++) {
		struct wfs_cost cost = { 0 };

		wfs_timing_layer_cost(p, d, size[l], 0, 1, &cost);
		c = wfs_timing_stage_cycles(p, &cost);
		next = l + 1 < first + n ? wfs_timing_stream_layer_cycles(p, size[l + 1]) : 0;
		cyc += c > next ? c : next;
	}
	return cyc;
}

/* Each stage's modelled time of one token at position 0, by hand. */
static void hand_stages(const void *blob, size_t len, u32 stages, u64 *ns)
{
	struct wfs_timing_dims d;
	struct wfs_model_info mi;
	struct wfs_section_range r;
	struct wfs_profile p;
	u64 size[WFS_MAX_LAYERS];
	u32 s, l, first = 0, n;

	wfs_profile_find("asic", &p);
	wfs_model_parse(blob, len, &mi);
	d = (struct wfs_timing_dims){ .dim = mi.dim, .kv_dim = mi.kv_dim,
		.hidden_dim = mi.hidden_dim, .vocab = mi.vocab_size,
		.act_bytes = (u32)wfs_act_bytes(&mi), .kv_pos_bytes = wfs_kv_stride(&mi) };
	for (l = 0; l < mi.n_layers; l++)
		size[l] = wfs_model_layer_section(&mi, blob, l, &r) ? 0 : r.size;
	for (s = 0; s < stages; s++, first += n) {
		struct wfs_cost c = { 0 };

		/* Balanced placement: the first L mod S stages take one more. */
		n = mi.n_layers / stages + (s < mi.n_layers % stages);
		if (!s)
			wfs_timing_embed_cost(&d, 1, &c);
		if (s == stages - 1)
			wfs_timing_head_cost(&p, &d, mi.head.size, 1, &c);
		ns[s] = wfs_timing_ns(&p, wfs_timing_stage_cycles(&p, &c) +
				      hand_pass(&p, &d, size, first, n));
	}
}

/* One token, streamed on asic/4: its chunk times against hand_stages(). */
static void pass_by_hand(const char *what, void *blob, size_t len)
{
	struct dh *h = calloc(1, sizeof(*h));
	u32 *in = dh_alloc(64), at = (REC + 7) & ~7u, s, bad = 0;
	u8 *out = dh_alloc(at + 4 * sizeof(struct wfw_chunk_time));
	const struct wfw_chunk_time *t = (const void *)(out + at);
	struct wfw_cpl cpl = { 0 };
	struct wfw_cmd c;
	u64 want[4];
	int64_t ctx;

	if (!h || !in || !out || dev_open(h, "asic", 0, 0))
		return;
	in[0] = 1;
	dh_region_add(h, blob, len);
	dh_region_add(h, in, 64);
	dh_region_add(h, out, at + 4 * sizeof(*t));
	ctx = dh_load_flags(h, blob, len, WFW_LOAD_STREAM, &cpl) ? -1 :
	      dh_ctx_create(h, 1, CTX, &cpl);
	dh_job_cmd(&c, (u32)ctx, 0, 0, 1, in, out, at + 4 * sizeof(*t), TOPK, WFW_JOB_TIMES, 5);
	c.job.times_offset = at;
	c.job.times_len = 4 * sizeof(*t);
	if (!wt_ok(ctx > 0 && !dh_submit(h, &c) && dh_poll(h, &cpl, 20000) && !cpl.status,
		   "%s: one token streamed on asic/4 with its chunk times", what))
		return;
	hand_stages(blob, len, 4, want);
	for (s = 0; s < 4; s++)
		bad += t[s].stage != s || t[s].end_ns - t[s].start_ns != want[s];
	wt_ok(!bad, "%s: each stage's modelled time is its pass by hand: %llu %llu %llu %llu ns",
	      what, (unsigned long long)want[0], (unsigned long long)want[1],
	      (unsigned long long)want[2], (unsigned long long)want[3]);
	dh_fini(h);
	free(h);
	free(in);
	free(out);
}

/* Forced streaming where the model fits: same records, slower. */
static void forced(const char *what, void *blob, size_t len, const struct run *res)
{
	struct run st;

	if (!wt_ok(run_device("asic", 0, 0, blob, len, WFW_LOAD_STREAM, 0, &st) == 0,
		   "%s: forced streaming on asic/4 x 1 MiB loads", what))
		return;
	wt_ok(!st.bad && !memcmp(st.out, res->out, (size_t)NSEQ * NPOS * REC),
	      "%s: forced streaming: records bit-identical to the resident run", what);
	wt_ok(st.info.modelled_tokens_per_s < res->info.modelled_tokens_per_s &&
	      !(res->info.model_flags & WFW_MODEL_STREAM) && !res->info.stream_passes,
	      "%s: one at a time, streaming models fewer tokens/s (%llu) than resident (%llu)",
	      what, (unsigned long long)st.info.modelled_tokens_per_s,
	      (unsigned long long)res->info.modelled_tokens_per_s);
	free(st.out);
}

static void run_blob(const char *what, void *blob, size_t len, u32 vocab,
		     const u32 *kib)
{
	struct run res;

	wt_model_tokens(7, NSEQ, NPOS, vocab, &tokens[0][0]);
	if (!wt_ok(wt_model_reference(blob, len, CTX, &tokens[0][0], NSEQ, NPOS, TOPK,
				      ref_argmax, ref_topk) == 0, "%s: reference run", what))
		return;
	if (!wt_ok(run_device("asic", 0, 0, blob, len, 0, 0, &res) == 0 && !res.bad &&
		   !ref_diffs(res.out), "%s: resident on asic/4 x 1 MiB equals the reference", what))
		return;
	small_device(what, blob, len, 1, kib[0], res.out);
	if (kib[1])	/* int4 on two stages: resident fits where 16 slots do not */
		small_device(what, blob, len, 2, kib[1], res.out);
	forced(what, blob, len, &res);
	host_memory(what, blob, len);
	pass_by_hand(what, blob, len);
	wt_ok(load_status("asic", 1, 128, blob, len, WFW_LOAD_STREAM) == -ENOSPC,
	      "%s: asic/1 x 128 KiB cannot hold even the streaming window (-ENOSPC)", what);
	wt_ok(load_status("asic", 1, 128, blob, len, WFW_LOAD_STREAM << 1) == -EINVAL,
	      "%s: an unknown LOAD_MODEL flag is -EINVAL", what);
	free(res.out);
}

int main(void)
{
	const char *path = wt_model_path("stories260K.bin");
	struct wfs_pack_opts o8 = { .wbits = 8, .group_size = 64, .checksum = 1 };
	struct wfs_pack_opts o4 = { .wbits = 4, .group_size = 32 };
	static const u32 kib8[] = { 480, 304 }, kib4[] = { 352, 0 };
	struct wfs_ckpt c;
	void *blob;
	size_t len;

	if (!wt_ok(path && wfs_ckpt_load(path, &c) == 0, "load %s",
		   path ? path : "stories260K.bin"))
		return wt_done();
	if (wt_ok(wfs_pack(&c, &o8, &blob, &len) == 0, "pack int8")) {
		run_blob("int8", blob, len, (u32)c.vocab_size, kib8);
		free(blob);
	}
	if (wt_ok(wfs_pack(&c, &o4, &blob, &len) == 0, "pack int4")) {
		run_blob("int4", blob, len, (u32)c.vocab_size, kib4);
		free(blob);
	}
	wfs_ckpt_free(&c);
	return wt_done();
}
