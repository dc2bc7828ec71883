// SPDX-License-Identifier: MIT
/*
 * libwafer's continuous batching (wafer_batch_*) on the in-process backend:
 * a sequence's tokens do not depend on the prefill chunk size nor on what
 * else runs beside it, and equal wafer_generate()'s; the ends (max_new,
 * context full); slots full (-EBUSY), a prompt above the context (-E2BIG),
 * bad arguments (-EINVAL); a cancelled slot is free again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wafer.h"
#include "wt_util.h"

#define MAX_NEW	40

static struct wafer_model *model;
static struct wafer_tokenizer *tok;

struct seq_out {
	int tokens[600];
	unsigned int n;
	int end;
};

/* Runs @n_seq prompts together to their ends; out[i] gets sequence i's tokens. */
static int run(unsigned int slots, unsigned int ctx_len, unsigned int chunk,
	       const char *const *prompts, unsigned int n_seq, unsigned int max_new,
	       struct seq_out *out)
{
	struct wafer_batch_opts bo = { .slots = slots, .ctx_len = ctx_len, .prefill_chunk = chunk };
	struct wafer_batch_event ev[16];
	struct wafer_batch *b;
	unsigned int i, started = 0;
	int ids[512], n, k;

	if (wafer_batch_create(model, &bo, &b))
		return -1;
	memset(out, 0, sizeof(*out) * n_seq);
	while (started < n_seq || wafer_batch_active(b)) {
		/* A new sequence joins at every step while there is room. */
		if (started < n_seq && wafer_batch_active(b) < slots) {
			struct wafer_batch_seq sq = { .max_new = max_new };

			n = wafer_tokenizer_encode(tok, prompts[started], 1, 0, ids, 512);
			if (wafer_batch_start(b, ids, (unsigned int)n, &sq, started) < 0)
				break;
			started++;
		}
		k = wafer_batch_step(b, ev, 16, NULL);
		if (k < 0)
			break;
		for (i = 0; i < (unsigned int)k; i++) {
			struct seq_out *o = &out[ev[i].user_data];

			if (ev[i].token >= 0 && o->n < 600)
				o->tokens[o->n++] = ev[i].token;
			if (ev[i].end)
				o->end = ev[i].end;
		}
	}
	wafer_batch_destroy(b);
	return started == n_seq ? 0 : -1;
}

static int gen_piece(void *arg, int token, const char *piece, int from_prompt)
{
	struct seq_out *o = arg;

	(void)piece;
	if (!from_prompt && o->n < 600)
		o->tokens[o->n++] = token;
	return 0;
}

static int same(const struct seq_out *a, const struct seq_out *b)
{
	return a->n == b->n && !memcmp(a->tokens, b->tokens, a->n * sizeof(int));
}

static const char *const prompts[] = {
	"Once upon a time", "", "The cat sat on the mat and the dog sat on the rug. They",
	"Lily", "One day, a little girl named Sue found a shiny red ball in the garden. "
	"She wanted to play with it, but her mom said it was time for lunch.",
};
#define N_PROMPTS	(sizeof(prompts) / sizeof(prompts[0]))

/* Each prompt's tokens run alone, chunk 32: what the batched runs must equal. */
static struct seq_out alone[N_PROMPTS];

/* One sequence alone gives wafer_generate()'s tokens, then WAFER_BATCH_MAX_NEW. */
static void test_alone_as_generate(void)
{
	struct wafer_gen_opts go = { .top_p = 1.0f, .on_piece = gen_piece };
	static struct seq_out ref;
	struct wafer_ctx *ctx = NULL;
	unsigned int i;
	int ids[600], n;

	/* Each alone, chunk 32 (prompts of several chunks take several steps). */
	for (i = 0; i < N_PROMPTS; i++)
		if (run(1, 0, 32, &prompts[i], 1, MAX_NEW, &alone[i]))
			wt_diag("alone %u failed: %s", i, wafer_last_error());
	/* wafer_generate() is the reference for the first. */
	if (!wafer_ctx_create(model, 1, 512, &ctx)) {
		n = wafer_tokenizer_encode(tok, prompts[0], 1, 0, ids, 600);
		go.steps = (unsigned int)n + MAX_NEW - 1;
		go.arg = &ref;
		wafer_generate(ctx, tok, prompts[0], &go, NULL);
		wafer_ctx_destroy(ctx);
	}
	wt_ok(alone[0].n == MAX_NEW && same(&alone[0], &ref) && alone[0].end == WAFER_BATCH_MAX_NEW,
	      "one sequence: wafer_generate()'s %u tokens, then WAFER_BATCH_MAX_NEW", MAX_NEW);
}

/* All together in 3 slots (joining at different steps), chunks of 5: as alone. */
static void test_batched_as_alone(void)
{
	static struct seq_out batched[N_PROMPTS];
	unsigned int i, ok = 0;

	wt_ok(!run(3, 0, 5, prompts, N_PROMPTS, MAX_NEW, batched), "5 sequences through 3 slots");
	for (i = 0; i < N_PROMPTS; i++)
		ok += same(&alone[i], &batched[i]) && alone[i].n;
	wt_ok(ok == N_PROMPTS, "batched, chunks of 5: each sequence's tokens as alone (%u of %zu)",
	      ok, N_PROMPTS);
}

