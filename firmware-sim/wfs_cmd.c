// SPDX-License-Identifier: MIT
/*
 * wfs_cmd.c - the firmware's command processor (CP).
 *
 * The CP thread sleeps on the doorbell, fetches descriptors from the
 * command ring (one DMA read into a local copy, so the host cannot change a
 * command while it is checked and used), validates every field, and
 * executes it.  Every command fetched gets exactly one completion, posted
 * here or, for RUN_JOB, by the last pipeline stage; a malformed command
 * completes with a negative errno.  Reserved fields must be zero.
 */
#include "wfs_device_priv.h"
#include "wfs_ring.h"

/* Completion deferred to the pipeline, or dropped by a reset. */
#define CMD_DEFERRED	1

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

static void copy_str(char *dst, u32 size, const char *src)
{
	u32 i;

	for (i = 0; i + 1 < size && src[i]; i++)
		dst[i] = src[i];
	dst[i] = '\0';
}

/* ----------------------------------------------------------------- model -- */

/**
 * wfs_model_release() - forget the model and free all stage SRAM
 * @dev: device (no contexts, no jobs; the CP, or a reset with all parked)
 */
void wfs_model_release(struct wfs_device *dev)
{
	u32 s;

	for (s = 0; s < dev->prof.stages; s++) {
		struct wfs_stage *st = &dev->stages[s];

		wfs_sram_reset(&st->sram);
		st->first_layer = 0;
		st->n_layers = 0;
		st->embed = 0;
		st->head = 0;
		st->last = 0;
		st->lviews = NULL;
		st->eview = NULL;
		st->hview = NULL;
		st->work = NULL;
		st->scratch = NULL;
		st->topk = NULL;
		st->rec = NULL;
		st->weight_bytes = 0;
	}
	WFS_MEMSET(&dev->model, 0, sizeof(dev->model));
}

/**
 * wfs_ctx_release_all() - forget every context (their SRAM goes with the
 *	model's; the caller releases the model too)
 * @dev: device
 */
void wfs_ctx_release_all(struct wfs_device *dev)
{
	u32 i;

	for (i = 0; i < dev->max_ctxs; i++) {
		struct wfs_ctx *c = &dev->ctxs[i];

		if (c->in_use) {
			c->in_use = 0;
			c->gen++;
		}
	}
	dev->n_ctxs = 0;
}

/* Bytes of a placement item: each allocation rounds up to a block. */
static u64 blk(u64 bytes)
{
	return wfs_sram_block_size(bytes);
}

static int section_in_blob(const struct wfs_section_range *r, u64 len)
{
	u64 end;

	return r->size && !WFS_ADD_OVF(r->offset, r->size, &end) && end <= len;
}

static void *stage_alloc(struct wfs_stage *st, u64 bytes, const char *fmt,
			 u32 arg)
{
	char name[WFS_SRAM_NAME_LEN];

	wfs_snprintf(name, sizeof(name), fmt, arg);
	return wfs_sram_alloc(&st->sram, bytes, 0, name);
}

/* Allocate one stage's share of the model and bind its views. */
static int load_stage(struct wfs_device *dev, const u8 *blob, u64 len,
		      u32 s)
{
	struct wfs_model_state *m = &dev->model;
	const struct wfs_model_info *info = &m->info;
	struct wfs_stage *st = &dev->stages[s];
	struct wfs_section_range r;
	u32 l;
	int ret;
	u8 *p;

	st->first_layer = m->map.first_layer[s];
	st->n_layers = m->map.n_layers[s];
	st->embed = s == 0;
	st->head = s == m->map.stages_used - 1;
	st->last = st->head;
	st->free_at = 0;

	st->in.depth = dev->prof.fifo_depth;
	for (l = 0; l < st->in.depth; l++) {
		st->in.ent[l].buf = stage_alloc(st, m->flit_bytes, "fifo%u", l);
		if (!st->in.ent[l].buf)
			return -WFS_ENOSPC;
	}
	st->work = stage_alloc(st, (u64)dev->prof.chunk_tokens * m->act_bytes,
			       "work", 0);
	if (!st->work)
		return -WFS_ENOSPC;
	if (st->n_layers) {
		st->lviews = stage_alloc(st, (u64)st->n_layers *
					 sizeof(*st->lviews), "views", 0);
		st->scratch = stage_alloc(st, wfs_layer_scratch_bytes(info,
								      m->max_ctx),
					  "scratch", 0);
		if (!st->lviews || !st->scratch)
			return -WFS_ENOSPC;
	}
	for (l = 0; l < st->n_layers; l++) {
		u32 layer = st->first_layer + l;

		ret = wfs_model_layer_section(info, blob, layer, &r);
		if (ret)
			return ret;
		if (!section_in_blob(&r, len))
			return -WFS_EINVAL;
		p = stage_alloc(st, r.size, "L%u.weights", layer);
		if (!p)
			return -WFS_ENOSPC;
		WFS_MEMCPY(p, blob + r.offset, r.size);
		ret = wfs_layer_bind(info, p, r.size, layer, &st->lviews[l]);
		if (ret)
			return ret;
		st->weight_bytes += r.size;
	}
	if (st->embed) {
		if (!section_in_blob(&info->embed, len))
			return -WFS_EINVAL;
		st->eview = stage_alloc(st, sizeof(*st->eview), "embed.view", 0);
		p = stage_alloc(st, info->embed.size, "embed", 0);
		if (!st->eview || !p)
			return -WFS_ENOSPC;
		WFS_MEMCPY(p, blob + info->embed.offset, info->embed.size);
		ret = wfs_embed_bind(info, p, info->embed.size, st->eview);
		if (ret)
			return ret;
	}
	if (st->head) {
		if (!section_in_blob(&info->head, len))
			return -WFS_EINVAL;
		st->hview = stage_alloc(st, sizeof(*st->hview), "head.view", 0);
		p = stage_alloc(st, info->head.size, "head", 0);
		st->topk = stage_alloc(st, WFS_TOPK_MAX * sizeof(*st->topk),
				       "topk", 0);
		st->rec = stage_alloc(st, WFW_OUT_REC_SIZE(WFW_MAX_TOPK), "out",
				      0);
		if (!st->hview || !p || !st->topk || !st->rec)
			return -WFS_ENOSPC;
		if (!st->scratch ||
		    wfs_head_scratch_bytes(info) >
		    wfs_layer_scratch_bytes(info, m->max_ctx)) {
			/* A head-only stage, or a head needing more scratch. */
			st->scratch = stage_alloc(st,
						  wfs_head_scratch_bytes(info),
						  "head.scratch", 0);
			if (!st->scratch)
				return -WFS_ENOSPC;
		}
		WFS_MEMCPY(p, blob + info->head.offset, info->head.size);
		ret = wfs_head_bind(info, p, info->head.size, st->hview);
		if (ret)
			return ret;
		m->head_weight_bytes = info->head.size;
	}
	return 0;
}

