/* SPDX-License-Identifier: MIT */
/*
 * cli_stats.h - pure helpers of `wafer bench` and `wafer top`, header-only
 * so the unit tests (tests/unit/userlib_bench.c) use them without the CLI:
 *
 *   cli_percentile()     nearest-rank percentile of a sample
 *   cli_stages_parse()   the driver's debugfs "stages" table
 */
#ifndef CLI_STATS_H
#define CLI_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline int cli_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/**
 * cli_percentile() - nearest-rank percentile
 * @v: the sample; sorted in place
 * @n: its size
 * @pct: percentile, 0..100
 *
 * Return: the smallest value with at least @pct % of the sample at or below
 * it (@pct 0: the minimum); 0 for an empty sample.
 */
static inline uint64_t cli_percentile(uint64_t *v, size_t n, unsigned int pct)
{
	size_t rank;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cli_u64_cmp);
	if (pct > 100)
		pct = 100;
	rank = ((size_t)pct * n + 99) / 100;	/* ceil(pct / 100 * n) */
	return v[rank ? rank - 1 : 0];
}

/**
 * struct cli_stage_row - one row of debugfs accel/wafer.N/stages
 * @stage: stage number
 * @first_layer: first layer it holds
 * @n_layers: layers it holds
 * @embed: it holds the token embedding ("E")
 * @head: it holds the classifier ("H")
 * @sram_used: SRAM bytes allocated
 * @sram_size: SRAM bytes
 * @fifo_hw: FIFO high-water mark
 * @tokens: tokens it processed
 * @jobs: jobs it processed
 * @modelled_busy_ns: modelled time it was busy
 */
struct cli_stage_row {
	unsigned int stage;
	unsigned int first_layer;
	unsigned int n_layers;
	int embed;
	int head;
	uint64_t sram_used;
	uint64_t sram_size;
	uint64_t fifo_hw;
	uint64_t tokens;
	uint64_t jobs;
	uint64_t modelled_busy_ns;
};

#define CLI_STAGE_MAX_COLS	16

/**
 * cli_stages_parse() - parse the debugfs "stages" text
 * @text: NUL-terminated file contents: a header line naming the columns
 *	("stage layers sram_used sram_size ... modelled_busy_ns ..."), then
 *	one row per stage: "S F+N[E][H] value value ..."
 * @rows: filled in order
 * @max: capacity of @rows
 *
 * Columns are found by their header names, so added or reordered columns
 * are tolerated; stage, layers, sram_used, sram_size, fifo_hw, tokens and
 * modelled_busy_ns are required (jobs is optional).
 *
 * Return: the number of rows (at most @max), or -1 when the text is not a
 * stages table.
 */
static inline int cli_stages_parse(const char *text, struct cli_stage_row *rows,
				     unsigned int max)
{
	static const char *const want[] = { "sram_used", "sram_size", "fifo_hw", "tokens",
					     "jobs", "modelled_busy_ns" };
	int col[6] = { -1, -1, -1, -1, -1, -1 };
	const char *p = text, *eol;
	unsigned int n = 0, k, ncols = 0;

	/* Header: "stage layers" then the value columns. */
	eol = strchr(p, '\n');
	if (!eol)
		eol = p + strlen(p);
	while (p < eol) {
		size_t len;

		while (p < eol && (*p == ' ' || *p == '\t'))
			p++;
		len = strcspn(p, " \t\n");
		if (!len)
			break;
		if (ncols == 0 && (len != 5 || strncmp(p, "stage", 5)))
			return -1;
		if (ncols == 1 && (len != 6 || strncmp(p, "layers", 6)))
			return -1;
		for (k = 0; ncols >= 2 && k < 6; k++)
			if (strlen(want[k]) == len && !strncmp(p, want[k], len))
				col[k] = (int)ncols - 2;
		ncols++;
		p += len;
	}
	for (k = 0; k < 6; k++)
		if (col[k] < 0 && k != 4)
			return -1;
	if (ncols < 3 || ncols - 2 > CLI_STAGE_MAX_COLS)
		return -1;
	ncols -= 2;
	p = *eol ? eol + 1 : eol;
	while (*p && n < max) {
		struct cli_stage_row r = { 0 };
		uint64_t v[CLI_STAGE_MAX_COLS];
		char *e;

		eol = strchr(p, '\n');
		if (!eol)
			eol = p + strlen(p);
		r.stage = (unsigned int)strtoul(p, &e, 10);
		if (e == p || e > eol)
			goto next;	/* not a row */
		r.first_layer = (unsigned int)strtoul(e, &e, 10);
		if (*e != '+')
			return -1;
		r.n_layers = (unsigned int)strtoul(e + 1, &e, 10);
		for (; *e == ' ' || *e == 'E' || *e == 'H'; e++) {
			r.embed |= *e == 'E';
			r.head |= *e == 'H';
		}
		for (k = 0; k < ncols; k++) {
			const char *s = e;

			v[k] = strtoull(s, &e, 10);
			if (e == s || e > eol)
				return -1;
		}
		r.sram_used = v[col[0]];
		r.sram_size = v[col[1]];
		r.fifo_hw = v[col[2]];
		r.tokens = v[col[3]];
		r.jobs = col[4] >= 0 ? v[col[4]] : 0;
		r.modelled_busy_ns = v[col[5]];
		rows[n++] = r;
next:
		p = *eol ? eol + 1 : eol;
	}
	return (int)n;
}

#endif /* CLI_STATS_H */
