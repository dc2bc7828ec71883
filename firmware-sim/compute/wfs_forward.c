// SPDX-License-Identifier: MIT
/*
 * wfs_forward.c - integer-only Llama forward pass (see wfs_forward.h).
 *
 * No state lives here: everything a call touches is in its arguments
 * (views onto SRAM copies of sections, the activation record, the KV slot
 * and caller-provided scratch), so any number of devices and stage workers
 * can run concurrently.
 */
#include "wfs_forward.h"
#include "wfs_moe.h"
#include "wfs_simd.h"

#define WFS_KV_EXP_LIMIT	30000
#define WFS_SCORE_LIMIT		(1LL << 50)	/* |score| < 2^26 in Q24 */

/* Byte offsets of the layer scratch regions (64-byte aligned each). */
struct wfs_lscr {
	u64 x16;	/* s16 [max(dim, hidden)]: matmul inputs */
	u64 q16;	/* s16 [dim]: scaled queries */
	u64 a;		/* s64 [max(dim + 2 kv_dim, 2 hidden)]: matmul outputs */
	u64 o;		/* s64 [dim]: attention output */
	u64 cs;		/* s32 [head_size]: RoPE cos/sin */
	u64 hexp;	/* s32 [n_heads]: attention output exponents */
	u64 sc;		/* s64 [ctx_len]: scores, then probabilities */
	u64 moe;	/* MoE layers: wfs_moe_scratch_bytes() */
	u64 end;
};

static u64 wfs_a64(u64 x)
{
	return WFS_ALIGN_UP(x, 64ULL);
}

static void wfs_lscr_layout(u32 dim, u32 hidden, u32 kv_dim, u32 hs,
			    u32 n_heads, u32 ctx, u32 n_experts,
			    struct wfs_lscr *l)
{
	u64 off = 0;

	l->x16 = off;
	off += wfs_a64(2ULL * WFS_MAX(dim, hidden));
	l->q16 = off;
	off += wfs_a64(2ULL * dim);
	l->a = off;
	off += wfs_a64(8ULL * WFS_MAX((u64)dim + 2ULL * kv_dim,
				     2ULL * hidden));
	l->o = off;
	off += wfs_a64(8ULL * dim);
	l->cs = off;
	off += wfs_a64(4ULL * hs);
	l->hexp = off;
	off += wfs_a64(4ULL * n_heads);
	l->sc = off;
	off += wfs_a64(8ULL * ctx);
	l->moe = off;
	off += wfs_moe_scratch_bytes(n_experts);
	l->end = off;
}

/**
 * wfs_act_bytes() - size of one activation record
 * @info: parsed model
 *
 * Return: bytes, a multiple of 64.
 */
u64 wfs_act_bytes(const struct wfs_model_info *info)
{
	return wfs_a64(sizeof(struct wfs_act_hdr) + 4ULL * info->dim);
}

/**
 * wfs_kv_stride() - bytes of one position in a KV slot
 * @info: parsed model; its kv_bits (8 or 16) selects the format
 *
 * Return: bytes, a multiple of 8.
 */
u32 wfs_kv_stride(const struct wfs_model_info *info)
{
	return (u32)WFS_ALIGN_UP(4 * info->n_kv_heads +
				 2 * info->kv_dim * (info->kv_bits / 8), 8u);
}

/**
 * wfs_kv_bytes() - KV cache bytes for one layer and one sequence slot
 * @info: parsed model (grouped-query: sized by n_kv_heads)
 * @ctx_len: positions the slot holds
 *
 * Return: @ctx_len * wfs_kv_stride().
 */
u64 wfs_kv_bytes(const struct wfs_model_info *info, u32 ctx_len)
{
	return (u64)ctx_len * wfs_kv_stride(info);
}

/**
 * wfs_layer_scratch_bytes() - scratch one wfs_layer_forward() call needs
 * @info: parsed model
 * @ctx_len: longest context (positions 0..ctx_len-1) it will run at
 *
 * Return: bytes; the scratch must be 8-byte aligned.
 */
