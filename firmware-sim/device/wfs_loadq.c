// SPDX-License-Identifier: MIT
/*
 * wfs_loadq.c - the load worker (see wfs_loadq.h).
 */
#include "wfs_device_priv.h"

static struct wfs_loadq_ent *loadq_first(struct wfs_loadq *q)
{
	return &q->ent[0];
}

/* Wait until a reset or stop begins, or FAULT_INJECT NONE. */
static void loadq_pause(struct wfs_device *dev, const char *where)
{
	struct wfs_loadq *q = &dev->loadq;

	wfs_log_printf(&dev->hw.log, 1,
		       "fault injection: load paused %s until a reset begins",
		       where);
	wfs_os_mutex_lock(dev->sync.lock);
	while (!wfs_aborting(&dev->sync) && !q->unpause)
		wfs_os_cond_wait(dev->sync.cond, dev->sync.lock);
	wfs_os_mutex_unlock(dev->sync.lock);
	wfs_log_printf(&dev->hw.log, 1, "fault injection: load goes on");
}

/* Holds the running load once its first stage is copied, if a pause is armed. */
static void loadq_hold(struct wfs_device *dev)
{
	if (loadq_first(&dev->loadq)->pause == WFW_FAULT_PAUSE_NEXT_COPY)
		loadq_pause(dev, "in its copy");
}

/* Check, place and copy the first load (the worker, no lock held). */
static int loadq_run(struct wfs_device *dev, struct wfs_loadq_ent *e)
{
	struct wfs_loadq *q = &dev->loadq;
	int ret;

	if (e->pause == WFW_FAULT_PAUSE_NEXT_LOAD)
		loadq_pause(dev, "before its check");
	/*
	 * Checked even once a reset began: the host keeps a blob it gave
	 * until the firmware is past it, and reading it here is how a test
	 * sees that (a timed-out load's blob freed early reads as garbage).
	 */
	ret = wfs_load_check(dev, e->blob, e->cmd.load.len, &q->info);
	if (ret)
		return ret;
	if (wfs_aborting(&dev->sync))
		return -WFS_ECANCELED;
	wfs_os_mutex_lock(dev->sync.lock);
	q->state = WFS_LOADQ_PLACING;
	wfs_os_cond_broadcast(dev->sync.cond);
	wfs_os_mutex_unlock(dev->sync.lock);
	return wfs_load_place(dev, &dev->models.m[e->slot], &e->cmd.load,
			      e->blob, &q->info, &q->cpl, loadq_hold);
}

