// SPDX-License-Identifier: MIT
/*
 * device_pipeline.c - the pipeline with many sequences in flight gives
 * results identical to one-at-a-time execution.
 *
 * The shared model (stories260K, packed int8 and int4) runs on devices of
 * several shapes (wafer 16 stages = one layer per stage, asic 4 stages =
 * layers grouped, 2 stages, 1 stage).  Each of NSEQ sequences gets a
 * prefill job returning every position (crossing pipeline chunk
 * boundaries) followed by single-token jobs, all queued at once and
 * interleaved across sequences.  Every output record must equal the record
 * from (a) the in-process reference runner (tests/common/wt_model: one
 * sequence, token by token) and (b) the same device running the jobs one at
 * a time.  All of it with the stages on one worker each and on pools of 1
 * and 2 workers (a pool that ran a stage's chunks out of FIFO order would
 * leave a later position without the KV entries it attends to); one at a
 * time, the modelled figures are the same in every mode.
 */
#include "device_harness.h"
#include "wfs_pack.h"
#include "wt_model.h"
#include "wt_util.h"

#define NSEQ	12
#define PREFILL	21	/* > one 16-token chunk */
#define DECODE	9
#define NPOS	(PREFILL + DECODE)
#define CTX	64
#define TOPK	8
#define REC	WFW_OUT_REC_SIZE(TOPK)

static u32 tokens[NSEQ][NPOS];
static u32 ref_argmax[NSEQ * NPOS];
static struct wfs_topk_entry ref_topk[NSEQ * NPOS * TOPK];

/* Compare one output record against the reference. */
static int rec_ok(const u8 *rec, int s, u32 pos)
{
	const struct wfw_out_rec *r = (const struct wfw_out_rec *)rec;
	const struct wfs_topk_entry *t = &ref_topk[((u32)s * NPOS + pos) * TOPK];

	if (r->pos != pos || r->k != TOPK || r->argmax != ref_argmax[(u32)s * NPOS + pos] ||
	    r->argmax_logit != t->logit)
		return 0;
	return !memcmp(r->topk, t, TOPK * sizeof(*t));
}

/*
 * Jobs per sequence: job 0 = prefill (all positions), jobs 1..DECODE = one
 * token each.  Output: per sequence NPOS records.
 */
static int run_device(const char *profile, u32 stages, void *blob, size_t len,
		      int in_flight, double *secs, u64 *tps, u64 *span)
{
	struct wfs_device_config cfg;
	struct dh *h = calloc(1, sizeof(*h));
	u8 *out = dh_alloc((size_t)NSEQ * NPOS * REC);
	u32 *in = dh_alloc(sizeof(tokens));
	struct wfw_info info;
	struct wfw_cpl cpl;
	int64_t ctx;
	int s, j, bad = 0, done = 0, total = NSEQ * (1 + DECODE);
	double t0;

	memset(&cfg, 0, sizeof(cfg));
	cfg.numa_node = -1;
	cfg.profile = profile;
	cfg.stages = stages;
	if (dh_init(h, &cfg, 64, 64))
		return -1;
	memcpy(in, tokens, sizeof(tokens));
	dh_region_add(h, blob, len);
	dh_region_add(h, in, sizeof(tokens));
	dh_region_add(h, out, (size_t)NSEQ * NPOS * REC);
	if (dh_load(h, blob, len, &cpl)) {
		wt_diag("load failed: %d", cpl.status);
		return -1;
	}
	ctx = dh_ctx_create(h, NSEQ, CTX, &cpl);
	if (ctx < 0)
		return -1;

	t0 = wt_now();
	/* Submission order: all prefills, then decode step j of every seq. */
	for (j = 0; j <= DECODE; j++) {
		for (s = 0; s < NSEQ; s++) {
			struct wfw_cmd c;
			u32 pos = j ? PREFILL + j - 1 : 0, n = j ? 1 : PREFILL;

			dh_job_cmd(&c, (u32)ctx, (u32)s, pos, n,
				   &in[s * NPOS + pos], out + ((size_t)s * NPOS + pos) * REC,
				   n * REC, TOPK, j ? 0 : WFW_JOB_ALL_POSITIONS,
				   ((u64)s << 8) | (u64)j);
			if (dh_submit(h, &c))
				bad++;
			if (!in_flight) {
				if (!dh_poll(h, &cpl, 20000) || cpl.status)
					bad++;
				done++;
			}
		}
	}
	while (done < total && dh_poll(h, &cpl, 20000)) {
		if (cpl.status || cpl.opcode != WFW_OP_RUN_JOB)
			bad++;
		done++;
	}
	*secs = wt_now() - t0;
	if (done != total)
		bad++;

	for (s = 0; s < NSEQ; s++) {
		for (j = 0; j < NPOS; j++)
			bad += !rec_ok(out + ((size_t)s * NPOS + j) * REC, s, (u32)j);
	}
	dh_info(h, &info);
	*tps = info.modelled_tokens_per_s;
	*span = info.modelled_makespan_ns;
	wt_diag("%s/%u stages (%u used), stage_workers %d: %s: %.1f ms host, modelled %llu tokens/s, makespan %llu ns",
		info.profile_name, info.num_stages, info.stages_used,
		dh_stage_workers, in_flight ? "all in flight" : "one at a time", *secs * 1e3,
		(unsigned long long)info.modelled_tokens_per_s,
		(unsigned long long)info.modelled_makespan_ns);
	dh_fini(h);
	free(h);
	free(out);
	free(in);
	return bad;
}

