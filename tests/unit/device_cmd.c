// SPDX-License-Identifier: MIT
/*
 * device_cmd.c - command validation: every malformed command or field gets
 * an error completion with the documented errno (never a crash, never a
 * hang), ring-level protocol errors raise device faults that a reset
 * clears, and the device keeps working afterwards.
 */
#include "device_harness.h"
#include "wfs_model.h"	/* struct wfs_blob_header, wfs_fnv1a32() */
#include "wfs_pack.h"
#include "wfw_uapi_ties.h"	/* compile-time: firmware ABI == uapi */
#include "wt_util.h"

static struct dh *h;
static u32 *in;
static u8 *out;
static void *blob;
static size_t blob_len;
static u32 ctx_id;

#define OUT_BYTES	(64 * WFW_OUT_REC_SIZE(WFW_MAX_TOPK))

/* Run @c and check its completion status. */
static void expect(struct wfw_cmd *c, int want, const char *what)
{
	struct wfw_cpl cpl;
	int ret;

	c->cookie = 0;
	ret = dh_exec(h, c, &cpl, 10000);
	wt_ok(ret == 0 && cpl.status == want && cpl.opcode == c->opcode &&
	      cpl.check == wfw_cpl_check(&cpl),
	      "%s -> %d (got %d%s)", what, want, cpl.status,
	      ret ? ", no completion" : "");
}

static void base(struct wfw_cmd *c, u16 op)
{
	memset(c, 0, sizeof(*c));
	c->opcode = op;
}

static void job(struct wfw_cmd *c, u32 n)
{
	dh_job_cmd(c, ctx_id, 0, 0, n, in, out, OUT_BYTES, 4,
		   WFW_JOB_ALL_POSITIONS, 0);
}

/* TIMES: a record per chunk and stage after the results, checked first. */
static void job_times(struct wfw_cmd *c, u32 off, u32 len)
{
	job(c, 8);
	c->job.flags |= WFW_JOB_TIMES;
	c->job.times_offset = off;
	c->job.times_len = len;
}

static void test_job_times(struct wfw_cmd *c)
{
	const struct wfw_chunk_time *t;
	u32 res = 8 * WFW_OUT_REC_SIZE(4), s, ok = 1;
	struct wfw_cpl cpl;

	job_times(c, res, sizeof(*t) - 1);
	expect(c, -WFS_EINVAL, "RUN_JOB TIMES with room for less than one record");
	job_times(c, res - 8, 4 * sizeof(*t));
	expect(c, -WFS_EINVAL, "RUN_JOB TIMES inside the results");
	job_times(c, res + 4, 4 * sizeof(*t));
	expect(c, -WFS_EINVAL, "RUN_JOB TIMES not 8-byte aligned");
	job_times(c, OUT_BYTES - 8, 4 * sizeof(*t));
	expect(c, -WFS_EINVAL, "RUN_JOB TIMES past out_len");
	job_times(c, res, 3 * sizeof(*t));
	expect(c, -WFS_EINVAL, "RUN_JOB TIMES: one chunk, 4 stages, room for 3");
	job_times(c, res, 4 * sizeof(*t));
	memset(out, 0, OUT_BYTES);
	c->cookie = 0;
	ok = !dh_exec(h, c, &cpl, 10000) && !cpl.status;
	t = (const struct wfw_chunk_time *)((const u8 *)out + res);
	for (s = 0; ok && s < 4; s++)
		ok = t[s].flags == WFW_CHUNK_VALID && t[s].stage == s && !t[s].pos0 &&
		     t[s].n == 8 && t[s].start_ns < t[s].end_ns &&
		     t[s].end_ns < t[s].hop_end_ns &&
		     (!s || t[s].start_ns >= t[s - 1].hop_end_ns);
	wt_ok(ok && cpl.device_ns == t[3].hop_end_ns - t[0].start_ns &&
	      cpl.value == t[3].hop_end_ns,
	      "RUN_JOB TIMES: 4 records in stage order, device_ns %llu = the last hop's end "
	      "- the first start", (unsigned long long)cpl.device_ns);
}

