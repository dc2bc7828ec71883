// SPDX-License-Identifier: MIT
/*
 * wfs_moe_ep.c - the phases of an expert-parallel MoE layer (see
 * wfs_moe_ep.h): wfs_moe_ffn()'s steps on struct wfw_xrec records.
 */
#include "wfs_moe_ep.h"
#include "wfs_forward.h"
#include "wfs_math.h"
#include "wfs_moe.h"

WFS_STATIC_ASSERT(WFW_XREC_MAX_SEL == WFS_MAX_EXPERTS_ACTIVE,
		  "selected experts per record");
WFS_STATIC_ASSERT(sizeof(struct wfw_xrec_hdr) % 64 == 0, "xrec header");

/* The record's parts (offsets in wfw_abi.h). */
struct ep_rec {
	struct wfw_xrec_hdr *xh;
	s32 *x;
	s16 *h;
	s64 *a1;
	s64 *a3;
	s16 *u;
	s64 *y;
};

static void ep_parts(const struct wfs_layer_view *v, u8 *rec, struct ep_rec *p)
{
	u32 d = v->dim, h = v->hidden;

	p->xh = (struct wfw_xrec_hdr *)(rec + WFW_XREC_HDR_OFF(d));
	p->x = (s32 *)(rec + sizeof(struct wfs_act_hdr));
	p->h = (s16 *)(rec + WFW_XREC_H_OFF(d));
	p->a1 = (s64 *)(rec + WFW_XREC_A1_OFF(d));
	p->a3 = (s64 *)(rec + WFW_XREC_A3_OFF(d, h));
	p->u = (s16 *)(rec + WFW_XREC_U_OFF(d, h));
	p->y = (s64 *)(rec + WFW_XREC_Y_OFF(d, h));
}

const struct wfw_xrec_hdr *wfs_ep_hdr(const struct wfs_layer_view *v,
				      const u8 *rec)
{
	return (const struct wfw_xrec_hdr *)(rec + WFW_XREC_HDR_OFF(v->dim));
}

/* Descriptor @role (0: W1, 1: W2, 2: W3) of expert @x (shared first). */
static void ep_desc(const struct wfs_layer_view *v, u32 x, u32 role,
		    struct wfs_tensor_desc *t)
{
	WFS_MEMCPY(t, v->sec + sizeof(struct wfs_section_header) +
		   (u64)(WFS_MOE_FIXED_TENSORS + 3 * x + role) * sizeof(*t),
		   sizeof(*t));
}

static u32 ep_units(const struct wfs_layer_view *v, u32 x)
{
	struct wfs_tensor_desc t;

	ep_desc(v, x, 0, &t);
	return t.rows;
}

static s32 ep_exp(const struct wfs_layer_view *v, u32 role)
{
	struct wfs_tensor_desc t;

	ep_desc(v, 0, role, &t);
	return t.scale_exp;
}

/* Units of the shared experts, then of the selected routed ones. */
static u32 ep_shared_units(const struct wfs_layer_view *v)
{
	u32 x, n = 0;

	for (x = 0; x < v->n_shared; x++)
		n += ep_units(v, x);
	return n;
}

static u32 ep_sel_units(const struct wfs_layer_view *v,
			const struct wfw_xrec_hdr *xh)
{
	u32 i, n = ep_shared_units(v);

	for (i = 0; i < xh->n_sel; i++)
		n += ep_units(v, v->n_shared + xh->expert[i]);
	return n;
}

/**
 * wfs_ep_phase_ok() - may a part run a phase
 * @part: WFW_PART_XHOME or WFW_PART_XSHARD
 * @phase: WFW_XPHASE_*
 *
 * Return: 1 if it may.
 */
int wfs_ep_phase_ok(u32 part, u32 phase)
{
	if (part == WFW_PART_XSHARD)
		return phase == WFW_XPHASE_UP || phase == WFW_XPHASE_DOWN;
	return part == WFW_PART_XHOME &&
	       (phase == WFW_XPHASE_ROUTE || phase == WFW_XPHASE_GLU ||
		phase == WFW_XPHASE_FIN);
}

static int ep_exp_ok(s32 e)
{
	return e <= WFW_ACT_EXP_MAX && e >= -WFW_ACT_EXP_MAX;
}

