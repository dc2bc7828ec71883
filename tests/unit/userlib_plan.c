// SPDX-License-Identifier: MIT
/*
 * Unit test: wafer_plan() and `wafer plan`.
 *
 * - a lone decode step and a prefill of the shared model, projected for a
 *   wse3 device, against what the firmware models for the same steps in a
 *   real (in-process) run: the same timing code, so they agree but for the
 *   bytes the plan does not know (quantisation scales, record headers);
 * - the same split over a pipeline of 2, 3 and 5 wse3 devices, in a decode
 *   loop that waits for each token: every step takes
 *   what the plan says a lone sequence's token takes on as many devices,
 *   since device 0 may not start a token before the previous one left the
 *   last device (the pipeline's floor, WFW_JOB_NOT_BEFORE; without it a
 *   step took about device 0's part plus a link); a lone step's device_ns
 *   is its period (a pipeline job's device_ns is its makespan), and the
 *   prompt's the plan's time to first token;
 * - byte counts against a hand computation; more devices never fit fewer
 *   sequences; a longer context never needs fewer KV bytes; a batch never
 *   lowers aggregate tokens/s;
 * - bad input: every field named in the error; a model no device count holds;
 * - the CLI on every preset and on the shared checkpoint, as text and as
 *   JSON (parsed with json-c, its fields checked).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json.h>
#include <json_util.h>

#include "wafer.h"
#include "wt_util.h"

/* stories260K (the shared checkpoint) */
static const struct wafer_plan_shape s260k = { "stories260K", 5, 64, 172, 8, 4, 8, 512,
					       0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };

#define PROMPT	32
#define STEPS	6

/**
 * struct split_run - what one run of the loop saw
 * @prefill: the prompt job's completion
 * @step: each decode step's completion
 */
struct split_run {
	struct wafer_completion prefill;
	struct wafer_completion step[STEPS];
};

static int open_split(const char *profile, unsigned int n, struct wafer_dev **dev)
{
	struct wafer_open_opts o[WAFER_PIPE_MAX_DEVICES];
	struct wafer_pipe_opts po = { .n_devices = n, .devices = o };
	unsigned int i;

	for (i = 0; i < n; i++)
		o[i] = (struct wafer_open_opts){ .backend = WAFER_BACKEND_INPROC,
						 .profile = profile, .sram_bytes = 1 << 20 };
	return n == 1 ? wafer_open(&o[0], dev) : wafer_open_pipeline(&po, dev);
}

/* Job @i of the loop: the prompt (i = 0), then one token each, waited for. */
static int loop(struct wafer_dev *dev, struct wafer_ctx *ctx, struct wafer_bo *in,
		struct wafer_bo *out, struct split_run *r)
{
	unsigned int i;

	for (i = 0; i <= STEPS; i++) {
		struct wafer_job j = { .ctx = ctx, .start_pos = i ? PROMPT + i - 1 : 0,
				       .n_tokens = i ? 1 : PROMPT, .top_k = 1, .in = in,
				       .in_offset = i ? (PROMPT + i - 1) * 4 : 0, .out = out };
		struct wafer_completion *c = i ? &r->step[i - 1] : &r->prefill;

		if (wafer_submit(dev, &j, 1) != 1 || wafer_reap(dev, c, 1, 1, -1) != 1 ||
		    c->status)
			return -1;
	}
	return 0;
}

/* The loop on @n devices of @profile (1: no pipeline). */
static int split_run(const char *profile, unsigned int n, const void *blob, size_t len,
		     struct split_run *r)
{
	struct wafer_bo *in = NULL, *out = NULL;
	struct wafer_model *m = NULL;
	struct wafer_ctx *ctx = NULL;
	struct wafer_dev *dev;
	unsigned int i;
	int ret;

	memset(r, 0, sizeof(*r));
	if (open_split(profile, n, &dev))
		return -1;
	ret = wafer_model_load(dev, blob, len, &m) ||
	      wafer_ctx_create(m, 1, PROMPT + STEPS, &ctx) ||
	      wafer_bo_create(dev, (PROMPT + STEPS) * 4, &in) ||
	      wafer_bo_create(dev, WAFER_RESULT_SIZE(1), &out);
	for (i = 0; !ret && i < PROMPT + STEPS; i++)
		((uint32_t *)wafer_bo_map(in))[i] = 1 + i * 7 % 500;
	ret = ret || loop(dev, ctx, in, out, r);
	wafer_bo_destroy(in);
	wafer_bo_destroy(out);
	wafer_ctx_destroy(ctx);
	wafer_model_unload(m);
	wafer_close(dev);
	return ret ? -1 : 0;
}

/* |a - b| within @pct percent of b. */
static int near(uint64_t a, uint64_t b, unsigned int pct)
{
	uint64_t d = a > b ? a - b : b - a;

	return d * 100 <= b * pct;
}

/* Each step's period and device_ns against the plan's token on @n devices. */
static void split_agrees(unsigned int n, const void *blob, size_t len, uint64_t one_step)
{
	struct wafer_plan_opts o = { .profile = "wse3", .devices = n, .weight_bits = 8,
				     .batch = 1, .context = PROMPT + 1, .prompt = PROMPT };
	unsigned int i, period_ok = 1, span_ok = 1;
	uint64_t period = 0, prev;
	struct split_run r;
	struct wafer_plan p;
	int ret;

	ret = split_run("wse3", n, blob, len, &r);
	wt_ok(!ret && r.prefill.done_ns, "%u devices: a prompt of %u and %u decode steps, each "
	      "waited for (%s)", n, PROMPT, STEPS, ret ? wafer_last_error() : "ok");
	ret = ret || wafer_plan(&s260k, &o, &p) || p.devices != n;
	if (!wt_ok(!ret, "%u devices: the plan of the same split", n))
		return;
	prev = r.prefill.done_ns;
	for (i = 0; i < STEPS; i++) {
		period = r.step[i].done_ns - prev;
		period_ok &= r.step[i].done_ns > prev && near(period, p.token_ns, 2);
		span_ok &= r.step[i].device_ns == period;
		prev = r.step[i].done_ns;
	}
	wt_ok(period_ok, "%u devices: a decode step every %.2f us (modelled), the plan's "
	      "token %.2f us (within 2 %%)", n, period / 1e3, p.token_ns / 1e3);
	wt_ok(span_ok, "%u devices: a lone step's device_ns is its period (its makespan "
	      "across the devices)", n);
	wt_ok(period > one_step, "%u devices: a step takes longer than on one device (%.2f > "
	      "%.2f us: links)", n, period / 1e3, one_step / 1e3);
	wt_ok(near(r.prefill.device_ns, p.ttft_ns, 2), "%u devices: the prompt's makespan "
	      "%.2f us, the plan's time to first token %.2f us (within 2 %%)", n,
	      r.prefill.device_ns / 1e3, p.ttft_ns / 1e3);
}

static void agreement(void)
{
	struct wafer_convert_opts co = { .wbits = 8, .group_size = 64 };
	struct wafer_plan_opts o = { .profile = "wse3", .devices = 1, .weight_bits = 8,
				     .batch = 1, .context = 33, .prompt = 32 };
	const char *path = wt_model_path("stories260K.bin");
	uint64_t prefill = 0, step = 0, one_step;
	struct split_run r;
	struct wafer_plan p;
	unsigned int n;
	size_t len;
	void *blob;
	int ret;

	if (!wt_ok(path && !wafer_convert(path, &co, &blob, &len), "convert the shared model"))
		return;
	ret = split_run("wse3", 1, blob, len, &r);
	prefill = r.prefill.device_ns;
	step = r.step[0].device_ns;
	one_step = step;
	wt_ok(!ret, "a real run on a wse3 device: prefill %.2f us, then a decode step %.2f us "
	      "(modelled)", prefill / 1e3, step / 1e3);
	ret = wafer_plan(&s260k, &o, &p);
	wt_ok(!ret && p.devices == 1 && p.stages == 5, "the plan of the same: 1 device, 5 stages");
	wt_ok(near(p.token_ns, step, 2),
	      "decode step: plan %.2f us, real run %.2f us (within 2 %%)", p.token_ns / 1e3,
	      step / 1e3);
	wt_ok(near(p.ttft_ns, prefill, 2),
	      "prefill of 32 tokens: plan %.2f us, real run %.2f us (within 2 %%)",
	      p.ttft_ns / 1e3, prefill / 1e3);
	/* lpu: one chip (a stage) holds all 5 layers; the plan's group is one chip. */
	ret = split_run("lpu", 1, blob, len, &r);
	prefill = r.prefill.device_ns;
	step = r.step[0].device_ns;
	o.profile = "lpu";
	o.devices = 0;
	ret = ret || wafer_plan(&s260k, &o, &p);
	wt_ok(!ret && p.tensor_chips == 1 && p.groups == 1 &&
	      p.stages == 1 && near(p.token_ns, step, 2) && near(p.ttft_ns, prefill, 2),
	      "lpu: plan and real run agree: step %.2f / %.2f us, prefill %.2f / %.2f us",
	      p.token_ns / 1e3, step / 1e3, p.ttft_ns / 1e3, prefill / 1e3);
	/* 4 devices: both split 2,1,1,1 (wafer_split_even()). */
	for (n = 2; n <= 5; n++)
		split_agrees(n, blob, len, one_step);
	free(blob);
}

/*
 * lpu: Llama 3.1 70B at 16 bits.  A layer is 855.6 M parameters (1.711 GB),
 * with 4 MB of KV at context 1,024: 8 chips of 230 MB; the embedding and the
 * head (128,256 x 8,192 x 2 bytes = 2.10 GB each) take 10 chips each.
 */