static void test_header_and_admin(void)
{
	struct wfw_cmd c;
	struct wfw_info *info = dh_alloc(sizeof(*info));

	base(&c, WFW_OP_NOP);
	expect(&c, 0, "NOP");
	c.flags = 1;
	expect(&c, -WFS_EINVAL, "header flags != 0");
	base(&c, WFW_OP_NOP);
	c.model = 5;
	expect(&c, -WFS_EINVAL, "header model != 0 on a command about no model");
	base(&c, WFW_OP_COUNT);
	expect(&c, -WFS_EOPNOTSUPP, "unknown opcode WFW_OP_COUNT");
	base(&c, 0xffff);
	expect(&c, -WFS_EOPNOTSUPP, "unknown opcode 0xffff");
	base(&c, WFW_OP_NOP);
	c.raw[47] = 1;
	expect(&c, -WFS_EINVAL, "NOP with a payload byte");

	dh_region_add(h, info, sizeof(*info));
	base(&c, WFW_OP_GET_INFO);
	c.buf.addr = (u64)(uintptr_t)info;
	c.buf.len = 4;
	expect(&c, -WFS_EINVAL, "GET_INFO len < 8");
	c.buf.len = sizeof(*info);
	c.buf.index = 1;
	expect(&c, 0, "GET_INFO index 1 (the second model: none, its fields 0)");
	c.model = 5;
	expect(&c, -WFS_EINVAL, "GET_INFO index != 0 with a model named");
	c.model = 0;
	c.buf.index = 0;
	c.buf.pos = 1;
	expect(&c, -WFS_EINVAL, "GET_INFO pos != 0");
	c.buf.pos = 0;
	c.buf.reserved[2] = 1;
	expect(&c, -WFS_EINVAL, "GET_INFO reserved != 0");
	c.buf.reserved[2] = 0;
	c.buf.addr = 0x10;
	expect(&c, -WFS_EFAULT, "GET_INFO to an unmapped address");
	c.buf.addr = (u64)(uintptr_t)info + 64;
	expect(&c, -WFS_EFAULT, "GET_INFO running past the end of its buffer");
	c.buf.addr = (u64)(uintptr_t)info;
	c.buf.len = 1u << 30;
	expect(&c, 0, "GET_INFO with a larger buffer writes only sizeof(info)");
	wt_ok(info->abi_version == WFW_ABI_VERSION &&
	      info->info_size == sizeof(*info) && info->num_stages == 4,
	      "GET_INFO content: ABI %u.%u, %u stages, profile %s",
	      WFW_ABI_VERSION_MAJOR(info->abi_version),
	      WFW_ABI_VERSION_MINOR(info->abi_version), info->num_stages,
	      info->profile_name);
	dh_region_del(h, info);
	free(info);

	base(&c, WFW_OP_GET_STATS);
	c.buf.addr = (u64)(uintptr_t)out;
	c.buf.len = sizeof(struct wfw_stage_stats) - 1;
	expect(&c, -WFS_EINVAL, "GET_STATS buffer smaller than one entry");
	c.buf.len = OUT_BYTES;
	c.buf.index = 4;
	expect(&c, -WFS_EINVAL, "GET_STATS first stage out of range");
	base(&c, WFW_OP_GET_SRAM_MAP);
	c.buf.addr = (u64)(uintptr_t)out;
	c.buf.len = OUT_BYTES;
	c.buf.index = 99;
	expect(&c, -WFS_EINVAL, "GET_SRAM_MAP stage out of range");
	base(&c, WFW_OP_READ_LOG);
	c.buf.addr = (u64)(uintptr_t)out;
	c.buf.len = 100;
	c.buf.index = 1;
	expect(&c, -WFS_EINVAL, "READ_LOG index != 0");
	base(&c, WFW_OP_GET_EXPERT_LOAD);
	c.buf.addr = (u64)(uintptr_t)out;
	c.buf.len = OUT_BYTES;
	c.buf.pos = 1;
	expect(&c, -WFS_EINVAL, "GET_EXPERT_LOAD pos != 0");
	c.buf.pos = 0;
	c.buf.reserved[0] = 1;
	expect(&c, -WFS_EINVAL, "GET_EXPERT_LOAD reserved != 0");
	c.buf.reserved[0] = 0;
	expect(&c, 0, "GET_EXPERT_LOAD without MoE layers: no entries");
	base(&c, WFW_OP_RESET_RETIRED);
	expect(&c, -WFS_EOPNOTSUPP, "retired RESET command (opcode 7)");
	base(&c, WFW_OP_RESET_RETIRED);
	c.reset.flags = 1;
	expect(&c, -WFS_EOPNOTSUPP, "retired RESET command with a payload");
	base(&c, WFW_OP_FAULT_INJECT);
	c.fault.fault = WFW_FAULT_DROP_NEXT_CPL;
	expect(&c, -EPERM, "FAULT_INJECT on a device that does not allow it");
}

