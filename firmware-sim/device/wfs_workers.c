// SPDX-License-Identifier: MIT
/*
 * wfs_workers.c - the host threads that run the stages (see wfs_workers.h).
 */
#include "wfs_device_priv.h"
#include "wfs_ring.h"

/* No stage. */
#define POOL_NONE	0xffffffffu

static void workers_count(struct wfs_device *dev)
{
	wfs_os_mutex_lock(dev->sync.lock);
	dev->sync.n_workers++;
	wfs_os_mutex_unlock(dev->sync.lock);
}

/* ------------------------------------------------------ one per stage -- */

/* Runs its stage until it is told to exit or the device stops. */
static void stage_worker(void *arg)
{
	struct wfs_stage *st = arg;
	struct wfs_device *dev = st->dev;

	while (!wfs_stopping(&dev->sync) && !wfs_os_load32(&st->in.closed)) {
		if (!wfs_stage_step(st))
			wfs_park(&dev->sync, 0, &st->in.closed);
	}
}

static int stage_workers_start(struct wfs_device *dev, u32 n)
{
	struct wfs_hw *hw = &dev->hw;
	u32 i;

	for (i = 0; i < n; i++) {
		struct wfs_stage *st = &dev->stages[i];

		if (st->thread)
			continue;	/* started for another model */
		wfs_os_store32(&st->in.closed, 0);
		st->thread = wfs_os_thread_start(stage_worker, st, "wfs-st",
						 hw->index, (int)i,
						 hw->numa_node);
		if (!st->thread)
			return -WFS_ENOMEM;
		workers_count(dev);
	}
	return 0;
}

/* --------------------------------------------------------------- pool -- */

/*
 * Can worker @me run stage @s now?  Unclaimed or its own, an entry
 * waiting, and room for the result in the next stage's FIFO.  An injected
 * hang holds stage 0, not a worker: the others drain what is ahead of it.
 * pool.lock.
 */
static int pool_ready(struct wfs_device *dev, u32 s, u32 me)
{
	struct wfs_stage *st = &dev->stages[s];
	struct wfs_fifo *next;
	struct wfs_flit *head;
	struct wfs_job *job;

	wfs_os_mutex_assert_held(dev->pool.lock);
	if ((st->claimed && st->claimed != me) || st->in.head == st->in.tail)
		return 0;
	head = &st->in.ent[wfs_ring_slot(st->in.head, st->in.depth)];
	job = wfs_job_get(dev, head->job);
	if (!s && job->hang)
		return 0;
	/* The entry's model ends here: it needs no room downstream. */
	if (st->mdl[job->ctx->model].last)
		return 1;
	next = &dev->stages[s + 1].in;
	return wfs_ring_count(next->head, next->tail) < next->depth;
}

/* @pref if it is ready, else the furthest ready stage (drains first). */
static u32 pool_pick(struct wfs_device *dev, u32 pref, u32 me)
{
	u32 s = dev->pool.stages;

	if (pref < s && pool_ready(dev, pref, me))
		return pref;
	while (s--) {
		if (pool_ready(dev, s, me))
			return s;
	}
	return POOL_NONE;
}

static int pool_halted(struct wfs_device *dev)
{
	return wfs_aborting(&dev->sync) || wfs_os_load32(&dev->pool.closed);
}

static void pool_unclaim(struct wfs_device *dev, u32 *s)
{
	if (*s == POOL_NONE)
		return;
	dev->stages[*s].claimed = 0;
	*s = POOL_NONE;
}

/*
 * Claim the stage to run.  Also hold the one after it when its FIFO is
 * empty: only this stage feeds it, so holding it idles nothing, and the
 * chunk stays on this worker instead of waking another.  pool.lock.
 */
static void pool_claim(struct wfs_device *dev, u32 s, u32 me, u32 *ahead)
{
	struct wfs_stage *next = &dev->stages[s + 1];

	wfs_os_mutex_assert_held(dev->pool.lock);
	dev->stages[s].claimed = me;
	if (s + 1 >= dev->pool.stages || next->claimed ||
	    next->in.head != next->in.tail)
		return;
	next->claimed = me;
	*ahead = s + 1;
}

