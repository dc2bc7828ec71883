// SPDX-License-Identifier: MIT
/*
 * wfs_pack.c - llama2.c checkpoint -> firmware-sim model blob.
 *
 * Host tooling: plain C with libc and floats.  The blob layout is specified
 * in firmware-sim/model/wfs_model.h; wfs_model_parse() is the authority on what is
 * valid, and wfs_pack() checks its own output with it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wfs_model.h"
#include "wfs_pack.h"

#define WFS_EPS		1e-5

static size_t a64(size_t x)
{
	return (x + 63) & ~(size_t)63;
}

/* ---- checkpoint ---------------------------------------------------- */

static size_t ckpt_layout(struct wfs_ckpt *c, float *base)
{
	size_t d = c->dim, h = c->hidden_dim, l = c->n_layers;
	size_t kv = (size_t)c->dim * c->n_kv_heads / c->n_heads;
	size_t v = c->vocab_size, off = 0;

#define TAKE(p, n) do { c->p = base ? base + off : NULL; off += (n); } while (0)
	TAKE(tok_emb, v * d);
	TAKE(rms_att, l * d);
	TAKE(wq, l * d * d);
	TAKE(wk, l * kv * d);
	TAKE(wv, l * kv * d);
	TAKE(wo, l * d * d);
	TAKE(rms_ffn, l * d);
	TAKE(w1, l * h * d);
	TAKE(w2, l * d * h);
	TAKE(w3, l * h * d);
	TAKE(rms_final, d);
	if (c->shared_cls)
		c->wcls = c->tok_emb;
	else
		TAKE(wcls, v * d);
#undef TAKE
	return off;
}

static int ckpt_dims_ok(const struct wfs_ckpt *c)
{
	return c->dim > 0 && c->hidden_dim > 0 && c->n_layers > 0 &&
	       c->n_heads > 0 && c->n_kv_heads > 0 && c->vocab_size > 0 &&
	       c->seq_len > 0 && c->dim % c->n_heads == 0 &&
	       c->n_heads % c->n_kv_heads == 0 && c->dim <= WFS_MAX_DIM &&
	       c->hidden_dim <= WFS_MAX_HIDDEN &&
	       c->n_layers <= WFS_MAX_LAYERS &&
	       (unsigned int)c->vocab_size <= WFS_MAX_VOCAB;
}

/**
 * wfs_ckpt_alloc() - allocate zeroed tensors for the dims set in @c
 * @c: dims and shared_cls filled in
 *
 * Return: 0 or -errno.
 */
int wfs_ckpt_alloc(struct wfs_ckpt *c)
{
	size_t n;

	if (!ckpt_dims_ok(c))
		return -EINVAL;
	n = ckpt_layout(c, NULL);
	c->mem = calloc(n, sizeof(float));
	if (!c->mem)
		return -ENOMEM;
	c->mem_floats = n;
	ckpt_layout(c, c->mem);
	return 0;
}

/**
 * wfs_ckpt_load() - read a llama2.c (legacy v0) fp32 checkpoint
 * @path: file
 * @c: filled; free with wfs_ckpt_free()
 *
 * Return: 0 or -errno.
 */
int wfs_ckpt_load(const char *path, struct wfs_ckpt *c)
{
	int32_t hdr[7];
	FILE *f = fopen(path, "rb");
	size_t need;
	int ret;

	memset(c, 0, sizeof(*c));
	if (!f)
		return -errno;
	if (fread(hdr, sizeof(hdr), 1, f) != 1) {
		fclose(f);
		return -EIO;
	}
	c->dim = hdr[0];
	c->hidden_dim = hdr[1];
	c->n_layers = hdr[2];
	c->n_heads = hdr[3];
	c->n_kv_heads = hdr[4];
	c->shared_cls = hdr[5] > 0;
	c->vocab_size = hdr[5] > 0 ? hdr[5] : -hdr[5];
	c->seq_len = hdr[6];
	ret = wfs_ckpt_alloc(c);
	if (ret) {
		fclose(f);
		return ret;
	}
	/* everything up to rms_final, then skip the legacy RoPE tables */
	need = (size_t)(c->rms_final - c->mem) + c->dim;
	if (fread(c->mem, sizeof(float), need, f) != need)
		goto io;
	if (!c->shared_cls) {
		long skip = (long)c->seq_len * (c->dim / c->n_heads) *
			    (long)sizeof(float);

		if (fseek(f, skip, SEEK_CUR))
			goto io;
		need = (size_t)c->vocab_size * c->dim;
		if (fread(c->wcls, sizeof(float), need, f) != need)
			goto io;
	}
	fclose(f);
	return 0;
io:
	fclose(f);
	wfs_ckpt_free(c);
	return -EIO;
}

