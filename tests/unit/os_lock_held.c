// SPDX-License-Identifier: MIT
/*
 * os_lock_held.c - wfs_os_mutex_assert_held(), the userspace build's
 * lockdep_assert_held(): silent for the holder (also after a condition
 * wait gave the lock back and took it again), an abort with a message for
 * a caller that does not hold the lock: never taken, released, or held by
 * another thread.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wfs_os.h"
#include "wt_util.h"

static struct wfs_os_mutex *m;
static struct wfs_os_cond *c;
static int flag;

enum how { HELD, NEVER, RELEASED, OTHER_THREAD, AFTER_WAIT };

/* Take the lock and keep it until the process ends. */
static void *holder(void *arg)
{
	(void)arg;
	wfs_os_mutex_lock(m);
	__atomic_store_n(&flag, 1, __ATOMIC_RELEASE);
	for (;;)
		pause();
	return NULL;
}

static void *waker(void *arg)
{
	(void)arg;
	wfs_os_mutex_lock(m);
	flag = 1;
	wfs_os_cond_broadcast(c);
	wfs_os_mutex_unlock(m);
	return NULL;
}

/* In a child: check the lock as @how leaves it; exit 0 if the check passed. */
static void child(enum how how)
{
	pthread_t t;

	switch (how) {
	case HELD:
		wfs_os_mutex_lock(m);
		break;
	case NEVER:
		break;
	case RELEASED:
		wfs_os_mutex_lock(m);
		wfs_os_mutex_unlock(m);
		break;
	case OTHER_THREAD:
		pthread_create(&t, NULL, holder, NULL);
		while (!__atomic_load_n(&flag, __ATOMIC_ACQUIRE))
			sched_yield();
		break;
	case AFTER_WAIT:
		wfs_os_mutex_lock(m);
		pthread_create(&t, NULL, waker, NULL);
		while (!flag)
			wfs_os_cond_wait(c, m);
		break;
	}
	wfs_os_mutex_assert_held(m);
	_exit(0);
}

/* Run child(@how) in a process; return its wait status. */
static int run(enum how how)
{
	pid_t pid;
	int status = -1;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		/* the expected abort's message stays out of the test's output */
		if (how != HELD && how != AFTER_WAIT)
			if (!freopen("/dev/null", "w", stderr))
				_exit(2);
		child(how);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

static int aborted(int status)
{
	return status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static int passed(int status)
{
	return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static void test_holder_passes(void)
{
	wt_ok(passed(run(HELD)), "the thread that holds the lock passes the check");
	wt_ok(passed(run(AFTER_WAIT)),
	      "the holder passes after a condition wait took the lock back");
}

static void test_others_abort(void)
{
	wt_ok(aborted(run(NEVER)), "a lock never taken: the check aborts");
	wt_ok(aborted(run(RELEASED)), "a lock released: the check aborts");
	wt_ok(aborted(run(OTHER_THREAD)), "a lock another thread holds: the check aborts");
}

int main(void)
{
	m = wfs_os_mutex_create();
	c = wfs_os_cond_create();
	if (!m || !c)
		return 1;
	test_holder_passes();
	test_others_abort();
	wfs_os_cond_destroy(c);
	wfs_os_mutex_destroy(m);
	return wt_done();
}
