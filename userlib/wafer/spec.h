/* SPDX-License-Identifier: MIT */
/*
 * wafer/spec.h - speculative decoding: a draft model proposes tokens, the
 * target verifies them.
 *
 * Part of the public API; include "wafer.h", which includes every topic.
 */
#ifndef WAFER_H_SPEC
#define WAFER_H_SPEC

#include "batch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------- speculative decoding -- */

/** Most tokens a draft proposes per verify job (K). */
#define WAFER_SPEC_MAX_DRAFT	16

/**
 * enum wafer_draft_kind - where draft tokens come from
 * @WAFER_DRAFT_NGRAM: no model: prompt lookup, the continuation of the
 *	latest earlier occurrence of the longest suffix (at most @n tokens)
 *	of the prompt and output so far
 * @WAFER_DRAFT_INT4: the target's checkpoint quantised to int4
 * @WAFER_DRAFT_EARLY: the target's first @n layers, its final norm and
 *	classifier (an early-exit model, struct wafer_convert_opts.early_layers)
 * @WAFER_DRAFT_FILE: another llama2.c checkpoint with the same vocabulary
 */
enum wafer_draft_kind {
	WAFER_DRAFT_NGRAM = 1,
	WAFER_DRAFT_INT4,
	WAFER_DRAFT_EARLY,
	WAFER_DRAFT_FILE,
};

/**
 * struct wafer_draft_spec - a draft, as wafer_draft_parse() reads it
 * @kind: enum wafer_draft_kind
 * @n: n-gram: longest suffix matched (1..16, default 3); early: layers
 * @path: file: the checkpoint (points into the parsed string)
 */
struct wafer_draft_spec {
	enum wafer_draft_kind kind;
	unsigned int n;
	const char *path;
};

/**
 * wafer_draft_parse() - "ngram[:N]", "int4", "early:N" or a checkpoint path
 * @s: the text
 * @out: filled
 *
 * Return: 0, or -EINVAL with a message.
 */
int wafer_draft_parse(const char *s, struct wafer_draft_spec *out);

/**
 * wafer_draft_load() - convert and load a draft model for a target
 * @dev: the device to load it on: another than the target's, or the
 *	target's if it holds several models (wafer_draft_load_beside())
 * @d: the draft (not n-gram)
 * @target_ckpt: the target's checkpoint (int4 and early drafts are made
 *	from it)
 * @target_conv: the target's conversion options (NULL: defaults); the
 *	draft keeps its group size and KV format
 * @target: the loaded target, whose vocabulary the draft must share
 * @out: receives the draft model
 *
 * Return: 0 or a negative errno (-EINVAL: another vocabulary, early layers
 * out of range; nothing is left loaded on failure).
 */
int wafer_draft_load(struct wafer_dev *dev, const struct wafer_draft_spec *d,
		     const char *target_ckpt, const struct wafer_convert_opts *target_conv,
		     const struct wafer_model *target, struct wafer_model **out);

/**
 * wafer_draft_load_beside() - wafer_draft_load() on the target's own device
 * @d: the draft (not n-gram)
 * @target_ckpt: see wafer_draft_load()
 * @target_conv: see wafer_draft_load()
 * @target: the loaded target; the draft goes on its device, beside it
 * @out: receives the draft model
 *
 * The draft and the target as two models of one device (a kernel device
 * or an in-process one: struct wafer_info.max_models of 2 or more), as
 * `wafer run --draft` places it by default and `wafer bench -z` on kernel
 * devices.
 *
 * Return: 0; -EOPNOTSUPP for a target over a pipeline or on a device that
 * holds one model at once; or wafer_draft_load()'s error (-ENOSPC: no room
 * beside the target).
 */
int wafer_draft_load_beside(const struct wafer_draft_spec *d, const char *target_ckpt,
			    const struct wafer_convert_opts *target_conv,
			    const struct wafer_model *target, struct wafer_model **out);

/**
 * struct wafer_draft_dev - a draft on an in-process device of its own
 * @dev: the device: the target's profile and SRAM per stage, @stages stages
 * @model: the draft model on it
 * @ctx: its context (one slot)
 * @stages: the device's stages
 */
struct wafer_draft_dev {
	struct wafer_dev *dev;
	struct wafer_model *model;
	struct wafer_ctx *ctx;
	unsigned int stages;
};

