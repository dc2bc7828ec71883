// SPDX-License-Identifier: MIT
/* wafer list --json, wafer info --json: the devices as JSON (json-c). */
#include <json-c/json.h>
#include <stdio.h>

#include "cli.h"

static const char *const cap_names[] = { "uring-submit", "int4", "int8", "all-positions",
					 "prime", "weight-stream", "not-before" };

struct json_object *cli_json_desc(const struct wafer_device_desc *d)
{
	struct json_object *o = json_object_new_object();
	char v[48], name[24];

	snprintf(v, sizeof(v), "%d.%d.%d", d->drv_major, d->drv_minor, d->drv_patchlevel);
	json_object_object_add(o, "index", json_object_new_int(d->index));
	snprintf(name, sizeof(name), "accel%d", d->index);
	json_object_object_add(o, "name", json_object_new_string(name));
	json_object_object_add(o, "path", json_object_new_string(d->path));
	json_object_object_add(o, "driver_version", json_object_new_string(v));
	json_object_object_add(o, "description", json_object_new_string(d->desc));
	return o;
}

struct json_object *cli_json_info(const struct wafer_info *i, const char *backend)
{
	struct json_object *o = json_object_new_object(), *caps = json_object_new_array();
	unsigned int k;
	char abi[24];

#define ADD(key, val) json_object_object_add(o, key, val)
	ADD("backend", json_object_new_string(backend));
	ADD("profile", json_object_new_string(i->profile_name));
	ADD("profile_id", json_object_new_int64(i->profile));
	ADD("uapi_version", json_object_new_int64(i->api_version));
	snprintf(abi, sizeof(abi), "%u.%u", i->fw_major, i->fw_minor);
	ADD("firmware_abi", json_object_new_string(abi));
	ADD("stages", json_object_new_int64(i->stages));
	ADD("sram_bytes_per_stage", json_object_new_int64((int64_t)i->sram_bytes_per_stage));
	ADD("sram_bytes_total",
	    json_object_new_int64((int64_t)(i->sram_bytes_per_stage * i->stages)));
	ADD("sram_bytes_free", json_object_new_int64((int64_t)i->sram_bytes_free));
	ADD("clock_hz", json_object_new_int64((int64_t)i->clock_hz));
	ADD("macs_per_cycle", json_object_new_int64(i->macs_per_cycle));
	ADD("numa_node", json_object_new_int(i->numa_node));
	for (k = 0; k < sizeof(cap_names) / sizeof(cap_names[0]); k++)
		if (i->caps & (1ull << k))
			json_object_array_add(caps, json_object_new_string(cap_names[k]));
	ADD("caps", caps);
	if (i->caps & WAFER_CAP_WEIGHT_STREAM) {
		ADD("stream_bytes_per_cycle", json_object_new_int64(i->stream_bytes_per_cycle));
		ADD("stream_latency_cycles", json_object_new_int64(i->stream_latency_cycles));
	}
	ADD("max_models", json_object_new_int64(i->max_models));
	ADD("max_contexts", json_object_new_int64(i->max_contexts));
	ADD("max_inflight_jobs", json_object_new_int64(i->max_inflight_jobs));
	ADD("job_timeout_ms", json_object_new_int64(i->job_timeout_ms));
	ADD("models_loaded", json_object_new_int64(i->models_loaded));
	ADD("contexts", json_object_new_int64(i->contexts));
	ADD("jobs_inflight", json_object_new_int64(i->jobs_inflight));
#undef ADD
	return o;
}

void cli_json_print(struct json_object *obj)
{
	puts(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PRETTY |
					    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(obj);
}
