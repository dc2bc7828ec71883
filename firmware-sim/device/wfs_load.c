// SPDX-License-Identifier: MIT
/*
 * wfs_load.c - LOAD_MODEL and model release (see wfs_load.h).
 */
#include "wfs_device_priv.h"
#include "wfs_moe_ep.h"
#include "wfs_moe_ep_part.h"
#include "wfs_part.h"
#include "wfs_xplace.h"

/* A part's name, for the log: "" for whole layers. */
static const char *part_name(u32 part)
{
	return part == WFW_PART_ATTN ? "attention part of " :
	       part == WFW_PART_FFN ? "FFN part of " :
	       part == WFW_PART_XHOME ? "expert-parallel home of " :
	       part == WFW_PART_XSHARD ? "expert shard of " : "";
}

/* Bytes a request takes in an arena: each allocation rounds up to a block. */
static u64 blk(u64 bytes)
{
	return wfs_sram_block_size(bytes);
}

static int section_in_blob(const struct wfs_section_range *r, u64 len)
{
	u64 end;

	return r->size && !WFS_ADD_OVF(r->offset, r->size, &end) && end <= len;
}

static void *table_alloc(struct wfs_stage *st, const struct wfs_model_state *m,
			 u32 row, u32 arg)
{
	return wfs_stage_alloc(st, m, m->table.a[row].bytes, m->table.a[row].name,
			       arg);
}

/* ------------------------------------------------------ allocation table -- */

static void row(struct wfs_load_table *t, u32 id, const char *name, u32 item,
		u32 count, u32 rounded, u64 bytes)
{
	struct wfs_alloc *a = &t->a[id];

	a->name = name;
	a->item = item;
	a->count = count;
	a->rounded = rounded;
	a->bytes = bytes;
}

/* Weight streaming's window: two slots of the range's largest layer. */
static void table_window(struct wfs_model_state *m)
{
	struct wfs_load_table *t = &m->table;
	u64 max = 0;
	u32 l;

	for (l = 0; m->stream && l < m->n_layers; l++)
		max = WFS_MAX(max, t->layer[l].size);
	row(t, WFS_A_WINDOW, "window%u", WFS_ITEM_STAGE,
	    m->stream ? WFS_STREAM_SLOTS : 0, 1, WFS_STREAM_VIEW_BYTES + max);
}

/*
 * What each layer of the range takes in SRAM: its section, or its part's
 * copy, or with expert groups its local bytes (the view is bound on the
 * blob to find the tensors).
 */
static int table_parts(struct wfs_device *dev, struct wfs_model_state *m,
		       const u8 *blob)
{
	struct wfs_load_table *t = &m->table;
	struct wfs_layer_view v;
	u32 l, layer;
	u64 b;
	int ret;

	for (l = 0; l < m->n_layers; l++) {
		layer = m->range_first + l;
		t->layer_weight[l] = t->layer[l].size;
		if (m->part == WFW_PART_WHOLE && !m->xgroup)
			continue;
		ret = wfs_layer_bind(&m->info, blob + t->layer[l].offset,
				     t->layer[l].size, layer, &v);
		if (ret)
			return ret;
		if (wfs_part_is_ep(m->part)) {
			b = wfs_ep_part_bytes(&v, m->part, m->xfirst,
					      m->xcount);
			if (!b) {
				wfs_log_printf(&dev->hw.log, 1,
					       "load: part %u: layer %u has no experts",
					       m->part, m->info.first_layer + layer);
				return -WFS_EINVAL;
			}
		} else {
			b = m->xgroup && v.n_experts ?
			    wfs_xplace_local_bytes(&v, t->layer[l].size,
						   m->xgroup) :
			    wfs_part_bytes(&v, m->part);
		}
		if (m->xgroup && v.n_experts && !b) {
			wfs_log_printf(&dev->hw.log, 1,
				       "load: layer %u: %u experts in groups of %u make more than %u groups",
				       m->info.first_layer + layer, v.n_experts,
				       m->xgroup, WFS_XMAP_MAX_GROUPS);
			return -WFS_EINVAL;
		}
		if (b)
			t->layer_weight[l] = b;
	}
	return 0;
}

