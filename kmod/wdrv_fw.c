// SPDX-License-Identifier: GPL-2.0-only
/*
 * wafer firmware interface: bring-up, rings, interrupt, control commands,
 * reset.  See wdrv_fw.h and firmware-sim/abi/wfw_abi.h.
 */
#include <linux/bitfield.h>
#include <linux/jiffies.h>
#include <linux/lockdep.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/numa.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "wdrv_ctrl.h"
#include "wdrv_fw.h"
#include "wdrv_params.h"
#include "wfs_device.h"
#include "wfs_profile.h"
#include "wfs_ring.h"
#include "wfw_host.h"

static_assert(WDRV_STAGE_WORKERS_MAX == WFS_STAGE_WORKERS_MAX);

u32 wdrv_fw_read_reg(struct wdrv_fw *fw, u32 off)
{
	return wfs_device_mmio_read32(fw->wfs, off);
}

static void write_reg(struct wdrv_fw *fw, u32 off, u32 val)
{
	wfs_device_mmio_write32(fw->wfs, off, val);
}

/*
 * Hands a verified completion to its owner: the control command's waiter
 * or a job, with the cookie it posted.  One of another generation is stale: dropped.
 */
static void dispatch(struct wdrv_fw *fw, struct wfw_cpl *c)
{
	/* gen changes only in a reset, when this never runs. */
	if (FIELD_GET(WDRV_FW_COOKIE_GEN, c->cookie) != READ_ONCE(fw->gen)) {
		pr_warn_ratelimited("wafer: device %d: stale completion %#llx dropped\n",
				    fw->cfg.index, c->cookie);
		return;
	}
	if (!(c->cookie & WFW_HOST_COOKIE_CTRL)) {
		c->cookie &= ~WDRV_FW_COOKIE_GEN;
		if (c->opcode == WFW_OP_RUN_JOB && !c->status)
			atomic64_add(c->result0, &fw->tokens);
		fw->cfg.job_cpl(fw->cfg.owner, c);
		spin_lock(&fw->cpl_lock);
		if (fw->cpl_work)
			queue_work(system_unbound_wq, fw->cpl_work);
		spin_unlock(&fw->cpl_lock);
		return;
	}
	wdrv_ctrl_complete(&fw->ctrl, c);
}

/*
 * The emulated interrupt: called by a firmware thread (process context,
 * serialised, never during a reset).  Acks first, then drains, so that a
 * completion posted meanwhile raises another call.
 */
static void wdrv_fw_irq(void *ctx)
{
	struct wdrv_fw *fw = ctx;
	u32 status, head, tail;

	status = wfw_host_irq_ack(fw->wfs);

	if (status & WFW_IRQ_FAULT)
		fw->cfg.fault(fw->cfg.owner, "the device reported a fault");

	spin_lock(&fw->cpl_lock);
	head = fw->cpl_head;
	spin_unlock(&fw->cpl_lock);
	tail = wdrv_fw_read_reg(fw, WFW_REG_CPL_TAIL);
	if (!wfs_ring_indices_valid(head, tail, WDRV_FW_CPL_ENTRIES)) {
		fw->cfg.fault(fw->cfg.owner, "completion ring tail out of range");
		return;
	}
	while (head != tail) {
		enum wfw_host_cpl got;
		struct wfw_cpl c;

		/* Only this (and a reset, never concurrent) writes cpl_seq. */
		got = wfw_host_cpl_take(fw->cpl_ring, WDRV_FW_CPL_ENTRIES, &head,
					READ_ONCE(fw->cpl_seq), &c);
		if (got == WFW_HOST_CPL_CORRUPT) {
			fw->cfg.fault(fw->cfg.owner, "corrupt completion record");
			continue;
		}
		spin_lock(&fw->cpl_lock);
		fw->cpl_seq = c.seq;
		spin_unlock(&fw->cpl_lock);
		if (got == WFW_HOST_CPL_LOST)
			fw->cfg.fault(fw->cfg.owner, "a completion was lost");
		dispatch(fw, &c);
	}
	spin_lock(&fw->cpl_lock);
	fw->cpl_head = head;
	spin_unlock(&fw->cpl_lock);
	write_reg(fw, WFW_REG_CPL_HEAD, head);
}