static u64 max_slots_at(struct wfs_device *dev, u32 ctx_len)
{
	u64 kvb = wfs_kv_bytes(&dev->model.info, ctx_len), best = ~(u64)0;
	u32 s;

	for (s = 0; s < dev->model.map.stages_used; s++) {
		struct wfs_stage *st = &dev->stages[s];
		u64 per_slot = (u64)st->n_layers * kvb, gap, n;

		if (!st->n_layers)
			continue;
		gap = wfs_sram_largest_free(&st->sram);
		n = per_slot ? wfs_div64_u64(gap, per_slot) : 0;
		if (n < best)
			best = n;
	}
	return best == ~(u64)0 ? 0 : best;
}

static int cmd_load(struct wfs_device *dev, const struct wfw_cmd_load_model *p,
		    struct wfw_cpl *c)
{
	struct wfs_model_state *m = &dev->model;
	struct wfs_model_info *info = &m->info;
	struct wfs_map_input in;
	const u8 *blob;
	u64 min_kv, used = 0;
	u32 s, l, min_pos;
	int ret;

	if (p->flags & ~WFW_LOAD_FLAGS_ALL || !ZERO(p->reserved))
		return -WFS_EINVAL;
	if (p->layer_first || p->layer_count)
		return -WFS_EOPNOTSUPP;
	if (p->len < sizeof(struct wfs_blob_header))
		return -WFS_EINVAL;
	if (m->loaded)
		return -WFS_EBUSY;
	if (!dev->dma.map)
		return -WFS_EOPNOTSUPP;
	blob = dev->dma.map(dev->dma_ctx, p->addr, p->len);
	if (!blob)
		return -WFS_EFAULT;

	ret = wfs_model_parse(blob, p->len, info);
	if (ret) {
		wfs_log_printf(&dev->log, 1, "load: blob rejected by the validator (%d)",
			       ret);
		goto out;
	}
	if (info->input_kind != WFS_IO_TOKENS ||
	    info->output_kind != WFS_IO_TOKENS) {
		wfs_log_printf(&dev->log, 1, "load: layer-range blobs are not supported yet");
		ret = -WFS_EOPNOTSUPP;
		goto out;
	}
	if (info->n_layers > WFS_DEV_MAX_LAYERS) {
		ret = -WFS_E2BIG;
		goto out;
	}

	m->act_bytes = (u32)wfs_act_bytes(info);
	m->flit_bytes = dev->prof.chunk_tokens * WFS_MAX(m->act_bytes, 4u);
	m->max_ctx = info->seq_len ? info->seq_len : 1;
	m->kv_pos_bytes = wfs_kv_stride(info);
	m->dims.dim = info->dim;
	m->dims.kv_dim = info->kv_dim;
	m->dims.hidden_dim = info->hidden_dim;
	m->dims.vocab = info->vocab_size;
	m->dims.act_bytes = m->act_bytes;
	m->dims.kv_pos_bytes = m->kv_pos_bytes;

