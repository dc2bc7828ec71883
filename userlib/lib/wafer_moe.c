// SPDX-License-Identifier: MIT
/*
 * libwafer: sparse upcycling (Komatsuzaki et al. 2022) of a packed dense
 * blob into a mixture-of-experts blob.  Each layer's FFN hidden units are
 * split into n_shared + n_experts contiguous parts, one per expert, on the
 * scale groups of the dense W2, so the experts hold exactly the dense
 * quantised weights; the router row of an expert is the mean of its W1
 * rows (deterministic: an expert is chosen when its gate units are most
 * active), quantised to int8.  With every expert active and unit gates the
 * device computes the dense FFN bit for bit (see firmware-sim/compute/wfs_moe.h).
 * Copies (sparse upcycling's own initialisation): every expert is the
 * whole dense FFN and the k = n_shared + top_k that run each weigh 1/k,
 * as unit gates over a down projection whose exponent is lowered by
 * log2 k (k a power of two): the k equal partial sums add to exactly the
 * dense one at any top-k, while the router still spreads the tokens.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wafer_internal.h"
#include "wafer.h"
#include "wfs_model.h"
#include "wfs_pack.h"

/* One tensor to emit: its descriptor (offsets filled in) and regions. */
struct moe_tensor {
	struct wfs_tensor_desc d;
	const void *data;
	size_t data_bytes;
	const void *scales;
	size_t scale_bytes;
};

static size_t a64(size_t x)
{
	return (x + 63) & ~(size_t)63;
}

static size_t mat_scale_bytes(const struct wfs_tensor_desc *d)
{
	return (size_t)d->rows * ((d->cols + d->group_size - 1) / d->group_size) * 2;
}

static size_t tensor_data_bytes(const struct wfs_tensor_desc *d)
{
	if (d->qtype == WFS_QT_S16)
		return (size_t)d->cols * 2;
	if (d->qtype == WFS_QT_U64)
		return (size_t)d->cols * 8;
	return (size_t)d->rows * wfs_qmat_row_bytes(d->qtype, d->cols, d->group_size);
}

/* A dense tensor copied whole. */
static void moe_whole(const uint8_t *sec, const struct wfs_tensor_desc *d, struct moe_tensor *t)
{
	t->d = *d;
	t->data = sec + d->data_offset;
	t->data_bytes = tensor_data_bytes(d);
	t->scales = d->qtype == WFS_QT_INT8 || d->qtype == WFS_QT_INT4 ? sec + d->scale_offset : NULL;
	t->scale_bytes = t->scales ? mat_scale_bytes(d) : 0;
}

/* Rows [r0, r1) of a matrix (W1, W3: the expert's hidden units). */
static void moe_rows(const uint8_t *sec, const struct wfs_tensor_desc *d, unsigned int r0,
		     unsigned int r1, struct moe_tensor *t)
{
	size_t rb = wfs_qmat_row_bytes(d->qtype, d->cols, d->group_size);
	size_t ng = (d->cols + d->group_size - 1) / d->group_size;

	t->d = *d;
	t->d.rows = r1 - r0;
	t->data = sec + d->data_offset + r0 * rb;
	t->data_bytes = (r1 - r0) * rb;
	t->scales = sec + d->scale_offset + r0 * ng * 2;
	t->scale_bytes = (r1 - r0) * ng * 2;
}

/*
 * Scale groups [g0, g1) of every row of W2 into @buf (data, then scales):
 * whole groups, so the bytes of a row's groups are one contiguous run.
 */
static void moe_cols(const uint8_t *sec, const struct wfs_tensor_desc *d, unsigned int g0,
		     unsigned int g1, uint8_t *buf, struct moe_tensor *t)
{
	unsigned int gs = d->group_size, ng = (d->cols + gs - 1) / gs, r;
	unsigned int c0 = g0 * gs, c1 = g1 * gs < d->cols ? g1 * gs : d->cols;
	size_t rb = wfs_qmat_row_bytes(d->qtype, d->cols, gs);
	size_t nrb = wfs_qmat_row_bytes(d->qtype, c1 - c0, gs);
	size_t b0 = wfs_qmat_row_bytes(d->qtype, c0, gs);
	uint8_t *sc = buf + a64((size_t)d->rows * nrb);

	for (r = 0; r < d->rows; r++) {
		memcpy(buf + r * nrb, sec + d->data_offset + r * rb + b0, nrb);
		memcpy(sc + (size_t)r * (g1 - g0) * 2,
		       sec + d->scale_offset + ((size_t)r * ng + g0) * 2, (size_t)(g1 - g0) * 2);
	}
	t->d = *d;
	t->d.cols = c1 - c0;
	t->data = buf;
	t->data_bytes = (size_t)d->rows * nrb;
	t->scales = sc;
	t->scale_bytes = (size_t)d->rows * (g1 - g0) * 2;
}

