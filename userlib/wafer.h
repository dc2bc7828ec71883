/* SPDX-License-Identifier: MIT */
/*
 * libwafer: the userspace library for wafer accelerators.
 *
 * Every call that can fail returns 0 (or a count) on success and a negative
 * errno value on failure; wafer_strerror() names the code and
 * wafer_last_error() says, for the calling thread, what exactly was wrong.
 */
#ifndef WAFER_H
#define WAFER_H

#ifdef __cplusplus
extern "C" {
#endif

/** Path prefix of the DRM accel nodes. */
#define WAFER_ACCEL_DIR "/dev/accel"

/**
 * struct wafer_device_desc - what wafer_list_devices() reports per device
 * @index: N in /dev/accel/accelN
 * @path: the device node
 * @drv_major: DRM driver version, major
 * @drv_minor: DRM driver version, minor
 * @drv_patchlevel: DRM driver version, patch level
 * @desc: the driver's description string
 */
struct wafer_device_desc {
	int index;
	char path[64];
	int drv_major;
	int drv_minor;
	int drv_patchlevel;
	char desc[128];
};

/**
 * wafer_list_devices() - find the wafer devices among /dev/accel/accel*
 * @out: array to fill, in ascending index order (may be NULL if @max is 0)
 * @max: capacity of @out
 *
 * A node counts as a wafer device when DRM_IOCTL_VERSION names the driver
 * "wafer"; nodes of other accel drivers are skipped.
 *
 * Return: the number of wafer devices found (may exceed @max: only @max are
 * written), or a negative errno.
 */
int wafer_list_devices(struct wafer_device_desc *out, int max);

/**
 * wafer_open_device() - open /dev/accel/accel@index after checking it is wafer
 * @index: accel index, or -1 for the first wafer device
 *
 * Return: an open file descriptor (O_RDWR | O_CLOEXEC), or a negative errno:
 * -ENOENT when there is no such device, -ENODEV when it is not a wafer device.
 */
int wafer_open_device(int index);

/** wafer_strerror() - a short name for a (negative or positive) errno code. */
const char *wafer_strerror(int err);

/** wafer_last_error() - the calling thread's message for its last failure. */
const char *wafer_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* WAFER_H */