static void lpu(void)
{
	const struct wafer_plan_shape *s = wafer_plan_preset_find("llama3.1-70b");
	struct wafer_plan_opts o = { .profile = "lpu", .weight_bits = 16, .batch = 1,
				     .context = 1024 };
	struct wafer_plan p, q;
	uint64_t fit = 0;
	unsigned int chips;
	int ret, mono = 1;

	ret = wafer_plan(s, &o, &p);
	wt_ok(!ret && p.tensor_chips == 8 && p.extra_chips == 20 && p.groups == 80 &&
	      p.devices == 80 * 8 + 20 && p.stages == 80,
	      "70B on lpu: 80 groups of 8 chips + 20 for embedding and head = 660 (%u)",
	      p.devices);
	/* 160 all-reduces of 14 steps of (hop + 19) cycles at 900 MHz, at the least. */
	wt_ok(!ret && p.token_ns > 160ull * 14 * 1459 * 10 / 9 && !strcmp(p.single_bound, "latency"),
	      "a token pays 160 all-reduces: %.0f us, latency-bound", p.token_ns / 1e3);
	for (chips = 660; chips <= 2640; chips *= 2) {
		o.devices = chips;
		ret = wafer_plan(s, &o, &q);
		mono &= !ret && q.sequences_fit >= fit && q.devices <= chips;
		fit = ret ? fit : q.sequences_fit;
	}
	wt_ok(mono, "more chips never fit fewer sequences (%llu on 2640)",
	      (unsigned long long)fit);
	o.devices = 100;
	wt_ok(wafer_plan(s, &o, &q) == -ENOSPC && strstr(wafer_last_error(), "do not fit"),
	      "100 chips: too few, said: %s", wafer_last_error());
	o.devices = 20;
	wt_ok(wafer_plan(s, &o, &q) == -ENOSPC && strstr(wafer_last_error(), "20 lpu chips"),
	      "20 chips: not even the embedding, head and a layer: %s", wafer_last_error());
	o.devices = 0;
	o.context = 1 << 24;
	wt_ok(wafer_plan(s, &o, &q) == -ENOSPC && strstr(wafer_last_error(), "a layer may span"),
	      "a context of 16 Mi positions: more chips than a layer may span: %s",
	      wafer_last_error());
}

static void arithmetic(void)
{
	const struct wafer_plan_shape *s = wafer_plan_preset_find("llama3.1-8b");
	struct wafer_plan_opts o = { .profile = "wse3", .weight_bits = 16, .batch = 1,
				     .context = 1024 };
	uint64_t layer = 2ull * 4096 * 4096 + 2ull * 4096 * 1024 + 3ull * 4096 * 14336 + 2 * 4096;
	uint64_t prev_fit = 0, prev_kv = 0, prev_tps = 0;
	struct wafer_plan p, q;
	unsigned int n;
	int mono = 1;
	int ret = s ? wafer_plan(s, &o, &p) : -1;

	wt_ok(!ret && p.layer_bytes == layer * 2 &&
	      p.kv_bytes_per_seq == 1024ull * 32 * 2 * 1024 * 2 && p.devices == 1,
	      "llama3.1-8b, 16-bit: %llu bytes per layer, %llu KV bytes per sequence, 1 device",
	      (unsigned long long)p.layer_bytes, (unsigned long long)p.kv_bytes_per_seq);
	wt_ok(p.tok_s_single > 1800 * 3 / 4 && p.tok_s_single < 1800 * 5 / 4,
	      "the calibration point: %llu tok/s against the published 1,800",
	      (unsigned long long)p.tok_s_single);
	for (n = 1; n <= 8; n++) {
		o.devices = n;
		mono &= !wafer_plan(s, &o, &p) && p.sequences_fit >= prev_fit;
		prev_fit = p.sequences_fit;
	}
	wt_ok(mono, "more devices never fit fewer sequences (%llu on 8)",
	      (unsigned long long)prev_fit);
	o.devices = 0;
	for (n = 256, mono = 1; n <= 65536; n *= 4) {
		o.context = n;
		mono &= !wafer_plan(s, &o, &p) && p.kv_bytes_per_seq > prev_kv;
		prev_kv = p.kv_bytes_per_seq;
	}
	wt_ok(mono, "a longer context never needs fewer KV bytes");
	o.context = 1024;
	for (n = 1, mono = 1; n <= 256; n *= 2) {
		o.batch = n;
		mono &= !wafer_plan(s, &o, &p) && p.tok_s_aggregate >= prev_tps;
		prev_tps = p.tok_s_aggregate;
	}
	wt_ok(mono, "a larger batch never lowers aggregate tokens/s (%llu at 256)",
	      (unsigned long long)prev_tps);
	o.batch = 64;
	ret = wafer_plan(s, &o, &p);
	wt_ok(!ret && p.sequences_fit >= 64 && !strcmp(p.bound, "latency"),
	      "64 sequences fill the pipeline: bound by the slowest stage's mesh latency (%s)",
	      p.bound);
	o.batch = (unsigned int)p.sequences_fit + 1;
	prev_tps = p.sequences_fit;
	ret = wafer_plan(s, &o, &p);
	o.batch--;
	wt_ok(!ret && !strncmp(p.bound, "kv", 2) && !wafer_plan(s, &o, &q) &&
	      p.tok_s_aggregate == q.tok_s_aggregate,
	      "a batch beyond the %llu sequences whose KV fits is bound by KV, at their rate",
	      (unsigned long long)prev_tps);
}

/* The calibration figures' largest and smallest published / projected (1 included). */
static void figure_ratios(const char *profile, double *low, double *high)
{
	const struct wafer_plan_figure *f;
	struct wafer_plan p;
	unsigned int i;

	*low = 1;
	*high = 1;
	for (i = 0; (f = wafer_plan_figure(i)); i++) {
		struct wafer_plan_opts o = { .profile = f->profile, .devices = f->devices,
					     .weight_bits = f->weight_bits, .batch = 1,
					     .context = 1024 };

		if (!f->band || strcmp(f->profile, profile) ||
		    wafer_plan(wafer_plan_figure_shape(f), &o, &p))
			continue;
		*low = *low < f->published / p.tok_s_single ? *low : f->published / p.tok_s_single;
		*high = *high > f->published / p.tok_s_single ? *high :
			f->published / p.tok_s_single;
	}
}

/*
 * Bands: every preset's single-sequence tok/s (plain and with a draft, on
 * wse3 and lpu) lies in its band; a plan with nothing uncertain (one
 * device, no draft, a profile without calibration figures) is a point;
 * the band's residuals are the calibration figures' ratios, and Llama 3.1
 * 8B on one CS-3 (no link) spans exactly the point times them.
 */
static void bands(void)
{
	static const char *const profiles[] = { "wse3", "lpu" };
	struct wafer_plan_opts o = { .weight_bits = 16, .batch = 1, .context = 1024 };
	const struct wafer_plan_shape *s;
	unsigned int i, k, ok = 1, spec_ok = 1, wide = 0;
	struct wafer_plan p;
	double lo, hi;
	int ret;

	for (k = 0; k < 2; k++)
		for (i = 0; (s = wafer_plan_preset(i)); i++) {
			o.profile = profiles[k];
			o.weight_bits = 8;
			o.draft_params = 0;
			ret = wafer_plan(s, &o, &p);
			ok &= !ret && p.tok_s_single_low <= p.tok_s_single &&
			      p.tok_s_single <= p.tok_s_single_high;
			wide += !ret && p.tok_s_single_low < p.tok_s_single_high;
			o.draft_params = 1000000000ull;
			o.draft_accept = 0.8;
			o.draft_tokens = 4;
			ret = wafer_plan(s, &o, &p);
			spec_ok &= !ret && p.tok_s_spec_low <= p.tok_s_spec &&
				   p.tok_s_spec <= p.tok_s_spec_high &&
				   p.tok_s_spec_low < p.tok_s_spec_high;
		}
	wt_ok(ok && wide == 18, "every preset on wse3 and lpu: low <= tok/s single <= high, "
	      "%u of 18 bands wider than a point", wide);
	wt_ok(spec_ok, "every preset with a 1 B draft: low < tok/s with the draft < high");
	o = (struct wafer_plan_opts){ .profile = "wafer", .devices = 1, .weight_bits = 8,
				      .batch = 1, .context = 256 };
	ret = wafer_plan(&s260k, &o, &p);
	wt_ok(!ret && p.tok_s_single_low == p.tok_s_single &&
	      p.tok_s_single_high == p.tok_s_single && p.residual_low == 1 &&
	      p.residual_high == 1, "one wafer device, no draft, no figures: the band is the "
	      "point (%llu..%llu)", (unsigned long long)p.tok_s_single_low,
	      (unsigned long long)p.tok_s_single_high);
	figure_ratios("wse3", &lo, &hi);
	o = (struct wafer_plan_opts){ .profile = "wse3", .devices = 1, .weight_bits = 16,
				      .batch = 1, .context = 1024 };
	ret = wafer_plan(wafer_plan_preset_find("llama3.1-8b"), &o, &p);
	wt_ok(!ret && p.residual_low == lo && p.residual_high == hi && hi > 1 &&
	      p.tok_s_single_low == (uint64_t)(p.tok_s_single * lo + 0.5) &&
	      p.tok_s_single_high == (uint64_t)(p.tok_s_single * hi + 0.5),
	      "8B on one CS-3: %llu..%llu tok/s, the point %llu times the figures' ratios "
	      "%.3f..%.3f", (unsigned long long)p.tok_s_single_low,
	      (unsigned long long)p.tok_s_single_high, (unsigned long long)p.tok_s_single, lo, hi);
	o.profile = "wse2";
	ret = wafer_plan(wafer_plan_preset_find("llama3.1-8b"), &o, &p);
	wt_ok(!ret && p.residual_low == lo && p.residual_high == hi,
	      "wse2 takes wse3's residuals (no figures of its own)");
}

/*
 * Deployment mode: every preset gets its family's draft (a head on the
 * last device: no devices of its own), stated, with the literature's
 * tokens and acceptance; tokens per step are (1 - a^(k+1)) / (1 - a);
 * the ceiling is k + 1 tokens per step; the band spans the acceptance
 * range; a draft given is used instead; the shared model's head draft
 * costs its last layer and head, less than its whole step.
 */
