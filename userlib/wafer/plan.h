/* SPDX-License-Identifier: MIT */
/*
 * wafer/plan.h - projections (wafer plan): a model shape placed on
 * devices of a profile and timed as the firmware would run it.
 *
 * Part of the public API; include "wafer.h", which includes every topic.
 */
#ifndef WAFER_H_PLAN
#define WAFER_H_PLAN

#include "trace.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- projection (wafer plan) ---- */

/**
 * struct wafer_plan_shape - a decoder's shape, dense or mixture-of-experts
 * @name: preset name, or what the caller calls it
 * @n_layers: transformer layers
 * @dim: model width
 * @hidden_dim: feed-forward width
 * @n_heads: query heads
 * @n_kv_heads: key/value heads (divides @n_heads)
 * @head_dim: width of one head
 * @vocab: vocabulary size
 * @n_experts: mixture of experts in every layer: routed experts (0: dense)
 * @n_active: routed experts per token
 * @n_shared: experts every token takes
 * @expert_hidden: feed-forward width of one expert
 * @moe_every: with experts: every @moe_every-th layer has them (layers
 *	moe_every-1, 2*moe_every-1, ...), the others a dense FFN of
 *	@hidden_dim; 0 or 1: every layer
 * @weight_bits: the bits its weights are stored in (a packed blob's: 4 or
 *	8), 0 if the shape does not say (presets, checkpoints, custom);
 *	wafer_plan() takes it when struct wafer_plan_opts.weight_bits is 0
 * @tied_head: the head is the embedding (a llama2.c checkpoint's shared
 *	classifier): its parameters count once (its bytes twice: every stage
 *	holding it keeps a copy)
 * @params: parameters the model's tensors hold, counted from a packed
 *	blob's (RMSNorm gains included, the rope tables and a tied head's
 *	copy not); 0: wafer_plan() counts them from the shape
 * @q_latent: multi-head latent attention (DeepSeek-V2/V3, Kimi K2): the
 *	query's latent width (its down-projection's rank; 0: the query is
 *	projected from the model's width directly)
 * @kv_latent: multi-head latent attention: the KV latent's width (0: none,
 *	grouped-query attention over @n_kv_heads); each head then has
 *	@head_dim wide keys without position and values and a @head_dim / 2
 *	wide rotary part, and a position caches @kv_latent + @head_dim / 2
 *	values per layer
 */
struct wafer_plan_shape {
	const char *name;
	unsigned int n_layers;
	unsigned int dim;
	unsigned int hidden_dim;
	unsigned int n_heads;
	unsigned int n_kv_heads;
	unsigned int head_dim;
	unsigned int vocab;
	unsigned int n_experts;
	unsigned int n_active;
	unsigned int n_shared;
	unsigned int expert_hidden;
	unsigned int moe_every;
	unsigned int weight_bits;
	unsigned int tied_head;
	uint64_t params;
	unsigned int q_latent;
	unsigned int kv_latent;
};

/**
 * enum wafer_plan_event_kind - what a traced interval is
 * @WAFER_PLAN_EV_STAGE: a stage working on a chunk
 * @WAFER_PLAN_EV_HOP: a chunk's fabric hop to the next stage (or the host)
 * @WAFER_PLAN_EV_LINK: a chunk's link hop to the next device
 * @WAFER_PLAN_EV_STREAM: weight streaming: a layer's weights (or the
 *	embedding's and head's) coming in from the external store while the
 *	stage computes with them; the layer takes the longer of the two
 * @WAFER_PLAN_EV_DRAFT: speculative decoding: a draft token on the draft's
 *	devices (one process past the target's, its token time each)
 */
enum wafer_plan_event_kind {
	WAFER_PLAN_EV_STAGE,
	WAFER_PLAN_EV_HOP,
	WAFER_PLAN_EV_LINK,
	WAFER_PLAN_EV_STREAM,
	WAFER_PLAN_EV_DRAFT,
};

/**
 * struct wafer_plan_event - one interval of the modelled timeline
 * @kind: enum wafer_plan_event_kind
 * @device: device index
 * @stage: stage index on that device
 * @pos0: the chunk's first position
 * @n_tokens: the chunk's tokens
 * @start_ns: modelled start
 * @dur_ns: modelled duration
 */
struct wafer_plan_event {
	enum wafer_plan_event_kind kind;
	unsigned int device;
	unsigned int stage;
	unsigned int pos0;
	unsigned int n_tokens;
	uint64_t start_ns;
	uint64_t dur_ns;
};

