// SPDX-License-Identifier: MIT
/* The wafer CLI's bad-value messages: the flag as typed, the value, what is allowed. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/*
 * getopt_long() leaves optind past the value: "--flag=VAL" or "-fVAL" is
 * argv[optind - 1], "--flag VAL" or "-f VAL" is argv[optind - 2] and
 * argv[optind - 1].
 */
int cli_bad_value(const char *cmd, char **argv, int optind, const char *arg,
		  const char *allowed)
{
	const char *last = optind >= 1 ? argv[optind - 1] : NULL;
	int len;

	if (last && last[0] == '-' && last != arg && arg && strlen(last) > strlen(arg)) {
		/* the value attached: --flag=VAL, -fVAL */
		len = last[1] == '-' ? (int)strcspn(last, "=") : 2;
	} else if (optind >= 2) {
		last = argv[optind - 2];
		len = (int)strlen(last);
	} else {
		last = "?";
		len = 1;
	}
	fprintf(stderr, "wafer %s: bad value '%s' for %.*s", cmd, arg ? arg : "", len, last);
	if (allowed)
		fprintf(stderr, "; allowed: %s", allowed);
	fprintf(stderr, "\n");
	return 2;
}
