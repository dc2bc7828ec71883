// SPDX-License-Identifier: MIT
/*
 * VM test: io_uring rings torn down with commands in flight.
 *
 * Children sharing one file of the device each loop: set up an SQE128 ring
 * (every other one CQE32), submit a batch mixing jobs the firmware rejects
 * at intake (an out-of-vocabulary token: they complete at once, so some
 * commands find their fence already signalled) and one-token jobs, then
 * either reap every CQE (each command completes exactly once, with the
 * status its job must have), reap some and close the ring, close it at
 * once, or leave it to a grandchild that exits with the commands in flight.
 * Closing a ring cancels its commands while their jobs signal, which is
 * the race between cancellation and completion the driver must survive
 * (the debug kernel's KASAN sees a request used after it was freed).
 * Afterwards the device must drain and still run a job correctly.
 *
 * Usage: uring_teardown_inflight [--seed N] [--iters N] [--procs N]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <liburing.h>

#include "wt_dev.h"
#include "wt_util.h"

#define TOPK		2
#define SLOTS		4
#define BATCH		12
#define BAD_TOKEN	0x7fffffffu	/* outside every vocabulary */
#define POLL_MS		100
#define POLL_MAX	600		/* 60 s for the device to drain */

static int fd;
static struct wt_dev_model m;
static struct wt_bo in, out;

/* Job @i of a batch: even ones are rejected at intake, odd ones run. */
static struct drm_wafer_job batch_job(unsigned int i)
{
	return (struct drm_wafer_job){ .ctx_id = m.ctx_id, .slot = i % SLOTS,
		.n_tokens = 1, .top_k = TOPK, .in_handle = in.handle,
		.in_offset = i % 2 ? 0 : 4, .out_handle = out.handle,
		.out_offset = (i % SLOTS) * DRM_WAFER_RESULT_SIZE(TOPK) };
}

static int submit_batch(struct io_uring *r)
{
	struct drm_wafer_job j;
	unsigned int i;

	for (i = 0; i < BATCH; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(r);

		if (!sqe)
			return -1;
		j = batch_job(i);
		wt_uring_prep_submit(sqe, fd, &j, i);
	}
	return io_uring_submit(r) == BATCH ? 0 : -1;
}

/*
 * Reaps @n CQEs; each user_data once, with its job's status.  -EBUSY (the
 * file's max_file_inflight, reached while closed rings' jobs still run) is
 * allowed for either kind.  Returns the number of mismatches.
 */
static int reap(struct io_uring *r, unsigned int n, unsigned int *seen)
{
	struct io_uring_cqe *cqe;
	int bad = 0;

	while (n--) {
		unsigned int i;
		int want;

		if (io_uring_wait_cqe(r, &cqe))
			return bad + 1;
		i = (unsigned int)cqe->user_data;
		want = i % 2 ? 0 : -EINVAL;
		if (i >= BATCH || (*seen & (1u << i)) ||
		    (cqe->res != want && cqe->res != -EBUSY)) {
			fprintf(stderr, "# cqe user_data %u res %d (want %d)\n", i, cqe->res, want);
			bad++;
		}
		if (i < BATCH)
			*seen |= 1u << i;
		io_uring_cqe_seen(r, cqe);
	}
	return bad;
}

/* One iteration; returns mismatches (a failed setup counts as one). */
static int iteration(struct wt_rng *rng)
{
	unsigned int flags = IORING_SETUP_SQE128, seen = 0;
	int mode = (int)wt_rng_range(rng, 0, 3), bad = 0, st;
	struct io_uring r;
	pid_t pid;

	if (wt_rng_range(rng, 0, 1))
		flags |= IORING_SETUP_CQE32;
	if (io_uring_queue_init(2 * BATCH, &r, flags))
		return 1;
	switch (mode) {
	case 0:	/* every CQE, exactly once */
		bad = submit_batch(&r) ? 1 : reap(&r, BATCH, &seen);
		break;
	case 1:	/* some, then close with the rest in flight */
		bad = submit_batch(&r) ? 1 :
		      reap(&r, (unsigned int)wt_rng_range(rng, 1, BATCH / 2), &seen);
		break;
	case 2:	/* close at once */
		bad = submit_batch(&r) ? 1 : 0;
		break;
	default: /* a grandchild submits on its own ring and exits */
		pid = fork();
		if (pid == 0) {
			struct io_uring g;

			if (io_uring_queue_init(2 * BATCH, &g, flags) || submit_batch(&g))
				_exit(1);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			bad = 1;
		break;
	}
	io_uring_queue_exit(&r);
	return bad;
}

static int child(uint64_t seed, unsigned int iters)
{
	struct wt_rng rng;
	unsigned int i;
	int bad = 0;

	wt_rng_seed(&rng, seed);
	for (i = 0; i < iters && bad < 5; i++)
		bad += iteration(&rng);
	return bad ? 1 : 0;
}

static int drain(void)
{
	unsigned int n = ~0u;
	int i;

	for (i = 0; i < POLL_MAX; i++) {
		n = wt_debugfs_inflight();
		if (!n)
			return 0;
		usleep(POLL_MS * 1000);
	}
	wt_diag("%u jobs still in flight", n);
	return -1;
}

/* A job after the storm: runs, completes once with status 0. */
static int final_job(void)
{
	struct drm_wafer_job j = batch_job(1);
	const struct drm_wafer_token_result *res;
	struct io_uring_cqe *cqe;
	struct io_uring r;
	int ret;

	if (io_uring_queue_init(4, &r, IORING_SETUP_SQE128 | IORING_SETUP_CQE32))
		return -1;
	memset(out.map, 0xa5, out.size);
	wt_uring_prep_submit(io_uring_get_sqe(&r), fd, &j, 1);
	io_uring_submit(&r);
	ret = io_uring_wait_cqe(&r, &cqe);
	if (!ret) {
		ret = cqe->res ? cqe->res : !cqe->big_cqe[0];
		io_uring_cqe_seen(&r, cqe);
	}
	io_uring_queue_exit(&r);
	res = wt_result(&out, j.out_offset, TOPK, 0);
	return ret ? ret : res->position != 0 || res->top_k != TOPK;
}

int main(int argc, char **argv)
{
	unsigned int iters = 60, procs = 4, p, failed = 0;
	uint64_t seed = 1;
	int i, st;

	for (i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--seed"))
			seed = strtoull(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--iters"))
			iters = (unsigned int)strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--procs"))
			procs = (unsigned int)strtoul(argv[i + 1], NULL, 0);
	}
	fd = wt_dev_open(0);
	if (!wt_ok(fd >= 0 && !wt_dev_load_model(fd, 8, SLOTS, 64, &m) &&
		   !wt_bo_new(fd, &in, 4096) && !wt_bo_new(fd, &out, 4096),
		   "device, model, context and BOs"))
		return wt_done();
	((uint32_t *)in.map)[0] = 1;
	((uint32_t *)in.map)[1] = BAD_TOKEN;

	for (p = 0; p < procs; p++) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(child(seed * 1000 + p, iters));
		if (pid < 0)
			failed++;
	}
	while (wait(&st) > 0)
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			failed++;
	wt_ok(!failed, "%u processes x %u ring set-ups and teardowns (seed %llu)", procs,
	      iters, (unsigned long long)seed);
	wt_ok(!drain(), "the device drains");
	wt_ok(!final_job(), "a job afterwards completes with status 0 and its result");
	return wt_done();
}
