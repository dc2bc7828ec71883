// SPDX-License-Identifier: MIT
/*
 * libwafer's continuous batching (wafer_batch_*) on a pipeline of 3
 * in-process devices: 72 slots, more than the jobs a pipeline holds in
 * flight (64), so a step's submit is refused part way and the step reaps
 * as it goes; a prefill chunk of 200 asked, cut to the pipeline's 128
 * tokens a job, so a prompt of ~150 tokens takes two; sequences taking
 * slots as they free.  Each sequence's tokens equal those of the same sequence
 * alone in a batch of one slot on ONE device, and both ends come.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wafer.h"
#include "wt_util.h"

#define SLOTS	72
#define SEQS	80
#define CTX	192

static struct wafer_tokenizer *tok;

static const char *const prompts[] = {
	"", "Once upon a time", "The cat sat on the mat and the dog sat on the rug. They",
	"One day, a little girl named Sue found a shiny red ball in the garden. She wanted to "
	"play with it, but her mom said it was time for lunch. Sue was sad. After lunch, she "
	"ran back to the garden, but the ball was gone. She looked under the tree and behind "
	"the flowers. Then she heard a bark. A small puppy had the ball in its mouth, and",
};
#define N_PROMPTS	(sizeof(prompts) / sizeof(prompts[0]))

struct seq_out {
	int tokens[64];
	unsigned int n;
	int end;
};

static unsigned int max_new_of(unsigned int i)
{
	return 3 + (i * 7) % 30;
}

/*
 * Runs sequences @first.. through a batch of @slots on @m, each free slot
 * taken before each step; @peak gets the most jobs of a step.
 */
static int run(struct wafer_model *m, unsigned int slots, unsigned int first, unsigned int n,
	       struct seq_out *out, unsigned int *peak)
{
	struct wafer_batch_stats st;
	struct wafer_batch_opts bo = { .slots = slots, .ctx_len = CTX, .prefill_chunk = 200 };
	struct wafer_batch_event ev[SLOTS];
	unsigned int i, started = 0;
	struct wafer_batch *b;
	int ids[1024], k, ret = 0;

	if (wafer_batch_create(m, &bo, &b))
		return -1;
	while (!ret && (started < n || wafer_batch_active(b))) {
		while (!ret && started < n && wafer_batch_active(b) < slots) {
			unsigned int s = first + started;
			struct wafer_batch_seq sq = { .max_new = max_new_of(s) };

			k = wafer_tokenizer_encode(tok, prompts[s % N_PROMPTS], 1, 0, ids, 1024);
			if (k < 1 || wafer_batch_start(b, ids, (unsigned int)k, &sq, s) < 0)
				ret = -1;
			started++;
		}
		k = wafer_batch_step(b, ev, SLOTS, &st);
		if (k < 0)
			ret = -1;
		if (st.jobs > *peak)
			*peak = (unsigned int)st.jobs;
		for (i = 0; !ret && i < (unsigned int)k; i++) {
			struct seq_out *o = &out[ev[i].user_data];

			if (ev[i].token >= 0 && o->n < 64)
				o->tokens[o->n++] = ev[i].token;
			if (ev[i].end)
				o->end = ev[i].end;
			if (ev[i].end == WAFER_BATCH_FAILED)
				ret = -1;
		}
	}
	wafer_batch_destroy(b);
	return ret;
}

/* The longest prompt is more than one pipeline job's tokens, and fits the context. */
static void test_longest_prompt_two_jobs(void)
{
	int ids[1024], longest;

	longest = wafer_tokenizer_encode(tok, prompts[N_PROMPTS - 1], 1, 0, ids, 1024);
	wt_ok(longest > WAFER_PIPE_MAX_TOKENS && longest + 33 <= CTX,
	      "the longest prompt (%d tokens) takes two jobs of at most %u", longest,
	      WAFER_PIPE_MAX_TOKENS);
}

/*
 * SEQS sequences batched through SLOTS slots on a pipeline of 3 give each
 * sequence's tokens and end as it has alone on one device.
 */
static void test_pipeline_batched_as_alone(struct wafer_model *m1, struct wafer_model *m3)
{
	static struct seq_out alone[SEQS], piped[SEQS];
	unsigned int i, same = 0, ends = 0, peak = 0, peak1 = 0;

	for (i = 0; i < SEQS; i++)
		if (run(m1, 1, i, 1, alone, &peak1))
			wt_diag("sequence %u alone failed: %s", i, wafer_last_error());
	if (!wt_ok(!run(m3, SLOTS, 0, SEQS, piped, &peak), "%u sequences through %u slots on "
		   "the pipeline", SEQS, SLOTS))
		wt_diag("%s", wafer_last_error());
	wt_ok(peak == SLOTS, "a step ran %u jobs, more than the pipeline holds in flight", peak);
	for (i = 0; i < SEQS; i++) {
		same += alone[i].n && alone[i].n == piped[i].n &&
			!memcmp(alone[i].tokens, piped[i].tokens, alone[i].n * sizeof(int));
		ends += piped[i].end == alone[i].end && (piped[i].end == WAFER_BATCH_MAX_NEW ||
							 piped[i].end == WAFER_BATCH_BOS);
	}
	wt_ok(same == SEQS, "each sequence's tokens on the pipeline, batched, as alone on one "
	      "device (%u of %u)", same, SEQS);
	wt_ok(ends == SEQS, "and each ends as alone (%u of %u)", ends, SEQS);
}

int main(void)
{
	struct wafer_open_opts one = { .backend = WAFER_BACKEND_INPROC }, o[3] = { one, one, one };
	struct wafer_pipe_opts po = { .n_devices = 3, .devices = o };
	struct wafer_convert_opts co = { .wbits = 8, .group_size = 32 };
	const char *mp = wt_model_path("stories260K.bin"), *tp;
	struct wafer_model *m1 = NULL, *m3 = NULL;
	struct wafer_dev *d1 = NULL, *d3 = NULL;
	char *model = mp ? strdup(mp) : NULL, *tokpath;

	tp = wt_model_path("tok512.bin");
	tokpath = tp ? strdup(tp) : NULL;
	if (!wt_ok(model && tokpath && !wafer_tokenizer_load(tokpath, 512, &tok) &&
		   !wafer_open(&one, &d1) && !wafer_model_load_file(d1, model, &co, &m1) &&
		   !wafer_open_pipeline(&po, &d3) && !wafer_model_load_file(d3, model, &co, &m3),
		   "the shared model on one device and over a pipeline of 3"))
		return wt_done();
	test_longest_prompt_two_jobs();
	test_pipeline_batched_as_alone(m1, m3);
	wafer_model_unload(m3);
	wafer_model_unload(m1);
	wafer_close(d3);
	wafer_close(d1);
	wafer_tokenizer_free(tok);
	free(model);
	free(tokpath);
	return wt_done();
}
