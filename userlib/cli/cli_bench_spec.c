// SPDX-License-Identifier: MIT
/*
 * wafer bench's speculative section: for each profile and draft kind, the
 * same greedy decode plainly and with the draft (in process, the draft on
 * a device of its own: the target's stages, or for the "wse3p" rows as few
 * as hold it, wafer_draft_load_packed(); on a kernel device, the draft
 * beside the target as a second model of the device,
 * wafer_draft_load_beside()), acceptance,
 * tokens per verify against the i.i.d. expectation (1 - a^(K+1)) / (1 - a),
 * the verify and draft step costs relative to a plain step, and modelled
 * and host tok/s against plain decoding's, in one run.  A row whose text
 * is not plain's (the kernel's plain text: not the in-process one) fails.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define SPEC_MAX_TOK	4096
/* The calibrated profile's rows: its 44 stages, each 1 MiB (the simulator's 1 GiB cap) */
#define SPEC_WSE3_SRAM	(1ull << 20)

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
 * @o: the target's device options
 * @pack: the draft on a device of its own with @draft_stages stages (0: as few
 *	as hold it), not on @ddev
 * @draft_stages: see @pack
 * @note: filled: the packed drafts' stages, for the line after the rows
 */
struct spec_env {
	struct wafer_dev *dev;
	struct wafer_dev *ddev;
	struct wafer_model *m;
	struct wafer_ctx *ctx;
	const struct wafer_open_opts *o;
	int pack;
	unsigned int draft_stages;
	char note[160];
};

static int same(const struct toks *a, const struct toks *b)
{
	return a->n == b->n && !memcmp(a->t, b->t, a->n * sizeof(a->t[0]));
}

static double rate(unsigned int n, uint64_t ns)
{
	return ns ? n / (ns / 1e9) : 0;
}

/* The draft model @ds where @e says (its device in @dd when packed). */
static int draft_place(struct spec_env *e, const struct wafer_draft_spec *ds, const char *name,
		       const char *ckpt, const struct wafer_convert_opts *conv,
		       struct wafer_draft_dev *dd)
{
	size_t n = strlen(e->note);
	int ret;

	if (ds->kind == WAFER_DRAFT_NGRAM)
		return 0;
	if (e->pack) {
		ret = wafer_draft_load_packed(e->o, e->draft_stages, ds, ckpt, conv, e->m,
					      wafer_ctx_len(e->ctx), dd);
		if (!ret)
			snprintf(e->note + n, sizeof(e->note) - n, "%s%s %u", n ? ", " : "", name,
				 dd->stages);
		return ret;
	}
	ret = e->ddev ? wafer_draft_load(e->ddev, ds, ckpt, conv, e->m, &dd->model) :
	      wafer_draft_load_beside(ds, ckpt, conv, e->m, &dd->model);
	if (!ret)
		ret = wafer_ctx_create(dd->model, 1, wafer_ctx_len(e->ctx), &dd->ctx);
	return ret;
}

/*
 * One row: @draft (shown as @name) against the plain run @plain (and its
 * stats @ps).
 */