/* The selection: the layer's top-k, ascending, gates at most 1. */
static int ep_sel_ok(const struct wfs_layer_view *v,
		     const struct wfw_xrec_hdr *xh)
{
	u32 i;

	if (xh->n_sel != WFS_MIN(v->n_active, v->n_experts))
		return 0;
	for (i = 0; i < xh->n_sel; i++) {
		if (xh->expert[i] >= v->n_experts ||
		    (i && xh->expert[i] <= xh->expert[i - 1]) ||
		    xh->gate[i] > WFS_Q30_ONE)
			return 0;
	}
	return 1;
}

/**
 * wfs_ep_rec_ok() - is a record from the host fit for a phase
 * @v: the layer
 * @phase: WFW_XPHASE_*
 * @rec: the record (its activation part already checked)
 *
 * ROUTE reads only the activations; the other phases the state an
 * earlier phase wrote, which must be what that phase can write (sums of
 * a matvec's size: below 2^62 in magnitude).
 *
 * Return: 1 if it is.
 */
int wfs_ep_rec_ok(const struct wfs_layer_view *v, u32 phase, const u8 *rec)
{
	const struct wfw_xrec_hdr *xh = wfs_ep_hdr(v, rec);
	const s64 *a1 = (const s64 *)(rec + WFW_XREC_A1_OFF(v->dim));
	const s64 *a3 = (const s64 *)(rec + WFW_XREC_A3_OFF(v->dim, v->hidden));
	const s64 *y = (const s64 *)(rec + WFW_XREC_Y_OFF(v->dim, v->hidden));
	u32 i;

	if (phase == WFW_XPHASE_ROUTE)
		return 1;
	for (i = 0; i < WFS_ARRAY_SIZE(xh->reserved); i++)
		if (xh->reserved[i])
			return 0;
	if (!ep_sel_ok(v, xh) || !ep_exp_ok(xh->eh) || !ep_exp_ok(xh->eu) ||
	    xh->n_units != ep_sel_units(v, xh) ||
	    xh->ea1 != xh->eh + ep_exp(v, 0) || xh->ea3 != xh->eh + ep_exp(v, 2))
		return 0;
	if (phase == WFW_XPHASE_GLU) {
		/* Raw W1/W3 sums: far inside s64, as a matvec leaves them. */
		for (i = 0; i < xh->n_units; i++)
			if (wfs_abs64(a1[i]) >> 62 || wfs_abs64(a3[i]) >> 62)
				return 0;
	}
	if (phase == WFW_XPHASE_FIN) {
		/* The summed W2 outputs: as far inside s64. */
		for (i = 0; i < v->dim; i++)
			if (wfs_abs64(y[i]) >> 62)
				return 0;
	}
	if (phase == WFW_XPHASE_DOWN || phase == WFW_XPHASE_FIN)
		return xh->ey == xh->eu + ep_exp(v, 1);
	return 1;
}

static void ep_mark(struct wfs_ep_work *w, u32 e)
{
	w->used[e / 64] |= 1ULL << (e % 64);
}

/* ROUTE: norm, selection, the shared experts' W1 h and W3 h. */
static void ep_route(const struct wfs_layer_view *v, u8 *rec, u8 *sb,
		     struct wfs_ep_work *w)
{
	struct wfs_moe_sel *sel = (struct wfs_moe_sel *)sb;
	s64 *logits = (s64 *)(sb + WFS_ALIGN_UP((u64)sizeof(*sel), 64ULL));
	struct wfs_act_hdr ah;
	struct wfs_qmat w1, w2, w3;
	struct ep_rec p;
	u32 x, off = 0;
	s32 ex;

	ep_parts(v, rec, &p);
	ex = wfs_act_load(v, rec, &ah);
	WFS_MEMSET(p.xh, 0, sizeof(*p.xh));
	p.xh->eh = wfs_rmsnorm(p.x, ex, v->dim, v->rms_ffn.data,
			       v->rms_ffn.exp, v->eps_q40, p.h);
	wfs_moe_route(v, p.h, p.xh->eh, logits, sel);
	p.xh->n_sel = sel->n;
	WFS_MEMCPY(p.xh->expert, sel->expert, 4ULL * sel->n);
	WFS_MEMCPY(p.xh->gate, sel->gate, 4ULL * sel->n);
	for (x = 0; x < v->n_shared; x++) {
		wfs_layer_expert(v, x, &w1, &w2, &w3);
		wfs_matvec(&w1, p.h, p.a1 + off);
		wfs_matvec(&w3, p.h, p.a3 + off);
		off += w1.rows;
	}
	p.xh->u1 = off;
	p.xh->n_units = ep_sel_units(v, p.xh);
	p.xh->ea1 = p.xh->eh + ep_exp(v, 0);
	p.xh->ea3 = p.xh->eh + ep_exp(v, 2);
	w->macs += (u64)v->dim * (v->n_experts + 2ULL * off);
	w->shared = 1;
}

