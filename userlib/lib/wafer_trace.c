// SPDX-License-Identifier: MIT
/*
 * libwafer: a timeline in the Chrome trace-event format (JSON, json-c),
 * which Perfetto's UI and chrome://tracing load: complete ("X") events
 * with a process and a thread each, named by metadata ("M") events.
 * wafer plan writes its projection with it, wafer run a real run's
 * modelled timeline (wafer_run_positions()) and its host wall time.
 *
 * Complete events of one thread must nest (the format's rule; Perfetto
 * mis-draws those that overlap): an event that would overlap an earlier
 * one of its thread (a chunk's hop out while the previous chunk's is
 * still on its way) goes to the first of the thread's extra lanes
 * (WAFER_TRACE_LANE_TIDS apart, named after it) where it does not.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json.h>

#include "wafer_backend.h"

struct trace_ev {
	struct wafer_trace_event e;
	char name[64];
	char cat[16];
	size_t seq;
	unsigned int lane;
};

/* A thread's name, for its lanes'. */
struct trace_name {
	unsigned int pid;
	int tid;
	char name[64];
};

/* Most lanes of one thread: events past them stay on the last. */
#define MAX_LANES	64

struct wafer_trace {
	char *path;
	FILE *f;
	json_object *meta;
	struct trace_ev *ev;
	size_t n, cap;
	struct trace_name *names;
	size_t n_names;
	unsigned int jobs;
	uint64_t host_t0;
};

int wafer_trace_open(const char *path, struct wafer_trace **out)
{
	struct wafer_trace *t;

	*out = NULL;
	if (!path || !*path)
		return wafer_set_error(-EINVAL, "trace: no file name");
	t = calloc(1, sizeof(*t));
	if (!t || !(t->path = strdup(path)) || !(t->meta = json_object_new_array())) {
		wafer_trace_discard(t);
		return wafer_set_error(-ENOMEM, "out of memory");
	}
	/* Opened now, so that a bad path fails before anything runs. */
	t->f = fopen(path, "w");
	if (!t->f) {
		int err = errno;

		wafer_trace_discard(t);
		return wafer_set_error(-err, "trace: cannot write %s: %s", path, strerror(err));
	}
	*out = t;
	return 0;
}

void wafer_trace_name(struct wafer_trace *t, unsigned int pid, int tid, const char *name)
{
	json_object *m = json_object_new_object(), *args = json_object_new_object();

	json_object_object_add(m, "name", json_object_new_string(tid < 0 ? "process_name" :
								      "thread_name"));
	json_object_object_add(m, "ph", json_object_new_string("M"));
	json_object_object_add(m, "pid", json_object_new_int((int)pid));
	json_object_object_add(m, "tid", json_object_new_int(tid < 0 ? 0 : tid));
	json_object_object_add(args, "name", json_object_new_string(name));
	json_object_object_add(m, "args", args);
	json_object_array_add(t->meta, m);
	if (tid >= 0) {
		struct trace_name *p = realloc(t->names, (t->n_names + 1) * sizeof(*p));

		if (!p)
			return;	/* its lanes go unnamed */
		t->names = p;
		p[t->n_names] = (struct trace_name){ .pid = pid, .tid = tid };
		snprintf(p[t->n_names++].name, sizeof(p->name), "%s", name);
	}
}

int wafer_trace_add(struct wafer_trace *t, const struct wafer_trace_event *e)
{
	struct trace_ev *ev;

	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct trace_ev *p = realloc(t->ev, cap * sizeof(*p));

		if (!p)
			return wafer_set_error(-ENOMEM, "out of memory");
		t->ev = p;
		t->cap = cap;
	}
	ev = &t->ev[t->n];
	ev->e = *e;
	snprintf(ev->name, sizeof(ev->name), "%s", e->name ? e->name : "");
	snprintf(ev->cat, sizeof(ev->cat), "%s", e->cat ? e->cat : "");
	ev->seq = t->n++;
	return 0;
}

unsigned int wafer_trace_next_job(struct wafer_trace *t)
{
	return t->jobs++;
}

uint64_t wafer_trace_host_t0(struct wafer_trace *t)
{
	if (!t->host_t0)
		t->host_t0 = wafer_now_ns();
	return t->host_t0;
}

