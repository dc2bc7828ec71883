// SPDX-License-Identifier: MIT
/* wafer list, wafer info: finding and describing devices. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"

int cli_parse_index(const char *s, int *out)
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

int cli_parse_backend(const char *s, enum wafer_backend *out)
{
	if (!strcmp(s, "kernel"))
		*out = WAFER_BACKEND_KERNEL;
	else if (!strcmp(s, "inproc"))
		*out = WAFER_BACKEND_INPROC;
	else if (!strcmp(s, "auto"))
		*out = WAFER_BACKEND_AUTO;
	else
		return -1;
	return 0;
}

static void print_desc(const struct wafer_device_desc *d)
{
	printf("accel%d  %s  wafer %d.%d.%d  %s\n", d->index, d->path,
	       d->drv_major, d->drv_minor, d->drv_patchlevel, d->desc);
}

/* What to do when there is no device: the module, or the simulator. */
static void no_device_hint(void)
{
	fprintf(stderr, "wafer: no wafer devices in %s\n"
		"  load the driver (modprobe wafer, or insmod wafer.ko), or run without a\n"
		"  device: wafer info --backend inproc, wafer run --backend inproc ...\n",
		WAFER_ACCEL_DIR);
}

static void list_usage(FILE *f)
{
	fprintf(f, "usage: wafer list [--json]\n"
		"List the wafer devices (/dev/accel/accelN driven by wafer.ko): index,\n"
		"node, driver version and description.  Exits 1 when there is none.\n"
		"  --json      a JSON array, an object per device\n"
		"  -h, --help  this text\n");
}

