// SPDX-License-Identifier: MIT
/*
 * wafer convert: a checkpoint (or blob) into the packed blob wafer run
 * takes, or a synthetic model of a wafer plan preset's shape.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: wafer convert MODEL.bin OUT.blob [options]\n"
		"       wafer convert --synthetic PRESET OUT.blob [options]\n"
		"Pack a llama2.c checkpoint (or a blob) into the blob wafer run, bench,\n"
		"info and serve also take, quantised and optionally upcycled to MoE.\n"
		"  --synthetic PRESET    no checkpoint: seeded pseudo-random weights in a tiny\n"
		"                        model of a wafer plan preset's shape (e.g. sol): its\n"
		"                        layers and experts (top-k, shared), 8 heads of width 4,\n"
		"                        the shared tok512 tokenizer's 512 tokens; then:\n"
		"    --layers N --dim D --hidden H --heads H --kv-heads K --vocab V --seed S\n"
		"                        override the shape (hidden 0: one scale group per\n"
		"                        expert, or 4 x dim dense)\n"
		"  --quant int8|int4     weight format (default int8)\n"
		"  --group N             weights per quantisation scale (default 32)\n"
		"  --kv-int8             int8 KV cache\n"
		"  --moe E,TOPK[,SHARED] upcycle every FFN into E experts (+ SHARED), TOPK per token\n"
		"  --moe-gate softmax|sigmoid|unit  gate of the selected experts (default unit: with\n"
		"                        TOPK = E the dense model exactly)\n"
		"  --moe-copies          experts as copies of the dense FFN, the SHARED + TOPK\n"
		"                        that run weighing 1/(SHARED + TOPK), a power of two:\n"
		"                        the dense model at any TOPK\n"
		"  -h, --help            this text\n");
}

static const struct option long_opts[] = {
	{ "quant", required_argument, NULL, 'q' },
	{ "group", required_argument, NULL, 'g' },
	{ "kv-int8", no_argument, NULL, 'k' },
	{ "moe", required_argument, NULL, 'm' },
	{ "moe-gate", required_argument, NULL, 'G' },
	{ "moe-copies", no_argument, NULL, 'C' },
	{ "synthetic", required_argument, NULL, 'S' },
	{ "layers", required_argument, NULL, 'L' },
	{ "dim", required_argument, NULL, 'D' },
	{ "hidden", required_argument, NULL, 'H' },
	{ "heads", required_argument, NULL, 'N' },
	{ "kv-heads", required_argument, NULL, 'K' },
	{ "vocab", required_argument, NULL, 'V' },
	{ "seed", required_argument, NULL, 'R' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/**
 * struct synth_args - --synthetic and the shape options given
 * @preset: the preset, or NULL (a checkpoint)
 * @set: per shape field (enum order below), given on the command line
 * @val: its value
 * @moe_set: --moe given (it replaces the preset's experts)
 */
struct synth_args {
	const char *preset;
	int set[7];
	unsigned int val[7];
	int moe_set;
};

enum { SY_LAYERS, SY_DIM, SY_HIDDEN, SY_HEADS, SY_KV, SY_VOCAB, SY_SEED };

static int parse_shape(int c, const char *arg, struct synth_args *sy, const char **allowed)
{
	static const char opts[] = "LDHNKVR";
	static const unsigned int lo[] = { 1, 2, 0, 1, 1, 4, 0 };
	static const unsigned int hi[] = { 1024, 65536, 262144, 1024, 1024, 1u << 24, ~0u };
	static const char *const range[] = { "1..1024", "2..65536", "0..262144", "1..1024",
					     "1..1024", "4..16777216", "0..4294967295" };
	unsigned int k = (unsigned int)(strchr(opts, c) - opts);

	sy->set[k] = 1;
	*allowed = range[k];
	return cli_parse_uint(arg, lo[k], hi[k], &sy->val[k]);
}

