// SPDX-License-Identifier: MIT
/*
 * libwafer's continuous batching in micro-batches kept in flight
 * (wafer_batch_opts.micro_batches) on a pipeline of 3 in-process asic
 * devices: prompts of different lengths, greedy and sampled sequences.
 * Every sequence's tokens equal the same sequence alone (one slot, one
 * device), with 3 micro-batches and in lockstep; the micro-batched run's
 * modelled makespan is below lockstep's; sequences cancelled while their
 * job is in flight leave the others' tokens alone and their slots free
 * for new ones; bad micro_batches values are refused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wafer.h"
#include "wt_util.h"

#define SEQS	14
#define CTX	64
#define NDEV	3

struct out {
	int tok[CTX];
	unsigned int n;
	int end;
	int cancelled;
	unsigned int late;
};

static unsigned int prompt_of(unsigned int i, int *p)
{
	unsigned int n = 1 + i % 5, k;

	for (k = 0; k < n; k++)
		p[k] = k ? (int)(10 + 7 * i + 13 * k) % 500 : 1;
	return n;
}

static struct wafer_batch_seq seq_of(unsigned int i)
{
	return (struct wafer_batch_seq){ .max_new = 6 + i % 7, .temperature = i % 2 ? 0.8f : 0,
					 .top_p = 0.9f, .seed = 100 + i };
}

static int open_dev(unsigned int n, struct wafer_dev **dev)
{
	struct wafer_open_opts o[NDEV];
	struct wafer_pipe_opts po = { .n_devices = n, .devices = o };
	unsigned int i;

	for (i = 0; i < n; i++)
		o[i] = (struct wafer_open_opts){ .backend = WAFER_BACKEND_INPROC, .index = -1,
						 .profile = "asic" };
	return n == 1 ? wafer_open(&o[0], dev) : wafer_open_pipeline(&po, dev);
}

/* Events into @out (by user_data). */
static void take(const struct wafer_batch_event *ev, int n, struct out *out)
{
	int k;

	for (k = 0; k < n; k++) {
		struct out *o = &out[ev[k].user_data];

		o->late += o->cancelled;	/* an event after its cancel */
		if (ev[k].token >= 0 && o->n < CTX)
			o->tok[o->n++] = ev[k].token;
		if (ev[k].end)
			o->end = ev[k].end;
	}
}

/*
 * Sequences 0..SEQS-1 through a batch of @slots in @micro micro-batches,
 * each started when a slot is free; with @cancel, sequence 3 is cancelled
 * after its third token, at a step that reaped another micro-batch (its
 * job is in flight then).  @ns: the modelled makespan of the run.
 */
static int run(struct wafer_dev *dev, struct wafer_model *m, unsigned int slots, unsigned int micro, int cancel,
	       struct out *out, uint64_t *ns)
{
	struct wafer_batch_opts bo = { .slots = slots, .ctx_len = CTX, .micro_batches = micro };
	struct wafer_batch_event ev[SEQS];
	struct wafer_dev_stats s0 = { 0 }, s1 = { 0 };
	unsigned int started = 0, guard = 0;
	int p[8], n, slot3 = -1, ret = 0;
	struct wafer_batch *b;

	memset(out, 0, SEQS * sizeof(*out));
	if (wafer_batch_create(m, &bo, &b))
		return -1;
	wafer_dev_stats(dev, &s0);
	while (!ret && (started < SEQS || wafer_batch_active(b)) && guard++ < 10000) {
		while (started < SEQS) {
			struct wafer_batch_seq sq = seq_of(started);
			int sl = wafer_batch_start(b, p, prompt_of(started, p), &sq, started);

			if (sl < 0)
				break;
			slot3 = started == 3 ? sl : slot3;
			started++;
		}
		n = wafer_batch_step(b, ev, SEQS, NULL);
		if (n < 0) {
			ret = n;
			break;
		}
		take(ev, n, out);
		/* After a step that reaped another micro-batch: 3's job is in flight. */
		if (cancel && slot3 >= 0 && !out[3].end && out[3].n >= 3 && n &&
		    ev[0].slot % micro != (unsigned int)slot3 % micro) {
			ret = wafer_batch_cancel(b, (unsigned int)slot3);
			out[3].cancelled = 1;
			out[3].end = WAFER_BATCH_RUNNING + 100;
		}
	}
	wafer_dev_stats(dev, &s1);
	*ns = s1.modelled_makespan_ns - s0.modelled_makespan_ns;
	wafer_batch_destroy(b);
	return ret || guard >= 10000 ? -1 : 0;
}

