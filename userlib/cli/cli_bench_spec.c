// SPDX-License-Identifier: MIT
/*
 * wafer bench's speculative section: for each profile and draft kind, the
 * same greedy decode plainly and with the draft (in process, the draft on
 * a device of its own; on a kernel device, the draft beside the target as
 * a second model of the device, wafer_draft_load_beside()), acceptance,
 * tokens per verify against the i.i.d. expectation (1 - a^(K+1)) / (1 - a),
 * the verify and draft step costs relative to a plain step, and modelled
 * and host tok/s against plain decoding's, in one run.  A row whose text
 * is not plain's (the kernel's plain text: not the in-process one) fails.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define SPEC_MAX_TOK	4096

/**
 * struct toks - a run's generated tokens
 * @t: the tokens
 * @n: how many
 */
struct toks {
	int t[SPEC_MAX_TOK];
	unsigned int n;
};

static int keep(void *arg, int token, const char *piece, int from_prompt)
{
	struct toks *k = arg;

	(void)piece;
	if (!from_prompt && k->n < SPEC_MAX_TOK)
		k->t[k->n++] = token;
	return 0;
}

/**
 * struct spec_env - one profile's devices and target
 * @dev: the target's device
 * @ddev: the draft's device (NULL: the draft beside the target on @dev)
 * @m: target model
 * @ctx: its context
 */
struct spec_env {
	struct wafer_dev *dev;
	struct wafer_dev *ddev;
	struct wafer_model *m;
	struct wafer_ctx *ctx;
};

static int same(const struct toks *a, const struct toks *b)
{
	return a->n == b->n && !memcmp(a->t, b->t, a->n * sizeof(a->t[0]));
}

static double rate(unsigned int n, uint64_t ns)
{
	return ns ? n / (ns / 1e9) : 0;
}

/* One row: @draft against the plain run @plain (and its stats @ps). */
static int row(struct spec_env *e, const char *profile, const char *draft, const char *ckpt,
	       const struct wafer_convert_opts *conv, const struct wafer_tokenizer *tok,
	       unsigned int k, const struct toks *plain, const struct wafer_gen_stats *ps)
{
	struct wafer_gen_opts go = { .steps = wafer_ctx_len(e->ctx), .seed = 1, .on_piece = keep };
	struct wafer_spec_opts so = { .draft_tokens = k };
	struct wafer_draft_spec ds;
	struct wafer_model *dm = NULL;
	struct wafer_ctx *dc = NULL;
	struct wafer_gen_stats st;
	struct wafer_spec_stats ss;
	struct toks *got = calloc(1, sizeof(*got));
	double a, expect, step, tpv, mod, pmod, host, phost;
	unsigned int pd = ps->generated_tokens > 1 ? ps->generated_tokens - 1 : 0;
	int ret = got ? wafer_draft_parse(draft, &ds) : -1;

	if (!ret && ds.kind != WAFER_DRAFT_NGRAM) {
		ret = e->ddev ? wafer_draft_load(e->ddev, &ds, ckpt, conv, e->m, &dm) :
		      wafer_draft_load_beside(&ds, ckpt, conv, e->m, &dm);
		if (!ret)
			ret = wafer_ctx_create(dm, 1, wafer_ctx_len(e->ctx), &dc);
	}
	so.draft = dc;
	so.ngram = ds.kind == WAFER_DRAFT_NGRAM ? ds.n : 0;
	go.arg = got;
	if (!ret)
		ret = wafer_generate_spec(e->ctx, tok, NULL, &go, &so, &st, &ss);
	if (ret) {
		printf("  %-6s %-9s failed: %s\n", profile, draft, wafer_last_error());
	} else {
		a = ss.drafted ? (double)ss.accepted / ss.drafted : 0;
		expect = a < 1 ? (1 - pow(a, k + 1)) / (1 - a) : k + 1;
		step = pd ? (double)ps->decode_device_ns / pd : 0;
		tpv = ss.verifies ? (double)st.generated_tokens / ss.verifies : 0;
		mod = rate(st.generated_tokens, st.decode_device_ns);
		pmod = rate(pd, ps->decode_device_ns);
		host = rate(st.generated_tokens > 1 ? st.generated_tokens - 1 : 0, st.decode_ns);
		phost = rate(pd, ps->decode_ns);
		printf("  %-6s %-9s %5.1f %%  %5.2f  %5.2f  %5.2f  %5.2f  %10.0f %5.2fx  %8.0f %5.2fx  %s\n",
		       profile, draft, 100 * a, tpv, expect,
		       step > 0 && ss.verifies ? ss.verify_ns / step / ss.verifies : 0,
		       step > 0 && ss.draft_jobs ? ss.draft_ns / step / ss.verifies : 0,
		       mod, pmod > 0 ? mod / pmod : 0, host, phost > 0 ? host / phost : 0,
		       same(got, plain) ? "same" : "DIFFERS");
		ret = !same(got, plain);
	}
	wafer_ctx_destroy(dc);
	wafer_model_unload(dm);
	free(got);
	return ret ? -1 : 0;
}

