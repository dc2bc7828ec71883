// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit: validation of every ioctl argument (wdrv_uapi.c), one check per
 * rule: padding, unknown flags, zero / huge / overflowing sizes, alignment,
 * ranges; and the job descriptor shared by DRM_IOCTL_WAFER_SUBMIT and the
 * io_uring command.
 */
#include <kunit/test.h>

#include <drm/wafer_accel.h>

#include "wdrv_uapi.h"

#define SLOTS	4
#define CTX_LEN	64

static struct drm_wafer_job good_job(void)
{
	return (struct drm_wafer_job){
		.ctx_id = 1, .slot = 1, .start_pos = 10, .n_tokens = 5, .top_k = 8,
		.in_handle = 1, .out_handle = 2, .in_offset = 64, .out_offset = 128,
	};
}

#define ACT	320	/* bytes of an activation record (dim 64) */

/* Against a context of the whole model: token ids in, results out. */
static int check_on(const struct drm_wafer_job *j, u32 model_flags, u32 slots,
		    u32 ctx_len, struct wdrv_job_io *io)
{
	const struct wdrv_job_shape sh = {
		.slots = slots, .ctx_len = ctx_len,
		.model_flags = model_flags, .act_size = ACT,
	};

	return wdrv_job_validate(NULL, j, &sh, io);
}

static int check(const struct drm_wafer_job *j, u64 *out_len)
{
	struct wdrv_job_io io;
	int ret = check_on(j, DRM_WAFER_MODEL_EMBED | DRM_WAFER_MODEL_HEAD,
			   SLOTS, CTX_LEN, &io);

	*out_len = io.out_len;
	return ret;
}

static void wdrv_test_job_valid(struct kunit *test)
{
	struct drm_wafer_job j = good_job();
	u64 len;

	KUNIT_EXPECT_EQ(test, check(&j, &len), 0);
	KUNIT_EXPECT_EQ(test, len, (u64)DRM_WAFER_RESULT_SIZE(8));
	j.flags = DRM_WAFER_JOB_ALL_POSITIONS;
	KUNIT_EXPECT_EQ(test, check(&j, &len), 0);
	KUNIT_EXPECT_EQ(test, len, 5ull * DRM_WAFER_RESULT_SIZE(8));
	j.top_k = 0;
	KUNIT_EXPECT_EQ(test, check(&j, &len), 0);
	KUNIT_EXPECT_EQ(test, len, 5ull * DRM_WAFER_RESULT_SIZE(0));
	/* The last position of the last slot. */
	j = good_job();
	j.slot = SLOTS - 1;
	j.start_pos = CTX_LEN - 1;
	j.n_tokens = 1;
	KUNIT_EXPECT_EQ(test, check(&j, &len), 0);
}

static void wdrv_test_job_flags_and_padding(struct kunit *test)
{
	struct drm_wafer_job j;
	u64 len;
	int bit;

	for (bit = 1; bit < 32; bit++) {
		/* Valid alone (wdrv_test_job_not_before_done_ns). */
		if ((1u << bit) & (DRM_WAFER_JOB_NOT_BEFORE | DRM_WAFER_JOB_DONE_NS))
			continue;
		j = good_job();
		j.flags = 1u << bit;
		KUNIT_EXPECT_EQ_MSG(test, check(&j, &len), -EINVAL, "flag bit %d", bit);
	}
	j = good_job();
	j.times_len = 1;
	KUNIT_EXPECT_EQ(test, check(&j, &len), -EINVAL);
	j.times_len = 0;
	j.times_offset = 64;
	KUNIT_EXPECT_EQ(test, check(&j, &len), -EINVAL);
}

/* TIMES: the timeline after the results, aligned, within 4 GiB. */
static void wdrv_test_job_times(struct kunit *test)
{
	struct drm_wafer_job j = good_job();
	u64 len;

	j.flags = DRM_WAFER_JOB_TIMES;
	j.times_offset = DRM_WAFER_RESULT_SIZE(8);
	j.times_len = 5 * sizeof(struct drm_wafer_chunk_time);
	KUNIT_EXPECT_EQ(test, check(&j, &len), 0);
	KUNIT_EXPECT_EQ(test, len, (u64)DRM_WAFER_RESULT_SIZE(8) + j.times_len);
	j.times_offset = DRM_WAFER_RESULT_SIZE(8) - 8;
	KUNIT_EXPECT_EQ_MSG(test, check(&j, &len), -EINVAL, "overlaps the result");
	j.times_offset = DRM_WAFER_RESULT_SIZE(8) + 4;
	KUNIT_EXPECT_EQ_MSG(test, check(&j, &len), -EINVAL, "misaligned");
	j.times_offset = DRM_WAFER_RESULT_SIZE(8);
	j.times_len = 0;
	KUNIT_EXPECT_EQ_MSG(test, check(&j, &len), -EINVAL, "empty");
	j.times_offset = U32_MAX - 7;
	j.times_len = 16;
	KUNIT_EXPECT_EQ_MSG(test, check(&j, &len), -EINVAL, "past 4 GiB");
	j.flags = DRM_WAFER_JOB_TIMES | DRM_WAFER_JOB_ALL_POSITIONS;
	j.times_offset = DRM_WAFER_RESULT_SIZE(8);
	j.times_len = 40;
	KUNIT_EXPECT_EQ_MSG(test, check(&j, &len), -EINVAL, "inside 5 results");
}

