// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: firmware-sim pieces as built into the kernel: ring index
 * arithmetic across the u32 wrap, the SRAM arena allocator, and the model
 * blob validator on malformed input.
 */
#include <kunit/test.h>
#include <linux/slab.h>

#include "wfs_model.h"
#include "wfs_ring.h"
#include "wfs_sram.h"
#include "wt_tinyblob.h"

static void wdrv_test_ring_wrap(struct kunit *test)
{
	u32 head = U32_MAX - 2, tail = head, i;

	KUNIT_EXPECT_TRUE(test, wfs_ring_empty(head, tail));
	for (i = 0; i < 8; i++)
		tail++;			/* crosses 2^32 */
	KUNIT_EXPECT_EQ(test, wfs_ring_count(head, tail), 8u);
	KUNIT_EXPECT_TRUE(test, wfs_ring_full(head, tail, 8));
	KUNIT_EXPECT_EQ(test, wfs_ring_space(head, tail, 16), 8u);
	KUNIT_EXPECT_TRUE(test, wfs_ring_indices_valid(head, tail, 8));
	KUNIT_EXPECT_FALSE(test, wfs_ring_indices_valid(head, tail + 1, 8));
	KUNIT_EXPECT_EQ(test, wfs_ring_slot(tail, 8), wfs_ring_slot(head, 8));
	KUNIT_EXPECT_EQ(test, wfs_ring_slot(0, 8), 0u);
	KUNIT_EXPECT_EQ(test, wfs_ring_slot(U32_MAX, 8), 7u);
	KUNIT_EXPECT_TRUE(test, wfs_ring_size_valid(256, 4096));
	KUNIT_EXPECT_FALSE(test, wfs_ring_size_valid(255, 4096));
	KUNIT_EXPECT_FALSE(test, wfs_ring_size_valid(1, 4096));
	KUNIT_EXPECT_FALSE(test, wfs_ring_size_valid(8192, 4096));
}

static void wdrv_test_sram_arena(struct kunit *test)
{
	const u64 bytes = 64 * 1024;
	struct wfs_sram_block *blocks;
	struct wfs_sram *s;
	void *mem, *a, *b, *c;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	blocks = kunit_kcalloc(test, 16, sizeof(*blocks), GFP_KERNEL);
	mem = kunit_kzalloc(test, bytes, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	KUNIT_ASSERT_NOT_NULL(test, blocks);
	KUNIT_ASSERT_NOT_NULL(test, mem);
	KUNIT_ASSERT_EQ(test, wfs_sram_init(s, mem, bytes, blocks, 16), 0);

	a = wfs_sram_alloc(s, 1000, 0, "a");
	b = wfs_sram_alloc(s, 4096, 4096, "b");
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_EXPECT_TRUE(test, IS_ALIGNED((unsigned long)b, 4096));
	KUNIT_EXPECT_LE(test, wfs_sram_free_bytes(s), bytes - 1000 - 4096);
	/* Exhaustion fails cleanly, and freeing makes room again. */
	KUNIT_EXPECT_NULL(test, wfs_sram_alloc(s, bytes, 0, "too big"));
	KUNIT_EXPECT_EQ(test, wfs_sram_free(s, a), 0);
	KUNIT_EXPECT_EQ(test, wfs_sram_free(s, a), -WFS_ENOENT);
	KUNIT_EXPECT_EQ(test, wfs_sram_free(s, (char *)b + 8), -WFS_ENOENT);
	c = wfs_sram_alloc(s, 512, 0, "c");
	KUNIT_EXPECT_NOT_NULL(test, c);
	KUNIT_EXPECT_EQ(test, wfs_sram_block_size(U64_MAX), U64_MAX);
	wfs_sram_reset(s);
	KUNIT_EXPECT_GE(test, wfs_sram_largest_free(s), bytes - WFS_SRAM_MAX_ALIGN);
}

static void wdrv_test_blob_valid(struct kunit *test)
{
	struct wfs_model_info *info;
	u8 *buf;
	int v;

	buf = kunit_kzalloc(test, WT_TINY_MAX, GFP_KERNEL);
	info = kunit_kzalloc(test, sizeof(*info), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_NOT_NULL(test, info);
	for (v = 0; v < WT_TINY_NVARIANTS; v++) {
		size_t len = wt_tiny_build(buf, v);

		KUNIT_EXPECT_EQ_MSG(test, wfs_model_parse(buf, len, info), 0, "variant %d", v);
	}
}

/*
 * Every truncation and every single-byte corruption of the header and
 * section table is rejected or parsed, never read out of bounds (KASAN
 * kernels would report that).
 */
static void wdrv_test_blob_malformed(struct kunit *test)
{
	struct wfs_model_info *info;
	size_t len, cut, i;
	u8 *buf, *copy;
	int rejected = 0;

	buf = kunit_kzalloc(test, WT_TINY_MAX, GFP_KERNEL);
	info = kunit_kzalloc(test, sizeof(*info), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_NOT_NULL(test, info);
	len = wt_tiny_build(buf, WT_TINY_INT8);

	for (cut = 0; cut < len; cut++) {
		/* An exact-size copy, so any overread is past the allocation. */
		copy = kmemdup(buf, cut ? cut : 1, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, copy);
		KUNIT_EXPECT_LT_MSG(test, wfs_model_parse(copy, cut, info), 0,
				    "truncated to %zu of %zu bytes", cut, len);
		kfree(copy);
	}
	copy = kunit_kzalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, copy);
	for (i = 0; i < 256 && i < len; i++) {
		memcpy(copy, buf, len);
		copy[i] ^= 0xff;
		if (wfs_model_parse(copy, len, info) < 0)
			rejected++;
	}
	/* The header's magic, version and sizes are all checked. */
	KUNIT_EXPECT_GT(test, rejected, 32);
	memcpy(copy, buf, len);
	copy[0] ^= 1;
	KUNIT_EXPECT_LT(test, wfs_model_parse(copy, len, info), 0);
}

static struct kunit_case wdrv_fw_test_cases[] = {
	KUNIT_CASE(wdrv_test_ring_wrap),
	KUNIT_CASE(wdrv_test_sram_arena),
	KUNIT_CASE(wdrv_test_blob_valid),
	KUNIT_CASE(wdrv_test_blob_malformed),
	{}
};

static struct kunit_suite wdrv_fw_test_suite = {
	.name = "wdrv_firmware",
	.test_cases = wdrv_fw_test_cases,
};

kunit_test_suite(wdrv_fw_test_suite);
