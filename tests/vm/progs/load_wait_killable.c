// SPDX-License-Identifier: MIT
/*
 * VM test: a MODEL_LOAD that waits for the device can be killed (every
 * wait a user starts is killable).
 *
 * The owner keeps a long queue of jobs on one context and destroys another:
 * its DESTROY_CONTEXT queues behind those jobs while the driver holds the
 * device's model lock.  A second process's MODEL_LOAD then waits for that
 * lock; SIGKILL must end it while most of the owner's jobs are still in
 * flight (debugfs), not only once the firmware took them all in.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wt_dev.h"
#include "wt_util.h"

#define TOPK	4
#define JOBS	250
#define TOKENS	16

/*
 * Whether a kernel thread is in ctx_fw_destroy() (the destroyed context's
 * release work), which holds the model lock while the firmware gets to
 * its command: only then does the loader's MODEL_LOAD wait for the lock.
 */
static int release_work_holds_lock(void)
{
	char path[300], line[256];
	struct dirent *d;
	int found = 0;
	DIR *dp = opendir("/proc");
	FILE *f;

	while (dp && !found && (d = readdir(dp))) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stack", d->d_name);
		f = fopen(path, "r");
		while (f && !found && fgets(line, sizeof(line), f))
			found = strstr(line, "ctx_fw_destroy") != NULL;
		if (f)
			fclose(f);
	}
	if (dp)
		closedir(dp);
	return found;
}

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
		/* Blocks until killed (or the device drains: then -EBUSY). */
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
	/* Its DESTROY_CONTEXT waits behind the jobs, under the model lock. */
	cd.ctx_id = cc.ctx_id;
	ret = wt_ioctl(fd, DRM_IOCTL_WAFER_CTX_DESTROY, &cd);
	wt_ok(!ret, "the idle context destroyed (%d)", ret);
	/* Its release work runs from a workqueue: the loader goes once it is in. */
	for (i = 0; i < 30000 && !release_work_holds_lock(); i++)
		usleep(1000);
	wt_ok(release_work_holds_lock(), "the context's release work holds the model lock");
	if (write(go[1], "g", 1) != 1)
		return 1;

	for (i = 0; i < 30000 && !wt_in_ioctl(pid, DRM_IOCTL_WAFER_MODEL_LOAD); i++)
		usleep(1000);
	inflight = wt_debugfs_inflight();
	wt_ok(wt_in_ioctl(pid, DRM_IOCTL_WAFER_MODEL_LOAD) && inflight > 0 && inflight != ~0u,
	      "the loader waits in MODEL_LOAD while %u jobs are in flight", inflight);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	after = wt_debugfs_inflight();
	wt_ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "the loader was killed (%#x)", st);
	/* An unkillable wait ends only once the firmware took nearly all jobs. */
	wt_ok(after != ~0u && after >= inflight / 2,
	      "it died while most of the owner's jobs were still in flight (%u of %u)",
	      after, inflight);
	ret = wt_wait_job(fd, last, NULL);
	wt_ok(!ret, "the owner's last job completes (%d)", ret);
	free(m.blob);
	close(fd);
	return wt_done();
}
