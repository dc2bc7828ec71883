// SPDX-License-Identifier: MIT
/*
 * wfs_info.c - the reporting commands (see wfs_info.h).
 */
#include "wfs_device_priv.h"
#include "wfs_part.h"

/* Bytes READ_LOG copies per DMA write. */
#define LOG_CHUNK	256

static void copy_str(char *dst, u32 size, const char *src)
{
	u32 i;

	for (i = 0; i + 1 < size && src[i]; i++)
		dst[i] = src[i];
	dst[i] = '\0';
}

static u32 clamp32(u64 v)
{
	return (u32)WFS_MIN(v, (u64)0xffffffffu);
}

/* The model @id names (0: the lowest-index one, or NULL without a model). */
static int info_model_of(struct wfs_device *dev, u32 id,
			 struct wfs_model_state **m)
{
	int err;

	*m = wfs_model_lookup(dev, id, 1, &err);
	return !*m && id ? err : 0;
}

/* GET_INFO's model 0 with an index: the @n-th loaded model, or NULL. */
static struct wfs_model_state *nth_model(struct wfs_device *dev, u32 n)
{
	u32 i;

	for (i = 0; i < WFS_MAX_MODELS; i++) {
		if (dev->models.m[i].loaded && !n--)
			return &dev->models.m[i];
	}
	return NULL;
}

static void info_shape(struct wfs_device *dev, struct wfw_info *info)
{
	const struct wfs_profile *prof = &dev->hw.prof;

	info->abi_version = WFW_ABI_VERSION;
	info->info_size = sizeof(*info);
	info->fw_version = WFW_FW_VERSION;
	info->profile = prof->id;
	copy_str(info->profile_name, sizeof(info->profile_name), prof->name);
	info->num_stages = prof->stages;
	info->fifo_depth = prof->fifo_depth;
	info->sram_bytes = dev->stages[0].sram.size;
	info->clock_hz = prof->clock_hz;
	info->macs_per_cycle = prof->macs_per_cycle;
	info->sram_bytes_per_cycle = prof->sram_bytes_per_cycle;
	info->fabric_bytes_per_cycle = prof->fabric_bytes_per_cycle;
	info->hop_cycles = prof->hop_cycles;
	info->link_bytes_per_cycle = prof->link_bytes_per_cycle;
	info->link_hop_cycles = prof->link_hop_cycles;
	info->stream_bytes_per_cycle = prof->stream_bytes_per_cycle;
	info->stream_latency_cycles = prof->stream_latency_cycles;
	info->chunk_tokens = prof->chunk_tokens;
	info->max_topk = WFW_MAX_TOPK;
	info->max_jobs = dev->job.max;
	info->max_contexts = dev->ctx.max;
	info->caps = WFW_CAP_ALL_POSITIONS;
	if (dev->hw.flags & WFS_DEV_FAULT_INJECT)
		info->caps |= WFW_CAP_FAULT_INJECT;
}

static void info_sram(struct wfs_device *dev, struct wfw_info *info)
{
	u64 free_min = ~(u64)0, busy = 0;
	u32 s;

	for (s = 0; s < dev->hw.prof.stages; s++) {
		struct wfs_stage *st = &dev->stages[s];
		struct wfs_sram_stats ss;

		wfs_sram_stats(&st->sram, &ss);
		info->sram_used += ss.used;
		if (st->sram.size - ss.used < free_min)
			free_min = st->sram.size - ss.used;
		wfs_os_mutex_lock(st->in.lock);
		if (st->cnt.modelled_busy_ns > busy)
			busy = st->cnt.modelled_busy_ns;
		info->stream_passes += st->cnt.stream_passes;
		wfs_os_mutex_unlock(st->in.lock);
	}
	info->sram_free_min = free_min;
	info->bottleneck_busy_ns = busy;
}

/* 1000 * the busiest routed expert's tokens / the mean, of one layer. */
static u64 layer_imbalance(struct wfs_stage *st, const u64 *cnt, u32 n)
{
	u64 max = 0, sum = 0;
	u32 x;

	wfs_os_mutex_lock(st->in.lock);
	for (x = 0; x < n; x++) {
		sum += cnt[1 + x];
		max = WFS_MAX(max, cnt[1 + x]);
	}
	wfs_os_mutex_unlock(st->in.lock);
	return sum ? wfs_div64_u64(max * n * 1000, sum) : 0;
}

