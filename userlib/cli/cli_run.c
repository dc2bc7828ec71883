// SPDX-License-Identifier: MIT
/*
 * wafer run: llama2.c's `run` on a wafer device.  stdout carries exactly
 * what llama2.c prints (prompt pieces, then the continuation, streamed as
 * produced, then a newline); everything else goes to stderr.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/**
 * struct run_args - parsed command line
 * @model: checkpoint path
 * @tokenizer: tokenizer path
 * @prompt: -i
 * @temperature: -t
 * @top_p: -p
 * @seed: -s (0: time)
 * @steps: -n (0: the model's context)
 * @conv: --quant, --group, --keep-int8, --kv-int8
 * @devs: --backend, --submit, -d, --split
 */
struct run_args {
	const char *model;
	const char *tokenizer;
	const char *prompt;
	float temperature;
	float top_p;
	unsigned long long seed;
	int steps;
	struct wafer_convert_opts conv;
	struct cli_devices devs;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: wafer run MODEL.bin -z TOKENIZER.bin [options]\n"
		"  -t TEMP        temperature, 0 = greedy (default 0)\n"
		"  -p TOP_P       top-p sampling over the device's top-k (default 0.9)\n"
		"  -s SEED        random seed (default: time)\n"
		"  -n STEPS       positions to run, prompt included (default 256, 0 = max)\n"
		"  -i PROMPT      input prompt\n"
		"  -z PATH        llama2.c tokenizer.bin\n"
		"  -d LIST        devices: N (/dev/accel/accelN), or several (0-4, 0,2,3) to\n"
		"                 split the model's layers over them (implies --backend\n"
		"                 kernel; with --backend inproc, that many in-process devices)\n"
		"  --split LIST   layers per device, e.g. 2,1,1,1 (default: by SRAM, one\n"
		"                 layer per device when there are enough)\n"
		"  --quant int8|int4    weight format (default int8)\n"
		"  --group N            weights per quantisation scale (default 32)\n"
		"  --keep-int8          int4: keep embedding and classifier at int8\n"
		"  --kv-int8            int8 KV cache (default int16)\n"
		"  --backend kernel|inproc  (default: kernel if a wafer device exists)\n"
		"  --submit ioctl|uring     kernel job submission (default: uring if available)\n");
}

enum { OPT_QUANT = 256, OPT_GROUP, OPT_KEEP8, OPT_KV8, OPT_BACKEND, OPT_SUBMIT, OPT_SPLIT,
       OPT_HELP };

