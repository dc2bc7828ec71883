/* SPDX-License-Identifier: MIT */
/*
 * wfs_qfmt.h - the number formats of the blob: weight quantisation types,
 * quantised matrices, and the integer helpers the model layer needs to
 * describe them (its validator, its views, modelled time).
 *
 * - Quantised matrices (struct wfs_qmat): symmetric int8 or int4 weights
 *   with one u16 scale mantissa per group of group_size consecutive weights
 *   of a row, and one exponent per tensor:
 *       W[r][j] = q[r][j] * scale[r][j / group_size] * 2^scale_exp.
 *   The last group of a row is short when cols % group_size != 0.
 */
#ifndef WFS_QFMT_H
#define WFS_QFMT_H

#include "wfs_compat.h"

/* Weight quantisation types (struct wfs_qmat.qtype, blob tensor qtype). */
#define WFS_QT_INT8	1	/* one s8 per weight, range [-127, 127] */
#define WFS_QT_INT4	2	/* two weights per byte, see wfs_qmat */
#define WFS_QT_S16	3	/* s16 vector with a power-of-two exponent */
#define WFS_QT_U64	4	/* u64 table (RoPE frequencies) */

/* Largest scale group: keeps int8 x int16 group sums inside s32. */
#define WFS_MAX_GROUP	256

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

u64 wfs_isqrt64(u64 x);
void wfs_mult_from_u64(u64 m, s32 e, s32 *mult, s32 *shift);
u64 wfs_qmat_row_bytes(u32 qtype, u32 cols, u32 group_size);

#endif /* WFS_QFMT_H */
