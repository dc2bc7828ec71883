// SPDX-License-Identifier: MIT
/* libwafer error reporting: errno codes plus a per-thread message. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "wafer.h"
#include "wafer_internal.h"

static _Thread_local char last_error[256];

int wafer_set_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return err < 0 ? err : -err;
}

int wafer_prefix_error(int err, const char *fmt, ...)
{
	char prefix[128], was[sizeof(last_error)];
	va_list ap;

	memcpy(was, last_error, sizeof(was));
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	snprintf(last_error, sizeof(last_error), "%s: %s", prefix, was);
	return err < 0 ? err : -err;
}

const char *wafer_last_error(void)
{
	return last_error;
}

const char *wafer_strerror(int err)
{
	return strerror(err < 0 ? -err : err);
}

uint64_t wafer_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