	/* What each placement item needs (see wfs_pipeline.h). */
	min_pos = WFS_MIN(m->max_ctx, (u32)WFS_MIN_KV_POSITIONS);
	min_kv = blk(wfs_kv_bytes(info, min_pos));
	for (l = 0; l < info->n_layers; l++) {
		struct wfs_section_range r;

		ret = wfs_model_layer_section(info, blob, l, &r);
		if (ret || !section_in_blob(&r, p->len)) {
			ret = -WFS_EINVAL;
			goto out;
		}
		dev->layer_need[l] = blk(r.size) + min_kv +
				     sizeof(struct wfs_layer_view);
	}
	in.n_layers = info->n_layers;
	in.n_stages = dev->prof.stages;
	in.capacity = dev->stages[0].sram.size;
	in.stage_fixed = (u64)dev->prof.fifo_depth * blk(m->flit_bytes) +
			 blk((u64)dev->prof.chunk_tokens * m->act_bytes) +
			 blk(wfs_layer_scratch_bytes(info, m->max_ctx)) +
			 2 * WFS_SRAM_ALIGN + blk(16ull * 64);
	in.embed_bytes = blk(info->embed.size) +
			 blk(sizeof(struct wfs_embed_view));
	in.head_bytes = blk(info->head.size) + blk(sizeof(struct wfs_head_view)) +
			blk(wfs_head_scratch_bytes(info)) +
			blk(WFS_TOPK_MAX * sizeof(struct wfs_topk_entry)) +
			blk(WFW_OUT_REC_SIZE(WFW_MAX_TOPK));
	in.layer_bytes = dev->layer_need;
	ret = wfs_pipeline_map(&in, &m->map);
	if (ret == -WFS_ENOSPC) {
		wfs_log_printf(&dev->log, 1,
			       "load: model does not fit: it needs %llu KiB of SRAM (weights, KV for 1 slot x %u positions, buffers); the default placement needs %llu KiB per stage, packed it needs %u stage(s)%s; the device has %u stages x %llu KiB",
			       (unsigned long long)(m->map.total_bytes >> 10),
			       min_pos,
			       (unsigned long long)(m->map.max_stage_bytes >> 10),
			       m->map.stages_needed,
			       m->map.stages_needed ? "" :
			       " (one layer alone exceeds a stage)",
			       dev->prof.stages,
			       (unsigned long long)(in.capacity >> 10));
		c->value = m->map.total_bytes;
		c->result0 = m->map.stages_needed;
		c->result1 = (u32)(in.capacity >> 10);
		c->result2 = (u32)WFS_MIN(m->map.max_stage_bytes >> 10,
					  (u64)0xffffffffu);
		goto out;
	}
	if (ret)
		goto out;

	for (s = 0; s < m->map.stages_used && !ret; s++)
		ret = load_stage(dev, blob, p->len, s);
	if (ret) {
		wfs_log_printf(&dev->log, 1, "load: stage %u failed (%d)", s - 1,
			       ret);
		goto out;
	}
	for (s = 0; s < m->map.stages_used; s++) {
		struct wfs_stage *st = &dev->stages[s];

		used += st->sram.used;
		wfs_log_printf(&dev->log, 0,
			       "load: stage %u: layers %u..%u%s%s, %llu KiB SRAM",
			       s, st->first_layer,
			       st->first_layer + st->n_layers - 1,
			       st->embed ? " +embed" : "",
			       st->head ? " +head" : "",
			       (unsigned long long)(st->sram.used >> 10));
	}
	m->sram_used = used;
	m->loaded = 1;
	c->result0 = m->map.stages_used;
	c->result1 = info->n_layers;
	c->result2 = (u32)WFS_MIN(max_slots_at(dev, m->max_ctx),
				  (u64)0xffffffffu);
	c->value = used;
	c->device_ns = wfs_timing_ns(&dev->prof,
				     wfs_timing_hop_cycles(&dev->prof, p->len));
	wfs_reg_set(dev, WFW_REG_STATUS,
		    wfs_reg_get(dev, WFW_REG_STATUS) | WFW_STATUS_MODEL);
	wfs_log_printf(&dev->log, 0,
		       "load: %u layers on %u stage(s)%s, dim %u, vocab %u, %llu KiB SRAM",
		       info->n_layers, m->map.stages_used,
		       m->map.greedy ? " (packed)" : "", info->dim,
		       info->vocab_size, (unsigned long long)(used >> 10));
out:
	if (ret)
		wfs_model_release(dev);
	if (dev->dma.unmap)
		dev->dma.unmap(dev->dma_ctx, blob, p->len);
	return ret;
}

static int cmd_unload(struct wfs_device *dev, const struct wfw_cmd *cmd)
{
	int ret = 0;

	if (!ZERO(cmd->raw))
		return -WFS_EINVAL;
	wfs_os_mutex_lock(dev->lock);
	if (!dev->model.loaded)
		ret = -WFS_ENOENT;
	else if (dev->n_ctxs || dev->jobs_active)
		ret = -WFS_EBUSY;
	else
		wfs_model_release(dev);
	wfs_os_mutex_unlock(dev->lock);
	if (!ret) {
		wfs_reg_set(dev, WFW_REG_STATUS,
			    wfs_reg_get(dev, WFW_REG_STATUS) &
			    ~WFW_STATUS_MODEL);
		wfs_log_printf(&dev->log, 0, "unload: model released");
	}
	return ret;
}

/* -------------------------------------------------------------- contexts -- */

#define CTX_IDX_BITS	12

static struct wfs_ctx *ctx_lookup(struct wfs_device *dev, u32 id)
{
	u32 idx = id & ((1u << CTX_IDX_BITS) - 1);
	struct wfs_ctx *c;

	if (idx >= dev->max_ctxs)
		return NULL;
	c = &dev->ctxs[idx];
	if (!c->in_use || (id >> CTX_IDX_BITS) != c->gen)
		return NULL;
	return c;
}

