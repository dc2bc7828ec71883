// SPDX-License-Identifier: MIT
/*
 * libwafer: continuous batching in micro-batches kept in flight
 * (wafer_batch_opts.micro_batches = M > 1).
 *
 * Slot i belongs to micro-batch i % M.  Each step submits every
 * micro-batch that has no job in flight (one job per active sequence of
 * it, in one wafer_submit()), then reaps the oldest micro-batch in flight
 * and returns its events; the others stay in flight across the call.  On
 * a pipeline of devices the micro-batches are thus at different devices
 * at once, and the pipeline's clock (wafer_pipe_clock.c) starts each
 * micro-batch's job when its own previous one left the last device and
 * the caller had reaped it.  A completion of another micro-batch that
 * comes back first is held for its turn; a sequence cancelled while its
 * job was in flight keeps its slot until that job is reaped.
 */
#include <errno.h>
#include <stdlib.h>

#include "wafer_batch.h"

#define MAX_MICRO	64

int wafer_batch_micro_init(struct wafer_batch *b, unsigned int micro)
{
	struct wafer_info di;

	b->micro = micro ? micro : 1;
	if (b->micro == 1)
		return 0;
	if (b->micro > MAX_MICRO || b->micro > b->slots)
		return wafer_set_error(-EINVAL, "micro_batches %u: 1..%d and at most the %u slots",
				       micro, MAX_MICRO, b->slots);
	if (!wafer_query(b->dev, &di) && di.max_inflight_jobs && b->slots > di.max_inflight_jobs)
		return wafer_set_error(-EINVAL, "micro_batches keep every slot's job in flight: "
				       "%u slots, the device holds %u jobs", b->slots,
				       di.max_inflight_jobs);
	b->fifo = calloc(b->micro, sizeof(*b->fifo));
	b->held = calloc(b->slots, sizeof(*b->held));
	b->held_ok = calloc(b->slots, sizeof(*b->held_ok));
	if (!b->fifo || !b->held || !b->held_ok)
		return wafer_set_error(-ENOMEM, "out of memory");
	return 0;
}

/* Jobs in flight, all micro-batches. */
static unsigned int inflight(const struct wafer_batch *b)
{
	unsigned int i, n = 0;

	for (i = 0; i < b->slots; i++)
		n += b->seq[i].inflight && !b->held_ok[i];
	return n;
}

void wafer_batch_micro_fini(struct wafer_batch *b)
{
	struct wafer_completion c[MAX_MICRO];
	unsigned int left = b->held_ok ? inflight(b) : 0;
	int n;

	/* Jobs still in flight write into the buffers: wait for them. */
	while (left) {
		n = wafer_reap(b->dev, c, left < MAX_MICRO ? left : MAX_MICRO, 1, -1);
		if (n <= 0)
			break;
		left -= (unsigned int)n;
	}
	free(b->held_ok);
	free(b->held);
	free(b->fifo);
}

/*
 * Submits micro-batch @g's jobs (its active sequences); 0, or the error
 * that stopped it (the sequences it did not submit are not in flight).
 */
static int group_submit(struct wafer_batch *b, unsigned int g, struct wafer_batch_stats *st)
{
	unsigned int i, n = 0, sent = 0;
	int r;

	for (i = g; i < b->slots; i += b->micro) {
		b->seq[i].job_n = 0;
		if (b->seq[i].used)
			st->tokens += wafer_batch_seq_job(b, i, &b->jobs[n++]);
	}
	if (!n)
		return 0;
	while (sent < n) {
		r = wafer_submit(b->dev, b->jobs + sent, n - sent);
		if (r <= 0)
			break;
		for (i = sent; i < sent + (unsigned int)r; i++)
			b->seq[b->jobs[i].user_data].inflight = 1;
		sent += (unsigned int)r;
	}
	if (sent)
		b->fifo[(b->fifo_head + b->fifo_n++) % b->micro] = g;
	return sent == n ? 0 : r ? r : wafer_set_error(-EAGAIN, "the device took no job");
}

