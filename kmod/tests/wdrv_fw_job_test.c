// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: the firmware interface's job state machine on a real simulated
 * device: jobs posted to the command ring complete through the emulated
 * interrupt, the rings wrap around many times, a hung job produces no
 * completion until a reset, after which the device runs jobs again, a
 * corrupted completion is reported as a fault; and the reset fences
 * control commands: one waiting when it comes fails with -EIO at once
 * (not at its timeout), later ones run, and every cookie posted after it
 * carries the new reset generation.  Weight streaming through the driver's
 * DMA windows: a streamed load's job gives the resident record, and fails
 * with -EFAULT once the blob's window is gone.  Layer parts: the attention
 * and FFN part models of each layer, the layer after the input where the
 * driver writes it, give the whole model's record; so do the attention,
 * expert home and two expert shards of the tiny MoE model, five jobs a
 * layer with the phase in the layer word.  A blob deeper than a device's
 * load table: loaded whole or as 257 layers it is -E2BIG, and layer ranges
 * from its first, 256th and last layers load side by side and unload.
 * A small load queued behind a large one that the firmware holds past the
 * small one's own timeout waits the large one's time first and loads, with
 * no timeout and no fault.  Once the interface is finished, control
 * commands and jobs fail with -ENODEV.
 */
#include <kunit/test.h>
#include <linux/bitfield.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/workqueue.h>
#include <linux/numa.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "wdrv_fw.h"
#include "wt_tinyblob.h"

#define TEST_TIMEOUT_MS	2000

struct fw_fixture {
	struct wdrv_fw fw;
	struct completion job_done;
	struct wfw_cpl last;
	atomic_t jobs_done;
	atomic_t faults;
	u32 ctx_id;
	u32 *in;
	u8 *out;
	u64 in_addr, out_addr;
};

static void fixture_job_cpl(void *owner, const struct wfw_cpl *cpl)
{
	struct fw_fixture *f = owner;

	f->last = *cpl;
	atomic_inc(&f->jobs_done);
	complete(&f->job_done);
}

static void fixture_fault(void *owner, const char *why)
{
	struct fw_fixture *f = owner;

	atomic_inc(&f->faults);
}

/* The fixture's context and model go. */
static int unload(struct fw_fixture *f)
{
	struct wfw_cmd cmd = { .opcode = WFW_OP_DESTROY_CONTEXT };
	struct wfw_cpl cpl;
	int ret;

	cmd.ctx.ctx_id = f->ctx_id;
	ret = wdrv_fw_ctrl(&f->fw, &cmd, &cpl);
	memset(&cmd, 0, sizeof(cmd));
	cmd.opcode = WFW_OP_UNLOAD_MODEL;
	return ret ? ret : wdrv_fw_ctrl(&f->fw, &cmd, &cpl);
}

/* Loads the tiny model with @flags, its blob mapped at *@addr, and a context. */
static int load(struct kunit *test, struct fw_fixture *f, u32 flags, u64 *addr)
{
	struct wfw_cmd cmd = { .opcode = WFW_OP_LOAD_MODEL };
	u8 *blob = kunit_kzalloc(test, WT_TINY_MAX, GFP_KERNEL);
	struct wfw_cpl cpl;
	size_t len;
	int ret;

	*addr = 0;
	if (!blob)
		return -ENOMEM;
	len = wt_tiny_build(blob, WT_TINY_INT8);
	ret = wdrv_dma_map(&f->fw.dma, blob, len, WDRV_DMA_MAPPABLE, GFP_KERNEL, addr);
	if (ret)
		return ret;
	cmd.load = (struct wfw_cmd_load_model){ .addr = *addr, .len = len, .flags = flags };
	ret = wdrv_fw_ctrl(&f->fw, &cmd, &cpl);
	if (ret)
		return ret;
	memset(&cmd, 0, sizeof(cmd));
	cmd.opcode = WFW_OP_CREATE_CONTEXT;
	cmd.ctx.slots = 2;
	cmd.ctx.ctx_len = 16;
	ret = wdrv_fw_ctrl(&f->fw, &cmd, &cpl);
	f->ctx_id = cpl.result0;
	return ret;
}

static int fixture_init(struct kunit *test)
{
	struct wdrv_fw_config cfg = {
		.profile = "asic", .stages = 2, .sram_bytes = 256 * 1024,
		.numa_node = NUMA_NO_NODE, .index = 99, .fault_inject = true,
		.ctrl_timeout_ms = TEST_TIMEOUT_MS,
		.job_cpl = fixture_job_cpl, .fault = fixture_fault,
	};
	struct fw_fixture *f;
	u64 addr;
	int ret;

	f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	f->in = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	f->out = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	if (!f->in || !f->out)
		return -ENOMEM;
	init_completion(&f->job_done);
	cfg.owner = f;
	ret = wdrv_fw_init(&f->fw, &cfg);
	if (ret)
		return ret;
	test->priv = f;

	/* Resident: the blob's window goes once the load is done. */
	ret = load(test, f, 0, &addr);
	wdrv_dma_unmap(&f->fw.dma, addr);
	if (ret)
		return ret;
	ret = wdrv_dma_map(&f->fw.dma, f->in, PAGE_SIZE, 0, GFP_KERNEL, &f->in_addr);
	if (!ret)
		ret = wdrv_dma_map(&f->fw.dma, f->out, PAGE_SIZE, WDRV_DMA_WRITE,
				   GFP_KERNEL, &f->out_addr);
	return ret;
}