/*
 * A shard's selected experts in run order: the first and last index of
 * p.xh->expert it holds, *@off the units before the first; 0 if none.
 */
static int ep_mine(const struct wfs_layer_view *v, const struct ep_rec *p,
		   u32 *i0, u32 *i1, u32 *off)
{
	const struct wfs_xgroup *g = &v->xmap->g[0];
	u32 i;

	*off = ep_shared_units(v);
	for (i = 0; i < p->xh->n_sel && p->xh->expert[i] < g->first; i++)
		*off += ep_units(v, v->n_shared + p->xh->expert[i]);
	*i0 = i;
	while (i < p->xh->n_sel && p->xh->expert[i] < g->first + g->count)
		i++;
	*i1 = i;
	return *i1 > *i0;
}

/* y += @g * W2 u for one expert (a gate of 1 adds the sums unchanged). */
static void ep_down_one(const struct wfs_layer_view *v, const struct wfs_qmat *w2,
			const s16 *u, u32 g, s64 *tmp, s64 *y)
{
	u32 j;

	wfs_matvec(w2, u, tmp);
	for (j = 0; j < v->dim; j++)
		y[j] += g == WFS_Q30_ONE ? tmp[j] : wfs_mul_q30(tmp[j], g);
}

/* GLU: one SwiGLU over every selected unit, the shared experts' W2 u. */
static void ep_glu(const struct wfs_layer_view *v, u8 *rec, s64 *tmp,
		   struct wfs_ep_work *w)
{
	struct wfs_qmat w1, w2, w3;
	struct ep_rec p;
	u32 x, off = 0;

	ep_parts(v, rec, &p);
	p.xh->eu = wfs_swiglu(p.a1, p.xh->ea1, p.a3, p.xh->ea3,
			      p.xh->n_units, p.u);
	p.xh->ey = p.xh->eu + ep_exp(v, 1);
	WFS_MEMSET(p.y, 0, 8ULL * v->dim);
	for (x = 0; x < v->n_shared; x++) {
		wfs_layer_expert(v, x, &w1, &w2, &w3);
		ep_down_one(v, &w2, p.u + off, WFS_Q30_ONE, tmp, p.y);
		off += w1.rows;
	}
	w->macs += (u64)v->dim * off + p.xh->n_units;
	w->shared = 1;
}

/*
 * A shard's phase over its selected experts, units [u0, u1) of the run
 * order: UP puts their W1 h and W3 h there; DOWN (@tmp) sums their gated
 * W2 u into y from zero.
 */
static void ep_shard(const struct wfs_layer_view *v, u8 *rec, s64 *tmp,
		     struct wfs_ep_work *w)
{
	struct wfs_qmat w1, w2, w3;
	struct ep_rec p;
	u32 i, i0, i1, off, e;

	ep_parts(v, rec, &p);
	if (tmp)
		WFS_MEMSET(p.y, 0, 8ULL * v->dim);
	p.xh->u0 = 0;
	p.xh->u1 = 0;
	if (!ep_mine(v, &p, &i0, &i1, &off))
		return;
	p.xh->u0 = off;
	for (i = i0; i < i1; i++) {
		e = p.xh->expert[i];
		wfs_layer_expert(v, v->n_shared + e, &w1, &w2, &w3);
		if (tmp) {
			ep_down_one(v, &w2, p.u + off, p.xh->gate[i], tmp, p.y);
		} else {
			wfs_matvec(&w1, p.h, p.a1 + off);
			wfs_matvec(&w3, p.h, p.a3 + off);
		}
		off += w1.rows;
		ep_mark(w, e);
	}
	p.xh->u1 = off;
	w->macs += (tmp ? 1ULL : 2ULL) * v->dim * (off - p.xh->u0);
}

/* FIN: x += y, the layer's residual, as wfs_layer_ffn() adds it. */
static void ep_fin(const struct wfs_layer_view *v, u8 *rec,
		   struct wfs_ep_work *w)
{
	struct wfs_act_hdr ah;
	struct ep_rec p;
	s32 ex;

	ep_parts(v, rec, &p);
	ex = wfs_act_load(v, rec, &ah);
	ex = wfs_residual_add(p.x, ex, p.y, p.xh->ey, v->dim);
	wfs_act_store(rec, &ah, ex);
	w->macs += v->dim;
}

