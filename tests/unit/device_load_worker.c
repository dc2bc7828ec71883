// SPDX-License-Identifier: MIT
/*
 * device_load_worker.c - LOAD_MODEL's check (ABI 1.9), placement and SRAM
 * copy (1.10) run on the load worker, off the command processor; loads
 * fetched meanwhile queue behind it (1.10).
 *
 * A load is held in its check by fault injection (WFW_FAULT_PAUSE_NEXT_LOAD,
 * which waits until a reset begins or a FAULT_INJECT of NONE): meanwhile
 * the worker is seen CHECKING and the slot loading, and GET_INFO, a
 * context create and a job of the model already loaded complete, in the
 * order they were posted, before the load's completion; two more loads
 * queue behind it, each holding a slot, and one past the slots completes
 * -EBUSY; LOAD_CANCEL drops a queued one (-ECANCELED, its slot free) but
 * not the running one (-EBUSY); the loading slot cannot be named by an
 * unload or a context create (-ENOENT).  WFW_REG_LOAD_RUNNING (1.11) names
 * the held load, not the ones queued behind it, and reads 0 once the loads
 * completed or a reset dropped them.  Released, the loads complete in
 * order after them all and the models run.
 *
 * A load held in its copy (WFW_FAULT_PAUSE_NEXT_COPY: placed, its first
 * stage's blocks taken from the arena and copied): the CP still serves
 * GET_INFO, a context create (whose KV blocks come from the same arenas)
 * and a job of the loaded model, whose results do not change, and the
 * unload of that model; released, the new model's results are the first
 * model's (the same blob) and the SRAM used is what the new model reports.
 * A reset, plain or full, during a held check or copy, with a load queued
 * behind, drops them without a completion, frees their slots and gives
 * back every block the copy took; a destroy during a held copy returns.
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

/* The low cookie bits of the load the device reports running, or 0. */
static u32 load_running(void)
{
	return wfs_device_mmio_read32(h->dev, WFW_REG_LOAD_RUNNING);
}

static u64 sram_used(void)
{
	struct wfw_info info;

	memset(&info, 0, sizeof(info));
	if (dh_info(h, &info))
		return ~0ull;
	return info.sram_used;
}

/* Bytes of the arenas' blocks owned by model slot @idx. */
static u64 slot_blocks(u32 idx)
{
	u64 b = 0;
	u32 s;

	for (s = 0; s < h->dev->hw.prof.stages; s++)
		b += wfs_sram_owner_bytes(&h->dev->stages[s].sram, idx + 1, NULL);
	return b;
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

static int cancel(u64 cookie, struct wfw_cpl *cpl)
{
	struct wfw_cmd c;

	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_LOAD_CANCEL;
	c.cancel.cookie = cookie;
	c.cookie = 0x7e00 + (cookie & 0xff);
	dh_post_ctl(h, &c);
	return dh_poll(h, cpl, 5000) ? 0 : -ETIMEDOUT;
}

static int64_t ctx_on(u32 model, struct wfw_cpl *cpl)
{
	struct wfw_cmd c;

	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_CREATE_CONTEXT;
	c.model = model;
	c.ctx.slots = 2;
	c.ctx.ctx_len = 32;
	if (dh_exec(h, &c, cpl, 10000))
		return -ETIMEDOUT;
	return cpl->status ? cpl->status : (int64_t)cpl->result0;
}

static int ctx_destroy(u32 ctx)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl;

	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_DESTROY_CONTEXT;
	c.ctx.ctx_id = ctx;
	if (dh_exec(h, &c, &cpl, 10000))
		return -ETIMEDOUT;
	return cpl.status;
}

static int unload(u32 model)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl;

	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_UNLOAD_MODEL;
	c.model = model;
	if (dh_exec(h, &c, &cpl, 10000))
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

