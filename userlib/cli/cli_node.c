// SPDX-License-Identifier: MIT
/*
 * wafer node: serve this host's devices as members of chains over hosts
 * (wafer_node_serve(); clients name them with `wafer run --chain`).
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "wafer_link.h"

static volatile int stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: wafer node [-d LIST] [--backend kernel|inproc] [--listen ADDR]\n"
		"                  [--port N] [--timeout MS]\n"
		"\n"
		"Serves this host's devices to chains over hosts: a client (wafer run,\n"
		"bench or serve with --chain HOST[:PORT]:DEVICES,...) claims a device per\n"
		"control connection, loads its layer range and starts its links; jobs\n"
		"arrive as records on the device's incoming RDMA link and leave on its\n"
		"outgoing one.  A client that goes frees its devices at once.\n"
		"\n"
		"  -d LIST        the devices served: 0, 0-3, 0,2 (default 0)\n"
		"  --backend B    kernel (the accel devices, default) or inproc\n"
		"  --listen ADDR  the address to listen on: its RDMA device's netdev's\n"
		"                 (default: every address; the links then listen on all)\n"
		"  --port N       the control port (default 7470)\n"
		"  --timeout MS   a client's hello, the links' waits (default 10000)\n"
		"  -h, --help     this text\n");
}

int cli_cmd_node(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "backend", required_argument, NULL, 'b' },
		{ "listen", required_argument, NULL, 'l' },
		{ "port", required_argument, NULL, 'p' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int dev[64] = { 0 }, port = 0, timeout = 0;
	struct wafer_node_opts o = { .devices = dev, .n_devices = 1, .stop = &stop };
	struct sigaction sa = { .sa_handler = on_signal };
	enum wafer_backend be = WAFER_BACKEND_KERNEL;
	int c, n;

	optind = 1;
	while ((c = getopt_long(argc, argv, "d:h", lo, NULL)) != -1) {
		switch (c) {
		case 'd':
			n = cli_parse_list(optarg, 0, 4095, dev, 64);
			if (n < 0)
				return cli_bad_value("node", argv, optind, optarg,
						     "a device index 0..4095 or a list: 0-3, 0,2");
			o.n_devices = (unsigned int)n;
			break;
		case 'b':
			if (cli_parse_backend(optarg, &be))
				return cli_bad_value("node", argv, optind, optarg, "kernel or inproc");
			break;
		case 'l':
			o.addr = optarg;
			break;
		case 'p':
			if (cli_parse_uint(optarg, 1, 65535, &port))
				return cli_bad_value("node", argv, optind, optarg, "1..65535");
			break;
		case 't':
			if (cli_parse_uint(optarg, 100, 3600000, &timeout))
				return cli_bad_value("node", argv, optind, optarg, "100..3600000");
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "wafer node: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	o.port = port;
	o.timeout_ms = (int)timeout;
	o.inproc = be == WAFER_BACKEND_INPROC;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (wafer_node_serve(&o)) {
		fprintf(stderr, "%s\n", wafer_last_error());
		return 1;
	}
	return 0;
}
