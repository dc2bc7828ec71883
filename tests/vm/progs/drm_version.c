// SPDX-License-Identifier: MIT
/*
 * VM test: every /dev/accel/accelN the module created answers
 * DRM_IOCTL_VERSION (through libdrm's drmGetVersion) as driver "wafer".
 * Usage: drm_version EXPECTED_DEVICE_COUNT
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xf86drm.h>

int main(int argc, char **argv)
{
	int expected = argc > 1 ? atoi(argv[1]) : 1, i, failed = 0;

	for (i = 0; i < expected; i++) {
		char path[64];
		drmVersionPtr v;
		int fd;

		snprintf(path, sizeof(path), "/dev/accel/accel%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			printf("not ok - open %s: %s\n", path, strerror(errno));
			failed++;
			continue;
		}
		v = drmGetVersion(fd);
		if (!v) {
			printf("not ok - drmGetVersion %s: %s\n", path, strerror(errno));
			failed++;
		} else if (strcmp(v->name, "wafer") != 0) {
			printf("not ok - %s driver name is '%s'\n", path, v->name);
			failed++;
		} else {
			printf("ok - %s is %s %d.%d.%d (%s)\n", path, v->name,
			       v->version_major, v->version_minor,
			       v->version_patchlevel, v->desc);
		}
		if (v)
			drmFreeVersion(v);
		close(fd);
	}
	/* One more than asked for must not exist. */
	{
		char path[64];

		snprintf(path, sizeof(path), "/dev/accel/accel%d", expected);
		if (access(path, F_OK) == 0) {
			printf("not ok - %s exists but only %d devices were asked for\n",
			       path, expected);
			failed++;
		} else {
			printf("ok - no device beyond accel%d\n", expected - 1);
		}
	}
	return failed ? 1 : 0;
}
