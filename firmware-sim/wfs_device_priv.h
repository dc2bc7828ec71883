/* SPDX-License-Identifier: MIT */
/*
 * wfs_device_priv.h - the device's internal state, shared by wfs_device.c
 * (registers, threads, reset), wfs_cmd.c (command processor) and
 * wfs_pipeline.c (placement, stage workers).  Not for drivers.
 *
 * Threads: one command processor (CP) and one worker per stage.
 *
 * Locks (never more than one of dev->lock, a FIFO lock and dev->cpl_lock
 * held at a time, and none of them across DMA callbacks or the IRQ
 * callback; the log lock is a leaf):
 *  - dev->reset_lock serialises register resets and destroy.
 *  - dev->lock protects the job table, the context table, model state,
 *    abort/park state and the global counters; dev->cond is broadcast on
 *    any change to them.
 *  - dev->cpl_lock protects the completion ring's tail, sequence and
 *    reservations; it is the one lock held across a DMA callback (the
 *    completion write, so records land in ring order).
 *  - each FIFO's lock protects its indices, entries and the counters of
 *    the stage it feeds.
 */
#ifndef WFS_DEVICE_PRIV_H
#define WFS_DEVICE_PRIV_H

#include "wfs_compat.h"
#include "wfs_os.h"
#include "wfw_abi.h"
#include "wfs_device.h"
#include "wfs_forward.h"
#include "wfs_log.h"
#include "wfs_model.h"
#include "wfs_pipeline.h"
#include "wfs_profile.h"
#include "wfs_sram.h"
#include "wfs_timing.h"

/* errno values the compat header does not name */
#define WFS_EPERM		1
#define WFS_EIO			5
#define WFS_EEXIST		17
#define WFS_EMFILE		24
#define WFS_ECANCELED		125

#define WFS_DEFAULT_MAX_JOBS	128
#define WFS_DEFAULT_MAX_CTXS	64
#define WFS_LIMIT_JOBS		4096
#define WFS_LIMIT_CTXS		1024
#define WFS_LOG_BYTES		16384
/* Minimum KV a model must leave room for: one slot of this many positions
 * (or the model's maximum context, if shorter).
 */
#define WFS_MIN_KV_POSITIONS	256
/* How long the CP sleeps without a doorbell (heartbeat period). */
#define WFS_CP_IDLE_NS		100000000ull

/* Job states */
#define WFS_JOB_FREE		0
#define WFS_JOB_ACTIVE		1

/**
 * struct wfs_slot_state - modelled-time bookkeeping of one sequence slot
 * @done_ns: modelled completion time of the slot's latest finished job
 * @pending: jobs of the slot fetched but not completed
 * @pad: zero
 */
struct wfs_slot_state {
	u64 done_ns;
	u32 pending;
	u32 pad;
};

/**
 * struct wfs_ctx - a context: KV cache for slots x ctx_len positions
 * @in_use: 1 if allocated
 * @gen: generation, bumped on every create so stale ids are refused
 * @slots: sequence slots
 * @ctx_len: positions per slot
 * @active_jobs: jobs of this context in flight (dev->lock)
 * @kv_bytes: bytes per layer per slot
 * @kv_total: bytes allocated over all stages
 * @kv: per stage, the base of its KV block (its layers one after the
 *	other, each slots * @kv_bytes), NULL for stages without layers
 * @slot: per slot state, in stage 0's SRAM
 */
struct wfs_ctx {
	u32 in_use;
	u32 gen;
	u32 slots;
	u32 ctx_len;
	u32 active_jobs;
	u64 kv_bytes;
	u64 kv_total;
	u8 *kv[WFS_MAX_STAGES];
	struct wfs_slot_state *slot;
};

/**
 * struct wfs_job - a RUN_JOB in flight
 * @state: WFS_JOB_*
 * @cookie: the command's cookie
 * @args: the validated payload
 * @ctx: its context
 * @status: 0, or the first error a stage hit (later stages skip work)
 * @n_chunks: chunks the job was split into
 * @hang: injected hang: stage 0 stalls on it until reset
 * @records: output records written
 * @t_ready: modelled time the job's input was available
 * @t_start: modelled time its first chunk started on stage 0
 * @host_t0: host time the CP fetched it
 */
struct wfs_job {
	u32 state;
	u64 cookie;
	struct wfw_cmd_run_job args;
	struct wfs_ctx *ctx;
	s32 status;
	u32 n_chunks;
	u32 hang;
	u32 records;
	u64 t_ready;
	u64 t_start;
	u64 host_t0;
};