/* Fill the table for the model in @m and the device's profile. */
static int table_build(struct wfs_device *dev, struct wfs_model_state *m,
		       const u8 *blob, u64 len)
{
	const struct wfs_model_info *info = &m->info;
	struct wfs_load_table *t = &m->table;
	const struct wfs_profile *prof = &dev->hw.prof;
	u32 l;

	row(t, WFS_A_FIFO, "fifo%u", WFS_ITEM_STAGE, prof->fifo_depth, 1,
	    m->flit_bytes);
	row(t, WFS_A_WORK, "work", WFS_ITEM_STAGE, 1, 1,
	    (u64)prof->chunk_tokens * m->act_bytes);
	row(t, WFS_A_SCRATCH, "scratch", WFS_ITEM_STAGE, 1, 1,
	    wfs_layer_scratch_bytes(info, m->max_ctx));
	row(t, WFS_A_SLOTS, "ctx%u.slots", WFS_ITEM_STAGE, 1, 1,
	    WFS_MIN_CTX_SLOTS * sizeof(struct wfs_slot_state));
	row(t, WFS_A_SLACK, "slack", WFS_ITEM_STAGE, 1, 0, WFS_STAGE_SLACK);
	row(t, WFS_A_WEIGHTS, "L%u.weights", WFS_ITEM_LAYER, 1, 1, 0);
	row(t, WFS_A_VIEWS, "views", WFS_ITEM_LAYER, 1, 0,
	    sizeof(struct wfs_layer_view));
	/* An FFN part (or an expert-parallel one) keeps no KV cache. */
	row(t, WFS_A_KV, "ctx%u.kv", WFS_ITEM_LAYER,
	    wfs_part_has_kv(m->part), 1,
	    wfs_kv_bytes(info, m->min_kv_pos));
	row(t, WFS_A_EMBED_VIEW, "embed.view", WFS_ITEM_EMBED, m->embed, 1,
	    sizeof(struct wfs_embed_view));
	row(t, WFS_A_EMBED, "embed", WFS_ITEM_EMBED, m->embed, 1,
	    info->embed.size);
	row(t, WFS_A_HEAD_VIEW, "head.view", WFS_ITEM_HEAD, m->head, 1,
	    sizeof(struct wfs_head_view));
	row(t, WFS_A_HEAD, "head", WFS_ITEM_HEAD, m->head, 1, info->head.size);
	row(t, WFS_A_HEAD_SCRATCH, "head.scratch", WFS_ITEM_HEAD, m->head, 1,
	    wfs_head_scratch_bytes(info));
	row(t, WFS_A_TOPK, "topk", WFS_ITEM_HEAD, m->head, 1,
	    WFS_TOPK_MAX * sizeof(struct wfs_topk_entry));
	row(t, WFS_A_OUT, "out", WFS_ITEM_HEAD, m->head, 1,
	    WFW_OUT_REC_SIZE(WFW_MAX_TOPK));
	/* The range's layers only: the blob may have more than a table. */
	if (m->n_layers > WFS_ARRAY_SIZE(t->layer))
		return -WFS_E2BIG;
	for (l = 0; l < m->n_layers; l++) {
		if (wfs_model_layer_section(info, blob, m->range_first + l,
					    &t->layer[l]) ||
		    !section_in_blob(&t->layer[l], len))
			return -WFS_EINVAL;
	}
	table_window(m);
	return table_parts(dev, m, blob);
}

/*
 * What a stage offers the model placed now: the whole arena on a device
 * without another model (the single-model placement, unchanged), else the
 * room of the fullest stage (every model's pipeline begins at stage 0).
 */
static u64 load_capacity(struct wfs_device *dev, const struct wfs_model_state *m)
{
	u64 cap = dev->stages[0].sram.size;
	u32 s, n;

	wfs_os_mutex_lock(dev->sync.lock);
	n = dev->models.n;
	wfs_os_mutex_unlock(dev->sync.lock);
	if (!n)
		return cap;
	for (s = 0; s < dev->hw.prof.stages; s++)
		cap = WFS_MIN(cap, wfs_stage_room(dev, m, s));
	return cap & ~(u64)(WFS_SRAM_ALIGN - 1);
}

/* Sum the table into placement's input. */
static void table_budget(struct wfs_device *dev, struct wfs_model_state *m,
			 struct wfs_map_input *in)
{
	struct wfs_load_table *t = &m->table;
	u64 per_layer = 0, *sum;
	u32 i, l;

	WFS_MEMSET(in, 0, sizeof(*in));
	for (i = 0; i < WFS_A_COUNT; i++) {
		const struct wfs_alloc *a = &t->a[i];
		u64 b = (u64)a->count * (a->rounded ? blk(a->bytes) : a->bytes);

		if (i == WFS_A_WEIGHTS)
			continue;	/* per layer, below */
		sum = a->item == WFS_ITEM_STAGE ? &in->stage_fixed :
		      a->item == WFS_ITEM_EMBED ? &in->embed_bytes :
		      a->item == WFS_ITEM_HEAD ? &in->head_bytes : &per_layer;
		*sum += b;
	}
	for (l = 0; l < m->n_layers; l++)
		t->layer_need[l] = per_layer + (m->stream ? 0 :
			blk(t->layer_weight[l]));
	in->n_layers = m->n_layers;
	in->n_stages = dev->hw.prof.stages;
	in->capacity = load_capacity(dev, m);
	in->layer_bytes = t->layer_need;
}

/* ---------------------------------------------------------- stage loads -- */

