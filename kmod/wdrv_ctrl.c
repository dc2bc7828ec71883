// SPDX-License-Identifier: GPL-2.0-only
/*
 * wafer control waiters (see wdrv_ctrl.h).
 */
#include <linux/lockdep.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "wdrv_ctrl.h"
#include "wdrv_dma.h"

/**
 * wdrv_ctrl_init() - set up an empty table
 * @t: the table
 * @dma: the address space parked buffers' windows are in
 * @slots: waiters the table holds at most (control ring entries)
 */
void wdrv_ctrl_init(struct wdrv_ctrl_table *t, struct wdrv_dma *dma,
		    unsigned int slots)
{
	xa_init_flags(&t->xa, XA_FLAGS_ALLOC1);
	t->next = 1;
	sema_init(&t->slots, slots);
	t->dma = dma;
}

/**
 * wdrv_ctrl_waiter_new() - allocate a waiter
 * @buf: a kvmalloc()ed buffer the command reads or writes, or NULL
 * @addr: its DMA window
 *
 * Return: the waiter, or NULL.
 */
struct wdrv_ctrl_waiter *wdrv_ctrl_waiter_new(void *buf, u64 addr)
{
	struct wdrv_ctrl_waiter *w = kzalloc(sizeof(*w), GFP_KERNEL);

	if (!w)
		return NULL;
	init_completion(&w->done);
	w->buf = buf;
	w->addr = addr;
	return w;
}

/* A parked waiter the firmware is past: its buffer and itself go. */
static void waiter_free_parked(struct wdrv_ctrl_table *t, struct wdrv_ctrl_waiter *w)
{
	if (w->buf) {
		wdrv_dma_unmap(t->dma, w->addr);
		kvfree(w->buf);
	}
	kfree(w);
}

/* Takes @w out of the table; the table lock is held. */
static void waiter_remove(struct wdrv_ctrl_table *t, struct wdrv_ctrl_waiter *w)
{
	lockdep_assert_held(&t->xa.xa_lock);
	__xa_erase(&t->xa, w->id);
	up(&t->slots);
}

/**
 * wdrv_ctrl_add() - give a waiter an id and a slot in the table
 * @t: the table
 * @w: the waiter (wdrv_ctrl_waiter_new())
 * @killable: a fatal signal ends the wait for a free slot
 *
 * Sleeps while the table is full.  No completion can match @w before
 * wdrv_ctrl_arm() gives it its cookie.
 *
 * Return: 0, -EINTR, or -ENOMEM.
 */
int wdrv_ctrl_add(struct wdrv_ctrl_table *t, struct wdrv_ctrl_waiter *w,
		  bool killable)
{
	int ret;

	if (killable) {
		ret = down_killable(&t->slots);
		if (ret)
			return ret;
	} else {
		down(&t->slots);
	}
	ret = xa_alloc_cyclic(&t->xa, &w->id, w, xa_limit_32b, &t->next,
			      GFP_KERNEL);
	if (ret < 0) {
		up(&t->slots);
		return ret;
	}
	return 0;
}

/**
 * wdrv_ctrl_arm() - set the cookie a waiter's command is posted with
 * @t: the table
 * @w: the waiter, added
 * @cookie_base: the cookie's bits above the id
 *
 * Called with resets excluded until the command is posted.
 *
 * Return: 0, or -EIO if a reset failed @w before it was posted (its
 * record then says so): the command must not be posted.
 */
int wdrv_ctrl_arm(struct wdrv_ctrl_table *t, struct wdrv_ctrl_waiter *w,
		  u64 cookie_base)
{
	int ret = 0;

	xa_lock(&t->xa);
	if (w->finished)
		ret = -EIO;
	else
		w->cookie = cookie_base | w->id;
	xa_unlock(&t->xa);
	return ret;
}

