// SPDX-License-Identifier: MIT
/*
 * wfs_qfmt.c - integer helpers of the blob's number formats (wfs_qfmt.h).
 */
#include "wfs_qfmt.h"

/**
 * wfs_isqrt64() - integer square root
 * @x: value
 *
 * Digit-by-digit (restoring) method, exact.
 *
 * Return: floor(sqrt(@x)).
 */
u64 wfs_isqrt64(u64 x)
{
	u64 r = 0, b = 1ULL << 62;

	while (b > x)
		b >>= 2;
	while (b) {
		if (x >= r + b) {
			x -= r + b;
			r = (r >> 1) + b;
		} else {
			r >>= 1;
		}
		b >>= 2;
	}
	return r;
}

/**
 * wfs_mult_from_u64() - express m * 2^e as a requantisation multiplier
 * @m: positive mantissa
 * @e: exponent
 * @mult: Q31 multiplier in [2^30, 2^31) (truncated)
 * @shift: exponent such that m * 2^e = @mult * 2^(@shift - 31)
 */
void wfs_mult_from_u64(u64 m, s32 e, s32 *mult, s32 *shift)
{
	u32 bl = wfs_bitlen64(m);

	if (!m) {
		*mult = 0;
		*shift = 0;
		return;
	}
	if (bl > 31)
		*mult = (s32)(m >> (bl - 31));
	else
		*mult = (s32)(m << (31 - bl));
	*shift = e + (s32)bl;
}

/**
 * wfs_qmat_row_bytes() - bytes of one row of a quantised matrix
 * @qtype: WFS_QT_INT8 or WFS_QT_INT4
 * @cols: weights per row
 * @group_size: weights per group (even for INT4)
 *
 * Return: row size in bytes; 0 for an unknown type.
 */
u64 wfs_qmat_row_bytes(u32 qtype, u32 cols, u32 group_size)
{
	if (qtype == WFS_QT_INT8)
		return cols;
	if (qtype == WFS_QT_INT4 && group_size)
		return (u64)(cols - cols % group_size) / 2 +
		       ((cols % group_size) + 1) / 2;
	return 0;
}