/* Sequences of micro-batch @g whose job was not submitted end with @err. */
static unsigned int group_fail(struct wafer_batch *b, unsigned int g, int err,
			       struct wafer_batch_event *ev)
{
	unsigned int i, nev = 0;

	for (i = g; i < b->slots; i += b->micro) {
		struct seq *s = &b->seq[i];

		if (!s->used || s->inflight || !s->job_n)
			continue;
		ev[nev] = (struct wafer_batch_event){ .slot = i, .user_data = s->user_data,
						       .token = -1, .prev = s->last };
		wafer_batch_finish(b, s, WAFER_BATCH_FAILED, err, &ev[nev++]);
	}
	return nev;
}

/* Micro-batch @g's jobs in flight (held completions count as back). */
static unsigned int group_left(const struct wafer_batch *b, unsigned int g)
{
	unsigned int i, n = 0;

	for (i = g; i < b->slots; i += b->micro)
		n += b->seq[i].inflight && !b->held_ok[i];
	return n;
}

/* A completion back: micro-batch @g's into b->cpl, another's held. */
static void group_take(struct wafer_batch *b, unsigned int g, const struct wafer_completion *c,
		       unsigned int *got)
{
	unsigned int slot = (unsigned int)c->user_data;

	if (slot >= b->slots)
		return;
	if (slot % b->micro != g) {
		b->held[slot] = *c;
		b->held_ok[slot] = 1;
		return;
	}
	b->cpl[(*got)++] = *c;
}

/* Reaps micro-batch @g's jobs into b->cpl[0..*got); 0 or an error. */
static int group_reap(struct wafer_batch *b, unsigned int g, unsigned int *got)
{
	struct wafer_completion c[MAX_MICRO];
	unsigned int i, left;
	int n;

	*got = 0;
	for (i = g; i < b->slots; i += b->micro)
		if (b->held_ok[i]) {
			b->held_ok[i] = 0;
			b->cpl[(*got)++] = b->held[i];
		}
	while ((left = group_left(b, g) - *got) > 0) {
		/* At most what @g waits for: a pipeline completes in order. */
		n = wafer_reap(b->dev, c, left < MAX_MICRO ? left : MAX_MICRO, 1, -1);
		if (n <= 0)
			return n ? n : wafer_set_error(-ETIMEDOUT, "no job completed in time");
		for (i = 0; i < (unsigned int)n; i++)
			group_take(b, g, &c[i], got);
	}
	return 0;
}

/* The reaped jobs leave flight; those of cancelled sequences free their slot. */
static unsigned int group_landed(struct wafer_batch *b, unsigned int got)
{
	unsigned int i, kept = 0;

	for (i = 0; i < got; i++) {
		struct seq *s = &b->seq[b->cpl[i].user_data];

		s->inflight = 0;
		if (s->cancelled) {
			s->cancelled = 0;
			continue;
		}
		b->cpl[kept++] = b->cpl[i];
	}
	return kept;
}

int wafer_batch_step_micro(struct wafer_batch *b, struct wafer_batch_event *ev,
			   struct wafer_batch_stats *st)
{
	unsigned int g, got = 0, nev = 0;
	int ret, err = 0;

	for (g = 0; g < b->micro; g++) {
		if (group_left(b, g))
			continue;
		ret = group_submit(b, g, st);
		if (ret) {
			err = ret;
			nev += group_fail(b, g, ret, ev + nev);
		}
	}
	if (!b->fifo_n)
		return err && !nev ? err : (int)nev;
	g = b->fifo[b->fifo_head];
	b->fifo_head = (b->fifo_head + 1) % b->micro;
	b->fifo_n--;
	ret = group_reap(b, g, &got);
	got = group_landed(b, got);
	nev += wafer_batch_events(b, got, ev + nev, st);
	if (ret)
		return nev ? (int)nev : ret;
	return err && !nev ? err : (int)nev;
}
