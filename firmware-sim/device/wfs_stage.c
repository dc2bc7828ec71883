// SPDX-License-Identifier: MIT
/*
 * wfs_stage.c - a stage's work on a chunk (see wfs_stage.h).
 */
#include "wfs_device_priv.h"
#include "wfs_moe.h"
#include "wfs_moe_ep.h"
#include "wfs_xplace.h"

/* The ABI's activation record is the stages' own (wfs_forward.h). */
WFS_STATIC_ASSERT(sizeof(struct wfs_act_hdr) == sizeof(struct wfw_act_rec),
		  "activation record header");
WFS_STATIC_ASSERT(WFS_ACT_EXP_LIMIT == WFW_ACT_EXP_MAX, "activation exponent");

/**
 * struct chunk_run - one chunk on one stage
 * @f: the FIFO entry (a copy: the entry is popped early)
 * @job: its job
 * @act: bytes of an activation record
 * @n_out: output records the head writes for it
 * @ns: modelled stage time
 * @start: modelled time the stage starts it
 * @end: modelled time the stage finishes it
 * @hop: modelled time to the next stage
 * @pass_cycles: weight streaming: the stage's layers as a pass's first
 *	chunk takes them (reads overlapped with compute, wfs_timing.h)
 * @comp_cycles: weight streaming: the layers' compute alone (a chunk
 *	that shares a pass)
 * @pass_first: the chunk began a streaming pass
 * @xhop_cycles: dispatch and combine hops to expert groups on other stages
 *	(wfs_xplace.h)
 * @ep_cost: an expert-parallel phase's work (wfs_moe_ep.h)
 * @m: the job's model
 * @sm: the stage's share of it
 */
struct chunk_run {
	struct wfs_flit f;
	struct wfs_job *job;
	const struct wfs_model_state *m;
	struct wfs_stage_model *sm;
	u32 act;
	u32 n_out;
	u64 ns;
	u64 start;
	u64 end;
	u64 hop;
	u64 pass_cycles;
	u64 comp_cycles;
	u32 pass_first;
	u64 xhop_cycles;
	struct wfs_cost ep_cost;
};

static u8 *work_rec(const struct chunk_run *r, u32 i)
{
	return r->sm->work + (u64)i * r->act;
}

/*
 * What the job does here: embed its tokens (stage 0 of a range with the
 * embedding, and no IN_ACT: a part job of another layer takes records),
 * run the head (the last stage of a range with it, no OUT_ACT), or give
 * activation records over the link (the last stage, OUT_ACT).
 */
static int job_embeds(const struct chunk_run *r)
{
	return r->sm->embed && !(r->job->args.flags & WFW_JOB_IN_ACT);
}

static int job_heads(const struct chunk_run *r)
{
	return r->sm->head && !(r->job->args.flags & WFW_JOB_OUT_ACT);
}

static int job_links(const struct chunk_run *r)
{
	return r->sm->last && (r->job->args.flags & WFW_JOB_OUT_ACT);
}

/* A part job (WFW_JOB_LAYER): 1 with *@l its layer if this stage has it. */
static int part_layer(const struct chunk_run *r, u32 *l)
{
	u32 layer = r->job->layer & WFW_JOB_LAYER_MASK;

	if (layer < r->sm->first_layer ||
	    layer - r->sm->first_layer >= r->sm->n_layers)
		return 0;
	*l = layer - r->sm->first_layer;
	return 1;
}

/* A record from another device: the header and values stages produce. */
static int act_rec_ok(const struct wfs_model_state *m, const u8 *p)
{
	struct wfw_act_rec h;
	const s32 *x = (const s32 *)(p + sizeof(h));
	u32 i;

	WFS_MEMCPY(&h, p, sizeof(h));
	if (h.dim != m->info.dim || h.exp > WFW_ACT_EXP_MAX ||
	    h.exp < -WFW_ACT_EXP_MAX)
		return 0;
	for (i = 0; i < h.dim; i++) {
		if (x[i] > WFW_ACT_VALUE_MAX || x[i] < -WFW_ACT_VALUE_MAX)
			return 0;
	}
	return 1;
}

