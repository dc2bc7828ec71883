// SPDX-License-Identifier: MIT
/*
 * Speculative decoding (wafer_generate_spec) on in-process devices, the
 * draft model on a device of its own:
 *  - the device lets a slot continue from an earlier position: results
 *    after rewriting equal a fresh slot's, bit for bit;
 *  - greedy text equal to plain greedy decoding, token for token, for
 *    every draft kind and K = 1..8, int8 and int4 targets, with and
 *    without a prompt;
 *  - sampling: a seed gives the same text; over many seeds the first two
 *    tokens follow plain sampling's distribution (chi-square), and the
 *    same test rejects the draft's own distribution, which is what plain
 *    acceptance of its tokens would give;
 *  - bad input: another vocabulary, K out of range, early:N out of range:
 *    an error naming it, nothing loaded or left running;
 *  - a draft packed into few stages (wafer_draft_load_packed(), wafer run
 *    --draft-stages, wafer bench -z's wse3p rows): on the fewest stages
 *    that hold it, its modelled step exactly the spread one's less the
 *    stage hops it no longer crosses, the greedy text plain's.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "wafer.h"
#include "wfs_pack.h"
#include "wfs_profile.h"
#include "wfs_timing.h"
#include "wt_util.h"

#define MAX_TOK		600
#define STEPS		64
#define PROMPT		"Once upon a time, there was a little girl"
/* a prompt whose next tokens spread over many (the sampling test) */
#define SPROMPT		"Once upon a time, there was a"

static const char *model_path, *tok_path;
static char trunc_path[256], vocab_path[256];
static struct wafer_tokenizer *tok;

/**
 * struct rec - tokens a generation produced
 * @tok: generated tokens (not the prompt's)
 * @n: how many
 */
struct rec {
	int tok[MAX_TOK];
	unsigned int n;
};

static int on_piece(void *arg, int token, const char *piece, int from_prompt)
{
	struct rec *r = arg;

	(void)piece;
	if (!from_prompt && r->n < MAX_TOK)
		r->tok[r->n++] = token;
	return 0;
}

/*
 * Writes @c as a llama2.c v0 file keeping @layers layers and @vocab tokens
 * (a shared classifier): a draft of another size or vocabulary.
 */
static int write_ckpt(const struct wfs_ckpt *c, const char *path, int layers, int vocab)
{
	int32_t hdr[7] = { c->dim, c->hidden_dim, layers, c->n_heads, c->n_kv_heads, vocab,
			   c->seq_len };
	size_t d = c->dim, h = c->hidden_dim, kv = d * c->n_kv_heads / c->n_heads, L = layers;
	size_t rope = (size_t)c->seq_len * (d / c->n_heads);
	float *zero = calloc(rope, sizeof(float));
	FILE *f = fopen(path, "wb");
	int ok = f && zero && c->shared_cls;

#define PUT(p, n) (ok = ok && fwrite((p), sizeof(float), (n), f) == (n))
	ok = ok && fwrite(hdr, sizeof(hdr), 1, f) == 1;
	PUT(c->tok_emb, (size_t)vocab * d);
	PUT(c->rms_att, L * d);
	PUT(c->wq, L * d * d);
	PUT(c->wk, L * kv * d);
	PUT(c->wv, L * kv * d);
	PUT(c->wo, L * d * d);
	PUT(c->rms_ffn, L * d);
	PUT(c->w1, L * h * d);
	PUT(c->w2, L * d * h);
	PUT(c->w3, L * h * d);
	PUT(c->rms_final, d);
	PUT(zero, rope);
#undef PUT
	if (f && fclose(f))
		ok = 0;
	free(zero);
	return ok ? 0 : -1;
}

static struct wafer_dev *open_inproc(void)
{
	/* asic: 4 stages, the fastest in process */
	struct wafer_open_opts o = { .backend = WAFER_BACKEND_INPROC, .profile = "asic" };
	struct wafer_dev *dev = NULL;

	return wafer_open(&o, &dev) ? NULL : dev;
}

/* Reaps every job in flight (at most 2) into @c; their count or -1. */
static int reap_all(struct wafer_dev *dev, struct wafer_completion *c)
{
	int n = 0, r;

	while (wafer_inflight(dev) && n < 2) {
		r = wafer_reap(dev, c + n, (unsigned int)(2 - n), 1, -1);
		if (r <= 0)
			return -1;
		n += r;
	}
	return n;
}

/*
 * The device continues a slot from any position whose predecessors ran:
 * positions 0..15 with one text, then 8..15 again with another, give the
 * results of a fresh slot running the second text from 0 (KV of the old
 * positions 8..15 rewritten, none of it seen).
 */