static int row(struct spec_env *e, const char *profile, const char *draft, const char *name,
	       const char *ckpt, const struct wafer_convert_opts *conv,
	       const struct wafer_tokenizer *tok, unsigned int k, const struct toks *plain,
	       const struct wafer_gen_stats *ps)
{
	struct wafer_gen_opts go = { .steps = wafer_ctx_len(e->ctx), .seed = 1, .on_piece = keep };
	struct wafer_spec_opts so = { .draft_tokens = k };
	struct wafer_draft_spec ds;
	struct wafer_draft_dev dd = { 0 };
	struct wafer_gen_stats st;
	struct wafer_spec_stats ss;
	struct toks *got = calloc(1, sizeof(*got));
	double a, expect, step, tpv, mod, pmod, host, phost;
	unsigned int pd = ps->generated_tokens > 1 ? ps->generated_tokens - 1 : 0;
	/* plain's decode jobs: with no prompt (here) the first, BOS, is one too */
	unsigned int pj = ps->generated_tokens - (ps->prompt_tokens > 1 && ps->generated_tokens);
	int ret = got ? wafer_draft_parse(draft, &ds) : -1;

	if (!ret)
		ret = draft_place(e, &ds, name, ckpt, conv, &dd);
	so.draft = dd.ctx;
	so.ngram = ds.kind == WAFER_DRAFT_NGRAM ? ds.n : 0;
	go.arg = got;
	if (!ret)
		ret = wafer_generate_spec(e->ctx, tok, NULL, &go, &so, &st, &ss);
	if (ret) {
		printf("  %-6s %-9s failed: %s\n", profile, name, wafer_last_error());
	} else {
		a = ss.drafted ? (double)ss.accepted / ss.drafted : 0;
		expect = a < 1 ? (1 - pow(a, k + 1)) / (1 - a) : k + 1;
		step = pj ? (double)ps->decode_device_ns / pj : 0;
		tpv = ss.verifies ? (double)st.generated_tokens / ss.verifies : 0;
		mod = rate(st.generated_tokens, st.decode_device_ns);
		pmod = rate(pj, ps->decode_device_ns);
		host = rate(st.generated_tokens > 1 ? st.generated_tokens - 1 : 0, st.decode_ns);
		phost = rate(pd, ps->decode_ns);
		printf("  %-6s %-9s %5.1f %%  %5.2f  %5.2f  %5.2f  %5.2f  %10.0f %5.2fx  %8.0f %5.2fx  %s\n",
		       profile, name, 100 * a, tpv, expect,
		       step > 0 && ss.verifies ? ss.verify_ns / step / ss.verifies : 0,
		       step > 0 && ss.draft_jobs ? ss.draft_ns / step / ss.verifies : 0,
		       mod, pmod > 0 ? mod / pmod : 0, host, phost > 0 ? host / phost : 0,
		       same(got, plain) ? "same" : "DIFFERS");
		ret = !same(got, plain);
	}
	wafer_draft_dev_free(&dd);
	free(got);
	return ret ? -1 : 0;
}

/**
 * struct spec_where - where one block of rows runs
 * @label: the rows' first column
 * @o: the target's device
 * @beside: the draft beside the target on its device (else on another of @o)
 * @pack: the draft on a device of its own of @draft_stages stages (0: as few
 *	as hold it) with @o's per-stage figures
 * @draft_stages: see @pack
 * @pack_target: the target's device of as few stages as hold it and its
 *	context (else @o's stages)
 * @ref: a plain run the block's must equal (NULL: none)
 * @plain: filled: the block's plain run
 */
struct spec_where {
	const char *label;
	struct wafer_open_opts o;
	int beside;
	int pack;
	unsigned int draft_stages;
	int pack_target;
	const struct toks *ref;
	struct toks *plain;
};

#define SPEC_MAX_DRAFTS	5

/*
 * The drafts of a block: n-gram, int4 (unless the target is), the first
 * L - 1 and the first layer, and in process the model's own checkpoint
 * ("self": acceptance 100 %, the bound).  Returns how many.
 */
static unsigned int draft_list(const struct wafer_model_info *mi,
			       const struct wafer_convert_opts *conv, const char *ckpt, int self,
			       char drafts[][32], const char *dnames[])
{
	unsigned int nd = 0;

	snprintf(drafts[nd++], 32, "ngram");
	if (conv->wbits != 4)
		snprintf(drafts[nd++], 32, "int4");
	if (mi->n_layers > 1)
		snprintf(drafts[nd++], 32, "early:%u", mi->n_layers - 1);
	if (mi->n_layers > 2)
		snprintf(drafts[nd++], 32, "early:1");
	for (unsigned int i = 0; i < nd; i++)
		dnames[i] = drafts[i];
	if (self) {
		dnames[nd] = ckpt;
		snprintf(drafts[nd++], 32, "self");
	}
	return nd;
}

/*
 * The target and its context on @w's device: @w->o's stages, or with
 * @w->pack_target the fewest that hold them (then in @w->o.stages).
 */
static int load_target(struct spec_where *w, const char *ckpt,
		       const struct wafer_convert_opts *conv, unsigned int positions,
		       struct spec_env *e)
{
	/* a device, a model and a context, as a draft's: freed as one */
	struct wafer_draft_dev t = { 0 };
	unsigned int s = w->pack_target ? 1 : w->o.stages, len;
	int ret;

