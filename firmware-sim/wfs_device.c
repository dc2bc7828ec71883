// SPDX-License-Identifier: MIT
/*
 * wfs_device.c - device instance: creation, register block, interrupt
 * delivery, completion posting, park/abort protocol, reset, destroy.
 *
 * Threads park when dev->abort is set: a reset sets it, wakes everybody
 * (FIFO waiters, the CP's doorbell), waits until the CP and every stage
 * worker sit in wfs_park(), rewrites the state while nothing runs, then
 * clears abort.  Destroy does the same with dev->stopping set, which makes
 * every thread return instead of parking.
 */
#include "wfs_device_priv.h"
#include "wfs_ring.h"

WFS_STATIC_ASSERT(WFW_MAX_TOPK <= WFS_TOPK_MAX, "top-k limits");
WFS_STATIC_ASSERT(WFW_LOGIT_FRAC_BITS == WFS_LOGIT_FRAC_BITS, "logit format");
WFS_STATIC_ASSERT(sizeof(struct wfs_topk_entry) ==
		  sizeof(struct wfw_topk_pair), "top-k entry layout");

/* ------------------------------------------------------------ registers -- */

u32 wfs_reg_get(struct wfs_device *dev, u32 off)
{
	return wfs_os_load32(&dev->regs[off / 4]);
}

void wfs_reg_set(struct wfs_device *dev, u32 off, u32 val)
{
	wfs_os_store32(&dev->regs[off / 4], val);
}

static void reg_update(struct wfs_device *dev, u32 off, u32 set, u32 clear)
{
	u32 *p = &dev->regs[off / 4];
	u32 old = wfs_os_load32(p), cur;

	for (;;) {
		cur = wfs_os_cmpxchg32(p, old, (old | set) & ~clear);
		if (cur == old)
			break;
		old = cur;
	}
}

/* ------------------------------------------------------------ interrupt -- */

/*
 * Deliver the interrupt from a firmware thread.  Calls are serialised with
 * irq_running; a raise that finds another thread delivering leaves
 * irq_kick set, and the deliverer loops until no kick is left.
 */
static void irq_deliver(struct wfs_device *dev)
{
	if (!dev->irq)
		return;
	wfs_os_xchg32(&dev->irq_kick, 1);
	for (;;) {
		if (wfs_os_cmpxchg32(&dev->irq_running, 0, 1) != 0)
			return;
		while (wfs_os_xchg32(&dev->irq_kick, 0)) {
			if (wfs_reg_get(dev, WFW_REG_IRQ_STATUS) &
			    wfs_reg_get(dev, WFW_REG_IRQ_MASK))
				dev->irq(dev->irq_ctx);
		}
		wfs_os_store32(&dev->irq_running, 0);
		if (!wfs_os_load32(&dev->irq_kick))
			return;
	}
}

/**
 * wfs_raise_irq() - latch interrupt bits and call the driver
 * @dev: device
 * @bits: WFW_IRQ_*
 *
 * Firmware threads only, with no device lock held.
 */
void wfs_raise_irq(struct wfs_device *dev, u32 bits)
{
	reg_update(dev, WFW_REG_IRQ_STATUS, bits, 0);
	irq_deliver(dev);
}

/* Latch bits now; the CP delivers (used from driver context). */
static void raise_irq_deferred(struct wfs_device *dev, u32 bits)
{
	reg_update(dev, WFW_REG_IRQ_STATUS, bits, 0);
	wfs_os_store32(&dev->irq_kick, 1);
	wfs_os_event_signal(dev->kick);
}

/**
 * wfs_set_fault() - record a device fault and halt command processing
 * @dev: device
 * @fault: WFW_FAULT_* bit
 *
 * Any thread; the interrupt is delivered by the CP.
 */
void wfs_set_fault(struct wfs_device *dev, u32 fault)
{
	reg_update(dev, WFW_REG_FAULT, fault, 0);
	reg_update(dev, WFW_REG_STATUS, WFW_STATUS_FAULT, 0);
	wfs_log_printf(&dev->log, 1, "fault 0x%x: command processing halted until reset",
		       fault);
	raise_irq_deferred(dev, WFW_IRQ_FAULT);
}

/* ------------------------------------------------------------ park/abort -- */

/**
 * wfs_aborting() - should a firmware thread drop what it does?
 * @dev: device
 *
 * Return: non-zero while a reset or destroy is in progress.
 */
