// SPDX-License-Identifier: MIT
/*
 * bench_forward.c - in-process tokens/s of the integer forward pass on
 * ../shared/models/stories260K.bin (int8 and int4 weights), one thread,
 * one sequence: embed + 5 layers + head per token, positions 0..N-1.
 * Also the raw matvec rate of the largest layer matrix shapes.  Rates are
 * per second of this thread's CPU time (wt_cpu_now()): the machine is
 * shared, and other load should not land on one case more than another.
 *
 *   build/tests/bench/bench_forward [seconds-per-case, default 1]
 */
#include <stdio.h>
#include <stdlib.h>

#include "wfs_pack.h"
#include "wt_model.h"
#include "wt_util.h"

#define NCTX 256

static double bench_tokens(const char *name, const void *blob, size_t len,
			   unsigned int kv_bits, double secs)
{
	struct wt_model m;
	double t0, dt;
	uint64_t n = 0;
	uint32_t tok = 1, pos;

	if (wt_model_open(&m, blob, len, NCTX, kv_bits))
		return 0;
	t0 = wt_cpu_now();
	do {
		for (pos = 0; pos < NCTX; pos++, n++)
			tok = wt_model_step(&m, tok, pos, 0, NULL);
		tok = 1;
		dt = wt_cpu_now() - t0;
	} while (dt < secs);
	printf("%-28s %9.0f tokens/s  (%.1f us/token, ctx 0..%d, %llu tokens)\n",
	       name, n / dt, 1e6 * dt / n, NCTX - 1, (unsigned long long)n);
	wt_model_close(&m);
	return n / dt;
}

static void bench_matvec(const struct wt_model *m, const char *name,
			 double secs)
{
	const struct wfs_qmat *w = &m->lv[0].w1;
	int16_t *x = wt_alloc(2 * w->cols);
	int64_t *y = wt_alloc(8 * w->rows);
	double t0 = wt_cpu_now(), dt;
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < w->cols; i++)
		x[i] = (int16_t)(i * 977);
	do {
		for (i = 0; i < 1000; i++, n++)
			wfs_matvec(w, x, y);
		dt = wt_cpu_now() - t0;
	} while (dt < secs);
	printf("%-28s %9.2f GMAC/s  (W1 %ux%u, group %u)\n", name,
	       (double)n * w->rows * w->cols / dt / 1e9, w->rows, w->cols,
	       w->group_size);
	free(x);
	free(y);
}

int main(int argc, char **argv)
{
	const char *path = wt_model_path("stories260K.bin");
	struct wfs_pack_opts o8 = { .wbits = 8, .group_size = 32 };
	struct wfs_pack_opts o4 = { .wbits = 4, .group_size = 32 };
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	struct wfs_ckpt c;
	struct wt_model m;
	void *b8, *b4;
	size_t l8, l4;

	if (!path || wfs_ckpt_load(path, &c)) {
		fprintf(stderr, "bench_forward: stories260K.bin not found\n");
		return 1;
	}
	if (wfs_pack(&c, &o8, &b8, &l8) || wfs_pack(&c, &o4, &b4, &l4))
		return 1;
	printf("stories260K: dim %d, hidden %d, %d layers, vocab %d\n",
	       c.dim, c.hidden_dim, c.n_layers, c.vocab_size);
	bench_tokens("int8 weights, int16 KV", b8, l8, 16, secs);
	bench_tokens("int8 weights, int8 KV", b8, l8, 8, secs);
	bench_tokens("int4 weights, int16 KV", b4, l4, 16, secs);
	bench_tokens("int4 weights, int8 KV", b4, l4, 8, secs);
	if (!wt_model_open(&m, b8, l8, 4, 0)) {
		bench_matvec(&m, "matvec int8", secs);
		wt_model_close(&m);
	}
	if (!wt_model_open(&m, b4, l4, 4, 0)) {
		bench_matvec(&m, "matvec int4", secs);
		wt_model_close(&m);
	}
	free(b8);
	free(b4);
	wfs_ckpt_free(&c);
	return 0;
}
