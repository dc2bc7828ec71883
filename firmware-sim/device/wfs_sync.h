/* SPDX-License-Identifier: MIT */
/*
 * wfs_sync.h - the device's state lock and the park/abort handshake.
 *
 * A reset or a stop sets @abort (stop also sets @stopping), wakes every
 * thread, and waits until the command processor and every running stage
 * worker sit in wfs_park(); it then rewrites the state while nothing runs
 * and clears @abort (wfs_sync_resume()).  With @stopping set, threads
 * return instead of parking; a worker told to quit returns too.
 */
#ifndef WFS_SYNC_H
#define WFS_SYNC_H

#include "wfs_compat.h"
#include "wfs_os.h"

/**
 * struct wfs_sync - state lock and park/abort state
 * @lock: the state lock: protects the job table, the context table, the
 *	model's presence, the counters of completed work and the fields
 *	below; @cond is broadcast on any change to them
 * @cond: see @lock
 * @abort: 1 while a reset or stop wants every thread parked (atomic;
 *	changed under @lock)
 * @stopping: 1 when the device is being destroyed (atomic)
 * @cp_parked: 1 while the CP waits out a reset (@lock)
 * @n_parked: stage workers parked (@lock)
 * @n_workers: stage workers running (@lock; wfs_stage.c)
 */
struct wfs_sync {
	struct wfs_os_mutex *lock;
	struct wfs_os_cond *cond;
	u32 abort;
	u32 stopping;
	u32 cp_parked;
	u32 n_parked;
	u32 n_workers;
};

/**
 * wfs_aborting() - should a firmware thread drop what it does?
 * @sy: the device's sync state
 *
 * Return: non-zero while a reset or destroy is in progress.
 */
int wfs_aborting(struct wfs_sync *sy);

/* 1 once the device is being destroyed. */
int wfs_stopping(struct wfs_sync *sy);

/**
 * wfs_park() - wait out a reset (firmware threads)
 * @sy: sync state
 * @is_cp: 1 for the command processor, 0 for a stage worker
 * @quit: a worker's exit flag (atomic, set under @lock), or NULL
 *
 * Returns when the reset is over, the device stops or *@quit is set.
 */
void wfs_park(struct wfs_sync *sy, int is_cp, const u32 *quit);

/* Block until a reset or stop begins (an injected hang). */
void wfs_sync_wait_abort(struct wfs_sync *sy);

/**
 * wfs_sync_request() - ask every thread to park (@stop: to return)
 * @sy: sync state
 * @stop: set @stopping too
 *
 * The caller then wakes whatever the threads may block on.
 */
void wfs_sync_request(struct wfs_sync *sy, int stop);

/* Wait until the CP and every running stage worker are parked (or stop). */
void wfs_sync_wait_parked(struct wfs_sync *sy);

/* Clear @abort and let the parked threads run again. */
void wfs_sync_resume(struct wfs_sync *sy);

#endif /* WFS_SYNC_H */
