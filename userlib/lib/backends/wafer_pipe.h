/* SPDX-License-Identifier: MIT */
/*
 * wafer_pipe.h - the pipeline backend's state, shared by wafer_pipe.c
 * (members, buffers, models, contexts) and wafer_pipe_flow.c (jobs).
 *
 * A pipeline is a struct wafer_dev whose backend drives other devices (its
 * members) through a struct wafer_chain (wafer_chain.h): it sits above the
 * kernel and inproc backends and below the generic front ends, which see
 * one device.
 *
 * A model of the pipeline is one layer range ("part") per member, parts
 * 0..n-1 on members 0..n-1.  Between part i and part i+1 sits link i: a
 * buffer of member i (its jobs' OUT_ACT records) imported into member i+1
 * (its jobs' IN_ACT records), cut into one slot per job in flight.
 * Each slot holds a job's activation records, then room for member i's
 * chunk times (WAFER_JOB_TIMES), which go on to the caller's buffer when
 * the job finishes (pipe_times_gather()).
 */
#ifndef WAFER_PIPE_H
#define WAFER_PIPE_H

#include <stddef.h>

#include "../wafer_backend.h"
#include "wafer_chain.h"

/* Jobs in flight through a pipeline at once (and slots per link). */
#define PIPE_MAX_INFLIGHT	64
#define PIPE_MAX_MODELS		4
#define PIPE_MAX_CTX		64
#define PIPE_MAX		WAFER_CHAIN_MAX
/* 64-bit words of a record's bitmap of parts done. */
#define PIPE_DONE_WORDS		((PIPE_MAX + 63) / 64)
_Static_assert(PIPE_MAX_INFLIGHT <= WAFER_CHAIN_REAP_MAX, "a reap takes every part's jobs");

/**
 * struct pipe_bo - a buffer of the pipeline
 * @on: the buffer on each member: on[0] allocated there, the others views
 */
struct pipe_bo {
	struct wafer_bo *on[PIPE_MAX];
};

/**
 * struct pipe_model - a model split over the members
 * @used: the entry holds a model
 * @n: parts (members it occupies)
 * @part: each part's load, as its member's backend answered
 * @first: each part's first layer
 * @link: link i's buffer on member i
 * @link_in: link i's view on member i + 1
 * @stride: bytes of one slot of a link: WAFER_PIPE_MAX_TOKENS records,
 *	then the chunk times of a job of as many tokens (at @times_at)
 * @times_at: where the chunk times start in a slot
 * @stage0: each part's first stage in the pipeline's numbering (the
 *	stages of the members before it)
 * @act_size: bytes of one activation record
 * @chained: the members take syncobjs (kernel, ioctl path): a job's parts
 *	are all queued at once, part k + 1 waiting for part k's fence
 * @sync_out: per link and job slot, the syncobj part k signals (member k)
 * @sync_in: the same syncobj on member k + 1
 * @stream: every part streams its weights (struct wafer_load_hw.stream)
 * @expert_group: every part's expert groups (struct wafer_load_hw)
 * @stage_in: with two parts or more, part 0's inputs on member 0, a slot
 *	per job in flight: the caller's token ids, then the job's floor
 *	(WAFER_JOB_HW_NOT_BEFORE, wafer_pipe_clock.c)
 * @in_stride: bytes of one slot of @stage_in
 */
struct pipe_model {
	int used;
	unsigned int n;
	struct wafer_load_hw part[PIPE_MAX];
	unsigned int first[PIPE_MAX];
	struct wafer_bo *link[PIPE_MAX];
	struct wafer_bo *link_in[PIPE_MAX];
	uint64_t stride;
	uint64_t times_at;
	unsigned int stage0[PIPE_MAX + 1];
	uint32_t act_size;
	int chained;
	uint32_t sync_out[PIPE_MAX][PIPE_MAX_INFLIGHT];
	uint32_t sync_in[PIPE_MAX][PIPE_MAX_INFLIGHT];
	int stream;
	uint32_t expert_group;
	struct wafer_bo *stage_in;
	uint64_t in_stride;
};

/**
 * struct pipe_slot - the pipeline's view of one sequence slot's clock
 * @pending: its jobs in flight through the pipeline
 * @done_ns: the latest modelled time one of its jobs left the last part
 */
struct pipe_slot {
	unsigned int pending;
	uint64_t done_ns;
};

/**
 * struct pipe_ctx - a context: one per part
 * @used: the entry holds a context
 * @model: its pipe_model index
 * @id: each part's context id on its member
 * @kv: each part's KV bytes
 * @slot: its slots' clocks (@slots of them)
 * @slots: slots
 */
struct pipe_ctx {
	int used;
	unsigned int model;
	uint32_t id[PIPE_MAX];
	uint64_t kv[PIPE_MAX];
	struct pipe_slot *slot;
	unsigned int slots;
};

/**
 * struct pipe_rec - a job on its way through the parts
 * @used: in flight
 * @job: the job as the caller gave it (pipeline buffers and ids)
 * @seq: submission order
 * @done: bit k: part k's member completed it (its job may still wait
 *	for its turn to move on); pipe_part_done() and pipe_set_part_done()
 * @status: each part's completion status
 * @device_ns: modelled device time, the parts so far
 * @floor: part 0's floor (WAFER_JOB_HW_NOT_BEFORE)
 * @start_ns: modelled time part 0 started (if @started)
 * @started: @start_ns is known
 * @done_ns: modelled time the last part completed (0: not known)
 * @clocked: counted in its slot's @pending
 * @finished: every part is done: it waits for the caller's reap
 * @result: then, its status (the first failed part's), kept as its
 *	context and model may go before it is reaped (wafer_pipe_drain.c)
 */