/**
 * struct wfs_flit - one FIFO entry: a chunk of a job
 * @job: job table index
 * @pos0: position of the chunk's first token
 * @n: tokens in the chunk
 * @last: 1 for the job's last chunk
 * @t_arrive: modelled arrival time at the stage
 * @buf: the entry's buffer in the receiving stage's SRAM (stage 0: u32
 *	tokens; others: activation records)
 */
struct wfs_flit {
	u32 job;
	u32 pos0;
	u32 n;
	u32 last;
	u64 t_arrive;
	u8 *buf;
};

/**
 * struct wfs_fifo - bounded FIFO in front of a stage
 * @lock: Protects every field below and the stage's counters
 * @cond: broadcast when an entry is pushed or popped, and on abort
 * @head: consumer index (free-running)
 * @tail: producer index (free-running)
 * @depth: entries
 * @hw: fill level high-water mark
 * @ent: @depth entries
 */
struct wfs_fifo {
	struct wfs_os_mutex *lock;
	struct wfs_os_cond *cond;
	u32 head;
	u32 tail;
	u32 depth;
	u32 hw;
	struct wfs_flit *ent;
};

/**
 * struct wfs_stage_counters - per stage statistics (under the FIFO lock)
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
 * struct wfs_stage - one pipeline stage
 * @dev: its device
 * @idx: stage index
 * @sram: its SRAM arena
 * @sram_mem: the arena's memory
 * @blocks: the arena's block records
 * @in: input FIFO
 * @thread: its worker
 * @parked: 1 while the worker waits out a reset (dev->lock)
 * @cnt: counters (@in.lock)
 * @first_layer: first layer placed here
 * @n_layers: layers placed here
 * @embed: holds the embedding
 * @head: holds the head
 * @last: the last used stage (posts completions)
 * @lviews: @n_layers bound layer views (in SRAM)
 * @eview: bound embedding view (in SRAM) or NULL
 * @hview: bound head view (in SRAM) or NULL
 * @work: chunk_tokens activation records (in SRAM)
 * @scratch: forward-pass scratch (in SRAM)
 * @topk: WFS_TOPK_MAX top-k entries (head stage, in SRAM)
 * @rec: one output record of WFW_MAX_TOPK pairs (head stage, in SRAM)
 * @weight_bytes: bytes of the layer sections placed here
 * @free_at: modelled time the stage is next free (worker only)
 */
struct wfs_stage {
	struct wfs_device *dev;
	u32 idx;
	struct wfs_sram sram;
	void *sram_mem;
	struct wfs_sram_block *blocks;
	struct wfs_fifo in;
	struct wfs_os_thread *thread;
	u32 parked;
	struct wfs_stage_counters cnt;
	u32 first_layer;
	u32 n_layers;
	u32 embed;
	u32 head;
	u32 last;
	struct wfs_layer_view *lviews;
	struct wfs_embed_view *eview;
	struct wfs_head_view *hview;
	u8 *work;
	u8 *scratch;
	struct wfs_topk_entry *topk;
	u8 *rec;
	u64 weight_bytes;
	u64 free_at;
};

/**
 * struct wfs_model_state - the loaded model
 * @loaded: 1 if a model is loaded
 * @info: what the blob validator found
 * @map: the placement
 * @act_bytes: bytes of an activation record
 * @flit_bytes: bytes of one FIFO entry buffer
 * @max_ctx: longest context (the model's seq_len)
 * @kv_pos_bytes: KV bytes of one position of one layer
 * @sram_used: SRAM the model took (all stages)
 * @dims: shape for the timing model
 * @head_weight_bytes: head section bytes
 */
struct wfs_model_state {
	u32 loaded;
	struct wfs_model_info info;
	struct wfs_map map;
	u32 act_bytes;
	u32 flit_bytes;
	u32 max_ctx;
	u32 kv_pos_bytes;
	u64 sram_used;
	struct wfs_timing_dims dims;
	u64 head_weight_bytes;
};