/* A NOP names a slot; any field of work, any other flag, is -EINVAL. */
static void wdrv_test_job_nop(struct kunit *test)
{
	const struct drm_wafer_job nop = {
		.ctx_id = 1, .slot = SLOTS - 1, .flags = DRM_WAFER_JOB_NOP,
	};
	struct drm_wafer_job j = nop;
	struct wdrv_job_io io;
	u64 len;

	KUNIT_EXPECT_EQ(test, check(&j, &len), 0);
	KUNIT_EXPECT_EQ(test, len, 0ull);
	/* Also on a middle range of layers: a NOP has no input or output. */
	KUNIT_EXPECT_EQ(test, check_on(&j, 0, SLOTS, CTX_LEN, &io), 0);
	j.slot = SLOTS;
	KUNIT_EXPECT_EQ(test, check(&j, &len), -EINVAL);
#define NOP_BAD(field, v) do {						\
		j = nop;						\
		j.field = (v);						\
		KUNIT_EXPECT_EQ_MSG(test, check(&j, &len), -EINVAL, #field);	\
	} while (0)
	NOP_BAD(n_tokens, 1);
	NOP_BAD(start_pos, 1);
	NOP_BAD(top_k, 1);
	NOP_BAD(in_handle, 1);
	NOP_BAD(out_handle, 1);
	NOP_BAD(in_offset, 64);
	NOP_BAD(out_offset, 64);
	NOP_BAD(flags, DRM_WAFER_JOB_NOP | DRM_WAFER_JOB_ALL_POSITIONS);
	NOP_BAD(flags, DRM_WAFER_JOB_NOP | DRM_WAFER_JOB_IN_ACT);
	NOP_BAD(flags, DRM_WAFER_JOB_NOP | DRM_WAFER_JOB_OUT_ACT);
	NOP_BAD(flags, DRM_WAFER_JOB_NOP | DRM_WAFER_JOB_TIMES);
	NOP_BAD(times_len, 40);
	NOP_BAD(in_syncobj_count, 1);	/* with no array */
	NOP_BAD(flags, DRM_WAFER_JOB_NOP | DRM_WAFER_JOB_WAIT_SUBMIT);	/* nothing to wait for */
#undef NOP_BAD
	/* A NOP may wait for in-syncobjs, so it may wait for their submission. */
	j = nop;
	j.flags |= DRM_WAFER_JOB_WAIT_SUBMIT;
	j.in_syncobjs = 0x1000;
	j.in_syncobj_count = 1;
	KUNIT_EXPECT_EQ(test, check(&j, &len), 0);
}

/* WAIT_SUBMIT needs in-syncobjs. */
static void wdrv_test_job_wait_submit(struct kunit *test)
{
	struct drm_wafer_job j = good_job();
	u64 len;

	j.flags |= DRM_WAFER_JOB_WAIT_SUBMIT;
	KUNIT_EXPECT_EQ(test, check(&j, &len), -EINVAL);
	j.in_syncobjs = 0x1000;
	j.in_syncobj_count = 1;
	KUNIT_EXPECT_EQ(test, check(&j, &len), 0);
}

static void wdrv_test_job_ranges(struct kunit *test)
{
	struct drm_wafer_job j;
	struct wdrv_job_io io;
	u64 len;

	j = good_job();
	j.n_tokens = 0;
	KUNIT_EXPECT_EQ(test, check(&j, &len), -EINVAL);
	j = good_job();
	j.start_pos = 0;
	j.n_tokens = CTX_LEN + 1;
	KUNIT_EXPECT_EQ(test, check(&j, &len), -EINVAL);
	j = good_job();
	j.top_k = DRM_WAFER_MAX_TOPK + 1;
	KUNIT_EXPECT_EQ(test, check(&j, &len), -EINVAL);
	j.top_k = DRM_WAFER_MAX_TOPK;
	KUNIT_EXPECT_EQ(test, check(&j, &len), 0);
	j = good_job();
	j.slot = SLOTS;
	KUNIT_EXPECT_EQ(test, check(&j, &len), -EINVAL);
	j.slot = U32_MAX;
	KUNIT_EXPECT_EQ(test, check(&j, &len), -EINVAL);
	/* start + n past the context, and wrapping u32. */
	j = good_job();
	j.start_pos = CTX_LEN - 2;
	j.n_tokens = 3;
	KUNIT_EXPECT_EQ(test, check(&j, &len), -EINVAL);
	j.start_pos = U32_MAX;
	j.n_tokens = 2;
	KUNIT_EXPECT_EQ(test, check(&j, &len), -EINVAL);
	/* The per-job token cap applies even to long contexts. */
	j = good_job();
	j.start_pos = 0;
	j.n_tokens = WDRV_MAX_TOKENS_PER_JOB + 1;
	KUNIT_EXPECT_EQ(test, check_on(&j, DRM_WAFER_MODEL_EMBED | DRM_WAFER_MODEL_HEAD,
				       1, U32_MAX, &io), -EINVAL);
}

/*
 * NOT_BEFORE: the floor follows the token ids (8 bytes more input); not
 * with activation records in, nor on a NOP.  DONE_NS goes with any job
 * but a NOP and changes no span.
 */
