// SPDX-License-Identifier: MIT
/*
 * VM test: another file's MODEL_LOAD waits neither for the owner's jobs
 * nor for its context's destruction.
 *
 * The owner keeps a long queue of jobs on one context and destroys another.
 * Its DESTROY_CONTEXT once queued behind those jobs while the driver held
 * the device's model lock, and a second process's MODEL_LOAD waited for
 * that lock (then only SIGKILL ended it).  Control commands now go to the
 * firmware's control ring and model_lock is never held across a firmware
 * wait: the load must complete while most of the owner's jobs are still in
 * flight (debugfs), not only once the firmware took them all in.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wt_dev.h"
#include "wt_util.h"

#define TOPK	4
#define JOBS	64	/* within max_file_inflight (default 256) */
#define TOKENS	16

int main(void)
{
	struct drm_wafer_ctx_create cc = { .kv_slots = 1, .ctx_len = 64 };
	struct drm_wafer_ctx_destroy cd = { 0 };
	struct wt_dev_model m;
	struct wt_bo in, out;
	unsigned int i, inflight, after;
	uint64_t last = 0;
	int fd, ret, st = 0, go[2];
	pid_t pid;

	fd = wt_dev_open(0);
	if (fd < 0 || wt_dev_load_model(fd, 8, 1, 256, &m) || wt_bo_new(fd, &in, 4096) ||
	    wt_bo_new(fd, &out, 4096)) {
		printf("not ok - setup\n");
		return 1;
	}
	cc.model_id = m.model_id;
	ret = wt_ioctl(fd, DRM_IOCTL_WAFER_CTX_CREATE, &cc);
	if (!wt_ok(!ret, "a second context (%d)", ret))
		return wt_done();
	/*
	 * The loader gets ready (its file, the blob in a BO) before the owner
	 * queues its work, so that only the ioctl itself races the jobs.
	 */
	if (pipe(go))
		return 1;
	pid = fork();
	if (pid == 0) {
		struct drm_wafer_model_load ml = { .blob_size = m.blob_len };
		int fd2 = wt_dev_open(0);
		struct wt_bo b;
		char c;

		/* The blob packed already: straight to the ioctl. */
		if (fd2 < 0 || wt_bo_new(fd2, &b, m.blob_len))
			_exit(10);
		memcpy(b.map, m.blob, m.blob_len);
		ml.bo_handle = b.handle;
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(13);
		_exit(wt_ioctl(fd2, DRM_IOCTL_WAFER_MODEL_LOAD, &ml) ? 11 : 12);
	}
	close(go[0]);
	for (i = 0; i < TOKENS; i++)
		((uint32_t *)in.map)[i] = 1 + i;
	for (i = 0; i < JOBS; i++) {
		struct drm_wafer_submit s = { .job = { .ctx_id = m.ctx_id, .n_tokens = TOKENS,
			.top_k = TOPK, .in_handle = in.handle, .out_handle = out.handle } };

		ret = wt_ioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &s);
		if (ret)
			break;
		last = s.seqno;
	}
	wt_ok(!ret, "%u long jobs queued (%d)", JOBS, ret);
	/* Its DESTROY_CONTEXT (release work) goes to the control ring. */
	cd.ctx_id = cc.ctx_id;
	ret = wt_ioctl(fd, DRM_IOCTL_WAFER_CTX_DESTROY, &cd);
	wt_ok(!ret, "the idle context destroyed (%d)", ret);
	inflight = wt_debugfs_inflight();
	if (write(go[1], "g", 1) != 1)
		return 1;
	waitpid(pid, &st, 0);
	after = wt_debugfs_inflight();
	wt_ok(WIFEXITED(st) && WEXITSTATUS(st) == 12, "the loader's MODEL_LOAD succeeded (%#x)",
	      st);
	/* Measured against the jobs: in ring order it came after nearly all. */
	wt_ok(inflight != ~0u && after != ~0u && inflight > 0 && after >= inflight / 2,
	      "it finished while most of the owner's jobs were still in flight (%u of %u)",
	      after, inflight);
	ret = wt_wait_job(fd, last, NULL);
	wt_ok(!ret, "the owner's last job completes (%d)", ret);
	free(m.blob);
	close(fd);
	return wt_done();
}
