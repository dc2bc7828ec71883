// SPDX-License-Identifier: MIT
/*
 * wfs_math.c - integer-only numeric kernels (see wfs_math.h for formats).
 *
 * Every function here is pure: no state, no allocation, no floating point.
 * The matvec runs the vector kernels of wfs_simd.h when the host has them;
 * the loops here are the reference they are tested against, bit for bit.
 * Error bounds quoted below are the ones tests/unit/test_math.c checks.
 */
#include "wfs_exp.h"
#include "wfs_math.h"
#include "wfs_simd.h"

/* pi/4 in Q30. */
#define WFS_PI4_Q30	843314857ULL

/* wfs_swiglu() takes the exponentials of this many values at a time. */
#define WFS_SWIGLU_CHUNK	32

/**
 * wfs_requant() - fixed-point requantisation, gemmlowp style
 * @x: input
 * @mult: Q31 multiplier, normally in [2^30, 2^31)
 * @shift: power-of-two exponent
 *
 * Computes x * M with the real multiplier M = @mult * 2^(@shift - 31), i.e.
 * gemmlowp's SaturatingRoundingDoublingHighMul followed by a rounding shift,
 * done exactly on the 64-bit product: one rounding (half up) instead of two.
 *
 * Return: round(@x * @mult * 2^(@shift - 31)), saturated to s32.
 */
s32 wfs_requant(s32 x, s32 mult, s32 shift)
{
	s64 p = (s64)x * mult;
	s32 n = 31 - shift;

	if (n <= 0)
		return wfs_sat32(wfs_shl_sat(p, (u32)-n, 1LL << 40));
	return wfs_sat32(wfs_rshr(p, (u32)n));
}

/**
 * wfs_softmax_q30() - softmax in place
 * @x: n scores in Q24 on input (|x| < 2^62), probabilities in Q30 on output
 * @n: number of scores, >= 1
 *
 * p_i = exp(x_i - max) / sum_j exp(x_j - max), each exp from
 * wfs_exp_neg_q30(); the division is one 32-bit reciprocal of S and a
 * multiply per element.  n < 2^22.
 */
void wfs_softmax_q30(s64 *x, u32 n)
{
	s64 mx = x[0];
	u32 i;

	for (i = 1; i < n; i++)
		if (x[i] > mx)
			mx = x[i];
	wfs_softmax_q30_max(x, n, mx);
}

/**
 * wfs_softmax_q30_max() - wfs_softmax_q30() when the caller knows the max
 * @x: n scores in Q24 (|x| < 2^62), probabilities in Q30 on output
 * @n: number of scores, 1 <= n < 2^22
 * @mx: the largest of the n scores
 */
void wfs_softmax_q30_max(s64 *x, u32 n, s64 mx)
{
	u64 s = 0, rcp, rem, q;
	u32 i, sh, left, c;

	if (!wfs_simd_softmax_exp(x, n, mx, &s)) {
		for (i = 0; i < n; i++) {
			x[i] = wfs_exp_neg_q30((u64)mx - (u64)x[i]);
			s += (u64)x[i];
		}
	}
	/*
	 * rcp = 2^(62 + sh) / s with 32 significant bits (sh = bits of s
	 * beyond 31), by long division in steps that keep the shifted
	 * remainder below 2^63; s < 2^52 (n < 2^22).
	 */
	sh = wfs_bitlen64(s) - 31;
	rcp = wfs_div64_u64(1ULL << 62, s);
	rem = (1ULL << 62) - rcp * s;
	for (left = sh; left; left -= c) {
		c = WFS_MIN(left, 63 - wfs_bitlen64(s));
		q = wfs_div64_u64(rem << c, s);
		rem = (rem << c) - q * s;
		rcp = (rcp << c) + q;
	}
	if (wfs_simd_softmax_scale(x, n, rcp, 32 + sh))
		return;
	for (i = 0; i < n; i++)
		x[i] = wfs_rshr((s64)((u64)x[i] * rcp), 32 + sh);
}

/* sigmoid(x) in Q30 from e = exp(-|x|) in Q30 and the sign of x */
static u32 wfs_sigmoid_e(u64 e, int neg)
{
	u64 den = (1ULL << 30) + e;

	if (!neg)
		return (u32)wfs_div_u64((1ULL << 60) + (den >> 1), (u32)den);
	return (u32)wfs_div_u64((e << 30) + (den >> 1), (u32)den);
}