/* Loads queued once @want are (or how many after TRIES polls). */
static u32 wait_queued(u32 want)
{
	u32 n = 0;
	int i;

	for (i = 0; i < TRIES; i++) {
		wfs_os_mutex_lock(h->dev->sync.lock);
		n = h->dev->loadq.n;
		wfs_os_mutex_unlock(h->dev->sync.lock);
		if (n == want)
			break;
		usleep(1000);
	}
	return n;
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

	wt_ok(load_running() == 0, "no load runs: LOAD_RUNNING reads 0");
	wt_ok(fault(WFW_FAULT_PAUSE_NEXT_LOAD) == 0, "arm: hold the next load in its check");
	post_load(0x7001);
	wt_ok(wait_state(WFS_LOADQ_CHECKING) == WFS_LOADQ_CHECKING,
	      "the load worker checks the blob (state CHECKING)");
	wt_ok(load_running() == 0x7001, "LOAD_RUNNING names the held load (0x%x)",
	      load_running());
	wt_ok(slot_loading(1), "its model slot is marked loading, not loaded");

	/* The CP serves everything else meanwhile, in order. */
	wt_ok(models() == 1, "GET_INFO completes during the load and lists only the loaded model");
	ctx = dh_ctx_create(h, 2, 32, &cpl);
	wt_ok(ctx > 0, "CREATE_CONTEXT on the loaded model completes during the load (%lld)",
	      (long long)ctx);
	wt_ok(ctx > 0 && run_job((u32)ctx) == 0, "a job of the loaded model runs during the load");

	/* Two more loads queue behind it, each holding a slot. */
	post_load(0x7002);
	post_load(0x7003);
	wt_ok(wait_queued(3) == 3 && models() == 1 && slot_loading(2) &&
	      slot_loading(3),
	      "two more LOAD_MODELs queue behind it, each in its slot (%u queued)",
	      h->dev->loadq.n);
	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_LOAD_MODEL;
	c.load.addr = (uint64_t)(uintptr_t)blob;
	c.load.len = blob_len;
	wt_ok(!dh_exec(h, &c, &cpl, 5000) && cpl.status == -WFS_EBUSY,
	      "a fourth: every slot loaded or queued for: -EBUSY (%d)", cpl.status);
	wt_ok(!cancel(0x7003, &cpl) && cpl.cookie == 0x7003 &&
	      cpl.status == -WFS_ECANCELED,
	      "LOAD_CANCEL of the last queued load completes it -ECANCELED (%d)",
	      cpl.status);
	wt_ok(dh_poll(h, &cpl, 5000) && cpl.opcode == WFW_OP_LOAD_CANCEL &&
	      !cpl.status && !slot_loading(3) && h->dev->loadq.n == 2,
	      "then the LOAD_CANCEL completes (%d), the slot free again",
	      cpl.status);
	wt_ok(!cancel(0x7001, &cpl) && cpl.status == -WFS_EBUSY,
	      "LOAD_CANCEL of the running load: -EBUSY (%d)", cpl.status);
	wt_ok(!cancel(0x7003, &cpl) && cpl.status == -WFS_ENOENT,
	      "LOAD_CANCEL of a load no longer queued: -ENOENT (%d)", cpl.status);

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
	wt_ok(load_running() == 0x7001,
	      "LOAD_RUNNING still names the held load, not the one queued behind (0x%x)",
	      load_running());

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
	id = cpl.model;
	wt_ok(dh_poll(h, &cpl, 30000) && cpl.cookie == 0x7002 && !cpl.status &&
	      cpl.model && cpl.model != id,
	      "then the queued one, with another model (0x%x)", cpl.model);
	wt_ok(loadq_state() == WFS_LOADQ_IDLE && !h->dev->models.m[1].loading &&
	      h->dev->models.m[1].loaded && h->dev->models.m[2].loaded,
	      "the worker is idle, the slots loaded");
	wt_ok(load_running() == 0, "LOAD_RUNNING reads 0 again (0x%x)", load_running());
	wt_ok(models() == 3, "GET_INFO lists the three models");
	wt_ok(!unload(id) && !unload(cpl.model), "the new models unload");
	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_DESTROY_CONTEXT;
	c.ctx.ctx_id = (u32)ctx;
	dh_exec(h, &c, &cpl, 10000);
}

/* Run the job on @model's new context; its results in @res. */
static int job_on(u32 model, u8 *res)
{
	struct wfw_cpl cpl;
	int64_t ctx = ctx_on(model, &cpl);
	int ret;

	if (ctx <= 0)
		return ctx ? (int)ctx : -EIO;
	memset(out, 0, N * REC);
	ret = run_job((u32)ctx);
	memcpy(res, out, N * REC);
	return ctx_destroy((u32)ctx) ?: ret;
}

/*
 * A load held in its copy: its first stage's blocks are taken and copied
 * on the worker while the CP serves the first model's context, job and
 * unload; released, the new model gives the first one's results.
 */
