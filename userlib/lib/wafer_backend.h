/* SPDX-License-Identifier: MIT */
/*
 * wafer_backend.h - the objects behind the public handles and the table of
 * operations each backend ("kernel", "inproc") provides.
 *
 * The generic front ends validate arguments, allocate the handle structs
 * and keep the bookkeeping (in-flight count, model/context links); a
 * backend only moves data to and from its device.  Backend operations set
 * wafer_last_error() on failure.
 */
#ifndef WAFER_BACKEND_H
#define WAFER_BACKEND_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "wafer.h"
#include "wafer_internal.h"

struct wafer_dev;

/**
 * struct wafer_bo - a buffer
 * @dev: its device
 * @map: CPU mapping
 * @size: bytes (page-rounded)
 * @handle: kernel: GEM handle; inproc: 0
 * @view_of: set when the buffer is another device's buffer made usable on
 *	@dev (@bo_import): @map is that buffer's, and destroying the view
 *	releases only what the import took
 * @priv: the pipeline backend's state of the buffer
 */
struct wafer_bo {
	struct wafer_dev *dev;
	void *map;
	size_t size;
	uint32_t handle;
	const struct wafer_bo *view_of;
	void *priv;
};

/**
 * struct wafer_model - a loaded model
 * @dev: its device
 * @id: the backend's model id
 * @info: dimensions, from the blob
 * @contexts: contexts alive (unload refuses while non-zero)
 * @kv_bytes: SRAM their KV caches take
 * @embed: what the backend said the loaded range holds (a whole model on
 *	one device: both)
 * @head: see @embed
 * @stream_bo: weight streaming: the blob's buffer, which the device reads
 *	the weights from until the unload (NULL: resident)
 */
struct wafer_model {
	struct wafer_dev *dev;
	uint32_t id;
	struct wafer_model_info info;
	unsigned int contexts;
	uint64_t kv_bytes;
	int embed;
	int head;
	struct wafer_bo *stream_bo;
};

/**
 * struct wafer_ctx - a KV cache
 * @model: its model
 * @id: the backend's context id
 * @slots: sequences
 * @ctx_len: positions per sequence
 * @kv_bytes: SRAM the KV cache took
 */
struct wafer_ctx {
	struct wafer_model *model;
	uint32_t id;
	unsigned int slots;
	unsigned int ctx_len;
	uint64_t kv_bytes;
};

/**
 * struct wafer_load_hw - one backend model load
 * @layer_first: in: first layer of the range to load (full-model numbering)
 * @layer_count: in: layers to load; 0 with @layer_first 0: all of them
 * @id: out: the backend's model id
 * @sram_bytes: out: SRAM the range's weights take
 * @n_layers: out: layers loaded
 * @embed: out: the range holds the embedding (its jobs take tokens)
 * @head: out: the range holds the classifier (its jobs give results)
 * @act_size: out: bytes of one activation record of the model
 * @stream: in: weight streaming (the backend keeps @bo's device address
 *	valid until the unload: the caller keeps the BO)
 * @part: in: the part of each layer to load (WFW_PART_*: 0 whole layers,
 *	attention, FFN; attention-FFN disaggregation, wafer_afd.c)
 * @expert_group: in: routed experts per expert group placed across the
 *	stages (LOAD_MODEL expert_group; 0: the firmware's default)
 * @expert_first: in: WFW_PART_XSHARD: its first routed expert
 * @expert_count: in: WFW_PART_XSHARD: its routed experts
 */
struct wafer_load_hw {
	uint32_t layer_first;
	uint32_t layer_count;
	uint32_t id;
	uint64_t sram_bytes;
	uint32_t n_layers;
	int embed;
	int head;
	uint32_t act_size;
	int stream;
	uint32_t part;
	uint32_t expert_group;
	uint32_t expert_first;
	uint32_t expert_count;
};

/* Job flags of struct wafer_job_hw beyond the public WAFER_JOB_* ones. */
#define WAFER_JOB_HW_IN_ACT	(1u << 30)	/* @in holds activation records */
#define WAFER_JOB_HW_OUT_ACT	(1u << 31)	/* @out receives activation records */
/* @in holds a u64 modelled floor after the token ids (WFW_JOB_NOT_BEFORE) */
#define WAFER_JOB_HW_NOT_BEFORE	(1u << 29)
/* the completion must carry done_ns (kernel io_uring: instead of device_ns) */
#define WAFER_JOB_HW_DONE_NS	(1u << 28)
/* @in holds a u32 layer after its input (and floor): a layer part's job */
#define WAFER_JOB_HW_LAYER	(1u << 27)

