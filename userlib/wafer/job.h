/* SPDX-License-Identifier: MIT */
/*
 * wafer/job.h - jobs: submit many, reap completions (batch-friendly).
 *
 * Part of the public API; include "wafer.h", which includes every topic.
 */
#ifndef WAFER_H_JOB
#define WAFER_H_JOB

#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* -------------------------------------------------------------- jobs -- */

/** Most (token, logit) pairs a result carries. */
#define WAFER_MAX_TOPK		32
/** Fraction bits of the fixed-point logits in results. */
#define WAFER_LOGIT_FRAC_BITS	16

/** WAFER_JOB_ALL_POSITIONS: one result per input position, not just the last. */
#define WAFER_JOB_ALL_POSITIONS	(1u << 0)
/**
 * WAFER_JOB_NOP: a job that does nothing: the device completes it at once
 * (status 0, no device time, no buffer or KV touched), so it costs what
 * submitting and completing a job cost.  It names @ctx and @slot only:
 * @n_tokens, @start_pos, @top_k, other flags, @in, @out and the offsets
 * must be 0 / NULL (-EINVAL).  Not on a pipeline (-EOPNOTSUPP).
 */
#define WAFER_JOB_NOP		(1u << 3)
/**
 * WAFER_JOB_TIMES: the device also writes the job's modelled timeline
 * into @out at @out_offset + @times_offset: a struct wafer_chunk_time per
 * chunk and stage (WAFER_CHUNK_VALID set in each it wrote; zero the area
 * first to tell them apart).  @times_offset is 8-byte aligned, past the
 * results; @times_len holds them all: wafer_times_len() bytes do.  On a
 * pipeline, each device's records one after another (the first device's
 * first, @n_tokens records per stage of each), @stage counting the
 * pipeline's stages (device k's stage s: the stages of devices 0..k-1
 * plus s).  On wafer_open_afd()'s device, a record per micro-batch and
 * layer part (micro-batch b's part s at b * 2 L + s: the attention of
 * layer s / 2 when s is even, its FFN when odd), @stage the first stage
 * of the member that ran it, its hop out the link to the other group.
 */
#define WAFER_JOB_TIMES		(1u << 4)

/** WAFER_CHUNK_VALID: the device wrote this record. */
#define WAFER_CHUNK_VALID	(1u << 0)
/** WAFER_CHUNK_LINK: the chunk's hop out is the link to the next device. */
#define WAFER_CHUNK_LINK	(1u << 1)

/**
 * struct wafer_chunk_time - one chunk on one stage, in modelled time
 *	(the device's own numbers, the same on every backend)
 * @stage: stage index on the device
 * @pos0: the chunk's first position
 * @n_tokens: its tokens
 * @flags: WAFER_CHUNK_*
 * @start_ns: modelled ns the stage starts it
 * @end_ns: ... is done with it
 * @hop_end_ns: ... it reaches the next stage, device, or the host
 */
struct wafer_chunk_time {
	uint32_t stage;
	uint32_t pos0;
	uint32_t n_tokens;
	uint32_t flags;
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t hop_end_ns;
};

/**
 * struct wafer_job - run @n_tokens tokens of sequence @slot
 * @ctx: context
 * @slot: sequence, < wafer_ctx_slots()
 * @start_pos: position of the first token (earlier ones must have run)
 * @n_tokens: tokens, >= 1 (0 for a NOP); start_pos + n_tokens <= wafer_ctx_len()
 * @flags: WAFER_JOB_*
 * @top_k: (token, logit) pairs per result, 0..WAFER_MAX_TOPK
 * @in: buffer holding @n_tokens uint32_t token ids at @in_offset
 * @in_offset: byte offset, 4-byte aligned
 * @out: buffer receiving the results at @out_offset
 * @out_offset: byte offset, 8-byte aligned; WAFER_RESULT_SIZE(@top_k)
 *	bytes per result
 * @user_data: returned in the job's completion
 * @times_offset: WAFER_JOB_TIMES: the timeline's offset from @out_offset
 * @times_len: WAFER_JOB_TIMES: its bytes (0 without the flag)
 */
