// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: device lifetime.  Binding a wafer platform device registers an
 * accel minor named "wafer"; unbinding unplugs it; repeated cycles leave
 * nothing behind (kmemleak and the DRM core would complain).
 */
#include <kunit/test.h>
#include <linux/platform_device.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>

#include "wdrv_drv.h"

/* Far above any num_devices index, so it cannot clash with the module's. */
#define WDRV_TEST_PDEV_ID 900

static void wdrv_test_bind_registers_accel(struct kunit *test)
{
	struct platform_device *pdev;
	struct wdrv_device *wdev;

	pdev = platform_device_register_simple(WDRV_DRIVER_NAME,
					       WDRV_TEST_PDEV_ID, NULL, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pdev));

	wdev = platform_get_drvdata(pdev);
	KUNIT_ASSERT_NOT_NULL(test, wdev);
	KUNIT_EXPECT_STREQ(test, wdev->drm.driver->name, "wafer");
	KUNIT_EXPECT_NOT_NULL(test, wdev->drm.accel);
	KUNIT_EXPECT_TRUE(test, wdev->drm.registered);
	KUNIT_EXPECT_EQ(test, wdev->index, WDRV_TEST_PDEV_ID);

	platform_device_unregister(pdev);
}

static void wdrv_test_bind_unbind_cycles(struct kunit *test)
{
	int i;

	for (i = 0; i < 8; i++) {
		struct platform_device *pdev;

		pdev = platform_device_register_simple(WDRV_DRIVER_NAME,
						       WDRV_TEST_PDEV_ID + i,
						       NULL, 0);
		KUNIT_ASSERT_FALSE(test, IS_ERR(pdev));
		KUNIT_EXPECT_NOT_NULL(test, platform_get_drvdata(pdev));
		platform_device_unregister(pdev);
	}
}

static void wdrv_test_num_devices_range(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, wdrv_check_num_devices(0), -EINVAL);
	KUNIT_EXPECT_EQ(test, wdrv_check_num_devices(1), 0);
	/* One host's share of the longest chain (128 devices over hosts). */
	KUNIT_EXPECT_EQ(test, wdrv_check_num_devices(64), 0);
	KUNIT_EXPECT_EQ(test, wdrv_check_num_devices(65), -EINVAL);
	KUNIT_EXPECT_EQ(test, wdrv_check_num_devices(WDRV_MAX_DEVICES), 0);
	KUNIT_EXPECT_EQ(test, wdrv_check_num_devices(WDRV_MAX_DEVICES + 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, wdrv_check_num_devices(UINT_MAX), -EINVAL);
}

static struct kunit_case wdrv_drv_test_cases[] = {
	KUNIT_CASE(wdrv_test_bind_registers_accel),
	KUNIT_CASE(wdrv_test_bind_unbind_cycles),
	KUNIT_CASE(wdrv_test_num_devices_range),
	{}
};

static struct kunit_suite wdrv_drv_test_suite = {
	.name = "wdrv_drv",
	.test_cases = wdrv_drv_test_cases,
};

kunit_test_suite(wdrv_drv_test_suite);