static void loadq_thread(void *arg)
{
	struct wfs_device *dev = arg;
	struct wfs_loadq *q = &dev->loadq;
	struct wfs_loadq_ent *e;
	int ret;

	wfs_os_mutex_lock(dev->sync.lock);
	for (;;) {
		while (q->state != WFS_LOADQ_QUEUED && !wfs_stopping(&dev->sync))
			wfs_os_cond_wait(dev->sync.cond, dev->sync.lock);
		if (q->state != WFS_LOADQ_QUEUED)
			break;
		q->state = WFS_LOADQ_CHECKING;
		e = loadq_first(q);
		/* Begun: the host times it from now (WFW_REG_LOAD_RUNNING). */
		wfs_reg_set(&dev->hw, WFW_REG_LOAD_RUNNING, (u32)e->cmd.cookie);
		wfs_os_mutex_unlock(dev->sync.lock);

		WFS_MEMSET(&q->cpl, 0, sizeof(q->cpl));
		ret = loadq_run(dev, e);

		wfs_os_mutex_lock(dev->sync.lock);
		q->ret = ret;
		q->state = WFS_LOADQ_DONE;
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

/* Unmap an entry's blob and give back its slot (and its SRAM blocks). */
static void ent_release(struct wfs_device *dev, struct wfs_loadq_ent *e)
{
	if (dev->hw.dma.unmap)
		dev->hw.dma.unmap(dev->hw.dma_ctx, e->blob, e->cmd.load.len);
	e->blob = NULL;
	wfs_load_cancel(dev, &dev->models.m[e->slot]);
}

/* Remove entry @i (0: the first) from the queue; the next one runs. */
static void loadq_remove(struct wfs_device *dev, u32 i)
{
	struct wfs_loadq *q = &dev->loadq;
	u32 k;

	wfs_os_mutex_lock(dev->sync.lock);
	/* Not the running entry's record, unless it is the one removed. */
	for (k = i; k + 1 < q->n; k++)
		q->ent[k] = q->ent[k + 1];
	q->n--;
	if (!i) {
		q->state = q->n ? WFS_LOADQ_QUEUED : WFS_LOADQ_IDLE;
		q->unpause = 0;
		wfs_reg_set(&dev->hw, WFW_REG_LOAD_RUNNING, 0);
	}
	wfs_os_cond_broadcast(dev->sync.cond);
	wfs_os_mutex_unlock(dev->sync.lock);
}

/* Drop every load without a completion (nothing else runs them). */
static void loadq_release_all(struct wfs_device *dev)
{
	struct wfs_loadq *q = &dev->loadq;

	while (q->n) {
		ent_release(dev, &q->ent[q->n - 1]);
		wfs_os_mutex_lock(dev->sync.lock);
		q->n--;
		wfs_os_mutex_unlock(dev->sync.lock);
	}
	wfs_os_mutex_lock(dev->sync.lock);
	q->state = WFS_LOADQ_IDLE;
	q->unpause = 0;
	wfs_reg_set(&dev->hw, WFW_REG_LOAD_RUNNING, 0);
	wfs_os_cond_broadcast(dev->sync.cond);
	wfs_os_mutex_unlock(dev->sync.lock);
}

void wfs_loadq_stop(struct wfs_device *dev)
{
	wfs_os_thread_join(dev->loadq.thread);
	dev->loadq.thread = NULL;
	loadq_release_all(dev);
}

int wfs_loadq_submit(struct wfs_device *dev, const struct wfw_cmd *cmd,
		     u32 pause)
{
	const struct wfs_dma_ops *dma = &dev->hw.dma;
	struct wfs_loadq *q = &dev->loadq;
	struct wfs_loadq_ent *e;
	struct wfs_model_state *m;
	const u8 *blob;

	if (!dma->map)
		return -WFS_EOPNOTSUPP;
	/* Each queued load holds a slot: a full queue has none left. */
	m = q->n < WFS_LOADQ_DEPTH ? wfs_load_reserve(dev) : NULL;
	if (!m)
		return -WFS_EBUSY;
	blob = dma->map(dev->hw.dma_ctx, cmd->load.addr, cmd->load.len);
	if (!blob) {
		wfs_load_cancel(dev, m);
		return -WFS_EFAULT;
	}
	e = &q->ent[q->n];
	e->cmd = *cmd;
	e->slot = m->idx;
	e->blob = blob;
	e->t0 = wfs_os_now_ns();
	e->pause = pause;
	wfs_os_mutex_lock(dev->sync.lock);
	if (!q->n++) {
		q->unpause = 0;
		q->state = WFS_LOADQ_QUEUED;
		wfs_os_cond_broadcast(dev->sync.cond);
	}
	wfs_os_mutex_unlock(dev->sync.lock);
	if (q->n > 1)
		wfs_log_printf(&dev->hw.log, 0,
			       "load: queued behind %u load(s)", q->n - 1);
	return WFS_CPL_DEFERRED;
}

/* Post a load's completion. */
static void loadq_post(struct wfs_device *dev, const struct wfs_loadq_ent *e,
		       struct wfw_cpl *c, int status)
{
	c->cookie = e->cmd.cookie;
	c->opcode = e->cmd.opcode;
	c->status = status;
	c->host_ns = wfs_os_now_ns() - e->t0;
	wfs_cpl_post(&dev->hw, &dev->cpl, c, 0);
}

int wfs_loadq_cancel(struct wfs_device *dev, u64 cookie)
{
	struct wfs_loadq *q = &dev->loadq;
	struct wfs_loadq_ent *e;
	struct wfw_cpl c;
	u32 i;

	for (i = 0; i < q->n; i++) {
		e = &q->ent[i];
		if (e->cmd.cookie == cookie)
			break;
	}
	if (i == q->n)
		return -WFS_ENOENT;
	if (!i)
		return -WFS_EBUSY;
	WFS_MEMSET(&c, 0, sizeof(c));
	ent_release(dev, e);
	loadq_post(dev, e, &c, -WFS_ECANCELED);
	loadq_remove(dev, i);
	wfs_log_printf(&dev->hw.log, 0, "load: a queued load was cancelled");
	return 0;
}

void wfs_loadq_finish(struct wfs_device *dev)
{
	struct wfs_loadq *q = &dev->loadq;
	struct wfs_loadq_ent *e = loadq_first(q);
	struct wfs_model_state *m;
	struct wfw_cpl c;
	int ret;

	wfs_os_mutex_lock(dev->sync.lock);
	ret = q->state == WFS_LOADQ_DONE && !wfs_aborting(&dev->sync);
	wfs_os_mutex_unlock(dev->sync.lock);
	if (!ret)
		return;
	c = q->cpl;
	m = &dev->models.m[e->slot];
	ret = q->ret;
	if (!ret)
		ret = wfs_load_commit(dev, m, e->cmd.load.len, &c);
	else
		wfs_load_cancel(dev, m);
	if (dev->hw.dma.unmap)
		dev->hw.dma.unmap(dev->hw.dma_ctx, e->blob, e->cmd.load.len);
	e->blob = NULL;
	loadq_post(dev, e, &c, ret);
	loadq_remove(dev, 0);
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
	u32 n;

	wfs_os_mutex_lock(dev->sync.lock);
	while (q->state == WFS_LOADQ_QUEUED || q->state == WFS_LOADQ_CHECKING ||
	       q->state == WFS_LOADQ_PLACING)
		wfs_os_cond_wait(dev->sync.cond, dev->sync.lock);
	n = q->n;
	wfs_os_mutex_unlock(dev->sync.lock);
	if (!n)
		return;
	wfs_log_printf(&dev->hw.log, 1, "load: %u load(s) dropped by the reset", n);
	loadq_release_all(dev);
}