/**
 * wfs_ep_link_bytes() - what a phase's output record carries to the next
 *	device: ROUTE the dispatch (h, the selection), UP the units it
 *	computed, GLU the SwiGLU units and gates, DOWN its partial sum (if
 *	it had experts selected), FIN the activations
 * @dim: the model's width
 * @phase: WFW_XPHASE_*
 * @rec: the record the phase wrote
 *
 * Return: bytes over the device link (docs/TIMING.md).
 */
u64 wfs_ep_link_bytes(u32 dim, u32 phase, const u8 *rec)
{
	struct wfw_xrec_hdr xh;

	WFS_MEMCPY(&xh, rec + WFW_XREC_HDR_OFF(dim), sizeof(xh));
	switch (phase) {
	case WFW_XPHASE_ROUTE:
		return 16 + 2ULL * dim + 8ULL * xh.n_sel;
	case WFW_XPHASE_UP:
		return 16 + 16ULL * (xh.u1 - xh.u0);
	case WFW_XPHASE_GLU:
		return 16 + 2ULL * xh.n_units + 8ULL * xh.n_sel;
	case WFW_XPHASE_DOWN:
		return 16 + (xh.u1 > xh.u0 ? 8ULL * dim : 0);
	default:
		return 16 + 4ULL * dim;
	}
}

/**
 * wfs_ep_run() - run one phase on one position's record
 * @v: the layer (its XHOME or XSHARD view)
 * @phase: WFW_XPHASE_*, one wfs_ep_phase_ok() allows the part
 * @rec: the record, updated in place
 * @scratch: the stage's layer scratch
 * @w: the chunk's work so far, added to
 */
void wfs_ep_run(const struct wfs_layer_view *v, u32 phase, u8 *rec,
		void *scratch, struct wfs_ep_work *w)
{
	w->phase = phase;
	switch (phase) {
	case WFW_XPHASE_ROUTE:
		ep_route(v, rec, scratch, w);
		break;
	case WFW_XPHASE_UP:
		ep_shard(v, rec, NULL, w);
		break;
	case WFW_XPHASE_GLU:
		ep_glu(v, rec, scratch, w);
		break;
	case WFW_XPHASE_DOWN:
		ep_shard(v, rec, scratch, w);
		break;
	default:
		ep_fin(v, rec, w);
		break;
	}
}

static u64 qmat_bytes(const struct wfs_tensor_desc *t)
{
	return (u64)t->rows * (wfs_qmat_row_bytes(t->qtype, t->cols,
						  t->group_size) +
			       2ULL * ((t->cols + t->group_size - 1) /
				       t->group_size));
}

/* Weight bytes of expert @x (shared first) that a phase reads. */
static u64 ep_expert_bytes(const struct wfs_layer_view *v, u32 x, u32 down)
{
	struct wfs_tensor_desc t;
	u64 b;

	if (down) {
		ep_desc(v, x, 1, &t);
		return qmat_bytes(&t);
	}
	ep_desc(v, x, 0, &t);
	b = qmat_bytes(&t);
	ep_desc(v, x, 2, &t);
	return b + qmat_bytes(&t);
}

/**
 * wfs_ep_cost() - a chunk's work in one phase, for the stage's roofline
 * @p: the profile
 * @v: the layer
 * @w: what the chunk's records took (wfs_ep_run())
 * @n: records
 * @rec: bytes of a record in SRAM (read and written)
 * @cost: added to: the MACs, each weight the phase read once per chunk
 *	(ROUTE: router and shared W1/W3; GLU: shared W2; UP, DOWN: the used
 *	experts' W1/W3, W2), the records, one reduction over those weights
 */
void wfs_ep_cost(const struct wfs_profile *p, const struct wfs_layer_view *v,
		 const struct wfs_ep_work *w, u32 n, u32 rec,
		 struct wfs_cost *cost)
{
	u32 down = w->phase == WFW_XPHASE_DOWN || w->phase == WFW_XPHASE_GLU;
	u64 wb = 0;
	u32 e, x;

	for (e = 0; e < v->n_experts; e++)
		if (w->used[e / 64] & (1ULL << (e % 64)))
			wb += ep_expert_bytes(v, v->n_shared + e, down);
	for (x = 0; w->shared && x < v->n_shared; x++)
		wb += ep_expert_bytes(v, x, down);
	if (w->phase == WFW_XPHASE_ROUTE)
		wb += (u64)v->router.rows * v->router.row_bytes;
	cost->macs += w->macs;
	cost->bytes += wb + 2ULL * n * rec;
	if (wb)
		cost->latency += wfs_timing_reduce_cycles(p, wb);
}