static void fixture_exit(struct kunit *test)
{
	struct fw_fixture *f = test->priv;

	if (!f)
		return;
	/* The device stops first; then its windows can go. */
	wfs_device_destroy(f->fw.wfs);
	f->fw.wfs = NULL;
	if (f->in_addr)
		wdrv_dma_unmap(&f->fw.dma, f->in_addr);
	if (f->out_addr)
		wdrv_dma_unmap(&f->fw.dma, f->out_addr);
	wdrv_fw_fini(&f->fw);
}

/* Posts RUN_JOB @cmd and waits for its completion. */
static int post_wait(struct fw_fixture *f, struct wfw_cmd *cmd, unsigned long timeout_ms)
{
	int ret;

	reinit_completion(&f->job_done);
	ret = wdrv_fw_post(&f->fw, cmd);
	if (ret)
		return ret;
	if (!wait_for_completion_timeout(&f->job_done, msecs_to_jiffies(timeout_ms)))
		return -ETIMEDOUT;
	return f->last.cookie == cmd->cookie ? f->last.status : -EPROTO;
}

/* Posts a one-token job at @pos of slot 0 and waits for its completion. */
static int run_job(struct fw_fixture *f, u64 cookie, u32 pos, unsigned long timeout_ms)
{
	struct wfw_cmd cmd = { .opcode = WFW_OP_RUN_JOB, .cookie = cookie };

	f->in[0] = 1 + pos % 5;
	cmd.job.ctx_id = f->ctx_id;
	cmd.job.start_pos = pos;
	cmd.job.n_tokens = 1;
	cmd.job.in_addr = f->in_addr;
	cmd.job.out_addr = f->out_addr;
	cmd.job.out_len = PAGE_SIZE;
	cmd.job.topk = 2;
	return post_wait(f, &cmd, timeout_ms);
}

static int inject(struct fw_fixture *f, u32 fault)
{
	struct wfw_cmd cmd = { .opcode = WFW_OP_FAULT_INJECT };
	struct wfw_cpl cpl;

	cmd.fault.fault = fault;
	return wdrv_fw_ctrl(&f->fw, &cmd, &cpl);
}

/*
 * Once wdrv_fw_fini() has run, what comes late (a context or model release
 * that outlived the device's teardown) fails with -ENODEV and touches
 * nothing of the destroyed device.
 */
static void wdrv_test_fw_gone_after_fini(struct kunit *test)
{
	struct wdrv_fw_config cfg = {
		.profile = "asic", .stages = 2, .sram_bytes = 256 * 1024,
		.numa_node = NUMA_NO_NODE, .index = 98, .ctrl_timeout_ms = TEST_TIMEOUT_MS,
		.job_cpl = fixture_job_cpl, .fault = fixture_fault, .owner = test->priv,
	};
	struct wfw_cmd unload = { .opcode = WFW_OP_UNLOAD_MODEL };
	struct wfw_cmd job = { .opcode = WFW_OP_RUN_JOB, .cookie = 1 };
	struct wdrv_fw *fw = kunit_kzalloc(test, sizeof(*fw), GFP_KERNEL);
	struct wfw_info *info = kunit_kzalloc(test, sizeof(*info), GFP_KERNEL);
	struct wfw_cpl cpl;
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, fw);
	KUNIT_ASSERT_NOT_NULL(test, info);
	KUNIT_ASSERT_EQ(test, wdrv_fw_init(fw, &cfg), 0);
	wdrv_fw_fini(fw);
	KUNIT_EXPECT_EQ(test, wdrv_fw_ctrl(fw, &unload, &cpl), -ENODEV);
	KUNIT_EXPECT_EQ(test, cpl.status, -ENODEV);
	ret = wdrv_fw_ctrl_read(fw, WFW_OP_GET_INFO, 0, 0, info, sizeof(*info), &cpl);
	KUNIT_EXPECT_EQ(test, ret, -ENODEV);
	KUNIT_EXPECT_EQ(test, wdrv_fw_post(fw, &job), -ENODEV);
}

static void wdrv_test_fw_jobs_wrap_rings(struct kunit *test)
{
	struct fw_fixture *f = test->priv;
	unsigned int i;

	/* More jobs than both rings hold: the indices wrap the rings. */
	for (i = 0; i < 3 * WDRV_FW_CMD_ENTRIES; i++) {
		int ret = run_job(f, i + 1, i % 16, TEST_TIMEOUT_MS);

		KUNIT_ASSERT_EQ_MSG(test, ret, 0, "job %u", i);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&f->jobs_done), 3 * WDRV_FW_CMD_ENTRIES);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->faults), 0);
	/* Completions so far: GET_INFO, LOAD_MODEL, CREATE_CONTEXT, the jobs. */
	KUNIT_EXPECT_EQ(test, f->last.seq, 3u + 3 * WDRV_FW_CMD_ENTRIES);
}

