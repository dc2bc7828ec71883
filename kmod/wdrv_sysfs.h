/* SPDX-License-Identifier: GPL-2.0-only */
/* wafer sysfs: the platform driver's dev_groups. */
#ifndef WDRV_SYSFS_H
#define WDRV_SYSFS_H

struct attribute_group;
struct wdrv_device;

extern const struct attribute_group *wdrv_sysfs_groups[];

void wdrv_sysfs_init(struct wdrv_device *wdev);
void wdrv_sysfs_fini(struct wdrv_device *wdev);

#endif /* WDRV_SYSFS_H */