/**
 * struct wafer_plan_link - a link between hosts (libwafer's RDMA transport
 *	between wafer node processes), as a chain's record crosses it
 * @name: a name for it (a built-in's, or the file's)
 * @latency_ns: one record's latency, one way
 * @bytes_per_s: bandwidth
 *
 * A chunk of B bytes crosses it in latency_ns + ceil(B * 1e9 / bytes_per_s)
 * ns.
 */
struct wafer_plan_link {
	const char *name;
	uint64_t latency_ns;
	uint64_t bytes_per_s;
};

/**
 * wafer_plan_link_profile() - the @i-th built-in host link, NULL past the
 *	last (docs/PLAN.md says where each figure comes from)
 */
const struct wafer_plan_link *wafer_plan_link_profile(unsigned int i);

/** wafer_plan_link_find() - a built-in host link by name, or NULL. */
const struct wafer_plan_link *wafer_plan_link_find(const char *name);

/**
 * wafer_plan_link_ns() - modelled ns for @bytes to cross @l
 * @l: the link
 * @bytes: the chunk's activation bytes
 * @latency_pct: the latency at this percent of @l's (100: as given)
 */
uint64_t wafer_plan_link_ns(const struct wafer_plan_link *l, uint64_t bytes,
			    unsigned int latency_pct);

/**
 * struct wafer_plan_opts - what to project
 * @profile: device profile (NULL: "wse3")
 * @devices: device count (lpu: chips), 0 for as few as hold the model
 * @weight_bits: 4, 8 or 16; 0: the shape's (struct wafer_plan_shape.weight_bits,
 *	a packed blob's precision), which it must then give
 * @batch: sequences decoding at once
 * @context: positions of each sequence (its KV cache and the position the
 *	decode step is modelled at)
 * @prompt: prompt tokens for the time to first token (0: min(context, 1024))
 * @draft_params: speculative decoding: parameters of the draft model (0:
 *	none); its shape is wafer_plan_draft_shape()'s, on devices of its own
 * @draft_accept: probability that the target accepts a draft token (0..1)
 * @draft_tokens: tokens the draft proposes per verify step (1..64)
 * @stream: weight streaming: the weights stay in the profile's external
 *	store and pass through one device layer by layer, its SRAM holding
 *	two layers and the KV cache; each decode step streams them all once
 *	for the whole batch
 * @trace: called for every interval of the prompt's timeline and of the
 *	decode step after it, in simulation order (NULL: none)
 * @trace_arg: passed to @trace
 * @draft_head: speculative decoding with a draft head as EAGLE builds it:
 *	one decoder layer of the target's width sharing its embedding and
 *	head, on the target's last device (no devices of its own, no link);
 *	@draft_params unused
 * @deployment: project what a production deployment runs: without a
 *	draft given, the family's draft from the literature (struct
 *	wafer_plan.deploy_draft says which, its tokens per verify and
 *	acceptance, and the acceptance range the band spans)
 * @hosts: hosts the chain of devices spans (0 or 1: one host): the
 *	devices (lpu: groups) split over them as wafer_split_even() splits
 *	layers, the first devices % hosts hosts one device more, as a
 *	--chain HOST:DEVICES,... of wafer node gives them
 * @host_link: the link between two hosts, crossed once per host boundary
 *	in place of the profile's device link (NULL: the device link)
 * @no_spread: keep every layer bigger than a stage on the cores its bytes
 *	fill; 0: each spreads where it decodes soonest, within its share of
 *	its device's stages (docs/TIMING.md, "How a layer is spread")
 */
struct wafer_plan_opts {
	const char *profile;
	unsigned int devices;
	unsigned int weight_bits;
	unsigned int batch;
	unsigned int context;
	unsigned int prompt;
	uint64_t draft_params;
	double draft_accept;
	unsigned int draft_tokens;
	int stream;
	void (*trace)(void *arg, const struct wafer_plan_event *e);
	void *trace_arg;
	int draft_head;
	int deployment;
	unsigned int hosts;
	const struct wafer_plan_link *host_link;
	int no_spread;
};

