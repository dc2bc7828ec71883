// SPDX-License-Identifier: MIT
/*
 * info.c - uapi_fuzz: GET_INFO, fdinfo/debugfs reads and unknown ioctls.
 */
#include "uapi_fuzz.h"

void op_get_info(struct tctx *t, int fi, int fd)
{
	static __thread uint8_t buf[4096];
	struct drm_wafer_get_info gi = { .info_ptr = (uintptr_t)buf, .info_size = sizeof(dinfo) };
	const char *invalid = NULL;
	int m = nmut(t), ptr_bad = 0, ret;

	while (m--) {
		switch (rn(t, 3)) {
		case 0:
			/* Was pad: a model of this file, a stale one or any value. */
			pthread_mutex_lock(&pool_mu);
			gi.model_id = pct(t, 40) ? files[fi].model_id :
				      pct(t, 50) ? files[fi].stale_model_id : v_nonzero32(t);
			pthread_mutex_unlock(&pool_mu);
			break;
		case 1: {
			static const uint32_t s[] = { 0, 1, 7, 8, 13, 95, 96, 97, 4096, 0xffffffff };

			gi.info_size = s[rn(t, 10)];
			break;
		}
		default:
			/* Only addresses nothing of ours can live at: the kernel writes. */
			switch (rn(t, 6)) {
			case 0: gi.info_ptr = 0; break;
			case 1: gi.info_ptr = (uintptr_t)scratch + PAGE; break;
			case 2: gi.info_ptr = (uintptr_t)scratch + 2 * PAGE; break;
			case 3: gi.info_ptr = KADDR; break;
			case 4: gi.info_ptr = (uintptr_t)scratch + PAGE - 8 - rn(t, 40); break;
			default: gi.info_ptr = NONCANON; break;
			}
			ptr_bad = 1;
		}
	}
	if (gi.info_size < 8)
		invalid = "info_size < 8";
	if (!gi.info_ptr)
		invalid = "info_ptr NULL";
	ret = raw_ioctl(fd, DRM_IOCTL_WAFER_GET_INFO, &gi);
	count(OP_GET_INFO, ret);
	tlog(t, OP_GET_INFO, fi, ret, "ptr %#" PRIx64 " size %u model %u", gi.info_ptr,
	     gi.info_size, gi.model_id);
	if (!ret && invalid)
		sure_bug(t, OP_GET_INFO, ret, "accepted %s", invalid);
	if (ret == -EFAULT && !ptr_bad)
		sure_bug(t, OP_GET_INFO, ret, "-EFAULT with a valid 4 KiB info_ptr");
	if (ret == -ENOENT && !gi.model_id)
		sure_bug(t, OP_GET_INFO, ret, "-ENOENT without a model_id");
	if (ret && ret != -EINVAL && ret != -EFAULT && ret != -EINTR && ret != -ENOENT)
		odd(t, OP_GET_INFO, ret, "info_size %u", gi.info_size);
}

/* Unknown driver ioctl numbers and mismatched size encodings. */
void op_bad_ioctl(struct tctx *t, int fi, int fd)
{
	static __thread uint8_t buf[256];
	unsigned int nr = DRM_COMMAND_BASE + (unsigned int)rn(t, 0x20);
	unsigned int size = (unsigned int)rn(t, 200);
	unsigned long req;
	int ret;

	memset(buf, 0, sizeof(buf));
	/* Known numbers with odd sizes act on a zero-extended struct. */
	if (nr <= DRM_COMMAND_BASE + DRM_WAFER_WAIT && pct(t, 70))
		nr = DRM_COMMAND_BASE + 0x9 + (unsigned int)rn(t, 0x16);
	/* Random bytes only where no handler reads them (GET_INFO would write
	 * to a random address). */
	if (nr > DRM_COMMAND_BASE + DRM_WAFER_WAIT && pct(t, 50)) {
		for (ret = 0; ret < (int)sizeof(buf); ret++)
			buf[ret] = pct(t, 80) ? 0 : (uint8_t)rnd(t);
	}
	switch (rn(t, 4)) {
	case 0: req = _IOC(_IOC_READ | _IOC_WRITE, DRM_IOCTL_BASE, nr, size); break;
	case 1: req = _IOC(_IOC_WRITE, DRM_IOCTL_BASE, nr, size); break;
	case 2: req = _IOC(_IOC_NONE, DRM_IOCTL_BASE, nr, 0); break;
	default: req = _IOC(_IOC_READ, DRM_IOCTL_BASE, nr, size); break;
	}
	ret = raw_ioctl(fd, req, pct(t, 10) ? NULL : buf);
	count(OP_BAD_IOCTL, ret);
	tlog(t, OP_BAD_IOCTL, fi, ret, "req %#lx", req);
	if (!ret)
		odd(t, OP_BAD_IOCTL, ret, "unknown driver ioctl nr %#x accepted", nr);
}

/* fdinfo of a device fd, debugfs and sysfs: readers racing the jobs. */
void op_read_info(struct tctx *t, int fi, int fd)
{
	static const char *const paths[] = {
		"/sys/kernel/debug/accel/wafer.0/jobs",
		"/sys/kernel/debug/accel/wafer.0/stages",
		"/sys/kernel/debug/accel/wafer.0/sram_map",
		"/sys/kernel/debug/accel/wafer.0/fw_log",
		"/sys/class/accel/accel0/device/busy_ns",
		"/sys/class/accel/accel0/device/jobs_completed",
		"/sys/class/accel/accel0/device/stages",
		NULL,
	};
	char path[128], buf[4096];
	int n = (int)rn(t, 8), rfd, ret = 0;

	if (!paths[n])
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	else
		snprintf(path, sizeof(path), "%s", paths[n]);
	rfd = open(path, O_RDONLY | O_CLOEXEC);
	if (rfd < 0) {
		ret = -errno;
	} else {
		while (read(rfd, buf, sizeof(buf)) > 0)
			;
		close(rfd);
	}
	count(OP_READ_INFO, ret);
	tlog(t, OP_READ_INFO, fi, ret, "%s", path);
}

int get_info(int fd, struct drm_wafer_device_info *info)
{
	struct drm_wafer_get_info gi = { .info_ptr = (uintptr_t)info,
					 .info_size = sizeof(*info) };

	memset(info, 0, sizeof(*info));
	return wt_ioctl(fd, DRM_IOCTL_WAFER_GET_INFO, &gi);
}