u64 wfs_layer_scratch_bytes(const struct wfs_model_info *info, u32 ctx_len)
{
	struct wfs_lscr l;

	wfs_lscr_layout(info->dim, info->hidden_dim, info->kv_dim,
			info->head_size, info->n_heads, ctx_len,
			info->n_experts, &l);
	return l.end;
}

/**
 * wfs_head_scratch_bytes() - scratch one wfs_head() call needs
 * @info: parsed model
 *
 * Return: bytes; the scratch must be 8-byte aligned.
 */
u64 wfs_head_scratch_bytes(const struct wfs_model_info *info)
{
	return wfs_a64(2ULL * info->dim) + wfs_a64(8ULL * info->vocab_size);
}

/**
 * wfs_layer_macs() - multiply-accumulates of one layer's projections
 * @info: parsed model
 *
 * Return: dim * (2 dim + 2 kv_dim + 3 hidden), per token.
 */
u64 wfs_layer_macs(const struct wfs_model_info *info)
{
	return (u64)info->dim * (2ULL * info->dim + 2ULL * info->kv_dim +
				 3ULL * info->hidden_dim);
}

/**
 * wfs_layer_attn_macs() - attention multiply-accumulates at a position
 * @info: parsed model
 * @pos: position (attends over pos + 1 keys)
 *
 * Return: 2 * dim * (pos + 1) (q.k and p.v for every head).
 */
u64 wfs_layer_attn_macs(const struct wfs_model_info *info, u32 pos)
{
	return 2ULL * info->dim * ((u64)pos + 1);
}

/**
 * wfs_head_macs() - multiply-accumulates of the classifier
 * @info: parsed model
 *
 * Return: vocab * dim.
 */
u64 wfs_head_macs(const struct wfs_model_info *info)
{
	return (u64)info->vocab_size * info->dim;
}

/**
 * wfs_embed() - start an activation record from a token
 * @v: bound embedding view
 * @token: token id, < vocab
 * @act: activation record (wfs_act_bytes()), 8-byte aligned
 *
 * De-quantises row @token (q * scale fits s32) and normalises it to 30 bits.
 *
 * Return: 0, or -WFS_EINVAL for an out-of-range token (act untouched).
 */
int wfs_embed(const struct wfs_embed_view *v, u32 token, void *act)
{
	const struct wfs_qmat *m = &v->emb;
	struct wfs_act_hdr hdr = { .dim = v->dim };
	s32 *x = (s32 *)((u8 *)act + sizeof(hdr));
	const u8 *row;
	const u16 *sc;
	u64 mx = 0;
	u32 j, sh;

	if (token >= v->vocab)
		return -WFS_EINVAL;
	row = m->data + (u64)token * m->row_bytes;
	sc = m->scales + (u64)token * m->n_groups;
	for (j = 0; j < m->cols; j++) {
		u32 g = j / m->group_size, i = j - g * m->group_size;
		u32 n = WFS_MIN(m->group_size, m->cols - g * m->group_size);
		u32 h = (n + 1) / 2;
		s32 q;

		if (m->qtype == WFS_QT_INT8) {
			q = (s8)row[j];
		} else {
			const u8 *b = row + g * (m->group_size / 2);

			q = i < h ? (s32)(b[i] & 15) - 8 :
				    (s32)(b[i - h] >> 4) - 8;
		}
		x[j] = q * (s32)sc[g];
		if (wfs_abs64(x[j]) > mx)
			mx = wfs_abs64(x[j]);
	}
	sh = mx ? 30 - wfs_bitlen64(mx) : 0;
	for (j = 0; j < m->cols; j++)
		x[j] *= 1 << sh;
	hdr.exp = m->scale_exp - (s32)sh;
	WFS_MEMCPY(act, &hdr, sizeof(hdr));
	return 0;
}

