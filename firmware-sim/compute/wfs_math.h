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
 * - Quantised matrices (struct wfs_qmat): symmetric int8 or int4 weights
 *   with one u16 scale mantissa per group of group_size consecutive weights
 *   of a row, and one exponent per tensor:
 *       W[r][j] = q[r][j] * scale[r][j / group_size] * 2^scale_exp.
 *   The last group of a row is short when cols % group_size != 0.
 *
 * Rounding: "rshr" is round-half-up (floor(x / 2^n + 1/2)), computed without
 * shifting negative values, so kernel and userspace builds give equal bits.
 */
#ifndef WFS_MATH_H
#define WFS_MATH_H

#include "wfs_compat.h"

/* Weight quantisation types (struct wfs_qmat.qtype, blob tensor qtype). */
#define WFS_QT_INT8	1	/* one s8 per weight, range [-127, 127] */
#define WFS_QT_INT4	2	/* two weights per byte, see wfs_qmat */
#define WFS_QT_S16	3	/* s16 vector with a power-of-two exponent */
#define WFS_QT_U64	4	/* u64 table (RoPE frequencies) */

/* Largest scale group: keeps int8 x int16 group sums inside s32. */
#define WFS_MAX_GROUP	256

#define WFS_Q30_ONE	(1 << 30)

/**
 * struct wfs_qmat - a group-quantised matrix W[rows][cols] (y = W x)
 * @data: rows * @row_bytes bytes of weights.  Row r starts at
 *	r * @row_bytes; inside a row, groups follow each other.  INT8: one s8
 *	per weight.  INT4: a group of n weights takes h = ceil(n / 2) bytes;
 *	weight j < h of the group is the low nibble of byte j, weight j >= h
 *	the high nibble of byte j - h; a nibble holds q + 8 (q in [-7, 7]).
 *	This "split halves" order keeps both inner-loop streams contiguous.
 * @scales: u16 scale mantissas, [rows][n_groups], row-major.
 * @rows: output dimension.
 * @cols: input dimension.
 * @group_size: weights per scale group, 1..WFS_MAX_GROUP (even for INT4).
 * @n_groups: ceil(@cols / @group_size).
 * @row_bytes: bytes of one row of @data.
 * @qtype: WFS_QT_INT8 or WFS_QT_INT4.
 * @scale_exp: tensor exponent: W = q * scale * 2^@scale_exp.
 */
struct wfs_qmat {
	const u8 *data;
	const u16 *scales;
	u32 rows;
	u32 cols;
	u32 group_size;
	u32 n_groups;
	u32 row_bytes;
	u32 qtype;
	s32 scale_exp;
};

/**
 * wfs_bitlen64() - number of significant bits
 * @x: value
 *
 * Return: 0 for 0, else floor(log2(@x)) + 1.
 */
static inline u32 wfs_bitlen64(u64 x)
{
	return x ? 64 - (u32)__builtin_clzll(x) : 0;
}

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

u64 wfs_isqrt64(u64 x);
s32 wfs_requant(s32 x, s32 mult, s32 shift);
void wfs_mult_from_u64(u64 m, s32 e, s32 *mult, s32 *shift);
u32 wfs_exp_neg_q30(u64 d_q24);
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
u64 wfs_qmat_row_bytes(u32 qtype, u32 cols, u32 group_size);
void wfs_attn_dots(const s16 *q, const u8 *k, u64 stride, u32 npos, u32 hs,
		   u32 esz, s64 *dots);
void wfs_attn_accum(const s64 *p, const u8 *v, u64 stride, u32 npos, u32 hs,
		    u32 esz, s64 *o);

#endif /* WFS_MATH_H */