static void wdrv_test_fw_hang_reset(struct kunit *test)
{
	struct fw_fixture *f = test->priv;

	KUNIT_ASSERT_EQ(test, run_job(f, 1, 0, TEST_TIMEOUT_MS), 0);
	KUNIT_ASSERT_EQ(test, inject(f, WFW_FAULT_HANG_NEXT_JOB), 0);
	KUNIT_EXPECT_EQ(test, run_job(f, 2, 1, 200), -ETIMEDOUT);
	wdrv_fw_reset(&f->fw, false);
	/* The hung job never completes; a new one does, with fresh sequence. */
	KUNIT_EXPECT_EQ(test, run_job(f, 3, 1, TEST_TIMEOUT_MS), 0);
	KUNIT_EXPECT_EQ(test, f->last.cookie, 3ull);
	KUNIT_EXPECT_EQ(test, f->last.seq, 1u);
}

static void wdrv_test_fw_corrupt_completion(struct kunit *test)
{
	struct fw_fixture *f = test->priv;
	int faults = atomic_read(&f->faults);

	KUNIT_ASSERT_EQ(test, inject(f, WFW_FAULT_CORRUPT_NEXT_CPL), 0);
	/* The corrupt record is not delivered as a job completion. */
	KUNIT_EXPECT_EQ(test, run_job(f, 4, 0, 200), -ETIMEDOUT);
	KUNIT_EXPECT_GT(test, atomic_read(&f->faults), faults);
	wdrv_fw_reset(&f->fw, false);
	KUNIT_EXPECT_EQ(test, run_job(f, 5, 0, TEST_TIMEOUT_MS), 0);
}

/* Destroys context @ctx_id from a worker (a control command that waits). */
struct ctrl_waiter {
	struct work_struct work;
	struct wdrv_fw *fw;
	u32 ctx_id;
	unsigned long took;
	int ret;
};

static void ctrl_waiter_fn(struct work_struct *work)
{
	struct ctrl_waiter *w = container_of(work, struct ctrl_waiter, work);
	struct wfw_cmd cmd = { .opcode = WFW_OP_DESTROY_CONTEXT };
	unsigned long t0 = jiffies;
	struct wfw_cpl cpl;

	cmd.ctx.ctx_id = w->ctx_id;
	w->ret = wdrv_fw_ctrl(w->fw, &cmd, &cpl);
	w->took = jiffies - t0;
}

static bool ctrl_posted(struct wdrv_fw *fw)
{
	return wdrv_fw_ctrl_busy(fw);
}

static void wdrv_test_fw_reset_fences_ctrl(struct kunit *test)
{
	struct fw_fixture *f = test->priv;
	struct ctrl_waiter w = { .fw = &f->fw, .ctx_id = f->ctx_id };
	struct wfw_info info;
	struct wfw_cpl cpl;
	int i;

	/* A command processor that stops: the next control command waits. */
	KUNIT_ASSERT_EQ(test, inject(f, WFW_FAULT_STALL_CP), 0);
	INIT_WORK_ONSTACK(&w.work, ctrl_waiter_fn);
	queue_work(system_unbound_wq, &w.work);
	for (i = 0; i < 1000 && !ctrl_posted(&f->fw); i++)
		usleep_range(1000, 2000);
	KUNIT_ASSERT_TRUE(test, ctrl_posted(&f->fw));

	wdrv_fw_reset(&f->fw, false);
	flush_work(&w.work);
	destroy_work_on_stack(&w.work);
	/* Failed by the reset, not left to time out; and it never ran: */
	KUNIT_EXPECT_EQ(test, w.ret, -EIO);
	KUNIT_EXPECT_LT(test, w.took, msecs_to_jiffies(TEST_TIMEOUT_MS));
	/* the next command runs, and the context is still there. */
	KUNIT_EXPECT_EQ(test, wdrv_fw_ctrl_read(&f->fw, WFW_OP_GET_INFO, 0, 0, &info,
						sizeof(info), &cpl), 0);
	KUNIT_EXPECT_EQ(test, info.contexts, 1u);
	KUNIT_EXPECT_EQ(test, run_job(f, 6, 0, TEST_TIMEOUT_MS), 0);
}

static void wdrv_test_fw_reset_generation(struct kunit *test)
{
	struct fw_fixture *f = test->priv;
	u32 gen = f->fw.gen;
	u64 posted;

	wdrv_fw_reset(&f->fw, false);
	KUNIT_EXPECT_EQ(test, f->fw.gen, (gen + 1) & (u32)(WDRV_FW_COOKIE_GEN >> 32));
	KUNIT_ASSERT_EQ(test, run_job(f, 7, 0, TEST_TIMEOUT_MS), 0);
	/* The descriptor carried the new generation; the owner sees it stripped. */
	posted = f->fw.cmd_ring[0].cookie;
	KUNIT_EXPECT_EQ(test, (u32)FIELD_GET(WDRV_FW_COOKIE_GEN, posted), f->fw.gen);
	KUNIT_EXPECT_EQ(test, posted & ~WDRV_FW_COOKIE_GEN, 7ull);
	KUNIT_EXPECT_EQ(test, f->last.cookie, 7ull);
}

