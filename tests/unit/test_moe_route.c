// SPDX-License-Identifier: MIT
/*
 * MoE top-k routing with equal router logits: firmware-sim's integer
 * router (wfs_moe_route()) and the fp32 reference (ref_moe_route()) keep
 * the k largest logits and break ties to the lower expert index, whether
 * the tie straddles the k-th place, sits inside the kept set, or comes
 * before a larger logit that pushes one of the tied experts out.  Equal
 * logits get equal gates.  The expected set is computed here by sorting
 * (logit descending, index ascending), independently of both routers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_moe.h"
#include "wfs_model.h"
#include "wfs_moe.h"
#include "wt_util.h"

#define DIM	64
#define MAXE	16

/**
 * struct tcase - one routing case
 * @what: its name
 * @e: experts
 * @k: experts kept
 * @l: router logits (integers)
 */
struct tcase {
	const char *what;
	unsigned int e;
	unsigned int k;
	int l[MAXE];
};

static const struct tcase cases[] = {
	{ "all equal", 8, 2, { 3, 3, 3, 3, 3, 3, 3, 3 } },
	{ "a tie at the k-th place", 4, 2, { 5, 3, 3, 1 } },
	{ "a tie, then a larger logit", 3, 2, { 1, 1, 2 } },
	{ "a tie of the best, larger ones later", 6, 2, { 2, 2, 1, 4, 0, 4 } },
	{ "five tied for three places", 8, 3, { 0, 4, 4, 4, 4, 0, 4, 4 } },
	{ "ties every other expert", 6, 3, { 3, 1, 3, 1, 3, 1 } },
	{ "ties on odd experts", 6, 2, { 1, 3, 1, 3, 1, 3 } },
	{ "k = E", 4, 4, { 2, 2, 2, 2 } },
	{ "top-1 of a tie at the end", 5, 1, { -2, -1, 0, 7, 7 } },
	{ "negative ties", 5, 2, { -3, -1, -1, -1, -4 } },
};

/* The kept set, ascending: sort by (logit desc, index asc), take k. */
static void expected(const struct tcase *c, unsigned int *set)
{
	unsigned int order[MAXE], i, j, t, n = c->k;

	for (i = 0; i < c->e; i++)
		order[i] = i;
	for (i = 1; i < c->e; i++)
		for (j = i; j > 0; j--) {
			unsigned int a = order[j - 1], b = order[j];

			if (c->l[a] > c->l[b] || (c->l[a] == c->l[b] && a < b))
				break;
			order[j - 1] = b;
			order[j] = a;
		}
	for (i = 0; i < n; i++)
		set[i] = order[i];
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && set[j] < set[j - 1]; j--) {
			t = set[j];
			set[j] = set[j - 1];
			set[j - 1] = t;
		}
}

static void set_str(const unsigned int *s, unsigned int n, char *buf, size_t len)
{
	size_t o = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%u", i ? "," : "", s[i]);
}

/* Firmware: an int8 router whose row e is (l[e], 0, ...), input (2^14, 0, ...). */
static void test_firmware(const struct tcase *c)
{
	struct wfs_layer_view v;
	struct wfs_moe_sel sel;
	s8 *w = wt_alloc(MAXE * DIM);
	u16 *sc = wt_alloc(MAXE * sizeof(u16));
	s16 *h = wt_alloc(DIM * sizeof(s16));
	s64 *lg = wt_alloc((MAXE + WFS_MAX_EXPERTS_ACTIVE) * sizeof(s64));
	unsigned int want[MAXE], i, j, same;
	char a[64], b[64];
	int gates_ok = 1;

	memset(&v, 0, sizeof(v));
	for (i = 0; i < c->e; i++) {
		w[i * DIM] = (s8)c->l[i];
		sc[i] = 1;
	}
	h[0] = 1 << 14;
	v.dim = DIM;
	v.n_experts = c->e;
	v.n_active = c->k;
	v.gate_kind = WFS_GATE_SOFTMAX;
	v.router = (struct wfs_qmat){ .data = (const u8 *)w, .scales = sc, .rows = c->e,
				      .cols = DIM, .group_size = DIM, .n_groups = 1,
				      .row_bytes = DIM, .qtype = WFS_QT_INT8, .scale_exp = 0 };
	wfs_moe_route(&v, h, -14, lg, &sel);
	expected(c, want);
	same = sel.n == c->k;
	for (i = 0; same && i < c->k; i++)
		same = sel.expert[i] == want[i];
	/* equal logits, equal gates */
	for (i = 0; i < sel.n; i++)
		for (j = 0; j < sel.n; j++)
			if (sel.expert[i] < c->e && sel.expert[j] < c->e &&
			    c->l[sel.expert[i]] == c->l[sel.expert[j]] && sel.gate[i] != sel.gate[j])
				gates_ok = 0;
	set_str(sel.expert, sel.n, a, sizeof(a));
	set_str(want, c->k, b, sizeof(b));
	wt_ok(same, "firmware, %s (top-%u of %u): experts {%s}, want {%s}", c->what, c->k, c->e,
	      a, b);
	wt_ok(gates_ok, "firmware, %s: tied experts get equal gates", c->what);
	free(w);
	free(sc);
	free(h);
	free(lg);
}

static void test_reference(const struct tcase *c)
{
	struct ref_moe m;
	float lg[MAXE], g[WFS_MAX_EXPERTS_ACTIVE];
	unsigned int sel[WFS_MAX_EXPERTS_ACTIVE], want[MAXE], i, j, t, same = 1;
	char a[64], b[64];

	memset(&m, 0, sizeof(m));
	m.n_experts = c->e;
	m.top_k = c->k;
	m.gate = WFS_GATE_SOFTMAX;
	for (i = 0; i < c->e; i++)
		lg[i] = (float)c->l[i] * 0.37f;
	ref_moe_route(&m, lg, sel, g);
	for (i = 1; i < c->k; i++)
		for (j = i; j > 0 && sel[j] < sel[j - 1]; j--) {
			t = sel[j];
			sel[j] = sel[j - 1];
			sel[j - 1] = t;
		}
	expected(c, want);
	for (i = 0; i < c->k; i++)
		same &= sel[i] == want[i];
	set_str(sel, c->k, a, sizeof(a));
	set_str(want, c->k, b, sizeof(b));
	wt_ok(same, "reference, %s (top-%u of %u): experts {%s}, want {%s}", c->what, c->k, c->e,
	      a, b);
}

int main(void)
{
	unsigned int i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		test_firmware(&cases[i]);
		test_reference(&cases[i]);
	}
	return wt_done();
}