/**
 * wdrv_ctrl_complete() - hand a control completion to its waiter
 * @t: the table
 * @cpl: a verified completion of the current reset generation
 *
 * The waiter whose cookie it carries wakes with it; a parked one is
 * freed with its buffer (the firmware is past the command).  A completion
 * that matches no waiter (its caller gave up, nothing to keep) is dropped.
 * Process context.
 *
 * Return: whether a waiter had the cookie.
 */
bool wdrv_ctrl_complete(struct wdrv_ctrl_table *t, const struct wfw_cpl *cpl)
{
	struct wdrv_ctrl_waiter *w, *free = NULL;
	bool found;

	xa_lock(&t->xa);
	w = xa_load(&t->xa, lower_32_bits(cpl->cookie));
	found = w && w->cookie && w->cookie == cpl->cookie;
	if (found) {
		waiter_remove(t, w);
		w->finished = true;
		w->cpl = *cpl;
		if (w->parked)
			free = w;
		else
			complete(&w->done);
	}
	xa_unlock(&t->xa);
	if (free)
		waiter_free_parked(t, free);
	return found;
}

/**
 * wdrv_ctrl_end() - end a caller's wait
 * @t: the table
 * @w: the waiter
 * @park: the caller gives up while the firmware may still use @w's buffer
 * @cpl: out, if it finished: its completion record
 *
 * If a completion, reset or teardown finished @w, it is out of the table
 * and the caller's to free.  Otherwise, with @park and a buffer, @w stays
 * in the table, parked: the table frees it and its buffer; without, it is
 * taken out (a late completion is dropped) and the caller's.
 *
 * Return: whether @w finished.
 */
bool wdrv_ctrl_end(struct wdrv_ctrl_table *t, struct wdrv_ctrl_waiter *w,
		   bool park, struct wfw_cpl *cpl)
{
	bool finished;

	xa_lock(&t->xa);
	finished = w->finished;
	if (finished)
		*cpl = w->cpl;
	else if (park && w->buf)
		w->parked = true;
	else
		waiter_remove(t, w);
	xa_unlock(&t->xa);
	return finished;
}

/**
 * wdrv_ctrl_fail_all() - finish every waiter with @status
 * @t: the table
 * @status: -EIO (a reset discarded the commands) or -ENODEV (teardown)
 *
 * Called once the firmware can no longer touch any command's buffer (its
 * reset or destroy returned): parked waiters are freed with their
 * buffers, the others wake with @status.
 */
void wdrv_ctrl_fail_all(struct wdrv_ctrl_table *t, int status)
{
	struct wdrv_ctrl_waiter *w, *n;
	unsigned long id;
	LIST_HEAD(parked);

	xa_lock(&t->xa);
	xa_for_each(&t->xa, id, w) {
		waiter_remove(t, w);
		w->finished = true;
		memset(&w->cpl, 0, sizeof(w->cpl));
		w->cpl.cookie = w->cookie;
		w->cpl.status = status;
		if (w->parked)
			list_add_tail(&w->link, &parked);
		else
			complete(&w->done);
	}
	xa_unlock(&t->xa);
	list_for_each_entry_safe(w, n, &parked, link)
		waiter_free_parked(t, w);
}

/**
 * wdrv_ctrl_busy() - whether any control command is in flight
 * @t: the table
 *
 * Return: true while the table holds a waiter (parked ones included).
 */
bool wdrv_ctrl_busy(struct wdrv_ctrl_table *t)
{
	return !xa_empty(&t->xa);
}

/**
 * wdrv_ctrl_timeout_of() - the timeout of a command in flight
 * @t: the table
 * @id: its waiter's id (the low 32 bits of its cookie)
 *
 * Parked waiters count: the firmware may still run their command.
 *
 * Return: its waiter's @timeout_ms, or 0 if no waiter has @id.
 */
unsigned int wdrv_ctrl_timeout_of(struct wdrv_ctrl_table *t, u32 id)
{
	struct wdrv_ctrl_waiter *w;
	unsigned int ms = 0;

	xa_lock(&t->xa);
	w = xa_load(&t->xa, id);
	if (w)
		ms = w->timeout_ms;
	xa_unlock(&t->xa);
	return ms;
}