/* GET_EXPERT_LOAD through the driver: a dense model has no entries. */
static void wdrv_test_fw_expert_load_dense(struct kunit *test)
{
	struct fw_fixture *f = test->priv;
	struct wfw_expert_load e[4];
	struct wfw_info info;
	struct wfw_cpl cpl;

	KUNIT_ASSERT_EQ(test, run_job(f, 8, 0, TEST_TIMEOUT_MS), 0);
	KUNIT_EXPECT_EQ(test, wdrv_fw_ctrl_read(&f->fw, WFW_OP_GET_EXPERT_LOAD, 0, 0, e,
						sizeof(e), &cpl), 0);
	KUNIT_EXPECT_EQ(test, cpl.result0, 0u);
	KUNIT_EXPECT_EQ(test, cpl.result1, 0u);
	KUNIT_EXPECT_EQ(test, cpl.result2, 0u);
	KUNIT_EXPECT_EQ(test, wdrv_fw_ctrl_read(&f->fw, WFW_OP_GET_INFO, 0, 0, &info,
						sizeof(info), &cpl), 0);
	KUNIT_EXPECT_EQ(test, info.moe_layers, 0u);
	KUNIT_EXPECT_EQ(test, info.moe_imbalance_milli, 0u);
	KUNIT_EXPECT_EQ(test, info.abi_version, (u32)WFW_ABI_VERSION);
}

static void wdrv_test_fw_stream(struct kunit *test)
{
	struct fw_fixture *f = test->priv;
	u8 resident[WFW_OUT_REC_SIZE(2)];
	struct wfw_info info;
	struct wfw_cpl cpl;
	u64 addr;

	KUNIT_ASSERT_EQ(test, run_job(f, 9, 0, TEST_TIMEOUT_MS), 0);
	memcpy(resident, f->out, sizeof(resident));
	KUNIT_ASSERT_EQ(test, unload(f), 0);
	KUNIT_EXPECT_EQ(test, load(test, f, WFW_LOAD_STREAM << 1, &addr), -EINVAL);
	wdrv_dma_unmap(&f->fw.dma, addr);
	/* The blob stays mapped: the stages read the weights from it. */
	KUNIT_ASSERT_EQ(test, load(test, f, WFW_LOAD_STREAM, &addr), 0);
	KUNIT_EXPECT_EQ(test, wdrv_fw_ctrl_read(&f->fw, WFW_OP_GET_INFO, 0, 0, &info,
						sizeof(info), &cpl), 0);
	KUNIT_EXPECT_TRUE(test, info.model_flags & WFW_MODEL_STREAM);
	memset(f->out, 0, sizeof(resident));
	KUNIT_EXPECT_EQ(test, run_job(f, 10, 0, TEST_TIMEOUT_MS), 0);
	KUNIT_EXPECT_EQ(test, memcmp(f->out, resident, sizeof(resident)), 0);
	/* A driver that let the blob go: the job fails, nothing worse. */
	wdrv_dma_unmap(&f->fw.dma, addr);
	KUNIT_EXPECT_EQ(test, run_job(f, 11, 1, TEST_TIMEOUT_MS), -EFAULT);
	KUNIT_EXPECT_EQ(test, unload(f), 0);
}

/*
 * Loads @ld (its part, expert range) of tiny model @v: its id (*@model)
 * and a context (*@ctx).
 */
static int load_tiny(struct kunit *test, struct fw_fixture *f, enum wt_tiny_variant v,
		     const struct wfw_cmd_load_model *ld, u32 *model, u32 *ctx)
{
	struct wfw_cmd cmd = { .opcode = WFW_OP_LOAD_MODEL };
	u8 *blob = kunit_kzalloc(test, WT_TINY_MAX, GFP_KERNEL);
	struct wfw_cpl cpl;
	size_t len;
	u64 addr;
	int ret;

	if (!blob)
		return -ENOMEM;
	len = wt_tiny_build(blob, v);
	ret = wdrv_dma_map(&f->fw.dma, blob, len, WDRV_DMA_MAPPABLE, GFP_KERNEL, &addr);
	if (ret)
		return ret;
	cmd.load = *ld;
	cmd.load.addr = addr;
	cmd.load.len = len;
	ret = wdrv_fw_ctrl(&f->fw, &cmd, &cpl);
	wdrv_dma_unmap(&f->fw.dma, addr);
	if (ret)
		return ret;
	*model = cpl.model;
	memset(&cmd, 0, sizeof(cmd));
	cmd.opcode = WFW_OP_CREATE_CONTEXT;
	cmd.model = *model;
	cmd.ctx.slots = 1;
	cmd.ctx.ctx_len = 16;
	ret = wdrv_fw_ctrl(&f->fw, &cmd, &cpl);
	*ctx = cpl.result0;
	return ret;
}

/* Loads part @part of the tiny model: its id (*@model) and a context (*@ctx). */
static int load_part(struct kunit *test, struct fw_fixture *f, u32 part, u32 *model, u32 *ctx)
{
	const struct wfw_cmd_load_model ld = { .part = part };

	return load_tiny(test, f, WT_TINY_INT8, &ld, model, ctx);
}

#define TINY_ACT	WFW_ACT_REC_SIZE(8)	/* the tiny model's activation record */

/*
 * Step @s of a token through part models @model / @ctx (attention even,
 * FFN odd): its input in f->in (the token id, or the previous step's
 * record copied there), then the layer, where the driver puts
 * drm_wafer_job.layer (wdrv_job.c's job_keep_layer()).
 */