int wfs_aborting(struct wfs_device *dev)
{
	return wfs_os_load32(&dev->abort) || wfs_os_load32(&dev->stopping);
}

/**
 * wfs_park() - wait out a reset
 * @dev: device
 * @parked_flag: the caller's "parked" flag
 * @is_cp: 1 for the command processor, 0 for a stage worker
 *
 * Returns when the reset is over or the device stops.
 */
void wfs_park(struct wfs_device *dev, u32 *parked_flag, int is_cp)
{
	wfs_os_mutex_lock(dev->lock);
	*parked_flag = 1;
	if (!is_cp)
		dev->n_parked++;
	wfs_os_cond_broadcast(dev->cond);
	while (wfs_os_load32(&dev->abort) && !wfs_os_load32(&dev->stopping))
		wfs_os_cond_wait(dev->cond, dev->lock);
	*parked_flag = 0;
	if (!is_cp)
		dev->n_parked--;
	wfs_os_mutex_unlock(dev->lock);
}

/* ---------------------------------------------------------- completions -- */

/**
 * wfs_cpl_reserve() - reserve a completion ring entry for a new command
 * @dev: device
 *
 * Return: 0; -WFS_EAGAIN if the ring has no room (the driver has not
 * consumed enough); -WFS_EIO if the driver's CPL_HEAD is inconsistent
 * (a fault is raised).
 */
int wfs_cpl_reserve(struct wfs_device *dev)
{
	u32 head, used;
	int ret = 0;

	wfs_os_mutex_lock(dev->cpl_lock);
	head = wfs_reg_get(dev, WFW_REG_CPL_HEAD);
	if (!wfs_ring_advance_valid(dev->cpl_head_seen, head, dev->cpl_tail)) {
		ret = -WFS_EIO;
	} else {
		dev->cpl_head_seen = head;
		used = wfs_ring_count(head, dev->cpl_tail) + dev->cpl_reserved;
		if (used >= dev->cpl_size)
			ret = -WFS_EAGAIN;
		else
			dev->cpl_reserved++;
	}
	wfs_os_mutex_unlock(dev->cpl_lock);
	if (ret == -WFS_EIO)
		wfs_set_fault(dev, WFW_FAULT_CPL_HEAD);
	return ret;
}

/**
 * wfs_cpl_unreserve() - give back a reservation without posting
 * @dev: device
 */
void wfs_cpl_unreserve(struct wfs_device *dev)
{
	wfs_os_mutex_lock(dev->cpl_lock);
	if (dev->cpl_reserved)
		dev->cpl_reserved--;
	wfs_os_mutex_unlock(dev->cpl_lock);
}

/**
 * wfs_post_cpl() - write a completion record and raise the interrupt
 * @dev: device
 * @c: the record (seq, flags and check are filled in here)
 * @is_job: a RUN_JOB completion (armed drop/corrupt faults apply)
 *
 * Uses the reservation made when the command was fetched.  dev->cpl_lock
 * is held across the DMA write (completions land in ring order); no lock
 * is held across the IRQ callback.  Firmware threads only.
 */
void wfs_post_cpl(struct wfs_device *dev, struct wfw_cpl *c, int is_job)
{
	u32 drop = 0, corrupt = 0;
	int ret;

	wfs_os_mutex_lock(dev->cpl_lock);
	if (dev->cpl_reserved)
		dev->cpl_reserved--;
	if (is_job) {
		drop = dev->faults_armed & (1u << WFW_FAULT_DROP_NEXT_CPL);
		corrupt = dev->faults_armed &
			  (1u << WFW_FAULT_CORRUPT_NEXT_CPL);
		dev->faults_armed &= ~(drop | corrupt);
	}
	c->flags = WFW_CPL_F_VALID;
	c->seq = ++dev->cpl_seq;	/* a dropped record leaves a gap */
	if (drop) {
		wfs_os_mutex_unlock(dev->cpl_lock);
		wfs_log_printf(&dev->log, 1, "fault injection: dropped completion of cookie 0x%llx",
			       (unsigned long long)c->cookie);
		return;
	}
	c->reserved = 0;
	c->check = wfw_cpl_check(c);
	if (corrupt) {
		c->cookie ^= 0xa5a5a5a55a5a5a5aull;
		c->status = 0x7ead0000;
	}
	ret = dev->dma.write(dev->dma_ctx,
			     wfs_ring_entry_addr(dev->cpl_base, dev->cpl_tail,
						 dev->cpl_size, sizeof(*c)),
			     c, sizeof(*c));
	if (!ret) {
		dev->cpl_tail++;
		wfs_reg_set(dev, WFW_REG_CPL_TAIL, dev->cpl_tail);
	}
	wfs_os_mutex_unlock(dev->cpl_lock);
	if (ret) {
		wfs_set_fault(dev, WFW_FAULT_CPL_DMA);
		return;
	}
	if (corrupt)
		wfs_log_printf(&dev->log, 1, "fault injection: corrupted completion seq %u",
			       c->seq);
	wfs_raise_irq(dev, WFW_IRQ_CPL);
}

