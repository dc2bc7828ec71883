// SPDX-License-Identifier: MIT
/*
 * wfs_pipeline.c - layer placement, inter-stage FIFOs and the stage
 * workers (see wfs_pipeline.h).
 */
#include "wfs_device_priv.h"
#include "wfs_ring.h"

/* ------------------------------------------------------------ placement -- */

static u64 sat_add(u64 a, u64 b)
{
	u64 r;

	return WFS_ADD_OVF(a, b, &r) ? ~(u64)0 : r;
}

static void plan_balanced(const struct wfs_map_input *in, struct wfs_map *m)
{
	u32 used = WFS_MIN(in->n_layers, in->n_stages);
	u32 base = in->n_layers / used, extra = in->n_layers % used;
	u32 s, l, layer = 0;

	m->stages_used = used;
	m->greedy = 0;
	m->total_bytes = 0;
	m->max_stage_bytes = 0;
	for (s = 0; s < used; s++) {
		u64 need = in->stage_fixed;

		m->first_layer[s] = layer;
		m->n_layers[s] = base + (s < extra);
		for (l = 0; l < m->n_layers[s]; l++)
			need = sat_add(need, in->layer_bytes[layer + l]);
		layer += m->n_layers[s];
		if (s == 0)
			need = sat_add(need, in->embed_bytes);
		if (s == used - 1)
			need = sat_add(need, in->head_bytes);
		m->need[s] = need;
		m->total_bytes = sat_add(m->total_bytes, need);
		if (need > m->max_stage_bytes)
			m->max_stage_bytes = need;
	}
}

/*
 * Greedy first fit over [embed, layers..., head].  Keeps counting stages
 * past n_stages so the caller can report how many would be needed.
 * Returns 0 if it fits in n_stages.
 */
static int plan_greedy(const struct wfs_map_input *in, struct wfs_map *m)
{
	u32 n_items = in->n_layers + 2, i, s = 0, items_here = 0, too_big = 0;
	u64 cur = in->stage_fixed, total = 0;

	m->greedy = 1;
	m->first_layer[0] = 0;
	m->n_layers[0] = 0;
	for (i = 0; i < n_items; i++) {
		u32 is_layer = i >= 1 && i <= in->n_layers;
		u64 b = i == 0 ? in->embed_bytes :
			is_layer ? in->layer_bytes[i - 1] : in->head_bytes;

		if (!is_layer && b == 0)
			continue;
		/* An item that fits no stage: keep counting the bytes. */
		if (sat_add(in->stage_fixed, b) > in->capacity)
			too_big = 1;
		if (items_here && sat_add(cur, b) > in->capacity) {
			total = sat_add(total, cur);
			s++;
			cur = in->stage_fixed;
			items_here = 0;
			if (s < WFS_MAX_STAGES) {
				m->first_layer[s] = is_layer ? i - 1 :
						    i == 0 ? 0 : in->n_layers;
				m->n_layers[s] = 0;
			}
		}
		cur = sat_add(cur, b);
		items_here++;
		if (s < WFS_MAX_STAGES) {
			if (is_layer)
				m->n_layers[s]++;
			m->need[s] = cur;
		}
	}
	total = sat_add(total, cur);
	m->stages_needed = too_big ? 0 : s + 1;
	m->total_bytes = total;
	if (too_big || s + 1 > in->n_stages)
		return -WFS_ENOSPC;
	m->stages_used = s + 1;
	return 0;
}

int wfs_pipeline_map(const struct wfs_map_input *in, struct wfs_map *out)
{
	u64 balanced_max;
	u32 s;
	int ret;

	WFS_MEMSET(out, 0, sizeof(*out));
	if (in->n_layers < 1 || in->n_layers > WFS_DEV_MAX_LAYERS ||
	    in->n_stages < 1 || in->n_stages > WFS_MAX_STAGES ||
	    !in->layer_bytes)
		return -WFS_EINVAL;

	plan_balanced(in, out);
	balanced_max = out->max_stage_bytes;
	if (balanced_max <= in->capacity)
		return 0;

	/* Greedy needs a clean table: it writes entries as it goes. */
	WFS_MEMSET(out, 0, sizeof(*out));
	ret = plan_greedy(in, out);
	out->max_stage_bytes = balanced_max;
	if (ret) {
		out->stages_used = 0;
		return ret;
	}
	for (s = out->stages_used; s < WFS_MAX_STAGES; s++) {
		out->first_layer[s] = 0;
		out->n_layers[s] = 0;
		out->need[s] = 0;
	}
	return 0;
}

/* ---------------------------------------------------------------- FIFOs -- */

/**
 * wfs_fifo_reserve() - wait for a free entry at the tail of @f
 * @dev: device
 * @f: FIFO (the caller is its only producer)
 *
 * Return: the entry to fill, then wfs_fifo_publish(); NULL if the device
 * is aborting.
 */