/* By start time; events added in order keep it among equals. */
static int ev_cmp(const void *a, const void *b)
{
	const struct trace_ev *x = a, *y = b;

	if (x->e.start_ns != y->e.start_ns)
		return x->e.start_ns < y->e.start_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* By thread, then start: each thread's events in the order they come. */
static int track_cmp(const void *a, const void *b)
{
	const struct trace_ev *x = *(const struct trace_ev *const *)a;
	const struct trace_ev *y = *(const struct trace_ev *const *)b;

	if (x->e.pid != y->e.pid)
		return x->e.pid < y->e.pid ? -1 : 1;
	if (x->e.tid != y->e.tid)
		return x->e.tid < y->e.tid ? -1 : 1;
	return ev_cmp(x, y);
}

/* Names lane @lane of thread (@pid, @tid) after the thread, once. */
static void name_lane(struct wafer_trace *t, unsigned int pid, unsigned int tid,
		      unsigned int lane)
{
	char name[96];
	size_t i, n = t->n_names;

	for (i = 0; i < n; i++) {
		if (t->names[i].pid != pid || t->names[i].tid != (int)tid)
			continue;
		snprintf(name, sizeof(name), "%s (overlapping, %u)", t->names[i].name, lane + 1);
		wafer_trace_name(t, pid, (int)(tid + lane * WAFER_TRACE_LANE_TIDS), name);
		return;
	}
}

/* Each event the first lane of its thread where it overlaps none; 0 or -ENOMEM. */
static int lanes(struct wafer_trace *t)
{
	struct trace_ev **by = malloc(t->n * sizeof(*by));
	uint64_t end[MAX_LANES];
	unsigned int used = 0, l;
	size_t i;

	if (!by && t->n)
		return wafer_set_error(-ENOMEM, "out of memory");
	for (i = 0; i < t->n; i++)
		by[i] = &t->ev[i];
	qsort(by, t->n, sizeof(*by), track_cmp);
	for (i = 0; i < t->n; i++) {
		struct trace_ev *ev = by[i];

		if (!i || ev->e.pid != by[i - 1]->e.pid || ev->e.tid != by[i - 1]->e.tid)
			used = 0;
		for (l = 0; l < used && l + 1 < MAX_LANES && end[l] > ev->e.start_ns; l++)
			;
		if (l == used) {
			if (l)
				name_lane(t, ev->e.pid, ev->e.tid, l);
			used++;
		}
		ev->lane = l;
		end[l] = ev->e.start_ns + ev->e.dur_ns;
	}
	free(by);
	return 0;
}

static json_object *ev_json(const struct trace_ev *ev)
{
	json_object *j = json_object_new_object(), *args = json_object_new_object();
	const struct wafer_trace_event *e = &ev->e;

	json_object_object_add(j, "name", json_object_new_string(ev->name));
	json_object_object_add(j, "cat", json_object_new_string(ev->cat));
	json_object_object_add(j, "ph", json_object_new_string("X"));
	json_object_object_add(j, "ts", json_object_new_double(e->start_ns / 1e3));
	json_object_object_add(j, "dur", json_object_new_double(e->dur_ns / 1e3));
	json_object_object_add(j, "pid", json_object_new_int((int)e->pid));
	json_object_object_add(j, "tid", json_object_new_int((int)(e->tid + ev->lane *
								    WAFER_TRACE_LANE_TIDS)));
	json_object_object_add(args, "pos0", json_object_new_int((int)e->pos0));
	json_object_object_add(args, "tokens", json_object_new_int((int)e->n_tokens));
	if (e->job >= 0)
		json_object_object_add(args, "job", json_object_new_int64(e->job));
	if (e->device_ns)
		json_object_object_add(args, "device_ns",
				       json_object_new_int64((int64_t)e->device_ns));
	json_object_object_add(j, "args", args);
	return j;
}

int wafer_trace_close(struct wafer_trace *t)
{
	json_object *root, *evs;
	const char *s;
	size_t i;
	int ret = 0;

	if (!t)
		return 0;
	if (lanes(t)) {
		wafer_trace_discard(t);
		return -ENOMEM;
	}
	qsort(t->ev, t->n, sizeof(*t->ev), ev_cmp);
	root = json_object_new_object();
	evs = t->meta;
	t->meta = NULL;
	for (i = 0; i < t->n; i++)
		json_object_array_add(evs, ev_json(&t->ev[i]));
	json_object_object_add(root, "traceEvents", evs);
	json_object_object_add(root, "displayTimeUnit", json_object_new_string("ns"));
	s = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
	if (fputs(s, t->f) < 0 || fputc('\n', t->f) < 0 || fflush(t->f))
		ret = wafer_set_error(-EIO, "trace: writing %s: %s", t->path, strerror(errno));
	json_object_put(root);
	if (fclose(t->f) && !ret)
		ret = wafer_set_error(-EIO, "trace: closing %s: %s", t->path, strerror(errno));
	t->f = NULL;
	wafer_trace_discard(t);
	return ret;
}

void wafer_trace_discard(struct wafer_trace *t)
{
	if (!t)
		return;
	if (t->f)
		fclose(t->f);
	json_object_put(t->meta);
	free(t->names);
	free(t->ev);
	free(t->path);
	free(t);
}
