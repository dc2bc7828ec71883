/* SPDX-License-Identifier: MIT */
/* wafer CLI: the subcommands, one file each. */
#ifndef WAFER_CLI_H
#define WAFER_CLI_H

#include "wafer.h"

int wafer_cmd_list(int argc, char **argv);
int wafer_cmd_info(int argc, char **argv);
int wafer_cmd_run(int argc, char **argv);

/* Parses a device index 0..4095; returns 0 or -1. */
int wafer_cli_parse_index(const char *s, int *out);
/* Parses "kernel" / "inproc"; returns 0 or -1. */
int wafer_cli_parse_backend(const char *s, enum wafer_backend *out);

#endif /* WAFER_CLI_H */