static const struct option long_opts[] = {
	{ "quant", required_argument, NULL, OPT_QUANT },
	{ "group", required_argument, NULL, OPT_GROUP },
	{ "keep-int8", no_argument, NULL, OPT_KEEP8 },
	{ "kv-int8", no_argument, NULL, OPT_KV8 },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "submit", required_argument, NULL, OPT_SUBMIT },
	{ "split", required_argument, NULL, OPT_SPLIT },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static int num(const char *s, double lo, double hi, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* One option; 0, or 2 for a usage error (message printed). */
static int parse_opt(struct run_args *a, int opt, const char *arg)
{
	double v;
	int ret;

	switch (opt) {
	case 't':
		if (num(arg, 0, 100, &v))
			break;
		a->temperature = (float)v;
		return 0;
	case 'p':
		if (num(arg, 0, 1, &v))
			break;
		a->top_p = (float)v;
		return 0;
	case 's':
		if (num(arg, 0, 1.8e19, &v))
			break;
		a->seed = strtoull(arg, NULL, 10);
		return 0;
	case 'n':
		if (num(arg, 0, 1 << 20, &v))
			break;
		a->steps = (int)v;
		return 0;
	case 'i':
		a->prompt = arg;
		return 0;
	case 'z':
		a->tokenizer = arg;
		return 0;
	case 'd':
		ret = cli_parse_list(arg, 0, 4095, a->devs.index, WAFER_PIPE_MAX_DEVICES);
		if (ret < 0)
			break;
		a->devs.n = (unsigned int)ret;
		return 0;
	case OPT_SPLIT:
		ret = cli_parse_list(arg, 1, 4096, a->devs.split, WAFER_PIPE_MAX_DEVICES);
		if (ret < 0)
			break;
		a->devs.n_split = (unsigned int)ret;
		return 0;
	case OPT_QUANT:
		if (strcmp(arg, "int8") && strcmp(arg, "int4"))
			break;
		a->conv.wbits = strcmp(arg, "int4") ? 8 : 4;
		return 0;
	case OPT_GROUP:
		if (num(arg, 1, 256, &v))
			break;
		a->conv.group_size = (unsigned int)v;
		return 0;
	case OPT_KEEP8:
		a->conv.keep_embed_cls_int8 = 1;
		return 0;
	case OPT_KV8:
		a->conv.kv_int8 = 1;
		return 0;
	case OPT_BACKEND:
		if (cli_parse_backend(arg, &a->devs.base.backend))
			break;
		return 0;
	case OPT_SUBMIT:
		if (!strcmp(arg, "ioctl"))
			a->devs.base.submit = WAFER_SUBMIT_IOCTL;
		else if (!strcmp(arg, "uring"))
			a->devs.base.submit = WAFER_SUBMIT_URING;
		else
			break;
		return 0;
	case OPT_HELP:
		usage(stdout);
		exit(0);
	default:
		usage(stderr);
		return 2;
	}
	fprintf(stderr, "wafer run: bad value '%s' for -%c%s\n", arg ? arg : "",
		opt < 256 ? opt : '-', opt < 256 ? "" : long_opts[opt - OPT_QUANT].name);
	return 2;
}

static int parse(struct run_args *a, int argc, char **argv)
{
	int opt, ret;

	memset(a, 0, sizeof(*a));
	a->top_p = 0.9f;
	a->steps = 256;
	a->conv.wbits = 8;
	a->conv.group_size = 32;
	a->devs.base.index = -1;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "t:p:s:n:i:z:d:", long_opts, NULL)) != -1) {
		ret = parse_opt(a, opt, optarg);
		if (ret)
			return ret;
	}
	if (optind != argc - 1 || !a->tokenizer) {
		fprintf(stderr, "wafer run: need exactly one MODEL.bin and -z TOKENIZER.bin\n");
		usage(stderr);
		return 2;
	}
	a->model = argv[optind];
	if (a->devs.n && a->devs.base.backend == WAFER_BACKEND_AUTO)
		a->devs.base.backend = WAFER_BACKEND_KERNEL;
	ret = cli_devices_check(&a->devs, "run");
	if (ret)
		return ret;
	if (!a->seed)
		a->seed = (unsigned long long)time(NULL);
	return 0;
}

static void progress(void *arg, const char *what, double done)
{
	int i, n = (int)(done * 30);

	(void)arg;
	fprintf(stderr, "\r[");
	for (i = 0; i < 30; i++)
		fputc(i < n ? '#' : ' ', stderr);
	fprintf(stderr, "] %3.0f%% %-12s%s", done * 100, what, done >= 1.0 ? "\n" : "");
}

static int print_piece(void *arg, int token, const char *piece, int from_prompt)
{
	(void)arg;
	(void)token;
	(void)from_prompt;
	if (wafer_piece_printable(piece)) {
		fputs(piece, stdout);
		fflush(stdout);
	}
	return 0;
}

