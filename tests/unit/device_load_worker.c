// SPDX-License-Identifier: MIT
/*
 * device_load_worker.c - LOAD_MODEL's check runs on the load worker
 * (ABI 1.9), off the command processor.
 *
 * A load is held in its check by fault injection (WFW_FAULT_PAUSE_NEXT_LOAD,
 * which waits until a reset begins or a FAULT_INJECT of NONE): meanwhile
 * the worker is seen CHECKING and the slot loading, and GET_INFO, a
 * context create and a job of the model already loaded complete, in the
 * order they were posted, before the load's completion; a second load
 * completes -EAGAIN; the loading slot cannot be named by an unload or a
 * context create (-ENOENT).  Released, the load completes after them all
 * and the model runs.  A reset, plain or full, and a destroy during a
 * held load drop it without a completion and free its slot.
 */
#include "device_harness.h"
#include "wfs_device_priv.h"
#include "wfs_pack.h"
#include "wt_util.h"

#define N	8
#define TOPK	4
#define REC	WFW_OUT_REC_SIZE(TOPK)
#define TRIES	5000	/* polls of the worker's state, 1 ms apart at least */

static struct dh *h;
static u32 *in;
static u8 *out;
static void *blob;
static size_t blob_len;

static u32 loadq_state(void)
{
	u32 s;

	wfs_os_mutex_lock(h->dev->sync.lock);
	s = h->dev->loadq.state;
	wfs_os_mutex_unlock(h->dev->sync.lock);
	return s;
}

/* The worker's state once it is @want (or what it is after TRIES polls). */
static u32 wait_state(u32 want)
{
	u32 s = loadq_state();
	int i;

	for (i = 0; i < TRIES && s != want; i++) {
		usleep(1000);
		s = loadq_state();
	}
	return s;
}

static int fault(u32 f)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl;

	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_FAULT_INJECT;
	c.fault.fault = f;
	if (dh_exec(h, &c, &cpl, 5000))
		return -ETIMEDOUT;
	return cpl.status;
}

/* Post a LOAD_MODEL of the blob on the control ring, not waiting. */
static void post_load(u64 cookie)
{
	struct wfw_cmd c;

	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_LOAD_MODEL;
	c.cookie = cookie;
	c.load.addr = (uint64_t)(uintptr_t)blob;
	c.load.len = blob_len;
	dh_post_ctl(h, &c);
}

/* Models the device lists (GET_INFO by index: the n-th loaded model). */
static int models(void)
{
	struct wfw_info info;
	struct wfw_cpl cpl;
	int n = 0, i;

	for (i = 0; i < WFW_MAX_MODELS; i++) {
		if (dh_read_cmd(h, WFW_OP_GET_INFO, 0, i, &info, sizeof(info), &cpl))
			return -1;
		n += !!cpl.model;
	}
	return n;
}

/* A loading slot: the second one (the first holds the loaded model). */
static int slot_loading(u32 idx)
{
	return h->dev->models.m[idx].loading && !h->dev->models.m[idx].loaded;
}

static int any_loading(void)
{
	u32 i;

	for (i = 0; i < WFS_MAX_MODELS; i++) {
		if (h->dev->models.m[i].loading)
			return 1;
	}
	return 0;
}

static int run_job(u32 ctx)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl;

	dh_job_cmd(&c, ctx, 0, 0, N, in, out, N * REC, TOPK,
		   WFW_JOB_ALL_POSITIONS, 0);
	if (dh_exec(h, &c, &cpl, 10000))
		return -ETIMEDOUT;
	return cpl.status;
}

