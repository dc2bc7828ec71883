// SPDX-License-Identifier: MIT
/*
 * wfs_moe.c - mixture-of-experts feed-forward block (see wfs_moe.h).
 *
 * Stateless like wfs_forward.c: everything lives in the arguments.
 */
#include "wfs_moe.h"

#define WFS_MOE_LOGIT_LIMIT	(1LL << 50)	/* |logit| < 2^26 in Q24 */

/* Scratch: the selection, then s64 logits [n_experts], s64 gates [64]. */
static u64 wfs_moe_sel_bytes(void)
{
	return WFS_ALIGN_UP((u64)sizeof(struct wfs_moe_sel), 64ULL);
}

/**
 * wfs_moe_scratch_bytes() - scratch wfs_moe_ffn() needs
 * @n_experts: routed experts of the layer (0: a dense layer, none needed)
 *
 * Return: bytes, a multiple of 64.
 */
u64 wfs_moe_scratch_bytes(u32 n_experts)
{
	if (!n_experts)
		return 0;
	return wfs_moe_sel_bytes() +
	       WFS_ALIGN_UP(8ULL * n_experts, 64ULL) +
	       8ULL * WFS_MAX_EXPERTS_ACTIVE;
}

/**
 * wfs_mul_q30() - x * g / 2^30, rounded half up in magnitude
 * @x: value
 * @g: Q30 factor, at most 2^30 (a gate)
 *
 * Splits |x| at bit 30 so that nothing overflows; g = 2^30 returns @x.
 *
 * Return: the product, saturated to +-(2^63 - 1).
 */
s64 wfs_mul_q30(s64 x, u32 g)
{
	u64 m = wfs_abs64(x), hi = m >> 30, lo = m & (WFS_Q30_ONE - 1);
	u64 r;

	if (hi >= (1ULL << 33))
		r = (1ULL << 63) - 1;
	else
		r = hi * g + ((lo * g + (1ULL << 29)) >> 30);
	if (r > (1ULL << 63) - 1)
		r = (1ULL << 63) - 1;
	return x < 0 ? -(s64)r : (s64)r;
}

/* Insert expert @e into the top list by logit (ties: lower index first). */
static void wfs_moe_insert(const s64 *lq, u32 e, u32 k, u32 *top, u32 *n)
{
	u32 j;

	if (*n == k && lq[e] <= lq[top[k - 1]])
		return;
	j = *n < k ? (*n)++ : k - 1;
	for (; j > 0 && lq[e] > lq[top[j - 1]]; j--)
		top[j] = top[j - 1];
	top[j] = e;
}

/* Gates of the selected experts (ascending order) in Q30. */
static void wfs_moe_gates(const struct wfs_layer_view *v, const s64 *lq,
			  s64 *tmp, struct wfs_moe_sel *sel)
{
	u64 sum = 0;
	u32 i, k = sel->n;

	for (i = 0; i < k; i++)
		tmp[i] = lq[sel->expert[i]];
	if (v->gate_kind == WFS_GATE_SOFTMAX) {
		wfs_softmax_q30(tmp, k);
	} else if (v->gate_kind == WFS_GATE_SIGMOID) {
		for (i = 0; i < k; i++) {
			tmp[i] = wfs_sigmoid_q30(tmp[i]);
			sum += (u64)tmp[i];
		}
		for (i = 0; i < k; i++)
			tmp[i] = sum ? (s64)wfs_div64_u64(((u64)tmp[i] << 30) +
							  sum / 2, sum) :
				       (s64)wfs_div_u64(WFS_Q30_ONE, k);
	} else {
		for (i = 0; i < k; i++)
			tmp[i] = WFS_Q30_ONE;
	}
	for (i = 0; i < k; i++)
		sel->gate[i] = (u32)WFS_MIN(tmp[i], (s64)WFS_Q30_ONE);
}

