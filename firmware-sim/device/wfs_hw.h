/* SPDX-License-Identifier: MIT */
/*
 * wfs_hw.h - what every part of the device touches: the register block,
 * the interrupt line, the command processor's doorbell event, the
 * driver's DMA callbacks and the firmware log.  Lowest device layer.
 */
#ifndef WFS_HW_H
#define WFS_HW_H

#include "wfs_compat.h"
#include "wfs_device.h"
#include "wfs_log.h"
#include "wfs_os.h"
#include "wfs_profile.h"
#include "wfw_abi.h"

/**
 * struct wfs_hw - the device's fixed resources (set up at create)
 * @prof: its profile (overrides applied)
 * @index: device index
 * @numa_node: NUMA node or -1
 * @flags: WFS_DEV_*
 * @dma: DMA callbacks
 * @dma_ctx: their argument
 * @irq: interrupt callback
 * @irq_ctx: its argument
 * @regs: the register block (accessed with wfs_os atomics)
 * @irq_running: 1 while a thread delivers the interrupt
 * @irq_kick: interrupt delivery requested
 * @kick: the command processor's doorbell event
 * @log: firmware log
 * @log_lock: the log's lock (a leaf)
 * @log_buf: the log's storage
 */
struct wfs_hw {
	struct wfs_profile prof;
	int index;
	int numa_node;
	u32 flags;
	struct wfs_dma_ops dma;
	void *dma_ctx;
	void (*irq)(void *ctx);
	void *irq_ctx;
	u32 regs[WFW_REG_BLOCK_SIZE / 4];
	u32 irq_running;
	u32 irq_kick;
	struct wfs_os_event *kick;
	struct wfs_log log;
	struct wfs_os_mutex *log_lock;
	char *log_buf;
};

u32 wfs_reg_get(struct wfs_hw *hw, u32 off);
void wfs_reg_set(struct wfs_hw *hw, u32 off, u32 val);
/* Atomically set then clear bits of a register. */
void wfs_reg_update(struct wfs_hw *hw, u32 off, u32 set, u32 clear);

/**
 * wfs_raise_irq() - latch interrupt bits and call the driver
 * @hw: device
 * @bits: WFW_IRQ_* (0: deliver what is pending)
 *
 * Firmware threads only, with no device lock held.
 */
void wfs_raise_irq(struct wfs_hw *hw, u32 bits);

/**
 * wfs_raise_irq_deferred() - latch interrupt bits; the CP delivers them
 * @hw: device
 * @bits: WFW_IRQ_* (0: only ask for a delivery)
 *
 * Any context (the driver's register writes use it).
 */
void wfs_raise_irq_deferred(struct wfs_hw *hw, u32 bits);

/**
 * wfs_set_fault() - record a device fault and halt command processing
 * @hw: device
 * @fault: WFW_FAULT_* bit
 *
 * Any thread; the interrupt is delivered by the CP.
 */
void wfs_set_fault(struct wfs_hw *hw, u32 fault);

/* Wake the command processor. */
void wfs_hw_kick(struct wfs_hw *hw);

#endif /* WFS_HW_H */
