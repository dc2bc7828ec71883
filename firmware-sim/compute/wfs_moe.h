/* SPDX-License-Identifier: MIT */
/*
 * wfs_moe.h - the integer-only mixture-of-experts feed-forward block of one
 * token: router, top-k selection, gates, the experts' SwiGLU and the
 * combination of their down projections.
 *
 * Numerics (h: the s16 RMSNorm output, real value h * 2^eh):
 *   logits = ROUTER h, in Q24                          wfs_matvec()
 *   top-k: the n_active largest, ties to the lower expert index
 *   gates (Q30): softmax over the top-k logits (WFS_GATE_SOFTMAX), or
 *     sigmoid(logit) / sum of the selected sigmoids (WFS_GATE_SIGMOID), or
 *     1 each (WFS_GATE_UNIT); shared experts always weigh 1
 *   the selected experts, shared first then routed in index order, put
 *     their W1 h and W3 h side by side; one wfs_swiglu() over all of them
 *     (one exponent), so the block is the dense FFN of their units
 *   y = sum_x gate_x * W2_x u_x in one s64 accumulator: a gate of 1 adds
 *     the partial sums unchanged, so with every expert selected and unit
 *     gates the result is bit for bit the dense FFN whose hidden units the
 *     experts partition (integer sums do not depend on their order, and
 *     every scale group of the dense W2 lies within one expert)
 */
#ifndef WFS_MOE_H
#define WFS_MOE_H

#include "wfs_compat.h"
#include "wfs_math.h"
#include "wfs_model.h"

/**
 * struct wfs_moe_sel - the experts one token ran
 * @n: routed experts selected (the layer's n_active)
 * @expert: their indices among the routed experts, ascending
 * @gate: their gates in Q30
 */
struct wfs_moe_sel {
	u32 n;
	u32 expert[WFS_MAX_EXPERTS_ACTIVE];
	u32 gate[WFS_MAX_EXPERTS_ACTIVE];
};

u64 wfs_moe_scratch_bytes(u32 n_experts);
s64 wfs_mul_q30(s64 x, u32 g);
void wfs_moe_route(const struct wfs_layer_view *v, const s16 *h, s32 eh,
		   s64 *logits, struct wfs_moe_sel *sel);
s32 wfs_moe_ffn(const struct wfs_layer_view *v, s16 *h, s32 eh, s64 *a,
		s64 *y, void *moe_scratch);

#endif /* WFS_MOE_H */
