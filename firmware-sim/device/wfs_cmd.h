/* SPDX-License-Identifier: MIT */
/*
 * wfs_cmd.h - the command processor (CP): fetch, validate, dispatch.
 */
#ifndef WFS_CMD_H
#define WFS_CMD_H

#include "wfs_compat.h"
#include "wfw_abi.h"

struct wfs_device;

/**
 * struct wfs_cp - command processor state
 * @thread: the CP thread
 * @cmd_head: the command ring's consumer index (CP only; zeroed by reset
 *	with the CP parked)
 * @stalled: the CP plays dead (no heartbeat, no commands) until a reset,
 *	as a firmware that stopped while idle (WFW_FAULT_STALL_CP; atomic)
 * @pause_load: the next LOAD_MODEL pauses (WFW_FAULT_PAUSE_NEXT_LOAD or
 *	WFW_FAULT_PAUSE_NEXT_COPY, where it pauses; CP
 *	only, cleared by reset with the CP parked)
 * @ctl_base: the control ring's latched address (written at ENABLE under
 *	the sync lock, while the CP fetches nothing)
 * @ctl_size: its latched entries, 0 when off
 * @ctl_head: its consumer index (CP only; zeroed by reset)
 * @held: a RUN_JOB fetched from the command ring that waits for a job
 *	table entry (its completion slot is reserved); the CP serves the
 *	control ring meanwhile.  Dropped by a reset, as every fetched command
 * @has_held: @held is valid
 */
struct wfs_cp {
	struct wfs_os_thread *thread;
	u32 cmd_head;
	u32 stalled;
	u32 pause_load;
	u64 ctl_base;
	u32 ctl_size;
	u32 ctl_head;
	struct wfw_cmd held;
	u32 has_held;
};

/**
 * wfs_cp_enable_ctl() - validate and latch the control ring's registers
 * @dev: the device, at ENABLE (the CP fetches nothing yet)
 *
 * Return: 0 (a CTL_SIZE of 0 leaves the ring off), or -WFS_EINVAL for a
 * base or size that is not usable.
 */
int wfs_cp_enable_ctl(struct wfs_device *dev);

/**
 * wfs_cp_reset() - forget the control ring's index and a held command
 * @dev: the device, with the CP parked
 */
void wfs_cp_reset(struct wfs_device *dev);

/**
 * wfs_cp_thread() - body of the command processor thread
 * @arg: the struct wfs_device
 */
void wfs_cp_thread(void *arg);

#endif /* WFS_CMD_H */
