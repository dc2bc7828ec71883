// SPDX-License-Identifier: MIT
/*
 * What the samplers draw, not only that a seed repeats:
 *  - wafer_sample() over a result's top-k pairs follows softmax(logit / T)
 *    restricted to the top-p prefix (the smallest whose mass exceeds top_p,
 *    llama2.c's rule), renormalised: a chi-square test of 20000 draws
 *    against that distribution, at two temperatures and with top-p cutting
 *    most of the mass; no draw outside the prefix; a prefix whose mass
 *    equals top_p exactly is not enough;
 *  - wafer_sample_dist() gives the same distribution;
 *  - speculative sampling's rule (wafer_spec_accept()) with a draft spread
 *    over other tokens than the target's: the tokens it keeps follow the
 *    target's distribution p; a rejected draft token is replaced from
 *    norm(max(0, p - q)) (never a token where q >= p); drafts are accepted
 *    at the rate sum min(p, q); an n-gram draft (all its mass on one token)
 *    keeps p too.
 * Seeds are fixed, so each statistic is a fixed number; the bounds are the
 * 0.999 quantiles (chi-square) and 4.5 standard deviations (counts).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wafer.h"
#include "lib/wafer_internal.h"	/* wafer_sample_dist() */
#include "lib/wafer_spec.h"	/* wafer_spec_accept() */
#include "wt_util.h"

#define K	8
#define DRAWS	20000

/* The chi-square distribution's 0.999 quantile for 1..15 degrees of freedom. */
static const double chi2_999[] = { 0, 10.828, 13.816, 16.266, 18.467, 20.515, 22.458, 24.322,
				   26.124, 27.877, 29.588, 31.264, 32.909, 34.528, 36.123,
				   37.697 };

/*
 * Pearson's statistic of counts @obs (@n categories, @total draws) against
 * probabilities @p; categories with p == 0 must have no draw (*@stray counts
 * those that do).  *@df gets the degrees of freedom.
 */
static double chi2(const unsigned long *obs, const double *p, unsigned int n,
		   unsigned long total, unsigned long *stray, unsigned int *df)
{
	double s = 0;
	unsigned int i, cats = 0;

	*stray = 0;
	for (i = 0; i < n; i++) {
		double e = p[i] * (double)total;

		if (p[i] <= 0) {
			*stray += obs[i];
			continue;
		}
		cats++;
		s += ((double)obs[i] - e) * ((double)obs[i] - e) / e;
	}
	*df = cats - 1;
	return s;
}

static int chi2_ok(double s, unsigned int df)
{
	return df >= 1 && df < sizeof(chi2_999) / sizeof(chi2_999[0]) && s <= chi2_999[df];
}

/* A result with @k pairs: token 100 + i, logit @l[i] (best first). */
static struct wafer_token_result *result(const double *l, unsigned int k)
{
	struct wafer_token_result *r = calloc(1, WAFER_RESULT_SIZE(WAFER_MAX_TOPK));
	unsigned int i;

	r->top_k = k;
	r->argmax = 100;
	for (i = 0; i < k; i++) {
		r->topk[i].token = 100 + i;
		r->topk[i].logit = (int32_t)lround(l[i] * (1 << WAFER_LOGIT_FRAC_BITS));
	}
	r->argmax_logit = r->topk[0].logit;
	return r;
}

/*
 * The distribution llama2.c's sampler draws from, in double: softmax of
 * logit / @t, cut to the smallest prefix whose mass exceeds @top_p, that
 * prefix renormalised.  Returns the prefix's length.
 */
static unsigned int intended(const struct wafer_token_result *r, double t, double top_p,
			     double *p)
{
	double sum = 0, cum = 0;
	unsigned int i, k = r->top_k, last = k - 1;

	for (i = 0; i < k; i++) {
		p[i] = exp(((double)r->topk[i].logit - r->topk[0].logit) /
			   (1 << WAFER_LOGIT_FRAC_BITS) / t);
		sum += p[i];
	}
	for (i = 0; i < k; i++)
		p[i] /= sum;
	if (top_p > 0 && top_p < 1)
		for (i = 0; i < k; i++) {
			cum += p[i];
			if (cum > top_p) {
				last = i;
				break;
			}
		}
	else
		cum = 1;
	for (i = 0; i < k; i++)
		p[i] = i <= last ? p[i] / cum : 0;
	return last + 1;
}