/* Prompts fed one token a step: the same tokens as alone. */
static void test_chunk_of_one_as_alone(void)
{
	static struct seq_out chunked[N_PROMPTS];
	unsigned int i, ok = 0;

	wt_ok(!run(5, 0, 1, prompts, N_PROMPTS, MAX_NEW, chunked), "prompts one token a step");
	for (i = 0; i < N_PROMPTS; i++)
		ok += same(&alone[i], &chunked[i]);
	wt_ok(ok == N_PROMPTS, "chunks of 1: the same tokens (%u of %zu)", ok, N_PROMPTS);
}

/* A sequence in a context of 24 positions runs until the context is full. */
static void test_context_end(struct wafer_batch *b, int n)
{
	unsigned int got = 0, last_end = 0, steps = 0, i;
	struct wafer_batch_event ev[4];

	while (wafer_batch_active(b) && steps++ < 100) {
		int k = wafer_batch_step(b, ev, 4, NULL);

		for (i = 0; k > 0 && i < (unsigned int)k; i++) {
			got += ev[i].token >= 0;
			last_end = (unsigned int)ev[i].end;
		}
	}
	wt_ok(last_end == WAFER_BATCH_CONTEXT && got == 24u - (unsigned int)n + 1,
	      "a sequence of %d prompt tokens in 24 positions: %u tokens, then "
	      "WAFER_BATCH_CONTEXT (%u)", n, 24u - (unsigned int)n + 1, got);
}

/*
 * A context of 24 positions and 2 slots: the long prompt is -E2BIG, bad
 * starts -EINVAL, a third start -EBUSY, a cancelled slot free again; a
 * short prompt ends at the context.
 */
static void test_slots_and_context(void)
{
	struct wafer_batch_opts bo = { .slots = 2, .ctx_len = 24 };
	struct wafer_batch_seq sq = { .max_new = 100 };
	struct wafer_batch_event ev[4];
	struct wafer_batch *b = NULL;
	int ids[600], n;

	if (!wt_ok(!wafer_batch_create(model, &bo, &b), "a batch of 2 slots x 24 positions"))
		return;
	n = wafer_tokenizer_encode(tok, prompts[4], 1, 0, ids, 600);
	wt_ok(wafer_batch_start(b, ids, (unsigned int)n, &sq, 0) == -E2BIG,
	      "a prompt of %d tokens in 24 positions: -E2BIG", n);
	n = wafer_tokenizer_encode(tok, prompts[0], 1, 0, ids, 600);
	wt_ok(wafer_batch_start(b, ids, 0, &sq, 0) == -EINVAL, "an empty prompt: -EINVAL");
	sq.max_new = 0;
	wt_ok(wafer_batch_start(b, ids, (unsigned int)n, &sq, 0) == -EINVAL,
	      "max_new 0: -EINVAL");
	sq.max_new = 100;
	wt_ok(wafer_batch_start(b, ids, (unsigned int)n, &sq, 0) == 0 &&
	      wafer_batch_start(b, ids, (unsigned int)n, &sq, 1) == 1 &&
	      wafer_batch_start(b, ids, (unsigned int)n, &sq, 2) == -EBUSY,
	      "two slots taken, a third start: -EBUSY");
	wt_ok(wafer_batch_cancel(b, 1) == 0 && wafer_batch_cancel(b, 1) == -EINVAL &&
	      wafer_batch_active(b) == 1, "cancel frees the slot; twice: -EINVAL");
	test_context_end(b, n);
	wt_ok(wafer_batch_step(b, ev, 4, NULL) == 0, "a step with nothing active: no event");
	wafer_batch_destroy(b);
}

/* wafer_batch_create() refuses 0 slots and a context above the model's. */
static void test_create_bad_opts(void)
{
	struct wafer_batch_opts bo = { .slots = 0, .ctx_len = 24 };
	struct wafer_batch *b = NULL;

	wt_ok(wafer_batch_create(model, &bo, &b) == -EINVAL, "0 slots: -EINVAL");
	bo.slots = 1;
	bo.ctx_len = 100000;
	wt_ok(wafer_batch_create(model, &bo, &b) == -EINVAL, "a context above the model's: -EINVAL");
}

int main(void)
{
	struct wafer_open_opts oo = { .backend = WAFER_BACKEND_INPROC };
	struct wafer_convert_opts co = { .wbits = 8, .group_size = 32 };
	const char *mp = wt_model_path("stories260K.bin") ?
		strdup(wt_model_path("stories260K.bin")) : NULL;
	const char *tp = wt_model_path("tok512.bin") ? strdup(wt_model_path("tok512.bin")) : NULL;
	struct wafer_dev *dev = NULL;

	if (!wt_ok(mp && tp && !wafer_open(&oo, &dev) && !wafer_model_load_file(dev, mp, &co, &model) &&
		   !wafer_tokenizer_load(tp, 512, &tok), "the shared model in process"))
		return wt_done();
	test_alone_as_generate();
	test_batched_as_alone();
	test_chunk_of_one_as_alone();
	test_slots_and_context();
	test_create_bad_opts();
	wafer_tokenizer_free(tok);
	wafer_model_unload(model);
	wafer_close(dev);
	return wt_done();
}
