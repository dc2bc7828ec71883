// SPDX-License-Identifier: MIT
/* wafer: command-line front end to libwafer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#ifndef CLI_VERSION
#define CLI_VERSION "unknown"
#endif

static void usage(FILE *f)
{
	fprintf(f,
		"usage: wafer COMMAND [OPTIONS]\n"
		"       wafer --version\n"
		"\n"
		"The command-line tool of wafer accelerators: find and describe the\n"
		"devices, watch them, run, benchmark, plan and serve llama2.c models.\n"
		"\n"
		"commands:\n"
		"  list [--json]                 list the wafer devices\n"
		"  info [-d N] [--backend B]     describe device N (default: the first)\n"
		"  run MODEL.bin -z TOK.bin ...  generate text\n"
		"  bench [MODEL.bin] [options]   tokens/s and submission cost\n"
		"  top [-d N] [--url URL]        live utilisation of a device, or of a\n"
		"                                running wafer serve\n"
		"  plan PRESET|MODEL.bin [opts]  devices, KV and tokens/s of a model projected\n"
		"                                onto a profile\n"
		"  serve MODEL.bin -z TOK.bin    OpenAI-compatible HTTP server with continuous\n"
		"                                batching and a web page\n"
		"  convert MODEL.bin OUT.blob    pack (and --moe upcycle) a checkpoint into the blob\n"
		"                                wafer run also takes\n"
		"  node [-d LIST] [--listen ADDR]  serve this host's devices as members of\n"
		"                                chains over hosts (wafer run --chain)\n"
		"  help [COMMAND]                this text, or a command's (wafer COMMAND --help)\n"
		"\n"
		"options:\n"
		"  -h, --help                    this text\n"
		"  -V, --version                 the version, with the uAPI and firmware ABI\n"
		"                                versions it was built for\n"
		"\n"
		"Without a wafer device (wafer.ko not loaded) every command that runs a\n"
		"model takes --backend inproc: the firmware simulator in the process.\n");
}

static void version(void)
{
	struct wafer_versions v;

	wafer_versions(&v);
	printf("wafer %s\nuAPI %u, firmware ABI %u.%u\n", CLI_VERSION, v.uapi,
	       v.fw_abi_major, v.fw_abi_minor);
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} cmds[] = {
	{ "list", cli_cmd_list },
	{ "info", cli_cmd_info },
	{ "run", cli_cmd_run },
	{ "bench", cli_cmd_bench },
	{ "top", cli_cmd_top },
	{ "plan", cli_cmd_plan },
	{ "serve", cli_cmd_serve },
	{ "convert", cli_cmd_convert },
	{ "node", cli_cmd_node },
};

#define N_CMDS	(sizeof(cmds) / sizeof(cmds[0]))

static int dispatch(const char *name, int argc, char **argv)
{
	unsigned int i;

	for (i = 0; i < N_CMDS; i++)
		if (!strcmp(name, cmds[i].name))
			return cmds[i].fn(argc, argv);
	fprintf(stderr, "wafer: unknown command '%s' (commands: list, info, run, bench, top, "
		"plan, serve, convert, node, help)\n", name);
	return 2;
}

int main(int argc, char **argv)
{
	char help[] = "--help";

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		version();
		return 0;
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		char *av[3] = { argv[2], help, NULL };

		/* wafer help COMMAND: that command's --help */
		if (argc > 2 && !strcmp(argv[1], "help") && argv[2][0] != '-')
			return dispatch(argv[2], 2, av);
		usage(stdout);
		return 0;
	}
	return dispatch(argv[1], argc - 1, argv + 1);
}