/**
 * wfs_sigmoid_q30() - logistic function
 * @x_q24: x in Q24
 *
 * 1 / (1 + exp(-x)) for x >= 0 and exp(x) / (1 + exp(x)) otherwise, so the
 * exp argument is never positive.  Absolute error below 2^-27.
 *
 * Return: sigmoid(x) in Q30.
 */
u32 wfs_sigmoid_q30(s64 x_q24)
{
	return wfs_sigmoid_e(wfs_exp_neg_q30(wfs_abs64(x_q24)), x_q24 < 0);
}

/**
 * wfs_silu_mant() - SiLU of one block floating point value
 * @x: mantissa
 * @e: exponent (value x * 2^e)
 *
 * Return: round(x * sigmoid(x * 2^e)): SiLU in the same 2^e units.
 */
s64 wfs_silu_mant(s32 x, s32 e)
{
	s64 xq = wfs_scale_pow2(x, e + 24, 1LL << 40);

	return wfs_rshr((s64)x * wfs_sigmoid_q30(xq), 30);
}

/* sin and cos of x in [0, pi/4], Q30, Taylor series by Horner's rule. */
static void wfs_sincos_oct(u64 x, u64 *s, u64 *c)
{
	static const u32 ks[] = { 110, 72, 42, 20, 6 };
	static const u32 kc[] = { 132, 90, 56, 30, 12, 2 };
	u64 x2 = (x * x) >> 30;
	u64 t = WFS_Q30_ONE;
	u32 i;

	for (i = 0; i < WFS_ARRAY_SIZE(ks); i++)
		t = WFS_Q30_ONE - (u32)((x2 * t) >> 30) / ks[i];
	*s = (x * t + (1ULL << 29)) >> 30;
	t = WFS_Q30_ONE;
	for (i = 0; i < WFS_ARRAY_SIZE(kc); i++)
		t = WFS_Q30_ONE - (u32)((x2 * t) >> 30) / kc[i];
	*c = t;
}

/**
 * wfs_sincos_q30() - sine and cosine of an angle given in turns
 * @phase: angle as a fraction of a full turn, Q64 (2^64 = 2*pi)
 * @sinv: sin in Q30
 * @cosv: cos in Q30
 *
 * Octant reduction by the top three bits, then a Taylor polynomial on
 * [0, pi/4].  Absolute error below 2^-28.
 */
void wfs_sincos_q30(u64 phase, s32 *sinv, s32 *cosv)
{
	u32 oct = (u32)(phase >> 61);
	u64 f = phase & ((1ULL << 61) - 1);
	u64 s, c;
	s64 sv, cv;

	if (oct & 1)
		f = (1ULL << 61) - f;
	/* f / 2^61 of an octant: x = (f >> 31) / 2^30 * pi/4 in Q30 */
	wfs_sincos_oct(((f >> 31) * WFS_PI4_Q30 + (1ULL << 29)) >> 30, &s, &c);
	switch (oct) {
	case 0:
		sv = s; cv = c;
		break;
	case 1:
		sv = c; cv = s;
		break;
	case 2:
		sv = c; cv = -(s64)s;
		break;
	case 3:
		sv = s; cv = -(s64)c;
		break;
	case 4:
		sv = -(s64)s; cv = -(s64)c;
		break;
	case 5:
		sv = -(s64)c; cv = -(s64)s;
		break;
	case 6:
		sv = -(s64)c; cv = s;
		break;
	default:
		sv = -(s64)s; cv = c;
		break;
	}
	*sinv = (s32)sv;
	*cosv = (s32)cv;
}

/**
 * wfs_rope_cs() - RoPE rotation table for one position
 * @freq: @half per-pair frequencies, Q64 turns per position
 * @half: head_size / 2
 * @pos: position
 * @cs: 2 * @half outputs: cos, sin of pair i at cs[2i], cs[2i + 1], Q30
 *
 * The angle of pair i is pos * freq[i] turns, computed exactly modulo one
 * turn by u64 wrap-around, so accuracy does not degrade with position.
 */
void wfs_rope_cs(const u64 *freq, u32 half, u32 pos, s32 *cs)
{
	u32 i;

	for (i = 0; i < half; i++)
		wfs_sincos_q30(freq[i] * pos, &cs[2 * i + 1], &cs[2 * i]);
}

/**
 * wfs_rope_apply() - rotate adjacent pairs of every head
 * @v: n_heads * head_size values, |v| < 2^31
 * @n_heads: heads
 * @head_size: values per head (even)
 * @cs: table from wfs_rope_cs()
 *
 * (v0, v1) <- (v0 cos - v1 sin, v0 sin + v1 cos), rounded from Q30.
 */