static void info_moe(struct wfs_device *dev, const struct wfs_model_state *m,
		     struct wfw_info *info)
{
	u64 worst = 0;
	u32 s, l;

	/* An expert shard counts nothing: its home counts the routing. */
	if (m->part == WFW_PART_XSHARD)
		return;
	info->moe_layers = m->moe_layers;
	for (s = 0; s < m->map.stages_used; s++) {
		struct wfs_stage *st = &dev->stages[s];
		const struct wfs_stage_model *sm = &st->mdl[m->idx];
		const u64 *cnt = sm->expert_cnt;

		for (l = 0; l < sm->n_layers; l++) {
			u32 n = sm->lviews[l].n_experts;

			if (!n)
				continue;
			worst = WFS_MAX(worst, layer_imbalance(st, cnt, n));
			cnt += 1 + n;
		}
	}
	info->moe_imbalance_milli = clamp32(worst);
}

static void info_model(struct wfs_device *dev, const struct wfs_model_state *m,
		       struct wfw_info *info)
{
	info->models = dev->models.n;
	if (!m)
		return;
	info->model_loaded = 1;
	info->model_id = m->id;
	info->dim = m->info.dim;
	info->hidden_dim = m->info.hidden_dim;
	info->n_layers = m->n_layers;
	info->layer_first = m->info.first_layer + m->range_first;
	info->total_layers = m->info.total_layers;
	info->act_rec_size = m->act_bytes;
	info->model_flags = (m->embed ? WFW_MODEL_EMBED : 0) |
			    (m->head ? WFW_MODEL_HEAD : 0) |
			    (m->stream ? WFW_MODEL_STREAM : 0) |
			    (m->part == WFW_PART_ATTN ? WFW_MODEL_ATTN : 0) |
			    (m->part == WFW_PART_FFN ? WFW_MODEL_FFN : 0) |
			    (m->part == WFW_PART_XHOME ? WFW_MODEL_XHOME : 0) |
			    (m->part == WFW_PART_XSHARD ? WFW_MODEL_XSHARD : 0);
	info->n_heads = m->info.n_heads;
	info->n_kv_heads = m->info.n_kv_heads;
	info->vocab = m->info.vocab_size;
	info->max_ctx = m->max_ctx;
	info->stages_used = m->map.stages_used;
	info->max_slots_at_max_ctx = clamp32(wfs_load_max_slots(dev, m,
								m->max_ctx));
	info->kv_bytes_per_pos = !wfs_part_has_kv(m->part) ? 0 :
				 (u64)m->kv_pos_bytes * m->n_layers;
	info_moe(dev, m, info);
}

int wfs_info_get(struct wfs_device *dev, const struct wfw_cmd *cmd,
		 struct wfw_cpl *c)
{
	const struct wfw_cmd_buf *p = &cmd->buf;
	struct wfs_model_state *m;
	struct wfw_info info;
	u32 n;
	int ret = info_model_of(dev, cmd->model, &m);

	if (ret)
		return ret;
	if (p->index)
		m = nth_model(dev, p->index);
	WFS_MEMSET(&info, 0, sizeof(info));
	info_shape(dev, &info);
	info_sram(dev, &info);
	info_model(dev, m, &info);
	c->model = info.model_id;
	wfs_os_mutex_lock(dev->sync.lock);
	info.contexts = dev->ctx.n;
	info.jobs_completed = dev->job.completed;
	info.tokens = dev->job.tokens;
	info.modelled_makespan_ns = dev->job.makespan_ns;
	wfs_os_mutex_unlock(dev->sync.lock);
	info.modelled_tokens_per_s = wfs_timing_rate(info.tokens,
						     info.modelled_makespan_ns);

	n = WFS_MIN(p->len, (u32)sizeof(info));
	if (dev->hw.dma.write(dev->hw.dma_ctx, p->addr, &info, n))
		return -WFS_EFAULT;
	c->result0 = n;
	return 0;
}

