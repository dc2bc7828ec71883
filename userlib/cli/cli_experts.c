// SPDX-License-Identifier: MIT
/*
 * The per-expert load of MoE layers (wafer_dev_expert_load()) as the CLI
 * shows it: a snapshot, the table (the driver's debugfs format, so kernel
 * and in-process output compare byte for byte), and each layer's
 * imbalance, the busiest routed expert / the mean, over a snapshot or the
 * tokens between two.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* @m's entries, or the device's @nth model's (@m NULL). */
static int entries(struct wafer_dev *dev, const struct wafer_model *m, unsigned int nth,
		   struct wafer_expert_load *out, unsigned int max)
{
	return m ? wafer_model_expert_load(m, out, max) :
		   wafer_dev_expert_load_model(dev, nth, out, max);
}

int cli_experts_take(struct wafer_dev *dev, const struct wafer_model *m, unsigned int nth,
		     struct cli_experts *s)
{
	int n;

	memset(s, 0, sizeof(*s));
	n = entries(dev, m, nth, NULL, 0);
	if (n <= 0)
		return n;
	s->e = calloc((size_t)n, sizeof(*s->e));
	if (!s->e)
		return -ENOMEM;
	n = entries(dev, m, nth, s->e, (unsigned int)n);
	if (n < 0) {
		cli_experts_free(s);
		return n;
	}
	s->n = (unsigned int)n;
	return n;
}

void cli_experts_free(struct cli_experts *s)
{
	free(s->e);
	memset(s, 0, sizeof(*s));
}

int cli_experts_since(const struct cli_experts *prev, const struct cli_experts *cur,
		      struct cli_experts *d)
{
	unsigned int i;

	memset(d, 0, sizeof(*d));
	if (!cur->n)
		return 0;
	d->e = calloc(cur->n, sizeof(*d->e));
	if (!d->e)
		return -ENOMEM;
	d->n = cur->n;
	for (i = 0; i < cur->n; i++) {
		d->e[i] = cur->e[i];
		if (prev && prev->n == cur->n && prev->e[i].tokens <= d->e[i].tokens)
			d->e[i].tokens -= prev->e[i].tokens;
	}
	return 0;
}

void cli_experts_imbalance(const struct cli_experts *prev, const struct cli_experts *cur,
			   char *out, size_t len)
{
	struct cli_experts d;
	size_t at = 0;
	unsigned int i;

	out[0] = '\0';
	if (cli_experts_since(prev, cur, &d))
		return;
	for (i = 0; i < d.n && at + 8 < len; i++) {
		if (i && d.e[i].layer == d.e[i - 1].layer)
			continue;
		at += (size_t)snprintf(out + at, len - at, "%s%.2f", at ? " " : "",
				       wafer_expert_imbalance(d.e, d.n, d.e[i].layer));
	}
	cli_experts_free(&d);
}

void cli_experts_print(const struct cli_experts *s, FILE *f)
{
	unsigned int i;

	fprintf(f, "layer expert top_k     tokens\n");
	for (i = 0; i < s->n; i++) {
		const struct wafer_expert_load *e = &s->e[i];

		fprintf(f, "%5u %s%-*u %5u %10llu\n", e->layer, e->shared ? "s" : "",
			e->shared ? 5 : 6, e->expert, e->top_k, (unsigned long long)e->tokens);
	}
}

/*
 * Where the firmware placed expert groups across the stages (the layers
 * did not fit with their experts): "experts:  across stages: L0 0-1@s3
 * 2@s1; L1 ...", runs of consecutive experts on one stage; nothing when
 * every expert lives with its layer.
 */
void cli_experts_print_stages(const struct cli_experts *s, FILE *f)
{
	unsigned int i, j, n = 0, layer = UINT32_MAX;

	for (i = 0; i < s->n; i = j) {
		const struct wafer_expert_load *e = &s->e[i];

		for (j = i + 1; j < s->n && s->e[j].layer == e->layer && !s->e[j].shared &&
		     s->e[j].stage == e->stage && s->e[j].expert == s->e[j - 1].expert + 1; j++)
			;
		if (e->shared || e->stage == WAFER_EXPERT_LOCAL)
			continue;
		if (!n++)
			fprintf(f, "experts:  across stages:");
		if (e->layer != layer)
			fprintf(f, "%s L%u", n > 1 ? ";" : "", e->layer);
		layer = e->layer;
		fprintf(f, " %u", e->expert);
		if (j - i > 1)
			fprintf(f, "-%u", s->e[j - 1].expert);
		fprintf(f, "@s%u", e->stage);
	}
	if (n)
		fprintf(f, "\n");
}
