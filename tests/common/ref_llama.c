// SPDX-License-Identifier: MIT
/* ref_llama.c - fp32 reference forward pass, after llama2.c run.c. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref_llama.h"
#include "ref_moe.h"

int ref_init(struct ref_state *s, const struct wfs_ckpt *c, int ctx)
{
	int kv = c->dim * c->n_kv_heads / c->n_heads;
	int big = c->hidden_dim > c->dim ? c->hidden_dim : c->dim;

	memset(s, 0, sizeof(*s));
	s->c = c;
	s->ctx = ctx;
	s->x = calloc(c->dim, sizeof(float));
	s->xb = calloc(big, sizeof(float));
	s->xb2 = calloc(c->dim, sizeof(float));
	s->hb = calloc(c->hidden_dim, sizeof(float));
	s->hb2 = calloc(c->hidden_dim, sizeof(float));
	s->q = calloc(c->dim, sizeof(float));
	s->att = calloc((size_t)c->n_heads * ctx, sizeof(float));
	s->logits = calloc(c->vocab_size, sizeof(float));
	s->key_cache = calloc((size_t)c->n_layers * ctx * kv, sizeof(float));
	s->value_cache = calloc((size_t)c->n_layers * ctx * kv, sizeof(float));
	if (!s->x || !s->xb || !s->xb2 || !s->hb || !s->hb2 || !s->q ||
	    !s->att || !s->logits || !s->key_cache || !s->value_cache) {
		ref_free(s);
		return -ENOMEM;
	}
	return 0;
}

void ref_free(struct ref_state *s)
{
	free(s->x);
	free(s->xb);
	free(s->xb2);
	free(s->hb);
	free(s->hb2);
	free(s->q);
	free(s->att);
	free(s->logits);
	free(s->key_cache);
	free(s->value_cache);
	memset(s, 0, sizeof(*s));
}

static void rmsnorm(float *o, const float *x, const float *w, int n)
{
	float ss = 0.0f;
	int j;

	for (j = 0; j < n; j++)
		ss += x[j] * x[j];
	ss /= n;
	ss += 1e-5f;
	ss = 1.0f / sqrtf(ss);
	for (j = 0; j < n; j++)
		o[j] = w[j] * (ss * x[j]);
}

static void softmax(float *x, int n)
{
	float mx = x[0], sum = 0.0f;
	int i;

	for (i = 1; i < n; i++)
		if (x[i] > mx)
			mx = x[i];
	for (i = 0; i < n; i++) {
		x[i] = expf(x[i] - mx);
		sum += x[i];
	}
	for (i = 0; i < n; i++)
		x[i] /= sum;
}

static void matmul(float *xout, const float *x, const float *w, int n, int d)
{
	int i, j;

	for (i = 0; i < d; i++) {
		float val = 0.0f;

		for (j = 0; j < n; j++)
			val += w[(size_t)i * n + j] * x[j];
		xout[i] = val;
	}
}

float *ref_forward(struct ref_state *s, int token, int pos)
{
	const struct wfs_ckpt *w = s->c;
	int dim = w->dim, hd = w->hidden_dim, hs = dim / w->n_heads;
	int kv_dim = hs * w->n_kv_heads, kv_mul = w->n_heads / w->n_kv_heads;
	float *x = s->x;
	size_t l;
	int i, h, t;

	memcpy(x, w->tok_emb + (size_t)token * dim, dim * sizeof(float));
	for (l = 0; l < (size_t)w->n_layers; l++) {
		size_t loff = l * s->ctx * kv_dim;
		float *k = s->key_cache + loff + (size_t)pos * kv_dim;
		float *v = s->value_cache + loff + (size_t)pos * kv_dim;

		rmsnorm(s->xb, x, w->rms_att + l * dim, dim);
		matmul(s->q, s->xb, w->wq + l * dim * dim, dim, dim);
		matmul(k, s->xb, w->wk + l * kv_dim * dim, dim, kv_dim);
		matmul(v, s->xb, w->wv + l * kv_dim * dim, dim, kv_dim);
		for (i = 0; i < dim; i += 2) {
			int head_dim = i % hs;
			float freq = 1.0f / powf(10000.0f, head_dim / (float)hs);
			float val = pos * freq, fcr = cosf(val), fci = sinf(val);
			int rotn = i < kv_dim ? 2 : 1, r;

			for (r = 0; r < rotn; r++) {
				float *vec = r == 0 ? s->q : k;
				float v0 = vec[i], v1 = vec[i + 1];

				vec[i] = v0 * fcr - v1 * fci;
				vec[i + 1] = v0 * fci + v1 * fcr;
			}
		}
		for (h = 0; h < w->n_heads; h++) {
			const float *q = s->q + h * hs;
			float *att = s->att + (size_t)h * s->ctx;
			float *xb = s->xb + h * hs;

			for (t = 0; t <= pos; t++) {
				const float *kt = s->key_cache + loff +
						  (size_t)t * kv_dim +
						  (h / kv_mul) * hs;
				float score = 0.0f;

				for (i = 0; i < hs; i++)
					score += q[i] * kt[i];
				att[t] = score / sqrtf(hs);
			}
			softmax(att, pos + 1);
			memset(xb, 0, hs * sizeof(float));
			for (t = 0; t <= pos; t++) {
				const float *vt = s->value_cache + loff +
						  (size_t)t * kv_dim +
						  (h / kv_mul) * hs;

				for (i = 0; i < hs; i++)
					xb[i] += att[t] * vt[i];
			}
		}
		matmul(s->xb2, s->xb, w->wo + l * dim * dim, dim, dim);
		for (i = 0; i < dim; i++)
			x[i] += s->xb2[i];
		rmsnorm(s->xb, x, w->rms_ffn + l * dim, dim);
		if (s->moe) {
			ref_moe_ffn(s->moe, s, (int)l);
			continue;
		}
		matmul(s->hb, s->xb, w->w1 + l * dim * hd, dim, hd);
		matmul(s->hb2, s->xb, w->w3 + l * dim * hd, dim, hd);
		for (i = 0; i < hd; i++) {
			float val = s->hb[i];

			val *= 1.0f / (1.0f + expf(-val));
			s->hb[i] = val * s->hb2[i];
		}
		matmul(s->xb, s->hb, w->w2 + l * dim * hd, hd, dim);
		for (i = 0; i < dim; i++)
			x[i] += s->xb[i];
	}
	rmsnorm(x, x, w->rms_final, dim);
	matmul(s->logits, x, w->wcls, dim, w->vocab_size);
	return s->logits;
}

int ref_argmax(const float *v, int n)
{
	int i, best = 0;

	for (i = 1; i < n; i++)
		if (v[i] > v[best])
			best = i;
	return best;
}

int ref_greedy(const struct wfs_ckpt *c, int n, int *toks)
{
	struct ref_state s;
	int i, ret = ref_init(&s, c, n);

	if (ret)
		return ret;
	toks[0] = 1;
	for (i = 0; i + 1 < n; i++)
		toks[i + 1] = ref_argmax(ref_forward(&s, toks[i], i),
					 c->vocab_size);
	ref_free(&s);
	return 0;
}