static int run_step(struct fw_fixture *f, const u32 model[2], const u32 ctx[2], u32 s, u32 last)
{
	struct wfw_cmd cmd = { .opcode = WFW_OP_RUN_JOB, .cookie = 100 + s };
	u32 layer = s / 2, in_bytes = s ? TINY_ACT : sizeof(u32);

	if (s)
		memcpy(f->in, f->out, TINY_ACT);
	else
		f->in[0] = 1;
	memcpy((u8 *)f->in + in_bytes, &layer, sizeof(layer));
	cmd.model = model[s & 1];
	cmd.job.ctx_id = ctx[s & 1];
	cmd.job.n_tokens = 1;
	cmd.job.in_addr = f->in_addr;
	cmd.job.out_addr = f->out_addr;
	cmd.job.out_len = PAGE_SIZE;
	cmd.job.flags = WFW_JOB_LAYER | (s ? WFW_JOB_IN_ACT : 0) | (s < last ? WFW_JOB_OUT_ACT : 0);
	cmd.job.topk = s < last ? 0 : 2;
	return post_wait(f, &cmd, TEST_TIMEOUT_MS);
}

/*
 * A part model running jobs, as the driver drives it: the attention and the
 * FFN part of each layer of the tiny model, one job each, give the whole
 * model's record bit for bit; a part job without WFW_JOB_LAYER, or naming a
 * layer outside the model, fails with -EINVAL.
 */
static void wdrv_test_fw_layer_parts(struct kunit *test)
{
	struct fw_fixture *f = test->priv;
	u8 whole[WFW_OUT_REC_SIZE(2)];
	struct wfw_cmd cmd = { .opcode = WFW_OP_RUN_JOB, .cookie = 99 };
	u32 model[2], ctx[2], s, bad = 7;

	KUNIT_ASSERT_EQ(test, run_job(f, 12, 0, TEST_TIMEOUT_MS), 0);
	memcpy(whole, f->out, sizeof(whole));
	KUNIT_ASSERT_EQ(test, load_part(test, f, WFW_PART_ATTN, &model[0], &ctx[0]), 0);
	KUNIT_ASSERT_EQ(test, load_part(test, f, WFW_PART_FFN, &model[1], &ctx[1]), 0);
	memset(f->out, 0, PAGE_SIZE);
	for (s = 0; s < 4; s++)
		KUNIT_ASSERT_EQ_MSG(test, run_step(f, model, ctx, s, 3), 0, "step %u", s);
	KUNIT_EXPECT_EQ(test, memcmp(f->out, whole, sizeof(whole)), 0);
	/* The attention of layer 0 without LAYER, then with layer 7. */
	f->in[0] = 1;
	memcpy(&f->in[1], &bad, sizeof(bad));
	cmd.model = model[0];
	cmd.job = (struct wfw_cmd_run_job){ .ctx_id = ctx[0], .n_tokens = 1,
		.in_addr = f->in_addr, .out_addr = f->out_addr, .out_len = PAGE_SIZE,
		.flags = WFW_JOB_OUT_ACT };
	KUNIT_EXPECT_EQ(test, post_wait(f, &cmd, TEST_TIMEOUT_MS), -EINVAL);
	cmd.cookie = 98;
	cmd.job.flags |= WFW_JOB_LAYER;
	KUNIT_EXPECT_EQ(test, post_wait(f, &cmd, TEST_TIMEOUT_MS), -EINVAL);
}

#define TINY_XREC	WFW_XREC_SIZE(8, 13)	/* the tiny MoE model's expert record */
#define EP_SHARDS	2

/*
 * Expert parallelism as the driver drives it: the tiny MoE model's
 * attention, FFN home and two shards of its three routed experts, the
 * records in three writable pages A, B, C (A also takes the token), the
 * layer word (its phase in bits 24..31) after each input.
 */
struct ep_fixture {
	struct fw_fixture *f;
	u32 model[2 + EP_SHARDS], ctx[2 + EP_SHARDS], cookie;
	u8 *buf[3];
	u64 addr[3];
};

/* A job of member @k, records from page @in to page @out (< 0: results). */
static int ep_job(struct ep_fixture *e, u32 k, u32 lw, u32 in, int out)
{
	struct wfw_cmd cmd = { .opcode = WFW_OP_RUN_JOB, .cookie = 300 + e->cookie++ };
	u32 in_bytes = k ? TINY_XREC : lw ? TINY_ACT : sizeof(u32);

	memcpy(e->buf[in] + in_bytes, &lw, sizeof(lw));
	cmd.model = e->model[k];
	cmd.job.ctx_id = e->ctx[k];
	cmd.job.n_tokens = 1;
	cmd.job.in_addr = e->addr[in];
	cmd.job.out_addr = out < 0 ? e->f->out_addr : e->addr[out];
	cmd.job.out_len = PAGE_SIZE;
	cmd.job.flags = WFW_JOB_LAYER | (in_bytes > sizeof(u32) ? WFW_JOB_IN_ACT : 0) |
			(out < 0 ? 0 : WFW_JOB_OUT_ACT);
	cmd.job.topk = out < 0 ? 2 : 0;
	return post_wait(e->f, &cmd, TEST_TIMEOUT_MS);
}

/* Each shard runs @ph on page @in; its units or its s64 sum go into @in. */
static int ep_exchange(struct ep_fixture *e, u32 l, u32 ph, u32 in)
{
	u32 a1 = WFW_XREC_A1_OFF(8), a3 = WFW_XREC_A3_OFF(8, 13), y = WFW_XREC_Y_OFF(8, 13);
	u8 *h = e->buf[in], *c = e->buf[2];
	struct wfw_xrec_hdr xh;
	u32 s, i;
	int ret;

	for (s = 0; s < EP_SHARDS; s++) {
		ret = ep_job(e, 2 + s, l | ph << WFW_XPHASE_SHIFT, in, 2);
		if (ret)
			return ret;
		memcpy(&xh, c + WFW_XREC_HDR_OFF(8), sizeof(xh));
		if (ph == WFW_XPHASE_UP) {
			memcpy(h + a1 + 8 * xh.u0, c + a1 + 8 * xh.u0, 8 * (xh.u1 - xh.u0));
			memcpy(h + a3 + 8 * xh.u0, c + a3 + 8 * xh.u0, 8 * (xh.u1 - xh.u0));
			continue;
		}
		for (i = 0; i < 8; i++)
			((u64 *)(h + y))[i] += ((u64 *)(c + y))[i];
	}
	return 0;
}