/**
 * wafer_draft_load_packed() - a draft on a device of as few stages as hold it
 * @o: the target's in-process device options (profile, SRAM per stage; its
 *	stages, or the profile's, are the most tried)
 * @stages: the draft device's stages; 0: the fewest (from 1 up) on which the
 *	draft and its context fit
 * @d: the draft (not n-gram)
 * @target_ckpt: see wafer_draft_load()
 * @target_conv: see wafer_draft_load()
 * @target: the loaded target
 * @ctx_len: positions of the draft's context
 * @out: receives the device, the draft model, its context and the stages
 *
 * A wafer's stage is a region of its cores; the firmware spreads a model
 * over every stage it has (a layer per stage while there are more stages
 * than layers) and a chunk pays a fabric hop after each stage.  A small
 * draft packed into few stages crosses few hops: its step costs much less
 * than that of a target spread over the wafer, as a deployment would place
 * it (`wafer run --draft-stages`, `wafer bench -z`'s wse3 rows).
 *
 * Return: 0; -EOPNOTSUPP for a kernel backend; -ENOSPC: it fits on no
 * device of 1..max stages (or of @stages); or wafer_draft_load()'s error.
 * Free with wafer_draft_dev_free().
 */
int wafer_draft_load_packed(const struct wafer_open_opts *o, unsigned int stages,
			    const struct wafer_draft_spec *d, const char *target_ckpt,
			    const struct wafer_convert_opts *target_conv,
			    const struct wafer_model *target, unsigned int ctx_len,
			    struct wafer_draft_dev *out);

/** wafer_draft_dev_free() - destroy what wafer_draft_load_packed() made (NULL: none) */
void wafer_draft_dev_free(struct wafer_draft_dev *dd);

/**
 * struct wafer_spec_opts - wafer_generate_spec() parameters
 * @draft_tokens: K, tokens proposed per verify job, 1..WAFER_SPEC_MAX_DRAFT
 * @draft: the draft model's context, on a device of its own; NULL for the
 *	n-gram draft
 * @draft_slot: the slot of @draft to use
 * @ngram: n-gram draft: longest suffix matched, 1..16 (0: 3)
 */
struct wafer_spec_opts {
	unsigned int draft_tokens;
	struct wafer_ctx *draft;
	unsigned int draft_slot;
	unsigned int ngram;
};

/**
 * struct wafer_spec_stats - what speculation did
 * @verifies: target jobs that checked draft tokens (one per round)
 * @drafted: tokens the draft proposed
 * @accepted: of which the target accepted
 * @draft_jobs: jobs of the draft model (prompt included)
 * @verify_ns: modelled time of the verify jobs
 * @draft_ns: modelled time of the draft's jobs after the prompt
 *
 * Tokens per verify = generated tokens / @verifies; the acceptance rate
 * @accepted / @drafted.  The rounds' modelled time, @verify_ns + @draft_ns
 * (draft and target take turns), is also struct wafer_gen_stats'
 * decode_device_ns.
 */
struct wafer_spec_stats {
	unsigned int verifies;
	unsigned int drafted;
	unsigned int accepted;
	unsigned int draft_jobs;
	uint64_t verify_ns;
	uint64_t draft_ns;
};

/**
 * wafer_generate_spec() - wafer_generate() with speculative decoding
 * @ctx: the target's context
 * @tok: tokenizer of the target's model
 * @prompt: text, or NULL / "" for none
 * @opts: as wafer_generate()'s
 * @so: the draft and K
 * @stats: filled (may be NULL)
 * @sst: filled (may be NULL)
 *
 * Each round the draft proposes up to K tokens, and the target runs its
 * last token and the proposals in one job with a result per position
 * (WAFER_JOB_ALL_POSITIONS).  Greedy: the longest prefix equal to the
 * target's argmax is accepted, then the target's token at the first
 * mismatch (or a bonus token when all match), so the text is exactly
 * wafer_generate()'s.  Sampling: a proposal x is accepted with probability
 * min(1, p(x) / q(x)), on rejection a token is drawn from
 * norm(max(0, p - q)) (Leviathan et al. 2023), p and q being the
 * distributions wafer_sample() draws from for the target's and the draft's
 * results, so tokens follow plain sampling's distribution; the same seed
 * gives the same text.  Rejected positions are rewritten by the next round
 * (the target's and the draft's jobs restart at an earlier position).
 *
 * Return: 0 or a negative errno (-EINVAL: K out of range, a draft with
 * another vocabulary, bad slot).
 */
int wafer_generate_spec(struct wafer_ctx *ctx, const struct wafer_tokenizer *tok,
			const char *prompt, const struct wafer_gen_opts *opts,
			const struct wafer_spec_opts *so, struct wafer_gen_stats *stats,
			struct wafer_spec_stats *sst);

#ifdef __cplusplus
}
#endif

#endif /* WAFER_H_SPEC */