static void deployment(void)
{
	struct wafer_plan_opts o = { .profile = "wse3", .weight_bits = 8, .batch = 1,
				     .context = 1024, .deployment = 1 };
	const struct wafer_plan_shape *s;
	unsigned int i, j, ok = 1, kimi = 0;
	struct wafer_plan p;

	for (i = 0; (s = wafer_plan_preset(i)); i++) {
		double e = 0, ak = 1, a;
		uint64_t step;

		if (wafer_plan(s, &o, &p)) {
			ok = 0;
			continue;
		}
		a = p.draft_accept;
		for (j = 0; j <= p.draft_tokens; j++, ak *= a)
			e += ak;
		step = (uint64_t)p.draft_tokens * p.draft_token_ns + p.verify_ns;
		ok &= p.deploy_draft && p.deploy_source && p.draft_tokens && !p.draft_devices &&
		      p.tokens_per_step > e - 1e-9 && p.tokens_per_step < e + 1e-9 &&
		      p.tok_s_spec == (uint64_t)(e * 1e9 / (double)step) &&
		      p.tok_s_spec_ceiling == (uint64_t)((p.draft_tokens + 1) * 1e9 / (double)step) &&
		      p.tok_s_spec <= p.tok_s_spec_ceiling &&
		      p.draft_accept_low < a && a < p.draft_accept_high &&
		      p.tok_s_spec_low < p.tok_s_spec && p.tok_s_spec < p.tok_s_spec_high;
		kimi += !strcmp(s->name, "kimi-k2") && p.draft_tokens == 1 &&
			strstr(p.deploy_draft, "multi-token");
	}
	wt_ok(ok, "--deployment, every preset: the family's draft stated, its tokens per step "
	      "(1 - a^(k+1)) / (1 - a), its ceiling, its band over the acceptance range");
	wt_ok(kimi == 1, "kimi-k2 deploys multi-token prediction (1 token), the others an EAGLE-2 "
	      "head");
	o.draft_params = 1000000000ull;
	o.draft_accept = 0.7;
	o.draft_tokens = 3;
	wt_ok(!wafer_plan(wafer_plan_preset_find("llama3.1-70b"), &o, &p) && !p.deploy_draft &&
	      p.draft_tokens == 3 && p.draft_accept == 0.7 && p.draft_devices >= 1,
	      "--deployment with a draft given: that draft, on devices of its own");
	o = (struct wafer_plan_opts){ .profile = "wse3", .devices = 1, .weight_bits = 8,
				      .batch = 1, .context = 256, .deployment = 1 };
	wt_ok(!wafer_plan(&s260k, &o, &p) && p.draft_token_ns < p.token_ns &&
	      p.draft_token_ns * 5 > p.token_ns,
	      "the shared model's head draft: one layer and the head (%.2f us) of a 5-layer "
	      "step (%.2f us)", p.draft_token_ns / 1e3, p.token_ns / 1e3);
}

/*
 * Monotonicity over every preset: more wafers never fit fewer sequences;
 * a better draft (accepting more, or smaller at the same acceptance)
 * never lowers tok/s or its band; a longer context never needs fewer KV
 * bytes.
 */
static void monotonic(void)
{
	const struct wafer_plan_shape *s;
	unsigned int i, n, fewest, dev_ok = 1, acc_ok = 1, size_ok = 1, kv_ok = 1;

	for (i = 0; (s = wafer_plan_preset(i)); i++) {
		struct wafer_plan_opts o = { .profile = "wse3", .weight_bits = 8, .batch = 1,
					     .context = 1024 };
		struct wafer_plan p, q;
		double a;
		uint64_t d;

		if (wafer_plan(s, &o, &p)) {
			dev_ok = 0;
			continue;
		}
		fewest = p.devices;
		for (n = fewest + 1; n <= fewest + 6 && n <= s->n_layers; n++) {
			o.devices = n;
			dev_ok &= !wafer_plan(s, &o, &q) && q.sequences_fit >= p.sequences_fit;
			p = q;
		}
		o.devices = 0;
		o.draft_params = 2000000000ull;
		o.draft_tokens = 4;
		o.draft_accept = 0.5;
		wafer_plan(s, &o, &p);
		for (a = 0.55; a < 0.96; a += 0.05) {
			o.draft_accept = a;
			acc_ok &= !wafer_plan(s, &o, &q) && q.tok_s_spec >= p.tok_s_spec &&
				  q.tok_s_spec_low >= p.tok_s_spec_low &&
				  q.tok_s_spec_high >= p.tok_s_spec_high;
			p = q;
		}
		o.draft_accept = 0.8;
		for (d = 8000000000ull; d >= 250000000ull; d /= 2) {
			o.draft_params = d;
			size_ok &= !wafer_plan(s, &o, &q) &&
				   (d == 8000000000ull || (q.tok_s_spec >= p.tok_s_spec &&
							   q.tok_s_spec_low >= p.tok_s_spec_low));
			p = q;
		}
		o.draft_params = 0;
		o.context = 256;
		wafer_plan(s, &o, &p);
		for (n = 512; n <= 32768; n *= 2) {
			o.context = n;
			kv_ok &= !wafer_plan(s, &o, &q) && q.kv_bytes_per_seq > p.kv_bytes_per_seq;
			p = q;
		}
	}
	wt_ok(dev_ok, "every preset: more wafers (the fewest .. +6) never fit fewer sequences");
	wt_ok(acc_ok, "every preset: a draft accepting more (0.5 .. 0.95) never lowers tok/s "
	      "or its band");
	wt_ok(size_ok, "every preset: a smaller draft (8 B .. 0.25 B) at the same acceptance "
	      "never lowers tok/s or its band's low end");
	wt_ok(kv_ok, "every preset: a longer context (256 .. 32768) never needs fewer KV bytes");
}

/*
 * A layer bigger than a stage spreads where it decodes soonest: never
 * slower than on the cores its bytes fill, for every preset on the fewest
 * devices and on twice as many; Kimi K2 at 4 bits on 16 CS-3 (9 stages'
 * worth of bytes a layer, 11 stages a layer to spread over) faster.
 */
static void spread(void)
{
	const struct wafer_plan_shape *s;
	unsigned int i, bits, twice, ok = 1;
	struct wafer_plan p, q;

	for (i = 0; (s = wafer_plan_preset(i)); i++) {
		for (bits = 4; bits <= 16; bits *= 2) {
			for (twice = 0; twice < 2; twice++) {
				struct wafer_plan_opts o = { .profile = "wse3",
							     .weight_bits = bits,
							     .batch = 1, .context = 1024 };

				if (wafer_plan(s, &o, &p))
					continue;
				o.devices = twice && 2 * p.devices < s->n_layers ? 2 * p.devices :
					    twice ? s->n_layers : p.devices;
				o.no_spread = 1;
				ok &= !wafer_plan(s, &o, &q);
				o.no_spread = 0;
				ok &= !wafer_plan(s, &o, &p) && p.token_ns <= q.token_ns;
			}
		}
	}
	wt_ok(ok, "every preset, 4 to 16 bits, the fewest devices and twice as many: "
	      "spreading never makes a token slower");
	s = wafer_plan_preset_find("kimi-k2");
	{
		struct wafer_plan_opts o = { .profile = "wse3", .weight_bits = 4, .batch = 1,
					     .context = 1024, .devices = 16, .no_spread = 1 };
		int ret = !s || wafer_plan(s, &o, &q);

		o.no_spread = 0;
		ret = ret || wafer_plan(s, &o, &p);
		wt_ok(!ret && p.token_ns < q.token_ns && q.spread64 == q.layer_span64 &&
		      q.spread64_max == q.layer_span64 && p.spread64 == 704 &&
		      p.spread64_max == 938 && p.spread_positions == 1,
		      "kimi-k2 at 4 bits on 16 CS-3: %.1f us a token spread over %.1f..%.1f "
		      "stages (44 over 4 or 3 layers), %.1f on the %.1f its bytes fill",
		      p.token_ns / 1e3, p.spread64 / 64.0, p.spread64_max / 64.0,
		      q.token_ns / 1e3, q.layer_span64 / 64.0);
	}
}

/* The MoE presets' parameter counts against their published totals. */
static void moe_presets(void)
{
	static const struct { const char *name; double total, active; } want[] = {
		{ "qwen3-235b-a22b", 235e9, 22e9 }, { "gpt-oss-120b", 117e9, 5.1e9 },
		{ "kimi-k2", 1.0e12, 32e9 }, { "llama4-maverick", 400e9, 17e9 },
		{ "sol", 3.0e12, 150e9 },
	};
	struct wafer_plan_opts o = { .profile = "wse3", .weight_bits = 8, .batch = 1,
				     .context = 1024 };
	struct wafer_plan p;
	unsigned int i;

	/* 8-bit weights: a byte per parameter and a 2-byte scale per 64. */
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int ret = wafer_plan(wafer_plan_preset_find(want[i].name), &o, &p);
		double total = (double)p.weight_bytes / (1 + 2.0 / 64), active = (double)p.active_params;

		wt_ok(!ret && total > want[i].total * 0.9 && total < want[i].total * 1.1 &&
		      active > want[i].active * 0.8 && active < want[i].active * 1.2,
		      "%s: %.0f B parameters, %.1f B active (published %.0f B, %.1f B)",
		      want[i].name, total / 1e9, active / 1e9, want[i].total / 1e9,
		      want[i].active / 1e9);
	}
}

/*
 * Latent attention (kimi-k2) against a hand computation: per layer the
 * query's 7,168 x 1,536 down-projection, its norm and 1,536 x 64 x (128 +
 * 64) up-projection; the KV's 7,168 x (512 + 64), its norm and 512 x 64 x
 * 256 up-projection; the 64 x 128 x 7,168 output and the two layer norms:
 * 101,138,432 parameters, and 576 cached values a position.  Its stage is
 * slower than its grouped-query twin's by the 4 more reductions and by its
 * parts' work on their own cores (checked in device_timing).
 */