/* Layer @l of the token in page A: attention, ROUTE, UP, GLU, DOWN, FIN. */
static int ep_layer(struct ep_fixture *e, u32 l, u32 last)
{
	u8 *a = e->buf[0], *b = e->buf[1];
	int ret;

	ret = ep_job(e, 0, l, 0, 1);
	if (ret)
		return ret;
	memset(a, 0, TINY_XREC);
	memcpy(a, b, TINY_ACT);
	ret = ep_job(e, 1, l | WFW_XPHASE_ROUTE << WFW_XPHASE_SHIFT, 0, 1);
	ret = ret ?: ep_exchange(e, l, WFW_XPHASE_UP, 1);
	ret = ret ?: ep_job(e, 1, l | WFW_XPHASE_GLU << WFW_XPHASE_SHIFT, 1, 0);
	ret = ret ?: ep_exchange(e, l, WFW_XPHASE_DOWN, 0);
	ret = ret ?: ep_job(e, 1, l | WFW_XPHASE_FIN << WFW_XPHASE_SHIFT, 0, l == last ? -1 : 1);
	if (!ret && l != last)
		memcpy(a, b, TINY_ACT);
	return ret;
}

/* The whole tiny MoE model's record for token 1 at position 0, then unloaded. */
static void ep_whole(struct kunit *test, struct fw_fixture *f, u8 *whole, size_t n)
{
	const struct wfw_cmd_load_model ld = { 0 };
	struct wfw_cmd cmd = { .opcode = WFW_OP_RUN_JOB, .cookie = 299 };
	struct wfw_cpl cpl;
	u32 model, ctx;

	KUNIT_ASSERT_EQ(test, unload(f), 0);
	KUNIT_ASSERT_EQ(test, load_tiny(test, f, WT_TINY_MOE, &ld, &model, &ctx), 0);
	f->in[0] = 1;
	cmd.model = model;
	cmd.job = (struct wfw_cmd_run_job){ .ctx_id = ctx, .n_tokens = 1, .topk = 2,
		.in_addr = f->in_addr, .out_addr = f->out_addr, .out_len = PAGE_SIZE };
	KUNIT_ASSERT_EQ(test, post_wait(f, &cmd, TEST_TIMEOUT_MS), 0);
	memcpy(whole, f->out, n);
	memset(&cmd, 0, sizeof(cmd));
	cmd.opcode = WFW_OP_UNLOAD_MODEL;
	cmd.model = model;
	cmd.unload.flags = WFW_UNLOAD_CONTEXTS;
	KUNIT_ASSERT_EQ(test, wdrv_fw_ctrl(&f->fw, &cmd, &cpl), 0);
}

/* The four parts and the three record pages; 0 or an errno. */
static int ep_up(struct kunit *test, struct ep_fixture *e)
{
	static const struct wfw_cmd_load_model ld[2 + EP_SHARDS] = {
		{ .part = WFW_PART_ATTN }, { .part = WFW_PART_XHOME },
		{ .part = WFW_PART_XSHARD, .expert_first = 0, .expert_count = 2 },
		{ .part = WFW_PART_XSHARD, .expert_first = 2, .expert_count = 1 },
	};
	u32 k;
	int ret = 0;

	for (k = 0; k < 2 + EP_SHARDS && !ret; k++)
		ret = load_tiny(test, e->f, WT_TINY_MOE, &ld[k], &e->model[k], &e->ctx[k]);
	for (k = 0; k < 3 && !ret; k++) {
		e->buf[k] = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
		ret = e->buf[k] ? wdrv_dma_map(&e->f->fw.dma, e->buf[k], PAGE_SIZE,
					       WDRV_DMA_WRITE, GFP_KERNEL, &e->addr[k]) : -ENOMEM;
	}
	return ret;
}

/*
 * The firmware in the driver's build runs an MoE layer over an expert home
 * and two shards as five jobs, the phase in the layer word the driver
 * writes after the input: the record is the whole model's bit for bit,
 * and a phase the part does not run fails the job with -EINVAL.
 */
