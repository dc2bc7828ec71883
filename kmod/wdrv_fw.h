/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wafer firmware interface: the driver's side of the firmware ABI
 * (firmware-sim/abi/wfw_abi.h).  It owns the simulated device instance, the
 * command, control and completion rings, the interrupt handler, control
 * commands (synchronous for their caller, several in flight at once, each
 * with its own waiter (wdrv_ctrl.h), served by the firmware before jobs)
 * and reset.  Job completions are handed up to
 * the job layer through a callback, so this layer knows nothing above it.
 */
#ifndef WDRV_FW_H
#define WDRV_FW_H

#include <linux/bits.h>
#include <linux/completion.h>
#include <linux/list.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/atomic.h>

#include "wdrv_ctrl.h"
#include "wdrv_dma.h"
#include "wfw_abi.h"

struct wfs_device;
struct wdrv_fw;

/*
 * Cookies with the host ABI's control bit (wfw_host.h) are control
 * commands; the rest belong to jobs.  Bits 62..32 of a posted cookie carry
 * the reset generation it was posted in (the job layer's cookies are 32
 * bits): a completion from before a reset can then never complete a
 * command of the same id posted after.
 */
#define WDRV_FW_COOKIE_GEN	GENMASK_ULL(62, 32)

#define WDRV_FW_CMD_ENTRIES	256
#define WDRV_FW_CPL_ENTRIES	256
/* Control ring entries: control commands in flight at most. */
#define WDRV_FW_CTL_ENTRIES	16
/* The largest reply a control command's buffer takes. */
#define WDRV_FW_CTRL_BUF_SIZE	(64 * 1024)
/*
 * The slowest blob throughput a LOAD_MODEL is allowed beyond the control
 * timeout, in bytes per millisecond (4 MiB/s, well below what a debug
 * kernel under emulation checks and copies).
 */
#define WDRV_FW_LOAD_BYTES_PER_MS	4096

/**
 * struct wdrv_fw_config - how to bring a device up
 * @profile: "wafer" or "asic"
 * @stages: stage count, 0 for the profile's
 * @sram_bytes: SRAM per stage, 0 for the profile's
 * @numa_node: node for SRAM and firmware threads, or NUMA_NO_NODE
 * @index: device index (thread names, log lines)
 * @fault_inject: allow the test-only FAULT_INJECT command
 * @stage_workers: threads running the stages (struct wfs_device_config)
 * @ctrl_timeout_ms: how long a control command may wait while the firmware
 *	completes nothing (jobs ahead of it in the ring may take longer); a
 *	LOAD_MODEL's grows with its blob (WDRV_FW_LOAD_BYTES_PER_MS), and
 *	one queued behind another file's load waits for that load's time
 *	first (ctrl_wait())
 * @job_cpl: called for each job completion, from the interrupt handler
 *	(process context, must not sleep for long); @cpl is a verified copy
 * @fault: called when the device faulted or a completion was lost or
 *	corrupt; the owner must schedule a reset (not call it from here)
 * @owner: for the callbacks
 */
struct wdrv_fw_config {
	const char *profile;
	u32 stages;
	u64 sram_bytes;
	int numa_node;
	int index;
	bool fault_inject;
	int stage_workers;
	unsigned int ctrl_timeout_ms;
	void (*job_cpl)(void *owner, const struct wfw_cpl *cpl);
	void (*fault)(void *owner, const char *why);
	void *owner;
};