void wfs_rope_apply(s64 *v, u32 n_heads, u32 head_size, const s32 *cs)
{
	u32 h, i;

	for (h = 0; h < n_heads; h++, v += head_size) {
		for (i = 0; i < head_size; i += 2) {
			s64 v0 = v[i], v1 = v[i + 1];
			s64 c = cs[i], s = cs[i + 1];

			v[i] = wfs_rshr(v0 * c - v1 * s, 30);
			v[i + 1] = wfs_rshr(v0 * s + v1 * c, 30);
		}
	}
}

/*
 * The bit length of the largest magnitude in @v: the highest bit set in
 * any magnitude, i.e. that of their OR (no compare and branch per value).
 */
static u32 wfs_bitlen_maxabs(const s64 *v, u32 n)
{
	u64 m = 0;
	u32 i;

	if (!wfs_simd_vec_orabs(v, n, &m))
		for (i = 0; i < n; i++)
			m |= wfs_abs64(v[i]);
	return wfs_bitlen64(m);
}

/* wfs_scale_pow2(x, sh, lim) for sh >= 0, with ln = lim >> sh (sh < 62) */
static inline s64 wfs_shl_sat_n(s64 x, u32 sh, u64 ln, s64 lim)
{
	if (x == 0)
		return 0;
	if (sh >= 62 || wfs_abs64(x) > ln)
		return x < 0 ? -lim : lim;
	return x * ((s64)1 << sh);
}

/* wfs_scale_pow2(x, -k, lim) for k >= 1 */
static inline s64 wfs_rshr_clamp(s64 x, u32 k, s64 lim)
{
	s64 r = wfs_rshr(x, k);

	return r > lim ? lim : r < -lim ? -lim : r;
}

/* out[i] = r as s64, s32 or s16 (osz bytes) */
static inline void wfs_store_n(void *out, u32 i, u32 osz, s64 r)
{
	if (osz == 8)
		((s64 *)out)[i] = r;
	else if (osz == 4)
		((s32 *)out)[i] = (s32)r;
	else
		((s16 *)out)[i] = (s16)r;
}

/*
 * out[i] = wfs_scale_pow2(in[i], -sh, lim) for i < n, as s64, s32 or s16
 * (osz bytes; out may be in when 8): the shift's direction and count are
 * decided once, not per value, and right shifts take the vector kernel.
 */
static void wfs_scale_vec(const s64 *in, u32 n, s32 sh, s64 lim, void *out,
			  u32 osz)
{
	u32 i, k;
	u64 ln;

	if (sh <= 0) {
		k = (u32)-sh;
		ln = k >= 62 ? 0 : (u64)lim >> k;
		for (i = 0; i < n; i++)
			wfs_store_n(out, i, osz,
				    wfs_shl_sat_n(in[i], k, ln, lim));
		return;
	}
	k = sh > 64 ? 64 : (u32)sh;
	for (i = wfs_simd_vec_rshr(in, n, k, lim, out, osz); i < n; i++)
		wfs_store_n(out, i, osz, wfs_rshr_clamp(in[i], k, lim));
}

/**
 * wfs_vec_to_s16() - normalise a vector to a 15-bit s16 vector
 * @in: n values, exponent @e
 * @n: length
 * @e: input exponent
 * @out: n s16 mantissas, max magnitude in [2^14, 2^15)
 *
 * Return: the output exponent.
 */
s32 wfs_vec_to_s16(const s64 *in, u32 n, s32 e, s16 *out)
{
	s32 sh = (s32)wfs_bitlen_maxabs(in, n) - 15;

	wfs_scale_vec(in, n, sh, 32767, out, 2);
	return e + sh;
}

/**
 * wfs_vec_to_s32() - normalise a vector to a 30-bit s32 vector
 * @in: n values, exponent @e
 * @n: length
 * @e: input exponent
 * @out: n s32 mantissas, max magnitude <= 2^30
 *
 * Return: the output exponent.
 */
s32 wfs_vec_to_s32(const s64 *in, u32 n, s32 e, s32 *out)
{
	s32 sh = (s32)wfs_bitlen_maxabs(in, n) - 30;

	wfs_scale_vec(in, n, sh, 1LL << 30, out, 4);
	return e + sh;
}

/**
 * wfs_vec_norm30() - normalise a vector to 30 bits in place
 * @v: n values, exponent @e
 * @n: length
 * @e: input exponent
 *
 * Return: the new exponent; max|v| <= 2^30 afterwards.
 */
