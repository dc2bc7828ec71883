// SPDX-License-Identifier: MIT
/*
 * VM test: MODEL_LOAD's kernel memory is bounded and accounted.  Needs cgroup v2 at /sys/fs/cgroup with the memory controller
 * (the case script mounts it).
 *
 *  - A blob larger than all the device's SRAM plus header slack is refused
 *    with -EINVAL before it is copied: a kprobe on kvmalloc sees no
 *    allocation of its size by this process, and the memory cgroup the
 *    caller runs in no peak of it.
 *  - A valid load's copy of the blob is charged to the caller's memory
 *    cgroup: a fresh cgroup's memory.peak grows by at least the blob.
 *  - The device's kernel threads are bounded by what is loaded:
 *    without a model only its command processor runs; a model starts at
 *    most one stage worker per stage it occupies (one each, or a pool of
 *    fewer: stage_workers), and unload stops them again.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wt_dev.h"
#include "wt_util.h"

#define CG	"/sys/fs/cgroup"
#define TR	"/sys/kernel/tracing"
#define BIG	(16u << 20)	/* a kvmalloc this large is a blob copy */

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* Moves this process into a new cgroup @name (created empty). */
static int enter_cgroup(const char *name)
{
	char path[128], pid[32];

	snprintf(path, sizeof(path), CG "/%s", name);
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), CG "/%s/cgroup.procs", name);
	snprintf(pid, sizeof(pid), "%d", getpid());
	return write_file(path, pid);
}

static long long cg_peak(const char *name)
{
	char path[128];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), CG "/%s/memory.peak", name);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* Records this process's kvmalloc() calls of more than BIG bytes. */
static int probe_big_kvmalloc(int on)
{
	char filter[96];
	int ret;

	if (!on) {
		write_file(TR "/events/wafer_hard/kvmalloc/enable", "0");
		return write_file(TR "/kprobe_events", "-:wafer_hard/kvmalloc");
	}
	if (access(TR "/events", F_OK) && mount("nodev", TR, "tracefs", 0, NULL))
		return -errno;
	write_file(TR "/trace", "");
	/*
	 * Live-patch as little kernel text as we can: a guest under TCG
	 * once died of an int3 that text_poke_bp() had already taken back
	 * out of __schedule() (recording comms hooks sched_switch when an
	 * event is enabled; an optimised kprobe is a second patch of
	 * __kvmalloc_node_noprof()).  The guest is this case's own.
	 */
	write_file(TR "/options/record-cmd", "0");
	write_file("/proc/sys/debug/kprobes-optimization", "0");
	ret = write_file(TR "/kprobe_events",
			 "p:wafer_hard/kvmalloc __kvmalloc_node_noprof size=%di:u64");
	snprintf(filter, sizeof(filter), "size > %u && common_pid == %d", BIG, getpid());
	if (!ret)
		ret = write_file(TR "/events/wafer_hard/kvmalloc/filter", filter);
	if (!ret)
		ret = write_file(TR "/events/wafer_hard/kvmalloc/enable", "1");
	return ret;
}

/* Lines the probe recorded, or -1. */
static int big_kvmallocs(void)
{
	FILE *f = fopen(TR "/trace", "r");
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += line[0] != '#' && strstr(line, "kvmalloc:") != NULL;
	fclose(f);
	return n;
}

static int model_load(int fd, const struct wt_bo *b, uint64_t size, uint32_t *id)
{
	struct drm_wafer_model_load ml = { .bo_handle = b->handle, .blob_size = size };
	int ret = wt_ioctl(fd, DRM_IOCTL_WAFER_MODEL_LOAD, &ml);

	*id = ml.model_id;
	return ret;
}

/*
 * Stage workers of the device at index 0: "wfs-st<device>.<stage>", one
 * per stage, or "wfs-pw<device>.<n>", the pool's (stage_workers).
 */
