// SPDX-License-Identifier: MIT
/*
 * libwafer: llama2.c's sampler (run.c sample(), sample_mult(),
 * sample_topp(), random_f32()) applied to the top-k pairs the device
 * returns instead of the full vocabulary: greedy takes the device's argmax;
 * otherwise softmax(logit / temperature) over the top-k, then top-p.
 */
#include <math.h>

#include "wafer.h"
#include "wafer_internal.h"

void wafer_sampler_init(struct wafer_sampler *s, float temperature, float top_p,
			uint64_t seed)
{
	s->temperature = temperature;
	s->top_p = top_p;
	s->rng = seed ? seed : 1;
}

/* xorshift64*, run.c random_u32() */
static uint32_t random_u32(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return (uint32_t)((*state * 0x2545F4914F6CDD1Dull) >> 32);
}

/* uniform in [0, 1), run.c random_f32() */
static float random_f32(uint64_t *state)
{
	return (float)(random_u32(state) >> 8) / 16777216.0f;
}

/*
 * The weights wafer_sample() draws from: p[0..last] (softmax of the top-k
 * logits / temperature, best first), of which the first @last + 1 carry
 * mass @cum (top-p).  Returns 0, or -1 for greedy (no distribution).
 */
static int weights(const struct wafer_sampler *s, const struct wafer_token_result *r,
		   float *p, unsigned int *last_out, float *cum_out)
{
	unsigned int k = r->top_k < WAFER_MAX_TOPK ? r->top_k : WAFER_MAX_TOPK, i, last;
	float sum = 0.0f, cum = 0.0f;

	if (s->temperature <= 0.0f || k == 0)
		return -1;
	/* softmax of logit / temperature; the pairs come best first */
	for (i = 0; i < k; i++) {
		float l = (float)r->topk[i].logit / (float)(1 << WAFER_LOGIT_FRAC_BITS);
		float l0 = (float)r->topk[0].logit / (float)(1 << WAFER_LOGIT_FRAC_BITS);

		p[i] = expf((l - l0) / s->temperature);
		sum += p[i];
	}
	for (i = 0; i < k; i++)
		p[i] /= sum;
	/* top-p: the smallest prefix whose mass exceeds top_p (all of it otherwise) */
	last = k - 1;
	if (s->top_p > 0.0f && s->top_p < 1.0f) {
		for (i = 0; i < k; i++) {
			cum += p[i];
			if (cum > s->top_p) {
				last = i;
				break;
			}
		}
	} else {
		cum = 1.0f;
	}
	*last_out = last;
	*cum_out = cum;
	return 0;
}

int wafer_sample(struct wafer_sampler *s, const struct wafer_token_result *r)
{
	float p[WAFER_MAX_TOPK], coin, cum, cdf = 0.0f;
	unsigned int i, last;

	if (weights(s, r, p, &last, &cum))
		return (int)r->argmax;
	coin = random_f32(&s->rng);
	coin *= cum;
	for (i = 0; i <= last; i++) {
		cdf += p[i];
		if (coin < cdf)
			return (int)r->topk[i].token;
	}
	return (int)r->topk[last].token;
}

unsigned int wafer_sample_dist(const struct wafer_sampler *s, const struct wafer_token_result *r,
			       uint32_t *tokens, double *prob)
{
	float p[WAFER_MAX_TOPK], cum;
	unsigned int i, last;

	if (weights(s, r, p, &last, &cum))
		return 0;
	/* coin * cum against the running sum: token i has p[i] / cum */
	for (i = 0; i <= last; i++) {
		tokens[i] = r->topk[i].token;
		prob[i] = (double)p[i] / (double)cum;
	}
	return last + 1;
}

double wafer_sample_uniform(struct wafer_sampler *s)
{
	return random_f32(&s->rng);
}
