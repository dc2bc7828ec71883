// SPDX-License-Identifier: MIT
/*
 * wafer_plan.c - projection of a model shape onto devices of a profile:
 * placement by SRAM, KV capacity, and the modelled time of a prefill, a
 * lone decode step and a batch of decoding sequences, with the firmware's
 * own timing functions (firmware-sim/model/wfs_timing.h) on the firmware's
 * timeline: one layer per stage, each stage busy until its chunk is done,
 * a fabric hop between stages, a link hop between devices.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "wafer.h"
#include "wafer_internal.h"
#include "wfs_profile.h"
#include "wfs_timing.h"

#define PLAN_GROUP	64	/* weights per quantisation group */

/* The shape in the timing model's terms, and its byte counts. */
struct plan_geom {
	struct wfs_timing_dims dims;
	struct wfs_timing_moe moe;	/* n_experts 0: dense */
	unsigned int moe_every;		/* layer l has experts if (l + 1) % moe_every == 0 */
	uint64_t dense_bytes, moe_bytes, layer_bytes;	/* layer_bytes: the larger */
	uint64_t embed_bytes, head_bytes, kv_pos_bytes, active_params, params;
	int own_extra;			/* embedding and head on chips of their own */
	const struct wafer_plan_link *host_link;	/* NULL: the device link */
	unsigned int host_link_pct;	/* its latency at this percent (the band's) */
};

static int is_moe(const struct plan_geom *g, unsigned int l)
{
	return g->moe.n_experts && (l + 1) % g->moe_every == 0;
}

static uint64_t range_bytes(const struct plan_geom *g, unsigned int first, unsigned int count)
{
	uint64_t b = 0;
	unsigned int l;

	for (l = first; l < first + count; l++)
		b += is_moe(g, l) ? g->moe_bytes : g->dense_bytes;
	return b;
}

/* Weights of the fullest of @n devices, the layers split as a pipeline splits them. */
static uint64_t max_device_bytes(const struct plan_geom *g, unsigned int n_layers,
				 unsigned int n)
{
	uint64_t worst = 0;
	unsigned int d, l = 0, count;

	for (d = 0; d < n && l < n_layers; d++, l += count) {
		count = wafer_split_even(n_layers, n, d);
		worst = WFS_MAX(worst, range_bytes(g, l, count));
	}
	return worst;
}

static int check_shape(const struct wafer_plan_shape *s)
{
	if (!s->n_layers || s->n_layers > 4096)
		return wafer_set_error(-EINVAL, "plan: n_layers %u (1..4096)", s->n_layers);
	if (!s->dim || s->dim > (1u << 20))
		return wafer_set_error(-EINVAL, "plan: dim %u (1..2^20)", s->dim);
	if (!s->n_heads || !s->n_kv_heads || s->n_heads % s->n_kv_heads || !s->head_dim ||
	    s->head_dim > 4096 || s->n_heads > 4096)
		return wafer_set_error(-EINVAL, "plan: n_heads %u, n_kv_heads %u, head_dim %u (KV "
				       "heads must divide heads; 1..4096)", s->n_heads, s->n_kv_heads,
				       s->head_dim);
	if (!s->vocab || s->vocab > (1u << 24))
		return wafer_set_error(-EINVAL, "plan: vocab %u (1..2^24)", s->vocab);
	if (s->n_experts && (s->n_experts > 4096 || !s->n_active || s->n_active > s->n_experts ||
			     s->n_shared > 64 || !s->expert_hidden ||
			     s->expert_hidden > (1u << 20)))
		return wafer_set_error(-EINVAL, "plan: n_experts %u, n_active %u, n_shared %u, "
				       "expert_hidden %u (1..4096, 1..experts, 0..64, 1..2^20)",
				       s->n_experts, s->n_active, s->n_shared, s->expert_hidden);
	if (s->kv_latent > (1u << 16) || s->q_latent > (1u << 20) || (s->q_latent && !s->kv_latent))
		return wafer_set_error(-EINVAL, "plan: q_latent %u, kv_latent %u (0..2^20, 0..2^16; a "
				       "query latent only with a KV latent)", s->q_latent,
				       s->kv_latent);
	if (!s->n_experts && (s->n_active || s->n_shared || s->expert_hidden || s->moe_every))
		return wafer_set_error(-EINVAL, "plan: n_active, n_shared, expert_hidden or "
				       "moe_every without n_experts");
	if (s->moe_every > s->n_layers)
		return wafer_set_error(-EINVAL, "plan: moe_every %u beyond the %u layers",
				       s->moe_every, s->n_layers);
	if ((!s->n_experts || s->moe_every > 1) && (!s->hidden_dim || s->hidden_dim > (1u << 22)))
		return wafer_set_error(-EINVAL, "plan: hidden_dim %u (1..2^22)", s->hidden_dim);
	return 0;
}

/* Weights of @n parameters: below 16 bits, a 16-bit scale per group of 64. */
static uint64_t quant_bytes(uint64_t n, unsigned int bits)
{
	return n * bits / 8 + (bits < 16 ? (n + PLAN_GROUP - 1) / PLAN_GROUP * 2 : 0);
}

/*
 * Parameters of a layer's attention (its two RMSNorm gains included) and the
 * values a position caches per layer.  Latent attention (DeepSeek-V3's
 * layout): the query's down-projection d x q_latent, its RMSNorm and
 * up-projection to the heads' nope and rotary parts; the KV's
 * down-projection d x (kv_latent + rope), its RMSNorm, the up-projection
 * kv_latent x heads (keys and values); the output projection.
 */
static void attention_params(const struct wafer_plan_shape *s, uint64_t *params,
			     uint64_t *kv_values)
{
	uint64_t d = s->dim, h = s->n_heads, hd = s->head_dim, rope = hd / 2;
	uint64_t ql = s->q_latent, kvl = s->kv_latent;

	if (!kvl) {
		*params = 2 * d * h * hd + 2 * d * s->n_kv_heads * hd + 2 * d;
		*kv_values = 2ull * s->n_kv_heads * hd;
		return;
	}
	*params = (ql ? d * ql + ql + ql * h * (hd + rope) : d * h * (hd + rope)) +
		  d * (kvl + rope) + kvl + kvl * h * 2 * hd + h * hd * d + 2 * d;
	*kv_values = kvl + rope;
}

