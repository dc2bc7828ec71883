/* SPDX-License-Identifier: MIT */
/*
 * wfs_timing.h - the modelled device time of the simulated accelerator.
 *
 * Besides host time, every stage accounts the time real hardware built to
 * the profile (wfs_profile.h) would take.  The model is a roofline per stage
 * plus a fabric hop per transfer, evaluated on a modelled timeline:
 *
 * Work of one pipeline chunk (n tokens at positions p0 .. p0+n-1) on a stage,
 * summed over the layers the stage holds:
 *
 *   MACs   = n * (d*d + 2*d*kv + d*d + 3*d*h)          projections + FFN
 *          + sum_p 2 * d * (p + 1)                     attention (QK^T, AV)
 *          (+ head: V * d per position that needs logits)
 *   bytes  = W                                         layer weights, read
 *                                                      once per chunk (the
 *                                                      chunk's tokens stream
 *                                                      past resident weights)
 *          + sum_p (p + 1) * kvpos                     KV read
 *          + n * kvpos                                 KV written
 *          + 2 * n * A                                 activations in + out
 *
 *   with d = dim, kv = kv_dim, h = hidden_dim, V = vocab, W = weight bytes
 *   of the stage's layers, kvpos = KV bytes of one position of one layer,
 *   A = activation record bytes.  The embedding stage adds n * A bytes, the
 *   head adds its weight bytes once and V * d MACs per output position.
 *
 *   cycles_stage = max(ceil(MACs / macs_per_cycle),
 *                      ceil(bytes / sram_bytes_per_cycle))
 *                + placed + mesh latency, where placed is the work a
 *   mixture-of-experts layer's parts do on their own cores on a mesh
 *   (wfs_timing_moe_layer_cost()), and
 *   latency      = sum over the stage's layers of R * reduce(W_layer)
 *                  (+ reduce(W_head) for the head)
 *   reduce(W)    = 2 * ceil(sqrt(ceil(W / b))) * mesh_hop_cycles, b the
 *                  bytes per core of the layer's region
 *                  (wfs_timing_core_bytes())
 *   A profile with a mesh of cores (core_sram_bytes != 0: wse3, wse2)
 *   spreads a layer's weights over its share of its stage's cores (stage
 *   SRAM / layers on the stage, at most d^2 cores, at least as many as its
 *   bytes need); a matrix-vector product there ends in a reduction along
 *   the rows of that square of cores and a broadcast down its columns,
 *   2 * side hops, and a layer has R = WFS_TIMING_LAYER_REDUCTIONS such
 *   steps one after the other.  A layer bigger than a stage (wafer plan
 *   only: the firmware places no such layer) adds its MACs and bytes as
 *   64/span of a stage's (wfs_timing_span64(), or its spread's,
 *   wfs_timing_dims.spread64): it computes and reads on the cores it
 *   spreads over.  A chunk pays them once, whatever its token count: this is what
 *   makes single-sequence decode latency-bound on a wafer while batches
 *   and prefill amortise it.  The test profiles have no mesh (latency 0).
 *   A tensor-parallel group (tensor_chips = t > 1: lpu, where a layer is
 *   bigger than a chip) splits every layer over t chips, each with 1/t of
 *   its MACs and bytes (the group's profile has t times a chip's), and
 *   adds per layer WFS_TIMING_TP_ALLREDUCES all-reduces of the chunk's
 *   activations over the chip-to-chip link, as a ring:
 *   allreduce    = 2 * (t - 1) * (link_hop_cycles +
 *                                 ceil(ceil(n * A / t) / link_bytes_per_cycle))
 *   cycles_hop   = hop_cycles + ceil(n * A / fabric_bytes_per_cycle)
 *   ns(c)        = c * 1e9 / clock_hz                 (integer, truncated)
 *
 * Timeline (all in modelled ns, per device, starting at 0):
 *
 *   arrival(stage 0) = ready time of the job (see below)
 *   start(s)         = max(arrival(s), free_at(s))
 *   end(s)           = start(s) + ns(cycles_stage(s))
 *   free_at(s)       = end(s)
 *   arrival(s + 1)   = end(s) + ns(cycles_hop)
 *   busy(s)         += ns(cycles_stage(s))
 *
 * A job's modelled latency is arrival(last stage + 1) of its last chunk
 * (the results' hop back to the host) minus start(stage 0) of its first
 * chunk.
 *
 * Several devices (layer ranges of one model) share one timeline: the
 * last stage of a range without the head sends each chunk's activation
 * records over the inter-device link,
 *   cycles_link = link_hop_cycles + ceil(n * A / link_bytes_per_cycle),
 * and stamps them with t_ns = end(last stage) + ns(cycles_link); the next
 * device's stage 0 takes a chunk no earlier than the latest t_ns of its
 * records.  A job of such a range completes at that time.  Links are not
 * a shared resource in this model (no queueing for the link): with many
 * sequences in flight the chain runs at the rate of its busiest stage,
 * and a single sequence pays (devices - 1) link latencies more.  Such a
 * job's ready time is its records' t_ns alone: when the host handed them
 * on (at once, or after the previous device's completion) is not modelled
 * time.  Any other job's ready time is the latest of
 *   - 0 (the host queued it ahead: it may enter as soon as stage 0 is free),
 *   - the modelled completion time of the previous job of the same slot,
 *     if that job had completed when the command processor fetched this one
 *     (the host waited for it, as a decode loop does),
 *   - the latest modelled completion time of the device (of the job's
 *     tenant: see "Tenants" below), if no job at all (of that tenant) was
 *     in flight at fetch (the device sat idle: its clock stands there)
 *     and the job has no floor,
 *   - the job's own floor (WFW_JOB_NOT_BEFORE), which a host running a
 *     model over several devices gives the first device: the same rule
 *     applied to the whole chain (the slot's previous token left the last
 *     device then, and the host had seen what it waited for), which the
 *     first device's own clock cannot see.  It takes the place of the idle
 *     term: the first device's completions include the link hop after its
 *     last stage, so its idle clock would hold micro-batches kept in
 *     flight a link hop apart (and by when the host's threads ran).
 * So a decode loop that waits for each token serialises, while sequences
 * queued together overlap in the pipeline.
 *
 * Tenants: every context belongs to a tenant (CREATE_CONTEXT's tenant, a
 * driver's open file), and every tenant has a timeline of its own (struct
 * wfs_timeline), starting at 0 when the device first sees it: the times
 * above ("the slot's", "the device's latest completion", the floors and
 * the records' t_ns) are all the tenant's, so no time a tenant gives moves
 * another's clock.  The stages are shared, and so is their work: a stage
 * keeps a work clock W(s) that only its chunks' service times advance
 * (never an arrival or a floor), and a tenant k sees the stage free at
 *   free_k(s) = end of k's latest chunk on s
 *             + W(s) - max(W(s) then, W(s) when the device last took a
 *                          job while no job was in flight)
 * that is, after the work the stage did for other tenants since k last
 * used it, unless the device went idle in between (then nothing was
 * queued before k's job).  start(s) = max(arrival(s), free_k(s)).  With
 * one tenant this is the timeline above exactly.  A host-given time
 * (NOT_BEFORE, t_ns) above WFW_NOT_BEFORE_MAX (2^62 ns) fails its job
 * with -EINVAL.  GET_INFO's makespan is device-wide: the latest
 * completion of any tenant, each counted from where its time 0 fell on
 * that figure (the makespan when the device first saw the tenant).
 *
 * Aggregate modelled tokens/s = tokens * 1e9 / makespan, where makespan
 * is the latest modelled completion time.  With many sequences in flight the
 * pipeline is limited by its busiest stage, so spreading the same layers
 * over more stages raises tokens/s; a single sequence pays the sum of all
 * stages plus hops (time to first token grows a little with each stage).
 */