static void ctx_free_sram(struct wfs_device *dev, struct wfs_ctx *c)
{
	u32 s;

	for (s = 0; s < dev->prof.stages; s++) {
		wfs_sram_free(&dev->stages[s].sram, c->kv[s]);
		c->kv[s] = NULL;
	}
	if (c->slot)
		wfs_sram_free(&dev->stages[0].sram, c->slot);
	c->slot = NULL;
}

static int cmd_ctx_create(struct wfs_device *dev,
			  const struct wfw_cmd_context *p, struct wfw_cpl *c)
{
	struct wfs_model_state *m = &dev->model;
	struct wfs_ctx *ctx = NULL;
	u64 kvb, bytes, total = 0;
	u32 i, s;

	if (p->ctx_id || p->flags & ~WFW_CTX_FLAGS_ALL || !ZERO(p->reserved) ||
	    !p->slots || !p->ctx_len || p->slots > 65536)
		return -WFS_EINVAL;
	if (!m->loaded)
		return -WFS_ENOENT;
	if (p->ctx_len > m->max_ctx)
		return -WFS_E2BIG;
	for (i = 0; i < dev->max_ctxs; i++) {
		if (!dev->ctxs[i].in_use) {
			ctx = &dev->ctxs[i];
			break;
		}
	}
	if (!ctx)
		return -WFS_EMFILE;

	kvb = wfs_kv_bytes(&m->info, p->ctx_len);
	ctx->slot = stage_alloc(&dev->stages[0],
				(u64)p->slots * sizeof(*ctx->slot), "ctx%u.slots",
				i);
	if (!ctx->slot) {
		c->value = (u64)p->slots * sizeof(*ctx->slot);
		goto nospc;
	}
	for (s = 0; s < m->map.stages_used; s++) {
		struct wfs_stage *st = &dev->stages[s];

		if (!st->n_layers)
			continue;
		/* n_layers * slots * kvb: all factors < 2^32, kvb < 2^40. */
		bytes = (u64)st->n_layers * p->slots;
		if (WFS_MUL_OVF(bytes, kvb, &bytes)) {
			c->value = ~(u64)0;
			c->result0 = s;
			goto nospc;
		}
		ctx->kv[s] = stage_alloc(st, bytes, "ctx%u.kv", i);
		if (!ctx->kv[s]) {
			c->value = bytes;
			c->result0 = s;
			goto nospc;
		}
		total += bytes;
	}
	ctx->slots = p->slots;
	ctx->ctx_len = p->ctx_len;
	ctx->kv_bytes = kvb;
	ctx->kv_total = total;
	ctx->active_jobs = 0;
	wfs_os_mutex_lock(dev->lock);
	ctx->in_use = 1;
	dev->n_ctxs++;
	wfs_os_mutex_unlock(dev->lock);
	c->result0 = i | (ctx->gen << CTX_IDX_BITS);
	c->value = total;
	wfs_log_printf(&dev->log, 0, "context %u: %u slot(s) x %u positions, %llu KiB KV",
		       c->result0, p->slots, p->ctx_len,
		       (unsigned long long)(total >> 10));
	return 0;

nospc:
	ctx_free_sram(dev, ctx);
	wfs_log_printf(&dev->log, 1,
		       "context: %u slot(s) x %u positions do not fit: stage %u needs %llu KiB more",
		       p->slots, p->ctx_len, c->result0,
		       (unsigned long long)(c->value >> 10));
	return -WFS_ENOSPC;
}

static int cmd_ctx_destroy(struct wfs_device *dev,
			   const struct wfw_cmd_context *p)
{
	struct wfs_ctx *ctx;

	if (p->slots || p->ctx_len || p->flags || !ZERO(p->reserved))
		return -WFS_EINVAL;
	ctx = ctx_lookup(dev, p->ctx_id);
	if (!ctx)
		return -WFS_ENOENT;
	wfs_os_mutex_lock(dev->lock);
	while (ctx->active_jobs && !wfs_aborting(dev))
		wfs_os_cond_wait(dev->cond, dev->lock);
	if (wfs_aborting(dev)) {
		wfs_os_mutex_unlock(dev->lock);
		return CMD_DEFERRED;	/* dropped by the reset */
	}
	ctx->in_use = 0;
	ctx->gen = (ctx->gen + 1) & ((1u << (32 - CTX_IDX_BITS)) - 1);
	if (!ctx->gen)
		ctx->gen = 1;
	dev->n_ctxs--;
	wfs_os_mutex_unlock(dev->lock);
	ctx_free_sram(dev, ctx);
	return 0;
}

/* ------------------------------------------------------------------ jobs -- */

/* Read and check the job's tokens before anything runs. */
static int prescan_tokens(struct wfs_device *dev,
			  const struct wfw_cmd_run_job *p)
{
	u32 buf[64], done = 0, i, n;
	int ret;

	while (done < p->n_tokens) {
		n = WFS_MIN(p->n_tokens - done, (u32)WFS_ARRAY_SIZE(buf));
		ret = dev->dma.read(dev->dma_ctx, p->in_addr + 4ull * done, buf,
				    4ull * n);
		if (ret)
			return -WFS_EFAULT;
		for (i = 0; i < n; i++) {
			if (buf[i] >= dev->model.info.vocab_size)
				return -WFS_EINVAL;
		}
		done += n;
	}
	return 0;
}

