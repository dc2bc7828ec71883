// SPDX-License-Identifier: MIT
/*
 * The "afd" backend: attention-FFN disaggregation over in-process devices
 * (wafer_open_afd(), wafer_afd.h).  This file holds the members, buffers,
 * models and contexts; the micro-batches' ping-pong is wafer_afd_flow.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wafer_afd.h"
#include "wafer_members.h"
#include "wfs_model.h"
#include "wfw_abi.h"

static unsigned int n_members(const struct afd *a)
{
	return afd_members(a);
}

/* The members combined (wafer_members_info()), limits the AFD's. */
static void afd_info(struct wafer_dev *dev)
{
	struct afd *a = afd_of(dev);
	struct wafer_info *i = &dev->info;

	wafer_members_info(i, a->ch.m, n_members(a));
	i->max_tokens_per_job = MIN_NZ(i->max_tokens_per_job, AFD_MAX_TOKENS);
	/* As many of the longest jobs as their micro-batches fit at once. */
	i->max_inflight_jobs = AFD_MAX_INFLIGHT / ((AFD_MAX_TOKENS + a->mb - 1) / a->mb);
	if (i->max_inflight_jobs > AFD_MAX_JOBS)
		i->max_inflight_jobs = AFD_MAX_JOBS;
	i->max_models = MIN_NZ(i->max_models, AFD_MAX_MODELS);
	i->max_contexts = MIN_NZ(i->max_contexts, AFD_MAX_CTX);
	/* A job waits on every member twice (attention and FFN each layer). */
	i->job_timeout_ms *= a->ne ? 4 + 2 * a->ne : 2;
}

static void afd_close(struct wafer_dev *dev)
{
	struct afd *a = afd_of(dev);

	wafer_chain_close(&a->ch);
	free(a);
}

/* What the chain asks of the AFD device (wafer_afd_flow.c, wafer_afd_drain.c). */
static const struct wafer_chain_ops afd_chain_ops = {
	.completed = wafer_afd_completed,
	.failed = wafer_afd_failed,
	.running = wafer_afd_running,
};

/*
 * Opens the members, each with its group's options: in process unless
 * they ask for kernel devices, all of one backend.
 */
static int open_members(struct afd *a, const struct wafer_afd_opts *o)
{
	unsigned int k;
	int ret = 0;

	for (k = 0; k < o->n_attn + o->n_ffn + o->n_expert && !ret; k++) {
		unsigned int nf = o->n_attn + o->n_ffn;
		struct wafer_open_opts d = k < o->n_attn ? o->attn[k] : k < nf ?
					   o->ffn[k - o->n_attn] : o->expert[k - nf];

		if (d.backend == WAFER_BACKEND_AUTO)
			d.backend = WAFER_BACKEND_INPROC;
		ret = wafer_open(&d, &a->ch.m[k]);
		if (ret)
			return wafer_prefix_error(ret, "%s device %u",
						  k < o->n_attn ? "attention" : k < nf ? "FFN" :
						  "expert", k < o->n_attn ? k : k < nf ?
						  k - o->n_attn : k - nf);
		a->ch.n++;
		if (k < o->n_attn)
			a->na++;
		else if (k < nf)
			a->nf++;
		else
			a->ne++;
		if (!a->ch.m[k]->ops->bo_import)
			ret = wafer_set_error(-EOPNOTSUPP, "the %s backend cannot run the "
					      "ping-pong", a->ch.m[k]->ops->name);
		else if (a->ch.m[k]->ops != a->ch.m[0]->ops)
			ret = wafer_set_error(-EINVAL, "a %s device among %s ones",
					      a->ch.m[k]->ops->name, a->ch.m[0]->ops->name);
		else if (!(a->ch.m[k]->info.caps & WAFER_CAP_LAYER_PARTS))
			ret = wafer_set_error(-EOPNOTSUPP, "the %s device loads whole layers "
					      "only", a->ch.m[k]->ops->name);
		else if (o->n_expert && k >= o->n_attn &&
			 !(a->ch.m[k]->info.caps & WAFER_CAP_EXPERT_PARALLEL))
			ret = wafer_set_error(-EOPNOTSUPP, "the %s device loads no expert-parallel "
					      "parts", a->ch.m[k]->ops->name);
	}
	return ret;
}

