/* SPDX-License-Identifier: MIT */
/*
 * wfs_os.h - the operating-system glue of firmware-sim.
 *
 * This interface is the only thing that differs between the two builds of
 * the simulated device: wfs_os_kernel.c implements it with kthreads,
 * mutexes, wait queues, kvzalloc_node() and ktime; wfs_os_user.c with
 * pthreads, malloc() and CLOCK_MONOTONIC.  Everything else in firmware-sim
 * is freestanding and calls only these functions.
 *
 * All objects are created once, when a device is created; nothing here is
 * called to allocate memory after the device is up (the per-stage SRAM
 * arenas are carved up by wfs_sram.c instead).
 *
 * Context rules: wfs_os_event_signal() and the atomic helpers may be called
 * from any context (including with spinlocks held or interrupts off in the
 * kernel).  Everything else may sleep and must be called from process
 * context (a kthread or a task in a system call).
 */
#ifndef WFS_OS_H
#define WFS_OS_H

#include "wfs_compat.h"

/* Variable argument lists, for the firmware log's printf-like formatter. */
#ifdef __KERNEL__
#include <linux/stdarg.h>
#include <linux/stringify.h>
#define WFS_PRINTF(fmt, args)	__printf(fmt, args)
#else
#include <stdarg.h>
#define WFS_PRINTF(fmt, args)	__attribute__((__format__(__printf__, fmt, args)))
#endif

struct wfs_os_mutex;
struct wfs_os_cond;
struct wfs_os_event;
struct wfs_os_thread;

/* ------------------------------------------------------------- memory -- */

/**
 * wfs_os_zalloc() - allocate zeroed memory, optionally on a NUMA node
 * @bytes: size in bytes (may be large: SRAM arenas are allocated here)
 * @numa_node: preferred node, or a negative value for "any node"
 *
 * Return: the memory, or NULL.  Release with wfs_os_free().
 */
void *wfs_os_zalloc(u64 bytes, int numa_node);

/**
 * wfs_os_free() - release memory from wfs_os_zalloc()
 * @p: the memory, or NULL
 */
void wfs_os_free(void *p);

/* -------------------------------------------------------------- time --- */

/**
 * wfs_os_now_ns() - monotonic host time
 *
 * Return: nanoseconds of a monotonic clock with an arbitrary origin.
 */
u64 wfs_os_now_ns(void);

/* ------------------------------------------------------------- mutex --- */

/**
 * wfs_os_mutex_create() - create a sleeping lock
 *
 * In the kernel each call site is its own lockdep class (like mutex_init()),
 * so locks with different roles may nest.
 *
 * Return: the lock, or NULL on allocation failure.
 */
#ifdef __KERNEL__
struct lock_class_key;
struct wfs_os_mutex *__wfs_os_mutex_create(const char *name, struct lock_class_key *key);
#define wfs_os_mutex_create()						\
	({								\
		static struct lock_class_key __wfs_key;			\
		__wfs_os_mutex_create(__FILE__ ":" __stringify(__LINE__), \
				      &__wfs_key);			\
	})
#else
struct wfs_os_mutex *wfs_os_mutex_create(void);
#endif

/**
 * wfs_os_mutex_destroy() - destroy an unlocked lock
 * @m: the lock, or NULL
 */
void wfs_os_mutex_destroy(struct wfs_os_mutex *m);

/**
 * wfs_os_mutex_lock() - take a lock (may sleep)
 * @m: the lock
 */
void wfs_os_mutex_lock(struct wfs_os_mutex *m);

/**
 * wfs_os_mutex_unlock() - release a lock
 * @m: the lock
 */
void wfs_os_mutex_unlock(struct wfs_os_mutex *m);

/**
 * wfs_os_mutex_assert_held() - check that the caller holds a lock
 * @m: the lock a comment says the caller holds
 *
 * The kernel build is lockdep_assert_held(): a debug kernel with lockdep
 * warns when the caller does not hold @m.  The userspace build keeps the
 * owning thread in the lock and aborts with a message if it is not the
 * caller, so the unit tests check the same comments.
 */
void wfs_os_mutex_assert_held(struct wfs_os_mutex *m);

/* --------------------------------------------------------- condition --- */

/**
 * wfs_os_cond_create() - create a condition variable
 *
 * Return: the condition variable, or NULL on allocation failure.
 */
struct wfs_os_cond *wfs_os_cond_create(void);

/**
 * wfs_os_cond_destroy() - destroy a condition variable nobody waits on
 * @c: the condition variable, or NULL
 */
void wfs_os_cond_destroy(struct wfs_os_cond *c);

/**
 * wfs_os_cond_wait() - atomically release @m, sleep until woken, retake @m
 * @c: the condition variable
 * @m: a lock held by the caller
 *
 * Wake-ups may be spurious: callers re-check their predicate in a loop.
 */
void wfs_os_cond_wait(struct wfs_os_cond *c, struct wfs_os_mutex *m);

/**
 * wfs_os_cond_broadcast() - wake every waiter of @c
 * @c: the condition variable
 *
 * Call with the lock the waiters use held, after changing the predicate.
 */
void wfs_os_cond_broadcast(struct wfs_os_cond *c);

/* ------------------------------------------------------------- event --- */

/**
 * wfs_os_event_create() - create an auto-reset event (a "kick")
 *
 * Return: the event, or NULL on allocation failure.
 */
