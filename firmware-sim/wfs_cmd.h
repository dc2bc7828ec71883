/* SPDX-License-Identifier: MIT */
/*
 * wfs_cmd.h - the command processor (CP): fetch, validate, dispatch.
 */
#ifndef WFS_CMD_H
#define WFS_CMD_H

#include "wfs_compat.h"

/**
 * struct wfs_cp - command processor state
 * @thread: the CP thread
 * @cmd_head: the command ring's consumer index (CP only; zeroed by reset
 *	with the CP parked)
 * @stalled: the CP plays dead (no heartbeat, no commands) until a reset,
 *	as a firmware that stopped while idle (WFW_FAULT_STALL_CP; atomic)
 * @pause_load: the next LOAD_MODEL pauses (WFW_FAULT_PAUSE_NEXT_LOAD; CP
 *	only, cleared by reset with the CP parked)
 */
struct wfs_cp {
	struct wfs_os_thread *thread;
	u32 cmd_head;
	u32 stalled;
	u32 pause_load;
};

/**
 * wfs_cp_thread() - body of the command processor thread
 * @arg: the struct wfs_device
 */
void wfs_cp_thread(void *arg);

#endif /* WFS_CMD_H */