/* A second model next to the first: ids, and model ids that are wrong. */
static void test_second_model(struct wfw_cmd *c)
{
	struct wfw_cpl cpl;
	u32 id;

	c->cookie = 0;
	dh_exec(h, c, &cpl, 5000);
	id = cpl.model;
	wt_ok(cpl.status == 0 && WFW_MODEL_IDX(id) == 1 && id >> WFW_MODEL_IDX_BITS,
	      "LOAD_MODEL while a model is loaded: a second model, id 0x%x", id);
	base(c, WFW_OP_UNLOAD_MODEL);
	expect(c, -WFS_EINVAL, "UNLOAD_MODEL model 0 with two models");
	base(c, WFW_OP_CREATE_CONTEXT);
	c->ctx.slots = 1;
	c->ctx.ctx_len = 16;
	expect(c, -WFS_EINVAL, "CREATE_CONTEXT model 0 with two models");
	c->model = id + (1u << WFW_MODEL_IDX_BITS);
	expect(c, -WFS_ENOENT, "CREATE_CONTEXT for a model id of another generation");
	c->model = WFW_MODEL_ID(1, 200);
	expect(c, -WFS_ENOENT, "CREATE_CONTEXT for a model index out of range");
	base(c, WFW_OP_LOAD_MODEL);
	c->model = id;
	expect(c, -WFS_EINVAL, "LOAD_MODEL naming a model");
	base(c, WFW_OP_UNLOAD_MODEL);
	c->model = id;
	expect(c, 0, "UNLOAD_MODEL of the second model by id");
	expect(c, -WFS_ENOENT, "UNLOAD_MODEL of it again");
}

