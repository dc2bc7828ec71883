// SPDX-License-Identifier: MIT
/*
 * libwafer: the published figures wafer_plan() is checked against
 * (../shared/hardware/PUBLISHED.md), each with the configuration it
 * projects: the calibration table of docs/TIMING.md
 * (tests/bench/plan_calibration), and the residuals whose spread widens
 * every projection's band (wafer_plan(), tok_s_single_low/high).
 */
#include <stddef.h>

#include "wafer.h"

/* Llama 2 70B (not a preset): Llama 3.1 70B's layers with a 32,000-token vocabulary. */
static const struct wafer_plan_shape llama2_70b = {
	.name = "llama2-70b", .n_layers = 80, .dim = 8192, .hidden_dim = 28672, .n_heads = 64,
	.n_kv_heads = 8, .head_dim = 128, .vocab = 32000,
};

/*
 * Contexts are short (1,024) and batches 1: the published single-sequence
 * figures do not say more.  Drafts are not disclosed: a figure published
 * with speculative decoding is projected as a deployment of its family
 * (wafer_plan_opts.deployment: an EAGLE-2 head, or Kimi K2's multi-token
 * prediction, with their published acceptance), and so is one whose
 * conditions are not published (Sol's "up to 750 tok/s"): what a
 * production endpoint runs is the default; only a figure published as
 * plain decode (a launch before speculative decoding, Groq's plain
 * endpoint) is projected without a draft.  Groq's
 * precision is not published with its figures: 16-bit weights are assumed
 * (the chip's FP16 figure; 576 chips hold about 70 B 16-bit weights).
 * Only plain decode of a published shape is a residual of the band: a
 * speculative figure's draft is an assumption (its range is the band's
 * own), Sol's shape an estimate, a chip count not a speed.
 */
static const struct wafer_plan_figure figures[] = {
	{ "Llama 3.1 8B, one CS-3, 16-bit", NULL, "wse3", "llama3.1-8b", 1, 16, 0, 1800, 0,
	  "sets `mesh_hop_cycles`", 1 },
	{ "Llama 3.1 70B, four CS-3, 16-bit", NULL, "wse3", "llama3.1-70b", 4, 16, 0, 450, 0,
	  "prediction", 1 },
	{ "Llama 3.1 70B, CS-3 with speculative decoding (and a kernel rewrite)", NULL, "wse3",
	  "llama3.1-70b", 4, 16, 1, 2100, 0, "prediction (deployment: the family's draft)", 0 },
	{ "Kimi K2 on CS-3, 4-bit weights, speculative decoding", NULL, "wse3", "kimi-k2", 0, 4,
	  1, 1000, 0, "prediction (deployment: the family's draft)", 0 },
	{ "GPT-5.6 Sol on Cerebras (shape: the seed articles' estimate), 4-bit, one layer per "
	  "wafer", NULL, "wse3", "sol", 80, 4, 1, 750, 0,
	  "prediction (deployment: the family's draft; conditions not published)", 0 },
	{ "Llama 3.1 70B on Groq LPUs, plain endpoint (16-bit assumed)", NULL, "lpu",
	  "llama3.1-70b", 0, 16, 0, 250, 0, "sets `link_hop_cycles` (lpu)", 1 },
	{ "Llama 3.1 70B on Groq LPUs, speculative endpoint (specdec)", NULL, "lpu",
	  "llama3.1-70b", 0, 16, 1, 1660, 0, "prediction (deployment: the family's draft)", 0 },
	{ "Llama 2 70B on Groq LPUs: chips (16-bit assumed)", &llama2_70b, "lpu", "llama2-70b", 0,
	  16, 0, 576, 1, "prediction", 0 },
};

const struct wafer_plan_figure *wafer_plan_figure(unsigned int i)
{
	if (i >= sizeof(figures) / sizeof(figures[0]))
		return NULL;
	return &figures[i];
}

const struct wafer_plan_shape *wafer_plan_figure_shape(const struct wafer_plan_figure *f)
{
	return f->shape ? f->shape : wafer_plan_preset_find(f->preset);
}
