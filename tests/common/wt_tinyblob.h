/* SPDX-License-Identifier: MIT */
/*
 * wt_tinyblob.h - build small valid model blobs with pseudo-random integer
 * weights, without the packer (no floats, no libm): fuzz templates,
 * validator tests and golden-bits checks.  Header-only and freestanding
 * (only wfs_compat.h), so the libFuzzer harness, which links only
 * firmware-sim, and a KUnit test can use it too.
 *
 * Model: dim 8, hidden 13 (odd: with group 6 the W2 rows end in a 1-weight
 * tail group), 2 heads of 4, 1 KV head (grouped-query), vocab 7.
 */
#ifndef WT_TINYBLOB_H
#define WT_TINYBLOB_H

#include "wfs_model.h"	/* via wfs_compat.h: types, memcpy, memset */

#define WT_TINY_MAX	16384

enum wt_tiny_variant {
	WT_TINY_INT8,		/* int8, group 4, tokens in/out, 2 layers */
	WT_TINY_INT4,		/* int4, group 6 (tails 2 and 1), checksum, KV int8 */
	WT_TINY_RANGE,		/* layers 1..2 of 4, activations in/out, int4 */
	WT_TINY_MOE,		/* int8, group 4, 2 MoE layers: 3 experts of
				 * width 3, top-2, sigmoid gates, 1 shared
				 * expert of width 4 */
	WT_TINY_NVARIANTS
};

struct wt_tiny_w {
	uint8_t *b;
	size_t off;
	uint64_t rng;
};

static inline uint32_t wt_tiny_rand(struct wt_tiny_w *w)
{
	w->rng = w->rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(w->rng >> 33);
}

static inline size_t wt_tiny_a64(size_t x)
{
	return (x + 63) & ~(size_t)63;
}

/* Append one tensor's payload; fill its descriptor. */
static inline void wt_tiny_tensor(struct wt_tiny_w *w, uint8_t *sec,
				  struct wfs_tensor_desc *d, uint32_t role,
				  uint32_t qtype, uint32_t rows, uint32_t cols,
				  uint32_t gs)
{
	size_t n, i;

	memset(d, 0, sizeof(*d));
	d->role = role;
	d->qtype = qtype;
	d->rows = rows;
	d->cols = cols;
	w->off = wt_tiny_a64(w->off);
	d->data_offset = w->off;
	if (qtype == WFS_QT_INT8 || qtype == WFS_QT_INT4) {
		d->group_size = gs;
		d->scale_exp = -14;
		n = (size_t)rows * wfs_qmat_row_bytes(qtype, cols, gs);
		for (i = 0; i < n; i++)
			sec[w->off + i] = (uint8_t)wt_tiny_rand(w);
		w->off = wt_tiny_a64(w->off + n);
		d->scale_offset = w->off;
		n = (size_t)rows * ((cols + gs - 1) / gs);
		for (i = 0; i < n; i++) {
			uint16_t m = (uint16_t)(wt_tiny_rand(w) | 0x8000);

			memcpy(sec + w->off + 2 * i, &m, 2);
		}
		w->off += 2 * n;
	} else if (qtype == WFS_QT_S16) {
		d->scale_exp = -14;
		for (i = 0; i < cols; i++) {
			int16_t v = (int16_t)(12000 + wt_tiny_rand(w) % 8000);

			memcpy(sec + w->off + 2 * i, &v, 2);
		}
		w->off += 2 * cols;
	} else {
		for (i = 0; i < cols; i++) {
			uint64_t f = ((uint64_t)wt_tiny_rand(w) << 32) >> (3 * i);

			memcpy(sec + w->off + 8 * i, &f, 8);
		}
		w->off += 8 * cols;
	}
}

/* Tensor @i of a section: its data, and its descriptor in the table. */
static inline void wt_tiny_put(struct wt_tiny_w *w, uint8_t *sec, uint32_t i,
			       uint32_t role, uint32_t qtype, uint32_t rows,
			       uint32_t cols, uint32_t gs)
{
	struct wfs_tensor_desc d;

	wt_tiny_tensor(w, sec, &d, role, qtype, rows, cols, gs);
	memcpy(sec + sizeof(struct wfs_section_header) + i * sizeof(d), &d,
	       sizeof(d));
}

/* A layer's tensors: dense, or the MoE variant's router and experts. */
static inline uint32_t wt_tiny_layer(struct wt_tiny_w *w, uint8_t *sec,
				     uint32_t qt, uint32_t gs, int moe)
{
	static const uint32_t width[4] = { 4, 3, 3, 3 };
	uint32_t i = 6, x;

	wt_tiny_put(w, sec, 0, WFS_T_RMS_ATT, WFS_QT_S16, 1, 8, 0);
	wt_tiny_put(w, sec, 1, WFS_T_WQ, qt, 8, 8, gs);
	wt_tiny_put(w, sec, 2, WFS_T_WK, qt, 4, 8, gs);
	wt_tiny_put(w, sec, 3, WFS_T_WV, qt, 4, 8, gs);
	wt_tiny_put(w, sec, 4, WFS_T_WO, qt, 8, 8, gs);
	wt_tiny_put(w, sec, 5, WFS_T_RMS_FFN, WFS_QT_S16, 1, 8, 0);
	if (moe)
		wt_tiny_put(w, sec, i++, WFS_T_ROUTER, qt, 3, 8, gs);
	for (x = 0; x < (moe ? 4u : 1u); x++) {
		uint32_t h = moe ? width[x] : 13;

		wt_tiny_put(w, sec, i++, WFS_T_W1, qt, h, 8, gs);
		wt_tiny_put(w, sec, i++, WFS_T_W2, qt, 8, h, gs);
		wt_tiny_put(w, sec, i++, WFS_T_W3, qt, h, 8, gs);
	}
	wt_tiny_put(w, sec, i++, WFS_T_ROPE, WFS_QT_U64, 1, 2, 0);
	return i;
}