s32 wfs_vec_norm30(s64 *v, u32 n, s32 e)
{
	s32 sh = (s32)wfs_bitlen_maxabs(v, n) - 30;

	wfs_scale_vec(v, n, sh, 1LL << 30, v, 8);
	return e + sh;
}

/**
 * wfs_residual_add() - x += d on the s32 residual stream
 * @x: n 30-bit mantissas with exponent @ex; updated
 * @ex: exponent of @x
 * @d: n values with exponent @ed; clobbered
 * @ed: exponent of @d
 * @n: length
 *
 * Both operands are brought to 30 bits, aligned to the larger exponent
 * (the smaller one is rounded), added exactly, and renormalised.
 *
 * Return: the new exponent of @x.
 */
s32 wfs_residual_add(s32 *x, s32 ex, s64 *d, s32 ed, u32 n)
{
	s32 e;
	u32 i, sx, sd;

	ed = wfs_vec_norm30(d, n, ed);
	e = WFS_MAX(ex, ed);
	sx = (u32)(e - ex);
	sd = (u32)(e - ed);
	for (i = 0; i < n; i++)
		d[i] = wfs_rshr(x[i], sx) + wfs_rshr(d[i], sd);
	return wfs_vec_to_s32(d, n, e, x);
}

/*
 * y[i] = wfs_scale_pow2(v_i, -sh, 32767), the direction decided once: v_i
 * is x[i], or without @x y[i] * g[i] * inv.  One loop per case: Kbuild's
 * -O2 does not unswitch loops, and the tests would stay in the loop.
 */
static void wfs_rms_scale(const s32 *x, const s16 *g, s64 inv, u32 n,
			  s32 sh, s16 *y)
{
	u32 i, c = sh > 64 ? 64 : (u32)WFS_MAX(sh, -sh);
	u64 ln = c >= 62 ? 0 : 32767ULL >> c;

	if (x && sh <= 0)
		for (i = 0; i < n; i++)
			y[i] = (s16)wfs_shl_sat_n(x[i], c, ln, 32767);
	else if (x)
		for (i = 0; i < n; i++)
			y[i] = (s16)wfs_rshr_clamp(x[i], c, 32767);
	else if (sh <= 0)
		for (i = 0; i < n; i++)
			y[i] = (s16)wfs_shl_sat_n((s64)y[i] * g[i] * inv, c,
						  ln, 32767);
	else
		for (i = 0; i < n; i++)
			y[i] = (s16)wfs_rshr_clamp((s64)y[i] * g[i] * inv, c,
						   32767);
}

/**
 * wfs_rmsnorm() - RMSNorm with an integer square root
 * @x: n residual mantissas (|x| < 2^31), exponent @ex
 * @ex: exponent of @x
 * @n: length, >= 1
 * @g: n s16 gain mantissas, exponent @eg
 * @eg: exponent of @g
 * @eps_q40: epsilon * 2^40
 * @y: n s16 outputs
 *
 * y = x * g / sqrt(mean(x^2) + eps).  x is first reduced to 15 bits (xs);
 * V = mean(xs^2) + eps (eps brought to the same units) is scaled by an even
 * power of two into [2^60, 2^62) so r = isqrt(V) has 31 significant bits;
 * inv = (2^61 - 1) / r; y = xs * g * inv, normalised to 15 bits.
 *
 * Return: the exponent of @y.
 */