static void latent_attention(void)
{
	const struct wafer_plan_shape *s = wafer_plan_preset_find("kimi-k2");
	struct wafer_plan_shape gqa = *s;
	struct wafer_plan_opts o = { .profile = "wse3", .weight_bits = 4, .batch = 1,
				     .context = 1024 };
	struct wafer_plan p, pg;
	uint64_t layer = 101138432ull + 7168ull * 384 + 385ull * 3 * 7168 * 2048;

	gqa.q_latent = 0;
	gqa.kv_latent = 0;
	gqa.n_kv_heads = 2;
	wt_ok(!wafer_plan(s, &o, &p) && !wafer_plan(&gqa, &o, &pg), "kimi-k2 and a GQA twin");
	wt_ok(p.params == 2ull * 163840 * 7168 + 7168 + 61 * layer &&
	      p.active_params == 2ull * 163840 * 7168 + 7168 + 61 * (layer - 376ull * 3 * 7168 * 2048),
	      "kimi-k2: %llu parameters, %llu active (the latent attention's by hand)",
	      (unsigned long long)p.params, (unsigned long long)p.active_params);
	wt_ok(p.kv_bytes_per_seq == 1024ull * 61 * (512 + 64) * 2 &&
	      pg.kv_bytes_per_seq == 1024ull * 61 * 2 * 256 * 2,
	      "kimi-k2 caches 576 16-bit values a position and layer");
	wt_ok(p.token_ns > pg.token_ns, "latent attention costs more a token (%llu ns) than its "
	      "GQA twin (%llu)", (unsigned long long)p.token_ns, (unsigned long long)pg.token_ns);
	gqa = *s;
	gqa.kv_latent = 0;
	wt_ok(wafer_plan(&gqa, &o, &pg) == -EINVAL && strstr(wafer_last_error(), "q_latent"),
	      "a query latent without a KV latent: %s", wafer_last_error());
}

/* Speculative decoding: the expected tokens per step, and when it pays. */
static void speculative(void)
{
	const struct wafer_plan_shape *s = wafer_plan_preset_find("llama3.1-70b");
	struct wafer_plan_opts o = { .profile = "wse3", .devices = 4, .weight_bits = 16,
				     .batch = 1, .context = 1024, .draft_params = 1000000000ull,
				     .draft_accept = 0.5, .draft_tokens = 3 };
	struct wafer_plan p, q;
	int ret = wafer_plan(s, &o, &p);

	wt_ok(!ret && p.tokens_per_step > 1.8749 && p.tokens_per_step < 1.8751 &&
	      p.draft_devices == 1 && p.verify_ns >= p.token_ns,
	      "a = 0.5, k = 3: %.4f tokens per step ((1 - a^4) / (1 - a) = 1.875); verifying 4 "
	      "positions %.1f us >= one %.1f us", p.tokens_per_step, p.verify_ns / 1e3,
	      p.token_ns / 1e3);
	o.draft_accept = 0;
	ret = wafer_plan(s, &o, &q);
	wt_ok(!ret && q.tok_s_spec < q.tok_s_single,
	      "a draft never accepted costs: %llu < %llu tok/s", (unsigned long long)q.tok_s_spec,
	      (unsigned long long)q.tok_s_single);
	o.draft_accept = 0.9;
	o.draft_tokens = 8;
	ret = wafer_plan(s, &o, &q);
	wt_ok(!ret && q.tok_s_spec > 2 * q.tok_s_single,
	      "a small draft at 90 %% with 8 tokens more than doubles a lone sequence: %llu vs "
	      "%llu tok/s", (unsigned long long)q.tok_s_spec, (unsigned long long)q.tok_s_single);
	o.draft_accept = 1;
	wt_ok(wafer_plan(s, &o, &q) == -EINVAL && strstr(wafer_last_error(), "draft_accept") &&
	      !strstr(wafer_last_error(), "draft_tokens"),
	      "acceptance 1: %s", wafer_last_error());
	o.draft_accept = 0.5;
	o.draft_tokens = 0;
	wt_ok(wafer_plan(s, &o, &q) == -EINVAL && strstr(wafer_last_error(), "draft_tokens"),
	      "no draft tokens: %s", wafer_last_error());
}

/* Weight streaming: a pass streams every weight once, for the whole batch. */
static void streaming(void)
{
	const struct wafer_plan_shape *s = wafer_plan_preset_find("llama3.1-70b");
	struct wafer_plan_opts o = { .profile = "wse3", .weight_bits = 16, .batch = 1,
				     .context = 1024, .stream = 1 };
	struct wafer_plan p, q;
	int ret = wafer_plan(s, &o, &p);
	/* 141 GB over 136 B per 1.1 GHz cycle (149.6 GB/s): ~0.94 s a pass */
	double pass = (double)p.weight_bytes / 136 / 1.1e9;

	wt_ok(!ret && p.devices == 1 && !strcmp(p.single_bound, "streaming") &&
	      p.token_ns > pass * 1e9 * 0.99 && p.token_ns < pass * 1e9 * 1.05,
	      "70B streamed: one device, a step %.3f s against %.3f s of streaming",
	      p.token_ns / 1e9, pass);
	o.batch = (unsigned int)p.sequences_fit;
	ret = wafer_plan(s, &o, &q);
	wt_ok(!ret && q.tok_s_aggregate >= (uint64_t)(o.batch * 9 / 10) * p.tok_s_single &&
	      !strcmp(q.bound, "streaming"),
	      "a batch of the %u sequences that fit shares each pass: %llu tok/s (one: %llu)",
	      o.batch, (unsigned long long)q.tok_s_aggregate,
	      (unsigned long long)p.tok_s_single);
	o.profile = "lpu";
	wt_ok(wafer_plan(s, &o, &q) == -EINVAL && strstr(wafer_last_error(), "weight store"),
	      "no weight store: %s", wafer_last_error());
	o.profile = "wse3";
	o.devices = 2;
	wt_ok(wafer_plan(s, &o, &q) == -EINVAL && strstr(wafer_last_error(), "one device"),
	      "streaming on two devices: %s", wafer_last_error());
}

static void bad_input(void)
{
	struct wafer_plan_opts o = { .profile = "wse3", .weight_bits = 4, .batch = 1,
				     .context = 128 };
	struct wafer_plan_shape s = s260k;
	struct wafer_plan p;

	o.profile = "h100";
	wt_ok(wafer_plan(&s, &o, &p) == -EINVAL && strstr(wafer_last_error(), "h100"),
	      "unknown profile: %s", wafer_last_error());
	o.profile = "wse3";
	o.weight_bits = 3;
	wt_ok(wafer_plan(&s, &o, &p) == -EINVAL && strstr(wafer_last_error(), "weight_bits"),
	      "3-bit weights: %s", wafer_last_error());
	o.weight_bits = 4;
	s.n_kv_heads = 3;
	wt_ok(wafer_plan(&s, &o, &p) == -EINVAL && strstr(wafer_last_error(), "KV heads"),
	      "KV heads not dividing heads: %s", wafer_last_error());
	s = s260k;
	s.n_layers = 0;
	wt_ok(wafer_plan(&s, &o, &p) == -EINVAL && strstr(wafer_last_error(), "n_layers"),
	      "no layers: %s", wafer_last_error());
	s = s260k;
	s.dim = 1u << 20;
	s.hidden_dim = 1u << 22;
	s.n_heads = 1024;
	s.n_kv_heads = 1024;
	s.head_dim = 1024;
	wt_ok(wafer_plan(&s, &o, &p) == -ENOSPC && strstr(wafer_last_error(), "no number"),
	      "a layer larger than a device: %s", wafer_last_error());
	o.prompt = 200;
	wt_ok(wafer_plan(&s260k, &o, &p) == -EINVAL && strstr(wafer_last_error(), "prompt"),
	      "a prompt longer than the context: %s", wafer_last_error());
}

/* Runs the CLI under @wrapper (may be empty); its output into @buf; the exit status. */
static int cli_under(const char *wrapper, const char *args, char *buf, size_t size)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char cmd[1024];
	size_t n;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s %s/bin/wafer plan %s 2>&1", wrapper, build, args);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, size - 1, f);
	buf[n] = 0;
	return WEXITSTATUS(pclose(f));
}

/* Runs the CLI; its stdout and stderr into @buf; the exit status. */
static int cli(const char *args, char *buf, size_t size)
{
	return cli_under("", args, buf, size);
}

/*
 * docs/TIMING.md's calibration table is what tests/bench/plan_calibration
 * prints now: every table row and the summary line, verbatim.
 */
static void calibration_doc(void)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	static char out[16384], doc[262144];
	char cmd[512], *line, *save = NULL;
	unsigned int rows = 0, missing = 0;
	size_t n;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s/tests/bench/plan_calibration", build);
	f = popen(cmd, "r");
	n = f ? fread(out, 1, sizeof(out) - 1, f) : 0;
	out[n] = 0;
	if (!wt_ok(f && !WEXITSTATUS(pclose(f)) && n, "%s runs", cmd))
		return;
	f = fopen("docs/TIMING.md", "r");
	n = f ? fread(doc, 1, sizeof(doc) - 1, f) : 0;
	doc[n] = 0;
	if (f)
		fclose(f);
	if (!wt_ok(n, "docs/TIMING.md read"))
		return;
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		rows++;
		if (!strstr(doc, line)) {
			missing++;
			wt_diag("not in docs/TIMING.md: %s", line);
		}
	}
	wt_ok(rows > 8 && !missing, "docs/TIMING.md holds the %u lines plan_calibration prints "
	      "(%u missing)", rows, missing);
}

/*
 * --trace: valid JSON of complete ("X") events after the names of the
 * processes and threads ("M"); on every track (device, stage) they follow
 * each other without overlap; every chunk passes the stages in order, each
 * entered no earlier than the previous one's hop ended.
 */
