// SPDX-License-Identifier: MIT
/*
 * wfs_os_user.c - firmware-sim OS glue for userspace: pthreads, malloc,
 * CLOCK_MONOTONIC.  See wfs_os.h for the contract.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wfs_os.h"

/*
 * @owner: the holder's token (owner_token()), NULL when free; written by
 * the holder only, so a thread reads its own token there exactly when it
 * holds the lock.
 */
struct wfs_os_mutex {
	pthread_mutex_t m;
	const void *owner;
};

struct wfs_os_cond {
	pthread_cond_t c;
};

struct wfs_os_event {
	pthread_mutex_t m;	/* Protects set */
	pthread_cond_t c;
	int set;
};

struct wfs_os_thread {
	pthread_t tid;
	void (*fn)(void *arg);
	void *arg;
};

void *wfs_os_zalloc(u64 bytes, int numa_node)
{
	(void)numa_node;	/* placement is libnuma's job in userspace */
	if (bytes == 0)
		bytes = 1;
	return calloc(1, (size_t)bytes);
}

void wfs_os_free(void *p)
{
	free(p);
}

u64 wfs_os_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec;
}

struct wfs_os_mutex *wfs_os_mutex_create(void)
{
	struct wfs_os_mutex *m = calloc(1, sizeof(*m));

	if (m && pthread_mutex_init(&m->m, NULL)) {
		free(m);
		m = NULL;
	}
	return m;
}

void wfs_os_mutex_destroy(struct wfs_os_mutex *m)
{
	if (!m)
		return;
	pthread_mutex_destroy(&m->m);
	free(m);
}

/* A token unique to the calling thread: the address of a thread-local. */
static const void *owner_token(void)
{
	static __thread char token;

	return &token;
}

static void owner_set(struct wfs_os_mutex *m, const void *owner)
{
	__atomic_store_n(&m->owner, owner, __ATOMIC_RELAXED);
}

void wfs_os_mutex_lock(struct wfs_os_mutex *m)
{
	pthread_mutex_lock(&m->m);
	owner_set(m, owner_token());
}

void wfs_os_mutex_unlock(struct wfs_os_mutex *m)
{
	owner_set(m, NULL);
	pthread_mutex_unlock(&m->m);
}

void wfs_os_mutex_assert_held(struct wfs_os_mutex *m)
{
	if (__atomic_load_n(&m->owner, __ATOMIC_RELAXED) == owner_token())
		return;
	fprintf(stderr, "wfs_os: a lock the caller must hold is not held (%p)\n",
		(void *)m);
	abort();
}

static int cond_init_monotonic(pthread_cond_t *c)
{
	pthread_condattr_t a;
	int ret;

	if (pthread_condattr_init(&a))
		return -1;
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	ret = pthread_cond_init(c, &a);
	pthread_condattr_destroy(&a);
	return ret;
}

struct wfs_os_cond *wfs_os_cond_create(void)
{
	struct wfs_os_cond *c = calloc(1, sizeof(*c));

	if (c && cond_init_monotonic(&c->c)) {
		free(c);
		c = NULL;
	}
	return c;
}

void wfs_os_cond_destroy(struct wfs_os_cond *c)
{
	if (!c)
		return;
	pthread_cond_destroy(&c->c);
	free(c);
}

void wfs_os_cond_wait(struct wfs_os_cond *c, struct wfs_os_mutex *m)
{
	owner_set(m, NULL);
	pthread_cond_wait(&c->c, &m->m);
	owner_set(m, owner_token());
}

void wfs_os_cond_broadcast(struct wfs_os_cond *c)
{
	pthread_cond_broadcast(&c->c);
}

struct wfs_os_event *wfs_os_event_create(void)
{
	struct wfs_os_event *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	if (pthread_mutex_init(&e->m, NULL)) {
		free(e);
		return NULL;
	}
	if (cond_init_monotonic(&e->c)) {
		pthread_mutex_destroy(&e->m);
		free(e);
		return NULL;
	}
	return e;
}

void wfs_os_event_destroy(struct wfs_os_event *e)
{
	if (!e)
		return;
	pthread_cond_destroy(&e->c);
	pthread_mutex_destroy(&e->m);
	free(e);
}