/**
 * struct spec_where - where one block of rows runs
 * @label: the rows' first column
 * @o: the target's device
 * @beside: the draft beside the target on its device (else on another of @o)
 * @ref: a plain run the block's must equal (NULL: none)
 * @plain: filled: the block's plain run
 */
struct spec_where {
	const char *label;
	struct wafer_open_opts o;
	int beside;
	const struct toks *ref;
	struct toks *plain;
};

/* The target on @w's device(s), its plain run, then a row per draft kind. */
static int profile_rows(struct spec_where *w, const char *ckpt, const char *tok_path,
			const struct wafer_convert_opts *conv, unsigned int positions,
			unsigned int k)
{
	struct wafer_gen_opts go = { .seed = 1, .on_piece = keep, .arg = w->plain };
	struct spec_env e = { 0 };
	struct wafer_tokenizer *tok = NULL;
	struct wafer_gen_stats ps;
	const struct wafer_model_info *mi = NULL;
	char drafts[4][32];
	unsigned int i, nd = 0;
	int ret, bad = 0;

	w->plain->n = 0;
	ret = wafer_open(&w->o, &e.dev) || (!w->beside && wafer_open(&w->o, &e.ddev)) ||
	      wafer_model_load_file(e.dev, ckpt, conv, &e.m);
	if (!ret) {
		mi = wafer_model_get_info(e.m);
		ret = wafer_tokenizer_load(tok_path, mi->vocab_size, &tok) ||
		      wafer_ctx_create(e.m, 1, positions < mi->seq_len ? positions : mi->seq_len,
				       &e.ctx);
	}
	go.steps = e.ctx ? wafer_ctx_len(e.ctx) : 0;
	if (!ret)
		ret = wafer_generate(e.ctx, tok, NULL, &go, &ps);
	if (ret) {
		printf("  %-6s failed: %s\n", w->label, wafer_last_error());
		bad = 1;
		goto out;
	}
	if (w->ref && !same(w->plain, w->ref)) {
		printf("  %-6s plain greedy text DIFFERS from the in-process one\n", w->label);
		bad = 1;
	}
	snprintf(drafts[nd++], sizeof(drafts[0]), "ngram");
	if (conv->wbits != 4)
		snprintf(drafts[nd++], sizeof(drafts[0]), "int4");
	if (mi->n_layers > 1)
		snprintf(drafts[nd++], sizeof(drafts[0]), "early:%u", mi->n_layers - 1);
	if (mi->n_layers > 2)
		snprintf(drafts[nd++], sizeof(drafts[0]), "early:1");
	for (i = 0; i < nd; i++)
		bad |= row(&e, w->label, drafts[i], ckpt, conv, tok, k, w->plain, &ps);
out:
	wafer_ctx_destroy(e.ctx);
	wafer_model_unload(e.m);
	wafer_close(e.ddev);
	wafer_close(e.dev);
	wafer_tokenizer_free(tok);
	return bad;
}

int cli_bench_spec(const char *ckpt, const char *tok_path, const struct wafer_convert_opts *conv,
		   unsigned int positions, unsigned int k, int inproc, int kernel_index)
{
	static const char *const profiles[] = { "wafer", "asic" };
	static struct toks plain[3];
	struct spec_where w[3];
	unsigned int i, n = 0;
	int bad = 0;

	for (i = 0; inproc && i < sizeof(profiles) / sizeof(profiles[0]); i++, n++)
		w[n] = (struct spec_where){
			.label = profiles[i], .plain = &plain[n],
			.o = { .backend = WAFER_BACKEND_INPROC, .profile = profiles[i] },
		};
	if (kernel_index >= -1) {
		w[n] = (struct spec_where){
			.label = "kernel", .beside = 1, .ref = inproc ? &plain[0] : NULL,
			.plain = &plain[n],
			.o = { .backend = WAFER_BACKEND_KERNEL, .index = kernel_index },
		};
		n++;
	}
	printf("\nspeculative decoding (greedy, %u positions, K = %u; inproc: the draft on a "
	       "device of its own;\n  kernel: the draft beside the target, two models of one "
	       "device):\n", positions, k);
	printf("  a: acceptance; tok/v: tokens per verify, measured and (1 - a^(K+1)) / (1 - a);\n"
	       "  verify and draft: modelled time per round in plain decode steps\n");
	printf("  %-6s %-9s %7s  %5s  %5s  %5s  %5s  %10s %6s  %8s %6s  %s\n", "prof", "draft",
	       "a", "tok/v", "iid", "verif", "draft", "model t/s", "vs pl", "host t/s",
	       "vs pl", "text");
	for (i = 0; i < n; i++)
		bad |= profile_rows(&w[i], ckpt, tok_path, conv, positions, k);
	return bad;
}