static void wdrv_test_fw_expert_parallel(struct kunit *test)
{
	struct ep_fixture e = { .f = test->priv };
	u8 whole[WFW_OUT_REC_SIZE(2)];
	u32 l, k;

	ep_whole(test, e.f, whole, sizeof(whole));
	/* Not an assertion: the pages mapped so far are unmapped below. */
	KUNIT_EXPECT_EQ(test, ep_up(test, &e), 0);
	if (e.addr[2]) {
		memset(e.f->out, 0, PAGE_SIZE);
		e.buf[0][0] = 1;	/* the token: id 1 */
		for (l = 0; l < 2; l++)
			KUNIT_EXPECT_EQ_MSG(test, ep_layer(&e, l, 1), 0, "layer %u", l);
		KUNIT_EXPECT_EQ(test, memcmp(e.f->out, whole, sizeof(whole)), 0);
		/* The home asked for UP, a shard for ROUTE, the home for no phase. */
		KUNIT_EXPECT_EQ(test, ep_job(&e, 1, WFW_XPHASE_UP << WFW_XPHASE_SHIFT, 0, 1),
				-EINVAL);
		KUNIT_EXPECT_EQ(test, ep_job(&e, 2, WFW_XPHASE_ROUTE << WFW_XPHASE_SHIFT, 1, 2),
				-EINVAL);
		KUNIT_EXPECT_EQ(test, ep_job(&e, 1, 0, 0, 1), -EINVAL);
	}
	for (k = 0; k < 3; k++)
		if (e.addr[k])
			wdrv_dma_unmap(&e.f->fw.dma, e.addr[k]);
}

/* LOAD_MODEL of layers [@first, +@count) of the blob at @addr: status, *@model. */
static int load_range(struct fw_fixture *f, u64 addr, u64 len, u32 first, u32 count,
		      u32 *model)
{
	struct wfw_cmd cmd = { .opcode = WFW_OP_LOAD_MODEL };
	struct wfw_cpl cpl = { 0 };
	int ret;

	cmd.load = (struct wfw_cmd_load_model){
		.addr = addr, .len = len, .layer_first = first, .layer_count = count,
	};
	ret = wdrv_fw_ctrl(&f->fw, &cmd, &cpl);
	*model = cpl.model;
	return ret;
}

static int unload_id(struct fw_fixture *f, u32 model)
{
	struct wfw_cmd cmd = { .opcode = WFW_OP_UNLOAD_MODEL, .model = model };
	struct wfw_cpl cpl;

	return wdrv_fw_ctrl(&f->fw, &cmd, &cpl);
}

/*
 * A 513-layer blob, deeper than a model's load table (256 layers): whole
 * or as 257 layers it is -E2BIG; its layers [0, +1), [256, +2) and
 * [512, +1) load side by side (a load that filled the table from the
 * blob's layers wrote past it into the next model slot, and unloading
 * freed a pointer it had overwritten), unload, and the tiny model then
 * loads and runs.
 */
static void wdrv_test_fw_deep_blob_ranges(struct kunit *test)
{
	static const u32 range[3][2] = { { 0, 1 }, { 256, 2 }, { 512, 1 } };
	struct fw_fixture *f = test->priv;
	size_t cap = WT_TINY_BYTES(513), len;
	u8 *blob = kvzalloc(cap, GFP_KERNEL);
	u32 model[3], i, id;
	u64 addr;

	KUNIT_ASSERT_NOT_NULL(test, blob);
	KUNIT_ASSERT_EQ(test, unload(f), 0);
	len = wt_tiny_build_n(blob, cap, WT_TINY_INT8, 513);
	if (wdrv_dma_map(&f->fw.dma, blob, len, WDRV_DMA_MAPPABLE, GFP_KERNEL, &addr)) {
		kvfree(blob);
		KUNIT_FAIL(test, "cannot map the blob");
		return;
	}
	KUNIT_EXPECT_EQ(test, load_range(f, addr, len, 0, 0, &id), -E2BIG);
	KUNIT_EXPECT_EQ(test, load_range(f, addr, len, 0, 257, &id), -E2BIG);
	KUNIT_EXPECT_EQ(test, load_range(f, addr, len, 300, 256, &id), -EINVAL);
	for (i = 0; i < ARRAY_SIZE(range); i++)
		KUNIT_EXPECT_EQ_MSG(test, load_range(f, addr, len, range[i][0], range[i][1],
						     &model[i]), 0,
				    "layers [%u, +%u)", range[i][0], range[i][1]);
	for (i = 0; i < ARRAY_SIZE(range); i++)
		KUNIT_EXPECT_EQ(test, unload_id(f, model[i]), 0);
	wdrv_dma_unmap(&f->fw.dma, addr);
	kvfree(blob);
	KUNIT_ASSERT_EQ(test, load(test, f, 0, &addr), 0);
	wdrv_dma_unmap(&f->fw.dma, addr);
	KUNIT_EXPECT_EQ(test, run_job(f, 21, 0, TEST_TIMEOUT_MS), 0);
}

/* A LOAD_MODEL run from a worker, for loads in flight side by side. */
struct load_waiter {
	struct work_struct work;
	struct completion done;
	struct wdrv_fw *fw;
	struct wfw_cmd cmd;
	struct wfw_cpl cpl;
	int ret;
};

static void load_waiter_fn(struct work_struct *work)
{
	struct load_waiter *w = container_of(work, struct load_waiter, work);

	w->ret = wdrv_fw_ctrl(w->fw, &w->cmd, &w->cpl);
	complete(&w->done);
}

static void load_waiter_init(struct load_waiter *w, struct wdrv_fw *fw, u64 addr, u64 len)
{
	INIT_WORK_ONSTACK(&w->work, load_waiter_fn);
	init_completion(&w->done);
	w->fw = fw;
	w->cmd.opcode = WFW_OP_LOAD_MODEL;
	w->cmd.load = (struct wfw_cmd_load_model){ .addr = addr, .len = len };
}

/*
 * Load A's blob: its length gives it a control timeout of FAIR_CTRL_MS +
 * 8192 ms (WDRV_FW_LOAD_BYTES_PER_MS); the tiny load B queued behind it
 * has about FAIR_CTRL_MS.  A is held FAIR_HOLD_MS, seconds away from both.
 */
