// SPDX-License-Identifier: GPL-2.0-only
/*
 * wafer: DRM accel driver for a simulated wafer-scale LLM inference device.
 *
 * The simulated devices are platform devices the module creates itself, one
 * per num_devices, so that they can be unbound and rebound through sysfs
 * like real hardware.  Each bound device registers /dev/accel/accelN.
 */
#include <linux/module.h>
#include <linux/platform_device.h>

#include <drm/drm_accel.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>

#include "wafer_drv.h"

static unsigned int num_devices = 1;
module_param(num_devices, uint, 0444);
MODULE_PARM_DESC(num_devices, "Number of simulated devices to create (1-16, default 1)");

DEFINE_DRM_ACCEL_FOPS(wafer_accel_fops);

static const struct drm_driver wafer_drm_driver = {
	.driver_features = DRIVER_COMPUTE_ACCEL | DRIVER_GEM,
	.fops = &wafer_accel_fops,
	.name = WAFER_DRIVER_NAME,
	.desc = WAFER_DRIVER_DESC,
	.major = WAFER_DRIVER_MAJOR,
	.minor = WAFER_DRIVER_MINOR,
	.patchlevel = WAFER_DRIVER_PATCHLEVEL,
};

static int wafer_probe(struct platform_device *pdev)
{
	struct wafer_device *wdev;
	int ret;

	wdev = devm_drm_dev_alloc(&pdev->dev, &wafer_drm_driver,
				  struct wafer_device, drm);
	if (IS_ERR(wdev))
		return PTR_ERR(wdev);
	wdev->index = pdev->id;
	platform_set_drvdata(pdev, wdev);

	ret = drm_dev_register(&wdev->drm, 0);
	if (ret)
		return dev_err_probe(&pdev->dev, ret, "drm_dev_register failed\n");
	wafer_debugfs_init(wdev);
	return 0;
}

static void wafer_remove(struct platform_device *pdev)
{
	struct wafer_device *wdev = platform_get_drvdata(pdev);

	drm_dev_unplug(&wdev->drm);
}

static struct platform_driver wafer_platform_driver = {
	.probe = wafer_probe,
	.remove = wafer_remove,
	.driver = {
		.name = WAFER_DRIVER_NAME,
	},
};

static struct platform_device *wafer_pdevs[WAFER_MAX_DEVICES];

static void wafer_destroy_devices(void)
{
	int i;

	for (i = WAFER_MAX_DEVICES - 1; i >= 0; i--) {
		if (wafer_pdevs[i])
			platform_device_unregister(wafer_pdevs[i]);
		wafer_pdevs[i] = NULL;
	}
}

/**
 * wafer_check_num_devices() - validate the num_devices module parameter
 * @n: the requested device count
 *
 * Return: 0, or -EINVAL (with a message) when @n is outside 1..16.
 */
int wafer_check_num_devices(unsigned int n)
{
	if (n < 1 || n > WAFER_MAX_DEVICES) {
		pr_err("wafer: num_devices=%u is out of range 1..%d\n",
		       n, WAFER_MAX_DEVICES);
		return -EINVAL;
	}
	return 0;
}

static int __init wafer_init(void)
{
	unsigned int i;
	int ret;

	ret = wafer_check_num_devices(num_devices);
	if (ret)
		return ret;

	ret = platform_driver_register(&wafer_platform_driver);
	if (ret)
		return ret;

	for (i = 0; i < num_devices; i++) {
		struct platform_device *pdev;

		pdev = platform_device_register_simple(WAFER_DRIVER_NAME, i,
						       NULL, 0);
		if (IS_ERR(pdev)) {
			ret = PTR_ERR(pdev);
			pr_err("wafer: creating device %u failed: %d\n", i, ret);
			wafer_destroy_devices();
			platform_driver_unregister(&wafer_platform_driver);
			return ret;
		}
		wafer_pdevs[i] = pdev;
	}
	return 0;
}

static void __exit wafer_exit(void)
{
	wafer_destroy_devices();
	platform_driver_unregister(&wafer_platform_driver);
}

module_init(wafer_init);
module_exit(wafer_exit);

MODULE_DESCRIPTION(WAFER_DRIVER_DESC);
MODULE_LICENSE("GPL");
