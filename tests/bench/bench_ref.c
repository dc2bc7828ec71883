// SPDX-License-Identifier: MIT
/*
 * bench_ref.c - firmware-sim against a plain fp32 forward pass, in one run.
 *
 * The yardstick is the test tree's fp32 reference (tests/common/ref_llama.c,
 * llama2.c run.c's algorithm, built -O3 as llama2.c's `run` is) on the
 * shared model ../shared/models/stories260K.bin.  Cases are interleaved
 * round by round so that load from other processes hits them alike; each
 * figure is the median over the rounds, each ratio the median of the
 * per-round ratios.  The forward-pass figures are per second of the
 * thread's CPU time; the end-to-end ones wall clock (the CLI's own figure).
 *
 * 1. Forward pass alone, one thread, in process: positions 0..255, each
 *    next token the argmax: firmware-sim int8 and int4 weights (int16 KV),
 *    with the AVX2 kernels and with the scalar code, and the fp32 reference.
 * 2. End to end: `wafer run --backend inproc` (int8, greedy) for 256 and
 *    512 steps, its "achieved tok/s", with and without the AVX2 kernels
 *    (WAFER_SIMD=0), against the fp32 reference's greedy generation timed
 *    the same way (from the first sampled token to the end; stops at BOS).
 *
 *   build/tests/bench/bench_ref [rounds, default 7]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ref_llama.h"
#include "wfs_os.h"
#include "wfs_pack.h"
#include "wt_model.h"
#include "wt_util.h"

#define NCTX	256
#define MAXR	31

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
	double s[MAXR];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_d);
	return n & 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/*
 * tokens/s of firmware-sim over positions 0..NCTX-1 (one pass), per second
 * of this thread's CPU time: the forward-pass figures count only the cycles
 * the pass itself got, so other load on the machine (2 cores shared by
 * builds and VMs) does not land on one case more than another.
 */
static double fw_pass(struct wt_model *m)
{
	uint32_t tok = 1, pos;
	double t0 = wt_cpu_now();

	for (pos = 0; pos < NCTX; pos++)
		tok = wt_model_step(m, tok, pos, 0, NULL);
	return NCTX / (wt_cpu_now() - t0);
}

static double ref_pass(struct ref_state *s, int vocab)
{
	int tok = 1, pos;
	double t0 = wt_cpu_now();

	for (pos = 0; pos < NCTX; pos++)
		tok = ref_argmax(ref_forward(s, tok, pos), vocab);
	return NCTX / (wt_cpu_now() - t0);
}

/*
 * The reference's greedy generation of up to @steps positions, timed like
 * wafer_generate(): from the first sampled token, stopping at BOS.
 */
static double ref_e2e(const struct wfs_ckpt *c, int steps)
{
	struct ref_state s;
	double t0 = 0;
	int pos, tok, n = 0;

	if (ref_init(&s, c, steps + 1))
		return 0;
	tok = ref_argmax(ref_forward(&s, 1, 0), c->vocab_size);
	for (pos = 1; ; pos++) {
		if (!t0)
			t0 = wt_now();
		if (tok == 1)
			break;
		n++;
		if (pos >= steps)
			break;
		tok = ref_argmax(ref_forward(&s, tok, pos), c->vocab_size);
	}
	t0 = wt_now() - t0;
	ref_free(&s);
	return n > 1 ? (n - 1) / t0 : 0;
}

/* `wafer run --backend inproc` achieved tok/s, or 0 */
static double cli_e2e(const char *cli, const char *model, const char *tok,
		      int steps, int simd)
{
	char cmd[3 * 4096 + 256], line[512];
	double v = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "WAFER_SIMD=%d '%s' run '%s' -z '%s' --backend inproc --quant int8 -t 0 -n %d 2>&1 >/dev/null",
		 simd, cli, model, tok, steps);
	f = popen(cmd, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "achieved tok/s: ", 16))
			v = atof(line + 16);
	pclose(f);
	return v;
}