static void geometry(const struct wafer_plan_shape *s, const struct wafer_plan_opts *o,
		     struct plan_geom *g)
{
	uint64_t d = s->dim, attn, kv_values;
	uint64_t expert = 3 * d * s->expert_hidden, dense, moe, moe_active;
	unsigned int l;

	attention_params(s, &attn, &kv_values);
	dense = attn + 3 * d * s->hidden_dim;
	moe = attn + d * s->n_experts + (uint64_t)(s->n_experts + s->n_shared) * expert;
	moe_active = attn + d * s->n_experts + (uint64_t)(s->n_active + s->n_shared) * expert;
	*g = (struct plan_geom){ 0 };	/* tensor_group() alone sets own_extra */
	g->moe = (struct wfs_timing_moe){
		.n_experts = s->n_experts, .n_active = s->n_active, .n_shared = s->n_shared,
		.expert_hidden = s->expert_hidden,
		.attn_bytes = quant_bytes(attn + d * s->n_experts, o->weight_bits),
		.expert_bytes = quant_bytes(expert, o->weight_bits),
		/* Every projection weight once a token, the router's too; not the gains. */
		.attn_macs = attn - 2 * d + d * s->n_experts,
	};
	g->moe_every = s->moe_every > 1 ? s->moe_every : 1;
	g->dense_bytes = quant_bytes(dense, o->weight_bits);
	g->moe_bytes = quant_bytes(moe, o->weight_bits);
	/* The embedding, the head (once if tied) and its final RMSNorm gain. */
	g->active_params = (s->tied_head ? 1ull : 2ull) * s->vocab * d + d;
	g->params = g->active_params;
	for (l = 0; l < s->n_layers; l++) {
		g->active_params += is_moe(g, l) ? moe_active : dense;
		g->params += is_moe(g, l) ? moe : dense;
	}
	if (s->params)
		g->params = s->params;
	g->layer_bytes = s->n_experts ? WFS_MAX(g->moe_bytes, g->moe_every > 1 ?
						g->dense_bytes : 0) : g->dense_bytes;
	g->embed_bytes = quant_bytes((uint64_t)s->vocab * d, o->weight_bits);
	g->head_bytes = g->embed_bytes + d * 2;
	g->kv_pos_bytes = kv_values * 2;	/* 16-bit */
	g->dims = (struct wfs_timing_dims){
		.dim = s->dim, .kv_dim = (u32)(kv_values / (s->kv_latent ? 1 : 2)),
		.hidden_dim = s->hidden_dim, .vocab = s->vocab, .act_bytes = s->dim * 2,
		.kv_pos_bytes = (u32)g->kv_pos_bytes, .latent = s->kv_latent != 0,
	};
}

/* Bytes the fullest device holds beside its layers: the embedding or head, both on one. */
static uint64_t extra_bytes(const struct plan_geom *g, unsigned int devices)
{
	if (g->own_extra)
		return 0;
	return devices == 1 ? g->embed_bytes + g->head_bytes : WFS_MAX(g->embed_bytes,
								       g->head_bytes);
}

/*
 * Placement: contiguous layer ranges, as wafer_split_layers() gives a
 * pipeline of equal devices (wafer_split_even(): the first layers % n
 * devices one layer more), so that a real run of the same split agrees.
 */
static int place(const struct wafer_plan_shape *s, const struct wafer_plan_opts *o,
		 const struct plan_geom *g, uint64_t dev_bytes, struct wafer_plan *p)
{
	unsigned int n = o->devices, per;
	uint64_t first_extra = g->own_extra ? 0 : g->embed_bytes;
	uint64_t last_extra = g->own_extra ? 0 : g->head_bytes;

	if (g->layer_bytes + first_extra > dev_bytes || g->layer_bytes + last_extra > dev_bytes)
		return wafer_set_error(-ENOSPC, "plan: a layer (%llu bytes) with the embedding or "
				       "head does not fit one %s device (%llu bytes): no number of "
				       "devices holds this model", (unsigned long long)g->layer_bytes,
				       o->profile, (unsigned long long)dev_bytes);
	if (!n) {
		/* As few as hold the weights, with room for one sequence's KV. */
		uint64_t need = range_bytes(g, 0, s->n_layers) + first_extra + last_extra;

		n = (unsigned int)((need + dev_bytes - 1) / dev_bytes);
		for (;; n++) {
			per = (s->n_layers + n - 1) / n;
			if (max_device_bytes(g, s->n_layers, n) +
			    (uint64_t)per * g->kv_pos_bytes * o->context +
			    extra_bytes(g, n) <= dev_bytes)
				break;
			if (per == 1)
				return wafer_set_error(-ENOSPC, "plan: one layer and one sequence's "
						       "KV do not fit a %s device", o->profile);
		}
		p->why = n >= s->n_layers ? "one layer per device" : "SRAM: weights + KV of one sequence";
	} else {
		p->why = "as asked";
	}
	if (n > s->n_layers)
		n = s->n_layers;
	per = wafer_split_even(s->n_layers, n, 0);
	if (o->devices && n < o->devices)
		p->why = "fewer than asked: one layer per device";
	if (max_device_bytes(g, s->n_layers, n) + extra_bytes(g, n) > dev_bytes)
		return wafer_set_error(-ENOSPC, "plan: %u layers of %llu bytes per device do not fit "
				       "%s's %llu bytes: give more devices or --devices auto", per,
				       (unsigned long long)g->layer_bytes, o->profile,
				       (unsigned long long)dev_bytes);
	p->devices = n;
	p->layers_per_device = per;
	/* Hosts beyond the devices would hold none. */
	p->hosts = WFS_MAX(WFS_MIN(o->hosts, n), 1u);
	return 0;
}

static unsigned int chips_for(uint64_t bytes, uint64_t chip)
{
	return (unsigned int)((bytes + chip - 1) / chip);
}

/*
 * A profile whose layers may span chips (lpu): a layer is split over the
 * fewest chips that hold it and one sequence's KV for it (tensor
 * parallelism); the embedding and the head on chips of their own.  Given
 * a chip count, the groups are as wide as one layer per group leaves room
 * for.  From here on a group is the plan's device; @o->devices is groups.
 */
