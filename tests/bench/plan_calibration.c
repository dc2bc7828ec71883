// SPDX-License-Identifier: MIT
/*
 * The calibration table of docs/TIMING.md: each published figure of
 * ../shared/hardware/PUBLISHED.md beside wafer_plan()'s projection of the
 * same configuration and the error, and whether the figure set a parameter
 * or is a prediction.  Prints the table as Markdown (make bench).
 *
 * Usage: plan_calibration
 */
#include <stdio.h>
#include <string.h>

#include "wafer.h"

struct figure {
	const char *what;
	const char *preset;
	unsigned int devices, bits;
	uint64_t draft_params;	/* 0: none */
	double published;
	const char *role;
};

/*
 * Contexts are short (1,024) and batches 1: the published single-sequence
 * figures do not say more.  Drafts are not disclosed: 1 B (70B) and 2 B
 * (Kimi K2) at acceptance 0.8 with 4 tokens are assumptions.
 */
static const struct figure figures[] = {
	{ "Llama 3.1 8B, one CS-3, 16-bit", "llama3.1-8b", 1, 16, 0, 1800,
	  "sets `mesh_hop_cycles`" },
	{ "Llama 3.1 70B, four CS-3, 16-bit", "llama3.1-70b", 4, 16, 0, 450, "prediction" },
	{ "Llama 3.1 70B, CS-3 with speculative decoding (and a kernel rewrite)",
	  "llama3.1-70b", 4, 16, 1000000000ull, 2100, "prediction (1 B draft assumed)" },
	{ "Kimi K2 on CS-3, 4-bit weights, speculative decoding", "kimi-k2", 0, 4,
	  2000000000ull, 1000, "prediction (2 B draft assumed)" },
	{ "GPT-5.6 Sol on Cerebras (shape: the seed articles' estimate), 4-bit, one layer per wafer",
	  "sol", 80, 4, 0, 750, "prediction" },
};

int main(void)
{
	unsigned int i;

	printf("| published | figure (tok/s) | projection (tok/s) | error | role |\n");
	printf("|---|---|---|---|---|\n");
	for (i = 0; i < sizeof(figures) / sizeof(figures[0]); i++) {
		const struct figure *f = &figures[i];
		struct wafer_plan_opts o = { .profile = "wse3", .devices = f->devices,
					     .weight_bits = f->bits, .batch = 1, .context = 1024,
					     .draft_params = f->draft_params, .draft_accept = 0.8,
					     .draft_tokens = 4 };
		struct wafer_plan p;
		double got;

		if (wafer_plan(wafer_plan_preset_find(f->preset), &o, &p)) {
			fprintf(stderr, "plan_calibration: %s: %s\n", f->preset, wafer_last_error());
			return 1;
		}
		got = (double)(f->draft_params ? p.tok_s_spec : p.tok_s_single);
		printf("| %s | %.0f | %.0f on %u device(s) | %+.0f %% | %s |\n", f->what,
		       f->published, got, p.devices, (got - f->published) * 100 / f->published,
		       f->role);
	}
	return 0;
}