static void test_held_copy(u32 model0)
{
	static u8 ref[N * REC], res[N * REC];
	struct wfw_cpl cpl;
	int64_t ctx;
	u64 used0 = sram_used();

	wt_ok(job_on(model0, ref) == 0, "the first model's results, for reference");
	wt_ok(fault(WFW_FAULT_PAUSE_NEXT_COPY) == 0, "arm: hold the next load in its copy");
	post_load(0x7401);
	wt_ok(wait_state(WFS_LOADQ_PLACING) == WFS_LOADQ_PLACING,
	      "the load worker places and copies the model (state PLACING)");
	wt_ok(slot_loading(1) && slot_blocks(1) > 0 && sram_used() > used0,
	      "the loading slot holds its first stage's blocks (%llu bytes) taken by the worker",
	      (unsigned long long)slot_blocks(1));
	wt_ok(models() == 1, "GET_INFO completes during the copy");
	ctx = ctx_on(model0, &cpl);
	wt_ok(ctx > 0, "CREATE_CONTEXT, its KV from the same arenas, completes during the copy");
	memset(out, 0, N * REC);
	wt_ok(ctx > 0 && run_job((u32)ctx) == 0 && !memcmp(out, ref, N * REC),
	      "a job of the loaded model runs during the copy, its results unchanged");
	wt_ok(ctx > 0 && !ctx_destroy((u32)ctx), "its context goes");
	wt_ok(!unload(model0), "the loaded model unloads during the copy");
	wt_ok(loadq_state() == WFS_LOADQ_PLACING && slot_loading(1),
	      "the load is still in its copy after all of them");

	wt_ok(fault(WFW_FAULT_NONE) == 0, "FAULT_INJECT NONE ends the hold");
	wt_ok(dh_poll(h, &cpl, 30000) && cpl.cookie == 0x7401 && !cpl.status &&
	      cpl.model, "the load completes (0x%x)", cpl.model);
	wt_ok(sram_used() == cpl.value && slot_blocks(1) == cpl.value,
	      "the SRAM used is the new model's, %llu bytes, all its own blocks",
	      (unsigned long long)cpl.value);
	wt_ok(job_on(cpl.model, res) == 0 && !memcmp(res, ref, N * REC),
	      "the new model (the same blob) gives the first one's results");
}

/*
 * A reset (@full or not) during a load held in its check or (@copy) its
 * copy, with one queued behind it, drops both, frees their slots and the
 * blocks the copy took.
 */
static void test_reset_drops(int full, int copy)
{
	struct wfw_cpl cpl;
	struct wfw_info info;
	u64 used = sram_used();

	wt_ok(fault(copy ? WFW_FAULT_PAUSE_NEXT_COPY : WFW_FAULT_PAUSE_NEXT_LOAD) == 0,
	      "arm: hold the next load in its %s", copy ? "copy" : "check");
	post_load(0x7201);
	post_load(0x7202);
	wt_ok(wait_state(copy ? WFS_LOADQ_PLACING : WFS_LOADQ_CHECKING) ==
	      (copy ? WFS_LOADQ_PLACING : WFS_LOADQ_CHECKING) && wait_queued(2) == 2,
	      "the load is in its %s, another queued", copy ? "copy" : "check");
	dh_hw_reset(h, full);
	wt_ok(loadq_state() == WFS_LOADQ_IDLE && !any_loading() && !h->dev->loadq.n &&
	      !load_running(),
	      "%s reset: the worker is idle, the slots free, no load reported running",
	      full ? "a full" : "a");
	wt_ok(sram_used() == (full ? 0 : used),
	      "the SRAM used is what it was without the loads (%llu)",
	      (unsigned long long)sram_used());
	memset(&info, 0, sizeof(info));
	wt_ok(dh_info(h, &info) == 0 && dh_poll(h, &cpl, 0) == 0,
	      "the next completion is the next command's: the load's was dropped");
	wt_ok(models() == (full ? 0 : 1), "%d model(s) after it", full ? 0 : 1);
	wt_ok(dh_load(h, blob, blob_len, &cpl) == 0 && !unload(cpl.model),
	      "a load after it completes (0x%x) and unloads", cpl.model);
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
	test_reset_drops(0, 0);
	test_reset_drops(0, 1);
	test_reset_drops(1, 0);
	if (wt_ok(dh_load(h, blob, blob_len, &cpl) == 0, "a model loads"))
		test_held_copy(cpl.model);
	test_reset_drops(0, 1);
	test_reset_drops(1, 1);

	/* Destroy during a held copy: the worker is joined, the blobs let go. */
	wt_ok(fault(WFW_FAULT_PAUSE_NEXT_COPY) == 0, "arm: hold the next load");
	post_load(0x7301);
	post_load(0x7302);
	wt_ok(wait_state(WFS_LOADQ_PLACING) == WFS_LOADQ_PLACING,
	      "the load is in its copy");
	dh_fini(h);
	wt_ok(1, "destroy during the load returns");
	free(h);
	free(blob);
	wfs_ckpt_free(&ck);
	return wt_done();
}
