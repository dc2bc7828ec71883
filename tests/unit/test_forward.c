// SPDX-License-Identifier: MIT
/*
 * test_forward.c - the integer forward pass as the device uses it:
 * determinism, a layer-range split across two blobs ("two devices") equal
 * bit for bit to the whole model, interleaved sequence slots equal to
 * one-at-a-time runs, top-k ordering and logit accuracy, bounds of the
 * scratch / KV / activation memory (guard bytes), bad inputs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_llama.h"
#include "wt_model.h"
#include "wt_tinyblob.h"
#include "wt_util.h"

#define NPOS	128
#define K	16

static uint64_t fnv64(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ULL;
	return h;
}

/* Teacher-forced run over toks; hash of all top-k outputs. */
static uint64_t run_hash(const void *blob, size_t len, const int *toks, int n)
{
	struct wfs_topk_entry tk[K];
	struct wt_model m;
	uint64_t h = 0xcbf29ce484222325ULL;
	int i;

	if (wt_model_open(&m, blob, len, n, 0))
		return 0;
	for (i = 0; i < n; i++) {
		uint32_t am;

		/* entries past the vocabulary are not written: hash zeros */
		memset(tk, 0, sizeof(tk));
		am = wt_model_step(&m, toks[i], i, K, tk);
		h = fnv64(h, &am, 4);
		h = fnv64(h, tk, sizeof(tk));
	}
	wt_model_close(&m);
	return h;
}

static void test_split(const struct wfs_ckpt *c, const int *toks)
{
	struct wfs_pack_opts o = { .wbits = 4, .group_size = 32 };
	struct wfs_topk_entry t1[K], t2[K];
	struct wt_model full, a, b;
	void *bf, *ba, *bb;
	size_t lf, la, lb;
	int i, same = 1;

	wfs_pack(c, &o, &bf, &lf);
	o.n_layers = 2;
	wfs_pack(c, &o, &ba, &la);
	o.first_layer = 2;
	o.n_layers = 3;
	wfs_pack(c, &o, &bb, &lb);
	if (!wt_ok(!wt_model_open(&full, bf, lf, NPOS, 0) &&
		   !wt_model_open(&a, ba, la, NPOS, 0) &&
		   !wt_model_open(&b, bb, lb, NPOS, 0),
		   "open full model, layers 0-1 (tokens in, activations out), layers 2-4 (activations in)"))
		return;
	for (i = 0; i < NPOS; i++) {
		uint32_t am1 = wt_model_step(&full, toks[i], i, K, t1), am2;

		wt_model_layers(&a, toks[i], i);
		memcpy(b.act, a.act, wfs_act_bytes(&a.info));
		am2 = wt_model_step(&b, 0, i, K, t2);
		same &= am1 == am2 && !memcmp(t1, t2, sizeof(t1));
	}
	wt_ok(same, "two-device layer split equals the whole model bit for bit (%d positions, top-%d)", NPOS, K);
	wt_model_close(&full);
	wt_model_close(&a);
	wt_model_close(&b);
	free(bf);
	free(ba);
	free(bb);
}

static void test_interleaved(const void *blob, size_t len, const int *toks)
{
	struct wfs_model_info info;
	struct wt_model m;
	struct wfs_topk_entry tk[K];
	uint64_t h_seq[2] = { 0xcbf29ce484222325ULL, 0xcbf29ce484222325ULL };
	uint64_t h_il[2] = { 0xcbf29ce484222325ULL, 0xcbf29ce484222325ULL };
	void **kv2;
	uint32_t l, s, am;
	int i, pass;

	wt_model_open(&m, blob, len, NPOS, 0);
	info = m.info;
	kv2 = calloc(info.n_layers, sizeof(void *));
	for (l = 0; l < info.n_layers; l++)
		kv2[l] = wt_alloc(wfs_kv_bytes(&info, NPOS));
	/* pass 0: slot 0 then slot 1; pass 1: interleaved token by token */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < 2 * NPOS; i++) {
			uint32_t pos;
			void **save;

			if (pass == 0) {
				s = i / NPOS;
				pos = i % NPOS;
			} else {
				s = i & 1;
				pos = i / 2;
			}
			save = m.kv;
			if (s)
				m.kv = kv2;
			am = wt_model_step(&m, s ? toks[NPOS - 1 - pos] : toks[pos], pos, K, tk);
			m.kv = save;
			if (pass == 0) {
				h_seq[s] = fnv64(h_seq[s], &am, 4);
				h_seq[s] = fnv64(h_seq[s], tk, sizeof(tk));
			} else {
				h_il[s] = fnv64(h_il[s], &am, 4);
				h_il[s] = fnv64(h_il[s], tk, sizeof(tk));
			}
		}
	}
	wt_ok(h_seq[0] == h_il[0] && h_seq[1] == h_il[1],
	      "two sequences interleaved on separate KV slots with shared scratch equal one-at-a-time runs");
	for (l = 0; l < info.n_layers; l++)
		free(kv2[l]);
	free(kv2);
	wt_model_close(&m);
}

