// SPDX-License-Identifier: MIT
/* ref_moe.c - fp32 mixture-of-experts FFN (see ref_moe.h). */
#include <errno.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ref_moe.h"
#include "wfs_model.h"

int ref_moe_init(struct ref_moe *m, const struct wfs_ckpt *c, unsigned int n_experts,
		 unsigned int top_k, unsigned int n_shared, unsigned int gate,
		 unsigned int group_size)
{
	unsigned int P = n_shared + n_experts, hd = c->hidden_dim, dim = c->dim;
	unsigned int G = (hd + group_size - 1) / group_size, p, e, r, j, l;

	memset(m, 0, sizeof(*m));
	if (!n_experts || !top_k || top_k > n_experts || P > G)
		return -EINVAL;
	m->n_experts = n_experts;
	m->top_k = top_k;
	m->n_shared = n_shared;
	m->gate = gate;
	m->dim = dim;
	m->cut = calloc(P + 1, sizeof(*m->cut));
	m->router = calloc((size_t)c->n_layers * n_experts * dim, sizeof(float));
	m->logits = calloc(n_experts, sizeof(float));
	if (!m->cut || !m->router || !m->logits) {
		ref_moe_free(m);
		return -ENOMEM;
	}
	for (p = 0; p <= P; p++) {
		unsigned int g = (unsigned int)((unsigned long long)p * G / P);

		m->cut[p] = g * group_size < hd ? g * group_size : hd;
	}
	for (l = 0; l < (unsigned int)c->n_layers; l++)
		for (e = 0; e < n_experts; e++) {
			unsigned int r0 = m->cut[n_shared + e], r1 = m->cut[n_shared + e + 1];
			float *row = m->router + ((size_t)l * n_experts + e) * dim;

			for (j = 0; j < dim; j++) {
				double sum = 0;

				for (r = r0; r < r1; r++)
					sum += c->w1[((size_t)l * hd + r) * dim + j];
				row[j] = (float)(sum / (r1 - r0));
			}
		}
	return 0;
}

int ref_moe_router_from(struct ref_moe *m, int l, const struct wfs_qmat *r)
{
	unsigned int e, j;

	if (r->qtype != WFS_QT_INT8 || r->rows != m->n_experts || r->cols != m->dim)
		return -EINVAL;
	for (e = 0; e < m->n_experts; e++)
		for (j = 0; j < m->dim; j++) {
			int q = (int8_t)r->data[(size_t)e * r->row_bytes + j];
			unsigned int sc = r->scales[(size_t)e * r->n_groups + j / r->group_size];

			m->router[((size_t)l * m->n_experts + e) * m->dim + j] =
				ldexpf((float)q * (float)sc, r->scale_exp);
		}
	return 0;
}

void ref_moe_free(struct ref_moe *m)
{
	free(m->cut);
	free(m->router);
	free(m->logits);
	memset(m, 0, sizeof(*m));
}

void ref_moe_route(const struct ref_moe *m, const float *lg, unsigned int *sel, float *g)
{
	unsigned int k = m->top_k, n = 0, e, j;
	float sum = 0, mx;

	for (e = 0; e < m->n_experts; e++) {
		if (n == k && lg[e] <= lg[sel[k - 1]])
			continue;
		j = n < k ? n++ : k - 1;
		for (; j > 0 && lg[e] > lg[sel[j - 1]]; j--)
			sel[j] = sel[j - 1];
		sel[j] = e;
	}
	mx = lg[sel[0]];
	for (j = 0; j < k; j++) {
		g[j] = m->gate == WFS_GATE_SOFTMAX ? expf(lg[sel[j]] - mx) :
		       m->gate == WFS_GATE_SIGMOID ? 1.0f / (1.0f + expf(-lg[sel[j]])) : 1.0f;
		sum += g[j];
	}
	for (j = 0; m->gate != WFS_GATE_UNIT && j < k; j++)
		g[j] /= sum;
}

/* Expert @p's SwiGLU units, weighed by @g, into @out (dim). */
static void expert(const struct ref_moe *m, const struct ref_state *s, int l, unsigned int p,
		   float g, float *out)
{
	const struct wfs_ckpt *c = s->c;
	size_t hd = c->hidden_dim, dim = c->dim, u, i;
	const float *w2 = c->w2 + (size_t)l * dim * hd;

	for (i = 0; i < dim; i++) {
		float v = 0;

		for (u = m->cut[p]; u < m->cut[p + 1]; u++)
			v += w2[i * hd + u] * s->hb[u];
		out[i] += g * v;
	}
}

void ref_moe_ffn(const struct ref_moe *m, struct ref_state *s, int l)
{
	const struct wfs_ckpt *c = s->c;
	size_t hd = c->hidden_dim, dim = c->dim, i, j;
	unsigned int sel[WFS_MAX_EXPERTS_ACTIVE], p;
	float g[WFS_MAX_EXPERTS_ACTIVE];

	for (i = 0; i < hd; i++) {
		const float *w1 = c->w1 + ((size_t)l * hd + i) * dim;
		const float *w3 = c->w3 + ((size_t)l * hd + i) * dim;
		float a = 0, b = 0;

		for (j = 0; j < dim; j++) {
			a += w1[j] * s->xb[j];
			b += w3[j] * s->xb[j];
		}
		s->hb[i] = a / (1.0f + expf(-a)) * b;
	}
	for (p = 0; p < m->n_experts; p++) {
		const float *r = m->router + ((size_t)l * m->n_experts + p) * dim;
		float v = 0;

		for (j = 0; j < dim; j++)
			v += r[j] * s->xb[j];
		m->logits[p] = v;
	}
	ref_moe_route(m, m->logits, sel, g);
	memset(s->xb2, 0, dim * sizeof(float));
	for (p = 0; p < m->n_shared; p++)
		expert(m, s, l, p, 1.0f, s->xb2);
	for (p = 0; p < m->top_k; p++)
		expert(m, s, l, m->n_shared + sel[p], g[p], s->xb2);
	for (i = 0; i < dim; i++)
		s->x[i] += s->xb2[i];
}
