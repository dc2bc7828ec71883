// SPDX-License-Identifier: MIT
/*
 * wfs_cmd.c - the firmware's command processor (CP).
 *
 * The CP thread sleeps on the doorbell, fetches descriptors from the
 * control ring first, then from the command ring (one DMA read into a
 * local copy, so the host cannot change a command while it is checked and
 * used), validates every field, and dispatches it to the part of the
 * device that owns it.  Every command fetched gets exactly one completion,
 * posted here or, for RUN_JOB, when the job retires; a malformed command
 * completes with a negative errno.  Reserved fields must be zero.
 *
 * The CP never waits for a job table entry: a RUN_JOB that finds the table
 * full is held, and the control ring is served until an entry is free, so
 * control commands wait for no tenant's queued jobs.  Nor for a blob's
 * check or its copy: LOAD_MODEL hands it to the load worker (wfs_loadq.c),
 * which checks, places and copies it; the CP commits the model after.
 */
#include "wfs_device_priv.h"
#include "wfs_moe_ep.h"
#include "wfs_ring.h"

/* How long the CP sleeps without a doorbell (heartbeat period). */
#define CP_IDLE_NS		100000000ull
/* Commands one pass serves before it lets the heartbeat and IRQ run. */
#define CP_BATCH		256
/* Tokens RUN_JOB validation reads per DMA. */
#define PRESCAN_TOKENS		64
/* GET_INFO writes at least abi_version and info_size. */
#define INFO_MIN_LEN		(2 * sizeof(u32))
/* cmd_dispatch(): a RUN_JOB waits for a job table entry (held by the CP). */
#define CMD_HOLD		2

static int all_zero(const void *p, u64 n)
{
	const u8 *b = p;
	u64 i;

	for (i = 0; i < n; i++) {
		if (b[i])
			return 0;
	}
	return 1;
}

#define ZERO(field)	all_zero(&(field), sizeof(field))

/* ------------------------------------------------------------ validate -- */

static int check_buf(struct wfs_device *dev, const struct wfw_cmd *cmd)
{
	const struct wfw_cmd_buf *p = &cmd->buf;
	u32 stages = dev->hw.prof.stages;

	if (!ZERO(p->reserved))
		return -WFS_EINVAL;
	switch (cmd->opcode) {
	case WFW_OP_GET_INFO:
		return (p->index && cmd->model) || p->pos || p->len < INFO_MIN_LEN ?
		       -WFS_EINVAL : 0;
	case WFW_OP_GET_STATS:
		return p->pos || p->index >= stages ||
		       p->len < sizeof(struct wfw_stage_stats) ?
		       -WFS_EINVAL : 0;
	case WFW_OP_GET_SRAM_MAP:
		return p->pos || p->index >= stages ? -WFS_EINVAL : 0;
	case WFW_OP_GET_EXPERT_LOAD:
		return p->pos ? -WFS_EINVAL : 0;
	default:	/* READ_LOG */
		return p->index ? -WFS_EINVAL : 0;
	}
}

static int check_load(const struct wfw_cmd_load_model *p)
{
	if (p->flags & ~WFW_LOAD_FLAGS_ALL || !ZERO(p->reserved))
		return -WFS_EINVAL;
	/* Layer parts (1.5) are resident: no streamed part. */
	if (p->part > WFW_PART_MAX ||
	    (p->part && (p->flags & WFW_LOAD_STREAM)))
		return -WFS_EINVAL;
	/* A range is whole layers: a first layer alone means nothing. */
	if (p->layer_first && !p->layer_count)
		return -WFS_EINVAL;
	/* Expert groups (1.6) are resident, and attention has no experts. */
	if (p->expert_group && ((p->flags & WFW_LOAD_STREAM) ||
				p->part == WFW_PART_ATTN))
		return -WFS_EINVAL;
	if (p->len < sizeof(struct wfs_blob_header))
		return -WFS_EINVAL;
	return 0;
}

