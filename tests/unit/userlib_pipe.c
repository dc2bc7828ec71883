// SPDX-License-Identifier: MIT
/*
 * libwafer pipelines (wafer_open_pipeline()) on the inproc backend: the
 * shared model split over N = 2..5 in-process devices (5 = one layer per
 * device), automatically and by an explicit split, with mixed profiles,
 * gives result records byte-identical to one device, int8 and int4: a
 * 100-position prefill returning every position, then decode steps of
 * several sequences queued at once; greedy text through wafer_generate()
 * is identical too.  Where the layers went (wafer_model_part()), the
 * automatic split (wafer_split_layers()), a model too big for one device
 * that runs on enough of them, and the errors of bad splits and options.
 * Prints modelled and host figures of 5 devices against 1 (no thresholds).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wafer.h"
#include "wt_util.h"

#define SLOTS	4
#define PREFILL	100
#define DECODE	12
#define CTX	(PREFILL + DECODE)
#define TOPK	4
#define REC	WAFER_RESULT_SIZE(TOPK)
/* Result records of one run: the prefill's, then one per slot and step. */
#define OUT_RECS	(PREFILL + SLOTS * DECODE)

static struct wafer_tokenizer *tok;

/**
 * struct run - what one workload produced
 * @out: every result record
 * @ok: all jobs completed with status 0
 * @step_ns: modelled device time of slot 0's last decode step
 * @rate: modelled tokens per second of the device's (chain's) clock
 * @host_s: host seconds of the decode steps
 */
struct run {
	uint8_t out[OUT_RECS * REC];
	int ok;
	uint64_t step_ns;
	uint64_t rate;
	double host_s;
};

static struct wafer_open_opts inproc(const char *profile)
{
	return (struct wafer_open_opts){ .backend = WAFER_BACKEND_INPROC, .profile = profile };
}

/* Submits @n jobs and reaps them all; slot 0's last device time in *@ns. */
static int run_jobs(struct wafer_dev *dev, struct wafer_job *jobs, unsigned int n, uint64_t *ns)
{
	struct wafer_completion c[SLOTS];
	unsigned int done = 0, i;
	int ret = wafer_submit(dev, jobs, n), bad = 0;

	if (ret != (int)n)
		return -1;
	while (done < n) {
		ret = wafer_reap(dev, c, SLOTS, 1, -1);
		if (ret <= 0)
			return -1;
		for (i = 0; i < (unsigned int)ret; i++) {
			bad += c[i].status != 0;
			if (c[i].user_data == 0)
				*ns = c[i].device_ns;
		}
		done += (unsigned int)ret;
	}
	return bad ? -1 : 0;
}

/* The workload on @dev: prefill of slot 0, then DECODE steps of every slot. */
static int workload(struct wafer_dev *dev, const void *blob, size_t len, struct run *r)
{
	struct wafer_job jobs[SLOTS];
	struct wafer_model *m = NULL;
	struct wafer_ctx *ctx = NULL;
	struct wafer_bo *in = NULL, *out = NULL;
	struct wafer_dev_stats st;
	uint32_t *tk;
	unsigned int s, step, i;
	uint64_t ns = 0;
	double t0;
	int ret;

	memset(r, 0, sizeof(*r));
	ret = wafer_model_load(dev, blob, len, &m);
	if (!ret)
		ret = wafer_ctx_create(m, SLOTS, CTX, &ctx);
	if (!ret)
		ret = wafer_bo_create(dev, CTX * SLOTS * 4, &in);
	if (!ret)
		ret = wafer_bo_create(dev, sizeof(r->out) + REC, &out);
	if (ret)
		goto out;
	tk = wafer_bo_map(in);
	/* Every slot's prompt: tokens of its own, from a fixed pattern. */
	for (s = 0; s < SLOTS; s++)
		for (i = 0; i < CTX; i++)
			tk[s * CTX + i] = i ? (i * 37 + s * 101) % 500 + 3 : 1;
	jobs[0] = (struct wafer_job){
		.ctx = ctx, .slot = 0, .start_pos = 0, .n_tokens = PREFILL,
		.flags = WAFER_JOB_ALL_POSITIONS, .top_k = TOPK, .in = in, .out = out,
	};
	ret = run_jobs(dev, jobs, 1, &ns);
	/* The other slots' prompts, one position each, so every slot is at PREFILL. */
	for (i = 0; i < PREFILL && !ret; i++) {
		for (s = 1; s < SLOTS; s++)
			jobs[s - 1] = (struct wafer_job){
				.ctx = ctx, .slot = s, .start_pos = i, .n_tokens = 1, .in = in,
				.in_offset = (s * CTX + i) * 4, .out = out,
				.out_offset = sizeof(r->out), .user_data = 1,
			};
		ret = run_jobs(dev, jobs, SLOTS - 1, &ns);
	}
	t0 = wt_now();
	for (step = 0; step < DECODE && !ret; step++) {
		for (s = 0; s < SLOTS; s++)
			jobs[s] = (struct wafer_job){
				.ctx = ctx, .slot = s, .start_pos = PREFILL + step, .n_tokens = 1,
				.top_k = TOPK, .in = in, .in_offset = (s * CTX + PREFILL + step) * 4,
				.out = out,
				.out_offset = (uint64_t)(PREFILL + step * SLOTS + s) * REC,
				.user_data = s,
			};
		ret = run_jobs(dev, jobs, SLOTS, &ns);
	}
	r->host_s = wt_now() - t0;
	r->step_ns = ns;
	r->ok = !ret;
	memcpy(r->out, wafer_bo_map(out), sizeof(r->out));
	if (!wafer_dev_stats(dev, &st) && st.modelled_makespan_ns)
		r->rate = st.tokens * 1000000000ull / st.modelled_makespan_ns;
out:
	wafer_bo_destroy(out);
	wafer_bo_destroy(in);
	wafer_ctx_destroy(ctx);
	wafer_model_unload(m);
	return ret;
}