#ifndef WFS_TIMING_H
#define WFS_TIMING_H

#include "wfs_compat.h"
#include "wfs_profile.h"

/*
 * Reductions a layer waits for one after the other: the attention RMSNorm
 * (sum of squares), the Q/K/V projections, the scores q.k, the softmax's
 * max and its sum, the weighted sum over positions, the output projection,
 * the FFN RMSNorm, the gate and up projections, the down projection.
 */
#define WFS_TIMING_LAYER_REDUCTIONS	10

/*
 * Reductions multi-head latent attention adds to those (DeepSeek-V2,
 * arXiv 2405.04434, section 2.1; DeepSeek-V3's inference/model.py, its
 * "absorb" decode path, which Kimi K2 shares): the query and the latent KV
 * down-projections take the place of Q/K/V, then come the latents'
 * RMSNorms (the two side by side), the query's up-projection, the keys'
 * up-projection W_UK applied to the query, and after the weighted sum the
 * values' up-projection W_UV before the output projection.
 */
#define WFS_TIMING_LATENT_REDUCTIONS	4

/*
 * A mixture-of-experts layer's reductions over the cores holding its
 * attention and router, besides attention's 7: the FFN RMSNorm of the
 * token's vector, the router's projection (d x E) and the top-k selection
 * over the E scores (a reduction of the best k).  The experts' own: gate
 * and up, then down.
 */
