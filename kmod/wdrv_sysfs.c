// SPDX-License-Identifier: GPL-2.0-only
/*
 * wafer sysfs: read-only device attributes on the platform device
 * (/sys/class/accel/accelN/device/): the device's shape and counters.
 * World-readable, so no read waits for the firmware or for a lock held
 * across a firmware command: each is served from the driver's state or a
 * cache that completions refresh.
 */
#include <linux/device.h>
#include <linux/slab.h>
#include <linux/stddef.h>
#include <linux/sysfs.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <drm/drm_drv.h>

#include "wdrv_drv.h"
#include "wdrv_job.h"
#include "wdrv_sysfs.h"

static struct wdrv_device *dev_wdev(struct device *dev)
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

/*
 * Models the device holds now (of every file) and at most: the count
 * changes under model_lock, but is read without it (a load may hold the
 * lock while it copies a blob).
 */
static ssize_t models_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", wdrv_model_table_count(&dev_wdev(dev)->models));
}
static DEVICE_ATTR_RO(models);

static ssize_t max_models_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", dev_wdev(dev)->models.max);
}
static DEVICE_ATTR_RO(max_models);

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
	return sysfs_emit(buf, "%llu\n", wdrv_job_queue_busy_ns(dev_wdev(dev)));
}
static DEVICE_ATTR_RO(busy_ns);

static ssize_t jobs_completed_show(struct device *dev, struct device_attribute *attr,
				   char *buf)
{
	return sysfs_emit(buf, "%llu\n", wdrv_job_queue_completed(dev_wdev(dev)));
}
static DEVICE_ATTR_RO(jobs_completed);

/*
 * The most imbalanced MoE layer of any model: GET_INFO's @fi describes the
 * first; with model 0 its index names each of the others in turn (a load
 * or unload meanwhile may shift them: the figure is informational).
 */
static u32 worst_moe_imbalance(struct wdrv_device *wdev, const struct wfw_info *fi)
{
	struct wfw_info *more = kzalloc(sizeof(*more), GFP_KERNEL);
	u32 worst = fi->moe_imbalance_milli, i;
	struct wfw_cpl cpl;

	for (i = 1; more && i < min_t(u32, fi->models, WDRV_MAX_MODELS); i++) {
		if (wdrv_fw_ctrl_read(&wdev->fw, WFW_OP_GET_INFO, i, 0, more, sizeof(*more),
				      &cpl))
			break;
		worst = max(worst, more->moe_imbalance_milli);
	}
	kfree(more);
	return worst;
}

/*
 * Counters the firmware keeps (GET_INFO), cached: every job completion
 * queues a refresh (struct wdrv_fw's @cpl_work), which runs GET_INFO on the
 * control ring.  A reader never waits for it, nor for the firmware: it is
 * served the cached values, and queues a refresh when they do not yet
 * cover every job completed.  tokens is counted by the driver itself from
 * the completions, so it is exact as soon as a job's completion arrived.
 */
static void fw_stats_work(struct work_struct *work)
{
	struct wdrv_fw_stats *st = container_of(work, struct wdrv_fw_stats, work);
	struct wdrv_device *wdev = container_of(st, struct wdrv_device, stats);
	struct wfw_info *fi = kzalloc(sizeof(*fi), GFP_KERNEL);
	struct wfw_cpl cpl;
	u64 completed;
	int ret = -ENODEV, idx;

	spin_lock(&st->lock);
	st->running = true;
	spin_unlock(&st->lock);
	/* Before GET_INFO, which the firmware runs after those jobs retired. */
	completed = wdrv_job_queue_completed(wdev);
	if (!fi) {
		ret = -ENOMEM;
	} else if (drm_dev_enter(&wdev->drm, &idx)) {
		ret = wdrv_fw_ctrl_read(&wdev->fw, WFW_OP_GET_INFO, 0, 0, fi, sizeof(*fi),
					&cpl);
		if (!ret)
			fi->moe_imbalance_milli = worst_moe_imbalance(wdev, fi);
		drm_dev_exit(idx);
	}
	spin_lock(&st->lock);
	if (!ret) {
		st->tokens = fi->tokens;
		st->makespan_ns = fi->modelled_makespan_ns;
		st->bottleneck_ns = fi->bottleneck_busy_ns;
		st->moe_imbalance = fi->moe_imbalance_milli;
		st->completed = completed;
		st->valid = true;
	}
	st->err = ret;
	st->running = false;
	st->gen++;
	spin_unlock(&st->lock);
	wake_up_all(&st->done);
	kfree(fi);
}

