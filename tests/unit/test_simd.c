// SPDX-License-Identifier: MIT
/*
 * test_simd.c - the vector kernels of the forward pass (wfs_simd.h) against
 * the scalar code, bit for bit: int8 and int4 matvec over random shapes
 * (odd sizes, short last groups, every tail length, unaligned buffers) and
 * extreme values, the attention dot products and weighted sums likewise,
 * the softmax exponentials (every d < 2^25, both sides of each z step),
 * and whole forward passes (every activation, KV byte and top-k logit) of
 * the shared model and of random small models.  wfs_os_simd_enable(0) is
 * the scalar path (WAFER_SIMD=0 in the environment does the same).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wfs_exp.h"
#include "wfs_os.h"
#include "wfs_pack.h"
#include "wfs_simd.h"
#include "wt_model.h"
#include "wt_util.h"

#define K	8

static struct wt_rng rng;

static int64_t rnd(int64_t lo, int64_t hi)
{
	return wt_rng_range(&rng, lo, hi);
}

/* Random bytes; one time in four every byte is @ext (an extreme). */
static void fill(void *p, size_t n, int ext)
{
	uint8_t *b = p;
	int mode = (int)rnd(0, 3);
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = mode == 0 ? (uint8_t)ext : (uint8_t)wt_rng_u64(&rng);
}

static void fill16(int16_t *x, size_t n)
{
	int mode = (int)rnd(0, 4);
	size_t i;

	for (i = 0; i < n; i++)
		x[i] = mode == 0 ? -32768 : mode == 1 ? 32767 :
		       mode == 2 ? (int16_t)(i & 1 ? -32768 : 32767) :
		       (int16_t)wt_rng_u64(&rng);
}

/* Run fn with the scalar code (simd 0) or the vector kernels (simd 1). */
#define BOTH(out0, out1, n, call)					\
	do {								\
		wfs_os_simd_enable(0);					\
		call(out0);						\
		wfs_os_simd_enable(1);					\
		call(out1);						\
		same &= !memcmp(out0, out1, n);				\
	} while (0)

static void test_matvec(void)
{
	int it, same = 1, n = 0;

	for (it = 0; it < 400; it++) {
		struct wfs_qmat w = { .qtype = rnd(0, 1) ? WFS_QT_INT8 : WFS_QT_INT4 };
		uint32_t rb, re, off = (uint32_t)rnd(0, 1);
		uint8_t *data;
		uint16_t *sc;
		int16_t *x;
		int64_t *y0, *y1;
		uint32_t i;

		w.group_size = (uint32_t)rnd(1, WFS_MAX_GROUP);
		if (it % 5 == 0)
			w.group_size = 32;
		if (w.qtype == WFS_QT_INT4)
			w.group_size = (w.group_size + 1) & ~1u;
		w.cols = (uint32_t)rnd(1, 700);
		/* up to 40 rows: several blocks of eight and a remainder */
		w.rows = (uint32_t)rnd(1, it % 2 ? 9 : 40);
		w.n_groups = (w.cols + w.group_size - 1) / w.group_size;
		w.row_bytes = (uint32_t)wfs_qmat_row_bytes(w.qtype, w.cols, w.group_size);
		data = wt_alloc((size_t)w.rows * w.row_bytes + 1);
		sc = wt_alloc(2ull * w.rows * w.n_groups);
		x = wt_alloc(2ull * w.cols + 2);
		y0 = wt_alloc(8ull * w.rows);
		y1 = wt_alloc(8ull * w.rows);
		/* int8 -128 and int4 nibble 0 (-8) are the largest weights */
		fill(data + off, (size_t)w.rows * w.row_bytes,
		     w.qtype == WFS_QT_INT8 ? 0x80 : 0x00);
		w.data = data + off;
		for (i = 0; i < w.rows * w.n_groups; i++)
			sc[i] = rnd(0, 3) ? (uint16_t)wt_rng_u64(&rng) : 65535;
		w.scales = sc;
		fill16(x + off, w.cols);
		rb = (uint32_t)rnd(0, w.rows - 1);
		re = (uint32_t)rnd(rb + 1, w.rows);
#define MV(y)	(memset(y, 0, 8ull * w.rows), wfs_matvec_rows(&w, x + off, y, rb, re))
		BOTH(y0, y1, 8ull * w.rows, MV);
#undef MV
		if (!same && !n++)
			wt_diag("matvec differs: qtype %u rows %u cols %u group %u",
				w.qtype, w.rows, w.cols, w.group_size);
		free(data);
		free(sc);
		free(x);
		free(y0);
		free(y1);
	}
	wt_ok(same, "matvec int8/int4: vector == scalar on 400 random shapes (tails, short groups, extremes, unaligned)");
}

