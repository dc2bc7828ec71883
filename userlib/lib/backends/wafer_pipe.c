// SPDX-License-Identifier: MIT
/*
 * The "pipe" backend: several devices opened as one (wafer_open_pipeline()).
 * This file holds the members, buffers, models and contexts; jobs move
 * through the members in wafer_pipe_flow.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wafer_members.h"
#include "wafer_pipe.h"
#include "wfs_model.h"

/* The pipeline's wafer_info: members combined (see wafer_open_pipeline()). */
static void pipe_info(struct wafer_dev *dev)
{
	struct pipe *p = pipe_of(dev);
	struct wafer_info *i = &dev->info;

	wafer_members_info(i, p->ch.m, p->ch.n);
	i->max_tokens_per_job = MIN_NZ(i->max_tokens_per_job, WAFER_PIPE_MAX_TOKENS);
	i->max_inflight_jobs = MIN_NZ(i->max_inflight_jobs, PIPE_MAX_INFLIGHT);
	i->max_models = MIN_NZ(i->max_models, PIPE_MAX_MODELS);
	i->max_contexts = MIN_NZ(i->max_contexts, PIPE_MAX_CTX);
}

static void pipe_close(struct wafer_dev *dev)
{
	struct pipe *p = pipe_of(dev);

	wafer_chain_close(&p->ch);
	free(p);
}

/* What the chain asks of the pipeline (wafer_pipe_flow.c, wafer_pipe_drain.c). */
static const struct wafer_chain_ops pipe_chain_ops = {
	.completed = pipe_completed,
	.failed = pipe_failed,
	.running = pipe_running,
};

int wafer_open_pipeline(const struct wafer_pipe_opts *po, struct wafer_dev **out)
{
	struct wafer_dev *dev;
	struct pipe *p;
	unsigned int k;
	int ret = 0;

	if (!out)
		return wafer_set_error(-EINVAL, "wafer_open_pipeline: no output pointer");
	*out = NULL;
	if (!po || !po->devices || !po->n_devices || po->n_devices > WAFER_PIPE_MAX_DEVICES)
		return wafer_set_error(-EINVAL, "a pipeline takes 1..%d devices",
				       WAFER_PIPE_MAX_DEVICES);
	for (k = 0; po->split && k < po->n_devices; k++)
		if (!po->split[k])
			return wafer_set_error(-EINVAL, "split: device %u gets no layer", k);
	dev = calloc(1, sizeof(*dev));
	p = calloc(1, sizeof(*p));
	if (!dev || !p) {
		free(dev);
		free(p);
		return wafer_set_error(-ENOMEM, "out of memory");
	}
	dev->ops = &wafer_pipe_backend;
	dev->priv = p;
	if (wafer_chain_init(&p->ch, &pipe_chain_ops)) {
		free(p);
		free(dev);
		return -ENOMEM;
	}
	for (k = 0; k < po->n_devices && !ret; k++) {
		struct wafer_open_opts o = po->devices[k];

		/* The ioctl path lets the driver chain the parts (see wafer.h). */
		if (o.submit == WAFER_SUBMIT_AUTO)
			o.submit = WAFER_SUBMIT_IOCTL;
		ret = wafer_open(&o, &p->ch.m[k]);
		if (!ret)
			p->ch.n++;
		if (!ret && p->ch.m[k]->ops != p->ch.m[0]->ops)
			ret = wafer_set_error(-EINVAL, "device %u: a %s device in a pipeline of "
					      "%s devices", k, p->ch.m[k]->ops->name,
					      p->ch.m[0]->ops->name);
		if (!ret && !p->ch.m[k]->ops->bo_import)
			ret = wafer_set_error(-EOPNOTSUPP, "the %s backend cannot share buffers",
					      p->ch.m[k]->ops->name);
	}
	if (ret) {
		pipe_close(dev);
		free(dev);
		return ret;
	}
	if (po->split)
		memcpy(p->split, po->split, p->ch.n * sizeof(*p->split));
	/* Completions straight from every member's thread, where they can. */
	wafer_chain_hook_members(&p->ch, 0);
	dev->index = p->ch.m[0]->index;
	pipe_info(dev);
	*out = dev;
	return 0;
}

static const char *pipe_submit_name(const struct wafer_dev *dev)
{
	return wafer_submit_name(pipe_of(dev)->ch.m[0]);
}

static struct wafer_dev *pipe_member(struct wafer_dev *dev, unsigned int i, unsigned int *n)
{
	struct pipe *p = pipe_of(dev);