static int check_ctx(const struct wfw_cmd *cmd)
{
	const struct wfw_cmd_context *p = &cmd->ctx;

	if (p->flags & ~WFW_CTX_FLAGS_ALL || !ZERO(p->reserved))
		return -WFS_EINVAL;
	if (cmd->opcode == WFW_OP_DESTROY_CONTEXT)
		return p->slots || p->ctx_len || p->flags || p->tenant ?
		       -WFS_EINVAL : 0;
	if (p->ctx_id || !p->slots || !p->ctx_len ||
	    p->slots > WFS_CTX_MAX_SLOTS)
		return -WFS_EINVAL;
	return 0;
}

/* The payload's own fields (the context is checked at dispatch). */
static int check_job(const struct wfw_cmd_run_job *p)
{
	if (p->flags & ~WFW_JOB_FLAGS_KNOWN)
		return -WFS_EINVAL;
	if (!(p->flags & WFW_JOB_TIMES) && (p->times_offset || p->times_len))
		return -WFS_EINVAL;
	if (p->flags & ~WFW_JOB_FLAGS_SUPPORTED)
		return -WFS_EOPNOTSUPP;
	return 0;
}

/* Commands about a model may name one (wfw_abi.h, WFW_MAX_MODELS). */
static int names_model(u32 opcode)
{
	switch (opcode) {
	case WFW_OP_UNLOAD_MODEL:
	case WFW_OP_CREATE_CONTEXT:
	case WFW_OP_RUN_JOB:
	case WFW_OP_GET_INFO:
	case WFW_OP_GET_STATS:
	case WFW_OP_GET_SRAM_MAP:
	case WFW_OP_GET_EXPERT_LOAD:
		return 1;
	default:
		return 0;
	}
}

/* Static checks of one command: everything that needs no device state. */
static int cmd_check(struct wfs_device *dev, const struct wfw_cmd *cmd)
{
	if (cmd->flags || (cmd->model && !names_model(cmd->opcode)))
		return -WFS_EINVAL;
	switch (cmd->opcode) {
	case WFW_OP_NOP:
		return ZERO(cmd->raw) ? 0 : -WFS_EINVAL;
	case WFW_OP_UNLOAD_MODEL:
		return cmd->unload.flags & ~WFW_UNLOAD_FLAGS_ALL ||
		       !ZERO(cmd->unload.reserved) ? -WFS_EINVAL : 0;
	case WFW_OP_GET_INFO:
	case WFW_OP_GET_STATS:
	case WFW_OP_GET_SRAM_MAP:
	case WFW_OP_READ_LOG:
	case WFW_OP_GET_EXPERT_LOAD:
		return check_buf(dev, cmd);
	case WFW_OP_LOAD_MODEL:
		return check_load(&cmd->load);
	case WFW_OP_CREATE_CONTEXT:
	case WFW_OP_DESTROY_CONTEXT:
		return check_ctx(cmd);
	case WFW_OP_RUN_JOB:
		return check_job(&cmd->job);
	case WFW_OP_LOAD_CANCEL:
		return ZERO(cmd->cancel.reserved) ? 0 : -WFS_EINVAL;
	case WFW_OP_FAULT_INJECT:
		if (!(dev->hw.flags & WFS_DEV_FAULT_INJECT))
			return -WFS_EPERM;
		return cmd->fault.fault >= WFW_FAULT_COUNT ||
		       !ZERO(cmd->fault.reserved) ? -WFS_EINVAL : 0;
	case WFW_OP_RESET_RETIRED:
		wfs_log_printf(&dev->hw.log, 1, "opcode 7 (RESET) is retired: use CTRL.RESET");
		return -WFS_EOPNOTSUPP;
	default:
		return -WFS_EOPNOTSUPP;
	}
}

/* Read and check the job's tokens before anything runs. */
static int prescan_tokens(struct wfs_device *dev,
			  const struct wfs_model_state *m,
			  const struct wfw_cmd_run_job *p)
{
	u32 buf[PRESCAN_TOKENS], done = 0, i, n;

	while (done < p->n_tokens) {
		n = WFS_MIN(p->n_tokens - done, (u32)WFS_ARRAY_SIZE(buf));
		if (dev->hw.dma.read(dev->hw.dma_ctx, p->in_addr + 4ull * done,
				     buf, 4ull * n))
			return -WFS_EFAULT;
		for (i = 0; i < n; i++) {
			if (buf[i] >= m->info.vocab_size)
				return -WFS_EINVAL;
		}
		done += n;
	}
	return 0;
}