/* ---------------------------------------------------------------- rings -- */

static void ctrl_enable(struct wfs_device *dev, int on)
{
	u32 cmd_size = wfs_reg_get(dev, WFW_REG_CMD_SIZE);
	u32 cpl_size = wfs_reg_get(dev, WFW_REG_CPL_SIZE);
	u64 cmd_base = ((u64)wfs_reg_get(dev, WFW_REG_CMD_BASE_HI) << 32) |
		       wfs_reg_get(dev, WFW_REG_CMD_BASE_LO);
	u64 cpl_base = ((u64)wfs_reg_get(dev, WFW_REG_CPL_BASE_HI) << 32) |
		       wfs_reg_get(dev, WFW_REG_CPL_BASE_LO);
	int bad = 0;

	wfs_os_mutex_lock(dev->lock);
	if (!on) {
		reg_update(dev, WFW_REG_STATUS, 0, WFW_STATUS_ENABLED);
		reg_update(dev, WFW_REG_CTRL, 0, WFW_CTRL_ENABLE);
	} else if (!(wfs_reg_get(dev, WFW_REG_STATUS) & WFW_STATUS_ENABLED)) {
		if (!wfs_ring_size_valid(cmd_size, WFW_RING_MAX_ENTRIES) ||
		    !wfs_ring_size_valid(cpl_size, WFW_RING_MAX_ENTRIES) ||
		    !cmd_base || !cpl_base ||
		    !WFS_IS_ALIGNED(cmd_base, (u64)WFW_RING_ALIGN) ||
		    !WFS_IS_ALIGNED(cpl_base, (u64)WFW_RING_ALIGN)) {
			bad = 1;
		} else {
			wfs_os_mutex_lock(dev->cpl_lock);
			dev->cmd_base = cmd_base;
			dev->cpl_base = cpl_base;
			dev->cmd_size = cmd_size;
			dev->cpl_size = cpl_size;
			wfs_os_mutex_unlock(dev->cpl_lock);
			reg_update(dev, WFW_REG_CTRL, WFW_CTRL_ENABLE, 0);
			reg_update(dev, WFW_REG_STATUS, WFW_STATUS_ENABLED, 0);
		}
	}
	wfs_os_mutex_unlock(dev->lock);
	if (bad)
		wfs_set_fault(dev, WFW_FAULT_RING_CONFIG);
	wfs_os_event_signal(dev->kick);
}

u32 wfs_device_mmio_read32(struct wfs_device *dev, u32 off)
{
	if (off >= WFW_REG_BLOCK_SIZE || (off & 3))
		return 0;
	switch (off) {
	case WFW_REG_DOORBELL:
	case WFW_REG_IRQ_ACK:
		return 0;
	default:
		return wfs_reg_get(dev, off);
	}
}

void wfs_device_mmio_write32(struct wfs_device *dev, u32 off, u32 val)
{
	int enabled;

	if (off >= WFW_REG_BLOCK_SIZE || (off & 3))
		return;
	enabled = !!(wfs_reg_get(dev, WFW_REG_STATUS) & WFW_STATUS_ENABLED);
	switch (off) {
	case WFW_REG_CTRL:
		if (val & WFW_CTRL_RESET) {
			wfs_device_reset(dev, !!(val & WFW_CTRL_RESET_FULL));
			return;
		}
		ctrl_enable(dev, !!(val & WFW_CTRL_ENABLE));
		break;
	case WFW_REG_DOORBELL:
		wfs_os_event_signal(dev->kick);
		break;
	case WFW_REG_IRQ_ACK:
		reg_update(dev, WFW_REG_IRQ_STATUS, 0, val);
		break;
	case WFW_REG_IRQ_MASK:
		wfs_reg_set(dev, off, val & WFW_IRQ_ALL);
		/* Unmasking a pending bit fires: let the CP deliver it. */
		if (wfs_reg_get(dev, WFW_REG_IRQ_STATUS) & val) {
			wfs_os_store32(&dev->irq_kick, 1);
			wfs_os_event_signal(dev->kick);
		}
		break;
	case WFW_REG_CMD_BASE_LO:
	case WFW_REG_CMD_BASE_HI:
	case WFW_REG_CMD_SIZE:
	case WFW_REG_CPL_BASE_LO:
	case WFW_REG_CPL_BASE_HI:
	case WFW_REG_CPL_SIZE:
		if (!enabled)
			wfs_reg_set(dev, off, val);
		break;
	case WFW_REG_CMD_TAIL:
		wfs_reg_set(dev, off, val);
		break;
	case WFW_REG_CPL_HEAD:
		wfs_reg_set(dev, off, val);
		wfs_os_event_signal(dev->kick);
		break;
	default:
		break;
	}
}