	*n = p->ch.n;
	return i < p->ch.n ? p->ch.m[i] : NULL;
}

static void pipe_bo_destroy(struct wafer_dev *dev, struct wafer_bo *bo)
{
	struct pipe_bo *pb = bo->priv;

	wafer_chain_drain(&pipe_of(dev)->ch, (struct wafer_chain_gone){ .bo = bo },
			  dev->info.job_timeout_ms);
	wafer_members_bo_destroy(pb->on, pipe_of(dev)->ch.n);
	free(pb);
}

/* Allocated on member 0, a view on every other (a model may use any). */
static int pipe_bo_create(struct wafer_dev *dev, struct wafer_bo *bo)
{
	struct pipe *p = pipe_of(dev);
	struct pipe_bo *pb = calloc(1, sizeof(*pb));
	int ret;

	if (!pb)
		return wafer_set_error(-ENOMEM, "out of memory");
	bo->priv = pb;
	ret = wafer_members_bo_create(p->ch.m, p->ch.n, bo, pb->on);
	if (ret)
		free(pb);
	return ret;
}

/* The syncobjs of link @k, slots [0, @n). */
static void link_syncs_free(struct pipe *p, struct pipe_model *pm, unsigned int k, unsigned int n)
{
	unsigned int r;

	for (r = 0; r < n; r++) {
		p->ch.m[k + 1]->ops->sync_free(p->ch.m[k + 1], pm->sync_in[k][r]);
		p->ch.m[k]->ops->sync_free(p->ch.m[k], pm->sync_out[k][r]);
	}
}

/* Frees the links made and unloads the first @loaded parts. */
static void model_free(struct pipe *p, struct pipe_model *pm, unsigned int loaded)
{
	unsigned int k;

	for (k = 0; k + 1 < pm->n; k++) {
		if (pm->chained)
			link_syncs_free(p, pm, k, PIPE_MAX_INFLIGHT);
		wafer_bo_destroy(pm->link_in[k]);
		wafer_bo_destroy(pm->link[k]);
	}
	pipe_clock_model_free(pm);
	for (k = 0; k < loaded; k++)
		p->ch.m[k]->ops->model_unload(p->ch.m[k], pm->part[k].id);
	memset(pm, 0, sizeof(*pm));
}

/* The layer counts of the parts: the caller's split, or by free SRAM. */
static int model_split(struct pipe *p, unsigned int n_layers, unsigned int *count)
{
	uint64_t cap[PIPE_MAX];
	unsigned int k, sum = 0;

	if (!p->split[0]) {
		for (k = 0; k < p->ch.n; k++) {
			const struct wafer_info *i = &p->ch.m[k]->info;

			cap[k] = i->sram_bytes_free ? i->sram_bytes_free :
				 (uint64_t)i->stages * i->sram_bytes_per_stage;
		}
		return wafer_split_layers(n_layers, p->ch.n, cap, count);
	}
	for (k = 0; k < p->ch.n; k++)
		sum += p->split[k];
	if (sum != n_layers)
		return wafer_set_error(-EINVAL, "split: %u layers given, the model has %u",
				       sum, n_layers);
	memcpy(count, p->split, p->ch.n * sizeof(*count));
	return (int)p->ch.n;
}

/* Part @k: layers [first, first + count) on member @k. */
static int model_load_part(struct pipe *p, struct pipe_model *pm, struct wafer_bo *blob,
			   size_t len, unsigned int k, unsigned int count)
{
	struct wafer_load_hw *ld = &pm->part[k];
	int ret;

	ld->layer_first = pm->first[k];
	ld->layer_count = count;
	ld->stream = pm->stream;
	ld->expert_group = pm->expert_group;
	ret = p->ch.m[k]->ops->model_load(p->ch.m[k], pipe_bo_on(blob, k), len, ld);
	if (ret)
		return wafer_prefix_error(ret, "device %u (layers %u..%u)", k, pm->first[k],
					  pm->first[k] + count - 1);
	pm->act_size = ld->act_size;
	return 0;
}

/* Link @k: slots of OUT_ACT records of member @k, imported into @k + 1. */
static int model_link(struct pipe *p, struct pipe_model *pm, unsigned int k)
{
	int ret = wafer_bo_create(p->ch.m[k], pm->stride * PIPE_MAX_INFLIGHT, &pm->link[k]);

	if (!ret)
		ret = wafer_bo_import(p->ch.m[k + 1], pm->link[k], &pm->link_in[k]);
	if (ret && pm->link[k]) {
		wafer_bo_destroy(pm->link[k]);
		pm->link[k] = NULL;
	}
	return ret;
}

