// SPDX-License-Identifier: MIT
/*
 * wafer plan: project a model shape (a preset, a llama2.c checkpoint's
 * header, a packed blob's, or dimensions given) onto devices of a profile with libwafer's
 * wafer_plan(), as a table or as JSON (json-c); or a sweep of one axis as
 * a curve, with a plot drawn by gnuplot.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>
#include <json_util.h>

#include "cli.h"

static void usage(FILE *f)
{
	const struct wafer_plan_shape *s;
	unsigned int i;

	fprintf(f,
		"usage: wafer plan PRESET|MODEL.bin|custom [OPTIONS]\n"
		"  PRESET                one of:");
	for (i = 0; (s = wafer_plan_preset(i)); i++)
		fprintf(f, " %s", s->name);
	fprintf(f,
		"\n"
		"  MODEL.bin             a llama2.c checkpoint (its header's shape) or a packed\n"
		"                        blob (wafer convert's output)\n"
		"  custom                the shape from --layers --dim --hidden --heads\n"
		"                        --kv-heads --head-dim --vocab [--experts E --active A\n"
		"                        --shared S --expert-hidden H [--moe-every K]]\n"
		"  --profile P           wse3 (default), wse2, lpu (chips: a layer spans several),\n"
		"                        wafer, asic\n"
		"  --devices N|auto      devices (default auto: as few as hold the model)\n"
		"  --weight-bits 4|8|16  weight precision (default: a packed blob's own, else 4;\n"
		"                        given for a blob of another precision: the projection\n"
		"                        of the blob converted to it, and the table says so);\n"
		"                        --quant int8|int4 says 8 or 4 as the other commands do\n"
		"  --batch B             sequences decoding at once (default 1)\n"
		"  --context C           positions per sequence (default 8192; --ctx C, as\n"
		"                        wafer serve spells it, too)\n"
		"  --prompt N            prompt tokens for the time to first token\n"
		"                        (default min(context, 1024))\n"
		"  --draft-params N      speculative decoding with a draft of N parameters\n"
		"                        (suffix M, B or T; an assumed dense shape, own devices)\n"
		"  --draft-accept A      probability a draft token is accepted (default 0.8)\n"
		"  --draft-tokens K      draft tokens per verify step (default 4)\n"
		"  --stream              weight streaming: weights from the external store,\n"
		"                        one device (wse3, wse2)\n"
		"  --deployment          what a production deployment runs: without a draft\n"
		"                        given, the family's draft from the literature (EAGLE-2\n"
		"                        head, 6 tokens per verify, acceptance 0.85; kimi-k2:\n"
		"                        multi-token prediction, 1 token, 0.875), and says so\n"
		"  --no-spread           keep each layer bigger than a stage on the cores its\n"
		"                        bytes fill (default: spread over the device's spare\n"
		"                        stages where its pass is soonest)\n"
		"  --json                one JSON object instead of the table\n"
		"  --sweep AXIS          devices (the fewest..2x or 8), batch (1..4096) or context\n"
		"                        (256..131072): one row per value (JSON: an array)\n"
		"  --plot FILE.svg       with --sweep: the curve drawn by gnuplot\n"
		"  --trace FILE.json     the modelled timeline of the prompt and the decode\n"
		"                        step after it, as Chrome trace events (Perfetto)\n"
		"  --hosts N             the chain of devices over N hosts (wafer node), the\n"
		"                        devices split as --chain HOST:DEVICES,... splits them\n"
		"  --link-profile L      the link between hosts: a built-in (");
	for (i = 0; wafer_plan_link_profile(i); i++)
		fprintf(f, "%s%s", i ? ", " : "", wafer_plan_link_profile(i)->name);
	fprintf(f, ", measured\n"
		"                        on Soft-RoCE) or a JSON file {\"latency_ns\": N,\n"
		"                        \"bytes_per_s\": N}; default: the profile's device link\n");
}

enum { OPT_PROFILE = 256, OPT_DEVICES, OPT_BITS, OPT_BATCH, OPT_CONTEXT, OPT_PROMPT,
       OPT_JSON, OPT_LAYERS, OPT_DIM, OPT_HIDDEN, OPT_HEADS, OPT_KV_HEADS, OPT_HEAD_DIM,
       OPT_VOCAB, OPT_EXPERTS, OPT_ACTIVE, OPT_SHARED, OPT_EXPERT_HIDDEN, OPT_MOE_EVERY,
       OPT_DRAFT, OPT_ACCEPT, OPT_DRAFT_TOKENS, OPT_SWEEP, OPT_PLOT,
       OPT_TRACE, OPT_STREAM, OPT_DEPLOYMENT, OPT_NO_SPREAD, OPT_HELP, OPT_QUANT, OPT_HOSTS,
       OPT_LINK_PROFILE };

static const struct option opts[] = {
	{ "profile", required_argument, NULL, OPT_PROFILE },
	{ "devices", required_argument, NULL, OPT_DEVICES },
	{ "weight-bits", required_argument, NULL, OPT_BITS },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "context", required_argument, NULL, OPT_CONTEXT },
	{ "ctx", required_argument, NULL, OPT_CONTEXT },
	{ "quant", required_argument, NULL, OPT_QUANT },
	{ "prompt", required_argument, NULL, OPT_PROMPT },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "layers", required_argument, NULL, OPT_LAYERS },
	{ "dim", required_argument, NULL, OPT_DIM },
	{ "hidden", required_argument, NULL, OPT_HIDDEN },
	{ "heads", required_argument, NULL, OPT_HEADS },
	{ "kv-heads", required_argument, NULL, OPT_KV_HEADS },
	{ "head-dim", required_argument, NULL, OPT_HEAD_DIM },
	{ "vocab", required_argument, NULL, OPT_VOCAB },
	{ "experts", required_argument, NULL, OPT_EXPERTS },
	{ "active", required_argument, NULL, OPT_ACTIVE },
	{ "shared", required_argument, NULL, OPT_SHARED },
	{ "expert-hidden", required_argument, NULL, OPT_EXPERT_HIDDEN },
	{ "moe-every", required_argument, NULL, OPT_MOE_EVERY },
	{ "draft-params", required_argument, NULL, OPT_DRAFT },
	{ "draft-accept", required_argument, NULL, OPT_ACCEPT },
	{ "draft-tokens", required_argument, NULL, OPT_DRAFT_TOKENS },
	{ "sweep", required_argument, NULL, OPT_SWEEP },
	{ "plot", required_argument, NULL, OPT_PLOT },
	{ "trace", required_argument, NULL, OPT_TRACE },
	{ "stream", no_argument, NULL, OPT_STREAM },
	{ "deployment", no_argument, NULL, OPT_DEPLOYMENT },
	{ "no-spread", no_argument, NULL, OPT_NO_SPREAD },
	{ "hosts", required_argument, NULL, OPT_HOSTS },
	{ "link-profile", required_argument, NULL, OPT_LINK_PROFILE },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* A parameter count: digits with an optional M, B or T. */
