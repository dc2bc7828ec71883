// SPDX-License-Identifier: MIT
/*
 * The trace of a real run (wafer_trace_attach(), wafer run --trace) on an
 * in-process device: valid JSON (json-c) of trace events with their
 * fields; on every thread the events follow each other in time without
 * overlap (so they nest, as the format wants; the writer puts those that
 * would overlap on lanes); every chunk passes the stages in order, each
 * entered no earlier than its hop from the previous one ended; each job's modelled
 * span (its first chunk's start on stage 0 to its last hop's end) is the
 * modelled time its completion reported, and they add up to the run's.
 * The device's events are the same with one thread per stage and with a
 * pool of one.  Bad paths are clear errors; a split model's trace has a
 * process per device (its events: userlib_trace_pipe).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <json.h>
#include <json_util.h>

#include "wafer.h"
#include "wt_util.h"

#define MAX_JOBS	64
#define MAX_LANES	4
#define MAX_TRACKS	(MAX_LANES * 128)

static char model[400], tokpath[400];

static const char *const prompt =
	"Once upon a time there was a little girl who lived in a small house near a big "
	"forest with her mother";

/* Runs the CLI with @args; stdout and stderr in @buf; the exit status. */
static int cli(const char *args, char *buf, size_t size)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char cmd[1400];
	size_t n;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s/bin/wafer %s 2>&1", build, args);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	n = fread(buf, 1, size - 1, f);
	buf[n] = 0;
	return WEXITSTATUS(pclose(f));
}

/* A run of the shared model, traced to @path; its statistics in @st. */
static int traced_run(const char *path, struct wafer_gen_stats *st, unsigned int *stages)
{
	struct wafer_open_opts oo = { .backend = WAFER_BACKEND_INPROC };
	struct wafer_convert_opts co = { .wbits = 8, .group_size = 32 };
	struct wafer_gen_opts go = { .steps = 48 };
	struct wafer_tokenizer *tok = NULL;
	struct wafer_model *m = NULL;
	struct wafer_ctx *ctx = NULL;
	struct wafer_trace *t = NULL;
	struct wafer_dev *dev = NULL;
	struct wafer_info info;
	int ret;

	ret = wafer_open(&oo, &dev) || wafer_query(dev, &info) ||
	      wafer_model_load_file(dev, model, &co, &m) ||
	      wafer_tokenizer_load(tokpath, 512, &tok) ||
	      wafer_ctx_create(m, 1, 48, &ctx) || wafer_trace_open(path, &t) ||
	      wafer_trace_attach(dev, t) || wafer_generate(ctx, tok, prompt, &go, st);
	*stages = info.stages;
	if (!ret)
		ret = wafer_trace_close(t);
	else
		wafer_trace_discard(t);
	wafer_ctx_destroy(ctx);
	wafer_tokenizer_free(tok);
	wafer_model_unload(m);
	wafer_close(dev);
	return ret;
}

static double num(json_object *o, const char *k)
{
	return json_object_get_double(json_object_object_get(o, k));
}

/* What the events of one job add up to. */
struct job_span {
	double start, end, device_us;
	int host;
};

/* One "X" event: the fields, its track's order, its chunk's order. */
static int check_event(json_object *e, double *track_end, double (*chunk_end)[8],
		       struct job_span *jobs)
{
	json_object *a, *v;
	double ts, dur;
	int pid, tid, job, chunk;

	if (!json_object_object_get_ex(e, "name", &v) || !json_object_object_get_ex(e, "ts", &v) ||
	    !json_object_object_get_ex(e, "dur", &v) || !json_object_object_get_ex(e, "pid", &v) ||
	    !json_object_object_get_ex(e, "tid", &v) || !json_object_object_get_ex(e, "args", &a))
		return 0;
	ts = num(e, "ts");
	dur = num(e, "dur");
	pid = json_object_get_int(json_object_object_get(e, "pid"));
	tid = json_object_get_int(json_object_object_get(e, "tid"));
	job = json_object_get_int(json_object_object_get(a, "job"));
	chunk = json_object_get_int(json_object_object_get(a, "pos0")) / 16;
	if (dur < 0 || job < 0 || job >= MAX_JOBS || chunk < 0 || chunk >= 8)
		return 0;
	if (pid == WAFER_TRACE_HOST_PID) {
		jobs[job].host = 1;
		jobs[job].device_us = num(a, "device_ns") / 1e3;
		return 1;
	}
	/* Lane L of thread t is t + L * WAFER_TRACE_LANE_TIDS. */
	if (tid >= 0 && tid % WAFER_TRACE_LANE_TIDS < MAX_TRACKS / MAX_LANES &&
	    tid / WAFER_TRACE_LANE_TIDS < MAX_LANES)
		tid = tid / WAFER_TRACE_LANE_TIDS * (MAX_TRACKS / MAX_LANES) +
		      tid % WAFER_TRACE_LANE_TIDS;
	else
		tid = -1;
	if (pid != 0 || tid < 0 || ts + 1e-6 < track_end[tid] ||
	    ts + 1e-6 < chunk_end[job][chunk])
		return 0;
	/* Every thread (lane) one event after another: they nest. */
	track_end[tid] = ts + dur;
	chunk_end[job][chunk] = ts + dur;
	if (!tid && (jobs[job].start < 0 || ts < jobs[job].start))
		jobs[job].start = ts;
	if (ts + dur > jobs[job].end)
		jobs[job].end = ts + dur;
	return 1;
}

