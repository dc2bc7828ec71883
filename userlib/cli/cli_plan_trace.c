// SPDX-License-Identifier: MIT
/*
 * wafer plan --trace: the projection's modelled timeline as Chrome trace
 * events (libwafer's writer): a process per device, a thread per stage
 * (its chunks) and one for the stage's hops out (or, streaming weights,
 * for the weights coming in), each named after the events that use it;
 * a draft model's tokens a process past the target's devices.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define TIDS	256

/**
 * struct plan_trace - the trace and what it holds
 * @t: the trace
 * @kind: per device and thread, 1 + the kind of its first event (0: none)
 * @devices: devices @kind has room for
 * @err: out of memory once
 */
struct plan_trace {
	struct wafer_trace *t;
	uint8_t *kind;
	unsigned int devices;
	int err;
};

static const char *const kinds[] = { "stage", "hop", "link", "stream", "draft" };

/* Notes thread @tid of device @pid as used by a @kind event. */
static void seen(struct plan_trace *pt, unsigned int pid, unsigned int tid, unsigned int kind)
{
	if (tid >= TIDS)
		return;
	if (pid >= pt->devices) {
		unsigned int n = pid + 1 > 2 * pt->devices ? pid + 1 : 2 * pt->devices;
		uint8_t *k = realloc(pt->kind, (size_t)n * TIDS);

		if (!k) {
			pt->err = 1;
			return;
		}
		memset(k + (size_t)pt->devices * TIDS, 0, (size_t)(n - pt->devices) * TIDS);
		pt->kind = k;
		pt->devices = n;
	}
	if (!pt->kind[(size_t)pid * TIDS + tid])
		pt->kind[(size_t)pid * TIDS + tid] = (uint8_t)(kind + 1);
}

static void trace_event(void *arg, const struct wafer_plan_event *e)
{
	struct plan_trace *pt = arg;
	char name[64];
	struct wafer_trace_event ev = {
		.name = name, .cat = kinds[e->kind], .pid = e->device,
		.tid = e->stage * 2 + (e->kind != WAFER_PLAN_EV_STAGE),
		.start_ns = e->start_ns, .dur_ns = e->dur_ns, .pos0 = e->pos0,
		.n_tokens = e->n_tokens, .job = -1,
	};

	snprintf(name, sizeof(name), "%s %u+%u", kinds[e->kind], e->pos0, e->n_tokens);
	if (wafer_trace_add(pt->t, &ev))
		pt->err = 1;
	seen(pt, ev.pid, ev.tid, e->kind);
}

/* A thread's name, by the kind of its events. */
static void thread_name(char *name, size_t size, unsigned int tid, unsigned int kind)
{
	if (kind == WAFER_PLAN_EV_STREAM)
		snprintf(name, size, "stage %u: weights from the external store", tid / 2);
	else if (kind == WAFER_PLAN_EV_DRAFT)
		snprintf(name, size, "draft tokens");
	else
		snprintf(name, size, tid % 2 ? "stage %u hop out" : "stage %u", tid / 2);
}

/* Names every device and thread that has events (the draft's process its own). */
static void name_all(struct plan_trace *pt, const struct wafer_plan *p)
{
	unsigned int d, tid, any, draft;
	char name[80];

	for (d = 0; d < pt->devices; d++) {
		const uint8_t *k = pt->kind + (size_t)d * TIDS;

		for (tid = 0, any = 0, draft = 0; tid < TIDS; tid++) {
			if (!k[tid])
				continue;
			any = 1;
			draft |= k[tid] - 1 == WAFER_PLAN_EV_DRAFT;
			thread_name(name, sizeof(name), tid, k[tid] - 1U);
			wafer_trace_name(pt->t, d, (int)tid, name);
		}
		if (draft)
			snprintf(name, sizeof(name), "draft model (%u %s devices, projected ns)",
				 p->draft_devices, p->profile);
		else
			snprintf(name, sizeof(name), "device %u (%s, projected ns)", d, p->profile);
		if (any)
			wafer_trace_name(pt->t, d, -1, name);
	}
}

int cli_plan_traced(const struct wafer_plan_shape *s, struct wafer_plan_opts *o,
		    struct wafer_plan *p, const char *path)
{
	struct plan_trace pt = { 0 };
	int ret;

	if (wafer_trace_open(path, &pt.t)) {
		fprintf(stderr, "wafer plan: %s\n", wafer_last_error());
		return 1;
	}
	o->trace = trace_event;
	o->trace_arg = &pt;
	ret = wafer_plan(s, o, p);
	o->trace = NULL;
	if (ret)
		fprintf(stderr, "wafer plan: %s\n", cli_plan_error(wafer_last_error(),
								   !strcmp(s->name, "custom")));
	else if (pt.err)
		fprintf(stderr, "wafer plan: --trace: out of memory\n");
	else
		name_all(&pt, p);
	free(pt.kind);
	if (ret || pt.err) {
		wafer_trace_discard(pt.t);
		return 1;
	}
	if (wafer_trace_close(pt.t)) {
		fprintf(stderr, "wafer plan: %s\n", wafer_last_error());
		return 1;
	}
	return 0;
}
