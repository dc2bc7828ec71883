/* SPDX-License-Identifier: MIT */
/*
 * wfs_math.h - integer-only numeric kernels of the firmware-sim forward pass.
 *
 * Number formats used throughout (no floating point anywhere):
 *
 * - Block floating point vectors: an array of integer mantissas m[i] and one
 *   exponent e for the whole vector, real value m[i] * 2^e.  "s16 vectors"
 *   are normalised so that max|m| is in [2^14, 2^15) ("15 bits"); "s32
 *   vectors" so that max|m| is in [2^29, 2^30) ("30 bits").  A zero vector
 *   keeps its exponent.
 * - Qn fixed point: an integer q standing for q / 2^n (Q24 scores and
 *   logit differences, Q30 probabilities, sigmoid, sin and cos).
 * - Quantised matrices: struct wfs_qmat (wfs_qfmt.h).
 *
 * Rounding: "rshr" is round-half-up (floor(x / 2^n + 1/2)), computed without
 * shifting negative values, so kernel and userspace builds give equal bits.
 */
#ifndef WFS_MATH_H
#define WFS_MATH_H

#include "wfs_compat.h"
#include "wfs_qfmt.h"

#define WFS_Q30_ONE	(1 << 30)

/**
 * wfs_abs64() - magnitude of a signed 64-bit value, as unsigned
 * @x: value
 *
 * Return: |@x|, correct for S64_MIN too.
 */
static inline u64 wfs_abs64(s64 x)
{
	return x < 0 ? 0 - (u64)x : (u64)x;
}

/**
 * wfs_rshr() - rounding arithmetic shift right, overflow free
 * @x: value
 * @n: shift count; 0 returns @x, >= 63 returns the rounded limit (0 or -1
 *	never: values below 2^62 in magnitude round to 0)
 *
 * Return: floor(@x / 2^@n + 1/2).
 */
static inline s64 wfs_rshr(s64 x, u32 n)
{
	if (n == 0)
		return x;
	if (n > 63)
		return 0;
	return wfs_asr64(x, n) + (wfs_asr64(x, n - 1) & 1);
}

/**
 * wfs_shl_sat() - multiply by 2^@n with saturation to +-@lim
 * @x: value
 * @n: shift count
 * @lim: positive saturation bound
 *
 * Return: @x * 2^@n clamped to [-@lim, @lim].
 */
static inline s64 wfs_shl_sat(s64 x, u32 n, s64 lim)
{
	if (x == 0)
		return 0;
	if (n >= 62 || wfs_abs64(x) > ((u64)lim >> n))
		return x < 0 ? -lim : lim;
	return x * ((s64)1 << n);
}

/**
 * wfs_scale_pow2() - multiply by 2^@sh (either sign) with rounding and
 *	saturation
 * @x: value
 * @sh: power of two; negative shifts right with rshr rounding
 * @lim: positive saturation bound
 *
 * Return: round(@x * 2^@sh) clamped to [-@lim, @lim].
 */
static inline s64 wfs_scale_pow2(s64 x, s32 sh, s64 lim)
{
	s64 r;

	if (sh >= 0)
		return wfs_shl_sat(x, (u32)sh, lim);
	r = wfs_rshr(x, sh < -64 ? 64 : (u32)-sh);
	return r > lim ? lim : r < -lim ? -lim : r;
}

s32 wfs_requant(s32 x, s32 mult, s32 shift);
void wfs_softmax_q30(s64 *x, u32 n);
void wfs_softmax_q30_max(s64 *x, u32 n, s64 mx);
u32 wfs_sigmoid_q30(s64 x_q24);
s64 wfs_silu_mant(s32 x, s32 e);
void wfs_sincos_q30(u64 phase, s32 *sinv, s32 *cosv);
void wfs_rope_cs(const u64 *freq, u32 half, u32 pos, s32 *cs);
void wfs_rope_apply(s64 *v, u32 n_heads, u32 head_size, const s32 *cs);

s32 wfs_vec_to_s16(const s64 *in, u32 n, s32 e, s16 *out);
s32 wfs_vec_to_s32(const s64 *in, u32 n, s32 e, s32 *out);
s32 wfs_vec_norm30(s64 *v, u32 n, s32 e);
s32 wfs_residual_add(s32 *x, s32 ex, s64 *d, s32 ed, u32 n);
s32 wfs_rmsnorm(const s32 *x, s32 ex, u32 n, const s16 *g, s32 eg,
		u32 eps_q40, s16 *y);
s32 wfs_swiglu(s64 *a, s32 ea, s64 *b, s32 eb, u32 n, s16 *out);

void wfs_matvec(const struct wfs_qmat *w, const s16 *x, s64 *y);
void wfs_matvec_rows(const struct wfs_qmat *w, const s16 *x, s64 *y,
		     u32 row_begin, u32 row_end);
void wfs_attn_dots(const s16 *q, const u8 *k, u64 stride, u32 npos, u32 hs,
		   u32 esz, s64 *dots);
void wfs_attn_accum(const s64 *p, const u8 *v, u64 stride, u32 npos, u32 hs,
		    u32 esz, s64 *o);

#endif /* WFS_MATH_H */