int main(int argc, char **argv)
{
	const char *path = wt_model_path("stories260K.bin");
	struct wfs_pack_opts o8 = { .wbits = 8, .group_size = 32 };
	struct wfs_pack_opts o4 = { .wbits = 4, .group_size = 32 };
	int rounds = argc > 1 ? atoi(argv[1]) : 7, r, i, simd;
	static const char *const fw_name[4] = {
		"int8, AVX2", "int8, scalar", "int4, AVX2", "int4, scalar",
	};
	double fw[4][MAXR], ref[MAXR], rat[4][MAXR];
	double e2e[2][2][MAXR], e2e_ref[2][MAXR], e2e_rat[2][2][MAXR];
	static const int steps[2] = { 256, 512 };
	char cli[4096], model[4096], tokp[4096];
	struct wt_model m[2];
	struct ref_state rs;
	struct wfs_ckpt c;
	void *b8, *b4;
	size_t l8, l4;
	ssize_t n;

	if (rounds < 1 || rounds > MAXR)
		rounds = 7;
	if (!path || wfs_ckpt_load(path, &c)) {
		fprintf(stderr, "bench_ref: stories260K.bin not found\n");
		return 1;
	}
	snprintf(model, sizeof(model), "%s", path);
	snprintf(tokp, sizeof(tokp), "%.*s/tok512.bin",
		 (int)(strrchr(model, '/') - model), model);
	/* the CLI sits at build/bin/wafer, this program at build/tests/bench/ */
	n = readlink("/proc/self/exe", cli, sizeof(cli) - 32);
	if (n <= 0)
		return 1;
	cli[n] = 0;
	strcpy(strrchr(cli, '/'), "/../../bin/wafer");
	if (wfs_pack(&c, &o8, &b8, &l8) || wfs_pack(&c, &o4, &b4, &l4) ||
	    wt_model_open(&m[0], b8, l8, NCTX, 16) ||
	    wt_model_open(&m[1], b4, l4, NCTX, 16) || ref_init(&rs, &c, NCTX))
		return 1;
	wfs_os_simd_enable(1);
	printf("stories260K (dim %d, hidden %d, %d layers, vocab %d); AVX2 kernels %s; %d rounds, medians\n",
	       c.dim, c.hidden_dim, c.n_layers, c.vocab_size,
	       wfs_os_simd_caps() & WFS_OS_SIMD_AVX2 ? "available" : "NOT available",
	       rounds);
	for (r = 0; r < rounds; r++) {
		ref[r] = ref_pass(&rs, c.vocab_size);
		for (i = 0; i < 4; i++) {
			wfs_os_simd_enable(!(i & 1));
			fw[i][r] = fw_pass(&m[i / 2]);
			rat[i][r] = fw[i][r] / ref[r];
		}
	}
	wfs_os_simd_enable(1);
	printf("\nforward pass alone (positions 0..%d, one thread, in process, per CPU second):\n",
	       NCTX - 1);
	printf("  %-26s %9.0f tokens/s\n", "fp32 reference (-O3)", median(ref, rounds));
	for (i = 0; i < 4; i++)
		printf("  %-26s %9.0f tokens/s  %5.2fx the fp32 reference\n",
		       fw_name[i], median(fw[i], rounds), median(rat[i], rounds));
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < 2; i++) {
			e2e_ref[i][r] = ref_e2e(&c, steps[i]);
			for (simd = 1; simd >= 0; simd--) {
				e2e[i][simd][r] = cli_e2e(cli, model, tokp, steps[i], simd);
				e2e_rat[i][simd][r] = e2e_ref[i][r] > 0 ?
					e2e[i][simd][r] / e2e_ref[i][r] : 0;
			}
		}
	}
	printf("\nend to end, `wafer run --backend inproc --quant int8 -t 0 -n N` achieved tok/s\n"
	       "(wall clock, as the CLI reports it):\n");
	for (i = 0; i < 2; i++) {
		printf("  -n %d: fp32 reference %6.0f tok/s\n", steps[i],
		       median(e2e_ref[i], rounds));
		for (simd = 1; simd >= 0; simd--)
			printf("  -n %d: wafer, %-6s   %6.0f tok/s  %5.2fx the fp32 reference\n",
			       steps[i], simd ? "AVX2" : "scalar",
			       median(e2e[i][simd], rounds),
			       median(e2e_rat[i][simd], rounds));
	}
	wt_model_close(&m[0]);
	wt_model_close(&m[1]);
	ref_free(&rs);
	free(b8);
	free(b4);
	wfs_ckpt_free(&c);
	return 0;
}
