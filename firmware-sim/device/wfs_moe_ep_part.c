// SPDX-License-Identifier: MIT
/*
 * wfs_moe_ep_part.c - the layer parts of expert parallelism across devices
 * (WFW_PART_XHOME, WFW_PART_XSHARD; their phases: wfs_moe_ep.h): LOAD_MODEL's
 * fields, the SRAM a part takes, its copy.
 */
#include "wfs_moe_ep_part.h"
#include "wfs_moe_ep.h"
#include "wfs_log.h"
#include "wfs_xplace.h"

/**
 * wfs_ep_check_load() - LOAD_MODEL's expert-parallel fields
 * @log: the device's log: a line names the bad field
 * @info: the parsed blob
 * @p: the command
 *
 * Return: 0, or -WFS_EINVAL.
 */
int wfs_ep_check_load(struct wfs_log *log, const struct wfs_model_info *info,
		      const struct wfw_cmd_load_model *p)
{
	u64 end = (u64)p->expert_first + p->expert_count;

	if (!wfs_part_is_ep(p->part)) {
		if (!p->expert_first && !p->expert_count)
			return 0;
		wfs_log_printf(log, 1, "load: expert_first %u, expert_count %u: not a shard",
			       p->expert_first, p->expert_count);
		return -WFS_EINVAL;
	}
	if (info->ffn_kind != WFS_FFN_MOE || !info->n_experts) {
		wfs_log_printf(log, 1, "load: part %u: a dense model (no experts)",
			       p->part);
		return -WFS_EINVAL;
	}
	if (p->expert_group) {
		wfs_log_printf(log, 1, "load: expert_group %u with expert-parallel part %u",
			       p->expert_group, p->part);
		return -WFS_EINVAL;
	}
	if (p->part == WFW_PART_XHOME && (p->expert_first || p->expert_count)) {
		wfs_log_printf(log, 1, "load: expert_first %u, expert_count %u: the home",
			       p->expert_first, p->expert_count);
		return -WFS_EINVAL;
	}
	if (p->part == WFW_PART_XSHARD &&
	    (!p->expert_count || end > info->n_experts)) {
		wfs_log_printf(log, 1, "load: expert_count %u from %u: 1..%u experts",
			       p->expert_count, p->expert_first,
			       info->n_experts);
		return -WFS_EINVAL;
	}
	return 0;
}

/* A part's copy: the header and descriptors, then its tensors' bytes. */
static u64 shard_desc_bytes(const struct wfs_layer_view *v)
{
	return sizeof(struct wfs_section_header) +
	       (u64)(WFS_MOE_FIXED_TENSORS + 3 * (v->n_shared + v->n_experts)) *
	       sizeof(struct wfs_tensor_desc);
}

static u64 shard_experts_off(const struct wfs_layer_view *v)
{
	return WFS_ALIGN_UP(shard_desc_bytes(v), 64ULL);
}

/* A shard's map has one group (per 0): only that much of it is kept. */
#define SHARD_XMAP_BYTES	(sizeof(struct wfs_xmap) - \
				 (WFS_XMAP_MAX_GROUPS - 1) * sizeof(struct wfs_xgroup))

/* Descriptor @i of the layer's section at @sec. */
static struct wfs_tensor_desc *desc_at(u8 *sec, u32 i)
{
	return (struct wfs_tensor_desc *)(sec + sizeof(struct wfs_section_header) +
					  (u64)i * sizeof(struct wfs_tensor_desc));
}

/*
 * The home's bytes of the section: RMS_FFN, the router and the shared
 * experts follow each other (descriptor order, wfs_model.h) up to the
 * first routed expert.
 */
static u64 home_first(const struct wfs_layer_view *v)
{
	struct wfs_tensor_desc t;

	WFS_MEMCPY(&t, v->sec + sizeof(struct wfs_section_header) +
		   5ULL * sizeof(t), sizeof(t));
	return t.data_offset;
}

/**
 * wfs_ep_part_bytes() - SRAM an expert-parallel part of a layer takes
 * @v: the layer's view, bound on its whole section (in the blob)
 * @part: WFW_PART_XHOME or WFW_PART_XSHARD
 * @first: XSHARD: its first routed expert
 * @count: XSHARD: its routed experts
 *
 * Return: bytes; 0 for a layer without experts (the part cannot hold it).
 */
u64 wfs_ep_part_bytes(const struct wfs_layer_view *v, u32 part, u32 first,
		      u32 count)
{
	u64 x0, x1;

	if (!v->n_experts)
		return 0;
	if (part == WFW_PART_XHOME)
		return shard_experts_off(v) +
		       WFS_ALIGN_UP(wfs_xplace_expert_off(v, 0) - home_first(v),
				    64ULL);
	x0 = wfs_xplace_expert_off(v, first);
	x1 = wfs_xplace_expert_off(v, first + count);
	return shard_experts_off(v) + WFS_ALIGN_UP(x1 - x0, 64ULL) +
	       SHARD_XMAP_BYTES;
}