#define FAIR_CTRL_MS	500
#define FAIR_BIG_BYTES	SZ_32M
#define FAIR_HOLD_MS	3000

/*
 * A small load B queued in the firmware behind a large load A that runs
 * (held by fault injection longer than B's own timeout, well within A's)
 * waits A's time before its own: released, B loads, no control command
 * timed out and nothing asked for a reset.  Taking B's own timeout alone
 * fails it with -ETIMEDOUT while A is held, and reports a fault.
 */
static void wdrv_test_fw_load_waits_load_ahead(struct kunit *test)
{
	struct fw_fixture *f = test->priv;
	unsigned int ctrl_ms = f->fw.cfg.ctrl_timeout_ms;
	u8 *tiny = kunit_kzalloc(test, WT_TINY_MAX, GFP_KERNEL);
	int i, faults = atomic_read(&f->faults);
	u64 big_addr = 0, tiny_addr = 0;
	struct load_waiter a = { 0 }, b = { 0 };
	u8 *big;
	size_t len;

	KUNIT_ASSERT_NOT_NULL(test, tiny);
	/* Zeros: the firmware rejects A once released; only its length matters. */
	big = kvzalloc(FAIR_BIG_BYTES, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, big);
	len = wt_tiny_build(tiny, WT_TINY_INT8);
	load_waiter_init(&a, &f->fw, 0, FAIR_BIG_BYTES);
	load_waiter_init(&b, &f->fw, 0, len);
	if (wdrv_dma_map(&f->fw.dma, big, FAIR_BIG_BYTES, WDRV_DMA_MAPPABLE, GFP_KERNEL,
			 &big_addr) ||
	    wdrv_dma_map(&f->fw.dma, tiny, len, WDRV_DMA_MAPPABLE, GFP_KERNEL, &tiny_addr)) {
		KUNIT_FAIL(test, "cannot map the blobs");
		goto out;
	}
	a.cmd.load.addr = big_addr;
	b.cmd.load.addr = tiny_addr;
	/* Read per command: B's own timeout is short, the hold outlasts it. */
	f->fw.cfg.ctrl_timeout_ms = FAIR_CTRL_MS;

	if (inject(f, WFW_FAULT_PAUSE_NEXT_LOAD)) {
		KUNIT_FAIL(test, "cannot arm the load pause");
		goto out;
	}
	queue_work(system_unbound_wq, &a.work);
	for (i = 0; i < 1000 && !wdrv_fw_read_reg(&f->fw, WFW_REG_LOAD_RUNNING); i++)
		usleep_range(1000, 2000);
	KUNIT_EXPECT_NE(test, wdrv_fw_read_reg(&f->fw, WFW_REG_LOAD_RUNNING), 0u);
	queue_work(system_unbound_wq, &b.work);
	msleep(FAIR_HOLD_MS);
	KUNIT_EXPECT_FALSE_MSG(test, completion_done(&b.done),
			       "B ended (%d) while the load ahead of it was held", b.ret);
	KUNIT_EXPECT_EQ(test, inject(f, WFW_FAULT_NONE), 0);
	flush_work(&a.work);
	flush_work(&b.work);

	KUNIT_EXPECT_EQ(test, b.ret, 0);
	KUNIT_EXPECT_NE(test, a.ret, -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->faults), faults);
	if (atomic_read(&f->faults) != faults)
		/* As the driver would: loads left in the firmware go first. */
		wdrv_fw_reset(&f->fw, false);
	else if (!b.ret)
		KUNIT_EXPECT_EQ(test, unload_id(f, b.cpl.model), 0);
out:
	f->fw.cfg.ctrl_timeout_ms = ctrl_ms;
	destroy_work_on_stack(&a.work);
	destroy_work_on_stack(&b.work);
	if (tiny_addr)
		wdrv_dma_unmap(&f->fw.dma, tiny_addr);
	if (big_addr)
		wdrv_dma_unmap(&f->fw.dma, big_addr);
	kvfree(big);
}

static struct kunit_case wdrv_fw_job_test_cases[] = {
	KUNIT_CASE(wdrv_test_fw_jobs_wrap_rings),
	KUNIT_CASE(wdrv_test_fw_gone_after_fini),
	KUNIT_CASE(wdrv_test_fw_hang_reset),
	KUNIT_CASE(wdrv_test_fw_corrupt_completion),
	KUNIT_CASE(wdrv_test_fw_reset_fences_ctrl),
	KUNIT_CASE(wdrv_test_fw_reset_generation),
	KUNIT_CASE(wdrv_test_fw_expert_load_dense),
	KUNIT_CASE(wdrv_test_fw_stream),
	KUNIT_CASE(wdrv_test_fw_layer_parts),
	KUNIT_CASE(wdrv_test_fw_expert_parallel),
	KUNIT_CASE(wdrv_test_fw_deep_blob_ranges),
	KUNIT_CASE_SLOW(wdrv_test_fw_load_waits_load_ahead),
	{}
};

static struct kunit_suite wdrv_fw_job_test_suite = {
	.name = "wdrv_fw_jobs",
	.init = fixture_init,
	.exit = fixture_exit,
	.test_cases = wdrv_fw_job_test_cases,
};

kunit_test_suite(wdrv_fw_job_test_suite);