int wafer_open_afd(const struct wafer_afd_opts *o, struct wafer_dev **out)
{
	struct wafer_dev *dev;
	struct afd *a;
	int ret;

	if (!out)
		return wafer_set_error(-EINVAL, "wafer_open_afd: no output pointer");
	*out = NULL;
	if (!o || !o->attn || !o->ffn || !o->n_attn || !o->n_ffn ||
	    o->n_attn > AFD_MAX_GROUP || o->n_ffn > AFD_MAX_GROUP)
		return wafer_set_error(-EINVAL, "--afd takes 1..%d attention and 1..%d FFN "
				       "devices", AFD_MAX_GROUP, AFD_MAX_GROUP);
	if (o->n_expert > AFD_MAX_GROUP || (o->n_expert && !o->expert) ||
	    o->n_attn + o->n_ffn + o->n_expert > WAFER_PIPE_MAX_DEVICES)
		return wafer_set_error(-EINVAL, "--expert-devices takes 1..%d devices, %d in all "
				       "with the attention and FFN ones", AFD_MAX_GROUP,
				       WAFER_PIPE_MAX_DEVICES);
	if (o->micro_batch_tokens > AFD_MAX_TOKENS)
		return wafer_set_error(-EINVAL, "micro-batches of %u tokens: 1..%d",
				       o->micro_batch_tokens, AFD_MAX_TOKENS);
	dev = calloc(1, sizeof(*dev));
	a = calloc(1, sizeof(*a));
	if (!dev || !a || wafer_chain_init(&a->ch, &afd_chain_ops)) {
		free(dev);
		free(a);
		return wafer_set_error(-ENOMEM, "out of memory");
	}
	dev->ops = &wafer_afd_backend;
	dev->priv = a;
	a->mb = o->micro_batch_tokens ? o->micro_batch_tokens : AFD_MB;
	ret = open_members(a, o);
	if (ret) {
		afd_close(dev);
		free(dev);
		return ret;
	}
	/* Hooked where every member can be, unless the caller asks otherwise. */
	wafer_chain_hook_members(&a->ch, o->polled);
	dev->index = -1;
	afd_info(dev);
	if (a->mb > dev->info.max_tokens_per_job) {
		ret = wafer_set_error(-EINVAL, "micro-batches of %u tokens: the devices run "
				      "%u at most", a->mb, dev->info.max_tokens_per_job);
		afd_close(dev);
		free(dev);
		return ret;
	}
	*out = dev;
	return 0;
}

static const char *afd_submit_name(const struct wafer_dev *dev)
{
	return wafer_submit_name(afd_of(dev)->ch.m[0]);
}

static struct wafer_dev *afd_member_dev(struct wafer_dev *dev, unsigned int i, unsigned int *n)
{
	struct afd *a = afd_of(dev);

	*n = n_members(a);
	return i < *n ? a->ch.m[i] : NULL;
}

static void afd_bo_destroy(struct wafer_dev *dev, struct wafer_bo *bo)
{
	struct afd_bo *ab = bo->priv;

	wafer_chain_drain(&afd_of(dev)->ch, (struct wafer_chain_gone){ .bo = bo },
			  dev->info.job_timeout_ms);
	wafer_members_bo_destroy(ab->on, n_members(afd_of(dev)));
	free(ab);
}

/* Allocated on member 0, a view on every other. */
static int afd_bo_create(struct wafer_dev *dev, struct wafer_bo *bo)
{
	struct afd *a = afd_of(dev);
	struct afd_bo *ab = calloc(1, sizeof(*ab));
	int ret;

	if (!ab)
		return wafer_set_error(-ENOMEM, "out of memory");
	bo->priv = ab;
	ret = wafer_members_bo_create(a->ch.m, n_members(a), bo, ab->on);
	if (ret)
		free(ab);
	return ret;
}

/* Unloads the first @loaded members' parts and frees the buffers. */
static void model_free(struct afd *a, struct afd_model *am, unsigned int loaded)
{
	unsigned int k = n_members(a);

	while (k-- > 1)
		wafer_bo_destroy(am->view[k]);
	wafer_bo_destroy(am->buf);
	for (k = 0; k < loaded; k++)
		a->ch.m[k]->ops->model_unload(a->ch.m[k], am->ld[k].id);
	memset(am, 0, sizeof(*am));
}

/*
 * Member @k's part: its group's share of the layers (an expert member:
 * its routed experts of every layer; the FFN members are then homes).
 */