/* Store one head of K or V: 7- or 15-bit mantissas, clamped exponent. */
static s16 wfs_kv_put(const s64 *val, u32 n, s32 e, u32 bits, u8 *dst)
{
	u64 mx = 0;
	s64 lim = (1LL << bits) - 1;
	s32 es;
	u32 i;

	for (i = 0; i < n; i++)
		if (wfs_abs64(val[i]) > mx)
			mx = wfs_abs64(val[i]);
	es = e + (s32)wfs_bitlen64(mx) - (s32)bits;
	es = WFS_MAX(WFS_MIN(es, WFS_KV_EXP_LIMIT), -WFS_KV_EXP_LIMIT);
	for (i = 0; i < n; i++) {
		s64 q = wfs_scale_pow2(val[i], e - es, lim);

		if (bits == 7) {
			dst[i] = (u8)(s8)q;
		} else {
			s16 q16 = (s16)q;

			WFS_MEMCPY(dst + 2 * i, &q16, 2);
		}
	}
	return (s16)es;
}

/* Attention of all heads at @pos; output in o (s64) with hexp per head. */
static void wfs_attention(const struct wfs_layer_view *v, const u8 *kv,
			  u32 pos, const s16 *q16, s32 eq, s64 *sc, s64 *o,
			  s32 *hexp)
{
	u32 hs = v->head_size, nkv = v->n_kv_heads, grp = v->n_heads / nkv;
	u32 esz = v->kv_bits / 8, h, t, d;
	u64 koff = 4ULL * nkv, voff = koff + (u64)v->kv_dim * esz;
	s32 emax = 0;

	for (h = 0; h < v->n_heads; h++) {
		u32 kh = h / grp;
		const s16 *q = q16 + (u64)h * hs;
		s64 *oh = o + (u64)h * hs;
		s32 evmax = -WFS_KV_EXP_LIMIT;
		const u8 *kp0, *vp0, *rec;
		s64 scmax = 0;

		/* raw dot products first, scaled per position below */
		kp0 = kv + koff + (u64)kh * hs * esz;
		wfs_attn_dots(q, kp0, v->kv_stride, pos + 1, hs, esz, sc);
		t = wfs_simd_attn_scale(sc, kv + 2 * kh, kv + 2 * (nkv + kh),
					v->kv_stride, pos + 1, eq + 24,
					WFS_SCORE_LIMIT, &scmax, &evmax);
		for (rec = kv + t * v->kv_stride; t <= pos;
		     t++, rec += v->kv_stride) {
			s16 ke, ve;

			WFS_MEMCPY(&ke, rec + 2 * kh, 2);
			WFS_MEMCPY(&ve, rec + 2 * (nkv + kh), 2);
			sc[t] = wfs_scale_pow2(sc[t], eq + ke + 24,
					       WFS_SCORE_LIMIT);
			scmax = t ? WFS_MAX(scmax, sc[t]) : sc[t];
			evmax = WFS_MAX(evmax, (s32)ve);
		}
		wfs_softmax_q30_max(sc, pos + 1, scmax);
		for (d = 0; d < hs; d++)
			oh[d] = 0;
		/*
		 * p * 2^-sh: each position's weight at exponent evmax, by
		 * wfs_rshr() written for 0 <= p <= 2^30 (softmax output)
		 */
		t = wfs_simd_attn_wshift(sc, kv + 2 * (nkv + kh),
					 v->kv_stride, pos + 1, evmax);
		for (rec = kv + t * v->kv_stride; t <= pos;
		     t++, rec += v->kv_stride) {
			s16 ve;
			u32 sh;

			WFS_MEMCPY(&ve, rec + 2 * (nkv + kh), 2);
			sh = (u32)(evmax - ve);
			sc[t] = sh > 62 ? 0 :
				(sc[t] + (s64)((1ULL << sh) >> 1)) >> sh;
		}
		vp0 = kv + voff + (u64)kh * hs * esz;
		wfs_attn_accum(sc, vp0, v->kv_stride, pos + 1, hs, esz, oh);
		hexp[h] = evmax - 30;
		if (h == 0 || hexp[h] > emax)
			emax = hexp[h];
	}
	/* one exponent for the whole output vector */
	for (h = 0; h < v->n_heads; h++) {
		u32 sh = (u32)(emax - hexp[h]);

		for (d = 0; d < hs; d++)
			o[(u64)h * hs + d] = wfs_rshr(o[(u64)h * hs + d], sh);
	}
	hexp[0] = emax;
}

