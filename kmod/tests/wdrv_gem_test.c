// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: wdrv_gem_vmap() gives a wafer BO's mapping in system memory and
 * refuses a BO that maps as I/O memory (as an imported dma-buf of some
 * exporters does), leaving no mapping behind.  Included by wdrv_gem.c.
 */
#include <kunit/test.h>
#include <linux/platform_device.h>

/* Far above any num_devices index, and apart from wdrv_drv_test's. */
#define WDRV_GEM_TEST_PDEV_ID 950

static u8 wdrv_test_iomem[64];
static int wdrv_test_iomem_vunmaps;

static int wdrv_test_iomem_vmap(struct drm_gem_object *obj, struct iosys_map *map)
{
	iosys_map_set_vaddr_iomem(map, (void __iomem __force *)wdrv_test_iomem);
	return 0;
}

static void wdrv_test_iomem_vunmap(struct drm_gem_object *obj, struct iosys_map *map)
{
	wdrv_test_iomem_vunmaps++;
}

static void wdrv_test_iomem_free(struct drm_gem_object *obj)
{
	drm_gem_object_release(obj);
	kfree(obj);
}

static const struct drm_gem_object_funcs wdrv_test_iomem_funcs = {
	.free = wdrv_test_iomem_free,
	.vmap = wdrv_test_iomem_vmap,
	.vunmap = wdrv_test_iomem_vunmap,
};

static void wdrv_test_gem_vmap(struct kunit *test)
{
	struct drm_gem_shmem_object *shmem;
	struct platform_device *pdev;
	struct drm_gem_object *obj;
	struct wdrv_device *wdev;
	struct iosys_map map;

	pdev = platform_device_register_simple(WDRV_DRIVER_NAME, WDRV_GEM_TEST_PDEV_ID,
					       NULL, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pdev));
	wdev = platform_get_drvdata(pdev);
	KUNIT_ASSERT_NOT_NULL(test, wdev);

	/* A wafer BO: system memory. */
	shmem = drm_gem_shmem_create(&wdev->drm, PAGE_SIZE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(shmem));
	KUNIT_EXPECT_EQ(test, wdrv_gem_vmap(&shmem->base, &map), 0);
	KUNIT_EXPECT_FALSE(test, map.is_iomem);
	KUNIT_EXPECT_NOT_NULL(test, map.vaddr);
	drm_gem_vunmap_unlocked(&shmem->base, &map);
	drm_gem_object_put(&shmem->base);

	/* A BO whose exporter maps it as I/O memory: refused, unmapped. */
	obj = kzalloc(sizeof(*obj), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, obj);
	obj->funcs = &wdrv_test_iomem_funcs;
	drm_gem_private_object_init(&wdev->drm, obj, PAGE_SIZE);
	wdrv_test_iomem_vunmaps = 0;
	KUNIT_EXPECT_EQ(test, wdrv_gem_vmap(obj, &map), -EOPNOTSUPP);
	KUNIT_EXPECT_TRUE(test, iosys_map_is_null(&map));
	KUNIT_EXPECT_EQ(test, wdrv_test_iomem_vunmaps, 1);
	drm_gem_object_put(obj);

	platform_device_unregister(pdev);
}

static struct kunit_case wdrv_gem_test_cases[] = {
	KUNIT_CASE(wdrv_test_gem_vmap),
	{}
};

static struct kunit_suite wdrv_gem_test_suite = {
	.name = "wdrv_gem",
	.test_cases = wdrv_gem_test_cases,
};

kunit_test_suite(wdrv_gem_test_suite);
