// SPDX-License-Identifier: MIT
/*
 * wfs_timing.c - modelled device time (formulas in wfs_timing.h).
 */
#include "wfs_qfmt.h"
#include "wfs_timing.h"

#define NS_PER_S	1000000000ull

static u64 div_round_up(u64 a, u64 b)
{
	return b ? wfs_div64_u64(a + b - 1, b) : 0;
}

/* 2 * side of the square of cores holding @bytes, @per_core bytes each, hops. */
static u64 reduce_at(const struct wfs_profile *p, u64 bytes, u64 per_core)
{
	u64 cores, side;

	if (!p->core_sram_bytes)
		return 0;
	cores = div_round_up(bytes, per_core);
	side = wfs_isqrt64(cores);
	if (side * side < cores)
		side++;
	return 2 * side * p->mesh_hop_cycles;
}

u64 wfs_timing_reduce_cycles(const struct wfs_profile *p, u64 weight_bytes)
{
	return reduce_at(p, weight_bytes, p->core_sram_bytes);
}

/*
 * Cores a layer of @weight_bytes spreads over (wfs_timing_core_bytes()),
 * and in @fill those its bytes fill; 0 without a stage count.
 */
static u64 region_cores(const struct wfs_profile *p,
			const struct wfs_timing_dims *d, u64 weight_bytes,
			u64 *fill)
{
	u64 cores, cap = (u64)d->dim * d->dim;

	*fill = div_round_up(weight_bytes, p->core_sram_bytes);
	if (!p->stage_cores || !d->stage_layers)
		return 0;
	cores = WFS_MIN(p->stage_cores / d->stage_layers, cap);
	if (cores * p->core_sram_bytes > weight_bytes)
		return cores;
	/* Bigger than its share of a stage: the spread wafer plan chose. */
	cores = WFS_MIN(div_round_up((u64)d->spread64 * p->stage_cores, 64), cap);
	return WFS_MAX(cores, *fill);
}

u64 wfs_timing_core_bytes(const struct wfs_profile *p,
			  const struct wfs_timing_dims *d, u64 weight_bytes)
{
	u64 fill, cores;

	if (!p->core_sram_bytes || !weight_bytes)
		return p->core_sram_bytes;
	cores = region_cores(p, d, weight_bytes, &fill);
	if (cores <= fill)
		return p->core_sram_bytes;
	return div_round_up(weight_bytes, cores);
}

u64 wfs_timing_span64(const struct wfs_profile *p, u64 weight_bytes)
{
	u64 stage = (u64)p->stage_cores * p->core_sram_bytes;

	if (!stage || weight_bytes <= stage)
		return 64;
	return div_round_up(weight_bytes * 64, stage);
}

/*
 * Stages' worth of cores, in 64ths, a layer of @weight_bytes computes on:
 * wfs_timing_span64(), or its region's if it spreads over more cores than
 * its bytes fill.
 */
static u64 layer_span64(const struct wfs_profile *p,
			const struct wfs_timing_dims *d, u64 weight_bytes)
{
	u64 span = wfs_timing_span64(p, weight_bytes), fill, cores;

	if (span == 64)
		return span;
	cores = region_cores(p, d, weight_bytes, &fill);
	if (cores <= fill)
		return span;
	return div_round_up(cores * 64, p->stage_cores);
}

/*
 * Add @w, one layer's (or the head's) work, to @c: a layer whose weights
 * fill more cores than a stage has computes on the MAC arrays and reads
 * the SRAM of the cores it spreads over, @span/64 stages' worth, so its
 * MACs and bytes count 64/span of a stage's.
 */
static void add_spread(u64 span, const struct wfs_cost *w, struct wfs_cost *c)
{
	c->macs += span == 64 ? w->macs : div_round_up(w->macs * 64, span);
	c->bytes += span == 64 ? w->bytes : div_round_up(w->bytes * 64, span);
	c->latency += w->latency;
	c->placed += w->placed;
}

/* Reductions of a layer's attention beyond grouped-query attention's. */
static u64 latent_reductions(const struct wfs_timing_dims *d)
{
	return d->latent ? WFS_TIMING_LATENT_REDUCTIONS : 0;
}

/*
 * Cycles of @macs MACs and @bytes SRAM reads on @cores cores of a mesh,
 * each with 1/stage_cores of a stage's MAC arrays and SRAM bandwidth.
 */
static u64 part_cycles(const struct wfs_profile *p, u64 macs, u64 bytes,
		       u64 cores)
{
	u64 compute = div_round_up(macs * p->stage_cores,
				   cores * p->macs_per_cycle);
	u64 mem = div_round_up(bytes * p->stage_cores,
			       cores * p->sram_bytes_per_cycle);

	return WFS_MAX(compute, mem);
}