void wfs_os_event_signal(struct wfs_os_event *e)
{
	pthread_mutex_lock(&e->m);
	e->set = 1;
	pthread_cond_signal(&e->c);
	pthread_mutex_unlock(&e->m);
}

int wfs_os_event_wait(struct wfs_os_event *e, u64 timeout_ns)
{
	struct timespec ts;
	u64 deadline;
	int set;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	deadline = (u64)ts.tv_sec * 1000000000ull + (u64)ts.tv_nsec + timeout_ns;
	ts.tv_sec = (time_t)(deadline / 1000000000ull);
	ts.tv_nsec = (long)(deadline % 1000000000ull);

	pthread_mutex_lock(&e->m);
	while (!e->set && timeout_ns) {
		if (pthread_cond_timedwait(&e->c, &e->m, &ts) == ETIMEDOUT)
			break;
	}
	set = e->set;
	e->set = 0;
	pthread_mutex_unlock(&e->m);
	return set;
}

static void *thread_trampoline(void *p)
{
	struct wfs_os_thread *t = p;

	t->fn(t->arg);
	return NULL;
}

struct wfs_os_thread *wfs_os_thread_start(void (*fn)(void *arg), void *arg,
					  const char *name, int dev_idx,
					  int idx, int numa_node)
{
	struct wfs_os_thread *t = calloc(1, sizeof(*t));
	char comm[16];

	(void)numa_node;
	if (!t)
		return NULL;
	t->fn = fn;
	t->arg = arg;
	if (pthread_create(&t->tid, NULL, thread_trampoline, t)) {
		free(t);
		return NULL;
	}
	snprintf(comm, sizeof(comm), "%s%d.%d", name, dev_idx, idx);
	pthread_setname_np(t->tid, comm);
	return t;
}

void wfs_os_thread_join(struct wfs_os_thread *t)
{
	if (!t)
		return;
	pthread_join(t->tid, NULL);
	free(t);
}

u32 wfs_os_num_cpus(void)
{
	cpu_set_t set;
	int n = 0;

	if (!sched_getaffinity(0, sizeof(set), &set))
		n = CPU_COUNT(&set);
	return n > 0 ? (u32)n : 1;
}

u32 wfs_os_load32(const u32 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

void wfs_os_store32(u32 *p, u32 v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

void wfs_os_wmb(void)
{
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

u32 wfs_os_xchg32(u32 *p, u32 v)
{
	return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
}

u32 wfs_os_cmpxchg32(u32 *p, u32 old, u32 v)
{
	__atomic_compare_exchange_n(p, &old, v, 0, __ATOMIC_SEQ_CST,
				    __ATOMIC_SEQ_CST);
	return old;
}

void wfs_os_log_console(int dev_idx, int level, const char *line)
{
	if (getenv("WFS_LOG"))
		fprintf(stderr, "wfs%d: %s%s\n", dev_idx,
			level ? "warning: " : "", line);
}

/* -1: not yet read from the environment; then 0 or 1. */
static int wfs_os_simd_on = -1;

u32 wfs_os_simd_caps(void)
{
	int on = __atomic_load_n(&wfs_os_simd_on, __ATOMIC_RELAXED);

	if (on < 0) {
		const char *e = getenv("WAFER_SIMD");

		on = !(e && e[0] == '0' && !e[1]);
		/* a racing wfs_os_simd_enable() wins */
		__atomic_compare_exchange_n(&wfs_os_simd_on, &(int){ -1 }, on,
					    0, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED);
		on = __atomic_load_n(&wfs_os_simd_on, __ATOMIC_RELAXED);
	}
	if (!on)
		return 0;
#if defined(__x86_64__)
	/* checks the CPUID bit and that the OS enabled the ymm state */
	if (__builtin_cpu_supports("avx2"))
		return WFS_OS_SIMD_AVX2;
#endif
	return 0;
}

void wfs_os_simd_enable(int on)
{
	__atomic_store_n(&wfs_os_simd_on, !!on, __ATOMIC_RELAXED);
}

/* Userspace owns its vector registers: nothing to save. */
void wfs_os_simd_begin(void)
{
}

void wfs_os_simd_end(void)
{
}