static int stage_threads(void)
{
	return wt_threads_named("/proc", "wfs-st0.") + wt_threads_named("/proc", "wfs-pw0.");
}

int main(void)
{
	struct drm_wafer_get_info gi = { 0 };
	struct drm_wafer_device_info info = { 0 };
	struct drm_wafer_model_unload mu = { 0 };
	struct wt_dev_model m;
	struct wt_bo big, b;
	uint64_t sram, size;
	long long peak;
	uint32_t id = 0;
	int fd, scratch, ret, n;

	ret = write_file(CG "/cgroup.subtree_control", "+memory");
	fd = wt_dev_open(0);
	gi.info_ptr = (uintptr_t)&info;
	gi.info_size = sizeof(info);
	scratch = wt_dev_open(0);
	if (ret || fd < 0 || scratch < 0 || wt_ioctl(fd, DRM_IOCTL_WAFER_GET_INFO, &gi) ||
	    wt_dev_load_model(scratch, 8, 1, 16, &m)) {
		printf("not ok - setup (memory controller: %d)\n", ret);
		return 1;
	}
	close(scratch);
	sram = (uint64_t)info.stages * info.sram_bytes_per_stage;
	n = stage_threads();
	wt_ok(n == 0 && wt_threads_named("/proc", "wfs-cp0.") == 1,
	      "without a model the device runs its command processor and no stage worker (%d)",
	      n);

	/* An untouched BO one page above the bound: no page charged yet. */
	size = sram + (1u << 20) + 4096;
	if (!wt_ok(size <= info.max_bo_size && !wt_bo_new(fd, &big, size),
		   "a %llu-byte BO (SRAM %llu)", (unsigned long long)size,
		   (unsigned long long)sram))
		return wt_done();
	ret = probe_big_kvmalloc(1);
	if (!wt_ok(!ret, "kprobe on __kvmalloc_node_noprof (%d)", ret))
		return wt_done();
	ret = enter_cgroup("wafer_bound");
	ret = ret ? ret : model_load(fd, &big, size, &id);
	peak = cg_peak("wafer_bound");
	n = big_kvmallocs();
	probe_big_kvmalloc(0);
	wt_ok(ret == -EINVAL, "MODEL_LOAD of a blob larger than SRAM + 1 MiB: -EINVAL (%d)", ret);
	wt_ok(n == 0, "refused before copying: %d kvmalloc()s over %u bytes", n, BIG);
	wt_ok(peak >= 0 && peak < (long long)(size / 4),
	      "the caller's cgroup peaked at %lld bytes, blob %llu", peak,
	      (unsigned long long)size);
	munmap(big.map, big.size);

	/* The blob's pages are charged where it was written, not below. */
	if (!wt_ok(!wt_bo_new(fd, &b, m.blob_len), "BO for the %zu-byte blob", m.blob_len))
		return wt_done();
	memcpy(b.map, m.blob, m.blob_len);
	ret = enter_cgroup("wafer_copy");
	ret = ret ? ret : model_load(fd, &b, m.blob_len, &id);
	peak = cg_peak("wafer_copy");
	wt_ok(!ret, "MODEL_LOAD from a fresh memory cgroup (%d)", ret);
	wt_ok(peak >= (long long)m.blob_len,
	      "the kernel's copy of the blob is charged to it: peak %lld >= %zu bytes",
	      peak, m.blob_len);
	n = stage_threads();
	wt_ok(n >= 1 && n <= (int)info.stages,
	      "the loaded model runs at most one worker per stage: %d of %u",
	      n, info.stages);
	mu.model_id = id;
	ret = wt_ioctl(fd, DRM_IOCTL_WAFER_MODEL_UNLOAD, &mu);
	wt_ok(!ret, "MODEL_UNLOAD (%d)", ret);
	n = stage_threads();
	wt_ok(n == 0, "and unload stops them (%d left)", n);
	enter_cgroup(".");
	munmap(b.map, b.size);
	free(m.blob);
	close(fd);
	return wt_done();
}