void wfs_device_doorbell(struct wfs_device *dev)
{
	wfs_os_event_signal(dev->kick);
}

/* ---------------------------------------------------------------- reset -- */

/* Forget every job without completions (all threads parked, dev->lock). */
static u32 drop_all_jobs_locked(struct wfs_device *dev)
{
	u32 i, n = 0;

	for (i = 0; i < dev->max_jobs; i++) {
		struct wfs_job *job = &dev->jobs[i];

		if (job->state != WFS_JOB_ACTIVE)
			continue;
		job->ctx->active_jobs--;
		if (job->ctx->slot[job->args.slot].pending)
			job->ctx->slot[job->args.slot].pending--;
		job->state = WFS_JOB_FREE;
		n++;
	}
	dev->jobs_active = 0;
	return n;
}

int wfs_device_reset(struct wfs_device *dev, int full)
{
	u32 dropped;

	wfs_os_mutex_lock(dev->reset_lock);
	reg_update(dev, WFW_REG_STATUS, WFW_STATUS_RESETTING, 0);

	wfs_os_mutex_lock(dev->lock);
	while (dev->cmd_reset && !wfs_os_load32(&dev->stopping))
		wfs_os_cond_wait(dev->cond, dev->lock);
	wfs_os_store32(&dev->abort, 1);
	wfs_os_cond_broadcast(dev->cond);
	wfs_os_mutex_unlock(dev->lock);

	wfs_pipeline_wake_all(dev);
	wfs_os_event_signal(dev->kick);

	wfs_os_mutex_lock(dev->lock);
	while ((dev->n_parked < dev->prof.stages || !dev->cp_parked) &&
	       !wfs_os_load32(&dev->stopping))
		wfs_os_cond_wait(dev->cond, dev->lock);
	dropped = drop_all_jobs_locked(dev);
	dev->hang_armed = 0;
	if (full) {
		wfs_ctx_release_all(dev);
		wfs_model_release(dev);
	}
	wfs_os_mutex_unlock(dev->lock);

	/* Nothing runs now: rewrite the FIFOs, rings and registers. */
	wfs_pipeline_flush(dev);
	wfs_os_mutex_lock(dev->cpl_lock);
	dev->cpl_tail = 0;
	dev->cpl_head_seen = 0;
	dev->cpl_seq = 0;
	dev->cpl_reserved = 0;
	dev->faults_armed = 0;
	wfs_os_mutex_unlock(dev->cpl_lock);
	wfs_os_store32(&dev->cp_stalled, 0);
	dev->cmd_head = 0;
	wfs_reg_set(dev, WFW_REG_CMD_HEAD, 0);
	wfs_reg_set(dev, WFW_REG_CMD_TAIL, 0);
	wfs_reg_set(dev, WFW_REG_CPL_HEAD, 0);
	wfs_reg_set(dev, WFW_REG_CPL_TAIL, 0);
	wfs_reg_set(dev, WFW_REG_IRQ_STATUS, 0);
	wfs_reg_set(dev, WFW_REG_FAULT, 0);
	wfs_os_store32(&dev->irq_kick, 0);
	dev->resets++;
	wfs_reg_set(dev, WFW_REG_RESET_COUNT, dev->resets);
	reg_update(dev, WFW_REG_STATUS, 0, WFW_STATUS_FAULT);
	if (full)
		reg_update(dev, WFW_REG_STATUS, 0, WFW_STATUS_MODEL);
	wfs_log_printf(&dev->log, 1, "reset%s: %u job(s) discarded",
		       full ? " (full)" : "", dropped);

	wfs_os_mutex_lock(dev->lock);
	wfs_os_store32(&dev->abort, 0);
	wfs_os_cond_broadcast(dev->cond);
	wfs_os_mutex_unlock(dev->lock);
	reg_update(dev, WFW_REG_STATUS, 0, WFW_STATUS_RESETTING);
	wfs_os_mutex_unlock(dev->reset_lock);
	wfs_os_event_signal(dev->kick);
	return 0;
}