static void trace_of_a_run(void)
{
	static double chunk_end[MAX_JOBS][8];
	char path[] = "/tmp/wafer-run-trace-XXXXXX";
	double track_end[MAX_TRACKS] = { 0 }, sum = 0;
	struct job_span jobs[MAX_JOBS];
	struct wafer_gen_stats st;
	json_object *root, *evs = NULL;
	int fd = mkstemp(path), ok, spans = 1;
	unsigned int stages = 0;
	size_t i, n = 0, x = 0;

	for (i = 0; i < MAX_JOBS; i++)
		jobs[i] = (struct job_span){ .start = -1 };
	ok = fd >= 0 && !traced_run(path, &st, &stages);
	wt_ok(ok, "a traced in-process run: %u jobs, %.2f us modelled (%s)", st.jobs,
	      st.device_ns / 1e3, ok ? "ok" : wafer_last_error());
	if (fd >= 0)
		close(fd);
	root = json_object_from_file(path);
	unlink(path);
	ok = ok && root && json_object_object_get_ex(root, "traceEvents", &evs) &&
	     json_object_is_type(evs, json_type_array) && st.jobs <= MAX_JOBS;
	n = ok ? json_object_array_length(evs) : 0;
	for (i = 0; ok && i < n; i++) {
		json_object *e = json_object_array_get_idx(evs, i), *ph;

		ok = json_object_object_get_ex(e, "ph", &ph);
		if (ok && !strcmp(json_object_get_string(ph), "X")) {
			ok = check_event(e, track_end, chunk_end, jobs);
			x++;
		}
	}
	wt_ok(ok, "JSON trace events (name, ph, ts, dur, pid, tid): %zu of %zu complete; in time "
	      "order on every thread without overlap (they nest), chunks through the stages in "
	      "order", x, n);
	for (i = 0; ok && i < st.jobs; i++) {
		spans &= jobs[i].host && jobs[i].start >= 0 &&
			 jobs[i].end - jobs[i].start > jobs[i].device_us - 0.002 &&
			 jobs[i].end - jobs[i].start < jobs[i].device_us + 0.002;
		sum += jobs[i].device_us;
	}
	wt_ok(ok && spans && sum > st.device_ns / 1e3 - 0.01 && sum < st.device_ns / 1e3 + 0.01,
	      "every job's chunk times span its reported modelled time; together the run's "
	      "%.3f us (%.3f)", st.device_ns / 1e3, sum);
	if (root)
		json_object_put(root);
}

/* The device's events of the trace at @path, one line each, into @buf. */
static size_t device_events(const char *path, char *buf, size_t size)
{
	json_object *root = json_object_from_file(path), *evs = NULL;
	size_t i, n, len = 0;

	if (!root || !json_object_object_get_ex(root, "traceEvents", &evs)) {
		if (root)
			json_object_put(root);
		return 0;
	}
	n = json_object_array_length(evs);
	for (i = 0; i < n && len + 200 < size; i++) {
		json_object *e = json_object_array_get_idx(evs, i);

		if (json_object_get_int(json_object_object_get(e, "pid")) != 0 ||
		    strcmp(json_object_get_string(json_object_object_get(e, "ph")), "X"))
			continue;
		len += (size_t)snprintf(buf + len, size - len, "%s %d %.3f %.3f\n",
					json_object_get_string(json_object_object_get(e, "name")),
					json_object_get_int(json_object_object_get(e, "tid")),
					num(e, "ts"), num(e, "dur"));
	}
	json_object_put(root);
	return len;
}

