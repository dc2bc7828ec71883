// SPDX-License-Identifier: MIT
/*
 * wfs_xplace.c - expert groups placed across stages (see wfs_xplace.h).
 */
#include "wfs_xplace.h"
#include "wfs_device_priv.h"
#include "wfs_timing.h"

WFS_STATIC_ASSERT(WFS_XMAP_MAX_GROUPS == WFW_MAX_EXPERT_GROUPS,
		  "expert groups per layer");

/*
 * Section offset of routed expert @e's first byte (its W1 data); for
 * @e = n_experts, of the RoPE table that follows the last expert.
 */
u64 wfs_xplace_expert_off(const struct wfs_layer_view *v, u32 e)
{
	struct wfs_tensor_desc t;

	WFS_MEMCPY(&t, v->sec + sizeof(struct wfs_section_header) +
		   (u64)(WFS_MOE_FIXED_TENSORS + 3 * (v->n_shared + e)) *
		   sizeof(t), sizeof(t));
	return t.data_offset;
}

static u64 xmap_off(const struct wfs_layer_view *v, u64 size)
{
	return WFS_ALIGN_UP(wfs_xplace_expert_off(v, 0) + size -
			    wfs_xplace_expert_off(v, v->n_experts), 64ULL);
}

/**
 * wfs_xplace_local_bytes() - SRAM an MoE layer's stage keeps with groups
 * @v: the layer's view, bound on its whole section (in the blob)
 * @size: the section's bytes
 * @per: routed experts per group
 *
 * Return: bytes of the layer's copy without its routed experts, with its
 * struct wfs_xmap; 0 for a dense layer or more than WFS_XMAP_MAX_GROUPS
 * groups.
 */
u64 wfs_xplace_local_bytes(const struct wfs_layer_view *v, u64 size, u32 per)
{
	if (!v->n_experts || !per ||
	    (v->n_experts + per - 1) / per > WFS_XMAP_MAX_GROUPS)
		return 0;
	return xmap_off(v, size) + sizeof(struct wfs_xmap);
}

/* Point a qmat bound in [@sec, +@n) at the same bytes in @dst. */
static void reloc_qmat(struct wfs_qmat *q, const u8 *sec, u64 n, u8 *dst)
{
	const u8 *d = q->data, *s = (const u8 *)q->scales;

	if (d && d >= sec && d < sec + n)
		q->data = dst + (d - sec);
	if (s && s >= sec && s < sec + n)
		q->scales = (const u16 *)(dst + (s - sec));
}

static void reloc_vec(struct wfs_vec16 *g, const u8 *sec, u64 n, u8 *dst)
{
	const u8 *d = (const u8 *)g->data;

	if (d && d >= sec && d < sec + n)
		g->data = (const s16 *)(dst + (d - sec));
}

/**
 * wfs_xplace_copy() - copy an MoE layer's local bytes, set up its groups
 * @v: the layer's view, bound on its whole section; on return bound on
 *	@dst, its groups (not yet placed: no base) in @v->xmap
 * @size: the section's bytes
 * @per: routed experts per group
 * @dst: wfs_xplace_local_bytes() bytes, 64-byte aligned
 */
void wfs_xplace_copy(struct wfs_layer_view *v, u64 size, u32 per, u8 *dst)
{
	u64 x0 = wfs_xplace_expert_off(v, 0), rope = wfs_xplace_expert_off(v, v->n_experts);
	struct wfs_xmap *xm = (struct wfs_xmap *)(dst + xmap_off(v, size));
	const u8 *sec = v->sec;
	u32 g;

	WFS_MEMSET(xm, 0, sizeof(*xm));
	xm->per = per;
	xm->n = (v->n_experts + per - 1) / per;
	for (g = 0; g < xm->n; g++) {
		xm->g[g].first = g * per;
		xm->g[g].count = WFS_MIN(per, v->n_experts - g * per);
		xm->g[g].off = wfs_xplace_expert_off(v, g * per);
		xm->g[g].bytes = wfs_xplace_expert_off(v, g * per + xm->g[g].count) -
				 xm->g[g].off;
	}
	WFS_MEMCPY(dst, sec, x0);
	WFS_MEMCPY(dst + x0, sec + rope, size - rope);
	/* Every tensor before the routed experts keeps its offset. */
	reloc_vec(&v->rms_att, sec, x0, dst);
	reloc_vec(&v->rms_ffn, sec, x0, dst);
	reloc_qmat(&v->wq, sec, x0, dst);
	reloc_qmat(&v->wk, sec, x0, dst);
	reloc_qmat(&v->wv, sec, x0, dst);
	reloc_qmat(&v->wo, sec, x0, dst);
	reloc_qmat(&v->router, sec, x0, dst);
	v->rope = (const u64 *)(dst + x0 + ((const u8 *)v->rope - sec - rope));
	v->sec = dst;
	v->xmap = xm;
	WFS_MEMSET(&v->w1, 0, sizeof(v->w1));
	WFS_MEMSET(&v->w2, 0, sizeof(v->w2));
	WFS_MEMSET(&v->w3, 0, sizeof(v->w3));
}

/*
 * Free SRAM of stage @s for a group: its largest gap, at most what the
 * other models leave it, less @m's own minimum KV (and slot table) there.
 */