u64 wfs_timing_allreduce_cycles(const struct wfs_profile *p, u64 bytes)
{
	u64 t = p->tensor_chips;

	if (t < 2)
		return 0;
	return 2 * (t - 1) * (p->link_hop_cycles +
			      div_round_up(div_round_up(bytes, t),
					   p->link_bytes_per_cycle));
}

void wfs_timing_layer_cost(const struct wfs_profile *p,
			   const struct wfs_timing_dims *d, u64 weight_bytes,
			   u32 pos0, u32 n, struct wfs_cost *c)
{
	u64 dd = d->dim, kv = d->kv_dim, h = d->hidden_dim;
	u64 proj = dd * dd * 2 + 2 * dd * kv + 3 * dd * h;
	/* sum_{p = pos0}^{pos0 + n - 1} (p + 1) */
	u64 span = (u64)n * (2ull * pos0 + n + 1) / 2;
	struct wfs_cost w = { 0 };

	w.macs = (u64)n * proj + 2 * dd * span;
	w.bytes = weight_bytes + span * d->kv_pos_bytes +
		  (u64)n * d->kv_pos_bytes + 2ull * n * d->act_bytes;
	w.latency = (WFS_TIMING_LAYER_REDUCTIONS + latent_reductions(d)) *
		    reduce_at(p, weight_bytes,
			      wfs_timing_core_bytes(p, d, weight_bytes)) +
		    WFS_TIMING_TP_ALLREDUCES *
		    wfs_timing_allreduce_cycles(p, (u64)n * d->act_bytes);
	add_spread(layer_span64(p, d, weight_bytes), &w, c);
}

/* Of a layer's reductions, those of attention (the rest are the FFN's). */
#define ATTN_REDUCTIONS	7

void wfs_timing_moe_layer_cost(const struct wfs_profile *p,
			       const struct wfs_timing_dims *d,
			       const struct wfs_timing_moe *m, u32 pos0, u32 n,
			       struct wfs_cost *c)
{
	u64 dd = d->dim, kv = d->kv_dim;
	u64 attn = m->attn_macs ? m->attn_macs :
		   dd * dd * 2 + 2 * dd * kv + dd * m->n_experts;
	u64 expert = 3 * dd * m->expert_hidden;
	u64 ffn = (u64)(m->n_active + m->n_shared) * expert;
	u64 span = (u64)n * (2ull * pos0 + n + 1) / 2;
	u64 touched = WFS_MIN((u64)m->n_experts, (u64)n * m->n_active);
	u64 all = m->attn_bytes +
		  (u64)(m->n_experts + m->n_shared) * m->expert_bytes;
	u64 pc = wfs_timing_core_bytes(p, d, all);
	u64 per_expert, kv_bytes = span * d->kv_pos_bytes +
				   (u64)n * d->kv_pos_bytes + 2ull * n * d->act_bytes;
	struct wfs_cost w = { 0 };

	if (p->core_sram_bytes && p->stage_cores) {
		/* The busiest expert's tokens: a shared one takes them all. */
		per_expert = div_round_up((u64)n * m->n_active, m->n_experts);
		if (m->n_shared)
			per_expert = n;
		w.macs = 2 * dd * span;
		w.bytes = kv_bytes;
		w.placed = part_cycles(p, (u64)n * attn, m->attn_bytes,
				       div_round_up(m->attn_bytes, pc)) +
			   part_cycles(p, per_expert * expert, m->expert_bytes,
				       div_round_up(m->expert_bytes, pc));
	} else {
		w.macs = (u64)n * (attn + ffn) + 2 * dd * span;
		w.bytes = m->attn_bytes + (touched + m->n_shared) * m->expert_bytes +
			  kv_bytes;
	}
	w.latency = (ATTN_REDUCTIONS + latent_reductions(d) +
		     WFS_TIMING_MOE_ROUTE_REDUCTIONS) *
		    reduce_at(p, m->attn_bytes, pc) +
		    WFS_TIMING_MOE_EXPERT_REDUCTIONS *
		    reduce_at(p, m->expert_bytes, pc) +
		    reduce_at(p, all, pc) +
		    WFS_TIMING_TP_ALLREDUCES *
		    wfs_timing_allreduce_cycles(p, (u64)n * d->act_bytes);
	add_spread(layer_span64(p, d, all), &w, c);
}

void wfs_timing_attn_cost(const struct wfs_profile *p,
			  const struct wfs_timing_dims *d, u64 weight_bytes,
			  u32 pos0, u32 n, struct wfs_cost *c)
{
	u64 dd = d->dim, kv = d->kv_dim;
	u64 span = (u64)n * (2ull * pos0 + n + 1) / 2;

	c->macs += (u64)n * (dd * dd * 2 + 2 * dd * kv) + 2 * dd * span;
	c->bytes += weight_bytes + span * d->kv_pos_bytes +
		    (u64)n * d->kv_pos_bytes + 2ull * n * d->act_bytes;
	c->latency += ATTN_REDUCTIONS *
		      reduce_at(p, weight_bytes,
				wfs_timing_core_bytes(p, d, weight_bytes)) +
		      wfs_timing_allreduce_cycles(p, (u64)n * d->act_bytes);
}