int cli_cmd_list(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct wafer_device_desc d[64];
	struct json_object *arr = NULL;
	int n, i, opt, json = 0;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (opt == 'j') {
			json = 1;
		} else if (opt == 'h') {
			list_usage(stdout);
			return 0;
		} else {
			list_usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "wafer list: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	n = wafer_list_devices(d, 64);
	if (n < 0) {
		fprintf(stderr, "wafer: %s\n", wafer_last_error());
		return 1;
	}
	if (json)
		arr = json_object_new_array();
	for (i = 0; i < n && i < 64; i++) {
		if (json)
			json_object_array_add(arr, cli_json_desc(&d[i]));
		else
			print_desc(&d[i]);
	}
	if (json)
		cli_json_print(arr);
	if (n == 0) {
		no_device_hint();
		return 1;
	}
	return 0;
}

static void print_caps(uint64_t caps)
{
	static const char *const names[] = { "uring-submit", "int4", "int8",
					     "all-positions", "prime", "weight-stream",
					     "not-before" };
	unsigned int i;

	printf("caps:     ");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (caps & (1ull << i))
			printf("%s ", names[i]);
	printf("\n");
}

static void print_info(const struct wafer_info *i)
{
	printf("profile:  %s (%u)\n", i->profile_name, i->profile);
	printf("firmware: ABI %u.%u, uAPI %u\n", i->fw_major, i->fw_minor, i->api_version);
	printf("stages:   %u\n", i->stages);
	printf("sram:     %llu KiB per stage, %llu KiB total",
	       (unsigned long long)i->sram_bytes_per_stage >> 10,
	       (unsigned long long)(i->sram_bytes_per_stage * i->stages) >> 10);
	if (i->sram_bytes_free)
		printf(", %llu KiB free", (unsigned long long)i->sram_bytes_free >> 10);
	printf("\n");
	printf("clock:    %.3f GHz, %u MACs/cycle per stage\n", i->clock_hz / 1e9,
	       i->macs_per_cycle);
	if (i->caps & WAFER_CAP_WEIGHT_STREAM)
		printf("stream:   weights from host memory at %u B/cycle, %u cycles latency\n",
		       i->stream_bytes_per_cycle, i->stream_latency_cycles);
	if (i->numa_node >= 0)
		printf("numa:     node %d\n", i->numa_node);
	else
		printf("numa:     none\n");
	print_caps(i->caps);
	printf("limits:   %u models, %u contexts, %u jobs in flight, job timeout %u ms\n",
	       i->max_models, i->max_contexts, i->max_inflight_jobs, i->job_timeout_ms);
	printf("now:      %u models loaded, %u contexts, %u jobs in flight\n",
	       i->models_loaded, i->contexts, i->jobs_inflight);
}

/* Kernel device @index (-1: the first) into @out: its index, or -1 said on stderr. */
static int find_node(int index, struct wafer_device_desc *out)
{
	struct wafer_device_desc d[64];
	int n = wafer_list_devices(d, 64), i;

	for (i = 0; i < n && i < 64; i++) {
		if (index >= 0 && d[i].index != index)
			continue;
		*out = d[i];
		return d[i].index;
	}
	if (index >= 0) {
		/* Opening it says why: missing, another driver's, permission. */
		int fd = wafer_open_device(index);

		if (fd >= 0) {
			close(fd);
			fprintf(stderr, "wafer: accel%d is not a wafer device\n", index);
		} else {
			fprintf(stderr, "wafer: %s\n", wafer_last_error());
		}
	} else if (n < 0) {
		fprintf(stderr, "wafer: %s\n", wafer_last_error());
	} else {
		no_device_hint();
	}
	return -1;
}

/* -m options wafer info takes: the firmware's models per device. */
#define INFO_MAX_MODELS	4
#define CLI_STR_(x)	#x
#define CLI_STR(x)	CLI_STR_(x)

static int info_usage(FILE *f, int status)
{
	fprintf(f, "usage: wafer info [-d LIST] [--backend kernel|inproc] [--json]\n"
		"            [-m MODEL.bin [--quant int8|int4] [--split LIST] [--moe E,TOPK[,SHARED]]\n"
		"            [--expert-group G] [--stream-weights auto|on|off]]\n"
		"            [--afd A:F [--afd-profiles PA:PF] [--expert-devices N]]\n"
		"            [--profile P] [--stages N] [--sram-kib K]\n"
		"Describe wafer devices: profile, firmware ABI, stages, SRAM, clock,\n"
		"capabilities, limits and what they hold now.\n"
		"  -d LIST   devices to describe: N, or several (0-4, 0,2,3)\n"
		"  -b, --backend kernel|inproc  a kernel device (default), or the firmware\n"
		"            simulator in this process (no device or driver needed)\n"
		"  --json    the devices as JSON: an object, or an array with several -d\n"
		"            (not with -m or --afd)\n"
		"  -q, --quant int8|int4  weight format of the -m before it (default int8)\n"
		"  --profile P, --stages N, --sram-kib K   -b inproc devices of profile P\n"
		"            (wafer, asic, ...), N stages of K KiB SRAM (an MoE model whose\n"
		"            layers do not fit with their experts shows where the firmware\n"
		"            placed its expert groups: experts: across stages)\n"
		"  --afd A:F attention-FFN disaggregation (in process; with -b kernel on\n"
		"            accelN devices): with -m, each layer's attention part (and KV)\n"
		"            on devices A, its FFN part on devices F\n"
		"  --expert-devices N  with --afd: expert parallelism, each MoE layer's\n"
		"            routed experts over N more devices (kernel: the accelN\n"
		"            after the highest --afd one)\n"
		"  --expert-group G  with -m: each MoE layer's routed experts in groups of\n"
		"            G placed across the stages with the most free SRAM\n"
		"  -m MODEL  also load llama2.c checkpoint MODEL over those devices and show\n"
		"            which layers sit on which device and the SRAM each uses\n"
		"            (weights, and the KV cache of one sequence of full length);\n"
		"            up to %d -m, loaded side by side (-q after a -m: its weights)\n"
		"  -h, --help  this text\n",
		INFO_MAX_MODELS);
	return status;
}

/*
 * Device @k of @d: its identity and wafer_query() answer, as text or, with
 * @json, an object appended to @json; 0 or 1.
 */
static int info_device(const struct cli_devices *d, unsigned int k, struct json_object *json)
{
	struct wafer_open_opts o = d->base;
	struct wafer_device_desc desc;
	struct json_object *obj;
	struct wafer_info info;
	struct wafer_dev *dev = NULL;
	int ret;

	if (d->n > 1 && !json)
		printf("%s== device %u of %u\n", k ? "\n" : "", k, d->n);
	if (o.backend == WAFER_BACKEND_INPROC) {
		if (!json)
			printf("device:   inproc (firmware-sim in this process)\n");
	} else {
		o.backend = WAFER_BACKEND_KERNEL;
		o.index = find_node(d->n ? (int)d->index[k] : -1, &desc);
		if (o.index < 0)
			return 1;
		if (!json) {
			printf("device:   accel%d (%s)\n", desc.index, desc.path);
			printf("driver:   wafer %d.%d.%d\n", desc.drv_major, desc.drv_minor,
			       desc.drv_patchlevel);
			printf("describe: %s\n", desc.desc);
		}
	}
	ret = wafer_open(&o, &dev);
	if (!ret)
		ret = wafer_query(dev, &info);
	if (ret) {
		fprintf(stderr, "wafer: %s\n", wafer_last_error());
		wafer_close(dev);
		return 1;
	}
	if (json) {
		obj = cli_json_info(&info, wafer_backend_name(dev));
		if (o.backend == WAFER_BACKEND_KERNEL)
			json_object_object_add(obj, "device", cli_json_desc(&desc));
		json_object_array_add(json, obj);
	} else {
		print_info(&info);
	}
	wafer_close(dev);
	return 0;
}

/* One -m: a checkpoint and how to convert it. */
struct info_mdl {
	const char *path;
	struct wafer_convert_opts conv;
	struct wafer_model *m;
	struct wafer_ctx *ctx;
};

/*
 * -m: the model over the devices, next to the ones before it (and any the
 * device held already: a kernel device's of other processes), where its
 * layers went and where the firmware put its experts.
 */
static int info_model(struct wafer_dev *dev, struct info_mdl *im)
{
	struct cli_experts ex = { 0 };
	struct wafer_model *m;
	int ret;

	char kv_err[256] = "";

	ret = wafer_model_load_file(dev, im->path, &im->conv, &im->m);
	if (ret) {
		fprintf(stderr, "wafer: %s: %s\n", im->path, wafer_last_error());
		return 1;
	}
	m = im->m;
	/* The model is shown even where a full-length sequence's KV does not fit. */
	if (wafer_ctx_create(m, 1, wafer_model_get_info(m)->seq_len, &im->ctx))
		snprintf(kv_err, sizeof(kv_err), "%s", wafer_last_error());
	printf("\nmodel:    %s, %u layers, int%u, over %u device%s\n", im->path,
	       wafer_model_get_info(m)->n_layers, im->conv.wbits, wafer_model_parts(m),
	       wafer_model_parts(m) == 1 ? "" : "s");
	cli_print_moe(wafer_model_get_info(m), stdout);
	if (cli_experts_take(dev, m, 0, &ex) > 0)
		cli_experts_print_stages(&ex, stdout);
	cli_experts_free(&ex);
	cli_print_stream(wafer_model_get_info(m), stdout);
	cli_print_parts(m, stdout);
	if (kv_err[0])
		printf("kv:       one sequence of %u positions: %s\n",
		       wafer_model_get_info(m)->seq_len, kv_err);
	return 0;
}

/* Every -m, side by side on the same devices; then what the device holds. */
static int info_models(const struct cli_devices *d, struct info_mdl *im, unsigned int n)
{
	struct wafer_dev *dev = NULL;
	struct wafer_info info;
	unsigned int i, loaded = 0;
	int ret = cli_open(d, &dev);

	for (i = 0; i < n && !ret; i++) {
		ret = info_model(dev, &im[i]);
		loaded += !ret;
	}
	if (!ret && n > 1) {
		printf("\nmodels:   %u loaded side by side", loaded);
		/* A backend that tracks them (inproc) says what SRAM is left. */
		if (!wafer_query(dev, &info) && info.models_loaded == loaded)
			printf(", %llu KiB of SRAM free",
			       (unsigned long long)info.sram_bytes_free >> 10);
		printf("\n");
	}
	for (i = n; i--;) {
		wafer_ctx_destroy(im[i].ctx);
		wafer_model_unload(im[i].m);
	}
	wafer_close(dev);
	return ret ? 1 : 0;
}

/* --stages N or --sram-kib K of the in-process devices; 0 or -1. */
static int info_size(int opt, const char *arg, struct wafer_open_opts *o)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || *end || end == arg || !v || v > (opt == 'S' ? 4096ul : 1ul << 30))
		return -1;
	if (opt == 'S')
		o->stages = (unsigned int)v;
	else
		o->sram_bytes = (uint64_t)v << 10;
	return 0;
}