/**
 * struct wafer_plan - a projection, from the firmware's timing model
 * @profile: the profile's name
 * @devices: devices used (lpu: chips, @groups x @tensor_chips + @extra_chips)
 * @layers_per_device: layers of the fullest device, or group of
 *	@tensor_chips chips: layers are split as wafer_split_layers() splits
 *	them over equal devices, the first (layers % devices) this many, the
 *	others one fewer
 * @tensor_chips: a profile whose layers span chips (lpu): chips each layer
 *	is split over (tensor parallelism); 0 for the others
 * @groups: those groups, each a pipeline stage of the plan
 * @extra_chips: chips holding the embedding and the head
 * @stages: stages used over all devices (a device's layers over at most
 *	its profile's stages, as the firmware places them)
 * @why: why that many devices
 * @device_sram_bytes: SRAM of one device
 * @weight_bytes: weights of the whole model
 * @active_params: parameters a token uses (all of a dense model's)
 * @params: parameters of the whole model (struct wafer_plan_shape.params
 *	when given)
 * @layer_bytes: weights of the largest layer
 * @kv_bytes_per_seq: KV cache of one sequence over all layers
 * @sequences_fit: sequences whose KV fits beside the weights (fullest device)
 * @prompt: tokens of the prompt @ttft_ns is for
 * @ttft_ns: modelled time to the first token of that prompt
 * @token_ns: modelled time of one decode step of a lone sequence
 * @link_ns: of which inter-device links (host links included)
 * @hosts: hosts the chain spans (1 without struct wafer_plan_opts.hosts)
 * @host_link_ns: of @link_ns, the links between hosts
 * @stage_ns: the slowest stage's time for one token
 * @tok_s_single: tokens/s of a lone sequence
 * @tok_s_aggregate: tokens/s of the batch
 * @bound: what bounds the batch: "compute", "sram", "latency" (the mesh
 *	reductions of the slowest stage), "latency (too few sequences to
 *	fill the pipeline)", "host link bandwidth" (a token's activations
 *	over struct wafer_plan_opts.host_link take longer than the slowest
 *	stage), or "kv (fewer sequences fit than the batch)" (then
 *	@tok_s_aggregate is that of the sequences that fit)
 * @single_bound: what bounds a lone sequence's step
 * @draft_devices: speculative decoding: the draft's devices
 * @draft_token_ns: the draft's lone decode step
 * @verify_ns: the target's step over @draft_tokens + 1 positions (one
 *	chunk: the mesh latency paid once)
 * @tokens_per_step: expected tokens a verify step yields,
 *	(1 - a^(k+1)) / (1 - a)
 * @tok_s_spec: a lone sequence's tokens/s with the draft
 * @tok_s_single_low: the band of @tok_s_single: the projection with the
 *	device link's latency doubled (halved for @tok_s_single_high),
 *	times the smallest published / projected ratio of the profile's
 *	calibration figures (struct wafer_plan_figure.band) if below 1
 * @tok_s_single_high: ... times the largest ratio if above 1
 * @tok_s_spec_low: the band of @tok_s_spec: besides the link and the
 *	residuals, acceptance 0.1 lower and a draft twice as large
 * @tok_s_spec_high: acceptance 0.1 higher (at most 0.95), a draft half as
 *	large
 * @residual_low: the smallest published / projected ratio of the
 *	profile's calibration figures, at most 1 (1: none)
 * @residual_high: the largest, at least 1
 * @deploy_draft: with struct wafer_plan_opts.deployment and no draft
 *	given: the draft a deployment of this family runs (NULL otherwise)
 * @deploy_source: where its acceptance comes from
 * @draft_tokens: draft tokens per verify pass used
 * @draft_accept: acceptance used; its band spans @draft_accept_low ..
 *	@draft_accept_high
 * @draft_accept_low: see @draft_accept
 * @draft_accept_high: see @draft_accept
 * @tok_s_spec_ceiling: tokens/s with every draft token accepted: what the
 *	verify pass and the drafting allow at most
 * @layer_span64: on a profile with a mesh, the stages' worth of cores the
 *	largest layer's bytes fill, in 64ths of a stage, when it is bigger
 *	than a stage (0 otherwise: such a layer is not spread)
 * @spread64: the stages' worth of cores, in 64ths, the least spread layer
 *	bigger than a stage is placed on: @layer_span64 when it keeps the
 *	cores its bytes fill (spreading would be slower, or
 *	struct wafer_plan_opts.no_spread)
 * @spread64_max: the most spread one's (a device holding fewer layers
 *	has more stages to spare)
 * @spread_positions: the positions of the pass that placement was chosen
 *	for: 1, or a draft's verify pass (draft tokens + 1)
 */