/* Embed the tokens (stage 0) or take the activations; frees the entry. */
static void chunk_input(struct wfs_stage *st, struct chunk_run *r)
{
	struct wfs_job *job = r->job;
	u32 i;

	if (job_embeds(r)) {
		const u32 *tok = (const u32 *)r->f.buf;

		for (i = 0; i < r->f.n && !job->status; i++) {
			if (wfs_embed(r->sm->eview, tok[i], work_rec(r, i)))
				job->status = -WFS_EINVAL;
		}
	} else {
		WFS_MEMCPY(r->sm->work, r->f.buf, (u64)r->f.n * r->act);
		/* Stage 0 without an embedding: records from the host. */
		for (i = 0; st->idx == 0 && i < r->f.n && !job->status; i++) {
			if (!act_rec_ok(r->m, work_rec(r, i)))
				job->status = -WFS_EINVAL;
		}
	}
	wfs_fifo_pop(&st->in);
}

/* Count a token's @n selected @experts in its MoE layer's entries @cnt. */
static void count_sel(struct wfs_stage *st, u32 n, const u32 *experts,
		      u64 *cnt)
{
	u32 i;

	wfs_os_mutex_lock(st->in.lock);
	cnt[0]++;
	for (i = 0; i < n; i++)
		cnt[1 + experts[i]]++;
	wfs_os_mutex_unlock(st->in.lock);
}

/* Count the experts a token ran in an MoE layer (@cnt: its entries). */
static void count_experts(struct wfs_stage *st, const struct chunk_run *r,
			  const struct wfs_layer_view *v, u32 pos, u64 *cnt)
{
	const struct wfs_moe_sel *sel = wfs_layer_moe_sel(v, pos,
							  r->sm->scratch);

	count_sel(st, sel->n, sel->expert, cnt);
}

static int wants_output(const struct wfs_job *job, u32 last_chunk, u32 i,
			u32 n)
{
	if (job->args.flags & WFW_JOB_ALL_POSITIONS)
		return 1;
	return last_chunk && i == n - 1;
}

static u64 qmat_bytes(const struct wfs_qmat *w)
{
	return (u64)w->rows * (w->row_bytes + 2ULL * w->n_groups);
}

/* An MoE layer's shape for wfs_timing_moe_layer_cost(), from its experts. */
static void moe_shape(const struct wfs_layer_view *v, struct wfs_timing_moe *t)
{
	u32 x, n = v->n_shared + v->n_experts;
	struct wfs_qmat w1, w2, w3;
	u64 eb = 0;

	for (x = 0; x < n; x++) {
		wfs_layer_expert(v, x, &w1, &w2, &w3);
		eb += qmat_bytes(&w1) + qmat_bytes(&w2) + qmat_bytes(&w3);
	}
	t->n_experts = v->n_experts;
	t->n_active = v->n_active;
	t->n_shared = v->n_shared;
	t->expert_hidden = v->hidden / n;
	t->expert_bytes = eb / n;
	t->attn_bytes = v->weight_bytes > eb ? v->weight_bytes - eb : 0;
	t->attn_macs = 0;	/* grouped-query attention's */
}

static void layer_timing(const struct wfs_profile *prof,
			 const struct wfs_model_state *m,
			 const struct wfs_layer_view *v, const struct chunk_run *r,
			 struct wfs_cost *cost)
{
	struct wfs_timing_dims dims = m->dims;
	struct wfs_timing_moe t;

	/* The stage's cores serve its layers (not a streaming window's). */
	dims.stage_layers = m->stream ? 0 : r->sm->n_layers;
	if (wfs_part_is_ep(m->part)) {
		cost->macs += r->ep_cost.macs;
		cost->bytes += r->ep_cost.bytes;
		cost->latency += r->ep_cost.latency;
		return;
	}
	if (m->part == WFW_PART_ATTN) {
		wfs_timing_attn_cost(prof, &dims, v->weight_bytes, r->f.pos0,
				     r->f.n, cost);
		return;
	}
	if (!v->n_experts && m->part == WFW_PART_FFN) {
		wfs_timing_ffn_cost(prof, &dims, v->weight_bytes, r->f.n, cost);
		return;
	}
	if (!v->n_experts) {
		wfs_timing_layer_cost(prof, &dims, v->weight_bytes,
				      r->f.pos0, r->f.n, cost);
		return;
	}
	moe_shape(v, &t);
	if (m->part == WFW_PART_FFN)
		wfs_timing_moe_ffn_cost(prof, &dims, &t, r->f.n, cost);
	else
		wfs_timing_moe_layer_cost(prof, &dims, &t, r->f.pos0, r->f.n,
					  cost);
}