static void test_topk(const struct wfs_ckpt *c, const void *blob, size_t len,
		      const int *toks)
{
	struct wfs_topk_entry tk[K];
	struct ref_state rs;
	struct wt_model m;
	double maxerr = 0;
	int i, j, order = 1, first = 1;

	wt_model_open(&m, blob, len, NPOS, 0);
	ref_init(&rs, c, NPOS);
	for (i = 0; i < NPOS; i++) {
		uint32_t am = wt_model_step(&m, toks[i], i, K, tk);
		float *lg = ref_forward(&rs, toks[i], i);

		first &= tk[0].token == am;
		for (j = 0; j < K; j++) {
			if (j && (tk[j].logit > tk[j - 1].logit ||
				  (tk[j].logit == tk[j - 1].logit &&
				   tk[j].token < tk[j - 1].token)))
				order = 0;
			maxerr = fmax(maxerr, fabs(tk[j].logit / 65536.0 - lg[tk[j].token]));
		}
	}
	wt_ok(first, "top-1 of top-k equals argmax");
	wt_ok(order, "top-k sorted by logit, ties by token id");
	wt_ok(maxerr < 0.05, "int4 top-%d logits (Q16) within %.4f of the fp32 reference on de-quantised weights", K, maxerr);
	ref_free(&rs);
	wt_model_close(&m);
}

/* Exact-size buffers with guard bytes after them must stay untouched. */
static void test_guards(const void *blob, size_t len)
{
	struct wfs_model_info info;
	struct wt_model m;
	const uint32_t ctx = 37;
	uint8_t *scr, *kv, *act, *hscr;
	size_t ns, nk, na, nh, i;
	struct wfs_topk_entry tk[WFS_TOPK_MAX];
	uint32_t pos, am;
	int ok = 1;

	wt_model_open(&m, blob, len, ctx, 8);
	info = m.info;
	ns = wfs_layer_scratch_bytes(&info, ctx);
	nk = wfs_kv_bytes(&info, ctx);
	na = wfs_act_bytes(&info);
	nh = wfs_head_scratch_bytes(&info);
	scr = wt_alloc(ns + 64);
	kv = wt_alloc(nk + 64);
	act = wt_alloc(na + 64);
	hscr = wt_alloc(nh + 64);
	memset(scr + ns, 0xa5, 64);
	memset(kv + nk, 0xa5, 64);
	memset(act + na, 0xa5, 64);
	memset(hscr + nh, 0xa5, 64);
	for (pos = 0; pos < ctx; pos++) {
		wfs_embed(&m.ev, pos % info.vocab_size, act);
		wfs_layer_forward(&m.lv[0], kv, pos, act, scr);
		wfs_head(&m.hv, act, 100, tk, &am, hscr);	/* k clamps to 32 */
	}
	for (i = 0; i < 64; i++)
		ok &= scr[ns + i] == 0xa5 && kv[nk + i] == 0xa5 &&
		      act[na + i] == 0xa5 && hscr[nh + i] == 0xa5;
	wt_ok(ok, "scratch (%zu B), int8 KV slot (%zu B), act (%zu B), head scratch (%zu B): nothing written past the sizes reported",
	      ns, nk, na, nh);
	wt_ok(wfs_embed(&m.ev, info.vocab_size, act) == -WFS_EINVAL, "embed rejects token >= vocab");
	((struct wfs_act_hdr *)act)->dim = 3;
	wfs_layer_forward(&m.lv[0], kv, 0, act, scr);
	wt_ok(((struct wfs_act_hdr *)act)->dim == info.dim, "a record of the wrong width is reset, not trusted");
	free(scr);
	free(kv);
	free(act);
	free(hscr);
	wt_model_close(&m);
}

static void test_tiny_golden(void)
{
	uint8_t *b = malloc(WT_TINY_MAX);
	int toks[12], i;
	uint64_t h[2];
	size_t len;

	for (i = 0; i < 12; i++)
		toks[i] = (i * 5 + 1) % 7;
	len = wt_tiny_build(b, WT_TINY_INT8);
	h[0] = run_hash(b, len, toks, 12);
	len = wt_tiny_build(b, WT_TINY_INT4);
	h[1] = run_hash(b, len, toks, 12);
	/*
	 * Golden values: any build (compiler, flags, kernel or userspace)
	 * must produce these bits.  A change here is a numerics change.
	 */
	wt_diag("tiny golden hashes: int8 %016llx int4 %016llx",
		(unsigned long long)h[0], (unsigned long long)h[1]);
	wt_ok(h[0] == 0xb76aaf7fa84ce92fULL && h[1] == 0xb342d2a7e63cde52ULL,
	      "tiny templates: golden bits (same with gcc/clang, -O0..-O3, kernel-style flags)");
	free(b);
}

int main(void)
{
	const char *path = wt_model_path("stories260K.bin");
	struct wfs_pack_opts o4 = { .wbits = 4, .group_size = 32 };
	struct wfs_ckpt c, dq;
	int toks[NPOS];
	void *b4;
	size_t l4;
	uint64_t h1, h2;

	test_tiny_golden();
	if (!wt_ok(path && !wfs_ckpt_load(path, &c), "load stories260K.bin"))
		return wt_done();
	ref_greedy(&c, NPOS, toks);
	wfs_pack(&c, &o4, &b4, &l4);
	wfs_pack_dequant(&c, &o4, &dq);
	h1 = run_hash(b4, l4, toks, NPOS);
	h2 = run_hash(b4, l4, toks, NPOS);
	wt_ok(h1 && h1 == h2, "deterministic: two runs give identical top-k streams (%016llx)",
	      (unsigned long long)h1);
	test_split(&c, toks);
	test_interleaved(b4, l4, toks);
	test_topk(&dq, b4, l4, toks);
	test_guards(b4, l4);
	free(b4);
	wfs_ckpt_free(&dq);
	wfs_ckpt_free(&c);
	return wt_done();
}