/* A stage's counters (every model's), and @m's layers on it. */
static void stage_stats(struct wfs_stage *st, const struct wfs_model_state *m,
			struct wfw_stage_stats *ss)
{
	const struct wfs_stage_model *sm = m ? &st->mdl[m->idx] : NULL;
	struct wfs_sram_stats as;

	WFS_MEMSET(ss, 0, sizeof(*ss));
	ss->stage = st->idx;
	if (sm) {
		ss->flags = (sm->embed ? WFW_STAGE_EMBED : 0) |
			    (sm->head ? WFW_STAGE_HEAD : 0);
		ss->first_layer = sm->n_layers ? m->info.first_layer +
						 sm->first_layer : 0;
		ss->n_layers = sm->n_layers;
	}
	wfs_sram_stats(&st->sram, &as);
	ss->sram_size = st->sram.size;
	ss->sram_used = as.used;
	ss->sram_peak = as.peak;
	ss->sram_blocks = as.n_blocks;
	wfs_os_mutex_lock(st->in.lock);
	ss->fifo_hw = st->in.hw;
	ss->chunks = st->cnt.chunks;
	ss->tokens = st->cnt.tokens;
	ss->jobs = st->cnt.jobs;
	ss->host_busy_ns = st->cnt.host_busy_ns;
	ss->modelled_busy_ns = st->cnt.modelled_busy_ns;
	wfs_os_mutex_unlock(st->in.lock);
}

int wfs_info_stats(struct wfs_device *dev, const struct wfw_cmd *cmd,
		   struct wfw_cpl *c)
{
	const struct wfw_cmd_buf *p = &cmd->buf;
	u32 s, n = 0, sz = sizeof(struct wfw_stage_stats);
	struct wfw_stage_stats ss;
	struct wfs_model_state *m;
	int ret = info_model_of(dev, cmd->model, &m);

	if (ret)
		return ret;
	for (s = p->index; s < dev->hw.prof.stages && (n + 1) * sz <= p->len;
	     s++, n++) {
		stage_stats(&dev->stages[s], m, &ss);
		if (dev->hw.dma.write(dev->hw.dma_ctx, p->addr + (u64)n * sz,
				      &ss, sz))
			return -WFS_EFAULT;
	}
	c->result0 = n;
	c->result1 = dev->hw.prof.stages;
	return 0;
}

int wfs_info_sram_map(struct wfs_device *dev, const struct wfw_cmd *cmd,
		      struct wfw_cpl *c)
{
	const struct wfw_cmd_buf *p = &cmd->buf;
	u32 i, n = 0, sz = sizeof(struct wfw_sram_entry), owner = 0, blocks;
	struct wfs_sram *sr = &dev->stages[p->index].sram;
	struct wfs_model_state *m = NULL;
	struct wfs_sram_block b;
	struct wfs_sram_stats as;
	int ret = 0;

	if (cmd->model)
		ret = info_model_of(dev, cmd->model, &m);
	if (ret)
		return ret;
	if (m)
		owner = m->idx + 1;
	/* Record by record: a load worker may place blocks meanwhile. */
	for (i = 0; (n + 1) * sz <= p->len && !wfs_sram_block_at(sr, i, &b);
	     i++) {
		struct wfw_sram_entry e;

		if (owner && b.owner != owner)
			continue;
		WFS_MEMSET(&e, 0, sizeof(e));
		e.offset = b.off;
		e.size = b.size;
		e.requested = b.req;
		copy_str(e.name, sizeof(e.name), b.name);
		if (dev->hw.dma.write(dev->hw.dma_ctx, p->addr + (u64)n * sz,
				      &e, sz))
			return -WFS_EFAULT;
		n++;
	}
	wfs_sram_stats(sr, &as);
	c->result0 = n;
	c->result1 = as.n_blocks;
	c->value = as.used;
	if (owner) {
		c->value = wfs_sram_owner_bytes(sr, owner, &blocks);
		c->result1 = blocks;
		c->model = m->id;
	}
	return 0;
}