struct wfs_os_event *wfs_os_event_create(void);

/**
 * wfs_os_event_destroy() - destroy an event nobody waits on
 * @e: the event, or NULL
 */
void wfs_os_event_destroy(struct wfs_os_event *e);

/**
 * wfs_os_event_signal() - set the event and wake its waiter
 * @e: the event
 *
 * Callable from any context, including atomic context in the kernel: this
 * is how the doorbell register reaches the command processor.
 */
void wfs_os_event_signal(struct wfs_os_event *e);

/**
 * wfs_os_event_wait() - wait until the event is set, then clear it
 * @e: the event
 * @timeout_ns: give up after this long (0: do not wait at all)
 *
 * Return: non-zero if the event was set, 0 on timeout.
 */
int wfs_os_event_wait(struct wfs_os_event *e, u64 timeout_ns);

/* ------------------------------------------------------------ thread --- */

/**
 * wfs_os_thread_start() - start a firmware worker thread
 * @fn: thread body; it returns when the device asks it to stop
 * @arg: argument for @fn
 * @name: short name ("wfs-cp", "wfs-stage"); @idx and @dev_idx are appended
 * @dev_idx: device index, for the thread name
 * @idx: worker index, for the thread name
 * @numa_node: node to run on, or negative for any
 *
 * Return: the thread, or NULL on failure.
 */
struct wfs_os_thread *wfs_os_thread_start(void (*fn)(void *arg), void *arg,
					  const char *name, int dev_idx,
					  int idx, int numa_node);

/**
 * wfs_os_thread_join() - wait for a thread whose body has been told to
 *	return, and free it
 * @t: the thread, or NULL
 */
void wfs_os_thread_join(struct wfs_os_thread *t);

/* CPUs the device's threads may run on (at least 1). */
u32 wfs_os_num_cpus(void);

/* ----------------------------------------------------------- atomics --- */

/*
 * 32-bit atomics on plain u32 locations (the register block and the IRQ
 * latch).  The read-modify-write helpers are fully ordered; load is an
 * acquire, store a release.
 */

/**
 * wfs_os_load32() - load with acquire semantics
 * @p: location
 *
 * Return: the value.
 */
u32 wfs_os_load32(const u32 *p);

/**
 * wfs_os_store32() - store with release semantics
 * @p: location
 * @v: value
 */
void wfs_os_store32(u32 *p, u32 v);

/**
 * wfs_os_xchg32() - exchange, fully ordered
 * @p: location
 * @v: new value
 *
 * Return: the old value.
 */
u32 wfs_os_xchg32(u32 *p, u32 v);

/**
 * wfs_os_cmpxchg32() - compare and exchange, fully ordered
 * @p: location
 * @old: expected value
 * @v: new value
 *
 * Return: the value found at @p (equal to @old on success).
 */
u32 wfs_os_cmpxchg32(u32 *p, u32 old, u32 v);

/**
 * wfs_os_wmb() - order earlier stores before later ones (a host publishing
 *	ring entries before the index that makes them visible)
 */
void wfs_os_wmb(void);

/**
 * wfs_os_log_console() - copy a firmware log line to the host console
 * @dev_idx: device index
 * @level: 0 for information, 1 for a warning
 * @line: NUL-terminated text without a trailing newline
 *
 * The kernel build prints warnings with pr_warn() and information with
 * pr_debug() (dynamic debug); the userspace build prints to stderr only if
 * the WFS_LOG environment variable is set.
 */
void wfs_os_log_console(int dev_idx, int level, const char *line);

/* ------------------------------------------------------------- SIMD ---- */

/* Bits of wfs_os_simd_caps(). */
#define WFS_OS_SIMD_AVX2	BIT(0)	/* x86-64 AVX2 (integer ymm ops) */

/**
 * wfs_os_simd_caps() - vector instruction sets the forward pass may use now
 *
 * A set is offered when the CPU has it, the OS saves its registers, and
 * vector kernels are not switched off: the WAFER_SIMD=0 environment
 * variable (read once) in userspace, the wafer.simd=0 module parameter in
 * the kernel (also when in_interrupt() or the FPU is not usable here, in
 * which case the scalar code runs).  Cheap enough to call per matvec.
 *
 * Return: a mask of WFS_OS_SIMD_* bits, 0 for scalar code only.
 */
u32 wfs_os_simd_caps(void);

/**
 * wfs_os_simd_enable() - switch the vector kernels on or off
 * @on: 0 forces the scalar code, nonzero allows what the CPU offers
 *
 * For tests that compare the two paths (the scalar code is the reference).
 * Takes effect for the next call of wfs_os_simd_caps().
 */
void wfs_os_simd_enable(int on);

/**
 * wfs_os_simd_begin() - enter a section that uses vector registers
 *
 * kernel_fpu_begin() in the kernel (preemption is off until
 * wfs_os_simd_end(): callers keep sections short, a bounded number of rows
 * or positions); nothing in userspace.  Call only after wfs_os_simd_caps()
 * offered the set; no sleeping and no other wfs_os_* call inside.
 */
void wfs_os_simd_begin(void);

/**
 * wfs_os_simd_end() - leave a section begun with wfs_os_simd_begin()
 */
void wfs_os_simd_end(void);

#endif /* WFS_OS_H */
