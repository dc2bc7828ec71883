/* SPDX-License-Identifier: MIT */
/*
 * wafer/model.h - buffers the device reads job inputs from and writes
 * results to; models (a llama2.c checkpoint converted and loaded into
 * stage SRAM); contexts (the KV cache of a number of sequences, "slots").
 *
 * Part of the public API; include "wafer.h", which includes every topic.
 */
#ifndef WAFER_H_MODEL
#define WAFER_H_MODEL

#include "multi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------------- buffers -- */

/** A buffer the device can read and write (opaque). */
struct wafer_bo;

/**
 * wafer_bo_create() - allocate and map a buffer
 * @dev: device
 * @size: bytes (rounded up to the page size)
 * @out: receives the buffer, mapped and zeroed
 *
 * Kernel: a GEM BO mmap'd from the device file; inproc: host memory.  When
 * the device has a NUMA node, the pages are placed there (libnuma).
 *
 * Return: 0 or a negative errno.
 */
int wafer_bo_create(struct wafer_dev *dev, size_t size, struct wafer_bo **out);

/** wafer_bo_map() - the CPU address of the buffer (never NULL). */
void *wafer_bo_map(const struct wafer_bo *bo);

/** wafer_bo_size() - the buffer's size in bytes (after rounding). */
size_t wafer_bo_size(const struct wafer_bo *bo);

/** wafer_bo_destroy() - unmap and free a buffer (NULL is a no-op). */
void wafer_bo_destroy(struct wafer_bo *bo);

/* ------------------------------------------------------------ models -- */

/**
 * struct wafer_moe_opts - sparse upcycling of a dense model
 * @n_experts: routed experts per layer (1..512 with @n_shared)
 * @top_k: routed experts per token, 1..min(@n_experts, 64)
 * @n_shared: experts every token runs
 * @gate: WAFER_MOE_GATE_SOFTMAX over the top-k, _SIGMOID normalised over
 *	the top-k (DeepSeek-V3, Kimi), _UNIT gates (slices with @top_k =
 *	@n_experts: the dense model exactly)
 * @copies: every expert a copy of the dense FFN (sparse upcycling's
 *	initialisation) instead of a slice of it; the @n_shared + @top_k that
 *	run each weigh 1 / (@n_shared + @top_k), which must be a power of two
 *	(the down projection's exponent lowered, so the sum is exact): the
 *	dense model exactly at any top-k; @gate is not used
 */
struct wafer_moe_opts {
	unsigned int n_experts;
	unsigned int top_k;
	unsigned int n_shared;
	unsigned int gate;
	unsigned int copies;
};

#define WAFER_MOE_GATE_SOFTMAX	0
#define WAFER_MOE_GATE_SIGMOID	1
#define WAFER_MOE_GATE_UNIT	2

/**
 * wafer_moe_upcycle() - turn a packed dense blob into a mixture of experts
 * @dense: a dense blob (wafer_convert())
 * @dense_len: its length
 * @o: the experts
 * @blob: receives a malloc'd blob; free() it
 * @len: its length
 *
 * Each layer's FFN hidden units are split into @o->n_shared +
 * @o->n_experts contiguous experts on the dense W2's scale groups (so
 * there must be at least as many groups), keeping the dense quantised
 * weights; router row e is the mean of expert e's W1 rows.  With
 * @o->copies every expert is the whole dense FFN instead (the router the
 * same), each weighing 1 / (shared + top-k).
 *
 * Return: 0 or a negative errno with a message.
 */
int wafer_moe_upcycle(const void *dense, size_t dense_len, const struct wafer_moe_opts *o,
		      void **blob, size_t *len);

