// SPDX-License-Identifier: MIT
/*
 * wafer bench's device axis: greedy decode of B sequences split into M
 * micro-batches that are kept in flight (cli_bench_micro()).
 *
 * The B sequences are slots 0..B-1 of one context; micro-batch g holds
 * slots [g*B/M, (g+1)*B/M).  Every micro-batch's first step is submitted
 * at once (one wafer_submit() each, in order); then, round robin, the
 * oldest micro-batch is reaped, its tokens taken, and its next step
 * submitted while the others are still on their way.  On a pipeline of N
 * devices with M = N, micro-batch 0 is thus on device k while micro-batch
 * 1 is on device k - 1: the modelled timelines of the devices overlap the
 * micro-batches.  What makes that honest is the pipeline's clock
 * (libwafer's pipe clock, userlib/lib/): each job's floor on the first device
 * is its slot's previous completion on the last device, raised to the
 * latest completion the caller had reaped, so a micro-batch's step starts
 * no earlier than its own previous step left the chain and the host had
 * seen it.  M = 1 is the lockstep batch: every step waits for all B.
 *
 * Results never depend on M: a job touches only its slot.  The caller
 * compares the tokens against each sequence run alone (B = 1, M = 1).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_bench.h"

#define RES_SIZE	WAFER_RESULT_SIZE(0)

/**
 * struct mb_state - one run
 * @r: the caller's parameters and results
 * @ctx: the context, a slot per sequence
 * @in: token ids, @r->steps per slot
 * @out: a result per slot
 * @pos: each micro-batch's position (steps done)
 * @left: each micro-batch's jobs in flight
 */
struct mb_state {
	struct cli_mb *r;
	struct wafer_ctx *ctx;
	struct wafer_bo *in;
	struct wafer_bo *out;
	unsigned int pos[CLI_MB_MAX];
	unsigned int left[CLI_MB_MAX];
};

static unsigned int mb_lo(const struct cli_mb *r, unsigned int g)
{
	return g * r->b / r->m;
}

/* The micro-batch slot @slot belongs to. */
static unsigned int mb_of(const struct cli_mb *r, unsigned int slot)
{
	unsigned int g = 0;

	while (g + 1 < r->m && mb_lo(r, g + 1) <= slot)
		g++;
	return g;
}

static int mb_fail(const char *what)
{
	fprintf(stderr, "wafer bench: %s: %s\n", what, wafer_last_error());
	return -1;
}

/* Micro-batch @g's jobs for its current position, submitted; 0 or -1. */
static int mb_submit(struct wafer_dev *dev, struct mb_state *s, unsigned int g)
{
	const struct cli_mb *r = s->r;
	struct wafer_job jobs[CLI_MB_MAX_B];
	unsigned int lo = mb_lo(r, g), n = mb_lo(r, g + 1) - lo, i, done = 0;
	int got;

	for (i = 0; i < n; i++)
		jobs[i] = (struct wafer_job){
			.ctx = s->ctx, .slot = lo + i, .start_pos = s->pos[g], .n_tokens = 1,
			.in = s->in, .in_offset = ((uint64_t)(lo + i) * r->steps + s->pos[g]) * 4,
			.out = s->out, .out_offset = (uint64_t)(lo + i) * RES_SIZE,
			.user_data = lo + i,
		};
	while (done < n) {
		got = wafer_submit(dev, jobs + done, n - done);
		if (got <= 0)
			return mb_fail("submitting a micro-batch");
		done += (unsigned int)got;
	}
	s->left[g] = n;
	return 0;
}