static void test_attn(void)
{
	int it, same = 1, n = 0;

	for (it = 0; it < 400; it++) {
		/* one in four at head size 8, which has its own kernels */
		uint32_t hs = it % 4 ? (uint32_t)rnd(1, 300) : 8;
		uint32_t npos = (uint32_t)rnd(1, 70);
		uint32_t esz = (uint32_t)rnd(1, 2), t;
		uint64_t stride = ((uint64_t)hs * esz + (uint64_t)rnd(0, 9)) & ~1ull;
		uint8_t *kv;
		int16_t *q;
		int64_t *d0, *d1, *p, *o0, *o1;

		if (stride < (uint64_t)hs * esz)
			stride += 2;
		kv = wt_alloc(stride * npos + 2);
		q = wt_alloc(2ull * hs);
		d0 = wt_alloc(8ull * npos);
		d1 = wt_alloc(8ull * npos);
		p = wt_alloc(8ull * npos);
		o0 = wt_alloc(8ull * hs);
		o1 = wt_alloc(8ull * hs);
		fill(kv, stride * npos + 2, 0x80);
		fill16(q, hs);
		/* -32768 queries take the scalar path inside: still equal */
		for (t = 0; t < hs && rnd(0, 3); t++)
			if (q[t] == -32768)
				q[t] = -32767;
#define DOTS(d)	wfs_attn_dots(q, kv, stride, npos, hs, esz, d)
		BOTH(d0, d1, 8ull * npos, DOTS);
#undef DOTS
		for (t = 0; t < npos; t++)
			p[t] = rnd(0, 4) == 0 ? 0 : rnd(0, 5) == 0 ? 0x7fffffff :
			       rnd(0, 1 << 30);
		if (it % 17 == 0)
			/* out of the kernels' range */
			p[rnd(0, npos - 1)] = it % 2 ? -5 : 0x80000000ll;
		fill(o0, 8ull * hs, 0);
		memcpy(o1, o0, 8ull * hs);
#define ACC(o)	wfs_attn_accum(p, kv, stride, npos, hs, esz, o)
		{
			wfs_os_simd_enable(0);
			ACC(o0);
			wfs_os_simd_enable(1);
			ACC(o1);
			same &= !memcmp(o0, o1, 8ull * hs);
		}
#undef ACC
		if (!same && !n++)
			wt_diag("attention differs: hs %u npos %u esz %u stride %llu",
				hs, npos, esz, (unsigned long long)stride);
		free(kv);
		free(q);
		free(d0);
		free(d1);
		free(p);
		free(o0);
		free(o1);
	}
	wt_ok(same, "attention dots and weighted sums: vector == scalar on 400 random shapes");
}

static uint64_t fnv64(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ULL;
	return h;
}

/* Greedy run of npos positions: hash of every activation, top-k and KV. */
static uint64_t run_hash(const void *blob, size_t len, uint32_t npos,
			 unsigned int kv_bits)
{
	struct wfs_topk_entry tk[K];
	struct wt_model m;
	uint64_t h = 0xcbf29ce484222325ULL;
	uint32_t tok = 1, pos, l;

	if (wt_model_open(&m, blob, len, npos, kv_bits))
		return 0;
	for (pos = 0; pos < npos; pos++) {
		memset(tk, 0, sizeof(tk));
		tok = wt_model_step(&m, tok, pos, K, tk);
		h = fnv64(h, tk, sizeof(tk));
		h = fnv64(h, m.act, wfs_act_bytes(&m.info));
	}
	for (l = 0; l < m.info.n_layers; l++)
		h = fnv64(h, m.kv[l], wfs_kv_bytes(&m.info, npos));
	wt_model_close(&m);
	return h;
}

