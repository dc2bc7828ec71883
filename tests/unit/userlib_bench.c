// SPDX-License-Identifier: MIT
/*
 * The pure helpers of `wafer bench` / `wafer top` (userlib/cli/cli_stats.h):
 * nearest-rank percentiles and the debugfs stages parser; plus the modelled
 * makespan wafer_dev_stats() reports for the inproc backend, against which
 * `wafer bench` judges concurrent decoding.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli_stats.h"
#include "wafer.h"
#include "wt_util.h"

static void test_percentile(void)
{
	uint64_t v[100], one[1] = { 7 }, two[2] = { 9, 3 };
	unsigned int i;

	for (i = 0; i < 100; i++)
		v[i] = 100 - i;	/* 100..1, unsorted */
	wt_ok(cli_percentile(v, 100, 50) == 50, "p50 of 1..100 is 50");
	wt_ok(cli_percentile(v, 100, 99) == 99, "p99 of 1..100 is 99");
	wt_ok(cli_percentile(v, 100, 100) == 100, "p100 is the maximum");
	wt_ok(cli_percentile(v, 100, 0) == 1, "p0 is the minimum");
	wt_ok(cli_percentile(one, 1, 99) == 7, "a single value is every percentile");
	wt_ok(cli_percentile(two, 2, 50) == 3 && cli_percentile(two, 2, 51) == 9,
	      "nearest rank over two values");
	wt_ok(cli_percentile(NULL, 0, 50) == 0, "an empty sample gives 0");
}

static void test_stages_parse(void)
{
	/* What kmod/wdrv_debugfs.c stages_show() prints (layers field "%2u+%-2u%s%s"). */
	static const char text[] =
		"stage layers      sram_used  sram_size  sram_peak fifo_hw     tokens       jobs  modelled_busy_ns  host_busy_ns\n"
		"    0  0+1 E      191488    4194304     191488       4         19         18              1234          5678\n"
		"    1  1+10EH     156672    4194304     156672       3         20         19                 0             1\n"
		"    2  0+0             0    4194304          0       0          0          0                 0             0\n";
	static const char reordered[] =
		"stage layers tokens modelled_busy_ns extra fifo_hw sram_size sram_used\n"
		"3 2+2 11 22 33 44 55 66\n";
	struct cli_stage_row r[4];
	int n = cli_stages_parse(text, r, 4);

	wt_ok(n == 3, "three stage rows parsed (got %d)", n);
	if (n == 3) {
		wt_ok(r[0].stage == 0 && r[0].first_layer == 0 && r[0].n_layers == 1 &&
		      r[0].embed && !r[0].head, "stage 0: layer 0, embedding");
		wt_ok(r[0].sram_used == 191488 && r[0].sram_size == 4194304 && r[0].fifo_hw == 4 &&
		      r[0].tokens == 19 && r[0].jobs == 18 && r[0].modelled_busy_ns == 1234,
		      "stage 0: values by column name");
		wt_ok(r[1].n_layers == 10 && r[1].embed && r[1].head && r[1].tokens == 20,
		      "stage 1: flags right after a two-digit layer count");
		wt_ok(r[2].n_layers == 0 && r[2].sram_used == 0, "an empty stage");
	}
	wt_ok(cli_stages_parse(text, r, 2) == 2, "at most max rows");
	n = cli_stages_parse(reordered, r, 4);
	wt_ok(n == 1 && r[0].tokens == 11 && r[0].modelled_busy_ns == 22 && r[0].fifo_hw == 44 &&
	      r[0].sram_size == 55 && r[0].sram_used == 66 && r[0].jobs == 0,
	      "reordered and unknown columns are found by name");
	wt_ok(cli_stages_parse("not a table\n1 2 3\n", r, 4) < 0, "other text is rejected");
	wt_ok(cli_stages_parse("stage layers tokens\n0 0+1 5\n", r, 4) < 0,
	      "missing required columns are rejected");
}

static void test_dev_stats(void)
{
	struct wafer_open_opts o = { .backend = WAFER_BACKEND_INPROC, .index = -1 };
	struct wafer_dev_stats s;
	struct wafer_dev *dev = NULL;
	int ret = wafer_open(&o, &dev);

	wt_ok(!ret, "inproc device opens (%s)", ret ? wafer_last_error() : "ok");
	if (ret)
		return;
	ret = wafer_dev_stats(dev, &s);
	wt_ok(!ret && s.jobs_completed == 0 && s.tokens == 0 && s.modelled_makespan_ns == 0,
	      "a fresh inproc device reports zero counters");
	wt_ok(wafer_dev_stats(dev, NULL) == -EINVAL, "wafer_dev_stats(NULL) is -EINVAL");
	wafer_close(dev);
}

int main(void)
{
	test_percentile();
	test_stages_parse();
	test_dev_stats();
	return wt_done();
}
