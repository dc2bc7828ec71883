/* SPDX-License-Identifier: MIT */
/*
 * wafer_afd.h - the attention-FFN disaggregation backend's state, shared by
 * wafer_afd.c (members, buffers, models, contexts) and wafer_afd_flow.c
 * (jobs).
 *
 * An AFD device is a struct wafer_dev whose backend drives, through a
 * struct wafer_chain (wafer_chain.h), two groups of members: members 0..na-1 hold the attention part of each layer
 * (WFW_PART_ATTN, with the KV cache; member i a contiguous range of the
 * layers), members na..na+nf-1 its FFN part (WFW_PART_FFN).  A job of the
 * caller is cut into micro-batches of at most @mb tokens; each
 * micro-batch ping-pongs: attention of layer 0 on its attention member,
 * FFN of layer 0 on its FFN member, attention of layer 1, ... 2 L steps,
 * each a RUN_JOB of one layer part (WAFER_JOB_HW_LAYER), the activation
 * records going back and forth in the micro-batch's two buffer halves.
 * While one micro-batch is in attention another can be in the FFN, so
 * both groups work (MegaScale-Infer's ping-pong pipeline).
 *
 * Expert parallelism (ne > 0, wafer_afd_ep.c): members na+nf.. hold the
 * routed experts (WFW_PART_XSHARD), the FFN members the rest of each MoE
 * layer (WFW_PART_XHOME), and a layer is 4 + 2 ne steps: attention,
 * ROUTE, UP on each expert member, GLU, DOWN on each, FIN.
 */
#ifndef WAFER_AFD_H
#define WAFER_AFD_H

#include <stddef.h>

#include "../wafer_backend.h"
#include "wafer_chain.h"
#include "wfs_model.h"

/* Devices per group. */
#define AFD_MAX_GROUP		8
#define AFD_MAX			(3 * AFD_MAX_GROUP)
_Static_assert(AFD_MAX <= WAFER_CHAIN_MAX, "the groups are one chain");
/* Tokens per micro-batch by default (wafer_afd_opts.micro_batch_tokens). */
#define AFD_MB			16
/* Micro-batches in flight at once. */
#define AFD_MAX_INFLIGHT	256
/* Tokens of a caller's job. */
#define AFD_MAX_TOKENS		64
/* The caller's jobs in flight: each takes a micro-batch at least. */
#define AFD_MAX_JOBS		64
#define AFD_MAX_MODELS		4
#define AFD_MAX_CTX		64
_Static_assert(AFD_MAX_INFLIGHT <= WAFER_CHAIN_REAP_MAX, "a reap takes every member's steps");

/** struct afd_bo - a buffer: on[0] allocated on member 0, views on the others */
struct afd_bo {
	struct wafer_bo *on[AFD_MAX];
};

/**
 * struct afd_model - a model split into parts over the members
 * @used: the entry holds a model
 * @L: layers of the model
 * @ld: each member's load (its part of its layer range)
 * @act_size: bytes of one activation record
 * @xrec: expert parallelism: bytes of one expert record (struct wfw_xrec)
 * @dim: expert parallelism: the model's width
 * @a3_off: expert parallelism: offset of a record's W3 units
 * @y_off: expert parallelism: offset of a record's s64 sum
 * @n_experts: expert parallelism: routed experts a layer
 * @spl: steps per layer: 2 (attention, FFN), or 4 + 2 ne
 * @nhalf: buffers per slot: 2, or 3 with expert parallelism
 * @buf: the micro-batches' buffers (on member 0), AFD_MAX_INFLIGHT slots
 *	of @nhalf halves of @half bytes each
 * @view: @buf on each member
 * @half: bytes of a half: @mb records or results, then the input's
 *	trailer (NOT_BEFORE's u64, WFW_JOB_LAYER's u32)
 */
struct afd_model {
	int used;
	unsigned int L;
	struct wafer_load_hw ld[AFD_MAX];
	uint32_t act_size;
	uint32_t xrec;
	uint32_t dim;
	uint32_t a3_off;
	uint32_t y_off;
	uint32_t n_experts;
	unsigned int spl;
	unsigned int nhalf;
	struct wafer_bo *buf;
	struct wafer_bo *view[AFD_MAX];
	uint64_t half;
};