/**
 * wfs_ckpt_clone() - deep copy
 * @src: checkpoint
 * @dst: receives the copy
 *
 * Return: 0 or -errno.
 */
int wfs_ckpt_clone(const struct wfs_ckpt *src, struct wfs_ckpt *dst)
{
	int ret;

	*dst = *src;
	ret = wfs_ckpt_alloc(dst);
	if (ret)
		return ret;
	memcpy(dst->mem, src->mem, src->mem_floats * sizeof(float));
	return 0;
}

/**
 * wfs_ckpt_free() - release a checkpoint
 * @c: checkpoint
 */
void wfs_ckpt_free(struct wfs_ckpt *c)
{
	free(c->mem);
	memset(c, 0, sizeof(*c));
}

/* ---- quantisation -------------------------------------------------- */

/* Exponent E such that round(maxv / 2^E) <= lim and uses its top bit. */
static int pick_exp(double maxv, double lim)
{
	int e;

	if (maxv <= 0)
		return 0;
	frexp(maxv / lim, &e);
	while (e > -WFS_MAX_SCALE_EXP && round(maxv / ldexp(1, e - 1)) <= lim)
		e--;
	while (round(maxv / ldexp(1, e)) > lim)
		e++;
	return e;
}

/**
 * wfs_pack_quant_matrix() - symmetric group quantisation of a matrix
 * @w: [rows][cols] weights
 * @rows: rows
 * @cols: cols
 * @bits: 8 (q in [-127, 127]) or 4 (q in [-7, 7])
 * @group_size: weights per group along a row; the last one may be short
 * @q: [rows][cols] quantised weights
 * @m: [rows][ceil(cols/group_size)] u16 scale mantissas
 * @scale_exp: tensor exponent; w ~= q * m * 2^scale_exp
 *
 * Return: 0 or -EINVAL.
 */
int wfs_pack_quant_matrix(const float *w, unsigned int rows,
			  unsigned int cols, unsigned int bits,
			  unsigned int group_size, int8_t *q, uint16_t *m,
			  int *scale_exp)
{
	unsigned int ng, r, g, j, qmax = bits == 8 ? 127 : 7;
	double smax = 0;
	int e;

	if ((bits != 8 && bits != 4) || !group_size ||
	    group_size > WFS_MAX_GROUP || (bits == 4 && (group_size & 1)))
		return -EINVAL;
	ng = (cols + group_size - 1) / group_size;
	for (r = 0; r < rows; r++) {
		for (g = 0; g < ng; g++) {
			double a = 0;

			for (j = g * group_size;
			     j < cols && j < (g + 1) * group_size; j++)
				a = fmax(a, fabs(w[(size_t)r * cols + j]));
			smax = fmax(smax, a / qmax);
		}
	}
	e = pick_exp(smax, 65535);
	if (e > WFS_MAX_SCALE_EXP || e < -WFS_MAX_SCALE_EXP)
		return -EINVAL;
	for (r = 0; r < rows; r++) {
		for (g = 0; g < ng; g++) {
			double a = 0, s;
			unsigned int end = (g + 1) * group_size;

			if (end > cols)
				end = cols;
			for (j = g * group_size; j < end; j++)
				a = fmax(a, fabs(w[(size_t)r * cols + j]));
			s = round(a / qmax / ldexp(1, e));
			if (s > 65535)
				s = 65535;
			m[(size_t)r * ng + g] = (uint16_t)s;
			s = ldexp(s, e);
			for (j = g * group_size; j < end; j++) {
				double v = s > 0 ? round(w[(size_t)r * cols + j] / s) : 0;

				v = fmin(fmax(v, -(double)qmax), qmax);
				q[(size_t)r * cols + j] = (int8_t)v;
			}
		}
	}
	*scale_exp = e;
	return 0;
}

