// SPDX-License-Identifier: MIT
/*
 * wfs_device.c - device instance: create, destroy, the register interface
 * a driver sees, and the reset (the one way to reset a device: the
 * register reset, WFW_CTRL_RESET).
 */
#include "wfs_device_priv.h"

#define WFS_LOG_BYTES		16384
/*
 * Arena block records per stage: each model's blocks plus two per
 * context.
 */
#define STAGE_MODEL_BLOCKS	(32 * WFS_MAX_MODELS)

WFS_STATIC_ASSERT(WFW_MAX_TOPK <= WFS_TOPK_MAX, "top-k limits");
WFS_STATIC_ASSERT(WFW_LOGIT_FRAC_BITS == WFS_LOGIT_FRAC_BITS, "logit format");
WFS_STATIC_ASSERT(sizeof(struct wfs_topk_entry) ==
		  sizeof(struct wfw_topk_pair), "top-k entry layout");

/* ---------------------------------------------------------------- rings -- */

static void ctrl_enable(struct wfs_device *dev, int on)
{
	struct wfs_hw *hw = &dev->hw;
	int bad = 0;

	wfs_os_mutex_lock(dev->sync.lock);
	if (!on) {
		wfs_reg_update(hw, WFW_REG_STATUS, 0, WFW_STATUS_ENABLED);
		wfs_reg_update(hw, WFW_REG_CTRL, 0, WFW_CTRL_ENABLE);
	} else if (!(wfs_reg_get(hw, WFW_REG_STATUS) & WFW_STATUS_ENABLED)) {
		bad = wfs_cpl_enable_rings(hw, &dev->cpl);
		if (!bad)
			bad = wfs_cp_enable_ctl(dev);
		if (!bad) {
			wfs_reg_update(hw, WFW_REG_CTRL, WFW_CTRL_ENABLE, 0);
			wfs_reg_update(hw, WFW_REG_STATUS, WFW_STATUS_ENABLED, 0);
		}
	}
	wfs_os_mutex_unlock(dev->sync.lock);
	if (bad)
		wfs_set_fault(hw, WFW_FAULT_RING_CONFIG);
	wfs_hw_kick(hw);
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
		return wfs_reg_get(&dev->hw, off);
	}
}

void wfs_device_mmio_write32(struct wfs_device *dev, u32 off, u32 val)
{
	struct wfs_hw *hw = &dev->hw;
	int enabled;

	if (off >= WFW_REG_BLOCK_SIZE || (off & 3))
		return;
	enabled = !!(wfs_reg_get(hw, WFW_REG_STATUS) & WFW_STATUS_ENABLED);
	switch (off) {
	case WFW_REG_CTRL:
		if (val & WFW_CTRL_RESET) {
			wfs_device_reset(dev, !!(val & WFW_CTRL_RESET_FULL));
			return;
		}
		ctrl_enable(dev, !!(val & WFW_CTRL_ENABLE));
		break;
	case WFW_REG_DOORBELL:
		wfs_hw_kick(hw);
		break;
	case WFW_REG_IRQ_ACK:
		wfs_reg_update(hw, WFW_REG_IRQ_STATUS, 0, val);
		break;
	case WFW_REG_IRQ_MASK:
		wfs_reg_set(hw, off, val & WFW_IRQ_ALL);
		/* Unmasking a pending bit fires: let the CP deliver it. */
		if (wfs_reg_get(hw, WFW_REG_IRQ_STATUS) & val)
			wfs_raise_irq_deferred(hw, 0);
		break;
	case WFW_REG_CMD_BASE_LO:
	case WFW_REG_CMD_BASE_HI:
	case WFW_REG_CMD_SIZE:
	case WFW_REG_CPL_BASE_LO:
	case WFW_REG_CPL_BASE_HI:
	case WFW_REG_CPL_SIZE:
	case WFW_REG_CTL_BASE_LO:
	case WFW_REG_CTL_BASE_HI:
	case WFW_REG_CTL_SIZE:
		if (!enabled)
			wfs_reg_set(hw, off, val);
		break;
	case WFW_REG_CMD_TAIL:
	case WFW_REG_CTL_TAIL:
		wfs_reg_set(hw, off, val);
		break;
	case WFW_REG_CPL_HEAD:
		wfs_reg_set(hw, off, val);
		wfs_hw_kick(hw);
		break;
	default:
		break;
	}
}