/**
 * struct wafer_convert_opts - llama2.c checkpoint -> device blob
 * @wbits: layer weights: 8 or 4 (0: 8)
 * @group_size: weights per quantisation scale, 1..256, even for 4-bit; a
 *	short tail group is handled (0: 32)
 * @keep_embed_cls_int8: with @wbits 4, keep the token embedding and the
 *	classifier at 8 bits
 * @kv_int8: int8 KV cache with per-head scales (default: int16)
 * @early_layers: an early-exit model (a speculative draft): only the first
 *	@early_layers layers, then the final norm and the classifier (0: all
 *	layers; at most the checkpoint's layers)
 * @moe: mixture of experts by sparse upcycling (@moe.n_experts 0: dense);
 *	see wafer_moe_upcycle()
 * @stream: wafer_model_load_file() only: weight streaming, see
 *	wafer_model_load_stream() (0, WAFER_STREAM_OFF: resident only)
 * @expert_group: wafer_model_load_file() only: routed experts per expert
 *	group, each MoE layer's groups placed across the stages with the most
 *	free SRAM (WAFER_CAP_EXPERT_GROUPS; 0: the device's default, experts
 *	with their layer unless the layers do not fit so); results are the
 *	same.  -EINVAL on a model without experts or with streamed weights
 * @progress: if set, called as conversion proceeds with the phase's name and
 *	the fraction done, in [0, 1]
 * @progress_arg: its first argument
 */
struct wafer_convert_opts {
	unsigned int wbits;
	unsigned int group_size;
	int keep_embed_cls_int8;
	int kv_int8;
	unsigned int early_layers;
	struct wafer_moe_opts moe;
	void (*progress)(void *arg, const char *what, double done);
	void *progress_arg;
	int stream;
	unsigned int expert_group;
};

/**
 * wafer_convert() - convert a llama2.c (v0, fp32) checkpoint into a blob
 * @ckpt_path: the checkpoint file, or a packed blob (`wafer convert`'s
 *	output, recognised by its magic): taken as it is, the quantisation
 *	options unused, upcycled if @opts->moe asks
 * @opts: options (NULL: int8, group 32)
 * @blob: receives a malloc'd blob; free() it
 * @len: its length
 *
 * Return: 0 or a negative errno (-EINVAL: bad options or checkpoint).
 */
int wafer_convert(const char *ckpt_path, const struct wafer_convert_opts *opts,
		  void **blob, size_t *len);

/**
 * struct wafer_synth_opts - a synthetic model (wafer_synthesize())
 * @n_layers: layers (1..1024)
 * @dim: width, @n_heads x the head width
 * @hidden_dim: feed-forward width; 0: with experts, one scale group per
 *	expert (the experts and shared ones times the group size), else 4 x @dim
 * @n_heads: query heads
 * @n_kv_heads: key/value heads (divides @n_heads)
 * @vocab: tokens (512: the shared tok512 tokenizer's)
 * @seq_len: longest context
 * @seed: the weights' pseudo-random seed: the same seed, the same blob
 */
struct wafer_synth_opts {
	unsigned int n_layers;
	unsigned int dim;
	unsigned int hidden_dim;
	unsigned int n_heads;
	unsigned int n_kv_heads;
	unsigned int vocab;
	unsigned int seq_len;
	uint64_t seed;
};

/**
 * wafer_synth_preset() - a tiny model of a wafer_plan() preset's shape
 * @preset: a preset's name (wafer_plan_preset_find(), e.g. "sol")
 * @s: filled: the preset's layers, 8 query heads of width 4 and key/value
 *	heads in the preset's ratio (at least one), vocabulary 512, context
 *	512, @hidden_dim 0, seed 1
 * @moe: filled: the preset's experts, top-k and shared experts (0 experts:
 *	dense), softmax gate
 *
 * Return: 0, or -EINVAL (an unknown preset, or one whose experts are not in
 * every layer: the upcycler gives every layer the same experts).
 */
int wafer_synth_preset(const char *preset, struct wafer_synth_opts *s,
		       struct wafer_moe_opts *moe);

/**
 * wafer_synthesize() - a blob of a given shape with pseudo-random weights
 * @s: the shape and seed
 * @opts: quantisation and experts as wafer_convert() takes them (the
 *	checkpoint is synthetic, fp32, packed and upcycled the same way)
 * @blob: receives a malloc'd blob; free() it
 * @len: its length
 *
 * The weights are uniform in +-1 for the embedding and +-1/sqrt(fan-in)
 * for the matrices and the classifier (its own), the attention's and the
 * FFN's output projections 1/sqrt(2 x layers) of that (so that greedy text
 * does not settle on one token), the norms' gains 1, drawn from a generator
 * seeded by @s->seed: a model for tests and projections (wafer plan's
 * presets at a width that runs in process and in a test guest).
 *
 * Return: 0 or a negative errno with a message naming the field.
 */
