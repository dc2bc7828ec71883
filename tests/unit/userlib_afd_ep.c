// SPDX-License-Identifier: MIT
/*
 * Expert parallelism across devices in libwafer (wafer_afd_opts.n_expert)
 * and the CLI (wafer run --afd A:F --expert-devices N), in process.
 *
 * Library: stories260K upcycled to 4 experts top-2 + 1 shared (softmax)
 * and to 5 experts top-5 + 1 shared (unit gates), int8 and int4, on --afd
 * 1:1 with the routed experts over 1, 2 and 3 expert devices: a prefill
 * returning every position (several micro-batches) and greedy decode
 * steps of two sequences queued at once give result records (argmax and
 * top-k logits), also with the members polled (wafer_afd_opts.polled),
 * byte-identical to one device of whole layers, and with
 * top-5 of 5 and unit gates to the dense model's; the expert load the
 * devices report (the homes count the routing) equals the one device's,
 * the model's own (wafer_model_expert_load()) the device's;
 * wafer_model_part() names each expert device's range; a prefill in one
 * micro-batch is no slower in modelled time over 2 or 3 expert devices
 * than over 1 (an exchange's devices work at once).  More expert
 * devices than experts, and expert devices with a dense model, fail the
 * load with a message and leave no member holding anything.
 * CLI: the greedy text of --expert-devices 1, 2 and 3 is the single
 * device's (2 in micro-batches of one token: a sequence's micro-batches
 * stay in order on every member); the run and wafer info say which experts sit where;
 * --expert-devices without --afd is a usage error; wafer bench's AFD rows
 * with expert devices check every result.
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

#define SLOTS	2
#define PREFILL	40
#define DECODE	12
#define CTX	(PREFILL + DECODE)
#define TOPK	4
#define REC	WAFER_RESULT_SIZE(TOPK)
#define NREC	(PREFILL + SLOTS * DECODE)
#define NLOAD	64
#define TEXT_MAX	65536

static const char *model, *tokpath;

static struct wafer_open_opts inproc(void)
{
	return (struct wafer_open_opts){ .backend = WAFER_BACKEND_INPROC, .profile = "asic",
					 .stages = 2 };
}

/* Modelled time of the last prefill run_jobs() reaped. */
static uint64_t prefill_ns;

static int run_jobs(struct wafer_dev *dev, struct wafer_job *j, unsigned int n)
{
	return wt_run_jobs(dev, j, n, j[0].n_tokens == PREFILL ? &prefill_ns : NULL);
}

/* Slot 0's prefill of every position, then greedy steps of both slots at once. */
static int steps(struct wafer_dev *dev, struct wafer_ctx *ctx, struct wafer_bo *in,
		 struct wafer_bo *res)
{
	uint32_t *ids = wafer_bo_map(in);
	const uint8_t *r = wafer_bo_map(res);
	struct wafer_job j[SLOTS];
	unsigned int s, t, at;
	int ret;

	for (t = 0; t < PREFILL; t++)
		ids[t] = t ? 3 + (t * 41) % 500 : 1;
	j[0] = (struct wafer_job){ .ctx = ctx, .n_tokens = PREFILL, .top_k = TOPK, .in = in,
				   .out = res, .flags = WAFER_JOB_ALL_POSITIONS };
	ret = run_jobs(dev, j, 1);
	for (t = 0; t < DECODE && !ret; t++) {
		for (s = 0; s < SLOTS; s++) {
			at = PREFILL + t * SLOTS + s;
			/* slot 1 starts from token 1 at position 0 */
			ids[128 + s] = !t ? (s ? 1 : ((const uint32_t *)(r + (PREFILL - 1) * REC))[1]) :
				       ((const uint32_t *)(r + (at - SLOTS) * REC))[1];
			j[s] = (struct wafer_job){ .ctx = ctx, .slot = s,
						   .start_pos = s ? t : PREFILL + t, .n_tokens = 1,
						   .top_k = TOPK, .in = in, .in_offset = 4 * (128 + s),
						   .out = res, .out_offset = (uint64_t)at * REC };
		}
		ret = run_jobs(dev, j, SLOTS);
	}
	return ret;
}

/*
 * The device's expert load into @e, its count; -1 unless the model's own
 * (wafer_model_expert_load(): each member's part by its id) is the same.
 */
