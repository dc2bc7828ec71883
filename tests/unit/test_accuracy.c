// SPDX-License-Identifier: MIT
/*
 * test_accuracy.c - integer firmware-sim forward pass vs the fp32
 * reference on ../shared/models/stories260K.bin.
 *
 * Bars (issue "firmware-sim", item 7):
 *  - int8 weights: teacher-forced top-1 agreement with fp32 >= 98 % over
 *    the fp32 model's own greedy text (511 positions), and the greedy
 *    continuation after BOS identical to fp32 for >= 64 tokens;
 *  - int4 weights: >= 95 % top-1 agreement with an fp32 reference run on
 *    the de-quantised int4 weights (agreement with fp32 printed too).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_llama.h"
#include "wt_model.h"
#include "wt_util.h"

#define NTOK	512	/* greedy text length: 511 teacher-forced positions */
#define NGREEDY	64

/* Fraction of positions where the int path's argmax is the next token. */
static double teacher_forced(const void *blob, size_t len, unsigned int kv,
			     const int *toks, int n)
{
	struct wt_model m;
	int i, agree = 0;

	if (wt_model_open(&m, blob, len, n, kv))
		return -1;
	for (i = 0; i + 1 < n; i++)
		agree += (int)wt_model_step(&m, toks[i], i, 0, NULL) ==
			 toks[i + 1];
	wt_model_close(&m);
	return 100.0 * agree / (n - 1);
}

/* Greedy tokens from BOS; returns how many match ref[] from the start. */
static int greedy_match(const void *blob, size_t len, unsigned int kv,
			const int *ref, int n)
{
	struct wt_model m;
	uint32_t tok = 1;
	int i;

	if (wt_model_open(&m, blob, len, n, kv))
		return -1;
	for (i = 0; i + 1 < n; i++) {
		tok = wt_model_step(&m, tok, i, 0, NULL);
		if ((int)tok != ref[i + 1])
			break;
	}
	wt_model_close(&m);
	return i;
}

int main(void)
{
	const char *path = wt_model_path("stories260K.bin");
	struct wfs_pack_opts o8 = { .wbits = 8, .group_size = 32 };
	struct wfs_pack_opts o4 = { .wbits = 4, .group_size = 32 };
	struct wfs_ckpt c, dq;
	int *fp = malloc(NTOK * sizeof(int)), *fp4 = malloc(NTOK * sizeof(int));
	void *b8 = NULL, *b4 = NULL;
	size_t l8, l4;
	double a;
	int g;

	if (!wt_ok(path != NULL, "model file found (WAFER_MODELS or ../shared/models)"))
		return wt_done();
	if (!wt_ok(wfs_ckpt_load(path, &c) == 0, "load %s", path))
		return wt_done();
	wt_ok(ref_greedy(&c, NTOK, fp) == 0, "fp32 greedy text, %d tokens", NTOK);
	if (!wt_ok(wfs_pack(&c, &o8, &b8, &l8) == 0, "pack int8, group 32") ||
	    !wt_ok(wfs_pack(&c, &o4, &b4, &l4) == 0, "pack int4, group 32"))
		return wt_done();
	wt_diag("blob sizes: int8 %zu bytes, int4 %zu bytes", l8, l4);

	a = teacher_forced(b8, l8, 16, fp, NTOK);
	wt_ok(a >= 98.0, "int8 weights, int16 KV: teacher-forced top-1 agreement with fp32 %.2f %% (bar 98)", a);
	g = greedy_match(b8, l8, 16, fp, NTOK);
	wt_ok(g >= NGREEDY, "int8 weights, int16 KV: greedy after BOS equals fp32 for %d tokens (bar %d)", g, NGREEDY);
	a = teacher_forced(b8, l8, 8, fp, NTOK);
	wt_ok(a >= 95.0, "int8 weights, int8 KV: teacher-forced agreement with fp32 %.2f %% (bar 95)", a);
	g = greedy_match(b8, l8, 8, fp, NTOK);
	wt_diag("int8 weights, int8 KV: greedy equals fp32 for %d tokens", g);

	/* the integer pipeline itself, with the weight rounding factored out */
	if (wt_ok(wfs_pack_dequant(&c, &o8, &dq) == 0, "de-quantised int8 reference")) {
		ref_greedy(&dq, NTOK, fp4);
		a = teacher_forced(b8, l8, 16, fp4, NTOK);
		g = greedy_match(b8, l8, 16, fp4, NTOK);
		wt_ok(a >= 99.5 && g >= 256, "int8 weights: vs fp32 on the same de-quantised weights %.2f %%, greedy equal for %d tokens (integer pipeline error only)", a, g);
		wfs_ckpt_free(&dq);
	}
	if (wt_ok(wfs_pack_dequant(&c, &o4, &dq) == 0, "de-quantised int4 reference")) {
		ref_greedy(&dq, NTOK, fp4);
		a = teacher_forced(b4, l4, 16, fp4, NTOK);
		wt_ok(a >= 95.0, "int4 weights: agreement with fp32 on de-quantised int4 weights %.2f %% (bar 95)", a);
		g = greedy_match(b4, l4, 16, fp4, NTOK);
		wt_diag("int4 weights: greedy equals de-quantised reference for %d tokens", g);
		a = teacher_forced(b4, l4, 16, fp, NTOK);
		wt_diag("int4 weights: agreement with fp32 (original weights) %.2f %%", a);
		g = greedy_match(b4, l4, 16, fp, NTOK);
		wt_diag("int4 weights: greedy equals fp32 for %d tokens", g);
		wfs_ckpt_free(&dq);
	}
	free(b8);
	free(b4);
	free(fp);
	free(fp4);
	wfs_ckpt_free(&c);
	return wt_done();
}
