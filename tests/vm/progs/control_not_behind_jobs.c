// SPDX-License-Identifier: MIT
/*
 * VM test: one file's queued jobs never hold up another file's control
 * operations, and a garbage streamed blob is refused before it is copied.
 *
 * File A queues jobs (as many as it may have in flight, each of many
 * tokens) and keeps the device busy; meanwhile file B runs GET_INFO,
 * CTX_CREATE, CTX_DESTROY, MODEL_LOAD and MODEL_UNLOAD, and every sysfs
 * attribute of the device is read.  "Promptly" is measured against A's
 * progress, not a clock: each must finish while at least half of A's jobs
 * are still incomplete (the device's jobs_completed, which only A's jobs
 * move).  A control command run in ring order, behind A's jobs, finishes
 * only once the firmware has taken in all of them, when at most the
 * pipeline's few are left.
 *
 * Then B streams a garbage blob of GARBAGE_MIB MiB: MODEL_LOAD must fail
 * -EINVAL, and the memory charged to B's memory cgroup must not have
 * grown by half the blob (memory.peak, reset just before the load): the
 * header is checked from the BO, not from a copy.
 *
 * Usage: control_not_behind_jobs [--tokens PER_JOB]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wt_dev.h"
#include "wt_util.h"

#define TOPK		2
#define SLOTS		4
#define MAX_JOBS	64
#define GARBAGE_MIB	64
#define CG		"/sys/fs/cgroup/wt_ctrl_queue"

static const char *const attrs[] = {
	"stages", "sram_bytes_per_stage", "profile", "wafer_numa_node", "fw_version",
	"models", "max_models", "busy_ns", "jobs_completed", "tokens",
	"modelled_makespan_ns", "bottleneck_busy_ns", "moe_imbalance_milli",
};

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return 0;
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n < 0 ? -errno : 0;
}

/* The device's completed jobs (sysfs jobs_completed: a driver counter). */
static unsigned long long completed(void)
{
	char buf[64];

	if (read_file("/sys/class/accel/accel0/device/jobs_completed", buf, sizeof(buf)))
		return ~0ull;
	return strtoull(buf, NULL, 0);
}

static unsigned int njobs;
static unsigned long long base;

/* A's jobs not yet completed, now. */
static long left(void)
{
	return (long)njobs - (long)(completed() - base);
}

/* @what finished while at least half of A's jobs were still to complete. */
static void prompt(int ok, const char *what)
{
	long l = left();

	wt_ok(ok && l >= (long)njobs / 2,
	      "%s finished with %ld of A's %u jobs still to complete (at least %u)",
	      what, l, njobs, njobs / 2);
}

/* B's control operations while A's jobs fill the device. */
static void b_ops(int fb, const struct wt_dev_model *mb)
{
	struct drm_wafer_ctx_create cc = { .model_id = mb->model_id, .kv_slots = 1,
					   .ctx_len = 64 };
	struct drm_wafer_device_info info = { .size = sizeof(info) };
	struct drm_wafer_get_info gi = { .info_ptr = (uintptr_t)&info,
					 .info_size = sizeof(info) };
	struct drm_wafer_model_load ml = { 0 };
	struct drm_wafer_model_unload mu = { 0 };
	struct drm_wafer_ctx_destroy cd;
	char path[128], buf[256];
	struct wt_bo blob;
	unsigned int i;
	int ret;

	ret = wt_ioctl(fb, DRM_IOCTL_WAFER_GET_INFO, &gi);
	prompt(!ret, "B's GET_INFO");
	ret = wt_ioctl(fb, DRM_IOCTL_WAFER_CTX_CREATE, &cc);
	prompt(!ret, "B's CTX_CREATE");
	cd = (struct drm_wafer_ctx_destroy){ .ctx_id = cc.ctx_id };
	ret = wt_ioctl(fb, DRM_IOCTL_WAFER_CTX_DESTROY, &cd);
	prompt(!ret, "B's CTX_DESTROY");
	ret = wt_bo_new(fb, &blob, mb->blob_len);
	if (!ret) {
		memcpy(blob.map, mb->blob, mb->blob_len);
		ml.bo_handle = blob.handle;
		ml.blob_size = mb->blob_len;
		ret = wt_ioctl(fb, DRM_IOCTL_WAFER_MODEL_LOAD, &ml);
	}
	prompt(!ret, "B's MODEL_LOAD of a second model");
	mu.model_id = ml.model_id;
	ret = ret ? ret : wt_ioctl(fb, DRM_IOCTL_WAFER_MODEL_UNLOAD, &mu);
	prompt(!ret, "B's MODEL_UNLOAD of it");
	for (i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		snprintf(path, sizeof(path), "/sys/class/accel/accel0/device/%s", attrs[i]);
		ret = read_file(path, buf, sizeof(buf));
		snprintf(buf, sizeof(buf), "reading sysfs %s", attrs[i]);
		prompt(!ret, buf);
	}
}

/* Puts this process in a memory cgroup of its own; 0 or -errno. */
static int own_memcg(void)
{
	char pid[32];
	struct stat st;

	if (stat("/sys/fs/cgroup/cgroup.controllers", &st) &&
	    mount("none", "/sys/fs/cgroup", "cgroup2", 0, NULL))
		return -errno;
	write_file("/sys/fs/cgroup/cgroup.subtree_control", "+memory");
	if (mkdir(CG, 0755) && errno != EEXIST)
		return -errno;
	snprintf(pid, sizeof(pid), "%d", getpid());
	return write_file(CG "/cgroup.procs", pid);
}