/* What a bad value of wafer info's option @opt could have been. */
static const char *info_allowed(int opt)
{
	switch (opt) {
	case 'd':
		return "a device index 0..4095 or a list: 0-4, 0,2,3";
	case 's':
		return "layer counts, e.g. 2,1,1";
	case 'b':
		return "kernel, inproc or auto";
	case 'q':
		return "int8 or int4";
	case 'W':
		return "auto, on or off";
	case 'G':
		return "softmax, sigmoid or unit";
	case 'M':
		return "E,TOPK[,SHARED] with TOPK <= E";
	case 'X':
		return "1..512";
	case 'S':
		return "1..4096";
	case 'K':
		return "1..1073741824";
	case 'm':
		return "at most " CLI_STR(INFO_MAX_MODELS) " -m";
	default:
		return NULL;
	}
}

int cli_cmd_info(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "split", required_argument, NULL, 's' },
		{ "moe", required_argument, NULL, 'M' },
		{ "moe-gate", required_argument, NULL, 'G' },
		{ "expert-group", required_argument, NULL, 'X' },
		{ "stream-weights", required_argument, NULL, 'W' },
		{ "afd", required_argument, NULL, 'A' },
		{ "afd-profiles", required_argument, NULL, 'P' },
		{ "expert-devices", required_argument, NULL, 'E' },
		{ "profile", required_argument, NULL, 'p' },
		{ "stages", required_argument, NULL, 'S' },
		{ "sram-kib", required_argument, NULL, 'K' },
		{ "backend", required_argument, NULL, 'b' },
		{ "quant", required_argument, NULL, 'q' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct json_object *json = NULL;
	struct cli_devices d = { .base = { .backend = WAFER_BACKEND_AUTO, .index = -1,
					   .submit = WAFER_SUBMIT_IOCTL } };
	struct wafer_convert_opts conv = { .wbits = 8, .stream = WAFER_STREAM_AUTO,
					   .moe.gate = WAFER_MOE_GATE_UNIT };
	struct info_mdl models[INFO_MAX_MODELS] = { 0 };
	unsigned int k, n_models = 0;
	int opt, ret = 0;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "d:b:m:q:h", opts, NULL)) != -1) {
		if (opt == 'h')
			return info_usage(stdout, 0);
		if (opt == 'j' && !json)
			json = json_object_new_array();
		else if (opt == 'j')
			;
		else if (opt == 'd')
			ret = cli_parse_list(optarg, 0, 4095, d.index, WAFER_PIPE_MAX_DEVICES);
		else if (opt == 's')
			ret = cli_parse_list(optarg, 1, 4096, d.split, WAFER_PIPE_MAX_DEVICES);
		else if (opt == 'b')
			ret = cli_parse_backend(optarg, &d.base.backend);
		else if (opt == 'W')
			ret = cli_parse_stream(optarg, &conv.stream);
		else if (opt == 'X')
			ret = cli_parse_expert_group(optarg, &conv.expert_group);
		else if (opt == 'p')
			d.base.profile = optarg;
		else if (opt == 'S' || opt == 'K')
			ret = info_size(opt, optarg, &d.base);
		else if (opt == 'A' || opt == 'P')
			ret = (opt == 'A' ? cli_parse_afd : cli_parse_afd_profiles)(optarg, &d);
		else if (opt == 'E')
			ret = cli_parse_expert_devices(optarg, &d);
		else if (opt == 'm' && n_models >= INFO_MAX_MODELS)
			ret = -1;
		else if (opt == 'm')
			models[n_models++] = (struct info_mdl){ .path = optarg, .conv = conv };
		else if (opt == 'M' || opt == 'G')
			ret = (opt == 'M' ? cli_parse_moe : cli_parse_gate)(optarg, &conv.moe);
		else if (opt == 'q' && (!strcmp(optarg, "int8") || !strcmp(optarg, "int4")))
			(n_models ? &models[n_models - 1].conv : &conv)->wbits =
				strcmp(optarg, "int4") ? 8 : 4;
		else if (opt == '?')
			return info_usage(stderr, 2);
		else
			ret = -1;
		if (ret < 0)
			return cli_bad_value("info", argv, optind, optarg, info_allowed(opt));
		if (opt == 'd')
			d.n = (unsigned int)ret;
		if (opt == 's')
			d.n_split = (unsigned int)ret;
		ret = 0;
	}
	if (optind < argc) {
		fprintf(stderr, "wafer info: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (cli_devices_check(&d, "info") || cli_afd_check(&d, "info"))
		return 2;
	if (json && (n_models || d.afd[0])) {
		fprintf(stderr, "wafer info: --json describes devices: not with -m or --afd\n");
		json_object_put(json);
		return 2;
	}
	/* --afd: in process unless -b kernel; else kernel unless -b inproc. */
	if (!d.afd[0] && d.base.backend != WAFER_BACKEND_INPROC)
		d.base.backend = WAFER_BACKEND_KERNEL;
	if (d.afd[0])
		ret = cli_afd_info(&d);
	for (k = 0; !d.afd[0] && k < (d.n ? d.n : 1) && !ret; k++)
		ret = info_device(&d, k, json);
	if (json && !ret) {
		/* one device: its object; several: the array */
		if (json_object_array_length(json) == 1) {
			struct json_object *one = json_object_get(json_object_array_get_idx(json, 0));

			json_object_put(json);
			json = one;
		}
		cli_json_print(json);
		return 0;
	}
	if (json)
		json_object_put(json);
	for (k = 0; k < n_models; k++) {
		models[k].conv.moe = conv.moe;
		models[k].conv.stream = conv.stream;
		models[k].conv.expert_group = conv.expert_group;
	}
	if (!ret && n_models)
		ret = info_models(&d, models, n_models);
	return ret;
}