/* FIFO entries, work area, layer views and scratch. */
static int stage_buffers(struct wfs_model_state *m, struct wfs_stage *st)
{
	const struct wfs_load_table *t = &m->table;
	struct wfs_stage_model *sm = &st->mdl[m->idx];
	u32 l;

	if (st->in.depth > WFS_FIFO_MAX_DEPTH)
		return -WFS_EINVAL;
	for (l = 0; l < st->in.depth; l++) {
		sm->fifo[l] = table_alloc(st, m, WFS_A_FIFO, l);
		if (!sm->fifo[l])
			return -WFS_ENOSPC;
	}
	sm->work = table_alloc(st, m, WFS_A_WORK, 0);
	if (!sm->work)
		return -WFS_ENOSPC;
	if (!sm->n_layers)
		return 0;
	sm->lviews = wfs_stage_alloc(st, m, (u64)sm->n_layers *
				     t->a[WFS_A_VIEWS].bytes,
				     t->a[WFS_A_VIEWS].name, 0);
	sm->scratch = table_alloc(st, m, WFS_A_SCRATCH, 0);
	if (!sm->lviews || !sm->scratch)
		return -WFS_ENOSPC;
	return 0;
}

/*
 * Weight streaming: the window's slots.  Each layer is read into the
 * first and bound once here, so loading validates it as a resident load
 * does; the stage binds it again on every read (wfs_stage.c).
 */
static int stage_window(struct wfs_stage *st, const struct wfs_model_state *m)
{
	struct wfs_stage_model *sm = &st->mdl[m->idx];
	u32 i;

	for (i = 0; i < m->table.a[WFS_A_WINDOW].count; i++) {
		sm->window[i] = table_alloc(st, m, WFS_A_WINDOW, i);
		if (!sm->window[i])
			return -WFS_ENOSPC;
	}
	return 0;
}

/* The SRAM block name of a layer's weights: "L3.weights", "L3.attn", ... */
static const char *part_block(const struct wfs_model_state *m)
{
	return m->part == WFW_PART_ATTN ? "L%u.attn" :
	       m->part == WFW_PART_FFN ? "L%u.ffn" :
	       m->part == WFW_PART_XHOME ? "L%u.xhome" :
	       m->part == WFW_PART_XSHARD ? "L%u.xshard" :
	       m->table.a[WFS_A_WEIGHTS].name;
}

/*
 * A layer's part, or an MoE layer with expert groups: bind the view on the
 * blob (validating the section as a whole layer's load does), then copy
 * the part's tensors (the local bytes, wfs_xplace.h) into SRAM and point
 * the view at them (wfs_part.h).
 */
static int stage_part(struct wfs_model_state *m, struct wfs_stage *st,
		      const u8 *blob, u32 l)
{
	struct wfs_stage_model *sm = &st->mdl[m->idx];
	u32 layer = sm->first_layer + l;
	const struct wfs_section_range *r =
		&m->table.layer[wfs_load_row(m, layer)];
	u64 bytes = m->table.layer_weight[wfs_load_row(m, layer)];
	u8 *p;
	int ret;

	ret = wfs_layer_bind(&m->info, blob + r->offset, r->size, layer,
			     &sm->lviews[l]);
	if (ret)
		return ret;
	p = wfs_stage_alloc(st, m, bytes, part_block(m), layer);
	if (!p)
		return -WFS_ENOSPC;
	if (wfs_part_is_ep(m->part)) {
		wfs_ep_part_copy(&sm->lviews[l], m->part, m->xfirst,
				 m->xcount, p);
	} else if (m->xgroup && sm->lviews[l].n_experts) {
		wfs_xplace_copy(&sm->lviews[l], r->size, m->xgroup, p);
	} else if (bytes == r->size) {
		/* A dense layer of a model with expert groups: whole. */
		WFS_MEMCPY(p, blob + r->offset, r->size);
		ret = wfs_layer_bind(&m->info, p, r->size, layer,
				     &sm->lviews[l]);
		if (ret)
			return ret;
	} else {
		wfs_part_copy(&sm->lviews[l], m->part, p);
	}
	sm->weight_bytes += bytes;
	return 0;
}

static int stage_layers(struct wfs_device *dev, struct wfs_model_state *m,
			struct wfs_stage *st, const u8 *blob)
{
	const struct wfs_model_info *info = &m->info;
	const struct wfs_load_table *t = &m->table;
	struct wfs_stage_model *sm = &st->mdl[m->idx];
	u32 l;
	int ret;
	u8 *p;