int wafer_synthesize(const struct wafer_synth_opts *s, const struct wafer_convert_opts *opts,
		     void **blob, size_t *len);

/**
 * struct wafer_model_info - a loaded model
 * @dim: width
 * @hidden_dim: feed-forward width
 * @n_layers: layers
 * @n_heads: query heads
 * @n_kv_heads: key/value heads
 * @vocab_size: tokens
 * @seq_len: longest context
 * @blob_bytes: size of the blob
 * @sram_bytes: SRAM the weights take on the device
 * @n_experts: routed experts in every layer's FFN (0: dense FFNs)
 * @n_experts_active: routed experts per token (top-k)
 * @n_shared_experts: experts every token runs
 * @moe_gate: 0 softmax, 1 normalised sigmoid, 2 unit (wafer_moe_opts.gate)
 * @weights_streamed: the layers' weights stream from host memory (weight
 *	streaming) rather than sit in SRAM
 * @stream_fallback: WAFER_STREAM_AUTO streamed them because the model did
 *	not fit resident
 */
struct wafer_model_info {
	uint32_t dim;
	uint32_t hidden_dim;
	uint32_t n_layers;
	uint32_t n_heads;
	uint32_t n_kv_heads;
	uint32_t vocab_size;
	uint32_t seq_len;
	uint64_t blob_bytes;
	uint64_t sram_bytes;
	uint32_t n_experts;
	uint32_t n_experts_active;
	uint32_t n_shared_experts;
	uint32_t moe_gate;
	int weights_streamed;
	int stream_fallback;
};

/** A model loaded on a device (opaque). */
struct wafer_model;

/**
 * wafer_model_load() - load a blob into the device's stage SRAM
 * @dev: device
 * @blob: the blob (firmware-sim's packed format); copied, may be freed after
 * @len: its length
 * @out: receives the model
 *
 * Return: 0 or a negative errno; -ENOSPC when the model does not fit (the
 * message says how much SRAM it needs).
 */
int wafer_model_load(struct wafer_dev *dev, const void *blob, size_t len,
		     struct wafer_model **out);

/**
 * enum wafer_stream - where a model's layer weights live
 * @WAFER_STREAM_OFF: in stage SRAM (resident); -ENOSPC if they do not fit
 * @WAFER_STREAM_AUTO: resident if the model fits, else streamed
 *	(wafer_model_info.stream_fallback says it happened)
 * @WAFER_STREAM_ON: streamed: the weights stay in host memory and every
 *	stage reads its layers, one by one, into a two-layer SRAM window
 *	(the next layer's read overlapping this one's compute); embedding,
 *	head, KV cache and activations stay in SRAM.  Results are the
 *	resident ones bit for bit; the modelled time adds the reads, shared
 *	by the sequences in flight.
 */
enum wafer_stream {
	WAFER_STREAM_OFF,
	WAFER_STREAM_AUTO,
	WAFER_STREAM_ON,
};

/**
 * wafer_model_load_stream() - wafer_model_load() with weight streaming
 * @dev: device
 * @blob: the blob; with streaming libwafer keeps a copy until the unload
 * @len: its length
 * @stream: enum wafer_stream
 * @out: receives the model
 *
 * Return: 0 or a negative errno; -EOPNOTSUPP if @stream is
 * WAFER_STREAM_ON and the driver cannot stream (no WAFER_CAP_WEIGHT_STREAM).
 */
int wafer_model_load_stream(struct wafer_dev *dev, const void *blob, size_t len,
			    int stream, struct wafer_model **out);

/**
 * wafer_model_load_file() - wafer_convert() + wafer_model_load()
 * @dev: device
 * @ckpt_path: llama2.c checkpoint
 * @opts: conversion options (NULL: defaults)
 * @out: receives the model
 *
 * Return: 0 or a negative errno.
 */
