// SPDX-License-Identifier: MIT
/*
 * test_math.c - every firmware-sim numeric kernel against a float (long
 * double) reference on randomised inputs (fixed seeds), with the error
 * bounds the kernels document:
 *
 *   isqrt       exact floor
 *   requant     exact round-half-up of x * mult * 2^(shift-31)
 *   exp(-d)     |err| <= 2^-28            (Q30 units: 4)
 *   softmax     |err| <= 2^-24 per prob   (sum within 2^-23 of 1)
 *   sigmoid     |err| <= 2^-27; SiLU |err| <= 2^-26 max(1,|x|) + ulp/2
 *   sin/cos     |err| <= 2^-28
 *   RoPE        |err| <= 2^-26 * max|v| after rotation
 *   rmsnorm     |err| <= 2^-13 * max|y|   (15-bit output)
 *   residual    x += d bit for bit as documented: d to 30 bits, both
 *               aligned to the larger exponent, each rounded half up,
 *               added, renormalised (random and tie-making inputs)
 *   matvec      exact vs an int64 reference; its real value within 1e-12
 *               of the de-quantised float product (exponent bookkeeping);
 *               quantisation error vs fp32 below 2 % (int8) / 25 % (int4)
 *               of sum |w x| (worst row, gaussian weights with outliers)
 *               (tail groups: hidden 172, odd tails for int4)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wfs_exp.h"
#include "wfs_math.h"
#include "wfs_pack.h"
#include "wt_util.h"

#define N_RAND 20000

static void test_isqrt(void)
{
	struct wt_rng r;
	uint64_t edge[] = { 0, 1, 2, 3, 4, 15, 16, 17, UINT64_MAX,
			    UINT64_MAX - 1, 0xFFFFFFFE00000001ULL,
			    0xFFFFFFFE00000000ULL, 1ULL << 62, (1ULL << 62) - 1 };
	int bad = 0, i;

	wt_rng_seed(&r, 1);
	for (i = 0; i < N_RAND + (int)(sizeof(edge) / 8); i++) {
		uint64_t x = i < (int)(sizeof(edge) / 8) ? edge[i] :
			     wt_rng_u64(&r) >> (wt_rng_u64(&r) % 64);
		unsigned __int128 s = wfs_isqrt64(x);

		if (!(s * s <= x && (s + 1) * (s + 1) > x))
			bad++;
	}
	wt_ok(!bad, "isqrt64: exact floor on %d random + edge inputs", N_RAND);
}

static void test_requant(void)
{
	struct wt_rng r;
	int bad = 0, i;

	wt_rng_seed(&r, 2);
	for (i = 0; i < N_RAND; i++) {
		int32_t x = (int32_t)wt_rng_u64(&r) >> (wt_rng_u64(&r) % 31);
		int32_t m = (int32_t)wt_rng_range(&r, 1 << 30, 0x7fffffff);
		int32_t sh = (int32_t)wt_rng_range(&r, -30, 30);
		long double v = ldexpl((long double)x * m, sh - 31);
		long double e = floorl(v + 0.5L);
		int32_t got = wfs_requant(x, m, sh);

		if (e > 2147483647.0L)
			e = 2147483647.0L;
		if (e < -2147483648.0L)
			e = -2147483648.0L;
		if ((long double)got != e)
			bad++;
	}
	wt_ok(!bad, "requant: exact rounding, %d random (x, mult, shift)", N_RAND);

	/* multiplier from a ratio */
	{
		int32_t m, s;

		wfs_mult_from_u64(3, -2, &m, &s);	/* 0.75 */
		wt_ok(wfs_requant(1000, m, s) == 750, "requant: 1000 * 0.75 = 750 via wfs_mult_from_u64");
	}
}