	if (m->stream && sm->n_layers) {
		ret = stage_window(st, m);
		if (ret)
			return ret;
	}
	for (l = 0; l < sm->n_layers; l++) {
		u32 layer = sm->first_layer + l;
		const struct wfs_section_range *r =
			&t->layer[wfs_load_row(m, layer)];

		/* A reset or destroy does not wait for the rest of the copy. */
		if (wfs_aborting(&dev->sync))
			return -WFS_ECANCELED;

		/* A part's copy is smaller than the section it is from. */
		if (t->layer_weight[wfs_load_row(m, layer)] != r->size ||
		    wfs_part_is_ep(m->part) ||
		    (m->xgroup && info->ffn_kind == WFS_FFN_MOE)) {
			ret = stage_part(m, st, blob, l);
			if (ret)
				return ret;
			continue;
		}
		p = m->stream ? sm->window[0] + WFS_STREAM_VIEW_BYTES :
		    wfs_stage_alloc(st, m, r->size, part_block(m),
				    layer);
		if (!p)
			return -WFS_ENOSPC;
		WFS_MEMCPY(p, blob + r->offset, r->size);
		ret = wfs_layer_bind(info, p, r->size, layer, &sm->lviews[l]);
		if (ret)
			return ret;
		sm->weight_bytes += r->size;
	}
	return 0;
}

static int stage_embed(struct wfs_model_state *m, struct wfs_stage *st,
		       const u8 *blob, u64 len)
{
	const struct wfs_model_info *info = &m->info;
	struct wfs_stage_model *sm = &st->mdl[m->idx];
	u8 *p;

	if (!section_in_blob(&info->embed, len))
		return -WFS_EINVAL;
	sm->eview = table_alloc(st, m, WFS_A_EMBED_VIEW, 0);
	p = table_alloc(st, m, WFS_A_EMBED, 0);
	if (!sm->eview || !p)
		return -WFS_ENOSPC;
	WFS_MEMCPY(p, blob + info->embed.offset, info->embed.size);
	return wfs_embed_bind(info, p, info->embed.size, sm->eview);
}

static int stage_head(struct wfs_model_state *m, struct wfs_stage *st,
		      const u8 *blob, u64 len)
{
	const struct wfs_model_info *info = &m->info;
	const struct wfs_load_table *t = &m->table;
	struct wfs_stage_model *sm = &st->mdl[m->idx];
	u8 *p;
	int ret;

	if (!section_in_blob(&info->head, len))
		return -WFS_EINVAL;
	sm->hview = table_alloc(st, m, WFS_A_HEAD_VIEW, 0);
	p = table_alloc(st, m, WFS_A_HEAD, 0);
	sm->topk = table_alloc(st, m, WFS_A_TOPK, 0);
	sm->rec = table_alloc(st, m, WFS_A_OUT, 0);
	if (!sm->hview || !p || !sm->topk || !sm->rec)
		return -WFS_ENOSPC;
	if (!sm->scratch ||
	    t->a[WFS_A_HEAD_SCRATCH].bytes > t->a[WFS_A_SCRATCH].bytes) {
		/* A head-only stage, or a head needing more scratch. */
		sm->scratch = table_alloc(st, m, WFS_A_HEAD_SCRATCH, 0);
		if (!sm->scratch)
			return -WFS_ENOSPC;
	}
	WFS_MEMCPY(p, blob + info->head.offset, info->head.size);
	ret = wfs_head_bind(info, p, info->head.size, sm->hview);
	if (ret)
		return ret;
	m->head_weight_bytes = info->head.size;
	return 0;
}

/* Allocate one stage's share of the model and bind its views. */
static int load_stage(struct wfs_device *dev, struct wfs_model_state *m,
		      const u8 *blob, u64 len, u32 s)
{
	const struct wfs_map *map = &m->map;
	struct wfs_stage *st = &dev->stages[s];
	struct wfs_stage_model *sm = &st->mdl[m->idx];
	int ret;

	sm->first_layer = m->range_first + map->first_layer[s];
	sm->n_layers = map->n_layers[s];
	/* The stage's layers index the table: they must be the range's. */
	if ((u64)map->first_layer[s] + sm->n_layers > m->n_layers)
		return -WFS_EINVAL;
	sm->last = s == map->stages_used - 1;
	sm->embed = m->embed && s == 0;
	sm->head = m->head && sm->last;
	sm->pass_chunks = 0;

	ret = stage_buffers(m, st);
	if (!ret)
		ret = stage_layers(dev, m, st, blob);
	if (!ret && sm->embed)
		ret = stage_embed(m, st, blob, len);
	if (!ret && sm->head)
		ret = stage_head(m, st, blob, len);
	return ret;
}

/* ---------------------------------------------------------------- load -- */

struct wfs_model_state *wfs_model_lookup(struct wfs_device *dev, u32 id,
					 int any, int *err)
{
	struct wfs_model_state *m = NULL;
	u32 i, n = 0;

	*err = -WFS_ENOENT;
	if (id) {
		i = WFW_MODEL_IDX(id);
		m = i < WFS_MAX_MODELS ? &dev->models.m[i] : NULL;
		return m && m->loaded && m->id == id ? m : NULL;
	}
	for (i = WFS_MAX_MODELS; i--;) {
		if (dev->models.m[i].loaded) {
			m = &dev->models.m[i];
			n++;
		}
	}
	if (n > 1 && !any) {
		*err = -WFS_EINVAL;
		return NULL;
	}
	return m;
}

