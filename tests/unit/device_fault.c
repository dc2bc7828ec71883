// SPDX-License-Identifier: MIT
/*
 * device_fault.c - fault injection and recovery: a hung job (and the jobs
 * queued behind it) never completes until a register reset, after which
 * later jobs give the same results as before; the retired RESET command
 * is refused and cancels nothing; a dropped completion leaves a sequence
 * gap; a corrupted completion fails its check; a full reset unloads the
 * model; a load paused by fault injection reads its blob only once a reset
 * begins, and that (non-full) reset drops it, leaving its slot free; stage
 * workers run only while a model is loaded, one per stage it occupies (or
 * the pool's); destroy works on a hung device.  All of it once with one
 * worker per stage and with pools of two and one.
 */
#include "device_harness.h"
#include "wfs_pack.h"
#include "wt_util.h"

#define N	12
#define TOPK	4
#define REC	WFW_OUT_REC_SIZE(TOPK)

static struct dh *h;
static u32 *in;
static u8 *out, *golden;
static u32 ctx;
static int stages_used;
static u8 *first;	/* the first mode's golden run */

/* Stage workers of device 0 running in this process (either mode). */
static int workers_now(void)
{
	return wt_threads_named("/proc/self/task", "wfs-st0.") +
	       wt_threads_named("/proc/self/task", "wfs-pw0.");
}

/*
 * Stage workers, given up to 5 s to become @want: a thread the firmware
 * joined is still listed until the kernel has released it, a moment after
 * pthread_join() returned (a window a loaded machine makes visible).
 */
static int workers(int want)
{
	int n = workers_now(), i;

	for (i = 0; i < 500 && n != want; i++) {
		usleep(10000);
		n = workers_now();
	}
	return n;
}

/* Workers expected with the model on @used stages: one each, or the pool. */
static int expected(int used)
{
	return dh_stage_workers ? WFS_MIN(dh_stage_workers, used) : used;
}

static void job(struct wfw_cmd *c, u32 slot, u64 cookie)
{
	dh_job_cmd(c, ctx, slot, 0, N, in, out + (size_t)slot * N * REC,
		   N * REC, TOPK, WFW_JOB_ALL_POSITIONS, cookie);
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

/* Run a job on @slot synchronously; 0 if it completed OK. */
static int run_ok(u32 slot)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl;

	job(&c, slot, 0);
	if (dh_exec(h, &c, &cpl, 10000))
		return -ETIMEDOUT;
	return cpl.status;
}

static int setup_model(void *blob, size_t len)
{
	struct wfw_cpl cpl;
	int64_t id;

	if (dh_load(h, blob, len, &cpl))
		return -1;
	stages_used = (int)cpl.result0;
	id = dh_ctx_create(h, 8, 64, &cpl);
	if (id <= 0)
		return -1;
	ctx = (u32)id;
	return 0;
}

static void test_hang(void)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl;
	int got, i, ret;

	wt_ok(fault(WFW_FAULT_HANG_NEXT_JOB) == 0, "arm: hang the next job");
	job(&c, 1, 0x1001);
	dh_submit(h, &c);
	job(&c, 2, 0x1002);
	dh_submit(h, &c);
	got = dh_poll(h, &cpl, 300);
	wt_ok(!got, "hung job and the job behind it do not complete (300 ms)");
	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_NOP;
	c.cookie = 0x1003;
	dh_submit(h, &c);
	got = dh_poll(h, &cpl, 2000);
	wt_ok(got && cpl.cookie == 0x1003 && cpl.status == 0,
	      "the command processor still answers (NOP) while the pipeline hangs");

	/* Fill the pipeline until the CP itself blocks behind the hang. */
	for (i = 0; i < 40; i++) {
		job(&c, (u32)(3 + i % 5), 0x2000 + (u64)i);
		if (dh_try_submit(h, &c)) {
			usleep(50000);	/* let the CP fetch what it can */
			if (dh_try_submit(h, &c))
				break;
		}
	}
	wt_ok(!dh_poll(h, &cpl, 300) &&
	      dh_rd(h, WFW_REG_CMD_HEAD) < h->cmd_tail,
	      "with the pipeline full the CP stops fetching (head %u < tail %u)",
	      dh_rd(h, WFW_REG_CMD_HEAD), h->cmd_tail);
	dh_hw_reset(h, 0);
	wt_ok(dh_rd(h, WFW_REG_CPL_TAIL) == 0 && !dh_poll(h, &cpl, 100),
	      "register reset: in-flight jobs are discarded without completions");
	ret = run_ok(0);
	wt_ok(ret == 0 && !memcmp(out, golden, N * REC),
	      "after the reset a job runs and gives the same results as before the hang");
	for (i = 1; i < 8; i++)
		ret |= run_ok((u32)i);
	wt_ok(ret == 0, "all slots usable after the reset");
}

