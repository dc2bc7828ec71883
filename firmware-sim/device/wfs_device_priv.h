/* SPDX-License-Identifier: MIT */
/*
 * wfs_device_priv.h - how the device's parts compose.  Not for drivers.
 *
 * struct wfs_device is one sub-struct per concern, each written only by
 * the file that owns it (the others may read it under its lock):
 *
 *   hw     wfs_hw.c      registers, interrupt, doorbell, DMA, log
 *   sync   wfs_sync.c    state lock, park/abort handshake
 *   cpl    wfs_cpl.c     latched rings, completion posting
 *   cp     wfs_cmd.c     the command processor
 *   stages wfs_device.c  (arenas, FIFOs), wfs_load.c (.mdl),
 *                        wfs_stage.c (.cnt), wfs_workers.c (.thread,
 *                        .claimed)
 *   pool   wfs_workers.c the stage worker pool
 *   models wfs_load.c    the loaded models and their allocation tables
 *   ctx    wfs_ctx.c     the context table
 *   job    wfs_job.c     the job table and the counters of finished work
 *
 * Threads: one command processor (CP), and one worker per stage the
 * loaded models occupy or a pool of fewer (wfs_workers.h), started by load,
 * joined by the unload of the last model and full reset; and the load
 * worker (wfs_loadq.h), which checks, places and copies one LOAD_MODEL at
 * a time into blocks of the arenas no job reads until the CP commits it.
 *
 * Locks, outermost first (none is held across the IRQ callback, only
 * cpl.lock across a DMA callback):
 *  1. reset_lock serialises register resets and destroy.
 *  2. sync.lock, the state lock: the job table, the context table, the
 *     park/abort state and the models' presence; sync.cond is broadcast on
 *     any change to them.  Ring enable holds it while it takes cpl.lock.
 *  3. cpl.lock: latched ring configuration, completion ring tail,
 *     sequence, reservations and armed faults; held across the completion
 *     DMA write so records land in ring order.
 *  4. each FIFO's lock: its indices and entries, and the counters of the
 *     stage it feeds.  Never held with another lock.  In pool mode all
 *     FIFOs share pool.lock, which also guards the stages' claimed flags.
 *  5. each stage's sram_lock: its arena's block table (wfs_sram.h), taken
 *     by every arena call, never two at once; may be taken under sync.lock.
 *  6. the log lock: a leaf.
 * Workers are joined with no lock but reset_lock held (or, for unload, by
 * the CP itself): a worker never waits for reset_lock or the CP.
 */
#ifndef WFS_DEVICE_PRIV_H
#define WFS_DEVICE_PRIV_H

#include "wfs_compat.h"
#include "wfs_cmd.h"
#include "wfs_ctx.h"
#include "wfs_fifo.h"
#include "wfs_hw.h"
#include "wfs_info.h"
#include "wfs_job.h"
#include "wfs_load.h"
#include "wfs_loadq.h"
#include "wfs_mblock.h"
#include "wfs_cpl.h"
#include "wfs_room.h"
#include "wfs_sram.h"
#include "wfs_stage.h"
#include "wfs_sync.h"
#include "wfs_workers.h"

#define WFS_DEFAULT_MAX_JOBS	128
#define WFS_DEFAULT_MAX_CTXS	64
#define WFS_LIMIT_JOBS		4096
#define WFS_LIMIT_CTXS		1024

/* The context slot table budget is WFS_MIN_CTX_SLOTS of these. */
WFS_STATIC_ASSERT(sizeof(struct wfs_slot_state) == 16, "slot state size");

/**
 * struct wfs_stage - one pipeline stage
 * @dev: its device
 * @idx: stage index
 * @sram: its SRAM arena (blocks: wfs_load.c and wfs_ctx.c)
 * @sram_mem: the arena's memory
 * @blocks: the arena's block records
 * @sram_lock: the arena's lock (wfs_sram.h): the CP and the load worker
 *	both place blocks
 * @in: input FIFO
 * @thread: its worker (one worker per stage)
 * @claimed: 1 while a pool worker runs the stage (pool.lock)
 * @cnt: counters (@in.lock; its worker)
 * @free_at: the stage's work clock: the modelled service time of every
 *	chunk it ran, whichever tenant's and model's, without the waits for
 *	their arrivals (those are on the tenants' own timelines, struct
 *	wfs_timeline); zeroed by a full reset or when the last model goes,
 *	advanced by the stage's worker
 * @idle_work: @free_at when the device last took a job while idle (no
 *	job in flight: the stage had nothing queued, so no tenant waits
 *	for work it ran before; state lock, with no chunk in flight)
 * @mdl: its share of each model, by model index (wfs_load.c)
 */
struct wfs_stage {
	struct wfs_device *dev;
	u32 idx;
	struct wfs_sram sram;
	void *sram_mem;
	struct wfs_sram_block *blocks;
	struct wfs_os_mutex *sram_lock;
	struct wfs_fifo in;
	struct wfs_os_thread *thread;
	u32 claimed;
	struct wfs_stage_counters cnt;
	u64 free_at;
	u64 idle_work;
	struct wfs_stage_model mdl[WFS_MAX_MODELS];
};

/**
 * struct wfs_device - a simulated device
 * @hw: registers, interrupt, doorbell, DMA, log
 * @sync: state lock and park/abort state
 * @cpl: ring state, completion posting
 * @cp: command processor
 * @stages: the stages
 * @pool: the stage worker pool
 * @models: the loaded models
 * @ctx: the context table
 * @job: the job table
 * @reset_lock: serialises resets and destroy
 * @resets: resets performed (@reset_lock)
 */
struct wfs_device {
	struct wfs_hw hw;
	struct wfs_sync sync;
	struct wfs_cpl_state cpl;
	struct wfs_cp cp;
	struct wfs_loadq loadq;
	struct wfs_stage *stages;
	struct wfs_stage_pool pool;
	struct wfs_models models;
	struct wfs_ctx_table ctx;
	struct wfs_job_table job;
	struct wfs_os_mutex *reset_lock;
	u32 resets;
};

#endif /* WFS_DEVICE_PRIV_H */