static void trace_file(void)
{
	char path[] = "/tmp/wafer-trace-XXXXXX", args[256], out[4096];
	double last_end[4][128] = { { 0 } }, chunk_end[8] = { 0 };
	int fd = mkstemp(path), ok = 1, fields = 1;
	json_object *root = NULL, *evs = NULL;
	size_t i, n = 0, meta = 0;

	snprintf(args, sizeof(args), "llama3.1-70b --devices 4 --weight-bits 8 --prompt 48 "
		 "--context 64 --trace %s", path);
	wt_ok(fd >= 0 && !cli(args, out, sizeof(out)), "wafer plan --trace");
	if (fd >= 0)
		close(fd);
	root = json_object_from_file(path);
	unlink(path);
	ok = root && json_object_object_get_ex(root, "traceEvents", &evs) &&
	     json_object_is_type(evs, json_type_array);
	n = ok ? json_object_array_length(evs) : 0;
	for (i = 0; ok && i < n; i++) {
		json_object *e = json_object_array_get_idx(evs, i), *v, *a;
		double ts, dur;
		int pid, tid, pos;

		if (json_object_object_get_ex(e, "ph", &v) &&
		    !strcmp(json_object_get_string(v), "M")) {
			meta++;
			continue;
		}
		fields &= json_object_object_get_ex(e, "name", &v) &&
			  json_object_object_get_ex(e, "ph", &v) &&
			  !strcmp(json_object_get_string(v), "X") &&
			  json_object_object_get_ex(e, "ts", &v) &&
			  json_object_object_get_ex(e, "dur", &v) &&
			  json_object_object_get_ex(e, "pid", &v) &&
			  json_object_object_get_ex(e, "tid", &v) &&
			  json_object_object_get_ex(e, "args", &a);
		if (!fields)
			break;
		ts = json_object_get_double(json_object_object_get(e, "ts"));
		dur = json_object_get_double(json_object_object_get(e, "dur"));
		pid = json_object_get_int(json_object_object_get(e, "pid"));
		tid = json_object_get_int(json_object_object_get(e, "tid"));
		pos = json_object_get_int(json_object_object_get(a, "pos0")) / 16;
		if (pid < 0 || pid >= 4 || tid < 0 || tid >= 128 || pos < 0 || pos >= 8 ||
		    dur < 0 || ts + 1e-6 < last_end[pid][tid] || ts + 1e-6 < chunk_end[pos]) {
			ok = 0;
			break;
		}
		last_end[pid][tid] = ts + dur;
		chunk_end[pos] = ts + dur;
	}
	/*
	 * 3 prompt chunks and a decode step, 80 stages, a stage event and a
	 * hop each; a name per stage, hop thread and device.
	 */
	wt_ok(ok && fields && n - meta == 4 * 80 * 2 && meta == 80 * 2 + 4,
	      "the trace: %zu events with the trace-event fields, in time order on every "
	      "track and along every chunk; %zu names", n - meta, meta);
	if (root)
		json_object_put(root);
}

/* What a speculative step's trace holds. */
struct spec_seen {
	unsigned int drafts, verify, bad;
	double draft_end, decode_end, verify_start, draft_us;
};

static void spec_event(json_object *e, struct spec_seen *v)
{
	json_object *a = json_object_object_get(e, "args");
	const char *cat = json_object_get_string(json_object_object_get(e, "cat"));
	double ts = json_object_get_double(json_object_object_get(e, "ts"));
	double dur = json_object_get_double(json_object_object_get(e, "dur"));
	int pid = json_object_get_int(json_object_object_get(e, "pid"));
	int pos = json_object_get_int(json_object_object_get(a, "pos0"));

	if (!strcmp(cat, "draft")) {
		v->drafts++;
		v->bad += pid != 4 || dur < v->draft_us - 0.002 || dur > v->draft_us + 0.002 ||
			  ts + 1e-6 < v->draft_end;
		v->draft_end = ts + dur;
	} else if (pos == 48 && ts + dur > v->decode_end) {
		v->decode_end = ts + dur;
	} else if (pos == 49) {
		v->verify += !strcmp(cat, "stage") &&
			     json_object_get_int(json_object_object_get(a, "tokens")) == 5;
		if (v->verify_start < 0 || ts < v->verify_start)
			v->verify_start = ts;
	}
}

/*
 * --draft-params --trace: after the decode step, the draft's 4 tokens (its
 * token time each) on a process past the target's 4 devices, named as the
 * draft's; then the verify pass, 5 positions through the 80 stages.
 */
static void spec_trace(void)
{
	char path[] = "/tmp/wafer-trace-XXXXXX", args[256], out[8192];
	struct spec_seen v = { .verify_start = -1, .draft_us = -1 };
	json_object *root = NULL, *evs = NULL, *j = NULL, *d;
	int fd = mkstemp(path), ok, named = 0;
	size_t i, n;

	snprintf(args, sizeof(args), "llama3.1-70b --devices 4 --weight-bits 8 --prompt 48 "
		 "--context 64 --draft-params 1B --draft-tokens 4 --json --trace %s", path);
	ok = fd >= 0 && !cli(args, out, sizeof(out)) && (j = json_tokener_parse(out)) &&
	     json_object_object_get_ex(j, "speculative", &d);
	if (ok)
		v.draft_us = json_object_get_double(json_object_object_get(d, "draft_token_us"));
	if (fd >= 0)
		close(fd);
	root = ok ? json_object_from_file(path) : NULL;
	unlink(path);
	ok = root && json_object_object_get_ex(root, "traceEvents", &evs);
	n = ok ? json_object_array_length(evs) : 0;
	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(evs, i), *a;

		if (!strcmp(json_object_get_string(json_object_object_get(e, "ph")), "X"))
			spec_event(e, &v);
		else if (json_object_get_int(json_object_object_get(e, "pid")) == 4 &&
			 json_object_object_get_ex(e, "args", &a))
			named |= !strncmp(json_object_get_string(json_object_object_get(a, "name")),
					  "draft model", 11);
	}
	wt_ok(ok && named && v.drafts == 4 && !v.bad && v.decode_end > 0 &&
	      v.draft_end - 4 * v.draft_us > v.decode_end - 0.01 && v.verify == 80 &&
	      v.verify_start > v.draft_end - 1e-6,
	      "--draft-params --trace: %u draft tokens of %.3f us after the decode step, then "
	      "the verify pass of 5 positions on %u stages", v.drafts, v.draft_us, v.verify);
	if (j)
		json_object_put(j);
	if (root)
		json_object_put(root);
}

/* One "X" event of a --stream trace: its track in time order, its end. */
static int stream_event(json_object *e, double *track_end, double *prompt_end, int *kinds)
{
	json_object *a = json_object_object_get(e, "args");
	const char *cat = json_object_get_string(json_object_object_get(e, "cat"));
	double ts = json_object_get_double(json_object_object_get(e, "ts"));
	double dur = json_object_get_double(json_object_object_get(e, "dur"));
	int tid = json_object_get_int(json_object_object_get(e, "tid"));

	if (json_object_get_int(json_object_object_get(e, "pid")) || tid < 0 || tid > 1 ||
	    !cat || strcmp(cat, tid ? "stream" : "stage") || ts + 1e-6 < track_end[tid])
		return 0;
	track_end[tid] = ts + dur;
	*kinds |= 1 << tid;
	if (!json_object_get_int(json_object_object_get(a, "pos0")) && ts + dur > *prompt_end)
		*prompt_end = ts + dur;
	return 1;
}

/*
 * --stream --trace: on the one device, the layers' compute (stage 0) and
 * their weights streaming in (its other thread), each track in time order;
 * the prompt's pass ends at the time to first token the JSON reports.
 */
static void stream_trace(void)
{
	char path[] = "/tmp/wafer-trace-XXXXXX", args[256], out[8192];
	double track_end[2] = { 0, 0 }, prompt_end = 0, ttft = -1;
	json_object *root = NULL, *evs = NULL, *j = NULL;
	int fd = mkstemp(path), ok, kinds = 0;
	size_t i, n = 0, x = 0;

	snprintf(args, sizeof(args), "llama3.1-8b --stream --prompt 64 --context 128 --json "
		 "--trace %s", path);
	ok = fd >= 0 && !cli(args, out, sizeof(out)) && (j = json_tokener_parse(out));
	if (j)
		ttft = json_object_get_double(json_object_object_get(j, "ttft_ms")) * 1e3;
	if (fd >= 0)
		close(fd);
	root = ok ? json_object_from_file(path) : NULL;
	unlink(path);
	ok = root && json_object_object_get_ex(root, "traceEvents", &evs);
	n = ok ? json_object_array_length(evs) : 0;
	for (i = 0; ok && i < n; i++) {
		json_object *e = json_object_array_get_idx(evs, i);

		if (strcmp(json_object_get_string(json_object_object_get(e, "ph")), "X"))
			continue;
		ok = stream_event(e, track_end, &prompt_end, &kinds);
		x++;
	}
	/* The embedding and head, then 32 layers' compute and streaming; twice. */
	wt_ok(ok && kinds == 3 && x == 2 * (1 + 2 * 32) && prompt_end > 0 &&
	      prompt_end > ttft - 0.002 && prompt_end < ttft + 0.002,
	      "--stream --trace: %zu events, compute and streaming in time order; the prompt "
	      "ends at %.3f us, the time to first token %.3f us", x, prompt_end, ttft);
	if (j)
		json_object_put(j);
	if (root)
		json_object_put(root);
}

/* Writes @len bytes of @data to a new temporary file named in @path. */
static int write_tmp(char *path, const void *data, size_t len)
{
	int fd = mkstemp(path), ok;

	if (fd < 0)
		return 0;
	ok = write(fd, data, len) == (ssize_t)len;
	close(fd);
	return ok;
}

