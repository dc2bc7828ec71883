/* SPDX-License-Identifier: MIT */
/*
 * wafer_members.h - what the backends built of other devices share (the
 * pipeline, wafer_pipe.c; attention-FFN disaggregation, wafer_afd.c):
 * their hooks' lock, their wafer_info, buffers every member can use, their
 * counters, and what tells a member that failed from one that is slow.
 */
#ifndef WAFER_MEMBERS_H
#define WAFER_MEMBERS_H

#include <pthread.h>

#include "wafer_backend.h"

#define MIN_NZ(a, b)	((a) == 0 ? (b) : (b) == 0 ? (a) : (a) < (b) ? (a) : (b))

/* The lock and the condition (CLOCK_MONOTONIC) the completion hooks use. */
int wafer_members_sync_init(pthread_mutex_t *lock, pthread_cond_t *cond);

/*
 * How often a reap that waits on hooked members asks their reaps whether
 * one failed: a member that fails calls no hook, only its reap says so.
 */
#define WAFER_MEMBERS_CHECK_NS	10000000ull

/*
 * Whether a member's reap result @ret ends the member (it is dead: what it
 * holds will not complete).  Not a wait that ran out or was interrupted,
 * nor the caller's -EEXIST (wafer_members.c).
 */
int wafer_members_fatal(int ret);

/* Waits on @cond (@lock held) until @until_ns (wafer_now_ns()) at most. */
void wafer_members_wait(pthread_cond_t *cond, pthread_mutex_t *lock, uint64_t until_ns);

/**
 * struct wafer_members_gone - an object of the device being destroyed
 * @bo: a buffer, or NULL
 * @ctx: else a context's id, or 0
 * @model: else a model's id
 */
struct wafer_members_gone {
	const struct wafer_bo *bo;
	uint32_t ctx, model;
};

/* Whether job @j (its context's model: @model, an id) uses what @g says. */
int wafer_members_uses(const struct wafer_job_hw *j, uint32_t model,
		       const struct wafer_members_gone *g);

/*
 * Before an object of the device goes, with hooked members (they move a
 * job on from their own threads, with the job's objects): waits (@lock
 * held) until @running(@arg), the jobs in flight that use it, is 0, at
 * most @timeout_ms (0: 10 s), calling @check(@arg) (whether a member
 * failed, which ends its jobs) before each look.
 */
void wafer_members_drain(pthread_mutex_t *lock, pthread_cond_t *cond,
			 unsigned int (*running)(void *arg), void (*check)(void *arg),
			 void *arg, uint32_t timeout_ms);

/*
 * @n members' wafer_info combined into @i: member 0's, stages and free SRAM
 * summed, caps and limits the smallest, "mixed" profiles, job timeouts
 * summed (a job waits on every member in turn).
 */
void wafer_members_info(struct wafer_info *i, struct wafer_dev *const *m, unsigned int n);

/*
 * A buffer of @bo->size bytes allocated on member 0 (@on[0]) and a view on
 * every other (@on[k]); @bo maps @on[0].  On failure none is left.
 */
int wafer_members_bo_create(struct wafer_dev *const *m, unsigned int n, struct wafer_bo *bo,
			    struct wafer_bo **on);
void wafer_members_bo_destroy(struct wafer_bo **on, unsigned int n);

/*
 * The members' counters: jobs, tokens and the modelled clock are those of
 * the last member that ran jobs (every job ends there, and the members
 * share one timeline through their activation records); busy time summed,
 * the bottleneck and the expert load imbalance the worst member's.
 */
int wafer_members_stats(struct wafer_dev *const *m, unsigned int n, struct wafer_dev_stats *st);

#endif /* WAFER_MEMBERS_H */
