// SPDX-License-Identifier: MIT
/*
 * wafer bench --afd A:F (userlib/cli/cli_bench.c): the device axis's rows
 * of attention-FFN disaggregation, on stories260K over asic devices:
 * --afd 0:1 and --afd 0-1:2 --afd-profiles asic:wafer next to one inproc
 * device.  wafer bench checks every sequence's tokens against the same
 * sequence run alone on one device (whole layers) and fails otherwise;
 * here, on modelled figures only (no wall clock):
 *   - every AFD row ran (B = 1, 16, 64) and every result was checked;
 *   - one sequence's token takes longer disaggregated than on one device
 *     (its activations cross between the groups every layer);
 *   - 16 sequences in lockstep give more than twice B = 1's modelled tok/s
 *     on the AFD groups (their micro-batches overlap on both groups);
 *   - --afd-profiles without --afd, and a fifth --afd, are usage errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "wt_util.h"

#define N_CFG	2
#define N_B	3

/* One row of an AFD configuration. */
struct row {
	int seen;
	unsigned int n;
	double lat_us, added_us;	/* B = 1 */
	double lock, micro;		/* modelled tok/s */
};

struct res {
	struct row r[N_CFG][N_B];
	double one_lat_us;		/* the inproc row, N = 1, B = 1 */
	unsigned int checked;
	int rc;
};

static int b_index(unsigned int b)
{
	return b == 1 ? 0 : b == 16 ? 1 : b == 64 ? 2 : -1;
}

/* "  afd A:F [PA:PF] N split B [us/tok +us] lock x M micro x host x" */
static void parse_row(char *line, struct res *a)
{
	char *tok[32], *save = NULL, *t;
	unsigned int n = 0, s;
	struct row *r;
	int bi, cfg;

	for (t = strtok_r(line, " \t\n", &save); t && n < 32; t = strtok_r(NULL, " \t\n", &save))
		tok[n++] = t;
	if (n >= 6 && !strcmp(tok[0], "inproc") && !strcmp(tok[1], "1") && !strcmp(tok[3], "1"))
		a->one_lat_us = atof(tok[4]);
	if (n < 12 || strcmp(tok[0], "afd"))
		return;
	cfg = !strcmp(tok[1], "1:1") ? 0 : !strcmp(tok[1], "2:1") ? 1 : -1;
	for (s = 2; s < n && !strchr(tok[s], '+'); s++)
		;
	if (cfg < 0 || s + 1 >= n)
		return;
	bi = b_index((unsigned int)atoi(tok[s + 1]));
	if (bi < 0)
		return;
	r = &a->r[cfg][bi];
	r->seen = 1;
	r->n = (unsigned int)atoi(tok[s - 1]);
	r->lock = atof(tok[n - 7]);
	r->micro = atof(tok[n - 4]);
	if (bi == 0) {
		r->lat_us = atof(tok[s + 2]);
		r->added_us = atof(tok[s + 3]);
	}
}

static int run(const char *args, struct res *a)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	const char *model = wt_model_path("stories260K.bin");
	char cmd[1024], line[512];
	FILE *f;

	memset(a, 0, sizeof(*a));
	a->rc = -1;
	if (!model)
		return -1;
	snprintf(cmd, sizeof(cmd), "%s/bin/wafer bench %s --quick --backend inproc --jobs 8 %s "
		 "2>/dev/null", build, model, args);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "  every result checked: %u sequences", &a->checked) == 1)
			continue;
		parse_row(line, a);
	}
	a->rc = pclose(f);
	return a->rc;
}

int main(void)
{
	static struct res a;
	unsigned int c, k, seen = 1;

	if (!wt_ok(wt_model_path("stories260K.bin") != NULL, "the shared model"))
		return wt_done();
	run("--devices 1 --profile asic --afd 0:1 --afd 0-1:2 --afd-profiles asic:wafer", &a);
	for (c = 0; c < N_CFG; c++)
		for (k = 0; k < N_B; k++)
			seen &= a.r[c][k].seen;
	if (!wt_ok(a.rc == 0 && seen, "wafer bench --afd 0:1 --afd 0-1:2: every row (exit %d)",
		   a.rc))
		return wt_done();
	/* One device: B = 16, 64 lockstep; each AFD row: lockstep and micro-batched. */
	wt_ok(a.checked == (16 + 64) * (1 + 2 * N_CFG),
	      "every result checked: %u sequences, each token equal to it alone on one device",
	      a.checked);
	wt_ok(a.r[0][0].n == 2 && a.r[1][0].n == 3, "the rows count the groups' devices");
	for (c = 0; c < N_CFG; c++) {
		const struct row *one = &a.r[c][0], *b16 = &a.r[c][1];

		wt_ok(one->lat_us > a.one_lat_us && one->added_us > 0,
		      "--afd %s: one sequence's token %.2f us, one device's %.2f us (activations "
		      "cross between the groups every layer)", c ? "2:1" : "1:1", one->lat_us,
		      a.one_lat_us);
		wt_ok(b16->lock > 2 * one->lock && b16->micro > 2 * one->lock,
		      "--afd %s: 16 sequences %.0f tok/s lockstep, %.0f micro-batched, one %.0f "
		      "(their micro-batches overlap on both groups)", c ? "2:1" : "1:1",
		      b16->lock, b16->micro, one->lock);
	}
	run("--devices 1 --afd-profiles asic:wafer", &a);
	wt_ok(WIFEXITED(a.rc) && WEXITSTATUS(a.rc) == 2, "--afd-profiles without --afd is a "
	      "usage error");
	run("--devices 1 --afd 0:1 --afd 0:1 --afd 0:1 --afd 0:1 --afd 0:1", &a);
	wt_ok(WIFEXITED(a.rc) && WEXITSTATUS(a.rc) == 2, "a fifth --afd is a usage error");
	return wt_done();
}
