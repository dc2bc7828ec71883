// SPDX-License-Identifier: MIT
/*
 * wafer bench's device axis (userlib/cli/cli_bench_mb.c) on stories260K:
 * B = 1, 16 and 64 sequences over 1..5 in-process devices, each B in
 * lockstep and in N micro-batches kept in flight.  wafer bench checks
 * every sequence's tokens against the same sequence run alone on one
 * device and fails otherwise; here, on modelled figures only (no wall
 * clock):
 *   - every row ran and every result was checked;
 *   - what N devices add to one sequence's token is no more than N - 1
 *     link hops, on both profiles;
 *   - on asic devices, where a layer's work is not dwarfed by a link hop,
 *     16 sequences over 5 devices micro-batched reach at least 0.9x one
 *     device (what spreading a model over devices must keep) and beat the
 *     same batch in lockstep;
 *   - on wafer devices the chain is latency-bound (a sequence's next token
 *     waits for its last one: B / latency), micro-batches no slower;
 *   - the pipeline rows' modelled figures are the same in two runs (the
 *     first device's floor does not depend on the host's threads).
 * wafer bench --afd A:F (userlib/cli/cli_bench.c): the rows of
 * attention-FFN disaggregation, --afd 0:1 and --afd 0-1:2 --afd-profiles
 * asic:wafer next to one asic device:
 *   - every AFD row ran (B = 1, 16, 64) and every result was checked;
 *   - one sequence's token takes longer disaggregated than on one device
 *     (its activations cross between the groups every layer);
 *   - 16 sequences give more than twice B = 1's modelled tok/s on the AFD
 *     groups (their micro-batches overlap on both groups);
 *   - --afd-profiles without --afd, and a fifth --afd, are usage errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "wafer.h"
#include "wfs_profile.h"
#include "wfs_timing.h"
#include "wt_util.h"

#define MAX_N	5
#define N_B	3

/* One row of the device axis (@n: the AFD rows' devices). */
struct row {
	int seen;
	unsigned int b;
	double lat_us, added_us;	/* B = 1 */
	double lock, micro;		/* modelled tok/s */
	unsigned int m;
	unsigned int n;
};

struct axis {
	struct row r[MAX_N + 1][N_B];
	unsigned int checked;
	int rc;
};

static int b_index(unsigned int b)
{
	return b == 1 ? 0 : b == 16 ? 1 : b == 64 ? 2 : -1;
}

/* "  inproc  N split B [us/tok +us [us/hop]] lock x M micro x host x" */
static void parse_row(char *line, struct axis *a)
{
	char *tok[32], *save = NULL, *t;
	unsigned int n = 0, N;
	struct row *r;
	int bi;

	for (t = strtok_r(line, " \t\n", &save); t && n < 32; t = strtok_r(NULL, " \t\n", &save))
		tok[n++] = t;
	if (n < 11 || strcmp(tok[0], "inproc") || strchr(tok[4], 'f'))
		return;
	N = (unsigned int)atoi(tok[1]);
	bi = b_index((unsigned int)atoi(tok[3]));
	if (N < 1 || N > MAX_N || bi < 0)
		return;
	r = &a->r[N][bi];
	r->seen = 1;
	r->b = (unsigned int)atoi(tok[3]);
	r->lock = atof(tok[n - 7]);
	r->m = (unsigned int)atoi(tok[n - 5]);
	r->micro = atof(tok[n - 4]);
	if (bi == 0 && n >= 13) {
		r->lat_us = atof(tok[4]);
		r->added_us = atof(tok[5]);
	}
}

/*
 * Runs wafer bench --quick --backend inproc @args on the shared model: each
 * line of its tables to @row(line, @arg), the sequences it checked into
 * *@checked; its wait status, or -1.
 */
static int run_bench(const char *args, void (*row)(char *, void *), void *arg,
		     unsigned int *checked)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	const char *model = wt_model_path("stories260K.bin");
	char cmd[1024], line[512];
	FILE *f;

	*checked = 0;
	if (!model)
		return -1;
	snprintf(cmd, sizeof(cmd), "%s/bin/wafer bench %s --quick --backend inproc %s "
		 "2>/dev/null", build, model, args);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "  every result checked: %u sequences", checked) != 1)
			row(line, arg);
	return pclose(f);
}

static void axis_row(char *line, void *a)
{
	parse_row(line, a);
}

static void run_axis(const char *profile, struct axis *a)
{
	char args[128];

	memset(a, 0, sizeof(*a));
	snprintf(args, sizeof(args), "--devices %d --profile %s", MAX_N, profile);
	a->rc = run_bench(args, axis_row, a, &a->checked);
}

/* Modelled ns of a link hop of @profile, with a record of up to 1 KiB. */
static double hop_us(const char *profile)
{
	struct wfs_profile p;

	if (wfs_profile_find(profile, &p))
		return 0;
	return wfs_timing_ns(&p, wfs_timing_link_cycles(&p, 1024)) / 1e3;
}

static int all_seen(const struct axis *a)
{
	unsigned int n, k;

	for (n = 1; n <= MAX_N; n++)
		for (k = 0; k < N_B; k++)
			if (!a->r[n][k].seen)
				return 0;
	return 1;
}