static int parse_params(const char *s, uint64_t *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v <= 0)
		return -1;
	if (*end == 'M')
		v *= 1e6, end++;
	else if (*end == 'B')
		v *= 1e9, end++;
	else if (*end == 'T')
		v *= 1e12, end++;
	if (*end || v > 1e15)
		return -1;
	*out = (uint64_t)v;
	return 0;
}

static int parse_prob(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno || end == s || *end || !(*out >= 0 && *out < 1) ? -1 : 0;
}

/* A packed blob's shape (wafer convert's output): the whole file is read. */
static int shape_from_blob(FILE *f, const char *path, struct wafer_plan_shape *s)
{
	long len;
	void *blob = NULL;
	int ret = -1;

	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) ||
	    !(blob = malloc((size_t)len)) || fread(blob, 1, (size_t)len, f) != (size_t)len)
		fprintf(stderr, "wafer plan: %s: cannot read it\n", path);
	else if (wafer_plan_shape_from_blob(blob, (size_t)len, path, s))
		fprintf(stderr, "wafer plan: %s\n", wafer_last_error());
	else
		ret = 0;
	free(blob);
	fclose(f);
	return ret;
}

/* The shape in a llama2.c checkpoint's header (7 int32), or a packed blob's. */
static int shape_from_checkpoint(const char *path, struct wafer_plan_shape *s)
{
	int32_t h[7];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f) {
		fprintf(stderr, "wafer plan: %s: %s (not a preset either; see --help)\n", path,
			strerror(errno));
		return -1;
	}
	n = fread(h, sizeof(h[0]), 7, f);
	if (n >= 1 && !memcmp(h, "WFSM", 4))
		return shape_from_blob(f, path, s);
	fclose(f);
	if (n != 7 || h[0] <= 0 || h[1] <= 0 || h[2] <= 0 || h[3] <= 0 || h[4] <= 0 ||
	    h[0] % h[3]) {
		fprintf(stderr, "wafer plan: %s: not a llama2.c checkpoint header\n", path);
		return -1;
	}
	*s = (struct wafer_plan_shape){
		.name = path, .dim = (unsigned int)h[0], .hidden_dim = (unsigned int)h[1],
		.n_layers = (unsigned int)h[2], .n_heads = (unsigned int)h[3],
		.n_kv_heads = (unsigned int)h[4],
		.vocab = (unsigned int)(h[5] < 0 ? -(int64_t)h[5] : h[5]),
		.head_dim = (unsigned int)(h[0] / h[3]),
		.tied_head = h[5] > 0,	/* llama2.c: a negative vocabulary has its own head */
	};
	return 0;
}