/*
 * The same run with the stages on one thread each and on a pool of one
 * (WAFER_STAGE_WORKERS): the device's events and modelled time are equal.
 */
static void timeline_per_mode(void)
{
	static const char *const modes[] = { "0", "1" };
	static char ev[2][1 << 18];
	char path[] = "/tmp/wafer-run-trace-XXXXXX";
	struct wafer_gen_stats st[2];
	size_t len[2] = { 0, 0 };
	unsigned int i, stages;
	int fd = mkstemp(path);

	for (i = 0; fd >= 0 && i < 2; i++) {
		setenv("WAFER_STAGE_WORKERS", modes[i], 1);
		if (!traced_run(path, &st[i], &stages))
			len[i] = device_events(path, ev[i], sizeof(ev[i]));
	}
	unsetenv("WAFER_STAGE_WORKERS");
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	wt_ok(len[0] && len[0] == len[1] && !memcmp(ev[0], ev[1], len[0]) &&
	      st[0].device_ns == st[1].device_ns,
	      "WAFER_STAGE_WORKERS=0 and =1: the same device events (%zu bytes) and modelled %.3f us",
	      len[0], st[0].device_ns / 1e3);
}

/* WAFER_JOB_TIMES given wrong: libwafer's checks, then the device's. */
static void bad_times(void)
{
	struct wafer_open_opts oo = { .backend = WAFER_BACKEND_INPROC };
	struct wafer_convert_opts co = { .wbits = 8, .group_size = 32 };
	struct wafer_bo *in = NULL, *out = NULL;
	struct wafer_model *m = NULL;
	struct wafer_ctx *ctx = NULL;
	struct wafer_dev *dev = NULL;
	struct wafer_completion c = { 0 };
	struct wafer_job j;
	int ret;

	ret = wafer_open(&oo, &dev) || wafer_model_load_file(dev, model, &co, &m) ||
	      wafer_ctx_create(m, 1, 32, &ctx) || wafer_bo_create(dev, 64, &in) ||
	      wafer_bo_create(dev, 4096, &out);
	j = (struct wafer_job){ .ctx = ctx, .n_tokens = 4, .in = in, .out = out,
				.flags = WAFER_JOB_TIMES, .times_offset = 8, .times_len = 400 };
	wt_ok(!ret && wafer_submit(dev, &j, 1) == -EINVAL &&
	      strstr(wafer_last_error(), "inside the 16 bytes of results"),
	      "TIMES inside the result: %s", wafer_last_error());
	j.flags = 0;
	j.times_offset = 16;
	wt_ok(!ret && wafer_submit(dev, &j, 1) == -EINVAL &&
	      strstr(wafer_last_error(), "without WAFER_JOB_TIMES"),
	      "times_len without the flag: %s", wafer_last_error());
	/* One chunk over 5 stages needs 200 bytes: the device says -EINVAL. */
	j.flags = WAFER_JOB_TIMES;
	j.times_len = 160;
	ret = ret || wafer_submit(dev, &j, 1) != 1 || wafer_reap(dev, &c, 1, 1, -1) != 1;
	wt_ok(!ret && c.status == -EINVAL, "TIMES with room for 4 of 5 stages: the job fails "
	      "with -EINVAL (%d)", c.status);
	j.times_len = 200;
	ret = ret || wafer_submit(dev, &j, 1) != 1 || wafer_reap(dev, &c, 1, 1, -1) != 1;
	wt_ok(!ret && !c.status, "... and runs with room for 5 (%d)", c.status);
	wafer_bo_destroy(in);
	wafer_bo_destroy(out);
	wafer_ctx_destroy(ctx);
	wafer_model_unload(m);
	wafer_close(dev);
}

/* The tid of the @ph event named @name (a thread name for "M") in @evs, or -1. */
static int tid_of(json_object *evs, const char *ph, const char *name)
{
	size_t i, n = json_object_array_length(evs);

	for (i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(evs, i), *a;
		const char *nm = json_object_get_string(json_object_object_get(e, "name"));

		if (strcmp(json_object_get_string(json_object_object_get(e, "ph")), ph))
			continue;
		if (!strcmp(ph, "M") && json_object_object_get_ex(e, "args", &a))
			nm = json_object_get_string(json_object_object_get(a, "name"));
		if (nm && !strcmp(nm, name))
			return json_object_get_int(json_object_object_get(e, "tid"));
	}
	return -1;
}

/*
 * The writer: of three events on one thread, the second overlapping the
 * first goes to the thread's lane 1 (named after it), the third, after
 * the first, stays on the thread.
 */