/* The shard keeps no tensor but its experts' (found by descriptor). */
static void shard_view(struct wfs_layer_view *v)
{
	WFS_MEMSET(&v->rms_att, 0, sizeof(v->rms_att));
	WFS_MEMSET(&v->rms_ffn, 0, sizeof(v->rms_ffn));
	WFS_MEMSET(&v->wq, 0, sizeof(v->wq));
	WFS_MEMSET(&v->wk, 0, sizeof(v->wk));
	WFS_MEMSET(&v->wv, 0, sizeof(v->wv));
	WFS_MEMSET(&v->wo, 0, sizeof(v->wo));
	WFS_MEMSET(&v->router, 0, sizeof(v->router));
	WFS_MEMSET(&v->w1, 0, sizeof(v->w1));
	WFS_MEMSET(&v->w2, 0, sizeof(v->w2));
	WFS_MEMSET(&v->w3, 0, sizeof(v->w3));
	v->rope = NULL;
}

/*
 * The home's copy: the header and descriptors, then RMS_FFN, the router and
 * the shared experts, their descriptors moved to where they are now (the
 * others keep the shapes the home reads, never their bytes).
 */
static void home_copy(struct wfs_layer_view *v, u8 *dst)
{
	u64 f0 = home_first(v), x0 = wfs_xplace_expert_off(v, 0);
	u64 d = shard_experts_off(v), delta = f0 - d;
	u32 i, n = WFS_MOE_FIXED_TENSORS + 3 * v->n_shared;
	struct wfs_tensor_desc *t;

	WFS_MEMCPY(dst, v->sec, shard_desc_bytes(v));
	WFS_MEMCPY(dst + d, v->sec + f0, x0 - f0);
	for (i = 5; i < n; i++) {
		t = desc_at(dst, i);
		t->data_offset -= delta;
		if (t->scale_offset >= f0)
			t->scale_offset -= delta;
	}
	v->rms_ffn.data = (const s16 *)((const u8 *)v->rms_ffn.data - v->sec -
					delta + dst);
	v->router.data = v->router.data - v->sec - delta + dst;
	v->router.scales = (const u16 *)((const u8 *)v->router.scales - v->sec -
					 delta + dst);
	WFS_MEMSET(&v->rms_att, 0, sizeof(v->rms_att));
	WFS_MEMSET(&v->wq, 0, sizeof(v->wq));
	WFS_MEMSET(&v->wk, 0, sizeof(v->wk));
	WFS_MEMSET(&v->wv, 0, sizeof(v->wv));
	WFS_MEMSET(&v->wo, 0, sizeof(v->wo));
	WFS_MEMSET(&v->w1, 0, sizeof(v->w1));
	WFS_MEMSET(&v->w2, 0, sizeof(v->w2));
	WFS_MEMSET(&v->w3, 0, sizeof(v->w3));
	v->rope = NULL;
	v->sec = dst;
}

/**
 * wfs_ep_part_copy() - copy a layer's expert-parallel part into SRAM
 * @v: the layer's view, bound on its whole section; on return bound on
 *	@dst: the home's with the FFN norm, router and shared experts only
 *	(wfs_layer_expert() of a routed expert is not for it: the shards hold
 *	them), a shard's with only its experts (xmap group 0, per 0) and no
 *	other tensor
 * @part: WFW_PART_XHOME or WFW_PART_XSHARD
 * @first: XSHARD: its first routed expert
 * @count: XSHARD: its routed experts
 * @dst: wfs_ep_part_bytes() bytes, 64-byte aligned
 */
void wfs_ep_part_copy(struct wfs_layer_view *v, u32 part, u32 first,
		      u32 count, u8 *dst)
{
	u64 x0, x1, xo = shard_experts_off(v), bytes;
	struct wfs_xmap *xm;

	bytes = wfs_ep_part_bytes(v, part, first, count);
	if (part == WFW_PART_XHOME) {
		home_copy(v, dst);
		v->weight_bytes = bytes;
		return;
	}
	x0 = wfs_xplace_expert_off(v, first);
	x1 = wfs_xplace_expert_off(v, first + count);
	xm = (struct wfs_xmap *)(dst + xo + WFS_ALIGN_UP(x1 - x0, 64ULL));
	WFS_MEMCPY(dst, v->sec, shard_desc_bytes(v));
	WFS_MEMCPY(dst + xo, v->sec + x0, x1 - x0);
	WFS_MEMSET(xm, 0, SHARD_XMAP_BYTES);
	xm->n = 1;
	xm->g[0].first = first;
	xm->g[0].count = count;
	xm->g[0].off = x0;
	xm->g[0].bytes = x1 - x0;
	xm->g[0].base = dst + xo;
	shard_view(v);
	v->sec = dst;
	v->xmap = xm;
	v->weight_bytes = bytes;
}

/**
 * wfs_ep_rec_bytes() - bytes of an expert-parallel part's record
 * @info: the parsed model
 *
 * Return: WFW_XREC_SIZE(dim, hidden_dim).
 */
u32 wfs_ep_rec_bytes(const struct wfs_model_info *info)
{
	return WFW_XREC_SIZE(info->dim, info->hidden_dim);
}
