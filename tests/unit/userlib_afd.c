// SPDX-License-Identifier: MIT
/*
 * Attention-FFN disaggregation in libwafer (wafer_open_afd()) and the CLI
 * (wafer run --afd A:F), in process.
 *
 * Library: stories260K int8 and int4 on 1:1, 2:2 and 1:2 groups (and
 * asic attention devices with wafer FFN devices): a 60-position prefill
 * returning every position (4 micro-batches) and decode steps of SLOTS
 * sequences queued at once (their micro-batches interleave on both
 * groups) give result records byte-identical to one device running whole
 * layers, also with micro-batches of 1, 4 and 16 tokens
 * (micro_batch_tokens); where the parts sit (wafer_model_part(): attention
 * with KV on the first group, FFN without on the second); bad groups and
 * micro-batches of 65 tokens are -EINVAL; polled groups (wafer_afd_opts
 * .polled, how kernel members run) give the same records; 16 jobs of 64 tokens at once
 * in micro-batches of 4 (more steps than a member holds: they queue) give
 * one device's records.
 * CLI: greedy text of --afd 0:1, 0-1:2-3, asic:wafer profiles and
 * --afd-micro-batch 1 and 4 is byte-identical to the single device's,
 * int8 and int4, a prompt longer than a micro-batch, and with MoE layers
 * (--moe 4,2, also with --expert-group: experts in groups across the
 * stages, the same text; on a dense model a load error); the run says
 * which parts sit where and their SRAM; --afd
 * with -d, without a colon, --afd-profiles or
 * --afd-micro-batch alone, --afd-micro-batch 0 are usage errors, --trace
 * gives the same text and writes the trace, with streamed weights a load error; wafer info --afd
 * -m shows the groups and each part's layers, weights and KV.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wafer.h"
#include "wt_jobs.h"
#include "wt_util.h"

#define SLOTS	4
#define PREFILL	60
#define DECODE	8
#define CTX	(PREFILL + DECODE)
#define TOPK	4
#define REC	WAFER_RESULT_SIZE(TOPK)
#define OUT_RECS	(PREFILL + SLOTS * DECODE)
#define TEXT_MAX	65536

static const char *model, *tokpath;

static struct wafer_open_opts inproc(const char *profile)
{
	return (struct wafer_open_opts){ .backend = WAFER_BACKEND_INPROC, .profile = profile };
}

/* Modelled device time of the last prefill run_jobs() reaped. */
static uint64_t prefill_ns;

static int run_jobs(struct wafer_dev *dev, struct wafer_job *jobs, unsigned int n)
{
	return wt_run_jobs(dev, jobs, n, jobs[0].n_tokens == PREFILL ? &prefill_ns : NULL);
}

/*
 * The workload: slot 0's prefill of every position, then DECODE steps of
 * every slot at once (slot s decodes token 3 + s, the next steps their own
 * argmax); every record into @out.
 */
static int workload(struct wafer_dev *dev, const struct wafer_convert_opts *conv,
		    uint8_t *out)
{
	struct wafer_model *m = NULL;
	struct wafer_ctx *ctx = NULL;
	struct wafer_bo *in = NULL, *res = NULL;
	struct wafer_job j[SLOTS];
	uint32_t *ids;
	unsigned int s, t;
	int ret;

	ret = wafer_model_load_file(dev, model, conv, &m);
	ret = ret ? ret : wafer_ctx_create(m, SLOTS, CTX, &ctx);
	ret = ret ? ret : wafer_bo_create(dev, 4096, &in);
	ret = ret ? ret : wafer_bo_create(dev, (size_t)OUT_RECS * REC, &res);
	if (ret)
		goto out;
	ids = wafer_bo_map(in);
	for (t = 0; t < PREFILL; t++)
		ids[t] = t ? 3 + (t * 37) % 500 : 1;
	j[0] = (struct wafer_job){ .ctx = ctx, .n_tokens = PREFILL, .top_k = TOPK, .in = in,
				   .out = res, .flags = WAFER_JOB_ALL_POSITIONS };
	ret = run_jobs(dev, j, 1);
	for (s = 1; s < SLOTS && !ret; s++) {	/* the other slots' first position */
		ids[PREFILL + s] = 1;
		j[0] = (struct wafer_job){ .ctx = ctx, .slot = s, .n_tokens = 1, .in = in,
					   .in_offset = 4 * (PREFILL + s), .out = res,
					   .out_offset = (uint64_t)(OUT_RECS - 1) * REC,
					   .top_k = TOPK };
		ret = run_jobs(dev, j, 1);
	}
	for (t = 0; t < DECODE && !ret; t++) {
		for (s = 0; s < SLOTS; s++) {
			unsigned int at = PREFILL + t * SLOTS + s;
			const uint8_t *prev = (uint8_t *)wafer_bo_map(res) + (size_t)(at - SLOTS) * REC;

			ids[128 + s] = t ? ((const uint32_t *)prev)[1] : 3 + s;
			j[s] = (struct wafer_job){ .ctx = ctx, .slot = s,
						   .start_pos = s ? t + 1 : PREFILL + t,
						   .n_tokens = 1, .top_k = TOPK, .in = in,
						   .in_offset = 4 * (128 + s), .out = res,
						   .out_offset = (uint64_t)at * REC };
		}
		ret = run_jobs(dev, j, SLOTS);
	}
	if (!ret)
		memcpy(out, wafer_bo_map(res), (size_t)(OUT_RECS - 1) * REC);
out:
	wafer_bo_destroy(in);
	wafer_bo_destroy(res);
	wafer_ctx_destroy(ctx);
	wafer_model_unload(m);
	return ret;
}