/* The scratch regions of a layer call at @pos. */
static void wfs_lscr_of(const struct wfs_layer_view *v, u32 pos,
			struct wfs_lscr *l)
{
	wfs_lscr_layout(v->dim, v->hidden, v->kv_dim, v->head_size,
			v->n_heads, pos + 1, v->n_experts, l);
}

/* Read the record's header; a record of another width restarts at zero. */
s32 wfs_act_load(const struct wfs_layer_view *v, void *act,
		 struct wfs_act_hdr *hdr)
{
	s32 *x = (s32 *)((u8 *)act + sizeof(*hdr));

	WFS_MEMCPY(hdr, act, sizeof(*hdr));
	if (hdr->dim != v->dim) {
		hdr->dim = v->dim;
		hdr->exp = 0;
		WFS_MEMSET(x, 0, 4ULL * v->dim);
	}
	return WFS_MAX(WFS_MIN(hdr->exp, WFS_ACT_EXP_LIMIT), -WFS_ACT_EXP_LIMIT);
}

void wfs_act_store(void *act, struct wfs_act_hdr *hdr, s32 ex)
{
	hdr->exp = WFS_MAX(WFS_MIN(ex, WFS_ACT_EXP_LIMIT), -WFS_ACT_EXP_LIMIT);
	WFS_MEMCPY(act, hdr, sizeof(*hdr));
}

/* Q, K, V at @pos; K and V stored in the slot's record @rec. */
static s32 wfs_qkv(const struct wfs_layer_view *v, u8 *rec, u32 pos,
		   const s16 *x16, s32 e, s64 *a, s32 *cs, s16 *q16)
{
	u32 dim = v->dim, kvd = v->kv_dim, hs = v->head_size, i;
	u32 bits = v->kv_bits == 8 ? 7 : 15;
	u64 koff = 4ULL * v->n_kv_heads;
	u64 voff = koff + (u64)kvd * (v->kv_bits / 8);
	s32 eq, ek, ev;

	wfs_matvec(&v->wq, x16, a);
	wfs_matvec(&v->wk, x16, a + dim);
	wfs_matvec(&v->wv, x16, a + dim + kvd);
	eq = wfs_vec_norm30(a, dim, e + v->wq.scale_exp);
	ek = wfs_vec_norm30(a + dim, kvd, e + v->wk.scale_exp);
	ev = wfs_vec_norm30(a + dim + kvd, kvd, e + v->wv.scale_exp);
	wfs_rope_cs(v->rope, hs / 2, pos, cs);
	wfs_rope_apply(a, v->n_heads, hs, cs);
	wfs_rope_apply(a + dim, v->n_kv_heads, hs, cs);
	for (i = 0; i < dim; i++)
		a[i] = wfs_requant((s32)a[i], v->qk_mult, v->qk_shift);
	eq = wfs_vec_to_s16(a, dim, eq, q16);
	for (i = 0; i < v->n_kv_heads; i++) {
		u64 off = (u64)i * hs;
		s16 ke = wfs_kv_put(a + dim + off, hs, ek, bits,
				    rec + koff + off * (bits == 7 ? 1 : 2));
		s16 ve = wfs_kv_put(a + dim + kvd + off, hs, ev, bits,
				    rec + voff + off * (bits == 7 ? 1 : 2));

		WFS_MEMCPY(rec + 2 * i, &ke, 2);
		WFS_MEMCPY(rec + 2 * (v->n_kv_heads + i), &ve, 2);
	}
	return eq;
}