struct wafer_job {
	struct wafer_ctx *ctx;
	unsigned int slot;
	unsigned int start_pos;
	unsigned int n_tokens;
	unsigned int flags;
	unsigned int top_k;
	struct wafer_bo *in;
	uint64_t in_offset;
	struct wafer_bo *out;
	uint64_t out_offset;
	uint64_t user_data;
	uint32_t times_offset;
	uint32_t times_len;
};

/**
 * wafer_times_len() - bytes a WAFER_JOB_TIMES job of @n_tokens on @dev
 *	may write: a record per token and stage, more than the chunks need
 * @dev: the device
 * @n_tokens: the job's tokens
 *
 * Return: the bytes (a pipeline: for all its devices' stages).
 */
uint64_t wafer_times_len(const struct wafer_dev *dev, unsigned int n_tokens);

/**
 * struct wafer_completion - a finished job
 * @user_data: the job's
 * @status: 0, or the job's negative errno
 * @device_ns: modelled device time the job took (a pipeline: its makespan
 *	across the devices, from its first chunk starting on the first device
 *	to its last result reaching the host from the last one)
 * @done_ns: the modelled time it completed, on the device's timeline (a
 *	pipeline: its devices share one); 0 where the backend does not say
 *	(the kernel backend's io_uring path, or a kernel without
 *	&drm_wafer_wait.done_ns)
 */
struct wafer_completion {
	uint64_t user_data;
	int status;
	uint64_t device_ns;
	uint64_t done_ns;
};

/**
 * wafer_submit() - queue jobs
 * @dev: device
 * @jobs: jobs, run in order per slot
 * @n: how many
 *
 * All jobs are validated before any is queued.  The kernel backend hands
 * them to the submit path (io_uring: one io_uring_submit for the batch).
 *
 * Return: the number of jobs queued (a prefix of @jobs; fewer than @n when
 * the device's in-flight limit was reached: reap, then submit the rest),
 * or a negative errno (-EAGAIN: none fit).
 */
int wafer_submit(struct wafer_dev *dev, const struct wafer_job *jobs, unsigned int n);

/**
 * wafer_reap() - collect completions
 * @dev: device
 * @out: completions, in completion order
 * @max: capacity of @out
 * @min: wait until at least this many completed (or @timeout_ms passed)
 * @timeout_ms: how long to wait for @min; -1 for the device's job timeout
 *	plus a margin
 *
 * Return: the number of completions written (possibly fewer than @min on
 * timeout; 0 if nothing is in flight), or a negative errno.
 */
int wafer_reap(struct wafer_dev *dev, struct wafer_completion *out,
	       unsigned int max, unsigned int min, int timeout_ms);

/** wafer_inflight() - jobs submitted and not reaped yet. */
unsigned int wafer_inflight(const struct wafer_dev *dev);

/**
 * struct wafer_topk - one (token, logit) pair
 * @token: token id
 * @logit: logit, fixed point with WAFER_LOGIT_FRAC_BITS fraction bits
 */
struct wafer_topk {
	uint32_t token;
	int32_t logit;
};

/**
 * struct wafer_token_result - the result for one position
 * @position: position the result follows
 * @argmax: most likely next token
 * @argmax_logit: its logit
 * @top_k: entries in @topk
 * @topk: best pairs, best first
 */
struct wafer_token_result {
	uint32_t position;
	uint32_t argmax;
	int32_t argmax_logit;
	uint32_t top_k;
	struct wafer_topk topk[];
};

/** WAFER_RESULT_SIZE: bytes of one result carrying @k pairs. */
#define WAFER_RESULT_SIZE(k)	(16u + 8u * (uint32_t)(k))

/**
 * wafer_result() - the @i-th result of a job's output
 * @out: the job's output buffer
 * @out_offset: the job's out_offset
 * @top_k: the job's top_k
 * @i: result index
 *
 * Return: the record, or NULL if it lies outside the buffer.
 */
const struct wafer_token_result *wafer_result(const struct wafer_bo *out,
					      uint64_t out_offset,
					      unsigned int top_k, unsigned int i);

#ifdef __cplusplus
}
#endif

#endif /* WAFER_H_JOB */