s32 wfs_rmsnorm(const s32 *x, s32 ex, u32 n, const s16 *g, s32 eg,
		u32 eps_q40, s16 *y)
{
	u64 m = 0, ss = 0, pm = 0, v, epsu, r, inv;
	s32 k, a, b, sh, xs, t, mb;
	u32 i, bl;

	/* the largest magnitude's bit length: that of the OR of all */
	for (i = 0; i < n; i++)
		m |= wfs_abs64(x[i]);
	k = (s32)wfs_bitlen64(m) - 15;
	/* xs, kept in y until the last loop */
	wfs_rms_scale(x, NULL, 0, n, k, y);
	for (i = 0; i < n; i++) {
		xs = y[i];
		ss += (u64)((s64)xs * xs);
		v = wfs_abs64((s64)xs * g[i]);
		if (v > pm)
			pm = v;
	}
	/*
	 * Common units for mean(xs^2) and eps: 2^-2a xs^2 units, a chosen so
	 * the larger of the two has 61 or 62 bits.  eps in xs^2 units is
	 * eps_q40 * 2^t.
	 */
	t = -2 * (ex + k) - 40;
	mb = (s32)wfs_bitlen64(ss);
	if (eps_q40 && (s32)wfs_bitlen64(eps_q40) + t > mb)
		mb = (s32)wfs_bitlen64(eps_q40) + t;
	a = 62 - mb >= 0 ? (62 - mb) / 2 : -((mb - 61) / 2);
	if (a >= 0)
		v = wfs_div_u64(ss << (2 * a), n);
	else
		v = -2 * a >= 64 ? 0 : wfs_div_u64(ss >> (-2 * a), n);
	sh = t + 2 * a;
	if (sh >= 0)
		epsu = (u64)eps_q40 << sh;
	else
		epsu = -sh >= 64 ? 0 : (u64)eps_q40 >> -sh;
	v += epsu;
	if (!v || !pm) {
		WFS_MEMSET(y, 0, n * sizeof(*y));
		return 0;
	}
	bl = wfs_bitlen64(v);
	if (bl <= 62) {
		b = (62 - (s32)bl) / 2;
		v <<= 2 * b;
	} else {
		b = -1;
		v >>= 2;
	}
	r = wfs_isqrt64(v);
	inv = wfs_div_u64((1ULL << 61) - 1, (u32)r);
	sh = (s32)wfs_bitlen64(pm * inv) - 15;
	wfs_rms_scale(NULL, g, (s64)inv, n, sh, y);
	return eg + a + b - 61 + sh;
}

/**
 * wfs_swiglu() - SwiGLU gate: out = silu(a) * b
 * @a: n values with exponent @ea; clobbered
 * @ea: exponent of @a
 * @b: n values with exponent @eb; clobbered
 * @eb: exponent of @b
 * @n: length
 * @out: n s16 outputs
 *
 * a and b are normalised to 30 bits; sigmoid(a) in Q30 from the real value
 * of a in Q24; silu(a) = a * sigmoid(a) stays 30-bit; the 60-bit product
 * with b is normalised to 15 bits.
 *
 * Return: the exponent of @out.
 */
s32 wfs_swiglu(s64 *a, s32 ea, s64 *b, s32 eb, u32 n, s16 *out)
{
	s64 e[WFS_SWIGLU_CHUNK];
	u64 sum;
	u32 i, j, m;

	ea = wfs_vec_norm30(a, n, ea);
	eb = wfs_vec_norm30(b, n, eb);
	for (i = 0; i < n; i += m) {
		m = WFS_MIN(n - i, (u32)WFS_SWIGLU_CHUNK);
		/* e = exp(-|x|) of a chunk, as the softmax computes them */
		wfs_scale_vec(a + i, m, -(ea + 24), 1LL << 40, e, 8);
		if (!wfs_simd_vec_negabs(e, m))
			for (j = 0; j < m; j++)
				e[j] = -(s64)wfs_abs64(e[j]);
		if (!wfs_simd_softmax_exp(e, m, 0, &sum))
			for (j = 0; j < m; j++)
				e[j] = wfs_exp_neg_q30((u64)-e[j]);
		/* x and its Q24 value are 0 or of one sign */
		for (j = 0; j < m; j++) {
			s64 x = a[i + j];
			s64 t = wfs_rshr(x * wfs_sigmoid_e((u64)e[j], x < 0),
					 30);

			a[i + j] = t * b[i + j];
		}
	}
	return wfs_vec_to_s16(a, n, ea + eb, out);
}

/*
 * Group dot products: plain loops with a runtime trip count, which the
 * compiler vectorises in userspace (widening multiply-adds into s32 lanes)
 * and which stay tight scalar code in the kernel.  Sums are exact in s32,
 * so the evaluation order does not change the result.
 */
static inline s32 wfs_dot_i8(const s8 *w, const s16 *x, u32 n)
{
	s32 s = 0;
	u32 i;

	for (i = 0; i < n; i++)
		s += (s32)w[i] * x[i];
	return s;
}

/* Dot product of one int4 group in split-halves nibble order. */
static inline s32 wfs_dot_i4(const u8 *b, const s16 *x, u32 n)
{
	u32 h = (n + 1) >> 1, m = n - h, i;
	const s16 *xh = x + h;
	s32 s = 0;

	for (i = 0; i < m; i++)
		s += ((s32)(b[i] & 15) - 8) * x[i] +
		     ((s32)(b[i] >> 4) - 8) * xh[i];
	if (h != m)
		s += ((s32)(b[h - 1] & 15) - 8) * x[h - 1];
	return s;
}