static void test_rewind(struct wafer_dev *dev)
{
	struct wafer_model *m = NULL;
	struct wafer_ctx *ctx = NULL;
	struct wafer_bo *in = NULL, *out = NULL;
	struct wafer_completion c[2];
	const unsigned int sz = WAFER_RESULT_SIZE(8);
	uint32_t *ids;
	int ok, i;

	ok = !wafer_model_load_file(dev, model_path, NULL, &m) &&
	     !wafer_ctx_create(m, 2, 32, &ctx) && !wafer_bo_create(dev, 4096, &in) &&
	     !wafer_bo_create(dev, 16 * sz * 2, &out);
	if (!wt_ok(ok, "rewind: model, context, buffers"))
		goto out;
	ids = wafer_bo_map(in);
	/* slot 0: text A at 0..15, then text B at 8..15; slot 1: A[0..8) + B */
	for (i = 0; i < 16; i++) {
		ids[i] = (uint32_t)(1 + 7 * i % 500);		/* A */
		ids[32 + i] = i < 8 ? ids[i] : (uint32_t)(300 + 11 * i % 200);	/* A, then B */
	}
	{
		struct wafer_job j[3] = {
			{ .ctx = ctx, .slot = 0, .start_pos = 0, .n_tokens = 16, .top_k = 8,
			  .in = in, .out = out, .flags = WAFER_JOB_ALL_POSITIONS },
			{ .ctx = ctx, .slot = 0, .start_pos = 8, .n_tokens = 8, .top_k = 8,
			  .in = in, .in_offset = (32 + 8) * 4, .out = out,
			  .flags = WAFER_JOB_ALL_POSITIONS },
			{ .ctx = ctx, .slot = 1, .start_pos = 0, .n_tokens = 16, .top_k = 8,
			  .in = in, .in_offset = 32 * 4, .out = out, .out_offset = 16 * sz,
			  .flags = WAFER_JOB_ALL_POSITIONS },
		};

		ok = wafer_submit(dev, j, 1) == 1 && reap_all(dev, c) == 1 && !c[0].status;
		/* slot 0 rewritten from position 8, in the first 8 records */
		ok = ok && wafer_submit(dev, j + 1, 2) == 2 && reap_all(dev, c) == 2 &&
		     !c[0].status && !c[1].status;
	}
	if (!wt_ok(ok, "rewind: jobs at 0..15, then at 8..15 of the same slot, run")) {
		wt_diag("%s; status %d %d", wafer_last_error(), c[0].status, c[1].status);
		goto out;
	}
	for (i = 0; i < 8 && ok; i++) {
		const struct wafer_token_result *a = wafer_result(out, 0, 8, (unsigned int)i);
		const struct wafer_token_result *b = wafer_result(out, 16 * sz, 8,
								  (unsigned int)(8 + i));

		ok = a && b && a->position == 8u + i && !memcmp(a, b, sz);
	}
	wt_ok(ok, "a slot continued from an earlier start_pos gives a fresh slot's results "
	      "bit for bit (the old KV rewritten)");
out:
	wafer_bo_destroy(out);
	wafer_bo_destroy(in);
	wafer_ctx_destroy(ctx);
	wafer_model_unload(m);
}

/**
 * struct side - a target or a draft, loaded
 * @dev: its device
 * @m: model
 * @ctx: context
 */
struct side {
	struct wafer_dev *dev;
	struct wafer_model *m;
	struct wafer_ctx *ctx;
};

static void side_free(struct side *s)
{
	wafer_ctx_destroy(s->ctx);
	wafer_model_unload(s->m);
	s->ctx = NULL;
	s->m = NULL;
}

static int gen(struct side *t, struct side *d, unsigned int ngram, unsigned int k,
	       const char *prompt, unsigned int steps, float temp, uint64_t seed, struct rec *r,
	       struct wafer_spec_stats *ss)
{
	struct wafer_gen_opts go = { .steps = steps, .temperature = temp, .top_p = 0.9f,
				     .seed = seed, .on_piece = on_piece, .arg = r };
	struct wafer_spec_opts so = { .draft_tokens = k, .draft = d ? d->ctx : NULL,
				      .ngram = ngram };

	r->n = 0;
	if (!k)
		return wafer_generate(t->ctx, tok, prompt, &go, NULL);
	return wafer_generate_spec(t->ctx, tok, prompt, &go, &so, NULL, ss);
}

static int same(const struct rec *a, const struct rec *b)
{
	return a->n == b->n && !memcmp(a->tok, b->tok, a->n * sizeof(a->tok[0]));
}