static void wdrv_test_job_not_before_done_ns(struct kunit *test)
{
	const struct drm_wafer_job nop = {
		.ctx_id = 1, .slot = 0, .flags = DRM_WAFER_JOB_NOP,
	};
	struct drm_wafer_job j = good_job();
	struct wdrv_job_io io;
	u64 len;

	j.flags = DRM_WAFER_JOB_NOT_BEFORE;
	KUNIT_EXPECT_EQ(test, check_on(&j, DRM_WAFER_MODEL_EMBED | DRM_WAFER_MODEL_HEAD,
				       SLOTS, CTX_LEN, &io), 0);
	KUNIT_EXPECT_EQ(test, io.in_len, 5ull * sizeof(u32) + sizeof(u64));
	/* The first range of a chain: tokens and the floor in, records out. */
	j.top_k = 0;
	j.flags = DRM_WAFER_JOB_NOT_BEFORE | DRM_WAFER_JOB_OUT_ACT;
	KUNIT_EXPECT_EQ(test, check_on(&j, DRM_WAFER_MODEL_EMBED, SLOTS, CTX_LEN, &io), 0);
	KUNIT_EXPECT_EQ(test, io.in_len, 5ull * sizeof(u32) + sizeof(u64));
	/* Records carry their own time. */
	j.flags = DRM_WAFER_JOB_NOT_BEFORE | DRM_WAFER_JOB_IN_ACT | DRM_WAFER_JOB_OUT_ACT;
	KUNIT_EXPECT_EQ(test, check_on(&j, 0, SLOTS, CTX_LEN, &io), -EINVAL);
	j.flags = DRM_WAFER_JOB_NOT_BEFORE | DRM_WAFER_JOB_IN_ACT;
	j.top_k = 8;
	KUNIT_EXPECT_EQ(test, check_on(&j, DRM_WAFER_MODEL_HEAD, SLOTS, CTX_LEN, &io),
			-EINVAL);
	/* DONE_NS: the driver's; the spans stay. */
	j = good_job();
	j.flags = DRM_WAFER_JOB_DONE_NS;
	KUNIT_EXPECT_EQ(test, check(&j, &len), 0);
	KUNIT_EXPECT_EQ(test, len, (u64)DRM_WAFER_RESULT_SIZE(8));
	j.flags = DRM_WAFER_JOB_IN_ACT | DRM_WAFER_JOB_DONE_NS;
	KUNIT_EXPECT_EQ(test, check_on(&j, DRM_WAFER_MODEL_HEAD, SLOTS, CTX_LEN, &io), 0);
	KUNIT_EXPECT_EQ(test, io.in_len, 5ull * ACT);
	/* A NOP takes neither. */
	j = nop;
	j.flags |= DRM_WAFER_JOB_NOT_BEFORE;
	KUNIT_EXPECT_EQ(test, check(&j, &len), -EINVAL);
	j = nop;
	j.flags |= DRM_WAFER_JOB_DONE_NS;
	KUNIT_EXPECT_EQ(test, check(&j, &len), -EINVAL);
	/* The next bit is still unknown. */
	j = good_job();
	j.flags = DRM_WAFER_JOB_DONE_NS << 1;
	KUNIT_EXPECT_EQ(test, check(&j, &len), -EINVAL);
}

/* Layer ranges: the flags must match the range, records are 64-aligned. */
static void wdrv_test_job_act(struct kunit *test)
{
	struct drm_wafer_job j = good_job();
	struct wdrv_job_io io;

	j.top_k = 0;
	j.flags = DRM_WAFER_JOB_IN_ACT | DRM_WAFER_JOB_OUT_ACT;
	KUNIT_EXPECT_EQ(test, check_on(&j, 0, SLOTS, CTX_LEN, &io), 0);
	KUNIT_EXPECT_EQ(test, io.in_len, 5ull * ACT);
	KUNIT_EXPECT_EQ(test, io.out_len, 5ull * ACT);
	/* A middle range takes and gives records: each flag is required. */
	j.flags = DRM_WAFER_JOB_OUT_ACT;
	KUNIT_EXPECT_EQ(test, check_on(&j, 0, SLOTS, CTX_LEN, &io), -EINVAL);
	j.flags = DRM_WAFER_JOB_IN_ACT;
	KUNIT_EXPECT_EQ(test, check_on(&j, 0, SLOTS, CTX_LEN, &io), -EINVAL);
	/* ...and neither where the range has the embedding / the head. */
	j.flags = DRM_WAFER_JOB_IN_ACT | DRM_WAFER_JOB_OUT_ACT;
	KUNIT_EXPECT_EQ(test, check_on(&j, DRM_WAFER_MODEL_EMBED, SLOTS, CTX_LEN, &io),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, check_on(&j, DRM_WAFER_MODEL_HEAD, SLOTS, CTX_LEN, &io),
			-EINVAL);
	/* First range: tokens in, records out. */
	j.flags = DRM_WAFER_JOB_OUT_ACT;
	KUNIT_EXPECT_EQ(test, check_on(&j, DRM_WAFER_MODEL_EMBED, SLOTS, CTX_LEN, &io), 0);
	KUNIT_EXPECT_EQ(test, io.in_len, 5ull * sizeof(u32));
	/* Last range: records in, results out. */
	j.flags = DRM_WAFER_JOB_IN_ACT | DRM_WAFER_JOB_ALL_POSITIONS;
	j.top_k = 8;
	KUNIT_EXPECT_EQ(test, check_on(&j, DRM_WAFER_MODEL_HEAD, SLOTS, CTX_LEN, &io), 0);
	KUNIT_EXPECT_EQ(test, io.in_len, 5ull * ACT);
	KUNIT_EXPECT_EQ(test, io.out_len, 5ull * DRM_WAFER_RESULT_SIZE(8));
	/* Records out carry no top-k and have no "all positions" choice. */
	j.flags = DRM_WAFER_JOB_IN_ACT | DRM_WAFER_JOB_OUT_ACT;
	KUNIT_EXPECT_EQ(test, check_on(&j, 0, SLOTS, CTX_LEN, &io), -EINVAL);
	j.top_k = 0;
	j.flags |= DRM_WAFER_JOB_ALL_POSITIONS;
	KUNIT_EXPECT_EQ(test, check_on(&j, 0, SLOTS, CTX_LEN, &io), -EINVAL);
	/* Records sit at 64-byte aligned offsets. */
	j.flags = DRM_WAFER_JOB_IN_ACT | DRM_WAFER_JOB_OUT_ACT;
	j.in_offset = 32;
	KUNIT_EXPECT_EQ(test, check_on(&j, 0, SLOTS, CTX_LEN, &io), -EINVAL);
	j.in_offset = 64;
	j.out_offset = 8;
	KUNIT_EXPECT_EQ(test, check_on(&j, 0, SLOTS, CTX_LEN, &io), -EINVAL);
}

