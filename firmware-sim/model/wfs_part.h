/* SPDX-License-Identifier: MIT */
/*
 * wfs_part.h - the parts of a layer (attention-FFN disaggregation,
 * WFW_PART_* in wfw_abi.h): which tensors of a bound layer view each part
 * needs, the SRAM they take, and their copy into it.
 *
 * A part's copy holds its tensors back to back, each 64-byte aligned, and
 * the view is pointed at the copy: an attention part keeps rms_att, Wq,
 * Wk, Wv, Wo and the RoPE table; a dense FFN part rms_ffn, w1, w2, w3.  An
 * MoE layer's FFN part is its whole section (wfs_layer_expert() reads the
 * experts' descriptors from it): wfs_part_bytes() says so by returning 0,
 * and the caller copies and binds the section as a whole layer's.
 */
#ifndef WFW_PART_H
#define WFW_PART_H

#include "wfs_compat.h"
#include "wfs_model.h"
#include "wfw_abi.h"

/* Parts with the KV cache (and the embedding): whole layers, attention. */
static inline int wfs_part_has_kv(u32 part)
{
	return part == WFW_PART_WHOLE || part == WFW_PART_ATTN;
}

u64 wfs_part_bytes(const struct wfs_layer_view *v, u32 part);
void wfs_part_copy(struct wfs_layer_view *v, u32 part, u8 *dst);

#endif /* WFW_PART_H */
