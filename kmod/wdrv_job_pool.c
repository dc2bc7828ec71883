// SPDX-License-Identifier: GPL-2.0-only
/*
 * wafer jobs: a file's pool of freed job structures (see wdrv_job_pool.h).
 * Taking a job out zeroes it but for its cookie, so a job from the pool
 * starts as one from kzalloc() does with its cookie already reserved.
 */
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/xarray.h>

#include "wdrv_job_pool.h"
#include "wdrv_job_priv.h"

/**
 * wdrv_job_pool_init() - an empty pool
 * @pool: the pool
 */
void wdrv_job_pool_init(struct wdrv_job_pool *pool)
{
	spin_lock_init(&pool->lock);
	init_llist_head(&pool->free);
	atomic_set(&pool->n, 0);
}

/* Frees a job for good, and with it the cookie it kept reserved. */
static void job_pool_free(struct wdrv_job *job)
{
	if (job->cookie)
		xa_erase(&job->q->jobs, job->cookie);
	kfree(job);
}

/**
 * wdrv_job_pool_get() - a zeroed job, from the pool or allocated
 * @pool: the pool
 * @gfp: for an allocation, when the pool is empty
 *
 * Return: the job, or NULL if the pool was empty and allocating failed.
 * A job from the pool keeps its cookie (still reserved in its queue's
 * table); an allocated one has none yet.
 */
struct wdrv_job *wdrv_job_pool_get(struct wdrv_job_pool *pool, gfp_t gfp)
{
	struct llist_node *node;
	struct wdrv_job *job;
	u32 cookie;

	spin_lock(&pool->lock);
	node = llist_del_first(&pool->free);
	spin_unlock(&pool->lock);
	if (!node)
		return kzalloc(sizeof(*job), gfp);
	atomic_dec(&pool->n);
	job = llist_entry(node, struct wdrv_job, free_node);
	cookie = job->cookie;
	memset(job, 0, sizeof(*job));
	job->cookie = cookie;
	return job;
}

/**
 * wdrv_job_pool_put() - keep a freed job for reuse, or free it
 * @pool: the pool of the job's file
 * @job: a job nothing refers to any more; its cookie, if it has one, is
 *	reserved in @job->q's table and no longer names the job there
 *
 * Freed when the pool is full, its cookie with it.  Needs no lock: jobs
 * are freed from work items, several at once.
 */
void wdrv_job_pool_put(struct wdrv_job_pool *pool, struct wdrv_job *job)
{
	if (atomic_inc_return(&pool->n) > WDRV_JOB_POOL_MAX) {
		atomic_dec(&pool->n);
		job_pool_free(job);
		return;
	}
	llist_add(&job->free_node, &pool->free);
}

/**
 * wdrv_job_pool_drain() - free every job in the pool
 * @pool: the pool of a file being freed (no job of it is left to put),
 *	before its device's job queue goes
 */
void wdrv_job_pool_drain(struct wdrv_job_pool *pool)
{
	struct wdrv_job *job, *next;

	llist_for_each_entry_safe(job, next, llist_del_all(&pool->free), free_node)
		job_pool_free(job);
	atomic_set(&pool->n, 0);
}

#if IS_ENABLED(CONFIG_DRM_ACCEL_WAFER_KUNIT_TEST)
#include "tests/wdrv_job_pool_test.c"
#endif