static json_object *plan_json(const struct wafer_plan_shape *s, const struct wafer_plan_opts *o,
			      const struct wafer_plan *p)
{
	json_object *j = json_object_new_object();

	json_object_object_add(j, "model", json_object_new_string(s->name));
	json_object_object_add(j, "profile", json_object_new_string(p->profile));
	json_object_object_add(j, "weight_bits", json_object_new_int(o->weight_bits));
	if (s->weight_bits)	/* a blob's own, which --weight-bits may override */
		json_object_object_add(j, "blob_weight_bits", json_object_new_int(s->weight_bits));
	json_object_object_add(j, "batch", json_object_new_int64(o->batch));
	json_object_object_add(j, "context", json_object_new_int64(o->context));
	json_object_object_add(j, "devices", json_object_new_int64(p->devices));
	json_object_object_add(j, "devices_why", json_object_new_string(p->why));
	json_object_object_add(j, "weight_streaming", json_object_new_boolean(o->stream));
	json_object_object_add(j, "deployment", json_object_new_boolean(o->deployment));
	json_object_object_add(j, "layers_per_device", json_object_new_int64(p->layers_per_device));
	if (p->tensor_chips) {
		json_object_object_add(j, "tensor_chips", json_object_new_int64(p->tensor_chips));
		json_object_object_add(j, "groups", json_object_new_int64(p->groups));
		json_object_object_add(j, "extra_chips", json_object_new_int64(p->extra_chips));
	}
	json_object_object_add(j, "stages", json_object_new_int64(p->stages));
	if (p->layer_span64) {
		json_object *sp = json_object_new_object();

		json_object_object_add(sp, "layer_stages",
				       json_object_new_double(p->layer_span64 / 64.0));
		json_object_object_add(sp, "spread_stages",
				       json_object_new_double(p->spread64 / 64.0));
		json_object_object_add(sp, "spread_stages_max",
				       json_object_new_double(p->spread64_max / 64.0));
		json_object_object_add(sp, "positions",
				       json_object_new_int64(p->spread_positions));
		json_object_object_add(j, "spread", sp);
	}
	json_object_object_add(j, "weight_bytes", json_object_new_int64((int64_t)p->weight_bytes));
	json_object_object_add(j, "params", json_object_new_int64((int64_t)p->params));
	json_object_object_add(j, "active_params", json_object_new_int64((int64_t)p->active_params));
	json_object_object_add(j, "experts", json_object_new_int64(s->n_experts));
	json_object_object_add(j, "device_sram_bytes",
			       json_object_new_int64((int64_t)p->device_sram_bytes));
	json_object_object_add(j, "kv_bytes_per_seq",
			       json_object_new_int64((int64_t)p->kv_bytes_per_seq));
	json_object_object_add(j, "sequences_fit", json_object_new_int64((int64_t)p->sequences_fit));
	json_object_object_add(j, "prompt", json_object_new_int64(p->prompt));
	json_object_object_add(j, "ttft_ms", json_object_new_double((double)p->ttft_ns / 1e6));
	json_object_object_add(j, "token_us", json_object_new_double((double)p->token_ns / 1e3));
	json_object_object_add(j, "link_us", json_object_new_double((double)p->link_ns / 1e3));
	json_object_object_add(j, "hosts", json_object_new_int64(p->hosts));
	json_object_object_add(j, "host_link_us",
			       json_object_new_double((double)p->host_link_ns / 1e3));
	if (o->host_link) {
		json_object *l = json_object_new_object();

		json_object_object_add(l, "name", json_object_new_string(o->host_link->name));
		json_object_object_add(l, "latency_ns",
				       json_object_new_int64((int64_t)o->host_link->latency_ns));
		json_object_object_add(l, "bytes_per_s",
				       json_object_new_int64((int64_t)o->host_link->bytes_per_s));
		json_object_object_add(j, "host_link", l);
	}
	json_object_object_add(j, "tok_s_single", json_object_new_int64((int64_t)p->tok_s_single));
	json_object_object_add(j, "tok_s_single_low",
			       json_object_new_int64((int64_t)p->tok_s_single_low));
	json_object_object_add(j, "tok_s_single_high",
			       json_object_new_int64((int64_t)p->tok_s_single_high));
	json_object_object_add(j, "tok_s_aggregate",
			       json_object_new_int64((int64_t)p->tok_s_aggregate));
	json_object_object_add(j, "bound", json_object_new_string(p->bound));
	json_object_object_add(j, "bound_single", json_object_new_string(p->single_bound));
	if (p->draft_tokens) {
		json_object *d = json_object_new_object();

		if (p->deploy_draft) {
			json_object_object_add(d, "draft", json_object_new_string(p->deploy_draft));
			json_object_object_add(d, "source", json_object_new_string(p->deploy_source));
		} else {
			json_object_object_add(d, "params",
					       json_object_new_int64((int64_t)o->draft_params));
		}
		json_object_object_add(d, "accept", json_object_new_double(p->draft_accept));
		json_object_object_add(d, "accept_low", json_object_new_double(p->draft_accept_low));
		json_object_object_add(d, "accept_high",
				       json_object_new_double(p->draft_accept_high));
		json_object_object_add(d, "tokens", json_object_new_int64(p->draft_tokens));
		json_object_object_add(d, "devices", json_object_new_int64(p->draft_devices));
		json_object_object_add(d, "draft_token_us",
				       json_object_new_double((double)p->draft_token_ns / 1e3));
		json_object_object_add(d, "verify_us",
				       json_object_new_double((double)p->verify_ns / 1e3));
		json_object_object_add(d, "tokens_per_step",
				       json_object_new_double(p->tokens_per_step));
		json_object_object_add(d, "tok_s_single",
				       json_object_new_int64((int64_t)p->tok_s_spec));
		json_object_object_add(d, "tok_s_single_low",
				       json_object_new_int64((int64_t)p->tok_s_spec_low));
		json_object_object_add(d, "tok_s_single_high",
				       json_object_new_int64((int64_t)p->tok_s_spec_high));
		json_object_object_add(d, "tok_s_ceiling",
				       json_object_new_int64((int64_t)p->tok_s_spec_ceiling));
		json_object_object_add(j, "speculative", d);
	}
	return j;
}

