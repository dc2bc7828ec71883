/* SPDX-License-Identifier: MIT */
/*
 * wfs_device.h - attaching a driver to a simulated wafer device.
 *
 * This is the "bus" side of the device: what a PCI core would give a real
 * driver.  A driver creates a device instance, then talks to it only
 * through the firmware ABI (wfw_abi.h): 32-bit register reads and writes,
 * rings in its own memory, a doorbell, and an interrupt callback.
 *
 *   wfs_device_create()       instantiate (profile + overrides), allocate
 *                             SRAM arenas, start the firmware threads
 *   wfs_device_mmio_read32()  read a register (any context)
 *   wfs_device_mmio_write32() write a register (any context, except
 *                             WFW_REG_CTRL with a reset bit: process
 *                             context, sleeps)
 *   wfs_device_doorbell()     = write WFW_REG_DOORBELL
 *   wfs_device_reset()        = write WFW_REG_CTRL with WFW_CTRL_RESET
 *   wfs_device_destroy()      stop the threads, free everything
 *
 * Memory: the device reaches host memory only through the driver's DMA
 * callbacks (struct wfs_dma_ops), with u64 "device addresses" whose meaning
 * is the driver's business (kernel: offsets into pinned GEM pages or a ring
 * buffer; userspace: plain pointers).  The callbacks must check every
 * address range and fail with a negative errno rather than touch memory the
 * command was not given.
 *
 * Interrupt: after posting completions (or setting a fault) the device sets
 * bits in WFW_REG_IRQ_STATUS and, if any of them is unmasked in
 * WFW_REG_IRQ_MASK, calls irq(irq_ctx).  Calling context: a firmware worker
 * thread (a kthread in the kernel: process context), never with any device
 * lock held, and never concurrently with itself: calls are serialised, and
 * no call is in progress or starts during a reset or after destroy begins.
 * The callback may read and write registers and signal dma-fences; it must
 * not sleep for long, and must not call wfs_device_reset() or
 * wfs_device_destroy() (defer those to a work item).  It is level
 * triggered: ack the bits (WFW_REG_IRQ_ACK) before draining the
 * completion ring so a completion posted meanwhile raises a new call.
 */
#ifndef WFS_DEVICE_H
#define WFS_DEVICE_H

#include "wfs_compat.h"
#include "wfw_abi.h"

struct wfs_device;

/**
 * struct wfs_dma_ops - the driver's view of host memory for the device
 * @read: copy @len bytes at device address @addr into @dst; 0 or -errno
 * @write: copy @len bytes from @src to device address @addr; 0 or -errno
 * @map: LOAD_MODEL only: return a CPU pointer to @len contiguous bytes at
 *	@addr that stay mapped and unchanged until the matching @unmap (the
 *	driver keeps the blob in memory userspace cannot write), or NULL
 * @unmap: release a @map (may be NULL)
 *
 * All are called from firmware threads (process context) and may sleep.
 */
struct wfs_dma_ops {
	int (*read)(void *ctx, u64 addr, void *dst, u64 len);
	int (*write)(void *ctx, u64 addr, const void *src, u64 len);
	const void *(*map)(void *ctx, u64 addr, u64 len);
	void (*unmap)(void *ctx, const void *p, u64 len);
};

/* struct wfs_device_config.flags */
#define WFS_DEV_FAULT_INJECT	WFW_BIT(0)	/* allow WFW_OP_FAULT_INJECT */

/* struct wfs_device_config.stage_workers */
#define WFS_STAGE_WORKERS_AUTO		(-1)	/* one per CPU, at most one per stage */
#define WFS_STAGE_WORKERS_PER_STAGE	0	/* one thread per stage */
#define WFS_STAGE_WORKERS_MAX		1024