static int tensor_group(const struct wafer_plan_shape *s, struct wafer_plan_opts *o,
			struct plan_geom *g, struct wfs_profile *prof, struct wafer_plan *p)
{
	uint64_t chip = (uint64_t)prof->stages * prof->sram_bytes;
	unsigned int tp = chips_for(g->layer_bytes + g->kv_pos_bytes * o->context, chip);
	unsigned int extra = chips_for(g->embed_bytes, chip) + chips_for(g->head_bytes, chip);

	if (prof->tensor_max <= 1)
		return 0;
	if (tp > prof->tensor_max)
		return wafer_set_error(-ENOSPC, "plan: a layer (%llu bytes) and one sequence's KV "
				       "need %u %s chips, more than the %u a layer may span",
				       (unsigned long long)g->layer_bytes, tp, prof->name,
				       prof->tensor_max);
	if (o->devices) {
		if (o->devices < extra + tp)
			return wafer_set_error(-ENOSPC, "plan: %u %s chips: the embedding and head "
					       "take %u and a layer %u", o->devices, prof->name,
					       extra, tp);
		tp = WFS_MAX(tp, WFS_MIN(prof->tensor_max, (o->devices - extra) / s->n_layers));
		o->devices = (o->devices - extra) / tp;
	}
	g->own_extra = 1;
	p->tensor_chips = tp;
	p->extra_chips = extra;
	return wfs_profile_tensor_group(prof, tp);
}

/*
 * The stages of all devices in order, as the firmware places layers: a
 * device's layers over min(layers, stages) stages, the first layers %
 * stages of them taking one layer more.
 */
struct plan_stage {
	unsigned int first, count;	/* layers */
	unsigned int device_layers;	/* layers on its device */
	u32 spread64;			/* a big layer's region (spread_stages()) */
	unsigned int device, index;	/* the device, the stage's index on it */
	int last_of_device;
	int last_of_host;		/* its device is the last of its host */
};

static struct plan_stage *stage_table(const struct wfs_profile *prof,
				      const struct wafer_plan_shape *s,
				      const struct wafer_plan *p, unsigned int *n_out)
{
	unsigned int d, k, layer = 0, n = 0, host = 0, host_end;
	struct plan_stage *t = calloc((size_t)s->n_layers, sizeof(*t));

	if (!t)
		return NULL;
	/* Devices split over hosts as a chain's HOST:DEVICES list gives them. */
	host_end = wafer_split_even(p->devices, p->hosts, 0);
	for (d = 0; d < p->devices; d++) {
		unsigned int count = wafer_split_even(s->n_layers, p->devices, d);
		unsigned int used = WFS_MIN(count, prof->stages);
		int host_last = d + 1 == host_end;

		if (host_last && ++host < p->hosts)
			host_end += wafer_split_even(p->devices, p->hosts, host);
		for (k = 0; k < used; k++) {
			t[n].first = layer;
			t[n].count = count / used + (k < count % used);
			t[n].device_layers = count;
			layer += t[n].count;
			t[n].last_of_device = k + 1 == used;
			t[n].last_of_host = t[n].last_of_device && host_last;
			t[n].device = d;
			t[n].index = k;
			n++;
		}
	}
	*n_out = n;
	return t;
}

/* One chunk's modelled ns on a stage (with the embedding and head where they are). */
static uint64_t stage_ns(const struct wfs_profile *prof, const struct wafer_plan_shape *s,
			 const struct plan_geom *g, const struct plan_stage *st, u32 pos0, u32 n,
			 struct wfs_cost *out)
{
	struct wfs_cost c = { 0 };
	struct wfs_timing_dims dims = g->dims;
	unsigned int l;

	/* The stage's cores serve its layers, as on the firmware's stages. */
	dims.stage_layers = st->count;
	dims.spread64 = st->spread64;
	if (st->first == 0)
		wfs_timing_embed_cost(&dims, n, &c);
	for (l = st->first; l < st->first + st->count; l++) {
		if (is_moe(g, l))
			wfs_timing_moe_layer_cost(prof, &dims, &g->moe, pos0, n, &c);
		else
			wfs_timing_layer_cost(prof, &dims, g->dense_bytes, pos0, n, &c);
	}
	if (st->first + st->count == s->n_layers)
		wfs_timing_head_cost(prof, &g->dims, g->head_bytes, 1, &c);
	if (out)
		*out = c;
	return wfs_timing_ns(prof, wfs_timing_stage_cycles(prof, &c));
}

/*
 * Where a layer bigger than a stage spreads, as a compiler would place it:
 * over the cores its bytes fill, or its share of its device's stages, or
 * halves of that share, whichever runs the pass a deployment runs most (a
 * chunk of @n tokens at position @pos: one token, or a verify pass)
 * soonest.  More cores divide the work of its parts and lengthen every
 * reduction across them; the placement, once chosen, serves every chunk.
 */
static void spread_stages(const struct wfs_profile *prof, const struct wafer_plan_shape *s,
			  const struct plan_geom *g, struct plan_stage *t,
			  unsigned int n_stages, u32 pos, u32 n)
{
	unsigned int k, j;

	for (k = 0; k < n_stages; k++) {
		u32 share = (u32)(64ull * prof->stages / t[k].device_layers), best = 0;
		uint64_t best_ns, ns;

		t[k].spread64 = 0;
		best_ns = stage_ns(prof, s, g, &t[k], pos, n, NULL);
		for (j = 0; j < 8 && share >> j > 64; j++) {
			t[k].spread64 = share >> j;
			ns = stage_ns(prof, s, g, &t[k], pos, n, NULL);
			if (ns < best_ns) {
				best_ns = ns;
				best = t[k].spread64;
			}
		}
		t[k].spread64 = best;
	}
}

static int has_draft(const struct wafer_plan_opts *o)
{
	return o->draft_params || o->draft_head;
}

/* What wafer_plan reports of spread_stages()' placement. */
static void report_spread(const struct wfs_profile *prof, const struct plan_geom *g,
			  const struct wafer_plan_opts *o, const struct plan_stage *t,
			  unsigned int n_stages, struct wafer_plan *p)
{
	u64 span = wfs_timing_span64(prof, g->layer_bytes);
	unsigned int k;

	if (!prof->core_sram_bytes || span == 64)
		return;
	p->layer_span64 = (uint32_t)span;
	p->spread64 = UINT32_MAX;
	for (k = 0; k < n_stages; k++) {
		uint32_t sp = WFS_MAX((uint32_t)span, t[k].spread64);

		p->spread64 = WFS_MIN(p->spread64, sp);
		p->spread64_max = WFS_MAX(p->spread64_max, sp);
	}
	p->spread_positions = has_draft(o) ? o->draft_tokens + 1 : 1;
}