static void wdrv_test_job_alignment_and_syncobjs(struct kunit *test)
{
	struct drm_wafer_job j;
	u64 len;

	j = good_job();
	j.in_offset = 2;
	KUNIT_EXPECT_EQ(test, check(&j, &len), -EINVAL);
	j = good_job();
	j.out_offset = 4;
	KUNIT_EXPECT_EQ(test, check(&j, &len), -EINVAL);
	j = good_job();
	j.in_syncobj_count = 1;
	j.in_syncobjs = 0;
	KUNIT_EXPECT_EQ(test, check(&j, &len), -EINVAL);
	j.in_syncobjs = 0x1000;
	KUNIT_EXPECT_EQ(test, check(&j, &len), 0);
	j.in_syncobj_count = WDRV_MAX_IN_SYNCOBJS + 1;
	KUNIT_EXPECT_EQ(test, check(&j, &len), -EINVAL);
}

static void wdrv_test_job_fits_sqe128(struct kunit *test)
{
	/* The io_uring command area of an SQE128 is 80 bytes. */
	KUNIT_EXPECT_LE(test, sizeof(struct drm_wafer_job), (size_t)80);
	KUNIT_EXPECT_EQ(test, sizeof(struct drm_wafer_job) % 8, (size_t)0);
	/* layer and pad were appended to the 72 bytes older userspace knows. */
	KUNIT_EXPECT_EQ(test, offsetof(struct drm_wafer_job, layer), (size_t)72);
	KUNIT_EXPECT_EQ(test, sizeof(struct drm_wafer_submit), (size_t)88);
}

#define LAYERS	4	/* layers of the full model in the part tests */

/* Against a part model of layers [@first, +@n) of LAYERS. */
static int check_part(const struct drm_wafer_job *j, u32 model_flags, u32 first, u32 n,
		      struct wdrv_job_io *io)
{
	const struct wdrv_job_shape sh = {
		.slots = SLOTS, .ctx_len = CTX_LEN, .model_flags = model_flags,
		.act_size = ACT, .layer_first = first, .n_layers = n, .total_layers = LAYERS,
	};

	return wdrv_job_validate(NULL, j, &sh, io);
}

/* LAYER: required by a part model, refused by a whole one, inside the range. */
static void wdrv_test_job_layer(struct kunit *test)
{
	const u32 attn = DRM_WAFER_MODEL_ATTN | DRM_WAFER_MODEL_EMBED;
	const u32 ffn = DRM_WAFER_MODEL_FFN | DRM_WAFER_MODEL_HEAD;
	struct drm_wafer_job j = good_job();
	struct wdrv_job_io io;

	/* Attention of layer 0 with the embedding: token ids in, records out. */
	j.top_k = 0;
	j.flags = DRM_WAFER_JOB_LAYER | DRM_WAFER_JOB_OUT_ACT;
	KUNIT_EXPECT_EQ(test, check_part(&j, attn, 0, LAYERS, &io), 0);
	KUNIT_EXPECT_EQ_MSG(test, io.in_len, 5ull * sizeof(u32) + sizeof(u32),
			    "the layer follows the ids");
	j.flags |= DRM_WAFER_JOB_NOT_BEFORE;
	KUNIT_EXPECT_EQ(test, check_part(&j, attn, 0, LAYERS, &io), 0);
	KUNIT_EXPECT_EQ_MSG(test, io.in_len, 5ull * sizeof(u32) + sizeof(u64) + sizeof(u32),
			    "the layer follows the floor");
	/* Any other attention layer takes records. */
	j.flags = DRM_WAFER_JOB_LAYER | DRM_WAFER_JOB_OUT_ACT;
	j.layer = 1;
	KUNIT_EXPECT_EQ(test, check_part(&j, attn, 0, LAYERS, &io), -EINVAL);
	j.flags |= DRM_WAFER_JOB_IN_ACT;
	KUNIT_EXPECT_EQ(test, check_part(&j, attn, 0, LAYERS, &io), 0);
	KUNIT_EXPECT_EQ(test, io.in_len, 5ull * ACT + sizeof(u32));
	/* An FFN gives results only for the last layer. */
	KUNIT_EXPECT_EQ(test, check_part(&j, ffn, 0, LAYERS, &io), 0);
	j.layer = LAYERS - 1;
	KUNIT_EXPECT_EQ(test, check_part(&j, ffn, 0, LAYERS, &io), -EINVAL);
	j.flags = DRM_WAFER_JOB_LAYER | DRM_WAFER_JOB_IN_ACT;
	j.top_k = 8;
	KUNIT_EXPECT_EQ(test, check_part(&j, ffn, 0, LAYERS, &io), 0);
	KUNIT_EXPECT_EQ(test, io.out_len, (u64)DRM_WAFER_RESULT_SIZE(8));
	/* A layer outside the range, numbered as in the full model. */
	j.flags = DRM_WAFER_JOB_LAYER | DRM_WAFER_JOB_IN_ACT | DRM_WAFER_JOB_OUT_ACT;
	j.top_k = 0;
	j.layer = 1;
	KUNIT_EXPECT_EQ(test, check_part(&j, DRM_WAFER_MODEL_ATTN, 1, 2, &io), 0);
	j.layer = 2;
	KUNIT_EXPECT_EQ(test, check_part(&j, DRM_WAFER_MODEL_ATTN, 1, 2, &io), 0);
	j.layer = 0;
	KUNIT_EXPECT_EQ(test, check_part(&j, DRM_WAFER_MODEL_ATTN, 1, 2, &io), -EINVAL);
	j.layer = 3;
	KUNIT_EXPECT_EQ(test, check_part(&j, DRM_WAFER_MODEL_ATTN, 1, 2, &io), -EINVAL);
	j.layer = U32_MAX;
	KUNIT_EXPECT_EQ(test, check_part(&j, DRM_WAFER_MODEL_ATTN, 1, 2, &io), -EINVAL);
	/* The flag is missing on a part model, set on a whole-layer one. */
	j.layer = 1;
	j.flags &= ~DRM_WAFER_JOB_LAYER;
	KUNIT_EXPECT_EQ(test, check_part(&j, DRM_WAFER_MODEL_ATTN, 1, 2, &io), -EINVAL);
	j.layer = 0;
	KUNIT_EXPECT_EQ(test, check_part(&j, DRM_WAFER_MODEL_ATTN, 1, 2, &io), -EINVAL);
	j.flags |= DRM_WAFER_JOB_LAYER;
	KUNIT_EXPECT_EQ(test, check_on(&j, 0, SLOTS, CTX_LEN, &io), -EINVAL);
}

