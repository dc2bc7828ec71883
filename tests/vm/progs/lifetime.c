// SPDX-License-Identifier: MIT
/*
 * VM test: the device goes away under a client.
 *
 * A process holds mapped BOs and has jobs in flight (io_uring and ioctl)
 * when the device is unbound through sysfs: every io_uring command
 * completes (0 or -ENODEV), later ioctls fail with -ENODEV, the mappings
 * stay readable, the module cannot be removed while the file is open, and
 * the file closes cleanly.  Rebinding brings up a working device.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <liburing.h>

#include "wt_dev.h"
#include "wt_model.h"
#include "wt_util.h"

#define TOPK	4
#define SLOTS	4
#define JOBS	32
#define TOKENS	128

static int decode_bos(int fd, struct wt_dev_model *m, uint32_t *argmax)
{
	struct wt_bo in, out;
	struct drm_wafer_submit sub = { 0 };
	int ret;

	if (wt_bo_new(fd, &in, 4096) || wt_bo_new(fd, &out, 4096))
		return -ENOMEM;
	((uint32_t *)in.map)[0] = 1;
	sub.job = (struct drm_wafer_job){ .ctx_id = m->ctx_id, .n_tokens = 1, .top_k = TOPK,
					  .in_handle = in.handle, .out_handle = out.handle };
	ret = wt_ioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &sub);
	if (!ret)
		ret = wt_wait_job(fd, sub.seqno, NULL);
	*argmax = wt_result(&out, 0, TOPK, 0)->argmax;
	return ret;
}

int main(void)
{
	struct drm_wafer_submit sub = { 0 };
	struct wfs_topk_entry topk[TOPK];
	struct wt_dev_model m;
	struct wt_model ref;
	struct io_uring ring;
	struct wt_bo in, out;
	int fd, ret, i, done = 0, nodev = 0, other = 0, status;
	uint32_t expect, got = 0;
	pid_t pid;

	fd = wt_dev_open(0);
	if (fd < 0 || wt_dev_load_model(fd, 8, SLOTS, 256, &m) ||
	    wt_bo_new(fd, &in, TOKENS * 4) ||
	    wt_bo_new(fd, &out, (size_t)SLOTS * DRM_WAFER_RESULT_SIZE(TOPK)) ||
	    io_uring_queue_init(64, &ring, IORING_SETUP_SQE128)) {
		printf("not ok - setup\n");
		return 1;
	}
	for (i = 0; i < TOKENS; i++)
		((uint32_t *)in.map)[i] = 1 + i % 300;
	if (wt_model_open(&ref, m.blob, m.blob_len, 16, 0))
		return 1;
	expect = wt_model_step(&ref, 1, 0, TOPK, topk);

	/* Long prefill jobs in flight through io_uring... */
	for (i = 0; i < JOBS; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
		struct drm_wafer_job j = { .ctx_id = m.ctx_id, .slot = i % SLOTS,
			.n_tokens = TOKENS, .top_k = TOPK, .in_handle = in.handle,
			.out_handle = out.handle,
			.out_offset = (i % SLOTS) * DRM_WAFER_RESULT_SIZE(TOPK) };

		wt_uring_prep_submit(sqe, fd, &j, i);
	}
	wt_ok(io_uring_submit(&ring) == JOBS, "%d uring jobs submitted", JOBS);
	/* ...and one by ioctl. */
	sub.job = (struct drm_wafer_job){ .ctx_id = m.ctx_id, .n_tokens = TOKENS, .top_k = TOPK,
					  .in_handle = in.handle, .out_handle = out.handle };
	ret = wt_ioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &sub);
	wt_ok(!ret, "ioctl job submitted (%d)", ret);

	ret = wt_sysfs_write("/sys/bus/platform/drivers/wafer/unbind", "wafer.0");
	wt_ok(!ret, "unbind wafer.0 with jobs in flight (%d)", ret);

	for (i = 0; i < JOBS; i++) {
		struct io_uring_cqe *cqe;

		if (io_uring_wait_cqe(&ring, &cqe))
			break;
		if (cqe->res == 0)
			done++;
		else if (cqe->res == -ENODEV)
			nodev++;
		else
			other++;
		io_uring_cqe_seen(&ring, cqe);
	}
	wt_ok(done + nodev == JOBS && !other,
	      "every uring job completed: %d ok, %d -ENODEV, %d other", done, nodev, other);
	ret = wt_wait_job(fd, sub.seqno, NULL);
	wt_ok(ret == -ENODEV, "WAIT after unplug -> -ENODEV (%d)", ret);
	ret = wt_ioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &sub);
	wt_ok(ret == -ENODEV, "SUBMIT after unplug -> -ENODEV (%d)", ret);
	wt_ok(((volatile uint32_t *)in.map)[1] == 2, "the BO mapping is still readable");

	pid = fork();
	if (pid == 0) {
		execlp("rmmod", "rmmod", "wafer", (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	wt_ok(WIFEXITED(status) && WEXITSTATUS(status) != 0,
	      "rmmod refuses while the file is open (status %d)", status);

	io_uring_queue_exit(&ring);
	ret = close(fd);
	wt_ok(!ret, "the file closes cleanly");

	ret = wt_sysfs_write("/sys/bus/platform/drivers/wafer/bind", "wafer.0");
	wt_ok(!ret, "bind wafer.0 again (%d)", ret);
	/* Our mappings still pin the old device's minor: the new one gets another. */
	for (i = 0, fd = -ENOENT; i < 64 && fd < 0; i++)
		fd = wt_dev_open(i);
	ret = fd < 0 ? fd : wt_dev_load_model(fd, 8, 1, 16, &m);
	if (!ret)
		ret = decode_bos(fd, &m, &got);
	wt_ok(!ret && got == expect, "the rebound device runs the model (%d, argmax %u vs %u)",
	      ret, got, expect);
	if (fd >= 0)
		close(fd);
	wt_model_close(&ref);
	return wt_done();
}