/*
 * Modelled ns from a stage to the next: a fabric hop, a link at a device's
 * end, or the link between hosts at a host's end.
 */
static uint64_t hop_ns(const struct wfs_profile *prof, const struct plan_geom *g,
		       const struct plan_stage *st, u32 n)
{
	uint64_t bytes = (uint64_t)n * g->dims.act_bytes;

	if (st->last_of_host && g->host_link)
		return wafer_plan_link_ns(g->host_link, bytes, g->host_link_pct);
	if (st->last_of_device)
		return wfs_timing_ns(prof, wfs_timing_link_cycles(prof, bytes));
	return wfs_timing_ns(prof, wfs_timing_hop_cycles(prof, bytes));
}

static void emit(const struct wafer_plan_opts *o, const struct plan_stage *st,
		 enum wafer_plan_event_kind kind, u32 pos0, u32 n, uint64_t start, uint64_t dur)
{
	struct wafer_plan_event e = { .kind = kind, .device = st->device, .stage = st->index,
				      .pos0 = pos0, .n_tokens = n, .start_ns = start,
				      .dur_ns = dur };

	if (o->trace)
		o->trace(o->trace_arg, &e);
}

/*
 * The firmware's timeline: @len tokens from position @pos0 in chunks, the
 * first entering stage 0 at @t0, each stage busy until @free_at; the time
 * the last chunk's results are back at the host.
 */
static uint64_t run_chunks(const struct wfs_profile *prof, const struct wafer_plan_shape *s,
			   const struct plan_geom *g, const struct plan_stage *t,
			   unsigned int n_stages, u32 pos0, u32 len, uint64_t t0,
			   uint64_t *free_at, const struct wafer_plan_opts *o)
{
	uint64_t time = t0;
	unsigned int k;
	u32 pos, n;

	for (pos = pos0; pos < pos0 + len; pos += n) {
		n = WFS_MIN(prof->chunk_tokens, pos0 + len - pos);
		time = t0;
		for (k = 0; k < n_stages; k++) {
			uint64_t start = WFS_MAX(time, free_at[k]), hop;

			free_at[k] = start + stage_ns(prof, s, g, &t[k], pos, n, NULL);
			/* To the next stage, or the result's hop back to the host. */
			hop = k + 1 < n_stages ? hop_ns(prof, g, &t[k], n) :
			      wfs_timing_ns(prof, wfs_timing_hop_cycles(prof, (uint64_t)n *
									g->dims.act_bytes));
			emit(o, &t[k], WAFER_PLAN_EV_STAGE, pos, n, start, free_at[k] - start);
			emit(o, &t[k], t[k].last_of_device && k + 1 < n_stages ?
			     WAFER_PLAN_EV_LINK : WAFER_PLAN_EV_HOP, pos, n, free_at[k], hop);
			time = free_at[k] + hop;
		}
	}
	return time;
}

/* A prompt of @len tokens, then (traced) one decode step once it is done. */
static uint64_t prefill_ns(const struct wfs_profile *prof, const struct wafer_plan_shape *s,
			   const struct plan_geom *g, const struct plan_stage *t,
			   unsigned int n_stages, u32 len, const struct wafer_plan_opts *o)
{
	uint64_t *free_at = calloc(n_stages, sizeof(*free_at)), time;

	if (!free_at)
		return 0;
	time = run_chunks(prof, s, g, t, n_stages, 0, len, 0, free_at, o);
	if (o->trace && len < o->context)
		run_chunks(prof, s, g, t, n_stages, len, 1, time, free_at, o);
	free(free_at);
	return time;
}

/* Which term of a stage's modelled time is the largest. */
static const char *stage_bound(const struct wfs_profile *prof, const struct wfs_cost *c)
{
	/* Work on the cores holding a part's weights is compute (or their SRAM) too. */
	uint64_t compute = c->macs / prof->macs_per_cycle + c->placed;
	uint64_t sram = c->bytes / prof->sram_bytes_per_cycle;

	if (c->latency >= compute && c->latency >= sram)
		return "latency";
	return compute >= sram ? "compute" : "sram";
}

static void decode(const struct wfs_profile *prof, const struct wafer_plan_shape *s,
		   const struct plan_geom *g, const struct wafer_plan_opts *o,
		   const struct plan_stage *t, unsigned int n_stages, struct wafer_plan *p)
{
	uint64_t lat = 0, links = 0, host_links = 0, worst = 0, ns, period, b, wire;
	struct wfs_cost c, worst_c = { 0 };
	u32 pos = o->context - 1;
	unsigned int k;

	for (k = 0; k < n_stages; k++) {
		ns = stage_ns(prof, s, g, &t[k], pos, 1, &c);
		if (ns > worst) {
			worst = ns;
			worst_c = c;
		}
		lat += ns;
		if (k + 1 < n_stages) {
			uint64_t h = hop_ns(prof, g, &t[k], 1);

			lat += h;
			if (t[k].last_of_device)
				links += h;
			if (t[k].last_of_host)
				host_links += h;
		}
	}
	/* The result's hop back to the host, as the firmware counts it. */
	lat += wfs_timing_ns(prof, wfs_timing_hop_cycles(prof, g->dims.act_bytes));
	p->stages = n_stages;
	p->token_ns = lat;
	p->link_ns = links;
	p->host_link_ns = host_links;
	p->stage_ns = worst;
	p->tok_s_single = wfs_timing_rate(1, lat);
	/*
	 * B sequences in a decode loop: each waits for its token; a stage
	 * takes one at a time; no more decode at once than have their KV.
	 */
	b = WFS_MIN((uint64_t)o->batch, p->sequences_fit);
	/*
	 * A host link carries every token's activations one after the other:
	 * its bandwidth bounds the chain as its slowest stage does.
	 */
	wire = host_links && g->host_link ? wafer_plan_link_ns(g->host_link, g->dims.act_bytes, 0) : 0;
	period = WFS_MAX(lat, b * WFS_MAX(worst, wire));
	p->tok_s_aggregate = wfs_timing_rate(b, period);
	p->single_bound = links * 4 >= lat ? "links" : stage_bound(prof, &worst_c);
	if (b < o->batch)
		p->bound = "kv (fewer sequences fit than the batch)";
	else if (lat >= period)
		p->bound = "latency (too few sequences to fill the pipeline)";
	else if (wire > worst)
		p->bound = "host link bandwidth";
	else
		p->bound = stage_bound(prof, &worst_c);
}

