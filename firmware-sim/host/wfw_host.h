/* SPDX-License-Identifier: MIT */
/*
 * wfw_host.h - the host's half of the firmware ABI (wfw_abi.h), shared by
 * every driver of the device: kmod/wdrv_fw.c, libwafer's in-process
 * backend and the unit tests' harness.  Bringing the rings up, publishing
 * commands, taking and checking completion records, and the cookie bit
 * that marks control commands are done the same way everywhere; locking,
 * cookies' other bits and what a completion means stay with each driver.
 */
#ifndef WFW_HOST_H
#define WFW_HOST_H

#include "wfs_compat.h"
#include "wfs_device.h"
#include "wfw_abi.h"

/* Set in the cookie of a control command; a job's cookie never has it. */
#define WFW_HOST_COOKIE_CTRL	(1ull << 63)

/**
 * wfw_host_enable_rings() - program both rings, unmask interrupts, enable
 * @dev: the device, after create or a reset (its indices are 0)
 * @cmd_addr: device address of the command ring
 * @cmd_entries: its entries (a power of two)
 * @cpl_addr: device address of the completion ring
 * @cpl_entries: its entries (a power of two)
 *
 * Return: 0, or -WFS_EIO if the device did not report itself enabled.
 */
int wfw_host_enable_rings(struct wfs_device *dev, u64 cmd_addr, u32 cmd_entries,
			  u64 cpl_addr, u32 cpl_entries);

/* The firmware ABI minor that brought the control ring (WFW_REG_CTL_*). */
#define WFW_ABI_MINOR_CTL_RING	8

/**
 * wfw_host_has_ctl_ring() - does the device serve a control ring?
 * @dev: the device
 *
 * Return: 1 if its ABI is 1.8 or later.
 */
int wfw_host_has_ctl_ring(struct wfs_device *dev);

/**
 * wfw_host_set_ctl_ring() - program the control ring (before enabling)
 * @dev: the device, not enabled (after create or a reset: indices 0)
 * @addr: device address of the ring
 * @entries: its entries (a power of two, at most WFW_CTL_RING_MAX_ENTRIES)
 *
 * Only for a device wfw_host_has_ctl_ring() says serves one.  ENABLE
 * (wfw_host_enable_rings()) latches it with the other rings.
 */
void wfw_host_set_ctl_ring(struct wfs_device *dev, u64 addr, u32 entries);

/**
 * wfw_host_put() - copy commands to the command ring and publish them
 * @dev: the device
 * @ring: the command ring
 * @entries: its entries
 * @tail: the producer index (the caller serialises producers); advanced
 * @cmds: the commands
 * @n: how many
 *
 * The caller rings the doorbell (wfs_device_doorbell()) afterwards.
 *
 * Return: 0, or -WFS_EBUSY if the ring has no room for all @n (nothing
 * was written).
 */
int wfw_host_put(struct wfs_device *dev, struct wfw_cmd *ring, u32 entries, u32 *tail,
		 const struct wfw_cmd *cmds, u32 n);

/**
 * wfw_host_put_ctl() - wfw_host_put() for the control ring
 * @dev: the device
 * @ring: the control ring
 * @entries: its entries
 * @tail: its producer index (the caller serialises producers); advanced
 * @cmds: the commands (no RUN_JOB)
 * @n: how many
 *
 * The device serves this ring before the command ring.
 *
 * Return: 0, or -WFS_EBUSY if the ring has no room for all @n.
 */
int wfw_host_put_ctl(struct wfs_device *dev, struct wfw_cmd *ring, u32 entries, u32 *tail,
		     const struct wfw_cmd *cmds, u32 n);

/**
 * enum wfw_host_cpl - what a completion record taken from the ring is
 * @WFW_HOST_CPL_OK: valid, and the one after the last valid record
 * @WFW_HOST_CPL_LOST: valid, but records before it were lost (a gap in
 *	the sequence numbers)
 * @WFW_HOST_CPL_CORRUPT: its check value or valid flag is wrong: use no
 *	field of it
 */
enum wfw_host_cpl {
	WFW_HOST_CPL_OK,
	WFW_HOST_CPL_LOST,
	WFW_HOST_CPL_CORRUPT,
};

/**
 * wfw_host_cpl_take() - copy out and check the completion record at @head
 * @ring: the completion ring
 * @entries: its entries
 * @head: the consumer index, below the device's CPL_TAIL; advanced
 * @last_seq: the sequence number of the last valid record taken (0 after
 *	enable or a reset)
 * @out: the record (one copy, so that what is checked is what is used)
 *
 * The caller writes CPL_HEAD once it has taken what it wants.
 *
 * Return: enum wfw_host_cpl.
 */
enum wfw_host_cpl wfw_host_cpl_take(const struct wfw_cpl *ring, u32 entries, u32 *head,
				    u32 last_seq, struct wfw_cpl *out);

/**
 * wfw_host_irq_ack() - read and acknowledge the pending interrupt causes
 * @dev: the device
 *
 * Acknowledging before draining the completion ring makes a completion
 * posted meanwhile raise the interrupt again.
 *
 * Return: the causes (WFW_IRQ_*).
 */
u32 wfw_host_irq_ack(struct wfs_device *dev);

#endif /* WFW_HOST_H */