/**
 * wfs_moe_route() - router logits, top-k selection and gates of a token
 * @v: bound MoE layer view
 * @h: the RMSNorm output, dim s16 values
 * @eh: its exponent
 * @logits: scratch, n_experts s64 then WFS_MAX_EXPERTS_ACTIVE s64
 * @sel: the selection, experts ascending, with their gates
 */
void wfs_moe_route(const struct wfs_layer_view *v, const s16 *h, s32 eh,
		   s64 *logits, struct wfs_moe_sel *sel)
{
	u32 top[WFS_MAX_EXPERTS_ACTIVE];
	u32 e, i, j, n = 0, k = v->n_active;
	s32 er = eh + v->router.scale_exp;

	wfs_matvec(&v->router, h, logits);
	for (e = 0; e < v->n_experts; e++) {
		logits[e] = wfs_scale_pow2(logits[e], er + 24,
					   WFS_MOE_LOGIT_LIMIT);
		wfs_moe_insert(logits, e, k, top, &n);
	}
	/* ascending expert order: the units then sit in the dense order */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && top[j] < top[j - 1]; j--) {
			u32 t = top[j];

			top[j] = top[j - 1];
			top[j - 1] = t;
		}
	sel->n = n;
	for (i = 0; i < n; i++)
		sel->expert[i] = top[i];
	wfs_moe_gates(v, logits, logits + v->n_experts, sel);
}

/* Expert of position @i in run order: the shared ones, then the routed. */
static u32 wfs_moe_nth(const struct wfs_layer_view *v,
		       const struct wfs_moe_sel *sel, u32 i, u32 *gate)
{
	if (i < v->n_shared) {
		*gate = WFS_Q30_ONE;
		return i;
	}
	*gate = sel->gate[i - v->n_shared];
	return v->n_shared + sel->expert[i - v->n_shared];
}

/**
 * wfs_moe_ffn() - the feed-forward block of an MoE layer for one token
 * @v: bound MoE layer view
 * @h: the RMSNorm output (dim s16); overwritten with the experts' SwiGLU
 *	outputs (the width of the selected experts, at most hidden)
 * @eh: its exponent
 * @a: scratch, 2 * hidden s64 (and at least dim)
 * @y: dim s64 outputs
 * @moe_scratch: wfs_moe_scratch_bytes(n_experts) bytes, 8-byte aligned;
 *	starts with the struct wfs_moe_sel of this token
 *
 * Return: the exponent of @y.
 */
s32 wfs_moe_ffn(const struct wfs_layer_view *v, s16 *h, s32 eh, s64 *a,
		s64 *y, void *moe_scratch)
{
	struct wfs_moe_sel *sel = moe_scratch;
	s64 *logits = (s64 *)((u8 *)moe_scratch + wfs_moe_sel_bytes());
	struct wfs_qmat w1, w2, w3;
	u32 i, j, g, n, off = 0;
	s32 e1 = 0, e3 = 0, e2 = 0, eu;

	wfs_moe_route(v, h, eh, logits, sel);
	n = v->n_shared + sel->n;
	for (i = 0; i < n; i++) {
		wfs_layer_expert(v, wfs_moe_nth(v, sel, i, &g), &w1, &w2, &w3);
		wfs_matvec(&w1, h, a + off);
		wfs_matvec(&w3, h, a + v->hidden + off);
		off += w1.rows;
		e1 = w1.scale_exp;
		e3 = w3.scale_exp;
	}
	eu = wfs_swiglu(a, eh + e1, a + v->hidden, eh + e3, off, h);
	WFS_MEMSET(y, 0, 8ULL * v->dim);
	for (i = 0, off = 0; i < n; i++) {
		wfs_layer_expert(v, wfs_moe_nth(v, sel, i, &g), &w1, &w2, &w3);
		wfs_matvec(&w2, h + off, a);
		for (j = 0; j < v->dim; j++)
			y[j] += g == WFS_Q30_ONE ? a[j] : wfs_mul_q30(a[j], g);
		off += w1.rows;
		e2 = w2.scale_exp;
	}
	return eu + e2;
}
