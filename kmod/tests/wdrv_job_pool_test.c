// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: a file's job pool hands back the jobs put into it, zeroed but for
 * their cookies, newest first; keeps at most WDRV_JOB_POOL_MAX (the rest are
 * freed: kmemleak and KASAN on the debug kernel's VM runs would see a leak
 * or a double free); allocates when empty; a drained pool is empty; and a
 * job's cookie stays reserved in its queue's table exactly as long as the
 * pool keeps the job.
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
	KUNIT_EXPECT_EQ(test, c->cookie, 7);
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

/* -EBUSY while @cookie is reserved in @xa; 0 (and free again) if not. */
static int cookie_taken(struct xarray *xa, u32 cookie)
{
	int ret = xa_insert(xa, cookie, xa, GFP_KERNEL);

	if (!ret)
		xa_erase(xa, cookie);
	return ret;
}

static void pool_test_cookies(struct kunit *test)
{
	const int n = WDRV_JOB_POOL_MAX + 1;
	struct wdrv_job_queue *q;
	struct wdrv_job_pool pool;
	struct wdrv_job **jobs, *job;
	u32 last;
	int i;

	q = kunit_kzalloc(test, sizeof(*q), GFP_KERNEL);
	jobs = kunit_kcalloc(test, n, sizeof(*jobs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, q);
	KUNIT_ASSERT_NOT_NULL(test, jobs);
	xa_init_flags(&q->jobs, XA_FLAGS_ALLOC1);
	wdrv_job_pool_init(&pool);
	for (i = 0; i < n; i++) {
		jobs[i] = wdrv_job_pool_get(&pool, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, jobs[i]);
		jobs[i]->q = q;
		KUNIT_ASSERT_EQ(test, xa_alloc(&q->jobs, &jobs[i]->cookie, NULL, xa_limit_32b,
					       GFP_KERNEL), 0);
	}
	last = jobs[n - 1]->cookie;
	for (i = 0; i < n; i++)
		wdrv_job_pool_put(&pool, jobs[i]);
	/* The one the full pool freed gave its cookie back; the others keep theirs. */
	KUNIT_EXPECT_EQ(test, cookie_taken(&q->jobs, last), 0);
	KUNIT_EXPECT_EQ(test, cookie_taken(&q->jobs, jobs[0]->cookie), -EBUSY);
	job = wdrv_job_pool_get(&pool, GFP_KERNEL);
	KUNIT_EXPECT_PTR_EQ(test, job, jobs[n - 2]);
	KUNIT_EXPECT_EQ(test, job->cookie, n - 1);
	KUNIT_EXPECT_NULL(test, job->q);
	job->q = q;
	wdrv_job_pool_put(&pool, job);
	wdrv_job_pool_drain(&pool);
	KUNIT_EXPECT_TRUE(test, xa_empty(&q->jobs));
	xa_destroy(&q->jobs);
}

static struct kunit_case wdrv_job_pool_test_cases[] = {
	KUNIT_CASE(pool_test_reuse_zeroed),
	KUNIT_CASE(pool_test_bounded),
	KUNIT_CASE(pool_test_cookies),
	{}
};

static struct kunit_suite wdrv_job_pool_test_suite = {
	.name = "wdrv_job_pool",
	.test_cases = wdrv_job_pool_test_cases,
};

kunit_test_suite(wdrv_job_pool_test_suite);