u64 wfs_load_max_slots(struct wfs_device *dev, const struct wfs_model_state *m,
		       u32 ctx_len)
{
	u64 kvb = wfs_kv_bytes(&m->info, ctx_len), best = ~(u64)0;
	u32 s;

	if (!wfs_part_has_kv(m->part))
		return WFS_CTX_MAX_SLOTS;	/* no KV: the slot table's limit */
	for (s = 0; s < m->map.stages_used; s++) {
		struct wfs_stage *st = &dev->stages[s];
		u64 per_slot = (u64)st->mdl[m->idx].n_layers * kvb, gap, n;

		if (!st->mdl[m->idx].n_layers)
			continue;
		gap = wfs_sram_largest_free(&st->sram);
		n = per_slot ? wfs_div64_u64(gap, per_slot) : 0;
		if (n < best)
			best = n;
	}
	return best == ~(u64)0 ? 0 : best;
}

/* Forget model @m's state; @gen: its slot's generation survives. */
static void model_forget(struct wfs_device *dev, struct wfs_model_state *m)
{
	u32 s, idx = m->idx;

	for (s = 0; s < dev->hw.prof.stages; s++)
		WFS_MEMSET(&dev->stages[s].mdl[idx], 0,
			   sizeof(dev->stages[s].mdl[idx]));
	wfs_os_free(m->expert_cnt);
	WFS_MEMSET(m, 0, sizeof(*m));
	m->idx = idx;
}

void wfs_load_release(struct wfs_device *dev)
{
	u32 s, i;

	for (s = 0; s < dev->hw.prof.stages; s++) {
		wfs_sram_reset(&dev->stages[s].sram);
		dev->stages[s].free_at = 0;
	}
	for (i = 0; i < WFS_MAX_MODELS; i++)
		model_forget(dev, &dev->models.m[i]);
	dev->models.n = 0;
}

void wfs_load_unload(struct wfs_device *dev, struct wfs_model_state *m)
{
	u32 s;

	for (s = 0; s < dev->hw.prof.stages; s++)
		wfs_sram_free_owner(&dev->stages[s].sram, m->idx + 1);
	if (m->loaded)
		dev->models.n--;
	model_forget(dev, m);
	for (s = 0; !dev->models.n && s < dev->hw.prof.stages; s++)
		dev->stages[s].free_at = 0;
}

/*
 * The layers to load: all of the blob's, or [layer_first, +layer_count) of
 * the full model's numbering, inside the blob.  The range holds the
 * embedding iff it starts at the model's first layer, the head iff it ends
 * at its last (the blob has them then).
 */
static int load_range(struct wfs_device *dev, struct wfs_model_state *m,
		      const struct wfw_cmd_load_model *p)
{
	const struct wfs_model_info *info = &m->info;
	u64 end = (u64)p->layer_first + p->layer_count;

	if (p->layer_count && (p->layer_first < info->first_layer ||
				end > (u64)info->first_layer + info->n_layers)) {
		wfs_log_printf(&dev->hw.log, 1,
			       "load: layers %u-%llu are not all in the blob (layers %u-%u of %u)",
			       p->layer_first, (unsigned long long)end - 1,
			       info->first_layer,
			       info->first_layer + info->n_layers - 1,
			       info->total_layers);
		return -WFS_EINVAL;
	}
	m->range_first = p->layer_count ? p->layer_first - info->first_layer : 0;
	m->n_layers = p->layer_count ? p->layer_count : info->n_layers;
	if (m->n_layers > WFS_DEV_MAX_LAYERS) {
		wfs_log_printf(&dev->hw.log, 1,
			       "load: %s %u layers: a device loads at most %u (load a range with layer_first, layer_count)",
			       p->layer_count ? "layer_count" : "the blob's",
			       m->n_layers, WFS_DEV_MAX_LAYERS);
		return -WFS_E2BIG;
	}
	/* The embedding goes with attention, the head with the FFN. */
	m->part = p->part;
	m->embed = info->first_layer + m->range_first == 0 &&
		   wfs_part_has_kv(m->part);
	/* The home of expert parallelism is the FFN's: it has the head. */
	m->head = info->first_layer + m->range_first + m->n_layers ==
		  info->total_layers && m->part != WFW_PART_ATTN &&
		  m->part != WFW_PART_XSHARD;
	return 0;
}

