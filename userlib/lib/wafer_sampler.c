// SPDX-License-Identifier: MIT
/*
 * libwafer: llama2.c's sampler (run.c sample(), sample_mult(),
 * sample_topp(), random_f32()) applied to the top-k pairs the device
 * returns instead of the full vocabulary: greedy takes the device's argmax;
 * otherwise softmax(logit / temperature) over the top-k, then top-p.
 */
#include <math.h>

#include "wafer.h"

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

int wafer_sample(struct wafer_sampler *s, const struct wafer_token_result *r)
{
	float p[WAFER_MAX_TOPK], sum = 0.0f, coin, cum = 0.0f, cdf = 0.0f;
	unsigned int k = r->top_k < WAFER_MAX_TOPK ? r->top_k : WAFER_MAX_TOPK, i, last;

	if (s->temperature <= 0.0f || k == 0)
		return (int)r->argmax;
	/* softmax of logit / temperature; the pairs come best first */
	for (i = 0; i < k; i++) {
		float l = (float)r->topk[i].logit / (float)(1 << WAFER_LOGIT_FRAC_BITS);
		float l0 = (float)r->topk[0].logit / (float)(1 << WAFER_LOGIT_FRAC_BITS);

		p[i] = expf((l - l0) / s->temperature);
		sum += p[i];
	}
	for (i = 0; i < k; i++)
		p[i] /= sum;
	coin = random_f32(&s->rng);
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
	coin *= cum;
	for (i = 0; i <= last; i++) {
		cdf += p[i];
		if (coin < cdf)
			return (int)r->topk[i].token;
	}
	return (int)r->topk[last].token;
}