/*
 * Weight streaming: read layer @l of the stage from host memory into its
 * window slot and bind it there (validated again: host memory is not the
 * device's); NULL with the job's status set if either fails.
 */
static const struct wfs_layer_view *stream_layer(struct wfs_stage *st,
						 struct chunk_run *r, u32 l)
{
	struct wfs_device *dev = st->dev;
	const struct wfs_model_state *m = r->m;
	struct wfs_stage_model *sm = r->sm;
	u32 layer = sm->first_layer + l;
	const struct wfs_section_range *sec =
		&m->table.layer[wfs_load_row(m, layer)];
	u8 *slot = sm->window[l % WFS_STREAM_SLOTS];
	struct wfs_layer_view *v = (struct wfs_layer_view *)slot;
	struct wfs_hw *hw = &dev->hw;

	if (hw->dma.read(hw->dma_ctx, m->stream_addr + sec->offset,
			 slot + WFS_STREAM_VIEW_BYTES, sec->size)) {
		r->job->status = -WFS_EFAULT;
		return NULL;
	}
	if (wfs_layer_bind(&m->info, slot + WFS_STREAM_VIEW_BYTES, sec->size,
			   layer, v)) {
		r->job->status = -WFS_EIO;
		return NULL;
	}
	return v;
}

/* Streaming: layer @l's compute, and its part of the pass (wfs_timing.h). */
static void stream_timing(struct wfs_stage *st, struct chunk_run *r,
			  const struct wfs_layer_view *v, u32 l)
{
	const struct wfs_profile *prof = &st->dev->hw.prof;
	const struct wfs_model_state *m = r->m;
	const struct wfs_section_range *sec =
		&m->table.layer[wfs_load_row(m, r->sm->first_layer + l)];
	struct wfs_cost cost = { 0 };
	u64 c, next = 0;

	layer_timing(prof, m, v, r, &cost);
	c = wfs_timing_stage_cycles(prof, &cost);
	if (!l)
		r->pass_cycles = wfs_timing_stream_layer_cycles(prof, sec->size);
	if (l + 1 < r->sm->n_layers)
		next = wfs_timing_stream_layer_cycles(prof, sec[1].size);
	r->pass_cycles += WFS_MAX(c, next);
	r->comp_cycles += c;
}

/* An expert-parallel phase over the chunk's records (wfs_moe_ep.h). */
static int ep_tokens(struct wfs_stage *st, struct chunk_run *r,
		     const struct wfs_layer_view *v, u64 *cnt)
{
	u32 phase = r->job->layer >> WFW_XPHASE_SHIFT, i;
	struct wfs_ep_work w;
	u8 *rec;

	WFS_MEMSET(&w, 0, sizeof(w));
	for (i = 0; i < r->f.n; i++) {
		if (wfs_aborting(&st->dev->sync))
			return 0;
		rec = work_rec(r, i);
		if (!wfs_ep_rec_ok(v, phase, rec)) {
			r->job->status = -WFS_EINVAL;
			return 1;
		}
		wfs_ep_run(v, phase, rec, r->sm->scratch, &w);
		/* The home counts the routing, as one device does. */
		if (phase == WFW_XPHASE_ROUTE)
			count_sel(st, wfs_ep_hdr(v, rec)->n_sel,
				  wfs_ep_hdr(v, rec)->expert, cnt);
	}
	wfs_ep_cost(&st->dev->hw.prof, v, &w, r->f.n, r->act, &r->ep_cost);
	return 1;
}

/* One layer over the chunk's tokens; 0 if a reset interrupted it. */
static int layer_tokens(struct wfs_stage *st, struct chunk_run *r,
			const struct wfs_layer_view *v, u32 l, u64 *cnt)
{
	struct wfs_ctx *ctx = r->job->ctx;
	u32 part = r->m->part, i;
	u32 n_tok[WFS_XMAP_MAX_GROUPS] = { 0 };
	u8 *kv = NULL;

	if (wfs_part_is_ep(part))
		return ep_tokens(st, r, v, cnt);
	/* An FFN part has no KV cache. */
	if (part != WFW_PART_FFN)
		kv = ctx->kv[st->idx] +
		     ((u64)l * ctx->slots + r->job->args.slot) * ctx->kv_bytes;
	for (i = 0; i < r->f.n; i++) {
		if (wfs_aborting(&st->dev->sync))
			return 0;
		if (part == WFW_PART_ATTN)
			wfs_layer_attn(v, kv, r->f.pos0 + i, work_rec(r, i),
				       r->sm->scratch);
		else if (part == WFW_PART_FFN)
			wfs_layer_ffn(v, r->f.pos0 + i, work_rec(r, i),
				      r->sm->scratch);
		else
			wfs_layer_forward(v, kv, r->f.pos0 + i, work_rec(r, i),
					  r->sm->scratch);
		if (v->n_experts)
			count_experts(st, r, v, r->f.pos0 + i, cnt);
		if (v->xmap)
			wfs_xplace_tokens(v, wfs_layer_moe_sel(v, r->f.pos0 + i,
							       r->sm->scratch),
					  n_tok);
	}
	/* Expert groups on other stages: dispatch and combine hops. */
	if (v->xmap)
		r->xhop_cycles += wfs_xplace_hop_cycles(&st->dev->hw.prof, v,
							st->idx, n_tok, r->act);
	return 1;
}