static void test_exp(void)
{
	struct wt_rng r;
	double mx = 0;
	int i;

	wt_rng_seed(&r, 3);
	for (i = 0; i < N_RAND; i++) {
		uint64_t d = i < 100 ? (uint64_t)i * 100000 :
			     (uint64_t)wt_rng_range(&r, 0, 25LL << 24);
		double ref = exp(-(double)d / 16777216.0) * 1073741824.0;
		double err = fabs(wfs_exp_neg_q30(d) - ref);

		mx = fmax(mx, err);
	}
	wt_diag("exp_neg_q30: max |err| %.2f Q30 units (%.2e)", mx, mx / 1073741824.0);
	wt_ok(mx <= 4.0, "exp(-d): |err| <= 2^-28 over %d random d in [0, 25]", N_RAND);
	wt_ok(wfs_exp_neg_q30(0) == 1u << 30, "exp(0) = 1 exactly");
}

static void test_softmax(void)
{
	struct wt_rng r;
	int64_t *x = malloc(1024 * sizeof(*x));
	double *ref = malloc(1024 * sizeof(*ref));
	double mx = 0, sumerr = 0;
	int t, i;

	wt_rng_seed(&r, 4);
	for (t = 0; t < 300; t++) {
		int n = (int)wt_rng_range(&r, 1, 1024);
		double spread = wt_rng_range(&r, 1, 30), m = -1e300, s = 0, ps = 0;

		for (i = 0; i < n; i++) {
			x[i] = (int64_t)(wt_rng_gauss(&r) * spread * 16777216.0);
			m = fmax(m, (double)x[i]);
		}
		for (i = 0; i < n; i++)
			s += (ref[i] = exp((x[i] - m) / 16777216.0));
		wfs_softmax_q30(x, n);
		for (i = 0; i < n; i++) {
			mx = fmax(mx, fabs(x[i] / 1073741824.0 - ref[i] / s));
			ps += x[i] / 1073741824.0;
		}
		sumerr = fmax(sumerr, fabs(ps - 1));
	}
	wt_diag("softmax: max |err| %.2e, max |sum - 1| %.2e", mx, sumerr);
	wt_ok(mx <= ldexp(1, -24) && sumerr <= ldexp(1, -23),
	      "softmax: 300 random vectors (n 1..1024), |err| <= 2^-24");
	free(x);
	free(ref);
}

static void test_sigmoid_silu(void)
{
	struct wt_rng r;
	double ms = 0, mu = 0;
	int i;

	wt_rng_seed(&r, 5);
	for (i = 0; i < N_RAND; i++) {
		double xv = wt_rng_gauss(&r) * 8;
		int64_t xq = (int64_t)llround(xv * 16777216.0);
		double xr = xq / 16777216.0;
		double ref = 1 / (1 + exp(-xr));
		int32_t e = (int32_t)wt_rng_range(&r, -40, -10);
		int32_t xm = (int32_t)wt_rng_range(&r, -(1 << 30), 1 << 30);
		double xs = ldexp(xm, e), su;

		ms = fmax(ms, fabs(wfs_sigmoid_q30(xq) / 1073741824.0 - ref));
		su = ldexp((double)wfs_silu_mant(xm, e), e);
		/* allowed: 2^-26 max(1,|x|) plus half an output ulp (2^(e-1)) */
		mu = fmax(mu, fmax(0, fabs(su - xs / (1 + exp(-xs))) - ldexp(1, e - 1)) /
				fmax(1, fabs(xs)));
	}
	wt_diag("sigmoid max |err| %.2e, SiLU max rel err %.2e", ms, mu);
	wt_ok(ms <= ldexp(1, -27), "sigmoid: |err| <= 2^-27 over %d random x", N_RAND);
	wt_ok(mu <= ldexp(1, -26), "SiLU: |err| <= 2^-26 max(1,|x|) + half ulp over %d random x", N_RAND);
}