static int cmd_run_job(struct wfs_device *dev, const struct wfw_cmd *cmd)
{
	const struct wfw_cmd_run_job *p = &cmd->job;
	u32 chunk = dev->prof.chunk_tokens, records, i, done;
	struct wfs_job *job = NULL;
	struct wfs_ctx *ctx;
	u64 need, end;
	int ret;

	if (!ZERO(p->reserved) || (p->flags & ~WFW_JOB_FLAGS_KNOWN))
		return -WFS_EINVAL;
	if (p->flags & ~WFW_JOB_FLAGS_SUPPORTED)
		return -WFS_EOPNOTSUPP;
	if (!dev->model.loaded)
		return -WFS_ENOENT;
	ctx = ctx_lookup(dev, p->ctx_id);
	if (!ctx)
		return -WFS_ENOENT;
	if (p->slot >= ctx->slots || !p->n_tokens || p->topk > WFW_MAX_TOPK)
		return -WFS_EINVAL;
	if ((u64)p->start_pos + p->n_tokens > ctx->ctx_len)
		return -WFS_ERANGE;
	records = (p->flags & WFW_JOB_ALL_POSITIONS) ? p->n_tokens : 1;
	need = (u64)records * WFW_OUT_REC_SIZE(p->topk);
	if (p->out_len < need || WFS_ADD_OVF(p->out_addr, need, &end) ||
	    WFS_ADD_OVF(p->in_addr, 4ull * p->n_tokens, &end))
		return -WFS_EINVAL;
	ret = prescan_tokens(dev, p);
	if (ret)
		return ret;

	/* A job slot (waits while the pipeline is full of jobs). */
	wfs_os_mutex_lock(dev->lock);
	while (dev->jobs_active >= dev->max_jobs && !wfs_aborting(dev))
		wfs_os_cond_wait(dev->cond, dev->lock);
	if (wfs_aborting(dev)) {
		wfs_os_mutex_unlock(dev->lock);
		return CMD_DEFERRED;
	}
	for (i = 0; i < dev->max_jobs; i++) {
		if (dev->jobs[i].state == WFS_JOB_FREE) {
			job = &dev->jobs[i];
			break;
		}
	}
	if (!job) {	/* cannot happen: jobs_active counts them */
		wfs_os_mutex_unlock(dev->lock);
		return -WFS_EIO;
	}
	WFS_MEMSET(job, 0, sizeof(*job));
	job->state = WFS_JOB_ACTIVE;
	job->cookie = cmd->cookie;
	job->args = *p;
	job->ctx = ctx;
	job->n_chunks = (p->n_tokens + chunk - 1) / chunk;
	job->host_t0 = wfs_os_now_ns();
	job->hang = dev->hang_armed;
	dev->hang_armed = 0;
	/* Modelled ready time: see "Timeline" in wfs_timing.h. */
	job->t_ready = ctx->slot[p->slot].pending ? 0 :
		       ctx->slot[p->slot].done_ns;
	if (!dev->jobs_active && dev->makespan_ns > job->t_ready)
		job->t_ready = dev->makespan_ns;
	ctx->slot[p->slot].pending++;
	ctx->active_jobs++;
	dev->jobs_active++;
	wfs_os_mutex_unlock(dev->lock);
	if (job->hang)
		wfs_log_printf(&dev->log, 1, "fault injection: job 0x%llx will hang",
			       (unsigned long long)job->cookie);

	/* Feed stage 0, chunk by chunk. */
	for (done = 0; done < p->n_tokens; done += chunk) {
		u32 n = WFS_MIN(chunk, p->n_tokens - done);
		struct wfs_flit *e = wfs_fifo_reserve(dev, &dev->stages[0].in);

		if (!e)
			return CMD_DEFERRED;	/* reset: the job is dropped */
		if (dev->dma.read(dev->dma_ctx, p->in_addr + 4ull * done, e->buf,
				  4ull * n)) {
			job->status = -WFS_EFAULT;
			WFS_MEMSET(e->buf, 0, 4ull * n);
		}
		e->job = (u32)(job - dev->jobs);
		e->pos0 = p->start_pos + done;
		e->n = n;
		e->last = done + n >= p->n_tokens;
		e->t_arrive = job->t_ready;
		wfs_fifo_publish(&dev->stages[0].in);
	}
	return CMD_DEFERRED;
}

/* ----------------------------------------------------------------- reset -- */

static int cmd_reset(struct wfs_device *dev, const struct wfw_cmd_reset *p,
		     struct wfw_cpl *c)
{
	u32 i, cancelled = 0;

	if (p->flags & ~WFW_RESET_FLAGS_ALL || !ZERO(p->reserved))
		return -WFS_EINVAL;

	wfs_os_mutex_lock(dev->lock);
	if (wfs_aborting(dev)) {
		wfs_os_mutex_unlock(dev->lock);
		return CMD_DEFERRED;
	}
	dev->cmd_reset = 1;
	wfs_os_store32(&dev->abort, 1);
	wfs_os_cond_broadcast(dev->cond);
	wfs_os_mutex_unlock(dev->lock);
	wfs_pipeline_wake_all(dev);