/**
 * wfs_layer_attn() - a layer's attention part for one position
 * @v: bound layer view (of the whole section or of its attention part)
 * @kv_slot: this layer's KV slot of the sequence (wfs_kv_bytes() for a
 *	ctx_len > @pos), 8-byte aligned; positions 0..@pos-1 must have been
 *	written by earlier calls; position @pos is written
 * @pos: position of the token
 * @act: activation record, updated in place: x += Wo attention(norm(x))
 * @scratch: wfs_layer_scratch_bytes(info, ctx_len) bytes, 8-byte aligned
 *
 * A record whose dim does not match the model is reset to zero first.
 */
void wfs_layer_attn(const struct wfs_layer_view *v, void *kv_slot, u32 pos,
		    void *act, void *scratch)
{
	u8 *sb = scratch, *rec = (u8 *)kv_slot + (u64)pos * v->kv_stride;
	s32 *x = (s32 *)((u8 *)act + sizeof(struct wfs_act_hdr));
	struct wfs_act_hdr hdr;
	struct wfs_lscr l;
	s16 *x16, *q16;
	s64 *a, *o;
	s32 *hexp, e, eq, ex;

	wfs_lscr_of(v, pos, &l);
	x16 = (s16 *)(sb + l.x16);
	q16 = (s16 *)(sb + l.q16);
	a = (s64 *)(sb + l.a);
	o = (s64 *)(sb + l.o);
	hexp = (s32 *)(sb + l.hexp);
	ex = wfs_act_load(v, act, &hdr);

	e = wfs_rmsnorm(x, ex, v->dim, v->rms_att.data, v->rms_att.exp,
			v->eps_q40, x16);
	eq = wfs_qkv(v, rec, pos, x16, e, a, (s32 *)(sb + l.cs), q16);
	wfs_attention(v, kv_slot, pos, q16, eq, (s64 *)(sb + l.sc), o, hexp);
	e = wfs_vec_to_s16(o, v->dim, hexp[0], x16);
	wfs_matvec(&v->wo, x16, a);
	ex = wfs_residual_add(x, ex, a, e + v->wo.scale_exp, v->dim);
	wfs_act_store(act, &hdr, ex);
}

/**
 * wfs_layer_ffn() - a layer's feed-forward part for one position
 * @v: bound layer view (of the whole section or of its FFN part)
 * @pos: position of the token (sizes the scratch as wfs_layer_attn() does)
 * @act: activation record, updated in place: x += FFN(norm(x))
 * @scratch: wfs_layer_scratch_bytes(info, ctx_len) bytes, 8-byte aligned
 */
void wfs_layer_ffn(const struct wfs_layer_view *v, u32 pos, void *act,
		   void *scratch)
{
	u8 *sb = scratch;
	s32 *x = (s32 *)((u8 *)act + sizeof(struct wfs_act_hdr));
	struct wfs_act_hdr hdr;
	struct wfs_lscr l;
	s16 *x16;
	s64 *a, *o;
	s32 e, ex;

	wfs_lscr_of(v, pos, &l);
	x16 = (s16 *)(sb + l.x16);
	a = (s64 *)(sb + l.a);
	o = (s64 *)(sb + l.o);
	ex = wfs_act_load(v, act, &hdr);

	e = wfs_rmsnorm(x, ex, v->dim, v->rms_ffn.data, v->rms_ffn.exp,
			v->eps_q40, x16);
	if (v->n_experts) {
		e = wfs_moe_ffn(v, x16, e, a, o, sb + l.moe);
		ex = wfs_residual_add(x, ex, o, e, v->dim);
	} else {
		wfs_matvec(&v->w1, x16, a);
		wfs_matvec(&v->w3, x16, a + v->hidden);
		e = wfs_swiglu(a, e + v->w1.scale_exp, a + v->hidden,
			       e + v->w3.scale_exp, v->hidden, x16);
		wfs_matvec(&v->w2, x16, a);
		ex = wfs_residual_add(x, ex, a, e + v->w2.scale_exp, v->dim);
	}
	wfs_act_store(act, &hdr, ex);
}