static void test_sincos(void)
{
	struct wt_rng r;
	double mx = 0;
	int i;

	wt_rng_seed(&r, 6);
	for (i = 0; i < N_RAND; i++) {
		uint64_t ph = i < 16 ? (uint64_t)i << 60 : wt_rng_u64(&r);
		long double a = (long double)ph / 18446744073709551616.0L *
				2 * 3.14159265358979323846L;
		int32_t s, c;

		wfs_sincos_q30(ph, &s, &c);
		mx = fmax(mx, fabs(s / 1073741824.0 - (double)sinl(a)));
		mx = fmax(mx, fabs(c / 1073741824.0 - (double)cosl(a)));
	}
	wt_diag("sin/cos max |err| %.2e", mx);
	wt_ok(mx <= ldexp(1, -28), "sin/cos: |err| <= 2^-28 over %d random phases (incl. octant edges)", N_RAND);
}

static void test_rope(void)
{
	struct wt_rng r;
	int64_t v[64];
	int32_t cs[16];
	uint64_t fr[8];
	double ref[64], mx = 0;
	int t, i, h;
	unsigned int hs = 16;

	wt_rng_seed(&r, 7);
	for (i = 0; i < (int)hs / 2; i++)
		fr[i] = wfs_pack_rope_freq(10000.0, i, hs);
	for (t = 0; t < 2000; t++) {
		uint32_t pos = (uint32_t)wt_rng_range(&r, 0, 1 << 20);
		double vm = 0, em = 0;

		for (i = 0; i < 64; i++)
			v[i] = wt_rng_range(&r, -(1 << 30), 1 << 30);
		for (h = 0; h < 4; h++)
			for (i = 0; i < (int)hs; i += 2) {
				long double f = powl(10000.0L, -(long double)i / hs);
				long double a = fmodl(pos * f, 2 * 3.14159265358979323846L);
				double v0 = v[h * hs + i], v1 = v[h * hs + i + 1];

				ref[h * hs + i] = v0 * cosl(a) - v1 * sinl(a);
				ref[h * hs + i + 1] = v0 * sinl(a) + v1 * cosl(a);
			}
		wfs_rope_cs(fr, hs / 2, pos, cs);
		wfs_rope_apply(v, 4, hs, cs);
		for (i = 0; i < 64; i++) {
			vm = fmax(vm, fabs(ref[i]));
			em = fmax(em, fabs(v[i] - ref[i]));
		}
		mx = fmax(mx, em / vm);
	}
	wt_diag("RoPE max err / max|v| %.2e (positions up to 2^20)", mx);
	wt_ok(mx <= ldexp(1, -26), "RoPE: |err| <= 2^-26 max|v|, 2000 random vectors and positions");
}

static void test_rmsnorm(void)
{
	struct wt_rng r;
	int32_t x[300];
	int16_t g[300], y[300];
	double mx = 0;
	int t, i;

	wt_rng_seed(&r, 8);
	for (t = 0; t < 2000; t++) {
		int n = (int)wt_rng_range(&r, 1, 300);
		int32_t ex = (int32_t)wt_rng_range(&r, -40, 10);
		int32_t eg = (int32_t)wt_rng_range(&r, -20, -10);
		int bits = (int)wt_rng_range(&r, 1, 30);
		double ss = 0, ref[300], ym = 0, em = 0;
		int32_t ey;

		for (i = 0; i < n; i++) {
			x[i] = (int32_t)wt_rng_range(&r, -(1LL << bits), 1LL << bits);
			g[i] = (int16_t)wt_rng_range(&r, -32767, 32767);
			ss += ldexp(x[i], ex) * ldexp(x[i], ex);
		}
		ss = 1 / sqrt(ss / n + 1e-5);
		for (i = 0; i < n; i++) {
			ref[i] = ldexp(x[i], ex) * ss * ldexp(g[i], eg);
			ym = fmax(ym, fabs(ref[i]));
		}
		ey = wfs_rmsnorm(x, ex, n, g, eg, 10995116, y);
		for (i = 0; i < n; i++)
			em = fmax(em, fabs(ldexp(y[i], ey) - ref[i]));
		if (ym > 0)
			mx = fmax(mx, em / ym);
	}
	wt_diag("rmsnorm max err / max|y| %.2e", mx);
	wt_ok(mx <= ldexp(1, -13), "rmsnorm: |err| <= 2^-13 max|y| over 2000 random vectors (n 1..300, eps active on small ones)");
}