static void print_json(json_object *j)
{
	printf("%s\n", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY));
	json_object_put(j);
}

/* Whose precision the plan takes: a blob's own, or --weight-bits against the blob's. */
static const char *bits_note(const struct wafer_plan_shape *s, const struct wafer_plan_opts *o)
{
	static char note[64];

	if (!s->weight_bits)
		return "";
	if (s->weight_bits == o->weight_bits)
		return " (the blob's)";
	snprintf(note, sizeof(note), " (--weight-bits; the blob's are %u-bit)", s->weight_bits);
	return note;
}

enum sweep_axis { SWEEP_NONE, SWEEP_DEVICES, SWEEP_BATCH, SWEEP_CONTEXT };

/* The next value of the axis after @v (0: the first), or 0 past the last. */
static unsigned int sweep_next(enum sweep_axis axis, unsigned int v, unsigned int fewest)
{
	if (axis == SWEEP_DEVICES)
		return !v ? 1 : v < 2 * fewest || v < 8 ? v + 1 : 0;
	if (axis == SWEEP_BATCH)
		return !v ? 1 : v < 4096 ? v * 2 : 0;
	return !v ? 256 : v < 131072 ? v * 2 : 0;
}

static int plot(const char *file, const char *axis, const char *model, const unsigned int *x,
		const struct wafer_plan *p, unsigned int n)
{
	FILE *g = popen("gnuplot", "w");
	unsigned int i;

	if (!g) {
		fprintf(stderr, "wafer plan: gnuplot: %s\n", strerror(errno));
		return -1;
	}
	fprintf(g, "set terminal svg size 800,480\nset output '%s'\n"
		"set title '%s: modelled tokens/s against %s'\nset xlabel '%s'\n"
		"set ylabel 'tokens/s'\nset logscale y\nset key top left\n%s"
		"plot '-' using 1:2 with linespoints title 'one sequence', "
		"'-' using 1:2 with linespoints title 'aggregate'\n",
		file, model, axis, axis, strcmp(axis, "devices") ? "set logscale x 2\n" : "");
	for (i = 0; i < n; i++)
		fprintf(g, "%u %llu\n", x[i], (unsigned long long)p[i].tok_s_single);
	fprintf(g, "e\n");
	for (i = 0; i < n; i++)
		fprintf(g, "%u %llu\n", x[i], (unsigned long long)p[i].tok_s_aggregate);
	fprintf(g, "e\n");
	if (pclose(g)) {
		fprintf(stderr, "wafer plan: gnuplot failed drawing %s\n", file);
		return -1;
	}
	return 0;
}

