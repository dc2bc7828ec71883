// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: the job layer's rules, on jobs built by hand (no scheduler, no
 * firmware): a job is claimed exactly once, the hardware fences of one
 * file signal in the order the jobs ran whatever order they complete in,
 * timelines are independent, a firmware completion completes only a live,
 * unclaimed job, the results table keeps DRM_WAFER_MAX_UNWAITED finished
 * results, and a cookie is not reused while its job holds it.
 *
 * Included at the end of wdrv_job.c, for its static functions.
 */
#include <kunit/test.h>

#include <drm/wafer_accel.h>

#define JT_JOBS	4

struct jt_job {
	struct wdrv_job job;
	struct wdrv_job_result result;
	struct dma_fence hw;
	struct dma_fence_cb cb;
	struct jt_fixture *f;
};

struct jt_fixture {
	struct wdrv_device wdev;
	struct wdrv_job_queue q;
	struct wdrv_file wfile;
	struct wdrv_timeline tl[2];
	struct jt_job j[JT_JOBS];
	int order[JT_JOBS];
	int n_signalled;
};

static void jt_signalled(struct dma_fence *fence, struct dma_fence_cb *cb)
{
	struct jt_job *j = container_of(cb, struct jt_job, cb);

	j->f->order[j->f->n_signalled++] = j - j->f->j;
}

static int jt_init(struct kunit *test)
{
	struct jt_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->wdev.queue = &f->q;
	f->q.wdev = &f->wdev;
	spin_lock_init(&f->q.fence_lock);
	xa_init_flags(&f->q.jobs, XA_FLAGS_ALLOC1);
	for (i = 0; i < 2; i++) {
		kref_init(&f->tl[i].ref);
		f->tl[i].context = dma_fence_context_alloc(1);
		INIT_LIST_HEAD(&f->tl[i].pending);
	}
	for (i = 0; i < JT_JOBS; i++) {
		f->j[i].f = f;
		f->j[i].job.q = &f->q;
		f->j[i].job.wfile = &f->wfile;
		f->j[i].job.result = &f->j[i].result;
		f->j[i].job.hw_fence = &f->j[i].hw;
		INIT_LIST_HEAD(&f->j[i].job.tl_node);
	}
	test->priv = f;
	return 0;
}

static void jt_exit(struct kunit *test)
{
	struct jt_fixture *f = test->priv;

	xa_destroy(&f->q.jobs);
}

/* "Runs" job @i on timeline @tl: its fence is next on it. */
static void jt_run(struct kunit *test, int i, int tl)
{
	struct jt_fixture *f = test->priv;
	struct jt_job *j = &f->j[i];

	j->job.tl = &f->tl[tl];
	job_fence_init(&j->job);
	KUNIT_ASSERT_EQ(test, dma_fence_add_callback(&j->hw, &j->cb, jt_signalled), 0);
}

static bool jt_signaled(struct jt_fixture *f, int i)
{
	return dma_fence_is_signaled(&f->j[i].hw);
}

static void wdrv_job_test_claim_once(struct kunit *test)
{
	struct jt_fixture *f = test->priv;

	KUNIT_EXPECT_TRUE(test, job_claim(&f->j[0].job));
	KUNIT_EXPECT_FALSE(test, job_claim(&f->j[0].job));
	KUNIT_EXPECT_FALSE(test, job_claim(&f->j[0].job));
	KUNIT_EXPECT_TRUE(test, job_claim(&f->j[1].job));
}

