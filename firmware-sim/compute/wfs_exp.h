/* SPDX-License-Identifier: MIT */
/*
 * wfs_exp.h - exp(-d) in fixed point, the one transcendental that the
 * scalar kernels (wfs_math.c: softmax, sigmoid, SwiGLU) and the vector
 * kernels (wfs_simd.c) share; inline, so neither calls the other for it.
 */
#ifndef WFS_EXP_H
#define WFS_EXP_H

#include "wfs_compat.h"
#include "wfs_math.h"

/* ln(2) in Q32. */
#define WFS_LN2_Q32	2977044472ULL
#define WFS_INV_LN2_Q32	6196328019ULL	/* 2^32 / ln(2) */

/* 1/k! in Q30, k = 0..10, for the exp(-r) polynomial. */
static const s64 wfs_inv_fact_q30[11] = {
	1073741824, 1073741824, 536870912, 178956971, 44739243,
	8947849, 1491308, 213044, 26631, 2959, 296,
};

/**
 * wfs_exp_neg_q30() - exp(-d) for d >= 0
 * @d_q24: d in Q24
 *
 * I-BERT style: d = z * ln2 + r with r in [0, ln2), exp(-d) = exp(-r) >> z,
 * exp(-r) from its degree-10 Taylor polynomial evaluated by Horner's rule in
 * Q30.  Absolute error below 2^-28 (tested against libm).
 *
 * Return: round(exp(-d) * 2^30), 0 once that is below 1/2.
 */
static inline u32 wfs_exp_neg_q30(u64 d_q24)
{
	u64 x32, z, r;
	s64 p, sr;
	int k;

	if (d_q24 >= (22ULL << 24))
		return 0;
	x32 = d_q24 << 8;
	/* z = floor(d / ln2) by a reciprocal multiply, then corrected */
	z = (d_q24 * WFS_INV_LN2_Q32) >> 56;
	sr = (s64)(x32 - z * WFS_LN2_Q32);
	while (sr < 0) {
		z--;
		sr += WFS_LN2_Q32;
	}
	while (sr >= (s64)WFS_LN2_Q32) {
		z++;
		sr -= WFS_LN2_Q32;
	}
	r = ((u64)sr + 2) >> 2;
	p = wfs_inv_fact_q30[10];
	for (k = 9; k >= 0; k--)
		p = wfs_inv_fact_q30[k] - (s64)(((u64)p * r) >> 30);
	return (u32)wfs_rshr(p, (u32)z);
}

#endif /* WFS_EXP_H */