/* One plan per value of @axis: a table (or a JSON array), and a plot. */
static int sweep(const struct wafer_plan_shape *s, struct wafer_plan_opts o,
		 enum sweep_axis axis, const char *axis_name, int json, const char *plot_file)
{
	struct wafer_plan p[64], first;
	unsigned int x[64], n = 0, v, fewest;
	json_object *arr = json ? json_object_new_array() : NULL;
	int ret = 0;

	o.devices = 0;
	if (wafer_plan(s, &o, &first)) {
		fprintf(stderr, "wafer plan: %s\n", cli_plan_error(wafer_last_error(),
								   !strcmp(s->name, "custom")));
		return 1;
	}
	fewest = first.devices;
	if (!json && s->weight_bits)
		printf("%u-bit weights%s\n", o.weight_bits, bits_note(s, &o));
	if (!json)
		printf("%-8s %7s %8s %10s %12s %14s  %s\n", axis_name, "used", "seq fit",
		       "TTFT ms", "tok/s single", "tok/s aggregate", "bound");
	for (v = sweep_next(axis, 0, fewest); v && n < 64; v = sweep_next(axis, v, fewest)) {
		struct wafer_plan_opts ov = o;

		if (axis == SWEEP_DEVICES && v < fewest)
			continue;
		if (axis == SWEEP_DEVICES)
			ov.devices = v;
		else if (axis == SWEEP_BATCH)
			ov.batch = v;
		else
			ov.context = v, ov.prompt = 0;
		if (wafer_plan(s, &ov, &p[n]))
			continue;	/* a point that does not fit: not on the curve */
		x[n] = v;
		if (json)
			json_object_array_add(arr, plan_json(s, &ov, &p[n]));
		else
			printf("%-8u %7u %8llu %10.3f %12llu %14llu  %s\n", v, p[n].devices,
			       (unsigned long long)p[n].sequences_fit, p[n].ttft_ns / 1e6,
			       (unsigned long long)p[n].tok_s_single,
			       (unsigned long long)p[n].tok_s_aggregate, p[n].bound);
		n++;
	}
	if (json)
		print_json(arr);
	if (plot_file && plot(plot_file, axis_name, s->name, x, p, n))
		ret = 1;
	return ret;
}

/*
 * @v with a K, M, G/B or T prefix and three significant digits (e.g.
 * "260 K", "8.03 B"; bytes "1.66 TB"); @slot picks one of four buffers.
 */
static const char *human(uint64_t v, const char *unit, int slot)
{
	static const char *const big[] = { "", " K", " M", " G", " T", " P" };
	static const char *const count[] = { "", " K", " M", " B", " T", " P" };
	static char buf[4][32];
	double x = (double)v;
	unsigned int i = 0;

	while (x >= 999.5 && i < 5) {
		x /= 1000;
		i++;
	}
	snprintf(buf[slot], sizeof(buf[slot]), "%.*f%s%s", x >= 99.95 || !i ? 0 : x >= 9.995 ? 1 : 2,
		 x, *unit ? big[i] : count[i], unit);
	if (*unit && !i)
		snprintf(buf[slot], sizeof(buf[slot]), "%llu %s", (unsigned long long)v, unit);
	return buf[slot];
}