/* The JSON of `wafer plan @model @args`, without its "model", in @out. */
static int plan_json_of(const char *model, const char *args, char *out, size_t size)
{
	char cmd[600];
	json_object *j;

	snprintf(cmd, sizeof(cmd), "%s %s --json", model, args);
	if (cli(cmd, out, size) || !(j = json_tokener_parse(out)))
		return 0;
	json_object_object_del(j, "model");
	json_object_object_del(j, "blob_weight_bits");	/* a checkpoint does not say */
	snprintf(out, size, "%s", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
	json_object_put(j);
	return 1;
}

/* `wafer plan @path --profile wafer @args --json`'s weight_bits and blob_weight_bits. */
static int json_bits(const char *path, const char *args, int *bits, int *blob_bits)
{
	static char out[16384];
	char cmd[600];
	json_object *j, *v;

	snprintf(cmd, sizeof(cmd), "%s --profile wafer %s --json", path, args);
	if (cli(cmd, out, sizeof(out)) || !(j = json_tokener_parse(out)))
		return 0;
	*bits = json_object_object_get_ex(j, "weight_bits", &v) ? json_object_get_int(v) : -1;
	*blob_bits = json_object_object_get_ex(j, "blob_weight_bits", &v) ?
		     json_object_get_int(v) : -1;
	json_object_put(j);
	return 1;
}

/*
 * A blob's precision: an int8 and an int4 blob are planned at
 * their own precision (the library's shape says it; the table and the JSON
 * too) unless --weight-bits is given, which the table says differs.
 */
static void blob_bits(const char *int8, const void *blob4, size_t len4)
{
	static char b[16384];
	char int4[] = "/tmp/wafer-plan-int4-XXXXXX", args[512];
	struct wafer_plan_opts o = { .profile = "wafer", .batch = 1, .context = 256 };
	struct wafer_plan_shape s;
	struct wafer_plan p4, p8;
	int bits = 0, bb = 0, ok8, ok = write_tmp(int4, blob4, len4);

	wt_ok(ok && !wafer_plan_shape_from_blob(blob4, len4, "int4", &s) && s.weight_bits == 4 &&
	      !wafer_plan(&s, &o, &p4) && (o.weight_bits = 8, !wafer_plan(&s, &o, &p8)) &&
	      p4.weight_bytes < p8.weight_bytes,
	      "wafer_plan_shape_from_blob: an int4 blob's 4 bits, which wafer_plan() takes for 0");
	ok8 = json_bits(int8, "", &bits, &bb) && bits == 8 && bb == 8;
	wt_ok(ok8, "wafer plan on an int8 blob: weight_bits 8, the blob's (%d, %d)", bits, bb);
	ok8 = ok && json_bits(int4, "", &bits, &bb) && bits == 4 && bb == 4;
	wt_ok(ok8, "wafer plan on an int4 blob: weight_bits 4, the blob's (%d, %d)", bits, bb);
	ok8 = json_bits(int8, "--weight-bits 16", &bits, &bb) && bits == 16 && bb == 8;
	wt_ok(ok8, "wafer plan --weight-bits 16 on an int8 blob: 16, the blob's 8 (%d, %d)",
	      bits, bb);
	snprintf(args, sizeof(args), "%s --profile wafer", int8);
	wt_ok(!cli(args, b, sizeof(b)) && strstr(b, "8-bit weights (the blob's)"),
	      "wafer plan on an int8 blob says its precision is the blob's");
	snprintf(args, sizeof(args), "%s --profile wafer --weight-bits 4", int8);
	wt_ok(!cli(args, b, sizeof(b)) && strstr(b, "4-bit weights (--weight-bits; the blob's "
						  "are 8-bit)"),
	      "wafer plan --weight-bits 4 on an int8 blob says the blob's differ");
	snprintf(args, sizeof(args), "%s --profile wafer --sweep batch", int4);
	wt_ok(ok && !cli(args, b, sizeof(b)) && strstr(b, "4-bit weights (the blob's)"),
	      "wafer plan --sweep on an int4 blob says its precision");
	unlink(int4);
}

/*
 * The parameters a blob holds, against a hand count from the checkpoint's
 * header (stories260K: dim 64, hidden 172, 5 layers, 8 heads, 4 KV heads,
 * vocabulary 512, the head tied to the embedding): per layer two RMSNorm
 * gains, WQ and WO d x d, WK and WV d x kv, W1 W2 W3 d x h; the embedding
 * once, the final gain.  Upcycled into 4 slices of the FFN the experts add
 * only the router, 4 x d a layer.  The table states the count.
 */
static void blob_params(const char *ckpt, const char *dense_path, const void *dense,
			size_t len, const void *moe, size_t mlen)
{
	static char b[16384];
	const uint64_t d = 64, kv = 32, h = 172, L = 5, V = 512;
	const uint64_t want = V * d + d + L * (2 * d + 2 * d * d + 2 * d * kv + 3 * d * h);
	struct wafer_plan_opts o = { .profile = "wafer", .batch = 1, .context = 256 };
	struct wafer_plan_shape s, m;
	struct wafer_plan p;
	char args[512];
	int ok;

	ok = !wafer_plan_shape_from_blob(dense, len, "dense", &s) && !wafer_plan(&s, &o, &p);
	wt_ok(ok && s.params == want && p.params == want && s.tied_head,
	      "a blob's parameters: %llu counted from its tensors, %llu by hand",
	      (unsigned long long)s.params, (unsigned long long)want);
	ok = !wafer_plan_shape_from_blob(moe, mlen, "moe", &m);
	wt_ok(ok && m.params == want + L * 4 * d && m.expert_hidden == h / 4,
	      "an upcycled blob (4 slices): %llu parameters (%llu by hand), experts %u wide (%llu)",
	      (unsigned long long)m.params, (unsigned long long)(want + L * 4 * d),
	      m.expert_hidden, (unsigned long long)(h / 4));
	snprintf(args, sizeof(args), "%s --profile wafer", dense_path);
	wt_ok(!cli(args, b, sizeof(b)) && strstr(b, "; 260 K parameters (the blob's tensors), "),
	      "wafer plan BLOB states its parameters: %.160s", b);
	snprintf(args, sizeof(args), "%s --profile wafer --json", ckpt);
	wt_ok(!cli(args, b, sizeof(b)) && strstr(b, "\"params\":260032"),
	      "wafer plan on the checkpoint: the same count, its head tied");
}

/*
 * A packed blob (wafer convert's output) of the shared model: the same
 * projection as its checkpoint at the blob's precision; one upcycled to
 * experts: the expert counts; a blob cut short: a clear error.
 */
static void blob_shape(void)
{
	static char a[16384], b[16384];
	const char *ckpt = wt_model_path("stories260K.bin");
	struct wafer_convert_opts co = { .wbits = 8, .group_size = 32 };
	char dense[] = "/tmp/wafer-plan-blob-XXXXXX", moe[] = "/tmp/wafer-plan-moe-XXXXXX";
	char cut[] = "/tmp/wafer-plan-cut-XXXXXX";
	void *blob = NULL, *mblob = NULL, *blob4 = NULL;
	size_t len = 0, mlen = 0, len4 = 0;
	int ok;

	ok = ckpt && !wafer_convert(ckpt, &co, &blob, &len) && write_tmp(dense, blob, len) &&
	     write_tmp(cut, blob, len / 2);
	co.moe.n_experts = 4;
	co.moe.top_k = 2;
	ok = ok && !wafer_convert(ckpt, &co, &mblob, &mlen) && write_tmp(moe, mblob, mlen);
	co = (struct wafer_convert_opts){ .wbits = 4, .group_size = 32 };
	ok = ok && !wafer_convert(ckpt, &co, &blob4, &len4);
	wt_ok(ok && plan_json_of(dense, "--profile wafer --devices 2", a, sizeof(a)) &&
	      plan_json_of(ckpt, "--profile wafer --devices 2 --weight-bits 8", b, sizeof(b)) &&
	      !strcmp(a, b), "wafer plan BLOB: the checkpoint's projection at 8 bits");
	snprintf(a, sizeof(a), "%s --profile wafer", moe);
	wt_ok(ok && !cli(a, b, sizeof(b)) && strstr(b, "4 experts (2 active"),
	      "wafer plan on an upcycled blob: its experts (%.100s)", b);
	wt_ok(ok && cli(cut, b, sizeof(b)) == 1 && strstr(b, "not a valid blob"),
	      "wafer plan on a blob cut short: %.100s", b);
	if (ok)
		blob_params(ckpt, dense, blob, len, mblob, mlen);
	if (ok)
		blob_bits(dense, blob4, len4);
	free(blob);
	free(mblob);
	free(blob4);
	unlink(dense);
	unlink(moe);
	unlink(cut);
}

static const char *const plan_fields[] = { "devices", "ttft_ms", "tok_s_single",
					   "tok_s_aggregate", "kv_bytes_per_seq",
					   "sequences_fit", "bound" };

/* `wafer plan ARGS --json` parsed, with every field the issue names; NULL if not. */
static json_object *plan_json(const char *args, char *buf, size_t size)
{
	json_object *j, *v;
	unsigned int k;

	if (cli(args, buf, size) || !(j = json_tokener_parse(buf)))
		return NULL;
	for (k = 0; k < sizeof(plan_fields) / sizeof(plan_fields[0]); k++)
		if (!json_object_object_get_ex(j, plan_fields[k], &v)) {
			json_object_put(j);
			return NULL;
		}
	return j;
}

/* Every preset, as a table and as JSON, on the default profile and on lpu. */
static void cli_presets(void)
{
	const struct wafer_plan_shape *s;
	static char buf[65536];
	char args[512];
	json_object *j, *v;
	unsigned int i;
	int ok;

	for (i = 0; (s = wafer_plan_preset(i)); i++) {
		snprintf(args, sizeof(args), "%s --batch 64 --json", s->name);
		j = plan_json(args, buf, sizeof(buf));
		ok = j && json_object_get_int64(json_object_object_get(j, "tok_s_aggregate")) >=
			  json_object_get_int64(json_object_object_get(j, "tok_s_single"));
		wt_ok(ok, "wafer plan %s --json: the fields, aggregate >= single (%.60s...)",
		      s->name, buf);
		if (j)
			json_object_put(j);
		snprintf(args, sizeof(args), "%s --weight-bits 8", s->name);
		wt_ok(!cli(args, buf, sizeof(buf)) && strstr(buf, "tok/s") && strstr(buf, "TTFT"),
		      "wafer plan %s: the table", s->name);
		snprintf(args, sizeof(args), "%s --profile lpu --context 2048", s->name);
		wt_ok(!cli(args, buf, sizeof(buf)) && strstr(buf, "x lpu") &&
		      strstr(buf, "chips, each layer split") && strstr(buf, "tok/s"),
		      "wafer plan %s --profile lpu: the table", s->name);
		snprintf(args, sizeof(args), "%s --profile lpu --context 2048 --json", s->name);
		j = plan_json(args, buf, sizeof(buf));
		ok = j && json_object_object_get_ex(j, "tensor_chips", &v) &&
		     json_object_get_int64(json_object_object_get(j, "devices")) >=
		     json_object_get_int64(v) *
		     json_object_get_int64(json_object_object_get(j, "groups"));
		wt_ok(ok, "wafer plan %s --profile lpu --json: devices >= groups x tensor_chips",
		      s->name);
		if (j)
			json_object_put(j);
	}
}

static void cli_speculative(void)
{
	static char buf[65536];
	json_object *j = NULL, *d = NULL, *v = NULL;
	int ok;

	wt_ok(!cli("llama3.1-70b --devices 4 --weight-bits 16 --context 1024 --deployment", buf,
		   sizeof(buf)) && strstr(buf, "deploy    a production deployment: EAGLE-2 head") &&
	      strstr(buf, "draft     the head, 6 tokens per step at 85 %") &&
	      strstr(buf, "acceptance 0.80..0.90"),
	      "wafer plan --deployment states its draft, tokens and acceptance range");
	ok = !cli("kimi-k2 --deployment --json", buf, sizeof(buf)) &&
	     (j = json_tokener_parse(buf)) && json_object_object_get_ex(j, "speculative", &d) &&
	     json_object_object_get_ex(d, "draft", &v) &&
	     strstr(json_object_get_string(v), "multi-token") &&
	     json_object_object_get_ex(d, "tok_s_ceiling", &v) &&
	     json_object_object_get_ex(d, "tok_s_single_low", &v) &&
	     json_object_object_get_ex(j, "deployment", &v) && json_object_get_boolean(v);
	wt_ok(ok, "wafer plan kimi-k2 --deployment --json: the draft, its band and ceiling");
	json_object_put(j);
	j = NULL;

	ok = !cli("llama3.1-70b --devices 4 --weight-bits 16 --draft-params 1B --json", buf,
		  sizeof(buf)) && (j = json_tokener_parse(buf)) &&
	     json_object_object_get_ex(j, "speculative", &d) &&
	     json_object_object_get_ex(d, "tok_s_single", &v) &&
	     json_object_get_int64(v) > 0;
	wt_ok(ok, "wafer plan --draft-params 1B --json: a speculative object (%lld tok/s)",
	      v ? (long long)json_object_get_int64(v) : -1ll);
	if (j)
		json_object_put(j);
}

static void cli_sweep(void)
{
	static char buf[65536];
	char svg[] = "/tmp/wafer-plan-XXXXXX", args[512];
	int fd = mkstemp(svg), rows = 0, ok;
	json_object *j = NULL;
	char *l;

	snprintf(args, sizeof(args), "llama3.1-70b --sweep devices --plot %s", svg);
	wt_ok(fd >= 0 && !cli(args, buf, sizeof(buf)), "wafer plan --sweep devices --plot");
	for (l = strchr(buf, '\n'); l && l[1]; l = strchr(l + 1, '\n'))
		rows++;
	wt_ok(rows == 8 && strstr(buf, "used"), "a row per device count 1..8 (%d)", rows);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);

		buf[n > 0 ? n : 0] = 0;
		close(fd);
		unlink(svg);
	}
	wt_ok(strstr(buf, "<svg") && strstr(buf, "one sequence") && strstr(buf, "aggregate"),
	      "gnuplot drew the curve as SVG");
	ok = !cli("sol --sweep batch --context 1024 --json", buf, sizeof(buf)) &&
	     (j = json_tokener_parse(buf)) && json_object_is_type(j, json_type_array) &&
	     json_object_array_length(j) == 13;
	wt_ok(ok, "--sweep batch --json: an array of 13 plans (batch 1..4096)");
	if (j)
		json_object_put(j);
	wt_ok(cli("sol --plot x.svg", buf, sizeof(buf)) == 2 && strstr(buf, "--sweep"),
	      "--plot without --sweep: %.60s", buf);
	wt_ok(cli("sol --sweep layers", buf, sizeof(buf)) == 2 && strstr(buf, "--sweep"),
	      "an unknown axis: %.60s", buf);
}