/*
 * Expert parallelism: the phase in the layer's top bits is one the part
 * runs, 0 on other models; only FIN of the last layer gives results.
 */
static void wdrv_test_job_phase(struct kunit *test)
{
	const u32 home = DRM_WAFER_MODEL_XHOME | DRM_WAFER_MODEL_HEAD;
	const u32 shard = DRM_WAFER_MODEL_XSHARD;
	const u32 act = DRM_WAFER_JOB_LAYER | DRM_WAFER_JOB_IN_ACT | DRM_WAFER_JOB_OUT_ACT;
	struct drm_wafer_job j = good_job();
	struct wdrv_job_io io;
	u32 ph;

	j.top_k = 0;
	j.flags = act;
	for (ph = 0; ph < 256; ph++) {
		bool h = ph == DRM_WAFER_XPHASE_ROUTE || ph == DRM_WAFER_XPHASE_GLU ||
			 ph == DRM_WAFER_XPHASE_FIN;
		bool s = ph == DRM_WAFER_XPHASE_UP || ph == DRM_WAFER_XPHASE_DOWN;

		j.layer = 1 | ph << DRM_WAFER_XPHASE_SHIFT;
		KUNIT_EXPECT_EQ_MSG(test, check_part(&j, home, 0, LAYERS, &io), h ? 0 : -EINVAL,
				    "phase %u on the home", ph);
		KUNIT_EXPECT_EQ_MSG(test, check_part(&j, shard, 0, LAYERS, &io), s ? 0 : -EINVAL,
				    "phase %u on a shard", ph);
		KUNIT_EXPECT_EQ_MSG(test, check_part(&j, DRM_WAFER_MODEL_FFN, 0, LAYERS, &io),
				    ph ? -EINVAL : 0, "phase %u on an FFN part", ph);
		KUNIT_EXPECT_EQ_MSG(test, check_part(&j, DRM_WAFER_MODEL_ATTN, 0, LAYERS, &io),
				    ph ? -EINVAL : 0, "phase %u on an attention part", ph);
	}
	/* The layer bits are checked against the range. */
	j.layer = LAYERS | DRM_WAFER_XPHASE_UP << DRM_WAFER_XPHASE_SHIFT;
	KUNIT_EXPECT_EQ(test, check_part(&j, shard, 0, LAYERS, &io), -EINVAL);
	j.layer = 2 | DRM_WAFER_XPHASE_UP << DRM_WAFER_XPHASE_SHIFT;
	KUNIT_EXPECT_EQ(test, check_part(&j, shard, 1, 2, &io), 0);
	KUNIT_EXPECT_EQ(test, check_part(&j, shard, 0, 2, &io), -EINVAL);
	/* FIN of the last layer on the home gives results, nothing else does. */
	j.layer = (LAYERS - 1) | DRM_WAFER_XPHASE_FIN << DRM_WAFER_XPHASE_SHIFT;
	KUNIT_EXPECT_EQ(test, check_part(&j, home, 0, LAYERS, &io), -EINVAL);
	j.flags = DRM_WAFER_JOB_LAYER | DRM_WAFER_JOB_IN_ACT;
	j.top_k = 8;
	KUNIT_EXPECT_EQ(test, check_part(&j, home, 0, LAYERS, &io), 0);
	KUNIT_EXPECT_EQ(test, io.out_len, (u64)DRM_WAFER_RESULT_SIZE(8));
	KUNIT_EXPECT_EQ(test, io.in_len, 5ull * ACT + sizeof(u32));
	j.layer = (LAYERS - 1) | DRM_WAFER_XPHASE_GLU << DRM_WAFER_XPHASE_SHIFT;
	KUNIT_EXPECT_EQ_MSG(test, check_part(&j, home, 0, LAYERS, &io), -EINVAL,
			    "results from GLU");
	j.layer = (LAYERS - 2) | DRM_WAFER_XPHASE_FIN << DRM_WAFER_XPHASE_SHIFT;
	KUNIT_EXPECT_EQ_MSG(test, check_part(&j, home, 0, LAYERS, &io), -EINVAL,
			    "results from FIN of a middle layer");
	j.layer = (LAYERS - 1) | DRM_WAFER_XPHASE_DOWN << DRM_WAFER_XPHASE_SHIFT;
	KUNIT_EXPECT_EQ_MSG(test, check_part(&j, shard, 0, LAYERS, &io), -EINVAL,
			    "results from a shard");
	/* A phase needs DRM_WAFER_JOB_LAYER, as any layer word does. */
	j = good_job();
	j.layer = DRM_WAFER_XPHASE_ROUTE << DRM_WAFER_XPHASE_SHIFT;
	KUNIT_EXPECT_EQ(test, check_on(&j, DRM_WAFER_MODEL_EMBED | DRM_WAFER_MODEL_HEAD,
				       SLOTS, CTX_LEN, &io), -EINVAL);
}