static void lanes(void)
{
	char path[] = "/tmp/wafer-trace-lanes-XXXXXX";
	struct wafer_trace_event e = { .cat = "hop", .pid = 0, .tid = 3, .job = -1 };
	struct wafer_trace *t = NULL;
	json_object *root = NULL, *evs = NULL;
	int fd = mkstemp(path), ok;

	ok = fd >= 0 && !wafer_trace_open(path, &t);
	if (ok) {
		wafer_trace_name(t, 0, 3, "stage 1 hop out");
		e.name = "a", e.start_ns = 100, e.dur_ns = 50;
		ok = !wafer_trace_add(t, &e);
		e.name = "b", e.start_ns = 120, e.dur_ns = 50;
		ok = ok && !wafer_trace_add(t, &e);
		e.name = "c", e.start_ns = 150, e.dur_ns = 10;
		ok = ok && !wafer_trace_add(t, &e) && !wafer_trace_close(t);
	}
	if (fd >= 0)
		close(fd);
	root = ok ? json_object_from_file(path) : NULL;
	unlink(path);
	ok = root && json_object_object_get_ex(root, "traceEvents", &evs);
	wt_ok(ok && tid_of(evs, "X", "a") == 3 && tid_of(evs, "X", "b") == 3 +
	      WAFER_TRACE_LANE_TIDS && tid_of(evs, "X", "c") == 3 &&
	      tid_of(evs, "M", "stage 1 hop out (overlapping, 2)") == 3 + WAFER_TRACE_LANE_TIDS,
	      "overlapping events of a thread: the later one on a lane of the thread, named "
	      "after it; one after them back on the thread");
	if (root)
		json_object_put(root);
}

static void errors(void)
{
	struct wafer_trace *t = NULL;
	char buf[8192], args[1200];
	int ret;

	ret = wafer_trace_open("/nonexistent-dir/trace.json", &t);
	wt_ok(ret == -ENOENT && !t && strstr(wafer_last_error(), "/nonexistent-dir/trace.json"),
	      "a trace to a missing directory: %s", wafer_last_error());
	snprintf(args, sizeof(args), "run %s -z %s --backend inproc -n 8 --trace "
		 "/nonexistent-dir/t.json", model, tokpath);
	ret = cli(args, buf, sizeof(buf));
	wt_ok(ret == 1 && strstr(buf, "cannot write /nonexistent-dir/t.json") &&
	      !strstr(buf, "tok/s"), "wafer run --trace to a missing directory fails first: %.120s",
	      buf);
}

static void command_line(void)
{
	char path[] = "/tmp/wafer-run-cli-XXXXXX", args[1200], buf[16384];
	int fd = mkstemp(path), ret;
	json_object *root;
	const char *s;

	snprintf(args, sizeof(args), "run %s -z %s --backend inproc -n 24 -i 'Once upon' "
		 "--trace %s", model, tokpath, path);
	ret = fd >= 0 ? cli(args, buf, sizeof(buf)) : -1;
	root = json_object_from_file(path);
	wt_ok(!ret && root && strstr(buf, "trace of") && strstr(buf, path),
	      "wafer run --trace FILE: written, valid JSON");
	if (root)
		json_object_put(root);
	/* Split over two devices: a process each (userlib_trace_pipe checks the events). */
	snprintf(args, sizeof(args), "run %s -z %s --backend inproc -d 0-1 -n 24 -i 'Once upon' "
		 "--trace %s", model, tokpath, path);
	ret = fd >= 0 ? cli(args, buf, sizeof(buf)) : -1;
	root = json_object_from_file(path);
	s = root ? json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN) : "";
	wt_ok(!ret && root && strstr(s, "\"pid\":1,") && !strstr(s, "\"pid\":2,"),
	      "wafer run -d 0-1 --trace FILE: a model split over 2 devices, a process each");
	if (root)
		json_object_put(root);
	if (fd >= 0)
		close(fd);
	unlink(path);
}

int main(void)
{
	const char *m = wt_model_path("stories260K.bin");

	if (m)
		snprintf(model, sizeof(model), "%s", m);
	m = wt_model_path("tok512.bin");
	if (m)
		snprintf(tokpath, sizeof(tokpath), "%s", m);
	if (!wt_ok(model[0] && tokpath[0], "the shared model and tokenizer"))
		return wt_done();
	trace_of_a_run();
	timeline_per_mode();
	bad_times();
	lanes();
	errors();
	command_line();
	return wt_done();
}