/* Greedy: every draft kind and K = 1..8 gives plain decoding's tokens. */
static void test_greedy(struct side *t, struct wafer_dev *ddev, const char *target_name,
			const struct wafer_convert_opts *tconv)
{
	static const char *const kinds[] = { "ngram", "int4", "early:3", NULL /* trunc_path */ };
	const char *prompts[2] = { "", PROMPT };
	struct rec *plain = malloc(2 * sizeof(*plain)), *r = malloc(sizeof(*r));
	unsigned int ki, k, pi;

	if (!plain || !r)
		return;
	for (pi = 0; pi < 2; pi++)
		gen(t, NULL, 0, 0, prompts[pi], STEPS, 0, 1, &plain[pi], NULL);
	for (ki = 0; ki < sizeof(kinds) / sizeof(kinds[0]); ki++) {
		const char *name = kinds[ki] ? kinds[ki] : trunc_path;
		struct side d = { .dev = ddev };
		struct wafer_draft_spec ds;
		unsigned int acc = 0, drafted = 0, ver = 0, gt = 0, bad = 0;
		int ret = wafer_draft_parse(name, &ds);

		if (!ret && ds.kind != WAFER_DRAFT_NGRAM) {
			ret = wafer_draft_load(ddev, &ds, model_path, tconv, t->m, &d.m);
			if (!ret)
				ret = wafer_ctx_create(d.m, 1, STEPS, &d.ctx);
		}
		if (!wt_ok(!ret, "%s target, draft %s: loaded", target_name, name)) {
			wt_diag("%s", wafer_last_error());
			side_free(&d);
			continue;
		}
		for (k = 1; k <= 8; k++) {
			for (pi = 0; pi < 2; pi++) {
				struct wafer_spec_stats ss;

				ret = gen(t, ds.kind == WAFER_DRAFT_NGRAM ? NULL : &d, ds.n, k,
					  prompts[pi], STEPS, 0, 1, r, &ss);
				if (ret || !same(r, &plain[pi])) {
					if (!bad++)
						wt_diag("K %u, prompt %u: ret %d (%s), %u vs %u "
							"tokens", k, pi, ret, wafer_last_error(),
							r->n, plain[pi].n);
					continue;
				}
				acc += ss.accepted;
				drafted += ss.drafted;
				ver += ss.verifies;
				gt += r->n;
			}
		}
		wt_ok(!bad && plain[0].n > 40 && plain[1].n > 40,
		      "%s target, draft %s: greedy tokens equal plain decoding's for K = 1..8, "
		      "with and without a prompt (acceptance %.1f %%, %.2f tokens per verify)",
		      target_name, name, drafted ? 100.0 * acc / drafted : 0.0,
		      ver ? (double)gt / ver : 0.0);
		side_free(&d);
	}
	free(plain);
	free(r);
}

/*
 * wafer_draft_load_beside(): the int4 draft as a second model of the
 * target's own device (what wafer run and wafer bench -z do on a kernel
 * device): greedy tokens equal plain decoding's, with the draft accepted
 * (it runs); no target: -EINVAL.
 */
static void test_beside(struct side *t, const struct wafer_convert_opts *tconv)
{
	struct rec *plain = malloc(sizeof(*plain)), *r = malloc(sizeof(*r));
	struct side d = { .dev = t->dev };
	struct wafer_spec_stats ss = { 0 };
	struct wafer_draft_spec ds;
	struct wafer_model *none = NULL;
	int ret = plain && r ? wafer_draft_parse("int4", &ds) : -1;

	ret = ret ? ret : wafer_draft_load_beside(&ds, model_path, tconv, t->m, &d.m);
	ret = ret ? ret : wafer_ctx_create(d.m, 1, STEPS, &d.ctx);
	ret = ret ? ret : gen(t, NULL, 0, 0, PROMPT, STEPS, 0, 1, plain, NULL);
	ret = ret ? ret : gen(t, &d, 0, 4, PROMPT, STEPS, 0, 1, r, &ss);
	wt_ok(!ret && same(r, plain) && plain->n > 40 && ss.accepted > 0,
	      "the int4 draft beside the target on its device: greedy tokens equal plain "
	      "decoding's (%u of %u drafted accepted)", ss.accepted, ss.drafted);
	if (ret)
		wt_diag("%s", wafer_last_error());
	wt_ok(wafer_draft_load_beside(&ds, model_path, tconv, NULL, &none) == -EINVAL && !none,
	      "wafer_draft_load_beside() without a target: -EINVAL");
	side_free(&d);
	free(plain);
	free(r);
}

/*
 * Two-sample chi-square statistic of the token counts @a and @b (same
 * total): categories where the pair has fewer than 10 counts are pooled.
 * Sets *@df to the degrees of freedom.
 */
static double chi2(const unsigned int *a, const unsigned int *b, unsigned int n, int *df)
{
	double x = 0, pa = 0, pb = 0;
	unsigned int i, cats = 0;

	for (i = 0; i < n; i++) {
		if (a[i] + b[i] < 10) {
			pa += a[i];
			pb += b[i];
			continue;
		}
		x += ((double)a[i] - b[i]) * ((double)a[i] - b[i]) / ((double)a[i] + b[i]);
		cats++;
	}
	if (pa + pb > 0) {
		x += (pa - pb) * (pa - pb) / (pa + pb);
		cats++;
	}
	*df = (int)cats - 1;
	return x;
}