/**
 * wfs_pack_quant_vec16() - s16 block floating point vector
 * @w: n values
 * @n: length
 * @q: n mantissas
 * @scale_exp: exponent; w ~= q * 2^scale_exp
 *
 * Return: 0 or -EINVAL.
 */
int wfs_pack_quant_vec16(const float *w, unsigned int n, int16_t *q,
			 int *scale_exp)
{
	double mx = 0;
	unsigned int i;
	int e;

	for (i = 0; i < n; i++)
		mx = fmax(mx, fabs(w[i]));
	e = pick_exp(mx, 32767);
	if (e > WFS_MAX_SCALE_EXP || e < -WFS_MAX_SCALE_EXP)
		return -EINVAL;
	for (i = 0; i < n; i++)
		q[i] = (int16_t)fmin(fmax(round(ldexp(w[i], -e)), -32767), 32767);
	*scale_exp = e;
	return 0;
}

/**
 * wfs_pack_rope_freq() - RoPE pair frequency in Q64 turns per position
 * @theta: RoPE base
 * @i: pair index within a head
 * @head_size: head size
 *
 * Return: theta^(-2i/head_size) / (2 pi) * 2^64, rounded.
 */
uint64_t wfs_pack_rope_freq(double theta, unsigned int i,
			    unsigned int head_size)
{
	long double f = powl((long double)theta,
			     -(long double)(2 * i) / head_size);

	f = f / (2.0L * 3.14159265358979323846264338327950288L);
	return (uint64_t)(f * 18446744073709551616.0L + 0.5L);
}

/* ---- blob writer --------------------------------------------------- */

struct tsrc {
	uint32_t role;
	uint32_t qtype;		/* WFS_QT_INT8/INT4/S16/U64 */
	uint32_t rows, cols;
	const float *w;		/* float source (not for U64) */
};

static size_t tensor_bytes(const struct tsrc *t, unsigned int gs,
			   size_t *sbytes)
{
	size_t ng = (t->cols + gs - 1) / gs;

	*sbytes = 0;
	switch (t->qtype) {
	case WFS_QT_INT8:
	case WFS_QT_INT4:
		*sbytes = (size_t)t->rows * ng * 2;
		return (size_t)t->rows *
		       wfs_qmat_row_bytes(t->qtype, t->cols, gs);
	case WFS_QT_S16:
		return (size_t)t->cols * 2;
	default:
		return (size_t)t->cols * 8;
	}
}

static size_t section_size(const struct tsrc *t, unsigned int n,
			   unsigned int gs)
{
	size_t off = sizeof(struct wfs_section_header) +
		     n * sizeof(struct wfs_tensor_desc);
	size_t sb, b;
	unsigned int i;

	for (i = 0; i < n; i++) {
		b = tensor_bytes(&t[i], gs, &sb);
		off = a64(off) + b;
		if (sb)
			off = a64(off) + sb;
	}
	return a64(off);
}

static void pack_int4_row(const int8_t *q, unsigned int cols,
			  unsigned int gs, uint8_t *dst)
{
	unsigned int g0, i;

	for (g0 = 0; g0 < cols; g0 += gs) {
		unsigned int n = cols - g0 < gs ? cols - g0 : gs;
		unsigned int h = (n + 1) / 2;

		for (i = 0; i < h; i++) {
			unsigned int lo = (unsigned int)(q[g0 + i] + 8);
			unsigned int hi = i + h < n ?
					  (unsigned int)(q[g0 + i + h] + 8) : 8;

			*dst++ = (uint8_t)(lo | (hi << 4));
		}
	}
}