static int open_pipe(unsigned int n, const struct wafer_open_opts *o, const unsigned int *split,
		     struct wafer_dev **dev)
{
	struct wafer_pipe_opts po = { .n_devices = n, .devices = o, .split = split };

	return wafer_open_pipeline(&po, dev);
}

/* Greedy text of a prompt, as the tokens wafer_generate() produced. */
static int gen_piece(void *arg, int token, const char *piece, int from_prompt)
{
	char *text = arg;

	(void)token;
	(void)from_prompt;
	if (piece && strlen(text) + strlen(piece) < 4000)
		strcat(text, piece);
	return 0;
}

static int generate(struct wafer_dev *dev, const void *blob, size_t len, char *text)
{
	struct wafer_gen_opts g = { .steps = 180, .on_piece = gen_piece, .arg = text };
	struct wafer_model *m = NULL;
	struct wafer_ctx *ctx = NULL;
	int ret;

	text[0] = '\0';
	ret = wafer_model_load(dev, blob, len, &m);
	if (!ret)
		ret = wafer_ctx_create(m, 1, 256, &ctx);
	if (!ret)
		ret = wafer_generate(ctx, tok, "Once upon a time there was a little dog who "
				     "liked to run in the park with his friends every day, "
				     "and one day he found a big red ball under a tree", &g, NULL);
	wafer_ctx_destroy(ctx);
	wafer_model_unload(m);
	return ret;
}

static void check_parts(struct wafer_dev *dev, const void *blob, size_t len)
{
	struct wafer_model_part p;
	struct wafer_model *m = NULL;
	struct wafer_ctx *ctx = NULL;
	unsigned int i, n, next = 0;
	int ok;

	if (!wt_ok(wafer_model_load(dev, blob, len, &m) == 0 &&
		   wafer_ctx_create(m, 2, 64, &ctx) == 0, "parts: load and context"))
		goto out;
	n = wafer_model_parts(m);
	ok = n == 5;
	for (i = 0; i < n && ok; i++) {
		ok = !wafer_model_part(m, i, &p) && p.member == i && p.layer_first == next &&
		     p.layer_count == 1 && p.sram_bytes && p.kv_bytes &&
		     p.embed == (i == 0) && p.head == (i == n - 1) && p.device_index == -1 &&
		     !p.chained;
		next += p.layer_count;
	}
	wt_ok(ok, "5 devices: one layer each, embedding on the first, classifier on the last, "
	      "SRAM and KV on each, posted by the library (%u parts)", n);
	wt_ok(wafer_model_part(m, n, &p) == -EINVAL, "part %u of %u: -EINVAL (%s)", n, n,
	      wafer_last_error());
out:
	wafer_ctx_destroy(ctx);
	wafer_model_unload(m);
}