static int model_load_member(struct afd *a, struct afd_model *am, struct wafer_bo *blob,
			     size_t len, unsigned int k)
{
	unsigned int xk = a->na + a->nf, g = k < a->na ? 0 : k < xk ? a->na : xk;
	unsigned int n = k < a->na ? a->na : k < xk ? a->nf : a->ne, i = k - g;
	struct wafer_load_hw *ld = &am->ld[k];
	int ret;

	ld->part = k < a->na ? WFW_PART_ATTN : k >= xk ? WFW_PART_XSHARD :
		   a->ne ? WFW_PART_XHOME : WFW_PART_FFN;
	ld->layer_first = k < xk ? i * am->L / n : 0;
	ld->layer_count = k < xk ? (i + 1) * am->L / n - ld->layer_first : am->L;
	if (k >= xk)
		wafer_afd_ep_range(a, am->n_experts, i, &ld->expert_first, &ld->expert_count);
	ret = a->ch.m[k]->ops->model_load(a->ch.m[k], afd_bo_on(blob, k), len, ld);
	if (ret && k >= xk)
		return wafer_prefix_error(ret, "expert device %u (experts %u..%u)", i,
					  ld->expert_first,
					  ld->expert_first + ld->expert_count - 1);
	if (ret)
		return wafer_prefix_error(ret, "%s device %u (layers %u..%u)",
					  k < a->na ? "attention" : "FFN", i, ld->layer_first,
					  ld->layer_first + ld->layer_count - 1);
	if (k < a->na)
		am->act_size = ld->act_size;
	return 0;
}

/* The micro-batches' buffers: two halves per slot, seen by every member. */
static int model_bufs(struct afd *a, struct afd_model *am)
{
	uint64_t rec = am->act_size > WAFER_RESULT_SIZE(WAFER_MAX_TOPK) ?
		       am->act_size : WAFER_RESULT_SIZE(WAFER_MAX_TOPK);
	unsigned int k;
	int ret;

	if (am->xrec > rec)
		rec = am->xrec;
	am->half = (rec * a->mb + 16 + 63) & ~63ull;
	ret = wafer_bo_create(a->ch.m[0], am->nhalf * am->half * AFD_MAX_INFLIGHT, &am->buf);
	am->view[0] = am->buf;
	for (k = 1; k < n_members(a) && !ret; k++)
		ret = wafer_bo_import(a->ch.m[k], am->buf, &am->view[k]);
	return ret;
}

static int afd_model_load(struct wafer_dev *dev, struct wafer_bo *bo, size_t len,
			  struct wafer_load_hw *out)
{
	struct afd *a = afd_of(dev);
	struct wfs_model_info mi;
	struct afd_model *am;
	unsigned int k, id;
	int ret;

	if (out->stream)
		return wafer_set_error(-EOPNOTSUPP, "layer parts are not streamed: the model "
				       "must fit resident (--stream-weights off)");
	ret = wfs_model_parse(bo->map, len, &mi);
	if (ret)
		return wafer_set_error(ret, "the model blob is not valid");
	if (mi.n_layers < a->na || mi.n_layers < a->nf)
		return wafer_set_error(-EINVAL, "%u layers cannot go to %u attention and %u FFN "
				       "devices", mi.n_layers, a->na, a->nf);
	for (id = 0; id < AFD_MAX_MODELS && a->models[id].used; id++)
		;
	if (id == AFD_MAX_MODELS)
		return wafer_set_error(-EBUSY, "%d models are loaded already", AFD_MAX_MODELS);
	am = &a->models[id];
	ret = wafer_afd_ep_load(a, am, &mi, out->expert_group);
	if (ret) {
		memset(am, 0, sizeof(*am));
		return ret;
	}
	am->used = 1;
	am->L = mi.n_layers;
	for (k = 0; k < n_members(a); k++) {
		/* Expert groups are the FFN parts' (attention has no experts). */
		am->ld[k].expert_group = k < a->na ? 0 : out->expert_group;
		ret = model_load_member(a, am, bo, len, k);
		if (ret) {
			model_free(a, am, k);
			return ret;
		}
	}
	ret = model_bufs(a, am);
	if (ret) {
		model_free(a, am, n_members(a));
		return ret;
	}
	out->id = id + 1;
	out->n_layers = mi.n_layers;
	out->embed = 1;
	out->head = 1;
	out->act_size = am->act_size;
	for (k = 0; k < n_members(a); k++)
		out->sram_bytes += am->ld[k].sram_bytes;
	return 0;
}

static int afd_model_unload(struct wafer_dev *dev, uint32_t id)
{
	struct afd *a = afd_of(dev);

	wafer_chain_drain(&a->ch, (struct wafer_chain_gone){ .model = id },
			  dev->info.job_timeout_ms);
	model_free(a, &a->models[id - 1], n_members(a));
	return 0;
}