/**
 * struct wdrv_fw - one device's firmware interface
 * @wfs: the simulated device
 * @dma: its address space
 * @cfg: how it was brought up (callbacks included)
 * @cmd_ring: command ring memory (device address @cmd_addr)
 * @cpl_ring: completion ring memory (device address @cpl_addr)
 * @cmd_addr: device address of @cmd_ring
 * @cpl_addr: device address of @cpl_ring
 * @ctl_buf: control ring memory (device address @ctl_addr)
 * @ctl_addr: its device address
 * @ctl_ring: @ctl_buf once the firmware serves a control ring (ABI 1.8),
 *	else NULL: control commands then go in the command ring
 * @reset_sem: Held for writing across a reset and to mark @gone; control
 *	commands take it for reading from taking their cookie until posted,
 *	so none is posted into a ring being reset, with a cookie of the
 *	generation before, or after teardown
 * @cmd_lock: Protects @cmd_tail, @ctl_tail, @resetting, @gone, @gen and writes
 *	to the command and control rings
 * @cmd_tail: producer index of the command ring
 * @ctl_tail: producer index of the control ring
 * @resetting: a reset is in progress: nothing may be posted
 * @gone: the firmware was destroyed (wdrv_fw_fini()): nothing may be
 *	posted, control commands fail with -ENODEV (set under @reset_sem too)
 * @gen: reset generation, stamped into posted cookies (WDRV_FW_COOKIE_GEN)
 * @cpl_lock: Protects @cpl_head, @cpl_seq and @cpl_work
 * @cpl_head: consumer index of the completion ring
 * @cpl_seq: sequence number of the last completion seen
 * @ctrl: the control commands in flight, a waiter each, keyed by cookie
 *	(LOAD_MODELs of several files too: the firmware queues them)
 * @info: GET_INFO result from bring-up (device shape; model fields stale)
 * @tokens: tokens of the jobs completed with status 0 (wdrv_fw_tokens())
 * @cpl_work: queued on system_unbound_wq after each job completion (the
 *	owner's counter refresh); set before wdrv_fw_init(), cleared under
 *	@cpl_lock by wdrv_fw_stop_cpl_work()
 */
struct wdrv_fw {
	struct wfs_device *wfs;
	struct wdrv_dma dma;
	struct wdrv_fw_config cfg;
	struct wfw_cmd *cmd_ring;
	struct wfw_cpl *cpl_ring;
	u64 cmd_addr;
	u64 cpl_addr;
	struct wfw_cmd *ctl_buf;
	u64 ctl_addr;
	struct wfw_cmd *ctl_ring;
	struct rw_semaphore reset_sem;
	spinlock_t cmd_lock; /* Protects cmd/ctl_tail, resetting, gone, gen, the rings */
	u32 cmd_tail;
	u32 ctl_tail;
	bool resetting;
	bool gone;
	u32 gen;
	spinlock_t cpl_lock; /* Protects cpl_head, cpl_seq, cpl_work */
	u32 cpl_head;
	u32 cpl_seq;
	struct wdrv_ctrl_table ctrl;
	struct wfw_info info;
	atomic64_t tokens;
	struct work_struct *cpl_work;
};

int wdrv_fw_init(struct wdrv_fw *fw, const struct wdrv_fw_config *cfg);
void wdrv_fw_fini(struct wdrv_fw *fw);
int wdrv_fw_post(struct wdrv_fw *fw, const struct wfw_cmd *cmd);
int wdrv_fw_ctrl(struct wdrv_fw *fw, struct wfw_cmd *cmd, struct wfw_cpl *cpl);
int wdrv_fw_ctrl_buf(struct wdrv_fw *fw, struct wfw_cmd *cmd, struct wfw_cpl *cpl,
		     void *buf, u64 addr, bool *taken);
int wdrv_fw_ctrl_read(struct wdrv_fw *fw, u16 opcode, u32 index, u64 pos,
		      void *out, u32 len, struct wfw_cpl *cpl);
int wdrv_fw_ctrl_read_model(struct wdrv_fw *fw, u16 opcode, u32 model, u32 index,
			    u64 pos, void *out, u32 len, struct wfw_cpl *cpl);
void wdrv_fw_reset(struct wdrv_fw *fw, bool full);
u64 wdrv_fw_tokens(struct wdrv_fw *fw);
void wdrv_fw_stop_cpl_work(struct wdrv_fw *fw);
u32 wdrv_fw_read_reg(struct wdrv_fw *fw, u32 off);
bool wdrv_fw_ctrl_busy(struct wdrv_fw *fw);

#endif /* WDRV_FW_H */
