/* SPDX-License-Identifier: MIT */
/*
 * wafer/text.h - llama2.c's tokenizer byte for byte, sampling over a
 * result's top-k, and generation: a prompt in, pieces streamed to a
 * callback.
 *
 * Part of the public API; include "wafer.h", which includes every topic.
 */
#ifndef WAFER_H_TEXT
#define WAFER_H_TEXT

#include "job.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --------------------------------------------------------- tokenizer -- */

/** A llama2.c tokenizer (opaque). */
struct wafer_tokenizer;

#define WAFER_TOKEN_BOS	1
#define WAFER_TOKEN_EOS	2

/**
 * wafer_tokenizer_load() - read a llama2.c tokenizer.bin
 * @path: file: u32 max_token_length, then per token f32 score, i32 len,
 *	len bytes
 * @vocab_size: tokens to read (the model's vocab_size)
 * @out: receives the tokenizer
 *
 * Return: 0 or a negative errno.
 */
int wafer_tokenizer_load(const char *path, unsigned int vocab_size,
			 struct wafer_tokenizer **out);

/** wafer_tokenizer_free() - release a tokenizer (NULL is a no-op). */
void wafer_tokenizer_free(struct wafer_tokenizer *t);

/** wafer_tokenizer_vocab_size() - tokens in the vocabulary. */
unsigned int wafer_tokenizer_vocab_size(const struct wafer_tokenizer *t);

/**
 * wafer_tokenizer_encode() - text to tokens, as llama2.c run.c encode()
 * @t: tokenizer
 * @text: UTF-8 text
 * @bos: prepend BOS (1)
 * @eos: append EOS (2)
 * @tokens: output
 * @max: capacity of @tokens (the merged tokens); strlen(@text) + 3 always
 *	suffices
 *
 * A dummy " " is prepended to non-empty text, code points missing from the
 * vocabulary fall back to byte tokens (<0xNN>, id byte + 3), then the pair
 * whose merge has the highest score is merged until none can be (the
 * leftmost of equal scores first), in O(n log n).  Text too long to merge
 * into @max tokens is refused in time linear in its bytes.
 *
 * Return: the number of tokens, or a negative errno (-ENOSPC if @max is too
 * small).
 */
int wafer_tokenizer_encode(const struct wafer_tokenizer *t, const char *text,
			   int bos, int eos, int *tokens, unsigned int max);

/**
 * wafer_tokenizer_decode() - the text of @token following @prev, as run.c
 * @t: tokenizer
 * @prev: previous token (a leading space is stripped after BOS)
 * @token: token
 *
 * Byte tokens "<0xNN>" decode to the single byte.
 *
 * Return: a string owned by @t, or NULL for an out-of-range @token.
 */
const char *wafer_tokenizer_decode(const struct wafer_tokenizer *t, int prev, int token);

/**
 * wafer_piece_printable() - llama2.c safe_printf()'s test
 * @piece: a decoded piece, or NULL
 *
 * Return: 0 for NULL, "" and single bytes that are neither printable nor
 * whitespace (control codes from byte tokens); 1 otherwise.
 */
int wafer_piece_printable(const char *piece);

/* ---------------------------------------------------------- sampling -- */

/**
 * struct wafer_sampler - llama2.c's sampler over a result's top-k
 * @temperature: 0 = greedy (the device's argmax)
 * @top_p: nucleus threshold; <= 0 or >= 1 samples the whole top-k
 * @rng: xorshift64* state (llama2.c random_u32); never 0
 */
struct wafer_sampler {
	float temperature;
	float top_p;
	uint64_t rng;
};

/** wafer_sampler_init() - set parameters; @seed 0 is replaced by 1. */
void wafer_sampler_init(struct wafer_sampler *s, float temperature, float top_p,
			uint64_t seed);

/**
 * wafer_sample() - pick the next token from a result
 * @s: sampler
 * @r: result; with temperature > 0 it needs top_k >= 1 (softmax over the
 *	top-k logits / temperature, then top-p as llama2.c sample_topp())
 *
 * Return: a token id.
 */
int wafer_sample(struct wafer_sampler *s, const struct wafer_token_result *r);

/* -------------------------------------------------------- generation -- */

/**
 * struct wafer_gen_opts - wafer_generate() parameters
 * @steps: positions to run, prompt included, as llama2.c -n (0 or above
 *	the context length: the context length)
 * @temperature: 0 = greedy
 * @top_p: nucleus sampling threshold (llama2.c default 0.9)
 * @seed: RNG seed (0: 1)
 * @top_k: pairs the device returns per position (0: WAFER_MAX_TOPK)
 * @slot: KV slot of the context to use
 * @on_piece: called for every piece as produced (prompt pieces first, then
 *	generated ones), with the token, its decoded text and whether it came
 *	from the prompt; a non-zero return stops generation
 * @arg: first argument of @on_piece
 */
struct wafer_gen_opts {
	unsigned int steps;
	float temperature;
	float top_p;
	uint64_t seed;
	unsigned int top_k;
	unsigned int slot;
	int (*on_piece)(void *arg, int token, const char *piece, int from_prompt);
	void *arg;
};

/**
 * struct wafer_gen_stats - what wafer_generate() measured
 * @prompt_tokens: prompt tokens, BOS included
 * @generated_tokens: tokens sampled
 * @jobs: jobs submitted
 * @total_ns: host time of the whole generation
 * @ttft_ns: host time until the first sampled token was known
 * @decode_ns: host time from the first sampled token to the last
 * @device_ns: modelled device time, all jobs
 * @decode_device_ns: modelled device time of the decode jobs
 */
struct wafer_gen_stats {
	unsigned int prompt_tokens;
	unsigned int generated_tokens;
	unsigned int jobs;
	uint64_t total_ns;
	uint64_t ttft_ns;
	uint64_t decode_ns;
	uint64_t device_ns;
	uint64_t decode_device_ns;
};

/**
 * wafer_generate() - run a prompt and sample a continuation
 * @ctx: context (the sequence starts at position 0 of @opts->slot)
 * @tok: tokenizer of the context's model
 * @prompt: text, or NULL / "" for none (BOS only)
 * @opts: parameters
 * @stats: filled (may be NULL)
 *
 * The same loop as llama2.c run.c generate(): the prompt is encoded with
 * BOS, prefilled in as few jobs as the device allows, then one job per
 * token; generation stops after @opts->steps positions or when BOS is
 * sampled.  Pieces follow llama2.c's decode().
 *
 * Return: 0 or a negative errno.
 */
int wafer_generate(struct wafer_ctx *ctx, const struct wafer_tokenizer *tok,
		   const char *prompt, const struct wafer_gen_opts *opts,
		   struct wafer_gen_stats *stats);

#ifdef __cplusplus
}
#endif

#endif /* WAFER_H_TEXT */