/* layer without LAYER, and pad, must be zero; also for a NOP. */
static void wdrv_test_job_layer_padding(struct kunit *test)
{
	struct drm_wafer_job j = good_job();
	struct wdrv_job_io io;
	u64 len;

	j.layer = 1;
	KUNIT_EXPECT_EQ(test, check(&j, &len), -EINVAL);
	j.layer = 0;
	j.pad = 1;
	KUNIT_EXPECT_EQ(test, check(&j, &len), -EINVAL);
	j = good_job();
	j.top_k = 0;
	j.flags = DRM_WAFER_JOB_LAYER | DRM_WAFER_JOB_IN_ACT | DRM_WAFER_JOB_OUT_ACT;
	j.layer = 1;
	j.pad = 1;
	KUNIT_EXPECT_EQ(test, check_part(&j, DRM_WAFER_MODEL_FFN, 0, LAYERS, &io), -EINVAL);
	/* A NOP on a part model names no layer. */
	j = (struct drm_wafer_job){ .ctx_id = 1, .flags = DRM_WAFER_JOB_NOP };
	KUNIT_EXPECT_EQ(test, check_part(&j, DRM_WAFER_MODEL_FFN, 0, LAYERS, &io), 0);
	j.layer = 1;
	KUNIT_EXPECT_EQ(test, check_part(&j, DRM_WAFER_MODEL_FFN, 0, LAYERS, &io), -EINVAL);
	j.flags |= DRM_WAFER_JOB_LAYER;
	KUNIT_EXPECT_EQ(test, check_part(&j, DRM_WAFER_MODEL_FFN, 0, LAYERS, &io), -EINVAL);
}

static void wdrv_test_get_info_args(struct kunit *test)
{
	struct drm_wafer_get_info a = { .info_ptr = 0x1000, .info_size = 8 };

	KUNIT_EXPECT_EQ(test, wdrv_check_get_info(NULL, &a), 0);
	a.info_size = U32_MAX;
	KUNIT_EXPECT_EQ(test, wdrv_check_get_info(NULL, &a), 0);
	a.info_size = 7;
	KUNIT_EXPECT_EQ(test, wdrv_check_get_info(NULL, &a), -EINVAL);
	a.info_size = 8;
	/* Was pad: a model id, checked against the file's models later. */
	a.model_id = 1;
	KUNIT_EXPECT_EQ(test, wdrv_check_get_info(NULL, &a), 0);
	a.model_id = 0;
	a.info_ptr = 0;
	KUNIT_EXPECT_EQ(test, wdrv_check_get_info(NULL, &a), -EINVAL);
}

static void wdrv_test_bo_create_args(struct kunit *test)
{
	struct drm_wafer_bo_create a = { .size = 1 };
	const u64 max = 1ull << 30;
	int bit;

	KUNIT_EXPECT_EQ(test, wdrv_check_bo_create(NULL, &a, max), 0);
	a.size = max;
	KUNIT_EXPECT_EQ(test, wdrv_check_bo_create(NULL, &a, max), 0);
	a.size = max + 1;
	KUNIT_EXPECT_EQ(test, wdrv_check_bo_create(NULL, &a, max), -EINVAL);
	a.size = U64_MAX;	/* would overflow PAGE_ALIGN */
	KUNIT_EXPECT_EQ(test, wdrv_check_bo_create(NULL, &a, max), -EINVAL);
	a.size = 0;
	KUNIT_EXPECT_EQ(test, wdrv_check_bo_create(NULL, &a, max), -EINVAL);
	for (bit = 0; bit < 32; bit++) {
		a.size = 4096;
		a.flags = 1u << bit;
		KUNIT_EXPECT_EQ(test, wdrv_check_bo_create(NULL, &a, max), -EINVAL);
	}
}

