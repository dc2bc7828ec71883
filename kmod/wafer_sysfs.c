// SPDX-License-Identifier: GPL-2.0-only
/*
 * wafer sysfs: read-only device attributes on the platform device
 * (/sys/class/accel/accelN/device/): the device's shape and counters.
 */
#include <linux/device.h>
#include <linux/slab.h>
#include <linux/stddef.h>
#include <linux/sysfs.h>

#include <drm/drm_drv.h>

#include "wafer_drv.h"
#include "wafer_job.h"
#include "wafer_sysfs.h"

static struct wafer_device *dev_wdev(struct device *dev)
{
	return dev_get_drvdata(dev);
}

static ssize_t stages_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", dev_wdev(dev)->fw.info.num_stages);
}
static DEVICE_ATTR_RO(stages);

static ssize_t sram_bytes_per_stage_show(struct device *dev, struct device_attribute *attr,
					 char *buf)
{
	return sysfs_emit(buf, "%llu\n", dev_wdev(dev)->fw.info.sram_bytes);
}
static DEVICE_ATTR_RO(sram_bytes_per_stage);

static ssize_t profile_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	const struct wfw_info *i = &dev_wdev(dev)->fw.info;

	return sysfs_emit(buf, "%.*s\n", (int)sizeof(i->profile_name), i->profile_name);
}
static DEVICE_ATTR_RO(profile);

static ssize_t numa_node_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", dev_wdev(dev)->numa_node);
}

/* "numa_node" is taken by the driver core on NUMA kernels: name it apart. */
static struct device_attribute dev_attr_wafer_numa_node =
	__ATTR(wafer_numa_node, 0444, numa_node_show, NULL);

static ssize_t fw_version_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	const struct wfw_info *i = &dev_wdev(dev)->fw.info;

	return sysfs_emit(buf, "%u.%u (firmware %u.%u.%u)\n",
			  WFW_ABI_VERSION_MAJOR(i->abi_version),
			  WFW_ABI_VERSION_MINOR(i->abi_version),
			  i->fw_version >> 16, (i->fw_version >> 8) & 0xff,
			  i->fw_version & 0xff);
}
static DEVICE_ATTR_RO(fw_version);

static ssize_t busy_ns_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", wafer_job_queue_busy_ns(dev_wdev(dev)));
}
static DEVICE_ATTR_RO(busy_ns);

static ssize_t jobs_completed_show(struct device *dev, struct device_attribute *attr,
				   char *buf)
{
	return sysfs_emit(buf, "%llu\n", wafer_job_queue_completed(dev_wdev(dev)));
}
static DEVICE_ATTR_RO(jobs_completed);

/* Counters the firmware keeps (GET_INFO), read fresh. */
static ssize_t fw_counter_show(struct device *dev, char *buf, size_t offset)
{
	struct wafer_device *wdev = dev_wdev(dev);
	struct wfw_cpl cpl;
	struct wfw_info *fi;
	ssize_t ret;
	int idx;

	if (!drm_dev_enter(&wdev->drm, &idx))
		return -ENODEV;
	fi = kzalloc(sizeof(*fi), GFP_KERNEL);
	ret = fi ? wafer_fw_ctrl_read(&wdev->fw, WFW_OP_GET_INFO, 0, 0, fi, sizeof(*fi), &cpl) :
		   -ENOMEM;
	if (!ret)
		ret = sysfs_emit(buf, "%llu\n", *(u64 *)((u8 *)fi + offset));
	kfree(fi);
	drm_dev_exit(idx);
	return ret;
}

#define WAFER_FW_COUNTER_ATTR(name, field)					\
static ssize_t name##_show(struct device *dev, struct device_attribute *attr,	\
			   char *buf)						\
{										\
	return fw_counter_show(dev, buf, offsetof(struct wfw_info, field));	\
}										\
static DEVICE_ATTR_RO(name)

/* Tokens the device ran, and the modelled time from first job to last. */
WAFER_FW_COUNTER_ATTR(tokens, tokens);
WAFER_FW_COUNTER_ATTR(modelled_makespan_ns, modelled_makespan_ns);
/* Modelled busy time of the busiest stage: the pipeline's bottleneck. */
WAFER_FW_COUNTER_ATTR(bottleneck_busy_ns, bottleneck_busy_ns);

static struct attribute *wafer_attrs[] = {
	&dev_attr_stages.attr,
	&dev_attr_sram_bytes_per_stage.attr,
	&dev_attr_profile.attr,
	&dev_attr_wafer_numa_node.attr,
	&dev_attr_fw_version.attr,
	&dev_attr_busy_ns.attr,
	&dev_attr_jobs_completed.attr,
	&dev_attr_tokens.attr,
	&dev_attr_modelled_makespan_ns.attr,
	&dev_attr_bottleneck_busy_ns.attr,
	NULL
};

static const struct attribute_group wafer_attr_group = {
	.attrs = wafer_attrs,
};

const struct attribute_group *wafer_sysfs_groups[] = {
	&wafer_attr_group,
	NULL
};
