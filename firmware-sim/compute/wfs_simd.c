// SPDX-License-Identifier: MIT
/*
 * wfs_simd.c - run-time choice between the vector kernels and the scalar
 * code, and the vector sections (see wfs_simd.h).  No vector code here:
 * this file is compiled with the build's normal flags.
 */
#include "wfs_exp.h"
#include "wfs_os.h"
#include "wfs_simd.h"

/* Items (rows, positions) of @macs_each per vector section, at least 1. */
static u32 wfs_simd_chunk(u64 macs_each)
{
	u64 n = macs_each ? WFS_SIMD_CHUNK_MACS / macs_each : 1;

	return n ? (u32)WFS_MIN(n, (u64)1 << 30) : 1;
}

/**
 * wfs_simd_matvec_rows() - wfs_matvec_rows() with vector kernels
 * @w: quantised matrix (INT8 or INT4)
 * @x: @w->cols inputs
 * @y: outputs y[row_begin..row_end)
 * @row_begin: first row
 * @row_end: one past the last row
 *
 * Return: 1 if done, 0 if the caller must run the scalar code.
 */
int wfs_simd_matvec_rows(const struct wfs_qmat *w, const s16 *x, s64 *y,
			 u32 row_begin, u32 row_end)
{
#ifdef WFS_SIMD_X86
	u32 r, n, step;

	if (!(wfs_os_simd_caps() & WFS_OS_SIMD_AVX2))
		return 0;
	step = wfs_simd_chunk(w->cols);
	for (r = row_begin; r < row_end; r += n) {
		n = WFS_MIN(step, row_end - r);
		wfs_os_simd_begin();
		wfs_simd_x86_matvec_rows(w, x, y, r, r + n);
		wfs_os_simd_end();
	}
	return 1;
#else
	return 0;
#endif
}

/**
 * wfs_simd_attn_dots() - attention scores before scaling
 * @q: @hs s16 query values (the kernels need them in [-32767, 32767]:
 *	otherwise this returns 0)
 * @k: key of position 0 (@hs values of @esz bytes); position t at
 *	@k + t * @stride
 * @stride: bytes between positions
 * @npos: positions
 * @hs: head size
 * @esz: 1 (s8 keys) or 2 (s16 keys)
 * @dots: @npos outputs, sum_d q[d] * k_t[d]
 *
 * Return: 1 if done, 0 if the caller must run the scalar code.
 */
int wfs_simd_attn_dots(const s16 *q, const u8 *k, u64 stride, u32 npos,
		       u32 hs, u32 esz, s64 *dots)
{
#ifdef WFS_SIMD_X86
	u32 t, n, step;

	if (!(wfs_os_simd_caps() & WFS_OS_SIMD_AVX2))
		return 0;
	/* vpmaddwd wraps on (-32768)^2 + (-32768)^2: keep one factor off it */
	for (t = 0; t < hs; t++)
		if (q[t] == -32768)
			return 0;
	step = wfs_simd_chunk(hs);
	for (t = 0; t < npos; t += n) {
		n = WFS_MIN(step, npos - t);
		wfs_os_simd_begin();
		wfs_simd_x86_attn_dots(q, k + t * stride, stride, n, hs, esz,
				       dots + t);
		wfs_os_simd_end();
	}
	return 1;
#else
	return 0;
#endif
}

/**
 * wfs_simd_attn_accum() - o[d] += sum_t p[t] * v_t[d]
 * @p: @npos weights, each in [0, 2^31)
 * @v: values of position 0 (@hs values of @esz bytes); position t at
 *	@v + t * @stride
 * @stride: bytes between positions
 * @npos: positions
 * @hs: head size
 * @esz: 1 (s8 values) or 2 (s16 values)
 * @o: @hs accumulators
 *
 * Return: 1 if done, 0 if the caller must run the scalar code (also when a
 * weight is out of range: the kernels multiply 32-bit lanes).
 */
int wfs_simd_attn_accum(const s64 *p, const u8 *v, u64 stride, u32 npos,
			u32 hs, u32 esz, s64 *o)
{
#ifdef WFS_SIMD_X86
	u32 t, n, step;
	u64 out = 0;

	if (!(wfs_os_simd_caps() & WFS_OS_SIMD_AVX2))
		return 0;
	/* any p[t] outside [0, 2^31) has a bit set at 31..63 */
	step = 8192;
	for (t = 0; t < npos; t += n) {
		n = WFS_MIN(step, npos - t);
		wfs_os_simd_begin();
		out |= wfs_simd_x86_vec_or(p + t, n);
		wfs_os_simd_end();
	}
	if (out >> 31)
		return 0;
	step = wfs_simd_chunk(hs);
	for (t = 0; t < npos; t += n) {
		n = WFS_MIN(step, npos - t);
		wfs_os_simd_begin();
		wfs_simd_x86_attn_accum(p + t, v + t * stride, stride, n, hs,
					esz, o);
		wfs_os_simd_end();
	}
	return 1;
#else
	return 0;
#endif
}