/*
 * Opcode 7 was a RESET command: it is refused with -EOPNOTSUPP and leaves
 * the jobs in flight alone; the register reset is the one reset.
 */
static void test_cmd_reset_retired(void)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl;
	int got;

	fault(WFW_FAULT_HANG_NEXT_JOB);
	job(&c, 1, 0x3001);
	dh_submit(h, &c);
	job(&c, 2, 0x3002);
	dh_submit(h, &c);
	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_RESET_RETIRED;
	c.cookie = 0x3003;
	dh_submit(h, &c);
	got = dh_poll(h, &cpl, 5000);
	wt_ok(got && cpl.cookie == 0x3003 && cpl.status == -EOPNOTSUPP,
	      "retired RESET command (opcode 7) completes with -EOPNOTSUPP");
	wt_ok(!dh_poll(h, &cpl, 300),
	      "it cancels nothing: the hung jobs stay in flight (300 ms)");
	dh_hw_reset(h, 0);
	wt_ok(run_ok(0) == 0 && !memcmp(out, golden, N * REC),
	      "after a register reset jobs run again, same results");
}

static void test_drop_corrupt(void)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl;
	u32 seq0;
	int got;

	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_NOP;
	dh_exec(h, &c, &cpl, 5000);
	seq0 = cpl.seq;

	wt_ok(fault(WFW_FAULT_DROP_NEXT_CPL) == 0, "arm: drop the next job completion");
	job(&c, 0, 0x4001);
	dh_submit(h, &c);
	got = dh_poll(h, &cpl, 300);
	wt_ok(!got, "the job's completion never arrives");
	job(&c, 0, 0x4002);
	dh_submit(h, &c);
	got = dh_poll(h, &cpl, 5000);
	wt_ok(got && cpl.cookie == 0x4002 && cpl.status == 0 &&
	      cpl.seq == seq0 + 3,
	      "the next completion arrives with a sequence gap (seq %u after %u)",
	      cpl.seq, seq0 + 1);

	wt_ok(fault(WFW_FAULT_CORRUPT_NEXT_CPL) == 0, "arm: corrupt the next job completion");
	h->bad_checks = 0;
	job(&c, 0, 0x4003);
	dh_submit(h, &c);
	got = dh_poll(h, &cpl, 5000);
	wt_ok(got && h->bad_checks == 1 && cpl.check != wfw_cpl_check(&cpl) &&
	      cpl.cookie != 0x4003,
	      "the corrupted completion fails wfw_cpl_check() and has a scrambled cookie");
	h->bad_checks = 0;
	wt_ok(run_ok(0) == 0 && h->bad_checks == 0,
	      "the fault was one-shot: the next completion is clean");
}

static void test_full_reset(void *blob, size_t len)
{
	struct wfw_cpl cpl;

	dh_hw_reset(h, 1);
	wt_ok(!(dh_rd(h, WFW_REG_STATUS) & WFW_STATUS_MODEL) &&
	      run_ok(0) == -WFS_ENOENT,
	      "full reset: model and contexts are gone (RUN_JOB -ENOENT)");
	wt_ok(workers(0) == 0, "full reset: the stage workers are gone");
	wt_ok(dh_simple(h, WFW_OP_UNLOAD_MODEL, &cpl) == -WFS_ENOENT &&
	      setup_model(blob, len) == 0 && run_ok(0) == 0 &&
	      !memcmp(out, golden, N * REC),
	      "reload after the full reset gives the same results");
	wt_ok(workers(expected(stages_used)) == expected(stages_used),
	      "and starts the workers of the occupied stages again");
}

/* UNLOAD joins the workers; a reload starts them and computes the same. */
static void test_unload_workers(void *blob, size_t len)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl;

	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_DESTROY_CONTEXT;
	c.ctx.ctx_id = ctx;
	wt_ok(!dh_exec(h, &c, &cpl, 5000) && cpl.status == 0 &&
	      dh_simple(h, WFW_OP_UNLOAD_MODEL, &cpl) == 0,
	      "destroy the context, unload the model");
	wt_ok(workers(0) == 0, "after UNLOAD no stage worker runs");
	wt_ok(setup_model(blob, len) == 0 &&
	      workers(expected(stages_used)) == expected(stages_used) && run_ok(0) == 0 &&
	      !memcmp(out, golden, N * REC),
	      "reload: the workers are back and give the same results");
}