void wafer_plan_draft_shape(uint64_t params, unsigned int vocab, struct wafer_plan_shape *out)
{
	unsigned int layers = params < 2000000000ull ? 16 : 32, d = 128;

	/* A layer has ~13 d^2 parameters with this shape, plus 2 V d embedding and head. */
	while (d < (1u << 16) && 13ull * layers * (d + 128) * (d + 128) +
	       2ull * vocab * (d + 128) <= params)
		d += 128;
	*out = (struct wafer_plan_shape){
		.name = "draft", .n_layers = layers, .dim = d, .hidden_dim = d / 2 * 7,
		.n_heads = d / 64, .n_kv_heads = WFS_MAX(d / 256, 1u), .head_dim = 64,
		.vocab = vocab,
	};
	if (out->n_heads % out->n_kv_heads)
		out->n_kv_heads = 1;
}

/* The target's step over k + 1 positions in one chunk, ending at the context. */
static uint64_t verify_ns(const struct wfs_profile *prof, const struct wafer_plan_shape *s,
			  const struct plan_geom *g, const struct plan_stage *t,
			  unsigned int n_stages, u32 pos0, u32 n)
{
	uint64_t ns = 0;
	unsigned int k;

	for (k = 0; k < n_stages; k++)
		ns += stage_ns(prof, s, g, &t[k], pos0, n, NULL) +
		      (k + 1 < n_stages ? hop_ns(prof, g, &t[k], n) : 0);
	return ns + wfs_timing_ns(prof, wfs_timing_hop_cycles(prof, (uint64_t)n *
							      g->dims.act_bytes));
}

/*
 * --trace of speculative decoding: after the prompt and the decode step
 * (prefill_ns()'s), one step: @k draft tokens of @draft_ns each on the
 * draft's devices (process @draft_pid), then the target's verify pass
 * over the k + 1 positions after the decode step, if the context holds
 * them.
 */
static void spec_trace(const struct wfs_profile *prof, const struct wafer_plan_shape *s,
		       const struct plan_geom *g, const struct plan_stage *t,
		       unsigned int n_stages, const struct wafer_plan_opts *o,
		       unsigned int draft_pid, uint64_t draft_ns, u32 k)
{
	struct plan_stage draft = { .device = draft_pid };
	struct wafer_plan_opts quiet = *o;
	uint64_t *free_at, time;
	u32 pos = o->prompt + 1, i;

	if ((uint64_t)pos + k + 1 > o->context ||
	    !(free_at = calloc(n_stages, sizeof(*free_at))))
		return;
	quiet.trace = NULL;
	time = run_chunks(prof, s, g, t, n_stages, 0, o->prompt, 0, free_at, &quiet);
	time = run_chunks(prof, s, g, t, n_stages, o->prompt, 1, time, free_at, &quiet);
	for (i = 0; i < k; i++, time += draft_ns)
		emit(o, &draft, WAFER_PLAN_EV_DRAFT, pos + i, 1, time, draft_ns);
	run_chunks(prof, s, g, t, n_stages, pos, k + 1, time, free_at, o);
	free(free_at);
}

static int plan_one(const struct wafer_plan_shape *s, const struct wafer_plan_opts *opts,
		    unsigned int link_pct, struct wafer_plan *p);


/*
 * A draft head (EAGLE): one decoder layer of the target's width and the
 * target's head, on the target's last stage; a token costs that layer's
 * decode and the head there, and the result's hop back to the host.
 */
static uint64_t head_draft_ns(const struct wfs_profile *prof, const struct wafer_plan_shape *s,
			      const struct plan_geom *g, const struct plan_stage *target,
			      u32 pos)
{
	struct plan_stage last = { .first = s->n_layers - 1, .count = 1,
				   .spread64 = target->spread64 };

	return stage_ns(prof, s, g, &last, pos, 1, NULL) +
	       wfs_timing_ns(prof, wfs_timing_hop_cycles(prof, g->dims.act_bytes));
}

static int speculate(const struct wfs_profile *prof, const struct wafer_plan_shape *s,
		     const struct plan_geom *g, const struct wafer_plan_opts *o,
		     const struct plan_stage *t, unsigned int n_stages, unsigned int link_pct,
		     struct wafer_plan *p)
{
	struct wafer_plan_opts od = *o;
	struct wafer_plan_shape ds;
	struct wafer_plan dp = { .devices = 0 };
	double a = o->draft_accept, e = 1, ak = 1;
	unsigned int k = o->draft_tokens, i;
	uint64_t step;
	int ret;

	if (o->draft_head) {
		dp.token_ns = head_draft_ns(prof, s, g, &t[n_stages - 1], o->context - 1);
	} else {
		wafer_plan_draft_shape(o->draft_params, s->vocab, &ds);
		od.devices = 0;
		od.batch = 1;
		od.draft_params = 0;
		od.deployment = 0;
		od.trace = NULL;
		od.hosts = 0;
		od.host_link = NULL;
		ret = plan_one(&ds, &od, link_pct, &dp);
		if (ret)
			return wafer_prefix_error(ret, "plan: the draft (%llu parameters)",
						  (unsigned long long)o->draft_params);
	}
	for (i = 1; i <= k; i++) {
		ak *= a;
		e += ak;	/* sum_{i=0..k} a^i = (1 - a^(k+1)) / (1 - a) */
	}
	p->draft_devices = dp.devices;
	p->draft_token_ns = dp.token_ns;
	p->verify_ns = verify_ns(prof, s, g, t, n_stages, o->context - k - 1, k + 1);
	p->tokens_per_step = e;
	step = (uint64_t)k * dp.token_ns + p->verify_ns;
	p->tok_s_spec = (uint64_t)(e * 1e9 / (double)step);
	p->tok_s_spec_ceiling = (uint64_t)((k + 1) * 1e9 / (double)step);
	p->draft_tokens = k;
	p->draft_accept = a;
	if (o->trace)
		spec_trace(prof, s, g, t, n_stages, o, p->devices, dp.token_ns, k);
	return 0;
}