static void test_model_and_contexts(void)
{
	struct wfw_cmd c;
	u8 *bad = dh_alloc(blob_len);

	base(&c, WFW_OP_UNLOAD_MODEL);
	expect(&c, -WFS_ENOENT, "UNLOAD_MODEL without a model");
	base(&c, WFW_OP_CREATE_CONTEXT);
	c.ctx.slots = 1;
	c.ctx.ctx_len = 16;
	expect(&c, -WFS_ENOENT, "CREATE_CONTEXT without a model");
	job(&c, 1);
	expect(&c, -WFS_ENOENT, "RUN_JOB without a model");

	memcpy(bad, blob, blob_len);
	dh_region_add(h, bad, blob_len);
	base(&c, WFW_OP_LOAD_MODEL);
	c.load.addr = (u64)(uintptr_t)blob;
	c.load.len = blob_len;
	c.load.flags = WFW_LOAD_STREAM << 1;
	expect(&c, -WFS_EINVAL, "LOAD_MODEL unknown flag");
	c.load.flags = 0;
	c.load.reserved = 1;
	expect(&c, -WFS_EINVAL, "LOAD_MODEL reserved != 0");
	c.load.reserved = 0;
	c.load.part = WFW_PART_MAX + 1;
	expect(&c, -WFS_EINVAL, "LOAD_MODEL part above WFW_PART_MAX");
	c.load.part = WFW_PART_ATTN;
	c.load.flags = WFW_LOAD_STREAM;
	expect(&c, -WFS_EINVAL, "LOAD_MODEL a streamed layer part");
	c.load.part = 0;
	c.load.flags = 0;
	c.load.layer_first = 1;
	expect(&c, -WFS_EINVAL, "LOAD_MODEL layer_first without layer_count");
	c.load.layer_count = 0xffffffffu;
	expect(&c, -WFS_EINVAL, "LOAD_MODEL layer range past the blob's last layer");
	c.load.layer_first = 0xffffffffu;
	c.load.layer_count = 2;
	expect(&c, -WFS_EINVAL, "LOAD_MODEL layer range wrapping 32 bits");
	c.load.layer_first = 0;
	c.load.layer_count = 0;
	c.load.len = 100;
	expect(&c, -WFS_EINVAL, "LOAD_MODEL shorter than a blob header");
	c.load.len = blob_len + 64;
	expect(&c, -WFS_EFAULT, "LOAD_MODEL longer than the mapped buffer");
	c.load.addr = 0x1000;
	c.load.len = blob_len;
	expect(&c, -WFS_EFAULT, "LOAD_MODEL from an unmapped address");
	c.load.addr = (u64)(uintptr_t)bad;
	{
		struct wfw_cpl cpl;

		bad[0] ^= 0xff;
		c.cookie = 0;
		dh_exec(h, &c, &cpl, 5000);
		wt_ok(cpl.status < 0, "LOAD_MODEL bad magic rejected by the validator (%d)",
		      cpl.status);
		bad[0] ^= 0xff;
		c.load.len = blob_len - 64;
		c.cookie = 0;
		dh_exec(h, &c, &cpl, 5000);
		wt_ok(cpl.status < 0, "LOAD_MODEL truncated blob rejected (%d)",
		      cpl.status);
		c.load.len = blob_len;
		/*
		 * The packer's blob has no checksum, and blob_len / 2 lies in a
		 * layer's weights, which no check constrains: the altered
		 * model loads.  With the checksum flag the same flip is
		 * -EBADMSG, the unaltered blob loads.
		 */
		bad[blob_len / 2] ^= 0x40;
		c.cookie = 0;
		dh_exec(h, &c, &cpl, 5000);
		wt_ok(cpl.status == 0,
		      "LOAD_MODEL without a checksum: a flipped weight byte loads (%d)",
		      cpl.status);
		if (cpl.status == 0) {
			base(&c, WFW_OP_UNLOAD_MODEL);
			expect(&c, 0, "UNLOAD_MODEL of the altered model");
			base(&c, WFW_OP_LOAD_MODEL);
			c.load.addr = (u64)(uintptr_t)bad;
			c.load.len = blob_len;
		}
		bad[blob_len / 2] ^= 0x40;
		((struct wfs_blob_header *)bad)->flags |= WFS_MF_CHECKSUM;
		((struct wfs_blob_header *)bad)->checksum =
			wfs_fnv1a32(bad + sizeof(struct wfs_blob_header),
				    blob_len - sizeof(struct wfs_blob_header));
		bad[blob_len / 2] ^= 0x40;
		expect(&c, -WFS_EBADMSG, "LOAD_MODEL with a checksum: a flipped weight byte");
		bad[blob_len / 2] ^= 0x40;
		c.cookie = 0;
		dh_exec(h, &c, &cpl, 5000);
		wt_ok(cpl.status == 0, "LOAD_MODEL with a checksum: the unaltered blob loads (%d)",
		      cpl.status);
		if (cpl.status == 0) {
			base(&c, WFW_OP_UNLOAD_MODEL);
			expect(&c, 0, "UNLOAD_MODEL of the checksummed model");
			base(&c, WFW_OP_LOAD_MODEL);
		}
	}
	c.load.len = blob_len;
	c.load.addr = (u64)(uintptr_t)blob;
	expect(&c, 0, "LOAD_MODEL valid blob");
	test_second_model(&c);
	dh_region_del(h, bad);
	free(bad);

	base(&c, WFW_OP_CREATE_CONTEXT);
	c.ctx.slots = 1;
	c.ctx.ctx_len = 16;
	c.ctx.ctx_id = 3;
	expect(&c, -WFS_EINVAL, "CREATE_CONTEXT with ctx_id != 0");
	c.ctx.ctx_id = 0;
	c.ctx.slots = 0;
	expect(&c, -WFS_EINVAL, "CREATE_CONTEXT 0 slots");
	c.ctx.slots = 70000;
	expect(&c, -WFS_EINVAL, "CREATE_CONTEXT 70000 slots");
	c.ctx.slots = 1;
	c.ctx.ctx_len = 0;
	expect(&c, -WFS_EINVAL, "CREATE_CONTEXT ctx_len 0");
	c.ctx.ctx_len = 513;
	expect(&c, -WFS_E2BIG, "CREATE_CONTEXT ctx_len above the model's 512");
	c.ctx.ctx_len = 16;
	c.ctx.flags = 2;
	expect(&c, -WFS_EINVAL, "CREATE_CONTEXT unknown flag");
	c.ctx.flags = 0;
	c.ctx.reserved[5] = 1;
	expect(&c, -WFS_EINVAL, "CREATE_CONTEXT reserved != 0");
	c.ctx.reserved[5] = 0;
	c.ctx.slots = 4000;
	c.ctx.ctx_len = 512;
	expect(&c, -WFS_ENOSPC, "CREATE_CONTEXT larger than SRAM");
	c.ctx.slots = 2;
	c.ctx.ctx_len = 40;
	{
		struct wfw_cpl cpl;

		c.cookie = 0;
		dh_exec(h, &c, &cpl, 5000);
		ctx_id = cpl.result0;
		wt_ok(cpl.status == 0 && ctx_id, "CREATE_CONTEXT 2 x 40 -> id 0x%x",
		      ctx_id);
	}
	base(&c, WFW_OP_UNLOAD_MODEL);
	expect(&c, -WFS_EBUSY, "UNLOAD_MODEL while a context exists");
	base(&c, WFW_OP_DESTROY_CONTEXT);
	c.ctx.ctx_id = ctx_id + 1;
	expect(&c, -WFS_ENOENT, "DESTROY_CONTEXT unknown id");
	c.ctx.ctx_id = ctx_id ^ (1u << 12);
	expect(&c, -WFS_ENOENT, "DESTROY_CONTEXT id with a wrong generation");
	c.ctx.ctx_id = ctx_id;
	c.ctx.slots = 1;
	expect(&c, -WFS_EINVAL, "DESTROY_CONTEXT with slots != 0");
}