#define WFS_TIMING_MOE_ROUTE_REDUCTIONS	3
#define WFS_TIMING_MOE_EXPERT_REDUCTIONS 2

/*
 * All-reduces a tensor-parallel layer waits for: after the attention's
 * output projection and after the FFN's down projection (each chip holds
 * a slice of the heads and of the hidden units).
 */
#define WFS_TIMING_TP_ALLREDUCES	2

/**
 * struct wfs_cost - work of one chunk on one stage
 * @macs: multiply-accumulates
 * @bytes: SRAM bytes moved
 * @latency: cycles of reductions over the mesh, paid once per chunk
 * @placed: cycles of work done on only the cores that hold its weights,
 *	one part after the other (a mixture-of-experts layer on a mesh: its
 *	attention, then its experts side by side), added to the stage's
 *	roofline rather than shared with it
 */
struct wfs_cost {
	u64 macs;
	u64 bytes;
	u64 latency;
	u64 placed;
};

/**
 * struct wfs_timing_dims - model shape, as the timing model needs it
 * @dim: model width d
 * @kv_dim: key/value width
 * @hidden_dim: feed-forward width h
 * @vocab: vocabulary V
 * @act_bytes: activation record bytes A
 * @kv_pos_bytes: KV bytes of one position of one layer
 * @stage_layers: layers sharing the stage that runs the layer, whose
 *	cores they share (wfs_timing_core_bytes()); 0: the layer has only
 *	the cores its weights fill (weight streaming's window)
 * @latent: the attention is multi-head latent attention (nonzero):
 *	WFS_TIMING_LATENT_REDUCTIONS more reductions in sequence
 * @spread64: stages' worth of cores, in 64ths of a stage, over which a
 *	layer bigger than its share of a stage spreads (wafer plan chooses
 *	it within the layer's share of its device; the firmware places no
 *	such layer); 0, or fewer than its bytes fill: the cores they fill
 */
struct wfs_timing_dims {
	u32 dim;
	u32 kv_dim;
	u32 hidden_dim;
	u32 vocab;
	u32 act_bytes;
	u32 kv_pos_bytes;
	u32 stage_layers;
	u32 latent;
	u32 spread64;
};

/**
 * wfs_timing_reduce_cycles() - one reduction over the cores holding W bytes
 * @p: profile
 * @weight_bytes: weights spread over the cores
 *
 * Return: 2 * ceil(sqrt(ceil(W / core_sram_bytes))) * mesh_hop_cycles, or 0
 * for a profile without a mesh.
 */
u64 wfs_timing_reduce_cycles(const struct wfs_profile *p, u64 weight_bytes);

/**
 * wfs_timing_core_bytes() - weight bytes per core of a layer's region
 * @p: profile
 * @d: model shape (@d->stage_layers: the layers sharing the stage)
 * @weight_bytes: the layer's weights W
 *
 * A stage's cores all serve its layers: a layer of W bytes whose stage
 * holds k layers is spread over its share of the stage, sram_bytes / k
 * bytes' worth of cores, but over no more than d^2 cores (a d-wide vector
 * spread over more than d rows or columns leaves some empty), and never
 * over fewer than its bytes fill.  A layer bigger than its share of a
 * stage spreads over @d->spread64 stages' worth of cores if that is more
 * than its bytes fill, under the same cap.  Its reductions cross that
 * region.
 *
 * Return: ceil(W / cores of the region), at most core_sram_bytes (which it
 * is without a stage count, or when W fills its share); 0 without a mesh.
 */
u64 wfs_timing_core_bytes(const struct wfs_profile *p,
			  const struct wfs_timing_dims *d, u64 weight_bytes);

/**
 * wfs_timing_span64() - stages' worth of cores a layer's weights fill, in
 *	64ths of a stage
 * @p: profile
 * @weight_bytes: the layer's weights
 *
 * Return: ceil(64 W / stage SRAM) for a profile with a mesh and W above a
 * stage's SRAM, else 64 (the layer computes on one stage's cores).
 */
u64 wfs_timing_span64(const struct wfs_profile *p, u64 weight_bytes);

