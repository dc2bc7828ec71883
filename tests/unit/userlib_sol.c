// SPDX-License-Identifier: MIT
/*
 * The seed model's shape at the per-host bound: a synthetic Sol-shaped
 * model (wafer_synth_preset("sol"): 80 layers, 256 routed experts, top-10,
 * one shared, tiny width, seeded weights), made by the library and by
 * `wafer convert --synthetic sol` (the same bytes; another seed, other
 * bytes), split over a pipeline of WAFER_PIPE_MAX_DEVICES (64) in-process
 * devices (wafer_split_layers(): the first 16 take two layers, the rest
 * one; 80 devices need a chain over hosts):
 *
 * - greedy text of a prompt bit-identical to the same model on one device;
 * - the modelled token rate of B sequences decoding at once, as `wafer
 *   bench` measures it (tokens over the growth of the pipeline's modelled
 *   makespan, wafer_dev_stats()), against wafer_plan() of the blob's shape
 *   on as many devices of the same profile: within 5 % (the ratio printed);
 * - one device more than the bound is refused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wafer.h"
#include "wt_rate.h"
#include "wt_util.h"

#define DEVICES		64	/* one host's devices at most (WAFER_PIPE_MAX_DEVICES) */
#define GROUP		4	/* 257 experts of 4 hidden units: one W2 group each */
#define GEN_STEPS	40
#define WARM		4	/* decode steps before the measured ones */
#define STEPS		12

static struct wafer_tokenizer *tok;

/*
 * A member of a pipeline of many: two stages hold its one or two layers, one
 * per stage, as the plan places them; a few devices have the profile's 16.
 */
static struct wafer_open_opts dev_opts(unsigned int n)
{
	struct wafer_open_opts o = { .backend = WAFER_BACKEND_INPROC, .profile = "wafer" };

	if (n > 8) {
		o.stages = 2;
		o.sram_bytes = 2u << 20;
	}
	return o;
}

static int open_n(unsigned int n, struct wafer_dev **dev)
{
	struct wafer_open_opts *o = calloc(n, sizeof(*o));
	struct wafer_pipe_opts po = { .n_devices = n, .devices = o };
	unsigned int i;
	int ret;

	if (!o)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		o[i] = dev_opts(n);
	ret = n == 1 ? wafer_open(&o[0], dev) : wafer_open_pipeline(&po, dev);
	free(o);
	return ret;
}

/**
 * struct text - what greedy generation produced
 * @bytes: the text, pieces appended
 * @n: bytes
 * @ids: the generated tokens, as decimal numbers (readable where the
 *	pieces of a random model are not)
 */
struct text {
	char bytes[2048];
	size_t n;
	char ids[512];
};

static int gen_piece(void *arg, int token, const char *piece, int from_prompt)
{
	struct text *t = arg;
	size_t k = piece ? strlen(piece) : 0, l = strlen(t->ids);

	if (t->n + k < sizeof(t->bytes)) {
		memcpy(t->bytes + t->n, piece, k);
		t->n += k;
	}
	if (!from_prompt && l + 12 < sizeof(t->ids))
		snprintf(t->ids + l, sizeof(t->ids) - l, "%s%d", l ? " " : "", token);
	return 0;
}

/* Greedy text of a fixed prompt on @n devices. */
static int generate(unsigned int n, const void *blob, size_t len, struct text *text)
{
	struct wafer_gen_opts g = { .steps = GEN_STEPS, .on_piece = gen_piece, .arg = text };
	struct wafer_model *m = NULL;
	struct wafer_ctx *ctx = NULL;
	struct wafer_dev *dev = NULL;
	int ret;

	memset(text, 0, sizeof(*text));
	ret = open_n(n, &dev);
	if (!ret)
		ret = wafer_model_load(dev, blob, len, &m);
	if (!ret)
		ret = wafer_ctx_create(m, 1, 64, &ctx);
	if (!ret)
		ret = wafer_generate(ctx, tok, "Once upon a time there was a little dog", &g, NULL);
	wafer_ctx_destroy(ctx);
	wafer_model_unload(m);
	wafer_close(dev);
	return ret;
}

/* The run's rate of @b sequences on @n devices over wafer_plan()'s for the blob's shape. */
static void rate_agrees(unsigned int n, unsigned int b, const void *blob, size_t len)
{
	struct wafer_model *m = NULL;
	struct wafer_dev *dev = NULL;
	struct wafer_plan p;
	double rate = 0, ratio;
	int ret;

	ret = open_n(n, &dev) || wafer_model_load(dev, blob, len, &m) ||
	      wt_decode_rate(dev, m, b, WARM, STEPS, &rate);
	wafer_model_unload(m);
	wafer_close(dev);
	if (!wt_ok(!ret, "%u devices, %u sequences decoding: modelled rate (%s)", n, b,
		   ret ? wafer_last_error() : "ok"))
		return;
	ret = wt_plan_rate(blob, len, n, b, WARM, STEPS, &p);
	if (!wt_ok(!ret, "the plan of the blob's shape on %u wafer devices (%s)",
		   n, ret ? wafer_last_error() : "ok"))
		return;
	ratio = rate / (double)p.tok_s_aggregate;
	wt_ok(ratio > 0.95 && ratio < 1.05, "%u devices, B = %u: run %.0f tok/s, plan %llu tok/s "
	      "(bound: %s): ratio %.4f, within 5 %%", n, b, rate,
	      (unsigned long long)p.tok_s_aggregate, p.bound, ratio);
}

