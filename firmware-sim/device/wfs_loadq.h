/* SPDX-License-Identifier: MIT */
/*
 * wfs_loadq.h - the load worker: LOAD_MODEL's check of a blob off the
 * command processor.
 *
 * The CP reserves the model slot (marked loading), maps the blob and hands
 * the command here; the worker thread checks the blob (the validator and
 * the checksum over every byte, the part of a load that grows with the
 * blob) while the CP goes on serving the control and command rings.  Once
 * checked, the CP places and copies the model (wfs_load_place()) and posts
 * the load's completion.  One load runs at a time: a LOAD_MODEL fetched
 * meanwhile completes -EAGAIN.  A reset waits for the check to end and
 * drops the load without a completion, as every command it discards; a
 * destroy joins the worker.
 */
#ifndef WFS_LOADQ_H
#define WFS_LOADQ_H

#include "wfs_compat.h"
#include "wfs_model.h"
#include "wfw_abi.h"

struct wfs_device;

/**
 * enum wfs_loadq_state - where the device's one load is
 * @WFS_LOADQ_IDLE: no load
 * @WFS_LOADQ_QUEUED: handed to the worker, not yet started
 * @WFS_LOADQ_CHECKING: the worker checks the blob
 * @WFS_LOADQ_CHECKED: checked (or refused); the CP places it next
 */
enum wfs_loadq_state {
	WFS_LOADQ_IDLE,
	WFS_LOADQ_QUEUED,
	WFS_LOADQ_CHECKING,
	WFS_LOADQ_CHECKED,
};

/**
 * struct wfs_loadq - the load worker and its one load
 * @thread: the worker thread
 * @state: enum wfs_loadq_state (sync.lock; the CP moves it from and to
 *	IDLE, the worker in between; the sync cond is broadcast on changes)
 * @pause: the load pauses before its check (WFW_FAULT_PAUSE_NEXT_LOAD)
 * @unpause: FAULT_INJECT NONE ended the pause (sync.lock)
 * @cmd: the LOAD_MODEL (a private copy)
 * @slot: its reserved model slot
 * @blob: the mapped blob
 * @t0: when the CP took the command (the completion's host_ns)
 * @check: the check's result
 * @info: what the check found
 */
struct wfs_loadq {
	struct wfs_os_thread *thread;
	u32 state;
	u32 pause;
	u32 unpause;
	struct wfw_cmd cmd;
	u32 slot;
	const u8 *blob;
	u64 t0;
	int check;
	struct wfs_model_info info;
};

/**
 * wfs_loadq_start() - start the load worker
 * @dev: device being created
 *
 * Return: 0 or -WFS_ENOMEM.
 */
int wfs_loadq_start(struct wfs_device *dev);

/**
 * wfs_loadq_stop() - join the load worker (a stop was requested) and give
 *	back the blob of a load it leaves
 * @dev: device being destroyed
 */
void wfs_loadq_stop(struct wfs_device *dev);

/**
 * wfs_loadq_submit() - take a checked LOAD_MODEL command (CP thread)
 * @dev: device
 * @cmd: the command
 * @pause: pause the load before its check (fault injection)
 *
 * Return: WFS_CPL_DEFERRED (the load's completion comes later), or
 * -WFS_EAGAIN while another load runs, -WFS_EBUSY with every model slot
 * taken, -WFS_EOPNOTSUPP, -WFS_EFAULT (blob not mappable).
 */
int wfs_loadq_submit(struct wfs_device *dev, const struct wfw_cmd *cmd,
		     u32 pause);

/**
 * wfs_loadq_finish() - place a checked load and post its completion
 * @dev: device (CP thread)
 *
 * Does nothing unless the load is checked and no reset is under way.
 */
void wfs_loadq_finish(struct wfs_device *dev);

/**
 * wfs_loadq_unpause() - end a paused load's pause (FAULT_INJECT NONE)
 * @dev: device
 */
void wfs_loadq_unpause(struct wfs_device *dev);

/**
 * wfs_loadq_drop() - wait for a running check to end, then drop the load
 *	without a completion and free its slot
 * @dev: device being reset, with the CP and the stage workers parked
 */
void wfs_loadq_drop(struct wfs_device *dev);

#endif /* WFS_LOADQ_H */
