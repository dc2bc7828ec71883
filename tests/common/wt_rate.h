/* SPDX-License-Identifier: MIT */
/*
 * wt_rate.h - the modelled decode rate of B sequences in flight, as `wafer
 * bench` measures it, beside wafer_plan()'s for the same shape and devices
 * (the seed's shape in process, tests/unit/userlib_sol.c, and over hosts,
 * tests/vm/progs/sol_chain.c).
 */
#ifndef WT_RATE_H
#define WT_RATE_H

#include <stddef.h>

#include "wafer.h"

#define WT_RATE_MAX_SEQ	64

/*
 * Decodes @b (1..WT_RATE_MAX_SEQ) sequences of model @m on @dev at once,
 * each kept in flight (a sequence's next token goes in as soon as its last
 * completes); the modelled tokens/s over the @steps steps after @warm
 * steps each, in *@rate.  0, or -1 (wafer_last_error() may say why).
 */
int wt_decode_rate(struct wafer_dev *dev, struct wafer_model *m, unsigned int b,
		   unsigned int warm, unsigned int steps, double *rate);

/*
 * wafer_plan() of @blob's shape on @devices devices of the "wafer"
 * profile, @b sequences at the context wt_decode_rate() averages; 0, or -1.
 */
int wt_plan_rate(const void *blob, size_t len, unsigned int devices, unsigned int b,
		 unsigned int warm, unsigned int steps, struct wafer_plan *p);

#endif