/**
 * struct wafer_job_hw - a validated job in backend terms
 * @ctx_id: the context's backend id
 * @slot: see struct wafer_job
 * @start_pos: see struct wafer_job
 * @n_tokens: see struct wafer_job
 * @flags: WAFER_JOB_* and WAFER_JOB_HW_*
 * @top_k: see struct wafer_job
 * @in: input buffer (NULL for a NOP)
 * @in_offset: see struct wafer_job
 * @out: output buffer (NULL for a NOP)
 * @out_offset: see struct wafer_job
 * @out_len: bytes the job may write at @out_offset (results, then times)
 * @times_offset: see struct wafer_job
 * @times_len: see struct wafer_job
 * @user_data: see struct wafer_job
 * @in_sync: where the handle of a syncobj of the device lives whose fence
 *	the job waits for (@sync_link), or NULL; the kernel may read it as
 *	late as the job's issue, so it stays valid until the job completes,
 *	and the syncobj is reset (@sync_reset) before it is used again
 * @out_sync: a syncobj that receives the job's fence, or 0
 * @layer: with WAFER_JOB_HW_LAYER, the layer whose part the job runs; the
 *	caller also writes it after the input, where the firmware reads it
 *	(the kernel's driver writes it there again from the descriptor)
 */
struct wafer_job_hw {
	uint32_t ctx_id;
	uint32_t slot;
	uint32_t start_pos;
	uint32_t n_tokens;
	uint32_t flags;
	uint32_t top_k;
	const struct wafer_bo *in;
	uint64_t in_offset;
	const struct wafer_bo *out;
	uint64_t out_offset;
	uint64_t out_len;
	uint64_t user_data;
	const uint32_t *in_sync;
	uint32_t out_sync;
	uint32_t times_offset;
	uint32_t times_len;
	uint32_t layer;
};

/**
 * struct wafer_backend_ops - what a backend implements
 * @name: "kernel" or "inproc"
 * @open: set dev->priv etc. from the options; fill dev->info
 * @close: release everything @open acquired
 * @submit_name: the submission path in use
 * @bo_create: allocate and map @bo->size bytes (zeroed): set map, handle
 * @bo_destroy: undo @bo_create or @bo_import
 * @bo_import: make @src, a buffer of another device of this backend,
 *	usable on @dev as @bo (kernel: PRIME export and import; inproc: the
 *	device's DMA window); NULL if the backend cannot share buffers
 * @model_load: load the layer range @ld asks for of the blob held in
 *	@bo[0, len); fill @ld's outputs
 * @model_unload: unload model @id
 * @ctx_create: allocate a context: set *id, *kv_bytes
 * @ctx_destroy: free context @id
 * @submit: queue @n validated jobs; return how many were queued or -errno
 *	(-EAGAIN when none fit)
 * @reap: collect up to @max completions, waiting until @min arrived or the
 *	absolute CLOCK_MONOTONIC @deadline_ns passed; return the count
 * @stats: fill the device's counters (struct wafer_dev_stats, zeroed)
 * @stage_stats: fill up to @max per-stage entries (@member 0); return the
 *	device's stage count (NULL: the backend cannot report them)
 * @expert_load: fill up to @max per-expert load entries; return the
 *	device's entry count (NULL: the backend cannot report them)
 * @model_parts: the layer ranges of model @id, at most @max into @out;
 *	return their count (NULL: one range, the whole model, on @dev)
 * @model_expert_load: @expert_load of model @id (the backend's id) itself
 *	(NULL: the backend cannot report them, or a pipeline: @member_model)
 * @member: pipelines: the member count and member @i (NULL: a device)
 * @member_model: pipelines: member @k's id of model @id's part there, 0
 *	where the model has no layer
 * @sync_link: a syncobj of @dev (*@h) shared with @to (*@h_to), for
 *	jobs of @to to wait for jobs of @dev with no return to the caller
 *	(@in_sync, @out_sync); -EOPNOTSUPP where jobs cannot take them
 *	(inproc); NULL likewise
 * @sync_reset: empty syncobj @h of @dev before a job fills it again, so
 *	that the job waiting for it does not take the last use's fence
 * @sync_free: destroy syncobj @h of @dev
 * @set_cpl_hook: hand every job completion to @fn (called from the
 *	device's completion thread, no lock of the backend held) instead of
 *	queuing it for @reap; NULL where the backend cannot
 */