/*
 * Chains the parts with syncobjs where every member can: one per link and
 * job slot.  pm->chained stays 0 (the caller moves jobs on) where a member
 * cannot; any other failure fails the load.
 */
static int model_chain(struct pipe *p, struct pipe_model *pm)
{
	unsigned int k, r;
	int ret = 0;

	for (k = 0; k + 1 < pm->n; k++)
		if (!p->ch.m[k]->ops->sync_link)
			return 0;
	for (k = 0; k + 1 < pm->n && !ret; k++) {
		for (r = 0; r < PIPE_MAX_INFLIGHT && !ret; r++)
			ret = p->ch.m[k]->ops->sync_link(p->ch.m[k], p->ch.m[k + 1], &pm->sync_out[k][r],
						      &pm->sync_in[k][r]);
		if (ret)
			link_syncs_free(p, pm, k, r - 1);
	}
	if (!ret) {
		pm->chained = pm->n > 1;
		return 0;
	}
	while (--k > 0)
		link_syncs_free(p, pm, k - 1, PIPE_MAX_INFLIGHT);
	return ret == -EOPNOTSUPP ? 0 : ret;
}

/*
 * A link slot: a job's activation records, then its chunk times (as many
 * as the stages of the biggest member take); each part's first stage.
 */
static void model_slots(const struct pipe *p, struct pipe_model *pm)
{
	unsigned int k, top = 0;

	for (k = 0; k < pm->n; k++) {
		pm->stage0[k + 1] = pm->stage0[k] + p->ch.m[k]->info.stages;
		if (p->ch.m[k]->info.stages > top)
			top = p->ch.m[k]->info.stages;
	}
	pm->times_at = (uint64_t)pm->act_size * WAFER_PIPE_MAX_TOKENS;
	pm->stride = pm->times_at + (uint64_t)WAFER_PIPE_MAX_TOKENS * top *
				    sizeof(struct wafer_chunk_time);
}

static int pipe_model_load(struct wafer_dev *dev, struct wafer_bo *bo, size_t len,
			   struct wafer_load_hw *out)
{
	struct pipe *p = pipe_of(dev);
	unsigned int count[PIPE_MAX], k, id;
	struct wfs_model_info mi;
	struct pipe_model *pm;
	int ret, n;

	ret = wfs_model_parse(bo->map, len, &mi);
	if (ret)
		return wafer_set_error(ret, "the model blob is not valid");
	for (id = 0; id < PIPE_MAX_MODELS && p->models[id].used; id++)
		;
	if (id == PIPE_MAX_MODELS)
		return wafer_set_error(-EBUSY, "%d models are loaded on the pipeline already",
				       PIPE_MAX_MODELS);
	n = model_split(p, mi.n_layers, count);
	if (n < 0)
		return n;
	pm = &p->models[id];
	pm->used = 1;
	pm->n = (unsigned int)n;
	pm->stream = out->stream;
	pm->expert_group = out->expert_group;
	for (k = 0; k < pm->n; k++) {
		pm->first[k] = k ? pm->first[k - 1] + count[k - 1] : 0;
		ret = model_load_part(p, pm, bo, len, k, count[k]);
		if (ret) {
			model_free(p, pm, k);
			return ret;
		}
	}
	model_slots(p, pm);
	for (k = 0; k + 1 < pm->n && !ret; k++)
		ret = model_link(p, pm, k);
	if (!ret)
		ret = model_chain(p, pm);
	if (!ret)
		ret = pipe_clock_model(p, pm);
	if (ret) {
		model_free(p, pm, pm->n);
		return ret;
	}
	out->id = id + 1;
	out->n_layers = mi.n_layers;
	out->embed = pm->part[0].embed;
	out->head = pm->part[pm->n - 1].head;
	out->act_size = pm->act_size;
	for (k = 0; k < pm->n; k++)
		out->sram_bytes += pm->part[k].sram_bytes;
	return 0;
}

static int pipe_model_unload(struct wafer_dev *dev, uint32_t id)
{
	struct pipe *p = pipe_of(dev);

	wafer_chain_drain(&p->ch, (struct wafer_chain_gone){ .model = id },
			  dev->info.job_timeout_ms);
	model_free(p, &p->models[id - 1], p->models[id - 1].n);
	return 0;
}

