// SPDX-License-Identifier: MIT
/*
 * fuzz_job.c - libFuzzer harness for what RUN_JOB and CREATE_CONTEXT read
 * from host memory: token ids, activation records (IN_ACT), expert
 * records (an expert-parallel home's, with the phase in the LAYER word),
 * the LAYER word of a part job, the NOT_BEFORE floor, and the buffers the
 * job writes (results, activation records, TIMES).
 *
 * One simulated device (asic, 4 stages of 1 MiB) holds four models loaded
 * once: the tiny int8 model whole (tokens in, results out), its layer 1
 * alone (activation records in), the tiny MoE model's expert-parallel
 * home (expert records) and its layer 0's FFN part (a LAYER word).  Each
 * input creates a context with the slots and length it gives, runs one
 * job on it and destroys it:
 *   byte 0        the model (% 4)
 *   bytes 1..2    CREATE_CONTEXT slots (% 4) and ctx_len (% 40)
 *   bytes 3..10   RUN_JOB slot (% 4), start_pos (% 48), n_tokens (% 40), topk
 *                 (% 12), flags (9 bits), out_len slack, times_offset
 *                 (byte 8's high bits: an expert-parallel phase)
 *   bytes 11..    patches of the input, 3 bytes each: a 16-bit offset
 *                 (modulo the bytes the job reads, and 16 more) and a
 *                 byte XORed there.
 * The input buffer starts valid for the model: token ids below the
 * vocabulary, activation records of the model's width with small values,
 * expert records whose activations are valid (the other phases' state is
 * zero), then the LAYER word (the range's first layer; a phase in its
 * top byte for the home) and a small NOT_BEFORE floor, each where the
 * flags the input gives put it.  The output buffer is exactly the
 * out_len the job names, registered alone, so a write past it is a DMA
 * fault the harness sees.  Every command gets one completion with a
 * valid check and status <= 0, the device raises no fault, and ASan and
 * UBSan see nothing.
 *
 * Longer runs: make fuzz-long (corpus under build/fuzz-corpus/).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/device_harness.h"
#include "wfs_forward.h"
#include "wfs_moe_ep.h"
#include "wfs_moe_ep_part.h"
#include "wt_tinyblob.h"

#define NMODELS		4
#define IN_BYTES	(64 * 1024)
#define MAX_TOKENS	40

static struct dh *h;
static u8 *in;
static struct {
	u32 id;
	u32 rec;	/* bytes of an input record: 4 (tokens) or more */
	u32 layer;	/* its LAYER word, 0: none */
	u32 in_act;
	u32 out_act;
	u32 dim;
} mdl[NMODELS];
static u8 *blobs[2];
static struct wfs_model_info info[2];

static void fail(const char *what, int v)
{
	fprintf(stderr, "fuzz_job: %s (%d)\n", what, v);
	abort();
}

static int exec(struct wfw_cmd *c, struct wfw_cpl *cpl)
{
	if (dh_exec(h, c, cpl, 30000))
		fail("no completion", c->opcode);
	if (cpl->check != wfw_cpl_check(cpl) || cpl->status > 0)
		fail("bad completion", cpl->status);
	return cpl->status;
}

static void load(u32 k, u32 b, u32 first, u32 count, u32 part)
{
	struct wfw_cpl cpl;
	size_t len = info[b].total_size;

	if (dh_load_experts(h, blobs[b], len, 0, first, count, part, 0, 0, 0, &cpl))
		fail("setup: LOAD_MODEL", cpl.status);
	mdl[k].id = cpl.model;
	mdl[k].dim = info[b].dim;
}

static void setup_once(void)
{
	struct wfs_device_config cfg;
	u32 i;

	h = calloc(1, sizeof(*h));
	in = dh_alloc(IN_BYTES);
	memset(&cfg, 0, sizeof(cfg));
	cfg.numa_node = -1;
	cfg.profile = "asic";
	cfg.stages = 4;
	cfg.sram_bytes = 1 << 20;
	cfg.max_jobs = 16;
	cfg.max_contexts = 8;
	if (!h || !in || dh_init(h, &cfg, 64, 64))
		fail("device setup", 0);
	dh_region_add(h, in, IN_BYTES);
	for (i = 0; i < 2; i++) {
		size_t len;

		blobs[i] = dh_alloc(WT_TINY_MAX);
		len = wt_tiny_build(blobs[i], i ? WT_TINY_MOE : WT_TINY_INT8);
		if (wfs_model_parse(blobs[i], len, &info[i]))
			fail("setup: blob", (int)i);
		dh_region_add(h, blobs[i], len);
	}
	load(0, 0, 0, 0, WFW_PART_WHOLE);
	mdl[0].rec = 4;
	load(1, 0, 1, 1, WFW_PART_WHOLE);
	mdl[1].rec = (u32)wfs_act_bytes(&info[0]);
	mdl[1].in_act = 1;
	load(2, 1, 0, 0, WFW_PART_XHOME);
	mdl[2].rec = wfs_ep_rec_bytes(&info[1]);
	mdl[2].in_act = 1;
	mdl[2].out_act = 1;
	mdl[2].layer = 1u << WFW_XPHASE_SHIFT;	/* layer 0, ROUTE */
	load(3, 1, 1, 1, WFW_PART_FFN);
	mdl[3].rec = (u32)wfs_act_bytes(&info[1]);
	mdl[3].in_act = 1;
	mdl[3].layer = 1;
}