static void test_sample(const char *what, const double *l, unsigned int k, float t, float top_p,
			uint64_t seed, unsigned int want_kept)
{
	struct wafer_token_result *r = result(l, k);
	struct wafer_sampler s;
	unsigned long obs[K + 1] = { 0 }, stray;
	double p[K], dp[K];
	uint32_t dt[K];
	unsigned int kept = intended(r, t, top_p, p), n, i, df, same;
	double x2;

	wafer_sampler_init(&s, t, top_p, seed);
	for (i = 0; i < DRAWS; i++) {
		int tok = wafer_sample(&s, r);

		obs[tok >= 100 && tok < 100 + (int)k ? tok - 100 : K]++;
	}
	x2 = chi2(obs, p, k, DRAWS, &stray, &df);
	wt_diag("%s: counts %lu %lu %lu %lu ..., chi-square %.2f (df %u)", what, obs[0], obs[1],
		obs[2], obs[3], x2, df);
	wt_ok(kept == want_kept && stray == 0 && obs[K] == 0,
	      "%s: %lu draws, all in the %u-token top-p prefix", what, (unsigned long)DRAWS, kept);
	wt_ok(chi2_ok(x2, df), "%s: draws follow softmax(l/T) over the prefix, renormalised "
	      "(chi-square %.2f <= %.2f, df %u)", what, x2, df < 16 ? chi2_999[df] : 0, df);
	n = wafer_sample_dist(&s, r, dt, dp);
	for (i = 0, same = n == kept; same && i < n; i++)
		same = dt[i] == 100 + i && fabs(dp[i] - p[i]) < 1e-6;
	wt_ok(same, "%s: wafer_sample_dist() gives that distribution (%u tokens)", what, n);
	free(r);
}

static void test_sampler(void)
{
	static const double l[K] = { 2.0, 1.5, 1.2, 0.7, 0.3, 0.0, -0.5, -1.0 };
	static const double tie[2] = { 0.25, 0.25 };
	struct wafer_token_result *r = result(l, K);
	struct wafer_sampler s;
	int a, b, i, same = 1;

	/* top-p 0.6 keeps 3 tokens holding 0.74: a quarter of the mass cut */
	test_sample("T 1, top-p 0.6", l, K, 1.0f, 0.6f, 7, 3);
	test_sample("T 0.5, no top-p", l, K, 0.5f, 1.0f, 11, K);
	test_sample("T 1.5, top-p 0.95", l, K, 1.5f, 0.95f, 13, 7);
	/* two equal logits: the first holds exactly 0.5, which does not exceed 0.5 */
	test_sample("top-p equal to the first token's mass", tie, 2, 1.0f, 0.5f, 17, 2);

	wafer_sampler_init(&s, 0.0f, 0.9f, 5);
	wt_ok(wafer_sample(&s, r) == 100, "temperature 0: the argmax");
	for (i = 0; i < 100; i++) {
		struct wafer_sampler s1, s2;

		wafer_sampler_init(&s1, 1.0f, 0.9f, 1000 + i);
		wafer_sampler_init(&s2, 1.0f, 0.9f, 1000 + i);
		a = wafer_sample(&s1, r);
		b = wafer_sample(&s2, r);
		same &= a == b;
	}
	wt_ok(same, "a seed gives the same draw");
	free(r);
}

/* @n tokens from @tok0 with probabilities @p into @d. */
static void make_dist(struct wafer_spec_dist *d, uint32_t tok0, const double *p, unsigned int n)
{
	unsigned int i;

	memset(d, 0, sizeof(*d));
	d->n = n;
	for (i = 0; i < n; i++) {
		d->tok[i] = tok0 + i;
		d->p[i] = p[i];
	}
}

static uint32_t draw(struct wt_rng *g, const struct wafer_spec_dist *q)
{
	double u = wt_rng_unit(g), c = 0;
	unsigned int i;

	for (i = 0; i < q->n; i++) {
		c += q->p[i];
		if (u < c)
			return q->tok[i];
	}
	return q->tok[q->n - 1];
}

/* Tokens 10..16: the target has mass on 10..15, the draft on 11..16. */
#define T0	10
#define NT	7
#define SPEC_DRAWS 40000

