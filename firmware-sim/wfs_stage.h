/* SPDX-License-Identifier: MIT */
/*
 * wfs_stage.h - the stage workers.
 *
 * One worker per stage.  A job of N tokens moves through the pipeline as
 * ceil(N / chunk_tokens) chunks; each stage takes a chunk from its bounded
 * input FIFO, runs its layers over the chunk's tokens in position order,
 * and pushes the activations into the next stage's FIFO (blocking while it
 * is full: back-pressure).  The last used stage runs the head, writes the
 * results to the job's output buffer and, after the job's last chunk,
 * retires the job (wfs_job_retire() posts the completion).  FIFOs keep
 * chunk order, so at every stage a slot's positions are processed in order
 * and a job queued behind another job of the same slot sees its KV entries.
 */
#ifndef WFS_STAGE_H
#define WFS_STAGE_H

#include "wfs_compat.h"

/**
 * struct wfs_stage_counters - per stage statistics (under the stage's FIFO
 *	lock; written by its worker)
 * @chunks: chunks processed
 * @tokens: tokens processed
 * @jobs: jobs whose last chunk passed
 * @host_busy_ns: host time processing
 * @modelled_busy_ns: modelled time processing
 */
struct wfs_stage_counters {
	u64 chunks;
	u64 tokens;
	u64 jobs;
	u64 host_busy_ns;
	u64 modelled_busy_ns;
};

/**
 * wfs_stage_worker() - body of a stage's worker thread
 * @arg: the struct wfs_stage
 *
 * Runs until the device stops; parks while a reset is in progress.
 */
void wfs_stage_worker(void *arg);

#endif /* WFS_STAGE_H */