/*
 * Bytes a blob of @n layers of any variant takes at most (a MoE layer and
 * its section table entry take under 4 KiB; the header, embedding and
 * head under 4 KiB).
 */
#define WT_TINY_BYTES(n)	((size_t)(n) * 4096 + 4096)

/*
 * Build variant @v with @n_layers layers (0: the variant's 2) into @buf
 * of @cap >= WT_TINY_BYTES(layers) bytes; returns its length.  A
 * WT_TINY_RANGE blob is layers 1..@n_layers of @n_layers + 2.
 */
static inline size_t wt_tiny_build_n(uint8_t *buf, size_t cap,
				     enum wt_tiny_variant v, uint32_t n_layers)
{
	struct wfs_blob_header h;
	struct wfs_section_entry se;
	struct wfs_section_header sh;
	struct wt_tiny_w w = { .b = buf, .rng = 0x5eed + v };
	int i8 = v == WT_TINY_INT8 || v == WT_TINY_MOE;
	uint32_t qt = i8 ? WFS_QT_INT8 : WFS_QT_INT4;
	uint32_t gs = i8 ? 4 : 6, s, nsec, kind, idx, nt;
	size_t off;

	if (!n_layers)
		n_layers = 2;
	memset(buf, 0, cap);
	memset(&h, 0, sizeof(h));
	h.magic = WFS_BLOB_MAGIC;
	h.version_major = WFS_BLOB_VERSION_MAJOR;
	h.version_minor = WFS_BLOB_VERSION_MINOR;
	h.header_size = sizeof(h);
	h.dim = 8;
	h.hidden_dim = 13;
	h.n_heads = 2;
	h.n_kv_heads = 1;
	h.head_size = 4;
	h.vocab_size = 7;
	h.seq_len = 16;
	h.rope_theta = 10000;
	h.norm_eps_q40 = 10995116;
	if (v == WT_TINY_RANGE) {
		h.n_layers = n_layers;
		h.first_layer = 1;
		h.total_layers = n_layers + 2;
		h.input_kind = WFS_IO_ACT;
		h.output_kind = WFS_IO_ACT;
	} else {
		h.n_layers = n_layers;
		h.total_layers = n_layers;
	}
	if (v == WT_TINY_INT4)
		h.flags = WFS_MF_CHECKSUM | WFS_MF_KV_INT8;
	if (v == WT_TINY_MOE) {
		h.flags = WFS_MF_MOE;
		h.ffn_kind = WFS_FFN_MOE;
		h.n_experts = 3;
		h.n_experts_active = 2;
		h.n_shared_experts = 1;
		h.gate_kind = WFS_GATE_SIGMOID;
	}
	nsec = h.n_layers + (h.input_kind == WFS_IO_TOKENS) +
	       (h.output_kind == WFS_IO_TOKENS);
	h.n_sections = nsec;
	h.section_table_offset = wt_tiny_a64(sizeof(h));
	off = wt_tiny_a64(h.section_table_offset + nsec * sizeof(se));
	for (s = 0; s < nsec; s++) {
		uint8_t *sec = buf + off;

		if (h.input_kind == WFS_IO_TOKENS && s == 0) {
			kind = WFS_SEC_EMBED;
			idx = 0;
			nt = WFS_EMBED_TENSORS;
		} else if (h.output_kind == WFS_IO_TOKENS && s == nsec - 1) {
			kind = WFS_SEC_HEAD;
			idx = 0;
			nt = WFS_HEAD_TENSORS;
		} else {
			kind = WFS_SEC_LAYER;
			idx = s - (h.input_kind == WFS_IO_TOKENS);
			nt = v == WT_TINY_MOE ? WFS_MOE_FIXED_TENSORS + 13 :
						WFS_LAYER_TENSORS;
		}
		w.off = sizeof(sh) + nt * sizeof(struct wfs_tensor_desc);
		if (kind == WFS_SEC_EMBED) {
			wt_tiny_put(&w, sec, 0, WFS_T_TOK_EMB, qt, 7, 8, gs);
		} else if (kind == WFS_SEC_HEAD) {
			wt_tiny_put(&w, sec, 0, WFS_T_RMS_FINAL, WFS_QT_S16, 1, 8, 0);
			wt_tiny_put(&w, sec, 1, WFS_T_CLS, qt, 7, 8, gs);
		} else {
			wt_tiny_layer(&w, sec, qt, gs, v == WT_TINY_MOE);
		}
		memset(&sh, 0, sizeof(sh));
		sh.magic = WFS_SECTION_MAGIC;
		sh.kind = kind;
		sh.index = idx;
		sh.n_tensors = nt;
		sh.size = wt_tiny_a64(w.off);
		memcpy(sec, &sh, sizeof(sh));
		memset(&se, 0, sizeof(se));
		se.kind = kind;
		se.index = idx;
		se.offset = off;
		se.size = sh.size;
		memcpy(buf + h.section_table_offset + s * sizeof(se), &se,
		       sizeof(se));
		off += sh.size;
	}
	h.total_size = off;
	if (h.flags & WFS_MF_CHECKSUM)
		h.checksum = wfs_fnv1a32(buf + sizeof(h), off - sizeof(h));
	memcpy(buf, &h, sizeof(h));
	return off;
}

/* Build variant @v into @buf (WT_TINY_MAX bytes); returns its length. */
static inline size_t wt_tiny_build(uint8_t *buf, enum wt_tiny_variant v)
{
	return wt_tiny_build_n(buf, WT_TINY_MAX, v, 0);
}

#endif /* WT_TINYBLOB_H */
