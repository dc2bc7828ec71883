// SPDX-License-Identifier: MIT
/*
 * wfs_fifo.c - stage input FIFOs (see wfs_fifo.h).
 */
#include "wfs_fifo.h"
#include "wfs_ring.h"

/* Neither end may go on: a reset or stop, or the consumer is to exit. */
static int fifo_halted(struct wfs_sync *sy, struct wfs_fifo *f)
{
	return wfs_aborting(sy) || wfs_os_load32(&f->closed);
}

struct wfs_flit *wfs_fifo_reserve(struct wfs_sync *sy, struct wfs_fifo *f)
{
	struct wfs_flit *e = NULL;

	wfs_os_mutex_lock(f->lock);
	while (wfs_ring_count(f->head, f->tail) >= f->depth &&
	       !fifo_halted(sy, f))
		wfs_os_cond_wait(f->cond, f->lock);
	if (!fifo_halted(sy, f))
		e = &f->ent[wfs_ring_slot(f->tail, f->depth)];
	wfs_os_mutex_unlock(f->lock);
	return e;
}

void wfs_fifo_publish(struct wfs_fifo *f)
{
	u32 n;

	wfs_os_mutex_lock(f->lock);
	f->tail++;
	n = wfs_ring_count(f->head, f->tail);
	if (n > f->hw)
		f->hw = n;
	wfs_os_cond_broadcast(f->cond);
	if (f->notify)
		f->notify(f->notify_arg);
	wfs_os_mutex_unlock(f->lock);
}

struct wfs_flit *wfs_fifo_peek(struct wfs_sync *sy, struct wfs_fifo *f)
{
	struct wfs_flit *e = NULL;

	wfs_os_mutex_lock(f->lock);
	while (f->head == f->tail && !fifo_halted(sy, f))
		wfs_os_cond_wait(f->cond, f->lock);
	if (!fifo_halted(sy, f))
		e = &f->ent[wfs_ring_slot(f->head, f->depth)];
	wfs_os_mutex_unlock(f->lock);
	return e;
}

void wfs_fifo_pop(struct wfs_fifo *f)
{
	wfs_os_mutex_lock(f->lock);
	f->head++;
	wfs_os_cond_broadcast(f->cond);
	if (f->notify)
		f->notify(f->notify_arg);
	wfs_os_mutex_unlock(f->lock);
}

void wfs_fifo_wake(struct wfs_fifo *f)
{
	wfs_os_mutex_lock(f->lock);
	wfs_os_cond_broadcast(f->cond);
	wfs_os_mutex_unlock(f->lock);
}

void wfs_fifo_flush(struct wfs_fifo *f)
{
	wfs_os_mutex_lock(f->lock);
	f->head = 0;
	f->tail = 0;
	wfs_os_mutex_unlock(f->lock);
}