struct wafer_plan {
	char profile[16];
	unsigned int devices;
	unsigned int layers_per_device;
	unsigned int tensor_chips;
	unsigned int groups;
	unsigned int extra_chips;
	unsigned int stages;
	const char *why;
	uint64_t device_sram_bytes;
	uint64_t weight_bytes;
	uint64_t active_params;
	uint64_t params;
	uint64_t layer_bytes;
	uint64_t kv_bytes_per_seq;
	uint64_t sequences_fit;
	unsigned int prompt;
	uint64_t ttft_ns;
	uint64_t token_ns;
	uint64_t link_ns;
	unsigned int hosts;
	uint64_t host_link_ns;
	uint64_t stage_ns;
	uint64_t tok_s_single;
	uint64_t tok_s_aggregate;
	const char *bound;
	const char *single_bound;
	unsigned int draft_devices;
	uint64_t draft_token_ns;
	uint64_t verify_ns;
	double tokens_per_step;
	uint64_t tok_s_spec;
	uint64_t tok_s_single_low;
	uint64_t tok_s_single_high;
	uint64_t tok_s_spec_low;
	uint64_t tok_s_spec_high;
	double residual_low;
	double residual_high;
	const char *deploy_draft;
	const char *deploy_source;
	unsigned int draft_tokens;
	double draft_accept;
	double draft_accept_low;
	double draft_accept_high;
	uint64_t tok_s_spec_ceiling;
	uint32_t layer_span64;
	uint32_t spread64;
	uint32_t spread64_max;
	unsigned int spread_positions;
};

/**
 * wafer_plan_draft_shape() - an assumed dense shape with about @params
 *	parameters: 16 layers below 2 B parameters, else 32; 64-wide heads, a
 *	quarter of them for K/V; FFN 3.5 x dim; the target's @vocab
 * @params: parameters
 * @vocab: vocabulary (shared with the target)
 * @out: the shape (named "draft")
 */
void wafer_plan_draft_shape(uint64_t params, unsigned int vocab, struct wafer_plan_shape *out);

/**
 * struct wafer_plan_figure - a published figure and the configuration that
 *	projects it (../shared/hardware/PUBLISHED.md; docs/TIMING.md's table)
 * @what: the figure's conditions as published
 * @shape: the model's shape, or NULL for the preset @preset
 * @profile: the profile projecting it
 * @preset: the model's name
 * @devices: devices (lpu: chips), 0 for as few as hold it
 * @weight_bits: the weights' precision
 * @speculative: the published conditions include speculative decoding
 *	(the draft not disclosed): projected as struct
 *	wafer_plan_opts.deployment projects it, with the family's draft
 * @published: the figure: tokens/s of one sequence, or (@count) devices
 * @count: the figure is a device count
 * @role: whether it set a parameter or is a prediction
 * @band: its residual (published / projected) is one of the profile's
 *	band (plain decode of a published shape)
 *
 * Projections take context 1,024 and one sequence.
 */
struct wafer_plan_figure {
	const char *what;
	const struct wafer_plan_shape *shape;
	const char *profile;
	const char *preset;
	unsigned int devices;
	unsigned int weight_bits;
	int speculative;
	double published;
	int count;
	const char *role;
	int band;
};

/** wafer_plan_figure() - the @i-th published figure, NULL past the last. */
const struct wafer_plan_figure *wafer_plan_figure(unsigned int i);

/** wafer_plan_figure_shape() - the shape @f projects. */
const struct wafer_plan_shape *wafer_plan_figure_shape(const struct wafer_plan_figure *f);

/** wafer_plan_preset() - the @i-th built-in shape, NULL past the last. */
const struct wafer_plan_shape *wafer_plan_preset(unsigned int i);

/** wafer_plan_preset_find() - a built-in shape by name, or NULL. */
const struct wafer_plan_shape *wafer_plan_preset_find(const char *name);

/**
 * wafer_plan_shape_from_blob() - the shape of a packed blob (wafer_convert())
 * @blob: the blob, whole (its header and section table are checked)
 * @len: its bytes
 * @name: what @s->name points to (the file's name)
 * @s: filled: dims, layers, heads, vocabulary; a mixture of experts' counts
 *	with experts of the FFN's width in every layer; the layer weights'
 *	bits (4 or 8, layer 0's) in @s->weight_bits
 *
 * Return: 0, or -EINVAL (not a valid blob, or a layer range of one).
 */
int wafer_plan_shape_from_blob(const void *blob, size_t len, const char *name,
			       struct wafer_plan_shape *s);

/**
 * wafer_plan() - project a shape onto devices of a profile
 * @shape: the model
 * @opts: profile, devices, precision, batch, context
 * @out: the projection
 *
 * Layers go to devices in contiguous ranges and to stages as the firmware
 * places them; the modelled times come from the same functions and
 * timeline the firmware accounts a real run with.
 *
 * Return: 0; -EINVAL for a bad field (wafer_last_error() names it);
 * -ENOSPC when the model cannot be placed.
 */
int wafer_plan(const struct wafer_plan_shape *shape, const struct wafer_plan_opts *opts,
	       struct wafer_plan *out);

#ifdef __cplusplus
}
#endif

#endif /* WAFER_H_PLAN */