static ssize_t fw_counter_show(struct device *dev, char *buf, size_t offset)
{
	struct wdrv_device *wdev = dev_wdev(dev);
	struct wdrv_fw_stats *st = &wdev->stats;
	u64 want = wdrv_job_queue_completed(wdev), val;

	spin_lock(&st->lock);
	if (!st->valid || st->completed < want)
		queue_work(system_unbound_wq, &st->work);
	val = *(u64 *)((u8 *)st + offset);
	spin_unlock(&st->lock);
	return sysfs_emit(buf, "%llu\n", val);
}

#define WDRV_FW_COUNTER_ATTR(name, field)					\
static ssize_t name##_show(struct device *dev, struct device_attribute *attr,	\
			   char *buf)						\
{										\
	return fw_counter_show(dev, buf, offsetof(struct wdrv_fw_stats, field)); \
}										\
static DEVICE_ATTR_RO(name)

/* Tokens of the jobs that completed with status 0 (counted by the driver). */
static ssize_t tokens_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", wdrv_fw_tokens(&dev_wdev(dev)->fw));
}
static DEVICE_ATTR_RO(tokens);

/* The modelled time from first job to last. */
WDRV_FW_COUNTER_ATTR(modelled_makespan_ns, makespan_ns);
/* Modelled busy time of the busiest stage: the pipeline's bottleneck. */
WDRV_FW_COUNTER_ATTR(bottleneck_busy_ns, bottleneck_ns);
/*
 * 1000 * busiest expert / mean of the worst MoE layer of any model the
 * device holds (debugfs: experts, a section per model).
 */
WDRV_FW_COUNTER_ATTR(moe_imbalance_milli, moe_imbalance);

static struct attribute *wdrv_attrs[] = {
	&dev_attr_stages.attr,
	&dev_attr_sram_bytes_per_stage.attr,
	&dev_attr_profile.attr,
	&dev_attr_wafer_numa_node.attr,
	&dev_attr_fw_version.attr,
	&dev_attr_models.attr,
	&dev_attr_max_models.attr,
	&dev_attr_busy_ns.attr,
	&dev_attr_jobs_completed.attr,
	&dev_attr_tokens.attr,
	&dev_attr_modelled_makespan_ns.attr,
	&dev_attr_bottleneck_busy_ns.attr,
	&dev_attr_moe_imbalance_milli.attr,
	NULL
};

static const struct attribute_group wdrv_attr_group = {
	.attrs = wdrv_attrs,
};

const struct attribute_group *wdrv_sysfs_groups[] = {
	&wdrv_attr_group,
	NULL
};

/**
 * wdrv_sysfs_init() - set up the firmware counter cache
 * @wdev: the device
 */
void wdrv_sysfs_init(struct wdrv_device *wdev)
{
	spin_lock_init(&wdev->stats.lock);
	INIT_WORK(&wdev->stats.work, fw_stats_work);
	init_waitqueue_head(&wdev->stats.done);
	/* Set before the firmware is up, which completes no job before. */
	wdev->fw.cpl_work = &wdev->stats.work;
}

/**
 * wdrv_sysfs_fini() - stop refreshing the cache (the firmware is going)
 * @wdev: the device
 */
void wdrv_sysfs_fini(struct wdrv_device *wdev)
{
	/* No completion queues it again once it is cancelled. */
	wdrv_fw_stop_cpl_work(&wdev->fw);
	cancel_work_sync(&wdev->stats.work);
}