/*
 * Upper 1e-6 point of chi-square with @df degrees of freedom (Wilson and
 * Hilferty: (x / df)^(1/3) is close to normal, mean 1 - 2/(9 df), variance
 * 2/(9 df); z = 4.753 leaves 1e-6 above).
 */
static double chi2_bound(int df)
{
	double v = 2.0 / (9.0 * df), c = 1.0 - v + 4.753 * sqrt(v);

	return df * c * c * c;
}

static unsigned int SEEDS = 400;

/* splitmix64: seeds spread over the generator's state */
static uint64_t seed_of(unsigned int i)
{
	uint64_t z = (uint64_t)i * 0x9e3779b97f4a7c15ull + 0x1234567ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (z ^ (z >> 31)) | 1;
}

/*
 * The first and second generated tokens over SEEDS seeds: speculative
 * against plain, and the draft's own (plain acceptance) against plain.
 */
static void test_sampling(struct side *t, struct side *d, const char *name, unsigned int ngram)
{
	unsigned int (*cnt)[2][512] = calloc(3, sizeof(*cnt));
	struct rec *r = malloc(sizeof(*r));
	unsigned int i, pos, np;
	int fails = 0, df;
	double x, bound;
	int toks[64];

	if (!cnt || !r)
		goto out;
	np = (unsigned int)wafer_tokenizer_encode(tok, SPROMPT, 1, 0, toks, 64);
	for (i = 0; i < SEEDS && !fails; i++) {
		uint64_t s = seed_of(i);

		/* 0: plain target, 1: speculative, 2: the draft's own */
		fails += gen(t, NULL, 0, 0, SPROMPT, np + 2, 1.0f, s, r, NULL) || r->n < 2;
		for (pos = 0; pos < 2 && r->n >= 2; pos++)
			cnt[0][pos][r->tok[pos]]++;
		fails += gen(t, d, ngram, 3, SPROMPT, np + 2, 1.0f, s, r, NULL) || r->n < 2;
		for (pos = 0; pos < 2 && r->n >= 2; pos++)
			cnt[1][pos][r->tok[pos]]++;
		if (d)
			fails += gen(d, NULL, 0, 0, SPROMPT, np + 2, 1.0f, s, r, NULL) || r->n < 2;
		for (pos = 0; d && pos < 2 && r->n >= 2; pos++)
			cnt[2][pos][r->tok[pos]]++;
	}
	if (!wt_ok(!fails, "sampling, draft %s: %u seeds ran", name, SEEDS))
		goto out;
	for (pos = 0; pos < 2; pos++) {
		x = chi2(cnt[1][pos], cnt[0][pos], 512, &df);
		bound = chi2_bound(df);
		{
			unsigned int tk, shown = 0;
			char line[512] = "";

			for (tk = 0; tk < 512 && shown < 12; tk++) {
				if (cnt[0][pos][tk] + cnt[1][pos][tk] + cnt[2][pos][tk] < 30)
					continue;
				snprintf(line + strlen(line), sizeof(line) - strlen(line),
					 " %u:%u/%u/%u", tk, cnt[0][pos][tk], cnt[1][pos][tk],
					 cnt[2][pos][tk]);
				shown++;
			}
			wt_diag("token %u, token:plain/speculative/draft:%s", pos + 1, line);
		}
		wt_ok(df >= 1 && x < bound, "sampling, draft %s, K 3: generated token %u follows "
		      "plain sampling (chi-square %.1f, %d df, bound %.1f at p = 1e-6)", name,
		      pos + 1, x, df, bound);
	}
	if (d) {
		/* What plain acceptance of the draft's tokens would give: caught. */
		x = chi2(cnt[2][0], cnt[0][0], 512, &df);
		bound = chi2_bound(df);
		wt_ok(x > bound, "sampling, draft %s: the draft's own first token (plain "
		      "acceptance) fails the same test (chi-square %.1f, %d df, bound %.1f)", name,
		      x, df, bound);
	}
out:
	free(cnt);
	free(r);
}

static void test_sampled_seed(struct side *t, struct side *d)
{
	struct rec *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	int ok;

	if (!a || !b)
		goto out;
	ok = !gen(t, d, 0, 4, PROMPT, 120, 1.0f, 42, a, NULL) &&
	     !gen(t, d, 0, 4, PROMPT, 120, 1.0f, 42, b, NULL) && a->n > 20 && same(a, b);
	wt_ok(ok, "sampling, temperature 1, top-p 0.9: the same seed gives the same tokens "
	      "(%u)", a->n);
	ok = !gen(t, d, 0, 4, PROMPT, 120, 1.0f, 43, b, NULL) && !same(a, b);
	wt_ok(ok, "and another seed other tokens");
out:
	free(a);
	free(b);
}

