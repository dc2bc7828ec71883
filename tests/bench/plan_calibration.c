// SPDX-License-Identifier: MIT
/*
 * The calibration table of docs/TIMING.md: each published figure of
 * ../shared/hardware/PUBLISHED.md (libwafer's wafer_plan_figure()) beside
 * wafer_plan()'s projection of the same configuration, its band, the
 * error, and whether the figure set a parameter, widens the band (its
 * residual) or is a prediction.  Prints the table as Markdown (make bench),
 * then the median absolute error and how many predictions fall in their
 * band.
 *
 * Usage: plan_calibration
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wafer.h"

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(void)
{
	const struct wafer_plan_figure *f;
	double err[32];
	unsigned int i, n = 0, inside = 0;

	printf("| published | figure | projection | band | error | role |\n");
	printf("|---|---|---|---|---|---|\n");
	for (i = 0; (f = wafer_plan_figure(i)); i++) {
		struct wafer_plan_opts o = { .profile = f->profile, .devices = f->devices,
					     .weight_bits = f->weight_bits, .batch = 1,
					     .context = 1024, .deployment = f->speculative };
		struct wafer_plan p;
		double got, lo, hi, e;

		if (wafer_plan(wafer_plan_figure_shape(f), &o, &p)) {
			fprintf(stderr, "plan_calibration: %s: %s\n", f->preset, wafer_last_error());
			return 1;
		}
		got = f->count ? p.devices : (double)(f->speculative ? p.tok_s_spec :
						      p.tok_s_single);
		lo = (double)(f->speculative ? p.tok_s_spec_low : p.tok_s_single_low);
		hi = (double)(f->speculative ? p.tok_s_spec_high : p.tok_s_single_high);
		e = (got - f->published) * 100 / f->published;
		if (f->count) {
			printf("| %s | %.0f chips | %.0f chips (%u per layer) | | %+.0f %% | %s |\n",
			       f->what, f->published, got, p.tensor_chips, e, f->role);
			continue;
		}
		printf("| %s | %.0f tok/s | %.0f on %u %s | %.0f..%.0f%s | %+.0f %% | %s%s",
		       f->what, f->published, got, p.devices, p.tensor_chips ? "chips" : "device(s)",
		       lo, hi, f->published >= lo && f->published <= hi ? "" : " (outside)", e,
		       f->role, f->band ? "; a residual of the band" : "");
		/* A figure above what every draft token accepted gives: the verify pass forbids it. */
		if (f->speculative && f->published > p.tok_s_spec_ceiling)
			printf("; impossible at the nominal terms: at most %llu tok/s with every "
			       "draft token accepted, the %u-position verify pass taking %.0f us "
			       "against %.0f for one token", (unsigned long long)p.tok_s_spec_ceiling,
			       p.draft_tokens + 1, p.verify_ns / 1e3, p.token_ns / 1e3);
		printf(" |\n");
		if (strncmp(f->role, "prediction", 10))
			continue;
		err[n++] = fabs(e);
		inside += f->published >= lo && f->published <= hi;
	}
	qsort(err, n, sizeof(err[0]), cmp);
	printf("\nPredictions of tok/s: median absolute error %.0f %%, %u of %u inside the band.\n",
	       n ? (n % 2 ? err[n / 2] : (err[n / 2 - 1] + err[n / 2]) / 2) : 0.0, inside, n);
	return 0;
}