/**
 * struct wfs_device - a simulated device
 * @prof: its profile (overrides applied)
 * @index: device index
 * @numa_node: NUMA node or -1
 * @flags: WFS_DEV_*
 * @dma: DMA callbacks
 * @dma_ctx: their argument
 * @irq: interrupt callback
 * @irq_ctx: its argument
 * @regs: the register block (accessed with wfs_os atomics)
 * @irq_running: 1 while a thread delivers the interrupt
 * @irq_kick: interrupt delivery requested
 * @abort: 1 while a reset or stop wants every thread parked (atomic;
 *	changed under dev->lock)
 * @stopping: 1 when the device is being destroyed (atomic)
 * @cmd_base: latched command ring address
 * @cpl_base: latched completion ring address
 * @cmd_size: latched command ring entries
 * @cpl_size: latched completion ring entries
 * @cmd_head: device's command ring consumer index (CP only)
 * @reset_lock: serialises resets and destroy
 * @lock: see the file comment
 * @cond: broadcast on any change of state under @lock
 * @cpl_lock: Protects @cpl_tail, @cpl_head_seen, @cpl_seq, @cpl_reserved
 * @cpl_tail: completion ring producer index
 * @cpl_head_seen: last CPL_HEAD value accepted
 * @cpl_seq: last completion sequence number posted
 * @cpl_reserved: commands fetched whose completion is not posted yet
 * @faults_armed: bitmask of 1 << enum wfw_fault armed (@cpl_lock)
 * @kick: the CP's doorbell event
 * @cp_thread: command processor
 * @cp_parked: 1 while the CP waits out a reset (@lock)
 * @n_parked: stage workers parked (@lock)
 * @cmd_reset: 1 while the CP performs a RESET command (@lock)
 * @hang_armed: the next RUN_JOB hangs (@lock)
 * @cp_stalled: the CP plays dead until a reset (wfs_os_load32/store32)
 * @stages: the stages
 * @jobs: job table
 * @max_jobs: entries of @jobs
 * @jobs_active: jobs in flight (@lock)
 * @ctxs: context table
 * @max_ctxs: entries of @ctxs
 * @n_ctxs: contexts in use (@lock)
 * @model: the loaded model (changed only by the CP with workers idle)
 * @layer_need: placement scratch, one entry per layer
 * @log: firmware log
 * @log_lock: the log's lock
 * @log_buf: the log's storage
 * @jobs_completed: RUN_JOBs completed (@lock)
 * @tokens: tokens run (@lock)
 * @makespan_ns: latest modelled completion time (@lock)
 * @resets: resets performed
 */
struct wfs_device {
	struct wfs_profile prof;
	int index;
	int numa_node;
	u32 flags;
	struct wfs_dma_ops dma;
	void *dma_ctx;
	void (*irq)(void *ctx);
	void *irq_ctx;

	u32 regs[WFW_REG_BLOCK_SIZE / 4];
	u32 irq_running;
	u32 irq_kick;
	u32 abort;
	u32 stopping;

	u64 cmd_base;
	u64 cpl_base;
	u32 cmd_size;
	u32 cpl_size;
	u32 cmd_head;

	struct wfs_os_mutex *reset_lock;
	struct wfs_os_mutex *lock;
	struct wfs_os_cond *cond;
	struct wfs_os_mutex *cpl_lock;
	u32 cpl_tail;
	u32 cpl_head_seen;
	u32 cpl_seq;
	u32 cpl_reserved;
	u32 faults_armed;

	struct wfs_os_event *kick;
	struct wfs_os_thread *cp_thread;
	u32 cp_parked;
	u32 n_parked;
	u32 cmd_reset;
	u32 hang_armed;
	u32 cp_stalled;

	struct wfs_stage *stages;
	struct wfs_job *jobs;
	u32 max_jobs;
	u32 jobs_active;
	struct wfs_ctx *ctxs;
	u32 max_ctxs;
	u32 n_ctxs;

	struct wfs_model_state model;
	u64 layer_need[WFS_DEV_MAX_LAYERS];

	struct wfs_log log;
	struct wfs_os_mutex *log_lock;
	char *log_buf;

	u64 jobs_completed;
	u64 tokens;
	u64 makespan_ns;
	u32 resets;
};

/* wfs_device.c */
u32 wfs_reg_get(struct wfs_device *dev, u32 off);
void wfs_reg_set(struct wfs_device *dev, u32 off, u32 val);
void wfs_raise_irq(struct wfs_device *dev, u32 bits);
void wfs_set_fault(struct wfs_device *dev, u32 fault);
int wfs_aborting(struct wfs_device *dev);
void wfs_park(struct wfs_device *dev, u32 *parked_flag, int is_cp);
int wfs_cpl_reserve(struct wfs_device *dev);
void wfs_cpl_unreserve(struct wfs_device *dev);
void wfs_post_cpl(struct wfs_device *dev, struct wfw_cpl *c, int is_job);

/* wfs_cmd.c */
void wfs_cp_thread(void *arg);
void wfs_cmd_execute(struct wfs_device *dev, const struct wfw_cmd *cmd);
void wfs_model_release(struct wfs_device *dev);
void wfs_ctx_release_all(struct wfs_device *dev);

/* wfs_pipeline.c */
struct wfs_flit *wfs_fifo_reserve(struct wfs_device *dev, struct wfs_fifo *f);
void wfs_fifo_publish(struct wfs_fifo *f);

#endif /* WFS_DEVICE_PRIV_H */