	for (;; s++) {
		w->o.stages = s;
		ret = wafer_open(&w->o, &t.dev);
		if (!ret)
			ret = wafer_model_load_file(t.dev, ckpt, conv, &t.model);
		if (!ret) {
			len = wafer_model_get_info(t.model)->seq_len;
			ret = wafer_ctx_create(t.model, 1, positions < len ? positions : len, &t.ctx);
		}
		if (!ret) {
			e->dev = t.dev;
			e->m = t.model;
			e->ctx = t.ctx;
			return 0;
		}
		wafer_draft_dev_free(&t);
		if (ret != -ENOSPC || !w->pack_target || s >= 64)
			return ret;
	}
}

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
	char drafts[SPEC_MAX_DRAFTS][32];
	const char *dnames[SPEC_MAX_DRAFTS];
	unsigned int i, nd;
	int ret, bad = 0;

	w->plain->n = 0;
	e.o = &w->o;
	e.pack = w->pack;
	e.draft_stages = w->draft_stages;
	ret = load_target(w, ckpt, conv, positions, &e) ||
	      (!w->beside && !w->pack && wafer_open(&w->o, &e.ddev));
	if (!ret) {
		mi = wafer_model_get_info(e.m);
		ret = wafer_tokenizer_load(tok_path, mi->vocab_size, &tok);
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
	nd = draft_list(mi, conv, ckpt, w->o.backend == WAFER_BACKEND_INPROC, drafts, dnames);
	for (i = 0; i < nd; i++)
		bad |= row(&e, w->label, dnames[i], drafts[i], ckpt, conv, tok, k, w->plain, &ps);
	if (w->pack_target)
		printf("  %-6s the target's device: %u stage%s\n", w->label, w->o.stages,
		       w->o.stages == 1 ? "" : "s");
	if (w->pack)
		printf("  %-6s the draft devices' stages: %s\n", w->label, e.note);
out:
	wafer_ctx_destroy(e.ctx);
	wafer_model_unload(e.m);
	wafer_close(e.ddev);
	wafer_close(e.dev);
	wafer_tokenizer_free(tok);
	return bad;
}

/* The in-process blocks: three profiles, wse3 thrice (spread, draft packed, both). */
static unsigned int inproc_blocks(struct spec_where *w, struct toks *plain,
				  unsigned int draft_stages)
{
	static const char *const labels[] = { "wafer", "asic", "wse3", "wse3p", "wse3pt" };
	unsigned int i;

	for (i = 0; i < sizeof(labels) / sizeof(labels[0]); i++) {
		w[i] = (struct spec_where){
			.label = labels[i], .plain = &plain[i],
			.o = { .backend = WAFER_BACKEND_INPROC, .profile = labels[i] },
		};
		if (i < 2)
			continue;
		w[i].o.profile = "wse3";
		w[i].o.sram_bytes = SPEC_WSE3_SRAM;
		/* the same target as wse3's (placed otherwise): the same plain text */
		w[i].ref = i > 2 ? &plain[2] : NULL;
		w[i].pack = i > 2;
		w[i].draft_stages = draft_stages;
		w[i].pack_target = i == 4;
	}
	return i;
}

int cli_bench_spec(const char *ckpt, const char *tok_path, const struct wafer_convert_opts *conv,
		   unsigned int positions, unsigned int k, unsigned int draft_stages, int inproc,
		   int kernel_index)
{
	static struct toks plain[6];
	struct spec_where w[6];
	unsigned int i, n = inproc ? inproc_blocks(w, plain, draft_stages) : 0;
	int bad = 0;

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
	if (inproc)
		printf("  wse3: the calibrated profile, 44 stages of %llu KiB (the simulator's 1 GiB\n"
		       "  cap; every other figure wse3's), target and draft a layer per stage;\n"
		       "  wse3p: the draft's device of %s (a small draft\n"
		       "  packed into few wafer regions); wse3pt: the target's device too\n",
		       SPEC_WSE3_SRAM >> 10, draft_stages ? "--draft-stages stages" :
		       "the fewest stages that hold it");
	printf("  a: acceptance; tok/v: tokens per verify, measured and (1 - a^(K+1)) / (1 - a);\n"
	       "  verify and draft: modelled time per round in plain decode steps; self: the\n"
	       "  model's own checkpoint as the draft\n");
	printf("  %-6s %-9s %7s  %5s  %5s  %5s  %5s  %10s %6s  %8s %6s  %s\n", "prof", "draft",
	       "a", "tok/v", "iid", "verif", "draft", "model t/s", "vs pl", "host t/s",
	       "vs pl", "text");
	for (i = 0; i < n; i++)
		bad |= profile_rows(&w[i], ckpt, tok_path, conv, positions, k);
	return bad;
}
