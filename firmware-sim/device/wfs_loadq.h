/* SPDX-License-Identifier: MIT */
/*
 * wfs_loadq.h - the load worker: LOAD_MODEL off the command processor.
 *
 * The CP reserves the model slot (marked loading), maps the blob and queues
 * the command here; the worker thread checks the blob (the validator and
 * the checksum over every byte), places the model in the room the other
 * models leave and copies its share into each stage's SRAM, all while the
 * CP goes on serving the control and command rings.  The copy writes only
 * blocks the arenas gave the loading model (wfs_sram.h: the CP's context
 * blocks are taken from the same arenas under the same locks), which no
 * job reads until the model is committed.  Then the CP commits the model
 * (wfs_load_commit(): stage workers, the model's id, loaded) and posts the
 * load's completion.
 *
 * Loads run one at a time, in the order they were fetched; up to
 * WFS_LOADQ_DEPTH wait behind the one running, each holding its reserved
 * slot.  WFW_REG_LOAD_RUNNING names the running one (its cookie's low
 * bits) from when the worker takes it until its completion is posted.
 * A LOAD_CANCEL drops a waiting load.  A reset ends the copy of the running
 * load early (-ECANCELED) and drops every load without a completion, as
 * every command it discards; a destroy joins the worker.
 */
#ifndef WFS_LOADQ_H
#define WFS_LOADQ_H

#include "wfs_compat.h"
#include "wfs_model.h"
#include "wfw_abi.h"

struct wfs_device;

/* Loads queued at once: each holds a model slot, so no more than those. */
#define WFS_LOADQ_DEPTH		WFW_MAX_MODELS

/**
 * enum wfs_loadq_state - where the running (first queued) load is
 * @WFS_LOADQ_IDLE: no load
 * @WFS_LOADQ_QUEUED: handed to the worker, not yet started
 * @WFS_LOADQ_CHECKING: the worker checks the blob
 * @WFS_LOADQ_PLACING: the worker places and copies the model
 * @WFS_LOADQ_DONE: placed and copied (or refused); the CP commits it next
 */
enum wfs_loadq_state {
	WFS_LOADQ_IDLE,
	WFS_LOADQ_QUEUED,
	WFS_LOADQ_CHECKING,
	WFS_LOADQ_PLACING,
	WFS_LOADQ_DONE,
};

/**
 * struct wfs_loadq_ent - one queued LOAD_MODEL
 * @cmd: the command (a private copy)
 * @slot: its reserved model slot
 * @blob: the mapped blob
 * @t0: when the CP took the command (the completion's host_ns)
 * @pause: WFW_FAULT_PAUSE_NEXT_LOAD or _NEXT_COPY armed for it, else 0
 */
struct wfs_loadq_ent {
	struct wfw_cmd cmd;
	u32 slot;
	const u8 *blob;
	u64 t0;
	u32 pause;
};

/**
 * struct wfs_loadq - the load worker and its queue
 * @thread: the worker thread
 * @state: enum wfs_loadq_state of the first entry (sync.lock; the CP moves
 *	it from and to IDLE, QUEUED and DONE, the worker in between; the
 *	sync cond is broadcast on changes)
 * @unpause: FAULT_INJECT NONE ended a pause (sync.lock)
 * @ent: the queue in order (CP); the first entry is the running load,
 *	which the worker reads, so only its removal moves the others up
 * @n: entries queued (sync.lock; written by the CP)
 * @ret: the running load's result (the worker's, read at DONE)
 * @info: what its check found
 * @cpl: its completion as the placement fills it
 */
struct wfs_loadq {
	struct wfs_os_thread *thread;
	u32 state;
	u32 unpause;
	struct wfs_loadq_ent ent[WFS_LOADQ_DEPTH];
	u32 n;
	int ret;
	struct wfs_model_info info;
	struct wfw_cpl cpl;
};

/**
 * wfs_loadq_start() - start the load worker
 * @dev: device being created
 *
 * Return: 0 or -WFS_ENOMEM.
 */
int wfs_loadq_start(struct wfs_device *dev);

/**
 * wfs_loadq_stop() - join the load worker (a stop was requested) and give
 *	back the blobs of the loads it leaves
 * @dev: device being destroyed
 */
void wfs_loadq_stop(struct wfs_device *dev);

/**
 * wfs_loadq_submit() - queue a checked LOAD_MODEL command (CP thread)
 * @dev: device
 * @cmd: the command
 * @pause: WFW_FAULT_PAUSE_NEXT_LOAD or _NEXT_COPY to hold it there, or 0
 *
 * Return: WFS_CPL_DEFERRED (the load's completion comes later), or
 * -WFS_EBUSY with every model slot loaded or taken by a load (each queued
 * load holds one), -WFS_EOPNOTSUPP, -WFS_EFAULT (blob not mappable).
 */
int wfs_loadq_submit(struct wfs_device *dev, const struct wfw_cmd *cmd,
		     u32 pause);

/**
 * wfs_loadq_cancel() - drop a queued load that has not started (CP thread)
 * @dev: device
 * @cookie: the LOAD_MODEL's cookie
 *
 * The load completes now with -ECANCELED, its slot given back.
 *
 * Return: 0, -WFS_ENOENT (no such load queued) or -WFS_EBUSY (it runs: its
 * completion comes when it ends).
 */
int wfs_loadq_cancel(struct wfs_device *dev, u64 cookie);

/**
 * wfs_loadq_finish() - commit a placed load and post its completion
 * @dev: device (CP thread)
 *
 * Does nothing unless the running load is done and no reset is under way.
 */
void wfs_loadq_finish(struct wfs_device *dev);

/**
 * wfs_loadq_unpause() - end a paused load's pause (FAULT_INJECT NONE)
 * @dev: device
 */
void wfs_loadq_unpause(struct wfs_device *dev);

/**
 * wfs_loadq_drop() - wait for the running load to stop, then drop every
 *	load without a completion and free their slots
 * @dev: device being reset, with the CP and the stage workers parked
 */
void wfs_loadq_drop(struct wfs_device *dev);

#endif /* WFS_LOADQ_H */
