// SPDX-License-Identifier: MIT
/*
 * wfs_part.c - the parts of a layer (see wfs_part.h).
 */
#include "wfs_part.h"

#define PART_ALIGN	64ULL

static u64 qmat_data_bytes(const struct wfs_qmat *m)
{
	return (u64)m->rows * m->row_bytes;
}

static u64 qmat_scale_bytes(const struct wfs_qmat *m)
{
	return 2ULL * m->rows * m->n_groups;
}

/*
 * Walk the part's tensors: with @dst NULL only count, else copy each to
 * the next aligned offset of @dst and point the view at the copy.
 */
static u64 part_walk(struct wfs_layer_view *v, u32 part, u8 *dst)
{
	struct wfs_qmat *q[4];
	struct wfs_vec16 *g;
	u64 off = 0, n;
	u32 i;

	if (part == WFW_PART_ATTN) {
		q[0] = &v->wq;
		q[1] = &v->wk;
		q[2] = &v->wv;
		q[3] = &v->wo;
		g = &v->rms_att;
	} else {
		q[0] = &v->w1;
		q[1] = &v->w2;
		q[2] = &v->w3;
		q[3] = NULL;
		g = &v->rms_ffn;
	}
	for (i = 0; i < 4 && q[i]; i++) {
		n = qmat_data_bytes(q[i]);
		if (dst) {
			WFS_MEMCPY(dst + off, q[i]->data, n);
			q[i]->data = dst + off;
		}
		off = WFS_ALIGN_UP(off + n, PART_ALIGN);
		n = qmat_scale_bytes(q[i]);
		if (dst) {
			WFS_MEMCPY(dst + off, q[i]->scales, n);
			q[i]->scales = (const u16 *)(dst + off);
		}
		off = WFS_ALIGN_UP(off + n, PART_ALIGN);
	}
	n = 2ULL * g->n;
	if (dst) {
		WFS_MEMCPY(dst + off, g->data, n);
		g->data = (const s16 *)(dst + off);
	}
	off = WFS_ALIGN_UP(off + n, PART_ALIGN);
	if (part == WFW_PART_ATTN) {
		n = 4ULL * v->head_size;	/* head_size / 2 u64 */
		if (dst) {
			WFS_MEMCPY(dst + off, v->rope, n);
			v->rope = (const u64 *)(dst + off);
		}
		off = WFS_ALIGN_UP(off + n, PART_ALIGN);
	}
	return off;
}

/**
 * wfs_part_bytes() - SRAM a part of a bound layer takes
 * @v: the layer's view, bound on its whole section
 * @part: WFW_PART_ATTN or WFW_PART_FFN
 *
 * Return: bytes of the part's copy; 0 when the part is the whole section
 * (WFW_PART_WHOLE, or the FFN part of an MoE layer).
 */
u64 wfs_part_bytes(const struct wfs_layer_view *v, u32 part)
{
	struct wfs_layer_view tmp = *v;

	if (part == WFW_PART_WHOLE || (part == WFW_PART_FFN && v->n_experts))
		return 0;
	return part_walk(&tmp, part, NULL);
}

/**
 * wfs_part_copy() - copy a part's tensors and point the view at them
 * @v: the layer's view, bound on its whole section; on return it is the
 *	part's view: the other part's tensors are gone (zeroed), weight_bytes
 *	is the copy's size and an attention part has no experts
 * @part: WFW_PART_ATTN, or WFW_PART_FFN of a dense layer
 * @dst: wfs_part_bytes() bytes, 64-byte aligned
 */
void wfs_part_copy(struct wfs_layer_view *v, u32 part, u8 *dst)
{
	v->weight_bytes = part_walk(v, part, dst);
	v->sec = NULL;
	if (part == WFW_PART_ATTN) {
		WFS_MEMSET(&v->rms_ffn, 0, sizeof(v->rms_ffn));
		WFS_MEMSET(&v->w1, 0, sizeof(v->w1));
		WFS_MEMSET(&v->w2, 0, sizeof(v->w2));
		WFS_MEMSET(&v->w3, 0, sizeof(v->w3));
		WFS_MEMSET(&v->router, 0, sizeof(v->router));
		v->n_experts = 0;
		v->n_active = 0;
		v->n_shared = 0;
	} else {
		WFS_MEMSET(&v->rms_att, 0, sizeof(v->rms_att));
		WFS_MEMSET(&v->wq, 0, sizeof(v->wq));
		WFS_MEMSET(&v->wk, 0, sizeof(v->wk));
		WFS_MEMSET(&v->wv, 0, sizeof(v->wv));
		WFS_MEMSET(&v->wo, 0, sizeof(v->wo));
		v->rope = NULL;
	}
}
