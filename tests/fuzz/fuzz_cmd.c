// SPDX-License-Identifier: MIT
/*
 * fuzz_cmd.c - libFuzzer harness for the firmware command processor.
 *
 * The input is a sequence of 64-byte command descriptors fed through the
 * command ring of one simulated device (2 stages, a tiny model loaded, one
 * context).  Before each input the device is reset (full) and set up again,
 * so inputs are independent.  To get past the address checks, some field
 * values are rewritten into real buffers:
 *   - an address whose top byte is 0xab points into a 64 KiB scratch
 *     buffer (low 16 bits = offset), 0xbb into the model blob copy (which
 *     the input may also have mutated: the validator sees it);
 *   - ctx_id 0xc0 becomes the live context's id;
 *   - a header model of 0x4d becomes the live model's id (LOAD_MODEL may
 *     load more models beside it: the firmware holds several).
 * An input of odd length loads the model with weight streaming
 * (WFW_LOAD_STREAM): its jobs read the layers from the blob copy, which
 * commands writing at 0xbb addresses change under them.  Half the length
 * modulo 3 picks the part of each layer loaded (ABI 1.5, WFW_PART_*:
 * whole layers, attention or FFN; a part is never streamed): a part
 * model's jobs need WFW_JOB_LAYER, whose u32 after the input is whatever
 * the scratch buffer holds there (0 unless a command wrote it).  A sixth
 * of the length odd loads the tiny MoE model (3 experts, 1 shared)
 * instead, and unless streamed or an attention part, with its experts in
 * groups of 1 + (length / 12) % 3 placed across the stages (ABI 1.6,
 * LOAD_MODEL expert_group); LOAD_MODEL commands of the input carry
 * whatever expert_group they hold.  The MoE model takes half the length
 * modulo 5 as its part: 3 and 4 are expert parallelism's home and a
 * shard of experts [(length / 12) % 3, +1) (ABI 1.7), whose jobs take
 * expert records and a phase in the LAYER word's top byte.
 * Every command must produce exactly one completion with a valid check
 * value and a status <= 0, without faults, hangs, crashes or sanitizer
 * reports (the build uses ASan and UBSan).
 *
 * Run longer than `make test` does:
 *   build/tests/fuzz/fuzz_cmd -max_total_time=600 -max_len=4096 corpus/
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/device_harness.h"
#include "wt_tinyblob.h"

#define SCRATCH		(64 * 1024)
#define MAX_CMDS	32

static struct dh *h;
static u8 *scratch;
static u8 *blob;
static size_t blob_len;
static u8 *blob_pristine;
static u8 *moe_pristine;
static size_t moe_len;

static void setup_once(void)
{
	struct wfs_device_config cfg;

	h = calloc(1, sizeof(*h));
	scratch = dh_alloc(SCRATCH);
	blob = dh_alloc(WT_TINY_MAX);
	blob_pristine = dh_alloc(WT_TINY_MAX);
	blob_len = wt_tiny_build(blob_pristine, WT_TINY_INT8);
	moe_pristine = dh_alloc(WT_TINY_MAX);
	moe_len = wt_tiny_build(moe_pristine, WT_TINY_MOE);
	memset(&cfg, 0, sizeof(cfg));
	cfg.numa_node = -1;
	cfg.profile = "asic";
	cfg.stages = 2;
	cfg.sram_bytes = 256 << 10;
	cfg.max_jobs = 16;
	cfg.max_contexts = 4;
	if (dh_init(h, &cfg, 64, 64)) {
		fprintf(stderr, "fuzz_cmd: device setup failed\n");
		abort();
	}
	dh_region_add(h, scratch, SCRATCH);
	dh_region_add(h, blob, WT_TINY_MAX);
}

static u64 fix_addr(u64 a)
{
	switch (a >> 56) {
	case 0xab:
		return (u64)(uintptr_t)scratch + (a & 0xffff);
	case 0xbb:
		return (u64)(uintptr_t)blob + (a & 0x3fff);
	default:
		return a;
	}
}

static void fix_cmd(struct wfw_cmd *c, u32 ctx, u32 model)
{
	if (c->model == 0x4d)
		c->model = model;
	switch (c->opcode) {
	case WFW_OP_GET_INFO:
	case WFW_OP_GET_STATS:
	case WFW_OP_GET_SRAM_MAP:
	case WFW_OP_READ_LOG:
	case WFW_OP_GET_EXPERT_LOAD:
		c->buf.addr = fix_addr(c->buf.addr);
		break;
	case WFW_OP_LOAD_MODEL:
		c->load.addr = fix_addr(c->load.addr);
		break;
	case WFW_OP_CREATE_CONTEXT:
	case WFW_OP_DESTROY_CONTEXT:
		if (c->ctx.ctx_id == 0xc0)
			c->ctx.ctx_id = ctx;
		break;
	case WFW_OP_RUN_JOB:
		if (c->job.ctx_id == 0xc0)
			c->job.ctx_id = ctx;
		c->job.in_addr = fix_addr(c->job.in_addr);
		c->job.out_addr = fix_addr(c->job.out_addr);
		break;
	default:
		break;
	}
}

/* The model every input starts with: see the file comment. */
static int preload(size_t size, struct wfw_cpl *cpl)
{
	u32 part = (u32)((size >> 1) % 3);
	u32 flags = (size & 1) && !part ? WFW_LOAD_STREAM : 0;

	if (!((size / 6) & 1))
		return dh_load_range(h, blob, blob_len, flags, 0, 0, part, cpl);
	part = (u32)((size >> 1) % 5);
	if (part >= WFW_PART_XHOME)
		return dh_load_experts(h, blob, moe_len, 0, 0, 0, part, 0,
				       part == WFW_PART_XSHARD ? (u32)(size / 12) % 3 : 0,
				       part == WFW_PART_XSHARD, cpl);
	return dh_load_group(h, blob, moe_len, flags, 0, 0, part,
			     !flags && part != WFW_PART_ATTN ? 1 + (u32)(size / 12) % 3 : 0,
			     cpl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wfw_cpl cpl;
	u32 n, i, got = 0, ctx = 0, model = 0;
	int64_t id;

	if (!h)
		setup_once();
	dh_hw_reset(h, 1);
	if ((size / 6) & 1)
		memcpy(blob, moe_pristine, moe_len);
	else
		memcpy(blob, blob_pristine, blob_len);
	memset(scratch, 0, SCRATCH);
	/* Trailing bytes past the commands mutate the blob copy. */
	n = (u32)(size / sizeof(struct wfw_cmd));
	if (n > MAX_CMDS)
		n = MAX_CMDS;
	for (i = (u32)n * sizeof(struct wfw_cmd); i + 2 < size; i += 3)
		blob[((u32)data[i] << 8 | data[i + 1]) %
		     ((size / 6) & 1 ? moe_len : blob_len)] ^= data[i + 2];

	if (preload(size, &cpl) == 0) {
		model = cpl.model;
		id = dh_ctx_create(h, 2, 16, &cpl);
		if (id > 0)
			ctx = (u32)id;
	}
	for (i = 0; i < n; i++) {
		struct wfw_cmd c;

		memcpy(&c, data + (size_t)i * sizeof(c), sizeof(c));
		c.cookie = 0xf000 + i;
		fix_cmd(&c, ctx, model);
		if (dh_submit(h, &c)) {
			fprintf(stderr, "fuzz_cmd: command ring stuck\n");
			abort();
		}
	}
	while (got < n) {
		if (!dh_poll(h, &cpl, 20000)) {
			fprintf(stderr, "fuzz_cmd: %u of %u completions, then nothing\n",
				got, n);
			abort();
		}
		if (cpl.check != wfw_cpl_check(&cpl) || cpl.status > 0 ||
		    cpl.cookie < 0xf000 || cpl.cookie >= 0xf000 + n) {
			fprintf(stderr, "fuzz_cmd: bad completion (cookie %llx status %d)\n",
				(unsigned long long)cpl.cookie, cpl.status);
			abort();
		}
		/* Every command fetched completes, refused ones too. */
		got++;
	}
	if (dh_rd(h, WFW_REG_FAULT)) {
		fprintf(stderr, "fuzz_cmd: device fault 0x%x\n",
			dh_rd(h, WFW_REG_FAULT));
		abort();
	}
	return 0;
}