/* A NOP job: ctx and slot only. */
static void nop(struct wfw_cmd *c)
{
	base(c, WFW_OP_RUN_JOB);
	c->job.ctx_id = ctx_id;
	c->job.slot = 1;
	c->job.flags = WFW_JOB_NOP;
}

/* NOP: completed at intake with nothing run; every field of work rejected. */
static void test_nop(void)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl;
	int ret;

	nop(&c);
	c.cookie = 0;
	ret = dh_exec(h, &c, &cpl, 5000);
	wt_ok(!ret && cpl.status == 0 && !cpl.result0 && !cpl.result1 && !cpl.result2 &&
	      !cpl.device_ns, "RUN_JOB NOP: status 0, no tokens, records, chunks or device time "
	      "(%d, %u/%u/%u, %llu ns)", cpl.status, cpl.result0, cpl.result1, cpl.result2,
	      (unsigned long long)cpl.device_ns);
#define NOP_BAD(field, v, what) do { nop(&c); c.job.field = (v); \
		expect(&c, -WFS_EINVAL, "RUN_JOB NOP with " what); } while (0)
	NOP_BAD(n_tokens, 1, "n_tokens 1");
	NOP_BAD(start_pos, 1, "start_pos 1");
	NOP_BAD(topk, 1, "topk 1");
	NOP_BAD(in_addr, 0x1000, "an input address");
	NOP_BAD(out_addr, 0x1000, "an output address");
	NOP_BAD(out_len, 8, "out_len 8");
	NOP_BAD(slot, 2, "slot == slots");
	NOP_BAD(flags, WFW_JOB_NOP | WFW_JOB_ALL_POSITIONS, "ALL_POSITIONS");
	NOP_BAD(flags, WFW_JOB_NOP | WFW_JOB_IN_ACT, "IN_ACT");
	NOP_BAD(times_len, 8, "times_len 8 (no TIMES)");
#undef NOP_BAD
}