/**
 * wdrv_fw_post() - put a command in the command ring and ring the doorbell
 * @fw: firmware interface
 * @cmd: the command (copied)
 *
 * Never sleeps (called from the scheduler's run_job).  The job layer's
 * credit limit keeps the ring from overflowing; -EBUSY says it did anyway.
 * The posted cookie carries the reset generation (WDRV_FW_COOKIE_GEN).
 *
 * Return: 0, -EBUSY, -EIO during a reset, or -ENODEV once the firmware
 * is gone (wdrv_fw_fini()).
 */
int wdrv_fw_post(struct wdrv_fw *fw, const struct wfw_cmd *cmd)
{
	struct wfw_cmd c = *cmd;
	unsigned long flags;
	int ret;

	spin_lock_irqsave(&fw->cmd_lock, flags);
	if (fw->resetting || fw->gone) {
		ret = fw->gone ? -ENODEV : -EIO;
		spin_unlock_irqrestore(&fw->cmd_lock, flags);
		return ret;
	}
	c.cookie = (cmd->cookie & ~WDRV_FW_COOKIE_GEN) |
		   FIELD_PREP(WDRV_FW_COOKIE_GEN, fw->gen);
	ret = wfw_host_put(fw->wfs, fw->cmd_ring, WDRV_FW_CMD_ENTRIES, &fw->cmd_tail, &c, 1);
	spin_unlock_irqrestore(&fw->cmd_lock, flags);
	if (ret)
		return -EBUSY;
	wfs_device_doorbell(fw->wfs);
	return 0;
}

/*
 * Puts a control command in the control ring, which the firmware serves
 * before the jobs in the command ring, or in the command ring on a
 * firmware without one (ABI < 1.8).  Return: 0, -EBUSY, -EIO or -ENODEV.
 */
static int ctrl_put(struct wdrv_fw *fw, const struct wfw_cmd *cmd)
{
	unsigned long flags;
	int ret;

	if (!fw->ctl_ring)
		return wdrv_fw_post(fw, cmd);
	spin_lock_irqsave(&fw->cmd_lock, flags);
	if (fw->resetting || fw->gone) {
		ret = fw->gone ? -ENODEV : -EIO;
		spin_unlock_irqrestore(&fw->cmd_lock, flags);
		return ret;
	}
	ret = wfw_host_put_ctl(fw->wfs, fw->ctl_ring, WDRV_FW_CTL_ENTRIES, &fw->ctl_tail, cmd, 1);
	spin_unlock_irqrestore(&fw->cmd_lock, flags);
	if (ret)
		return -EBUSY;
	wfs_device_doorbell(fw->wfs);
	return 0;
}

/*
 * Gives a control command its cookie (the waiter's id, the reset
 * generation) and posts it, with no reset or teardown in between: a reset
 * fails the waiters of the commands it discarded, so one posted after it
 * would run while its caller is told -EIO.
 */
static int ctrl_post(struct wdrv_fw *fw, struct wdrv_ctrl_waiter *w,
		     struct wfw_cmd *cmd, u32 *seq)
{
	int ret;

	down_read(&fw->reset_sem);
	if (fw->gone) {
		ret = -ENODEV;
		goto out;
	}
	ret = wdrv_ctrl_arm(&fw->ctrl, w, WFW_HOST_COOKIE_CTRL |
			    FIELD_PREP(WDRV_FW_COOKIE_GEN, fw->gen));
	if (ret)
		goto out;
	cmd->cookie = w->cookie;
	spin_lock(&fw->cpl_lock);
	*seq = fw->cpl_seq;
	spin_unlock(&fw->cpl_lock);
	ret = ctrl_put(fw, cmd);
out:
	up_read(&fw->reset_sem);
	return ret;
}