/*
 * Run the stage's layers, layer by layer over the chunk's tokens (a
 * token's layer reads the KV of the positions before it at that layer
 * only, so the order gives what token by token gives); 0 if a reset
 * interrupted it.
 */
static int chunk_layers(struct wfs_stage *st, struct chunk_run *r)
{
	struct wfs_stage_model *sm = r->sm;
	const struct wfs_layer_view *v;
	u64 *cnt = sm->expert_cnt;
	u32 l;

	if (r->job->status || !sm->n_layers)
		return 1;
	if (r->m->part) {
		/* A part job runs its one layer, if it is here. */
		if (!part_layer(r, &l))
			return 1;
		for (v = sm->lviews; v < sm->lviews + l; v++)
			cnt += v->n_experts ? 1 + v->n_experts : 0;
		return layer_tokens(st, r, &sm->lviews[l], l, cnt);
	}
	for (l = 0; l < sm->n_layers; l++) {
		v = &sm->lviews[l];
		if (r->m->stream) {
			v = stream_layer(st, r, l);
			if (!v)
				return 1;
			stream_timing(st, r, v, l);
		}
		if (!layer_tokens(st, r, v, l, cnt))
			return 0;
		if (v->n_experts)
			cnt += 1 + v->n_experts;
	}
	return 1;
}

/*
 * Weight streaming: a chunk that arrives while the stage is still busy
 * with a pass shares it, up to fifo_depth + 1 chunks (the one in the work
 * area and those the FIFO holds): it pays only its compute.  Else it
 * begins a pass and pays the reads not hidden under compute.
 */
static u64 stream_pass_cycles(struct wfs_stage *st, struct chunk_run *r,
			      u64 free_at)
{
	struct wfs_stage_model *sm = r->sm;

	if (sm->pass_chunks && sm->pass_chunks <= st->dev->hw.prof.fifo_depth &&
	    r->f.t_arrive <= free_at) {
		sm->pass_chunks++;
		return r->comp_cycles;
	}
	sm->pass_chunks = 1;
	r->pass_first = 1;
	return r->pass_cycles;
}

/* A chunk's records over the device link: an expert phase's payload. */
static u64 link_bytes(const struct chunk_run *r)
{
	u32 phase = r->job->layer >> WFW_XPHASE_SHIFT, i;
	u64 b = 0;

	if (!wfs_part_is_ep(r->m->part))
		return (u64)r->f.n * r->act;
	for (i = 0; i < r->f.n; i++)
		b += wfs_ep_link_bytes(r->m->info.dim, phase, work_rec(r, i));
	return b;
}

/*
 * When the stage is next free on the timeline of @tl's tenant ("Tenants"
 * in wfs_timing.h): the end of the tenant's latest chunk there, plus the
 * work the stage ran for other tenants since, unless the device was idle
 * in between.  A work clock below what the tenant saw was zeroed (models
 * reloaded): the tenant's chunks there are gone with it.
 */
static u64 stage_free_at(const struct wfs_stage *st,
			 const struct wfs_timeline *tl)
{
	u64 own = tl->free_at[st->idx], seen = tl->work_at[st->idx];

	if (seen > st->free_at) {
		own = 0;
		seen = 0;
	}
	if (st->idle_work <= st->free_at)
		seen = WFS_MAX(seen, st->idle_work);
	return own + (st->free_at - seen);
}