/*
 * One layer of a weight-streaming pass over @b sequences at the end of
 * their context (@n = 1 each) or over a prompt (@b = 1, @n tokens): its
 * compute (the weights read once for all) and its streaming, in cycles.
 */
static void stream_layer_terms(const struct wfs_profile *prof, const struct plan_geom *g,
			       unsigned int l, u32 pos0, u32 n, uint64_t b, uint64_t *cycles,
			       uint64_t *stream)
{
	struct wfs_cost c = { 0 };
	uint64_t w = is_moe(g, l) ? g->moe_bytes : g->dense_bytes;

	if (is_moe(g, l))
		wfs_timing_moe_layer_cost(prof, &g->dims, &g->moe, pos0, n, &c);
	else
		wfs_timing_layer_cost(prof, &g->dims, w, pos0, n, &c);
	c.macs *= b;
	if (c.placed) {
		/* The parts' work on their own cores: b tokens through them at once. */
		struct wfs_cost cb = { 0 };

		wfs_timing_moe_layer_cost(prof, &g->dims, &g->moe, 0, (u32)(n * b), &cb);
		c.placed = cb.placed;
		c.bytes *= b;	/* the KV and activations: the weights are the parts' */
	} else {
		c.bytes = w + b * (c.bytes - WFS_MIN(c.bytes, w));
	}
	*cycles = wfs_timing_stage_cycles(prof, &c);
	*stream = wfs_timing_stream_cycles(prof, w);
}

/* The layer's time: the longer of the two; @streamed counts where streaming is. */
static uint64_t stream_layer_cycles(const struct wfs_profile *prof, const struct plan_geom *g,
				    unsigned int l, u32 pos0, u32 n, uint64_t b, int *streamed)
{
	uint64_t cycles, st;

	stream_layer_terms(prof, g, l, pos0, n, b, &cycles, &st);
	*streamed += st > cycles;
	return WFS_MAX(cycles, st);
}

/* An interval of @len cycles from cycle @t, on weight streaming's one stage. */
static void stream_emit(const struct wfs_profile *prof, const struct wafer_plan_opts *o,
			enum wafer_plan_event_kind kind, u32 pos0, u32 n, uint64_t t, uint64_t len)
{
	static const struct plan_stage st0;
	uint64_t start = wfs_timing_ns(prof, t);

	emit(o, &st0, kind, pos0, n, start, wfs_timing_ns(prof, t + len) - start);
}

/*
 * --trace of weight streaming: the prompt's pass, then one decode step,
 * layer after layer on the device's one stage, each the longer of its
 * compute and its weights' streaming; the embedding and head stream first.
 */
static void stream_trace(const struct wfs_profile *prof, const struct wafer_plan_shape *s,
			 const struct plan_geom *g, const struct wafer_plan_opts *o)
{
	uint64_t t = 0, c, w, eh = wfs_timing_stream_cycles(prof, g->embed_bytes + g->head_bytes);
	u32 pos0 = 0, n = o->prompt;
	unsigned int l;

	/* In cycles, so that the prompt's pass ends at the time to first token. */
	for (;;) {
		stream_emit(prof, o, WAFER_PLAN_EV_STREAM, pos0, n, t, eh);
		t += eh;
		for (l = 0; l < s->n_layers; l++) {
			stream_layer_terms(prof, g, l, pos0, n, 1, &c, &w);
			stream_emit(prof, o, WAFER_PLAN_EV_STAGE, pos0, n, t, c);
			stream_emit(prof, o, WAFER_PLAN_EV_STREAM, pos0, n, t, w);
			t += WFS_MAX(c, w);
		}
		if (pos0 || o->prompt >= o->context)
			return;
		pos0 = o->prompt;
		n = 1;
	}
}

/* Weight streaming on one device: weights pass through, SRAM holds two layers and the KV. */
static int stream_plan(const struct wfs_profile *prof, const struct wafer_plan_shape *s,
		       const struct plan_geom *g, const struct wafer_plan_opts *o,
		       struct wafer_plan *p)
{
	uint64_t dev = (uint64_t)prof->stages * prof->sram_bytes, resident = 2 * g->layer_bytes;
	uint64_t one = 0, all = 0, prompt = 0, b;
	int streamed = 0, dummy = 0;
	unsigned int l;

	if (!prof->stream_bytes_per_cycle)
		return wafer_set_error(-EINVAL, "plan: profile %s has no external weight store "
				       "to stream from (wafer, asic, wse3, wse2)", prof->name);
	if (o->devices > 1)
		return wafer_set_error(-EINVAL, "plan: weight streaming is projected on one "
				       "device, not %u", o->devices);
	if (resident + (uint64_t)s->n_layers * g->kv_pos_bytes * o->context > dev)
		return wafer_set_error(-ENOSPC, "plan: two layers and one sequence's KV do not "
				       "fit a %s device", prof->name);
	p->devices = 1;
	p->hosts = 1;
	p->layers_per_device = s->n_layers;
	p->stages = 1;
	p->why = "weight streaming";
	p->sequences_fit = (dev - resident) / ((uint64_t)s->n_layers * g->kv_pos_bytes *
					       o->context);
	b = WFS_MIN((uint64_t)o->batch, p->sequences_fit);
	for (l = 0; l < s->n_layers; l++) {
		one += stream_layer_cycles(prof, g, l, o->context - 1, 1, 1, &dummy);
		all += stream_layer_cycles(prof, g, l, o->context - 1, 1, b, &streamed);
		prompt += stream_layer_cycles(prof, g, l, 0, o->prompt, 1, &dummy);
	}
	/* The embedding and head stream too. */
	one += wfs_timing_stream_cycles(prof, g->embed_bytes + g->head_bytes);
	all += wfs_timing_stream_cycles(prof, g->embed_bytes + g->head_bytes);
	prompt += wfs_timing_stream_cycles(prof, g->embed_bytes + g->head_bytes);
	p->token_ns = wfs_timing_ns(prof, one);
	p->stage_ns = wfs_timing_ns(prof, all);
	p->ttft_ns = wfs_timing_ns(prof, prompt);
	if (o->trace)
		stream_trace(prof, s, g, o);
	p->tok_s_single = wfs_timing_rate(1, p->token_ns);
	p->tok_s_aggregate = wfs_timing_rate(b, p->stage_ns);
	p->single_bound = "streaming";
	p->bound = b < o->batch ? "kv (fewer sequences fit than the batch)" :
		   streamed * 2 > (int)s->n_layers ? "streaming" : "compute";
	return 0;
}