static int model_load_is_dev(struct wafer_dev *dev, const struct wafer_model *m,
			     struct wafer_expert_load *e)
{
	static struct wafer_expert_load own[NLOAD];
	int n = wafer_dev_expert_load(dev, e, NLOAD);

	if (n < 0 || n > NLOAD || wafer_model_expert_load(m, own, NLOAD) != n ||
	    memcmp(own, e, (size_t)n * sizeof(*e)))
		return -1;
	return n;
}

/* Loads @conv's model on @dev, runs the steps: records into @out, its expert load into @e. */
static int workload(struct wafer_dev *dev, const struct wafer_convert_opts *conv,
		    uint8_t *out, struct wafer_expert_load *e, int *n_e)
{
	struct wafer_model *m = NULL;
	struct wafer_ctx *ctx = NULL;
	struct wafer_bo *in = NULL, *res = NULL;
	int ret;

	ret = wafer_model_load_file(dev, model, conv, &m);
	ret = ret ? ret : wafer_ctx_create(m, SLOTS, CTX, &ctx);
	ret = ret ? ret : wafer_bo_create(dev, 4096, &in);
	ret = ret ? ret : wafer_bo_create(dev, (size_t)NREC * REC, &res);
	ret = ret ? ret : steps(dev, ctx, in, res);
	if (!ret) {
		memcpy(out, wafer_bo_map(res), (size_t)NREC * REC);
		if (e)
			*n_e = model_load_is_dev(dev, m, e);
	}
	if (ret)
		wt_diag("workload: %s", wafer_last_error());
	wafer_bo_destroy(in);
	wafer_bo_destroy(res);
	wafer_ctx_destroy(ctx);
	wafer_model_unload(m);
	return ret;
}

static int open_ep_mb(unsigned int ne, int polled, unsigned int mb, struct wafer_dev **dev)
{
	struct wafer_open_opts o[8];
	struct wafer_afd_opts ao = { .n_attn = 1, .attn = o, .n_ffn = 1, .ffn = o + 1,
				     .micro_batch_tokens = mb, .n_expert = ne, .expert = o + 2,
				     .polled = polled };
	unsigned int i;

	for (i = 0; i < 8; i++)
		o[i] = inproc();
	return ne <= 6 ? wafer_open_afd(&ao, dev) : -EINVAL;
}

static int open_ep(unsigned int ne, int polled, struct wafer_dev **dev)
{
	return open_ep_mb(ne, polled, 16, dev);
}

/*
 * The expert devices of an exchange work at once: a prefill in one
 * micro-batch (no other to meet on a member: its modelled time is fixed)
 * is no slower over 2 or 3 of them than over 1, each holding fewer
 * experts (in series each would add two link hops a layer).
 */
static void check_parallel(const struct wafer_convert_opts *conv, const char *what)
{
	static uint8_t out[(size_t)NREC * REC];
	struct wafer_dev *dev;
	uint64_t ns[3] = { 0 };
	unsigned int ne;
	int ret = 0;

	for (ne = 1; ne <= 3 && !ret; ne++) {
		dev = NULL;
		ret = open_ep_mb(ne, 0, 64, &dev) || workload(dev, conv, out, NULL, NULL);
		ns[ne - 1] = prefill_ns;
		wafer_close(dev);
	}
	wt_ok(!ret && ns[0] && ns[1] <= ns[0] && ns[2] <= ns[0],
	      "%s: modelled prefill of %d in one micro-batch over 1, 2, 3 expert devices: %llu, "
	      "%llu, %llu ns (the devices of an exchange work at once)", what, PREFILL,
	      (unsigned long long)ns[0], (unsigned long long)ns[1], (unsigned long long)ns[2]);
}

/* The expert devices' ranges (wafer_model_part()). */
static void check_parts(struct wafer_dev *dev, const struct wafer_convert_opts *conv,
			const char *what)
{
	struct wafer_model *m = NULL;
	struct wafer_model_part p[4];
	unsigned int i;
	int ok;

	ok = !wafer_model_load_file(dev, model, conv, &m) && wafer_model_parts(m) == 4;
	for (i = 0; ok && i < 4; i++)
		ok = !wafer_model_part(m, i, &p[i]);
	wt_ok(ok && p[0].part == WAFER_PART_ATTN && p[1].part == WAFER_PART_FFN && p[1].head &&
	      !p[1].expert_count && p[2].part == WAFER_PART_EXPERTS && p[2].expert_first == 0 &&
	      p[2].expert_count == 2 && p[3].part == WAFER_PART_EXPERTS &&
	      p[3].expert_first == 2 && p[3].expert_count == 2 && p[3].layer_count == 5,
	      "%s: wafer_model_part(): attention, the FFN home (+head), experts 0-1 and 2-3 of "
	      "layers 0-4", what);
	wafer_model_unload(m);
}