/* A streamed garbage blob: -EINVAL, and not copied (memory.peak). */
static void garbage_stream(int fb)
{
	struct drm_wafer_model_load ml = { 0 };
	unsigned long long peak, cur;
	size_t size = (size_t)GARBAGE_MIB << 20;
	char buf[64];
	struct wt_bo b;
	int pfd, ret;

	ret = own_memcg();
	if (!wt_ok(!ret, "a memory cgroup of its own (%d)", ret))
		return;
	if (!wt_ok(!wt_bo_new(fb, &b, size), "a %d MiB BO", GARBAGE_MIB))
		return;
	memset(b.map, 0xa5, size);
	pfd = open(CG "/memory.peak", O_RDWR);
	/* Writing memory.peak resets it, for reads through this fd, to now. */
	if (!wt_ok(pfd >= 0 && write(pfd, "0", 1) == 1 &&
		   !read_file(CG "/memory.current", buf, sizeof(buf)),
		   "memory.peak reset (a 6.12 kernel's cgroup v2)"))
		return;
	cur = strtoull(buf, NULL, 0);
	ml.bo_handle = b.handle;
	ml.blob_size = size;
	ml.flags = DRM_WAFER_LOAD_STREAM;
	ret = wt_ioctl(fb, DRM_IOCTL_WAFER_MODEL_LOAD, &ml);
	wt_ok(ret == -EINVAL, "MODEL_LOAD of a %d MiB garbage streamed blob -> -EINVAL (%d)",
	      GARBAGE_MIB, ret);
	memset(buf, 0, sizeof(buf));
	if (!wt_ok(pread(pfd, buf, sizeof(buf) - 1, 0) > 0, "memory.peak read"))
		return;
	peak = strtoull(buf, NULL, 0);
	wt_ok(peak < cur + size / 2,
	      "the refused load charged %llu KiB at its peak (a copy: %zu KiB)",
	      peak > cur ? (peak - cur) >> 10 : 0, size >> 10);
	close(pfd);
}

/*
 * The default per-file limits leave the device's model slots to others:
 * B loads models until its own limit (-EMFILE), and a third file can still
 * load one.  A and B hold one each already.
 */
static void slots_left(int fb)
{
	struct wt_dev_model mc, tmp;
	unsigned int n = 0;
	int fc, ret = 0;

	while (!ret && n < 8) {
		ret = wt_dev_load_model(fb, 8, 1, 64, &tmp);
		n += !ret;
	}
	wt_ok(ret == -EMFILE, "B loaded %u more models, then its own limit: -EMFILE (%d)", n, ret);
	fc = wt_dev_open(0);
	ret = fc < 0 ? fc : wt_dev_load_model(fc, 8, 1, 64, &mc);
	wt_ok(!ret, "a third file still loads a model (%d)", ret);
}

int main(int argc, char **argv)
{
	unsigned int tokens = 128, i;
	struct drm_wafer_device_info info = { .size = sizeof(info) };
	struct drm_wafer_get_info gi = { .info_ptr = (uintptr_t)&info,
					 .info_size = sizeof(info) };
	struct wt_dev_model ma, mb;
	struct wt_bo in, out;
	uint64_t seqno = 0;
	int fa, fb, ok = 1, ret;

	for (i = 1; i + 1 < (unsigned int)argc; i += 2)
		if (!strcmp(argv[i], "--tokens"))
			tokens = (unsigned int)strtoul(argv[i + 1], NULL, 0);
	fa = wt_dev_open(0);
	fb = wt_dev_open(0);
	if (!wt_ok(fa >= 0 && fb >= 0, "two files"))
		return wt_done();
	ret = wt_dev_load_model(fa, 8, SLOTS, 256, &ma);
	if (!ret)
		ret = wt_dev_load_model(fb, 8, 1, 256, &mb);
	if (!ret)
		ret = wt_ioctl(fa, DRM_IOCTL_WAFER_GET_INFO, &gi);
	if (!ret)
		ret = wt_bo_new(fa, &in, tokens * 4);
	if (!ret)
		ret = wt_bo_new(fa, &out, 4096);
	if (!wt_ok(!ret, "each file with a model and a context, A with its BOs (%d)", ret))
		return wt_done();
	for (i = 0; i < tokens; i++)
		((uint32_t *)in.map)[i] = 1 + i * 7 % 500;
	njobs = info.max_inflight_jobs < MAX_JOBS ? info.max_inflight_jobs : MAX_JOBS;
	base = completed();
	for (i = 0; i < njobs; i++) {
		struct drm_wafer_submit s = { .job = { .ctx_id = ma.ctx_id, .slot = i % SLOTS,
			.n_tokens = tokens, .top_k = TOPK, .in_handle = in.handle,
			.out_handle = out.handle,
			.out_offset = (i % SLOTS) * DRM_WAFER_RESULT_SIZE(TOPK) } };

		if (wt_ioctl(fa, DRM_IOCTL_WAFER_SUBMIT, &s))
			break;
		seqno = s.seqno;
	}
	if (!wt_ok(i == njobs, "A queued %u jobs of %u tokens", njobs, tokens))
		return wt_done();
	/* The device is busy with A's work from here. */
	wt_ok(!wt_wait_job(fa, 1, NULL), "A's first job completed");
	b_ops(fb, &mb);
	garbage_stream(fb);
	for (i = 2; i <= seqno; i++) {
		ret = wt_wait_job(fa, i, NULL);
		if (ret && ok) {
			wt_diag("A's job %u: %d", i, ret);
			ok = 0;
		}
	}
	wt_ok(ok, "every one of A's jobs completed with status 0");
	slots_left(fb);
	return wt_done();
}
