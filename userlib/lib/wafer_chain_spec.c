// SPDX-License-Identifier: MIT
/*
 * A chain named on a command line: "HOST[:PORT]:DEVICES[,...]", DEVICES a
 * node's device indices: 3, 0-3, or 0+2 (a comma separates nodes).  Each
 * device is one member, in order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wafer.h"
#include "wafer_internal.h"
#include "wafer_link.h"

static int num(const char *s, const char *end, unsigned long hi, unsigned long *v)
{
	char *e;

	if (s == end || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoul(s, &e, 10);
	return errno || e != end || *v > hi ? -1 : 0;
}

/* DEVICES of one node into @m from @n on; the new count, or -1. */
static int devices(const char *s, const char *end, const struct wafer_chain_member *proto,
		   struct wafer_chain_member *m, unsigned int n, unsigned int max)
{
	while (s < end) {
		const char *plus = memchr(s, '+', (size_t)(end - s)), *stop = plus ? plus : end;
		const char *dash = memchr(s, '-', (size_t)(stop - s));
		unsigned long a, b, v;

		if (num(s, dash ? dash : stop, 4095, &a) ||
		    (dash && num(dash + 1, stop, 4095, &b)) || (dash && b < a))
			return -1;
		if (!dash)
			b = a;
		for (v = a; v <= b; v++) {
			if (n == max)
				return -1;
			m[n] = *proto;
			m[n++].device = (unsigned int)v;
		}
		s = plus ? plus + 1 : end;
		if (plus && s == end)
			return -1;
	}
	return (int)n;
}

int wafer_chain_parse(const char *spec, struct wafer_chain_member *m, unsigned int max)
{
	const char *s = spec;
	unsigned int n = 0;

	if (!spec || !*spec)
		return wafer_set_error(-EINVAL, "chain: empty");
	for (;;) {
		const char *end = strchr(s, ','), *c1, *c2;
		struct wafer_chain_member p = { .port = 0 };
		unsigned long port;
		int r;

		if (!end)
			end = s + strlen(s);
		c1 = memchr(s, ':', (size_t)(end - s));
		if (!c1 || c1 == s || (size_t)(c1 - s) >= sizeof(p.host))
			return wafer_set_error(-EINVAL, "chain: '%.*s' is not HOST[:PORT]:DEVICES",
					       (int)(end - s), s);
		memcpy(p.host, s, (size_t)(c1 - s));
		c2 = memchr(c1 + 1, ':', (size_t)(end - c1 - 1));
		if (c2) {
			if (num(c1 + 1, c2, 65535, &port) || !port)
				return wafer_set_error(-EINVAL, "chain: bad port in '%.*s' (1..65535)",
						       (int)(end - s), s);
			p.port = (unsigned int)port;
			c1 = c2;
		}
		r = devices(c1 + 1, end, &p, m, n, max);
		if (r < 0 || (unsigned int)r == n)
			return wafer_set_error(-EINVAL, "chain: bad devices in '%.*s' (3, 0-3, 0+2; "
					       "%u members at most)", (int)(end - s), s, max);
		n = (unsigned int)r;
		if (!*end)
			return (int)n;
		s = end + 1;
	}
}
