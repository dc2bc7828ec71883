// SPDX-License-Identifier: GPL-2.0-only
/*
 * wafer debugfs: telemetry and the test-only hooks, under
 * /sys/kernel/debug/accel/<minor>/.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kstrtox.h>

#include <drm/drm_accel.h>
#include <drm/drm_file.h>

#include "wafer_drv.h"

/*
 * Writing 1 makes the driver WARN once per write.  It exists so the VM
 * harness can prove that its kernel-log splat detector catches a warning.
 */
static ssize_t inject_warn_write(struct file *file, const char __user *ubuf,
				 size_t len, loff_t *ppos)
{
	struct wafer_device *wdev = file->private_data;
	bool on;
	int ret;

	ret = kstrtobool_from_user(ubuf, len, &on);
	if (ret)
		return ret;
	if (on)
		WARN(1, "wafer: accel%u: warning requested through debugfs inject_warn\n",
		     wdev->drm.accel->index);
	return len;
}

static const struct file_operations inject_warn_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = inject_warn_write,
	.llseek = noop_llseek,
};

/*
 * DRM creates the accel device's debugfs directory (accel/<unique>, e.g.
 * accel/wafer.0) but does not call drm_driver.debugfs_init for accel
 * minors, so the driver populates it after registering, as ivpu does.
 */
void wafer_debugfs_init(struct wafer_device *wdev)
{
	struct dentry *root = wdev->drm.debugfs_root;

	debugfs_create_file("inject_warn", 0200, root, wdev, &inject_warn_fops);
}
