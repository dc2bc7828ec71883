// SPDX-License-Identifier: MIT
/* wafer: command-line front end to libwafer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wafer.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: wafer COMMAND [OPTIONS]\n"
		"\n"
		"commands:\n"
		"  list              list the wafer devices\n"
		"  info [-d N]       describe device N (default: the first)\n"
		"  help              this text\n");
}

static void print_desc(const struct wafer_device_desc *d)
{
	printf("accel%d  %s  wafer %d.%d.%d  %s\n", d->index, d->path,
	       d->drv_major, d->drv_minor, d->drv_patchlevel, d->desc);
}

static int cmd_list(void)
{
	struct wafer_device_desc d[64];
	int n = wafer_list_devices(d, 64), i;

	if (n < 0) {
		fprintf(stderr, "wafer: %s\n", wafer_last_error());
		return 1;
	}
	if (n == 0)
		fprintf(stderr, "wafer: no wafer devices in %s\n", WAFER_ACCEL_DIR);
	for (i = 0; i < n && i < 64; i++)
		print_desc(&d[i]);
	return 0;
}

static int parse_index(const char *s, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > 4095)
		return -1;
	*out = (int)v;
	return 0;
}

static int cmd_info(int argc, char **argv)
{
	struct wafer_device_desc d[64];
	int index = -1, n, i, opt;

	optind = 1;
	while ((opt = getopt(argc, argv, "d:")) != -1) {
		if (opt != 'd' || parse_index(optarg, &index)) {
			fprintf(stderr, "wafer info: usage: wafer info [-d N]\n");
			return 2;
		}
	}
	n = wafer_list_devices(d, 64);
	if (n < 0) {
		fprintf(stderr, "wafer: %s\n", wafer_last_error());
		return 1;
	}
	for (i = 0; i < n && i < 64; i++) {
		if (index >= 0 && d[i].index != index)
			continue;
		printf("device:   accel%d (%s)\n", d[i].index, d[i].path);
		printf("driver:   wafer %d.%d.%d\n", d[i].drv_major, d[i].drv_minor,
		       d[i].drv_patchlevel);
		printf("describe: %s\n", d[i].desc);
		return 0;
	}
	if (index >= 0)
		fprintf(stderr, "wafer: accel%d is not a wafer device\n", index);
	else
		fprintf(stderr, "wafer: no wafer devices in %s\n", WAFER_ACCEL_DIR);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "list"))
		return cmd_list();
	if (!strcmp(argv[1], "info"))
		return cmd_info(argc - 1, argv + 1);
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "wafer: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