static int compare_model(const struct wfs_ckpt *c, unsigned int wbits,
			 unsigned int gs, uint32_t npos, unsigned int kv_bits)
{
	struct wfs_pack_opts o = { .wbits = wbits, .group_size = gs };
	uint64_t h0, h1;
	size_t len;
	void *blob;

	if (wfs_pack(c, &o, &blob, &len))
		return 0;
	wfs_os_simd_enable(0);
	h0 = run_hash(blob, len, npos, kv_bits);
	wfs_os_simd_enable(1);
	h1 = run_hash(blob, len, npos, kv_bits);
	free(blob);
	return h0 && h0 == h1;
}

static void test_shared_model(void)
{
	const char *path = wt_model_path("stories260K.bin");
	static const unsigned int wb[] = { 8, 4 }, kb[] = { 16, 8 };
	struct wfs_ckpt c;
	int i, j;

	if (!path || wfs_ckpt_load(path, &c)) {
		wt_ok(0, "stories260K.bin loads");
		return;
	}
	for (i = 0; i < 2; i++)
		for (j = 0; j < 2; j++)
			wt_ok(compare_model(&c, wb[i], 32, 200, kb[j]),
			      "stories260K int%u weights, int%u KV: 200 positions, vector == scalar (activations, KV, top-%d)",
			      wb[i], kb[j], K);
	wfs_ckpt_free(&c);
}

/* Small models of odd shapes with random weights. */
static void test_random_models(void)
{
	int it, ok = 1;

	for (it = 0; it < 6 && ok; it++) {
		struct wfs_ckpt c = { 0 };
		unsigned int gs;
		size_t i;

		c.n_kv_heads = (int)rnd(1, 2);
		c.n_heads = c.n_kv_heads * (int)rnd(1, 3);
		c.dim = c.n_heads * 2 * (int)rnd(1, 12);	/* head_size even */
		c.hidden_dim = (int)rnd(1, 150);
		c.n_layers = (int)rnd(1, 2);
		c.vocab_size = (int)rnd(8, 90);
		c.seq_len = 64;
		c.shared_cls = (int)rnd(0, 1);
		if (wfs_ckpt_alloc(&c)) {
			ok = 0;
			break;
		}
		for (i = 0; i < c.mem_floats; i++)
			c.mem[i] = (float)(wt_rng_gauss(&rng) * 0.3);
		gs = 2 * (unsigned int)rnd(1, 40);
		ok = compare_model(&c, 8, gs, 40, 16) &&
		     compare_model(&c, 4, gs, 40, 8);
		if (!ok)
			wt_diag("model dim %d hidden %d heads %d/%d group %u differs",
				c.dim, c.hidden_dim, c.n_heads, c.n_kv_heads, gs);
		wfs_ckpt_free(&c);
	}
	wt_ok(ok, "random small models (odd hidden, head sizes, groups): vector == scalar");
}

/* Vector exponentials of @n differences d[i] against the scalar ones. */
static int exp_same(const uint64_t *d, int64_t *x, uint32_t n)
{
	uint64_t sum = 0, ref = 0;
	uint32_t i;
	int ok = 1;

	for (i = 0; i < n; i++)
		x[i] = -(int64_t)d[i];
	if (!wfs_simd_softmax_exp(x, n, 0, &sum))
		return 0;
	for (i = 0; i < n; i++) {
		ok &= (uint64_t)x[i] == wfs_exp_neg_q30(d[i]);
		ref += (uint64_t)x[i];
	}
	return ok && sum == ref;
}