/**
 * struct afd_ctx - a context: one per member
 * @used: the entry holds a context
 * @model: its afd_model index
 * @id: each member's context id
 * @kv: each member's KV bytes (the FFN members': 0)
 * @done_ns: per slot, the latest modelled time a job of it left the FFN
 *	of the last layer (the first step's NOT_BEFORE floor)
 * @slots: slots
 */
struct afd_ctx {
	int used;
	unsigned int model;
	uint32_t id[AFD_MAX];
	uint64_t kv[AFD_MAX];
	uint64_t *done_ns;
	unsigned int slots;
};

/**
 * struct afd_job - a job of the caller
 * @used: in flight
 * @user_data: the caller's
 * @left: its micro-batches not finished
 * @status: the first failure, or 0
 * @t0: modelled time its first step started (@started)
 * @started: @t0 is known
 * @t_done: the latest modelled time one of its micro-batches finished
 */
struct afd_job {
	int used;
	uint64_t user_data;
	unsigned int left;
	int status;
	uint64_t t0;
	int started;
	uint64_t t_done;
};

/**
 * struct afd_rec - a micro-batch on its way through the 2 L steps
 * @used: in flight
 * @job: the caller's job, @start_pos/@n_tokens the micro-batch's
 * @parent: its afd_job index
 * @step: the step now running: layer step / 2, attention when even
 * @out_offset: where its results go in the caller's buffer
 * @scratch: its results are not wanted (a job's earlier micro-batch
 *	without WAFER_JOB_ALL_POSITIONS): they go to the slot's buffer
 * @no: its number in its job (WAFER_JOB_TIMES: where its records go)
 * @pend: non-zero: its step waits for room on member @pend_k, queued
 *	in this order (afd.pend_seq)
 * @pend_k: that member
 * @x_t_ns: expert parallelism: the latest modelled time an expert member's
 *	reply of the running exchange arrives (the home's next phase starts
 *	then; the later members must still see the dispatch's time)
 */
struct afd_rec {
	int used;
	struct wafer_job_hw job;
	unsigned int parent;
	unsigned int step;
	uint64_t out_offset;
	int scratch;
	unsigned int no;
	uint64_t pend;
	unsigned int pend_k;
	uint64_t x_t_ns;
};

/**
 * struct afd - the AFD backend's state (struct wafer_dev.priv)
 * @ch: the members, attention, FFN then expert ones (wafer_chain.h; its
 *	lock guards what follows, its hooks move the micro-batches on step by
 *	step; polled (kernel devices), the caller's reap collects the
 *	completions and posts the next steps)
 * @na: attention members (0..na-1)
 * @nf: FFN members (na..na+nf-1)
 * @ne: expert members (na+nf..na+nf+ne-1; 0: no expert parallelism)
 * @mb: tokens of a micro-batch at most
 * @models: loaded models
 * @ctxs: contexts
 * @jobs: the caller's jobs in flight
 * @rec: micro-batches in flight
 * @done: completions of finished jobs, not reaped yet (the chain's @cond
 *	is signalled when one is)
 * @n_done: entries of @done
 * @n_pend: per member, steps waiting for room on it (a member holds fewer
 *	jobs than micro-batches can be in flight): posted in order as its
 *	jobs complete, before any later step to it
 * @pend_seq: the last queued step's number
 */
struct afd {
	struct wafer_chain ch;
	unsigned int na, nf, ne;
	unsigned int mb;
	struct afd_model models[AFD_MAX_MODELS];
	struct afd_ctx ctxs[AFD_MAX_CTX];
	struct afd_job jobs[AFD_MAX_JOBS];
	struct afd_rec rec[AFD_MAX_INFLIGHT];
	struct wafer_completion done[AFD_MAX_JOBS];
	unsigned int n_done;
	unsigned int n_pend[AFD_MAX];
	uint64_t pend_seq;
};

static inline struct afd *afd_of(const struct wafer_dev *dev)
{
	return dev->priv;
}

static inline struct afd *afd_of_chain(struct wafer_chain *ch)
{
	return (struct afd *)((char *)ch - offsetof(struct afd, ch));
}