/* ------------------------------------------------------- create/destroy -- */

static void device_free(struct wfs_device *dev)
{
	u32 i;

	if (dev->stages) {
		for (i = 0; i < dev->prof.stages; i++) {
			struct wfs_stage *st = &dev->stages[i];

			wfs_os_free(st->sram_mem);
			wfs_os_free(st->blocks);
			wfs_os_free(st->in.ent);
			wfs_os_cond_destroy(st->in.cond);
			wfs_os_mutex_destroy(st->in.lock);
		}
	}
	wfs_os_free(dev->stages);
	wfs_os_free(dev->jobs);
	wfs_os_free(dev->ctxs);
	wfs_os_free(dev->log_buf);
	wfs_os_event_destroy(dev->kick);
	wfs_os_cond_destroy(dev->cond);
	wfs_os_mutex_destroy(dev->log_lock);
	wfs_os_mutex_destroy(dev->cpl_lock);
	wfs_os_mutex_destroy(dev->lock);
	wfs_os_mutex_destroy(dev->reset_lock);
	wfs_os_free(dev);
}

static void stop_threads(struct wfs_device *dev)
{
	u32 i;

	wfs_os_mutex_lock(dev->lock);
	wfs_os_store32(&dev->stopping, 1);
	wfs_os_store32(&dev->abort, 1);
	wfs_os_cond_broadcast(dev->cond);
	wfs_os_mutex_unlock(dev->lock);
	wfs_pipeline_wake_all(dev);
	wfs_os_event_signal(dev->kick);

	wfs_os_thread_join(dev->cp_thread);
	dev->cp_thread = NULL;
	for (i = 0; i < dev->prof.stages; i++) {
		wfs_os_thread_join(dev->stages[i].thread);
		dev->stages[i].thread = NULL;
	}
}

static int stage_init(struct wfs_device *dev, u32 i)
{
	struct wfs_stage *st = &dev->stages[i];
	u32 max_blocks = 32 + 2 * dev->max_ctxs;
	u64 skip;

	st->dev = dev;
	st->idx = i;
	st->sram_mem = wfs_os_zalloc(dev->prof.sram_bytes + WFS_SRAM_ALIGN,
				     dev->numa_node);
	st->blocks = wfs_os_zalloc((u64)max_blocks * sizeof(*st->blocks),
				   dev->numa_node);
	st->in.ent = wfs_os_zalloc((u64)dev->prof.fifo_depth *
				   sizeof(*st->in.ent), dev->numa_node);
	st->in.lock = wfs_os_mutex_create();
	st->in.cond = wfs_os_cond_create();
	st->in.depth = dev->prof.fifo_depth;
	if (!st->sram_mem || !st->blocks || !st->in.ent || !st->in.lock ||
	    !st->in.cond)
		return -WFS_ENOMEM;
	/* Exactly the profile's capacity, from the first aligned byte. */
	skip = (0 - (u64)(unsigned long)st->sram_mem) & (WFS_SRAM_ALIGN - 1);
	return wfs_sram_init(&st->sram, (u8 *)st->sram_mem + skip,
			     dev->prof.sram_bytes, st->blocks, max_blocks);
}

int wfs_device_create(const struct wfs_device_config *cfg,
		      struct wfs_device **out)
{
	struct wfs_device *dev;
	struct wfs_profile prof;
	u32 i;
	int ret;

	*out = NULL;
	if (!cfg || !cfg->dma || !cfg->dma->read || !cfg->dma->write)
		return -WFS_EINVAL;
	ret = wfs_profile_find(cfg->profile, &prof);
	if (ret)
		return ret;
	ret = wfs_profile_apply_overrides(&prof, cfg->stages, cfg->sram_bytes);
	if (ret)
		return ret;
	if (cfg->max_jobs > WFS_LIMIT_JOBS ||
	    cfg->max_contexts > WFS_LIMIT_CTXS)
		return -WFS_EINVAL;