struct pipe_rec {
	int used;
	struct wafer_job_hw job;
	uint64_t seq;
	uint64_t done[PIPE_DONE_WORDS];
	int status[PIPE_MAX];
	uint64_t device_ns;
	uint64_t floor;
	uint64_t start_ns;
	int started;
	uint64_t done_ns;
	int clocked;
	int finished;
	int result;
};

/* Part @k of @r completed (or will not run). */
static inline int pipe_part_done(const struct pipe_rec *r, unsigned int k)
{
	return !!(r->done[k / 64] & (1ull << (k % 64)));
}

static inline void pipe_set_part_done(struct pipe_rec *r, unsigned int k)
{
	r->done[k / 64] |= 1ull << (k % 64);
}

/* Parts 0..@n-1 of @r are all done. */
static inline int pipe_parts_done(const struct pipe_rec *r, unsigned int n)
{
	unsigned int k;

	for (k = 0; k < n; k++)
		if (!pipe_part_done(r, k))
			return 0;
	return 1;
}

/** struct pipe_fifo - record indices in order */
struct pipe_fifo {
	unsigned int head;
	unsigned int n;
	uint8_t r[PIPE_MAX_INFLIGHT];
};

/**
 * struct pipe - the pipeline backend's state (struct wafer_dev.priv)
 * @ch: the members, parts 0..n-1 on members 0..n-1 (wafer_chain.h; its
 *	lock guards what follows, its hooks move jobs on as their parts
 *	complete; polled, wafer_pipe_reap() does)
 * @split: the caller's layer counts, or all 0 (automatic)
 * @models: loaded models
 * @ctxs: contexts
 * @rec: jobs in flight
 * @seq: next submission number
 * @at: per member, the records it runs, in the order they went there
 * @finished: records done everywhere, not reaped yet (the chain's @cond
 *	is signalled when one is)
 * @reaped_ns: the latest modelled time a job the caller reaped left the
 *	last part (the host's modelled now, wafer_pipe_clock.c)
 */
struct pipe {
	struct wafer_chain ch;
	unsigned int split[PIPE_MAX];
	struct pipe_model models[PIPE_MAX_MODELS];
	struct pipe_ctx ctxs[PIPE_MAX_CTX];
	struct pipe_rec rec[PIPE_MAX_INFLIGHT];
	uint64_t seq;
	struct pipe_fifo at[PIPE_MAX];
	struct pipe_fifo finished;
	uint64_t reaped_ns;
};

static inline struct pipe *pipe_of(const struct wafer_dev *dev)
{
	return dev->priv;
}

static inline struct pipe *pipe_of_chain(struct wafer_chain *ch)
{
	return (struct pipe *)((char *)ch - offsetof(struct pipe, ch));
}

/* A pipeline buffer's view on member @i. */
static inline struct wafer_bo *pipe_bo_on(const struct wafer_bo *bo, unsigned int i)
{
	return ((struct pipe_bo *)bo->priv)->on[i];
}

/* wafer_pipe_flow.c: jobs through the parts; the chain's ops. */
int wafer_pipe_submit(struct wafer_dev *dev, const struct wafer_job_hw *jobs, unsigned int n);
int wafer_pipe_reap(struct wafer_dev *dev, struct wafer_completion *out, unsigned int max,
		    unsigned int min, uint64_t deadline_ns);
void pipe_completed(struct wafer_chain *ch, unsigned int k, const struct wafer_completion *c,
		    unsigned int n);
void pipe_failed(struct wafer_chain *ch, unsigned int k, int err);

/* wafer_pipe_drain.c: the chain's op for objects destroyed while jobs use them */
unsigned int pipe_running(struct wafer_chain *ch, const struct wafer_chain_gone *g);

/* wafer_pipe_times.c: WAFER_JOB_TIMES through the parts. */
int pipe_times_check(const struct pipe *p, const struct wafer_job_hw *j, unsigned int i);
void pipe_times_part(const struct pipe *p, const struct pipe_model *pm, const struct pipe_rec *r,
		     unsigned int k, struct wafer_job_hw *j);
void pipe_times_gather(const struct pipe *p, const struct pipe_model *pm,
		       const struct pipe_rec *r);

/* wafer_pipe_clock.c: the chain's modelled clock per slot. */
int pipe_clock_model(struct pipe *p, struct pipe_model *pm);
void pipe_clock_model_free(struct pipe_model *pm);
int pipe_clock_ctx(struct pipe_ctx *pc, unsigned int slots);
void pipe_clock_ctx_free(struct pipe_ctx *pc);
void pipe_clock_admit(struct pipe *p, struct pipe_rec *r);
void pipe_clock_unadmit(struct pipe *p, struct pipe_rec *r);
void pipe_clock_part(const struct pipe *p, const struct pipe_model *pm, const struct pipe_rec *r,
		     unsigned int k, struct wafer_job_hw *j);
void pipe_clock_completed(const struct pipe *p, struct pipe_rec *r, unsigned int k,
			  const struct wafer_completion *c);
void pipe_clock_retire(struct pipe *p, struct pipe_rec *r, int status);
void pipe_clock_reaped(struct pipe *p, const struct pipe_rec *r, int status);

#endif /* WAFER_PIPE_H */