static void announce(struct wafer_dev *dev, const struct run_args *a)
{
	struct wafer_info i;

	wafer_query(dev, &i);
	if (wafer_pipe_size(dev) > 1)
		fprintf(stderr, "wafer: pipeline of %u %s devices (submit %s), %u stages in all, "
			"profile %s\n", wafer_pipe_size(dev),
			wafer_backend_name(wafer_pipe_member(dev, 0)), wafer_submit_name(dev),
			i.stages, i.profile_name);
	else if (!strcmp(wafer_backend_name(dev), "inproc"))
		fprintf(stderr, "wafer: backend inproc (firmware-sim in this process%s), "
			"%u stages x %llu KiB, profile %s\n",
			a->devs.base.backend == WAFER_BACKEND_AUTO ? "; no wafer device found" : "",
			i.stages, (unsigned long long)i.sram_bytes_per_stage >> 10,
			i.profile_name);
	else
		fprintf(stderr, "wafer: backend kernel (accel%d, submit %s), %u stages x %llu KiB, "
			"profile %s\n", wafer_device_index(dev),
			wafer_submit_name(dev), i.stages,
			(unsigned long long)i.sram_bytes_per_stage >> 10, i.profile_name);
}

static void report(const struct wafer_gen_stats *s, double load_s)
{
	unsigned int decoded = s->generated_tokens > 1 ? s->generated_tokens - 1 : 0;

	fprintf(stderr, "wafer: model load %.3f s; %u prompt tokens, %u generated, %u jobs, "
		"%.3f s\n", load_s, s->prompt_tokens, s->generated_tokens, s->jobs,
		s->total_ns / 1e9);
	fprintf(stderr, "wafer: time to first token %.3f ms\n", s->ttft_ns / 1e6);
	if (decoded && s->decode_ns)
		fprintf(stderr, "achieved tok/s: %f\n", decoded / (s->decode_ns / 1e9));
	if (decoded && s->decode_device_ns)
		fprintf(stderr, "wafer: modelled device tok/s: %f (%.2f us/token)\n",
			decoded / (s->decode_device_ns / 1e9),
			s->decode_device_ns / 1e3 / decoded);
}

static int fail(const char *what)
{
	fprintf(stderr, "wafer run: %s: %s\n", what, wafer_last_error());
	return 1;
}

int cli_cmd_run(int argc, char **argv)
{
	struct wafer_gen_opts go = { 0 };
	struct wafer_gen_stats st;
	struct wafer_tokenizer *tok = NULL;
	struct wafer_model *model = NULL;
	struct wafer_ctx *ctx = NULL;
	struct wafer_dev *dev = NULL;
	const struct wafer_model_info *mi;
	struct run_args a;
	unsigned int steps;
	uint64_t t0;
	int ret = parse(&a, argc, argv);

	if (ret)
		return ret;
	if (isatty(STDERR_FILENO))
		a.conv.progress = progress;
	if (cli_open(&a.devs, &dev))
		return fail("opening the device");
	announce(dev, &a);
	t0 = cli_now_ns();
	ret = wafer_model_load_file(dev, a.model, &a.conv, &model);
	t0 = cli_now_ns() - t0;
	if (ret) {
		ret = fail("loading the model");
		goto out;
	}
	mi = wafer_model_get_info(model);
	steps = a.steps <= 0 || (unsigned int)a.steps > mi->seq_len ? mi->seq_len :
		(unsigned int)a.steps;
	if (wafer_tokenizer_load(a.tokenizer, mi->vocab_size, &tok)) {
		ret = fail("loading the tokenizer");
		goto out;
	}
	if (wafer_ctx_create(model, 1, steps, &ctx)) {
		ret = fail("creating the context");
		goto out;
	}
	if (wafer_pipe_size(dev) > 1) {
		fprintf(stderr, "wafer: the model's %u layers over %u devices:\n",
			mi->n_layers, wafer_model_parts(model));
		cli_print_parts(model, stderr);
	}

	go.steps = steps;
	go.temperature = a.temperature;
	go.top_p = a.top_p;
	go.seed = a.seed;
	go.on_piece = print_piece;
	if (wafer_generate(ctx, tok, a.prompt, &go, &st)) {
		printf("\n");
		ret = fail("generating");
		goto out;
	}
	printf("\n");
	fflush(stdout);
	report(&st, t0 / 1e9);
	ret = 0;
out:
	wafer_ctx_destroy(ctx);
	wafer_tokenizer_free(tok);
	wafer_model_unload(model);
	wafer_close(dev);
	return ret;
}
