// SPDX-License-Identifier: MIT
/* The wafer CLI's bad-value messages: the flag by name, the value, what is allowed. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cli_bad_value(const char *cmd, const char *shorts, const struct option *opts, int opt,
		  const char *arg, const char *allowed)
{
	const char *name = "?";
	unsigned int i;

	for (i = 0; opts && opts[i].name; i++)
		if (opts[i].val == opt) {
			name = opts[i].name;
			break;
		}
	if (opt > ' ' && opt < 127 && shorts && strchr(shorts, opt))
		fprintf(stderr, "wafer %s: bad value '%s' for -%c", cmd, arg ? arg : "", opt);
	else
		fprintf(stderr, "wafer %s: bad value '%s' for --%s", cmd, arg ? arg : "", name);
	if (allowed)
		fprintf(stderr, "; allowed: %s", allowed);
	fprintf(stderr, "\n");
	return 2;
}