static void one_model(const char *what, const struct wafer_convert_opts *conv, int dense_too)
{
	static struct wafer_expert_load e0[NLOAD], e1[NLOAD];
	size_t size = (size_t)NREC * REC;
	uint8_t *ref = malloc(size), *out = malloc(size);
	struct wafer_convert_opts dense = *conv;
	struct wafer_open_opts one = inproc();
	struct wafer_dev *dev = NULL;
	int n0 = 0, n1 = 0, ret;
	unsigned int ne;

	ret = !ref || !out || wafer_open(&one, &dev) || workload(dev, conv, ref, e0, &n0);
	if (!ret && dense_too) {
		memset(&dense.moe, 0, sizeof(dense.moe));
		ret = workload(dev, &dense, out, NULL, NULL);
		wt_ok(!ret && !memcmp(out, ref, size),
		      "%s: one device: the MoE model's records are the dense model's", what);
	}
	wafer_close(dev);
	if (!wt_ok(!ret && n0 > 0, "%s: one device: prefill %d + %d greedy steps of %d "
		   "sequences, %d expert-load entries", what, PREFILL, DECODE, SLOTS, n0))
		goto out;
	for (ne = 1; ne <= 4; ne++) {
		/* 4: two expert devices, polled (as kernel members would run) */
		dev = NULL;
		ret = open_ep(ne < 4 ? ne : 2, ne == 4, &dev) || workload(dev, conv, out, e1, &n1);
		wt_ok(!ret && !memcmp(out, ref, size),
		      "%s: --afd 1:1 with the routed experts over %u device(s)%s: every record "
		      "byte-identical to one device", what, ne < 4 ? ne : 2,
		      ne == 4 ? ", polled" : "");
		wt_ok(!ret && n1 == n0 && !memcmp(e0, e1, (size_t)n0 * sizeof(e0[0])),
		      "%s: over %u expert device(s): the expert load equals one device's, and "
		      "the model's own (wafer_model_expert_load()) the device's (%d entries)",
		      what, ne, n1);
		if (!ret && ne == 2 && conv->moe.n_experts == 4)
			check_parts(dev, conv, what);
		wafer_close(dev);
	}
	check_parallel(conv, what);
out:
	free(ref);
	free(out);
}

/* Members' free SRAM: unchanged by a load that failed. */
static uint64_t members_free(struct wafer_dev *dev)
{
	struct wafer_info in;
	uint64_t sum = 0;
	unsigned int k;

	for (k = 0; k < wafer_pipe_size(dev); k++)
		if (!wafer_query(wafer_pipe_member(dev, k), &in))
			sum += in.sram_bytes_free + in.models_loaded;
	return sum;
}

static void bad_load(unsigned int ne, const struct wafer_convert_opts *conv, const char *msg,
		     const char *what)
{
	struct wafer_dev *dev = NULL;
	struct wafer_model *m = NULL;
	uint64_t before;
	int ret;

	if (open_ep(ne, 0, &dev)) {
		wt_ok(0, "%s: open", what);
		return;
	}
	before = members_free(dev);
	ret = wafer_model_load_file(dev, model, conv, &m);
	wt_ok(ret == -EINVAL && !m && strstr(wafer_last_error(), msg) &&
	      members_free(dev) == before,
	      "%s: -EINVAL (\"%s\"), no member holds anything", what, wafer_last_error());
	wafer_model_unload(m);
	wafer_close(dev);
}

static void bad_inputs(void)
{
	struct wafer_convert_opts moe = { .wbits = 8, .group_size = 32,
					  .moe = { .n_experts = 4, .top_k = 2, .n_shared = 1 } };
	struct wafer_convert_opts dense = { .wbits = 8, .group_size = 32 };
	struct wafer_dev *dev = NULL;
	struct wafer_open_opts o[2] = { inproc(), inproc() };
	struct wafer_afd_opts ao = { .n_attn = 1, .attn = o, .n_ffn = 1, .ffn = o + 1,
				     .n_expert = 9, .expert = o };

	bad_load(5, &moe, "5 expert devices for 4 routed experts",
		 "5 expert devices for 4 experts (one would hold 0)");
	bad_load(2, &dense, "no experts", "expert devices with a dense model");
	wt_ok(wafer_open_afd(&ao, &dev) == -EINVAL && !dev, "9 expert devices: -EINVAL");
}

