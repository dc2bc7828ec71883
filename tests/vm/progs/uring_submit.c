// SPDX-License-Identifier: MIT
/*
 * VM test: job submission by io_uring IORING_OP_URING_CMD.
 *
 *  - SLOTS sequences decoded greedily, one batch of SLOTS commands per
 *    io_uring_submit, on a registered fd: every result matches firmware-sim
 *    in-process, every CQE carries status 0 and (CQE32) the device time;
 *  - those commands were issued inline: most completed submission in the
 *    non-blocking issue (fdinfo drm-wafer-uring-inline), only the first
 *    batch's (whose BOs were not mapped yet) and those that met a held
 *    lock went through an io-wq worker; with uring_inline=0 all of them do;
 *  - a ring without SQE128, an unknown cmd_op and an invalid job complete
 *    with the documented errors;
 *  - a thread waiting for a whole batch of no-op commands on a
 *    DEFER_TASKRUN ring is woken about once per batch, not per command
 *    (the driver completes them with io_uring's lazy wake; counted by the
 *    thread's voluntary context switches, not by time);
 *  - a child process killed with 64 commands in flight: afterwards the
 *    driver holds no job of it (debugfs) and the device still works.
 *
 * Usage: uring_submit [tokens]
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <liburing.h>

#include "wfs_pack.h"
#include "wt_dev.h"
#include "wt_model.h"
#include "wt_util.h"

#define TOPK	8
#define SLOTS	4

static int fd;
static struct wt_dev_model m;
static struct wt_bo in, out;

static void prep_job(struct io_uring_sqe *sqe, int fixed, const struct drm_wafer_job *job,
		     uint64_t user_data, uint32_t cmd_op)
{
	wt_uring_prep_submit(sqe, fixed ? 0 : fd, job, user_data);
	sqe->flags = fixed ? IOSQE_FIXED_FILE : 0;
	sqe->cmd_op = cmd_op;
}

static struct drm_wafer_job decode_job(uint32_t slot, uint32_t pos, uint32_t n)
{
	struct drm_wafer_job j = {
		.ctx_id = m.ctx_id, .slot = slot, .start_pos = pos, .n_tokens = 1,
		.top_k = TOPK, .in_handle = in.handle, .out_handle = out.handle,
		.in_offset = pos * 4,
		.out_offset = ((size_t)slot * n + pos) * DRM_WAFER_RESULT_SIZE(TOPK),
	};
	return j;
}

/* Writes the uring_inline module parameter; 1 if it took. */
static int set_uring_inline(int on)
{
	FILE *f = fopen("/sys/module/wafer/parameters/uring_inline", "w");
	int ok;

	if (!f)
		return 0;
	ok = fputs(on ? "1" : "0", f) >= 0;
	return fclose(f) == 0 && ok;
}

/* Submits one command on a fresh ring set up with @flags; returns its res. */
static int one_cmd(unsigned int flags, uint32_t cmd_op, const struct drm_wafer_job *job)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	int res;

	if (io_uring_queue_init(4, &ring, flags))
		return -1000;
	sqe = io_uring_get_sqe(&ring);
	if (flags & IORING_SETUP_SQE128) {
		prep_job(sqe, 0, job, 7, cmd_op);
	} else {
		memset(sqe, 0, sizeof(*sqe));
		sqe->opcode = IORING_OP_URING_CMD;
		sqe->fd = fd;
		sqe->cmd_op = cmd_op;
	}
	io_uring_submit(&ring);
	if (io_uring_wait_cqe(&ring, &cqe))
		return -1001;
	res = cqe->res;
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
	return res;
}

static long thread_sleeps(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw;
}

/*
 * LAZY_BATCHES batches of LAZY_BATCH no-op commands, each batch submitted
 * and waited for by one io_uring_submit_and_wait(): with the lazy wake the
 * thread sleeps once a batch (twice when a completion races the sleep);
 * woken at every completion, as before, it slept 6-15 times a batch in a
 * TCG guest.
 */