/* Each bad input: an error naming it, nothing loaded, the context still decodes. */
static void test_bad(struct side *t, struct wafer_dev *ddev)
{
	struct wafer_draft_spec ds;
	struct wafer_model *dm = NULL;
	struct wafer_ctx *dc = NULL;
	struct side d = { .dev = ddev };
	struct wafer_info info;
	struct rec *r = malloc(sizeof(*r)), *p = malloc(sizeof(*p));
	int ret;

	if (!r || !p)
		goto out;
	gen(t, NULL, 0, 0, PROMPT, STEPS, 0, 1, p, NULL);

	ret = wafer_draft_parse(vocab_path, &ds);
	ret = ret ? ret : wafer_draft_load(ddev, &ds, model_path, NULL, t->m, &dm);
	wt_ok(ret == -EINVAL && !dm && strstr(wafer_last_error(), "vocabulary of 256 tokens"),
	      "a draft with another vocabulary: -EINVAL (%s)", wafer_last_error());
	wt_ok(!wafer_query(ddev, &info) && info.models_loaded == 0,
	      "and nothing is loaded on the draft's device");

	/* loaded behind the library's back: wafer_generate_spec refuses it */
	ret = wafer_model_load_file(ddev, vocab_path, NULL, &d.m);
	ret = ret ? ret : wafer_ctx_create(d.m, 1, STEPS, &d.ctx);
	if (wt_ok(!ret, "the other-vocabulary model loads as a model of its own")) {
		ret = gen(t, &d, 0, 4, PROMPT, STEPS, 0, 1, r, NULL);
		wt_ok(ret == -EINVAL && !r->n && strstr(wafer_last_error(), "vocabulary"),
		      "wafer_generate_spec with its context as the draft: -EINVAL, no token (%s)",
		      wafer_last_error());
	}
	side_free(&d);

	ret = gen(t, NULL, 0, 0 + 17, PROMPT, STEPS, 0, 1, r, NULL);
	wt_ok(ret == -EINVAL && !r->n && strstr(wafer_last_error(), "draft_tokens 17"),
	      "K = 17: -EINVAL (%s)", wafer_last_error());
	{
		struct wafer_gen_opts go = { .steps = STEPS };
		struct wafer_spec_opts so = { .draft_tokens = 0 };

		ret = wafer_generate_spec(t->ctx, tok, PROMPT, &go, &so, NULL, NULL);
		wt_ok(ret == -EINVAL && strstr(wafer_last_error(), "draft_tokens 0"),
		      "K = 0: -EINVAL (%s)", wafer_last_error());
	}
	ret = wafer_draft_parse("early:5", &ds);
	ret = ret ? ret : wafer_draft_load(ddev, &ds, model_path, NULL, t->m, &dm);
	wt_ok(ret == -EINVAL && !dm && strstr(wafer_last_error(), "early:5"),
	      "early:5 of a 5-layer target: -EINVAL (%s)", wafer_last_error());
	wt_ok(wafer_draft_parse("ngram:0", &ds) == -EINVAL &&
	      wafer_draft_parse("early:x", &ds) == -EINVAL && wafer_draft_parse("", &ds) == -EINVAL,
	      "ngram:0, early:x and an empty name do not parse");
	wt_ok(!wafer_query(ddev, &info) && info.models_loaded == 0 && info.contexts == 0 &&
	      !wafer_query(t->dev, &info) && info.jobs_inflight == 0,
	      "after the errors: nothing loaded on the draft's device, no job in flight");
	ret = gen(t, NULL, 0, 0, PROMPT, STEPS, 0, 1, r, NULL);
	wt_ok(!ret && same(r, p), "and the target's context still decodes as before");
	(void)dc;
out:
	free(r);
	free(p);
}

/* The modelled decode step of @m on @dev: plain greedy, a token per job. */
static double step_ns(struct wafer_model *m, unsigned int steps)
{
	struct rec *r = calloc(1, sizeof(*r));
	struct side s = { .m = m };
	struct wafer_gen_stats st = { 0 };
	struct wafer_gen_opts go = { .steps = steps, .seed = 1, .on_piece = on_piece, .arg = r };
	int ret = r ? wafer_ctx_create(m, 1, steps, &s.ctx) : -1;

	if (!ret)
		ret = wafer_generate(s.ctx, tok, NULL, &go, &st);
	wafer_ctx_destroy(s.ctx);
	free(r);
	/* no prompt: every job, BOS's included, is a decode step */
	return ret || !st.jobs ? -1 : (double)st.decode_device_ns / st.jobs;
}

/*
 * wse3 (44 stages of 1 MiB here): the int4 draft of stories260K on the
 * fewest stages (1) against a layer per stage (5 of 44).  On one stage
 * its five layers add up in one stage's time (firmware-sim/device/wfs_stage.c
 * chunk_timing()), and a chunk crosses one stage hop instead of five: the
 * step is the spread one's less 4 hops (and the few cycles of compute and
 * SRAM each of the 4 stages rounded up on its own).
 */