/*
 * Wake the idle workers if a stage is left that any of them could run.
 * Called after whatever may make a stage ready: a push or pop (the FIFOs'
 * notify hook) and a release (pool_next()).  pool.lock.
 */
static void pool_wake_idle(struct wfs_device *dev)
{
	u32 s;

	wfs_os_mutex_assert_held(dev->pool.lock);
	if (!dev->pool.idle)
		return;
	for (s = 0; s < dev->pool.stages; s++) {
		if (pool_ready(dev, s, 0)) {
			wfs_os_cond_broadcast(dev->pool.cond);
			return;
		}
	}
}

/* Wait for a stage to run; an idle worker holds no stage.  pool.lock. */
static u32 pool_wait(struct wfs_pool_worker *w, u32 *ahead)
{
	struct wfs_device *dev = w->dev;
	u32 s;

	wfs_os_mutex_assert_held(dev->pool.lock);
	pool_unclaim(dev, ahead);
	while ((s = pool_pick(dev, 0, w->id)) == POOL_NONE &&
	       !pool_halted(dev)) {
		dev->pool.idle++;
		wfs_os_cond_wait(dev->pool.cond, dev->pool.lock);
		dev->pool.idle--;
	}
	return s;
}

/*
 * Release @done, wait for a stage to run and claim it; POOL_NONE when the
 * device aborts or the pool closes (then nothing is held).
 */
static u32 pool_next(struct wfs_pool_worker *w, u32 done, u32 *ahead)
{
	struct wfs_device *dev = w->dev;
	u32 pref = *ahead, s;

	/* The held stage, else the one after the last. */
	if (pref == POOL_NONE)
		pref = done == POOL_NONE ? 0 : done + 1;
	wfs_os_mutex_lock(dev->pool.lock);
	pool_unclaim(dev, &done);
	s = pool_pick(dev, pref, w->id);
	if (s == POOL_NONE)
		s = pool_wait(w, ahead);
	if (pool_halted(dev))
		s = POOL_NONE;
	if (*ahead != s)
		pool_unclaim(dev, ahead);
	*ahead = POOL_NONE;
	if (s != POOL_NONE)
		pool_claim(dev, s, w->id, ahead);
	pool_wake_idle(dev);
	wfs_os_mutex_unlock(dev->pool.lock);
	return s;
}

/* Runs the stages with the entries, until told to exit or the device stops. */
static void pool_worker(void *arg)
{
	struct wfs_pool_worker *w = arg;
	struct wfs_device *dev = w->dev;
	u32 s = POOL_NONE, ahead = POOL_NONE;

	while (!wfs_stopping(&dev->sync) && !wfs_os_load32(&dev->pool.closed)) {
		s = pool_next(w, s, &ahead);
		if (s == POOL_NONE)
			wfs_park(&dev->sync, 0, &dev->pool.closed);
		else
			wfs_stage_step(&dev->stages[s]);
	}
	if (s != POOL_NONE) {
		wfs_os_mutex_lock(dev->pool.lock);
		pool_unclaim(dev, &s);
		pool_unclaim(dev, &ahead);
		wfs_os_cond_broadcast(dev->pool.cond);
		wfs_os_mutex_unlock(dev->pool.lock);
	}
}

static int pool_start(struct wfs_device *dev, u32 n)
{
	struct wfs_stage_pool *p = &dev->pool;
	struct wfs_hw *hw = &dev->hw;
	u32 i;

	/* A model on more stages than the others widens the running pool. */
	wfs_os_mutex_lock(p->lock);
	p->stages = WFS_MAX(p->stages, n);
	wfs_os_mutex_unlock(p->lock);
	wfs_os_store32(&p->closed, 0);
	for (i = 0; i < p->size && i < n; i++) {
		if (p->w[i].thread)
			continue;
		p->w[i].thread = wfs_os_thread_start(pool_worker, &p->w[i],
						     "wfs-pw", hw->index, (int)i,
						     hw->numa_node);
		if (!p->w[i].thread)
			return -WFS_ENOMEM;
		workers_count(dev);
	}
	return 0;
}