/* Where the parts of a model on @na + @nf devices sit. */
static void check_parts(struct wafer_dev *dev, const struct wafer_convert_opts *conv,
			unsigned int na, unsigned int nf)
{
	struct wafer_model *m = NULL;
	struct wafer_ctx *ctx = NULL;
	struct wafer_model_part p;
	unsigned int i, ok = 1, layers[2] = { 0, 0 };

	if (wafer_model_load_file(dev, model, conv, &m) || wafer_ctx_create(m, 1, 64, &ctx)) {
		wt_ok(0, "load for the parts: %s", wafer_last_error());
		wafer_model_unload(m);
		return;
	}
	ok &= wafer_model_parts(m) == na + nf;
	for (i = 0; i < na + nf && !wafer_model_part(m, i, &p); i++) {
		int attn = i < na;

		ok &= p.part == (attn ? WAFER_PART_ATTN : WAFER_PART_FFN) && p.sram_bytes &&
		      (attn ? p.kv_bytes > 0 : p.kv_bytes == 0) &&
		      p.embed == (attn && i == 0) && p.head == (!attn && i == na + nf - 1);
		layers[!attn] += p.layer_count;
	}
	wt_ok(ok && layers[0] == 5 && layers[1] == 5,
	      "%u:%u: attention parts (with KV, +embed first) then FFN parts (no KV, +head "
	      "last), every layer once per group", na, nf);
	wafer_ctx_destroy(ctx);
	wafer_model_unload(m);
}

static void library(const char *name, const struct wafer_convert_opts *conv)
{
	static const struct {
		unsigned int na, nf;
		const char *pa, *pf;
		unsigned int mb;
		int polled;
	} cfg[] = { { 1, 1, NULL, NULL, 0, 0 }, { 2, 2, NULL, NULL, 0, 0 },
		    { 1, 2, "asic", "wafer", 0, 0 }, { 1, 1, NULL, NULL, 1, 0 },
		    { 2, 1, NULL, NULL, 4, 0 }, { 1, 1, NULL, NULL, 16, 0 },
		    { 1, 1, NULL, NULL, 0, 1 }, { 2, 2, NULL, NULL, 4, 1 } };
	static uint8_t want[OUT_RECS * REC], got[OUT_RECS * REC];
	struct wafer_open_opts one = inproc(NULL), a[2], f[2];
	struct wafer_dev *dev = NULL;
	unsigned int i, k;
	int ret;

	ret = wafer_open(&one, &dev);
	ret = ret ? ret : workload(dev, conv, want);
	wafer_close(dev);
	wt_diag("%s one device: modelled prefill of %d positions %llu ns", name, PREFILL,
		(unsigned long long)prefill_ns);
	if (!wt_ok(!ret, "%s: whole layers on one device: %s", name,
		   ret ? wafer_last_error() : "ok"))
		return;
	for (i = 0; i < sizeof(cfg) / sizeof(cfg[0]); i++) {
		struct wafer_afd_opts o = { .n_attn = cfg[i].na, .attn = a, .n_ffn = cfg[i].nf,
					    .ffn = f, .micro_batch_tokens = cfg[i].mb,
					    .polled = cfg[i].polled };
		unsigned int mb = cfg[i].mb ? cfg[i].mb : 16;

		for (k = 0; k < 2; k++) {
			a[k] = inproc(cfg[i].pa);
			f[k] = inproc(cfg[i].pf);
		}
		memset(got, 0, sizeof(got));
		ret = wafer_open_afd(&o, &dev);
		ret = ret ? ret : workload(dev, conv, got);
		wt_ok(!ret && !memcmp(got, want, (size_t)(OUT_RECS - 1) * REC),
		      "%s: --afd %u:%u%s%s, micro-batches of %u%s: prefill %d + %d slots x %d "
		      "decode steps, every record byte-identical to one device (%s)", name,
		      cfg[i].na, cfg[i].nf, cfg[i].pa ? ", profiles " : "",
		      cfg[i].pa ? "asic:wafer" : "", mb,
		      cfg[i].polled ? ", polled (moved on by wafer_reap(), as kernel members)" : "",
		      PREFILL, SLOTS, DECODE,
		      ret ? wafer_last_error() : "ok");
		wt_diag("%s --afd %u:%u: modelled prefill of %d positions %llu ns (%u "
			"micro-batches of %u)", name, cfg[i].na, cfg[i].nf, PREFILL,
			(unsigned long long)prefill_ns, (PREFILL + mb - 1) / mb, mb);
		if (!ret && conv->wbits == 8)
			check_parts(dev, conv, cfg[i].na, cfg[i].nf);
		wafer_close(dev);
	}
}