static void test_swiglu_residual(void)
{
	struct wt_rng r;
	int64_t a[200], b[200];
	int16_t out[200];
	int32_t x[200];
	double ra[200], rb[200], rx[200], mx = 0, mr = 0;
	int t, i, n = 172;

	wt_rng_seed(&r, 9);
	for (t = 0; t < 500; t++) {
		int32_t ea = (int32_t)wt_rng_range(&r, -60, -30), eo;
		int32_t eb = (int32_t)wt_rng_range(&r, -60, -30);
		int32_t ex = (int32_t)wt_rng_range(&r, -40, -20);
		double om = 0, em = 0;

		for (i = 0; i < n; i++) {
			a[i] = wt_rng_range(&r, -(1LL << 40), 1LL << 40);
			b[i] = wt_rng_range(&r, -(1LL << 40), 1LL << 40);
			ra[i] = ldexp((double)a[i], ea);
			rb[i] = ldexp((double)b[i], eb);
			x[i] = (int32_t)wt_rng_range(&r, -(1 << 30), 1 << 30);
			rx[i] = ldexp(x[i], ex);
		}
		eo = wfs_swiglu(a, ea, b, eb, n, out);
		for (i = 0; i < n; i++) {
			double ref = ra[i] / (1 + exp(-ra[i])) * rb[i];

			om = fmax(om, fabs(ref));
			em = fmax(em, fabs(ldexp(out[i], eo) - ref));
		}
		mx = fmax(mx, em / om);
		/* residual add: x += d */
		em = om = 0;
		for (i = 0; i < n; i++) {
			b[i] = wt_rng_range(&r, -(1LL << 50), 1LL << 50);
			rx[i] += ldexp((double)b[i], eb);
		}
		ex = wfs_residual_add(x, ex, b, eb, n);
		for (i = 0; i < n; i++) {
			om = fmax(om, fabs(rx[i]));
			em = fmax(em, fabs(ldexp(x[i], ex) - rx[i]));
		}
		mr = fmax(mr, em / om);
	}
	wt_diag("swiglu max err / max|out| %.2e, residual add %.2e", mx, mr);
	wt_ok(mx <= ldexp(1, -13), "swiglu: |err| <= 2^-13 max|out| (n = 172)");
	wt_ok(mr <= ldexp(1, -28), "residual add: |err| <= 2^-28 max|x|");
}

/* floor(@x / 2^@n + 1/2): wfs_rshr()'s rounding, in 128 bits. */
static int64_t ref_round_shift(__int128 x, int n)
{
	__int128 d, q;

	if (n <= 0)
		return (int64_t)(x * ((__int128)1 << -n));
	if (n > 120)
		return 0;
	d = (__int128)1 << n;
	x += d / 2;
	q = x / d;
	if (x % d != 0 && x < 0)
		q--;	/* C division truncates; floor wanted */
	return (int64_t)q;
}

static int ref_bitlen_max(const int64_t *v, int n)
{
	uint64_t m = 0;
	int i, b = 0;

	for (i = 0; i < n; i++) {
		uint64_t a = v[i] < 0 ? -(uint64_t)v[i] : (uint64_t)v[i];

		m = a > m ? a : m;
	}
	while (m >> b)
		b++;
	return b;
}

/* @v (exponent @e) to 30 bits, rounded: the new exponent. */
static int32_t ref_norm30(int64_t *v, int n, int32_t e)
{
	int sh = ref_bitlen_max(v, n) - 30, i;

	for (i = 0; i < n; i++) {
		int64_t r = ref_round_shift(v[i], sh);

		v[i] = r > (1LL << 30) ? 1LL << 30 : r < -(1LL << 30) ? -(1LL << 30) : r;
	}
	return e + sh;
}