static void test_jobs(void)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl;
	u32 i;

	for (i = 0; i < 64; i++)
		in[i] = 1 + i % 400;
	job(&c, 8);
	expect(&c, 0, "RUN_JOB valid (8 tokens, all positions)");
	job(&c, 1);
	c.job.ctx_id = 0xdead;
	expect(&c, -WFS_ENOENT, "RUN_JOB unknown context");
	job(&c, 1);
	c.job.slot = 2;
	expect(&c, -WFS_EINVAL, "RUN_JOB slot >= slots");
	job(&c, 0);
	expect(&c, -WFS_EINVAL, "RUN_JOB 0 tokens");
	job(&c, 8);
	c.job.start_pos = 33;
	expect(&c, -WFS_ERANGE, "RUN_JOB start_pos + n_tokens > ctx_len");
	job(&c, 2);
	c.job.start_pos = 0xffffffffu;
	expect(&c, -WFS_ERANGE, "RUN_JOB start_pos + n_tokens overflowing 32 bits");
	job(&c, 1);
	c.job.topk = WFW_MAX_TOPK + 1;
	expect(&c, -WFS_EINVAL, "RUN_JOB topk > WFW_MAX_TOPK");
	job(&c, 1);
	c.job.flags = 1u << 7;
	expect(&c, -WFS_EINVAL, "RUN_JOB unknown flag");
	job(&c, 1);
	c.job.flags = WFW_JOB_IN_ACT;
	expect(&c, -WFS_EINVAL, "RUN_JOB IN_ACT on a range holding the embedding");
	job(&c, 1);
	c.job.flags = WFW_JOB_OUT_ACT;
	c.job.topk = 0;
	expect(&c, -WFS_EINVAL, "RUN_JOB OUT_ACT on a range holding the head");
	job(&c, 1);
	c.job.times_len = 9;
	expect(&c, -WFS_EINVAL, "RUN_JOB times_len without TIMES");
	test_job_times(&c);
	job(&c, 8);
	c.job.out_len = 8 * WFW_OUT_REC_SIZE(4) - 1;
	expect(&c, -WFS_EINVAL, "RUN_JOB output buffer one byte short");
	job(&c, 8);
	c.job.flags = 0;
	c.job.out_len = WFW_OUT_REC_SIZE(4);
	expect(&c, 0, "RUN_JOB last position only fits one record");
	job(&c, 4);
	c.job.out_addr = ~0ull - 16;
	expect(&c, -WFS_EINVAL, "RUN_JOB output address wrapping 2^64");
	job(&c, 4);
	c.job.in_addr = ~0ull - 4;
	expect(&c, -WFS_EINVAL, "RUN_JOB input address wrapping 2^64");
	job(&c, 4);
	c.job.in_addr = 0x2000;
	expect(&c, -WFS_EFAULT, "RUN_JOB unmapped input");
	job(&c, 4);
	c.job.out_addr = 0x3000;
	expect(&c, -WFS_EFAULT, "RUN_JOB unmapped output (fails at the head)");
	in[3] = 512;
	job(&c, 4);
	expect(&c, -WFS_EINVAL, "RUN_JOB token id == vocab");
	in[3] = 0xffffffffu;
	expect(&c, -WFS_EINVAL, "RUN_JOB token id 0xffffffff");
	in[3] = 5;
	job(&c, 4);
	c.cookie = 0;
	dh_exec(h, &c, &cpl, 5000);
	wt_ok(cpl.status == 0 && cpl.result0 == 4 && cpl.result1 == 4 &&
	      cpl.device_ns > 0,
	      "RUN_JOB after all that: ok, 4 tokens, 4 records, %llu ns modelled",
	      (unsigned long long)cpl.device_ns);

	test_nop();
	job(&c, 4);
	c.cookie = 0;
	dh_exec(h, &c, &cpl, 5000);
	wt_ok(cpl.status == 0 && cpl.result0 == 4 && cpl.device_ns > 0,
	      "RUN_JOB after the NOPs: ok, 4 tokens, %llu ns modelled",
	      (unsigned long long)cpl.device_ns);

	base(&c, WFW_OP_DESTROY_CONTEXT);
	c.ctx.ctx_id = ctx_id;
	expect(&c, 0, "DESTROY_CONTEXT");
	expect(&c, -WFS_ENOENT, "DESTROY_CONTEXT twice");
	job(&c, 1);
	expect(&c, -WFS_ENOENT, "RUN_JOB on a destroyed context (stale id)");
	base(&c, WFW_OP_UNLOAD_MODEL);
	expect(&c, 0, "UNLOAD_MODEL");
}