/* NOT_BEFORE: the job's floor, the u64 right after its token ids. */
static int read_not_before(struct wfs_device *dev,
			   const struct wfw_cmd_run_job *p, u64 *t)
{
	*t = 0;
	if (!(p->flags & WFW_JOB_NOT_BEFORE))
		return 0;
	if (dev->hw.dma.read(dev->hw.dma_ctx, p->in_addr + 4ull * p->n_tokens,
			     t, sizeof(*t)))
		return -WFS_EFAULT;
	return *t > WFW_NOT_BEFORE_MAX ? -WFS_EINVAL : 0;
}

/* Bytes of the job's input: ids or records, NOT_BEFORE's floor. */
static u64 job_in_bytes(const struct wfs_model_state *m,
			const struct wfw_cmd_run_job *p)
{
	u64 in_rec = (p->flags & WFW_JOB_IN_ACT) ? m->act_bytes : 4;

	return in_rec * p->n_tokens +
	       ((p->flags & WFW_JOB_NOT_BEFORE) ? sizeof(u64) : 0);
}

/*
 * LAYER (1.5): the layer whose part the job runs, the u32 after the
 * input; *@layer = its index in the blob.  A part model needs it, a model
 * of whole layers takes none.
 */
static int read_layer(struct wfs_device *dev, const struct wfs_model_state *m,
		      const struct wfw_cmd_run_job *p, u32 *layer)
{
	u32 full, phase, first = m->info.first_layer + m->range_first;

	*layer = 0;
	if (!(p->flags & WFW_JOB_LAYER) != !m->part) {
		wfs_log_printf(&dev->hw.log, 1, "run: %s",
			       m->part ? "a job of a layer part model needs WFW_JOB_LAYER" :
			       "WFW_JOB_LAYER on a model of whole layers");
		return -WFS_EINVAL;
	}
	if (!m->part)
		return 0;
	if (dev->hw.dma.read(dev->hw.dma_ctx, p->in_addr + job_in_bytes(m, p),
			     &full, sizeof(full)))
		return -WFS_EFAULT;
	/* Expert parallelism (1.7): the phase in the top bits. */
	phase = full >> WFW_XPHASE_SHIFT;
	full &= WFW_JOB_LAYER_MASK;
	if (phase ? !wfs_ep_phase_ok(m->part, phase) : wfs_part_is_ep(m->part)) {
		wfs_log_printf(&dev->hw.log, 1,
			       "run: phase %u is not one of part %u's",
			       phase, m->part);
		return -WFS_EINVAL;
	}
	if (full < first || full - first >= m->n_layers) {
		wfs_log_printf(&dev->hw.log, 1,
			       "run: layer %u is not in the loaded range (the %s part of layers %u-%u)",
			       full, m->part == WFW_PART_ATTN ? "attention" :
			       m->part == WFW_PART_FFN ? "FFN" : "expert",
			       first, first + m->n_layers - 1);
		return -WFS_EINVAL;
	}
	*layer = (full - m->info.first_layer) | phase << WFW_XPHASE_SHIFT;
	return 0;
}

/*
 * The job's input and output kinds must be the loaded range's: a part
 * job takes tokens only for the attention of layer 0, gives results only
 * from the FFN of the last layer.
 */
static int check_job_io(const struct wfs_model_state *m,
			const struct wfw_cmd_run_job *p, u32 layer)
{
	u32 in_act = !!(p->flags & WFW_JOB_IN_ACT);
	u32 out_act = !!(p->flags & WFW_JOB_OUT_ACT);
	u32 full = m->info.first_layer + (layer & WFW_JOB_LAYER_MASK);
	u32 phase = layer >> WFW_XPHASE_SHIFT;
	u32 embeds = m->embed && (!m->part || full == 0);
	/* Of an expert-parallel layer only FIN gives results. */
	u32 heads = m->head && (!m->part || full + 1 == m->info.total_layers) &&
		    (!wfs_part_is_ep(m->part) || phase == WFW_XPHASE_FIN);

	if (in_act == embeds || out_act == heads)
		return -WFS_EINVAL;
	/* Activation records carry their own time (t_ns). */
	if (in_act && (p->flags & WFW_JOB_NOT_BEFORE))
		return -WFS_EINVAL;
	if (out_act && (p->topk || (p->flags & WFW_JOB_ALL_POSITIONS)))
		return -WFS_EINVAL;
	return 0;
}