static void wdrv_test_model_load_args(struct kunit *test)
{
	struct drm_wafer_model_load a = { .blob_size = 4096, .bo_offset = 8 };
	const u64 max = 1ull << 30;
	unsigned int bit;

	KUNIT_EXPECT_EQ(test, wdrv_check_model_load(NULL, &a, max), 0);
	a.flags = DRM_WAFER_LOAD_STREAM;
	KUNIT_EXPECT_EQ(test, wdrv_check_model_load(NULL, &a, max), 0);
	for (bit = 1; bit < 32; bit++) {
		a.flags = DRM_WAFER_LOAD_STREAM | 1u << bit;
		KUNIT_EXPECT_EQ(test, wdrv_check_model_load(NULL, &a, max), -EINVAL);
	}
	a.flags = 0;
	a.part = DRM_WAFER_PART_MAX + 1;
	KUNIT_EXPECT_EQ(test, wdrv_check_model_load(NULL, &a, max), -EINVAL);
	a.part = 0;
	a.bo_offset = 4;
	KUNIT_EXPECT_EQ(test, wdrv_check_model_load(NULL, &a, max), -EINVAL);
	a.bo_offset = 0;
	a.blob_size = 0;
	KUNIT_EXPECT_EQ(test, wdrv_check_model_load(NULL, &a, max), -EINVAL);
	a.blob_size = max + 1;
	KUNIT_EXPECT_EQ(test, wdrv_check_model_load(NULL, &a, max), -EINVAL);
	/* offset + size wrapping u64 is caught where the BO size is known. */
	a.blob_size = 16;
	a.bo_offset = U64_MAX - 7;
	KUNIT_EXPECT_EQ(test, wdrv_check_model_load(NULL, &a, max), 0);
	/* A layer range needs its count; the firmware checks it fits the blob. */
	a.bo_offset = 0;
	a.layer_first = 2;
	KUNIT_EXPECT_EQ(test, wdrv_check_model_load(NULL, &a, max), -EINVAL);
	a.layer_count = 1;
	KUNIT_EXPECT_EQ(test, wdrv_check_model_load(NULL, &a, max), 0);
}

/* part and expert_group (the former padding): ranges and combinations. */
static void wdrv_test_model_load_part_groups(struct kunit *test)
{
	struct drm_wafer_model_load a = { .bo_handle = 1, .blob_size = 4096 };
	const u64 max = 1 << 20;

	a.part = DRM_WAFER_PART_ATTN;
	KUNIT_EXPECT_EQ(test, wdrv_check_model_load(NULL, &a, max), 0);
	a.part = DRM_WAFER_PART_FFN;
	KUNIT_EXPECT_EQ(test, wdrv_check_model_load(NULL, &a, max), 0);
	a.layer_first = 1;
	a.layer_count = 2;
	KUNIT_EXPECT_EQ_MSG(test, wdrv_check_model_load(NULL, &a, max), 0, "part of a range");
	a.part = DRM_WAFER_PART_MAX + 1;
	KUNIT_EXPECT_EQ(test, wdrv_check_model_load(NULL, &a, max), -EINVAL);
	a.part = U32_MAX;
	KUNIT_EXPECT_EQ(test, wdrv_check_model_load(NULL, &a, max), -EINVAL);
	a.part = DRM_WAFER_PART_ATTN;
	a.flags = DRM_WAFER_LOAD_STREAM;
	KUNIT_EXPECT_EQ_MSG(test, wdrv_check_model_load(NULL, &a, max), -EINVAL,
			    "a streamed part");
	a.flags = 0;
	a.expert_group = 2;
	KUNIT_EXPECT_EQ_MSG(test, wdrv_check_model_load(NULL, &a, max), -EINVAL,
			    "expert groups of an attention part");
	a.part = DRM_WAFER_PART_FFN;
	KUNIT_EXPECT_EQ(test, wdrv_check_model_load(NULL, &a, max), 0);
	a.part = DRM_WAFER_PART_WHOLE;
	a.expert_group = DRM_WAFER_MAX_EXPERT_GROUP;
	KUNIT_EXPECT_EQ(test, wdrv_check_model_load(NULL, &a, max), 0);
	a.expert_group = DRM_WAFER_MAX_EXPERT_GROUP + 1;
	KUNIT_EXPECT_EQ(test, wdrv_check_model_load(NULL, &a, max), -EINVAL);
	a.expert_group = 1;
	a.flags = DRM_WAFER_LOAD_STREAM;
	KUNIT_EXPECT_EQ_MSG(test, wdrv_check_model_load(NULL, &a, max), -EINVAL,
			    "streamed expert groups");
}