/* `wafer convert --synthetic sol`: the library's bytes; the seed changes them. */
static void check_cli(const void *blob, size_t len)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char path[] = "/tmp/wafer-sol-XXXXXX", cmd[512], out[4096];
	void *file = NULL;
	size_t n = 0;
	FILE *f;
	int fd = mkstemp(path), ret;

	if (!wt_ok(fd >= 0, "a temporary file"))
		return;
	close(fd);
	snprintf(cmd, sizeof(cmd), "%s/bin/wafer convert --synthetic sol %s --group %d 2>&1",
		 build, path, GROUP);
	ret = wt_capture(cmd, out, sizeof(out));
	f = fopen(path, "rb");
	file = malloc(len + 1);
	if (f && file)
		n = fread(file, 1, len + 1, f);
	if (f)
		fclose(f);
	wt_ok(ret == 0 && n == len && !memcmp(file, blob, len),
	      "wafer convert --synthetic sol: the library's %zu bytes (%s)", len, out);
	snprintf(cmd, sizeof(cmd), "%s/bin/wafer convert --synthetic sol %s --group %d "
		 "--seed 2 2>&1", build, path, GROUP);
	ret = wt_capture(cmd, out, sizeof(out));
	f = fopen(path, "rb");
	n = 0;
	if (f && file)
		n = fread(file, 1, len + 1, f);
	if (f)
		fclose(f);
	wt_ok(ret == 0 && n == len && memcmp(file, blob, len),
	      "--seed 2: the same shape, other weights");
	snprintf(cmd, sizeof(cmd), "%s/bin/wafer convert --synthetic sol %s --kv-heads 3 2>&1",
		 build, path);
	ret = wt_capture(cmd, out, sizeof(out));
	wt_ok(ret != 0 && strstr(out, "kv heads 3"), "--kv-heads 3 of 8 heads: refused, "
	      "naming the field (%s)", out);
	snprintf(cmd, sizeof(cmd), "%s/bin/wafer convert --synthetic nosuch %s 2>&1", build, path);
	ret = wt_capture(cmd, out, sizeof(out));
	wt_ok(ret != 0 && strstr(out, "unknown preset nosuch"), "an unknown preset: refused");
	free(file);
	unlink(path);
}

int main(void)
{
	struct wafer_convert_opts c = { .wbits = 8, .group_size = GROUP };
	const char *tokpath = wt_model_path("tok512.bin");
	struct wafer_model_info info = { 0 };
	struct wafer_synth_opts s;
	struct wafer_model *m = NULL;
	struct wafer_dev *dev = NULL;
	static struct text one, many;
	void *blob = NULL;
	size_t len = 0;
	int ret;

	if (!wt_ok(tokpath && !wafer_tokenizer_load(tokpath, 512, &tok), "tokenizer"))
		return wt_done();
	ret = wafer_synth_preset("sol", &s, &c.moe) || wafer_synthesize(&s, &c, &blob, &len);
	if (!wt_ok(!ret, "synthetic sol: %zu bytes (%s)", len, ret ? wafer_last_error() : "ok"))
		return wt_done();
	ret = open_n(1, &dev) || wafer_model_load(dev, blob, len, &m);
	if (!ret)
		info = *wafer_model_get_info(m);
	wt_ok(!ret && info.n_layers == 80 && info.n_experts == 256 &&
	      info.n_experts_active == 10 && info.n_shared_experts == 1 && info.vocab_size == 512,
	      "its shape: %u layers, %u experts, top-%u, %u shared, vocab %u", info.n_layers,
	      info.n_experts, info.n_experts_active, info.n_shared_experts, info.vocab_size);
	wafer_model_unload(m);
	wafer_close(dev);
	check_cli(blob, len);

	ret = generate(1, blob, len, &one);
	wt_ok(!ret && one.ids[0], "one device: greedy tokens %s (%s)", one.ids,
	      ret ? wafer_last_error() : "ok");
	ret = generate(DEVICES, blob, len, &many);
	wt_ok(!ret && one.n == many.n && !memcmp(one.bytes, many.bytes, one.n) &&
	      !strcmp(one.ids, many.ids), "%d devices: the same text, bit for bit: %s (%s)",
	      DEVICES, many.ids, ret ? wafer_last_error() : "ok");
	rate_agrees(DEVICES, 16, blob, len);
	rate_agrees(DEVICES, 64, blob, len);
	rate_agrees(1, 64, blob, len);

	ret = open_n(DEVICES + 1, &dev);
	wt_ok(ret == -EINVAL && strstr(wafer_last_error(), "1..64"),
	      "%d devices in one pipeline: -EINVAL (%s)", DEVICES + 1, wafer_last_error());
	wafer_tokenizer_free(tok);
	free(blob);
	return wt_done();
}
