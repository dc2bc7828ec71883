// SPDX-License-Identifier: MIT
/* wafer: command-line front end to libwafer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: wafer COMMAND [OPTIONS]\n"
		"\n"
		"commands:\n"
		"  list                          list the wafer devices\n"
		"  info [-d N] [-b inproc]       describe device N (default: the first)\n"
		"  run MODEL.bin -z TOK.bin ...  generate text (wafer run --help)\n"
		"  bench [MODEL.bin] [options]   tokens/s and submission cost (wafer bench --help)\n"
		"  top [-d N] [-n IT] [-i MS]    live per-stage utilisation of a device\n"
		"  plan PRESET|MODEL.bin [opts]  devices, KV and tokens/s of a model projected\n"
		"                                onto a profile (wafer plan --help)\n"
		"  serve MODEL.bin -z TOK.bin    OpenAI-compatible HTTP server with continuous\n"
		"                                batching (wafer serve --help)\n"
		"  convert MODEL.bin OUT.blob    pack (and --moe upcycle) a checkpoint into the blob\n"
		"                                wafer run also takes (wafer convert --help)\n"
		"  help                          this text\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "list"))
		return cli_cmd_list(argc - 1, argv + 1);
	if (!strcmp(argv[1], "info"))
		return cli_cmd_info(argc - 1, argv + 1);
	if (!strcmp(argv[1], "run"))
		return cli_cmd_run(argc - 1, argv + 1);
	if (!strcmp(argv[1], "bench"))
		return cli_cmd_bench(argc - 1, argv + 1);
	if (!strcmp(argv[1], "plan"))
		return cli_cmd_plan(argc - 1, argv + 1);
	if (!strcmp(argv[1], "serve"))
		return cli_cmd_serve(argc - 1, argv + 1);
	if (!strcmp(argv[1], "convert"))
		return cli_cmd_convert(argc - 1, argv + 1);
	if (!strcmp(argv[1], "top"))
		return cli_cmd_top(argc - 1, argv + 1);
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "wafer: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