/* Modelled time (formulas in wfs_timing.h). */
static void chunk_timing(struct wfs_stage *st, struct chunk_run *r)
{
	struct wfs_device *dev = st->dev;
	const struct wfs_model_state *m = r->m;
	const struct wfs_profile *prof = &dev->hw.prof;
	struct wfs_timeline *tl = r->job->ctx->tl;
	struct wfs_cost cost = { 0 };
	u64 cycles, free_at = stage_free_at(st, tl);
	u32 i, l;

	if (job_heads(r)) {
		for (i = 0; i < r->f.n; i++)
			r->n_out += wants_output(r->job, r->f.last, i, r->f.n);
	}
	if (job_embeds(r))
		wfs_timing_embed_cost(&m->dims, r->f.n, &cost);
	for (l = 0; !m->stream && !m->part && l < r->sm->n_layers; l++)
		layer_timing(prof, m, &r->sm->lviews[l], r, &cost);
	if (m->part && part_layer(r, &l))
		layer_timing(prof, m, &r->sm->lviews[l], r, &cost);
	if (job_heads(r))
		wfs_timing_head_cost(prof, &m->dims, m->head_weight_bytes,
				     r->n_out, &cost);
	cycles = wfs_timing_stage_cycles(prof, &cost) + r->xhop_cycles;
	if (m->stream && r->sm->n_layers)
		cycles += stream_pass_cycles(st, r, free_at);
	r->ns = wfs_timing_ns(prof, cycles);
	r->start = WFS_MAX(r->f.t_arrive, free_at);
	r->end = r->start + r->ns;
	/* The stage's own clock counts only the work. */
	st->free_at += r->ns;
	tl->free_at[st->idx] = r->end;
	tl->work_at[st->idx] = st->free_at;
	/* To the next stage, the host, or the next device's first stage. */
	if (job_links(r))
		r->hop = wfs_timing_ns(prof, wfs_timing_link_cycles(prof, link_bytes(r)));
	else
		r->hop = wfs_timing_ns(prof, wfs_timing_hop_cycles(prof, (u64)r->f.n *
								   r->act));
	if (st->idx == 0 && r->f.pos0 == r->job->args.start_pos)
		r->job->t_start = r->start;
}

/* WFW_JOB_TIMES: the chunk's record of the job's modelled timeline. */
static void chunk_times(struct wfs_stage *st, const struct chunk_run *r)
{
	struct wfs_hw *hw = &st->dev->hw;
	struct wfs_job *job = r->job;
	const struct wfw_cmd_run_job *a = &job->args;
	u64 idx = (r->f.pos0 - a->start_pos) / st->dev->hw.prof.chunk_tokens;
	struct wfw_chunk_time t = {
		.stage = st->idx, .pos0 = r->f.pos0, .n = r->f.n,
		.flags = WFW_CHUNK_VALID |
			 (job_links(r) ? WFW_CHUNK_LINK : 0),
		.start_ns = r->start, .end_ns = r->end, .hop_end_ns = r->end + r->hop,
	};

	if (!(a->flags & WFW_JOB_TIMES) || job->status)
		return;
	idx = idx * r->m->map.stages_used + st->idx;
	if (hw->dma.write(hw->dma_ctx, a->out_addr + a->times_offset +
			  idx * sizeof(t), &t, sizeof(t)))
		job->status = -WFS_EFAULT;
}

static void head_output(struct wfs_stage *st, const struct chunk_run *r,
			u32 pos, const u8 *act)
{
	struct wfs_hw *hw = &st->dev->hw;
	struct wfs_job *job = r->job;
	struct wfw_out_rec *rec = (struct wfw_out_rec *)r->sm->rec;
	u32 k = job->args.topk, argmax = 0, size = WFW_OUT_REC_SIZE(k);
	u64 idx = (job->args.flags & WFW_JOB_ALL_POSITIONS) ?
		  pos - job->args.start_pos : 0;

	wfs_head(r->sm->hview, act, k ? k : 1, r->sm->topk, &argmax,
		 r->sm->scratch);
	rec->pos = pos;
	rec->argmax = argmax;
	rec->argmax_logit = r->sm->topk[0].logit;
	rec->k = k;
	if (k)
		WFS_MEMCPY(rec->topk, r->sm->topk,
			   (u64)k * sizeof(rec->topk[0]));
	if (hw->dma.write(hw->dma_ctx, job->args.out_addr + idx * size, rec,
			  size))
		job->status = -WFS_EFAULT;
	else
		job->records++;
}

