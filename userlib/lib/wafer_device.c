// SPDX-License-Identifier: MIT
/* libwafer: finding and opening wafer devices among /dev/accel/accel*. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xf86drm.h>

#include "wafer.h"
#include "wafer_internal.h"

#define WAFER_DRIVER_NAME "wafer"

/* Fills @desc if @fd is a wafer device; -ENODEV if it is another driver. */
static int describe(int fd, int index, struct wafer_device_desc *desc)
{
	drmVersionPtr v = drmGetVersion(fd);
	int ret = 0;

	if (!v) {
		int e = errno ? errno : EIO;

		return wafer_set_error(-e, "DRM_IOCTL_VERSION on accel%d failed: %s",
				       index, strerror(e));
	}
	if (strcmp(v->name, WAFER_DRIVER_NAME) != 0) {
		ret = wafer_set_error(-ENODEV, "accel%d is driven by '%s', not wafer",
				      index, v->name);
	} else if (desc) {
		memset(desc, 0, sizeof(*desc));
		desc->index = index;
		snprintf(desc->path, sizeof(desc->path), WAFER_ACCEL_DIR "/accel%d", index);
		desc->drv_major = v->version_major;
		desc->drv_minor = v->version_minor;
		desc->drv_patchlevel = v->version_patchlevel;
		snprintf(desc->desc, sizeof(desc->desc), "%s", v->desc ? v->desc : "");
	}
	drmFreeVersion(v);
	return ret;
}

/* Whether this process holds @gid (effective or supplementary). */
static bool in_groups(gid_t gid)
{
	gid_t g[256];
	int n = getgroups(256, g), i;

	if (gid == getegid())
		return true;
	for (i = 0; i < n; i++)
		if (g[i] == gid)
			return true;
	return false;
}

/*
 * Writes to @buf why opening @path was refused: the node's group and mode,
 * and what would grant access (the udev rule, or membership of the group).
 */
static void access_hint(const char *path, char *buf, size_t len)
{
	struct stat st;
	struct group *gr;
	char gname[32], advice[96] = "";

	buf[0] = '\0';
	if (stat(path, &st))
		return;
	gr = getgrgid(st.st_gid);
	if (gr)
		snprintf(gname, sizeof(gname), "%s", gr->gr_name);
	else
		snprintf(gname, sizeof(gname), "%u", (unsigned int)st.st_gid);
	if (st.st_gid == 0 || (st.st_mode & 060) != 060)
		snprintf(advice, sizeof(advice), ": install the wafer udev rule to grant a group access");
	else if (!in_groups(st.st_gid))
		snprintf(advice, sizeof(advice), ": add the user to group %s, then log in again",
			 gname);
	snprintf(buf, len, " (mode %04o, group %s%s)", (unsigned int)(st.st_mode & 07777),
		 gname, advice);
}

static int open_index(int index, struct wafer_device_desc *desc)
{
	char path[64], hint[192];
	int fd, ret, e;

	snprintf(path, sizeof(path), WAFER_ACCEL_DIR "/accel%d", index);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		hint[0] = '\0';
		if (e == EACCES || e == EPERM)
			access_hint(path, hint, sizeof(hint));
		return wafer_set_error(-e, "cannot open %s: %s%s", path, strerror(e), hint);
	}
	ret = describe(fd, index, desc);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

/* Whether sysfs says accel@index belongs to wafer (no need to open it). */
static bool sysfs_is_wafer(int index)
{
	char path[96], link[256];
	const char *base;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/class/accel/accel%d/device/driver", index);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = '\0';
	base = strrchr(link, '/');
	return !strcmp(base ? base + 1 : link, WAFER_DRIVER_NAME);
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* Collects the N of every /dev/accel/accelN, sorted; returns the count. */
static int accel_indices(int *idx, int max)
{
	DIR *dir = opendir(WAFER_ACCEL_DIR);
	struct dirent *de;
	int n = 0;

	if (!dir)
		return errno == ENOENT ? 0 :
			wafer_set_error(-errno, "cannot read " WAFER_ACCEL_DIR ": %s",
					strerror(errno));
	while ((de = readdir(dir)) && n < max) {
		char *end;
		long v;

		if (strncmp(de->d_name, "accel", 5) != 0)
			continue;
		v = strtol(de->d_name + 5, &end, 10);
		if (end == de->d_name + 5 || *end || v < 0 || v > 4095)
			continue;
		idx[n++] = (int)v;
	}
	closedir(dir);
	qsort(idx, n, sizeof(*idx), cmp_int);
	return n;
}

int wafer_list_devices(struct wafer_device_desc *out, int max)
{
	int idx[256], n, i, found = 0, denied = 0;
	char denied_msg[256] = "";

	if (max < 0 || (max > 0 && !out))
		return wafer_set_error(-EINVAL, "wafer_list_devices: bad output array");
	n = accel_indices(idx, 256);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		struct wafer_device_desc d;
		int fd = open_index(idx[i], &d);

		if (fd < 0) {
			/* Remembered so that "no devices" does not hide a permission problem. */
			if ((fd == -EACCES || fd == -EPERM) && !denied && sysfs_is_wafer(idx[i])) {
				denied = fd;
				snprintf(denied_msg, sizeof(denied_msg), "%s", wafer_last_error());
			}
			continue;
		}
		close(fd);
		if (found < max)
			out[found] = d;
		found++;
	}
	if (!found && denied)
		return wafer_set_error(denied, "%s", denied_msg);
	return found;
}

int wafer_open_device(int index)
{
	int idx[256], n, i;

	if (index >= 0)
		return open_index(index, NULL);
	if (index != -1)
		return wafer_set_error(-EINVAL, "device index %d is invalid", index);
	n = accel_indices(idx, 256);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		int fd = open_index(idx[i], NULL);

		if (fd >= 0)
			return fd;
	}
	return wafer_set_error(-ENOENT, "no wafer device found in " WAFER_ACCEL_DIR);
}