struct wfs_flit *wfs_fifo_reserve(struct wfs_device *dev, struct wfs_fifo *f)
{
	struct wfs_flit *e = NULL;

	wfs_os_mutex_lock(f->lock);
	while (wfs_ring_count(f->head, f->tail) >= f->depth &&
	       !wfs_aborting(dev))
		wfs_os_cond_wait(f->cond, f->lock);
	if (!wfs_aborting(dev))
		e = &f->ent[wfs_ring_slot(f->tail, f->depth)];
	wfs_os_mutex_unlock(f->lock);
	return e;
}

/**
 * wfs_fifo_publish() - make the reserved tail entry visible to the consumer
 * @f: FIFO
 */
void wfs_fifo_publish(struct wfs_fifo *f)
{
	u32 n;

	wfs_os_mutex_lock(f->lock);
	f->tail++;
	n = wfs_ring_count(f->head, f->tail);
	if (n > f->hw)
		f->hw = n;
	wfs_os_cond_broadcast(f->cond);
	wfs_os_mutex_unlock(f->lock);
}

static struct wfs_flit *fifo_peek(struct wfs_device *dev, struct wfs_fifo *f)
{
	struct wfs_flit *e = NULL;

	wfs_os_mutex_lock(f->lock);
	while (f->head == f->tail && !wfs_aborting(dev))
		wfs_os_cond_wait(f->cond, f->lock);
	if (!wfs_aborting(dev))
		e = &f->ent[wfs_ring_slot(f->head, f->depth)];
	wfs_os_mutex_unlock(f->lock);
	return e;
}

static void fifo_pop(struct wfs_fifo *f)
{
	wfs_os_mutex_lock(f->lock);
	f->head++;
	wfs_os_cond_broadcast(f->cond);
	wfs_os_mutex_unlock(f->lock);
}

void wfs_pipeline_wake_all(struct wfs_device *dev)
{
	u32 i;

	for (i = 0; i < dev->prof.stages; i++) {
		struct wfs_fifo *f = &dev->stages[i].in;

		wfs_os_mutex_lock(f->lock);
		wfs_os_cond_broadcast(f->cond);
		wfs_os_mutex_unlock(f->lock);
	}
}

void wfs_pipeline_flush(struct wfs_device *dev)
{
	u32 i;

	for (i = 0; i < dev->prof.stages; i++) {
		struct wfs_fifo *f = &dev->stages[i].in;

		wfs_os_mutex_lock(f->lock);
		f->head = 0;
		f->tail = 0;
		wfs_os_mutex_unlock(f->lock);
	}
}

/* --------------------------------------------------------------- workers -- */

static void wait_for_abort(struct wfs_device *dev)
{
	wfs_os_mutex_lock(dev->lock);
	while (!wfs_aborting(dev))
		wfs_os_cond_wait(dev->cond, dev->lock);
	wfs_os_mutex_unlock(dev->lock);
}

static void job_complete(struct wfs_device *dev, struct wfs_job *job,
			 u64 t_done)
{
	struct wfs_ctx *ctx = job->ctx;
	struct wfs_slot_state *sl = &ctx->slot[job->args.slot];
	struct wfw_cpl c;

	WFS_MEMSET(&c, 0, sizeof(c));
	c.cookie = job->cookie;
	c.status = job->status;
	c.opcode = WFW_OP_RUN_JOB;
	c.result0 = job->status ? 0 : job->args.n_tokens;
	c.result1 = job->records;
	c.result2 = job->n_chunks;
	c.device_ns = t_done - job->t_start;
	c.value = t_done;
	c.host_ns = wfs_os_now_ns() - job->host_t0;

	wfs_os_mutex_lock(dev->lock);
	if (sl->pending)
		sl->pending--;
	if (t_done > sl->done_ns)
		sl->done_ns = t_done;
	ctx->active_jobs--;
	dev->jobs_active--;
	dev->jobs_completed++;
	if (!job->status)
		dev->tokens += job->args.n_tokens;
	if (t_done > dev->makespan_ns)
		dev->makespan_ns = t_done;
	job->state = WFS_JOB_FREE;
	wfs_os_cond_broadcast(dev->cond);
	wfs_os_mutex_unlock(dev->lock);

	wfs_post_cpl(dev, &c, 1);
}

static int wants_output(const struct wfs_job *job, u32 last_chunk, u32 i,
			u32 n)
{
	if (job->args.flags & WFW_JOB_ALL_POSITIONS)
		return 1;
	return last_chunk && i == n - 1;
}