	wfs_os_mutex_lock(dev->lock);
	while (dev->n_parked < dev->prof.stages &&
	       !wfs_os_load32(&dev->stopping))
		wfs_os_cond_wait(dev->cond, dev->lock);
	dev->hang_armed = 0;
	wfs_os_mutex_unlock(dev->lock);
	wfs_pipeline_flush(dev);
	wfs_os_mutex_lock(dev->cpl_lock);
	dev->faults_armed = 0;
	wfs_os_mutex_unlock(dev->cpl_lock);

	/* Workers are parked: the job table is ours. */
	for (i = 0; i < dev->max_jobs; i++) {
		struct wfs_job *job = &dev->jobs[i];
		struct wfw_cpl jc;

		if (job->state != WFS_JOB_ACTIVE)
			continue;
		WFS_MEMSET(&jc, 0, sizeof(jc));
		jc.cookie = job->cookie;
		jc.status = -WFS_ECANCELED;
		jc.opcode = WFW_OP_RUN_JOB;
		jc.host_ns = wfs_os_now_ns() - job->host_t0;
		wfs_os_mutex_lock(dev->lock);
		if (job->ctx->slot[job->args.slot].pending)
			job->ctx->slot[job->args.slot].pending--;
		job->ctx->active_jobs--;
		dev->jobs_active--;
		job->state = WFS_JOB_FREE;
		wfs_os_mutex_unlock(dev->lock);
		wfs_post_cpl(dev, &jc, 1);
		cancelled++;
	}

	wfs_os_mutex_lock(dev->lock);
	dev->cmd_reset = 0;
	wfs_os_store32(&dev->abort, 0);
	wfs_os_cond_broadcast(dev->cond);
	wfs_os_mutex_unlock(dev->lock);
	wfs_log_printf(&dev->log, 1, "reset command: %u job(s) cancelled",
		       cancelled);
	c->result0 = cancelled;
	return 0;
}

static int cmd_fault(struct wfs_device *dev, const struct wfw_cmd_fault *p)
{
	if (!(dev->flags & WFS_DEV_FAULT_INJECT))
		return -WFS_EPERM;
	if (p->fault >= WFW_FAULT_COUNT || !ZERO(p->reserved))
		return -WFS_EINVAL;
	if (p->fault == WFW_FAULT_STALL_CP || p->fault == WFW_FAULT_NONE)
		wfs_os_store32(&dev->cp_stalled, p->fault == WFW_FAULT_STALL_CP);
	if (p->fault == WFW_FAULT_HANG_NEXT_JOB ||
	    p->fault == WFW_FAULT_NONE) {
		wfs_os_mutex_lock(dev->lock);
		dev->hang_armed = p->fault == WFW_FAULT_HANG_NEXT_JOB;
		wfs_os_mutex_unlock(dev->lock);
	}
	wfs_os_mutex_lock(dev->cpl_lock);
	if (p->fault == WFW_FAULT_NONE)
		dev->faults_armed = 0;
	else if (p->fault != WFW_FAULT_HANG_NEXT_JOB && p->fault != WFW_FAULT_STALL_CP)
		dev->faults_armed |= 1u << p->fault;
	wfs_os_mutex_unlock(dev->cpl_lock);
	wfs_log_printf(&dev->log, 1, "fault injection: armed fault %u", p->fault);
	return 0;
}

/* ------------------------------------------------------- info and stats -- */

static int cmd_info(struct wfs_device *dev, const struct wfw_cmd_buf *p,
		    struct wfw_cpl *c)
{
	struct wfs_model_state *m = &dev->model;
	struct wfw_info info;
	u64 free_min = ~(u64)0, busy = 0;
	u32 s, n;

	if (p->index || p->pos || !ZERO(p->reserved) || p->len < 8)
		return -WFS_EINVAL;
	WFS_MEMSET(&info, 0, sizeof(info));
	info.abi_version = WFW_ABI_VERSION;
	info.info_size = sizeof(info);
	info.fw_version = WFW_FW_VERSION;
	info.profile = dev->prof.id;
	copy_str(info.profile_name, sizeof(info.profile_name), dev->prof.name);
	info.num_stages = dev->prof.stages;
	info.fifo_depth = dev->prof.fifo_depth;
	info.sram_bytes = dev->stages[0].sram.size;
	info.clock_hz = dev->prof.clock_hz;
	info.macs_per_cycle = dev->prof.macs_per_cycle;
	info.sram_bytes_per_cycle = dev->prof.sram_bytes_per_cycle;
	info.fabric_bytes_per_cycle = dev->prof.fabric_bytes_per_cycle;
	info.hop_cycles = dev->prof.hop_cycles;
	info.chunk_tokens = dev->prof.chunk_tokens;
	info.max_topk = WFW_MAX_TOPK;
	info.max_jobs = dev->max_jobs;
	info.max_contexts = dev->max_ctxs;
	info.caps = WFW_CAP_ALL_POSITIONS | WFW_CAP_CMD_RESET;
	if (dev->flags & WFS_DEV_FAULT_INJECT)
		info.caps |= WFW_CAP_FAULT_INJECT;
	for (s = 0; s < dev->prof.stages; s++) {
		struct wfs_stage *st = &dev->stages[s];

		info.sram_used += st->sram.used;
		if (wfs_sram_free_bytes(&st->sram) < free_min)
			free_min = wfs_sram_free_bytes(&st->sram);
		wfs_os_mutex_lock(st->in.lock);
		if (st->cnt.modelled_busy_ns > busy)
			busy = st->cnt.modelled_busy_ns;
		wfs_os_mutex_unlock(st->in.lock);
	}
	info.sram_free_min = free_min;
	info.bottleneck_busy_ns = busy;
	if (m->loaded) {
		info.model_loaded = 1;
		info.dim = m->info.dim;
		info.hidden_dim = m->info.hidden_dim;
		info.n_layers = m->info.n_layers;
		info.n_heads = m->info.n_heads;
		info.n_kv_heads = m->info.n_kv_heads;
		info.vocab = m->info.vocab_size;
		info.max_ctx = m->max_ctx;
		info.stages_used = m->map.stages_used;
		info.max_slots_at_max_ctx =
			(u32)WFS_MIN(max_slots_at(dev, m->max_ctx),
				     (u64)0xffffffffu);
		info.kv_bytes_per_pos = (u64)m->kv_pos_bytes * m->info.n_layers;
	}
	wfs_os_mutex_lock(dev->lock);
	info.contexts = dev->n_ctxs;
	info.jobs_completed = dev->jobs_completed;
	info.tokens = dev->tokens;
	info.modelled_makespan_ns = dev->makespan_ns;
	wfs_os_mutex_unlock(dev->lock);
	info.modelled_tokens_per_s = wfs_timing_rate(info.tokens,
						     info.modelled_makespan_ns);

