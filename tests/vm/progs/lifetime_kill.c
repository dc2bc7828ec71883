// SPDX-License-Identifier: MIT
/*
 * VM test: processes killed mid-job.
 *
 * Each round a child opens its own file of the device, loads the shared
 * model, creates a context and BOs (one large and touched, so its shmem
 * pages are visible in /proc/meminfo), and keeps jobs in flight: by ioctl,
 * by io_uring, blocked in WAIT, or all three at once.  The parent SIGKILLs
 * it after a seeded random delay, then checks that the dead file left
 * nothing behind: no job in flight (debugfs, bounded poll), GET_INFO's model
 * and context counts and free SRAM back to the baseline, the BO memory
 * freed, and another file can load the model and decode exactly as
 * firmware-sim does.  At the end no file holds the module (refcnt 0), so
 * the harness's rmmod must succeed.
 *
 * (uring_submit kills a child sharing the parent's file; this one kills
 * the only holder of a file with a model, contexts and BOs.)
 *
 * Usage: lifetime_kill [--seed N] [--rounds N] [--variant 0-3]
 *                      [--pipeline JOBS] [--tokens PER_JOB]
 *
 * The victims' queued work (pipeline x tokens) is kept small by default: a
 * control command (GET_INFO here) queues behind every job in the firmware's
 * command ring, and one that waited longer than job_timeout_ms made the
 * driver reset the device (--pipeline 64 --tokens 64 showed it).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <liburing.h>

#include "wt_dev.h"
#include "wt_util.h"

#define TOPK		4
#define SLOTS		4
#define TOKENS		16	/* positions the post-mortem decode checks */
/* Jobs a victim keeps in flight per path: about a second of work under TCG. */
static unsigned int pipeline = 16, job_tokens = 16;
#define BIG_BO		(16u << 20)	/* touched BO whose pages must be freed */
#define POLL_MS		100
#define POLL_MAX	600		/* 60 s for the device to drain */

enum { V_IOCTL, V_URING, V_WAIT, V_ALL, V_COUNT };
static const char *const vname[V_COUNT] = { "ioctl", "io_uring", "WAIT", "all three" };

static int get_info(int fd, struct drm_wafer_device_info *info)
{
	struct drm_wafer_get_info gi = { .info_ptr = (uintptr_t)info,
					 .info_size = sizeof(*info) };

	memset(info, 0, sizeof(*info));
	return wt_ioctl(fd, DRM_IOCTL_WAFER_GET_INFO, &gi);
}

static long meminfo_kib(const char *key)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	long v = -1;
	size_t n = strlen(key);

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			v = strtol(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}

static long module_refcnt(void)
{
	FILE *f = fopen("/sys/module/wafer/refcnt", "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static struct drm_wafer_job long_job(const struct wt_dev_model *m, const struct wt_bo *in,
				     const struct wt_bo *out, unsigned int i)
{
	return (struct drm_wafer_job){ .ctx_id = m->ctx_id, .slot = i % SLOTS,
		.n_tokens = job_tokens, .top_k = TOPK, .in_handle = in->handle,
		.out_handle = out->handle,
		.out_offset = (i % SLOTS) * DRM_WAFER_RESULT_SIZE(TOPK) };
}

/*
 * Queues one command running @j.  The SQ frees its entries on submit, so
 * the callers count commands in flight by their CQEs.
 */
static void uring_submit_one(struct io_uring *r, int fd, const struct drm_wafer_job *j)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(r);

	if (!sqe)
		_exit(11);
	wt_uring_prep_submit(sqe, fd, j, 0);
	io_uring_submit(r);
}

/* The victim's SUBMIT and WAIT: any error ends it with a distinct status. */
static void submit(int fd, const struct drm_wafer_job *j, uint64_t *seqno)
{
	struct drm_wafer_submit s = { .job = *j };
	int ret = wt_ioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &s);

	if (ret) {
		fprintf(stderr, "# victim: SUBMIT -> %d\n", ret);
		_exit(12);
	}
	*seqno = s.seqno;
}

static void wait_job(int fd, uint64_t seqno)
{
	int ret = wt_wait_job(fd, seqno, NULL);

	if (ret) {
		fprintf(stderr, "# victim: WAIT %llu -> %d\n", (unsigned long long)seqno, ret);
		_exit(14);
	}
}