/*
 * The projection with the device link's latency at @link_pct percent of
 * the profile's (100: as published or fitted; the band varies it).
 */
static int plan_one(const struct wafer_plan_shape *s, const struct wafer_plan_opts *opts,
		    unsigned int link_pct, struct wafer_plan *p)
{
	struct wafer_plan_opts o = *opts;
	struct plan_stage *stages;
	unsigned int n_stages;
	struct wfs_profile prof;
	struct plan_geom g;
	uint64_t dev_bytes, kv_room;
	int ret;

	memset(p, 0, sizeof(*p));
	ret = check_shape(s);
	if (ret)
		return ret;
	if (!o.profile)
		o.profile = "wse3";
	if (wfs_profile_find(o.profile, &prof))
		return wafer_set_error(-EINVAL, "plan: unknown profile '%s' (wafer, asic, wse3, wse2, "
				       "lpu)",
				       o.profile);
	prof.link_hop_cycles = (u32)((uint64_t)prof.link_hop_cycles * link_pct / 100);
	if (!o.weight_bits)
		o.weight_bits = s->weight_bits;	/* a blob's own */
	if (o.weight_bits != 4 && o.weight_bits != 8 && o.weight_bits != 16)
		return wafer_set_error(-EINVAL, "plan: weight_bits %u (4, 8 or 16)", o.weight_bits);
	if (!o.batch || o.batch > 1u << 20)
		return wafer_set_error(-EINVAL, "plan: batch %u (1..2^20)", o.batch);
	if (!o.context || o.context > 1u << 24)
		return wafer_set_error(-EINVAL, "plan: context %u (1..2^24)", o.context);
	if (!o.prompt)
		o.prompt = WFS_MIN(o.context, 1024u);
	if (o.prompt > o.context)
		return wafer_set_error(-EINVAL, "plan: prompt %u longer than the context %u",
				       o.prompt, o.context);
	if (has_draft(&o) && !(o.draft_accept >= 0 && o.draft_accept < 1))
		return wafer_set_error(-EINVAL, "plan: draft_accept %g (0 to below 1)",
				       o.draft_accept);
	if (has_draft(&o) && (!o.draft_tokens || o.draft_tokens > 64 ||
			       o.draft_tokens + 1 > o.context))
		return wafer_set_error(-EINVAL, "plan: draft_tokens %u (1..64, below the context)",
				       o.draft_tokens);
	if (o.hosts > 4096)
		return wafer_set_error(-EINVAL, "plan: hosts %u (1..4096)", o.hosts);
	if (o.host_link && !o.host_link->bytes_per_s)
		return wafer_set_error(-EINVAL, "plan: host_link '%s' has no bandwidth",
				       o.host_link->name ? o.host_link->name : "");
	geometry(s, &o, &g);
	g.host_link = o.host_link;
	g.host_link_pct = link_pct;
	p->device_sram_bytes = (uint64_t)prof.stages * prof.sram_bytes;
	memcpy(p->profile, prof.name, sizeof(p->profile));
	p->profile[sizeof(p->profile) - 1] = '\0';
	ret = o.stream ? 0 : tensor_group(s, &o, &g, &prof, p);
	if (ret)
		return ret;
	dev_bytes = (uint64_t)prof.stages * prof.sram_bytes;
	p->weight_bytes = range_bytes(&g, 0, s->n_layers) + g.embed_bytes + g.head_bytes;
	p->layer_bytes = g.layer_bytes;
	p->active_params = g.active_params;
	p->params = g.params;
	p->kv_bytes_per_seq = (uint64_t)o.context * s->n_layers * g.kv_pos_bytes;
	p->prompt = o.prompt;
	if (o.stream)
		return has_draft(&o) ? wafer_set_error(-EINVAL, "plan: a draft with weight "
							"streaming is not modelled") :
		       stream_plan(&prof, s, &g, &o, p);
	ret = place(s, &o, &g, dev_bytes, p);
	if (ret)
		return ret;
	/* The fullest device: its layers' weights, plus the embedding or head. */
	kv_room = dev_bytes - max_device_bytes(&g, s->n_layers, p->devices) -
		  extra_bytes(&g, p->devices);
	p->sequences_fit = kv_room / ((uint64_t)p->layers_per_device * g.kv_pos_bytes * o.context);
	if (!p->sequences_fit)
		return wafer_set_error(-ENOSPC, "plan: not one sequence's KV (%u positions) fits "
				       "beside the weights of %u devices: give more devices or a "
				       "shorter context", o.context, p->devices);
	stages = stage_table(&prof, s, p, &n_stages);
	if (!stages)
		return wafer_set_error(-ENOMEM, "plan: out of memory");
	if (!o.no_spread)
		spread_stages(&prof, s, &g, stages, n_stages, o.context - 1,
			      has_draft(&o) ? o.draft_tokens + 1 : 1);
	report_spread(&prof, &g, &o, stages, n_stages, p);
	p->ttft_ns = prefill_ns(&prof, s, &g, stages, n_stages, o.prompt, &o);
	decode(&prof, s, &g, &o, stages, n_stages, p);
	ret = has_draft(&o) ? speculate(&prof, s, &g, &o, stages, n_stages, link_pct, p) : 0;
	free(stages);
	if (p->tensor_chips) {
		p->groups = p->devices;
		p->devices = p->groups * p->tensor_chips + p->extra_chips;
	}
	return ret;
}

/*
 * The band's residuals: published / projected for each calibration figure
 * of a profile that is a plain decode of a published shape
 * (struct wafer_plan_figure.band), projected as the figure says with the
 * nominal link.  wse2 takes wse3's (the same fabric assumed).
 */
struct plan_residuals {
	char profile[16];
	double low, high;
};

static struct plan_residuals residuals[8];
static unsigned int n_residuals;
static pthread_once_t residuals_once = PTHREAD_ONCE_INIT;