/* Lay out and (with @sec) write a section; returns its size. */
static size_t moe_emit(uint8_t *sec, uint32_t index, struct moe_tensor *t, unsigned int n)
{
	struct wfs_section_header sh = { .magic = WFS_SECTION_MAGIC, .kind = WFS_SEC_LAYER,
					 .index = index, .n_tensors = n };
	size_t off = a64(sizeof(sh) + (size_t)n * sizeof(struct wfs_tensor_desc));
	unsigned int i;

	for (i = 0; i < n; i++) {
		t[i].d.data_offset = off;
		if (sec)
			memcpy(sec + off, t[i].data, t[i].data_bytes);
		off = a64(off + t[i].data_bytes);
		t[i].d.scale_offset = t[i].scales ? off : 0;
		if (sec && t[i].scales)
			memcpy(sec + off, t[i].scales, t[i].scale_bytes);
		off = a64(off + t[i].scale_bytes);
		if (sec)
			memcpy(sec + sizeof(sh) + i * sizeof(t[i].d), &t[i].d, sizeof(t[i].d));
	}
	sh.size = off;
	if (sec)
		memcpy(sec, &sh, sizeof(sh));
	return off;
}

/* One dequantised weight of a matrix. */
static double moe_weight(const uint8_t *sec, const struct wfs_tensor_desc *d, unsigned int r,
			 unsigned int j)
{
	unsigned int gs = d->group_size, ng = (d->cols + gs - 1) / gs, g = j / gs, i = j % gs;
	const uint8_t *row = sec + d->data_offset +
			     r * wfs_qmat_row_bytes(d->qtype, d->cols, gs);
	uint16_t m;
	int q;

	memcpy(&m, sec + d->scale_offset + ((size_t)r * ng + g) * 2, 2);
	if (d->qtype == WFS_QT_INT8) {
		q = (int8_t)row[j];
	} else {
		unsigned int n = gs < d->cols - g * gs ? gs : d->cols - g * gs, h = (n + 1) / 2;
		const uint8_t *b = row + (size_t)g * (gs / 2);

		q = i < h ? (b[i] & 15) - 8 : (b[i - h] >> 4) - 8;
	}
	return ldexp((double)q * m, d->scale_exp);
}

/*
 * The router: row e is the mean of expert e's W1 rows (hidden units
 * [cut[S + e], cut[S + e + 1])), quantised to int8 with W1's group size.
 */
static int moe_router(const uint8_t *sec, const struct wfs_tensor_desc *w1,
		      const unsigned int *cut, unsigned int S, unsigned int E, int8_t *q,
		      uint16_t *m, struct moe_tensor *t)
{
	unsigned int e, r, j, dim = w1->cols;
	float *w = calloc((size_t)E * dim, sizeof(*w));
	int exp, ret;

	if (!w)
		return -ENOMEM;
	for (e = 0; e < E; e++) {
		unsigned int r0 = cut[S + e], r1 = cut[S + e + 1];

		for (j = 0; j < dim; j++) {
			double s = 0;

			for (r = r0; r < r1; r++)
				s += moe_weight(sec, w1, r, j);
			w[(size_t)e * dim + j] = (float)(s / (r1 - r0));
		}
	}
	ret = wfs_pack_quant_matrix(w, E, dim, 8, w1->group_size, q, m, &exp);
	free(w);
	if (ret)
		return ret;
	memset(&t->d, 0, sizeof(t->d));
	t->d.role = WFS_T_ROUTER;
	t->d.qtype = WFS_QT_INT8;
	t->d.rows = E;
	t->d.cols = dim;
	t->d.group_size = w1->group_size;
	t->d.scale_exp = exp;
	t->data = q;
	t->data_bytes = (size_t)E * dim;
	t->scales = m;
	t->scale_bytes = mat_scale_bytes(&t->d);
	return 0;
}

/* Expert p holds hidden units [cut[p], cut[p + 1]), W2 groups [gcut[p], gcut[p + 1]). */
static int moe_cuts(const struct wfs_tensor_desc *w2, unsigned int P, unsigned int *cut,
		    unsigned int *gcut)
{
	unsigned int gs = w2->group_size, G = (w2->cols + gs - 1) / gs, p;

	if (P > G)
		return wafer_set_error(-EINVAL,
				       "--moe: %u experts (with the shared ones) but the FFN's %u hidden units make only %u scale groups of %u; an exact split needs experts <= groups (a smaller --group-size gives more groups)",
				       P, w2->cols, G, gs);
	for (p = 0; p <= P; p++) {
		gcut[p] = (unsigned int)((unsigned long long)p * G / P);
		cut[p] = gcut[p] * gs < w2->cols ? gcut[p] * gs : w2->cols;
	}
	return 0;
}