/*
 * The id of the load another command waits behind: the load the firmware
 * runs (ABI 1.11; an older firmware reads 0 there), if not @w's own.
 */
static u32 load_ahead(struct wdrv_fw *fw, const struct wdrv_ctrl_waiter *w)
{
	u32 run = wdrv_fw_read_reg(fw, WFW_REG_LOAD_RUNNING);

	return run == lower_32_bits(w->cookie) ? 0 : run;
}

/*
 * Waits for a control command's completion.  From the control ring it
 * waits at most for the job the firmware is taking in; without one (ABI <
 * 1.8) it runs after every job already in the ring, which together may
 * take much longer than the timeout.  Either way the firmware is only
 * stuck if it completes nothing for a whole timeout, and not while a reset
 * is under way (one behind a hung job: it ends this wait itself).
 *
 * A LOAD_MODEL (@load) queued in the firmware behind another file's load
 * is timed from when its own load begins, not from when it was posted:
 * each load ahead ends with a completion, which starts its time again,
 * and while one runs it waits that load's own time (its waiter's, parked
 * or not) before taking the firmware for stuck.  So a small load behind a
 * large one never times out, and resets the device, while the large one
 * is within its time.  Return: 0, -ETIMEDOUT, or -EINTR when @killable and
 * killed.
 */
static int ctrl_wait(struct wdrv_fw *fw, struct wdrv_ctrl_waiter *w, u32 seq,
		     bool killable, bool load)
{
	unsigned int ms = w->timeout_ms;
	u32 now, ahead, seen = 0;
	long left;

	for (;;) {
		if (killable)
			left = wait_for_completion_killable_timeout(&w->done,
								    msecs_to_jiffies(ms));
		else
			left = wait_for_completion_timeout(&w->done, msecs_to_jiffies(ms));
		if (left > 0)
			return 0;
		if (left < 0)
			return -EINTR;
		spin_lock(&fw->cpl_lock);
		now = fw->cpl_seq;
		spin_unlock(&fw->cpl_lock);
		if (now != seq || READ_ONCE(fw->resetting)) {
			seq = now;
			continue;
		}
		ahead = load ? load_ahead(fw, w) : 0;
		if (!ahead || ahead == seen)
			return -ETIMEDOUT;
		/* A load ahead runs: its own time, then this one's. */
		seen = ahead;
		ms = max(w->timeout_ms, wdrv_ctrl_timeout_of(&fw->ctrl, ahead));
	}
}

/*
 * How long a control command may run while the firmware completes nothing:
 * a LOAD_MODEL reads and checks its whole blob first, so its time grows
 * with the blob (WDRV_FW_LOAD_BYTES_PER_MS), and a large legal load is not
 * taken for a hung firmware, which would reset the device under the other
 * tenants.
 */
static unsigned int ctrl_timeout_ms(const struct wdrv_fw *fw, const struct wfw_cmd *cmd)
{
	u64 ms = fw->cfg.ctrl_timeout_ms;

	if (cmd->opcode == WFW_OP_LOAD_MODEL)
		ms += div_u64(cmd->load.len, WDRV_FW_LOAD_BYTES_PER_MS);
	return min_t(u64, ms, UINT_MAX);
}

/*
 * Runs a control command with its own waiter @w, alongside any others in
 * flight.  A command that timed out or was abandoned (-EINTR) may still
 * run: with a buffer its waiter is parked (*@parked; the table frees it),
 * without one it leaves the table and its completion is dropped.
 */
