// SPDX-License-Identifier: MIT
/*
 * libwafer: a batched sequence's steps, shared by whole steps
 * (wafer_batch.c) and micro-batches (wafer_batch_mb.c): the job for its
 * next chunk or token, and its completions turned into events, sampled
 * with the sequence's own sampler, so a sequence's text is the same alone
 * or batched: its jobs touch only its slot, and the device's integer
 * arithmetic does not depend on how a prompt is chunked.
 *
 * Penalties (OpenAI's presence and frequency) lower the logits of the
 * tokens a sequence sampled before, in the result's top-k, which is then
 * sampled in its new order; without them the result is sampled as the
 * device gave it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wafer_batch.h"

/* Ends @s with @end; fills @ev. */
void wafer_batch_finish(struct wafer_batch *b, struct seq *s, int end, int status,
			struct wafer_batch_event *ev)
{
	ev->end = end;
	ev->status = status;
	s->used = 0;
	b->active--;
}

/* Fixed-point logits: a penalty of @p for @n past samples. */
static int32_t penalty(const struct wafer_batch_seq *o, uint32_t n)
{
	double p = (n ? o->presence_penalty : 0.0) + (double)o->frequency_penalty * n;

	p = p * (1 << WAFER_LOGIT_FRAC_BITS);
	return p > INT32_MAX / 2 ? INT32_MAX / 2 : p < -(INT32_MAX / 2) ? -(INT32_MAX / 2) :
		(int32_t)lrint(p);
}

/*
 * Samples @r for @s; with penalties, from a copy whose top-k logits are
 * lowered by them and put back in order (ties keep the device's order).
 */
static int sample(unsigned int vocab, struct seq *s, const struct wafer_token_result *r)
{
	union {
		struct wafer_token_result r;
		char bytes[WAFER_RESULT_SIZE(TOP_K)];
	} c;
	unsigned int k, i, j;
	struct wafer_topk t;

	if (!s->counts)
		return wafer_sample(&s->sampler, r);
	k = r->top_k < TOP_K ? r->top_k : TOP_K;
	memcpy(c.bytes, r, WAFER_RESULT_SIZE(k));
	for (i = 0; i < k; i++) {
		int64_t l = (int64_t)c.r.topk[i].logit -
			penalty(&s->opt, c.r.topk[i].token < vocab ?
				s->counts[c.r.topk[i].token] : 0);

		c.r.topk[i].logit = l < INT32_MIN ? INT32_MIN : l > INT32_MAX ? INT32_MAX :
			(int32_t)l;
	}
	for (i = 1; i < k; i++) {
		t = c.r.topk[i];
		for (j = i; j > 0 && c.r.topk[j - 1].logit < t.logit; j--)
			c.r.topk[j] = c.r.topk[j - 1];
		c.r.topk[j] = t;
	}
	if (k) {
		c.r.argmax = c.r.topk[0].token;
		c.r.argmax_logit = c.r.topk[0].logit;
	}
	return wafer_sample(&s->sampler, &c.r);
}

/* The step's result for slot @i: sample, feed the token back, maybe end. */
static void advance(struct wafer_batch *b, unsigned int i, struct wafer_batch_event *ev)
{
	struct seq *s = &b->seq[i];
	const struct wafer_token_result *r;
	uint32_t *ids;
	int next;

	*ev = (struct wafer_batch_event){ .slot = i, .user_data = s->user_data, .token = -1,
					  .prev = s->last, .pos0 = s->pos };
	ev->results = wafer_result(b->out, wafer_batch_out_offset(b, i), TOP_K, 0);
	ev->n_results = s->opt.prompt_results && s->pos < s->n_prompt ? s->job_n : 1;
	s->pos += s->job_n;
	if (s->pos < s->n_prompt) {
		if (!s->opt.prompt_results)
			ev->n_results = 0;
		return;	/* more prompt to run: an event only for its results */
	}
	r = WAFER_BATCH_RESULT(ev, ev->n_results - 1);
	next = sample(b->vocab, s, r);
	if (next == WAFER_TOKEN_BOS) {
		wafer_batch_finish(b, s, WAFER_BATCH_BOS, 0, ev);
		return;
	}
	ev->token = next;
	if (s->counts && (unsigned int)next < b->vocab && s->counts[next] < UINT32_MAX)
		s->counts[next]++;
	s->n_new++;
	s->last = next;
	if (s->n_new >= s->opt.max_new)
		wafer_batch_finish(b, s, WAFER_BATCH_MAX_NEW, 0, ev);
	else if (s->pos >= b->ctx_len)
		wafer_batch_finish(b, s, WAFER_BATCH_CONTEXT, 0, ev);
	else {
		ids = (uint32_t *)wafer_bo_map(b->in) + (size_t)i * b->ctx_len;
		ids[s->pos] = (uint32_t)next;
	}
}

unsigned int wafer_batch_seq_job(struct wafer_batch *b, unsigned int i, struct wafer_job *j)
{
	struct seq *s = &b->seq[i];
	unsigned int left = s->pos < s->n_prompt ? s->n_prompt - s->pos : 1;

	s->job_n = left < b->chunk ? left : b->chunk;
	*j = (struct wafer_job){
		.ctx = b->ctx, .slot = i, .start_pos = s->pos, .n_tokens = s->job_n,
		.flags = s->opt.prompt_results && s->pos < s->n_prompt ?
			WAFER_JOB_ALL_POSITIONS : 0,
		.top_k = TOP_K, .in = b->in,
		.in_offset = ((uint64_t)i * b->ctx_len + s->pos) * 4,
		.out = b->out, .out_offset = wafer_batch_out_offset(b, i),
		.user_data = i,
	};
	if (b->times_len) {
		j->flags |= WAFER_JOB_TIMES;
		j->times_offset = (uint32_t)(b->slot_out - b->times_len);
		j->times_len = (uint32_t)wafer_times_len(b->dev, s->job_n);
	}
	return s->job_n;
}

unsigned int wafer_batch_events(struct wafer_batch *b, unsigned int got,
				struct wafer_batch_event *ev, struct wafer_batch_stats *st)
{
	unsigned int i, nev = 0;

	st->jobs = got;
	for (i = 0; i < got; i++) {
		struct seq *s = &b->seq[b->cpl[i].user_data];

		st->device_ns += b->cpl[i].device_ns;
		s->job_n = b->cpl[i].status ? 0 : s->job_n;
		if (b->cpl[i].status) {
			ev[nev] = (struct wafer_batch_event){ .slot = (unsigned int)b->cpl[i].user_data,
							       .user_data = s->user_data, .token = -1,
							       .prev = s->last };
			wafer_batch_finish(b, s, WAFER_BATCH_FAILED, b->cpl[i].status, &ev[nev++]);
		} else {
			advance(b, (unsigned int)b->cpl[i].user_data, &ev[nev]);
			if (ev[nev].token >= 0 || ev[nev].end || ev[nev].n_results)
				nev++;
		}
	}
	return nev;
}
