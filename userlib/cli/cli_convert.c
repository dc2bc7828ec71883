// SPDX-License-Identifier: MIT
/* wafer convert: a checkpoint (or blob) into the packed blob wafer run takes. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: wafer convert MODEL.bin OUT.blob [options]\n"
		"Pack a llama2.c checkpoint (or a blob) into the blob wafer run, bench,\n"
		"info and serve also take, quantised and optionally upcycled to MoE.\n"
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
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int parse(int argc, char **argv, struct wafer_convert_opts *o)
{
	int c, bad = 0;
	const char *allowed = NULL;

	memset(o, 0, sizeof(*o));
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
			bad = cli_parse_moe(optarg, &o->moe), allowed = "E,TOPK[,SHARED], TOPK <= E";
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
	if (optind + 2 != argc) {
		fprintf(stderr, "wafer convert: need MODEL.bin and OUT.blob, got %d argument%s\n",
			argc - optind, argc - optind == 1 ? "" : "s");
		usage(stderr);
		return 2;
	}
	return 0;
}

int cli_cmd_convert(int argc, char **argv)
{
	struct wafer_convert_opts o;
	void *blob = NULL;
	size_t len = 0;
	FILE *f;
	int ret = parse(argc, argv, &o);

	if (ret)
		return ret == 1 ? 0 : ret;
	if (wafer_convert(argv[optind], &o, &blob, &len)) {
		fprintf(stderr, "wafer convert: %s\n", wafer_last_error());
		return 1;
	}
	f = fopen(argv[optind + 1], "wb");
	ret = !f || fwrite(blob, len, 1, f) != 1;
	if (f && fclose(f))
		ret = 1;
	free(blob);
	if (ret) {
		perror(argv[optind + 1]);
		return 1;
	}
	fprintf(stderr, "wafer convert: %s: %zu bytes%s\n", argv[optind + 1], len,
		o.moe.n_experts ? " (mixture of experts)" : "");
	cli_moe_note(&o.moe, stderr);
	return 0;
}