	n = WFS_MIN(p->len, (u32)sizeof(info));
	if (dev->dma.write(dev->dma_ctx, p->addr, &info, n))
		return -WFS_EFAULT;
	c->result0 = n;
	return 0;
}

static int cmd_stats(struct wfs_device *dev, const struct wfw_cmd_buf *p,
		     struct wfw_cpl *c)
{
	u32 s, n = 0, sz = sizeof(struct wfw_stage_stats);

	if (p->pos || !ZERO(p->reserved) || p->index >= dev->prof.stages ||
	    p->len < sz)
		return -WFS_EINVAL;
	for (s = p->index; s < dev->prof.stages && (n + 1) * sz <= p->len;
	     s++, n++) {
		struct wfs_stage *st = &dev->stages[s];
		struct wfw_stage_stats ss;

		WFS_MEMSET(&ss, 0, sizeof(ss));
		ss.stage = s;
		ss.flags = (st->embed ? WFW_STAGE_EMBED : 0) |
			   (st->head ? WFW_STAGE_HEAD : 0);
		ss.first_layer = st->first_layer;
		ss.n_layers = st->n_layers;
		ss.sram_size = st->sram.size;
		ss.sram_used = st->sram.used;
		ss.sram_peak = st->sram.peak;
		ss.sram_blocks = st->sram.n_blocks;
		wfs_os_mutex_lock(st->in.lock);
		ss.fifo_hw = st->in.hw;
		ss.chunks = st->cnt.chunks;
		ss.tokens = st->cnt.tokens;
		ss.jobs = st->cnt.jobs;
		ss.host_busy_ns = st->cnt.host_busy_ns;
		ss.modelled_busy_ns = st->cnt.modelled_busy_ns;
		wfs_os_mutex_unlock(st->in.lock);
		if (dev->dma.write(dev->dma_ctx, p->addr + (u64)n * sz, &ss, sz))
			return -WFS_EFAULT;
	}
	c->result0 = n;
	c->result1 = dev->prof.stages;
	return 0;
}

static int cmd_sram_map(struct wfs_device *dev, const struct wfw_cmd_buf *p,
			struct wfw_cpl *c)
{
	u32 i, n = 0, sz = sizeof(struct wfw_sram_entry);
	struct wfs_sram *sr;

	if (p->pos || !ZERO(p->reserved) || p->index >= dev->prof.stages)
		return -WFS_EINVAL;
	sr = &dev->stages[p->index].sram;
	for (i = 0; i < sr->n_blocks && (n + 1) * sz <= p->len; i++, n++) {
		struct wfw_sram_entry e;

		WFS_MEMSET(&e, 0, sizeof(e));
		e.offset = sr->blocks[i].off;
		e.size = sr->blocks[i].size;
		e.requested = sr->blocks[i].req;
		copy_str(e.name, sizeof(e.name), sr->blocks[i].name);
		if (dev->dma.write(dev->dma_ctx, p->addr + (u64)n * sz, &e, sz))
			return -WFS_EFAULT;
	}
	c->result0 = n;
	c->result1 = sr->n_blocks;
	c->value = sr->used;
	return 0;
}

static int cmd_read_log(struct wfs_device *dev, const struct wfw_cmd_buf *p,
			struct wfw_cpl *c)
{
	char buf[256];
	u64 pos = p->pos, next = pos, skipped = 0, sk;
	u32 done = 0, n;

	if (p->index || !ZERO(p->reserved))
		return -WFS_EINVAL;
	while (done < p->len) {
		n = wfs_log_read(&dev->log, pos, buf,
				 WFS_MIN(p->len - done, (u32)sizeof(buf)),
				 &next, &sk);
		skipped += sk;
		if (!n)
			break;
		if (dev->dma.write(dev->dma_ctx, p->addr + done, buf, n))
			return -WFS_EFAULT;
		done += n;
		pos = next;
	}
	c->result0 = done;
	c->result1 = (u32)WFS_MIN(skipped, (u64)0xffffffffu);
	c->value = next;
	return 0;
}