void wfs_timing_ffn_cost(const struct wfs_profile *p,
			 const struct wfs_timing_dims *d, u64 weight_bytes,
			 u32 n, struct wfs_cost *c)
{
	c->macs += (u64)n * 3 * d->dim * d->hidden_dim;
	c->bytes += weight_bytes + 2ull * n * d->act_bytes;
	c->latency += (WFS_TIMING_LAYER_REDUCTIONS - ATTN_REDUCTIONS) *
		      reduce_at(p, weight_bytes,
				wfs_timing_core_bytes(p, d, weight_bytes)) +
		      wfs_timing_allreduce_cycles(p, (u64)n * d->act_bytes);
}

void wfs_timing_moe_ffn_cost(const struct wfs_profile *p,
			     const struct wfs_timing_dims *d,
			     const struct wfs_timing_moe *m, u32 n,
			     struct wfs_cost *c)
{
	u64 dd = d->dim;
	u64 ffn = (u64)(m->n_active + m->n_shared) * 3 * dd * m->expert_hidden;
	u64 touched = WFS_MIN((u64)m->n_experts, (u64)n * m->n_active);
	u64 all = (u64)(m->n_experts + m->n_shared) * m->expert_bytes;
	u64 pc = wfs_timing_core_bytes(p, d, all);

	c->macs += (u64)n * (dd * m->n_experts + ffn);
	c->bytes += (touched + m->n_shared) * m->expert_bytes +
		    2ull * n * d->act_bytes;
	c->latency += (WFS_TIMING_LAYER_REDUCTIONS - ATTN_REDUCTIONS) *
		      reduce_at(p, m->expert_bytes, pc) + reduce_at(p, all, pc) +
		      wfs_timing_allreduce_cycles(p, (u64)n * d->act_bytes);
}

void wfs_timing_embed_cost(const struct wfs_timing_dims *d, u32 n,
			   struct wfs_cost *c)
{
	c->bytes += (u64)n * d->act_bytes;
}

void wfs_timing_head_cost(const struct wfs_profile *p,
			  const struct wfs_timing_dims *d, u64 weight_bytes,
			  u32 n_out, struct wfs_cost *c)
{
	struct wfs_cost w = { 0 };

	if (!n_out)
		return;
	w.macs = (u64)n_out * d->vocab * d->dim;
	w.bytes = weight_bytes + (u64)n_out * d->act_bytes;
	w.latency = wfs_timing_reduce_cycles(p, weight_bytes);
	add_spread(wfs_timing_span64(p, weight_bytes), &w, c);
}

u64 wfs_timing_stage_cycles(const struct wfs_profile *p,
			    const struct wfs_cost *c)
{
	u64 compute = div_round_up(c->macs, p->macs_per_cycle);
	u64 mem = div_round_up(c->bytes, p->sram_bytes_per_cycle);

	return WFS_MAX(compute, mem) + c->placed + c->latency;
}

u64 wfs_timing_hop_cycles(const struct wfs_profile *p, u64 bytes)
{
	return p->hop_cycles + div_round_up(bytes, p->fabric_bytes_per_cycle);
}

u64 wfs_timing_link_cycles(const struct wfs_profile *p, u64 bytes)
{
	return p->link_hop_cycles +
	       div_round_up(bytes, p->link_bytes_per_cycle);
}

u64 wfs_timing_stream_cycles(const struct wfs_profile *p, u64 bytes)
{
	return div_round_up(bytes, p->stream_bytes_per_cycle);
}

u64 wfs_timing_stream_layer_cycles(const struct wfs_profile *p, u64 bytes)
{
	if (!bytes)
		return 0;
	return p->stream_latency_cycles + wfs_timing_stream_cycles(p, bytes);
}

u64 wfs_timing_ns(const struct wfs_profile *p, u64 cycles)
{
	u64 hz = p->clock_hz ? p->clock_hz : 1;
	u64 sec = wfs_div64_u64(cycles, hz);
	u64 rem = cycles - sec * hz;

	/* rem < hz < 2^34, so rem * 1e9 < 2^64. */
	return sec * NS_PER_S + wfs_div64_u64(rem * NS_PER_S, hz);
}

u64 wfs_timing_rate(u64 count, u64 ns)
{
	u64 sec, rem;

	if (!ns)
		return 0;
	/* count * 1e9 / ns without overflow: keep rem * 1e9 below 2^64. */
	while (ns >= (1ull << 34)) {
		ns >>= 1;
		count >>= 1;
	}
	if (!ns)
		return 0;
	sec = wfs_div64_u64(count, ns);
	rem = count - sec * ns;
	return sec * NS_PER_S + wfs_div64_u64(rem * NS_PER_S, ns);
}