static void check_split_fn(void)
{
	unsigned int c[WAFER_PIPE_MAX_DEVICES];
	uint64_t cap[3] = { 1 << 20, 2 << 20, 1 << 20 };
	int ret;

	wt_ok(wafer_split_layers(5, 5, NULL, c) == 5 && c[0] == 1 && c[4] == 1,
	      "split 5 layers over 5 devices: one each");
	wt_ok(wafer_split_layers(5, 8, NULL, c) == 5 && c[4] == 1 && c[5] == 0 && c[7] == 0,
	      "5 layers over 8 devices: 5 used, the rest get none");
	wt_ok(wafer_split_layers(5, 2, NULL, c) == 2 && c[0] == 3 && c[1] == 2,
	      "5 layers over 2 devices: 3 + 2");
	{
		uint64_t eq[4] = { 3 << 20, 3 << 20, 3 << 20, 3 << 20 };
		unsigned int e[4];

		/* The split wafer_plan() places by (wafer_split_even()). */
		ret = wafer_split_layers(5, 4, eq, e);
		wt_ok(ret == 4 && wafer_split_layers(5, 4, NULL, c) == 4 && !memcmp(c, e, sizeof(e)) &&
		      c[0] == 2 && c[1] == 1 && c[2] == 1 && c[3] == 1,
		      "5 layers over 4 equal devices: 2 + 1 + 1 + 1, with or without their SRAM");
	}
	ret = wafer_split_layers(10, 3, cap, c);
	wt_ok(ret == 3 && c[0] == 3 && c[1] == 4 && c[2] == 3,
	      "10 layers over SRAM 1:2:1: %u + %u + %u", c[0], c[1], c[2]);
	wt_ok(wafer_split_layers(0, 2, NULL, c) == -EINVAL &&
	      wafer_split_layers(5, WAFER_PIPE_MAX_DEVICES + 1, NULL, c) == -EINVAL,
	      "no layers or too many devices: -EINVAL (%s)", wafer_last_error());
}

static void check_errors(const void *blob, size_t len)
{
	struct wafer_open_opts o[3] = { inproc(NULL), inproc(NULL), inproc(NULL) };
	struct wafer_pipe_opts po = { .n_devices = 0, .devices = o };
	unsigned int bad_sum[2] = { 2, 2 }, zero[2] = { 5, 0 };
	struct wafer_model *m = NULL;
	struct wafer_dev *dev = NULL;

	wt_ok(wafer_open_pipeline(&po, &dev) == -EINVAL && !dev,
	      "a pipeline of 0 devices: -EINVAL (%s)", wafer_last_error());
	po.n_devices = WAFER_PIPE_MAX_DEVICES + 1;
	wt_ok(wafer_open_pipeline(&po, &dev) == -EINVAL && !dev,
	      "a pipeline of %d devices: -EINVAL", WAFER_PIPE_MAX_DEVICES + 1);
	wt_ok(open_pipe(2, o, zero, &dev) == -EINVAL && !dev &&
	      strstr(wafer_last_error(), "device 1"),
	      "split giving a device no layer: -EINVAL (%s)", wafer_last_error());
	if (wt_ok(open_pipe(2, o, bad_sum, &dev) == 0, "split 2 + 2 opens")) {
		wt_ok(wafer_model_load(dev, blob, len, &m) == -EINVAL && !m &&
		      strstr(wafer_last_error(), "4 layers given, the model has 5"),
		      "a split not summing to the model's layers: -EINVAL at load (%s)",
		      wafer_last_error());
		wafer_close(dev);
	}
	o[1].backend = WAFER_BACKEND_KERNEL;
	o[1].index = 4000;
	wt_ok(open_pipe(2, o, NULL, &dev) < 0 && !dev,
	      "a member that cannot open fails the pipeline (%s)", wafer_last_error());
}

/* asic members with little SRAM: how many the model needs. */
static void check_too_big(const void *blob, size_t len)
{
	struct wafer_open_opts o[5];
	struct wafer_model *m = NULL;
	struct wafer_dev *dev;
	unsigned int n, i;
	int ret = -1, first = 0;

	for (i = 0; i < 5; i++)
		o[i] = (struct wafer_open_opts){ .backend = WAFER_BACKEND_INPROC,
						 .profile = "asic", .stages = 2,
						 .sram_bytes = 256 << 10 };
	for (n = 1; n <= 5 && ret; n++) {
		if (open_pipe(n, o, NULL, &dev))
			break;
		ret = wafer_model_load(dev, blob, len, &m);
		wt_diag("%u asic devices: %s", n, ret ? wafer_last_error() : "loaded");
		if (ret && n == 1)
			first = ret;
		wafer_model_unload(m);
		m = NULL;
		wafer_close(dev);
	}
	wt_ok(first == -ENOSPC && !ret && n - 1 > 1,
	      "a model too big for one asic device of 2 x 256 KiB loads on %u of them", n - 1);
}