struct wafer_backend_ops {
	const char *name;
	int (*open)(struct wafer_dev *dev, const struct wafer_open_opts *o);
	void (*close)(struct wafer_dev *dev);
	const char *(*submit_name)(const struct wafer_dev *dev);
	int (*bo_create)(struct wafer_dev *dev, struct wafer_bo *bo);
	void (*bo_destroy)(struct wafer_dev *dev, struct wafer_bo *bo);
	int (*bo_import)(struct wafer_dev *dev, const struct wafer_bo *src, struct wafer_bo *bo);
	int (*model_load)(struct wafer_dev *dev, struct wafer_bo *bo, size_t len,
			  struct wafer_load_hw *ld);
	int (*model_unload)(struct wafer_dev *dev, uint32_t id);
	int (*ctx_create)(struct wafer_dev *dev, uint32_t model_id, unsigned int slots,
			  unsigned int ctx_len, uint32_t *id, uint64_t *kv_bytes);
	int (*ctx_destroy)(struct wafer_dev *dev, uint32_t id);
	int (*submit)(struct wafer_dev *dev, const struct wafer_job_hw *jobs, unsigned int n);
	int (*reap)(struct wafer_dev *dev, struct wafer_completion *out, unsigned int max,
		    unsigned int min, uint64_t deadline_ns);
	int (*stats)(struct wafer_dev *dev, struct wafer_dev_stats *st);
	int (*stage_stats)(struct wafer_dev *dev, struct wafer_stage_stats *out, unsigned int max);
	int (*expert_load)(struct wafer_dev *dev, unsigned int nth,
			   struct wafer_expert_load *out, unsigned int max);
	int (*model_parts)(const struct wafer_dev *dev, uint32_t id,
			   struct wafer_model_part *out, unsigned int max);
	int (*model_expert_load)(struct wafer_dev *dev, uint32_t id,
				 struct wafer_expert_load *out, unsigned int max);
	struct wafer_dev *(*member)(struct wafer_dev *dev, unsigned int i, unsigned int *n);
	uint32_t (*member_model)(const struct wafer_dev *dev, uint32_t id, unsigned int k);
	int (*sync_link)(struct wafer_dev *dev, struct wafer_dev *to, uint32_t *h, uint32_t *h_to);
	int (*sync_reset)(struct wafer_dev *dev, uint32_t h);
	void (*sync_free)(struct wafer_dev *dev, uint32_t h);
	void (*set_cpl_hook)(struct wafer_dev *dev,
			     void (*fn)(void *arg, const struct wafer_completion *c), void *arg);
	/* WAFER_JOB_TIMES bytes of a job of @n_tokens (NULL: a record per token and stage). */
	uint64_t (*times_len)(const struct wafer_dev *dev, unsigned int n_tokens);
};

/**
 * struct wafer_dev - an open device
 * @ops: its backend
 * @priv: the backend's state
 * @info: wafer_query()'s answer, read at open
 * @index: kernel: N of /dev/accel/accelN; inproc: -1
 * @inflight: jobs submitted and not reaped
 */
struct wafer_dev {
	const struct wafer_backend_ops *ops;
	void *priv;
	struct wafer_info info;
	int index;
	unsigned int inflight;
	struct wafer_trace *trace;
};

/* wafer_trace.c: the next job number of the trace's run. */
unsigned int wafer_trace_next_job(struct wafer_trace *t);
/* ... and its host time origin: the first call's wafer_now_ns(). */
uint64_t wafer_trace_host_t0(struct wafer_trace *t);

/**
 * struct wafer_trace_run - the jobs of one wafer_run_positions() call, traced
 *	(wafer_trace_run.c)
 * @dev: their device (@dev->trace set)
 * @bo: results and modelled timelines of all of them
 * @jobs: per job: where its results belong, where they and its times are
 *	in @bo, its host submit and completion times and modelled ns
 * @n: jobs
 */