/* Runs the CLI; its exit status, stdout in @out, stderr in @err. */
static int cli(const char *cmd_args, char *out, char *err)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), "%s/bin/wafer %s", build, cmd_args);
	return wt_capture_err(cmd, out, err, TEXT_MAX);
}

static void cli_text(void)
{
	char *ref = malloc(TEXT_MAX), *out = malloc(TEXT_MAX), *err = malloc(TEXT_MAX);
	char args[1024];
	int rc, n;

	if (!ref || !out || !err)
		goto out;
	for (n = 0; n <= 3; n++) {
		snprintf(args, sizeof(args), "run %s -z %s -n 48 -t 0 --moe 4,2,1 -i \"Once upon a "
			 "time\" %s%s%s", model, tokpath, n ? "--afd 0:1 --expert-devices " : "",
			 n ? (const char *[]){ "", "1", "2", "3" }[n] : "",
			 n == 2 ? " --afd-micro-batch 1" : "");
		rc = cli(args, n ? out : ref, err);
		if (!n) {
			wt_ok(!rc && strlen(ref) > 20, "CLI --moe 4,2,1 on one device: text");
			continue;
		}
		wt_ok(!rc && !strcmp(out, ref) && strstr(err, "routed experts 0-"),
		      "CLI --afd 0:1 --expert-devices %d: the text is byte-identical to one "
		      "device's, the run says where the experts sit", n);
	}
	snprintf(args, sizeof(args), "run %s -z %s -n 8 --moe 4,2 --expert-devices 2", model,
		 tokpath);
	rc = cli(args, out, err);
	wt_ok(WEXITSTATUS(rc) == 2 && strstr(err, "--expert-devices needs --afd"),
	      "CLI --expert-devices without --afd: usage error");
	snprintf(args, sizeof(args), "info --afd 0:1 --expert-devices 3 -m %s --moe 4,2,1", model);
	rc = cli(args, out, err);
	wt_ok(!rc && strstr(out, "experts over 3 more") && strstr(out, "routed experts 0-1") &&
	      strstr(out, "routed experts 2-2") && strstr(out, "routed experts 3-3"),
	      "wafer info --afd 0:1 --expert-devices 3 -m: each expert device's range");
	if (rc)
		wt_diag("%.600s", err);
	snprintf(args, sizeof(args), "bench %s --backend inproc --devices 1 --quick --profile asic "
		 "--moe 4,2,1 --afd 0:1 --expert-devices 2", model);
	rc = cli(args, out, err);
	wt_ok(!rc && strstr(out, "afd 1:1 ep2  2 5a+5f+2x+2x") &&
	      strstr(out, "every result checked"),
	      "wafer bench --afd 0:1 --expert-devices 2: its rows, every result checked");
out:
	free(ref);
	free(out);
	free(err);
}

int main(void)
{
	static const struct {
		struct wafer_moe_opts moe;
		int dense_too;
	} cfg[] = {
		{ { .n_experts = 4, .top_k = 2, .n_shared = 1 }, 0 },
		{ { .n_experts = 5, .top_k = 5, .n_shared = 1, .gate = 2 }, 1 },
	};
	unsigned int wbits, i;
	char what[64];

	/* wt_model_path() returns a static buffer */
	model = wt_model_path("stories260K.bin") ? strdup(wt_model_path("stories260K.bin")) : NULL;
	tokpath = wt_model_path("tok512.bin") ? strdup(wt_model_path("tok512.bin")) : NULL;
	if (!wt_ok(model && tokpath, "shared model and tokenizer found"))
		return wt_done();
	for (wbits = 8; wbits >= 4; wbits -= 4) {
		for (i = 0; i < 2; i++) {
			struct wafer_convert_opts c = { .wbits = wbits, .group_size = 32,
							.moe = cfg[i].moe };

			snprintf(what, sizeof(what), "int%u %u experts top-%u + 1 shared", wbits,
				 cfg[i].moe.n_experts, cfg[i].moe.top_k);
			one_model(what, &c, cfg[i].dense_too);
		}
	}
	bad_inputs();
	cli_text();
	return wt_done();
}