static void cli_bad_input(void)
{
	static char buf[65536];

	wt_ok(cli("llama3.1-8b --draft-accept 1.5", buf, sizeof(buf)) == 2 &&
	      strstr(buf, "--draft-accept"), "acceptance above 1 names its option: %.80s", buf);
	wt_ok(cli("gpt-7", buf, sizeof(buf)) == 1 && strstr(buf, "gpt-7"),
	      "an unknown preset: %.80s", buf);
	wt_ok(cli("llama3.1-8b --batch x", buf, sizeof(buf)) == 2 && strstr(buf, "--batch"),
	      "a bad number names its option: %.80s", buf);
	wt_ok(cli("llama3.1-8b --weight-bits 5", buf, sizeof(buf)) == 1 &&
	      strstr(buf, "--weight-bits 5") && !strstr(buf, "weight_bits"),
	      "a precision the plan refuses names its flag: %.80s", buf);
	wt_ok(cli("llama3.1-8b --context 512 --prompt 600", buf, sizeof(buf)) == 1 &&
	      strstr(buf, "--prompt 600") && strstr(buf, "--context 512"),
	      "a prompt past the context names both flags: %.80s", buf);
	wt_ok(cli("llama3.1-8b --draft-params 1B --draft-tokens 0", buf, sizeof(buf)) == 1 &&
	      strstr(buf, "--draft-tokens 0"), "no draft tokens names the flag: %.80s", buf);
	wt_ok(cli("llama3.1-8b --profile h100", buf, sizeof(buf)) == 1 &&
	      strstr(buf, "--profile 'h100'"), "an unknown profile names the flag: %.80s", buf);
	wt_ok(cli("custom --layers 2 --dim 64 --hidden 128 --heads 8 --kv-heads 3 --vocab 100",
		  buf, sizeof(buf)) == 1 && strstr(buf, "--kv-heads 3") &&
	      strstr(buf, "--heads 8"), "custom: a shape's bad field names its flag: %.80s", buf);
	wt_ok(cli("llama3.1-405b --weight-bits 16 --profile asic", buf, sizeof(buf)) == 1 &&
	      strstr(buf, "no number of devices"), "a model too big for any count: %.90s", buf);
}

/* The integer after @label in @text, or -1. */
static long long table_field(const char *text, const char *label)
{
	const char *at = strstr(text, label);

	return at ? strtoll(at + strlen(label), NULL, 10) : -1;
}