static void print_table(const struct wafer_plan_shape *s, const struct wafer_plan_opts *o,
			const struct wafer_plan *p)
{
	printf("model     %s: %u layers, dim %u, ", s->name, s->n_layers, s->dim);
	if (s->n_experts)
		printf("%u experts (%u active, %u shared) of hidden %u, ", s->n_experts,
		       s->n_active, s->n_shared, s->expert_hidden);
	if (s->n_experts && s->moe_every > 1)
		printf("in one layer of %u (the others dense, hidden %u), ", s->moe_every,
		       s->hidden_dim);
	else
		printf("hidden %u, ", s->hidden_dim);
	if (s->kv_latent)
		printf("%u heads, latent attention (query %u, KV %u), ", s->n_heads, s->q_latent,
		       s->kv_latent);
	else
		printf("%u/%u heads, ", s->n_heads, s->n_kv_heads);
	printf("vocab %u, %u-bit weights%s\n", s->vocab, o->weight_bits, bits_note(s, o));
	printf("weights   %s (%s per layer); %s parameters%s, %s active per token\n",
	       human(p->weight_bytes, "B", 0), human(p->layer_bytes, "B", 1),
	       human(p->params, "", 2), s->params ? " (the blob's tensors)" : "",
	       human(p->active_params, "", 3));
	if (p->tensor_chips)
		printf("devices   %u x %s (%.2f GB SRAM each): %u groups of %u chips, each layer "
		       "split over a group, %u layers per group, + %u chips for the embedding and "
		       "head: %s\n", p->devices, p->profile, p->device_sram_bytes / 1e9, p->groups,
		       p->tensor_chips, p->layers_per_device, p->extra_chips, p->why);
	else if (p->devices && s->n_layers % p->devices)	/* the pipeline's split */
		printf("devices   %u x %s (%.1f GB SRAM each), %u layers on the first %u, %u on the "
		       "rest, %u stages: %s\n", p->devices, p->profile, p->device_sram_bytes / 1e9,
		       p->layers_per_device, s->n_layers % p->devices, p->layers_per_device - 1,
		       p->stages, p->why);
	else
		printf("devices   %u x %s (%.1f GB SRAM each), %u layers per device, %u stages: %s\n",
		       p->devices, p->profile, p->device_sram_bytes / 1e9, p->layers_per_device,
		       p->stages, p->why);
	if (p->hosts > 1)
		printf("hosts     %u, joined by %s%s: %.1f us per token between hosts\n", p->hosts,
		       o->host_link ? o->host_link->name : "the device link",
		       o->host_link ? " (--link-profile)" : "", p->host_link_ns / 1e3);
	if (p->spread64_max > p->layer_span64) {
		printf("spread    a layer's bytes fill %.1f stages' cores; spread over %.1f",
		       p->layer_span64 / 64.0, p->spread64 / 64.0);
		if (p->spread64_max > p->spread64)
			printf(" (%.1f on devices holding fewer layers)", p->spread64_max / 64.0);
		printf(" for a %u-position pass\n", p->spread_positions);
	} else if (p->layer_span64)
		printf("spread    a layer's bytes fill %.1f stages' cores; kept there (%s)\n",
		       p->layer_span64 / 64.0, o->no_spread ? "--no-spread" :
		       "spreading would slow its pass");
	printf("KV        %.1f MB per sequence of %u positions; %llu sequences fit\n",
	       p->kv_bytes_per_seq / 1e6, o->context, (unsigned long long)p->sequences_fit);
	printf("TTFT      %.3f ms for a %u-token prompt\n", p->ttft_ns / 1e6, p->prompt);
	printf("single    %llu tok/s (%.1f us per token, %.1f us of it links; bound: %s)\n",
	       (unsigned long long)p->tok_s_single, p->token_ns / 1e3, p->link_ns / 1e3,
	       p->single_bound);
	printf("band      %llu..%llu tok/s: link latency x0.5..x2, calibration residuals "
	       "x%.2f..x%.2f\n", (unsigned long long)p->tok_s_single_low,
	       (unsigned long long)p->tok_s_single_high, p->residual_low, p->residual_high);
	printf("batch %-4u%llu tok/s aggregate (slowest stage %.2f us per token; bound: %s)\n",
	       o->batch, (unsigned long long)p->tok_s_aggregate, p->stage_ns / 1e3, p->bound);
	if (p->deploy_draft)
		printf("deploy    a production deployment: %s; acceptance from %s; devices: %s\n",
		       p->deploy_draft, p->deploy_source, o->devices ? "as given" :
		       "as few as hold the model (an operator's count: --devices N)");
	if (p->draft_tokens && !p->deploy_draft)
		printf("draft     %.2g B parameters on %u device(s), ", o->draft_params / 1e9,
		       p->draft_devices);
	else if (p->draft_tokens)
		printf("draft     the head, ");
	if (p->draft_tokens)
		printf("%u tokens per step at %.0f %%: %.2f tokens per %.1f us verify + %u x %.1f us "
		       "drafting = %llu tok/s single (at most %llu, every draft token accepted)\n",
		       p->draft_tokens, p->draft_accept * 100, p->tokens_per_step,
		       p->verify_ns / 1e3, p->draft_tokens, p->draft_token_ns / 1e3,
		       (unsigned long long)p->tok_s_spec, (unsigned long long)p->tok_s_spec_ceiling);
	if (p->draft_tokens)
		printf("band      %llu..%llu tok/s with the draft: besides the above, acceptance "
		       "%.2f..%.2f", (unsigned long long)p->tok_s_spec_low,
		       (unsigned long long)p->tok_s_spec_high, p->draft_accept_low,
		       p->draft_accept_high);
	if (p->draft_tokens && o->draft_params)
		printf(" and a draft of %.2g..%.2g B", o->draft_params / 2e9,
		       o->draft_params * 2 / 1e9);
	if (p->draft_tokens)
		printf("\n");
}