/* TIMES: past the records, aligned, a record per chunk and stage used. */
static int check_job_times(const struct wfs_device *dev,
			   const struct wfs_model_state *m,
			   const struct wfw_cmd_run_job *p, u64 need)
{
	u32 chunk = dev->hw.prof.chunk_tokens;
	u32 chunks = (p->n_tokens + chunk - 1) / chunk;
	u64 end;

	if (!(p->flags & WFW_JOB_TIMES))
		return 0;
	if (WFS_ADD_OVF(p->out_addr, (u64)p->out_len, &end) ||
	    p->times_offset < need || !WFS_IS_ALIGNED(p->times_offset, 8u) ||
	    (u64)p->times_offset + p->times_len > p->out_len ||
	    p->times_len < (u64)chunks * m->map.stages_used *
			   sizeof(struct wfw_chunk_time))
		return -WFS_EINVAL;
	return 0;
}

/* Input and output buffers: big enough and inside the address space. */
static int check_job_bufs(const struct wfs_device *dev,
			  const struct wfs_model_state *m,
			  const struct wfw_cmd_run_job *p)
{
	u64 tail = (p->flags & WFW_JOB_LAYER) ? sizeof(u32) : 0;
	u64 need, end;
	u32 records;

	if (p->flags & WFW_JOB_OUT_ACT) {
		need = (u64)p->n_tokens * m->act_bytes;
	} else {
		records = (p->flags & WFW_JOB_ALL_POSITIONS) ? p->n_tokens : 1;
		need = (u64)records * WFW_OUT_REC_SIZE(p->topk);
	}
	if (check_job_times(dev, m, p, need))
		return -WFS_EINVAL;
	if (p->out_len < need || WFS_ADD_OVF(p->out_addr, need, &end) ||
	    WFS_ADD_OVF(p->in_addr, job_in_bytes(m, p) + tail, &end))
		return -WFS_EINVAL;
	return 0;
}

/* A NOP names a context's slot and nothing else. */
static int check_job_nop(const struct wfs_ctx *ctx, const struct wfw_cmd_run_job *p)
{
	if (p->slot >= ctx->slots || p->flags != WFW_JOB_NOP || p->n_tokens ||
	    p->start_pos || p->topk || p->in_addr || p->out_addr || p->out_len)
		return -WFS_EINVAL;
	return 0;
}

/*
 * Only the CP admits jobs: with an entry free now, wfs_job_submit() finds
 * one without waiting.
 */
static int job_table_full(struct wfs_device *dev)
{
	int full;

	wfs_os_mutex_lock(dev->sync.lock);
	full = dev->job.active >= dev->job.max;
	wfs_os_mutex_unlock(dev->sync.lock);
	return full;
}

/*
 * RUN_JOB against the device's state, then into the job lifecycle; CMD_HOLD
 * while the job table is full (checked again in full when retried: a
 * control command served meanwhile may have destroyed the context).
 */
static int cmd_run_job(struct wfs_device *dev, const struct wfw_cmd *cmd)
{
	const struct wfw_cmd_run_job *p = &cmd->job;
	const struct wfs_model_state *m;
	struct wfs_ctx *ctx;
	u64 not_before;
	u32 layer;
	int ret;

	if (!dev->models.n)
		return -WFS_ENOENT;
	ctx = wfs_ctx_lookup(dev, p->ctx_id);
	if (!ctx)
		return -WFS_ENOENT;
	m = &dev->models.m[ctx->model];
	if (cmd->model && cmd->model != m->id)
		return -WFS_EINVAL;	/* not the context's model */
	if (p->flags & WFW_JOB_NOP) {
		ret = check_job_nop(ctx, p);
		if (!ret && job_table_full(dev))
			return CMD_HOLD;
		return ret ? ret : wfs_job_submit(dev, cmd->cookie, p, ctx, 0, 0);
	}
	if (p->slot >= ctx->slots || !p->n_tokens || p->topk > WFW_MAX_TOPK)
		return -WFS_EINVAL;
	if ((u64)p->start_pos + p->n_tokens > ctx->ctx_len)
		return -WFS_ERANGE;
	ret = check_job_bufs(dev, m, p);
	if (!ret)
		ret = read_layer(dev, m, p, &layer);
	if (!ret)
		ret = check_job_io(m, p, layer);
	if (!ret && !(p->flags & WFW_JOB_IN_ACT))
		ret = prescan_tokens(dev, m, p);
	if (!ret)
		ret = read_not_before(dev, p, &not_before);
	if (ret)
		return ret;
	if (job_table_full(dev))
		return CMD_HOLD;
	return wfs_job_submit(dev, cmd->cookie, p, ctx, not_before, layer);
}