static void test_ring_faults(void)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl;
	u32 cb_lo = dh_rd(h, WFW_REG_CMD_BASE_LO);
	u32 cb_hi = dh_rd(h, WFW_REG_CMD_BASE_HI);

	/* Driver writes a tail that claims more entries than the ring has. */
	dh_wr(h, WFW_REG_CMD_TAIL, h->cmd_tail + h->cmd_size + 1);
	wfs_device_doorbell(h->dev);
	usleep(20000);
	wt_ok((dh_rd(h, WFW_REG_FAULT) & WFW_FAULT_CMD_TAIL) &&
	      (dh_rd(h, WFW_REG_STATUS) & WFW_STATUS_FAULT) && h->irqs,
	      "CMD_TAIL beyond CMD_HEAD + size: FAULT_CMD_TAIL, halted, IRQ");
	dh_hw_reset(h, 0);
	wt_ok(!dh_rd(h, WFW_REG_FAULT) && !(dh_rd(h, WFW_REG_STATUS) & WFW_STATUS_FAULT) &&
	      dh_rd(h, WFW_REG_CMD_HEAD) == 0 && dh_rd(h, WFW_REG_RESET_COUNT) == 1,
	      "register reset clears the fault and the ring indices");
	base(&c, WFW_OP_NOP);
	wt_ok(dh_exec(h, &c, &cpl, 5000) == 0 && cpl.status == 0 && cpl.seq == 1,
	      "commands work after the reset (seq restarts at 1)");

	/* Completion head moved backwards. */
	dh_wr(h, WFW_REG_CPL_HEAD, h->cpl_head + 5);
	base(&c, WFW_OP_NOP);
	c.cookie = 77;
	dh_submit(h, &c);
	usleep(20000);
	wt_ok((dh_rd(h, WFW_REG_FAULT) & WFW_FAULT_CPL_HEAD) != 0,
	      "CPL_HEAD past CPL_TAIL: FAULT_CPL_HEAD");
	dh_hw_reset(h, 0);

	/* Command ring that the DMA callbacks refuse. */
	dh_wr(h, WFW_REG_CTRL, 0);
	dh_wr(h, WFW_REG_CMD_BASE_LO, 0x40);
	dh_wr(h, WFW_REG_CMD_BASE_HI, 0);
	dh_wr(h, WFW_REG_CTRL, WFW_CTRL_ENABLE);
	base(&c, WFW_OP_NOP);
	dh_submit(h, &c);
	usleep(20000);
	wt_ok((dh_rd(h, WFW_REG_FAULT) & WFW_FAULT_CMD_DMA) != 0,
	      "descriptor fetch from an unmapped ring: FAULT_CMD_DMA");
	dh_hw_reset(h, 0);

	/* Bad ring configurations at ENABLE. */
	dh_wr(h, WFW_REG_CTRL, 0);
	dh_wr(h, WFW_REG_CMD_BASE_LO, cb_lo + 8);
	dh_wr(h, WFW_REG_CTRL, WFW_CTRL_ENABLE);
	wt_ok((dh_rd(h, WFW_REG_FAULT) & WFW_FAULT_RING_CONFIG) &&
	      !(dh_rd(h, WFW_REG_STATUS) & WFW_STATUS_ENABLED),
	      "misaligned ring base: FAULT_RING_CONFIG, not enabled");
	dh_hw_reset(h, 0);
	dh_wr(h, WFW_REG_CMD_BASE_LO, cb_lo);
	dh_wr(h, WFW_REG_CMD_BASE_HI, cb_hi);
	dh_wr(h, WFW_REG_CMD_SIZE, 3);
	dh_wr(h, WFW_REG_CTRL, WFW_CTRL_ENABLE);
	wt_ok((dh_rd(h, WFW_REG_FAULT) & WFW_FAULT_RING_CONFIG) != 0,
	      "ring size 3: FAULT_RING_CONFIG");
	dh_hw_reset(h, 0);
	dh_wr(h, WFW_REG_CMD_SIZE, h->cmd_size);
	dh_wr(h, WFW_REG_CTRL, WFW_CTRL_ENABLE);
	dh_wr(h, WFW_REG_CMD_SIZE, 2);
	wt_ok(dh_rd(h, WFW_REG_CMD_SIZE) == h->cmd_size,
	      "ring registers are read-only while enabled");
	wt_ok(dh_rd(h, 0x1000) == 0 && dh_rd(h, 2) == 0 &&
	      dh_rd(h, WFW_REG_DOORBELL) == 0,
	      "out-of-range, unaligned and write-only registers read 0");
	dh_wr(h, 0x1000, 1);
	dh_wr(h, WFW_REG_ABI_VERSION, 0);
	wt_ok(dh_rd(h, WFW_REG_ABI_VERSION) == WFW_ABI_VERSION,
	      "writes to read-only registers are ignored");
	base(&c, WFW_OP_NOP);
	wt_ok(dh_exec(h, &c, &cpl, 5000) == 0 && cpl.status == 0,
	      "device usable after every ring fault");
}

#define CTL_JOBS	128	/* jobs posted ahead of the control command */
#define CTL_TABLE	16	/* the device's job table entries */

/* Waits for every outstanding completion; counts jobs, notes @cookie's. */
static int ctl_collect(struct dh *d, u32 *jobs, u32 *bad, u64 cookie,
		       struct wfw_cpl *got, u32 *jobs_before)
{
	struct wfw_cpl cpl;

	while (*jobs < CTL_JOBS || !got->cookie) {
		if (!dh_poll(d, &cpl, 30000))
			return -ETIMEDOUT;
		if (cpl.cookie == cookie) {
			*got = cpl;
			*jobs_before = *jobs;
		} else if (cpl.opcode == WFW_OP_RUN_JOB) {
			*bad += cpl.status != 0;
			(*jobs)++;
		}
	}
	return 0;
}

/*
 * The control ring (ABI 1.8) is served before the command ring.  With
 * CTL_JOBS jobs posted first and a job table of CTL_TABLE entries, a
 * GET_INFO run in ring order could only complete once the last job was
 * admitted, after CTL_JOBS - CTL_TABLE had retired; through the control
 * ring it completes while the device still holds jobs posted before it.
 * Every job still completes (the CP holds the one that finds the table
 * full), and RUN_JOB is refused on the control ring.
 */
