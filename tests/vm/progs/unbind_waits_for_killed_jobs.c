// SPDX-License-Identifier: MIT
/*
 * VM test: a device is torn down only after the jobs its closed files left.
 *
 * A closing file waits for its jobs for a bounded time (2 x job_timeout_ms
 * + 1 s), and a job its exiting process left queued is killed by the
 * scheduler and freed only once its in-fences signal.  Such a job still
 * holds its context, whose release unloads the model through the
 * firmware.  A child queues one job behind two vgem fences and exits; the
 * parent, once the child's close gave up waiting, unbinds the device and
 * then lets the fences signal (vgem's own timeout, or here).  Before the
 * device waited for its jobs the unbind finished first, and the late job
 * then freed itself into the destroyed scheduler and sent its context's
 * release to the destroyed firmware (the debug kernel's KASAN saw it, and
 * the guest panicked).  Afterwards the device is bound again and decodes
 * correctly.
 *
 * Needs job_timeout_ms=1000, so that the close gives up (3 s) before
 * vgem's fences time out (10 s), and vgem loaded (else it exits 77).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/dma-buf.h>
#include <xf86drm.h>

#include "wt_dev.h"
#include "wt_util.h"

#define UNBIND	"/sys/bus/platform/drivers/wafer/unbind"
#define BIND	"/sys/bus/platform/drivers/wafer/bind"
#define NDECODE	8

/* vgem's uapi (not shipped in libdrm's headers). */
struct vgem_fence_attach {
	uint32_t handle;
	uint32_t flags;
	uint32_t out_fence;
	uint32_t pad;
};

struct vgem_fence_signal {
	uint32_t fence;
	uint32_t flags;
};

#define VGEM_FENCE_WRITE	0x1
#define VGEM_IOCTL_FENCE_ATTACH	DRM_IOWR(DRM_COMMAND_BASE + 0x1, struct vgem_fence_attach)
#define VGEM_IOCTL_FENCE_SIGNAL	DRM_IOW(DRM_COMMAND_BASE + 0x2, struct vgem_fence_signal)

/* A vgem fence: its id, and a sync_file of it. */
struct vfence {
	uint32_t id;
	int sync_fd;
};

static int vgem_open(void)
{
	char path[64];
	int i, fd;

	for (i = 0; i < 16; i++) {
		drmVersionPtr v;
		int is_vgem;

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		v = drmGetVersion(fd);
		is_vgem = v && !strcmp(v->name, "vgem");
		if (v)
			drmFreeVersion(v);
		if (is_vgem)
			return fd;
		close(fd);
	}
	return -1;
}

/* An unsignalled fence on a new vgem BO, exported as a sync_file. */
static int vgem_fence(int vfd, struct vfence *f)
{
	struct drm_mode_create_dumb d = { .width = 1024, .height = 1, .bpp = 32 };
	struct vgem_fence_attach a = { .flags = VGEM_FENCE_WRITE };
	struct dma_buf_export_sync_file e = { .flags = DMA_BUF_SYNC_WRITE, .fd = -1 };
	struct drm_prime_handle p = { .flags = DRM_CLOEXEC | DRM_RDWR, .fd = -1 };
	struct drm_gem_close c = { 0 };
	int ret;

	ret = wt_ioctl(vfd, DRM_IOCTL_MODE_CREATE_DUMB, &d);
	if (ret)
		return ret;
	a.handle = p.handle = c.handle = d.handle;
	ret = wt_ioctl(vfd, VGEM_IOCTL_FENCE_ATTACH, &a);
	if (!ret)
		ret = wt_ioctl(vfd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p);
	wt_ioctl(vfd, DRM_IOCTL_GEM_CLOSE, &c);
	if (ret)
		return ret;
	if (ioctl(p.fd, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &e))
		ret = -errno;
	close(p.fd);
	f->id = a.out_fence;
	f->sync_fd = e.fd;
	return ret;
}

/* A syncobj of @fd holding the fence of @sync_fd. */
static int syncobj_of(int fd, int sync_fd, uint32_t *h)
{
	struct drm_syncobj_create c = { 0 };
	struct drm_syncobj_handle imp = {
		.flags = DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE, .fd = sync_fd };
	int ret = wt_ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c);

	imp.handle = *h = c.handle;
	return ret ? ret : wt_ioctl(fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &imp);
}

/*
 * The child: a model, a context and one job queued behind both fences,
 * then exit with it queued.  The scheduler waits for the first fence as
 * the entity's; the killed job waits for the second before it is freed.
 */
static int child(const struct vfence *f)
{
	struct drm_wafer_submit s = { .job = { .n_tokens = 1, .top_k = 2 } };
	struct wt_dev_model m;
	struct wt_bo in, out;
	uint32_t h[2];
	int fd;

	fd = wt_dev_open(0);
	if (fd < 0 || wt_dev_load_model(fd, 8, 1, 64, &m) || wt_bo_new(fd, &in, 4096) ||
	    wt_bo_new(fd, &out, 4096))
		return 10;
	if (syncobj_of(fd, f[0].sync_fd, &h[0]) || syncobj_of(fd, f[1].sync_fd, &h[1]))
		return 11;
	((uint32_t *)in.map)[0] = 1;
	s.job.ctx_id = m.ctx_id;
	s.job.in_handle = in.handle;
	s.job.out_handle = out.handle;
	s.job.in_syncobjs = (uintptr_t)h;
	s.job.in_syncobj_count = 2;
	if (wt_ioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &s))
		return 12;
	return 0;	/* exit closes the file with the job queued */
}

int main(void)
{
	uint32_t expect[NDECODE];
	struct vfence f[2];
	struct pollfd pfd;
	int vfd, st = 0, ret, i;
	pid_t pid;

	vfd = vgem_open();
	if (vfd < 0) {
		printf("# vgem is not loaded: skipped\n");
		return 77;
	}
	if (wt_decode_reference(NDECODE, expect)) {
		printf("not ok - the reference decode\n");
		return 1;
	}
	for (i = 0; i < 2; i++) {
		ret = vgem_fence(vfd, &f[i]);
		if (!wt_ok(!ret, "vgem fence %d as a sync_file (%d)", i, ret))
			return wt_done();
	}
	pid = fork();
	if (pid == 0)
		exit(child(f));
	waitpid(pid, &st, 0);
	wt_ok(WIFEXITED(st) && !WEXITSTATUS(st),
	      "the child queued a job behind the fences and exited (%#x)", st);
	/* Its close gave up on the job, which still holds its context. */
	ret = wt_sysfs_write(UNBIND, "wafer.0");
	wt_ok(!ret, "wafer.0 unbound (%d)", ret);
	for (i = 0; i < 2; i++) {
		struct vgem_fence_signal sig = { .fence = f[i].id };

		/* -ETIMEDOUT: vgem signalled it already. */
		wt_ioctl(vfd, VGEM_IOCTL_FENCE_SIGNAL, &sig);
	}
	pfd = (struct pollfd){ .fd = f[1].sync_fd, .events = POLLIN };
	ret = poll(&pfd, 1, -1);
	wt_ok(ret == 1, "the killed job's last in-fence signalled (%d)", ret);
	ret = wt_sysfs_write(BIND, "wafer.0");
	wt_ok(!ret, "wafer.0 bound again (%d)", ret);
	ret = wt_decode_fresh_on(wt_accel_index(0), NDECODE, expect);
	wt_ok(!ret, "a fresh file decodes %d positions exactly (%d)", NDECODE, ret);
	close(f[0].sync_fd);
	close(f[1].sync_fd);
	close(vfd);
	return wt_done();
}
