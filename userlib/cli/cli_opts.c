// SPDX-License-Identifier: MIT
/*
 * The wafer CLI's option values: numbers and lists (-d 0-4, -d 0,2,3)
 * parsed, and bad-value messages (the flag as typed, the value, what is
 * allowed).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
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

int cli_parse_uint(const char *s, unsigned int lo, unsigned int hi, unsigned int *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < lo || v > hi)
		return -1;
	*out = (unsigned int)v;
	return 0;
}

int cli_parse_list(const char *s, unsigned int lo, unsigned int hi, unsigned int *out,
		   unsigned int max)
{
	unsigned long a, b, v;
	unsigned int n = 0;
	char *end;

	for (;;) {
		errno = 0;
		a = strtoul(s, &end, 10);
		if (errno || end == s || a < lo || a > hi)
			return -1;
		b = a;
		if (*end == '-') {
			s = end + 1;
			b = strtoul(s, &end, 10);
			if (errno || end == s || b < a || b > hi)
				return -1;
		}
		for (v = a; v <= b; v++) {
			if (n == max)
				return -1;
			out[n++] = (unsigned int)v;
		}
		if (!*end)
			return (int)n;
		if (*end != ',')
			return -1;
		s = end + 1;
	}
}