/**
 * wfs_simd_softmax_exp() - the exponentials of wfs_softmax_q30()
 * @x: @n scores in Q24 (|x| < 2^62, each <= @mx); x[i] becomes
 *	wfs_exp_neg_q30(@mx - x[i])
 * @n: number of scores
 * @mx: the largest score
 * @sum: the sum of the results
 *
 * Return: 1 if done, 0 if the caller must run the scalar code.
 */
int wfs_simd_softmax_exp(s64 *x, u32 n, s64 mx, u64 *sum)
{
#ifdef WFS_SIMD_X86
	u32 i, m, step = 1024, n4 = n & ~3u;
	u64 s = 0;

	if (!(wfs_os_simd_caps() & WFS_OS_SIMD_AVX2))
		return 0;
	for (i = 0; i < n4; i += m) {
		m = WFS_MIN(step, n4 - i);
		wfs_os_simd_begin();
		s += wfs_simd_x86_softmax_exp(x + i, m, mx);
		wfs_os_simd_end();
	}
	for (; i < n; i++) {
		x[i] = wfs_exp_neg_q30((u64)mx - (u64)x[i]);
		s += (u64)x[i];
	}
	*sum = s;
	return 1;
#else
	return 0;
#endif
}

/**
 * wfs_simd_softmax_scale() - the normalisation of wfs_softmax_q30()
 * @x: @n exponentials, each in [0, 2^30]; x[i] becomes
 *	wfs_rshr(x[i] * @rcp, @sh)
 * @n: number of values
 * @rcp: reciprocal of their sum (the kernel needs it below 2^32)
 * @sh: shift, 32..62
 *
 * Return: 1 if done, 0 if the caller must run the scalar code.
 */
int wfs_simd_softmax_scale(s64 *x, u32 n, u64 rcp, u32 sh)
{
#ifdef WFS_SIMD_X86
	u32 i, m, step = 4096, n4 = n & ~3u;

	if (!(wfs_os_simd_caps() & WFS_OS_SIMD_AVX2) || rcp >> 32 ||
	    sh < 32 || sh > 62)
		return 0;
	for (i = 0; i < n4; i += m) {
		m = WFS_MIN(step, n4 - i);
		wfs_os_simd_begin();
		wfs_simd_x86_softmax_scale(x + i, m, rcp, sh);
		wfs_os_simd_end();
	}
	for (; i < n; i++)
		x[i] = wfs_rshr((s64)((u64)x[i] * rcp), sh);
	return 1;
#else
	return 0;
#endif
}

/**
 * wfs_simd_attn_wshift() - the attention weights brought to one exponent
 * @p: @npos weights, each in [0, 2^62); p[t] becomes
 *	wfs_rshr(p[t], @evmax - ve_t)
 * @ve: s16 value exponent of position 0; position t at @ve + t * @stride
 * @stride: bytes between positions
 * @npos: positions
 * @evmax: exponent, >= every ve_t
 *
 * Return: how many leading positions were done (a multiple of 4, 0 without
 * the kernels); the caller does the rest.
 */
u32 wfs_simd_attn_wshift(s64 *p, const u8 *ve, u64 stride, u32 npos,
			 s32 evmax)
{
#ifdef WFS_SIMD_X86
	u32 t, m, step = 4096, n4 = npos & ~3u;

	if (!(wfs_os_simd_caps() & WFS_OS_SIMD_AVX2))
		return 0;
	for (t = 0; t < n4; t += m) {
		m = WFS_MIN(step, n4 - t);
		wfs_os_simd_begin();
		wfs_simd_x86_attn_wshift(p + t, ve + t * stride, stride, m,
					 evmax);
		wfs_os_simd_end();
	}
	return n4;
#else
	return 0;
#endif
}

/**
 * wfs_simd_attn_scale() - the attention scores brought to Q24, and the
 *	largest score and value exponent
 * @sc: @npos raw dot products (|x| < 2^63); sc[t] becomes
 *	wfs_scale_pow2(sc[t], @e0 + ke_t, @lim)
 * @ke: s16 key exponent of position 0; position t at @ke + t * @stride
 * @ve: s16 value exponent of position 0, likewise
 * @stride: bytes between positions
 * @npos: positions
 * @e0: exponent added to each ke_t
 * @lim: saturation bound, < 2^62
 * @scmax: set to the largest result of the positions done
 * @evmax: raised to the largest ve_t of the positions done
 *
 * Return: how many leading positions were done (a multiple of 4, 0
 * without the kernels: then @scmax and @evmax are untouched); the caller
 * does the rest.
 */