void wfs_device_doorbell(struct wfs_device *dev)
{
	wfs_hw_kick(&dev->hw);
}

/* ---------------------------------------------------------------- reset -- */

/* Ask every thread to park (@stop: to return) and wake whatever blocks it. */
static void threads_request(struct wfs_device *dev, int stop)
{
	u32 i;

	wfs_sync_request(&dev->sync, stop);
	for (i = 0; i < dev->hw.prof.stages; i++)
		wfs_fifo_wake(&dev->stages[i].in);
	wfs_stage_workers_wake(dev);
	wfs_hw_kick(&dev->hw);
}

/* Zero the ring indices, IRQ status and faults (all parked). */
static void reset_rings(struct wfs_device *dev, int full)
{
	struct wfs_hw *hw = &dev->hw;
	u32 i;

	for (i = 0; i < hw->prof.stages; i++)
		wfs_fifo_flush(&dev->stages[i].in);
	wfs_cpl_reset(&dev->cpl);
	dev->cp.cmd_head = 0;
	wfs_cp_reset(dev);
	wfs_os_store32(&dev->cp.stalled, 0);
	dev->cp.pause_load = 0;
	wfs_reg_set(hw, WFW_REG_CMD_HEAD, 0);
	wfs_reg_set(hw, WFW_REG_CMD_TAIL, 0);
	wfs_reg_set(hw, WFW_REG_CTL_HEAD, 0);
	wfs_reg_set(hw, WFW_REG_CTL_TAIL, 0);
	wfs_reg_set(hw, WFW_REG_CPL_HEAD, 0);
	wfs_reg_set(hw, WFW_REG_CPL_TAIL, 0);
	wfs_reg_set(hw, WFW_REG_IRQ_STATUS, 0);
	wfs_reg_set(hw, WFW_REG_FAULT, 0);
	wfs_os_store32(&hw->irq_kick, 0);
	dev->resets++;
	wfs_reg_set(hw, WFW_REG_RESET_COUNT, dev->resets);
	wfs_reg_update(hw, WFW_REG_STATUS, 0, WFW_STATUS_FAULT);
	if (full)
		wfs_reg_update(hw, WFW_REG_STATUS, 0, WFW_STATUS_MODEL);
}

int wfs_device_reset(struct wfs_device *dev, int full)
{
	struct wfs_hw *hw = &dev->hw;
	u32 dropped;

	wfs_os_mutex_lock(dev->reset_lock);
	wfs_reg_update(hw, WFW_REG_STATUS, WFW_STATUS_RESETTING, 0);
	threads_request(dev, 0);
	wfs_sync_wait_parked(&dev->sync);
	wfs_loadq_drop(dev);

	/* Nothing runs now: rewrite the state. */
	wfs_os_mutex_lock(dev->sync.lock);
	dropped = wfs_job_drop_all_locked(dev);
	if (full) {
		wfs_ctx_release_all_locked(dev);
		wfs_load_release(dev);
		wfs_stage_workers_close_locked(dev);
	}
	wfs_os_mutex_unlock(dev->sync.lock);
	wfs_stage_workers_join(dev);
	reset_rings(dev, full);
	wfs_log_printf(&hw->log, 1, "reset%s: %u job(s) discarded",
		       full ? " (full)" : "", dropped);

	wfs_sync_resume(&dev->sync);
	wfs_reg_update(hw, WFW_REG_STATUS, 0, WFW_STATUS_RESETTING);
	wfs_os_mutex_unlock(dev->reset_lock);
	wfs_hw_kick(hw);
	return 0;
}

/* ------------------------------------------------------- create/destroy -- */

static void device_free(struct wfs_device *dev)
{
	u32 i;

	if (dev->stages) {
		for (i = 0; i < dev->hw.prof.stages; i++) {
			struct wfs_stage *st = &dev->stages[i];

			wfs_os_free(st->sram_mem);
			wfs_os_free(st->blocks);
			if (st->sram_lock)
				wfs_os_mutex_destroy(st->sram_lock);
			wfs_os_free(st->in.ent);
		}
	}
	wfs_stage_pool_free(dev);
	wfs_os_free(dev->stages);
	/* Models still loaded: their SRAM went with the stages, not their counters. */
	for (i = 0; i < WFS_MAX_MODELS; i++)
		wfs_os_free(dev->models.m[i].expert_cnt);
	wfs_os_free(dev->job.jobs);
	wfs_os_free(dev->ctx.ctxs);
	wfs_os_free(dev->hw.log_buf);
	wfs_os_event_destroy(dev->hw.kick);
	wfs_os_cond_destroy(dev->sync.cond);
	wfs_os_mutex_destroy(dev->hw.log_lock);
	wfs_os_mutex_destroy(dev->cpl.lock);
	wfs_os_mutex_destroy(dev->sync.lock);
	wfs_os_mutex_destroy(dev->reset_lock);
	wfs_os_free(dev);
}