static void test_softmax(void)
{
	enum { N = 4096, M = 300 };
	static uint64_t d[N];
	static int64_t x[N], xs[M], y0[M], y1[M];
	uint64_t b, i;
	int same = 1, it;
	uint32_t z, n;

	/* every d below 2^25 (z up to 2) */
	for (b = 0; b < (1ull << 25); b += N) {
		for (i = 0; i < N; i++)
			d[i] = b + i;
		same &= exp_same(d, x, N);
	}
	/* both sides of every z step (d = z ln2 in Q24) and of the 0 limit */
	for (z = 1; z <= 32; z++) {
		b = (uint64_t)z * 2977044472ull / 256 - N / 2;
		for (i = 0; i < N; i++)
			d[i] = b + i;
		same &= exp_same(d, x, N);
	}
	/* random d, mostly below the limit 22 << 24, some up to 2^63 */
	for (it = 0; it < 256; it++) {
		for (i = 0; i < N; i++)
			d[i] = i & 7 ? (uint64_t)rnd(0, 23ll << 24) :
			       wt_rng_u64(&rng) >> 1;
		/* one in four: runs past the limit (the kernel skips them) */
		for (i = 0; it % 4 == 0 && i < N; i++)
			d[i] = (22ull << 24) + (uint64_t)rnd(i & 63 ? 0 : -9, 9);
		same &= exp_same(d, x, (uint32_t)rnd(1, N));
	}
	wt_ok(same, "softmax exponentials: vector == scalar for every d < 2^25, around every z step, 1M random");
	same = 1;
	for (it = 0; it < 400; it++) {
		n = (uint32_t)rnd(1, M);
		for (i = 0; i < n; i++)
			xs[i] = it & 1 ? rnd(-(1ll << 30), 1ll << 30) :
				rnd(-(1ll << 61), 1ll << 61);
#define SMX(o)	(memcpy(o, xs, 8 * n), wfs_softmax_q30(o, n))
		BOTH(y0, y1, 8 * n, SMX);
#undef SMX
	}
	wt_ok(same, "softmax (exponentials and normalisation): vector == scalar on 400 random score vectors");
}

/* The attention weights' shifts to one exponent against wfs_rshr(). */
static void test_wshift(void)
{
	enum { M = 300 };
	static int64_t p[M], ref[M];
	static uint8_t rec[M * 6];
	int it, same = 1, done_any = 0;
	uint32_t n, t, stride;

	for (it = 0; it < 400; it++) {
		int32_t evmax = (int32_t)rnd(-30000, 30000);

		n = (uint32_t)rnd(1, M);
		stride = (uint32_t)rnd(1, 3) * 2;
		for (t = 0; t < n; t++) {
			/* shifts 0..70 mostly, sometimes up to 60000 */
			int32_t sh = rnd(0, 7) ? (int32_t)rnd(0, 70) :
				     (int32_t)rnd(0, 60000);
			int16_t ve = (int16_t)WFS_MAX(evmax - sh, -30000);

			memcpy(rec + (size_t)t * stride, &ve, 2);
			p[t] = rnd(0, 3) ? rnd(0, 1ll << 30) :
			       rnd(0, 1) ? 0 : (1ll << 62) - 1;
			ref[t] = wfs_rshr(p[t], (uint32_t)(evmax - ve));
		}
		t = wfs_simd_attn_wshift(p, rec, stride, n, evmax);
		done_any |= t > 0;
		same &= t == (n & ~3u) && !memcmp(p, ref, 8ull * t);
	}
	wt_ok(same && done_any, "attention weight shifts: vector == wfs_rshr() on 400 random vectors (shifts 0..60000)");
}

/* A score for the scaling test: 0, +-1, near 2^50 >> k, or random. */
static int64_t score(void)
{
	int64_t v;

	switch (rnd(0, 5)) {
	case 0:
		return 0;
	case 1:
		return rnd(0, 1) ? 1 : -1;
	case 2:
		v = ((int64_t)1 << 50 >> rnd(0, 60)) + rnd(-1, 1);
		break;
	default:
		v = (int64_t)(wt_rng_u64(&rng) >> rnd(1, 63));
		break;
	}
	return rnd(0, 1) ? -v : v;
}

/* wfs_attention()'s scalar score scaling of positions @t..@npos-1 */
static void scale_ref(int64_t *x, const uint8_t *rec, uint64_t stride,
		      uint32_t t, uint32_t npos, int32_t e0, int64_t lim,
		      int64_t *m, int32_t *ev)
{
	int16_t ke, ve;

	for (; t < npos; t++) {
		memcpy(&ke, rec + t * stride, 2);
		memcpy(&ve, rec + t * stride + 2, 2);
		x[t] = wfs_scale_pow2(x[t], e0 + ke, lim);
		*m = t ? (x[t] > *m ? x[t] : *m) : x[t];
		*ev = ve > *ev ? ve : *ev;
	}
}

