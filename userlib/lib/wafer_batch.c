// SPDX-License-Identifier: MIT
/*
 * libwafer: continuous batching.  One context of N slots; a sequence joins
 * a free slot at any step and leaves when it ends.  Each step submits one
 * job per active sequence together (a chunk of its prompt, or its last
 * sampled token), reaps them all and samples with the sequence's own
 * sampler, so a sequence's text is the same alone or batched: its jobs
 * touch only its slot, and the device's integer arithmetic does not depend
 * on how a prompt is chunked.
 *
 * Penalties (OpenAI's presence and frequency) lower the logits of the
 * tokens a sequence sampled before, in the result's top-k, which is then
 * sampled in its new order; without them the result is sampled as the
 * device gave it.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wafer_batch.h"

#define DEFAULT_CHUNK		32

int wafer_batch_create(struct wafer_model *m, const struct wafer_batch_opts *o,
		       struct wafer_batch **out)
{
	const struct wafer_model_info *mi;
	struct wafer_batch *b;
	struct wafer_info di;
	int ret;

	if (!m || !o || !out)
		return wafer_set_error(-EINVAL, "wafer_batch_create: NULL argument");
	*out = NULL;
	mi = wafer_model_get_info(m);
	if (o->slots < 1 || o->slots > 256)
		return wafer_set_error(-EINVAL, "slots %u: 1..256", o->slots);
	if (o->ctx_len > mi->seq_len)
		return wafer_set_error(-EINVAL, "ctx_len %u above the model's %u", o->ctx_len,
				       mi->seq_len);
	b = calloc(1, sizeof(*b));
	if (!b)
		return wafer_set_error(-ENOMEM, "out of memory");
	b->dev = m->dev;
	b->slots = o->slots;
	b->vocab = mi->vocab_size;
	b->ctx_len = o->ctx_len ? o->ctx_len : mi->seq_len;
	b->chunk = o->prefill_chunk ? o->prefill_chunk : DEFAULT_CHUNK;
	ret = wafer_query(b->dev, &di);
	if (!ret && di.max_tokens_per_job && b->chunk > di.max_tokens_per_job)
		b->chunk = di.max_tokens_per_job;
	b->seq = calloc(b->slots, sizeof(*b->seq));
	b->jobs = calloc(b->slots, sizeof(*b->jobs));
	b->cpl = calloc(b->slots, sizeof(*b->cpl));
	if (!ret && (!b->seq || !b->jobs || !b->cpl))
		ret = wafer_set_error(-ENOMEM, "out of memory");
	if (!ret)
		ret = wafer_batch_micro_init(b, o->micro_batches);
	if (!ret)
		ret = wafer_ctx_create(m, b->slots, b->ctx_len, &b->ctx);
	if (!ret)
		ret = wafer_bo_create(b->dev, (size_t)b->slots * b->ctx_len * 4, &b->in);
	if (!ret)
		ret = wafer_bo_create(b->dev, (size_t)b->slots * b->chunk * WAFER_RESULT_SIZE(TOP_K),
				      &b->out);
	if (ret) {
		wafer_batch_destroy(b);
		return ret;
	}
	*out = b;
	return 0;
}

void wafer_batch_destroy(struct wafer_batch *b)
{
	unsigned int i;

	if (!b)
		return;
	wafer_batch_micro_fini(b);
	for (i = 0; b->seq && i < b->slots; i++)
		free(b->seq[i].counts);
	wafer_bo_destroy(b->out);
	wafer_bo_destroy(b->in);
	wafer_ctx_destroy(b->ctx);
	free(b->cpl);
	free(b->jobs);
	free(b->seq);
	free(b);
}

int wafer_batch_start(struct wafer_batch *b, const int *prompt, unsigned int n,
		      const struct wafer_batch_seq *o, uint64_t user_data)
{
	uint32_t *ids, *counts = NULL;
	unsigned int i, slot;

	if (!b || !prompt || !o || !n || !o->max_new)
		return wafer_set_error(-EINVAL, "wafer_batch_start: empty prompt or max_new 0");
	if (!isfinite(o->presence_penalty) || !isfinite(o->frequency_penalty))
		return wafer_set_error(-EINVAL, "wafer_batch_start: a penalty that is not finite");
	if (n > b->ctx_len)
		return wafer_set_error(-E2BIG, "a prompt of %u tokens; the context holds %u",
				       n, b->ctx_len);
	for (i = 0; i < n; i++)
		if (prompt[i] < 0)
			return wafer_set_error(-EINVAL, "token %d of the prompt", prompt[i]);
	for (slot = 0; slot < b->slots && (b->seq[slot].used || b->seq[slot].inflight); slot++)
		;
	if (slot == b->slots)
		return wafer_set_error(-EBUSY, "all %u slots are in use", b->slots);
	if (o->presence_penalty != 0.0f || o->frequency_penalty != 0.0f) {
		counts = calloc(b->vocab, sizeof(*counts));
		if (!counts)
			return wafer_set_error(-ENOMEM, "out of memory");
	}
	ids = (uint32_t *)wafer_bo_map(b->in) + (size_t)slot * b->ctx_len;
	for (i = 0; i < n; i++)
		ids[i] = (uint32_t)prompt[i];
	free(b->seq[slot].counts);
	b->seq[slot] = (struct seq){ .used = 1, .n_prompt = n, .last = prompt[n - 1],
				     .opt = *o, .user_data = user_data, .counts = counts };
	wafer_sampler_init(&b->seq[slot].sampler, o->temperature, o->top_p, o->seed);
	b->active++;
	return (int)slot;
}

int wafer_batch_cancel(struct wafer_batch *b, unsigned int slot)
{
	if (!b || slot >= b->slots || !b->seq[slot].used)
		return wafer_set_error(-EINVAL, "slot %u holds no sequence", slot);
	b->seq[slot].used = 0;
	b->seq[slot].cancelled = b->seq[slot].inflight;
	b->active--;
	return 0;
}

unsigned int wafer_batch_active(const struct wafer_batch *b)
{
	return b->active;
}

unsigned int wafer_batch_slots(const struct wafer_batch *b)
{
	return b->slots;
}

unsigned int wafer_batch_ctx_len(const struct wafer_batch *b)
{
	return b->ctx_len;
}

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
	ev->results = wafer_result(b->out, (uint64_t)i * b->chunk * WAFER_RESULT_SIZE(TOP_K),
				   TOP_K, 0);
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
		.out = b->out, .out_offset = (uint64_t)i * b->chunk * WAFER_RESULT_SIZE(TOP_K),
		.user_data = i,
	};
	return s->job_n;
}

/* One job per active sequence (a prompt chunk or its last token); their count. */
static unsigned int step_jobs(struct wafer_batch *b, struct wafer_batch_stats *st)
{
	unsigned int i, n = 0;

	for (i = 0; i < b->slots; i++) {
		b->seq[i].job_n = 0;
		if (b->seq[i].used)
			st->tokens += wafer_batch_seq_job(b, i, &b->jobs[n++]);
	}
	return n;
}

