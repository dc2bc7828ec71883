/* SPDX-License-Identifier: MIT */
/*
 * wafer_inproc_hw.h - a userspace driver core for a firmware-sim device in
 * this process: the same protocol kmod/wdrv_fw.c speaks (registers,
 * command and completion rings, doorbell, interrupt), with device
 * addresses that are plain pointers checked against registered regions.
 */
#ifndef WAFER_INPROC_HW_H
#define WAFER_INPROC_HW_H

#include <pthread.h>
#include <stdint.h>

#include "wafer.h"
#include "wafer_inproc_dma.h"
#include "wfs_device.h"
#include "wfw_abi.h"

#define WIP_CMD_ENTRIES		256
#define WIP_CPL_ENTRIES		256
/* Control ring entries (ABI 1.8): one control command at a time. */
#define WIP_CTL_ENTRIES		4

/**
 * struct wip_hw - the driver core
 * @dev: the simulated device
 * @lock: Protects @ctrl_*, @job_ud, @job_free, @done*, @fault
 * @cond: signalled (under @lock) when a completion or fault arrived
 * @post_lock: Protects @cmd_tail and the command ring
 * @ctrl_mutex: serialises control commands
 * @dma: the host regions the device may access (DMA callbacks' context)
 * @cmdq: command ring
 * @cmd_tail: producer index
 * @ctlq: control ring, which the device serves first (ABI 1.8); NULL on
 *	an older device: control commands go in @cmdq
 * @ctl_tail: its producer index (under @ctrl_mutex)
 * @cplq: completion ring
 * @cpl_head: consumer index (IRQ handler only)
 * @cpl_seq: last completion seq seen (IRQ handler only)
 * @ctrl_seq: cookie counter of control commands
 * @ctrl_cookie: cookie of the control command waited for, or 0
 * @ctrl_cpl: its completion
 * @ctrl_done: @ctrl_cpl is valid
 * @max_jobs: in-flight job limit (size of @job_ud)
 * @job_ud: user data of in-flight job i (cookie i + 1)
 * @job_free: free entries of @job_ud, a stack
 * @n_free: entries on @job_free
 * @done: completed jobs not reaped, a ring of @max_jobs
 * @done_head: oldest entry in @done
 * @done_count: entries in @done
 * @fault: a fault was seen: every job waited for fails with -EIO
 */
struct wip_hw {
	struct wfs_device *dev;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_mutex_t post_lock;
	pthread_mutex_t ctrl_mutex;
	struct wip_dma dma;
	struct wfw_cmd *cmdq;
	uint32_t cmd_tail;
	struct wfw_cmd *ctlq;
	uint32_t ctl_tail;
	struct wfw_cpl *cplq;
	uint32_t cpl_head;
	uint32_t cpl_seq;
	uint64_t ctrl_seq;
	uint64_t ctrl_cookie;
	struct wfw_cpl ctrl_cpl;
	int ctrl_done;
	unsigned int max_jobs;
	uint64_t *job_ud;
	unsigned int *job_free;
	unsigned int n_free;
	struct wafer_completion *done;
	unsigned int done_head;
	unsigned int done_count;
	int fault;
	void (*hook)(void *arg, const struct wafer_completion *c);
	void *hook_arg;
};

/* Create the device (@cfg's dma/irq fields are filled in) and enable the rings. */
int wip_hw_init(struct wip_hw *h, struct wfs_device_config *cfg, unsigned int max_jobs);
void wip_hw_fini(struct wip_hw *h);

/*
 * From now on hand job completions to @hook (from the completion thread, no
 * lock of @h held) instead of queuing them for wip_hw_reap().
 */
void wip_hw_set_hook(struct wip_hw *h, void (*hook)(void *arg, const struct wafer_completion *c),
		     void *arg);

/* Make [p, p + len) reachable by the device, or not any more. */
int wip_hw_region_add(struct wip_hw *h, void *p, uint64_t len);
void wip_hw_region_del(struct wip_hw *h, void *p);

/*
 * Run one control command (the cookie is assigned here) and wait up to
 * @timeout_ms for its completion.  Returns the command's status.
 */
int wip_hw_ctrl(struct wip_hw *h, struct wfw_cmd *cmd, struct wfw_cpl *cpl, int timeout_ms);

/*
 * Post RUN_JOB commands (cookies assigned here, user_data[i] kept for the
 * completion) and ring the doorbell once.  Returns how many were posted.
 */
int wip_hw_post_jobs(struct wip_hw *h, struct wfw_cmd *cmds, const uint64_t *user_data,
		     unsigned int n);

/* Reap job completions: up to @max, waiting for @min until @deadline_ns. */
int wip_hw_reap(struct wip_hw *h, struct wafer_completion *out, unsigned int max,
		unsigned int min, uint64_t deadline_ns);

#endif /* WAFER_INPROC_HW_H */
