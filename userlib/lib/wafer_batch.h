/* SPDX-License-Identifier: MIT */
/*
 * libwafer's continuous batching, shared by wafer_batch.c (the batch, a
 * step in lockstep) and wafer_batch_mb.c (micro-batches kept in flight).
 */
#ifndef WAFER_BATCH_H
#define WAFER_BATCH_H

#include "wafer_backend.h"

#define TOP_K			WAFER_MAX_TOPK

/**
 * struct seq - one slot
 * @used: holds a sequence
 * @n_prompt: prompt tokens
 * @pos: positions run so far
 * @n_new: tokens sampled so far
 * @last: the last token fed (prompt or sampled)
 * @opt: sampling parameters
 * @sampler: its sampler
 * @user_data: the caller's
 * @job_n: positions of this step's job (0: none)
 * @inflight: micro-batched: its job is in flight (submitted, not reaped)
 * @cancelled: micro-batched: cancelled while its job was in flight; the
 *	slot is free once that job is reaped
 * @counts: times each token was sampled (penalties only; else NULL)
 */
struct seq {
	int used;
	unsigned int n_prompt;
	unsigned int pos;
	unsigned int n_new;
	int last;
	struct wafer_batch_seq opt;
	struct wafer_sampler sampler;
	uint64_t user_data;
	unsigned int job_n;
	int inflight;
	int cancelled;
	uint32_t *counts;
};

/**
 * struct wafer_batch - the batch
 * @dev: the model's device
 * @ctx: the context, one slot per sequence
 * @in: token ids, ctx_len per slot
 * @out: per slot, @slot_out bytes: @chunk results, then on a kernel
 *	device the job's chunk times (@times_len)
 * @seq: the slots
 * @jobs: a step's jobs
 * @cpl: a step's completions
 * @slots: slot count
 * @ctx_len: positions per slot
 * @vocab: the model's vocabulary
 * @chunk: prompt tokens per job at most
 * @slot_out: bytes of @out per slot
 * @times_len: bytes for a job's chunk times (WAFER_JOB_TIMES); 0: the
 *	jobs ask for none
 * @active: slots in use
 * @micro: micro-batches (1: lockstep); slot i is in micro-batch i % @micro
 * @fifo: micro-batched: the micro-batches in flight, oldest first
 * @fifo_head: the oldest's index in @fifo
 * @fifo_n: micro-batches in flight
 * @held: micro-batched: a completion per slot reaped before its
 *	micro-batch's turn
 * @held_ok: which @held entries hold one
 */
struct wafer_batch {
	struct wafer_dev *dev;
	struct wafer_ctx *ctx;
	struct wafer_bo *in;
	struct wafer_bo *out;
	struct seq *seq;
	struct wafer_job *jobs;
	struct wafer_completion *cpl;
	unsigned int slots;
	unsigned int ctx_len;
	unsigned int vocab;
	unsigned int chunk;
	uint64_t slot_out;
	uint32_t times_len;
	unsigned int active;
	unsigned int micro;
	unsigned int *fifo;
	unsigned int fifo_head;
	unsigned int fifo_n;
	struct wafer_completion *held;
	uint8_t *held_ok;
};

/* Where slot @i's results start in b->out. */
static inline uint64_t wafer_batch_out_offset(const struct wafer_batch *b, unsigned int i)
{
	return (uint64_t)i * b->slot_out;
}

/*
 * wafer_batch_seq.c: slot @i's next job (a prompt chunk or its last token)
 * into @j; its positions.
 */
unsigned int wafer_batch_seq_job(struct wafer_batch *b, unsigned int i, struct wafer_job *j);

/* The events of the @got completions in b->cpl: a token, an end, or a failure. */
unsigned int wafer_batch_events(struct wafer_batch *b, unsigned int got,
				struct wafer_batch_event *ev, struct wafer_batch_stats *st);

/* Ends @s with @end; fills @ev's end and status. */
void wafer_batch_finish(struct wafer_batch *b, struct seq *s, int end, int status,
			struct wafer_batch_event *ev);

/* wafer_batch_mb.c: the micro-batch state of a new batch, and freeing it. */
int wafer_batch_micro_init(struct wafer_batch *b, unsigned int micro);
void wafer_batch_micro_fini(struct wafer_batch *b);

/* A micro-batched wafer_batch_step(). */
int wafer_batch_step_micro(struct wafer_batch *b, struct wafer_batch_event *ev,
			   struct wafer_batch_stats *st);

#endif /* WAFER_BATCH_H */