struct wafer_trace_run {
	struct wafer_dev *dev;
	struct wafer_bo *bo;
	struct wafer_trace_job *jobs;
	unsigned int n;
};

/*
 * When @dev is traced: gives the @n jobs WAFER_JOB_TIMES and outputs in a
 * buffer of their own (their results are copied back by
 * wafer_trace_run_end()) and notes the submit time.  0 (also untraced), or
 * -errno; @tr is set up either way for the calls below.
 */
int wafer_trace_run_begin(struct wafer_dev *dev, struct wafer_job *j, unsigned int n,
			  struct wafer_trace_run *tr);
/* A completion reaped (its user_data is the job's index). */
void wafer_trace_run_done(struct wafer_trace_run *tr, const struct wafer_completion *c);
/* Results back where the caller wanted them, events into the trace; frees. */
int wafer_trace_run_end(struct wafer_trace_run *tr, int ok);

int wafer_kernel_expert_load(struct wafer_dev *dev, unsigned int nth,
			     struct wafer_expert_load *out, unsigned int max);
int wafer_kernel_model_expert_load(struct wafer_dev *dev, uint32_t id,
				   struct wafer_expert_load *out, unsigned int max);
/* The @nth model's entries of the driver's debugfs experts table (wafer_experts.c). */
int wafer_experts_read(FILE *f, const char *path, unsigned int nth,
		       struct wafer_expert_load *out, unsigned int max);
/* ... and model @id's (its "model ID" section; a table without sections: all). */
int wafer_experts_read_model(FILE *f, const char *path, uint32_t id,
			     struct wafer_expert_load *out, unsigned int max);

extern const struct wafer_backend_ops wafer_kernel_backend;
/* A kernel backend device's DRM fd, or -1 for any other (wafer_kernel.c). */
int wafer_kernel_fd(const struct wafer_dev *dev);
extern const struct wafer_backend_ops wafer_inproc_backend;
extern const struct wafer_backend_ops wafer_pipe_backend;
extern const struct wafer_backend_ops wafer_afd_backend;
extern const struct wafer_backend_ops wafer_net_backend;

/*
 * Tests only, as wafer.ko's fault_inject parameter and debugfs file: set
 * @wafer_inproc_fault_inject before wafer_open() and the in-process
 * devices opened take the firmware's FAULT_INJECT command, which
 * wafer_inproc_fault() sends (@fault: enum wfw_fault); 0 or -errno.
 */
extern int wafer_inproc_fault_inject;
int wafer_inproc_fault(struct wafer_dev *dev, uint32_t fault);

/*
 * For the pipeline backend (wafer_bo.c): @src, a buffer of another device
 * of the same backend, made usable on @dev (struct wafer_bo.view_of);
 * wafer_bo_destroy() releases the view, never @src.
 */
int wafer_bo_import(struct wafer_dev *dev, const struct wafer_bo *src, struct wafer_bo **out);

/* The most jobs a backend converts and posts at once. */
#define WAFER_SUBMIT_BATCH	64

/*
 * For a backend's @submit (backends/wafer_post.c): hands @jobs to @post in batches of
 * at most WAFER_SUBMIT_BATCH until all are taken or one batch is taken only
 * in part.  Returns how many were taken, or, when none was, @post's answer
 * (<= 0) for the first batch.
 */
int wafer_submit_batches(struct wafer_dev *dev, const struct wafer_job_hw *jobs, unsigned int n,
			 int (*post)(struct wafer_dev *dev, const struct wafer_job_hw *jobs,
				     unsigned int n));

/*
 * Runs positions [pos, pos + n) of @slot of @ctx, ids already in @in, in
 * as few jobs as the device takes, all in flight at once, and waits for
 * them (wafer_generate.c; the speculative loop uses it too).
 */
int wafer_run_positions(struct wafer_ctx *ctx, unsigned int slot, struct wafer_bo *in,
			struct wafer_bo *out, unsigned int pos, unsigned int n, unsigned int flags,
			unsigned int top_k, uint64_t *ns, unsigned int *jobs);

/* NUMA placement (wafer_numa.c): no-ops when @node < 0 or libnuma is unusable. */
void wafer_numa_bind_thread(int node);
void wafer_numa_place(void *p, size_t len, int node);
void *wafer_numa_alloc(size_t len, int node);
void wafer_numa_free(void *p, size_t len);

#endif /* WAFER_BACKEND_H */
