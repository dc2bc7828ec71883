// SPDX-License-Identifier: MIT
/*
 * VM program: the modelled decode rate of a chain over `wafer node`s
 * beside wafer_plan()'s for the same shape and devices, for
 * tests/vm/cases/sol_hosts.sh (the seed's shape, one layer per device over
 * two hosts).
 *
 *   sol_chain BLOB TOKENIZER CHAIN|inproc B
 *     opens CHAIN (HOST[:PORT]:DEVICES[,...] or FILE.json, as --chain takes
 *     it; inproc: one in-process device), loads BLOB once (each of 80
 *     parts is a LOAD of the whole blob: the slow part under TCG), prints
 *     "greedy: IDS | TEXT" of a prompt and a few tokens, then (a chain)
 *     decodes B sequences at once, each kept in flight, and prints
 *     "ok - ..." with both rates when the run's is within 5 % of the plan's
 *     for as many "wafer" devices, else "not ok - ...".
 * Exit status 0 when every check passed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wafer.h"
#include "wafer_link.h"
#include "wt_rate.h"
#include "wt_util.h"

#define WARM	2
#define STEPS	4
#define MEMBERS	128
#define GEN	8	/* positions: the prompt's and a few tokens */

static char ids[512], text[1024];

static int piece(void *arg, int token, const char *p, int from_prompt)
{
	size_t l = strlen(ids), k = strlen(text);

	(void)arg;
	if (!from_prompt && l + 12 < sizeof(ids))
		snprintf(ids + l, sizeof(ids) - l, "%s%d", l ? " " : "", token);
	if (p && k + strlen(p) < sizeof(text))
		snprintf(text + k, sizeof(text) - k, "%s", p);
	return 0;
}

static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	void *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET)) {
		buf = malloc((size_t)n);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

int main(int argc, char **argv)
{
	static struct wafer_chain_member m[MEMBERS];
	struct wafer_gen_opts g = { .steps = GEN, .on_piece = piece };
	struct wafer_open_opts oo = { .backend = WAFER_BACKEND_INPROC, .profile = "wafer" };
	struct wafer_tokenizer *tok = NULL;
	struct wafer_model *model = NULL;
	struct wafer_ctx *ctx = NULL;
	struct wafer_dev *dev = NULL;
	struct wafer_plan p;
	double rate = 0, ratio;
	unsigned int b;
	size_t len = 0, l;
	void *blob;
	int n = 1, ret;

	if (argc != 5 || !(b = (unsigned int)atoi(argv[4]))) {
		fprintf(stderr, "usage: sol_chain BLOB TOKENIZER CHAIN|inproc B\n");
		return 2;
	}
	blob = slurp(argv[1], &len);
	if (!wt_ok(blob != NULL, "%s: %zu bytes", argv[1], len) ||
	    !wt_ok(!wafer_tokenizer_load(argv[2], 512, &tok), "tokenizer %s", argv[2]))
		return wt_done();
	l = strlen(argv[3]);
	if (!strcmp(argv[3], "inproc"))
		ret = wafer_open(&oo, &dev);
	else if (l > 5 && !strcmp(argv[3] + l - 5, ".json"))
		ret = (n = wafer_chain_load(argv[3], m, MEMBERS)) < 0 ? n :
			wafer_open_chain(m, (unsigned int)n, NULL, 0, 0, &dev);
	else
		ret = (n = wafer_chain_parse(argv[3], m, MEMBERS)) < 0 ? n :
			wafer_open_chain(m, (unsigned int)n, NULL, 0, 0, &dev);
	ret = ret || wafer_model_load(dev, blob, len, &model) ||
	      wafer_ctx_create(model, 1, GEN, &ctx) ||
	      wafer_generate(ctx, tok, "Once upon a time", &g, NULL);
	wafer_ctx_destroy(ctx);
	if (!wt_ok(!ret, "%d member(s): loaded, greedy text (%s)", n,
		   ret ? wafer_last_error() : "ok"))
		goto out;
	printf("greedy: %s | %s\n", ids, text);
	if (!strcmp(argv[3], "inproc"))
		goto out;
	ret = wt_decode_rate(dev, model, b, WARM, STEPS, &rate);
	if (!wt_ok(!ret, "%d members, %u sequences decoding: modelled rate (%s)", n, b,
		   ret ? wafer_last_error() : "ok"))
		goto out;
	ret = wt_plan_rate(blob, len, (unsigned int)n, b, WARM, STEPS, &p);
	if (!wt_ok(!ret, "the plan of the blob's shape on %d wafer devices (%s)", n,
		   ret ? wafer_last_error() : "ok"))
		goto out;
	ratio = rate / (double)p.tok_s_aggregate;
	wt_ok(ratio > 0.95 && ratio < 1.05, "%d devices over the chain, B = %u: run %.0f tok/s, "
	      "plan %llu tok/s (bound: %s): ratio %.4f, within 5 %%", n, b, rate,
	      (unsigned long long)p.tok_s_aggregate, p.bound, ratio);
out:
	wafer_model_unload(model);
	wafer_close(dev);
	wafer_tokenizer_free(tok);
	free(blob);
	return wt_done();
}
