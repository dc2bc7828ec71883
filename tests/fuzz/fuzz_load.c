// SPDX-License-Identifier: MIT
/*
 * fuzz_load.c - libFuzzer harness for LOAD_MODEL through the device's own
 * tables: several models at once, layer ranges, parts, expert groups and
 * shards, weight streaming, on blobs deeper than a device's load table.
 *
 * One simulated device (asic profile, 4 stages of 1 MiB, reset before each
 * input).  Byte 0 picks the blob: the tiny 2-layer int8 or MoE model
 * (tests/common/wt_tinyblob.h), or a 520-layer int8 or 260-layer MoE
 * one, more layers than a load table holds (WFS_DEV_MAX_LAYERS); a load
 * that filled a table from the blob's layers would write past the model
 * slots (the 520-layer one) or index past the arrays (ranges from 256).  The
 * input is then a sequence of 12-byte operations on a private copy of it:
 *   op % 4 == 0..1  LOAD_MODEL: layer_first (16 bits; with the "sane"
 *                   bit, modulo the blob's layers), layer_count (0..127,
 *                   or 130..257 with its high bit), part, flags (stream),
 *                   expert_group / expert_first / expert_count; then,
 *                   if it loaded, a context and one job of one token
 *                   (tokens or a zero activation record, its LAYER word
 *                   the range's first layer) whose status must be <= 0;
 *   op % 4 == 2     UNLOAD_MODEL of the model a byte picks;
 *   op % 4 == 3     XOR a byte of the blob copy (offset: 20 bits), so
 *                   the validator and the load see near-valid blobs.
 * Every command gets one completion with a valid check and status <= 0,
 * the device raises no fault, and ASan/UBSan see no bad access: loading
 * a range anywhere in a deep blob must stay inside the tables.
 *
 * Longer runs: make fuzz-long (corpus under build/fuzz-corpus/).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/device_harness.h"
#include "wfs_forward.h"
#include "wt_tinyblob.h"

#define DEEP		520
#define DEEP_MOE	260
#define NBLOBS		4
#define OP_BYTES	12
#define MAX_OPS		8
#define BUF		(64 * 1024)

static struct dh *h;
static u8 *pristine[NBLOBS], *blob, *buf;
static u32 blob_now = ~0u;	/* the pristine copy @blob holds, but for XORs */
static u32 xor_at[MAX_OPS], n_xor;
static size_t blob_len[NBLOBS], blob_cap;
static const u32 blob_layers[NBLOBS] = { 2, 2, DEEP, DEEP_MOE };

static void setup_once(void)
{
	static const u32 layers[NBLOBS] = { 0, 0, DEEP, DEEP_MOE };
	static const enum wt_tiny_variant var[NBLOBS] = {
		WT_TINY_INT8, WT_TINY_MOE, WT_TINY_INT8, WT_TINY_MOE
	};
	struct wfs_device_config cfg;
	u32 i;

	blob_cap = WT_TINY_BYTES(DEEP_MOE > DEEP ? DEEP_MOE : DEEP);
	for (i = 0; i < NBLOBS; i++) {
		pristine[i] = dh_alloc(blob_cap);
		blob_len[i] = wt_tiny_build_n(pristine[i], blob_cap, var[i],
					      layers[i]);
	}
	blob = dh_alloc(blob_cap);
	buf = dh_alloc(BUF);
	h = calloc(1, sizeof(*h));
	memset(&cfg, 0, sizeof(cfg));
	cfg.numa_node = -1;
	cfg.profile = "asic";
	cfg.stages = 4;
	cfg.sram_bytes = 1 << 20;
	cfg.max_jobs = 16;
	cfg.max_contexts = 8;
	if (!h || !blob || !buf || dh_init(h, &cfg, 64, 64)) {
		fprintf(stderr, "fuzz_load: device setup failed\n");
		abort();
	}
	dh_region_add(h, blob, blob_cap);
	dh_region_add(h, buf, BUF);
}

static void check(const struct wfw_cpl *c, const char *what)
{
	if (c->check != wfw_cpl_check(c) || c->status > 0) {
		fprintf(stderr, "fuzz_load: %s: bad completion (status %d)\n",
			what, c->status);
		abort();
	}
}

static int exec(struct wfw_cmd *c, struct wfw_cpl *cpl, const char *what)
{
	if (dh_exec(h, c, cpl, 30000)) {
		fprintf(stderr, "fuzz_load: %s: no completion\n", what);
		abort();
	}
	check(cpl, what);
	return cpl->status;
}