/* The residual add as wfs_residual_add() documents it, from plain integers. */
static int32_t ref_residual_add(const int32_t *x, int32_t ex, const int64_t *d0, int32_t ed,
				int n, int32_t *out)
{
	int64_t d[200], s[200];
	int32_t e;
	int i;

	memcpy(d, d0, (size_t)n * sizeof(*d));
	ed = ref_norm30(d, n, ed);
	e = ex > ed ? ex : ed;
	for (i = 0; i < n; i++)
		s[i] = ref_round_shift(x[i], e - ex) + ref_round_shift(d[i], e - ed);
	e = ref_norm30(s, n, e);
	for (i = 0; i < n; i++)
		out[i] = (int32_t)s[i];
	return e;
}

/*
 * wfs_residual_add() bit for bit against ref_residual_add(): random
 * exponents 0..40 apart either way, and operands whose shifted-out bits are
 * exactly one half (odd x, exponents one apart: the ties that truncation
 * would round down).
 */
static void test_residual_exact(void)
{
	struct wt_rng r;
	int64_t d[200], dk[200];
	int32_t x[200], want[200], ex, ed, eg, ew;
	int t, i, n, bad = 0, ties = 0;

	wt_rng_seed(&r, 21);
	for (t = 0; t < 3000; t++) {
		int tie = t % 3 == 0;

		n = 1 + (int)wt_rng_range(&r, 0, 199);
		ex = (int32_t)wt_rng_range(&r, -60, -10);
		ed = tie ? ex - 20 : ex + (int32_t)wt_rng_range(&r, -70, 10);
		for (i = 0; i < n; i++) {
			if (tie) {
				/* d of 51 bits at ex - 20 -> 30 at ex + 1: odd x halves to a tie */
				x[i] = (int32_t)(wt_rng_range(&r, -(1 << 29), 1 << 29) | 1);
				d[i] = wt_rng_range(&r, -(1LL << 50), 1LL << 50);
			} else {
				x[i] = (int32_t)wt_rng_range(&r, -(1 << 30), 1 << 30);
				d[i] = wt_rng_range(&r, -(1LL << 60), 1LL << 60) >>
				       wt_rng_range(&r, 0, 40);
			}
		}
		if (tie)
			d[0] = (1LL << 50) + 1;	/* 51 bits: d lands at ex + 1 */
		memcpy(dk, d, (size_t)n * sizeof(*d));
		ew = ref_residual_add(x, ex, d, ed, n, want);
		eg = wfs_residual_add(x, ex, dk, ed, (u32)n);
		ties += tie;
		if (eg != ew || memcmp(x, want, (size_t)n * sizeof(*x)))
			bad++;
	}
	wt_ok(bad == 0, "residual add: bit for bit the documented rounding (round half up at "
	      "alignment and renormalisation), 3000 vectors, %d of them all ties (%d differ)",
	      ties, bad);
}

/* Build a wfs_qmat from the packer's quantisation (layout per wfs_math.h). */
static void build_qmat(struct wfs_qmat *m, const int8_t *q, uint16_t *sc,
		       uint8_t *data, unsigned int rows, unsigned int cols,
		       unsigned int bits, unsigned int gs, int e)
{
	unsigned int r, g0, i;

	m->rows = rows;
	m->cols = cols;
	m->group_size = gs;
	m->n_groups = (cols + gs - 1) / gs;
	m->qtype = bits == 8 ? WFS_QT_INT8 : WFS_QT_INT4;
	m->row_bytes = (uint32_t)wfs_qmat_row_bytes(m->qtype, cols, gs);
	m->scale_exp = e;
	m->scales = sc;
	m->data = data;
	for (r = 0; r < rows; r++) {
		uint8_t *d = data + (size_t)r * m->row_bytes;
		const int8_t *qr = q + (size_t)r * cols;

		if (bits == 8) {
			memcpy(d, qr, cols);
			continue;
		}
		for (g0 = 0; g0 < cols; g0 += gs) {
			unsigned int n = cols - g0 < gs ? cols - g0 : gs;
			unsigned int h = (n + 1) / 2;

			for (i = 0; i < h; i++)
				*d++ = (uint8_t)((qr[g0 + i] + 8) |
					((i + h < n ? qr[g0 + i + h] + 8 : 8) << 4));
		}
	}
}

