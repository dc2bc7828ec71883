/* SPDX-License-Identifier: MIT */
/*
 * wfs_ctx.h - contexts: a KV cache of slots x ctx_len positions on every
 * stage that holds layers, and per-slot modelled-time bookkeeping.
 *
 * Ids carry a generation above the table index, so a stale id is refused.
 * The job lifecycle (wfs_job.c) counts a context's jobs in @active_jobs
 * and its slots' @pending; DESTROY_CONTEXT waits for @active_jobs to drop
 * to zero.
 *
 * Every context runs on its tenant's modelled timeline (struct
 * wfs_timeline, "Tenants" in wfs_timing.h): the host names the tenant at
 * CREATE_CONTEXT, and contexts of one tenant share a timeline.
 */
#ifndef WFS_CTX_H
#define WFS_CTX_H

#include "wfs_compat.h"
#include "wfs_profile.h"

struct wfs_device;
struct wfs_model_state;
struct wfw_cpl;

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
 * struct wfs_timeline - one tenant's modelled clock (see wfs_timing.h)
 * @tenant: the tenant (CREATE_CONTEXT's), valid while @used
 * @used: holds a tenant's clock (kept after its last context goes, until
 *	another tenant needs the entry)
 * @contexts: the tenant's contexts (state lock)
 * @active: the tenant's jobs in flight (state lock)
 * @origin_ns: the device's makespan when the entry took the tenant: where
 *	the tenant's time 0 falls in GET_INFO's device-wide makespan
 * @done_ns: latest modelled completion of the tenant's jobs (state lock)
 * @free_at: per stage, on the tenant's timeline, the end of its latest
 *	chunk there (the stage's worker)
 * @work_at: per stage, the stage's work clock (&wfs_stage.free_at) then
 */
struct wfs_timeline {
	u64 tenant;
	u32 used;
	u32 contexts;
	u32 active;
	u64 origin_ns;
	u64 done_ns;
	u64 free_at[WFS_MAX_STAGES];
	u64 work_at[WFS_MAX_STAGES];
};

/**
 * struct wfs_ctx - a context: KV cache for slots x ctx_len positions
 * @in_use: 1 if allocated (state lock)
 * @gen: generation, bumped on every destroy so stale ids are refused
 * @slots: sequence slots
 * @ctx_len: positions per slot
 * @model: its model's index (struct wfs_models)
 * @active_jobs: jobs of this context in flight (state lock; wfs_job.c)
 * @kv_bytes: bytes per layer per slot
 * @kv_total: bytes allocated over all stages
 * @kv: per stage, the base of its KV block (its layers one after the
 *	other, each slots * @kv_bytes), NULL for stages without layers
 * @slot: per slot state, in stage 0's SRAM (@pending: state lock)
 * @tl: its tenant's timeline, one of the table's @clock entries
 * @clock: an entry of the device's table of timelines (one per context
 *	table entry, so a new tenant always finds one; not tied to this
 *	context: see @tl)
 */
struct wfs_ctx {
	u32 in_use;
	u32 gen;
	u32 slots;
	u32 ctx_len;
	u32 model;
	u32 active_jobs;
	u64 kv_bytes;
	u64 kv_total;
	u8 *kv[WFS_MAX_STAGES];
	struct wfs_slot_state *slot;
	struct wfs_timeline *tl;
	struct wfs_timeline clock;
};

/**
 * struct wfs_ctx_table - the device's contexts
 * @ctxs: @max entries
 * @max: entries of @ctxs
 * @n: contexts in use (state lock)
 */
struct wfs_ctx_table {
	struct wfs_ctx *ctxs;
	u32 max;
	u32 n;
};

/* Most slots one context may have. */
#define WFS_CTX_MAX_SLOTS	65536

/* The context of @id, or NULL for an unknown or stale id. */
struct wfs_ctx *wfs_ctx_lookup(struct wfs_device *dev, u32 id);

/* Contexts of the model of index @model (the CP, or the state lock). */
u32 wfs_ctx_count(struct wfs_device *dev, u32 model);

/**
 * wfs_ctx_create() - CREATE_CONTEXT (fields already validated)
 * @dev: device (CP thread)
 * @m: the model the context is for
 * @slots: sequence slots, 1..WFS_CTX_MAX_SLOTS
 * @ctx_len: positions per slot, >= 1
 * @tenant: the host's name for the context's owner: its timeline
 * @c: completion: result0 = id, value = KV bytes; on -ENOSPC value =
 *	bytes of the allocation that failed, result0 = its stage
 *
 * Return: 0, -WFS_E2BIG, -WFS_EMFILE or -WFS_ENOSPC.
 */
int wfs_ctx_create(struct wfs_device *dev, struct wfs_model_state *m,
		   u32 slots, u32 ctx_len, u64 tenant, struct wfw_cpl *c);

/**
 * wfs_ctx_destroy() - DESTROY_CONTEXT: wait for the context's jobs, free it
 * @dev: device (CP thread)
 * @id: context id
 *
 * Return: 0, -WFS_ENOENT, or WFS_CPL_DEFERRED if a reset interrupted the
 * wait (the command is dropped).
 */
int wfs_ctx_destroy(struct wfs_device *dev, u32 id);

/**
 * wfs_ctx_destroy_model() - destroy every context of one model
 * @dev: device (CP thread)
 * @model: the model's index
 * @n: set to the contexts destroyed
 *
 * Return: 0, or WFS_CPL_DEFERRED if a reset interrupted a wait.
 */
int wfs_ctx_destroy_model(struct wfs_device *dev, u32 model, u32 *n);

/* Forget every context (reset with all parked, state lock held); their
 * SRAM goes with the model's, which the caller releases too.
 */
void wfs_ctx_release_all_locked(struct wfs_device *dev);

#endif /* WFS_CTX_H */
