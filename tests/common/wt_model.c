// SPDX-License-Identifier: MIT
/* wt_model.c - see wt_model.h */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wt_model.h"
#include "wt_util.h"

static void *copy_sec(const void *blob, const struct wfs_section_range *r)
{
	void *p = wt_alloc(r->size);

	if (p)
		memcpy(p, (const uint8_t *)blob + r->offset, r->size);
	return p;
}

int wt_model_open(struct wt_model *m, const void *blob, size_t len,
		  uint32_t ctx, unsigned int kv_bits)
{
	struct wfs_section_range r;
	uint32_t l;
	int ret;

	memset(m, 0, sizeof(*m));
	ret = wfs_model_parse(blob, len, &m->info);
	if (ret)
		return ret;
	if (kv_bits)
		m->info.kv_bits = kv_bits;
	m->ctx = ctx;
	m->layer_sec = calloc(m->info.n_layers, sizeof(void *));
	m->lv = calloc(m->info.n_layers, sizeof(*m->lv));
	m->kv = calloc(m->info.n_layers, sizeof(void *));
	m->act = wt_alloc(wfs_act_bytes(&m->info));
	m->lscratch = wt_alloc(wfs_layer_scratch_bytes(&m->info, ctx));
	m->hscratch = wt_alloc(wfs_head_scratch_bytes(&m->info));
	if (!m->layer_sec || !m->lv || !m->kv || !m->act || !m->lscratch ||
	    !m->hscratch)
		goto nomem;
	if (m->info.embed.size) {
		m->embed_sec = copy_sec(blob, &m->info.embed);
		if (!m->embed_sec)
			goto nomem;
		ret = wfs_embed_bind(&m->info, m->embed_sec,
				     m->info.embed.size, &m->ev);
		if (ret)
			goto fail;
	}
	if (m->info.head.size) {
		m->head_sec = copy_sec(blob, &m->info.head);
		if (!m->head_sec)
			goto nomem;
		ret = wfs_head_bind(&m->info, m->head_sec, m->info.head.size,
				    &m->hv);
		if (ret)
			goto fail;
	}
	for (l = 0; l < m->info.n_layers; l++) {
		ret = wfs_model_layer_section(&m->info, blob, l, &r);
		if (ret)
			goto fail;
		m->layer_sec[l] = copy_sec(blob, &r);
		m->kv[l] = wt_alloc(wfs_kv_bytes(&m->info, ctx));
		if (!m->layer_sec[l] || !m->kv[l])
			goto nomem;
		ret = wfs_layer_bind(&m->info, m->layer_sec[l], r.size, l,
				     &m->lv[l]);
		if (ret)
			goto fail;
	}
	return 0;
nomem:
	ret = -ENOMEM;
fail:
	wt_model_close(m);
	return ret;
}

void wt_model_close(struct wt_model *m)
{
	uint32_t l;

	for (l = 0; m->layer_sec && l < m->info.n_layers; l++)
		free(m->layer_sec[l]);
	for (l = 0; m->kv && l < m->info.n_layers; l++)
		free(m->kv[l]);
	free(m->layer_sec);
	free(m->kv);
	free(m->lv);
	free(m->embed_sec);
	free(m->head_sec);
	free(m->act);
	free(m->lscratch);
	free(m->hscratch);
	memset(m, 0, sizeof(*m));
}

int wt_model_layers(struct wt_model *m, uint32_t token, uint32_t pos)
{
	uint32_t l;

	if (pos >= m->ctx)
		return -EINVAL;
	if (m->info.input_kind == WFS_IO_TOKENS &&
	    wfs_embed(&m->ev, token, m->act))
		return -EINVAL;
	for (l = 0; l < m->info.n_layers; l++)
		wfs_layer_forward(&m->lv[l], m->kv[l], pos, m->act,
				  m->lscratch);
	return 0;
}

uint32_t wt_model_step(struct wt_model *m, uint32_t token, uint32_t pos,
		       uint32_t k, struct wfs_topk_entry *topk)
{
	uint32_t am = 0;

	if (wt_model_layers(m, token, pos))
		return UINT32_MAX;
	wfs_head(&m->hv, m->act, k, topk, &am, m->hscratch);
	return am;
}

void wt_model_tokens(uint64_t seed, uint32_t nseq, uint32_t npos, uint32_t vocab,
		     uint32_t *ids)
{
	struct wt_rng r;
	uint32_t s, p;

	wt_rng_seed(&r, seed);
	for (s = 0; s < nseq; s++) {
		ids[s * npos] = 1;	/* BOS */
		for (p = 1; p < npos; p++)
			ids[s * npos + p] = (uint32_t)wt_rng_range(&r, 3, vocab - 1);
	}
}

int wt_model_reference(const void *blob, size_t len, uint32_t ctx, const uint32_t *ids,
		       uint32_t nseq, uint32_t npos, uint32_t k, uint32_t *argmax,
		       struct wfs_topk_entry *topk)
{
	struct wt_model m;
	uint32_t s, p, i;

	for (s = 0; s < nseq; s++) {
		if (wt_model_open(&m, blob, len, ctx, 0))
			return -1;
		for (p = 0; p < npos; p++) {
			i = s * npos + p;
			argmax[i] = wt_model_step(&m, ids[i], p, k, topk + (size_t)i * k);
		}
		wt_model_close(&m);
	}
	return 0;
}