#define FULL_JOBS	16
#define FULL_TOKENS	64

/*
 * FULL_JOBS prompts of FULL_TOKENS tokens submitted at once (one per slot),
 * each job's last record into @out; 0 if every one completed with 0.
 */
static int full_load(struct wafer_dev *dev, uint8_t *out)
{
	struct wafer_convert_opts conv = { .wbits = 8, .group_size = 32 };
	struct wafer_completion c[FULL_JOBS];
	struct wafer_job j[FULL_JOBS];
	struct wafer_model *m = NULL;
	struct wafer_ctx *ctx = NULL;
	struct wafer_bo *in = NULL, *res = NULL;
	unsigned int s, t, done = 0;
	uint32_t *ids;
	int ret, n;

	ret = wafer_model_load_file(dev, model, &conv, &m);
	ret = ret ? ret : wafer_ctx_create(m, FULL_JOBS, FULL_TOKENS, &ctx);
	ret = ret ? ret : wafer_bo_create(dev, 4 * FULL_JOBS * FULL_TOKENS, &in);
	ret = ret ? ret : wafer_bo_create(dev, (size_t)FULL_JOBS * REC, &res);
	for (s = 0; !ret && s < FULL_JOBS; s++) {
		ids = (uint32_t *)wafer_bo_map(in) + s * FULL_TOKENS;
		for (t = 0; t < FULL_TOKENS; t++)
			ids[t] = t ? 3 + (t * 37 + s * 11) % 500 : 1;
		j[s] = (struct wafer_job){ .ctx = ctx, .slot = s, .n_tokens = FULL_TOKENS,
					   .top_k = TOPK, .in = in,
					   .in_offset = 4ull * s * FULL_TOKENS, .out = res,
					   .out_offset = (uint64_t)s * REC, .user_data = s };
	}
	if (!ret && wafer_submit(dev, j, FULL_JOBS) != FULL_JOBS)
		ret = -1;
	while (!ret && done < FULL_JOBS) {
		n = wafer_reap(dev, c, FULL_JOBS, 1, 20000);
		if (n <= 0)
			ret = -1;
		for (t = 0; n > 0 && t < (unsigned int)n; t++)
			ret |= c[t].status;
		done += n > 0 ? (unsigned int)n : 0;
	}
	if (!ret)
		memcpy(out, wafer_bo_map(res), (size_t)FULL_JOBS * REC);
	wafer_bo_destroy(in);
	wafer_bo_destroy(res);
	wafer_ctx_destroy(ctx);
	wafer_model_unload(m);
	return ret;
}

/*
 * More micro-batches in flight than a member holds jobs (16 jobs of 64
 * tokens in micro-batches of 4: 256 steps for 128 places): the steps wait
 * their turn, in order, and every record is still one device's.
 */