static void test_control_ring(void)
{
	struct wfs_device_config cfg;
	struct dh *d = calloc(1, sizeof(*d));
	struct wfw_info *info = dh_alloc(sizeof(*info));
	u32 *din = dh_alloc(64 * 4);
	u8 *dout = dh_alloc(OUT_BYTES);
	u32 i, jobs = 0, bad = 0, before = 0, posted = 0;
	struct wfw_cmd c, q;
	struct wfw_cpl cpl, got;
	int64_t ctx;
	int ret;

	memset(&cfg, 0, sizeof(cfg));
	cfg.numa_node = -1;
	cfg.profile = "asic";
	cfg.max_jobs = CTL_TABLE;
	if (!wt_ok(d && info && din && dout && dh_init(d, &cfg, CTL_JOBS, 2 * CTL_JOBS) == 0,
		   "control ring: device up"))
		return;
	dh_region_add(d, blob, blob_len);
	dh_region_add(d, din, 64 * 4);
	dh_region_add(d, dout, OUT_BYTES);
	dh_region_add(d, info, sizeof(*info));
	for (i = 0; i < 64; i++)
		din[i] = 1 + i % 400;
	ctx = -1;
	if (dh_load(d, blob, blob_len, &cpl) == 0)
		ctx = dh_ctx_create(d, 2, 32, &cpl);
	if (!wt_ok(ctx > 0, "control ring: model and context (%lld)", (long long)ctx))
		goto out;

	for (i = 0; i < CTL_JOBS; i++) {
		dh_job_cmd(&c, (u32)ctx, 0, 0, 16, din, dout, OUT_BYTES, 4,
			   WFW_JOB_ALL_POSITIONS, 1000 + i);
		posted += !dh_try_submit(d, &c);
	}
	memset(&q, 0, sizeof(q));
	q.opcode = WFW_OP_GET_INFO;
	q.buf.addr = (uint64_t)(uintptr_t)info;
	q.buf.len = sizeof(*info);
	memset(&got, 0, sizeof(got));
	wt_ok(posted == CTL_JOBS && !dh_post_ctl(d, &q), "%u jobs, then GET_INFO on the control ring",
	      posted);
	ret = ctl_collect(d, &jobs, &bad, q.cookie, &got, &before);
	wt_ok(!ret && !bad && jobs == CTL_JOBS,
	      "all %u jobs completed with status 0 through a job table of %u", jobs, CTL_TABLE);
	wt_ok(got.status == 0 && info->max_jobs == CTL_TABLE &&
	      before < CTL_JOBS - CTL_TABLE,
	      "GET_INFO completed after %u of the %u jobs posted before it (in ring order: at least %u)",
	      before, CTL_JOBS, CTL_JOBS - CTL_TABLE);

	dh_job_cmd(&c, (u32)ctx, 0, 0, 8, din, dout, OUT_BYTES, 4, WFW_JOB_ALL_POSITIONS, 0);
	c.cookie = 0;
	memset(&cpl, 0, sizeof(cpl));
	ret = !dh_post_ctl(d, &c) && dh_poll(d, &cpl, 10000) && cpl.cookie == c.cookie;
	wt_ok(ret && cpl.status == -WFS_EINVAL, "RUN_JOB on the control ring -> -EINVAL (%d)",
	      cpl.status);
out:
	dh_fini(d);
	free(d);
	free(info);
	free(din);
	free(dout);
}

int main(void)
{
	const char *path = wt_model_path("stories260K.bin");
	struct wfs_pack_opts o8 = { .wbits = 8, .group_size = 64 };
	struct wfs_device_config cfg;
	struct wfs_ckpt ck;

	if (!wt_ok(path && wfs_ckpt_load(path, &ck) == 0, "load model") ||
	    !wt_ok(wfs_pack(&ck, &o8, &blob, &blob_len) == 0, "pack"))
		return wt_done();
	h = calloc(1, sizeof(*h));
	memset(&cfg, 0, sizeof(cfg));
	cfg.numa_node = -1;
	cfg.profile = "asic";
	if (!wt_ok(dh_init(h, &cfg, 8, 8) == 0, "device up"))
		return wt_done();
	in = dh_alloc(64 * 4);
	out = dh_alloc(OUT_BYTES);
	dh_region_add(h, blob, blob_len);
	dh_region_add(h, in, 64 * 4);
	dh_region_add(h, out, OUT_BYTES);

	test_header_and_admin();
	test_model_and_contexts();
	test_jobs();
	test_ring_faults();
	test_control_ring();
	wt_ok(h->bad_checks == 0, "every completion's check value was valid");
	dh_fini(h);
	free(h);
	free(blob);
	wfs_ckpt_free(&ck);
	return wt_done();
}
