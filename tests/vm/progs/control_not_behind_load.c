// SPDX-License-Identifier: MIT
/*
 * VM test (fault_inject=1): another file's control commands do not wait
 * for a MODEL_LOAD in progress.
 *
 * File A's MODEL_LOAD is held in the firmware's check of its blob
 * (inject_fault "pause_load": it goes on only after a reset begins or the
 * fault is disarmed with "none"), so A's ioctl cannot return before this
 * program lets it.  Meanwhile file B's GET_INFO, CTX_CREATE, CTX_DESTROY,
 * a debugfs read (the firmware log, a READ_LOG) and a sysfs read must all
 * complete: once a load ran on the firmware's command processor, and the
 * driver ran one control command at a time, so each waited for A's load
 * until its timeout reset the device.  A must still be in its ioctl after
 * all of them.  A second file's MODEL_LOAD then reaches the firmware's load
 * queue behind A's held load (its log says so) while A is still in its
 * ioctl: once the driver sent one load at a time under a device-wide lock
 * held across the firmware's wait, and the second load waited in the
 * driver for A's.  Disarmed, both loads complete.
 *
 * Then a second load is held in its SRAM copy (inject_fault "pause_copy":
 * placed and its first stage copied, on the firmware's load worker): B's
 * commands complete as well and the loader is still in its ioctl after
 * them.  Killed there, its load stays held in the firmware; a third
 * file's load then waits in the firmware's queue behind it (not -EAGAIN),
 * and killed in turn, its queued load is cancelled and its blob freed
 * (KASAN and kmemleak on the debug kernel).  Disarmed, the held load ends
 * as an orphan the next load unloads, and the device decodes exactly as
 * firmware-sim does.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wt_dev.h"
#include "wt_util.h"

#define TOKENS	8
#define TRIES	600	/* polls, 100 ms apart at least */
#define FW_LOG	"/sys/kernel/debug/accel/wafer.0/fw_log"
#define SYSFS	"/sys/class/accel/accel0/device/models"

/* Lines of the firmware log (a READ_LOG control command) with @what. */
static int log_count(const char *what)
{
	char line[512];
	int n = 0;
	FILE *f = fopen(FW_LOG, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		n += !!strstr(line, what);
	fclose(f);
	return n;
}

static int log_has(const char *what)
{
	return log_count(what) > 0;
}

/* Polls until the firmware log has more than @n lines with @what. */
static int log_grows(const char *what, int n)
{
	int i;

	for (i = 0; i < TRIES; i++) {
		if (log_count(what) > n)
			return 1;
		usleep(100000);
	}
	return 0;
}

/* Bytes read from @path, or -errno. */
static int read_all(const char *path)
{
	char buf[4096];
	int fd = open(path, O_RDONLY), n, total = 0;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += n;
	close(fd);
	return n < 0 ? -errno : total;
}

/* A's MODEL_LOAD of @m's blob in a file of its own: exit 12 on success. */
static pid_t loader(const struct wt_dev_model *m)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct drm_wafer_model_load ml = { .blob_size = m->blob_len };
		int fd = wt_dev_open(0);
		struct wt_bo b;

		if (fd < 0 || wt_bo_new(fd, &b, m->blob_len))
			_exit(10);
		memcpy(b.map, m->blob, m->blob_len);
		ml.bo_handle = b.handle;
		_exit(wt_ioctl(fd, DRM_IOCTL_WAFER_MODEL_LOAD, &ml) ? 11 : 12);
	}
	return pid;
}