static int write_section(uint8_t *sec, size_t size, uint32_t kind,
			 uint32_t index, const struct tsrc *t, unsigned int n,
			 unsigned int gs, double theta, unsigned int hs)
{
	struct wfs_section_header sh = {
		.magic = WFS_SECTION_MAGIC, .kind = kind, .index = index,
		.n_tensors = n, .size = size,
	};
	size_t off = sizeof(sh) + n * sizeof(struct wfs_tensor_desc);
	unsigned int i, r;
	int ret = 0;

	memcpy(sec, &sh, sizeof(sh));
	for (i = 0; i < n && !ret; i++) {
		struct wfs_tensor_desc d = {
			.role = t[i].role, .qtype = t[i].qtype,
			.rows = t[i].rows, .cols = t[i].cols,
		};
		size_t sb, b = tensor_bytes(&t[i], gs, &sb);
		int e = 0;

		d.data_offset = a64(off);
		off = d.data_offset + b;
		if (t[i].qtype == WFS_QT_INT8 || t[i].qtype == WFS_QT_INT4) {
			size_t rb = wfs_qmat_row_bytes(t[i].qtype, t[i].cols, gs);
			int8_t *q = malloc((size_t)t[i].rows * t[i].cols);
			uint16_t *m = malloc(sb);

			d.group_size = gs;
			d.scale_offset = a64(off);
			off = d.scale_offset + sb;
			if (!q || !m)
				ret = -ENOMEM;
			else
				ret = wfs_pack_quant_matrix(t[i].w, t[i].rows,
							    t[i].cols,
							    t[i].qtype == WFS_QT_INT8 ? 8 : 4,
							    gs, q, m, &e);
			if (!ret) {
				for (r = 0; r < t[i].rows; r++) {
					uint8_t *dst = sec + d.data_offset + r * rb;
					const int8_t *qr = q + (size_t)r * t[i].cols;

					if (t[i].qtype == WFS_QT_INT8)
						memcpy(dst, qr, t[i].cols);
					else
						pack_int4_row(qr, t[i].cols, gs, dst);
				}
				memcpy(sec + d.scale_offset, m, sb);
			}
			free(q);
			free(m);
		} else if (t[i].qtype == WFS_QT_S16) {
			ret = wfs_pack_quant_vec16(t[i].w, t[i].cols,
						   (int16_t *)(sec + d.data_offset),
						   &e);
		} else {
			uint64_t *f = (uint64_t *)(sec + d.data_offset);

			for (r = 0; r < t[i].cols; r++)
				f[r] = wfs_pack_rope_freq(theta, r, hs);
		}
		d.scale_exp = e;
		memcpy(sec + sizeof(sh) + i * sizeof(d), &d, sizeof(d));
	}
	return ret;
}

static void resolve_bits(const struct wfs_pack_opts *o, unsigned int *lb,
			 unsigned int *eb, unsigned int *cb)
{
	*lb = o->wbits;
	*eb = o->embed_bits ? o->embed_bits : o->wbits;
	*cb = o->cls_bits ? o->cls_bits : o->wbits;
}

static uint32_t qt(unsigned int bits)
{
	return bits == 8 ? WFS_QT_INT8 : WFS_QT_INT4;
}

/**
 * wfs_pack() - build a model blob
 * @c: fp32 checkpoint
 * @o: options
 * @blob: receives a malloc'd blob (free())
 * @len: its length
 *
 * Return: 0, -EINVAL for bad options, -ENOMEM, or the validator's error
 * if the result does not parse (a packer bug).
 */