/* log2 of @k, a power of two. */
static unsigned int moe_log2(unsigned int k)
{
	unsigned int n = 0;

	while (k > 1) {
		k >>= 1;
		n++;
	}
	return n;
}

/* One dense layer section -> its MoE section (malloc'd into *out). */
static int moe_layer(const uint8_t *sec, uint32_t index, const struct wafer_moe_opts *o,
		     uint8_t **out, size_t *size)
{
	unsigned int S = o->n_shared, E = o->n_experts, P = S + E, n = 8 + 3 * P, p;
	unsigned int *cut = calloc(2 * (P + 1), sizeof(*cut)), *gcut = cut + P + 1;
	struct wfs_tensor_desc d[WFS_LAYER_TENSORS];
	struct moe_tensor *t = calloc(n, sizeof(*t));
	uint8_t *w2buf = NULL, *rq = NULL, *w2p;
	uint16_t *rm = NULL;
	int ret = -ENOMEM;

	memcpy(d, sec + sizeof(struct wfs_section_header), sizeof(d));
	if (!cut || !t)
		goto out;
	/* Copies: the cuts only place the router's rows, one per routed expert. */
	ret = moe_cuts(&d[7], o->copies ? E : P, cut, gcut);
	if (ret)
		goto out;
	ret = -ENOMEM;
	w2buf = malloc(tensor_data_bytes(&d[7]) + mat_scale_bytes(&d[7]) + P * 128);
	rq = malloc((size_t)E * d[6].cols);
	rm = malloc(((size_t)E * d[6].cols / d[6].group_size + E) * 2);
	if (!w2buf || !rq || !rm)
		goto out;
	for (p = 0; p < 6; p++)
		moe_whole(sec, &d[p], &t[p]);
	ret = moe_router(sec, &d[6], cut, o->copies ? 0 : S, E, (int8_t *)rq, rm, &t[6]);
	if (ret)
		goto out;
	w2p = w2buf;
	for (p = 0; p < P && o->copies; p++) {
		moe_whole(sec, &d[6], &t[7 + 3 * p]);
		moe_whole(sec, &d[7], &t[8 + 3 * p]);
		t[8 + 3 * p].d.scale_exp -= moe_log2(o->n_shared + o->top_k);
		moe_whole(sec, &d[8], &t[9 + 3 * p]);
	}
	for (p = 0; p < P && !o->copies; p++) {
		moe_rows(sec, &d[6], cut[p], cut[p + 1], &t[7 + 3 * p]);
		moe_cols(sec, &d[7], gcut[p], gcut[p + 1], w2p, &t[8 + 3 * p]);
		w2p += a64(t[8 + 3 * p].data_bytes) + a64(t[8 + 3 * p].scale_bytes);
		moe_rows(sec, &d[8], cut[p], cut[p + 1], &t[9 + 3 * p]);
	}
	moe_whole(sec, &d[9], &t[n - 1]);
	*size = moe_emit(NULL, index, t, n);
	*out = aligned_alloc(64, a64(*size));
	ret = *out ? 0 : -ENOMEM;
	if (*out) {
		memset(*out, 0, a64(*size));
		moe_emit(*out, index, t, n);
	}
out:
	free(cut);
	free(t);
	free(w2buf);
	free(rq);
	free(rm);
	return ret == -ENOMEM ? wafer_set_error(ret, "--moe: out of memory") : ret;
}

static int moe_check_opts(const struct wfs_model_info *mi, const struct wafer_moe_opts *o)
{
	if (mi->ffn_kind != WFS_FFN_SWIGLU)
		return wafer_set_error(-EINVAL, "--moe: the blob already has experts");
	if (!o->n_experts || o->n_experts > WFS_MAX_EXPERTS ||
	    o->n_shared > WFS_MAX_EXPERTS - o->n_experts)
		return wafer_set_error(-EINVAL, "--moe: %u experts and %u shared: experts must be 1..%u in all",
				       o->n_experts, o->n_shared, WFS_MAX_EXPERTS);
	if (!o->top_k || o->top_k > o->n_experts || o->top_k > WFS_MAX_EXPERTS_ACTIVE)
		return wafer_set_error(-EINVAL, "--moe: top-k %u must be 1..%u (the experts, at most %u)",
				       o->top_k, o->n_experts, WFS_MAX_EXPERTS_ACTIVE);
	if (o->gate > WFS_GATE_MAX)
		return wafer_set_error(-EINVAL, "--moe: unknown gate %u", o->gate);
	if (o->copies && (o->n_shared + o->top_k) & (o->n_shared + o->top_k - 1))
		return wafer_set_error(-EINVAL, "--moe-copies: top-k %u + shared %u = %u experts run "
				       "per token, not a power of two (each weighs exactly 1/k "
				       "only then)", o->top_k, o->n_shared,
				       o->n_shared + o->top_k);
	if (o->copies && (uint64_t)(o->n_experts + o->n_shared) * mi->hidden_dim > WFS_MAX_HIDDEN)
		return wafer_set_error(-EINVAL, "--moe-copies: %u copies of the FFN's %u hidden "
				       "units exceed the blob's %u", o->n_experts + o->n_shared,
				       mi->hidden_dim, WFS_MAX_HIDDEN);
	return 0;
}