static void stop_threads(struct wfs_device *dev)
{
	threads_request(dev, 1);
	wfs_os_thread_join(dev->cp.thread);
	dev->cp.thread = NULL;
	wfs_loadq_stop(dev);
	wfs_stage_workers_stop(dev);
}

static int stage_init(struct wfs_device *dev, u32 i)
{
	const struct wfs_profile *prof = &dev->hw.prof;
	struct wfs_stage *st = &dev->stages[i];
	u32 max_blocks = STAGE_MODEL_BLOCKS + 2 * dev->ctx.max;
	int node = dev->hw.numa_node;
	u64 skip;
	int ret;

	st->dev = dev;
	st->idx = i;
	st->sram_mem = wfs_os_zalloc(prof->sram_bytes + WFS_SRAM_ALIGN, node);
	st->blocks = wfs_os_zalloc((u64)max_blocks * sizeof(*st->blocks),
				   node);
	st->in.ent = wfs_os_zalloc((u64)prof->fifo_depth *
				   sizeof(*st->in.ent), node);
	st->in.depth = prof->fifo_depth;
	st->sram_lock = wfs_os_mutex_create();
	if (!st->sram_mem || !st->blocks || !st->in.ent || !st->sram_lock ||
	    wfs_stage_pool_fifo_lock(dev, &st->in))
		return -WFS_ENOMEM;
	/* Exactly the profile's capacity, from the first aligned byte. */
	skip = (0 - (u64)(unsigned long)st->sram_mem) & (WFS_SRAM_ALIGN - 1);
	ret = wfs_sram_init(&st->sram, (u8 *)st->sram_mem + skip,
			    prof->sram_bytes, st->blocks, max_blocks);
	/* The CP and the load worker both place blocks. */
	wfs_sram_set_lock(&st->sram, st->sram_lock);
	return ret;
}

/* Check the config and resolve the profile. */
static int config_check(const struct wfs_device_config *cfg,
			struct wfs_profile *prof)
{
	int ret;

	if (!cfg || !cfg->dma || !cfg->dma->read || !cfg->dma->write)
		return -WFS_EINVAL;
	ret = wfs_profile_find(cfg->profile, prof);
	if (ret)
		return ret;
	ret = wfs_profile_apply_overrides(prof, cfg->stages, cfg->sram_bytes);
	if (ret)
		return ret;
	if ((u64)prof->stages * prof->sram_bytes > WFS_MAX_DEVICE_SRAM_BYTES)
		return -WFS_E2BIG;
	if (cfg->max_jobs > WFS_LIMIT_JOBS ||
	    cfg->max_contexts > WFS_LIMIT_CTXS ||
	    cfg->stage_workers < WFS_STAGE_WORKERS_AUTO ||
	    cfg->stage_workers > WFS_STAGE_WORKERS_MAX)
		return -WFS_EINVAL;
	return 0;
}