static int pipe_model_parts(const struct wafer_dev *dev, uint32_t id,
			    struct wafer_model_part *out, unsigned int max)
{
	const struct pipe *p = pipe_of(dev);
	const struct pipe_model *pm = &p->models[id - 1];
	unsigned int k, c;

	for (k = 0; k < pm->n && k < max; k++) {
		out[k] = (struct wafer_model_part){
			.member = k, .device_index = p->ch.m[k]->index,
			.layer_first = pm->first[k], .layer_count = pm->part[k].n_layers,
			.sram_bytes = pm->part[k].sram_bytes,
			.embed = pm->part[k].embed, .head = pm->part[k].head,
			.chained = pm->chained && k,
		};
		for (c = 0; c < PIPE_MAX_CTX; c++)
			if (p->ctxs[c].used && p->ctxs[c].model == id - 1)
				out[k].kv_bytes += p->ctxs[c].kv[k];
	}
	return (int)pm->n;
}

/* Member @k's id of model @id's part, 0 past the members it occupies. */
static uint32_t pipe_member_model(const struct wafer_dev *dev, uint32_t id, unsigned int k)
{
	const struct pipe_model *pm = &pipe_of(dev)->models[id - 1];

	return k < pm->n ? pm->part[k].id : 0;
}

static void ctx_free(struct pipe *p, struct pipe_ctx *pc, unsigned int parts)
{
	unsigned int k;

	for (k = 0; k < parts; k++)
		p->ch.m[k]->ops->ctx_destroy(p->ch.m[k], pc->id[k]);
	pipe_clock_ctx_free(pc);
	memset(pc, 0, sizeof(*pc));
}

static int pipe_ctx_create(struct wafer_dev *dev, uint32_t model_id, unsigned int slots,
			   unsigned int ctx_len, uint32_t *id, uint64_t *kv_bytes)
{
	struct pipe *p = pipe_of(dev);
	struct pipe_model *pm = &p->models[model_id - 1];
	struct pipe_ctx *pc;
	unsigned int c, k;
	int ret = 0;

	for (c = 0; c < PIPE_MAX_CTX && p->ctxs[c].used; c++)
		;
	if (c == PIPE_MAX_CTX)
		return wafer_set_error(-EBUSY, "%d contexts exist on the pipeline already",
				       PIPE_MAX_CTX);
	pc = &p->ctxs[c];
	ret = pipe_clock_ctx(pc, slots);
	if (ret)
		return ret;
	*kv_bytes = 0;
	for (k = 0; k < pm->n && !ret; k++) {
		ret = p->ch.m[k]->ops->ctx_create(p->ch.m[k], pm->part[k].id, slots, ctx_len,
					       &pc->id[k], &pc->kv[k]);
		if (ret)
			ret = wafer_prefix_error(ret, "device %u", k);
		else
			*kv_bytes += pc->kv[k];
	}
	if (ret) {
		ctx_free(p, pc, k - 1);
		return ret;
	}
	pc->used = 1;
	pc->model = model_id - 1;
	*id = c + 1;
	return 0;
}

static int pipe_ctx_destroy(struct wafer_dev *dev, uint32_t id)
{
	struct pipe *p = pipe_of(dev);
	struct pipe_ctx *pc = &p->ctxs[id - 1];

	wafer_chain_drain(&p->ch, (struct wafer_chain_gone){ .ctx = id },
			  dev->info.job_timeout_ms);
	ctx_free(p, pc, p->models[pc->model].n);
	return 0;
}

/* The chain's counters (wafer_members_stats()). */
static int pipe_stats(struct wafer_dev *dev, struct wafer_dev_stats *st)
{
	struct pipe *p = pipe_of(dev);

	return wafer_members_stats(p->ch.m, p->ch.n, st);
}

const struct wafer_backend_ops wafer_pipe_backend = {
	.name = "pipe",
	.close = pipe_close,
	.submit_name = pipe_submit_name,
	.bo_create = pipe_bo_create,
	.bo_destroy = pipe_bo_destroy,
	.model_load = pipe_model_load,
	.model_unload = pipe_model_unload,
	.ctx_create = pipe_ctx_create,
	.ctx_destroy = pipe_ctx_destroy,
	.submit = wafer_pipe_submit,
	.reap = wafer_pipe_reap,
	.stats = pipe_stats,
	.model_parts = pipe_model_parts,
	.member = pipe_member,
	.member_model = pipe_member_model,
};