static int ctrl_run(struct wdrv_fw *fw, struct wdrv_ctrl_waiter *w,
		    struct wfw_cmd *cmd, struct wfw_cpl *cpl, bool killable,
		    bool *parked)
{
	bool gave_up, has_buf = w->buf;
	u32 seq;
	int ret;

	*parked = false;
	memset(cpl, 0, sizeof(*cpl));
	w->timeout_ms = ctrl_timeout_ms(fw, cmd);
	if (READ_ONCE(fw->gone)) {
		cpl->status = -ENODEV;
		return cpl->status;
	}
	ret = wdrv_ctrl_add(&fw->ctrl, w, killable);
	if (ret) {
		cpl->status = ret;
		return ret;
	}
	ret = ctrl_post(fw, w, cmd, &seq);
	if (!ret)
		ret = ctrl_wait(fw, w, seq, killable, cmd->opcode == WFW_OP_LOAD_MODEL);
	gave_up = ret == -ETIMEDOUT || ret == -EINTR;
	/* Once parked, @w is the table's: not touched here again. */
	if (!wdrv_ctrl_end(&fw->ctrl, w, gave_up, cpl)) {
		*parked = gave_up && has_buf;
		cpl->status = ret;
		if (ret == -ETIMEDOUT)
			fw->cfg.fault(fw->cfg.owner, "a control command timed out");
	}
	return cpl->status;
}

/**
 * wdrv_fw_ctrl() - run a control command and wait for its completion
 * @fw: firmware interface
 * @cmd: the command; its cookie is assigned here
 * @cpl: out: the completion record (status -ETIMEDOUT / -EIO when none came)
 *
 * Sleeps; other control commands run meanwhile, each with its own waiter.
 *
 * Return: the command's status, -ENODEV once the firmware is gone.
 */
int wdrv_fw_ctrl(struct wdrv_fw *fw, struct wfw_cmd *cmd, struct wfw_cpl *cpl)
{
	struct wdrv_ctrl_waiter *w = wdrv_ctrl_waiter_new(NULL, 0);
	bool parked;
	int ret;

	if (!w)
		return -ENOMEM;
	ret = ctrl_run(fw, w, cmd, cpl, false, &parked);
	kfree(w);
	return ret;
}

/*
 * Drops an abandoned LOAD_MODEL of @cookie that waits in the firmware's
 * queue; one already running ends on its own.  Best effort: the parked
 * waiter frees the blob on whichever completion comes.
 */
static void ctrl_cancel_load(struct wdrv_fw *fw, u64 cookie)
{
	struct wfw_cmd cmd = { .opcode = WFW_OP_LOAD_CANCEL };
	struct wfw_cpl cpl;

	cmd.cancel.cookie = cookie;
	wdrv_fw_ctrl(fw, &cmd, &cpl);
}

/**
 * wdrv_fw_ctrl_buf() - run a control command that reads a caller's buffer
 * @fw: firmware interface
 * @cmd: the command (a LOAD_MODEL); its cookie is assigned here
 * @cpl: out: the completion record
 * @buf: kvmalloc()ed buffer the command reads
 * @addr: its device window (wdrv_dma_map())
 * @taken: out: whether this took @buf and @addr
 *
 * No lock is held across the wait: several files' LOAD_MODELs are in
 * flight at once, each with its own waiter and buffer, alongside any other
 * control command.  The firmware runs one load at a time and queues the
 * others in the order it fetched them (ABI 1.10); a queued load is timed
 * from when the firmware begins it (ctrl_wait()).  Its queue holds a load
 * per model slot, and the model table charges a slot before a load is
 * sent, so a load never waits for room in it: a device whose slots are
 * all loaded or loading refuses MODEL_LOAD with -EBUSY before this, and
 * the firmware's own -EBUSY (a slot still held by a load whose caller gave
 * up) is returned as it is.  Waiting for a control ring entry is the only
 * other wait (wdrv_ctrl_add()), killable.
 *
 * A fatal signal ends the wait (-EINTR).  If the command timed out or was
 * abandoned so, the firmware may still read @buf: then this takes both,
 * and unmaps and frees them once the firmware is past the command (its
 * own completion, a reset or teardown).  An abandoned load still queued is
 * dropped (LOAD_CANCEL): its -ECANCELED completion frees them.  Otherwise
 * they stay the caller's.
 *
 * Return: the command's status, -ETIMEDOUT, -EINTR, or -EBUSY.
 */