int wafer_model_load_file(struct wafer_dev *dev, const char *ckpt_path,
			  const struct wafer_convert_opts *opts,
			  struct wafer_model **out);

/** wafer_model_get_info() - dimensions and sizes of a loaded model. */
const struct wafer_model_info *wafer_model_get_info(const struct wafer_model *m);

/**
 * struct wafer_model_part - where one layer range of a model sits
 * @member: pipeline member index (0 on a single device)
 * @device_index: that device's N of /dev/accel/accelN, or -1 (inproc)
 * @layer_first: first layer of the range
 * @layer_count: layers
 * @sram_bytes: SRAM the range's weights take on the device
 * @kv_bytes: SRAM the range's KV caches take there (contexts alive)
 * @embed: the range holds the token embedding
 * @head: the range holds the final norm and classifier
 * @chained: a job of this range waits in the device for the previous
 *	range's (a fence), rather than being posted by the library when that
 *	one completed (0 for the first range)
 * @part: WAFER_PART_*: whole layers, or (wafer_open_afd()) the attention
 *	or the FFN part of each layer of the range, or (expert parallelism)
 *	routed experts of each MoE layer of the range
 * @expert_first: WAFER_PART_EXPERTS: the first routed expert it holds
 * @expert_count: WAFER_PART_EXPERTS: routed experts it holds (an FFN part
 *	with expert devices holds none: 0 here, its router and shared ones)
 */
struct wafer_model_part {
	unsigned int member;
	int device_index;
	unsigned int layer_first;
	unsigned int layer_count;
	uint64_t sram_bytes;
	uint64_t kv_bytes;
	int embed;
	int head;
	int chained;
	int part;
	unsigned int expert_first;
	unsigned int expert_count;
};

/* struct wafer_model_part.part */
#define WAFER_PART_WHOLE	0
#define WAFER_PART_ATTN		1	/* attention and its KV cache */
#define WAFER_PART_FFN		2	/* the feed-forward block (or MoE) */
#define WAFER_PART_EXPERTS	3	/* routed experts (expert parallelism) */

/** wafer_model_parts() - layer ranges of a model: 1 on a single device. */
unsigned int wafer_model_parts(const struct wafer_model *m);

/**
 * wafer_model_part() - describe the @i-th layer range of a model
 * @m: model
 * @i: range, < wafer_model_parts()
 * @p: filled
 *
 * Return: 0, or -EINVAL for an out-of-range @i.
 */
int wafer_model_part(const struct wafer_model *m, unsigned int i, struct wafer_model_part *p);

/** wafer_model_unload() - unload (its contexts must be gone); NULL is a no-op. */
void wafer_model_unload(struct wafer_model *m);

/* ---------------------------------------------------------- contexts -- */

/** A KV cache for @slots sequences of a model (opaque). */
struct wafer_ctx;

/**
 * wafer_ctx_create() - allocate KV cache on the device
 * @m: model
 * @slots: independent sequences, 1..256
 * @ctx_len: positions per sequence, 1..the model's seq_len
 * @out: receives the context
 *
 * Return: 0 or a negative errno (-ENOSPC: the KV cache does not fit).
 */
int wafer_ctx_create(struct wafer_model *m, unsigned int slots,
		     unsigned int ctx_len, struct wafer_ctx **out);

/** wafer_ctx_len() - positions per slot. */
unsigned int wafer_ctx_len(const struct wafer_ctx *ctx);

/** wafer_ctx_slots() - sequences. */
unsigned int wafer_ctx_slots(const struct wafer_ctx *ctx);

/** wafer_ctx_model() - the context's model. */
struct wafer_model *wafer_ctx_model(const struct wafer_ctx *ctx);

/** wafer_ctx_destroy() - free the KV cache (NULL is a no-op). */
void wafer_ctx_destroy(struct wafer_ctx *ctx);

#ifdef __cplusplus
}
#endif

#endif /* WAFER_H_MODEL */