static int parse(int argc, char **argv, struct wafer_convert_opts *o, struct synth_args *sy)
{
	int c, bad = 0;
	const char *allowed = NULL;

	memset(o, 0, sizeof(*o));
	memset(sy, 0, sizeof(*sy));
	o->wbits = 8;
	o->group_size = 32;
	o->moe.gate = WAFER_MOE_GATE_UNIT;	/* the dense model at top-k = E */
	optind = 1;
	while (!bad && (c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		if (c == 'q' && (!strcmp(optarg, "int8") || !strcmp(optarg, "int4")))
			o->wbits = strcmp(optarg, "int4") ? 8 : 4;
		else if (c == 'q')
			bad = -1, allowed = "int8 or int4";
		else if (c == 'g')
			bad = cli_parse_uint(optarg, 1, 256, &o->group_size), allowed = "1..256";
		else if (c == 'k')
			o->kv_int8 = 1;
		else if (c == 'm')
			bad = cli_parse_moe(optarg, &o->moe), allowed = "E,TOPK[,SHARED], TOPK <= E",
			sy->moe_set = 1;
		else if (c == 'S')
			sy->preset = optarg;
		else if (c && strchr("LDHNKVR", c))
			bad = parse_shape(c, optarg, sy, &allowed);
		else if (c == 'G')
			bad = cli_parse_gate(optarg, &o->moe), allowed = "softmax, sigmoid or unit";
		else if (c == 'C')
			o->moe.copies = 1;
		else if (c == 'h')
			return usage(stdout), 1;
		else
			bad = 1;
	}
	if (bad && c != '?')
		return cli_bad_value("convert", argv, optind, optarg, allowed);
	if (bad) {
		usage(stderr);
		return 2;
	}
	if (sy->preset && optind + 1 != argc) {
		fprintf(stderr, "wafer convert: --synthetic needs OUT.blob alone, got %d "
			"argument%s\n", argc - optind, argc - optind == 1 ? "" : "s");
		usage(stderr);
		return 2;
	}
	for (c = 0; !sy->preset && c < 7; c++)
		if (sy->set[c]) {
			fprintf(stderr, "wafer convert: --layers, --dim, --hidden, --heads, "
				"--kv-heads, --vocab and --seed go with --synthetic\n");
			return 2;
		}
	if (!sy->preset && optind + 2 != argc) {
		fprintf(stderr, "wafer convert: need MODEL.bin and OUT.blob, got %d argument%s\n",
			argc - optind, argc - optind == 1 ? "" : "s");
		usage(stderr);
		return 2;
	}
	return 0;
}

/* The synthetic model: the preset's shape, the options given over it. */
static int synthesize(const struct synth_args *sy, struct wafer_convert_opts *o, void **blob,
		      size_t *len)
{
	struct wafer_synth_opts s;
	struct wafer_moe_opts moe;
	unsigned int *f[6] = { &s.n_layers, &s.dim, &s.hidden_dim, &s.n_heads, &s.n_kv_heads,
			       &s.vocab };
	int k;

	if (wafer_synth_preset(sy->preset, &s, &moe))
		return -1;
	if (!sy->moe_set) {
		moe.copies = o->moe.copies;
		o->moe = moe;
	}
	for (k = 0; k < 6; k++)
		if (sy->set[k])
			*f[k] = sy->val[k];
	if (sy->set[SY_SEED])
		s.seed = sy->val[SY_SEED];
	return wafer_synthesize(&s, o, blob, len);
}

int cli_cmd_convert(int argc, char **argv)
{
	struct wafer_convert_opts o;
	struct synth_args sy;
	const char *out;
	void *blob = NULL;
	size_t len = 0;
	FILE *f;
	int ret = parse(argc, argv, &o, &sy);

	if (ret)
		return ret == 1 ? 0 : ret;
	out = argv[optind + !sy.preset];
	if (sy.preset ? synthesize(&sy, &o, &blob, &len) :
	    wafer_convert(argv[optind], &o, &blob, &len)) {
		fprintf(stderr, "wafer convert: %s\n", wafer_last_error());
		return 1;
	}
	f = fopen(out, "wb");
	ret = !f || fwrite(blob, len, 1, f) != 1;
	if (f && fclose(f))
		ret = 1;
	free(blob);
	if (ret) {
		perror(out);
		return 1;
	}
	fprintf(stderr, "wafer convert: %s: %zu bytes%s\n", out, len,
		o.moe.n_experts ? " (mixture of experts)" : "");
	cli_moe_note(&o.moe, stderr);
	return 0;
}