static void moe_header(const uint8_t *dense, const struct wafer_moe_opts *o, size_t total,
		       struct wfs_blob_header *h)
{
	memcpy(h, dense, sizeof(*h));
	h->flags |= WFS_MF_MOE;
	h->ffn_kind = WFS_FFN_MOE;
	h->n_experts = o->n_experts;
	h->n_experts_active = o->top_k;
	h->n_shared_experts = o->n_shared;
	h->gate_kind = o->copies ? WFS_GATE_UNIT : o->gate;
	if (o->copies)	/* the experts' widths sum to it */
		h->hidden_dim *= o->n_experts + o->n_shared;
	h->total_size = total;
	h->checksum = 0;
}

/* Lay the sections out after the table and write the blob. */
static int moe_assemble(const uint8_t *dense, const struct wfs_model_info *mi,
			uint8_t **lsec, const size_t *lsize, const struct wafer_moe_opts *o,
			void **blob, size_t *len)
{
	struct wfs_section_entry *se = calloc(mi->n_sections, sizeof(*se));
	size_t off = a64(sizeof(struct wfs_blob_header)), i;
	struct wfs_blob_header h;
	uint8_t *b;

	if (!se)
		return wafer_set_error(-ENOMEM, "--moe: out of memory");
	memcpy(se, dense + mi->section_table_offset, mi->n_sections * sizeof(*se));
	off = a64(off + mi->n_sections * sizeof(*se));
	for (i = 0; i < mi->n_sections; i++) {
		if (se[i].kind == WFS_SEC_LAYER)
			se[i].size = lsize[se[i].index];
		se[i].offset = off;
		off = a64(off + se[i].size);
	}
	b = calloc(1, off);
	if (!b) {
		free(se);
		return wafer_set_error(-ENOMEM, "--moe: out of memory");
	}
	moe_header(dense, o, off, &h);
	h.section_table_offset = a64(sizeof(h));
	memcpy(b + h.section_table_offset, se, mi->n_sections * sizeof(*se));
	for (i = 0; i < mi->n_sections; i++)
		memcpy(b + se[i].offset,
		       se[i].kind == WFS_SEC_LAYER ? lsec[se[i].index] :
		       se[i].kind == WFS_SEC_EMBED ? dense + mi->embed.offset :
		       dense + mi->head.offset, se[i].size);
	if (h.flags & WFS_MF_CHECKSUM)
		h.checksum = wfs_fnv1a32(b + sizeof(h), off - sizeof(h));
	memcpy(b, &h, sizeof(h));
	free(se);
	*blob = b;
	*len = off;
	return 0;
}

int wafer_moe_upcycle(const void *dense, size_t dense_len, const struct wafer_moe_opts *o,
		      void **blob, size_t *len)
{
	struct wfs_model_info mi;
	struct wfs_section_range r;
	uint8_t **lsec;
	size_t *lsize;
	unsigned int l;
	int ret;

	if (!dense || !o || !blob || !len)
		return wafer_set_error(-EINVAL, "wafer_moe_upcycle: NULL argument");
	ret = wfs_model_parse(dense, dense_len, &mi);
	if (ret)
		return wafer_set_error(ret, "--moe: the dense blob is not valid (%s)", wafer_strerror(ret));
	ret = moe_check_opts(&mi, o);
	if (ret)
		return ret;
	lsec = calloc(mi.n_layers, sizeof(*lsec));
	lsize = calloc(mi.n_layers, sizeof(*lsize));
	ret = lsec && lsize ? 0 : wafer_set_error(-ENOMEM, "--moe: out of memory");
	for (l = 0; !ret && l < mi.n_layers; l++) {
		ret = wfs_model_layer_section(&mi, dense, l, &r);
		if (!ret)
			ret = moe_layer((const uint8_t *)dense + r.offset, l, o, &lsec[l], &lsize[l]);
	}
	if (!ret)
		ret = moe_assemble(dense, &mi, lsec, lsize, o, blob, len);
	for (l = 0; lsec && l < mi.n_layers; l++)
		free(lsec[l]);
	free(lsec);
	free(lsize);
	if (!ret && wfs_model_parse(*blob, *len, &mi)) {
		free(*blob);
		*blob = NULL;
		return wafer_set_error(-EPROTO, "--moe: the upcycled blob fails validation (%s)",
				       mi.bad_field ? mi.bad_field : "?");
	}
	return ret;
}