	dev = wfs_os_zalloc(sizeof(*dev), cfg->numa_node);
	if (!dev)
		return -WFS_ENOMEM;
	dev->prof = prof;
	dev->index = cfg->index;
	dev->numa_node = cfg->numa_node;
	dev->flags = cfg->flags;
	dev->dma = *cfg->dma;
	dev->dma_ctx = cfg->dma_ctx;
	dev->irq = cfg->irq;
	dev->irq_ctx = cfg->irq_ctx;
	dev->max_jobs = cfg->max_jobs ? cfg->max_jobs : WFS_DEFAULT_MAX_JOBS;
	dev->max_ctxs = cfg->max_contexts ? cfg->max_contexts :
			WFS_DEFAULT_MAX_CTXS;

	dev->reset_lock = wfs_os_mutex_create();
	dev->lock = wfs_os_mutex_create();
	dev->cpl_lock = wfs_os_mutex_create();
	dev->log_lock = wfs_os_mutex_create();
	dev->cond = wfs_os_cond_create();
	dev->kick = wfs_os_event_create();
	dev->log_buf = wfs_os_zalloc(WFS_LOG_BYTES, cfg->numa_node);
	dev->stages = wfs_os_zalloc((u64)prof.stages * sizeof(*dev->stages),
				    cfg->numa_node);
	dev->jobs = wfs_os_zalloc((u64)dev->max_jobs * sizeof(*dev->jobs),
				  cfg->numa_node);
	dev->ctxs = wfs_os_zalloc((u64)dev->max_ctxs * sizeof(*dev->ctxs),
				  cfg->numa_node);
	if (!dev->reset_lock || !dev->lock || !dev->cpl_lock ||
	    !dev->log_lock || !dev->cond || !dev->kick || !dev->log_buf ||
	    !dev->stages || !dev->jobs || !dev->ctxs) {
		ret = -WFS_ENOMEM;
		goto fail;
	}
	wfs_log_init(&dev->log, dev->log_buf, WFS_LOG_BYTES, dev->log_lock,
		     dev->index);
	for (i = 0; i < prof.stages; i++) {
		ret = stage_init(dev, i);
		if (ret)
			goto fail;
	}
	for (i = 0; i < dev->max_ctxs; i++)
		dev->ctxs[i].gen = 1;

	wfs_reg_set(dev, WFW_REG_ABI_VERSION, WFW_ABI_VERSION);
	wfs_reg_set(dev, WFW_REG_FW_VERSION, WFW_FW_VERSION);
	wfs_reg_set(dev, WFW_REG_NUM_STAGES, prof.stages);
	wfs_reg_set(dev, WFW_REG_SRAM_KIB, (u32)(prof.sram_bytes >> 10));
	wfs_reg_set(dev, WFW_REG_PROFILE, prof.id);

	dev->cp_thread = wfs_os_thread_start(wfs_cp_thread, dev, "wfs-cp",
					     dev->index, 0, dev->numa_node);
	if (!dev->cp_thread) {
		ret = -WFS_ENOMEM;
		goto fail;
	}
	for (i = 0; i < prof.stages; i++) {
		dev->stages[i].thread =
			wfs_os_thread_start(wfs_stage_worker, &dev->stages[i],
					    "wfs-st", dev->index, (int)i,
					    dev->numa_node);
		if (!dev->stages[i].thread) {
			ret = -WFS_ENOMEM;
			goto fail_threads;
		}
	}
	wfs_reg_set(dev, WFW_REG_STATUS, WFW_STATUS_READY);
	wfs_log_printf(&dev->log, 0, "%s device up: %u stages x %llu KiB SRAM, %llu MHz, ABI %u.%u",
		       prof.name, prof.stages,
		       (unsigned long long)(prof.sram_bytes >> 10),
		       (unsigned long long)wfs_div_u64(prof.clock_hz, 1000000),
		       WFW_ABI_MAJOR, WFW_ABI_MINOR);
	*out = dev;
	return 0;

fail_threads:
	stop_threads(dev);
fail:
	device_free(dev);
	return ret;
}

void wfs_device_destroy(struct wfs_device *dev)
{
	if (!dev)
		return;
	wfs_os_mutex_lock(dev->reset_lock);
	stop_threads(dev);
	wfs_os_mutex_unlock(dev->reset_lock);
	device_free(dev);
}