/* The checked blob's range and the sizes every table row uses. */
static int load_parse(struct wfs_device *dev, struct wfs_model_state *m,
		      const struct wfw_cmd_load_model *p)
{
	struct wfs_model_info *info = &m->info;
	int ret;

	ret = load_range(dev, m, p);
	if (ret)
		return ret;
	m->stream = !!(p->flags & WFW_LOAD_STREAM);
	m->stream_addr = p->addr;
	m->xgroup = p->expert_group;
	ret = wfs_ep_check_load(&dev->hw.log, info, p);
	if (ret)
		return ret;
	m->xfirst = p->expert_first;
	m->xcount = p->expert_count;

	/* Expert parallelism's records carry the layer's state (wfw_abi.h). */
	m->act_bytes = wfs_part_is_ep(m->part) ? wfs_ep_rec_bytes(info) :
		       (u32)wfs_act_bytes(info);
	m->flit_bytes = dev->hw.prof.chunk_tokens * WFS_MAX(m->act_bytes, 4u);
	m->max_ctx = info->seq_len ? info->seq_len : 1;
	m->kv_pos_bytes = wfs_kv_stride(info);
	m->min_kv_pos = WFS_MIN(m->max_ctx, (u32)WFS_MIN_KV_POSITIONS);
	m->dims.dim = info->dim;
	m->dims.kv_dim = info->kv_dim;
	m->dims.hidden_dim = info->hidden_dim;
	m->dims.vocab = info->vocab_size;
	m->dims.act_bytes = m->act_bytes;
	m->dims.kv_pos_bytes = m->kv_pos_bytes;
	m->dims.latent = 0;	/* the firmware's models have no latent attention */
	return 0;
}

/* The other models, for the -ENOSPC line: "; 1 other model (0x101, ...)". */
static void others_str(struct wfs_device *dev, const struct wfs_model_state *m,
		       char *buf, u32 size)
{
	u32 i, n = 0, len = 0;

	buf[0] = '\0';
	for (i = 0; i < WFS_MAX_MODELS && len + 48 < size; i++) {
		const struct wfs_model_state *o = &dev->models.m[i];

		if (!o->loaded || o == m)
			continue;
		len += wfs_snprintf(buf + len, size - len,
				    "%s0x%x: %llu KiB", n++ ? ", " : "",
				    o->id, (unsigned long long)(o->sram_used >> 10));
	}
}

/*
 * An MoE model whose layers do not fit with their experts: place the
 * experts in groups of one (or of as many as make WFS_XMAP_MAX_GROUPS)
 * across the stages instead, if the layers fit then (wfs_xplace.h).
 * Return: 0 if they do; else -WFS_ENOSPC with the table and map back.
 */
static int place_spread(struct wfs_device *dev, struct wfs_model_state *m,
			const u8 *blob, struct wfs_map_input *in)
{
	u32 per = (m->info.n_experts + WFS_XMAP_MAX_GROUPS - 1) /
		  WFS_XMAP_MAX_GROUPS;
	int ret;

	if (m->info.ffn_kind != WFS_FFN_MOE || m->xgroup || m->stream ||
	    m->part == WFW_PART_ATTN || wfs_part_is_ep(m->part))
		return -WFS_ENOSPC;
	m->xgroup = WFS_MAX(per, 1u);
	ret = table_parts(dev, m, blob);
	if (!ret) {
		table_budget(dev, m, in);
		ret = wfs_place(in, &m->map);
	}
	if (!ret) {
		wfs_log_printf(&dev->hw.log, 0,
			       "load: the layers do not fit with their experts: experts placed in groups of %u across the stages",
			       m->xgroup);
		return 0;
	}
	m->xgroup = 0;
	table_parts(dev, m, blob);
	table_budget(dev, m, in);
	wfs_place(in, &m->map);
	return -WFS_ENOSPC;
}

/*
 * Place the table's items (an MoE model's experts in groups across the
 * stages if they do not fit otherwise); on -ENOSPC say what was needed.
 */
static int load_place(struct wfs_device *dev, struct wfs_model_state *m,
		      const u8 *blob, struct wfw_cpl *c)
{
	struct wfs_map *map = &m->map;
	struct wfs_map_input in;
	char others[160];
	u32 n;
	int ret;

	table_budget(dev, m, &in);
	ret = wfs_place(&in, map);
	if (ret == -WFS_ENOSPC)
		ret = place_spread(dev, m, blob, &in);
	if (ret != -WFS_ENOSPC)
		return ret;
	/* The other models, as the CP loads and unloads them. */
	wfs_os_mutex_lock(dev->sync.lock);
	others_str(dev, m, others, sizeof(others));
	n = dev->models.n;
	wfs_os_mutex_unlock(dev->sync.lock);
	wfs_log_printf(&dev->hw.log, 1,
		       "load: model (%slayers %u-%u) does not fit: it needs %llu KiB of SRAM (%s, KV for %u slot x %u positions, buffers); the default placement needs %llu KiB per stage, packed it needs %u stage(s)%s; the device has %u stages x %llu KiB",
		       part_name(m->part), m->info.first_layer + m->range_first,
		       m->info.first_layer + m->range_first + m->n_layers - 1,
		       (unsigned long long)(map->total_bytes >> 10),
		       m->stream ?
		       "a weight streaming window of 2 layers per stage" :
		       "weights", m->table.a[WFS_A_KV].count, m->min_kv_pos,
		       (unsigned long long)(map->max_stage_bytes >> 10),
		       map->stages_needed,
		       map->stages_needed ? "" :
		       " (one layer alone exceeds a stage)",
		       dev->hw.prof.stages,
		       (unsigned long long)(dev->stages[0].sram.size >> 10));
	if (n)
		wfs_log_printf(&dev->hw.log, 1,
			       "load: %u other model(s) loaded (%s); with the minimum KV of those without a context kept free, %llu KiB per stage is left for this one",
			       n, others,
			       (unsigned long long)(in.capacity >> 10));
	c->value = map->total_bytes;
	c->result0 = map->stages_needed;
	c->result1 = (u32)(in.capacity >> 10);
	c->result2 = (u32)WFS_MIN(map->max_stage_bytes >> 10, (u64)0xffffffffu);
	return ret;
}