int wdrv_fw_ctrl_buf(struct wdrv_fw *fw, struct wfw_cmd *cmd, struct wfw_cpl *cpl,
		     void *buf, u64 addr, bool *taken)
{
	struct wdrv_ctrl_waiter *w;
	int ret;

	*taken = false;
	w = wdrv_ctrl_waiter_new(buf, addr);
	if (!w)
		return -ENOMEM;
	ret = ctrl_run(fw, w, cmd, cpl, true, taken);
	if (!*taken)
		kfree(w);
	else if (ret == -EINTR)
		ctrl_cancel_load(fw, cmd->cookie);
	return ret;
}

/*
 * One try of a command that writes a reply buffer of its own: allocated,
 * mapped, copied out on success, and given back, unless the command was
 * given up while the firmware may still write it (the table frees it).
 */
static int ctrl_read_once(struct wdrv_fw *fw, struct wfw_cmd *cmd, void *out,
			  u32 len, struct wfw_cpl *cpl)
{
	struct wdrv_ctrl_waiter *w;
	bool parked;
	void *buf;
	u64 addr;
	int ret;

	buf = kvzalloc(len, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	ret = wdrv_dma_map(&fw->dma, buf, len, WDRV_DMA_WRITE, GFP_KERNEL, &addr);
	if (ret) {
		kvfree(buf);
		return ret;
	}
	w = wdrv_ctrl_waiter_new(buf, addr);
	if (!w) {
		wdrv_dma_unmap(&fw->dma, addr);
		kvfree(buf);
		return -ENOMEM;
	}
	cmd->buf.addr = addr;
	ret = ctrl_run(fw, w, cmd, cpl, false, &parked);
	if (parked)
		return ret;
	wdrv_dma_unmap(&fw->dma, addr);
	if (!ret)
		memcpy(out, buf, len);
	kvfree(buf);
	kfree(w);
	return ret;
}

/**
 * wdrv_fw_ctrl_read_model() - run a command that writes a buffer, about a
 *	model, and copy it out
 * @fw: firmware interface
 * @opcode: WFW_OP_GET_INFO, GET_STATS, GET_SRAM_MAP, READ_LOG or
 *	GET_EXPERT_LOAD
 * @model: the firmware's id of the model it is about; 0: the only (or the
 *	lowest-index) model, and the only value for READ_LOG
 * @index: the payload's index
 * @pos: the payload's pos
 * @out: where the result goes
 * @len: bytes available at @out (at most WDRV_FW_CTRL_BUF_SIZE)
 * @cpl: out: the completion record
 *
 * Each command has a reply buffer of its own, so several run at once.
 * These commands change nothing, so one a reset discarded is sent again.
 *
 * Return: the command's status.
 */
int wdrv_fw_ctrl_read_model(struct wdrv_fw *fw, u16 opcode, u32 model, u32 index,
			    u64 pos, void *out, u32 len, struct wfw_cpl *cpl)
{
	struct wfw_cmd cmd = { .opcode = opcode, .model = model };
	int ret, tries = 3;
	u32 gen;

	if (!len || len > WDRV_FW_CTRL_BUF_SIZE)
		return -EINVAL;
	cmd.buf.len = len;
	cmd.buf.index = index;
	cmd.buf.pos = pos;
	do {
		gen = READ_ONCE(fw->gen);
		ret = ctrl_read_once(fw, &cmd, out, len, cpl);
	} while (ret == -EIO && gen != READ_ONCE(fw->gen) && --tries);
	return ret;
}

/**
 * wdrv_fw_ctrl_read() - wdrv_fw_ctrl_read_model() about model 0
 * @fw: firmware interface
 * @opcode: the command
 * @index: the payload's index
 * @pos: the payload's pos
 * @out: where the result goes
 * @len: bytes available at @out
 * @cpl: out: the completion record
 *
 * Return: the command's status.
 */
int wdrv_fw_ctrl_read(struct wdrv_fw *fw, u16 opcode, u32 index, u64 pos,
		      void *out, u32 len, struct wfw_cpl *cpl)
{
	return wdrv_fw_ctrl_read_model(fw, opcode, 0, index, pos, out, len, cpl);
}

/**
 * wdrv_fw_ctrl_busy() - whether a control command is in flight
 * @fw: firmware interface
 *
 * Return: true while any control command waits for the firmware.
 */
bool wdrv_fw_ctrl_busy(struct wdrv_fw *fw)
{
	return wdrv_ctrl_busy(&fw->ctrl);
}

/**
 * wdrv_fw_tokens() - tokens of the jobs completed with status 0
 * @fw: firmware interface
 *
 * Counted from the completions as they arrive, so never waits; a reset
 * does not clear it.
 *
 * Return: the count since bring-up.
 */
u64 wdrv_fw_tokens(struct wdrv_fw *fw)
{
	return atomic64_read(&fw->tokens);
}

/**
 * wdrv_fw_stop_cpl_work() - stop queueing @fw->cpl_work on completions
 * @fw: firmware interface
 *
 * Once this returns no completion queues it any more: the owner may then
 * cancel it for good.
 */
void wdrv_fw_stop_cpl_work(struct wdrv_fw *fw)
{
	spin_lock(&fw->cpl_lock);
	fw->cpl_work = NULL;
	spin_unlock(&fw->cpl_lock);
}

/**
 * wdrv_fw_reset() - reset the device and the driver's ring state
 * @fw: firmware interface
 * @full: also unload every model and destroy all contexts
 *
 * Every command in flight is discarded without a completion: the caller
 * fails the jobs it had posted.  A control command waiting is failed with
 * -EIO; new ones wait until the reset is over, and wdrv_fw_post() refuses
 * jobs meanwhile.  Buffers parked by timed-out control commands are freed.
 * Sleeps.
 */
void wdrv_fw_reset(struct wdrv_fw *fw, bool full)
{
	unsigned long flags;

	down_write(&fw->reset_sem);
	spin_lock_irqsave(&fw->cmd_lock, flags);
	fw->resetting = true;
	spin_unlock_irqrestore(&fw->cmd_lock, flags);

	wfs_device_reset(fw->wfs, full);

	spin_lock(&fw->cpl_lock);
	fw->cpl_head = 0;
	fw->cpl_seq = 0;
	spin_unlock(&fw->cpl_lock);

	spin_lock_irqsave(&fw->cmd_lock, flags);
	fw->cmd_tail = 0;
	fw->ctl_tail = 0;
	fw->gen = (fw->gen + 1) & (WDRV_FW_COOKIE_GEN >> 32);
	fw->resetting = false;
	spin_unlock_irqrestore(&fw->cmd_lock, flags);

	/*
	 * After the new generation: a waiter told -EIO must see that a
	 * reset discarded its command (wdrv_fw_ctrl_read_model() sends it
	 * again), not a command that failed.  The firmware is past every
	 * command now: parked buffers go too.
	 */
	wdrv_ctrl_fail_all(&fw->ctrl, -EIO);
	up_write(&fw->reset_sem);
}

/* Allocates the rings and maps them for the device. */
static int rings_alloc(struct wdrv_fw *fw, int node)
{
	size_t cmd_bytes = WDRV_FW_CMD_ENTRIES * sizeof(struct wfw_cmd);
	size_t cpl_bytes = WDRV_FW_CPL_ENTRIES * sizeof(struct wfw_cpl);
	size_t ctl_bytes = WDRV_FW_CTL_ENTRIES * sizeof(struct wfw_cmd);
	int ret;

	fw->cmd_ring = kvzalloc_node(cmd_bytes, GFP_KERNEL, node);
	fw->cpl_ring = kvzalloc_node(cpl_bytes, GFP_KERNEL, node);
	fw->ctl_buf = kvzalloc_node(ctl_bytes, GFP_KERNEL, node);
	if (!fw->cmd_ring || !fw->cpl_ring || !fw->ctl_buf)
		return -ENOMEM;
	ret = wdrv_dma_map(&fw->dma, fw->cmd_ring, cmd_bytes, 0, GFP_KERNEL, &fw->cmd_addr);
	if (!ret)
		ret = wdrv_dma_map(&fw->dma, fw->cpl_ring, cpl_bytes, WDRV_DMA_WRITE,
				   GFP_KERNEL, &fw->cpl_addr);
	if (!ret)
		ret = wdrv_dma_map(&fw->dma, fw->ctl_buf, ctl_bytes, 0, GFP_KERNEL, &fw->ctl_addr);
	return ret;
}

/*
 * A device's SRAM is allocated and zeroed at probe.  One that would take
 * more than half of the memory still available is refused with a
 * message, so that many devices (num_devices up to 64) on a small host or
 * guest stop with that message rather than an allocation failure.
 */
static int sram_fits(const struct wdrv_fw_config *cfg)
{
	u64 avail = (u64)si_mem_available() << PAGE_SHIFT, bytes;
	struct wfs_profile p;

	if (wfs_profile_find(cfg->profile, &p) ||
	    wfs_profile_apply_overrides(&p, cfg->stages, cfg->sram_bytes))
		return 0;	/* wfs_device_create() reports it */
	bytes = (u64)p.stages * p.sram_bytes;
	if (bytes > WFS_MAX_DEVICE_SRAM_BYTES || bytes <= avail / 2)
		return 0;
	pr_err("wafer: device %d: its SRAM (%llu MiB: stages x sram_kib) exceeds half of the memory available (%llu MiB): give sram_kib= or fewer devices\n",
	       cfg->index, bytes >> 20, avail >> 20);
	return -ENOMEM;
}

/* Creates the simulated device with its DMA and interrupt hooks. */
static int device_create(struct wdrv_fw *fw)
{
	const struct wdrv_fw_config *cfg = &fw->cfg;
	struct wfs_device_config dc = {
		.profile = cfg->profile,
		.stages = cfg->stages,
		.sram_bytes = cfg->sram_bytes,
		.numa_node = cfg->numa_node,
		.index = cfg->index,
		.flags = cfg->fault_inject ? WFS_DEV_FAULT_INJECT : 0,
		.stage_workers = cfg->stage_workers,
		.dma = &wdrv_dma_ops,
		.dma_ctx = &fw->dma,
		.irq = wdrv_fw_irq,
		.irq_ctx = fw,
	};
	int ret = sram_fits(cfg);

	if (ret)
		return ret;
	ret = wfs_device_create(&dc, &fw->wfs);
	if (ret == -E2BIG)
		pr_err("wafer: device %d: profile %s: stages x SRAM per stage exceed what the simulator allocates (give stages= or sram_kib=)\n",
		       cfg->index, cfg->profile);
	else if (ret)
		pr_err("wafer: device %d: creating the simulated device failed: %d\n",
		       cfg->index, ret);
	return ret;
}

/* Checks the ABI, enables the rings and reads the device description. */
static int firmware_start(struct wdrv_fw *fw)
{
	int index = fw->cfg.index;
	struct wfw_cpl cpl;
	u32 abi;
	int ret;

	abi = wdrv_fw_read_reg(fw, WFW_REG_ABI_VERSION);
	if (WFW_ABI_VERSION_MAJOR(abi) != WFW_ABI_MAJOR) {
		pr_err("wafer: device %d: firmware ABI %u.%u, driver speaks %u.x\n",
		       index, WFW_ABI_VERSION_MAJOR(abi),
		       WFW_ABI_VERSION_MINOR(abi), WFW_ABI_MAJOR);
		return -ENODEV;
	}
	/* Control commands then never queue behind jobs (ABI 1.8). */
	if (wfw_host_has_ctl_ring(fw->wfs)) {
		wfw_host_set_ctl_ring(fw->wfs, fw->ctl_addr, WDRV_FW_CTL_ENTRIES);
		fw->ctl_ring = fw->ctl_buf;
	}
	ret = wfw_host_enable_rings(fw->wfs, fw->cmd_addr, WDRV_FW_CMD_ENTRIES,
				    fw->cpl_addr, WDRV_FW_CPL_ENTRIES);
	if (ret) {
		pr_err("wafer: device %d: enabling the rings failed (fault 0x%x)\n",
		       index, wdrv_fw_read_reg(fw, WFW_REG_FAULT));
		return ret;
	}
	ret = wdrv_fw_ctrl_read(fw, WFW_OP_GET_INFO, 0, 0, &fw->info,
				sizeof(fw->info), &cpl);
	if (ret)
		pr_err("wafer: device %d: GET_INFO failed: %d\n", index, ret);
	return ret;
}

/**
 * wdrv_fw_init() - create the simulated device and bring its firmware up
 * @fw: zeroed firmware interface to initialise
 * @cfg: configuration (copied)
 *
 * Checks the firmware ABI major version, sets up the rings and reads the
 * device description (GET_INFO) into @fw->info.
 *
 * Return: 0 or a negative errno.
 */
int wdrv_fw_init(struct wdrv_fw *fw, const struct wdrv_fw_config *cfg)
{
	int ret;

	fw->cfg = *cfg;
	init_rwsem(&fw->reset_sem);
	spin_lock_init(&fw->cmd_lock);
	spin_lock_init(&fw->cpl_lock);
	wdrv_dma_init(&fw->dma);
	wdrv_ctrl_init(&fw->ctrl, &fw->dma, WDRV_FW_CTL_ENTRIES);

	ret = rings_alloc(fw, cfg->numa_node);
	if (!ret)
		ret = device_create(fw);
	if (!ret)
		ret = firmware_start(fw);
	/* wdrv_fw_fini() undoes whatever of the above was done. */
	if (ret)
		wdrv_fw_fini(fw);
	return ret;
}

/*
 * Marks the firmware gone, with no control command or job posting under
 * way: whatever comes after (a release that outlived the device's
 * teardown) fails with -ENODEV instead of reaching a destroyed device.
 */
static void mark_gone(struct wdrv_fw *fw)
{
	unsigned long flags;

	down_write(&fw->reset_sem);
	spin_lock_irqsave(&fw->cmd_lock, flags);
	fw->gone = true;
	spin_unlock_irqrestore(&fw->cmd_lock, flags);
	up_write(&fw->reset_sem);
}

/**
 * wdrv_fw_fini() - stop the device and free the interface
 * @fw: firmware interface
 *
 * Control commands and job postings fail with -ENODEV from here on; the
 * device's threads stop first, so nothing touches the rings after.
 */
void wdrv_fw_fini(struct wdrv_fw *fw)
{
	mark_gone(fw);
	wfs_device_destroy(fw->wfs);
	fw->wfs = NULL;
	wdrv_ctrl_fail_all(&fw->ctrl, -ENODEV);
	if (fw->cpl_addr)
		wdrv_dma_unmap(&fw->dma, fw->cpl_addr);
	if (fw->cmd_addr)
		wdrv_dma_unmap(&fw->dma, fw->cmd_addr);
	if (fw->ctl_addr)
		wdrv_dma_unmap(&fw->dma, fw->ctl_addr);
	kvfree(fw->ctl_buf);
	kvfree(fw->cpl_ring);
	kvfree(fw->cmd_ring);
	wdrv_dma_fini(&fw->dma);
}