/* Expert-parallel parts: the expert range only on a shard, no groups. */
static void wdrv_test_model_load_expert_parts(struct kunit *test)
{
	struct drm_wafer_model_load a = { .bo_handle = 1, .blob_size = 4096 };
	const u64 max = 1 << 20;

	/* Appended to the 64 bytes of older userspace, which DRM zero-fills. */
	KUNIT_EXPECT_EQ(test, offsetof(struct drm_wafer_model_load, expert_first), (size_t)64);
	KUNIT_EXPECT_EQ(test, sizeof(struct drm_wafer_model_load), (size_t)72);
	a.part = DRM_WAFER_PART_XHOME;
	KUNIT_EXPECT_EQ(test, wdrv_check_model_load(NULL, &a, max), 0);
	a.part = DRM_WAFER_PART_XSHARD;
	a.expert_count = 2;
	KUNIT_EXPECT_EQ(test, wdrv_check_model_load(NULL, &a, max), 0);
	a.expert_first = 3;
	KUNIT_EXPECT_EQ_MSG(test, wdrv_check_model_load(NULL, &a, max), 0,
			    "past the model's experts: the firmware's to say");
	a.expert_count = 0;
	KUNIT_EXPECT_EQ_MSG(test, wdrv_check_model_load(NULL, &a, max), -EINVAL,
			    "a shard of no experts");
	a.expert_first = U32_MAX;
	a.expert_count = 1;
	KUNIT_EXPECT_EQ_MSG(test, wdrv_check_model_load(NULL, &a, max), -EINVAL,
			    "first + count overflows");
	a.expert_first = U32_MAX - 1;
	KUNIT_EXPECT_EQ(test, wdrv_check_model_load(NULL, &a, max), 0);
	a.expert_first = 0;
	a.expert_group = 1;
	KUNIT_EXPECT_EQ_MSG(test, wdrv_check_model_load(NULL, &a, max), -EINVAL,
			    "expert groups of a shard");
	a.part = DRM_WAFER_PART_XHOME;
	a.expert_count = 0;
	KUNIT_EXPECT_EQ_MSG(test, wdrv_check_model_load(NULL, &a, max), -EINVAL,
			    "expert groups of the home");
	a.expert_group = 0;
	a.flags = DRM_WAFER_LOAD_STREAM;
	KUNIT_EXPECT_EQ_MSG(test, wdrv_check_model_load(NULL, &a, max), -EINVAL,
			    "a streamed home");
	a.flags = 0;
	/* The range on any part but a shard. */
	for (a.part = DRM_WAFER_PART_WHOLE; a.part <= DRM_WAFER_PART_XHOME; a.part++) {
		a.expert_first = 1;
		a.expert_count = 0;
		KUNIT_EXPECT_EQ_MSG(test, wdrv_check_model_load(NULL, &a, max), -EINVAL,
				    "expert_first on part %u", a.part);
		a.expert_first = 0;
		a.expert_count = 1;
		KUNIT_EXPECT_EQ_MSG(test, wdrv_check_model_load(NULL, &a, max), -EINVAL,
				    "expert_count on part %u", a.part);
	}
}

static void wdrv_test_ctx_create_args(struct kunit *test)
{
	struct drm_wafer_ctx_create a = { .model_id = 1, .kv_slots = 1, .ctx_len = 1 };

	KUNIT_EXPECT_EQ(test, wdrv_check_ctx_create(NULL, &a), 0);
	a.kv_slots = WDRV_MAX_KV_SLOTS;
	KUNIT_EXPECT_EQ(test, wdrv_check_ctx_create(NULL, &a), 0);
	a.kv_slots = WDRV_MAX_KV_SLOTS + 1;
	KUNIT_EXPECT_EQ(test, wdrv_check_ctx_create(NULL, &a), -EINVAL);
	a.kv_slots = 0;
	KUNIT_EXPECT_EQ(test, wdrv_check_ctx_create(NULL, &a), -EINVAL);
	a.kv_slots = 1;
	a.ctx_len = 0;
	KUNIT_EXPECT_EQ(test, wdrv_check_ctx_create(NULL, &a), -EINVAL);
	a.ctx_len = 1;
	a.flags = 1u << 31;
	KUNIT_EXPECT_EQ(test, wdrv_check_ctx_create(NULL, &a), -EINVAL);
	a.flags = 0;
	a.pad = 1;
	KUNIT_EXPECT_EQ(test, wdrv_check_ctx_create(NULL, &a), -EINVAL);
}

static void wdrv_test_wait_args(struct kunit *test)
{
	struct drm_wafer_wait a = { .seqno = 1, .timeout_ns = S64_MIN };

	KUNIT_EXPECT_EQ(test, wdrv_check_wait(NULL, &a), 0);
	a.flags = 1;
	KUNIT_EXPECT_EQ(test, wdrv_check_wait(NULL, &a), -EINVAL);
}

static struct kunit_case wdrv_uapi_test_cases[] = {
	KUNIT_CASE(wdrv_test_get_info_args),
	KUNIT_CASE(wdrv_test_bo_create_args),
	KUNIT_CASE(wdrv_test_model_load_args),
	KUNIT_CASE(wdrv_test_ctx_create_args),
	KUNIT_CASE(wdrv_test_wait_args),
	KUNIT_CASE(wdrv_test_job_valid),
	KUNIT_CASE(wdrv_test_job_flags_and_padding),
	KUNIT_CASE(wdrv_test_job_times),
	KUNIT_CASE(wdrv_test_job_ranges),
	KUNIT_CASE(wdrv_test_job_nop),
	KUNIT_CASE(wdrv_test_job_wait_submit),
	KUNIT_CASE(wdrv_test_job_act),
	KUNIT_CASE(wdrv_test_job_not_before_done_ns),
	KUNIT_CASE(wdrv_test_job_alignment_and_syncobjs),
	KUNIT_CASE(wdrv_test_job_fits_sqe128),
	KUNIT_CASE(wdrv_test_model_load_part_groups),
	KUNIT_CASE(wdrv_test_model_load_expert_parts),
	KUNIT_CASE(wdrv_test_job_phase),
	KUNIT_CASE(wdrv_test_job_layer),
	KUNIT_CASE(wdrv_test_job_layer_padding),
	{}
};

static struct kunit_suite wdrv_uapi_test_suite = {
	.name = "wdrv_uapi",
	.test_cases = wdrv_uapi_test_cases,
};

kunit_test_suite(wdrv_uapi_test_suite);