static int set_dims(int c, const char *arg, struct wafer_plan_shape *s)
{
	unsigned int *f = c == OPT_LAYERS ? &s->n_layers : c == OPT_DIM ? &s->dim :
			  c == OPT_HIDDEN ? &s->hidden_dim : c == OPT_HEADS ? &s->n_heads :
			  c == OPT_KV_HEADS ? &s->n_kv_heads : c == OPT_HEAD_DIM ? &s->head_dim :
			  c == OPT_EXPERTS ? &s->n_experts : c == OPT_ACTIVE ? &s->n_active :
			  c == OPT_SHARED ? &s->n_shared : c == OPT_EXPERT_HIDDEN ?
			  &s->expert_hidden : c == OPT_MOE_EVERY ? &s->moe_every : &s->vocab;

	return cli_parse_uint(arg, 0, UINT_MAX, f);
}

/**
 * struct plan_args - wafer plan's command line
 * @o: the projection's options
 * @custom: the shape `custom` names
 * @sweep_name: --sweep's axis as given
 * @plot_file: --plot
 * @trace_file: --trace
 * @axis: --sweep's axis
 * @json: --json
 * @bits_given: --weight-bits was given (else a blob's own, or 4)
 * @link: --link-profile's link (@o.host_link points to it)
 */
struct plan_args {
	struct wafer_plan_opts o;
	struct wafer_plan_shape custom;
	const char *sweep_name, *plot_file, *trace_file;
	enum sweep_axis axis;
	int json;
	int bits_given;
	struct wafer_plan_link link;
};

/*
 * Option @c with @arg into @a: 0, 1 for a bad value, 2 for an unknown option, 3 for help,
 * 4 for a bad value already said.
 */
static int plan_opt(struct plan_args *a, int c, const char *arg)
{
	struct wafer_plan_opts *o = &a->o;

	switch (c) {
	case OPT_PROFILE:
		o->profile = arg;
		return 0;
	case OPT_DEVICES:
		o->devices = 0;
		return strcmp(arg, "auto") &&
		       (cli_parse_uint(arg, 0, UINT_MAX, &o->devices) || !o->devices);
	case OPT_BITS:
		a->bits_given = 1;
		return cli_parse_uint(arg, 0, UINT_MAX, &o->weight_bits) != 0;
	case OPT_QUANT:
		a->bits_given = 1;
		o->weight_bits = !strcmp(arg, "int8") ? 8 : !strcmp(arg, "int4") ? 4 : 0;
		return !o->weight_bits;
	case OPT_BATCH:
		return cli_parse_uint(arg, 0, UINT_MAX, &o->batch) != 0;
	case OPT_CONTEXT:
		return cli_parse_uint(arg, 0, UINT_MAX, &o->context) != 0;
	case OPT_PROMPT:
		return cli_parse_uint(arg, 0, UINT_MAX, &o->prompt) || !o->prompt;
	case OPT_JSON:
		a->json = 1;
		return 0;
	case OPT_DRAFT:
		return parse_params(arg, &o->draft_params) != 0;
	case OPT_ACCEPT:
		return parse_prob(arg, &o->draft_accept) != 0;
	case OPT_DRAFT_TOKENS:
		return cli_parse_uint(arg, 0, UINT_MAX, &o->draft_tokens) != 0;
	case OPT_SWEEP:
		a->sweep_name = arg;
		a->axis = !strcmp(arg, "devices") ? SWEEP_DEVICES :
			  !strcmp(arg, "batch") ? SWEEP_BATCH :
			  !strcmp(arg, "context") ? SWEEP_CONTEXT : SWEEP_NONE;
		return a->axis == SWEEP_NONE;
	case OPT_PLOT:
		a->plot_file = arg;
		return 0;
	case OPT_TRACE:
		a->trace_file = arg;
		return 0;
	case OPT_STREAM:
		o->stream = 1;
		return 0;
	case OPT_DEPLOYMENT:
		o->deployment = 1;
		return 0;
	case OPT_NO_SPREAD:
		o->no_spread = 1;
		return 0;
	case OPT_HOSTS:
		return cli_parse_uint(arg, 0, UINT_MAX, &o->hosts) || !o->hosts;
	case OPT_LINK_PROFILE:
		if (cli_plan_link(arg, &a->link))
			return 4;
		o->host_link = &a->link;
		return 0;
	case OPT_HELP:
		return 3;
	case OPT_LAYERS: case OPT_DIM: case OPT_HIDDEN: case OPT_HEADS:
	case OPT_KV_HEADS: case OPT_HEAD_DIM: case OPT_VOCAB: case OPT_EXPERTS:
	case OPT_ACTIVE: case OPT_SHARED: case OPT_EXPERT_HIDDEN: case OPT_MOE_EVERY:
		return set_dims(c, arg, &a->custom) != 0;
	default:
		return 2;
	}
}

