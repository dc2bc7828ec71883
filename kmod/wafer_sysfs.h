/* SPDX-License-Identifier: GPL-2.0-only */
/* wafer sysfs: the platform driver's dev_groups. */
#ifndef WAFER_SYSFS_H
#define WAFER_SYSFS_H

struct attribute_group;
struct wafer_device;

extern const struct attribute_group *wafer_sysfs_groups[];

void wafer_sysfs_init(struct wafer_device *wdev);
void wafer_sysfs_fini(struct wafer_device *wdev);

#endif /* WAFER_SYSFS_H */
