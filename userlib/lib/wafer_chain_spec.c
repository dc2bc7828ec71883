// SPDX-License-Identifier: MIT
/*
 * A chain named on a command line: "HOST[:PORT]:DEVICES[,...]", DEVICES a
 * node's device indices: 3, 0-3, or 0+2 (a comma separates nodes); or in
 * a JSON file, for long chains.  Each device is one member, in order.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

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


/* Member @i of a JSON chain file: {"host": "...", "port": N, "devices": "0-3" or N}. */
static int json_member(json_object *o, unsigned int i, struct wafer_chain_member *m,
		       unsigned int n, unsigned int max, const char *path)
{
	json_object *host, *port, *devs;
	struct wafer_chain_member p = { .port = 0 };
	char buf[32];
	const char *d;
	int64_t v;
	int r;

	if (!json_object_is_type(o, json_type_object))
		return wafer_set_error(-EINVAL, "%s: members[%u] is not an object", path, i);
	if (!json_object_object_get_ex(o, "host", &host) ||
	    !json_object_is_type(host, json_type_string) || !json_object_get_string_len(host) ||
	    (size_t)json_object_get_string_len(host) >= sizeof(p.host) ||
	    strpbrk(json_object_get_string(host), ":,"))
		return wafer_set_error(-EINVAL, "%s: members[%u].host is not an address (a "
				       "string of 1..63 bytes)", path, i);
	strcpy(p.host, json_object_get_string(host));
	if (json_object_object_get_ex(o, "port", &port)) {
		v = json_object_get_int64(port);
		if (!json_object_is_type(port, json_type_int) || v < 1 || v > 65535)
			return wafer_set_error(-EINVAL, "%s: members[%u].port is not 1..65535",
					       path, i);
		p.port = (unsigned int)v;
	}
	if (!json_object_object_get_ex(o, "devices", &devs))
		return wafer_set_error(-EINVAL, "%s: members[%u].devices is missing", path, i);
	if (json_object_is_type(devs, json_type_int)) {
		snprintf(buf, sizeof(buf), "%lld", (long long)json_object_get_int64(devs));
		d = buf;
	} else if (json_object_is_type(devs, json_type_string)) {
		d = json_object_get_string(devs);
	} else {
		return wafer_set_error(-EINVAL, "%s: members[%u].devices is not a number or a "
				       "list", path, i);
	}
	r = devices(d, d + strlen(d), &p, m, n, max);
	if (r < 0 || (unsigned int)r == n)
		return wafer_set_error(-EINVAL, "%s: members[%u].devices '%s' is not a list (3, "
				       "0-3, 0+2; %u members at most)", path, i, d, max);
	return r;
}

int wafer_chain_load(const char *path, struct wafer_chain_member *m, unsigned int max)
{
	json_object *root = json_object_from_file(path), *members, *ver;
	unsigned int i, n = 0;
	int r = 0;

	if (!root)
		return wafer_set_error(-EINVAL, "%s: not a JSON file (or unreadable)", path);
	if (!json_object_object_get_ex(root, "version", &ver) ||
	    !json_object_is_type(ver, json_type_int) || json_object_get_int64(ver) != 1)
		r = wafer_set_error(-EINVAL, "%s: \"version\" is not 1", path);
	else if (!json_object_object_get_ex(root, "members", &members) ||
		 !json_object_is_type(members, json_type_array) ||
		 !json_object_array_length(members))
		r = wafer_set_error(-EINVAL, "%s: \"members\" is not a non-empty array", path);
	for (i = 0; !r && i < json_object_array_length(members); i++) {
		r = json_member(json_object_array_get_idx(members, i), i, m, n, max, path);
		if (r > 0) {
			n = (unsigned int)r;
			r = 0;
		}
	}
	json_object_put(root);
	return r ? r : (int)n;
}