/* The last stage of a range without a head: activation records out. */
static void act_outputs(struct wfs_stage *st, struct chunk_run *r)
{
	struct wfs_hw *hw = &st->dev->hw;
	struct wfs_job *job = r->job;
	u32 used = sizeof(struct wfw_act_rec) + 4 * r->m->info.dim, i;

	/* An expert-parallel record is state up to its end. */
	if (wfs_part_is_ep(r->m->part))
		used = r->act;
	struct wfw_act_rec h;

	for (i = 0; i < r->f.n && !job->status; i++) {
		u8 *rec = work_rec(r, i);
		u64 idx = r->f.pos0 + i - job->args.start_pos;

		/* When it reaches the next device (see wfs_timing.h). */
		WFS_MEMCPY(&h, rec, sizeof(h));
		h.t_ns = r->end + r->hop;
		WFS_MEMCPY(rec, &h, sizeof(h));
		WFS_MEMSET(rec + used, 0, r->act - used);
		if (hw->dma.write(hw->dma_ctx, job->args.out_addr + idx * r->act,
				  rec, r->act))
			job->status = -WFS_EFAULT;
		else
			job->records++;
	}
}

static void chunk_outputs(struct wfs_stage *st, struct chunk_run *r)
{
	u32 i;

	if (r->job->status)
		return;
	if (job_links(r)) {
		act_outputs(st, r);
		return;
	}
	if (!job_heads(r))
		return;
	for (i = 0; i < r->f.n && !r->job->status; i++) {
		if (wants_output(r->job, r->f.last, i, r->f.n))
			head_output(st, r, r->f.pos0 + i, work_rec(r, i));
	}
}

static void chunk_count(struct wfs_stage *st, const struct chunk_run *r,
			u64 h0)
{
	wfs_os_mutex_lock(st->in.lock);
	st->cnt.chunks++;
	st->cnt.tokens += r->f.n;
	st->cnt.jobs += r->f.last;
	st->cnt.host_busy_ns += wfs_os_now_ns() - h0;
	st->cnt.modelled_busy_ns += r->ns;
	st->cnt.stream_passes += r->pass_first;
	wfs_os_mutex_unlock(st->in.lock);
}

/* Hand the chunk to the next stage, or retire the job after its last. */
static void chunk_forward(struct wfs_stage *st, const struct chunk_run *r)
{
	struct wfs_device *dev = st->dev;
	struct wfs_fifo *next;
	struct wfs_flit *e;

	if (r->sm->last) {
		if (r->f.last)
			wfs_job_retire(dev, r->job, r->end + r->hop);
		return;
	}
	next = &dev->stages[st->idx + 1].in;
	e = wfs_fifo_reserve(&dev->sync, next);
	if (!e)
		return;
	e->buf = dev->stages[st->idx + 1].mdl[r->m->idx].fifo[e - next->ent];
	WFS_MEMCPY(e->buf, r->sm->work, (u64)r->f.n * r->act);
	e->job = r->f.job;
	e->pos0 = r->f.pos0;
	e->n = r->f.n;
	e->last = r->f.last;
	e->t_arrive = r->end + r->hop;
	wfs_fifo_publish(next);
}

static void run_chunk(struct wfs_stage *st, const struct wfs_flit *ent)
{
	struct chunk_run r;
	u64 h0 = wfs_os_now_ns();

	WFS_MEMSET(&r, 0, sizeof(r));
	r.f = *ent;
	r.job = wfs_job_get(st->dev, r.f.job);
	r.m = &st->dev->models.m[r.job->ctx->model];
	r.sm = &st->mdl[r.job->ctx->model];
	r.act = r.m->act_bytes;

	chunk_input(st, &r);
	if (!chunk_layers(st, &r))
		return;
	chunk_timing(st, &r);
	chunk_outputs(st, &r);
	chunk_times(st, &r);
	chunk_count(st, &r, h0);
	chunk_forward(st, &r);
}

int wfs_stage_step(struct wfs_stage *st)
{
	struct wfs_device *dev = st->dev;
	struct wfs_flit *ent = wfs_fifo_peek(&dev->sync, &st->in);

	if (!ent)
		return 0;
	if (st->idx == 0 && wfs_job_get(dev, ent->job)->hang) {
		/* Injected hang: stall the pipeline until reset. */
		wfs_sync_wait_abort(&dev->sync);
		return 1;
	}
	run_chunk(st, ent);
	return 1;
}