static void test_attn_scale(void)
{
	enum { N = 80 };
	static int64_t x0[N], x1[N];
	static uint8_t rec[N * 24];
	int it, same = 1, n = 0;

	for (it = 0; it < 2000; it++) {
		uint32_t npos = (uint32_t)rnd(1, N), t;
		uint64_t stride = 4 + 2 * (uint64_t)rnd(0, 10);
		int32_t e0 = (int32_t)rnd(-90, 90), ev0 = -30000, ev1 = -30000;
		int64_t lim = it % 4 ? (int64_t)1 << 50 : rnd(1, (int64_t)1 << 61);
		int64_t m0 = 0, m1 = 0;

		for (t = 0; t < npos; t++) {
			/* key and value exponents: small, or the KV limits */
			int16_t ke = (int16_t)(rnd(0, 9) ? rnd(-80, 80) :
					       rnd(0, 1) ? 30000 : -30000);
			int16_t ve = (int16_t)rnd(-30000, 30000);

			memcpy(rec + t * stride, &ke, 2);
			memcpy(rec + t * stride + 2, &ve, 2);
			x0[t] = score();
		}
		memcpy(x1, x0, sizeof(x0));
		scale_ref(x0, rec, stride, 0, npos, e0, lim, &m0, &ev0);
		t = wfs_simd_attn_scale(x1, rec, rec + 2, stride, npos, e0,
					lim, &m1, &ev1);
		same &= t == (npos & ~3u);
		scale_ref(x1, rec, stride, t, npos, e0, lim, &m1, &ev1);
		same &= !memcmp(x0, x1, 8ull * npos) && m0 == m1 && ev0 == ev1;
		if (!same && !n++)
			wt_diag("score scaling differs: npos %u e0 %d lim %lld",
				npos, e0, (long long)lim);
	}
	wt_ok(same, "attention score scaling: vector == wfs_scale_pow2() on 2000 random vectors (shifts -30090..30090, saturation, zeros), with max score and value exponent");
}

/* Normalisation @kind (to s16, s32, 30-bit s64 in place) of @in into @out. */
static int32_t norm_run(int kind, const int64_t *in, uint32_t len, void *out)
{
	if (kind == 0)
		return wfs_vec_to_s16(in, len, 7, out);
	if (kind == 1)
		return wfs_vec_to_s32(in, len, -3, out);
	memcpy(out, in, 8ull * len);
	return wfs_vec_norm30(out, len, 11);
}

/* Normalisation of s64 vectors to s16, s32 and 30-bit s64. */
static void test_vec_norm(void)
{
	enum { N = 300 };
	static const size_t osz[3] = { 2, 4, 8 };
	static int64_t in[N], o0[N], o1[N];
	int it, kind, same = 1, n = 0;

	for (it = 0; it < 2000; it++) {
		uint32_t len = (uint32_t)rnd(1, N), i;
		int mode = (int)rnd(0, 5), bits = (int)rnd(0, 63);
		int32_t e0, e1;

		for (i = 0; i < len; i++) {
			int64_t x = (int64_t)(wt_rng_u64(&rng) >> (63 - bits));

			in[i] = mode == 0 ? 0 : mode == 1 ? INT64_MIN :
				mode == 2 ? (i & 1 ? INT64_MAX : INT64_MIN) :
				rnd(0, 1) ? -x : x;
		}
		if (mode == 3)	/* one extreme among small values */
			in[rnd(0, len - 1)] = rnd(0, 1) ? INT64_MIN : INT64_MAX;
		for (kind = 0; kind < 3; kind++) {
			wfs_os_simd_enable(0);
			e0 = norm_run(kind, in, len, o0);
			wfs_os_simd_enable(1);
			e1 = norm_run(kind, in, len, o1);
			same &= e0 == e1 && !memcmp(o0, o1, osz[kind] * len);
		}
		if (!same && !n++)
			wt_diag("normalisation differs: len %u mode %d bits %d",
				len, mode, bits);
	}
	wt_ok(same, "vector normalisation (to s16, s32, 30-bit s64): vector == scalar on 2000 random vectors (zeros, +-2^63 extremes, every magnitude)");
}

int main(void)
{
	wt_rng_seed(&rng, 0x51d51d);
	wfs_os_simd_enable(1);
	if (!(wfs_os_simd_caps() & WFS_OS_SIMD_AVX2)) {
		wt_diag("no AVX2 on this host: only the scalar path exists");
		wt_ok(1, "nothing to compare");
		return wt_done();
	}
	test_matvec();
	test_attn();
	test_softmax();
	test_wshift();
	test_attn_scale();
	test_vec_norm();
	test_shared_model();
	test_random_models();
	return wt_done();
}