/**
 * wfs_timing_allreduce_cycles() - one all-reduce of a chunk's activations
 *	over the chips of a tensor-parallel group
 * @p: profile (@p->tensor_chips chips)
 * @bytes: activation bytes of the chunk
 *
 * Return: 2 * (t - 1) * (link_hop_cycles + ceil(ceil(bytes / t) /
 * link_bytes_per_cycle)), or 0 without a group (t <= 1).
 */
u64 wfs_timing_allreduce_cycles(const struct wfs_profile *p, u64 bytes);

/**
 * wfs_timing_layer_cost() - add one layer's work for a chunk
 * @p: profile
 * @d: model shape
 * @weight_bytes: the layer's weight bytes W
 * @pos0: position of the chunk's first token
 * @n: tokens in the chunk
 * @c: accumulated into
 */
void wfs_timing_layer_cost(const struct wfs_profile *p,
			   const struct wfs_timing_dims *d, u64 weight_bytes,
			   u32 pos0, u32 n, struct wfs_cost *c);

/**
 * struct wfs_timing_moe - a mixture-of-experts layer, as the timing model
 *	needs it
 * @n_experts: routed experts E
 * @n_active: routed experts each token takes
 * @n_shared: experts every token takes
 * @expert_hidden: feed-forward width of one expert
 * @attn_bytes: the layer's attention and router weights
 * @expert_bytes: one expert's weights
 * @attn_macs: a token's MACs in the attention's projections and the router
 *	(0: 2 d^2 + 2 d kv + d E, grouped-query attention's)
 */
struct wfs_timing_moe {
	u32 n_experts;
	u32 n_active;
	u32 n_shared;
	u32 expert_hidden;
	u64 attn_bytes;
	u64 expert_bytes;
	u64 attn_macs;
};

/**
 * wfs_timing_moe_layer_cost() - add one mixture-of-experts layer's work
 * @p: profile
 * @d: model shape (@d->hidden_dim unused)
 * @m: the experts
 * @pos0: position of the chunk's first token
 * @n: tokens in the chunk
 * @c: accumulated into
 *
 * As a dense layer for attention (and the router, d * E MACs per token);
 * the FFN runs (n_active + n_shared) experts per token and reads the
 * weights of at most min(E, n * n_active) routed experts plus the shared
 * ones.  On a mesh (wse3, wse2) the layer's region (wfs_timing_core_bytes()
 * of all its weights) holds the attention and router on the cores their
 * bytes fill at that density, and each expert on its own such cores; the
 * weights stay where they are (weight-stationary), so each part computes
 * and reads on its own cores (@placed): the attention's n tokens, then the
 * experts side by side, the busiest taking max(ceil(n k / E), n if there is
 * a shared expert) tokens; a core's MACs and SRAM bandwidth are the
 * stage's over its stage_cores.  The attention over the KV cache stays on
 * the whole region (@macs, @bytes).  Latency: 7 reductions of attention
 * (+ WFS_TIMING_LATENT_REDUCTIONS for latent attention) and
 * WFS_TIMING_MOE_ROUTE_REDUCTIONS over the attention's cores,
 * WFS_TIMING_MOE_EXPERT_REDUCTIONS over one expert's, and the dispatch to
 * the experts and the combine back, a broadcast and a reduction tree
 * across the whole layer's cores (one reduce() of all its bytes: the
 * fabric's routes are fixed, so every expert's region is on both trees
 * and k selected experts cost what one does).  Without a mesh, every term
 * on the stage's roofline.
 */
void wfs_timing_moe_layer_cost(const struct wfs_profile *p,
			       const struct wfs_timing_dims *d,
			       const struct wfs_timing_moe *m, u32 pos0, u32 n,
			       struct wfs_cost *c);

/*
 * A layer's parts (attention-FFN disaggregation, WFW_PART_*): each part's
 * terms of the layer's cost on the device holding it, W its own weights.
 *   attention: MACs n(2d^2 + 2d kv) + sum_p 2d(p + 1); bytes W + KV read
 *              and written + 2nA; 7 of the layer's reductions, one
 *              all-reduce
 *   FFN:       MACs 3ndh; bytes W + 2nA; the other 3 reductions, one
 *              all-reduce
 *   MoE FFN:   MACs n(d E + (active + shared) 3 d h_x); bytes the touched
 *              and shared experts + 2nA; 3 reductions of an expert, the
 *              dispatch's reduce() of every expert's bytes, one all-reduce
 * The activations cross the inter-device link each way (the OUT_ACT
 * record's t_ns: wfs_timing_link_cycles()).
 */