static int load_stages(struct wfs_device *dev, struct wfs_model_state *m,
		       const u8 *blob, u64 len, void (*copied_one)(struct wfs_device *dev))
{
	u32 s;
	int ret = 0;

	for (s = 0; s < m->map.stages_used && !ret; s++) {
		ret = load_stage(dev, m, blob, len, s);
		if (!ret && !s && copied_one)
			copied_one(dev);
	}
	if (ret == -WFS_ECANCELED)
		wfs_log_printf(&dev->hw.log, 1, "load: stopped by a reset");
	else if (ret)
		wfs_log_printf(&dev->hw.log, 1,
			       "load: stage %u failed (%d)%s", s - 1, ret,
			       ret == -WFS_ENOSPC ?
			       ": no gap for a block (other models' blocks and contexts)" :
			       "");
	return ret;
}

/*
 * The workers of the occupied stages (more for a model that occupies more
 * than the others); on failure none is left running on a device without
 * another model.
 */
static int load_workers(struct wfs_device *dev, const struct wfs_model_state *m)
{
	int ret = wfs_stage_workers_start(dev, m->map.stages_used);

	if (!ret)
		return 0;
	wfs_log_printf(&dev->hw.log, 1, "load: cannot start the stage workers (%d)",
		       ret);
	if (dev->models.n)
		return ret;
	wfs_os_mutex_lock(dev->sync.lock);
	wfs_stage_workers_close_locked(dev);
	wfs_os_mutex_unlock(dev->sync.lock);
	wfs_stage_workers_join(dev);
	return ret;
}

/*
 * The expert load counters: per MoE layer its tokens, then one per routed
 * expert; each stage points at its first MoE layer's.
 */
static int load_expert_counters(struct wfs_device *dev,
				struct wfs_model_state *m)
{
	u32 s, l, n = 0;

	for (s = 0; s < m->map.stages_used; s++) {
		struct wfs_stage_model *sm = &dev->stages[s].mdl[m->idx];

		for (l = 0; l < sm->n_layers; l++) {
			if (!sm->lviews[l].n_experts)
				continue;
			m->moe_layers++;
			n += 1 + sm->lviews[l].n_experts;
		}
	}
	if (!n)
		return 0;
	m->expert_cnt = wfs_os_zalloc(8ULL * n, dev->hw.numa_node);
	if (!m->expert_cnt)
		return -WFS_ENOMEM;
	m->expert_cnt_n = n;
	for (s = 0, n = 0; s < m->map.stages_used; s++) {
		struct wfs_stage_model *sm = &dev->stages[s].mdl[m->idx];

		for (l = 0; l < sm->n_layers; l++) {
			if (!sm->lviews[l].n_experts)
				continue;
			if (!sm->expert_cnt)
				sm->expert_cnt = m->expert_cnt + n;
			n += 1 + sm->lviews[l].n_experts;
		}
	}
	return 0;
}

/* Log the stages and the model. */
static void load_log(struct wfs_device *dev, const struct wfs_model_state *m)
{
	u32 s;

	for (s = 0; s < m->map.stages_used; s++) {
		const struct wfs_stage_model *sm = &dev->stages[s].mdl[m->idx];

		wfs_log_printf(&dev->hw.log, 0,
			       "load: stage %u: layers %u..%u%s%s, %llu KiB SRAM",
			       s, m->info.first_layer + sm->first_layer,
			       m->info.first_layer + sm->first_layer +
			       sm->n_layers - 1,
			       sm->embed ? " +embed" : "",
			       sm->head ? " +head" : "",
			       (unsigned long long)(wfs_sram_owner_bytes(&dev->stages[s].sram,
									 m->idx + 1, NULL) >> 10));
	}
	wfs_log_printf(&dev->hw.log, 0,
		       "load: model 0x%x: %slayers %u-%u of %u (%s in, %s out) on %u stage(s)%s%s, dim %u, vocab %u, %llu KiB SRAM",
		       m->id, part_name(m->part),
		       m->info.first_layer + m->range_first,
		       m->info.first_layer + m->range_first + m->n_layers - 1,
		       m->info.total_layers, m->embed ? "tokens" : "activations",
		       m->head ? "results" : "activations", m->map.stages_used,
		       m->map.greedy ? " (packed)" : "",
		       m->stream ? ", weights streamed from host memory" : "",
		       m->info.dim,
		       m->info.vocab_size, (unsigned long long)(m->sram_used >> 10));
}