int wfs_pack(const struct wfs_ckpt *c, const struct wfs_pack_opts *o,
	     void **blob, size_t *len)
{
	unsigned int d = c->dim, hd = c->hidden_dim, hs = c->dim / c->n_heads;
	unsigned int kv = hs * c->n_kv_heads, first = o->first_layer;
	unsigned int nl = o->n_layers ? o->n_layers : c->n_layers - first;
	unsigned int lb, eb, cb, gs = o->group_size, i, s, nsec, k;
	double theta = o->rope_theta > 0 ? o->rope_theta : 10000.0;
	struct wfs_blob_header h;
	struct wfs_model_info info;
	struct tsrc t[WFS_LAYER_TENSORS];
	size_t off, ssize;
	uint8_t *b;
	int ret = 0;

	resolve_bits(o, &lb, &eb, &cb);
	if (!ckpt_dims_ok(c) || (lb != 8 && lb != 4) || (eb != 8 && eb != 4) ||
	    (cb != 8 && cb != 4) || !gs || gs > WFS_MAX_GROUP ||
	    ((lb == 4 || eb == 4 || cb == 4) && (gs & 1)) || hs & 1 ||
	    !nl || first + nl > (unsigned int)c->n_layers)
		return -EINVAL;

	memset(&h, 0, sizeof(h));
	h.magic = WFS_BLOB_MAGIC;
	h.version_major = WFS_BLOB_VERSION_MAJOR;
	h.version_minor = WFS_BLOB_VERSION_MINOR;
	h.header_size = sizeof(h);
	h.flags = (o->checksum ? WFS_MF_CHECKSUM : 0) |
		  (o->kv_int8 ? WFS_MF_KV_INT8 : 0) |
		  (c->shared_cls ? WFS_MF_TIED_CLS : 0);
	h.dim = d;
	h.hidden_dim = hd;
	h.n_layers = nl;
	h.n_heads = c->n_heads;
	h.n_kv_heads = c->n_kv_heads;
	h.head_size = hs;
	h.vocab_size = c->vocab_size;
	h.seq_len = c->seq_len;
	h.rope_theta = (uint32_t)theta;
	h.norm_eps_q40 = (uint32_t)llround(WFS_EPS * 1099511627776.0);
	h.first_layer = first;
	h.total_layers = c->n_layers;
	h.input_kind = first ? WFS_IO_ACT : WFS_IO_TOKENS;
	h.output_kind = first + nl < (unsigned int)c->n_layers ?
			WFS_IO_ACT : WFS_IO_TOKENS;
	nsec = nl + (h.input_kind == WFS_IO_TOKENS) +
	       (h.output_kind == WFS_IO_TOKENS);
	h.n_sections = nsec;
	h.section_table_offset = a64(sizeof(h));

	/* pass 0 sizes the blob, pass 1 writes it */
	b = NULL;
	for (int pass = 0; pass < 2 && !ret; pass++) {
		struct wfs_section_entry se;

		off = a64(h.section_table_offset +
			  nsec * sizeof(struct wfs_section_entry));
		for (s = 0; s < nsec && !ret; s++) {
			uint32_t kind, index = 0;

			if (h.input_kind == WFS_IO_TOKENS && s == 0) {
				kind = WFS_SEC_EMBED;
				t[0] = (struct tsrc){ WFS_T_TOK_EMB, qt(eb),
					c->vocab_size, d, c->tok_emb };
				k = 1;
			} else if (h.output_kind == WFS_IO_TOKENS &&
				   s == nsec - 1) {
				kind = WFS_SEC_HEAD;
				t[0] = (struct tsrc){ WFS_T_RMS_FINAL, WFS_QT_S16,
					1, d, c->rms_final };
				t[1] = (struct tsrc){ WFS_T_CLS, qt(cb),
					c->vocab_size, d, c->wcls };
				k = 2;
			} else {
				size_t l;

				kind = WFS_SEC_LAYER;
				index = s - (h.input_kind == WFS_IO_TOKENS);
				l = first + index;
				t[0] = (struct tsrc){ WFS_T_RMS_ATT, WFS_QT_S16,
					1, d, c->rms_att + l * d };
				t[1] = (struct tsrc){ WFS_T_WQ, qt(lb), d, d,
					c->wq + l * d * d };
				t[2] = (struct tsrc){ WFS_T_WK, qt(lb), kv, d,
					c->wk + l * kv * d };
				t[3] = (struct tsrc){ WFS_T_WV, qt(lb), kv, d,
					c->wv + l * kv * d };
				t[4] = (struct tsrc){ WFS_T_WO, qt(lb), d, d,
					c->wo + l * d * d };
				t[5] = (struct tsrc){ WFS_T_RMS_FFN, WFS_QT_S16,
					1, d, c->rms_ffn + l * d };
				t[6] = (struct tsrc){ WFS_T_W1, qt(lb), hd, d,
					c->w1 + l * hd * d };
				t[7] = (struct tsrc){ WFS_T_W2, qt(lb), d, hd,
					c->w2 + l * d * hd };
				t[8] = (struct tsrc){ WFS_T_W3, qt(lb), hd, d,
					c->w3 + l * hd * d };
				t[9] = (struct tsrc){ WFS_T_ROPE, WFS_QT_U64,
					1, hs / 2, NULL };
				k = WFS_LAYER_TENSORS;
			}
			ssize = section_size(t, k, gs);
			if (pass) {
				memset(&se, 0, sizeof(se));
				se.kind = kind;
				se.index = index;
				se.offset = off;
				se.size = ssize;
				memcpy(b + h.section_table_offset +
				       s * sizeof(se), &se, sizeof(se));
				ret = write_section(b + off, ssize, kind, index,
						    t, k, gs, theta, hs);
			}
			off += ssize;
		}
		if (!pass) {
			h.total_size = off;
			b = calloc(1, off);
			if (!b)
				return -ENOMEM;
		}
	}
	if (!ret && o->checksum)
		h.checksum = wfs_fnv1a32(b + sizeof(h), h.total_size - sizeof(h));
	memcpy(b, &h, sizeof(h));
	if (!ret)
		ret = wfs_model_parse(b, h.total_size, &info);
	if (ret) {
		free(b);
		return ret;
	}
	(void)i;
	*blob = b;
	*len = h.total_size;
	return 0;
}

