/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wafer: DRM accel driver for a simulated wafer-scale LLM inference device.
 * Device core: the per-device structure every other file builds on.
 */
#ifndef WAFER_DRV_H
#define WAFER_DRV_H

#include <drm/drm_device.h>

#define WAFER_DRIVER_NAME	"wafer"
#define WAFER_DRIVER_DESC	"Simulated wafer-scale LLM inference accelerator"
#define WAFER_DRIVER_MAJOR	0
#define WAFER_DRIVER_MINOR	1
#define WAFER_DRIVER_PATCHLEVEL	0

#define WAFER_MAX_DEVICES	16

/**
 * struct wafer_device - one simulated accelerator
 * @drm: the DRM device; /dev/accel/accelN
 * @index: index among the devices this module created (0..num_devices-1)
 */
struct wafer_device {
	struct drm_device drm;
	unsigned int index;
};

static inline struct wafer_device *to_wafer_device(struct drm_device *drm)
{
	return container_of(drm, struct wafer_device, drm);
}

int wafer_check_num_devices(unsigned int n);

#ifdef CONFIG_DEBUG_FS
void wafer_debugfs_init(struct wafer_device *wdev);
#else
static inline void wafer_debugfs_init(struct wafer_device *wdev) { }
#endif

#endif /* WAFER_DRV_H */
