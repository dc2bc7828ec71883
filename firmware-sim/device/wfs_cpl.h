/* SPDX-License-Identifier: MIT */
/*
 * wfs_cpl.h - the device side of the two rings: the ring configuration
 * latched at enable, completion-slot reservations, completion posting
 * (sequence numbers, check word, the armed drop/corrupt faults).
 *
 * The CP reserves a completion slot before it fetches a command, so a
 * completion is never lost to a full ring; whoever finishes the command
 * (the CP, or the last stage for RUN_JOB) posts it with wfs_cpl_post().
 */
#ifndef WFS_CPL_H
#define WFS_CPL_H

#include "wfs_hw.h"

/* Returned by a command handler whose completion is posted later (RUN_JOB)
 * or dropped by a reset.
 */
#define WFS_CPL_DEFERRED	1

/**
 * struct wfs_cpl_state - ring state
 * @lock: protects every field below; held across the completion DMA write
 *	so records land in ring order
 * @cmd_base: latched command ring address
 * @cpl_base: latched completion ring address
 * @cmd_size: latched command ring entries
 * @cpl_size: latched completion ring entries
 * @cpl_tail: completion ring producer index
 * @cpl_head_seen: last CPL_HEAD value accepted
 * @cpl_seq: last completion sequence number posted
 * @cpl_reserved: commands fetched whose completion is not posted yet
 * @faults_armed: bitmask of 1 << enum wfw_fault armed
 */
struct wfs_cpl_state {
	struct wfs_os_mutex *lock;
	u64 cmd_base;
	u64 cpl_base;
	u32 cmd_size;
	u32 cpl_size;
	u32 cpl_tail;
	u32 cpl_head_seen;
	u32 cpl_seq;
	u32 cpl_reserved;
	u32 faults_armed;
};

/**
 * wfs_cpl_enable_rings() - validate and latch the ring registers
 * @hw: device
 * @r: ring state
 *
 * Return: 0, or -WFS_EINVAL if a base or size is unusable (the caller
 * raises the RING_CONFIG fault).
 */
int wfs_cpl_enable_rings(struct wfs_hw *hw, struct wfs_cpl_state *r);

/* The latched command ring (base, entries). */
void wfs_cpl_cmd_ring(struct wfs_cpl_state *r, u64 *base, u32 *size);

/* Zero indices, sequence, reservations and armed faults (reset). */
void wfs_cpl_reset(struct wfs_cpl_state *r);

/**
 * wfs_cpl_reserve() - reserve a completion ring entry for a new command
 * @hw: device
 * @r: ring state
 *
 * Return: 0; -WFS_EAGAIN if the ring has no room (the driver has not
 * consumed enough); -WFS_EIO if the driver's CPL_HEAD is inconsistent
 * (a fault is raised).
 */
int wfs_cpl_reserve(struct wfs_hw *hw, struct wfs_cpl_state *r);

/* Give back a reservation without posting. */
void wfs_cpl_unreserve(struct wfs_cpl_state *r);

/**
 * wfs_cpl_post() - write a completion record and raise the interrupt
 * @hw: device
 * @r: ring state
 * @c: the record (seq, flags and check are filled in here)
 * @is_job: a RUN_JOB completion (armed drop/corrupt faults apply)
 *
 * Uses the reservation made when the command was fetched.  No lock is
 * held across the IRQ callback.  Firmware threads only.
 */
void wfs_cpl_post(struct wfs_hw *hw, struct wfs_cpl_state *r, struct wfw_cpl *c,
		  int is_job);

/**
 * wfs_cpl_arm_fault() - arm a completion fault (FAULT_INJECT)
 * @r: ring state
 * @fault: enum wfw_fault; WFW_FAULT_NONE disarms all, faults that are not
 *	about completions are ignored here
 */
void wfs_cpl_arm_fault(struct wfs_cpl_state *r, u32 fault);

#endif /* WFS_CPL_H */
