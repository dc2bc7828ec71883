/* SPDX-License-Identifier: MIT */
/*
 * wafer/batch.h - continuous batching (wafer serve): sequences joining
 * and leaving a running batch between steps.
 *
 * Part of the public API; include "wafer.h", which includes every topic.
 */
#ifndef WAFER_H_BATCH
#define WAFER_H_BATCH

#include "text.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- continuous batching (wafer serve) ---- */

/**
 * struct wafer_batch_opts - wafer_batch_create() parameters
 * @slots: sequences running at once, 1..256 (one context slot each)
 * @ctx_len: positions per sequence (0: the model's seq_len)
 * @prefill_chunk: most prompt tokens of one sequence run per step, so a
 *	long prompt shares each step with the running sequences' decode
 *	(0: 32; also capped by the device's max_tokens_per_job)
 * @micro_batches: 0 or 1: each step runs every sequence's job and waits
 *	for all of them (lockstep); M > 1 (up to 64, and @slots at most the
 *	device's max_inflight_jobs): slot i is in micro-batch i % M, and the
 *	micro-batches are kept in flight: each wafer_batch_step() submits
 *	every micro-batch that is not in flight and reaps the oldest one,
 *	returning its sequences' events, so on a pipeline of devices the
 *	micro-batches are at different devices at once.  A sequence's tokens
 *	are the same either way.  Jobs stay in flight between steps: a slot
 *	cancelled then is free once its job comes back
 */
struct wafer_batch_opts {
	unsigned int slots;
	unsigned int ctx_len;
	unsigned int prefill_chunk;
	unsigned int micro_batches;
};

/**
 * struct wafer_batch_seq - one sequence's sampling parameters
 * @max_new: tokens to sample at most, >= 1
 * @temperature: 0 = greedy
 * @top_p: nucleus threshold (<= 0 or >= 1: the whole top-k)
 * @seed: the sequence's own RNG seed (0: 1), so its text does not depend
 *	on what else runs in the batch
 * @presence_penalty: subtracted from the logit of every token sampled
 *	before in this sequence, before sampling (OpenAI's; 0: none)
 * @frequency_penalty: ... times the times it was sampled (0: none)
 * @prompt_results: the prompt's jobs return a result per position, and
 *	the events carry them (scoring a prompt: echo with logprobs)
 */
struct wafer_batch_seq {
	unsigned int max_new;
	float temperature;
	float top_p;
	uint64_t seed;
	float presence_penalty;
	float frequency_penalty;
	int prompt_results;
};

/**
 * enum wafer_batch_end - why a sequence ended
 * @WAFER_BATCH_RUNNING: it did not
 * @WAFER_BATCH_BOS: BOS was sampled (llama2.c's end of text)
 * @WAFER_BATCH_MAX_NEW: @max_new tokens were sampled
 * @WAFER_BATCH_CONTEXT: the context is full
 * @WAFER_BATCH_FAILED: a job failed (the event's status says why)
 */
enum wafer_batch_end {
	WAFER_BATCH_RUNNING,
	WAFER_BATCH_BOS,
	WAFER_BATCH_MAX_NEW,
	WAFER_BATCH_CONTEXT,
	WAFER_BATCH_FAILED,
};

/**
 * struct wafer_batch_event - what one step did for one sequence
 * @slot: the sequence's slot
 * @user_data: given to wafer_batch_start()
 * @token: the token sampled, or -1 (none: BOS or a failure)
 * @prev: the token before it (for wafer_tokenizer_decode())
 * @end: enum wafer_batch_end; when not RUNNING the slot is free again
 * @status: 0, or the failed job's negative errno
 * @results: the device's results of the step's job, @n_results of them,
 *	WAFER_BATCH_RESULT_SIZE bytes apart (WAFER_BATCH_RESULT()); valid
 *	until the next wafer_batch_step().  With @token >= 0 the last is
 *	what it was sampled from (before any penalty); earlier ones are the
 *	prompt's (wafer_batch_seq.prompt_results)
 * @n_results: how many (0: none)
 * @pos0: the position the first follows
 */
struct wafer_batch_event {
	unsigned int slot;
	uint64_t user_data;
	int token;
	int prev;
	int end;
	int status;
	const void *results;
	unsigned int n_results;
	unsigned int pos0;
};

/** Bytes between an event's results. */
#define WAFER_BATCH_RESULT_SIZE	WAFER_RESULT_SIZE(WAFER_MAX_TOPK)
/** The @i-th of event @ev's results. */
#define WAFER_BATCH_RESULT(ev, i) ((const struct wafer_token_result *) \
	((const char *)(ev)->results + (size_t)(i) * WAFER_BATCH_RESULT_SIZE))

/**
 * struct wafer_batch_stats - what one step cost
 * @jobs: jobs run
 * @tokens: positions run (prefill chunks and decodes)
 * @device_ns: modelled device time of those jobs, summed
 */
struct wafer_batch_stats {
	unsigned int jobs;
	unsigned int tokens;
	uint64_t device_ns;
};

struct wafer_batch;

/**
 * wafer_batch_create() - a context of @o->slots sequences and its buffers
 * @m: model
 * @o: parameters
 * @out: receives the batch
 *
 * Return: 0 or a negative errno (wafer_last_error() says why).
 */
int wafer_batch_create(struct wafer_model *m, const struct wafer_batch_opts *o,
		       struct wafer_batch **out);

/** wafer_batch_destroy() - free a batch (NULL is a no-op). */
void wafer_batch_destroy(struct wafer_batch *b);

/**
 * wafer_batch_start() - put a sequence into a free slot
 * @b: batch
 * @prompt: token ids, BOS first; 1..ctx_len of them
 * @n: how many
 * @seq: sampling parameters
 * @user_data: returned in the sequence's events
 *
 * The prompt runs in chunks over the next steps, then one token a step.
 *
 * Return: the slot, -EBUSY when none is free, -E2BIG when the prompt does
 * not fit the context, -EINVAL on bad parameters.
 */
int wafer_batch_start(struct wafer_batch *b, const int *prompt, unsigned int n,
		      const struct wafer_batch_seq *seq, uint64_t user_data);

/**
 * wafer_batch_cancel() - end the sequence in @slot now (between steps)
 * Return: 0, or -EINVAL if the slot holds no sequence.
 */
int wafer_batch_cancel(struct wafer_batch *b, unsigned int slot);

/** wafer_batch_active() - sequences in slots. */
unsigned int wafer_batch_active(const struct wafer_batch *b);

/** wafer_batch_slots() - slots of the batch. */
unsigned int wafer_batch_slots(const struct wafer_batch *b);

/** wafer_batch_ctx_len() - positions per sequence. */
unsigned int wafer_batch_ctx_len(const struct wafer_batch *b);

/**
 * wafer_batch_step() - one step: a job per active sequence (its next
 * prompt chunk, or its last sampled token), all submitted together, reaped,
 * and a token sampled for each sequence whose prompt is done
 * @b: batch
 * @ev: receives at most one event per active sequence
 * @max: capacity of @ev (wafer_batch_slots() always suffices)
 * @st: filled (may be NULL)
 *
 * Return: the number of events, or a negative errno when the device
 * failed as a whole (every sequence then ended with WAFER_BATCH_FAILED).
 */
int wafer_batch_step(struct wafer_batch *b, struct wafer_batch_event *ev, unsigned int max,
		     struct wafer_batch_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* WAFER_H_BATCH */
