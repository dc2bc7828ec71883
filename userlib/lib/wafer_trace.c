// SPDX-License-Identifier: MIT
/*
 * libwafer: a timeline in the Chrome trace-event format (JSON, json-c),
 * which Perfetto's UI and chrome://tracing load: complete ("X") events
 * with a process and a thread each, named by metadata ("M") events.
 * wafer plan writes its projection with it, wafer run a real run's
 * modelled timeline (wafer_run_positions()) and its host wall time.
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
};

struct wafer_trace {
	char *path;
	FILE *f;
	json_object *meta;
	struct trace_ev *ev;
	size_t n, cap;
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
	json_object_object_add(j, "tid", json_object_new_int((int)e->tid));
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
	free(t->ev);
	free(t->path);
	free(t);
}
