/* SPDX-License-Identifier: MIT */
/*
 * wafer/trace.h - timeline traces of real runs (Chrome trace events:
 * Perfetto, chrome://tracing).
 *
 * Part of the public API; include "wafer.h", which includes every topic.
 */
#ifndef WAFER_H_TRACE
#define WAFER_H_TRACE

#include "spec.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- timeline traces (Chrome trace events: Perfetto, chrome://tracing) ---- */

struct wafer_trace;

/**
 * struct wafer_trace_event - one complete ("X") event
 * @name: shown on the bar
 * @cat: category ("stage", "hop", "link", "job")
 * @pid: process (track group): a device, or the host
 * @tid: thread (track) in it
 * @start_ns: start, ns (written in microseconds, as the format wants)
 * @dur_ns: duration, ns
 * @pos0: the chunk's or job's first position (args.pos0)
 * @n_tokens: its tokens (args.tokens)
 * @job: job number in the run (args.job), or -1
 * @device_ns: the job's modelled time as its completion reported it
 *	(args.device_ns; 0: none)
 */
struct wafer_trace_event {
	const char *name;
	const char *cat;
	unsigned int pid;
	unsigned int tid;
	uint64_t start_ns;
	uint64_t dur_ns;
	unsigned int pos0;
	unsigned int n_tokens;
	int64_t job;
	uint64_t device_ns;
};

/** WAFER_TRACE_HOST_PID: the host's process in a run's trace (wall time). */
#define WAFER_TRACE_HOST_PID	1000
/**
 * WAFER_TRACE_LANE_TIDS: thread @tid's lane L (L >= 1) is thread tid + L *
 * WAFER_TRACE_LANE_TIDS: the events that would overlap an earlier one of
 * the thread (complete events must nest) go to the first lane where none
 * does (wafer_trace_close()).
 */
#define WAFER_TRACE_LANE_TIDS	1000

/**
 * wafer_trace_open() - start a trace to be written to @path
 * @path: the JSON file, created (or truncated) now: a bad path fails here
 * @out: the trace
 *
 * Return: 0, or -errno with wafer_last_error() naming the path.
 */
int wafer_trace_open(const char *path, struct wafer_trace **out);

/** wafer_trace_name() - name process @pid (@tid < 0) or its thread @tid. */
void wafer_trace_name(struct wafer_trace *t, unsigned int pid, int tid, const char *name);

/** wafer_trace_add() - add an event; 0 or -ENOMEM. */
int wafer_trace_add(struct wafer_trace *t, const struct wafer_trace_event *e);

/**
 * wafer_trace_close() - write the trace (events by start time, after the
 *	names; overlapping ones of a thread on its lanes, see
 *	WAFER_TRACE_LANE_TIDS) and free it
 * @t: the trace (NULL: nothing)
 *
 * Return: 0, or -EIO with wafer_last_error() naming the file.
 */
int wafer_trace_close(struct wafer_trace *t);

/** wafer_trace_discard() - free a trace without writing it. */
void wafer_trace_discard(struct wafer_trace *t);

/**
 * wafer_trace_attach() - trace every job libwafer's generation runs on @dev
 *	(wafer_generate(), wafer_generate_spec()): each chunk on each stage
 *	and its hop out as the device modelled them (WAFER_JOB_TIMES: the
 *	firmware's own numbers), a process "device N (modelled ns)" with a
 *	thread per stage and one per stage's hops; and each job from
 *	submission to completion in host wall time (WAFER_TRACE_HOST_PID);
 *	on a pipeline, process k is its device k, all on device 0's
 *	modelled clock (docs/TIMING.md)
 * @dev: a device or a pipeline
 * @t: the trace, or NULL to stop; it must outlive the runs
 *
 * Return: 0, or -EINVAL without @dev.
 */
int wafer_trace_attach(struct wafer_dev *dev, struct wafer_trace *t);

#ifdef __cplusplus
}
#endif

#endif /* WAFER_H_TRACE */