/**
 * struct wfs_device_config - how to build a device
 * @profile: "wafer" (default when NULL or "") or "asic"
 * @stages: stage count override, 0 for the profile's
 * @sram_bytes: SRAM bytes per stage override, 0 for the profile's
 * @numa_node: NUMA node for the SRAM arenas and threads, -1 for any
 * @index: device index, used in thread names and log lines
 * @flags: WFS_DEV_*
 * @max_jobs: jobs in flight at most, 0 for the default (128)
 * @max_contexts: contexts at most, 0 for the default (64)
 * @stage_workers: host threads that run the stages: WFS_STAGE_WORKERS_PER_STAGE
 *	(0) one per stage, N (1..WFS_STAGE_WORKERS_MAX) a pool of at most N
 *	shared by the stages (wfs_workers.h), WFS_STAGE_WORKERS_AUTO one per
 *	CPU.  A pool as large as the stage count is one per stage.  The
 *	results and the modelled timeline are the same in every mode.
 * @dma: DMA callbacks (required)
 * @dma_ctx: their first argument
 * @irq: interrupt callback (may be NULL for polling drivers)
 * @irq_ctx: its argument
 */
struct wfs_device_config {
	const char *profile;
	u32 stages;
	u64 sram_bytes;
	int numa_node;
	int index;
	u32 flags;
	u32 max_jobs;
	u32 max_contexts;
	int stage_workers;
	const struct wfs_dma_ops *dma;
	void *dma_ctx;
	void (*irq)(void *ctx);
	void *irq_ctx;
};

/**
 * wfs_device_create() - instantiate a simulated device
 * @cfg: configuration
 * @out: the device
 *
 * Allocates everything the device will ever use (SRAM arenas on the NUMA
 * node, job and context tables, log) and starts the command processor (the
 * stage workers start with a model).  The device comes up READY with rings
 * disabled.
 * Process context.
 *
 * Return: 0, -WFS_EINVAL (bad profile name, override or stage_workers), -WFS_ENOENT
 * (unknown profile) or -WFS_ENOMEM.
 */
int wfs_device_create(const struct wfs_device_config *cfg,
		      struct wfs_device **out);

/**
 * wfs_device_destroy() - stop and free a device
 * @dev: device, or NULL
 *
 * Stops all firmware threads (in-flight work is discarded without
 * completions or interrupts) and frees all memory.  Process context; not
 * from the IRQ callback.
 */
void wfs_device_destroy(struct wfs_device *dev);

/**
 * wfs_device_mmio_read32() - read a register
 * @dev: device
 * @off: byte offset, WFW_REG_*
 *
 * Return: the value; 0 for unaligned, out-of-range or write-only offsets.
 */
u32 wfs_device_mmio_read32(struct wfs_device *dev, u32 off);

/**
 * wfs_device_mmio_write32() - write a register
 * @dev: device
 * @off: byte offset, WFW_REG_*
 * @val: value
 *
 * Any context, except a WFW_REG_CTRL write with WFW_CTRL_RESET, which
 * performs the reset synchronously (see wfs_device_reset()).
 */
void wfs_device_mmio_write32(struct wfs_device *dev, u32 off, u32 val);

/**
 * wfs_device_doorbell() - tell the device new commands are in the ring
 * @dev: device
 *
 * Same as writing WFW_REG_DOORBELL.  Any context.
 */
void wfs_device_doorbell(struct wfs_device *dev);

/**
 * wfs_device_reset() - reset the device (the only reset there is)
 * @dev: device
 * @full: also unload the model and destroy all contexts
 *
 * Same as writing WFW_REG_CTRL with WFW_CTRL_RESET (| WFW_CTRL_RESET_FULL).
 * Stops the command processor and every stage worker, discards all fetched
 * commands and in-flight jobs WITHOUT completions (the driver fails them),
 * zeroes ring indices and IRQ status, clears faults, and restarts the
 * threads.  Ring bases and sizes, ENABLE and IRQ_MASK are kept.  Returns
 * when the device is usable again.  Process context; sleeps; not from the
 * IRQ callback.
 *
 * Return: 0.
 */
int wfs_device_reset(struct wfs_device *dev, int full);

#endif /* WFS_DEVICE_H */
