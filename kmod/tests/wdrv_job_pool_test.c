// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: a file's job pool hands back the jobs put into it, zeroed, newest
 * first; keeps at most WDRV_JOB_POOL_MAX (the rest are freed: kmemleak and
 * KASAN on the debug kernel's VM runs would see a leak or a double free);
 * allocates when empty; and a drained pool is empty.
 *
 * Included at the end of wdrv_job_pool.c.
 */
#include <kunit/test.h>

static void pool_test_reuse_zeroed(struct kunit *test)
{
	struct wdrv_job_pool pool;
	struct wdrv_job *a, *b, *c;

	wdrv_job_pool_init(&pool);
	a = wdrv_job_pool_get(&pool, GFP_KERNEL);
	b = wdrv_job_pool_get(&pool, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_EXPECT_PTR_NE(test, a, b);
	KUNIT_EXPECT_EQ(test, atomic_read(&pool.n), 0);

	a->cookie = 7;
	a->layer_at = a;
	b->status = -EIO;
	wdrv_job_pool_put(&pool, a);
	wdrv_job_pool_put(&pool, b);
	KUNIT_EXPECT_EQ(test, atomic_read(&pool.n), 2);

	c = wdrv_job_pool_get(&pool, GFP_KERNEL);
	KUNIT_EXPECT_PTR_EQ(test, c, b);
	KUNIT_EXPECT_EQ(test, c->status, 0);
	c = wdrv_job_pool_get(&pool, GFP_KERNEL);
	KUNIT_EXPECT_PTR_EQ(test, c, a);
	KUNIT_EXPECT_EQ(test, c->cookie, 0);
	KUNIT_EXPECT_NULL(test, c->layer_at);
	KUNIT_EXPECT_EQ(test, atomic_read(&pool.n), 0);
	KUNIT_EXPECT_TRUE(test, llist_empty(&pool.free));
	kfree(a);
	kfree(b);
}

static void pool_test_bounded(struct kunit *test)
{
	const int extra = 3, n = WDRV_JOB_POOL_MAX + extra;
	struct wdrv_job_pool pool;
	struct wdrv_job **jobs, **got;
	int i, from_pool = 0;

	jobs = kunit_kcalloc(test, n, sizeof(*jobs), GFP_KERNEL);
	got = kunit_kcalloc(test, WDRV_JOB_POOL_MAX, sizeof(*got), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, jobs);
	KUNIT_ASSERT_NOT_NULL(test, got);
	wdrv_job_pool_init(&pool);
	for (i = 0; i < n; i++) {
		jobs[i] = wdrv_job_pool_get(&pool, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, jobs[i]);
	}
	for (i = 0; i < n; i++)
		wdrv_job_pool_put(&pool, jobs[i]);
	KUNIT_EXPECT_EQ(test, atomic_read(&pool.n), WDRV_JOB_POOL_MAX);

	/* The first WDRV_JOB_POOL_MAX came back; the last 3 were freed. */
	for (i = 0; i < WDRV_JOB_POOL_MAX; i++) {
		int k;

		got[i] = wdrv_job_pool_get(&pool, GFP_KERNEL);
		for (k = 0; k < WDRV_JOB_POOL_MAX; k++)
			from_pool += got[i] == jobs[k];
	}
	KUNIT_EXPECT_EQ(test, from_pool, WDRV_JOB_POOL_MAX);
	KUNIT_EXPECT_EQ(test, atomic_read(&pool.n), 0);

	for (i = 0; i < WDRV_JOB_POOL_MAX; i++)
		wdrv_job_pool_put(&pool, got[i]);
	wdrv_job_pool_drain(&pool);
	KUNIT_EXPECT_EQ(test, atomic_read(&pool.n), 0);
	KUNIT_EXPECT_TRUE(test, llist_empty(&pool.free));
}

static struct kunit_case wdrv_job_pool_test_cases[] = {
	KUNIT_CASE(pool_test_reuse_zeroed),
	KUNIT_CASE(pool_test_bounded),
	{}
};

static struct kunit_suite wdrv_job_pool_test_suite = {
	.name = "wdrv_job_pool",
	.test_cases = wdrv_job_pool_test_cases,
};

kunit_test_suite(wdrv_job_pool_test_suite);