/**
 * wfs_matvec_rows() - y = W x for a range of rows
 * @w: quantised matrix
 * @x: @w->cols s16 inputs (any exponent ex)
 * @y: outputs y[row_begin..row_end); real value y * 2^(ex + w->scale_exp)
 * @row_begin: first row
 * @row_end: one past the last row
 *
 * y[r] = sum_g scale[r][g] * sum_{j in g} q[r][j] * x[j]: the group sums
 * are exact in s32 (|q| <= 127, |x| <= 2^15, n <= 256), the total in s64.
 */
void wfs_matvec_rows(const struct wfs_qmat *w, const s16 *x, s64 *y,
		     u32 row_begin, u32 row_end)
{
	u32 r, g, j, gs = w->group_size, ng = w->n_groups, cols = w->cols;

	if (wfs_simd_matvec_rows(w, x, y, row_begin, row_end))
		return;
	for (r = row_begin; r < row_end; r++) {
		const u8 *row = w->data + (u64)r * w->row_bytes;
		const u16 *sc = w->scales + (u64)r * ng;
		s64 acc = 0;

		if (w->qtype == WFS_QT_INT8) {
			for (g = 0, j = 0; g < ng; g++, j += gs)
				acc += (s64)wfs_dot_i8((const s8 *)row + j,
						       x + j,
						       WFS_MIN(gs, cols - j)) *
				       sc[g];
		} else {
			for (g = 0, j = 0; g < ng; g++, j += gs)
				acc += (s64)wfs_dot_i4(row + j / 2, x + j,
						       WFS_MIN(gs, cols - j)) *
				       sc[g];
		}
		y[r] = acc;
	}
}

/**
 * wfs_matvec() - y = W x for all rows
 * @w: quantised matrix
 * @x: @w->cols s16 inputs
 * @y: @w->rows outputs, see wfs_matvec_rows()
 */
void wfs_matvec(const struct wfs_qmat *w, const s16 *x, s64 *y)
{
	wfs_matvec_rows(w, x, y, 0, w->rows);
}

/**
 * wfs_attn_dots() - attention scores before scaling, for many positions
 * @q: @hs queries, each in [-32767, 32767] (as wfs_vec_to_s16() makes them)
 * @k: keys of position 0 (@hs values of @esz bytes, 2-byte aligned for
 *	s16); position t at @k + t * @stride
 * @stride: bytes between positions
 * @npos: positions
 * @hs: values per head
 * @esz: 1 (s8 keys) or 2 (s16 keys)
 * @dots: @npos outputs, sum_d q[d] * k_t[d], exact
 */
void wfs_attn_dots(const s16 *q, const u8 *k, u64 stride, u32 npos, u32 hs,
		   u32 esz, s64 *dots)
{
	u32 t, i;

	if (wfs_simd_attn_dots(q, k, stride, npos, hs, esz, dots))
		return;
	for (t = 0; t < npos; t++, k += stride) {
		s64 s = 0;

		if (esz == 1)
			for (i = 0; i < hs; i++)
				s += (s32)q[i] * ((const s8 *)k)[i];
		else
			for (i = 0; i < hs; i++)
				s += (s32)q[i] * ((const s16 *)k)[i];
		dots[t] = s;
	}
}

/**
 * wfs_attn_accum() - weighted sum of value vectors
 * @p: @npos weights (Q30 probabilities, already shifted to a common
 *	exponent)
 * @v: values of position 0 (@hs values of @esz bytes); position t at
 *	@v + t * @stride
 * @stride: bytes between positions
 * @npos: positions
 * @hs: values per head
 * @esz: 1 (s8 values) or 2 (s16 values)
 * @o: @hs accumulators: o[d] += sum_t p[t] * v_t[d], exact in s64
 */
void wfs_attn_accum(const s64 *p, const u8 *v, u64 stride, u32 npos, u32 hs,
		    u32 esz, s64 *o)
{
	u32 t, d;

	if (wfs_simd_attn_accum(p, v, stride, npos, hs, esz, o))
		return;
	for (t = 0; t < npos; t++, v += stride) {
		if (!p[t])
			continue;
		if (esz == 1) {
			const s8 *vv = (const s8 *)v;

			for (d = 0; d < hs; d++)
				o[d] += p[t] * vv[d];
		} else {
			const s16 *vv = (const s16 *)v;

			for (d = 0; d < hs; d++)
				o[d] += p[t] * vv[d];
		}
	}
}
