// SPDX-License-Identifier: MIT
/*
 * Unit test: the modelled time of a split model's decode loop against
 * `wafer plan` of the same split (issues 12 and 15).
 *
 * The shared model over a pipeline of 2..5 in-process wse3 devices: a
 * prompt of 32 tokens, then a decode loop that waits for each token before
 * it submits the next, as wafer_generate() does.  Each step must take, in
 * modelled time, what wafer_plan() says a lone sequence's token takes on as
 * many devices (within 2 %): device 0 may not start a token before the
 * previous one left the last device (the pipeline's floor, WFW_JOB_NOT_BEFORE).
 * Without the floor device 0 starts as soon as its own part of the previous
 * token is done, and a step takes about its part plus a link.  A job's
 * device_ns is its makespan across the devices: a lone decode step's is its
 * period, and a job of several chunks reports no more than its parts' sum.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wafer.h"
#include "wt_util.h"

#define PROMPT	32
#define STEPS	6

/* stories260K (the shared checkpoint) */
static const struct wafer_plan_shape s260k = { "stories260K", 5, 64, 172, 8, 4, 8, 512,
					       0, 0, 0, 0, 0 };

/**
 * struct split_run - what one run of the loop saw
 * @prefill: the prompt job's completion
 * @step: each decode step's completion
 */
struct split_run {
	struct wafer_completion prefill;
	struct wafer_completion step[STEPS];
};

static int open_split(unsigned int n, struct wafer_dev **dev)
{
	struct wafer_open_opts o[WAFER_PIPE_MAX_DEVICES];
	struct wafer_pipe_opts po = { .n_devices = n, .devices = o };
	unsigned int i;

	for (i = 0; i < n; i++)
		o[i] = (struct wafer_open_opts){ .backend = WAFER_BACKEND_INPROC,
						 .profile = "wse3", .sram_bytes = 1 << 20 };
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

static int split_run(unsigned int n, const void *blob, size_t len, struct split_run *r)
{
	struct wafer_bo *in = NULL, *out = NULL;
	struct wafer_model *m = NULL;
	struct wafer_ctx *ctx = NULL;
	struct wafer_dev *dev;
	unsigned int i;
	int ret;

	memset(r, 0, sizeof(*r));
	if (open_split(n, &dev))
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

	ret = split_run(n, blob, len, &r);
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

int main(void)
{
	struct wafer_convert_opts co = { .wbits = 8, .group_size = 64 };
	const char *path = wt_model_path("stories260K.bin");
	struct split_run one;
	unsigned int n;
	size_t len;
	void *blob;

	if (!wt_ok(path && !wafer_convert(path, &co, &blob, &len), "convert the shared model"))
		return wt_done();
	n = !split_run(1, blob, len, &one) && one.step[STEPS - 1].done_ns;
	wt_ok(n, "one device: the same loop (a step %.2f us)", one.step[1].device_ns / 1e3);
	/* 4 devices: the pipeline splits 2,1,1,1, the plan 2,2,1 on 3. */
	for (n = 2; n <= 5; n += n == 3 ? 2 : 1)
		split_agrees(n, blob, len, one.step[1].device_ns);
	free(blob);
	return wt_done();
}
