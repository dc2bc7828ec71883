/* SPDX-License-Identifier: MIT */
/*
 * wfs_fifo.h - the bounded FIFO in front of each stage.  One producer (the
 * CP for stage 0, the previous stage otherwise) and one consumer (the
 * stage's worker, or the pool worker that claimed the stage); both give up
 * when the device aborts.
 */
#ifndef WFS_FIFO_H
#define WFS_FIFO_H

#include "wfs_sync.h"

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
 * @lock: protects every field below and the counters of the stage it
 *	feeds (struct wfs_stage_counters)
 * @cond: broadcast when an entry is pushed or popped, and on abort
 * @head: consumer index (free-running)
 * @tail: producer index (free-running)
 * @depth: entries
 * @hw: fill level high-water mark
 * @closed: 1 when its consumer is to exit (atomic; set under the state
 *	lock, see wfs_stage_workers_close_locked())
 * @notify: called with @lock held after an entry is pushed or popped, or
 *	NULL (the worker pool's wake check, see wfs_workers.h)
 * @notify_arg: its argument
 * @ent: @depth entries
 */
struct wfs_fifo {
	struct wfs_os_mutex *lock;
	struct wfs_os_cond *cond;
	u32 head;
	u32 tail;
	u32 depth;
	u32 hw;
	u32 closed;
	void (*notify)(void *arg);
	void *notify_arg;
	struct wfs_flit *ent;
};

/**
 * wfs_fifo_reserve() - wait for a free entry at the tail of @f
 * @sy: the device's sync state
 * @f: FIFO (the caller is its only producer)
 *
 * Return: the entry to fill, then wfs_fifo_publish(); NULL if the device
 * is aborting or @f is closed.
 */
struct wfs_flit *wfs_fifo_reserve(struct wfs_sync *sy, struct wfs_fifo *f);

/* Make the reserved tail entry visible to the consumer. */
void wfs_fifo_publish(struct wfs_fifo *f);

/* Wait for the head entry; NULL if the device is aborting or @f closed. */
struct wfs_flit *wfs_fifo_peek(struct wfs_sync *sy, struct wfs_fifo *f);

/* Release the head entry (its buffer may be refilled). */
void wfs_fifo_pop(struct wfs_fifo *f);

/* Wake both ends (after the abort or closed flag was set). */
void wfs_fifo_wake(struct wfs_fifo *f);

/* Empty the FIFO (its producer and consumer are parked). */
void wfs_fifo_flush(struct wfs_fifo *f);

#endif /* WFS_FIFO_H */
