/* SPDX-License-Identifier: MIT */
/*
 * wt_util.h - helpers shared by the userspace unit tests and benchmarks:
 * TAP-like reporting, a seeded RNG, model file lookup, timing.
 */
#ifndef WT_UTIL_H
#define WT_UTIL_H

#include <stddef.h>
#include <stdarg.h>
#include <stdint.h>

/* Print "ok - name" or "not ok - name"; count failures.  Returns cond. */
int wt_ok(int cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Print a "# ..." diagnostic line. */
void wt_vdiag(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
void wt_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print a summary; return the process exit status (0 iff no failure). */
int wt_done(void);
int wt_failures(void);

/* splitmix64-seeded xoshiro-style RNG, deterministic for a seed. */
struct wt_rng {
	uint64_t s;
};
void wt_rng_seed(struct wt_rng *r, uint64_t seed);
uint64_t wt_rng_u64(struct wt_rng *r);
/* uniform in [lo, hi] */
int64_t wt_rng_range(struct wt_rng *r, int64_t lo, int64_t hi);
/* uniform in [0, 1) */
double wt_rng_unit(struct wt_rng *r);
/* approximately normal, mean 0, sd 1 */
double wt_rng_gauss(struct wt_rng *r);

/*
 * Path of a file in the shared models directory: $WAFER_MODELS/name if set,
 * else ../shared/models/name relative to the repo root (the cwd).  Returns
 * a static buffer, or NULL if the file is not readable.
 */
const char *wt_model_path(const char *name);

/*
 * Runs shell command @cmd; its stdout (at most @max - 1 bytes) into @out,
 * NUL-terminated.  Returns pclose()'s status, or -1.
 */
int wt_capture(const char *cmd, char *out, size_t max);
/* wt_capture(), and its stderr (at most @max - 1 bytes) into @err (NULL: dropped). */
int wt_capture_err(const char *cmd, char *out, char *err, size_t max);

/* Monotonic seconds. */
double wt_now(void);
/* Seconds of CPU time this thread has used. */
double wt_cpu_now(void);
/* Writes @val to the sysfs file @path: 0 or -errno. */
int wt_sysfs_write(const char *path, const char *val);

/*
 * Threads under @dir (/proc for the machine's, /proc/self/task for this
 * process's) whose name starts with @prefix: a count, or -errno.
 */
int wt_threads_named(const char *dir, const char *prefix);

/* Aligned zeroed allocation (64 bytes); free with free(). */
void *wt_alloc(size_t n);

/* A loopback TCP port no one listens on now (an ephemeral bind's), or 0. */
unsigned int wt_free_port(void);

#endif /* WT_UTIL_H */
