// SPDX-License-Identifier: MIT
/*
 * libwafer: continuous batching.  One context of N slots; a sequence joins
 * a free slot at any step and leaves when it ends.  Each step submits one
 * job per active sequence together (a chunk of its prompt, or its last
 * sampled token) and reaps them all (wafer_batch_seq.c samples each), or
 * keeps micro-batches in flight (wafer_batch_mb.c).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wafer_batch.h"

#define DEFAULT_CHUNK		32

/*
 * A kernel device counts per-stage busy time per file only for jobs that
 * ask for their chunk times (the driver's fdinfo, drm-engine-stage<N>,
 * which wafer_dev_stage_stats() reads): the batch's jobs ask on a device
 * with a kernel member, so that a server shows its stages' occupancy
 * without root.  The bytes a chunk's times take, else 0.
 */
static uint32_t stage_times_len(struct wafer_batch *b)
{
	unsigned int k;
	uint64_t len;

	for (k = 0; k < wafer_pipe_size(b->dev); k++)
		if (wafer_device_index(wafer_pipe_member(b->dev, k)) >= 0)
			break;
	if (k == wafer_pipe_size(b->dev))
		return 0;
	len = wafer_times_len(b->dev, b->chunk);
	return len <= UINT32_MAX ? (uint32_t)len : 0;
}

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
	if (!ret) {
		b->times_len = stage_times_len(b);
		b->slot_out = (uint64_t)b->chunk * WAFER_RESULT_SIZE(TOP_K);
		if (b->times_len)
			b->slot_out = ((b->slot_out + 7) & ~(uint64_t)7) + b->times_len;
		ret = wafer_bo_create(b->dev, (size_t)b->slots * b->slot_out, &b->out);
	}
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