/**
 * wfs_layer_forward() - run one transformer layer for one position
 * @v: bound layer view
 * @kv_slot: see wfs_layer_attn()
 * @pos: position of the token
 * @act: activation record, updated in place
 * @scratch: wfs_layer_scratch_bytes(info, ctx_len) bytes, 8-byte aligned
 *
 * Exactly wfs_layer_attn() then wfs_layer_ffn() on the same record, so a
 * layer run as two parts on two devices gives the same bits.
 */
void wfs_layer_forward(const struct wfs_layer_view *v, void *kv_slot,
		       u32 pos, void *act, void *scratch)
{
	wfs_layer_attn(v, kv_slot, pos, act, scratch);
	wfs_layer_ffn(v, pos, act, scratch);
}

/**
 * wfs_layer_moe_sel() - the experts the last wfs_layer_forward() ran
 * @v: the MoE layer view it ran
 * @pos: the position it ran
 * @scratch: the scratch it was given
 *
 * Return: the token's selection, inside @scratch.
 */
const struct wfs_moe_sel *wfs_layer_moe_sel(const struct wfs_layer_view *v,
					    u32 pos, const void *scratch)
{
	struct wfs_lscr l;

	wfs_lscr_of(v, pos, &l);
	return (const struct wfs_moe_sel *)((const u8 *)scratch + l.moe);
}

/* a ranks before b: larger logit, then smaller token id */
static int wfs_before(const s64 *lg, u32 a, u32 b)
{
	return lg[a] > lg[b] || (lg[a] == lg[b] && a < b);
}

/**
 * wfs_head() - final RMSNorm, classifier, argmax and top-k
 * @v: bound head view
 * @act: activation record after the last layer
 * @k: top-k entries wanted (clamped to vocab and WFS_TOPK_MAX)
 * @out: @k entries, best first (ties: lower token id first); may be NULL
 *	when @k is 0
 * @argmax: the best token (equal to out[0].token)
 * @scratch: wfs_head_scratch_bytes() bytes, 8-byte aligned
 */
void wfs_head(const struct wfs_head_view *v, const void *act, u32 k,
	      struct wfs_topk_entry *out, u32 *argmax, void *scratch)
{
	const s32 *x = (const s32 *)((const u8 *)act +
				     sizeof(struct wfs_act_hdr));
	s16 *x16 = scratch;
	s64 *lg = (s64 *)((u8 *)scratch + wfs_a64(2ULL * v->dim));
	struct wfs_act_hdr hdr;
	u32 i, j, n = 0, best = 0;
	s32 e;

	WFS_MEMCPY(&hdr, act, sizeof(hdr));
	if (hdr.dim == v->dim) {
		e = WFS_MAX(WFS_MIN(hdr.exp, WFS_ACT_EXP_LIMIT),
			    -WFS_ACT_EXP_LIMIT);
		e = wfs_rmsnorm(x, e, v->dim, v->rms.data, v->rms.exp,
				v->eps_q40, x16);
	} else {
		WFS_MEMSET(x16, 0, 2ULL * v->dim);
		e = 0;
	}
	wfs_matvec(&v->cls, x16, lg);
	e += v->cls.scale_exp;
	k = WFS_MIN(WFS_MIN(k, v->vocab), (u32)WFS_TOPK_MAX);
	for (i = 0; i < v->vocab; i++) {
		if (lg[i] > lg[best])
			best = i;
		if (!k || (n == k && !wfs_before(lg, i, out[k - 1].token)))
			continue;
		j = n < k ? n++ : k - 1;
		for (; j > 0 && wfs_before(lg, i, out[j - 1].token); j--)
			out[j] = out[j - 1];
		out[j].token = i;
	}
	for (i = 0; i < k; i++)
		out[i].logit = wfs_sat32(wfs_scale_pow2(lg[out[i].token],
							e + WFS_LOGIT_FRAC_BITS,
							0x7fffffffLL));
	*argmax = best;
}