/* ------------------------------------------------------------ dispatch -- */

/*
 * UNLOAD_MODEL of one model: the others keep running (their jobs may be in
 * flight); the workers go with the last model.
 */
static int cmd_unload(struct wfs_device *dev, const struct wfw_cmd *cmd,
		      struct wfw_cpl *c)
{
	struct wfs_model_state *m;
	u32 left = 1;
	int ret;

	m = wfs_model_lookup(dev, cmd->model, 0, &ret);
	if (!m)
		return ret;
	c->model = m->id;
	if (cmd->unload.flags & WFW_UNLOAD_CONTEXTS) {
		ret = wfs_ctx_destroy_model(dev, m->idx, &c->result0);
		if (ret)
			return ret;
	}
	ret = 0;
	wfs_os_mutex_lock(dev->sync.lock);
	if (wfs_ctx_count(dev, m->idx)) {
		ret = -WFS_EBUSY;
	} else {
		m->loaded = 0;
		dev->models.n--;
		left = dev->models.n;
		if (!left)
			wfs_stage_workers_close_locked(dev);
	}
	wfs_os_mutex_unlock(dev->sync.lock);
	if (ret)
		return ret;
	wfs_stage_workers_join(dev);
	wfs_load_unload(dev, m);
	if (!left)
		wfs_reg_update(&dev->hw, WFW_REG_STATUS, 0, WFW_STATUS_MODEL);
	wfs_log_printf(&dev->hw.log, 0, "unload: model 0x%x released, %u left",
		       c->model, left);
	return 0;
}

static int cmd_create_ctx(struct wfs_device *dev, const struct wfw_cmd *cmd,
			  struct wfw_cpl *c)
{
	struct wfs_model_state *m;
	int ret;

	m = wfs_model_lookup(dev, cmd->model, 0, &ret);
	if (!m)
		return ret;
	return wfs_ctx_create(dev, m, cmd->ctx.slots, cmd->ctx.ctx_len,
			      cmd->ctx.tenant, c);
}

static int cmd_fault(struct wfs_device *dev, const struct wfw_cmd_fault *p)
{
	if (p->fault == WFW_FAULT_HANG_NEXT_JOB || p->fault == WFW_FAULT_NONE)
		wfs_job_arm_hang(dev, p->fault == WFW_FAULT_HANG_NEXT_JOB);
	if (p->fault == WFW_FAULT_STALL_CP || p->fault == WFW_FAULT_NONE)
		wfs_os_store32(&dev->cp.stalled, p->fault == WFW_FAULT_STALL_CP);
	if (p->fault == WFW_FAULT_PAUSE_NEXT_LOAD ||
	    p->fault == WFW_FAULT_PAUSE_NEXT_COPY || p->fault == WFW_FAULT_NONE)
		dev->cp.pause_load = p->fault == WFW_FAULT_NONE ? 0 : p->fault;
	if (p->fault == WFW_FAULT_NONE)
		wfs_loadq_unpause(dev);
	wfs_cpl_arm_fault(&dev->cpl, p->fault);
	wfs_log_printf(&dev->hw.log, 1, "fault injection: armed fault %u",
		       p->fault);
	return 0;
}

/* Run a checked command; WFS_CPL_DEFERRED if someone else completes it. */
static int cmd_dispatch(struct wfs_device *dev, const struct wfw_cmd *cmd,
			struct wfw_cpl *c)
{
	u32 pause;