static int dequant_matrix(float *w, unsigned int rows, unsigned int cols,
			  unsigned int bits, unsigned int gs)
{
	unsigned int ng = (cols + gs - 1) / gs, r, j;
	int8_t *q = malloc((size_t)rows * cols);
	uint16_t *m = malloc((size_t)rows * ng * 2);
	int e, ret = -ENOMEM;

	if (q && m)
		ret = wfs_pack_quant_matrix(w, rows, cols, bits, gs, q, m, &e);
	if (!ret)
		for (r = 0; r < rows; r++)
			for (j = 0; j < cols; j++)
				w[(size_t)r * cols + j] = (float)ldexp(
					(double)q[(size_t)r * cols + j] *
					m[(size_t)r * ng + j / gs], e);
	free(q);
	free(m);
	return ret;
}

static int dequant_vec16(float *w, unsigned int n)
{
	int16_t *q = malloc((size_t)n * 2);
	unsigned int i;
	int e, ret = -ENOMEM;

	if (q)
		ret = wfs_pack_quant_vec16(w, n, q, &e);
	if (!ret)
		for (i = 0; i < n; i++)
			w[i] = (float)ldexp(q[i], e);
	free(q);
	return ret;
}

/**
 * wfs_pack_dequant() - the checkpoint as the blob encodes it
 * @c: fp32 checkpoint
 * @o: the options the blob is (or would be) packed with
 * @out: receives a copy of @c whose weights are the de-quantised values
 *	(an fp32 reference on @out sees exactly the blob's weights)
 *
 * Return: 0 or -errno.
 */
int wfs_pack_dequant(const struct wfs_ckpt *c, const struct wfs_pack_opts *o,
		     struct wfs_ckpt *out)
{
	unsigned int d = c->dim, hd = c->hidden_dim;
	unsigned int kv = d / c->n_heads * c->n_kv_heads, lb, eb, cb, gs;
	size_t l;
	int ret;

	resolve_bits(o, &lb, &eb, &cb);
	gs = o->group_size;
	/* a tied classifier gets its own copy: it is quantised separately */
	*out = *c;
	out->shared_cls = 0;
	ret = wfs_ckpt_alloc(out);
	if (ret)
		return ret;
	memcpy(out->mem, c->mem, (size_t)(c->rms_final - c->mem + d) * 4);
	memcpy(out->wcls, c->wcls, (size_t)c->vocab_size * d * 4);
	ret = dequant_matrix(out->tok_emb, c->vocab_size, d, eb, gs);
	ret = ret ? ret : dequant_matrix(out->wcls, c->vocab_size, d, cb, gs);
	ret = ret ? ret : dequant_vec16(out->rms_final, d);
	for (l = 0; l < (size_t)c->n_layers && !ret; l++) {
		ret = dequant_vec16(out->rms_att + l * d, d);
		ret = ret ? ret : dequant_vec16(out->rms_ffn + l * d, d);
		ret = ret ? ret : dequant_matrix(out->wq + l * d * d, d, d, lb, gs);
		ret = ret ? ret : dequant_matrix(out->wk + l * kv * d, kv, d, lb, gs);
		ret = ret ? ret : dequant_matrix(out->wv + l * kv * d, kv, d, lb, gs);
		ret = ret ? ret : dequant_matrix(out->wo + l * d * d, d, d, lb, gs);
		ret = ret ? ret : dequant_matrix(out->w1 + l * hd * d, hd, d, lb, gs);
		ret = ret ? ret : dequant_matrix(out->w2 + l * d * hd, d, hd, lb, gs);
		ret = ret ? ret : dequant_matrix(out->w3 + l * hd * d, hd, d, lb, gs);
	}
	if (ret)
		wfs_ckpt_free(out);
	return ret;
}
