// SPDX-License-Identifier: MIT
/*
 * VM test: world-readable sysfs counters while long jobs are queued.
 *
 * tokens, modelled_makespan_ns and bottleneck_busy_ns are the firmware's
 * counters, served from the driver's cache (tokens counted by the driver
 * from the completions).  With seconds of jobs queued and one of them done
 * (so cached values are stale), reader processes of each attribute must
 * never sleep uninterruptibly (/proc/PID/stat state D), must all have read
 * their value while jobs are still in flight (no reader waits for the
 * firmware), and once the jobs are done tokens must account for exactly
 * the tokens the jobs ran, and the cached times grow (a refresh follows
 * the completions).
 *
 * Usage: sysfs_reads_not_behind_jobs [--jobs N] [--tokens PER_JOB]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wt_dev.h"
#include "wt_util.h"

#define TOPK		2
#define SLOTS		4
#define READERS		6
#define POLL_MAX	20000	/* 1 ms polls: a hang guard, not a threshold */

static const char *const attrs[] = { "tokens", "modelled_makespan_ns", "bottleneck_busy_ns" };

static int read_attr(const char *name, unsigned long long *v)
{
	char path[128];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/sys/class/accel/accel0/device/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	ok = fscanf(f, "%llu", v) == 1;
	fclose(f);
	return ok ? 0 : -EIO;
}

/* The state letter of @pid, or 0 once it is gone (a zombie counts as gone). */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] != 'Z' ? p[2] : 0;
}

/*
 * Waits until @pid has finished or sleeps in read(2); returns the state it
 * had then ('D' is the failure), 0 for finished, '?' when it never got there.
 */
static char reader_state(pid_t pid)
{
	unsigned long long arg1;
	char st;
	int i;

	for (i = 0; i < POLL_MAX; i++) {
		st = proc_state(pid);
		if (!st)
			return 0;
		if (wt_syscall_of(pid, &arg1) == SYS_read && st != 'R')
			return proc_state(pid);
		usleep(1000);
	}
	return '?';
}

/* Whether job @seqno is still to complete (a WAIT whose deadline passed). */
static int job_pending(int fd, uint64_t seqno)
{
	struct drm_wafer_wait w = { .seqno = seqno };
	int ret = wt_ioctl(fd, DRM_IOCTL_WAFER_WAIT, &w);

	return ret == -ETIME || ret == -ETIMEDOUT;
}

int main(int argc, char **argv)
{
	unsigned int jobs = 32, tokens = 32, i, r;
	unsigned long long before[3], after[3], base = 0, done = 0;
	long long left;
	struct wt_dev_model m;
	struct wt_bo in, out;
	uint64_t seqno = 0;
	pid_t pid[READERS];
	int fd, ok = 1, st;

	for (i = 1; i + 1 < (unsigned int)argc; i += 2) {
		if (!strcmp(argv[i], "--jobs"))
			jobs = (unsigned int)strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--tokens"))
			tokens = (unsigned int)strtoul(argv[i + 1], NULL, 0);
	}
	fd = wt_dev_open(0);
	if (!wt_ok(fd >= 0 && !wt_dev_load_model(fd, 8, SLOTS, 256, &m) &&
		   !wt_bo_new(fd, &in, tokens * 4) && !wt_bo_new(fd, &out, 4096),
		   "device, model, context and BOs"))
		return wt_done();
	for (i = 0; i < tokens; i++)
		((uint32_t *)in.map)[i] = 1 + i * 7 % 500;
	for (i = 0; i < 3; i++)
		ok &= !read_attr(attrs[i], &before[i]);
	ok &= !read_attr("jobs_completed", &base);
	wt_ok(ok, "the counters read on an idle device");

	for (i = 0; i < jobs; i++) {
		struct drm_wafer_submit s = { .job = { .ctx_id = m.ctx_id, .slot = i % SLOTS,
			.n_tokens = tokens, .top_k = TOPK, .in_handle = in.handle,
			.out_handle = out.handle,
			.out_offset = (i % SLOTS) * DRM_WAFER_RESULT_SIZE(TOPK) } };

		if (wt_ioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &s))
			break;
		seqno = s.seqno;
	}
	if (!wt_ok(i == jobs, "%u jobs of %u tokens queued", jobs, tokens))
		return wt_done();
	/* With a job completed, the cached values are stale. */
	wt_ok(!wt_wait_job(fd, 1, NULL), "the first job completed");

	for (r = 0; r < READERS; r++) {
		pid[r] = fork();
		if (pid[r] == 0) {
			unsigned long long v;

			_exit(read_attr(attrs[r % 3], &v) ? 1 : 0);
		}
	}
	for (r = 0; r < READERS; r++) {
		char s = reader_state(pid[r]);

		wt_ok(s != 'D' && s != '?', "reader of %s: state '%c' while jobs are queued",
		      attrs[r % 3], s ? s : '-');
	}
	for (r = 0; r < READERS; r++) {
		waitpid(pid[r], &st, 0);
		wt_ok(WIFEXITED(st) && !WEXITSTATUS(st), "reader %u read its attribute", r);
	}
	/*
	 * Measured against the jobs, not a clock: the readers were done while
	 * at least half of the jobs were still to complete (a reader waiting
	 * for a firmware command queued behind them is done with at most the
	 * pipeline's few left).
	 */
	ok = !read_attr("jobs_completed", &done);
	left = (long long)jobs - (long long)(done - base);
	wt_ok(ok && left >= jobs / 2 && job_pending(fd, seqno),
	      "every reader had its value with %lld of the %u jobs still to complete (at least %u)",
	      left, jobs, jobs / 2);

	for (i = 2; i <= seqno; i++)
		if (wt_wait_job(fd, i, NULL))
			ok = 0;
	wt_ok(ok, "every job completed with status 0");
	for (i = 0; i < 3; i++)
		ok &= !read_attr(attrs[i], &after[i]);
	wt_ok(ok && after[0] - before[0] == (unsigned long long)jobs * tokens,
	      "tokens grew by exactly the jobs' %u tokens (%llu -> %llu)", jobs * tokens,
	      before[0], after[0]);
	/* The refresh the completions queued: a hang guard, not a threshold. */
	for (i = 0; i < POLL_MAX && ok && (after[1] <= before[1] || after[2] <= before[2]); i++) {
		usleep(1000);
		ok &= !read_attr(attrs[1], &after[1]) && !read_attr(attrs[2], &after[2]);
	}
	wt_ok(ok && after[1] > before[1] && after[2] > before[2],
	      "modelled makespan and bottleneck busy time grew");
	return wt_done();
}
