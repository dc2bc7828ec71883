/* SPDX-License-Identifier: MIT */
/*
 * `wafer node`'s sessions: one per chain member a client claims (a
 * control connection naming one of the node's devices), shared by
 * wafer_node.c (the control messages) and wafer_node_run.c (the jobs that
 * arrive on the member's incoming link).
 */
#ifndef WAFER_NODE_H
#define WAFER_NODE_H

#include <pthread.h>
#include <stdio.h>

#include "wafer_backend.h"
#include "wafer_link.h"
#include "wafer_node_wire.h"

/**
 * struct wnd_session - a chain member served by the node
 * @fd: the control connection
 * @peer: its "ADDR:PORT"
 * @device: the node's device index it claimed
 * @dev: that device, opened for the session (closing it frees all)
 * @log: the node's log
 * @addr: the node's address (its links listen there)
 * @timeout_ms: the links' waits
 * @model: the part's model id on @dev (0: none)
 * @blob: the model's buffer on @dev
 * @part: what the part holds
 * @ctx_id: per client context, the device's id (0: none)
 * @ctx: per client context, its shape (ctx_len 0: none)
 * @lis: the incoming link's listener (START)
 * @in: the incoming link, @out the outgoing one
 * @start: the START's shape and where the next member listens
 * @thread: the jobs' thread (@running)
 * @stop: set to end it
 * @failed: it ended on an error (told to the client once: @told)
 * @jobs: jobs run
 * @lock: guards @fd's writes (the jobs' thread tells failures)
 */
struct wnd_session {
	int fd;
	char peer[80];
	unsigned int device;
	struct wafer_dev *dev;
	FILE *log;
	const char *addr;
	int timeout_ms;
	uint32_t model;
	struct wafer_bo *blob;
	struct wafer_load_hw part;
	uint32_t ctx_id[WND_MAX_CTX];
	struct wnd_ctx_limits ctx[WND_MAX_CTX];
	struct wafer_link_listener *lis;
	struct wafer_link *in, *out;
	struct wnd_start start;
	pthread_t thread;
	int running;
	volatile int stop;
	volatile int failed;
	int told;
	uint64_t jobs;
	pthread_mutex_t lock;
};

/* wafer_node_run.c: the member's jobs, from START to STOP or a failure. */
int wnd_run_start(struct wnd_session *s);
void wnd_run_stop(struct wnd_session *s);
/* "node ADDR device D: " then printf into the log, a line. */
void wnd_log(struct wnd_session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Tells the client an error (an ERROR message) and logs it. */
void wnd_tell_error(struct wnd_session *s, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* WAFER_NODE_H */
