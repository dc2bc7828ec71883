/* SPDX-License-Identifier: MIT */
/*
 * libwafer internals shared between its source files; not installed.
 *
 * Include graph (one way): wafer_internal.h <- wafer_backend.h <-
 * wafer_submit.h; generic front ends (wafer_open.c, wafer_bo.c,
 * wafer_model.c, wafer_ctx.c, wafer_job.c) call the backend ops; the
 * backends (wafer_kernel.c, wafer_inproc*.c) never call the front ends.
 */
#ifndef WAFER_INTERNAL_H
#define WAFER_INTERNAL_H

#include <stdint.h>

/*
 * Record a message for wafer_last_error() and return the negative errno, so
 * that failures read `return wafer_set_error(-EINVAL, "...", ...);`.
 */
int wafer_set_error(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The same, keeping the message already recorded after "@fmt: ". */
int wafer_prefix_error(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t wafer_now_ns(void);

#endif /* WAFER_INTERNAL_H */