static void check_blob(const char *what, const void *blob, size_t len)
{
	static struct run one, many;
	static const unsigned int splits[][5] = { { 4, 1 }, { 1, 3, 1 }, { 2, 1, 1, 1 } };
	struct wafer_open_opts o[5], mixed[3] = { inproc("asic"), inproc("wafer"),
						  inproc("asic") };
	char text1[4096], textn[4096];
	struct wafer_dev *dev;
	unsigned int n, i;

	for (i = 0; i < 5; i++)
		o[i] = inproc(NULL);
	if (!wt_ok(open_pipe(1, o, NULL, &dev) == 0, "%s: a pipeline of one device", what))
		return;
	wt_ok(workload(dev, blob, len, &one) == 0 && one.ok, "%s: 1 device runs the workload",
	      what);
	wt_ok(generate(dev, blob, len, text1) == 0 && strlen(text1) > 100,
	      "%s: greedy generation on 1 device (%zu bytes)", what, strlen(text1));
	wafer_close(dev);
	for (n = 2; n <= 5; n++) {
		if (!wt_ok(open_pipe(n, o, NULL, &dev) == 0 && wafer_pipe_size(dev) == n,
			   "%s: pipeline of %u devices", what, n))
			continue;
		wt_ok(workload(dev, blob, len, &many) == 0 &&
		      !memcmp(one.out, many.out, sizeof(one.out)),
		      "%s: %u devices (automatic split): every result record identical", what, n);
		if (n == 5)
			wt_diag("%s: modelled decode step %llu ns on 1 device, %llu ns on 5; "
				"modelled aggregate %llu tok/s vs %llu tok/s (%.2fx); host decode "
				"%.1f ms vs %.1f ms", what, (unsigned long long)one.step_ns,
				(unsigned long long)many.step_ns, (unsigned long long)many.rate,
				(unsigned long long)one.rate,
				one.rate ? (double)many.rate / (double)one.rate : 0.0,
				one.host_s * 1e3, many.host_s * 1e3);
		wt_ok(generate(dev, blob, len, textn) == 0 && !strcmp(text1, textn),
		      "%s: %u devices: greedy text identical", what, n);
		if (n == 5)
			check_parts(dev, blob, len);
		wafer_close(dev);
		if (n - 2 < 3 && wt_ok(open_pipe(n, o, splits[n - 2], &dev) == 0,
				       "%s: %u devices, explicit split", what, n)) {
			wt_ok(workload(dev, blob, len, &many) == 0 &&
			      !memcmp(one.out, many.out, sizeof(one.out)),
			      "%s: %u devices split %u+%u...: every result record identical",
			      what, n, splits[n - 2][0], splits[n - 2][1]);
			wafer_close(dev);
		}
	}
	if (wt_ok(open_pipe(3, mixed, NULL, &dev) == 0, "%s: asic + wafer + asic", what)) {
		struct wafer_info info;

		wt_ok(workload(dev, blob, len, &many) == 0 &&
		      !memcmp(one.out, many.out, sizeof(one.out)) &&
		      !wafer_query(dev, &info) && !strcmp(info.profile_name, "mixed"),
		      "%s: mixed profiles: every result record identical, profile %s", what,
		      info.profile_name);
		wafer_close(dev);
	}
}

int main(void)
{
	struct wafer_convert_opts c8 = { .wbits = 8 }, c4 = { .wbits = 4 };
	const char *path;
	const char *tokpath = wt_model_path("tok512.bin");	/* a static buffer */
	void *blob8 = NULL, *blob4 = NULL;
	size_t len8, len4;

	if (!wt_ok(tokpath && !wafer_tokenizer_load(tokpath, 512, &tok), "tokenizer"))
		return wt_done();
	path = wt_model_path("stories260K.bin");
	if (!wt_ok(path && !wafer_convert(path, &c8, &blob8, &len8) &&
		   !wafer_convert(path, &c4, &blob4, &len4), "stories260K int8 and int4 blobs"))
		return wt_done();
	check_split_fn();
	check_errors(blob8, len8);
	check_too_big(blob8, len8);
	check_blob("int8", blob8, len8);
	check_blob("int4", blob4, len4);
	wafer_tokenizer_free(tok);
	free(blob8);
	free(blob4);
	return wt_done();
}