/*
 * The victim: keeps pipeline jobs in flight until it is killed, by ioctl
 * (waiting for the oldest, submitting one more), by io_uring (one more per
 * CQE), or in batches it waits for in WAIT; "all three" adds pipeline
 * io_uring commands to the WAIT loop.  Says "ready" on @ready once jobs
 * are in flight.
 */
static void victim(int variant, int ready)
{
	struct drm_wafer_job j;
	struct wt_dev_model m;
	struct wt_bo in, out, big;
	struct io_uring ring;
	uint64_t seqno = 0, oldest = 1;
	unsigned int i;
	int fd, ret;

	fd = wt_dev_open(0);
	if (fd < 0 || wt_dev_load_model(fd, 8, SLOTS, 256, &m) ||
	    wt_bo_new(fd, &in, job_tokens * 4) || wt_bo_new(fd, &out, 4096) ||
	    wt_bo_new(fd, &big, BIG_BO))
		_exit(10);
	memset(big.map, 0x5a, BIG_BO);
	for (i = 0; i < job_tokens; i++)
		((uint32_t *)in.map)[i] = 1 + i * 7 % 500;
	if (variant == V_URING || variant == V_ALL) {
		if (io_uring_queue_init(2 * pipeline, &ring, IORING_SETUP_SQE128))
			_exit(11);
		for (i = 0; i < pipeline; i++) {
			j = long_job(&m, &in, &out, i);
			uring_submit_one(&ring, fd, &j);
		}
	}
	if (variant != V_URING)
		for (i = 0; i < pipeline; i++) {
			j = long_job(&m, &in, &out, i);
			submit(fd, &j, &seqno);
		}
	if (write(ready, "r", 1) != 1)
		_exit(13);
	for (i = 0;; i++) {
		j = long_job(&m, &in, &out, i);
		switch (variant) {
		case V_IOCTL:
			wait_job(fd, oldest++);
			submit(fd, &j, &seqno);
			break;
		case V_URING: {
			struct io_uring_cqe *cqe;

			ret = io_uring_wait_cqe(&ring, &cqe);
			if (ret || cqe->res) {
				fprintf(stderr, "# victim: CQE %d, res %d\n", ret, ret ? 0 : cqe->res);
				_exit(15);
			}
			io_uring_cqe_seen(&ring, cqe);
			uring_submit_one(&ring, fd, &j);
			break;
		}
		default:	/* jobs of one file run in order: the newest is last */
			wait_job(fd, seqno);
			for (unsigned int k = 0; k < pipeline; k++)
				submit(fd, &j, &seqno);
		}
	}
}

/* Polls until the dead file's state is gone; returns the polls taken. */
static int drain(int obs, const struct drm_wafer_device_info *base,
		 struct drm_wafer_device_info *now, unsigned int *inflight,
		 long shmem_max, long *shmem)
{
	int polls;

	for (polls = 0; polls < POLL_MAX; polls++) {
		*inflight = wt_debugfs_inflight();
		if (get_info(obs, now))
			now->models_loaded = ~0u;
		if (*inflight == 0 && now->jobs_inflight == 0 &&
		    now->models_loaded == base->models_loaded &&
		    now->contexts == base->contexts &&
		    now->sram_bytes_free == base->sram_bytes_free &&
		    (*shmem = meminfo_kib("Shmem")) >= 0 && *shmem < shmem_max)
			break;
		usleep(POLL_MS * 1000);
	}
	return polls;
}

