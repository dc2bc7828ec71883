/* SPDX-License-Identifier: MIT */
/*
 * wfs_workers.h - the host threads that run the stages.
 *
 * Started by model load for the stages the model occupies and stopped when
 * the model goes (unload, full reset): a device without a model runs only
 * its command processor.  Two modes (struct wfs_device_config.stage_workers):
 *
 * One worker per stage: each waits on its stage's FIFO, runs the entry and
 * blocks while the next stage's FIFO is full.  Every chunk changes thread at
 * every stage: the most interleaving, the most handoffs.
 *
 * A pool of fewer workers than stages, shared by all of them: a worker
 * claims a stage that has an entry waiting and room in the next stage's
 * FIFO, runs that one entry and releases the stage, then tries the next
 * stage first; so one worker carries a chunk down the pipeline while the
 * stages ahead are idle, with no handoff per stage.  A stage is claimed by
 * one worker at a time and an entry runs only when it need not wait for
 * room downstream, so each stage still takes its FIFO in order and no
 * worker waits on a stage that no worker is free to run.
 *
 * The modelled timeline depends only on the order in which each stage
 * takes its entries, so both modes give the same results and times.
 */
#ifndef WFS_WORKERS_H
#define WFS_WORKERS_H

#include "wfs_compat.h"
#include "wfs_os.h"

struct wfs_device;
struct wfs_fifo;

/**
 * struct wfs_pool_worker - one pool worker
 * @dev: its device
 * @thread: its thread, NULL when not running
 * @id: its claim mark (index + 1)
 */
struct wfs_pool_worker {
	struct wfs_device *dev;
	struct wfs_os_thread *thread;
	u32 id;
};

/**
 * struct wfs_stage_pool - the stage worker pool
 * @lock: in pool mode, the lock of every stage FIFO; it also protects the
 *	stages' claim marks and @idle
 * @cond: idle pool workers wait on it; broadcast when a stage they could
 *	run becomes ready (the FIFOs' notify hook) and on abort and close
 * @w: @size workers
 * @size: pool workers, or 0 for one worker per stage
 * @stages: stages the running pool serves (set before it starts)
 * @idle: workers waiting on @cond (@lock)
 * @closed: 1 when the pool workers are to exit (atomic; set under the
 *	state lock)
 */
struct wfs_stage_pool {
	struct wfs_os_mutex *lock;
	struct wfs_os_cond *cond;
	struct wfs_pool_worker *w;
	u32 size;
	u32 stages;
	u32 idle;
	u32 closed;
};

/**
 * wfs_stage_pool_init() - choose the mode; in pool mode share the pool's
 *	lock with the FIFOs
 * @dev: the device being created (before its stages' FIFOs: they take
 *	the pool's lock in pool mode, see wfs_stage_pool_fifo_lock())
 * @workers: struct wfs_device_config.stage_workers (checked)
 *
 * Return: 0 or -WFS_ENOMEM.
 */
int wfs_stage_pool_init(struct wfs_device *dev, int workers);

/*
 * Give a FIFO its condition and lock: the pool's lock in pool mode, its
 * own otherwise.  Return: 0 or -WFS_ENOMEM.
 */
int wfs_stage_pool_fifo_lock(struct wfs_device *dev, struct wfs_fifo *f);

/* Free what wfs_stage_pool_init() and _fifo_lock() allocated (no worker runs). */
void wfs_stage_pool_free(struct wfs_device *dev);

/**
 * wfs_stage_workers_start() - start the workers for stages [0, @n)
 * @dev: the device (none of its workers runs)
 * @n: stages the model occupies
 *
 * Called by model load (the command processor).  On failure the workers
 * already started keep running: close and join them.
 *
 * Return: 0, or -WFS_ENOMEM.
 */
int wfs_stage_workers_start(struct wfs_device *dev, u32 n);

/**
 * wfs_stage_workers_close_locked() - tell every running worker to exit
 * @dev: the device; its state lock is held
 *
 * The workers are idle or parked (no job is left); wfs_stage_workers_join()
 * then waits for them, without the state lock.
 */
void wfs_stage_workers_close_locked(struct wfs_device *dev);

/* Wait for the workers told to exit and forget them (no lock held). */
void wfs_stage_workers_join(struct wfs_device *dev);

/* Wake the idle pool workers (after an abort or stop request). */
void wfs_stage_workers_wake(struct wfs_device *dev);

/* Wait for every worker after a stop request (device destroy). */
void wfs_stage_workers_stop(struct wfs_device *dev);

#endif /* WFS_WORKERS_H */