static int afd_model_parts(const struct wafer_dev *dev, uint32_t id,
			   struct wafer_model_part *out, unsigned int max)
{
	const struct afd *a = afd_of(dev);
	const struct afd_model *am = &a->models[id - 1];
	unsigned int k, c;

	for (k = 0; k < n_members(a) && k < max; k++) {
		out[k] = (struct wafer_model_part){
			.member = k, .device_index = a->ch.m[k]->index,
			.layer_first = am->ld[k].layer_first, .layer_count = am->ld[k].n_layers,
			.sram_bytes = am->ld[k].sram_bytes,
			.embed = am->ld[k].embed, .head = am->ld[k].head,
			.part = k < a->na ? WAFER_PART_ATTN : k < a->na + a->nf ? WAFER_PART_FFN :
				WAFER_PART_EXPERTS,
			.expert_first = am->ld[k].expert_first,
			.expert_count = am->ld[k].expert_count,
		};
		for (c = 0; c < AFD_MAX_CTX; c++)
			if (a->ctxs[c].used && a->ctxs[c].model == id - 1)
				out[k].kv_bytes += a->ctxs[c].kv[k];
	}
	return (int)n_members(a);
}

/* Member @k's id of model @id's part (every member holds one). */
static uint32_t afd_member_model(const struct wafer_dev *dev, uint32_t id, unsigned int k)
{
	return afd_of(dev)->models[id - 1].ld[k].id;
}

static void ctx_free(struct afd *a, struct afd_ctx *ac, unsigned int made)
{
	unsigned int k;

	for (k = 0; k < made; k++)
		a->ch.m[k]->ops->ctx_destroy(a->ch.m[k], ac->id[k]);
	free(ac->done_ns);
	memset(ac, 0, sizeof(*ac));
}

static int afd_ctx_create(struct wafer_dev *dev, uint32_t model_id, unsigned int slots,
			  unsigned int ctx_len, uint32_t *id, uint64_t *kv_bytes)
{
	struct afd *a = afd_of(dev);
	struct afd_model *am = &a->models[model_id - 1];
	struct afd_ctx *ac;
	unsigned int c, k;
	int ret = 0;

	for (c = 0; c < AFD_MAX_CTX && a->ctxs[c].used; c++)
		;
	if (c == AFD_MAX_CTX)
		return wafer_set_error(-EBUSY, "%d contexts exist already", AFD_MAX_CTX);
	ac = &a->ctxs[c];
	ac->done_ns = calloc(slots, sizeof(*ac->done_ns));
	if (!ac->done_ns)
		return wafer_set_error(-ENOMEM, "out of memory");
	*kv_bytes = 0;
	for (k = 0; k < n_members(a) && !ret; k++) {
		ret = a->ch.m[k]->ops->ctx_create(a->ch.m[k], am->ld[k].id, slots, ctx_len,
					       &ac->id[k], &ac->kv[k]);
		if (ret)
			ret = wafer_prefix_error(ret, "device %u", k);
		else
			*kv_bytes += ac->kv[k];
	}
	if (ret) {
		ctx_free(a, ac, k - 1);
		return ret;
	}
	ac->used = 1;
	ac->model = model_id - 1;
	ac->slots = slots;
	*id = c + 1;
	return 0;
}

static int afd_ctx_destroy(struct wafer_dev *dev, uint32_t id)
{
	struct afd *a = afd_of(dev);

	wafer_chain_drain(&a->ch, (struct wafer_chain_gone){ .ctx = id },
			  dev->info.job_timeout_ms);
	ctx_free(a, &a->ctxs[id - 1], n_members(a));
	return 0;
}

/* Counters: every micro-batch ends on the last FFN member (wafer_members_stats()). */
static int afd_stats(struct wafer_dev *dev, struct wafer_dev_stats *st)
{
	struct afd *a = afd_of(dev);

	return wafer_members_stats(a->ch.m, n_members(a), st);
}

const struct wafer_backend_ops wafer_afd_backend = {
	.name = "afd",
	.close = afd_close,
	.submit_name = afd_submit_name,
	.bo_create = afd_bo_create,
	.bo_destroy = afd_bo_destroy,
	.model_load = afd_model_load,
	.model_unload = afd_model_unload,
	.ctx_create = afd_ctx_create,
	.ctx_destroy = afd_ctx_destroy,
	.submit = wafer_afd_submit,
	.reap = wafer_afd_reap,
	.stats = afd_stats,
	.model_parts = afd_model_parts,
	.member = afd_member_dev,
	.member_model = afd_member_model,
	.times_len = wafer_afd_times_len,
};