static void full_members(void)
{
	static uint8_t want[FULL_JOBS * REC], got[FULL_JOBS * REC];
	struct wafer_open_opts o[2] = { inproc(NULL), inproc(NULL) };
	struct wafer_afd_opts ao = { .n_attn = 1, .attn = o, .n_ffn = 1, .ffn = o + 1,
				     .micro_batch_tokens = 4 };
	struct wafer_dev *dev = NULL;
	int ret;

	ret = wafer_open(&o[0], &dev) || full_load(dev, want);
	wafer_close(dev);
	dev = NULL;
	for (ao.polled = 0; ao.polled < 2; ao.polled++) {
		memset(got, 0, sizeof(got));
		ret = ret || wafer_open_afd(&ao, &dev) || full_load(dev, got);
		wt_ok(!ret && !memcmp(want, got, sizeof(got)), "--afd 1:1%s, micro-batches of 4: "
		      "%d jobs of %d tokens at once (%d micro-batches, more than a member "
		      "holds): every record byte-identical to one device (%s)",
		      ao.polled ? " polled" : "", FULL_JOBS, FULL_TOKENS,
		      FULL_JOBS * FULL_TOKENS / 4, ret ? wafer_last_error() : "ok");
		wafer_close(dev);
		dev = NULL;
	}
}

static void bad_groups(void)
{
	struct wafer_open_opts o[9];
	struct wafer_afd_opts ao = { .n_attn = 0, .attn = o, .n_ffn = 1, .ffn = o };
	struct wafer_dev *dev = NULL;
	unsigned int i;

	for (i = 0; i < 9; i++)
		o[i] = inproc(NULL);
	wt_ok(wafer_open_afd(&ao, &dev) == -EINVAL && !dev, "no attention device: -EINVAL");
	ao.n_attn = 9;
	wt_ok(wafer_open_afd(&ao, &dev) == -EINVAL && !dev, "9 attention devices: -EINVAL");
	ao.n_attn = 1;
	ao.n_ffn = 0;
	wt_ok(wafer_open_afd(&ao, &dev) == -EINVAL && !dev, "no FFN device: -EINVAL");
	ao.n_ffn = 1;
	ao.micro_batch_tokens = 65;
	wt_ok(wafer_open_afd(&ao, &dev) == -EINVAL && !dev, "micro-batches of 65 tokens: -EINVAL");
}

/* Runs the CLI; its exit status, stdout in @out, stderr in @err. */
static int cli(const char *args, char *out, char *err)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), "%s/bin/wafer run %s -z %s %s", build, model, tokpath, args);
	return wt_capture_err(cmd, out, err, TEXT_MAX);
}

