/* SPDX-License-Identifier: GPL-2.0-only */
/* wafer sysfs: the platform driver's dev_groups. */
#ifndef WAFER_SYSFS_H
#define WAFER_SYSFS_H

struct attribute_group;

extern const struct attribute_group *wafer_sysfs_groups[];

#endif /* WAFER_SYSFS_H */