/*
 * A valid input for model @k: @n records, then NOT_BEFORE, LAYER (with
 * expert parallelism's @phase).
 */
static void fill_input(u32 k, u32 n, u32 flags, u32 phase)
{
	u32 layer = mdl[k].layer;

	u32 i, j, r = mdl[k].rec;
	u64 off = (u64)n * r, nb = 1000;

	memset(in, 0, IN_BYTES);
	for (i = 0; i < n; i++) {
		u8 *p = in + (u64)i * r;

		if (!mdl[k].in_act) {
			((u32 *)p)[0] = 1 + i % 5;
			continue;
		}
		((struct wfw_act_rec *)p)->dim = mdl[k].dim;
		((struct wfw_act_rec *)p)->exp = -8;
		for (j = 0; j < mdl[k].dim; j++)
			((struct wfw_act_rec *)p)->x[j] = (s32)(j * 37 + i) - 100;
	}
	if (flags & WFW_JOB_NOT_BEFORE) {
		memcpy(in + off, &nb, sizeof(nb));
		off += sizeof(nb);
	}
	if (layer >> WFW_XPHASE_SHIFT)
		layer = (layer & WFW_JOB_LAYER_MASK) | phase << WFW_XPHASE_SHIFT;
	if (flags & WFW_JOB_LAYER)
		memcpy(in + off, &layer, sizeof(layer));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl;
	u32 k, n, flags, out_len, ctx, i;
	u64 used;
	u8 *out;
	int ret;

	if (!h)
		setup_once();
	if (size < 11)
		return 0;
	k = data[0] % NMODELS;
	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_CREATE_CONTEXT;
	c.model = mdl[k].id;
	c.ctx.slots = data[1] % 4;
	c.ctx.ctx_len = data[2] % 40;
	if (exec(&c, &cpl))
		return 0;
	ctx = cpl.result0;

	n = data[5] % MAX_TOKENS;
	/* The flags a host of this model sends, XORed with the input's. */
	flags = (mdl[k].in_act ? WFW_JOB_IN_ACT : 0) |
		(mdl[k].out_act ? WFW_JOB_OUT_ACT : 0) |
		(mdl[k].layer ? WFW_JOB_LAYER : 0);
	flags ^= data[7] | (u32)(data[8] & 1) << 8;
	fill_input(k, n, flags, 1 + (data[8] >> 1) % 5);
	/* Patches land in the records, LAYER and NOT_BEFORE, or just past. */
	used = (u64)n * mdl[k].rec + 16;
	for (i = 11; i + 3 <= size; i += 3)
		in[(data[i] | (u32)data[i + 1] << 8) % used] ^= data[i + 2];
	out_len = (flags & WFW_JOB_OUT_ACT ? n * mdl[k].rec :
		   (flags & WFW_JOB_ALL_POSITIONS ? n : 1) *
		   WFW_OUT_REC_SIZE(data[6] % 12)) + data[9] * 8u;
	out = malloc(out_len ? out_len : 1);
	if (!out)
		return 0;
	dh_region_add(h, out, out_len);
	dh_job_cmd(&c, ctx, data[3] % 4, data[4] % 48, n, (const u32 *)in, out,
		   out_len, data[6] % 12, (u16)flags, 0);
	if (flags & WFW_JOB_TIMES) {
		c.job.times_offset = data[10] * 8u;
		c.job.times_len = out_len > c.job.times_offset ?
				  out_len - c.job.times_offset : 0;
	}
	ret = exec(&c, &cpl);
	if (!ret && !(flags & (WFW_JOB_OUT_ACT | WFW_JOB_NOP)) && out_len >= 16 &&
	    ((struct wfw_out_rec *)out)->argmax >= info[0].vocab_size)
		fail("result past the vocabulary", (int)((struct wfw_out_rec *)out)->argmax);
	dh_region_del(h, out);
	free(out);

	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_DESTROY_CONTEXT;
	c.ctx.ctx_id = ctx;
	if (exec(&c, &cpl))
		fail("DESTROY_CONTEXT", cpl.status);
	if (dh_rd(h, WFW_REG_FAULT))
		fail("device fault", (int)dh_rd(h, WFW_REG_FAULT));
	return 0;
}