static void test_packed(const struct wafer_convert_opts *tconv)
{
	struct wafer_open_opts o = { .backend = WAFER_BACKEND_INPROC, .profile = "wse3",
				     .sram_bytes = 1ull << 20 };
	struct wafer_draft_dev pk = { 0 }, sp = { 0 }, none = { 0 };
	struct wafer_spec_stats sa, sb;
	struct side t = { 0 }, dp, ds;
	struct wafer_draft_spec d;
	struct wfs_profile prof;
	struct rec *plain = calloc(1, sizeof(*plain)), *a = calloc(1, sizeof(*a)),
		   *b = calloc(1, sizeof(*b));
	double hop, saved;
	int ret = !plain || !a || !b || wafer_draft_parse("int4", &d) || wafer_open(&o, &t.dev) ||
		  wafer_model_load_file(t.dev, model_path, tconv, &t.m) ||
		  wafer_ctx_create(t.m, 1, 128, &t.ctx);

	if (!wt_ok(!ret, "wse3 target (44 stages of 1 MiB) loaded (%s)",
		   ret ? wafer_last_error() : "ok"))
		goto out;
	ret = wafer_draft_load_packed(&o, 0, &d, model_path, tconv, t.m, 128, &pk);
	wt_ok(!ret && pk.stages == 1, "int4 draft packed: on 1 stage, the fewest (%d, %u)", ret,
	      pk.stages);
	ret = ret ? ret : wafer_draft_load_packed(&o, 44, &d, model_path, tconv, t.m, 128, &sp);
	wt_ok(!ret && sp.stages == 44, "int4 draft on 44 stages, a layer per stage (%d)", ret);
	if (ret)
		goto out;
	wfs_profile_find("wse3", &prof);
	hop = (double)wfs_timing_ns(&prof, wfs_timing_hop_cycles(&prof, 64 * 4));
	saved = step_ns(sp.model, 64) - step_ns(pk.model, 64);
	wt_ok(fabs(saved - 4 * hop) <= 8,
	      "packed on 1 stage, the draft's step crosses 4 stage hops fewer: %.1f ns saved, "
	      "4 hops are %.1f ns", saved, 4 * hop);
	dp = (struct side){ .dev = pk.dev, .m = pk.model, .ctx = pk.ctx };
	ds = (struct side){ .dev = sp.dev, .m = sp.model, .ctx = sp.ctx };
	ret = gen(&t, NULL, 0, 0, PROMPT, 128, 0, 1, plain, NULL) ||
	      gen(&t, &dp, 0, 4, PROMPT, 128, 0, 1, a, &sa) ||
	      gen(&t, &ds, 0, 4, PROMPT, 128, 0, 1, b, &sb);
	wt_ok(!ret && plain->n > 50 && same(plain, a) && same(plain, b),
	      "greedy text with the packed and the spread draft: plain's (%u tokens)", plain->n);
	wt_ok(!ret && sa.accepted == sb.accepted && sa.drafted == sb.drafted &&
	      sa.verify_ns == sb.verify_ns && sa.draft_ns < sb.draft_ns,
	      "the same proposals and verifies; packed, the draft's time is less "
	      "(%llu < %llu ns)", (unsigned long long)sa.draft_ns, (unsigned long long)sb.draft_ns);
	o.sram_bytes = 64ull << 10;
	o.stages = 2;
	ret = wafer_draft_load_packed(&o, 0, &d, model_path, tconv, t.m, 128, &none);
	wt_ok(ret == -ENOSPC && !none.dev && !none.model,
	      "a draft that fits no device of 1..2 stages of 64 KiB: -ENOSPC, nothing left (%s)",
	      wafer_last_error());
	o.backend = WAFER_BACKEND_KERNEL;
	wt_ok(wafer_draft_load_packed(&o, 1, &d, model_path, tconv, t.m, 128, &none) ==
	      -EOPNOTSUPP && !none.dev, "a kernel backend: -EOPNOTSUPP (its stages are the "
	      "module's)");
	wt_ok(wafer_draft_load_packed(NULL, 1, &d, model_path, tconv, t.m, 128, &none) ==
	      -EINVAL, "NULL options: -EINVAL");
out:
	wafer_draft_dev_free(&pk);
	wafer_draft_dev_free(&sp);
	side_free(&t);
	wafer_close(t.dev);
	free(plain);
	free(a);
	free(b);
}

/* The CLI: --draft end to end (stdout equal to plain), its usage errors. */
static int cli(const char *args, char *out, size_t cap)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char cmd[2048];
	size_t n = 0, r;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s/bin/wafer run %s -z %s --backend inproc %s 2>/dev/null",
		 build, model_path, tok_path, args);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while ((r = fread(out + n, 1, cap - 1 - n, p)) > 0)
		n += r;
	out[n] = '\0';
	return pclose(p);
}

