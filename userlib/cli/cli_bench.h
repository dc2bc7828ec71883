/* SPDX-License-Identifier: MIT */
/* wafer bench: the micro-batched decode of its device axis (cli_bench_mb.c). */
#ifndef CLI_BENCH_H
#define CLI_BENCH_H

#include <stdint.h>

#include "wafer.h"

/* Sequences, and micro-batches, of one run at most. */
#define CLI_MB_MAX_B	64
#define CLI_MB_MAX	16

/**
 * struct cli_mb - a greedy decode of @b sequences in @m micro-batches
 * @b: sequences, 1..CLI_MB_MAX_B (slots 0..b-1 of one context)
 * @m: micro-batches kept in flight, 1..min(@b, CLI_MB_MAX); 1: lockstep
 * @steps: positions per sequence (tokens decoded each)
 * @first: each sequence's first token
 * @tokens: filled: @b x @steps, sequence i's greedy tokens at
 *	tokens[i * steps ..]
 * @host_ns: filled: host time of the decode
 * @model_ns: filled: the device's modelled makespan over it (0: unknown)
 */
struct cli_mb {
	unsigned int b;
	unsigned int m;
	unsigned int steps;
	const uint32_t *first;
	uint32_t *tokens;
	uint64_t host_ns;
	uint64_t model_ns;
};

/*
 * Runs @r on @m (loaded on @dev); 0, 1 if the context of @r->b slots was
 * refused (wafer_last_error() says why: KV that does not fit), or -1
 * said on stderr.
 */
int cli_bench_micro(struct wafer_dev *dev, struct wafer_model *m, struct cli_mb *r);

#endif /* CLI_BENCH_H */