/* Completions in the order 2, 0, 1: the fences signal 0, 1, 2. */
static void wdrv_job_test_timeline_in_order(struct kunit *test)
{
	struct jt_fixture *f = test->priv;
	int i;

	for (i = 0; i < 3; i++)
		jt_run(test, i, 0);
	KUNIT_EXPECT_LT(test, f->j[0].hw.seqno, f->j[1].hw.seqno);
	KUNIT_EXPECT_LT(test, f->j[1].hw.seqno, f->j[2].hw.seqno);

	job_complete(&f->j[2].job, -EINVAL, 0, 0);	/* rejected at intake */
	KUNIT_EXPECT_EQ(test, f->n_signalled, 0);
	job_complete(&f->j[0].job, 0, 100, 1100);
	KUNIT_EXPECT_TRUE(test, jt_signaled(f, 0));
	KUNIT_EXPECT_FALSE(test, jt_signaled(f, 1));
	KUNIT_EXPECT_FALSE(test, jt_signaled(f, 2));
	job_complete(&f->j[1].job, -EIO, 0, 0);
	KUNIT_ASSERT_EQ(test, f->n_signalled, 3);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, f->order[i], i);
	/* Each keeps its own status. */
	KUNIT_EXPECT_EQ(test, f->j[0].hw.error, 0);
	KUNIT_EXPECT_EQ(test, f->j[1].hw.error, -EIO);
	KUNIT_EXPECT_EQ(test, f->j[2].hw.error, -EINVAL);
	KUNIT_EXPECT_EQ(test, f->j[0].result.device_ns, 100);
	KUNIT_EXPECT_EQ(test, f->j[0].result.done_ns, 1100);
	KUNIT_EXPECT_TRUE(test, list_empty(&f->tl[0].pending));
}

/* A later job of another file is not held behind this file's jobs. */
static void wdrv_job_test_timelines_independent(struct kunit *test)
{
	struct jt_fixture *f = test->priv;

	jt_run(test, 0, 0);
	jt_run(test, 1, 1);
	KUNIT_EXPECT_NE(test, f->j[0].hw.context, f->j[1].hw.context);
	job_complete(&f->j[1].job, 0, 0, 0);
	KUNIT_EXPECT_TRUE(test, jt_signaled(f, 1));
	KUNIT_EXPECT_FALSE(test, jt_signaled(f, 0));
	job_complete(&f->j[0].job, 0, 0, 0);
	KUNIT_EXPECT_TRUE(test, jt_signaled(f, 0));
}

/* Only a live, unclaimed job's cookie completes anything, and only once. */
static void wdrv_job_test_fw_cpl_exactly_once(struct kunit *test)
{
	struct jt_fixture *f = test->priv;
	struct wfw_cpl cpl = { .status = 0, .device_ns = 7, .value = 1007 };
	u32 cookie, reserved;

	KUNIT_ASSERT_EQ(test, xa_alloc(&f->q.jobs, &cookie, NULL, xa_limit_32b, GFP_KERNEL), 0);
	KUNIT_ASSERT_EQ(test, xa_alloc(&f->q.jobs, &reserved, NULL, xa_limit_32b, GFP_KERNEL), 0);
	f->j[0].job.cookie = cookie;
	jt_run(test, 0, 0);
	xa_store(&f->q.jobs, cookie, &f->j[0].job, GFP_NOWAIT);

	/* Reserved at submit, not yet run: nothing to complete. */
	cpl.cookie = reserved;
	wdrv_job_fw_cpl(&f->wdev, &cpl);
	cpl.cookie = 0;
	wdrv_job_fw_cpl(&f->wdev, &cpl);
	cpl.cookie = (u64)cookie << 32 | cookie;
	wdrv_job_fw_cpl(&f->wdev, &cpl);
	KUNIT_EXPECT_FALSE(test, jt_signaled(f, 0));
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->q.completed), 0);

	cpl.cookie = cookie;
	wdrv_job_fw_cpl(&f->wdev, &cpl);
	KUNIT_EXPECT_TRUE(test, jt_signaled(f, 0));
	KUNIT_EXPECT_EQ(test, f->j[0].result.device_ns, 7);
	/* The completion time (the record's value) goes to WAIT's done_ns. */
	KUNIT_EXPECT_EQ(test, f->j[0].result.done_ns, 1007);
	/* A duplicate (or one after recovery claimed the job) is ignored. */
	cpl.status = -EIO;
	cpl.device_ns = 9;
	wdrv_job_fw_cpl(&f->wdev, &cpl);
	KUNIT_EXPECT_EQ(test, f->n_signalled, 1);
	KUNIT_EXPECT_EQ(test, f->j[0].hw.error, 0);
	KUNIT_EXPECT_EQ(test, f->j[0].result.device_ns, 7);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->q.completed), 1);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->wfile.busy_ns), 7);
}

