// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * wfs_os_kernel.c - firmware-sim OS glue for the kernel build: kthreads,
 * mutexes, wait queues, kvzalloc_node(), ktime.  See wfs_os.h.
 */
#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/printk.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/wait.h>

#if defined(CONFIG_X86_64) && !defined(CONFIG_UML)
#include <asm/cpufeature.h>
#include <asm/fpu/api.h>
#include <asm/simd.h>
#define WFS_OS_X86_SIMD	1
#endif

#include "wfs_os.h"

struct wfs_os_mutex {
	struct mutex m;	/* what the caller's comment says it protects */
};

/*
 * A condition variable over a wait queue: waiters sleep until the
 * generation changes.  Reading the generation before dropping the mutex
 * closes the window in which a broadcast could be missed.
 */
struct wfs_os_cond {
	wait_queue_head_t wq;
	atomic_t gen;
};

struct wfs_os_event {
	wait_queue_head_t wq;
	atomic_t set;
};

struct wfs_os_thread {
	struct task_struct *task;
	void (*fn)(void *arg);
	void *arg;
};

void *wfs_os_zalloc(u64 bytes, int numa_node)
{
	if (bytes > (u64)INT_MAX)
		return NULL;
	return kvzalloc_node(bytes ? (size_t)bytes : 1, GFP_KERNEL,
			     numa_node < 0 ? NUMA_NO_NODE : numa_node);
}

void wfs_os_free(void *p)
{
	kvfree(p);
}

u64 wfs_os_now_ns(void)
{
	return ktime_get_ns();
}

struct wfs_os_mutex *__wfs_os_mutex_create(const char *name, struct lock_class_key *key)
{
	struct wfs_os_mutex *m = kzalloc(sizeof(*m), GFP_KERNEL);

	if (m)
		__mutex_init(&m->m, name, key);
	return m;
}

void wfs_os_mutex_destroy(struct wfs_os_mutex *m)
{
	if (!m)
		return;
	mutex_destroy(&m->m);
	kfree(m);
}

void wfs_os_mutex_lock(struct wfs_os_mutex *m)
{
	mutex_lock(&m->m);
}

void wfs_os_mutex_unlock(struct wfs_os_mutex *m)
{
	mutex_unlock(&m->m);
}

void wfs_os_mutex_assert_held(struct wfs_os_mutex *m)
{
	lockdep_assert_held(&m->m);
}

struct wfs_os_cond *wfs_os_cond_create(void)
{
	struct wfs_os_cond *c = kzalloc(sizeof(*c), GFP_KERNEL);

	if (c) {
		init_waitqueue_head(&c->wq);
		atomic_set(&c->gen, 0);
	}
	return c;
}

void wfs_os_cond_destroy(struct wfs_os_cond *c)
{
	kfree(c);
}

void wfs_os_cond_wait(struct wfs_os_cond *c, struct wfs_os_mutex *m)
{
	int gen = atomic_read(&c->gen);

	mutex_unlock(&m->m);
	/* TASK_IDLE: firmware threads may wait for long without a hung-task splat. */
	wait_event_idle(c->wq, atomic_read(&c->gen) != gen);
	mutex_lock(&m->m);
}

void wfs_os_cond_broadcast(struct wfs_os_cond *c)
{
	atomic_inc(&c->gen);
	wake_up_all(&c->wq);
}

struct wfs_os_event *wfs_os_event_create(void)
{
	struct wfs_os_event *e = kzalloc(sizeof(*e), GFP_KERNEL);

	if (e) {
		init_waitqueue_head(&e->wq);
		atomic_set(&e->set, 0);
	}
	return e;
}

void wfs_os_event_destroy(struct wfs_os_event *e)
{
	kfree(e);
}

void wfs_os_event_signal(struct wfs_os_event *e)
{
	atomic_set(&e->set, 1);
	wake_up(&e->wq);
}

int wfs_os_event_wait(struct wfs_os_event *e, u64 timeout_ns)
{
	unsigned long jiffies_left;

	if (atomic_xchg(&e->set, 0))
		return 1;
	if (!timeout_ns)
		return 0;
	jiffies_left = nsecs_to_jiffies(timeout_ns);
	wait_event_idle_timeout(e->wq, atomic_read(&e->set),
				jiffies_left ? jiffies_left : 1);
	return atomic_xchg(&e->set, 0);
}

/*
 * The body returns on its own when the device stops; the trampoline then
 * waits for kthread_stop() so the task cannot go away before join.
 */
static int thread_trampoline(void *p)
{
	struct wfs_os_thread *t = p;

	t->fn(t->arg);
	for (;;) {
		set_current_state(TASK_IDLE);
		if (kthread_should_stop())
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

struct wfs_os_thread *wfs_os_thread_start(void (*fn)(void *arg), void *arg,
					  const char *name, int dev_idx,
					  int idx, int numa_node)
{
	struct wfs_os_thread *t = kzalloc(sizeof(*t), GFP_KERNEL);

	if (!t)
		return NULL;
	t->fn = fn;
	t->arg = arg;
	t->task = kthread_create_on_node(thread_trampoline, t,
					 numa_node < 0 ? NUMA_NO_NODE :
					 numa_node, "%s%d.%d", name, dev_idx,
					 idx);
	if (IS_ERR(t->task)) {
		kfree(t);
		return NULL;
	}
	wake_up_process(t->task);
	return t;
}

void wfs_os_thread_join(struct wfs_os_thread *t)
{
	if (!t)
		return;
	kthread_stop(t->task);
	kfree(t);
}

u32 wfs_os_num_cpus(void)
{
	return num_online_cpus();
}

u32 wfs_os_load32(const u32 *p)
{
	/* Pairs with wfs_os_store32(): see what the writer published. */
	return smp_load_acquire(p);
}

void wfs_os_store32(u32 *p, u32 v)
{
	/* Pairs with wfs_os_load32(): publish the writes before @v. */
	smp_store_release(p, v);
}

void wfs_os_wmb(void)
{
	/* The caller's stores (ring entries) before the next (an index). */
	wmb();
}

u32 wfs_os_xchg32(u32 *p, u32 v)
{
	return xchg(p, v);
}

u32 wfs_os_cmpxchg32(u32 *p, u32 old, u32 v)
{
	return cmpxchg(p, old, v);
}

void wfs_os_log_console(int dev_idx, int level, const char *line)
{
	if (level)
		pr_warn_ratelimited("wafer%d: firmware: %s\n", dev_idx, line);
	else
		pr_debug("wafer%d: firmware: %s\n", dev_idx, line);
}

static bool wfs_os_simd_on = true;
module_param_named(simd, wfs_os_simd_on, bool, 0644);
MODULE_PARM_DESC(simd, "Run the forward pass with the AVX2 kernels when the CPU has them (default: 1; 0: the scalar reference code, bit-identical)");

u32 wfs_os_simd_caps(void)
{
#ifdef WFS_OS_X86_SIMD
	if (READ_ONCE(wfs_os_simd_on) && boot_cpu_has(X86_FEATURE_AVX2) &&
	    boot_cpu_has(X86_FEATURE_OSXSAVE) && may_use_simd())
		return WFS_OS_SIMD_AVX2;
#endif
	return 0;
}

void wfs_os_simd_enable(int on)
{
	WRITE_ONCE(wfs_os_simd_on, !!on);
}

void wfs_os_simd_begin(void)
{
#ifdef WFS_OS_X86_SIMD
	kernel_fpu_begin();
#endif
}

void wfs_os_simd_end(void)
{
#ifdef WFS_OS_X86_SIMD
	kernel_fpu_end();
#endif
}
