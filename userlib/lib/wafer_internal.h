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

struct wafer_sampler;
struct wafer_token_result;
struct wafer_convert_opts;
struct wfs_ckpt;

/*
 * An fp32 checkpoint in memory (named @what in errors) packed as @o says
 * and upcycled if @o->moe asks (wafer_convert.c): every blob's one path.
 */
int wafer_convert_ckpt(const struct wfs_ckpt *ck, const struct wafer_convert_opts *o,
		       const char *what, void **blob, size_t *len);

/*
 * The distribution wafer_sample() draws from for @r (speculative decoding's
 * p and q): tokens and probabilities, best first, at most WAFER_MAX_TOPK;
 * returns their count, 0 when @s is greedy.
 */
unsigned int wafer_sample_dist(const struct wafer_sampler *s, const struct wafer_token_result *r,
			       uint32_t *tokens, double *prob);

/* A uniform number in [0, 1) from @s's generator (as wafer_sample()'s coin). */
double wafer_sample_uniform(struct wafer_sampler *s);

/*
 * Layers of device @i when @n_layers are split over @n_devices devices of
 * one kind (wafer_split.c): n_layers / n_devices each, the first
 * n_layers % n_devices one more (0 beyond the layers).  wafer_split_layers()
 * gives a pipeline of equal devices this split, and wafer_plan() places
 * layers by it, so that a plan and a real run agree.
 */
unsigned int wafer_split_even(unsigned int n_layers, unsigned int n_devices, unsigned int i);

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t wafer_now_ns(void);

/*
 * The calling thread's count of the tokenizer's merge work (pair lookups'
 * probes and heap steps), so tests can measure how it grows.
 */
extern _Thread_local unsigned long long wafer_tokenizer_work;

#endif /* WAFER_INTERNAL_H */