int main(void)
{
	struct drm_wafer_ctx_create cc = { .kv_slots = 1, .ctx_len = 32 };
	struct drm_wafer_ctx_destroy cd = { 0 };
	struct drm_wafer_device_info info;
	struct drm_wafer_get_info gi = { 0 };
	uint32_t expect[TOKENS];
	struct wt_dev_model m;
	int fd, ret, i, st = 0, st2 = 0, held, queued;
	pid_t pid, pid2;

	if (wt_decode_reference(TOKENS, expect)) {
		printf("not ok - setup: the reference decode\n");
		return 1;
	}
	fd = wt_dev_open(0);
	if (fd < 0 || wt_dev_load_model(fd, 8, 1, 64, &m)) {
		printf("not ok - setup: B's model\n");
		return 1;
	}
	ret = wt_inject_fault(0, "pause_load");
	wt_ok(!ret, "the next LOAD_MODEL is held in its check (%d)", ret);
	pid = loader(&m);

	/* A is in its ioctl and the firmware holds its load. */
	for (i = 0; i < TRIES && !wt_in_ioctl(pid, DRM_IOCTL_WAFER_MODEL_LOAD); i++)
		usleep(100000);
	for (held = 0; i < TRIES && !held; i++) {
		held = log_has("load paused");
		if (!held)
			usleep(100000);
	}
	wt_ok(held, "A's MODEL_LOAD is held in the firmware (its log says so)");

	/* B's control commands, each completing while A's load is held. */
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	gi.info_ptr = (uintptr_t)&info;
	gi.info_size = sizeof(info);
	gi.model_id = m.model_id;
	ret = wt_ioctl(fd, DRM_IOCTL_WAFER_GET_INFO, &gi);
	wt_ok(!ret && info.model_id == m.model_id, "B's GET_INFO of its model completes (%d)",
	      ret);
	cc.model_id = m.model_id;
	ret = wt_ioctl(fd, DRM_IOCTL_WAFER_CTX_CREATE, &cc);
	wt_ok(!ret, "B's CTX_CREATE completes (%d)", ret);
	cd.ctx_id = cc.ctx_id;
	ret = wt_ioctl(fd, DRM_IOCTL_WAFER_CTX_DESTROY, &cd);
	wt_ok(!ret, "B's CTX_DESTROY completes (%d)", ret);
	ret = read_all(FW_LOG);
	wt_ok(ret > 0, "a debugfs read of the firmware log completes (%d bytes)", ret);
	ret = read_all(SYSFS);
	wt_ok(ret >= 0, "a sysfs read completes (%d)", ret);

	/* The proof of order: A's load is still held after all of them. */
	wt_ok(waitpid(pid, &st, WNOHANG) == 0 && wt_in_ioctl(pid, DRM_IOCTL_WAFER_MODEL_LOAD),
	      "A is still in its MODEL_LOAD after B's commands");

	/* Another file's load reaches the firmware's queue while A's is held. */
	queued = log_count("queued behind 1 load");
	pid2 = loader(&m);
	wt_ok(log_grows("queued behind 1 load", queued),
	      "a second file's MODEL_LOAD is queued in the firmware behind A's, not held in the driver");
	wt_ok(waitpid(pid, &st, WNOHANG) == 0 && wt_in_ioctl(pid, DRM_IOCTL_WAFER_MODEL_LOAD) &&
	      waitpid(pid2, &st2, WNOHANG) == 0,
	      "A's load is still held, both loaders in their MODEL_LOAD");

	ret = wt_inject_fault(0, "none");
	wt_ok(!ret, "disarmed: the load goes on (%d)", ret);
	waitpid(pid, &st, 0);
	wt_ok(WIFEXITED(st) && WEXITSTATUS(st) == 12, "A's MODEL_LOAD succeeds (%#x)", st);
	waitpid(pid2, &st2, 0);
	wt_ok(WIFEXITED(st2) && WEXITSTATUS(st2) == 12,
	      "the second file's queued MODEL_LOAD succeeds after it (%#x)", st2);
	wt_ok(!log_has("job(s) discarded"), "no reset on the way");

	/* Held in its copy: B's commands complete still. */
	ret = wt_inject_fault(0, "pause_copy");
	wt_ok(!ret, "the next LOAD_MODEL is held in its SRAM copy (%d)", ret);
	pid = loader(&m);
	for (i = 0, held = 0; i < TRIES && !held; i++) {
		held = log_has("load paused in its copy");
		if (!held)
			usleep(100000);
	}
	wt_ok(held, "the second MODEL_LOAD is held in its copy (its log says so)");
	ret = wt_ioctl(fd, DRM_IOCTL_WAFER_GET_INFO, &gi);
	wt_ok(!ret, "B's GET_INFO completes during the copy (%d)", ret);
	ret = wt_ioctl(fd, DRM_IOCTL_WAFER_CTX_CREATE, &cc);
	cd.ctx_id = cc.ctx_id;
	wt_ok(!ret && !wt_ioctl(fd, DRM_IOCTL_WAFER_CTX_DESTROY, &cd),
	      "B's CTX_CREATE and CTX_DESTROY complete during the copy (%d)", ret);
	wt_ok(waitpid(pid, &st, WNOHANG) == 0 && wt_in_ioctl(pid, DRM_IOCTL_WAFER_MODEL_LOAD),
	      "the loader is still in its MODEL_LOAD after them");

	/* Killed loaders: the held load stays, a queued one is dropped. */
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	wt_ok(WIFSIGNALED(st), "the held load's loader is killed (%#x)", st);
	queued = log_count("queued behind 1 load");
	pid = loader(&m);
	wt_ok(log_grows("queued behind 1 load", queued) && waitpid(pid, &st, WNOHANG) == 0,
	      "a third file's load is queued behind the held one, not refused");
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	held = log_grows("queued load was cancelled", 0);
	wt_ok(WIFSIGNALED(st) && held, "killed, its queued load is cancelled (%#x)", st);
	ret = wt_inject_fault(0, "none");
	wt_ok(!ret, "disarmed: the held load goes on (%d)", ret);
	wt_ok(!log_has("job(s) discarded"), "no reset on the way");

	ret = wt_decode_fresh(TOKENS, expect);
	wt_ok(!ret, "a fresh file loads the model and decodes exactly (%d)", ret);
	free(m.blob);
	close(fd);
	return wt_done();
}
