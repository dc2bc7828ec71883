// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: the device's model table (wdrv_model_table.c).  Two models of one
 * file and of two files side by side, unloaded in either order; the
 * device's limit (the firmware's, 1 before ABI 1.4) and the per-file one;
 * a closing owner takes only its models; orphans are firmware ids the
 * table does not know; a full reset loses every model but keeps them
 * findable by their owners; the models in the firmware's index order
 * (debugfs experts' sections), lost ones left out.
 */
#include <kunit/test.h>

#include "wdrv_model.h"

/* Two files: only their addresses matter to the table. */
static const struct wdrv_file *const file_a = (const struct wdrv_file *)0x1000;
static const struct wdrv_file *const file_b = (const struct wdrv_file *)0x2000;

#define ABI_1_4 ((1u << 16) | 4)
#define ABI_1_3 ((1u << 16) | 3)

static void model_init(struct wdrv_model *m, const struct wdrv_file *owner, u32 fw_id)
{
	*m = (struct wdrv_model){ .owner = (struct wdrv_file *)owner, .fw_id = fw_id };
}

/* Enters @m for its owner, with @held models of the owner already. */
static int add(struct wdrv_model_table *t, struct wdrv_model *m, u32 held, u32 file_max)
{
	return wdrv_model_table_add(t, m, held, file_max);
}

static void wdrv_test_model_table_limit_per_abi(struct kunit *test)
{
	struct wdrv_model_table t;

	wdrv_model_table_init(&t, ABI_1_4);
	KUNIT_EXPECT_EQ(test, t.max, (u32)WDRV_MAX_MODELS);
	KUNIT_EXPECT_EQ(test, wdrv_model_table_count(&t), 0u);
	wdrv_model_table_init(&t, ABI_1_3);
	KUNIT_EXPECT_EQ(test, t.max, 1u);
}

static void wdrv_test_model_table_two_models(struct kunit *test)
{
	struct wdrv_model_table t;
	struct wdrv_model a, b;
	int order;

	/* Unloaded first-in-first-out, then last-in-first-out. */
	for (order = 0; order < 2; order++) {
		wdrv_model_table_init(&t, ABI_1_4);
		model_init(&a, file_a, 0x101);
		model_init(&b, file_a, 0x102);
		KUNIT_ASSERT_EQ(test, add(&t, &a, 0, 4), 0);
		KUNIT_ASSERT_EQ(test, add(&t, &b, 1, 4), 0);
		KUNIT_EXPECT_NE(test, a.id, 0u);
		KUNIT_EXPECT_NE(test, a.id, b.id);
		KUNIT_EXPECT_EQ(test, wdrv_model_table_count(&t), 2u);
		KUNIT_EXPECT_PTR_EQ(test, wdrv_model_table_find(&t, file_a, a.id), &a);
		KUNIT_EXPECT_PTR_EQ(test, wdrv_model_table_find(&t, file_a, b.id), &b);
		KUNIT_EXPECT_NULL(test, wdrv_model_table_find(&t, file_b, a.id));
		KUNIT_EXPECT_NULL(test, wdrv_model_table_find(&t, file_a, b.id + 1));

		KUNIT_EXPECT_TRUE(test, wdrv_model_table_del(&t, order ? &b : &a));
		/* The other one is untouched. */
		KUNIT_EXPECT_TRUE(test, wdrv_model_table_has(&t, order ? &a : &b));
		KUNIT_EXPECT_FALSE(test, wdrv_model_table_has(&t, order ? &b : &a));
		KUNIT_EXPECT_TRUE(test, wdrv_model_table_fw_known(&t, order ? 0x101 : 0x102));
		KUNIT_EXPECT_FALSE(test, wdrv_model_table_fw_known(&t, order ? 0x102 : 0x101));
		KUNIT_EXPECT_FALSE(test, wdrv_model_table_del(&t, order ? &b : &a));
		KUNIT_EXPECT_TRUE(test, wdrv_model_table_del(&t, order ? &a : &b));
		KUNIT_EXPECT_EQ(test, wdrv_model_table_count(&t), 0u);
	}
}

static void wdrv_test_model_table_limits(struct kunit *test)
{
	struct wdrv_model m[WDRV_MAX_MODELS + 1];
	struct wdrv_model_table t;
	u32 i;

	wdrv_model_table_init(&t, ABI_1_4);
	/* Per file: max_file_models; 0 allows none. */
	model_init(&m[0], file_a, 1);
	KUNIT_EXPECT_EQ(test, add(&t, &m[0], 0, 0), -EMFILE);
	KUNIT_EXPECT_EQ(test, add(&t, &m[0], 2, 2), -EMFILE);
	KUNIT_EXPECT_EQ(test, wdrv_model_table_count(&t), 0u);
	/* Per device: the firmware's limit, whichever files hold them. */
	for (i = 0; i < WDRV_MAX_MODELS; i++) {
		model_init(&m[i], i & 1 ? file_b : file_a, 0x100 + i);
		KUNIT_EXPECT_EQ(test, add(&t, &m[i], i / 2, 4), 0);
	}
	model_init(&m[i], file_b, 0x200);
	KUNIT_EXPECT_EQ(test, add(&t, &m[i], 0, 4), -EBUSY);
	/* A freed slot takes the next one, under a new id. */
	KUNIT_EXPECT_TRUE(test, wdrv_model_table_del(&t, &m[1]));
	KUNIT_EXPECT_EQ(test, add(&t, &m[i], 0, 4), 0);
	KUNIT_EXPECT_GT(test, m[i].id, m[WDRV_MAX_MODELS - 1].id);

	/* Before ABI 1.4 the device holds one. */
	wdrv_model_table_init(&t, ABI_1_3);
	KUNIT_EXPECT_EQ(test, add(&t, &m[0], 0, 4), 0);
	KUNIT_EXPECT_EQ(test, add(&t, &m[1], 0, 4), -EBUSY);
}

/* What wdrv_file_release_models() walks: the closing file's models only. */
static void wdrv_test_model_table_owner_close(struct kunit *test)
{
	struct wdrv_model a1, b1, a2, *m;
	struct wdrv_model_table t;
	u32 n = 0;

	wdrv_model_table_init(&t, ABI_1_4);
	model_init(&a1, file_a, 0x101);
	model_init(&b1, file_b, 0x102);
	model_init(&a2, file_a, 0x103);
	KUNIT_ASSERT_EQ(test, add(&t, &a1, 0, 4), 0);
	KUNIT_ASSERT_EQ(test, add(&t, &b1, 0, 4), 0);
	KUNIT_ASSERT_EQ(test, add(&t, &a2, 1, 4), 0);
	/* Disowned models (refs of contexts left) stay until released. */
	while ((m = wdrv_model_table_owned(&t, file_a))) {
		KUNIT_EXPECT_TRUE(test, m == &a1 || m == &a2);
		m->owner = NULL;
		n++;
	}
	KUNIT_EXPECT_EQ(test, n, 2u);
	KUNIT_EXPECT_EQ(test, wdrv_model_table_count(&t), 3u);
	KUNIT_EXPECT_PTR_EQ(test, wdrv_model_table_owned(&t, file_b), &b1);
	KUNIT_EXPECT_NULL(test, wdrv_model_table_find(&t, file_a, a1.id));
	KUNIT_EXPECT_TRUE(test, wdrv_model_table_has(&t, &a1));
	KUNIT_EXPECT_TRUE(test, wdrv_model_table_del(&t, &a1));
	KUNIT_EXPECT_TRUE(test, wdrv_model_table_del(&t, &a2));
	KUNIT_EXPECT_TRUE(test, wdrv_model_table_has(&t, &b1));
}

/* Orphan scan and full reset: what the firmware holds vs the table. */
static void wdrv_test_model_table_orphans_and_reset(struct kunit *test)
{
	struct wdrv_model_table t;
	struct wdrv_model a, b;

	wdrv_model_table_init(&t, ABI_1_4);
	model_init(&a, file_a, 0x101);
	model_init(&b, file_b, 0x102);
	KUNIT_ASSERT_EQ(test, add(&t, &a, 0, 4), 0);
	KUNIT_ASSERT_EQ(test, add(&t, &b, 0, 4), 0);
	KUNIT_EXPECT_TRUE(test, wdrv_model_table_fw_known(&t, 0x101));
	KUNIT_EXPECT_FALSE(test, wdrv_model_table_fw_known(&t, 0x103));
	KUNIT_EXPECT_FALSE(test, wdrv_model_table_fw_known(&t, 0));
	/* A full reset for an orphan would fail both models' jobs. */
	KUNIT_EXPECT_EQ(test, wdrv_model_table_others(&t, 0x103), 2u);
	KUNIT_EXPECT_EQ(test, wdrv_model_table_others(&t, 0x101), 1u);

	wdrv_model_table_lose_all(&t);
	KUNIT_EXPECT_EQ(test, wdrv_model_table_others(&t, 0x103), 0u);
	/* Nothing is sent about them; their owners still find them. */
	KUNIT_EXPECT_FALSE(test, wdrv_model_table_has(&t, &a));
	KUNIT_EXPECT_FALSE(test, wdrv_model_table_fw_known(&t, 0x101));
	KUNIT_EXPECT_PTR_EQ(test, wdrv_model_table_find(&t, file_b, b.id), &b);
	KUNIT_EXPECT_EQ(test, wdrv_model_table_count(&t), 2u);
	KUNIT_EXPECT_TRUE(test, wdrv_model_table_del(&t, &a));
	KUNIT_EXPECT_TRUE(test, wdrv_model_table_del(&t, &b));
}

/* Firmware index order, whatever the slots; lost and loading models left out. */
static void wdrv_test_model_table_fw_order(struct kunit *test)
{
	struct wdrv_model *out[WDRV_MAX_MODELS];
	struct wdrv_model_table t;
	struct wdrv_model a, b, c, d;

	wdrv_model_table_init(&t, ABI_1_4);
	model_init(&a, file_a, 0x302);
	model_init(&b, file_b, 0x500);
	model_init(&c, file_a, 0x101);
	model_init(&d, file_b, 0);	/* its load not complete */
	KUNIT_ASSERT_EQ(test, add(&t, &a, 0, 4), 0);
	KUNIT_ASSERT_EQ(test, add(&t, &b, 0, 4), 0);
	KUNIT_ASSERT_EQ(test, add(&t, &c, 1, 4), 0);
	KUNIT_ASSERT_EQ(test, add(&t, &d, 1, 4), 0);
	KUNIT_ASSERT_EQ(test, wdrv_model_table_fw_order(&t, out), 3u);
	KUNIT_EXPECT_PTR_EQ(test, out[0], &b);
	KUNIT_EXPECT_PTR_EQ(test, out[1], &c);
	KUNIT_EXPECT_PTR_EQ(test, out[2], &a);
	KUNIT_EXPECT_TRUE(test, wdrv_model_table_del(&t, &b));
	KUNIT_ASSERT_EQ(test, wdrv_model_table_fw_order(&t, out), 2u);
	KUNIT_EXPECT_PTR_EQ(test, out[0], &c);
	KUNIT_EXPECT_PTR_EQ(test, out[1], &a);
	wdrv_model_table_lose_all(&t);
	KUNIT_EXPECT_EQ(test, wdrv_model_table_fw_order(&t, out), 0u);
	KUNIT_EXPECT_TRUE(test, wdrv_model_table_del(&t, &a));
	KUNIT_EXPECT_TRUE(test, wdrv_model_table_del(&t, &c));
	KUNIT_EXPECT_TRUE(test, wdrv_model_table_del(&t, &d));
}

static struct kunit_case wdrv_model_test_cases[] = {
	KUNIT_CASE(wdrv_test_model_table_limit_per_abi),
	KUNIT_CASE(wdrv_test_model_table_two_models),
	KUNIT_CASE(wdrv_test_model_table_limits),
	KUNIT_CASE(wdrv_test_model_table_owner_close),
	KUNIT_CASE(wdrv_test_model_table_orphans_and_reset),
	KUNIT_CASE(wdrv_test_model_table_fw_order),
	{}
};

static struct kunit_suite wdrv_model_test_suite = {
	.name = "wdrv_model_table",
	.test_cases = wdrv_model_test_cases,
};

kunit_test_suite(wdrv_model_test_suite);