	switch (cmd->opcode) {
	case WFW_OP_GET_INFO:
		return wfs_info_get(dev, cmd, c);
	case WFW_OP_LOAD_MODEL:
		pause = dev->cp.pause_load;
		dev->cp.pause_load = 0;
		return wfs_loadq_submit(dev, cmd, pause);
	case WFW_OP_LOAD_CANCEL:
		return wfs_loadq_cancel(dev, cmd->cancel.cookie);
	case WFW_OP_UNLOAD_MODEL:
		return cmd_unload(dev, cmd, c);
	case WFW_OP_CREATE_CONTEXT:
		return cmd_create_ctx(dev, cmd, c);
	case WFW_OP_DESTROY_CONTEXT:
		return wfs_ctx_destroy(dev, cmd->ctx.ctx_id);
	case WFW_OP_RUN_JOB:
		return cmd_run_job(dev, cmd);
	case WFW_OP_FAULT_INJECT:
		return cmd_fault(dev, &cmd->fault);
	case WFW_OP_GET_STATS:
		return wfs_info_stats(dev, cmd, c);
	case WFW_OP_GET_SRAM_MAP:
		return wfs_info_sram_map(dev, cmd, c);
	case WFW_OP_READ_LOG:
		return wfs_info_read_log(dev, &cmd->buf, c);
	case WFW_OP_GET_EXPERT_LOAD:
		return wfs_info_expert_load(dev, cmd, c);
	default:	/* NOP */
		return 0;
	}
}

/*
 * Validate and run one fetched command (a private copy), from the control
 * ring if @ctl.  Return: 1 if it is a RUN_JOB to hold and retry (CMD_HOLD).
 */
static int cmd_execute(struct wfs_device *dev, const struct wfw_cmd *cmd, int ctl)
{
	u64 t0 = wfs_os_now_ns();
	struct wfw_cpl c;
	int ret;

	WFS_MEMSET(&c, 0, sizeof(c));
	c.cookie = cmd->cookie;
	c.opcode = cmd->opcode;
	ret = cmd_check(dev, cmd);
	if (!ret && ctl && cmd->opcode == WFW_OP_RUN_JOB) {
		wfs_log_printf(&dev->hw.log, 1,
			       "control ring: RUN_JOB belongs in the command ring");
		ret = -WFS_EINVAL;
	}
	if (!ret)
		ret = cmd_dispatch(dev, cmd, &c);
	if (ret == CMD_HOLD)
		return 1;
	if (ret == WFS_CPL_DEFERRED)
		return 0;
	c.status = ret;
	c.host_ns = wfs_os_now_ns() - t0;
	wfs_cpl_post(&dev->hw, &dev->cpl, &c, 0);
	return 0;
}

/* --------------------------------------------------------------- fetch -- */

int wfs_cp_enable_ctl(struct wfs_device *dev)
{
	struct wfs_hw *hw = &dev->hw;
	u32 size = wfs_reg_get(hw, WFW_REG_CTL_SIZE);
	u64 base = ((u64)wfs_reg_get(hw, WFW_REG_CTL_BASE_HI) << 32) |
		   wfs_reg_get(hw, WFW_REG_CTL_BASE_LO);

	if (size && (!wfs_ring_size_valid(size, WFW_CTL_RING_MAX_ENTRIES) || !base ||
		     !WFS_IS_ALIGNED(base, (u64)WFW_RING_ALIGN)))
		return -WFS_EINVAL;
	dev->cp.ctl_base = size ? base : 0;
	dev->cp.ctl_size = size;
	return 0;
}

void wfs_cp_reset(struct wfs_device *dev)
{
	dev->cp.ctl_head = 0;
	dev->cp.has_held = 0;
}

/* Whether the CP may fetch now: enabled, no fault, no reset under way. */
static int cp_may_fetch(struct wfs_device *dev)
{
	u32 st = wfs_reg_get(&dev->hw, WFW_REG_STATUS);

	return !wfs_aborting(&dev->sync) && (st & WFW_STATUS_ENABLED) &&
	       !(st & WFW_STATUS_FAULT);
}

/*
 * Fetch the next command of a ring; 0 if there is none, no completion
 * slot, or the ring is unusable.  @head: the CP's consumer index;
 * @tail_reg, @head_reg: the ring's registers; @fault: a bad tail's.
 */