/* Latency: N devices add at most N - 1 hops. */
static void check_latency(const char *profile, const struct axis *a)
{
	double hop = hop_us(profile);
	unsigned int n, ok = hop > 0;

	for (n = 2; n <= MAX_N; n++)
		ok &= a->r[n][0].added_us > 0 && a->r[n][0].added_us <= (n - 1) * hop;
	wt_ok(ok, "%s: one sequence's token on %u devices takes %.2f us more than on one, "
	      "no more than %u link hops of %.3f us", profile, MAX_N, a->r[MAX_N][0].added_us,
	      MAX_N - 1, hop);
}

static void check_profile(const char *profile, struct axis *a)
{
	const struct row *one = &a->r[1][1], *five = &a->r[MAX_N][1], *f64 = &a->r[MAX_N][2];

	run_axis(profile, a);
	if (!wt_ok(a->rc == 0 && all_seen(a), "%s: wafer bench --devices %d: every row (exit %d)",
		   profile, MAX_N, a->rc))
		return;
	/* Per backend: B = 16 and 64 on 1..5 devices, lockstep and micro (not on 1). */
	wt_ok(a->checked == (16 + 64) * (2 * MAX_N - 1),
	      "%s: every result checked: %u sequences, each token equal to it alone", profile,
	      a->checked);
	wt_ok(five->m == MAX_N && a->r[2][1].m == 2 && one->m == 1,
	      "%s: micro-batches default to the devices (%u on %u)", profile, five->m, MAX_N);
	check_latency(profile, a);
	if (!strcmp(profile, "asic")) {
		wt_ok(five->micro >= 0.9 * one->lock, "asic: 16 sequences on %u devices, "
		      "micro-batched: %.2fx one device (goal 0.9x; lockstep %.2fx)", MAX_N,
		      five->micro / one->lock, five->lock / one->lock);
		wt_ok(five->micro > five->lock && f64->micro > f64->lock,
		      "asic: micro-batches beat lockstep on %u devices (B = 16: %.0f > %.0f, "
		      "B = 64: %.0f > %.0f tok/s)", MAX_N, five->micro, five->lock, f64->micro,
		      f64->lock);
	} else {
		wt_ok(five->micro >= five->lock * 0.99 && f64->micro >= f64->lock * 0.99,
		      "%s: latency-bound chain: micro-batched %.0f, lockstep %.0f tok/s "
		      "(B = 16 over %u devices: at most B / latency = %.0f)", profile,
		      five->micro, five->lock, MAX_N, 16 / (a->r[MAX_N][0].lat_us / 1e6));
	}
}

/* The pipeline rows' modelled figures of two runs. */
static void check_repeat(const char *profile, const struct axis *a)
{
	struct axis *b = calloc(1, sizeof(*b));
	unsigned int n, k, same = 1;

	if (!b)
		return;
	run_axis(profile, b);
	for (n = 2; n <= MAX_N; n++)
		for (k = 0; k < N_B; k++)
			same &= a->r[n][k].lock == b->r[n][k].lock &&
				a->r[n][k].micro == b->r[n][k].micro;
	wt_ok(b->rc == 0 && same, "%s: a second run: the same modelled tok/s on 2..%u devices, "
	      "lockstep and micro-batched", profile, MAX_N);
	free(b);
}

#define N_CFG	2

struct afd_res {
	struct row r[N_CFG][N_B];
	double one_lat_us;		/* the inproc row, N = 1, B = 1 */
	unsigned int checked;
	int rc;
};

/* "  afd A:F [PA:PF] N split B [us/tok +us] lock x M micro x host x" */
static void afd_parse_row(char *line, void *arg)
{
	char *tok[32], *save = NULL, *t;
	unsigned int n = 0, s;
	struct afd_res *a = arg;
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

static int afd_run(const char *args, struct afd_res *a)
{
	memset(a, 0, sizeof(*a));
	a->rc = run_bench(args, afd_parse_row, a, &a->checked);
	return a->rc;
}

/* wafer bench --afd: the AFD rows (see the top of the file). */
static void check_afd(void)
{
	static struct afd_res a;
	unsigned int c, k, seen = 1;

	afd_run("--devices 1 --profile asic --afd 0:1 --afd 0-1:2 --afd-profiles asic:wafer", &a);
	for (c = 0; c < N_CFG; c++)
		for (k = 0; k < N_B; k++)
			seen &= a.r[c][k].seen;
	if (!wt_ok(a.rc == 0 && seen, "wafer bench --afd 0:1 --afd 0-1:2: every row (exit %d)",
		   a.rc))
		return;
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
	afd_run("--devices 1 --afd-profiles asic:wafer", &a);
	wt_ok(WIFEXITED(a.rc) && WEXITSTATUS(a.rc) == 2, "--afd-profiles without --afd is a "
	      "usage error");
	afd_run("--devices 1 --afd 0:1 --afd 0:1 --afd 0:1 --afd 0:1 --afd 0:1", &a);
	wt_ok(WIFEXITED(a.rc) && WEXITSTATUS(a.rc) == 2, "a fifth --afd is a usage error");
}

int main(void)
{
	static struct axis a;

	if (!wt_ok(wt_model_path("stories260K.bin") != NULL, "the shared model"))
		return wt_done();
	check_profile("asic", &a);
	check_repeat("asic", &a);
	check_profile("wafer", &a);
	check_afd();
	return wt_done();
}
