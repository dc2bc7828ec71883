// SPDX-License-Identifier: MIT
/*
 * sync.c - uapi_fuzz: syncobj create, destroy, signal, wait, timeline and export.
 */
#include "uapi_fuzz.h"

void op_sync_create(struct tctx *t, int fi, int fd, unsigned int gen)
{
	struct drm_syncobj_create c = { 0 };
	int ret;

	if (pct(t, 70))
		c.flags = DRM_SYNCOBJ_CREATE_SIGNALED;
	if (pct(t, 10))
		c.flags = (uint32_t)v_flags(t);
	ret = raw_ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c);
	count(OP_SYNC_CREATE, ret);
	tlog(t, OP_SYNC_CREATE, fi, ret, "flags %#x -> %u", c.flags, ret ? 0 : c.handle);
	if (!ret)
		set_sync(fi, gen, c.handle, 1, !!(c.flags & DRM_SYNCOBJ_CREATE_SIGNALED));
}

void op_sync_destroy(struct tctx *t, int fi, int fd, unsigned int gen)
{
	struct drm_syncobj_destroy d = { .handle = pick_sync(t, fi, 0) };
	int ret;

	if (pct(t, 10))
		d.pad = v_nonzero32(t);
	ret = raw_ioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
	count(OP_SYNC_DESTROY, ret);
	tlog(t, OP_SYNC_DESTROY, fi, ret, "handle %u", d.handle);
	if (!ret)
		set_sync(fi, gen, d.handle, 0, 0);
}

/* Signal, reset, wait, export/import as fd and sync_file. */
void op_sync_misc(struct tctx *t, int fi, int fd, unsigned int gen)
{
	uint32_t h[4];
	int ret = 0, what = (int)rn(t, 7), i, n = 1 + (int)rn(t, 3);
	uint64_t dummy;

	for (i = 0; i < 4; i++)
		h[i] = pick_sync(t, fi, what == 2);
	switch (what) {
	case 0: {
		struct drm_syncobj_array a = { .handles = (uintptr_t)h, .count_handles = n };

		if (pct(t, 15))
			a.handles = v_rptr(t, (uintptr_t)h);
		ret = raw_ioctl(fd, DRM_IOCTL_SYNCOBJ_SIGNAL, &a);
		if (!ret)
			for (i = 0; i < n; i++)
				set_sync(fi, gen, h[i], 1, 1);
		break;
	}
	case 1: {
		struct drm_syncobj_array a = { .handles = (uintptr_t)h, .count_handles = n };

		ret = raw_ioctl(fd, DRM_IOCTL_SYNCOBJ_RESET, &a);
		if (!ret)
			for (i = 0; i < n; i++)
				set_sync(fi, gen, h[i], 1, 0);
		break;
	}
	case 2: {
		struct drm_syncobj_wait w = { .handles = (uintptr_t)h, .count_handles = n,
					      .timeout_nsec = wt_deadline_ms((int64_t)rn(t, 50)) };

		if (pct(t, 50))
			w.flags |= DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL;
		if (pct(t, 20))
			w.flags |= DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT;
		ret = raw_ioctl(fd, DRM_IOCTL_SYNCOBJ_WAIT, &w);
		break;
	}
	case 3:
	case 4: {
		struct drm_syncobj_handle e = { .handle = h[0] };

		if (what == 4)
			e.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE;
		if (pct(t, 10))
			e.flags = (uint32_t)v_flags(t);
		ret = raw_ioctl(fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &e);
		if (!ret)
			add_prime(e.fd, 0, what == 4 ? 2 : 1);
		break;
	}
	case 5: {
		/* Import a syncobj fd or a sync_file into this (maybe another) file. */
		int want = pct(t, 50) ? 1 : 2;
		struct drm_syncobj_handle im = { .fd = peek_prime(t, want, &dummy) };

		if (im.fd < 0)
			im.fd = pct(t, 50) ? -1 : fd;
		if (want == 2) {
			im.flags = DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE;
			im.handle = h[0];
		}
		ret = raw_ioctl(fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &im);
		if (!ret)
			set_sync(fi, gen, im.handle, 1, 1);
		break;
	}
	default: {
		/* sync_file info of an exported job fence: fence names. */
		struct sync_fence_info fi_arr[4];
		struct sync_file_info info = { 0 };
		int sfd = peek_prime(t, 2, &dummy);

		if (sfd < 0)
			return;
		info.num_fences = 4;
		info.sync_fence_info = (uintptr_t)fi_arr;
		ret = raw_ioctl(sfd, SYNC_IOC_FILE_INFO, &info);
		break;
	}
	}
	count(OP_SYNC_MISC, ret);
	tlog(t, OP_SYNC_MISC, fi, ret, "kind %d handles %u %u", what, h[0], h[1]);
}
