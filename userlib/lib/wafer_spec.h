/* SPDX-License-Identifier: MIT */
/*
 * libwafer internals: speculative sampling's acceptance rule, apart from
 * the device jobs so that tests can check the distribution it draws from.
 * Not installed.
 */
#ifndef WAFER_SPEC_H
#define WAFER_SPEC_H

#include <stdint.h>

#include "wafer.h"

/**
 * struct wafer_spec_dist - a distribution wafer_sample() draws from
 * @n: tokens with mass
 * @tok: those tokens
 * @p: their probabilities
 */
struct wafer_spec_dist {
	unsigned int n;
	uint32_t tok[WAFER_MAX_TOPK];
	double p[WAFER_MAX_TOPK];
};

/*
 * The rejection rule of Leviathan et al. 2023 for draft token @x, drawn
 * from @q (NULL: an n-gram draft, all its mass on @x), against the target's
 * distribution @p: 1 (accepted) with probability min(1, p(x) / q(x)); else
 * 0 and *@next drawn from norm(max(0, p - q)), so that the token kept
 * follows p.  The coins come from @ts.
 */
int wafer_spec_accept(struct wafer_sampler *ts, const struct wafer_spec_dist *p, int x,
		      const struct wafer_spec_dist *q, int *next);

#endif /* WAFER_SPEC_H */