/* The stages on one worker each, then on pools of 1 and 2 workers. */
static const int modes[] = { WFS_STAGE_WORKERS_PER_STAGE, 1, 2 };

/*
 * One shape in every mode: records equal the reference in flight and one
 * at a time; one at a time (a modelled timeline the host's timing cannot
 * change), the modelled figures equal one worker per stage's.
 */
static void run_shape(const char *what, void *blob, size_t len,
		      const char *profile, u32 stages)
{
	u64 tps_seq, tps_par, span, tps0 = 0, span0 = 0;
	unsigned int m;
	double secs;
	int bad;

	for (m = 0; m < WFS_ARRAY_SIZE(modes); m++) {
		dh_stage_workers = modes[m];
		bad = run_device(profile, stages, blob, len, 1, &secs, &tps_par,
				 &span);
		wt_ok(bad == 0,
		      "%s on %s/%u, stage_workers %d: %d sequences in flight: every record equals the reference (%d bad)",
		      what, profile, stages, modes[m], NSEQ, bad);
		bad = run_device(profile, stages, blob, len, 0, &secs, &tps_seq,
				 &span);
		wt_ok(bad == 0,
		      "%s on %s/%u, stage_workers %d: one job at a time: every record equals the reference (%d bad)",
		      what, profile, stages, modes[m], bad);
		if (!m) {
			tps0 = tps_seq;
			span0 = span;
		} else {
			wt_ok(tps_seq == tps0 && span == span0,
			      "%s on %s/%u, stage_workers %d: one at a time: modelled %llu tokens/s, makespan %llu ns, as with one worker per stage",
			      what, profile, stages, modes[m],
			      (unsigned long long)tps_seq,
			      (unsigned long long)span);
		}
		if (stages != 1)
			wt_ok(tps_par > tps_seq,
			      "%s on %s/%u, stage_workers %d: modelled tokens/s in flight %llu > one at a time %llu",
			      what, profile, stages, modes[m],
			      (unsigned long long)tps_par,
			      (unsigned long long)tps_seq);
	}
}

static void run_blob(const char *what, void *blob, size_t len, u32 vocab)
{
	static const struct {
		const char *profile;
		u32 stages;
	} shapes[] = {
		{ "wafer", 0 }, { "asic", 0 }, { "wafer", 2 }, { "asic", 1 },
	};
	unsigned int i;

	wt_model_tokens(42, NSEQ, NPOS, vocab, &tokens[0][0]);
	if (!wt_ok(wt_model_reference(blob, len, CTX, &tokens[0][0], NSEQ, NPOS, TOPK,
				      ref_argmax, ref_topk) == 0, "%s: reference run", what))
		return;
	for (i = 0; i < WFS_ARRAY_SIZE(shapes); i++)
		run_shape(what, blob, len, shapes[i].profile, shapes[i].stages);
}

int main(void)
{
	const char *path = wt_model_path("stories260K.bin");
	struct wfs_pack_opts o8 = { .wbits = 8, .group_size = 64, .checksum = 1 };
	struct wfs_pack_opts o4 = { .wbits = 4, .group_size = 32 };
	struct wfs_ckpt c;
	void *blob;
	size_t len;

	if (!wt_ok(path && wfs_ckpt_load(path, &c) == 0, "load %s",
		   path ? path : "stories260K.bin"))
		return wt_done();
	if (wt_ok(wfs_pack(&c, &o8, &blob, &len) == 0, "pack int8")) {
		run_blob("int8", blob, len, (u32)c.vocab_size);
		free(blob);
	}
	if (wt_ok(wfs_pack(&c, &o4, &blob, &len) == 0, "pack int4")) {
		run_blob("int4", blob, len, (u32)c.vocab_size);
		free(blob);
	}
	wfs_ckpt_free(&c);
	return wt_done();
}