/* Mark the model loaded and fill the success completion. */
static void load_done(struct wfs_device *dev, struct wfs_model_state *m,
		      u64 len, struct wfw_cpl *c)
{
	u64 used = 0;
	u32 s;

	/* Expert groups may sit on stages past the layers'. */
	for (s = 0; s < dev->hw.prof.stages; s++)
		used += wfs_sram_owner_bytes(&dev->stages[s].sram, m->idx + 1,
					     NULL);
	m->sram_used = used;
	dev->models.gen = (dev->models.gen + 1) &
			  ((1u << (32 - WFW_MODEL_IDX_BITS)) - 1);
	if (!dev->models.gen)
		dev->models.gen = 1;
	m->id = WFW_MODEL_ID(dev->models.gen, m->idx);
	wfs_os_mutex_lock(dev->sync.lock);
	m->loading = 0;
	m->loaded = 1;
	dev->models.n++;
	wfs_os_mutex_unlock(dev->sync.lock);
	c->model = m->id;
	c->result0 = m->map.stages_used;
	c->result1 = m->n_layers;
	c->result2 = (u32)WFS_MIN(wfs_load_max_slots(dev, m, m->max_ctx),
				  (u64)0xffffffffu);
	c->value = used;
	c->device_ns = wfs_timing_ns(&dev->hw.prof,
				     wfs_timing_hop_cycles(&dev->hw.prof, len));
	wfs_reg_update(&dev->hw, WFW_REG_STATUS, WFW_STATUS_MODEL, 0);
	load_log(dev, m);
}

/* A slot neither loaded nor reserved by a load, or NULL. */
static struct wfs_model_state *model_slot(struct wfs_device *dev)
{
	u32 i;

	for (i = 0; i < WFS_MAX_MODELS; i++) {
		if (!dev->models.m[i].loaded && !dev->models.m[i].loading) {
			dev->models.m[i].idx = i;
			return &dev->models.m[i];
		}
	}
	return NULL;
}

struct wfs_model_state *wfs_load_reserve(struct wfs_device *dev)
{
	struct wfs_model_state *m = model_slot(dev);

	if (!m) {
		wfs_log_printf(&dev->hw.log, 1,
			       "load: %u models are loaded or loading, the most a device holds",
			       WFS_MAX_MODELS);
		return NULL;
	}
	m->loading = 1;
	return m;
}

void wfs_load_cancel(struct wfs_device *dev, struct wfs_model_state *m)
{
	u32 s;

	/* The blocks its placement took, if it got that far. */
	for (s = 0; s < dev->hw.prof.stages; s++)
		wfs_sram_free_owner(&dev->stages[s].sram, m->idx + 1);
	model_forget(dev, m);
}

int wfs_load_check(struct wfs_device *dev, const u8 *blob, u64 len,
		   struct wfs_model_info *info)
{
	int ret = wfs_model_parse(blob, len, info);

	if (ret)
		wfs_log_printf(&dev->hw.log, 1, "load: blob rejected by the validator (%d)",
			       ret);
	return ret;
}

int wfs_load_place(struct wfs_device *dev, struct wfs_model_state *m,
		   const struct wfw_cmd_load_model *p, const u8 *blob,
		   const struct wfs_model_info *info, struct wfw_cpl *c,
		   void (*copied_one)(struct wfs_device *dev))
{
	int ret;

	m->info = *info;
	ret = load_parse(dev, m, p);
	if (!ret)
		ret = table_build(dev, m, blob, p->len);
	if (!ret)
		ret = load_place(dev, m, blob, c);
	if (!ret)
		ret = load_stages(dev, m, blob, p->len, copied_one);
	if (!ret && m->xgroup)
		ret = wfs_xplace_groups(dev, m, blob, c);
	if (!ret)
		ret = load_expert_counters(dev, m);
	return ret;
}

int wfs_load_commit(struct wfs_device *dev, struct wfs_model_state *m,
		    u64 len, struct wfw_cpl *c)
{
	u32 s, n;
	int ret;

	wfs_os_mutex_lock(dev->sync.lock);
	n = dev->models.n;
	wfs_os_mutex_unlock(dev->sync.lock);
	/* The first model on an idle device starts its clocks at 0, as ever. */
	for (s = 0; !n && s < dev->hw.prof.stages; s++)
		dev->stages[s].free_at = 0;
	ret = load_workers(dev, m);
	if (ret) {
		wfs_load_cancel(dev, m);
		return ret;
	}
	load_done(dev, m, len, c);
	return 0;
}