/* ------------------------------------------------------------- dispatch -- */

/**
 * wfs_cmd_execute() - validate and run one fetched command
 * @dev: device
 * @cmd: the command (a private copy)
 *
 * Posts the completion, unless RUN_JOB handed it to the pipeline or a
 * reset dropped the command.  CP thread only.
 */
void wfs_cmd_execute(struct wfs_device *dev, const struct wfw_cmd *cmd)
{
	u64 t0 = wfs_os_now_ns();
	struct wfw_cpl c;
	int ret;

	WFS_MEMSET(&c, 0, sizeof(c));
	c.cookie = cmd->cookie;
	c.opcode = cmd->opcode;
	if (cmd->flags || cmd->reserved0) {
		ret = -WFS_EINVAL;
		goto done;
	}
	switch (cmd->opcode) {
	case WFW_OP_NOP:
		ret = ZERO(cmd->raw) ? 0 : -WFS_EINVAL;
		break;
	case WFW_OP_GET_INFO:
		ret = cmd_info(dev, &cmd->buf, &c);
		break;
	case WFW_OP_LOAD_MODEL:
		ret = cmd_load(dev, &cmd->load, &c);
		break;
	case WFW_OP_UNLOAD_MODEL:
		ret = cmd_unload(dev, cmd);
		break;
	case WFW_OP_CREATE_CONTEXT:
		ret = cmd_ctx_create(dev, &cmd->ctx, &c);
		break;
	case WFW_OP_DESTROY_CONTEXT:
		ret = cmd_ctx_destroy(dev, &cmd->ctx);
		break;
	case WFW_OP_RUN_JOB:
		ret = cmd_run_job(dev, cmd);
		break;
	case WFW_OP_RESET:
		ret = cmd_reset(dev, &cmd->reset, &c);
		break;
	case WFW_OP_FAULT_INJECT:
		ret = cmd_fault(dev, &cmd->fault);
		break;
	case WFW_OP_GET_STATS:
		ret = cmd_stats(dev, &cmd->buf, &c);
		break;
	case WFW_OP_GET_SRAM_MAP:
		ret = cmd_sram_map(dev, &cmd->buf, &c);
		break;
	case WFW_OP_READ_LOG:
		ret = cmd_read_log(dev, &cmd->buf, &c);
		break;
	default:
		ret = -WFS_EOPNOTSUPP;
		break;
	}
	if (ret == CMD_DEFERRED)
		return;
done:
	c.status = ret;
	c.host_ns = wfs_os_now_ns() - t0;
	wfs_post_cpl(dev, &c, 0);
}

/* ------------------------------------------------------------ CP thread -- */

/* Fetch and run commands until the ring is empty or something blocks. */
static void cp_process(struct wfs_device *dev)
{
	struct wfw_cmd cmd;
	u32 n, tail, size;
	u64 base;

	for (n = 0; n < 256; n++) {
		u32 st = wfs_reg_get(dev, WFW_REG_STATUS);

		if (wfs_aborting(dev) || !(st & WFW_STATUS_ENABLED) ||
		    (st & WFW_STATUS_FAULT))
			return;
		wfs_os_mutex_lock(dev->cpl_lock);
		base = dev->cmd_base;
		size = dev->cmd_size;
		wfs_os_mutex_unlock(dev->cpl_lock);
		tail = wfs_reg_get(dev, WFW_REG_CMD_TAIL);
		if (!wfs_ring_indices_valid(dev->cmd_head, tail, size)) {
			wfs_set_fault(dev, WFW_FAULT_CMD_TAIL);
			return;
		}
		if (wfs_ring_empty(dev->cmd_head, tail))
			return;
		if (wfs_cpl_reserve(dev))
			return;
		if (dev->dma.read(dev->dma_ctx,
				  wfs_ring_entry_addr(base, dev->cmd_head, size,
						      sizeof(cmd)),
				  &cmd, sizeof(cmd))) {
			wfs_cpl_unreserve(dev);
			wfs_set_fault(dev, WFW_FAULT_CMD_DMA);
			return;
		}
		dev->cmd_head++;
		wfs_reg_set(dev, WFW_REG_CMD_HEAD, dev->cmd_head);
		wfs_cmd_execute(dev, &cmd);
	}
	/* Budget used up: come back without waiting. */
	wfs_os_event_signal(dev->kick);
}

/**
 * wfs_cp_thread() - body of the command processor thread
 * @arg: the struct wfs_device
 */
void wfs_cp_thread(void *arg)
{
	struct wfs_device *dev = arg;

	while (!wfs_os_load32(&dev->stopping)) {
		if (wfs_os_load32(&dev->abort)) {
			wfs_park(dev, &dev->cp_parked, 1);
			continue;
		}
		if (wfs_os_load32(&dev->cp_stalled)) {
			wfs_os_event_wait(dev->kick, WFS_CP_IDLE_NS);
			continue;
		}
		wfs_reg_set(dev, WFW_REG_HEARTBEAT,
			    wfs_reg_get(dev, WFW_REG_HEARTBEAT) + 1);
		if (wfs_os_load32(&dev->irq_kick))
			wfs_raise_irq(dev, 0);
		cp_process(dev);
		if (!wfs_aborting(dev))
			wfs_os_event_wait(dev->kick, WFS_CP_IDLE_NS);
	}
}
