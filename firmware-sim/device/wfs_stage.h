/* SPDX-License-Identifier: MIT */
/*
 * wfs_stage.h - what a stage does with a chunk (the threads that run
 * stages: wfs_workers.h).
 *
 * A job of N tokens moves through the pipeline as
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
 * @stream_passes: weight streaming passes begun (wfs_stage.c)
 */
struct wfs_stage_counters {
	u64 chunks;
	u64 tokens;
	u64 jobs;
	u64 host_busy_ns;
	u64 modelled_busy_ns;
	u64 stream_passes;
};

struct wfs_stage;

/**
 * wfs_stage_step() - run the entry at the head of a stage's FIFO
 * @st: the stage; the caller is its only consumer
 *
 * Waits for an entry (wfs_fifo_peek()), runs it through the stage and
 * hands it on (the next stage's FIFO must have room: pool workers check
 * first, a stage's own worker waits for it).  An injected hang at stage 0
 * holds the caller until a reset begins (pool workers leave such a stage
 * alone).
 *
 * Return: 0 when the device aborts or the FIFO is closed, else 1.
 */
int wfs_stage_step(struct wfs_stage *st);

#endif /* WFS_STAGE_H */