/* A cookie stays its job's from submit until freed; freed ones are reused. */
static void wdrv_job_test_cookie_reuse(struct kunit *test)
{
	struct jt_fixture *f = test->priv;
	u32 a, b, c;

	KUNIT_ASSERT_EQ(test, xa_alloc(&f->q.jobs, &a, NULL, xa_limit_32b, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, a, 1);	/* 0 means "no cookie" */
	KUNIT_ASSERT_EQ(test, xa_alloc(&f->q.jobs, &b, NULL, xa_limit_32b, GFP_KERNEL), 0);
	KUNIT_EXPECT_NE(test, a, b);
	/* run_job's store into a reserved slot allocates nothing. */
	KUNIT_EXPECT_FALSE(test, xa_is_err(xa_store(&f->q.jobs, a, &f->j[0].job, 0)));
	KUNIT_EXPECT_PTR_EQ(test, xa_load(&f->q.jobs, a), (void *)&f->j[0].job);
	xa_erase(&f->q.jobs, a);
	KUNIT_ASSERT_EQ(test, xa_alloc(&f->q.jobs, &c, NULL, xa_limit_32b, GFP_KERNEL), 0);
	KUNIT_EXPECT_EQ(test, c, a);
}

/* One chunk time record, as the firmware writes it. */
static struct wfw_chunk_time jt_time(u32 stage, u64 start, u64 end)
{
	return (struct wfw_chunk_time){ .stage = stage, .flags = WFW_CHUNK_VALID,
					.start_ns = start, .end_ns = end };
}

/*
 * A job's chunk times go to the stages they name, chunks times the stages
 * its first chunk used; records out of place, not written by the device,
 * ending before they start or past the chunks add nothing.
 */
static void wdrv_job_test_stage_ns(struct kunit *test)
{
	struct jt_fixture *f = test->priv;
	atomic64_t *ns = f->wfile.stage_ns;
	struct wfw_chunk_time t[8] = {
		jt_time(0, 10, 15), jt_time(1, 15, 22), jt_time(2, 22, 25),
		jt_time(0, 15, 19), jt_time(1, 22, 30), jt_time(2, 30, 31),
		/* Stale, past the job's two chunks. */
		jt_time(0, 0, 1000), jt_time(1, 0, 1000),
	};

	KUNIT_EXPECT_EQ(test, wdrv_job_stage_ns(ns, 16, t, 8, 2), 5 + 7 + 3 + 4 + 8 + 1);
	KUNIT_EXPECT_EQ(test, atomic64_read(&ns[0]), 9);
	KUNIT_EXPECT_EQ(test, atomic64_read(&ns[1]), 15);
	KUNIT_EXPECT_EQ(test, atomic64_read(&ns[2]), 4);
	KUNIT_EXPECT_EQ(test, atomic64_read(&ns[3]), 0);

	/* Room for fewer records than the chunks claim: only whole chunks. */
	KUNIT_EXPECT_EQ(test, wdrv_job_stage_ns(ns, 16, t, 5, 2), 15);
	/* A device with fewer stages than the records name. */
	KUNIT_EXPECT_EQ(test, wdrv_job_stage_ns(ns, 2, t, 6, 3), 5 + 7);
	KUNIT_EXPECT_EQ(test, atomic64_read(&ns[2]), 4 + 3);

	/* Forged or unwritten records. */
	t[4].stage = 2;
	t[5].end_ns = 29;
	t[3].flags = 0;
	KUNIT_EXPECT_EQ(test, wdrv_job_stage_ns(ns, 16, t, 6, 2), 5 + 7 + 3);
	t[0].flags = 0;
	KUNIT_EXPECT_EQ(test, wdrv_job_stage_ns(ns, 16, t, 6, 2), 0);
	KUNIT_EXPECT_EQ(test, wdrv_job_stage_ns(ns, 16, t, 0, 2), 0);
}

/* A stub fence for results. */
static const char *jt_fence_name(struct dma_fence *fence)
{
	return "wafer-test";
}

static const struct dma_fence_ops jt_fence_ops = {
	.get_driver_name = jt_fence_name,
	.get_timeline_name = jt_fence_name,
};

static struct wdrv_job_result *jt_result(struct kunit *test, spinlock_t *lock,
					 u64 ctx, u64 seqno, bool finished)
{
	struct wdrv_job_result *r = kzalloc(sizeof(*r), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, r);
	r->finished = kzalloc(sizeof(*r->finished), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r->finished);
	kref_init(&r->ref);
	dma_fence_init(r->finished, &jt_fence_ops, lock, ctx, seqno);
	if (finished)
		dma_fence_signal(r->finished);
	return r;
}

/*
 * DRM_WAFER_MAX_UNWAITED + 64 results, every fourth unfinished: pruning
 * drops the oldest finished ones down to the cap, keeps every unfinished
 * one, and a result is dropped once only.
 */
static void wdrv_job_test_results_bounded(struct kunit *test)
{
	struct jt_fixture *f = test->priv;
	const unsigned int n = DRM_WAFER_MAX_UNWAITED + 64;
	struct wdrv_file_jobs *fj = kunit_kzalloc(test, sizeof(*fj), GFP_KERNEL);
	u64 ctx = dma_fence_context_alloc(1);
	struct wdrv_job_result *r, *first;
	unsigned long s, dropped_to = 0;
	unsigned int unfinished = 0;

	KUNIT_ASSERT_NOT_NULL(test, fj);
	mutex_init(&fj->lock);
	xa_init(&fj->results);
	mutex_lock(&fj->lock);
	for (s = 1; s <= n; s++) {
		r = jt_result(test, &f->q.fence_lock, ctx, s, s % 4);
		KUNIT_ASSERT_EQ(test, xa_insert(&fj->results, s, r, GFP_KERNEL), 0);
		fj->n_results++;
		atomic64_inc(&f->q.results);
	}
	first = xa_load(&fj->results, 1);
	wdrv_results_prune(&f->q, fj);
	KUNIT_EXPECT_EQ(test, fj->n_results, DRM_WAFER_MAX_UNWAITED);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->q.results), DRM_WAFER_MAX_UNWAITED);
	xa_for_each(&fj->results, s, r) {
		if (!dma_fence_is_signaled(r->finished))
			unfinished++;
		else if (!dropped_to)
			dropped_to = s;
	}
	KUNIT_EXPECT_EQ(test, unfinished, n / 4);
	/* 64 finished dropped, oldest first: seqnos 1..85 minus the unfinished. */
	KUNIT_EXPECT_EQ(test, dropped_to, 86);
	/* Already dropped: a second drop (e.g. WAIT racing) does nothing. */
	KUNIT_EXPECT_FALSE(test, wdrv_results_drop(&f->q, fj, 1, first));
	KUNIT_EXPECT_EQ(test, fj->n_results, DRM_WAFER_MAX_UNWAITED);

	xa_for_each(&fj->results, s, r) {
		dma_fence_signal(r->finished);
		KUNIT_EXPECT_TRUE(test, wdrv_results_drop(&f->q, fj, s, r));
	}
	mutex_unlock(&fj->lock);
	KUNIT_EXPECT_EQ(test, fj->n_results, 0);
	KUNIT_EXPECT_EQ(test, atomic64_read(&f->q.results), 0);
	xa_destroy(&fj->results);
	mutex_destroy(&fj->lock);
}

static struct kunit_case wdrv_job_test_cases[] = {
	KUNIT_CASE(wdrv_job_test_claim_once),
	KUNIT_CASE(wdrv_job_test_stage_ns),
	KUNIT_CASE(wdrv_job_test_timeline_in_order),
	KUNIT_CASE(wdrv_job_test_timelines_independent),
	KUNIT_CASE(wdrv_job_test_fw_cpl_exactly_once),
	KUNIT_CASE(wdrv_job_test_cookie_reuse),
	KUNIT_CASE(wdrv_job_test_results_bounded),
	{}
};

static struct kunit_suite wdrv_job_test_suite = {
	.name = "wdrv_job",
	.init = jt_init,
	.exit = jt_exit,
	.test_cases = wdrv_job_test_cases,
};

kunit_test_suite(wdrv_job_test_suite);