/* The integer before @label on the table line starting with @line, or -1. */
static long long table_before(const char *text, const char *line, const char *label)
{
	const char *at = strstr(text, line), *end, *p;

	if (!at || !(end = strstr(at, label)))
		return -1;
	for (p = end; p > at && p[-1] == ' '; p--)
		;
	while (p > at && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return strtoll(p, NULL, 10);
}

static long long json_int(json_object *root, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(root, key, &v) ? json_object_get_int64(v) : -2;
}

/*
 * The spread line of a table and the JSON's "spread" say the same: both
 * absent, or the stages a layer's bytes fill and those it spreads over
 * (the fill when kept there) within the table's rounding.
 */
static int spread_agrees(const char *table, json_object *root)
{
	const char *line = strstr(table, "\nspread    ");
	json_object *sp, *v;
	double fill = -1, over = -1, jfill, jover, jmax;

	if (!json_object_object_get_ex(root, "spread", &sp))
		return !line;
	if (!line || sscanf(line, "\nspread    a layer's bytes fill %lf", &fill) != 1)
		return 0;
	if (sscanf(line, "\nspread    a layer's bytes fill %*f stages' cores; spread over %lf",
		   &over) != 1)
		over = fill;
	jfill = json_object_object_get_ex(sp, "layer_stages", &v) ? json_object_get_double(v) : -9;
	jover = json_object_object_get_ex(sp, "spread_stages", &v) ? json_object_get_double(v) : -9;
	jmax = json_object_object_get_ex(sp, "spread_stages_max", &v) ?
	       json_object_get_double(v) : -9;
	return fabs(fill - jfill) <= 0.05 && fabs(over - jover) <= 0.05 && jover >= jfill &&
	       jmax >= jover;
}

/*
 * Every preset's table and --json are one projection: devices, sequences
 * that fit, single and aggregate tok/s agree field by field (a field left
 * uninitialised on some paths made them differ from run to run).
 */
static void table_matches_json(void)
{
	static char table[16384], js[16384];
	const struct wafer_plan_shape *s;
	char args[256];
	unsigned int i;

	for (i = 0; (s = wafer_plan_preset(i)); i++) {
		json_object *root;
		int ok;

		snprintf(args, sizeof(args), "%s --profile wse3 --devices auto", s->name);
		ok = !cli(args, table, sizeof(table));
		snprintf(args, sizeof(args), "%s --profile wse3 --devices auto --json", s->name);
		ok = ok && !cli(args, js, sizeof(js));
		root = ok ? json_tokener_parse(js) : NULL;
		wt_ok(root && table_field(table, "devices   ") == json_int(root, "devices") &&
		      table_before(table, "KV ", " sequences fit") ==
		      json_int(root, "sequences_fit") &&
		      table_before(table, "single ", " tok/s") == json_int(root, "tok_s_single") &&
		      table_before(table, "batch ", " tok/s aggregate") ==
		      json_int(root, "tok_s_aggregate") &&
		      table_field(table, "band      ") == json_int(root, "tok_s_single_low") &&
		      table_before(table, "band ", " tok/s:") == json_int(root, "tok_s_single_high") &&
		      json_int(root, "tok_s_single_low") <= json_int(root, "tok_s_single") &&
		      json_int(root, "tok_s_single") <= json_int(root, "tok_s_single_high") &&
		      spread_agrees(table, root),
		      "%s: the table and --json agree, the band's ends beside tok_s_single, "
		      "the spread (sequences fit %lld / %lld)", s->name,
		      table_before(table, "KV ", " sequences fit"),
		      root ? json_int(root, "sequences_fit") : -3);
		json_object_put(root);
	}
}

/* The table says where a large layer went; --no-spread keeps it on its bytes' cores. */
static void cli_no_spread(void)
{
	static char a[16384], b[16384];
	const char *args = "kimi-k2 --weight-bits 4 --devices 16 --context 1024";
	char no[256];

	snprintf(no, sizeof(no), "%s --no-spread", args);
	wt_ok(!cli(args, a, sizeof(a)) && !cli(no, b, sizeof(b)) &&
	      strstr(a, "spread    a layer's bytes fill 9.1 stages' cores; spread over 11.0 "
		     "(14.7 on devices holding fewer layers) for a 1-position pass") &&
	      strstr(b, "spread    a layer's bytes fill 9.1 stages' cores; kept there "
		     "(--no-spread)") &&
	      table_before(a, "single ", " tok/s") > table_before(b, "single ", " tok/s"),
	      "wafer plan says where a large layer went, and --no-spread keeps it on its "
	      "bytes' cores, slower");
}

/*
 * Every preset's projection under valgrind's memcheck: no read of memory
 * never written (exit 99 on any error).
 */
static void presets_memcheck(void)
{
	static char out[16384];
	const struct wafer_plan_shape *s;
	char args[256];
	unsigned int i;
	int rc;

	if (system("valgrind --version >/dev/null 2>&1")) {
		wt_ok(0, "valgrind is installed (tests/setup/setup installs it)");
		return;
	}
	for (i = 0; (s = wafer_plan_preset(i)); i++) {
		snprintf(args, sizeof(args), "%s --profile wse3 --devices auto --json", s->name);
		rc = cli_under("valgrind -q --error-exitcode=99", args, out, sizeof(out));
		wt_ok(!rc, "%s: wafer plan --json is clean under memcheck%s%.300s", s->name,
		      rc ? ": " : "", rc ? out : "");
	}
}

static void command_line(void)
{
	static char buf[65536];
	char args[512];

	cli_presets();
	snprintf(args, sizeof(args), "%s --profile wafer --devices 2",
		 wt_model_path("stories260K.bin"));
	wt_ok(!cli(args, buf, sizeof(buf)) && strstr(buf, "5 layers, dim 64") &&
	      strstr(buf, "2 x wafer"), "wafer plan on the shared checkpoint: %.80s", buf);
	blob_shape();
	wt_ok(!cli("custom --layers 4 --dim 256 --hidden 512 --heads 4 --vocab 1000", buf,
		   sizeof(buf)) && strstr(buf, "custom: 4 layers"), "wafer plan custom");
	cli_speculative();
	cli_sweep();
	cli_bad_input();
	table_matches_json();
	cli_no_spread();
	presets_memcheck();
}

/*
 * A chain over hosts: each host boundary crosses the host link in place of
 * the device link, the devices split over hosts as a chain lists them.
 */
static void hosts(void)
{
	const struct wafer_plan_shape *s = wafer_plan_preset_find("llama3.1-70b");
	const struct wafer_plan_link *rxe = wafer_plan_link_find("rxe-1vm");
	struct wafer_plan_link file_link = { .name = "x", .latency_ns = 5000,
					     .bytes_per_s = 1000000000 };
	struct wafer_plan_opts o = { .profile = "wse3", .devices = 4, .weight_bits = 16,
				     .batch = 1, .context = 1024 };
	struct wafer_plan one, two, three, all, many, bare;
	uint64_t dev_link, host;
	static char buf[65536];
	char path[] = "/tmp/wafer-plan-link-XXXXXX";
	FILE *f;
	int ok, fd;

	wt_ok(rxe && rxe->latency_ns == 408000 && rxe->bytes_per_s == 12710000 &&
	      wafer_plan_link_find("rxe-2vm") && !wafer_plan_link_find("nope"),
	      "built-in host links: rxe-1vm (408 us, 12.71 MB/s), rxe-2vm");
	/* 8192-wide activations, 2 bytes each: 16,384 bytes a token. */
	host = wafer_plan_link_ns(rxe, 16384, 100);
	wt_ok(host == 408000 + (16384ull * 1000000000 + 12709999) / 12710000 &&
	      wafer_plan_link_ns(rxe, 16384, 200) == host + 408000,
	      "a token over rxe-1vm: 408 us + 16,384 B at 12.71 MB/s = %llu ns",
	      (unsigned long long)host);
	ok = !wafer_plan(s, &o, &one) && one.hosts == 1 && !one.host_link_ns;
	dev_link = one.link_ns / 3;
	o.hosts = 2;
	ok = ok && !wafer_plan(s, &o, &bare) && bare.hosts == 2 &&
	     bare.token_ns == one.token_ns && bare.host_link_ns == dev_link;
	wt_ok(ok, "2 hosts joined by the device link: the one-host projection");
	o.host_link = rxe;
	ok = !wafer_plan(s, &o, &two) && two.hosts == 2 && two.host_link_ns == host &&
	     two.token_ns == one.token_ns - dev_link + host &&
	     two.link_ns == 2 * dev_link + host && !strcmp(two.single_bound, "links");
	wt_ok(ok, "4 devices on 2 hosts: one host link in place of a device link (%llu ns "
	      "a token, %llu on one host)", (unsigned long long)two.token_ns,
	      (unsigned long long)one.token_ns);
	o.hosts = 3;
	ok = !wafer_plan(s, &o, &three) && three.host_link_ns == 2 * host &&
	     three.token_ns == one.token_ns - 2 * dev_link + 2 * host;
	wt_ok(ok, "4 devices on 3 hosts (2, 1, 1): two host links");
	o.hosts = 4;
	ok = !wafer_plan(s, &o, &all) && all.token_ns == one.token_ns - 3 * dev_link + 3 * host;
	o.hosts = 9;
	ok = ok && !wafer_plan(s, &o, &many) && many.hosts == 4 && many.token_ns == all.token_ns;
	wt_ok(ok, "a host per device: three host links; more hosts than devices: as many");
	wt_ok(two.tok_s_single_low < two.tok_s_single && two.tok_s_single_high > two.tok_s_single,
	      "the band moves the host link's latency too");
	o.hosts = 2;
	o.batch = 64;
	ok = !wafer_plan(s, &o, &two) && !strcmp(two.bound, "host link bandwidth") &&
	     two.tok_s_aggregate == 1000000000ull * 64 / (64 * (host - 408000));
	o.host_link = NULL;
	ok = ok && !wafer_plan(s, &o, &bare) && strcmp(bare.bound, "host link bandwidth") &&
	     bare.tok_s_aggregate > 10 * two.tok_s_aggregate;
	wt_ok(ok, "64 sequences over rxe-1vm: bound by its bandwidth, %llu tok/s (a token's "
	      "16,384 B at 12.71 MB/s)", (unsigned long long)two.tok_s_aggregate);
	o.batch = 1;
	o.host_link = rxe;
	o.hosts = 2;
	o.host_link = &file_link;
	ok = !wafer_plan(s, &o, &two) && two.host_link_ns == 5000 + 16385 - 1;
	wt_ok(ok, "a link of 5 us and 1 GB/s: %llu ns", (unsigned long long)two.host_link_ns);
	file_link.bytes_per_s = 0;
	wt_ok(wafer_plan(s, &o, &two) == -EINVAL && strstr(wafer_last_error(), "host_link"),
	      "a link without bandwidth is refused");

	wt_ok(!cli("llama3.1-70b --devices 4 --weight-bits 16 --context 1024 --hosts 2 "
		   "--link-profile rxe-1vm", buf, sizeof(buf)) &&
	      strstr(buf, "hosts     2, joined by rxe-1vm (--link-profile)"),
	      "wafer plan --hosts 2 --link-profile rxe-1vm: the hosts line");
	fd = mkstemp(path);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	ok = f && fprintf(f, "{\"name\": \"lab\", \"latency_ns\": 5000, "
			  "\"bytes_per_s\": 1000000000}\n") > 0 && !fclose(f);
	if (ok) {
		char args[256];
		json_object *j, *v;

		snprintf(args, sizeof(args), "llama3.1-70b --devices 4 --weight-bits 16 "
			 "--context 1024 --hosts 2 --link-profile %s --json", path);
		j = !cli(args, buf, sizeof(buf)) ? json_tokener_parse(buf) : NULL;
		ok = j && json_object_get_int64(json_object_object_get(j, "hosts")) == 2 &&
		     json_object_object_get_ex(j, "host_link", &v) &&
		     !strcmp(json_object_get_string(json_object_object_get(v, "name")), "lab") &&
		     json_object_get_double(json_object_object_get(j, "host_link_us")) > 21.38 &&
		     json_object_get_double(json_object_object_get(j, "host_link_us")) < 21.39;
		json_object_put(j);
		f = fopen(path, "w");
		ok = ok && f && fprintf(f, "{\"latency\": 5}\n") > 0 && !fclose(f) &&
		     cli("llama3.1-8b --hosts 2 --link-profile /tmp/wafer-plan-link-none", buf,
			 sizeof(buf)) == 1 && strstr(buf, "rxe-1vm, rxe-2vm");
		snprintf(args, sizeof(args), "llama3.1-8b --link-profile %s", path);
		ok = ok && cli(args, buf, sizeof(buf)) == 1 && strstr(buf, "unknown field \"latency\"");
	}
	if (fd >= 0)
		unlink(path);
	wt_ok(ok, "--link-profile FILE.json: its link in the JSON; an unknown name or field "
	      "is refused, naming the built-ins or the field");
	wt_ok(cli("llama3.1-8b --hosts 0", buf, sizeof(buf)) == 2 && strstr(buf, "--hosts"),
	      "--hosts 0 is refused");
}

int main(void)
{
	agreement();
	arithmetic();
	bands();
	deployment();
	monotonic();
	spread();
	moe_presets();
	latent_attention();
	calibration_doc();
	speculative();
	hosts();
	streaming();
	bad_input();
	command_line();
	trace_file();
	stream_trace();
	spec_trace();
	lpu();
	return wt_done();
}