/* Locks, tables, log and stages: everything the device will ever use. */
static int device_alloc(struct wfs_device *dev,
			const struct wfs_device_config *cfg)
{
	int node = cfg->numa_node;
	u32 i;
	int ret;

	dev->reset_lock = wfs_os_mutex_create();
	dev->sync.lock = wfs_os_mutex_create();
	dev->cpl.lock = wfs_os_mutex_create();
	dev->hw.log_lock = wfs_os_mutex_create();
	dev->sync.cond = wfs_os_cond_create();
	dev->hw.kick = wfs_os_event_create();
	dev->hw.log_buf = wfs_os_zalloc(WFS_LOG_BYTES, node);
	dev->stages = wfs_os_zalloc((u64)dev->hw.prof.stages *
				    sizeof(*dev->stages), node);
	dev->job.jobs = wfs_os_zalloc((u64)dev->job.max *
				      sizeof(*dev->job.jobs), node);
	dev->ctx.ctxs = wfs_os_zalloc((u64)dev->ctx.max *
				      sizeof(*dev->ctx.ctxs), node);
	if (!dev->reset_lock || !dev->sync.lock || !dev->cpl.lock ||
	    !dev->hw.log_lock || !dev->sync.cond || !dev->hw.kick ||
	    !dev->hw.log_buf || !dev->stages || !dev->job.jobs ||
	    !dev->ctx.ctxs)
		return -WFS_ENOMEM;
	wfs_log_init(&dev->hw.log, dev->hw.log_buf, WFS_LOG_BYTES,
		     dev->hw.log_lock, dev->hw.index);
	ret = wfs_stage_pool_init(dev, cfg->stage_workers);
	if (ret)
		return ret;
	for (i = 0; i < dev->hw.prof.stages; i++) {
		ret = stage_init(dev, i);
		if (ret)
			return ret;
	}
	for (i = 0; i < dev->ctx.max; i++)
		dev->ctx.ctxs[i].gen = 1;
	return 0;
}

/*
 * The load worker and the command processor; stage workers start with a
 * model (wfs_load.c).
 */
static int threads_start(struct wfs_device *dev)
{
	struct wfs_hw *hw = &dev->hw;
	int ret = wfs_loadq_start(dev);

	if (ret)
		return ret;
	dev->cp.thread = wfs_os_thread_start(wfs_cp_thread, dev, "wfs-cp",
					     hw->index, 0, hw->numa_node);
	if (dev->cp.thread)
		return 0;
	wfs_sync_request(&dev->sync, 1);
	wfs_loadq_stop(dev);
	return -WFS_ENOMEM;
}

int wfs_device_create(const struct wfs_device_config *cfg,
		      struct wfs_device **out)
{
	struct wfs_device *dev;
	struct wfs_profile prof;
	int ret;

	*out = NULL;
	ret = config_check(cfg, &prof);
	if (ret)
		return ret;
	dev = wfs_os_zalloc(sizeof(*dev), cfg->numa_node);
	if (!dev)
		return -WFS_ENOMEM;
	dev->hw.prof = prof;
	dev->hw.index = cfg->index;
	dev->hw.numa_node = cfg->numa_node;
	dev->hw.flags = cfg->flags;
	dev->hw.dma = *cfg->dma;
	dev->hw.dma_ctx = cfg->dma_ctx;
	dev->hw.irq = cfg->irq;
	dev->hw.irq_ctx = cfg->irq_ctx;
	dev->job.max = cfg->max_jobs ? cfg->max_jobs : WFS_DEFAULT_MAX_JOBS;
	dev->ctx.max = cfg->max_contexts ? cfg->max_contexts :
		       WFS_DEFAULT_MAX_CTXS;
	ret = device_alloc(dev, cfg);
	if (ret)
		goto fail;

	wfs_reg_set(&dev->hw, WFW_REG_ABI_VERSION, WFW_ABI_VERSION);
	wfs_reg_set(&dev->hw, WFW_REG_FW_VERSION, WFW_FW_VERSION);
	wfs_reg_set(&dev->hw, WFW_REG_NUM_STAGES, prof.stages);
	wfs_reg_set(&dev->hw, WFW_REG_SRAM_KIB, (u32)(prof.sram_bytes >> 10));
	wfs_reg_set(&dev->hw, WFW_REG_PROFILE, prof.id);
	ret = threads_start(dev);
	if (ret)
		goto fail;
	wfs_reg_set(&dev->hw, WFW_REG_STATUS, WFW_STATUS_READY);
	wfs_log_printf(&dev->hw.log, 0, "%s device up: %u stages x %llu KiB SRAM, %llu MHz, ABI %u.%u",
		       prof.name, prof.stages,
		       (unsigned long long)(prof.sram_bytes >> 10),
		       (unsigned long long)wfs_div_u64(prof.clock_hz, 1000000),
		       WFW_ABI_MAJOR, WFW_ABI_MINOR);
	if (dev->pool.size)
		wfs_log_printf(&dev->hw.log, 0, "stage workers: a pool of %u",
			       dev->pool.size);
	else
		wfs_log_printf(&dev->hw.log, 0, "stage workers: one per stage");
	*out = dev;
	return 0;

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