/* Reaps until micro-batch @g's jobs are all back (others' count down too). */
static int mb_reap(struct wafer_dev *dev, struct mb_state *s, unsigned int g)
{
	struct wafer_completion c[CLI_MB_MAX_B];
	int n, i;

	while (s->left[g]) {
		/* At most what @g still waits for: the pipeline completes in order. */
		n = wafer_reap(dev, c, s->left[g], 1, -1);
		if (n <= 0)
			return mb_fail(n ? "reaping a micro-batch" : "a micro-batch (timed out)");
		for (i = 0; i < n; i++) {
			if (c[i].status) {
				fprintf(stderr, "wafer bench: a decode job failed: %s\n",
					wafer_strerror(c[i].status));
				return -1;
			}
			s->left[mb_of(s->r, (unsigned int)c[i].user_data)]--;
		}
	}
	return 0;
}

/* Micro-batch @g is back: its tokens; its next step fed and submitted. */
static int mb_advance(struct wafer_dev *dev, struct mb_state *s, unsigned int g)
{
	struct cli_mb *r = s->r;
	uint32_t *ids = wafer_bo_map(s->in), tok;
	unsigned int i, p = s->pos[g];

	for (i = mb_lo(r, g); i < mb_lo(r, g + 1); i++) {
		tok = wafer_result(s->out, (uint64_t)i * RES_SIZE, 0, 0)->argmax;
		r->tokens[(size_t)i * r->steps + p] = tok;
		if (p + 1 < r->steps)
			ids[(size_t)i * r->steps + p + 1] = tok;
	}
	s->pos[g] = p + 1;
	return s->pos[g] < r->steps ? mb_submit(dev, s, g) : 0;
}

/* Every micro-batch's first step, then round robin until all are done. */
static int mb_loop(struct wafer_dev *dev, struct mb_state *s)
{
	const struct cli_mb *r = s->r;
	unsigned int g, finished = 0;

	for (g = 0; g < r->m; g++)
		if (mb_submit(dev, s, g))
			return -1;
	for (g = 0; finished < r->m; g = (g + 1) % r->m) {
		if (s->pos[g] == r->steps)
			continue;
		if (mb_reap(dev, s, g) || mb_advance(dev, s, g))
			return -1;
		finished += s->pos[g] == r->steps;
	}
	return 0;
}

int cli_bench_micro(struct wafer_dev *dev, struct wafer_model *m, struct cli_mb *r)
{
	struct mb_state s = { .r = r };
	struct wafer_dev_stats s0, s1;
	uint32_t *ids;
	uint64_t t0;
	unsigned int i;
	int ret = -1;

	if (!r->b || r->b > CLI_MB_MAX_B || !r->m || r->m > r->b || r->m > CLI_MB_MAX ||
	    !r->steps) {
		fprintf(stderr, "wafer bench: %u sequences in %u micro-batches: 1..%d, 1..%d\n",
			r->b, r->m, CLI_MB_MAX_B, CLI_MB_MAX);
		return -1;
	}
	if (wafer_ctx_create(m, r->b, r->steps, &s.ctx)) {
		ret = 1;	/* the KV of B sequences does not fit: the caller says so */
		goto out;
	}
	if (wafer_bo_create(dev, (size_t)r->b * r->steps * 4, &s.in) ||
	    wafer_bo_create(dev, (size_t)r->b * RES_SIZE, &s.out)) {
		mb_fail("a context and buffers for the micro-batches");
		goto out;
	}
	ids = wafer_bo_map(s.in);
	for (i = 0; i < r->b; i++)
		ids[(size_t)i * r->steps] = r->first[i];
	memset(&s0, 0, sizeof(s0));
	memset(&s1, 0, sizeof(s1));
	wafer_dev_stats(dev, &s0);
	t0 = cli_now_ns();
	if (mb_loop(dev, &s))
		goto out;
	r->host_ns = cli_now_ns() - t0;
	wafer_dev_stats(dev, &s1);
	r->model_ns = s1.modelled_makespan_ns > s0.modelled_makespan_ns ?
		      s1.modelled_makespan_ns - s0.modelled_makespan_ns : 0;
	ret = 0;
out:
	wafer_bo_destroy(s.out);
	wafer_bo_destroy(s.in);
	wafer_ctx_destroy(s.ctx);
	return ret;
}
