// SPDX-License-Identifier: MIT
/*
 * wfs_ctx.c - the context table (see wfs_ctx.h).
 */
#include "wfs_device_priv.h"

#define CTX_IDX_BITS	12
#define CTX_GEN_MASK	((1u << (32 - CTX_IDX_BITS)) - 1)

WFS_STATIC_ASSERT(WFS_LIMIT_CTXS <= 1u << CTX_IDX_BITS, "context ids");

struct wfs_ctx *wfs_ctx_lookup(struct wfs_device *dev, u32 id)
{
	u32 idx = id & ((1u << CTX_IDX_BITS) - 1);
	struct wfs_ctx *c;

	if (idx >= dev->ctx.max)
		return NULL;
	c = &dev->ctx.ctxs[idx];
	if (!c->in_use || (id >> CTX_IDX_BITS) != c->gen)
		return NULL;
	return c;
}

static void ctx_free_sram(struct wfs_device *dev, struct wfs_ctx *c)
{
	u32 s;

	for (s = 0; s < dev->hw.prof.stages; s++) {
		wfs_sram_free(&dev->stages[s].sram, c->kv[s]);
		c->kv[s] = NULL;
	}
	if (c->slot)
		wfs_sram_free(&dev->stages[0].sram, c->slot);
	c->slot = NULL;
}

u32 wfs_ctx_count(struct wfs_device *dev, u32 model)
{
	u32 i, n = 0;

	for (i = 0; i < dev->ctx.max; i++) {
		const struct wfs_ctx *c = &dev->ctx.ctxs[i];

		n += c->in_use && c->model == model;
	}
	return n;
}

static struct wfs_ctx *ctx_free_entry(struct wfs_device *dev)
{
	u32 i;

	for (i = 0; i < dev->ctx.max; i++) {
		if (!dev->ctx.ctxs[i].in_use)
			return &dev->ctx.ctxs[i];
	}
	return NULL;
}

/*
 * The tenant's timeline (state lock): its own if the table still holds
 * it, else a free entry, else one whose tenant has no context left; a
 * context is being created, so fewer than the table's entries are in use.
 */
static struct wfs_timeline *ctx_timeline(struct wfs_device *dev, u64 tenant)
{
	struct wfs_timeline *tl, *free = NULL, *idle = NULL;
	u32 i;

	wfs_os_mutex_assert_held(dev->sync.lock);
	for (i = 0; i < dev->ctx.max; i++) {
		tl = &dev->ctx.ctxs[i].clock;
		if (tl->used && tl->tenant == tenant)
			return tl;
		if (!tl->used && !free)
			free = tl;
		if (tl->used && !tl->contexts && !idle)
			idle = tl;
	}
	tl = free ? free : idle;
	if (!tl)	/* cannot happen: a context entry is free */
		return NULL;
	WFS_MEMSET(tl, 0, sizeof(*tl));
	tl->used = 1;
	tl->tenant = tenant;
	tl->origin_ns = dev->job.makespan_ns;
	return tl;
}

/* Allocate the KV blocks; on failure say which stage lacked how much. */
static int ctx_alloc_kv(struct wfs_device *dev, const struct wfs_model_state *m,
			struct wfs_ctx *ctx, u32 i, u32 slots, u64 kvb,
			struct wfw_cpl *c)
{
	const char *name = m->table.a[WFS_A_KV].name;
	u64 bytes;
	u32 s;

	ctx->kv_total = 0;
	for (s = 0; s < m->map.stages_used; s++) {
		struct wfs_stage *st = &dev->stages[s];
		u32 n_layers = st->mdl[m->idx].n_layers;

		/* An FFN part (WFW_PART_FFN) keeps no KV cache. */
		if (!n_layers || !m->table.a[WFS_A_KV].count)
			continue;
		/* n_layers * slots * kvb: all factors < 2^32, kvb < 2^40. */
		bytes = (u64)n_layers * slots;
		if (WFS_MUL_OVF(bytes, kvb, &bytes)) {
			c->value = ~(u64)0;
			c->result0 = s;
			return -WFS_ENOSPC;
		}
		ctx->kv[s] = wfs_stage_alloc(st, m, bytes, name, i);
		if (!ctx->kv[s]) {
			c->value = bytes;
			c->result0 = s;
			return -WFS_ENOSPC;
		}
		ctx->kv_total += bytes;
	}
	return 0;
}

