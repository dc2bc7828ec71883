// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests of the control waiter table (wdrv_ctrl.c): completions in
 * any order reach their own waiters; one waiter given up (parked with its
 * buffer) while another completes; a stale cookie completes nothing; a
 * reset or teardown fails every waiter and frees the parked buffers.
 */
#include <kunit/test.h>
#include <linux/slab.h>

#include "wdrv_ctrl.h"
#include "wdrv_dma.h"
#include "wfs_device.h"
#include "wfw_host.h"

#define N_WAITERS	4
#define BASE		(WFW_HOST_COOKIE_CTRL | (7ull << 32))

struct ctrl_fixture {
	struct wdrv_dma dma;
	struct wdrv_ctrl_table t;
};

static int ctrl_init(struct kunit *test)
{
	struct ctrl_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	wdrv_dma_init(&f->dma);
	wdrv_ctrl_init(&f->t, &f->dma, N_WAITERS);
	test->priv = f;
	return 0;
}

static void ctrl_exit(struct kunit *test)
{
	struct ctrl_fixture *f = test->priv;

	wdrv_ctrl_fail_all(&f->t, -ENODEV);
	xa_destroy(&f->t.xa);
	wdrv_dma_fini(&f->dma);
}

/* A waiter in the table with its cookie, as wdrv_fw's ctrl_post() makes. */
static struct wdrv_ctrl_waiter *add(struct kunit *test, void *buf, u64 addr)
{
	struct ctrl_fixture *f = test->priv;
	struct wdrv_ctrl_waiter *w = wdrv_ctrl_waiter_new(buf, addr);

	KUNIT_ASSERT_NOT_NULL(test, w);
	KUNIT_ASSERT_EQ(test, wdrv_ctrl_add(&f->t, w, false), 0);
	KUNIT_ASSERT_EQ(test, wdrv_ctrl_arm(&f->t, w, BASE), 0);
	return w;
}

static bool cpl_for(struct ctrl_fixture *f, struct wdrv_ctrl_waiter *w, u32 result)
{
	struct wfw_cpl c = { .cookie = w->cookie, .result0 = result };

	return wdrv_ctrl_complete(&f->t, &c);
}

/* A mapped, device-writable buffer, as a command's reply buffer. */
static void *mapped(struct kunit *test, u64 *addr)
{
	struct ctrl_fixture *f = test->priv;
	void *buf = kvzalloc(64, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_EQ(test, wdrv_dma_map(&f->dma, buf, 64, WDRV_DMA_WRITE,
					   GFP_KERNEL, addr), 0);
	return buf;
}

/* Whether the device can still write @addr (the window is there). */
static bool window_live(struct ctrl_fixture *f, u64 addr)
{
	u32 v = 1;

	return !wdrv_dma_ops.write(&f->dma, addr, &v, sizeof(v));
}

static void wdrv_test_ctrl_out_of_order(struct kunit *test)
{
	struct ctrl_fixture *f = test->priv;
	struct wdrv_ctrl_waiter *w[3];
	static const int order[] = { 2, 0, 1 };
	struct wfw_cpl cpl;
	int i;

	for (i = 0; i < 3; i++)
		w[i] = add(test, NULL, 0);
	KUNIT_EXPECT_NE(test, w[0]->cookie, w[1]->cookie);
	for (i = 0; i < 3; i++) {
		int k = order[i];

		KUNIT_EXPECT_TRUE(test, cpl_for(f, w[k], 100 + k));
		KUNIT_EXPECT_TRUE(test, completion_done(&w[k]->done));
		/* The others still wait. */
		KUNIT_EXPECT_FALSE(test, i < 2 && completion_done(&w[order[i + 1]]->done));
	}
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_TRUE(test, wdrv_ctrl_end(&f->t, w[i], false, &cpl));
		KUNIT_EXPECT_EQ(test, cpl.result0, 100u + i);
		KUNIT_EXPECT_EQ(test, cpl.cookie, w[i]->cookie);
		kfree(w[i]);
	}
	KUNIT_EXPECT_FALSE(test, wdrv_ctrl_busy(&f->t));
}

static void wdrv_test_ctrl_stale_cookie(struct kunit *test)
{
	struct ctrl_fixture *f = test->priv;
	struct wdrv_ctrl_waiter *w = add(test, NULL, 0);
	struct wfw_cpl c = { .cookie = w->cookie ^ (1ull << 32) };
	struct wfw_cpl cpl;

	/* The same id from another generation, and a never-armed id. */
	KUNIT_EXPECT_FALSE(test, wdrv_ctrl_complete(&f->t, &c));
	c.cookie = BASE | (w->id + 1);
	KUNIT_EXPECT_FALSE(test, wdrv_ctrl_complete(&f->t, &c));
	KUNIT_EXPECT_FALSE(test, completion_done(&w->done));
	KUNIT_EXPECT_FALSE(test, wdrv_ctrl_end(&f->t, w, false, &cpl));
	/* Out of the table: its late completion is dropped. */
	KUNIT_EXPECT_FALSE(test, cpl_for(f, w, 1));
	KUNIT_EXPECT_FALSE(test, wdrv_ctrl_busy(&f->t));
	kfree(w);
}