/* The command line into @a: -1 to go on, else the exit status. */
static int plan_parse(int argc, char **argv, struct plan_args *a)
{
	int c, ret;

	*a = (struct plan_args){
		.o = { .profile = "wse3", .batch = 1, .context = 8192,
		       .draft_accept = 0.8, .draft_tokens = 4 },
		.custom = { .name = "custom" },
	};
	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		ret = plan_opt(a, c, optarg);
		if (ret == 3) {
			usage(stdout);
			return 0;
		}
		if (ret == 2) {
			usage(stderr);
			return 2;
		}
		if (ret == 4)
			return 1;
		if (ret)
			return cli_bad_value("plan", argv, optind, optarg,
					     c == OPT_QUANT ? "int8 or int4" : NULL);
	}
	if (optind + 1 != argc) {
		usage(stderr);
		return 2;
	}
	if (a->plot_file && a->axis == SWEEP_NONE) {
		fprintf(stderr, "wafer plan: --plot needs --sweep devices|batch|context\n");
		return 2;
	}
	return -1;
}

/* The shape @name names: a preset, `custom`, a checkpoint or a blob; 0 or -1. */
static int plan_shape(const struct plan_args *a, const char *name, struct wafer_plan_shape *s)
{
	const struct wafer_plan_shape *preset = wafer_plan_preset_find(name);

	if (preset) {
		*s = *preset;
		return 0;
	}
	if (strcmp(name, "custom"))
		return shape_from_checkpoint(name, s);
	*s = a->custom;
	if (!s->head_dim && s->n_heads)
		s->head_dim = s->dim / s->n_heads;
	if (!s->n_kv_heads)
		s->n_kv_heads = s->n_heads;
	return 0;
}

int cli_cmd_plan(int argc, char **argv)
{
	struct wafer_plan_shape shape;
	struct plan_args a;
	struct wafer_plan p;
	int ret = plan_parse(argc, argv, &a);

	if (ret >= 0)
		return ret;
	if (plan_shape(&a, argv[optind], &shape))
		return 1;
	if (!a.bits_given)	/* a blob's own precision, else 4 */
		a.o.weight_bits = shape.weight_bits ? shape.weight_bits : 4;
	if (a.axis != SWEEP_NONE)
		return sweep(&shape, a.o, a.axis, a.sweep_name, a.json, a.plot_file);
	if (a.trace_file) {
		if (cli_plan_traced(&shape, &a.o, &p, a.trace_file))
			return 1;
	} else if (wafer_plan(&shape, &a.o, &p)) {
		fprintf(stderr, "wafer plan: %s\n", cli_plan_error(wafer_last_error(),
								   !strcmp(shape.name, "custom")));
		return 1;
	}
	if (a.json)
		print_json(plan_json(&shape, &a.o, &p));
	else
		print_table(&shape, &a.o, &p);
	return 0;
}