static void head_output(struct wfs_stage *st, struct wfs_job *job, u32 pos,
			const u8 *act)
{
	struct wfs_device *dev = st->dev;
	struct wfw_out_rec *rec = (struct wfw_out_rec *)st->rec;
	u32 k = job->args.topk, argmax = 0, size = WFW_OUT_REC_SIZE(k);
	u64 idx = (job->args.flags & WFW_JOB_ALL_POSITIONS) ?
		  pos - job->args.start_pos : 0;

	wfs_head(st->hview, act, k ? k : 1, st->topk, &argmax, st->scratch);
	rec->pos = pos;
	rec->argmax = argmax;
	rec->argmax_logit = st->topk[0].logit;
	rec->k = k;
	if (k)
		WFS_MEMCPY(rec->topk, st->topk, (u64)k * sizeof(rec->topk[0]));
	if (dev->dma.write(dev->dma_ctx, job->args.out_addr + idx * size, rec,
			   size))
		job->status = -WFS_EFAULT;
	else
		job->records++;
}

static void run_chunk(struct wfs_stage *st, struct wfs_flit *ent)
{
	struct wfs_device *dev = st->dev;
	struct wfs_model_state *m = &dev->model;
	struct wfs_flit f = *ent;
	struct wfs_job *job = &dev->jobs[f.job];
	struct wfs_ctx *ctx = job->ctx;
	u32 A = m->act_bytes, i, l, n_out = 0;
	u64 h0 = wfs_os_now_ns(), start, end, hop, ns;
	struct wfs_cost cost = { 0, 0 };
	struct wfs_flit *e;

	if (st->embed) {
		const u32 *tok = (const u32 *)f.buf;

		for (i = 0; i < f.n && !job->status; i++) {
			if (wfs_embed(st->eview, tok[i], st->work + (u64)i * A))
				job->status = -WFS_EINVAL;
		}
	} else {
		WFS_MEMCPY(st->work, f.buf, (u64)f.n * A);
	}
	fifo_pop(&st->in);

	if (!job->status && st->n_layers) {
		for (i = 0; i < f.n; i++) {
			if (wfs_aborting(dev))
				return;
			for (l = 0; l < st->n_layers; l++) {
				u8 *kv = ctx->kv[st->idx] +
					 ((u64)l * ctx->slots + job->args.slot) *
					 ctx->kv_bytes;

				wfs_layer_forward(&st->lviews[l], kv, f.pos0 + i,
						  st->work + (u64)i * A,
						  st->scratch);
			}
		}
	}
	if (st->head) {
		for (i = 0; i < f.n; i++)
			n_out += wants_output(job, f.last, i, f.n);
	}

	/* Modelled time (formulas in wfs_timing.h). */
	if (st->embed)
		wfs_timing_embed_cost(&m->dims, f.n, &cost);
	for (l = 0; l < st->n_layers; l++)
		wfs_timing_layer_cost(&m->dims, st->lviews[l].weight_bytes,
				      f.pos0, f.n, &cost);
	if (st->head)
		wfs_timing_head_cost(&m->dims, m->head_weight_bytes, n_out,
				     &cost);
	ns = wfs_timing_ns(&dev->prof, wfs_timing_stage_cycles(&dev->prof,
							       &cost));
	start = WFS_MAX(f.t_arrive, st->free_at);
	end = start + ns;
	st->free_at = end;
	hop = wfs_timing_ns(&dev->prof,
			    wfs_timing_hop_cycles(&dev->prof, (u64)f.n * A));
	if (st->idx == 0 && f.pos0 == job->args.start_pos)
		job->t_start = start;

	if (st->head && !job->status) {
		for (i = 0; i < f.n && !job->status; i++) {
			if (wants_output(job, f.last, i, f.n))
				head_output(st, job, f.pos0 + i,
					    st->work + (u64)i * A);
		}
	}

	wfs_os_mutex_lock(st->in.lock);
	st->cnt.chunks++;
	st->cnt.tokens += f.n;
	st->cnt.jobs += f.last;
	st->cnt.host_busy_ns += wfs_os_now_ns() - h0;
	st->cnt.modelled_busy_ns += ns;
	wfs_os_mutex_unlock(st->in.lock);

	if (st->last) {
		if (f.last)
			job_complete(dev, job, end + hop);
		return;
	}
	e = wfs_fifo_reserve(dev, &dev->stages[st->idx + 1].in);
	if (!e)
		return;
	WFS_MEMCPY(e->buf, st->work, (u64)f.n * A);
	e->job = f.job;
	e->pos0 = f.pos0;
	e->n = f.n;
	e->last = f.last;
	e->t_arrive = end + hop;
	wfs_fifo_publish(&dev->stages[st->idx + 1].in);
}

void wfs_stage_worker(void *arg)
{
	struct wfs_stage *st = arg;
	struct wfs_device *dev = st->dev;
	struct wfs_flit *ent;

	while (!wfs_os_load32(&dev->stopping)) {
		ent = fifo_peek(dev, &st->in);
		if (!ent) {
			wfs_park(dev, &st->parked, 0);
			continue;
		}
		if (st->idx == 0 && dev->jobs[ent->job].hang) {
			/* Injected hang: stall the pipeline until reset. */
			wait_for_abort(dev);
			continue;
		}
		run_chunk(st, ent);
	}
}
