/* SPDX-License-Identifier: MIT */
/*
 * ref_moe.h - fp32 mixture-of-experts FFN for the reference forward pass
 * (ref_llama.h): the float counterpart of libwafer's sparse upcycling
 * (wafer_moe_upcycle()) run by firmware-sim's integer MoE block.  Each
 * layer's hidden units are split into n_shared + n_experts contiguous
 * experts on the boundaries of W2's scale groups, as the upcycling does;
 * router row e is the mean of expert e's fp32 W1 rows, or the blob's
 * router (ref_moe_router_from()); the top-k logits
 * (ties to the lower expert) are weighed by a softmax over them, their
 * normalised sigmoids, or 1 (WFS_GATE_*); shared experts weigh 1.
 */
#ifndef REF_MOE_H
#define REF_MOE_H

#include "ref_llama.h"
#include "wfs_math.h"

/**
 * struct ref_moe - the upcycled shape and its fp32 routers
 * @n_experts: routed experts per layer
 * @top_k: routed experts each token runs
 * @n_shared: shared experts
 * @gate: WFS_GATE_*
 * @cut: [n_shared + n_experts + 1] hidden unit boundaries, shared first
 * @router: [n_layers][n_experts][dim]
 * @logits: [n_experts] scratch
 * @dim: model width
 */
struct ref_moe {
	unsigned int n_experts;
	unsigned int top_k;
	unsigned int n_shared;
	unsigned int gate;
	unsigned int *cut;
	float *router;
	float *logits;
	unsigned int dim;
};

/* The shape of wafer_moe_upcycle() with W2 groups of @group_size. */
int ref_moe_init(struct ref_moe *m, const struct wfs_ckpt *c, unsigned int n_experts,
		 unsigned int top_k, unsigned int n_shared, unsigned int gate,
		 unsigned int group_size);
/*
 * Layer @l's router from a blob's int8 router (dequantised): the model's
 * own router, where the fp32 mean of W1 rows differs from it by rounding.
 */
int ref_moe_router_from(struct ref_moe *m, int l, const struct wfs_qmat *r);
void ref_moe_free(struct ref_moe *m);
/*
 * The top_k experts of router logits @lg by logit, ties to the lower index,
 * into @sel (best first), and their gates into @g.
 */
void ref_moe_route(const struct ref_moe *m, const float *lg, unsigned int *sel, float *g);
/* Layer @l's FFN of the normalised s->xb, added into s->x. */
void ref_moe_ffn(const struct ref_moe *m, struct ref_state *s, int l);

#endif /* REF_MOE_H */
