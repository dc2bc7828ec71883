// SPDX-License-Identifier: MIT
/*
 * libwafer: synthetic models.  A checkpoint of any shape with seeded
 * pseudo-random weights, packed (and upcycled to experts) by the same path
 * as a real one (wafer_convert_ckpt()), and tiny shapes of wafer plan's
 * presets, so that a seed-sized layer count with its experts runs in
 * process and in a test guest.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "wafer_internal.h"
#include "wafer.h"
#include "wfs_model.h"
#include "wfs_pack.h"

#define SYNTH_HEADS		8
#define SYNTH_HEAD_DIM		4
#define SYNTH_VOCAB		512
#define SYNTH_SEQ		512

int wafer_synth_preset(const char *preset, struct wafer_synth_opts *s,
		       struct wafer_moe_opts *moe)
{
	const struct wafer_plan_shape *p = preset ? wafer_plan_preset_find(preset) : NULL;

	if (!p || !s || !moe)
		return wafer_set_error(-EINVAL, "synthetic: unknown preset %s (wafer plan --list)",
				       preset ? preset : "(null)");
	if (p->n_experts && p->moe_every > 1)
		return wafer_set_error(-EINVAL, "synthetic: %s has experts in every %u-th layer "
				       "only; a synthetic model has them in every layer",
				       preset, p->moe_every);
	memset(s, 0, sizeof(*s));
	memset(moe, 0, sizeof(*moe));
	s->n_layers = p->n_layers;
	s->n_heads = SYNTH_HEADS;
	s->n_kv_heads = SYNTH_HEADS * p->n_kv_heads / p->n_heads;
	if (!s->n_kv_heads)
		s->n_kv_heads = 1;
	s->dim = SYNTH_HEADS * SYNTH_HEAD_DIM;
	s->vocab = SYNTH_VOCAB;
	s->seq_len = SYNTH_SEQ;
	s->seed = 1;
	moe->n_experts = p->n_experts;
	moe->top_k = p->n_active;
	moe->n_shared = p->n_shared;
	moe->gate = WAFER_MOE_GATE_SOFTMAX;
	return 0;
}

/* splitmix64: a seeded stream, the same on every host. */
static uint64_t synth_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* @n values uniform in [-@scale, @scale]. */
static void synth_fill(float *w, size_t n, float scale, uint64_t *state)
{
	size_t i;

	for (i = 0; i < n; i++)
		w[i] = scale * (float)((double)(synth_next(state) >> 11) / (double)(1ull << 52) - 1.0);
}

static void synth_ones(float *w, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		w[i] = 1.0f;
}

static int synth_check(const struct wafer_synth_opts *s, unsigned int hidden)
{
	if (!s->n_layers || s->n_layers > WFS_MAX_LAYERS)
		return wafer_set_error(-EINVAL, "synthetic: layers %u (1..%u)", s->n_layers,
				       WFS_MAX_LAYERS);
	if (!s->n_heads || !s->n_kv_heads || s->n_heads % s->n_kv_heads)
		return wafer_set_error(-EINVAL, "synthetic: kv heads %u must divide heads %u "
				       "(both >= 1)", s->n_kv_heads, s->n_heads);
	if (!s->dim || s->dim % s->n_heads || (s->dim / s->n_heads) % 2)
		return wafer_set_error(-EINVAL, "synthetic: dim %u must be heads %u x an even "
				       "head width", s->dim, s->n_heads);
	if (!hidden || hidden > WFS_MAX_HIDDEN)
		return wafer_set_error(-EINVAL, "synthetic: hidden %u (1..%u)", hidden,
				       WFS_MAX_HIDDEN);
	if (s->vocab < 4 || s->vocab > WFS_MAX_VOCAB)
		return wafer_set_error(-EINVAL, "synthetic: vocab %u (4..%u)", s->vocab,
				       WFS_MAX_VOCAB);
	if (!s->seq_len || s->seq_len > WFS_MAX_SEQ)
		return wafer_set_error(-EINVAL, "synthetic: seq_len %u (1..%u)", s->seq_len,
				       WFS_MAX_SEQ);
	return 0;
}

int wafer_synthesize(const struct wafer_synth_opts *s, const struct wafer_convert_opts *opts,
		     void **blob, size_t *len)
{
	struct wafer_convert_opts def = { 0 };
	const struct wafer_convert_opts *o = opts ? opts : &def;
	unsigned int group = o->group_size ? o->group_size : 32, hidden;
	size_t L, dim, kv, hid;
	struct wfs_ckpt ck;
	uint64_t state;
	float a, h, r;
	int ret;

	if (!s || !blob || !len)
		return wafer_set_error(-EINVAL, "wafer_synthesize: NULL argument");
	hidden = s->hidden_dim ? s->hidden_dim :
		 o->moe.n_experts ? (o->moe.n_experts + o->moe.n_shared) * group : 4 * s->dim;
	ret = synth_check(s, hidden);
	if (ret)
		return ret;
	memset(&ck, 0, sizeof(ck));
	ck.dim = (int)s->dim;
	ck.hidden_dim = (int)hidden;
	ck.n_layers = (int)s->n_layers;
	ck.n_heads = (int)s->n_heads;
	ck.n_kv_heads = (int)s->n_kv_heads;
	ck.vocab_size = (int)s->vocab;
	ck.seq_len = (int)s->seq_len;
	ck.shared_cls = 0;
	ret = wfs_ckpt_alloc(&ck);
	if (ret)
		return wafer_set_error(ret, "synthetic: %u layers of width %u: %s", s->n_layers,
				       s->dim, wafer_strerror(ret));
	L = s->n_layers;
	dim = s->dim;
	kv = dim / s->n_heads * s->n_kv_heads;
	hid = hidden;
	a = 1.0f / sqrtf((float)dim);
	h = 1.0f / sqrtf((float)hid);
	/* Each layer's outputs 1/sqrt(2 L) smaller: the residual stream stays context-dependent. */
	r = 1.0f / sqrtf(2.0f * (float)L);
	state = s->seed;
	synth_fill(ck.tok_emb, s->vocab * dim, 1.0f, &state);
	synth_ones(ck.rms_att, L * dim);
	synth_fill(ck.wq, L * dim * dim, a, &state);
	synth_fill(ck.wk, L * kv * dim, a, &state);
	synth_fill(ck.wv, L * kv * dim, a, &state);
	synth_fill(ck.wo, L * dim * dim, a * r, &state);
	synth_ones(ck.rms_ffn, L * dim);
	synth_fill(ck.w1, L * hid * dim, a, &state);
	synth_fill(ck.w2, L * dim * hid, h * r, &state);
	synth_fill(ck.w3, L * hid * dim, a, &state);
	synth_ones(ck.rms_final, dim);
	synth_fill(ck.wcls, s->vocab * dim, a, &state);
	ret = wafer_convert_ckpt(&ck, o, "the synthetic model", blob, len);
	wfs_ckpt_free(&ck);
	return ret;
}
