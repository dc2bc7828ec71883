// SPDX-License-Identifier: MIT
/*
 * wfs_loadq.c - the load worker (see wfs_loadq.h).
 */
#include "wfs_device_priv.h"

static void set_state(struct wfs_device *dev, u32 state)
{
	wfs_os_mutex_lock(dev->sync.lock);
	dev->loadq.state = state;
	wfs_os_cond_broadcast(dev->sync.cond);
	wfs_os_mutex_unlock(dev->sync.lock);
}

/* WFW_FAULT_PAUSE_NEXT_LOAD: wait until a reset or stop begins, or NONE. */
static void loadq_pause(struct wfs_device *dev)
{
	struct wfs_loadq *q = &dev->loadq;

	wfs_log_printf(&dev->hw.log, 1,
		       "fault injection: load paused until a reset begins");
	wfs_os_mutex_lock(dev->sync.lock);
	while (!wfs_aborting(&dev->sync) && !q->unpause)
		wfs_os_cond_wait(dev->sync.cond, dev->sync.lock);
	wfs_os_mutex_unlock(dev->sync.lock);
	wfs_log_printf(&dev->hw.log, 1, "fault injection: load goes on");
}

static void loadq_thread(void *arg)
{
	struct wfs_device *dev = arg;
	struct wfs_loadq *q = &dev->loadq;
	int ret;

	wfs_os_mutex_lock(dev->sync.lock);
	for (;;) {
		while (q->state != WFS_LOADQ_QUEUED && !wfs_stopping(&dev->sync))
			wfs_os_cond_wait(dev->sync.cond, dev->sync.lock);
		if (q->state != WFS_LOADQ_QUEUED)
			break;
		q->state = WFS_LOADQ_CHECKING;
		wfs_os_mutex_unlock(dev->sync.lock);

		if (q->pause)
			loadq_pause(dev);
		ret = wfs_load_check(dev, q->blob, q->cmd.load.len, &q->info);

		wfs_os_mutex_lock(dev->sync.lock);
		q->check = ret;
		q->state = WFS_LOADQ_CHECKED;
		wfs_os_cond_broadcast(dev->sync.cond);
		wfs_hw_kick(&dev->hw);
	}
	wfs_os_mutex_unlock(dev->sync.lock);
}

int wfs_loadq_start(struct wfs_device *dev)
{
	dev->loadq.thread = wfs_os_thread_start(loadq_thread, dev, "wfs-load",
						dev->hw.index, 0, dev->hw.numa_node);
	return dev->loadq.thread ? 0 : -WFS_ENOMEM;
}

/* Unmap the load's blob and free its slot (nothing else runs the load). */
static void loadq_release(struct wfs_device *dev)
{
	struct wfs_loadq *q = &dev->loadq;

	if (dev->hw.dma.unmap)
		dev->hw.dma.unmap(dev->hw.dma_ctx, q->blob, q->cmd.load.len);
	wfs_load_cancel(dev, &dev->models.m[q->slot]);
	q->blob = NULL;
	set_state(dev, WFS_LOADQ_IDLE);
}

void wfs_loadq_stop(struct wfs_device *dev)
{
	wfs_os_thread_join(dev->loadq.thread);
	dev->loadq.thread = NULL;
	if (dev->loadq.state != WFS_LOADQ_IDLE)
		loadq_release(dev);
}

int wfs_loadq_submit(struct wfs_device *dev, const struct wfw_cmd *cmd,
		     u32 pause)
{
	const struct wfs_dma_ops *dma = &dev->hw.dma;
	struct wfs_loadq *q = &dev->loadq;
	struct wfs_model_state *m;
	const u8 *blob;
	u32 state;

	wfs_os_mutex_lock(dev->sync.lock);
	state = q->state;
	wfs_os_mutex_unlock(dev->sync.lock);
	if (state != WFS_LOADQ_IDLE) {
		wfs_log_printf(&dev->hw.log, 1,
			       "load: another load is in progress: try again once it completes");
		return -WFS_EAGAIN;
	}
	if (!dma->map)
		return -WFS_EOPNOTSUPP;
	m = wfs_load_reserve(dev);
	if (!m)
		return -WFS_EBUSY;
	blob = dma->map(dev->hw.dma_ctx, cmd->load.addr, cmd->load.len);
	if (!blob) {
		wfs_load_cancel(dev, m);
		return -WFS_EFAULT;
	}
	q->cmd = *cmd;
	q->slot = m->idx;
	q->blob = blob;
	q->t0 = wfs_os_now_ns();
	q->pause = pause;
	wfs_os_mutex_lock(dev->sync.lock);
	q->unpause = 0;
	q->state = WFS_LOADQ_QUEUED;
	wfs_os_cond_broadcast(dev->sync.cond);
	wfs_os_mutex_unlock(dev->sync.lock);
	return WFS_CPL_DEFERRED;
}

void wfs_loadq_finish(struct wfs_device *dev)
{
	struct wfs_loadq *q = &dev->loadq;
	struct wfs_model_state *m;
	struct wfw_cpl c;
	int ret;

	wfs_os_mutex_lock(dev->sync.lock);
	ret = q->state == WFS_LOADQ_CHECKED && !wfs_aborting(&dev->sync);
	wfs_os_mutex_unlock(dev->sync.lock);
	if (!ret)
		return;
	WFS_MEMSET(&c, 0, sizeof(c));
	c.cookie = q->cmd.cookie;
	c.opcode = q->cmd.opcode;
	m = &dev->models.m[q->slot];
	ret = q->check;
	if (!ret)
		ret = wfs_load_place(dev, m, &q->cmd.load, q->blob, &q->info, &c);
	if (dev->hw.dma.unmap)
		dev->hw.dma.unmap(dev->hw.dma_ctx, q->blob, q->cmd.load.len);
	if (ret && m->loading)
		wfs_load_cancel(dev, m);
	q->blob = NULL;
	set_state(dev, WFS_LOADQ_IDLE);
	c.status = ret;
	c.host_ns = wfs_os_now_ns() - q->t0;
	wfs_cpl_post(&dev->hw, &dev->cpl, &c, 0);
}

void wfs_loadq_unpause(struct wfs_device *dev)
{
	wfs_os_mutex_lock(dev->sync.lock);
	dev->loadq.unpause = 1;
	wfs_os_cond_broadcast(dev->sync.cond);
	wfs_os_mutex_unlock(dev->sync.lock);
}

void wfs_loadq_drop(struct wfs_device *dev)
{
	struct wfs_loadq *q = &dev->loadq;
	u32 state;

	wfs_os_mutex_lock(dev->sync.lock);
	while (q->state == WFS_LOADQ_QUEUED || q->state == WFS_LOADQ_CHECKING)
		wfs_os_cond_wait(dev->sync.cond, dev->sync.lock);
	state = q->state;
	wfs_os_mutex_unlock(dev->sync.lock);
	if (state == WFS_LOADQ_IDLE)
		return;
	wfs_log_printf(&dev->hw.log, 1, "load: dropped by the reset");
	loadq_release(dev);
}
