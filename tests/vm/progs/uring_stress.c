// SPDX-License-Identifier: MIT
/*
 * VM test (num_devices >= PROCS): PROCS processes, each on its own device,
 * each submit JOBS io_uring commands, BATCH at a time on distinct KV slots,
 * and verify every result against firmware-sim run in-process; at the end
 * every submitted job has completed exactly once.  Prints jobs/s and the
 * p99 submit-to-completion latency.
 *
 * Usage: uring_stress [procs] [jobs]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>

#include "wt_dev.h"
#include "wt_model.h"
#include "wt_util.h"

#define TOPK	4
#define BATCH	8
#define PROMPTS	8
#define PLEN	4

static uint32_t prompt[PROMPTS][PLEN];
static uint32_t ref_arg[PROMPTS][PLEN];
static struct wfs_topk_entry ref_topk[PROMPTS][PLEN][TOPK];

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One process: returns 0 when every job completed once and matched. */
static int worker(int dev, int jobs, double *lat)
{
	struct wt_dev_model m;
	struct io_uring ring;
	struct wt_bo in, out;
	double t_sub[BATCH];
	int fd, done = 0, bad = 0, seen[BATCH], i;

	fd = wt_dev_open(dev);
	if (fd < 0 || wt_dev_load_model(fd, 8, BATCH, 64, &m) ||
	    wt_bo_new(fd, &in, sizeof(prompt)) ||
	    wt_bo_new(fd, &out, BATCH * PLEN * DRM_WAFER_RESULT_SIZE(TOPK)) ||
	    io_uring_queue_init(2 * BATCH, &ring, IORING_SETUP_SQE128 | IORING_SETUP_CQE32)) {
		fprintf(stderr, "device %d: setup failed\n", dev);
		return 1;
	}
	memcpy(in.map, prompt, sizeof(prompt));
	while (done < jobs && !bad) {
		int n = jobs - done < BATCH ? jobs - done : BATCH;

		for (i = 0; i < n; i++) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
			int p = (done + i + dev) % PROMPTS;
			struct drm_wafer_job j = {
				.ctx_id = m.ctx_id, .slot = i, .n_tokens = PLEN,
				.flags = DRM_WAFER_JOB_ALL_POSITIONS, .top_k = TOPK,
				.in_handle = in.handle, .in_offset = p * PLEN * 4,
				.out_handle = out.handle,
				.out_offset = (size_t)i * PLEN * DRM_WAFER_RESULT_SIZE(TOPK),
			};

			if (!sqe) {
				bad = 1;
				break;
			}
			memset(sqe, 0, 2 * sizeof(*sqe));
			sqe->opcode = IORING_OP_URING_CMD;
			sqe->fd = fd;
			sqe->cmd_op = DRM_WAFER_URING_CMD_SUBMIT;
			memcpy(sqe->cmd, &j, sizeof(j));
			sqe->user_data = ((uint64_t)p << 8) | i;
			seen[i] = 0;
			t_sub[i] = now_s();
		}
		if (io_uring_submit(&ring) != n)
			bad = 1;
		for (i = 0; i < n && !bad; i++) {
			struct io_uring_cqe *cqe;
			int slot, p, pos, k;

			if (io_uring_wait_cqe(&ring, &cqe)) {
				bad = 1;
				break;
			}
			slot = cqe->user_data & 0xff;
			p = cqe->user_data >> 8;
			lat[done + slot] = now_s() - t_sub[slot];
			if (cqe->res || seen[slot]++) {
				fprintf(stderr, "device %d: job status %d (seen %d)\n", dev,
					cqe->res, seen[slot]);
				bad = 1;
			}
			for (pos = 0; pos < PLEN && !bad; pos++) {
				const struct drm_wafer_token_result *r =
					wt_result(&out, (size_t)slot * PLEN *
						  DRM_WAFER_RESULT_SIZE(TOPK), TOPK, pos);

				bad = r->argmax != ref_arg[p][pos];
				for (k = 0; k < TOPK && !bad; k++)
					bad = r->topk[k].token != ref_topk[p][pos][k].token ||
					      r->topk[k].logit != ref_topk[p][pos][k].logit;
				if (bad)
					fprintf(stderr, "device %d: prompt %d pos %d differs\n",
						dev, p, pos);
			}
			io_uring_cqe_seen(&ring, cqe);
		}
		done += n;
	}
	io_uring_queue_exit(&ring);
	close(fd);
	return bad || done != jobs;
}

int main(int argc, char **argv)
{
	int procs = argc > 1 ? atoi(argv[1]) : 16;
	int jobs = argc > 2 ? atoi(argv[2]) : 200;
	struct wt_dev_model m;
	struct wt_model ref;
	double *lat, t0, t1;
	int p, pos, failed = 0, fd;

	if (procs < 1 || procs > 16 || jobs < 1)
		return 2;
	/* The reference, once, before forking: the packed blob is the same. */
	fd = wt_dev_open(0);
	if (fd < 0 || wt_dev_load_model(fd, 8, 1, 16, &m)) {
		printf("not ok - reference setup\n");
		return 1;
	}
	close(fd);
	for (p = 0; p < PROMPTS; p++) {
		if (wt_model_open(&ref, m.blob, m.blob_len, 16, 0))
			return 1;
		for (pos = 0; pos < PLEN; pos++) {
			prompt[p][pos] = pos ? 3 + (p * 37 + pos * 101) % 500 : 1;
			ref_arg[p][pos] = wt_model_step(&ref, prompt[p][pos], pos, TOPK,
							ref_topk[p][pos]);
		}
		wt_model_close(&ref);
	}
	/* Latencies, written by the children. */
	lat = mmap(NULL, (size_t)procs * jobs * sizeof(*lat), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (lat == MAP_FAILED)
		return 1;

	t0 = now_s();
	for (p = 0; p < procs; p++) {
		if (fork() == 0)
			_exit(worker(p, jobs, lat + (size_t)p * jobs));
	}
	for (p = 0; p < procs; p++) {
		int status;

		wait(&status);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			failed++;
	}
	t1 = now_s();
	wt_ok(!failed, "%d processes x %d io_uring jobs: every job completed once, every "
	      "result verified (%d processes failed)", procs, jobs, failed);
	qsort(lat, (size_t)procs * jobs, sizeof(*lat), cmp_double);
	printf("# %.0f jobs/s, latency p50 %.2f ms, p99 %.2f ms (TCG guest)\n",
	       procs * jobs / (t1 - t0), lat[(size_t)procs * jobs / 2] * 1e3,
	       lat[(size_t)procs * jobs * 99 / 100] * 1e3);
	return wt_done();
}