static inline struct wafer_bo *afd_bo_on(const struct wafer_bo *bo, unsigned int k)
{
	return ((struct afd_bo *)bo->priv)->on[k];
}

/* The member of group [@first, @first + @n) whose range holds layer @l of @L. */
static inline unsigned int afd_member(unsigned int first, unsigned int n, unsigned int L,
				      unsigned int l)
{
	unsigned int i = 0;

	while ((i + 1) * L / n <= l)
		i++;
	return first + i;
}

static inline unsigned int afd_members(const struct afd *a)
{
	return a->na + a->nf + a->ne;
}

/* Member @k's group and its number there (*@i), for messages. */
static inline const char *afd_group(const struct afd *a, unsigned int k, unsigned int *i)
{
	if (k < a->na) {
		*i = k;
		return "attention";
	}
	if (k < a->na + a->nf) {
		*i = k - a->na;
		return "FFN";
	}
	*i = k - a->na - a->nf;
	return "expert";
}

static inline struct afd_model *afd_rec_model(struct afd *a, const struct afd_rec *r)
{
	return &a->models[a->ctxs[r->job.ctx_id - 1].model];
}

/* Buffer @h of micro-batch @r's slot: its offset in the model's buffers. */
static inline uint64_t afd_half_off(struct afd *a, const struct afd_rec *r, unsigned int h)
{
	const struct afd_model *am = afd_rec_model(a, r);

	return ((uint64_t)(r - a->rec) * am->nhalf + h) * am->half;
}

static inline uint8_t *afd_half(struct afd *a, const struct afd_rec *r, unsigned int h)
{
	return (uint8_t *)afd_rec_model(a, r)->buf->map + afd_half_off(a, r, h);
}

/**
 * struct afd_step - what one step of a micro-batch runs
 * @k: the member
 * @lw: the LAYER word (the layer; expert parallelism: | phase << 24)
 * @in: the buffer it reads (its input, then @lw)
 * @in_rec: bytes of an input record (0: token ids, the first step)
 * @out: the buffer it writes
 * @out_rec: bytes of an output record (0: results, the last step)
 */
struct afd_step {
	unsigned int k;
	uint32_t lw;
	unsigned int in;
	uint32_t in_rec;
	unsigned int out;
	uint32_t out_rec;
};

/* wafer_afd_ep.c: expert parallelism's steps */
void wafer_afd_ep_step(struct afd *a, const struct afd_rec *r, struct afd_step *st);
void wafer_afd_ep_after(struct afd *a, struct afd_rec *r);
void wafer_afd_ep_next(struct afd *a, struct afd_rec *r);
int wafer_afd_ep_load(struct afd *a, struct afd_model *am, const struct wfs_model_info *mi,
		      uint32_t expert_group);
void wafer_afd_ep_range(const struct afd *a, unsigned int e, unsigned int i,
			uint32_t *first, uint32_t *count);

/* wafer_afd_drain.c: the chain's op for objects destroyed while jobs use them */
unsigned int wafer_afd_running(struct wafer_chain *ch, const struct wafer_chain_gone *g);

/* wafer_afd_flow.c: the micro-batches' steps; the chain's ops. */
void wafer_afd_step_of(struct afd *a, const struct afd_rec *r, struct afd_step *st);
int wafer_afd_submit(struct wafer_dev *dev, const struct wafer_job_hw *jobs, unsigned int n);
int wafer_afd_reap(struct wafer_dev *dev, struct wafer_completion *out, unsigned int max,
		   unsigned int min, uint64_t deadline_ns);
void wafer_afd_completed(struct wafer_chain *ch, unsigned int k,
			 const struct wafer_completion *c, unsigned int n);
void wafer_afd_failed(struct wafer_chain *ch, unsigned int k, int err);

/* wafer_afd_times.c: WAFER_JOB_TIMES, a record per micro-batch and step */
uint64_t wafer_afd_times_len(const struct wafer_dev *dev, unsigned int n_tokens);
int wafer_afd_times_check(const struct afd *a, const struct wafer_job_hw *j, unsigned int i);
void wafer_afd_times_step(struct afd *a, const struct afd_rec *r, unsigned int k,
			  const struct wafer_completion *c);

#endif /* WAFER_AFD_H */