static void test_pause_load(void *blob, size_t len)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl;
	int64_t id;

	dh_hw_reset(h, 1);
	wt_ok(fault(WFW_FAULT_PAUSE_NEXT_LOAD) == 0, "arm: pause the next load");
	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_LOAD_MODEL;
	c.load.addr = (uint64_t)(uintptr_t)blob;
	c.load.len = len;
	c.cookie = 0x6001;
	dh_submit(h, &c);
	wt_ok(!dh_poll(h, &cpl, 300) && !(dh_rd(h, WFW_REG_STATUS) & WFW_STATUS_MODEL),
	      "a paused load neither completes nor loads (300 ms)");
	/* The reset waits for the load worker, which goes on reading the blob. */
	dh_hw_reset(h, 0);
	wt_ok(!(dh_rd(h, WFW_REG_STATUS) & WFW_STATUS_MODEL),
	      "the reset dropped the load once its blob was read: no model after it");
	wt_ok(setup_model(blob, len) == 0, "the slot is free: the model loads again");
	id = ctx;
	wt_ok(id > 0 && run_ok(0) == 0 && !memcmp(out, golden, N * REC),
	      "and gives the same results");
}

/* Every test above on a fresh device whose stages run on @mode workers. */
static void run_mode(int mode, void *blob, size_t len)
{
	struct wfs_device_config cfg;
	struct wfw_cmd c;
	struct wfw_cpl cpl;
	u32 i;

	dh_stage_workers = mode;
	wt_diag("stage_workers=%d (%s)", mode,
		mode ? "a pool" : "one per stage");
	h = calloc(1, sizeof(*h));
	memset(&cfg, 0, sizeof(cfg));
	cfg.numa_node = -1;
	cfg.profile = "wafer";
	cfg.stages = 4;
	cfg.flags = WFS_DEV_FAULT_INJECT;
	if (!wt_ok(dh_init(h, &cfg, 16, 16) == 0, "device up (fault injection allowed)"))
		return;
	in = dh_alloc(N * 4);
	out = dh_alloc(8 * N * REC);
	golden = dh_alloc(N * REC);
	for (i = 0; i < N; i++)
		in[i] = 1 + i * 37 % 500;
	dh_region_add(h, blob, len);
	dh_region_add(h, in, N * 4);
	dh_region_add(h, out, 8 * N * REC);
	wt_ok(workers(0) == 0,
	      "a device without a model runs no stage worker");
	if (!wt_ok(setup_model(blob, len) == 0 && run_ok(0) == 0,
		   "model loaded, golden run"))
		return;
	wt_ok(stages_used >= 1 && stages_used <= 4 &&
	      workers(expected(stages_used)) == expected(stages_used),
	      "%d stage worker(s) for the %d of 4 stages the model occupies",
	      expected(stages_used), stages_used);
	memcpy(golden, out, N * REC);
	if (!first)
		first = golden;
	wt_ok(!memcmp(golden, first, N * REC),
	      "the golden run equals the first mode's");

	test_hang();
	test_cmd_reset_retired();
	test_drop_corrupt();
	wt_ok(workers(expected(stages_used)) == expected(stages_used),
	      "non-full resets keep the workers (%d)", expected(stages_used));
	test_full_reset(blob, len);
	test_unload_workers(blob, len);
	test_pause_load(blob, len);

	/* Destroy with a hung job in flight must not hang. */
	fault(WFW_FAULT_HANG_NEXT_JOB);
	job(&c, 0, 0x5001);
	dh_submit(h, &c);
	wt_ok(!dh_poll(h, &cpl, 100), "a job hangs again");
	dh_fini(h);
	wt_ok(1, "destroy with a hung job in flight returns");
	free(h);
}

int main(void)
{
	const char *path = wt_model_path("stories260K.bin");
	struct wfs_pack_opts o8 = { .wbits = 8, .group_size = 64 };
	struct wfs_ckpt ck;
	void *blob;
	size_t len;
	int i;

	if (!wt_ok(path && wfs_ckpt_load(path, &ck) == 0, "load model") ||
	    !wt_ok(wfs_pack(&ck, &o8, &blob, &len) == 0, "pack"))
		return wt_done();
	h = calloc(1, sizeof(*h));
	dh_stage_workers = WFS_STAGE_WORKERS_AUTO - 1;
	i = dh_init(h, NULL, 16, 16) == -WFS_EINVAL;
	dh_stage_workers = WFS_STAGE_WORKERS_MAX + 1;
	i += dh_init(h, NULL, 16, 16) == -WFS_EINVAL;
	wt_ok(i == 2, "stage_workers -2 and %d: the device is refused (-EINVAL)",
	      WFS_STAGE_WORKERS_MAX + 1);
	free(h);
	/* One worker per stage, then pools of 2 and 1 (fewer than the stages). */
	run_mode(WFS_STAGE_WORKERS_PER_STAGE, blob, len);
	run_mode(2, blob, len);
	run_mode(1, blob, len);
	free(blob);
	wfs_ckpt_free(&ck);
	return wt_done();
}