/*
 * Submits the @n jobs together (when the device's in-flight limit is
 * reached, reaps one and goes on) and reaps every one submitted into
 * b->cpl; *@got says how many.  Returns 0 or the error that stopped it.
 */
static int step_run(struct wafer_batch *b, unsigned int n, unsigned int *got)
{
	unsigned int sent = 0;
	int ret = 0, r;

	*got = 0;
	while (sent < n && !ret) {
		r = wafer_submit(b->dev, b->jobs + sent, n - sent);
		if (r > 0) {
			sent += (unsigned int)r;
			continue;
		}
		if (r == -EAGAIN && wafer_inflight(b->dev)) {
			r = wafer_reap(b->dev, b->cpl + *got, n - *got, 1, -1);
			if (r > 0) {
				*got += (unsigned int)r;
				continue;
			}
		}
		ret = r ? r : wafer_set_error(-ETIMEDOUT, "no job completed in time");
	}
	while (*got < sent) {
		r = wafer_reap(b->dev, b->cpl + *got, sent - *got, sent - *got, -1);
		if (r <= 0)
			return r ? r : wafer_set_error(-ETIMEDOUT, "no job completed in time");
		*got += (unsigned int)r;
	}
	return ret;
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

/* Sequences whose job was never submitted or never reaped cannot go on. */
static unsigned int step_fail_lost(struct wafer_batch *b, unsigned int got, int err,
				   struct wafer_batch_event *ev)
{
	unsigned int i, k, nev = 0;

	for (i = 0; i < b->slots; i++) {
		struct seq *s = &b->seq[i];

		if (!s->used || !s->job_n)
			continue;
		for (k = 0; k < got && b->cpl[k].user_data != i; k++)
			;
		if (k < got)
			continue;
		ev[nev] = (struct wafer_batch_event){ .slot = i, .user_data = s->user_data,
						       .token = -1, .prev = s->last };
		wafer_batch_finish(b, s, WAFER_BATCH_FAILED, err, &ev[nev++]);
	}
	return nev;
}

int wafer_batch_step(struct wafer_batch *b, struct wafer_batch_event *ev, unsigned int max,
		     struct wafer_batch_stats *st)
{
	struct wafer_batch_stats local = { 0 };
	unsigned int n, got, nev;
	int ret;

	if (!b || (!ev && max))
		return wafer_set_error(-EINVAL, "wafer_batch_step: NULL argument");
	if (max < b->active)
		return wafer_set_error(-EINVAL, "room for %u events, %u sequences", max, b->active);
	if (b->micro > 1) {
		ret = wafer_batch_step_micro(b, ev, &local);
		if (st)
			*st = local;
		return ret;
	}
	n = step_jobs(b, &local);
	ret = step_run(b, n, &got);
	nev = wafer_batch_events(b, got, ev, &local);
	if (ret)
		nev += step_fail_lost(b, got, ret, ev + nev);
	if (st)
		*st = local;
	return ret && !nev ? ret : (int)nev;
}
