// SPDX-License-Identifier: MIT
/*
 * What the backends built of other devices share (see wafer_members.h).
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "wafer_members.h"

int wafer_members_sync_init(pthread_mutex_t *lock, pthread_cond_t *cond)
{
	pthread_condattr_t ca;
	int ret;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	ret = pthread_cond_init(cond, &ca);
	pthread_condattr_destroy(&ca);
	if (ret || pthread_mutex_init(lock, NULL)) {
		if (!ret)
			pthread_cond_destroy(cond);
		return wafer_set_error(-ENOMEM, "out of memory");
	}
	return 0;
}

/*
 * An error other than a wait that ran out (-ETIME, -ETIMEDOUT), was
 * interrupted (-EINTR) or found nothing yet (-EAGAIN), which the next reap
 * may answer, and other than the caller's -EEXIST: a kernel member's
 * io_uring ring reaped by another thread than the one that first used it
 * (wafer_uring.c), which that thread still can (the reap returns it,
 * nothing fails).  The rest (a device gone, a completion ring that broke)
 * will not complete what the member holds.
 */
int wafer_members_fatal(int ret)
{
	return ret < 0 && ret != -EAGAIN && ret != -EINTR && ret != -ETIME &&
	       ret != -ETIMEDOUT && ret != -EEXIST;
}

void wafer_members_wait(pthread_cond_t *cond, pthread_mutex_t *lock, uint64_t until_ns)
{
	struct timespec ts = { .tv_sec = (time_t)(until_ns / 1000000000ull),
			       .tv_nsec = (long)(until_ns % 1000000000ull) };

	pthread_cond_timedwait(cond, lock, &ts);
}

int wafer_members_uses(const struct wafer_job_hw *j, uint32_t model,
		       const struct wafer_members_gone *g)
{
	if (g->bo)
		return j->in == g->bo || j->out == g->bo;
	if (g->ctx)
		return j->ctx_id == g->ctx;
	return model == g->model;
}

/* Without a job timeout (0: none set), how long a destroy waits at most. */
#define DRAIN_DEFAULT_MS	10000u

void wafer_members_drain(pthread_mutex_t *lock, pthread_cond_t *cond,
			 unsigned int (*running)(void *arg), void (*check)(void *arg),
			 void *arg, uint32_t timeout_ms)
{
	uint64_t deadline = wafer_now_ns() +
			    (uint64_t)(timeout_ms ? timeout_ms : DRAIN_DEFAULT_MS) * 1000000ull;
	uint64_t now;

	for (;;) {
		check(arg);
		now = wafer_now_ns();
		if (!running(arg) || now >= deadline)
			return;
		wafer_members_wait(cond, lock, deadline - now > WAFER_MEMBERS_CHECK_NS ?
						now + WAFER_MEMBERS_CHECK_NS : deadline);
	}
}

void wafer_members_info(struct wafer_info *i, struct wafer_dev *const *m, unsigned int n)
{
	unsigned int k;

	*i = m[0]->info;
	i->numa_node = -1;
	for (k = 1; k < n; k++) {
		const struct wafer_info *o = &m[k]->info;

		i->caps &= o->caps;
		if (strcmp(i->profile_name, o->profile_name))
			strcpy(i->profile_name, "mixed");
		i->stages += o->stages;
		i->sram_bytes_free += o->sram_bytes_free;
		i->max_bo_size = MIN_NZ(i->max_bo_size, o->max_bo_size);
		i->max_models = MIN_NZ(i->max_models, o->max_models);
		i->max_contexts = MIN_NZ(i->max_contexts, o->max_contexts);
		i->max_tokens_per_job = MIN_NZ(i->max_tokens_per_job, o->max_tokens_per_job);
		i->max_inflight_jobs = MIN_NZ(i->max_inflight_jobs, o->max_inflight_jobs);
		i->job_timeout_ms += o->job_timeout_ms;
	}
}

void wafer_members_bo_destroy(struct wafer_bo **on, unsigned int n)
{
	while (n--) {
		wafer_bo_destroy(on[n]);	/* the views before the buffer */
		on[n] = NULL;
	}
}

int wafer_members_bo_create(struct wafer_dev *const *m, unsigned int n, struct wafer_bo *bo,
			    struct wafer_bo **on)
{
	unsigned int k;
	int ret = wafer_bo_create(m[0], bo->size, &on[0]);

	for (k = 1; k < n && !ret; k++)
		ret = wafer_bo_import(m[k], on[0], &on[k]);
	if (ret) {
		wafer_members_bo_destroy(on, n);
		return ret;
	}
	bo->map = on[0]->map;
	bo->size = on[0]->size;
	return 0;
}

int wafer_members_stats(struct wafer_dev *const *m, unsigned int n, struct wafer_dev_stats *st)
{
	struct wafer_dev_stats s;
	unsigned int k;
	int ret;

	for (k = 0; k < n; k++) {
		ret = wafer_dev_stats(m[k], &s);
		if (ret)
			return ret;
		if (s.jobs_completed) {
			st->jobs_completed = s.jobs_completed;
			st->tokens = s.tokens;
			st->modelled_makespan_ns = s.modelled_makespan_ns;
		}
		st->modelled_busy_ns += s.modelled_busy_ns;
		if (s.bottleneck_busy_ns > st->bottleneck_busy_ns)
			st->bottleneck_busy_ns = s.bottleneck_busy_ns;
		if (s.moe_imbalance_milli > st->moe_imbalance_milli)
			st->moe_imbalance_milli = s.moe_imbalance_milli;
	}
	return 0;
}