/* Every sequence (but cancelled ones) as alone; "" or the first that differs. */
static int same(const struct out *a, const struct out *ref, char *why, size_t len)
{
	unsigned int i;

	for (i = 0; i < SEQS; i++) {
		if (a[i].cancelled)
			continue;
		if (a[i].n != ref[i].n || a[i].end != ref[i].end ||
		    memcmp(a[i].tok, ref[i].tok, a[i].n * sizeof(int))) {
			snprintf(why, len, "sequence %u: %u tokens (end %d), alone %u (end %d)", i,
				 a[i].n, a[i].end, ref[i].n, ref[i].end);
			return 0;
		}
	}
	snprintf(why, len, "all %d", SEQS);
	return 1;
}

/* The reference: each sequence alone in a batch of one slot on one device. */
static int reference(const void *blob, size_t len, struct out *ref)
{
	struct wafer_model *m = NULL;
	struct wafer_dev *dev = NULL;
	uint64_t ns;
	int ret = open_dev(1, &dev) || wafer_model_load(dev, blob, len, &m) ||
		  run(dev, m, 1, 1, 0, ref, &ns);

	wafer_model_unload(m);
	wafer_close(dev);
	return ret;
}

/* A run on a fresh 3-device pipeline. */
static int chain_run(const void *blob, size_t len, unsigned int slots, unsigned int micro,
		     int cancel, struct out *out, uint64_t *ns)
{
	struct wafer_model *m = NULL;
	struct wafer_dev *dev = NULL;
	int ret = open_dev(NDEV, &dev) || wafer_model_load(dev, blob, len, &m) ||
		  run(dev, m, slots, micro, cancel, out, ns);

	wafer_model_unload(m);
	wafer_close(dev);
	return ret;
}

static void bad_opts(const void *blob, size_t len)
{
	struct wafer_batch_opts bo = { .slots = 4, .ctx_len = CTX, .micro_batches = 5 };
	struct wafer_model *m = NULL;
	struct wafer_dev *dev = NULL;
	struct wafer_batch *b = NULL;
	int r1 = -1, r2 = -1;

	if (!open_dev(NDEV, &dev) && !wafer_model_load(dev, blob, len, &m)) {
		r1 = wafer_batch_create(m, &bo, &b);
		bo = (struct wafer_batch_opts){ .slots = 65, .ctx_len = 8, .micro_batches = 2 };
		r2 = wafer_batch_create(m, &bo, &b);
	}
	wt_ok(r1 == -EINVAL && r2 == -EINVAL, "micro_batches above the slots, or more slots than "
	      "the pipeline holds in flight: -EINVAL (%s)", wafer_last_error());
	wafer_model_unload(m);
	wafer_close(dev);
}

/*
 * SEQS sequences on NDEV devices, micro-batched and in lockstep, each as
 * alone; micro-batches take less modelled time than lockstep.
 */
static void test_micro_batched_as_alone(const void *blob, size_t len, const struct out *ref)
{
	static struct out a[SEQS];
	uint64_t ns_micro = 0, ns_lock = 0;
	char why[160];

	wt_ok(!chain_run(blob, len, SEQS, NDEV, 0, a, &ns_micro) && same(a, ref, why, sizeof(why)),
	      "%d sequences on %d devices in %d micro-batches: as alone (%s)", SEQS, NDEV, NDEV,
	      why);
	wt_ok(!chain_run(blob, len, SEQS, 1, 0, a, &ns_lock) && same(a, ref, why, sizeof(why)),
	      "the same in lockstep: as alone (%s)", why);
	wt_ok(ns_micro && ns_micro < ns_lock, "modelled makespan: %.2f us micro-batched, %.2f us "
	      "in lockstep", ns_micro / 1e3, ns_lock / 1e3);
}

/* A sequence cancelled in flight sends no event after; the others run as alone. */
static void test_cancel_in_flight(const void *blob, size_t len, const struct out *ref)
{
	static struct out c[SEQS];
	char why[160];
	uint64_t ns;

	wt_ok(!chain_run(blob, len, 6, NDEV, 1, c, &ns) && c[3].cancelled && !c[3].late &&
	      same(c, ref, why, sizeof(why)), "6 slots in %d micro-batches for %d sequences, one "
	      "cancelled in flight (no event of it after; %u): the others as alone (%s)", NDEV,
	      SEQS, c[3].late, why);
}

int main(void)
{
	struct wafer_convert_opts co = { .wbits = 8, .group_size = 32 };
	const char *path = wt_model_path("stories260K.bin");
	static struct out ref[SEQS];
	void *blob = NULL;
	size_t len;

	if (!wt_ok(path && !wafer_convert(path, &co, &blob, &len), "stories260K int8"))
		return wt_done();
	wt_ok(!reference(blob, len, ref), "each sequence alone on one asic device");
	test_micro_batched_as_alone(blob, len, ref);
	test_cancel_in_flight(blob, len, ref);
	bad_opts(blob, len);
	free(blob);
	return wt_done();
}