/* The "draft" column (modelled draft time per round in steps) of a bench row. */
static double draft_col(const char *line)
{
	char prof[16], draft[32];
	double a, tpv, iid, verify, draft_steps;

	if (sscanf(line, " %15s %31s %lf %% %lf %lf %lf %lf", prof, draft, &a, &tpv, &iid,
		   &verify, &draft_steps) != 7)
		return -1;
	return draft_steps;
}

/*
 * wafer bench's speculative section: a row per profile and draft, each
 * with plain's text; wse3p's drafts on 1 stage, each model's (int4,
 * early:4, self) draft time less than on wse3 where it spreads a layer
 * per stage (early:1, one layer, on one stage either way: the same);
 * wse3pt's target on 1 stage too.
 */
static void test_cli_bench(void)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	static const char *const profs[] = { "wafer ", "asic ", "wse3 ", "wse3p ", "wse3pt " };
	char cmd[1024], line[512];
	double spread[8] = { 0 }, packed[8] = { 0 };
	unsigned int rows[5] = { 0 }, same = 0, i, nd = 0, cheaper = 0, stages = 0, tstages = 0;
	FILE *p;
	int rc;

	snprintf(cmd, sizeof(cmd), "%s/bin/wafer bench %s --quick --backend inproc "
		 "--devices 0 -z %s 2>/dev/null", build, model_path, tok_path);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		if (!strncmp(line, "  wse3p", 7) &&
		    strstr(line, " the draft devices' stages: int4 1, early:4 1, early:1 1, "
			   "self 1\n"))
			stages++;
		if (!strcmp(line, "  wse3pt the target's device: 1 stage\n"))
			tstages = 1;
		for (i = 0; i < 5; i++)
			if (!strncmp(line + 2, profs[i], strlen(profs[i])) &&
			    draft_col(line) >= 0)
				break;
		if (i == 5)
			continue;
		rows[i]++;
		same += strstr(line, "  same\n") != NULL;
		if ((i == 2 || i == 3) && rows[i] <= 8)
			(i == 2 ? spread : packed)[rows[i] - 1] = draft_col(line);
	}
	rc = p ? pclose(p) : -1;
	wt_ok(!rc && rows[0] == 5 && rows[1] == 5 && rows[2] == 5 && rows[3] == 5 &&
	      rows[4] == 5 && same == 25, "wafer bench -z: ngram, int4, early:4, early:1, self "
	      "on wafer, asic, wse3, wse3p and wse3pt, each with plain decoding's text "
	      "(%u %u %u %u %u rows, %u same)", rows[0], rows[1], rows[2], rows[3], rows[4], same);
	/* rows: ngram, int4, early:4, early:1, self */
	for (i = 0; i < 5 && rows[3] == 5; i++, nd++)
		cheaper += i == 0 || i == 3 ? packed[i] == spread[i] : packed[i] < spread[i];
	wt_ok(tstages, "wse3pt: the target on 1 stage, the fewest that hold it");
	wt_ok(stages == 2 && nd == 5 && cheaper == 5, "wse3p, wse3pt: every draft on 1 stage; "
	      "wse3p's int4, "
	      "early:4 and self cost less per round than spread (%.2f < %.2f, %.2f < %.2f, "
	      "%.2f < %.2f), ngram and early:1 the same", packed[1], spread[1], packed[2],
	      spread[2], packed[4], spread[4]);
}

static void test_cli(void)
{
	size_t cap = 65536;
	char *a = malloc(cap), *b = malloc(cap), args[512];
	int rc;

	if (!a || !b)
		goto out;
	rc = cli("-n 120 -i 'Once upon a time'", a, cap);
	snprintf(args, sizeof(args), "-n 120 -i 'Once upon a time' --draft early:4 "
		 "--draft-tokens 6");
	rc |= cli(args, b, cap);
	wt_ok(!rc && strlen(a) > 100 && !strcmp(a, b), "wafer run --draft early:4 --draft-tokens 6 "
	      "prints plain greedy decoding's text");
	rc = cli("-n 20 --draft int4 --draft-tokens 17", b, cap);
	wt_ok(WEXITSTATUS(rc) == 2 && !b[0], "--draft-tokens 17 is a usage error");
	rc = cli("-n 20 --draft ngram:0", b, cap);
	wt_ok(WEXITSTATUS(rc) == 2 && !b[0], "--draft ngram:0 is a usage error");
	snprintf(args, sizeof(args), "-n 20 --draft %s", vocab_path);
	rc = cli(args, b, cap);
	wt_ok(WEXITSTATUS(rc) == 1 && !b[0], "--draft with another vocabulary fails before "
	      "generating");
	/* the draft on as few stages as hold it: plain's text; its errors */
	rc = cli("-n 120 -i 'Once upon a time' --profile wse3 --sram-kib 1024", a, cap);
	rc |= cli("-n 120 -i 'Once upon a time' --profile wse3 --sram-kib 1024 --draft int4 "
		  "--draft-stages min", b, cap);
	wt_ok(!rc && strlen(a) > 100 && !strcmp(a, b), "wafer run --profile wse3 --draft int4 "
	      "--draft-stages min prints plain greedy decoding's text");
	rc = cli("-n 20 --draft int4 --draft-stages 0", b, cap);
	wt_ok(WEXITSTATUS(rc) == 2 && !b[0], "--draft-stages 0 is a usage error");
	rc = cli("-n 20 --draft int4 --draft-stages min --draft-device 1", b, cap);
	wt_ok(WEXITSTATUS(rc) == 2 && !b[0], "--draft-stages with --draft-device is a usage error");
	rc = cli("-n 20 --profile wse3 --sram-kib 64 --stages 44 --draft int4 --draft-stages 1",
		 b, cap);
	wt_ok(WEXITSTATUS(rc) == 1 && !b[0], "--draft-stages 1 of 64 KiB: the draft does not "
	      "fit, nothing generated");
	test_cli_bench();
out:
	free(a);
	free(b);
}