static void cli_text(void)
{
	static const char *const afd[] = { "--afd 0:1", "--afd 0-1:2-3",
					   "--afd 0:1-2 --afd-profiles asic:wafer",
					   "--afd 0:1 --afd-micro-batch 1",
					   "--afd 0-1:2 --afd-micro-batch 4" };
	static const char *const quant[] = { "int8", "int4" };
	const char *prompt = "-i 'Once upon a time there was a little dog who liked to run in "
			     "the park with his friends every day' -n 0";
	char *want = malloc(TEXT_MAX), *got = malloc(TEXT_MAX), *err = malloc(TEXT_MAX);
	char args[512];
	unsigned int q, i;
	int rc;

	for (q = 0; q < 2; q++) {
		snprintf(args, sizeof(args), "--backend inproc --quant %s %s", quant[q], prompt);
		rc = cli(args, want, NULL);
		if (!wt_ok(rc == 0 && strlen(want) > 200, "CLI %s: single device", quant[q]))
			continue;
		for (i = 0; i < sizeof(afd) / sizeof(afd[0]); i++) {
			snprintf(args, sizeof(args), "%s --quant %s %s", afd[i], quant[q], prompt);
			rc = cli(args, got, err);
			wt_ok(rc == 0 && !strcmp(want, got),
			      "CLI %s: wafer run %s: the text is byte-identical to one device (%zu "
			      "bytes)", quant[q], afd[i], strlen(got));
			if (!q && !i)
				wt_ok(strstr(err, "attention (and KV)") && strstr(err, "attention +embed") &&
				      strstr(err, "FFN              +head") && strstr(err, "weights"),
				      "CLI: the run says which parts sit on which device and their SRAM");
		}
	}
	/* MoE layers: the FFN part holds the router and the experts. */
	rc = cli("--backend inproc --moe 4,2 -n 200", want, NULL);
	rc |= cli("--afd 0-1:2-3 --moe 4,2 -n 200", got, NULL);
	wt_ok(rc == 0 && strlen(want) > 200 && !strcmp(want, got),
	      "CLI --moe 4,2: wafer run --afd 0-1:2-3: the text is byte-identical to one device");
	/* Expert groups placed across the stages (LOAD_MODEL expert_group). */
	rc = cli("--backend inproc --moe 4,2 --expert-group 2 -n 200", got, NULL);
	wt_ok(rc == 0 && !strcmp(want, got),
	      "CLI --moe 4,2 --expert-group 2: the text is byte-identical to local experts");
	rc = cli("--afd 0-1:2-3 --moe 4,2 --expert-group 1 -n 200", got, NULL);
	wt_ok(rc == 0 && !strcmp(want, got),
	      "CLI --afd 0-1:2-3 --moe 4,2 --expert-group 1: the text is byte-identical");
	rc = cli("--backend inproc --expert-group 2 -n 8", got, NULL);
	wt_ok(WEXITSTATUS(rc) == 1 && !got[0], "--expert-group on a dense model: a load error");
	rc = cli("--backend inproc --moe 4,2 --expert-group 0 -n 8", got, NULL);
	wt_ok(WEXITSTATUS(rc) == 2 && !got[0], "--expert-group 0 is a usage error");
	rc = cli("--afd 0 -n 8", got, NULL);
	wt_ok(WEXITSTATUS(rc) == 2 && !got[0], "--afd without a colon is a usage error");
	rc = cli("--afd 0:1 -d 0-1 -n 8", got, NULL);
	wt_ok(WEXITSTATUS(rc) == 2 && !got[0], "--afd with -d is a usage error");
	if (access("/dev/accel/accel0", F_OK)) {
		rc = cli("--afd 0:1 --backend kernel -n 8", got, NULL);
		wt_ok(WEXITSTATUS(rc) == 1 && !got[0],
		      "--afd with --backend kernel and no wafer device: an error, no text");
	}
	rc = cli("--backend inproc --afd-profiles asic:wafer -n 8", got, NULL);
	wt_ok(WEXITSTATUS(rc) == 2 && !got[0], "--afd-profiles without --afd is a usage error");
	rc = cli("--backend inproc --afd-micro-batch 4 -n 8", got, NULL);
	wt_ok(WEXITSTATUS(rc) == 2 && !got[0], "--afd-micro-batch without --afd is a usage error");
	rc = cli("--afd 0:1 --afd-micro-batch 0 -n 8", got, NULL);
	wt_ok(WEXITSTATUS(rc) == 2 && !got[0], "--afd-micro-batch 0 is a usage error");
	rc = cli("--afd 0:1 -n 8", want, NULL);
	rc |= cli("--afd 0:1 --trace /tmp/userlib_afd.json -n 8", got, NULL);
	wt_ok(rc == 0 && want[0] && !strcmp(want, got) && !access("/tmp/userlib_afd.json", R_OK),
	      "--afd with --trace: the same text, the trace written (userlib_trace_pipe.c checks "
	      "it)");
	unlink("/tmp/userlib_afd.json");
	rc = cli("--afd 0:1 --stream-weights on -n 8", got, NULL);
	wt_ok(WEXITSTATUS(rc) == 1 && !got[0], "--afd with streamed weights fails at load");
	free(want);
	free(got);
	free(err);
}

/* wafer info --afd: the groups, and where each part of a model sits. */
static void cli_info(void)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char cmd[1024], *out = malloc(TEXT_MAX);
	int rc;

	if (!out)
		return;
	snprintf(cmd, sizeof(cmd), "%s/bin/wafer info --afd 0-1:2 --afd-profiles asic:wafer "
		 "-m %s 2>&1", build, model);
	rc = wt_capture(cmd, out, TEXT_MAX);
	wt_ok(rc == 0 && strstr(out, "inproc 1  attention (and KV) profile asic") &&
	      strstr(out, "inproc 2  FFN                profile wafer") &&
	      strstr(out, "layers  0-1  attention +embed") &&
	      strstr(out, "layers  2-4  attention  ") &&
	      strstr(out, "layers  0-4  FFN              +head") &&
	      strstr(out, "KV        0 KiB"),
	      "wafer info --afd 0-1:2 --afd-profiles asic:wafer -m: the groups' profiles, "
	      "each part's layers, weights and KV");
	if (rc)
		wt_diag("%.600s", out);
	free(out);
}

int main(void)
{
	struct wafer_convert_opts c8 = { .wbits = 8, .group_size = 32 };
	struct wafer_convert_opts c4 = { .wbits = 4, .group_size = 32 };

	/* wt_model_path() returns a static buffer */
	model = wt_model_path("stories260K.bin") ? strdup(wt_model_path("stories260K.bin")) : NULL;
	tokpath = wt_model_path("tok512.bin") ? strdup(wt_model_path("tok512.bin")) : NULL;
	if (!wt_ok(model && tokpath, "shared model and tokenizer found"))
		return wt_done();
	library("int8", &c8);
	library("int4", &c4);
	full_members();
	bad_groups();
	cli_text();
	cli_info();
	return wt_done();
}
