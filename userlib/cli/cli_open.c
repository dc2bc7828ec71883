// SPDX-License-Identifier: MIT
/* wafer CLI: the devices the options name, opened; the MoE and streaming options. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "wafer_link.h"

/* Members of a --chain (wafer_open_chain() checks its own limit). */
#define CLI_CHAIN_MAX	128

int cli_parse_moe(const char *s, struct wafer_moe_opts *o)
{
	unsigned int v[3] = { 0, 0, 0 }, i;
	char buf[64], *tok, *save = NULL;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	for (i = 0, tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), i++)
		if (i >= 3 || cli_parse_uint(tok, 0, 4096, &v[i]))
			return -1;
	if (i < 2 || !v[0] || !v[1] || v[1] > v[0])
		return -1;
	o->n_experts = v[0];
	o->top_k = v[1];
	o->n_shared = v[2];
	return 0;
}

int cli_parse_gate(const char *s, struct wafer_moe_opts *o)
{
	static const char *const names[] = { "softmax", "sigmoid", "unit" };
	unsigned int i;

	for (i = 0; i < 3; i++)
		if (!strcmp(s, names[i])) {
			o->gate = i;
			return 0;
		}
	return -1;
}

void cli_print_moe(const struct wafer_model_info *mi, FILE *f)
{
	static const char *const gate[] = { "softmax", "sigmoid (normalised)", "unit" };

	if (!mi->n_experts) {
		fprintf(f, "ffn:      dense in every layer\n");
		return;
	}
	fprintf(f, "ffn:      mixture of experts in every layer (0-%u): %u routed + %u shared, "
		"top-%u, %s gates\n", mi->n_layers - 1, mi->n_experts, mi->n_shared_experts,
		mi->n_experts_active, mi->moe_gate < 3 ? gate[mi->moe_gate] : "?");
}

void cli_moe_note(const struct wafer_moe_opts *o, FILE *f)
{
	if (!o->n_experts || o->copies)
		return;
	if (o->top_k < o->n_experts)
		fprintf(f, "note:     the experts are slices of the dense FFN and a token runs %u "
			"of %u: the ones it drops change the model (not the dense text; "
			"--moe-copies keeps it)\n", o->top_k, o->n_experts);
	else if (o->gate != WAFER_MOE_GATE_UNIT)
		fprintf(f, "note:     %s gates weigh the FFN's slices below 1: not the dense "
			"model (--moe-gate unit is)\n", o->gate ? "sigmoid" : "softmax");
}

int cli_parse_expert_group(const char *s, unsigned int *out)
{
	return cli_parse_uint(s, 1, 512, out);
}

int cli_parse_stream(const char *s, int *out)
{
	static const char *const names[] = { "off", "auto", "on" };
	int i;

	for (i = 0; i < 3; i++)
		if (!strcmp(s, names[i])) {
			*out = i;	/* WAFER_STREAM_OFF, _AUTO, _ON */
			return 0;
		}
	return -1;
}

void cli_print_stream(const struct wafer_model_info *mi, FILE *f)
{
	if (!mi->weights_streamed)
		fprintf(f, "weights:  resident in SRAM (%llu KiB)\n",
			(unsigned long long)mi->sram_bytes >> 10);
	else
		fprintf(f, "weights:  streamed from host memory, layer by layer into each stage's "
			"2-layer window (%s); %llu KiB of SRAM\n",
			mi->stream_fallback ? "the model does not fit resident" :
			"--stream-weights on", (unsigned long long)mi->sram_bytes >> 10);
}

int cli_devices_check(const struct cli_devices *d, const char *cmd)
{
	/* A chain's members are counted when it is opened (wafer_open_chain()). */
	if (d->chain)
		return 0;
	if (!d->n_split || d->n_split == (d->n ? d->n : 1))
		return 0;
	fprintf(stderr, "wafer %s: --split gives %u layer counts for %u devices\n", cmd,
		d->n_split, d->n ? d->n : 1);
	return 2;
}

/* The members of --chain @s (HOST[:PORT]:DEVICES,... or FILE.json) into @m: their count, or -errno. */
static int chain_members(const char *s, struct wafer_chain_member *m, unsigned int max)
{
	size_t l = strlen(s);

	return l > 5 && !strcmp(s + l - 5, ".json") ? wafer_chain_load(s, m, max) :
		wafer_chain_parse(s, m, max);
}

int cli_parse_chain(const char *s, struct cli_devices *d)
{
	static struct wafer_chain_member m[CLI_CHAIN_MAX];

	if (chain_members(s, m, CLI_CHAIN_MAX) < 0)
		return -1;
	d->chain = s;
	return 0;
}

/* --chain: the members parsed (or read from FILE.json), the split checked against them, the chain opened. */
static int cli_open_chain(const struct cli_devices *d, struct wafer_dev **dev)
{
	static struct wafer_chain_member m[CLI_CHAIN_MAX];
	int n = chain_members(d->chain, m, CLI_CHAIN_MAX);

	if (n < 0)
		return n;
	return wafer_open_chain(m, (unsigned int)n, d->split, d->n_split, 0, dev);
}

int cli_open(const struct cli_devices *d, struct wafer_dev **dev)
{
	struct wafer_open_opts o[WAFER_PIPE_MAX_DEVICES];
	struct wafer_pipe_opts po = { .n_devices = d->n ? d->n : 1, .devices = o,
				      .split = d->n_split ? d->split : NULL };
	unsigned int i;

	if (d->afd[0])
		return cli_open_afd(d, dev);
	if (d->chain)
		return cli_open_chain(d, dev);
	if (d->n <= 1 && !d->n_split) {
		struct wafer_open_opts one = d->base;

		if (d->n)
			one.index = (int)d->index[0];
		return wafer_open(&one, dev);
	}
	for (i = 0; i < po.n_devices; i++) {
		o[i] = d->base;
		if (d->n)
			o[i].index = (int)d->index[i];
	}
	return wafer_open_pipeline(&po, dev);
}

void cli_print_parts(const struct wafer_model *m, FILE *f)
{
	struct wafer_model_part p;
	unsigned int i, n = wafer_model_parts(m);

	for (i = 0; i < n && !wafer_model_part(m, i, &p); i++) {
		char where[32];

		if (p.device_index >= 0)
			snprintf(where, sizeof(where), "accel%d", p.device_index);
		else
			snprintf(where, sizeof(where), "inproc %u", p.member);
		if (p.part == WAFER_PART_EXPERTS) {
			fprintf(f, "  %-9s layers %2u-%-2u routed experts %u-%u  weights %8llu KiB\n",
				where, p.layer_first, p.layer_first + p.layer_count - 1,
				p.expert_first, p.expert_first + p.expert_count - 1,
				(unsigned long long)p.sram_bytes >> 10);
			continue;
		}
		fprintf(f, "  %-9s layers %2u-%-2u %s%s%s  weights %8llu KiB  KV %8llu KiB%s\n",
			where, p.layer_first, p.layer_first + p.layer_count - 1,
			p.part == WAFER_PART_ATTN ? "attention " : p.part == WAFER_PART_FFN ?
			"FFN       " : "",
			p.embed ? "+embed " : "       ", p.head ? "+head" : "     ",
			(unsigned long long)p.sram_bytes >> 10,
			(unsigned long long)p.kv_bytes >> 10,
			!i ? "" : p.chained ? "  (waits in the driver)" : "  (posted by the host)");
	}
}