static void pool_join(struct wfs_device *dev)
{
	struct wfs_stage_pool *p = &dev->pool;
	u32 i;

	wfs_os_mutex_lock(p->lock);
	wfs_os_cond_broadcast(p->cond);
	wfs_os_mutex_unlock(p->lock);
	for (i = 0; i < p->size; i++) {
		wfs_os_thread_join(p->w[i].thread);
		p->w[i].thread = NULL;
	}
	p->stages = 0;
}

/* ---------------------------------------------------------------- API -- */

int wfs_stage_pool_init(struct wfs_device *dev, int workers)
{
	struct wfs_stage_pool *p = &dev->pool;
	u32 n = (u32)workers, i;

	if (workers == WFS_STAGE_WORKERS_AUTO)
		n = wfs_os_num_cpus();

	/* As many workers as stages: one per stage. */
	p->size = n < dev->hw.prof.stages ? n : 0;
	if (!p->size)
		return 0;
	p->lock = wfs_os_mutex_create();
	p->cond = wfs_os_cond_create();
	p->w = wfs_os_zalloc((u64)p->size * sizeof(*p->w), dev->hw.numa_node);
	if (!p->lock || !p->cond || !p->w)
		return -WFS_ENOMEM;
	for (i = 0; i < p->size; i++) {
		p->w[i].dev = dev;
		p->w[i].id = i + 1;
	}
	return 0;
}

static void pool_notify(void *arg)
{
	pool_wake_idle(arg);
}

int wfs_stage_pool_fifo_lock(struct wfs_device *dev, struct wfs_fifo *f)
{
	f->cond = wfs_os_cond_create();
	if (!dev->pool.size) {
		f->lock = wfs_os_mutex_create();
		return f->lock && f->cond ? 0 : -WFS_ENOMEM;
	}
	f->lock = dev->pool.lock;
	f->notify = pool_notify;
	f->notify_arg = dev;
	return f->cond ? 0 : -WFS_ENOMEM;
}

void wfs_stage_pool_free(struct wfs_device *dev)
{
	struct wfs_stage_pool *p = &dev->pool;
	u32 i;

	for (i = 0; dev->stages && i < dev->hw.prof.stages; i++) {
		wfs_os_cond_destroy(dev->stages[i].in.cond);
		if (!p->size)
			wfs_os_mutex_destroy(dev->stages[i].in.lock);
	}
	wfs_os_free(p->w);
	wfs_os_cond_destroy(p->cond);
	wfs_os_mutex_destroy(p->lock);
}

int wfs_stage_workers_start(struct wfs_device *dev, u32 n)
{
	if (dev->pool.size)
		return pool_start(dev, n);
	return stage_workers_start(dev, n);
}

void wfs_stage_workers_close_locked(struct wfs_device *dev)
{
	u32 i;

	wfs_os_mutex_assert_held(dev->sync.lock);
	for (i = 0; i < dev->hw.prof.stages; i++) {
		if (dev->stages[i].thread)
			wfs_os_store32(&dev->stages[i].in.closed, 1);
	}
	if (dev->pool.size)
		wfs_os_store32(&dev->pool.closed, 1);
	dev->sync.n_workers = 0;
	/* Parked workers wait on the state condition. */
	wfs_os_cond_broadcast(dev->sync.cond);
}

void wfs_stage_workers_join(struct wfs_device *dev)
{
	u32 i;

	if (dev->pool.size && wfs_os_load32(&dev->pool.closed))
		pool_join(dev);
	for (i = 0; i < dev->hw.prof.stages; i++) {
		struct wfs_stage *st = &dev->stages[i];

		if (!st->thread || !wfs_os_load32(&st->in.closed))
			continue;
		wfs_fifo_wake(&st->in);
		wfs_os_thread_join(st->thread);
		st->thread = NULL;
	}
}

void wfs_stage_workers_wake(struct wfs_device *dev)
{
	if (!dev->pool.size)
		return;
	wfs_os_mutex_lock(dev->pool.lock);
	wfs_os_cond_broadcast(dev->pool.cond);
	wfs_os_mutex_unlock(dev->pool.lock);
}

void wfs_stage_workers_stop(struct wfs_device *dev)
{
	u32 i;

	if (dev->pool.size)
		pool_join(dev);
	for (i = 0; i < dev->hw.prof.stages; i++) {
		wfs_os_thread_join(dev->stages[i].thread);
		dev->stages[i].thread = NULL;
	}
}