static void wdrv_test_ctrl_timeout_while_other_completes(struct kunit *test)
{
	struct ctrl_fixture *f = test->priv;
	struct wdrv_ctrl_waiter *a, *b;
	struct wfw_cpl cpl;
	u64 addr;
	void *buf = mapped(test, &addr);
	u64 cookie_a;

	a = add(test, buf, addr);
	b = add(test, NULL, 0);
	cookie_a = a->cookie;
	/* a's caller gives up while the firmware may still write its buffer. */
	KUNIT_EXPECT_FALSE(test, wdrv_ctrl_end(&f->t, a, true, &cpl));
	KUNIT_EXPECT_TRUE(test, wdrv_ctrl_busy(&f->t));
	KUNIT_EXPECT_TRUE(test, window_live(f, addr));
	/* b completes on its own. */
	KUNIT_EXPECT_TRUE(test, cpl_for(f, b, 42));
	KUNIT_EXPECT_TRUE(test, wdrv_ctrl_end(&f->t, b, false, &cpl));
	KUNIT_EXPECT_EQ(test, cpl.result0, 42u);
	kfree(b);
	/* a's buffer is kept until a's own completion, then freed. */
	KUNIT_EXPECT_TRUE(test, window_live(f, addr));
	cpl.cookie = cookie_a;
	KUNIT_EXPECT_TRUE(test, wdrv_ctrl_complete(&f->t, &cpl));
	KUNIT_EXPECT_FALSE(test, window_live(f, addr));
	KUNIT_EXPECT_FALSE(test, wdrv_ctrl_busy(&f->t));
}

static void wdrv_test_ctrl_fail_all(struct kunit *test)
{
	struct ctrl_fixture *f = test->priv;
	struct wdrv_ctrl_waiter *w[N_WAITERS - 1], *late;
	struct wfw_cpl cpl;
	u64 addr;
	void *buf = mapped(test, &addr);
	int i;

	w[0] = add(test, buf, addr);
	KUNIT_EXPECT_FALSE(test, wdrv_ctrl_end(&f->t, w[0], true, &cpl));
	for (i = 1; i < N_WAITERS - 1; i++)
		w[i] = add(test, NULL, 0);
	/* Added but not yet armed when the reset comes. */
	late = wdrv_ctrl_waiter_new(NULL, 0);
	KUNIT_ASSERT_NOT_NULL(test, late);
	KUNIT_ASSERT_EQ(test, wdrv_ctrl_add(&f->t, late, false), 0);

	wdrv_ctrl_fail_all(&f->t, -EIO);
	KUNIT_EXPECT_FALSE(test, wdrv_ctrl_busy(&f->t));
	KUNIT_EXPECT_FALSE(test, window_live(f, addr));	/* parked: freed */
	for (i = 1; i < N_WAITERS - 1; i++) {
		KUNIT_EXPECT_TRUE(test, completion_done(&w[i]->done));
		KUNIT_EXPECT_TRUE(test, wdrv_ctrl_end(&f->t, w[i], false, &cpl));
		KUNIT_EXPECT_EQ(test, cpl.status, -EIO);
		kfree(w[i]);
	}
	/* The one a reset failed before it was posted is never posted. */
	KUNIT_EXPECT_EQ(test, wdrv_ctrl_arm(&f->t, late, BASE), -EIO);
	KUNIT_EXPECT_TRUE(test, wdrv_ctrl_end(&f->t, late, false, &cpl));
	KUNIT_EXPECT_EQ(test, cpl.status, -EIO);
	kfree(late);
	/* Every slot is back: the table takes a full set again. */
	for (i = 0; i < N_WAITERS - 1; i++)
		w[i] = add(test, NULL, 0);
	wdrv_ctrl_fail_all(&f->t, -ENODEV);
	for (i = 0; i < N_WAITERS - 1; i++) {
		KUNIT_EXPECT_TRUE(test, wdrv_ctrl_end(&f->t, w[i], false, &cpl));
		KUNIT_EXPECT_EQ(test, cpl.status, -ENODEV);
		kfree(w[i]);
	}
}

static struct kunit_case wdrv_ctrl_test_cases[] = {
	KUNIT_CASE(wdrv_test_ctrl_out_of_order),
	KUNIT_CASE(wdrv_test_ctrl_stale_cookie),
	KUNIT_CASE(wdrv_test_ctrl_timeout_while_other_completes),
	KUNIT_CASE(wdrv_test_ctrl_fail_all),
	{}
};

static struct kunit_suite wdrv_ctrl_test_suite = {
	.name = "wdrv_ctrl",
	.init = ctrl_init,
	.exit = ctrl_exit,
	.test_cases = wdrv_ctrl_test_cases,
};

kunit_test_suite(wdrv_ctrl_test_suite);
