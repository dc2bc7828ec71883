/* SPDX-License-Identifier: MIT */
/*
 * wfs_xplace.h - expert groups placed across stages (LOAD_MODEL
 * expert_group, ABI 1.6).
 *
 * An MoE layer's routed experts are split into groups of xgroup
 * consecutive experts.  The layer's stage keeps a copy of its section
 * without them: the bytes before routed expert 0 (header, descriptors,
 * attention, norms, router, shared experts), then the tail from the RoPE
 * table on, then the layer's struct wfs_xmap.  Each group's byte range of
 * the section (its experts' data, scales and gaps) is copied as is into
 * the SRAM of the stage with the most room, and wfs_layer_expert() reads
 * a routed expert's tensors there: the same bytes, so the same integer
 * math in the same order as local experts.
 *
 * Modelled cost (docs/TIMING.md): per chunk and MoE layer, each group on
 * another stage that n_g >= 1 tokens of the chunk selected costs a
 * dispatch and a combine hop on the fabric,
 *   2 * (hop_cycles + ceil(n_g * A / fabric_bytes_per_cycle)),
 * added to the layer's stage's cycles (A: the activation record bytes).
 */
#ifndef WFS_XPLACE_H
#define WFS_XPLACE_H

#include "wfs_compat.h"
#include "wfs_model.h"
#include "wfs_moe.h"
#include "wfs_profile.h"

struct wfs_device;
struct wfs_model_state;
struct wfw_cpl;

u64 wfs_xplace_expert_off(const struct wfs_layer_view *v, u32 e);
u64 wfs_xplace_local_bytes(const struct wfs_layer_view *v, u64 size,
			   u32 per);
void wfs_xplace_copy(struct wfs_layer_view *v, u64 size, u32 per, u8 *dst);
int wfs_xplace_groups(struct wfs_device *dev, struct wfs_model_state *m,
		      const u8 *blob, struct wfw_cpl *c);
void wfs_xplace_tokens(const struct wfs_layer_view *v,
		       const struct wfs_moe_sel *sel, u32 *n_tok);
u64 wfs_xplace_hop_cycles(const struct wfs_profile *p,
			  const struct wfs_layer_view *v, u32 stage,
			  const u32 *n_tok, u32 act);

#endif /* WFS_XPLACE_H */
