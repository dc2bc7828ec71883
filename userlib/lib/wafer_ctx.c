// SPDX-License-Identifier: MIT
/* libwafer: contexts, the KV cache of a number of sequences. */
#include <errno.h>
#include <stdlib.h>

#include "wafer_backend.h"

#define MAX_SLOTS 256

int wafer_ctx_create(struct wafer_model *m, unsigned int slots, unsigned int ctx_len,
		     struct wafer_ctx **out)
{
	struct wafer_ctx *c;
	int ret;

	if (!m || !out)
		return wafer_set_error(-EINVAL, "wafer_ctx_create: NULL argument");
	*out = NULL;
	if (!slots || slots > MAX_SLOTS)
		return wafer_set_error(-EINVAL, "%u KV slots: must be 1..%d", slots, MAX_SLOTS);
	if (!ctx_len || ctx_len > m->info.seq_len)
		return wafer_set_error(-EINVAL, "context length %u: must be 1..%u (the model's)",
				       ctx_len, m->info.seq_len);
	c = calloc(1, sizeof(*c));
	if (!c)
		return wafer_set_error(-ENOMEM, "out of memory");
	ret = m->dev->ops->ctx_create(m->dev, m->id, slots, ctx_len, &c->id, &c->kv_bytes);
	if (ret) {
		free(c);
		return ret;
	}
	c->model = m;
	c->slots = slots;
	c->ctx_len = ctx_len;
	m->contexts++;
	m->kv_bytes += c->kv_bytes;
	*out = c;
	return 0;
}

unsigned int wafer_ctx_len(const struct wafer_ctx *ctx)
{
	return ctx->ctx_len;
}

unsigned int wafer_ctx_slots(const struct wafer_ctx *ctx)
{
	return ctx->slots;
}

struct wafer_model *wafer_ctx_model(const struct wafer_ctx *ctx)
{
	return ctx->model;
}

void wafer_ctx_destroy(struct wafer_ctx *ctx)
{
	if (!ctx)
		return;
	ctx->model->dev->ops->ctx_destroy(ctx->model->dev, ctx->id);
	ctx->model->contexts--;
	ctx->model->kv_bytes -= ctx->kv_bytes;
	free(ctx);
}