static void test_spec_model_draft(void)
{
	static const double pp[6] = { 0.40, 0.25, 0.15, 0.10, 0.06, 0.04 };	/* 10..15 */
	static const double qp[6] = { 0.10, 0.15, 0.20, 0.20, 0.15, 0.20 };	/* 11..16 */
	unsigned long kept[NT] = { 0 }, repl[NT] = { 0 }, acc = 0, rej = 0, nowhere = 0;
	unsigned long stray, stray_r;
	double want[NT] = { 0 }, res[NT] = { 0 }, rsum = 0, a = 0, x2, x2r, sd;
	struct wafer_spec_dist p, q;
	struct wafer_sampler ts;
	struct wt_rng g;
	unsigned int i, df, dfr;

	make_dist(&p, T0, pp, 6);
	make_dist(&q, T0 + 1, qp, 6);
	for (i = 0; i < NT; i++) {
		double pi = i < 6 ? pp[i] : 0, qi = i >= 1 ? qp[i - 1] : 0;

		want[i] = pi;
		res[i] = pi > qi ? pi - qi : 0;
		rsum += res[i];
		a += pi < qi ? pi : qi;
	}
	for (i = 0; i < NT; i++)
		res[i] /= rsum;
	wafer_sampler_init(&ts, 1.0f, 1.0f, 23);
	wt_rng_seed(&g, 29);
	for (i = 0; i < SPEC_DRAWS; i++) {
		uint32_t x = draw(&g, &q);
		int next = -1;

		if (wafer_spec_accept(&ts, &p, (int)x, &q, &next)) {
			acc++;
			kept[x - T0]++;
		} else if (next >= T0 && next < T0 + NT) {
			rej++;
			kept[next - T0]++;
			repl[next - T0]++;
		} else {
			rej++;
			nowhere++;
		}
	}
	x2 = chi2(kept, want, NT, SPEC_DRAWS, &stray, &df);
	x2r = chi2(repl, res, NT, rej, &stray_r, &dfr);
	sd = sqrt(SPEC_DRAWS * a * (1 - a));
	wt_diag("model draft: accepted %lu (expected %.0f +- %.0f), kept chi-square %.2f, "
		"replacements chi-square %.2f", acc, SPEC_DRAWS * a, sd, x2, x2r);
	wt_ok(fabs((double)acc - SPEC_DRAWS * a) <= 4.5 * sd,
	      "speculative, model draft: accepted at the rate sum min(p, q) = %.2f (%lu of %d)",
	      a, acc, SPEC_DRAWS);
	wt_ok(stray_r == 0 && nowhere == 0, "speculative: a rejected token's replacement is "
	      "never one where q >= p (%lu were, %lu outside both)", stray_r, nowhere);
	wt_ok(chi2_ok(x2r, dfr), "speculative: replacements follow norm(max(0, p - q)) "
	      "(chi-square %.2f, df %u)", x2r, dfr);
	wt_ok(stray == 0 && chi2_ok(x2, df), "speculative, model draft: the tokens kept follow "
	      "the target's p (chi-square %.2f, df %u; %lu outside p)", x2, df, stray);
}

static void test_spec_ngram_draft(void)
{
	static const double pp[6] = { 0.40, 0.25, 0.15, 0.10, 0.06, 0.04 };
	unsigned long kept[NT] = { 0 }, acc = 0, stray;
	double want[NT] = { 0 }, x2, sd;
	struct wafer_spec_dist p;
	struct wafer_sampler ts;
	unsigned int i, df, x = T0 + 1;

	make_dist(&p, T0, pp, 6);
	for (i = 0; i < 6; i++)
		want[i] = pp[i];
	wafer_sampler_init(&ts, 1.0f, 1.0f, 31);
	for (i = 0; i < SPEC_DRAWS; i++) {
		int next = -1;

		if (wafer_spec_accept(&ts, &p, (int)x, NULL, &next)) {
			acc++;
			kept[x - T0]++;
		} else {
			kept[next >= T0 && next < T0 + NT && next != (int)x ? next - T0 : 6]++;
		}
	}
	x2 = chi2(kept, want, NT, SPEC_DRAWS, &stray, &df);
	sd = sqrt(SPEC_DRAWS * pp[1] * (1 - pp[1]));
	wt_ok(fabs((double)acc - SPEC_DRAWS * pp[1]) <= 4.5 * sd,
	      "speculative, n-gram draft: its token accepted at the rate p(x) = %.2f (%lu of %d)",
	      pp[1], acc, SPEC_DRAWS);
	wt_ok(stray == 0 && chi2_ok(x2, df), "speculative, n-gram draft: the tokens kept follow p "
	      "(chi-square %.2f, df %u)", x2, df);
}

int main(void)
{
	test_sampler();
	test_spec_model_draft();
	test_spec_ngram_draft();
	return wt_done();
}