int main(int argc, char **argv)
{
	struct drm_wafer_device_info base, now;
	uint32_t expect[TOKENS];
	unsigned int rounds = 8, r, inflight;
	int only = -1;
	uint64_t seed = 1;
	struct wt_rng rng;
	long shmem0, shmem_max, shmem = -1;
	int obs, i, ret;
	double t0 = wt_now();

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = (unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--pipeline") && i + 1 < argc)
			pipeline = (unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--tokens") && i + 1 < argc)
			job_tokens = (unsigned int)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--variant") && i + 1 < argc)
			only = atoi(argv[++i]);
	}
	wt_rng_seed(&rng, seed);
	wt_diag("seed %llu, %u rounds", (unsigned long long)seed, rounds);

	if (wt_decode_reference(TOKENS, expect)) {
		printf("not ok - setup\n");
		return 1;
	}

	obs = wt_dev_open(0);
	ret = obs < 0 ? obs : get_info(obs, &base);
	if (!wt_ok(!ret && !base.models_loaded && !base.contexts && !base.jobs_inflight &&
		   (base.caps & DRM_WAFER_CAP_ALL_POSITIONS),
		   "baseline: no model, context or job (%d: %u, %u, %u)", ret,
		   base.models_loaded, base.contexts, base.jobs_inflight))
		return wt_done();
	/* The victim's touched BO is shmem: its pages must go with the file. */
	shmem0 = meminfo_kib("Shmem");
	shmem_max = shmem0 + (long)(BIG_BO >> 11);

	for (r = 0; r < rounds; r++) {
		int variant = only >= 0 ? only % V_COUNT : (int)(r % V_COUNT);
		int pfd[2], st = 0, polls;
		unsigned int delay = (unsigned int)wt_rng_range(&rng, 0, 250);
		char c;
		pid_t pid;

		if (pipe(pfd))
			return 1;
		pid = fork();
		if (pid == 0) {
			close(pfd[0]);
			close(obs);
			victim(variant, pfd[1]);
		}
		close(pfd[1]);
		ret = read(pfd[0], &c, 1) == 1;
		close(pfd[0]);
		if (!wt_ok(ret, "round %u (%s): the victim has jobs in flight", r, vname[variant])) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			wt_diag("victim status %#x", st);
			continue;
		}
		usleep(delay * 1000);
		inflight = wt_debugfs_inflight();
		ret = get_info(obs, &now);
		shmem = meminfo_kib("Shmem");
		wt_ok(!ret && inflight > 0 && inflight != ~0u && now.models_loaded == 1 &&
		      now.contexts == 1 && shmem >= shmem_max,
		      "round %u: before the kill (after %u ms) %u jobs in flight, %u model, "
		      "%u context, Shmem %ld KiB", r, delay, inflight, now.models_loaded,
		      now.contexts, shmem);
		/* A WAIT victim dies asleep in the ioctl (it goes back there in a loop). */
		if (variant == V_WAIT || variant == V_ALL) {
			int asleep = 0;

			/* One look decides: between two WAITs it is briefly out. */
			for (i = 0; i < 12000 && !(asleep = wt_in_ioctl(pid, DRM_IOCTL_WAFER_WAIT));
			     i++)
				usleep(10000);
			wt_ok(asleep, "round %u: the victim sleeps in WAIT", r);
		}
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		wt_ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "round %u: victim killed (%#x)",
		      r, st);
		polls = drain(obs, &base, &now, &inflight, shmem_max, &shmem);
		wt_ok(polls < POLL_MAX, "round %u: drained after %d polls: %u jobs in flight "
		      "(GET_INFO %u), %u models, %u contexts, SRAM free %llu of %llu, "
		      "Shmem %ld KiB (baseline %ld)", r, polls, inflight, now.jobs_inflight,
		      now.models_loaded, now.contexts, (unsigned long long)now.sram_bytes_free,
		      (unsigned long long)base.sram_bytes_free, shmem, shmem0);
		ret = wt_decode_fresh(TOKENS, expect);
		wt_ok(!ret, "round %u: another file loads the model and decodes %u positions "
		      "correctly (%d)", r, TOKENS, ret);
	}

	ret = get_info(obs, &now);
	wt_ok(!ret && now.models_loaded == base.models_loaded && now.contexts == base.contexts &&
	      now.jobs_inflight == 0, "GET_INFO back to the baseline at the end");
	close(obs);
	/* io_uring tears rings down asynchronously; the harness's rmmod follows. */
	for (i = 0; i < POLL_MAX && module_refcnt() != 0; i++)
		usleep(POLL_MS * 1000);
	wt_ok(module_refcnt() == 0, "no file holds the module (refcnt %ld)", module_refcnt());
	wt_diag("%u rounds in %.1f s", rounds, wt_now() - t0);
	return wt_done();
}
