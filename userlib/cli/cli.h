/* SPDX-License-Identifier: MIT */
/* wafer CLI: the subcommands, one file each. */
#ifndef CLI_H
#define CLI_H

#include "wafer.h"

int cli_cmd_list(int argc, char **argv);
int cli_cmd_info(int argc, char **argv);
int cli_cmd_run(int argc, char **argv);
int cli_cmd_bench(int argc, char **argv);
int cli_cmd_top(int argc, char **argv);

/* Parses a device index 0..4095; returns 0 or -1. */
int cli_parse_index(const char *s, int *out);
/* Parses "kernel" / "inproc"; returns 0 or -1. */
int cli_parse_backend(const char *s, enum wafer_backend *out);
/* CLOCK_MONOTONIC in ns. */
uint64_t cli_now_ns(void);


struct cli_stage_row;
/* Reads sysfs /sys/class/accel/accel@index/device/@attr; 0 or -errno. */
int cli_sysfs_u64(int index, const char *attr, uint64_t *out);
/*
 * Reads and parses debugfs accel/wafer.M/stages of accel@index; returns the
 * number of rows or -errno with the reason in @err.
 */
int cli_read_stages(int index, struct cli_stage_row *rows, unsigned int max,
			  char *err, size_t errlen);

#endif /* CLI_H */