#define LAZY_BATCH	32
#define LAZY_BATCHES	32
static void lazy_wake_check(void)
{
	struct io_uring ring;
	long sleeps = 0;
	int b, i, ok = 1;

	if (io_uring_queue_init(64, &ring, IORING_SETUP_SQE128 | IORING_SETUP_CQE32 |
				IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN)) {
		wt_ok(0, "io_uring with DEFER_TASKRUN");
		return;
	}
	for (b = 0; b <= LAZY_BATCHES && ok; b++) {
		long before = thread_sleeps();
		struct io_uring_cqe *cqe;

		for (i = 0; i < LAZY_BATCH; i++) {
			struct drm_wafer_job j = {
				.ctx_id = m.ctx_id, .slot = i % SLOTS, .flags = DRM_WAFER_JOB_NOP,
			};

			prep_job(io_uring_get_sqe(&ring), 0, &j, i, DRM_WAFER_URING_CMD_SUBMIT);
		}
		ok = io_uring_submit_and_wait(&ring, LAZY_BATCH) == LAZY_BATCH;
		/* Batch 0 warms up (first use of the ring and the context). */
		if (b)
			sleeps += thread_sleeps() - before;
		for (i = 0; i < LAZY_BATCH && ok; i++) {
			if (io_uring_peek_cqe(&ring, &cqe)) {
				ok = 0;
				break;
			}
			ok = cqe->res == 0;
			io_uring_cqe_seen(&ring, cqe);
		}
	}
	io_uring_queue_exit(&ring);
	wt_ok(ok, "%d batches of %d no-op commands completed", LAZY_BATCHES, LAZY_BATCH);
	wt_ok(sleeps <= 3 * LAZY_BATCHES,
	      "a thread waiting for whole batches slept %.2f times a batch of %d (at most 3)",
	      (double)sleeps / LAZY_BATCHES, LAZY_BATCH);
}

