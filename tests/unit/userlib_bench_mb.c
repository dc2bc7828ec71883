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
 *     link hops (issue 12), on both profiles;
 *   - on asic devices, where a layer's work is not dwarfed by a link hop,
 *     16 sequences over 5 devices micro-batched reach at least 0.9x one
 *     device (issue 12's goal) and beat the same batch in lockstep;
 *   - on wafer devices the chain is latency-bound (a sequence's next token
 *     waits for its last one: B / latency), micro-batches no slower;
 *   - the pipeline rows' modelled figures are the same in two runs (the
 *     first device's floor does not depend on the host's threads).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wafer.h"
#include "wfs_profile.h"
#include "wfs_timing.h"
#include "wt_util.h"

#define MAX_N	5
#define N_B	3

/* One row of the device axis. */
struct row {
	int seen;
	unsigned int b;
	double lat_us, added_us;	/* B = 1 */
	double lock, micro;		/* modelled tok/s */
	unsigned int m;
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

static void run_axis(const char *profile, struct axis *a)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	const char *model = wt_model_path("stories260K.bin");
	char cmd[1024], line[512];
	FILE *f;

	memset(a, 0, sizeof(*a));
	a->rc = -1;
	if (!model)
		return;
	snprintf(cmd, sizeof(cmd), "%s/bin/wafer bench %s --quick --backend inproc --devices %d "
		 "--profile %s 2>/dev/null", build, model, MAX_N, profile);
	f = popen(cmd, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "  every result checked: %u sequences", &a->checked) == 1)
			continue;
		parse_row(line, a);
	}
	a->rc = pclose(f);
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

int main(void)
{
	static struct axis a;

	if (!wt_ok(wt_model_path("stories260K.bin") != NULL, "the shared model"))
		return wt_done();
	check_profile("asic", &a);
	check_repeat("asic", &a);
	check_profile("wafer", &a);
	return wt_done();
}
