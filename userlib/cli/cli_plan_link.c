// SPDX-License-Identifier: MIT
/* wafer plan --link-profile: a host link by name, or from a JSON file. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <json.h>
#include <json_util.h>

#include "cli.h"

/* A non-negative integer field of @j (required), below 2^62. */
static int link_field(json_object *j, const char *path, const char *key, uint64_t *out)
{
	json_object *v;
	int64_t x;

	if (!json_object_object_get_ex(j, key, &v)) {
		fprintf(stderr, "wafer plan: --link-profile %s: no \"%s\"\n", path, key);
		return -1;
	}
	x = json_object_get_int64(v);
	if (!json_object_is_type(v, json_type_int) || x < 0 || x >= (int64_t)1 << 62) {
		fprintf(stderr, "wafer plan: --link-profile %s: \"%s\" must be an integer "
			"0..2^62\n", path, key);
		return -1;
	}
	*out = (uint64_t)x;
	return 0;
}

int cli_plan_link(const char *arg, struct wafer_plan_link *out)
{
	static char name[64];
	const struct wafer_plan_link *l = wafer_plan_link_find(arg);
	json_object *j, *v;
	int ret = -1;

	if (l) {
		*out = *l;
		return 0;
	}
	j = json_object_from_file(arg);
	if (!j) {
		fprintf(stderr, "wafer plan: --link-profile %s: neither a built-in link (", arg);
		for (unsigned int i = 0; (l = wafer_plan_link_profile(i)); i++)
			fprintf(stderr, "%s%s", i ? ", " : "", l->name);
		fprintf(stderr, ") nor a readable JSON file\n");
		return -1;
	}
	if (!json_object_is_type(j, json_type_object)) {
		fprintf(stderr, "wafer plan: --link-profile %s: not a JSON object\n", arg);
		goto out;
	}
	json_object_object_foreach(j, key, val) {
		(void)val;
		if (strcmp(key, "name") && strcmp(key, "latency_ns") && strcmp(key, "bytes_per_s")) {
			fprintf(stderr, "wafer plan: --link-profile %s: unknown field \"%s\" "
				"(name, latency_ns, bytes_per_s)\n", arg, key);
			goto out;
		}
	}
	if (link_field(j, arg, "latency_ns", &out->latency_ns) ||
	    link_field(j, arg, "bytes_per_s", &out->bytes_per_s))
		goto out;
	if (!out->bytes_per_s) {
		fprintf(stderr, "wafer plan: --link-profile %s: \"bytes_per_s\" must be above 0\n",
			arg);
		goto out;
	}
	snprintf(name, sizeof(name), "%s", arg);
	if (json_object_object_get_ex(j, "name", &v) && json_object_is_type(v, json_type_string))
		snprintf(name, sizeof(name), "%s", json_object_get_string(v));
	out->name = name;
	ret = 0;
out:
	json_object_put(j);
	return ret;
}
