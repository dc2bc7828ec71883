/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wafer control waiters: the table of control commands in flight, keyed by
 * their cookie.
 *
 * Each control command gets a waiter with its own completion, completion
 * record and buffer (a reply buffer or a blob the firmware reads), so
 * several commands can be outstanding and each completes on its own, in
 * whatever order the firmware completes them (ABI 1.9: a LOAD_MODEL
 * completes after the commands the firmware served while it checked the
 * blob).  A waiter whose caller gave up (a timeout, a fatal signal) while
 * the firmware may still touch its buffer is parked: it stays in the table
 * and its buffer is released when its own completion arrives, or when a
 * reset or teardown fails every waiter.  The table has as many waiters as
 * the control ring has entries.
 */
#ifndef WDRV_CTRL_H
#define WDRV_CTRL_H

#include <linux/completion.h>
#include <linux/list.h>
#include <linux/semaphore.h>
#include <linux/types.h>
#include <linux/xarray.h>

#include "wfw_abi.h"

struct wdrv_dma;

/**
 * struct wdrv_ctrl_waiter - one control command in flight
 * @id: its index in the table: the cookie's low 32 bits
 * @cookie: the cookie it was posted with (0 until wdrv_ctrl_arm())
 * @done: completed when @finished is set
 * @cpl: the completion record, or the status a reset or teardown gave
 * @finished: a completion, a reset or a teardown ended it (table lock)
 * @parked: its caller gave up; the table frees it and its buffer
 * @buf: a kvmalloc()ed buffer the command reads or writes, or NULL
 * @addr: @buf's DMA window
 * @timeout_ms: how long its command may run while the firmware completes
 *	nothing (set before wdrv_ctrl_add(); wdrv_ctrl_timeout_of())
 * @link: on a list of waiters to free
 */
struct wdrv_ctrl_waiter {
	u32 id;
	u64 cookie;
	struct completion done;
	struct wfw_cpl cpl;
	bool finished;
	bool parked;
	void *buf;
	u64 addr;
	unsigned int timeout_ms;
	struct list_head link;
};

/**
 * struct wdrv_ctrl_table - the control commands in flight
 * @xa: waiters by id (its lock guards every waiter's @finished, @parked,
 *	@cookie and @cpl)
 * @next: the next id to try (cyclic, so a late completion of a waiter
 *	that went does not meet a new one of the same id soon)
 * @slots: one per control ring entry, held by each waiter in @xa
 * @dma: where parked buffers' windows are unmapped
 */
struct wdrv_ctrl_table {
	struct xarray xa;
	u32 next;
	struct semaphore slots;
	struct wdrv_dma *dma;
};

void wdrv_ctrl_init(struct wdrv_ctrl_table *t, struct wdrv_dma *dma,
		    unsigned int slots);
struct wdrv_ctrl_waiter *wdrv_ctrl_waiter_new(void *buf, u64 addr);
int wdrv_ctrl_add(struct wdrv_ctrl_table *t, struct wdrv_ctrl_waiter *w,
		  bool killable);
int wdrv_ctrl_arm(struct wdrv_ctrl_table *t, struct wdrv_ctrl_waiter *w,
		  u64 cookie_base);
bool wdrv_ctrl_complete(struct wdrv_ctrl_table *t, const struct wfw_cpl *cpl);
bool wdrv_ctrl_end(struct wdrv_ctrl_table *t, struct wdrv_ctrl_waiter *w,
		   bool park, struct wfw_cpl *cpl);
void wdrv_ctrl_fail_all(struct wdrv_ctrl_table *t, int status);
bool wdrv_ctrl_busy(struct wdrv_ctrl_table *t);
unsigned int wdrv_ctrl_timeout_of(struct wdrv_ctrl_table *t, u32 id);

#endif /* WDRV_CTRL_H */