static void test_matvec(void)
{
	static const unsigned int shapes[][3] = {
		/* rows, cols, group size */
		{ 64, 172, 32 }, { 64, 172, 64 }, { 172, 64, 32 },
		{ 37, 67, 32 }, { 5, 67, 16 }, { 9, 3, 2 }, { 33, 256, 256 },
		{ 7, 300, 256 }, { 16, 1, 2 }, { 512, 64, 64 },
	};
	struct wt_rng r;
	unsigned int s, bits;

	wt_rng_seed(&r, 10);
	for (bits = 8; bits >= 4; bits -= 4) {
		for (s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
			unsigned int rows = shapes[s][0], cols = shapes[s][1];
			unsigned int gs = shapes[s][2], ng = (cols + gs - 1) / gs;
			float *w = malloc((size_t)rows * cols * 4);
			int8_t *q = malloc((size_t)rows * cols);
			uint16_t *sc = malloc((size_t)rows * ng * 2);
			uint8_t *data = malloc((size_t)rows * cols);
			int16_t *x = malloc(cols * 2);
			int64_t *y = malloc(rows * 8);
			struct wfs_qmat m;
			int e, exact = 1, ex = -12;
			double rel = 0, book = 0;
			unsigned int i, j;

			for (i = 0; i < rows * cols; i++)
				w[i] = (float)(wt_rng_gauss(&r) * 0.05 *
					       (1 + (i % 7 == 0) * 4));
			for (j = 0; j < cols; j++)
				x[j] = (int16_t)(j == 0 ? -32768 :
						 wt_rng_range(&r, -32767, 32767));
			wfs_pack_quant_matrix(w, rows, cols, bits, gs, q, sc, &e);
			build_qmat(&m, q, sc, data, rows, cols, bits, gs, e);
			wfs_matvec(&m, x, y);
			for (i = 0; i < rows; i++) {
				int64_t ref = 0;
				double fr = 0, fa = 0, dq = 0, da = 0;

				for (j = 0; j < cols; j++) {
					ref += (int64_t)q[i * cols + j] *
					       sc[i * ng + j / gs] * x[j];
					fr += (double)w[i * cols + j] * ldexp(x[j], ex);
					fa += fabs(w[i * cols + j] * ldexp(x[j], ex));
					dq += ldexp((double)q[i * cols + j] *
						    sc[i * ng + j / gs], e) *
					      ldexp(x[j], ex);
					da += fabs(ldexp((double)q[i * cols + j] *
							 sc[i * ng + j / gs], e) *
						   ldexp(x[j], ex));
				}
				exact &= ref == y[i];
				if (da > 0)
					book = fmax(book, fabs(ldexp((double)y[i], ex + e) - dq) / da);
				rel = fmax(rel, fabs(ldexp((double)y[i], ex + e) - fr) /
						fa);
			}
			wt_ok(exact && book <= 1e-12 &&
			      rel <= (bits == 8 ? 0.02 : 0.25),
			      "matvec int%u %ux%u group %u (tail %u): exact vs int64, vs de-quantised %.1e, vs fp32 %.2e of |W||x|",
			      bits, rows, cols, gs, cols % gs, book, rel);
			free(w);
			free(q);
			free(sc);
			free(data);
			free(x);
			free(y);
		}
	}
}

int main(void)
{
	test_isqrt();
	test_requant();
	test_exp();
	test_softmax();
	test_sigmoid_silu();
	test_sincos();
	test_rope();
	test_rmsnorm();
	test_swiglu_residual();
	test_residual_exact();
	test_matvec();
	return wt_done();
}
