/* SPDX-License-Identifier: MIT */
/*
 * wfs_stage.h - the stage workers.
 *
 * One worker per stage the loaded model occupies, started by model load and
 * stopped when the model goes (unload, full reset): a device without a
 * model runs only its command processor.  A job of N tokens moves through the pipeline as
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

struct wfs_device;

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
 * wfs_stage_workers_start() - start the workers of stages [0, @n)
 * @dev: the device (none of its workers runs)
 * @n: stages the model occupies
 *
 * Called by model load (the command processor).  On failure the workers
 * already started keep running: close and join them.
 *
 * Return: 0, or -WFS_ENOMEM.
 */
int wfs_stage_workers_start(struct wfs_device *dev, u32 n);

/**
 * wfs_stage_workers_close_locked() - tell every running worker to exit
 * @dev: the device; its state lock is held
 *
 * The workers are idle or parked (no job is left); wfs_stage_workers_join()
 * then waits for them, without the state lock.
 */
void wfs_stage_workers_close_locked(struct wfs_device *dev);

/* Wait for the workers told to exit and forget them (no lock held). */
void wfs_stage_workers_join(struct wfs_device *dev);

#endif /* WFS_STAGE_H */