/* A context and one one-token job of the model just loaded. */
static void run_one(const struct wfw_cmd_load_model *ld, u32 model,
		    const struct wfs_model_info *info)
{
	u32 first = ld->layer_count ? ld->layer_first : info->first_layer;
	u32 n = (u32)wfs_act_bytes(info), flags = 0;
	struct wfw_cmd c;
	struct wfw_cpl cpl;
	u8 *in = buf, *out = buf + BUF / 2;

	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_CREATE_CONTEXT;
	c.model = model;
	c.ctx.slots = 1;
	c.ctx.ctx_len = 4;
	if (exec(&c, &cpl, "CREATE_CONTEXT"))
		return;
	memset(buf, 0, BUF);
	if (first) {
		flags |= WFW_JOB_IN_ACT;
		((struct wfw_act_rec *)in)->dim = info->dim;
	} else
		((u32 *)in)[0] = 1;
	if (first + (ld->layer_count ? ld->layer_count : info->n_layers) <
	    info->total_layers || ld->part == WFW_PART_ATTN)
		flags |= WFW_JOB_OUT_ACT;
	if (ld->part) {
		flags |= WFW_JOB_LAYER;
		memcpy(in + (first ? n : 4), &first, 4);
	}
	dh_job_cmd(&c, cpl.result0, 0, 0, 1, (u32 *)in, out, BUF / 2,
		   flags & WFW_JOB_OUT_ACT ? 0 : 4, (u16)flags, 0);
	exec(&c, &cpl, "RUN_JOB");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wfs_model_info info;
	u32 models[WFW_MAX_MODELS] = { 0 }, n_models = 0, i, k, which;
	struct wfw_cmd c;
	struct wfw_cpl cpl;
	const u8 *op;
	size_t len;

	if (!h)
		setup_once();
	if (!size)
		return 0;
	which = data[0] % NBLOBS;
	len = blob_len[which];
	if (which != blob_now)
		memcpy(blob, pristine[which], len);
	blob_now = which;
	dh_hw_reset(h, 1);
	for (i = 0; i < MAX_OPS && 1 + (i + 1) * OP_BYTES <= size; i++) {
		op = data + 1 + i * OP_BYTES;
		memset(&c, 0, sizeof(c));
		switch (op[0] % 4) {
		case 0:
		case 1:
			c.opcode = WFW_OP_LOAD_MODEL;
			c.load.addr = (u64)(uintptr_t)blob;
			c.load.len = (op[0] & 0x80) ? len - op[1] : len;
			c.load.layer_first = op[2] | (u32)op[3] << 8;
			c.load.layer_count = op[4] & 0x80 ?
					     257u - (op[4] & 0x7f) : op[4];
			c.load.part = op[5] % (WFW_PART_MAX + 2);
			c.load.flags = op[6] & 1 ? WFW_LOAD_STREAM : 0;
			c.load.expert_group = op[7] % 5;
			c.load.expert_first = op[8] % 4;
			c.load.expert_count = op[9] % 4;
			if (op[10] & 1) {
				/* Mostly-sane fields: what a host sends. */
				if (!c.load.layer_count)
					c.load.layer_first = 0;
				c.load.layer_first %= blob_layers[which];
				if (c.load.part > WFW_PART_MAX || c.load.flags)
					c.load.part = 0;
				if (c.load.part != WFW_PART_XSHARD)
					c.load.expert_first = c.load.expert_count = 0;
				if (c.load.flags || c.load.part >= WFW_PART_XHOME ||
				    c.load.part == WFW_PART_ATTN)
					c.load.expert_group = 0;
			}
			if (exec(&c, &cpl, "LOAD_MODEL"))
				break;
			if (n_models >= WFW_MAX_MODELS) {
				fprintf(stderr, "fuzz_load: more models loaded than a device holds\n");
				abort();
			}
			models[n_models++] = cpl.model;
			if ((op[11] & 1) && !wfs_model_parse(blob, c.load.len, &info))
				run_one(&c.load, cpl.model, &info);
			break;
		case 2:
			if (!n_models)
				break;
			k = op[1] % n_models;
			c.opcode = WFW_OP_UNLOAD_MODEL;
			c.model = models[k];
			c.unload.flags = WFW_UNLOAD_CONTEXTS;
			if (!exec(&c, &cpl, "UNLOAD_MODEL"))
				models[k] = models[--n_models];
			break;
		default:
			k = (op[1] | (u32)op[2] << 8 | (u32)(op[3] & 0xf) << 16) % len;
			blob[k] ^= op[4] ? op[4] : 1;
			xor_at[n_xor++] = k;
			break;
		}
	}
	/* Undo the XORs: the next input starts from the pristine blob. */
	while (n_xor--)
		blob[xor_at[n_xor]] = pristine[which][xor_at[n_xor]];
	n_xor = 0;
	if (dh_rd(h, WFW_REG_FAULT)) {
		fprintf(stderr, "fuzz_load: device fault 0x%x\n",
			dh_rd(h, WFW_REG_FAULT));
		abort();
	}
	return 0;
}