int wfs_ctx_create(struct wfs_device *dev, struct wfs_model_state *m,
		   u32 slots, u32 ctx_len, u64 tenant, struct wfw_cpl *c)
{
	struct wfs_ctx *ctx;
	u64 kvb;
	u32 i;

	c->model = m->id;
	if (ctx_len > m->max_ctx)
		return -WFS_E2BIG;
	ctx = ctx_free_entry(dev);
	if (!ctx)
		return -WFS_EMFILE;
	i = (u32)(ctx - dev->ctx.ctxs);

	kvb = wfs_kv_bytes(&m->info, ctx_len);
	ctx->slot = wfs_stage_alloc(&dev->stages[0], m,
				    (u64)slots * sizeof(*ctx->slot),
				    m->table.a[WFS_A_SLOTS].name, i);
	if (!ctx->slot) {
		c->value = (u64)slots * sizeof(*ctx->slot);
		goto nospc;
	}
	if (ctx_alloc_kv(dev, m, ctx, i, slots, kvb, c))
		goto nospc;
	ctx->model = m->idx;
	ctx->slots = slots;
	ctx->ctx_len = ctx_len;
	ctx->kv_bytes = kvb;
	ctx->active_jobs = 0;
	wfs_os_mutex_lock(dev->sync.lock);
	ctx->tl = ctx_timeline(dev, tenant);
	if (!ctx->tl) {
		wfs_os_mutex_unlock(dev->sync.lock);
		ctx_free_sram(dev, ctx);
		return -WFS_EMFILE;
	}
	ctx->tl->contexts++;
	ctx->in_use = 1;
	dev->ctx.n++;
	wfs_os_mutex_unlock(dev->sync.lock);
	c->result0 = i | (ctx->gen << CTX_IDX_BITS);
	c->value = ctx->kv_total;
	wfs_log_printf(&dev->hw.log, 0,
		       "context %u: model 0x%x, %u slot(s) x %u positions, %llu KiB KV",
		       c->result0, m->id, slots, ctx_len,
		       (unsigned long long)(ctx->kv_total >> 10));
	return 0;

nospc:
	ctx_free_sram(dev, ctx);
	wfs_log_printf(&dev->hw.log, 1,
		       "context: %u slot(s) x %u positions of model 0x%x do not fit: stage %u could not get %llu KiB",
		       slots, ctx_len, m->id, c->result0,
		       (unsigned long long)(c->value >> 10));
	return -WFS_ENOSPC;
}

int wfs_ctx_destroy(struct wfs_device *dev, u32 id)
{
	struct wfs_sync *sy = &dev->sync;
	struct wfs_ctx *ctx;

	ctx = wfs_ctx_lookup(dev, id);
	if (!ctx)
		return -WFS_ENOENT;
	wfs_os_mutex_lock(sy->lock);
	while (ctx->active_jobs && !wfs_aborting(sy))
		wfs_os_cond_wait(sy->cond, sy->lock);
	if (wfs_aborting(sy)) {
		wfs_os_mutex_unlock(sy->lock);
		return WFS_CPL_DEFERRED;	/* dropped by the reset */
	}
	ctx->in_use = 0;
	ctx->tl->contexts--;
	ctx->gen = (ctx->gen + 1) & CTX_GEN_MASK;
	if (!ctx->gen)
		ctx->gen = 1;
	dev->ctx.n--;
	wfs_os_mutex_unlock(sy->lock);
	ctx_free_sram(dev, ctx);
	return 0;
}

int wfs_ctx_destroy_model(struct wfs_device *dev, u32 model, u32 *n)
{
	u32 i;
	int ret;

	*n = 0;
	for (i = 0; i < dev->ctx.max; i++) {
		struct wfs_ctx *c = &dev->ctx.ctxs[i];

		if (!c->in_use || c->model != model)
			continue;
		ret = wfs_ctx_destroy(dev, i | (c->gen << CTX_IDX_BITS));
		if (ret)
			return ret;
		(*n)++;
	}
	return 0;
}

void wfs_ctx_release_all_locked(struct wfs_device *dev)
{
	u32 i;

	wfs_os_mutex_assert_held(dev->sync.lock);
	for (i = 0; i < dev->ctx.max; i++) {
		struct wfs_ctx *c = &dev->ctx.ctxs[i];

		if (c->in_use) {
			c->in_use = 0;
			c->tl->contexts--;
			c->gen++;
		}
	}
	dev->ctx.n = 0;
}
