/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wafer jobs: a file's pool of freed job structures, which its next
 * submissions reuse.  The scheduler's free work releases a job, usually on
 * another CPU than the submitter's; SLUB puts such a remote free back on
 * the object's slab page, not on the allocating CPU's freelist, so a
 * submitter taking job after job from the slab hits its slow path every
 * few jobs.  A file's jobs instead go round through its pool.
 *
 * A pooled job keeps its cookie reserved in the device's job table (an
 * xa_alloc() less per submission): the table then holds a reserved entry
 * for it, which completion's lookup reads as no job, as it would an
 * erased one.  The cookie goes when the job is freed for good.
 */
#ifndef WDRV_JOB_POOL_H
#define WDRV_JOB_POOL_H

#include <linux/atomic.h>
#include <linux/gfp_types.h>
#include <linux/llist.h>
#include <linux/spinlock.h>

struct wdrv_job;

/* Freed jobs a file keeps: a batch of io_uring submissions in flight. */
#define WDRV_JOB_POOL_MAX	128

/**
 * struct wdrv_job_pool - freed jobs of one file, for its next submissions
 * @lock: Serialises taking jobs out (llist_del_first() takes one consumer
 *	at a time; jobs go in without it)
 * @free: the jobs, linked by their free_node
 * @n: jobs in @free (at most about WDRV_JOB_POOL_MAX)
 */
struct wdrv_job_pool {
	spinlock_t lock; /* Serialises llist_del_first() on free */
	struct llist_head free;
	atomic_t n;
};

void wdrv_job_pool_init(struct wdrv_job_pool *pool);
struct wdrv_job *wdrv_job_pool_get(struct wdrv_job_pool *pool, gfp_t gfp);
void wdrv_job_pool_put(struct wdrv_job_pool *pool, struct wdrv_job *job);
void wdrv_job_pool_drain(struct wdrv_job_pool *pool);

#endif /* WDRV_JOB_POOL_H */