/**
 * struct expert_walk - GET_EXPERT_LOAD's progress over the entries
 * @dev: the device
 * @p: the command's payload
 * @total: entries passed so far
 * @written: entries written to the host
 */
struct expert_walk {
	struct wfs_device *dev;
	const struct wfw_cmd_buf *p;
	u32 total;
	u32 written;
};

/* Write entry @e if it is at or past the first wanted and fits. */
static int expert_put(struct expert_walk *w, const struct wfw_expert_load *e)
{
	u32 sz = sizeof(*e);
	struct wfs_hw *hw = &w->dev->hw;

	if (w->total++ < w->p->index || (w->written + 1) * sz > w->p->len)
		return 0;
	if (hw->dma.write(hw->dma_ctx, w->p->addr + (u64)w->written * sz, e, sz))
		return -WFS_EFAULT;
	w->written++;
	return 0;
}

/* One MoE layer's entries: its shared experts, then its routed ones. */
static int expert_layer(struct expert_walk *w, struct wfs_stage *st,
			const struct wfs_layer_view *v, u32 layer,
			const u64 *cnt)
{
	struct wfw_expert_load e;
	u32 x;
	int ret = 0;

	for (x = 0; x < v->n_shared + v->n_experts && !ret; x++) {
		WFS_MEMSET(&e, 0, sizeof(e));
		e.layer = layer;
		e.top_k = v->n_active;
		e.flags = x < v->n_shared ? WFW_EXPERT_SHARED : 0;
		e.expert = x < v->n_shared ? x : x - v->n_shared;
		/* Expert parallelism's parts (per 0, no base) are not groups. */
		if (v->xmap && v->xmap->per && v->xmap->g[0].base &&
		    x >= v->n_shared)
			e.flags = WFW_EXPERT_GROUP |
				  v->xmap->g[e.expert / v->xmap->per].stage <<
				  WFW_EXPERT_STAGE_SHIFT;
		wfs_os_mutex_lock(st->in.lock);
		e.tokens = cnt[x < v->n_shared ? 0 : 1 + e.expert];
		wfs_os_mutex_unlock(st->in.lock);
		ret = expert_put(w, &e);
	}
	return ret;
}

int wfs_info_expert_load(struct wfs_device *dev, const struct wfw_cmd *cmd,
			 struct wfw_cpl *c)
{
	struct expert_walk w = { dev, &cmd->buf, 0, 0 };
	struct wfs_model_state *m;
	u32 s, l;
	int ret = info_model_of(dev, cmd->model, &m);

	/* An expert shard has no entries: its home counts the routing. */
	if (m && m->part == WFW_PART_XSHARD)
		m = NULL;
	for (s = 0; m && s < m->map.stages_used && !ret; s++) {
		struct wfs_stage *st = &dev->stages[s];
		const struct wfs_stage_model *sm = &st->mdl[m->idx];
		const u64 *cnt = sm->expert_cnt;

		for (l = 0; l < sm->n_layers && !ret; l++) {
			const struct wfs_layer_view *v = &sm->lviews[l];

			if (!v->n_experts)
				continue;
			ret = expert_layer(&w, st, v, m->info.first_layer +
					   sm->first_layer + l, cnt);
			cnt += 1 + v->n_experts;
		}
	}
	if (ret)
		return ret;
	c->result0 = w.written;
	c->result1 = w.total;
	c->result2 = m ? m->moe_layers : 0;
	return 0;
}

int wfs_info_read_log(struct wfs_device *dev, const struct wfw_cmd_buf *p,
		      struct wfw_cpl *c)
{
	char buf[LOG_CHUNK];
	u64 pos = p->pos, next = pos, skipped = 0, sk;
	u32 done = 0, n;

	while (done < p->len) {
		n = wfs_log_read(&dev->hw.log, pos, buf,
				 WFS_MIN(p->len - done, (u32)sizeof(buf)),
				 &next, &sk);
		skipped += sk;
		if (!n)
			break;
		if (dev->hw.dma.write(dev->hw.dma_ctx, p->addr + done, buf, n))
			return -WFS_EFAULT;
		done += n;
		pos = next;
	}
	c->result0 = done;
	c->result1 = clamp32(skipped);
	c->value = next;
	return 0;
}