void wfs_timing_attn_cost(const struct wfs_profile *p,
			  const struct wfs_timing_dims *d, u64 weight_bytes,
			  u32 pos0, u32 n, struct wfs_cost *c);
void wfs_timing_ffn_cost(const struct wfs_profile *p,
			 const struct wfs_timing_dims *d, u64 weight_bytes,
			 u32 n, struct wfs_cost *c);
void wfs_timing_moe_ffn_cost(const struct wfs_profile *p,
			     const struct wfs_timing_dims *d,
			     const struct wfs_timing_moe *m, u32 n,
			     struct wfs_cost *c);

/**
 * wfs_timing_embed_cost() - add the embedding's work for a chunk
 * @d: model shape
 * @n: tokens in the chunk
 * @c: accumulated into
 */
void wfs_timing_embed_cost(const struct wfs_timing_dims *d, u32 n,
			   struct wfs_cost *c);

/**
 * wfs_timing_head_cost() - add the head's work for a chunk
 * @p: profile
 * @d: model shape
 * @weight_bytes: final norm + classifier bytes
 * @n_out: positions of the chunk that need logits (0: no head work)
 * @c: accumulated into
 */
void wfs_timing_head_cost(const struct wfs_profile *p,
			  const struct wfs_timing_dims *d, u64 weight_bytes,
			  u32 n_out, struct wfs_cost *c);

/**
 * wfs_timing_stage_cycles() - roofline cycles of a stage's work
 * @p: profile
 * @c: work
 *
 * Return: max(ceil(macs / macs_per_cycle), ceil(bytes / sram_bytes_per_cycle))
 * + placed + latency.
 */
u64 wfs_timing_stage_cycles(const struct wfs_profile *p,
			    const struct wfs_cost *c);

/**
 * wfs_timing_hop_cycles() - cycles to move a chunk to the next stage
 * @p: profile
 * @bytes: activation bytes of the chunk
 *
 * Return: hop_cycles + ceil(bytes / fabric_bytes_per_cycle).
 */
u64 wfs_timing_hop_cycles(const struct wfs_profile *p, u64 bytes);

/**
 * wfs_timing_link_cycles() - cycles to move a chunk's activation records
 *	to the next device of a multi-device pipeline
 * @p: profile
 * @bytes: activation bytes of the chunk
 *
 * Return: link_hop_cycles + ceil(bytes / link_bytes_per_cycle).
 */
u64 wfs_timing_link_cycles(const struct wfs_profile *p, u64 bytes);

/**
 * wfs_timing_stream_cycles() - cycles to stream weights from the external
 *	store (weight streaming: a layer's weights arrive while the previous
 *	layer computes, so a layer takes the longer of the two)
 * @p: profile
 * @bytes: weight bytes
 *
 * Return: ceil(bytes / stream_bytes_per_cycle), or 0 for a profile without
 * a weight store.
 */
u64 wfs_timing_stream_cycles(const struct wfs_profile *p, u64 bytes);

/**
 * wfs_timing_stream_layer_cycles() - cycles to read one layer's section
 *	into a stage's streaming window (LOAD_MODEL with WFW_LOAD_STREAM)
 * @p: profile
 * @bytes: section bytes (0: no layer, no time)
 *
 * A stage's streaming pass over its layers 0..n-1 (their compute c_l,
 * these reads s_l) takes s_0 + sum_l max(c_l, s_(l+1)), s_n = 0: two
 * window slots, so layer l+1 arrives while layer l computes.  The chunks
 * that share a pass (see wfs_stage.c) pay only their compute.
 *
 * Return: stream_latency_cycles + wfs_timing_stream_cycles(), or 0 for 0
 * bytes.
 */
u64 wfs_timing_stream_layer_cycles(const struct wfs_profile *p, u64 bytes);

/**
 * wfs_timing_ns() - cycles to nanoseconds at the profile's clock
 * @p: profile
 * @cycles: cycles
 *
 * Return: cycles * 1e9 / clock_hz, truncated, without 64-bit overflow for
 * any realistic cycle count.
 */
u64 wfs_timing_ns(const struct wfs_profile *p, u64 cycles);

/**
 * wfs_timing_rate() - events per second
 * @count: events (tokens)
 * @ns: modelled nanoseconds
 *
 * Return: count * 1e9 / ns, or 0 when @ns is 0.
 */
u64 wfs_timing_rate(u64 count, u64 ns);

#endif /* WFS_TIMING_H */