static void test_held_load(u32 model0)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl;
	int64_t ctx;
	u32 id;

	wt_ok(fault(WFW_FAULT_PAUSE_NEXT_LOAD) == 0, "arm: hold the next load in its check");
	post_load(0x7001);
	wt_ok(wait_state(WFS_LOADQ_CHECKING) == WFS_LOADQ_CHECKING,
	      "the load worker checks the blob (state CHECKING)");
	wt_ok(slot_loading(1), "its model slot is marked loading, not loaded");

	/* The CP serves everything else meanwhile, in order. */
	wt_ok(models() == 1, "GET_INFO completes during the load and lists only the loaded model");
	ctx = dh_ctx_create(h, 2, 32, &cpl);
	wt_ok(ctx > 0, "CREATE_CONTEXT on the loaded model completes during the load (%lld)",
	      (long long)ctx);
	wt_ok(ctx > 0 && run_job((u32)ctx) == 0, "a job of the loaded model runs during the load");

	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_LOAD_MODEL;
	c.load.addr = (uint64_t)(uintptr_t)blob;
	c.load.len = blob_len;
	wt_ok(!dh_exec(h, &c, &cpl, 5000) && cpl.status == -WFS_EAGAIN,
	      "a second LOAD_MODEL during the load: -EAGAIN (%d)", cpl.status);

	/* The loading slot has no id yet: nothing can name it. */
	id = WFW_MODEL_ID(h->dev->models.gen + 1, 1);
	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_UNLOAD_MODEL;
	c.model = id;
	wt_ok(!dh_exec(h, &c, &cpl, 5000) && cpl.status == -WFS_ENOENT,
	      "UNLOAD of the loading slot's next id: -ENOENT (%d)", cpl.status);
	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_CREATE_CONTEXT;
	c.model = id;
	c.ctx.slots = 1;
	c.ctx.ctx_len = 16;
	wt_ok(!dh_exec(h, &c, &cpl, 5000) && cpl.status == -WFS_ENOENT,
	      "CREATE_CONTEXT on the loading slot: -ENOENT (%d)", cpl.status);
	wt_ok(loadq_state() == WFS_LOADQ_CHECKING && slot_loading(1),
	      "the load is still in its check after all of them");

	/* Released: the load's completion is the next one. */
	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_FAULT_INJECT;
	c.fault.fault = WFW_FAULT_NONE;
	c.cookie = 0x7100;
	dh_post_ctl(h, &c);
	wt_ok(dh_poll(h, &cpl, 5000) && cpl.cookie == 0x7100 && !cpl.status,
	      "FAULT_INJECT NONE ends the hold");
	wt_ok(dh_poll(h, &cpl, 30000) && cpl.cookie == 0x7001 && !cpl.status &&
	      cpl.model && cpl.model != model0,
	      "then the load completes, out of order after them, with a new model (0x%x)",
	      cpl.model);
	wt_ok(loadq_state() == WFS_LOADQ_IDLE && !h->dev->models.m[1].loading &&
	      h->dev->models.m[1].loaded, "the worker is idle, the slot loaded");
	wt_ok(models() == 2, "GET_INFO lists both models");
	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_UNLOAD_MODEL;
	c.model = cpl.model;
	wt_ok(!dh_exec(h, &c, &cpl, 10000) && !cpl.status, "the new model unloads");
	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_DESTROY_CONTEXT;
	c.ctx.ctx_id = (u32)ctx;
	dh_exec(h, &c, &cpl, 10000);
}

/* A reset (@full or not) during a held load drops it and frees its slot. */
static void test_reset_drops(int full)
{
	struct wfw_cpl cpl;
	struct wfw_info info;

	wt_ok(fault(WFW_FAULT_PAUSE_NEXT_LOAD) == 0, "arm: hold the next load");
	post_load(0x7201);
	wt_ok(wait_state(WFS_LOADQ_CHECKING) == WFS_LOADQ_CHECKING,
	      "the load is in its check");
	dh_hw_reset(h, full);
	wt_ok(loadq_state() == WFS_LOADQ_IDLE && !any_loading(),
	      "%s reset: the worker is idle and the slot free", full ? "a full" : "a");
	memset(&info, 0, sizeof(info));
	wt_ok(dh_info(h, &info) == 0 && dh_poll(h, &cpl, 0) == 0,
	      "the next completion is the next command's: the load's was dropped");
	wt_ok(models() == (full ? 0 : 1), "%d model(s) after it", full ? 0 : 1);
	wt_ok(dh_load(h, blob, blob_len, &cpl) == 0, "a load after it completes (0x%x)",
	      cpl.model);
}

int main(void)
{
	const char *path = wt_model_path("stories260K.bin");
	struct wfs_pack_opts o8 = { .wbits = 8, .group_size = 64 };
	struct wfs_device_config cfg;
	struct wfs_ckpt ck;
	struct wfw_cpl cpl;
	u32 i;

	if (!wt_ok(path && wfs_ckpt_load(path, &ck) == 0, "load model") ||
	    !wt_ok(wfs_pack(&ck, &o8, &blob, &blob_len) == 0, "pack"))
		return wt_done();
	h = calloc(1, sizeof(*h));
	memset(&cfg, 0, sizeof(cfg));
	cfg.numa_node = -1;
	cfg.profile = "wafer";
	cfg.stages = 4;
	cfg.flags = WFS_DEV_FAULT_INJECT;
	if (!wt_ok(dh_init(h, &cfg, 16, 16) == 0, "device up (fault injection allowed)"))
		return wt_done();
	in = dh_alloc(N * 4);
	out = dh_alloc(N * REC);
	for (i = 0; i < N; i++)
		in[i] = 1 + i * 37 % 500;
	dh_region_add(h, blob, blob_len);
	dh_region_add(h, in, N * 4);
	dh_region_add(h, out, N * REC);
	wt_ok(loadq_state() == WFS_LOADQ_IDLE, "the load worker starts idle");
	if (!wt_ok(dh_load(h, blob, blob_len, &cpl) == 0, "a first model loads"))
		return wt_done();

	test_held_load(cpl.model);
	test_reset_drops(0);
	test_reset_drops(1);

	/* Destroy during a held load: the worker is joined, the blob let go. */
	wt_ok(fault(WFW_FAULT_PAUSE_NEXT_LOAD) == 0, "arm: hold the next load");
	post_load(0x7301);
	wt_ok(wait_state(WFS_LOADQ_CHECKING) == WFS_LOADQ_CHECKING,
	      "the load is in its check");
	dh_fini(h);
	wt_ok(1, "destroy during the load returns");
	free(h);
	free(blob);
	wfs_ckpt_free(&ck);
	return wt_done();
}