int main(int argc, char **argv)
{
	uint32_t n = argc > 1 ? (uint32_t)atoi(argv[1]) : 32;
	struct wfs_topk_entry (*ref_topk)[TOPK];
	struct io_uring ring;
	struct wt_model ref;
	uint32_t *toks, *ref_arg, pos, s;
	uint64_t dev_ns = 0;
	int ret, ok, bad_cqe = 0;
	pid_t child;

	if (n < 2 || n > 200)
		return 2;
	fd = wt_dev_open(0);
	if (fd < 0 || wt_dev_load_model(fd, 8, SLOTS, 256, &m)) {
		printf("not ok - device open and model load\n");
		return 1;
	}
	toks = calloc(n + 1, 4);
	ref_arg = calloc(n, 4);
	ref_topk = calloc(n, sizeof(*ref_topk));
	if (!toks || !ref_arg || !ref_topk || wt_model_open(&ref, m.blob, m.blob_len, 256, 0))
		return 1;
	toks[0] = 1;
	for (pos = 0; pos < n; pos++) {
		ref_arg[pos] = wt_model_step(&ref, toks[pos], pos, TOPK, ref_topk[pos]);
		toks[pos + 1] = ref_arg[pos];
	}
	if (wt_bo_new(fd, &in, (n + 1) * 4) ||
	    wt_bo_new(fd, &out, (size_t)SLOTS * n * DRM_WAFER_RESULT_SIZE(TOPK)))
		return 1;
	memcpy(in.map, toks, (n + 1) * 4);

	ret = io_uring_queue_init(64, &ring, IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
	if (!wt_ok(!ret, "io_uring with SQE128|CQE32 (%d)", ret))
		return wt_done();
	ret = io_uring_register_files(&ring, &fd, 1);
	wt_ok(!ret, "device fd registered (%d)", ret);

	for (pos = 0; pos < n && !bad_cqe; pos++) {
		for (s = 0; s < SLOTS; s++) {
			struct drm_wafer_job j = decode_job(s, pos, n);

			prep_job(io_uring_get_sqe(&ring), 1, &j, s, DRM_WAFER_URING_CMD_SUBMIT);
		}
		if (io_uring_submit(&ring) != SLOTS)
			bad_cqe = 1;
		for (s = 0; s < SLOTS && !bad_cqe; s++) {
			struct io_uring_cqe *cqe;

			if (io_uring_wait_cqe(&ring, &cqe) || cqe->res != 0 || !cqe->big_cqe[0]) {
				wt_diag("pos %u: cqe res %d device_ns %llu", pos,
					cqe ? cqe->res : -1,
					cqe ? (unsigned long long)cqe->big_cqe[0] : 0ull);
				bad_cqe = 1;
			} else {
				dev_ns += cqe->big_cqe[0];
			}
			io_uring_cqe_seen(&ring, cqe);
		}
	}
	wt_ok(!bad_cqe, "%u batches of %d uring commands complete with status 0 and device "
	      "time in big_cqe[0] (%.2f us/job modelled)", n, SLOTS,
	      dev_ns / 1000.0 / ((double)n * SLOTS));
	ok = !bad_cqe;
	for (s = 0; s < SLOTS && ok; s++)
		for (pos = 0; pos < n && ok; pos++) {
			ok = wt_result_matches(wt_result(&out, 0, TOPK, s * n + pos), pos,
					       ref_arg[pos], ref_topk[pos], TOPK);
		}
	wt_ok(ok, "uring results of %d slots x %u tokens match in-process firmware-sim",
	      SLOTS, n);
	{
		long long inl = wt_fdinfo(fd, "drm-wafer-uring-inline");
		long long punt = wt_fdinfo(fd, "drm-wafer-uring-punted");
		long long blk = wt_fdinfo(fd, "drm-wafer-uring-blocking");

		wt_ok(inl >= 0 && punt >= 0 && inl + punt == (long long)n * SLOTS &&
		      blk == punt && inl >= 3 * punt,
		      "of %u commands %lld were submitted inline, %lld retried from io-wq "
		      "(%lld issued blocking)", n * SLOTS, inl, punt, blk);
	}
	/* uring_inline=0: every command goes through io-wq, and still completes. */
	if (set_uring_inline(0)) {
		long long inl = wt_fdinfo(fd, "drm-wafer-uring-inline");
		long long punt = wt_fdinfo(fd, "drm-wafer-uring-punted");

		for (s = 0; s < SLOTS; s++) {
			struct drm_wafer_job j = decode_job(s, 0, n);

			prep_job(io_uring_get_sqe(&ring), 1, &j, s, DRM_WAFER_URING_CMD_SUBMIT);
		}
		ok = io_uring_submit(&ring) == SLOTS;
		for (s = 0; s < SLOTS && ok; s++) {
			struct io_uring_cqe *cqe;

			ok = !io_uring_wait_cqe(&ring, &cqe) && cqe->res == 0;
			io_uring_cqe_seen(&ring, cqe);
		}
		wt_ok(ok && wt_fdinfo(fd, "drm-wafer-uring-inline") == inl &&
		      wt_fdinfo(fd, "drm-wafer-uring-punted") == punt + SLOTS,
		      "uring_inline=0: %d commands all retried from io-wq, completed", SLOTS);
		set_uring_inline(1);
	} else {
		wt_ok(0, "writing /sys/module/wafer/parameters/uring_inline");
	}

	{
		struct drm_wafer_job j = decode_job(0, 0, n);

		ret = one_cmd(0, DRM_WAFER_URING_CMD_SUBMIT, &j);
		wt_ok(ret == -EINVAL, "ring without SQE128 -> -EINVAL (%d)", ret);
		ret = one_cmd(IORING_SETUP_SQE128, 0x77, &j);
		wt_ok(ret == -EINVAL, "unknown cmd_op -> -EINVAL (%d)", ret);
		j.ctx_id = 999;
		ret = one_cmd(IORING_SETUP_SQE128, DRM_WAFER_URING_CMD_SUBMIT, &j);
		wt_ok(ret == -ENOENT, "unknown context -> -ENOENT (%d)", ret);
		j = decode_job(0, 0, n);
		j.times_len = 1;
		ret = one_cmd(IORING_SETUP_SQE128, DRM_WAFER_URING_CMD_SUBMIT, &j);
		wt_ok(ret == -EINVAL, "times_len without TIMES -> -EINVAL (%d)", ret);
	}

	lazy_wake_check();

	/* A process killed with 64 long commands in flight. */
	child = fork();
	if (child == 0) {
		struct io_uring r2;
		int i;

		if (io_uring_queue_init(64, &r2, IORING_SETUP_SQE128 | IORING_SETUP_CQE32))
			_exit(3);
		for (i = 0; i < 64; i++) {
			struct drm_wafer_job j = decode_job(i % SLOTS, 0, n);

			j.n_tokens = n;
			j.out_offset = 0;
			prep_job(io_uring_get_sqe(&r2), 0, &j, i, DRM_WAFER_URING_CMD_SUBMIT);
		}
		io_uring_submit(&r2);
		raise(SIGKILL);
		_exit(4);
	}
	waitpid(child, &ret, 0);
	wt_ok(WIFSIGNALED(ret) && WTERMSIG(ret) == SIGKILL, "child killed with commands in flight");
	{
		unsigned int left = ~0u;
		int tries;

		for (tries = 0; tries < 600 && left; tries++) {
			left = wt_debugfs_inflight();
			if (left)
				usleep(100000);
		}
		wt_ok(left == 0, "no job in flight afterwards (debugfs), after %d polls", tries);
	}
	/* The device still decodes correctly. */
	{
		struct drm_wafer_job j = decode_job(0, 0, n);
		struct io_uring_cqe *cqe;

		prep_job(io_uring_get_sqe(&ring), 1, &j, 1, DRM_WAFER_URING_CMD_SUBMIT);
		io_uring_submit(&ring);
		ret = io_uring_wait_cqe(&ring, &cqe);
		ok = !ret && cqe->res == 0 && wt_result(&out, 0, TOPK, 0)->argmax == ref_arg[0];
		io_uring_cqe_seen(&ring, cqe);
		wt_ok(ok, "a job after the kill completes correctly");
	}

	io_uring_queue_exit(&ring);
	wt_model_close(&ref);
	close(fd);
	return wt_done();
}
