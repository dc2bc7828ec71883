/* SPDX-License-Identifier: MIT */
/* libwafer internals shared between its source files; not installed. */
#ifndef WAFER_INTERNAL_H
#define WAFER_INTERNAL_H

/*
 * Record a message for wafer_last_error() and return the negative errno, so
 * that failures read `return wafer_set_error(-EINVAL, "...", ...);`.
 */
int wafer_set_error(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* WAFER_INTERNAL_H */