static void residuals_init(void)
{
	const struct wafer_plan_figure *f;
	struct wafer_plan fp;
	unsigned int i, k;

	for (i = 0; (f = wafer_plan_figure(i)); i++) {
		struct wafer_plan_opts o = { .profile = f->profile, .devices = f->devices,
					     .weight_bits = f->weight_bits, .batch = 1,
					     .context = 1024 };
		double r;

		if (!f->band || f->count || f->speculative ||
		    plan_one(wafer_plan_figure_shape(f), &o, 100, &fp) || !fp.tok_s_single)
			continue;
		r = f->published / (double)fp.tok_s_single;
		for (k = 0; k < n_residuals && strcmp(residuals[k].profile, f->profile); k++)
			;
		if (k == n_residuals) {
			if (k == sizeof(residuals) / sizeof(residuals[0]))
				continue;
			n_residuals++;
			strncpy(residuals[k].profile, f->profile, sizeof(residuals[k].profile) - 1);
			residuals[k].low = 1;
			residuals[k].high = 1;
		}
		residuals[k].low = WFS_MIN(residuals[k].low, r);
		residuals[k].high = WFS_MAX(residuals[k].high, r);
	}
}

static void profile_residuals(const char *profile, double *low, double *high)
{
	unsigned int k;

	pthread_once(&residuals_once, residuals_init);
	if (!strcmp(profile, "wse2"))
		profile = "wse3";
	*low = 1;
	*high = 1;
	for (k = 0; k < n_residuals; k++)
		if (!strcmp(residuals[k].profile, profile)) {
			*low = residuals[k].low;
			*high = residuals[k].high;
		}
}

/* The band's ends of @point: @end's projection scaled by @ratio, never past @point. */
static uint64_t band_end(uint64_t point, uint64_t end, double ratio, int high)
{
	uint64_t v = (uint64_t)((double)end * ratio + 0.5);

	return high ? WFS_MAX(v, point) : WFS_MIN(v, point);
}

/*
 * The band of a projection: the device link twice as slow (low) or fast
 * (high): a ~2 us Ethernet hop is an assumption; with a draft, its
 * acceptance at the ends of its range (struct wafer_plan.draft_accept_low
 * and _high) and a draft of a given size twice or half as large (one that
 * no longer fits keeps its size); then the residuals of the profile's
 * calibration figures.  Each end moves every assumption the same way, and
 * tokens/s falls with link latency and draft size and rises with
 * acceptance, so the ends bound every mix of them.
 */
static void plan_band(const struct wafer_plan_shape *s, const struct wafer_plan_opts *opts,
		      struct wafer_plan *p)
{
	struct wafer_plan_opts o = *opts;
	struct wafer_plan lo, hi;
	int ok_lo, ok_hi;

	profile_residuals(p->profile, &p->residual_low, &p->residual_high);
	o.trace = NULL;
	o.draft_accept = p->draft_accept_low;
	o.draft_params = opts->draft_params * 2;
	ok_lo = !plan_one(s, &o, 200, &lo);
	if (!ok_lo && o.draft_params) {
		o.draft_params = opts->draft_params;
		ok_lo = !plan_one(s, &o, 200, &lo);
	}
	o.draft_accept = p->draft_accept_high;
	o.draft_params = opts->draft_params ? WFS_MAX(opts->draft_params / 2, 1u) : 0;
	ok_hi = !plan_one(s, &o, 50, &hi);
	if (!ok_lo)
		lo = *p;
	if (!ok_hi)
		hi = *p;
	p->tok_s_single_low = band_end(p->tok_s_single, lo.tok_s_single, p->residual_low, 0);
	p->tok_s_single_high = band_end(p->tok_s_single, hi.tok_s_single, p->residual_high, 1);
	if (has_draft(opts)) {
		p->tok_s_spec_low = band_end(p->tok_s_spec, lo.tok_s_spec, p->residual_low, 0);
		p->tok_s_spec_high = band_end(p->tok_s_spec, hi.tok_s_spec, p->residual_high, 1);
	}
}

/*
 * The draft a production deployment of a family runs (docs/TIMING.md,
 * "Deployment", has the sources): a head on the target's last device
 * (EAGLE's one decoder layer, or a multi-token-prediction module), its
 * tokens per verify pass, and its per-token acceptance a with the range
 * the band spans; a chain of k tokens yields (1 - a^(k+1)) / (1 - a).
 */
struct plan_family {
	const char *prefix;	/* preset names it is for; NULL: any other */
	const char *draft;
	const char *source;
	unsigned int tokens;
	double accept, accept_low, accept_high;
};

static const struct plan_family families[] = {
	{ "kimi-k2", "multi-token prediction module (one layer + the head, on the last "
	  "device)", "DeepSeek-V3 report (the same architecture): the second token accepted "
	  "85-90 %", 1, 0.875, 0.85, 0.90 },
	{ NULL, "EAGLE-2 head (one layer of the model's width + its head, on the last "
	  "device)", "EAGLE-2: 4-5.5 tokens per draft-verify cycle (a = 0.80..0.90 over 6 "
	  "tokens gives 3.95..5.22)", 6, 0.85, 0.80, 0.90 },
};

static const struct plan_family *family_of(const struct wafer_plan_shape *s)
{
	const struct plan_family *f;

	for (f = families; f->prefix; f++)
		if (s->name && !strncmp(s->name, f->prefix, strlen(f->prefix)))
			return f;
	return f;
}

int wafer_plan(const struct wafer_plan_shape *s, const struct wafer_plan_opts *opts,
	       struct wafer_plan *p)
{
	struct wafer_plan_opts o = *opts;
	const struct plan_family *fam = NULL;
	int ret;

	if (o.deployment && !has_draft(&o) && !o.stream) {
		fam = family_of(s);
		o.draft_head = 1;
		o.draft_tokens = fam->tokens;
		o.draft_accept = fam->accept;
	}
	ret = plan_one(s, &o, 100, p);
	if (ret)
		return ret;
	if (fam) {
		p->deploy_draft = fam->draft;
		p->deploy_source = fam->source;
		p->draft_accept_low = fam->accept_low;
		p->draft_accept_high = fam->accept_high;
	} else {
		p->draft_accept_low = WFS_MAX(o.draft_accept - 0.1, 0.0);
		p->draft_accept_high = WFS_MAX(WFS_MIN(o.draft_accept + 0.1, 0.95), o.draft_accept);
	}
	plan_band(s, &o, p);
	return 0;
}