static u64 group_room(struct wfs_device *dev, const struct wfs_model_state *m,
		      u32 s)
{
	struct wfs_stage *st = &dev->stages[s];
	const struct wfs_alloc *kv = &m->table.a[WFS_A_KV];
	u64 gap = WFS_MIN(wfs_sram_largest_free(&st->sram),
			  wfs_stage_room(dev, m, s)), keep;

	keep = (u64)st->mdl[m->idx].n_layers * kv->count *
	       wfs_sram_block_size(kv->bytes);
	if (!s)
		keep += wfs_sram_block_size(m->table.a[WFS_A_SLOTS].bytes);
	return gap > keep ? gap - keep : 0;
}

/* The stage with the most room for a group (ties: the lowest). */
static u32 group_stage(struct wfs_device *dev, const struct wfs_model_state *m,
		       u64 *room)
{
	u32 s, best = 0;
	u64 r;

	*room = 0;
	for (s = 0; s < dev->hw.prof.stages; s++) {
		r = group_room(dev, m, s);
		if (r > *room) {
			*room = r;
			best = s;
		}
	}
	return best;
}

/* Place group @g of layer @layer (blob numbering) and copy it there. */
static int group_place(struct wfs_device *dev, struct wfs_model_state *m,
		       const u8 *blob, struct wfs_xgroup *g, u32 layer,
		       struct wfw_cpl *c)
{
	const u8 *sec = blob + m->table.layer[wfs_load_row(m, layer)].offset;
	char name[WFS_SRAM_NAME_LEN];
	u64 room;
	u32 s = group_stage(dev, m, &room);
	u8 *p = NULL;

	wfs_snprintf(name, sizeof(name), "L%u.x%u-%u", layer, g->first,
		     g->first + g->count - 1);
	if (room >= wfs_sram_block_size(g->bytes))
		p = wfs_stage_alloc(&dev->stages[s], m, g->bytes, name, 0);
	if (!p) {
		wfs_log_printf(&dev->hw.log, 1,
			       "load: layer %u experts %u-%u (%llu KiB) fit no stage: largest free %llu KiB",
			       m->info.first_layer + layer, g->first,
			       g->first + g->count - 1,
			       (unsigned long long)(g->bytes >> 10),
			       (unsigned long long)(room >> 10));
		c->value = g->bytes;
		c->result0 = m->info.first_layer + layer;
		c->result1 = (u32)WFS_MIN(room >> 10, (u64)0xffffffffu);
		return -WFS_ENOSPC;
	}
	WFS_MEMCPY(p, sec + g->off, g->bytes);
	g->base = p;
	g->stage = s;
	return 0;
}

/**
 * wfs_xplace_groups() - place the expert groups of model @m's MoE layers
 * @dev: the device, the model's stages loaded
 * @m: the model (xgroup set)
 * @blob: the mapped blob
 * @c: completion: on -WFS_ENOSPC its fields name the group (wfw_abi.h)
 *
 * Return: 0, or -WFS_ENOSPC with a log line naming the layer and experts.
 */
int wfs_xplace_groups(struct wfs_device *dev, struct wfs_model_state *m,
		      const u8 *blob, struct wfw_cpl *c)
{
	u32 s, l, g;
	int ret;

	for (s = 0; s < m->map.stages_used; s++) {
		struct wfs_stage_model *sm = &dev->stages[s].mdl[m->idx];

		for (l = 0; l < sm->n_layers; l++) {
			struct wfs_xmap *xm =
				(struct wfs_xmap *)sm->lviews[l].xmap;

			for (g = 0; xm && g < xm->n; g++) {
				ret = group_place(dev, m, blob, &xm->g[g],
						  sm->first_layer + l, c);
				if (ret)
					return ret;
			}
		}
	}
	return 0;
}

/**
 * wfs_xplace_tokens() - count a token in the groups it selected
 * @v: the MoE layer (with expert groups)
 * @sel: the token's selection (experts ascending)
 * @n_tok: per group, tokens of the chunk that selected one of its experts
 */
void wfs_xplace_tokens(const struct wfs_layer_view *v,
		       const struct wfs_moe_sel *sel, u32 *n_tok)
{
	u32 i, g, last = ~0u;

	for (i = 0; i < sel->n; i++) {
		g = sel->expert[i] / v->xmap->per;
		if (g != last)
			n_tok[g]++;
		last = g;
	}
}

/**
 * wfs_xplace_hop_cycles() - the chunk's dispatch and combine hops
 * @p: the device profile
 * @v: the MoE layer (with expert groups)
 * @stage: the layer's stage
 * @n_tok: per group, tokens of the chunk that selected it
 * @act: activation record bytes A
 *
 * Return: the sum over the groups on other stages with n_g tokens of
 * 2 * (hop_cycles + ceil(n_g * A / fabric_bytes_per_cycle)).
 */
u64 wfs_xplace_hop_cycles(const struct wfs_profile *p,
			  const struct wfs_layer_view *v, u32 stage,
			  const u32 *n_tok, u32 act)
{
	u64 cycles = 0;
	u32 g;

	for (g = 0; g < v->xmap->n; g++) {
		if (n_tok[g] && v->xmap->g[g].stage != stage)
			cycles += 2 * wfs_timing_hop_cycles(p, (u64)n_tok[g] *
							    act);
	}
	return cycles;
}