static int ring_fetch(struct wfs_device *dev, u64 base, u32 size, u32 *head,
		      u32 tail_reg, u32 head_reg, u32 fault, struct wfw_cmd *cmd)
{
	struct wfs_hw *hw = &dev->hw;
	u32 tail = wfs_reg_get(hw, tail_reg);

	if (!wfs_ring_indices_valid(*head, tail, size)) {
		wfs_set_fault(hw, fault);
		return 0;
	}
	if (wfs_ring_empty(*head, tail))
		return 0;
	if (wfs_cpl_reserve(hw, &dev->cpl))
		return 0;
	if (hw->dma.read(hw->dma_ctx,
			 wfs_ring_entry_addr(base, *head, size, sizeof(*cmd)),
			 cmd, sizeof(*cmd))) {
		wfs_cpl_unreserve(&dev->cpl);
		wfs_set_fault(hw, WFW_FAULT_CMD_DMA);
		return 0;
	}
	*head += 1;
	wfs_reg_set(hw, head_reg, *head);
	return 1;
}

/* Fetch the next command of the command ring. */
static int cp_fetch(struct wfs_device *dev, struct wfw_cmd *cmd)
{
	u64 base;
	u32 size;

	if (!cp_may_fetch(dev))
		return 0;
	wfs_cpl_cmd_ring(&dev->cpl, &base, &size);
	return ring_fetch(dev, base, size, &dev->cp.cmd_head, WFW_REG_CMD_TAIL,
			  WFW_REG_CMD_HEAD, WFW_FAULT_CMD_TAIL, cmd);
}

/* Fetch the next command of the control ring (latched at ENABLE). */
static int cp_fetch_ctl(struct wfs_device *dev, struct wfw_cmd *cmd)
{
	if (!dev->cp.ctl_size || !cp_may_fetch(dev))
		return 0;
	return ring_fetch(dev, dev->cp.ctl_base, dev->cp.ctl_size, &dev->cp.ctl_head,
			  WFW_REG_CTL_TAIL, WFW_REG_CTL_HEAD, WFW_FAULT_CTL_TAIL, cmd);
}

/*
 * The next job-ring command to run: the held RUN_JOB once the job table
 * has an entry (a retirement's CPL_HEAD write kicks the CP), else a new
 * one; 0 for none now.
 */
static int cp_next_job(struct wfs_device *dev, struct wfw_cmd *cmd)
{
	if (!dev->cp.has_held)
		return cp_fetch(dev, cmd);
	if (wfs_aborting(&dev->sync) || job_table_full(dev))
		return 0;
	*cmd = dev->cp.held;
	dev->cp.has_held = 0;
	return 1;
}

/*
 * Fetch and run commands, the control ring's first, until both rings are
 * empty or something blocks.
 */
static void cp_process(struct wfs_device *dev)
{
	struct wfw_cmd cmd;
	u32 n;

	for (n = 0; n < CP_BATCH; n++) {
		wfs_loadq_finish(dev);
		if (cp_fetch_ctl(dev, &cmd)) {
			cmd_execute(dev, &cmd, 1);
			continue;
		}
		if (!cp_next_job(dev, &cmd))
			return;
		if (cmd_execute(dev, &cmd, 0)) {
			dev->cp.held = cmd;
			dev->cp.has_held = 1;
		}
	}
	/* Batch used up: come back without waiting. */
	wfs_hw_kick(&dev->hw);
}

void wfs_cp_thread(void *arg)
{
	struct wfs_device *dev = arg;
	struct wfs_hw *hw = &dev->hw;

	while (!wfs_stopping(&dev->sync)) {
		if (wfs_os_load32(&dev->sync.abort)) {
			wfs_park(&dev->sync, 1, NULL);
			continue;
		}
		if (wfs_os_load32(&dev->cp.stalled)) {
			wfs_os_event_wait(hw->kick, CP_IDLE_NS);
			continue;
		}
		wfs_reg_set(hw, WFW_REG_HEARTBEAT,
			    wfs_reg_get(hw, WFW_REG_HEARTBEAT) + 1);
		if (wfs_os_load32(&hw->irq_kick))
			wfs_raise_irq(hw, 0);
		cp_process(dev);
		if (!wfs_aborting(&dev->sync))
			wfs_os_event_wait(hw->kick, CP_IDLE_NS);
	}
}
