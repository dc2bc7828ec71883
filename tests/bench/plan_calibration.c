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
	const char *profile;
	const char *preset;
	unsigned int devices, bits;
	uint64_t draft_params;	/* 0: none */
	double published;
	int count;		/* the figure is a device count, not tok/s */
	const char *role;
};

/* Llama 2 70B (not a preset): Llama 3.1 70B's layers with a 32,000-token vocabulary. */
static const struct wafer_plan_shape llama2_70b = {
	"llama2-70b", 80, 8192, 28672, 64, 8, 128, 32000, 0, 0, 0, 0, 0, 0, 0, 0
};

/*
 * Contexts are short (1,024) and batches 1: the published single-sequence
 * figures do not say more.  Drafts are not disclosed: 1 B (70B) and 2 B
 * (Kimi K2) at acceptance 0.8 with 4 tokens are assumptions.  Groq's
 * precision is not published with its figures: 16-bit weights are assumed
 * (the chip's FP16 figure; 576 chips hold about 70 B 16-bit weights).
 */
static const struct figure figures[] = {
	{ "Llama 3.1 8B, one CS-3, 16-bit", "wse3", "llama3.1-8b", 1, 16, 0, 1800, 0,
	  "sets `mesh_hop_cycles`" },
	{ "Llama 3.1 70B, four CS-3, 16-bit", "wse3", "llama3.1-70b", 4, 16, 0, 450, 0,
	  "prediction" },
	{ "Llama 3.1 70B, CS-3 with speculative decoding (and a kernel rewrite)", "wse3",
	  "llama3.1-70b", 4, 16, 1000000000ull, 2100, 0, "prediction (1 B draft assumed)" },
	{ "Kimi K2 on CS-3, 4-bit weights, speculative decoding", "wse3", "kimi-k2", 0, 4,
	  2000000000ull, 1000, 0, "prediction (2 B draft assumed)" },
	{ "GPT-5.6 Sol on Cerebras (shape: the seed articles' estimate), 4-bit, one layer per wafer",
	  "wse3", "sol", 80, 4, 0, 750, 0, "prediction" },
	{ "Llama 3.1 70B on Groq LPUs, plain endpoint (16-bit assumed)", "lpu", "llama3.1-70b", 0,
	  16, 0, 250, 0, "sets `link_hop_cycles` (lpu)" },
	{ "Llama 3.1 70B on Groq LPUs, speculative endpoint (specdec)", "lpu", "llama3.1-70b", 0,
	  16, 1000000000ull, 1660, 0, "prediction (1 B draft assumed)" },
	{ "Llama 2 70B on Groq LPUs: chips (16-bit assumed)", "lpu", "llama2-70b", 0, 16, 0, 576,
	  1, "prediction" },
};

int main(void)
{
	unsigned int i;

	printf("| published | figure | projection | error | role |\n");
	printf("|---|---|---|---|---|\n");
	for (i = 0; i < sizeof(figures) / sizeof(figures[0]); i++) {
		const struct figure *f = &figures[i];
		const struct wafer_plan_shape *s = strcmp(f->preset, "llama2-70b") ?
						   wafer_plan_preset_find(f->preset) : &llama2_70b;
		struct wafer_plan_opts o = { .profile = f->profile, .devices = f->devices,
					     .weight_bits = f->bits, .batch = 1, .context = 1024,
					     .draft_params = f->draft_params, .draft_accept = 0.8,
					     .draft_tokens = 4 };
		struct wafer_plan p;
		double got;

		if (wafer_plan(s, &o, &p)) {
			fprintf(stderr, "plan_calibration: %s: %s\n", f->preset, wafer_last_error());
			return 1;
		}
		got = f->count ? p.devices : (double)(f->draft_params ? p.tok_s_spec :
						      p.tok_s_single);
		if (f->count)
			printf("| %s | %.0f chips | %.0f chips (%u per layer) | %+.0f %% | %s |\n",
			       f->what, f->published, got, p.tensor_chips,
			       (got - f->published) * 100 / f->published, f->role);
		else
			printf("| %s | %.0f tok/s | %.0f on %u %s | %+.0f %% | %s |\n", f->what,
			       f->published, got, p.devices, p.tensor_chips ? "chips" : "device(s)",
			       (got - f->published) * 100 / f->published, f->role);
	}
	return 0;
}