int main(void)
{
	struct wafer_convert_opts c8 = { .wbits = 8 }, c4 = { .wbits = 4 };
	struct side t = { 0 }, d = { 0 };
	struct wafer_dev *ddev = NULL;
	struct wafer_draft_spec ds;
	struct wfs_ckpt ck;
	double t0 = wt_now();

	if (getenv("WAFER_SPEC_SEEDS"))	/* a longer goodness-of-fit run */
		SEEDS = (unsigned int)atoi(getenv("WAFER_SPEC_SEEDS"));

	model_path = wt_model_path("stories260K.bin") ? strdup(wt_model_path("stories260K.bin")) :
		     NULL;
	tok_path = wt_model_path("tok512.bin") ? strdup(wt_model_path("tok512.bin")) : NULL;
	if (!wt_ok(model_path && tok_path, "shared model and tokenizer found"))
		return wt_done();
	snprintf(trunc_path, sizeof(trunc_path), "/tmp/wafer-spec-%d-3layers.bin", (int)getpid());
	snprintf(vocab_path, sizeof(vocab_path), "/tmp/wafer-spec-%d-vocab256.bin", (int)getpid());
	if (!wt_ok(!wfs_ckpt_load(model_path, &ck) && !write_ckpt(&ck, trunc_path, 3, 512) &&
		   !write_ckpt(&ck, vocab_path, ck.n_layers, 256) &&
		   !wafer_tokenizer_load(tok_path, 512, &tok),
		   "drafts written: the first 3 layers as a checkpoint, a 256-token vocabulary"))
		return wt_done();
	wfs_ckpt_free(&ck);
	t.dev = open_inproc();
	ddev = open_inproc();
	if (!wt_ok(t.dev && ddev, "two in-process devices"))
		return wt_done();

	test_rewind(t.dev);
	wt_diag("%.1f s", wt_now() - t0);
	if (wt_ok(!wafer_model_load_file(t.dev, model_path, &c8, &t.m) &&
		  !wafer_ctx_create(t.m, 1, 512, &t.ctx), "int8 target loaded")) {
		test_greedy(&t, ddev, "int8", &c8);
		wt_diag("%.1f s", wt_now() - t0);
		test_beside(&t, &c8);
		test_bad(&t, ddev);
		wt_diag("%.1f s", wt_now() - t0);
		/* sampling against the 1-layer early draft, whose p and q differ most */
		if (!wafer_draft_parse("early:1", &ds) &&
		    !wafer_draft_load(ddev, &ds, model_path, &c8, t.m, &d.m) &&
		    !wafer_ctx_create(d.m, 1, 512, &d.ctx)) {
			d.dev = ddev;
			test_sampled_seed(&t, &d);
			wt_diag("%.1f s", wt_now() - t0);
			test_sampling(&t, &d, "early:1", 0);
			wt_diag("%.1f s", wt_now() - t0);
		} else {
			wt_ok(0, "early:1 draft for sampling: %s", wafer_last_error());
		}
		side_free(&d);
		test_sampling(&t, NULL, "ngram", 3);
		wt_diag("%.1f s", wt_now() - t0);
	}
	side_free(&t);
	if (wt_ok(!wafer_model_load_file(t.dev, model_path, &c4, &t.m) &&
		  !wafer_ctx_create(t.m, 1, 512, &t.ctx), "int4 target loaded"))
		test_greedy(&t, ddev, "int4", &c4);
	side_free(&t);
	wt_diag("%.1f s", wt_now() - t0);
	test_packed(&c8);
	wt_diag("%.1f s", wt_now() - t0);
	test_cli();

	wafer_close(ddev);
	wafer_close(t.dev);
	wafer_tokenizer_free(tok);
	unlink(trunc_path);
	unlink(vocab_path);
	wt_diag("%.1f s", wt_now() - t0);
	return wt_done();
}