u32 wfs_simd_attn_scale(s64 *sc, const u8 *ke, const u8 *ve, u64 stride,
			u32 npos, s32 e0, s64 lim, s64 *scmax, s32 *evmax)
{
#ifdef WFS_SIMD_X86
	u32 t, m, i, step = 4096, n4 = npos & ~3u;
	s64 mx[4], ex[4];

	if (!(wfs_os_simd_caps() & WFS_OS_SIMD_AVX2) || !n4)
		return 0;
	for (t = 0; t < n4; t += m) {
		m = WFS_MIN(step, n4 - t);
		wfs_os_simd_begin();
		wfs_simd_x86_attn_scale(sc + t, ke + t * stride,
					ve + t * stride, stride, m, e0, lim,
					mx, ex);
		wfs_os_simd_end();
		for (i = 0; i < 4; i++) {
			*scmax = t || i ? WFS_MAX(*scmax, mx[i]) : mx[i];
			*evmax = WFS_MAX(*evmax, (s32)ex[i]);
		}
	}
	return n4;
#else
	return 0;
#endif
}

/**
 * wfs_simd_vec_orabs() - the OR of the magnitudes of @n values
 * @v: values
 * @n: number of values
 * @m: set to the OR of wfs_abs64(v[i]) (its bit length is that of the
 *	largest magnitude)
 *
 * Return: 1 if done, 0 if the caller must run the scalar code.
 */
int wfs_simd_vec_orabs(const s64 *v, u32 n, u64 *m)
{
#ifdef WFS_SIMD_X86
	u32 i, c, step = 8192, n4 = n & ~3u;
	u64 r = 0;

	if (!(wfs_os_simd_caps() & WFS_OS_SIMD_AVX2))
		return 0;
	for (i = 0; i < n4; i += c) {
		c = WFS_MIN(step, n4 - i);
		wfs_os_simd_begin();
		r |= wfs_simd_x86_vec_orabs(v + i, c);
		wfs_os_simd_end();
	}
	for (; i < n; i++)
		r |= wfs_abs64(v[i]);
	*m = r;
	return 1;
#else
	return 0;
#endif
}

/**
 * wfs_simd_vec_rshr() - out[i] = wfs_rshr(in[i], @k) clamped to +-@lim
 * @in: @n values
 * @n: number of values
 * @k: shift, 1..63 (otherwise this does nothing)
 * @lim: clamp, < 2^31 when @osz is 4 or 2 (and < 2^15 when 2)
 * @out: @n outputs of @osz bytes; may be @in when @osz is 8
 * @osz: 8 (s64), 4 (s32) or 2 (s16)
 *
 * Return: how many leading values were done (a multiple of 4, 0 without
 * the kernels); the caller does the rest.
 */
u32 wfs_simd_vec_rshr(const s64 *in, u32 n, u32 k, s64 lim, void *out,
		      u32 osz)
{
#ifdef WFS_SIMD_X86
	u32 i, c, step = 4096, n4 = n & ~3u;

	if (!(wfs_os_simd_caps() & WFS_OS_SIMD_AVX2) || k < 1 || k > 63)
		return 0;
	for (i = 0; i < n4; i += c) {
		c = WFS_MIN(step, n4 - i);
		wfs_os_simd_begin();
		wfs_simd_x86_vec_rshr(in + i, c, k, lim,
				      (u8 *)out + (u64)i * osz, osz);
		wfs_os_simd_end();
	}
	return n4;
#else
	return 0;
#endif
}

/**
 * wfs_simd_vec_negabs() - v[i] = -|v[i]|
 * @v: @n values, |v| < 2^63
 * @n: number of values
 *
 * In the vector kernels so that the vectors written before (by
 * wfs_simd_vec_rshr()) and read after (by the softmax exponentials) are
 * not split into scalar stores, which a vector load cannot forward from.
 *
 * Return: 1 if done, 0 if the caller must run the scalar code.
 */
int wfs_simd_vec_negabs(s64 *v, u32 n)
{
#ifdef WFS_SIMD_X86
	u32 i, c, step = 8192;

	if (!(wfs_os_simd_caps() & WFS_OS_SIMD_AVX2))
		return 0;
	for (i = 0; i < n; i += c) {
		c = WFS_MIN(step, n - i);
		wfs_os_simd_begin();
		wfs_simd_x86_vec_negabs(v + i, c);
		wfs_os_simd_end();
	}
	return 1;
#else
	return 0;
#endif
}
