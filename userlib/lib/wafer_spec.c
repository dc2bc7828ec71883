// SPDX-License-Identifier: MIT
/*
 * libwafer: speculative decoding.  Each round a draft (a model on a device
 * of its own, or n-gram lookup in the text so far) proposes up to K tokens
 * after the last one; the target runs the last token and the proposals in
 * one job with a result per position, and keeps the proposals its own
 * results agree with (greedy: argmax; sampling: the rejection rule of
 * Leviathan et al. 2023), plus one token of its own.  Neither model keeps
 * a record of rejected positions: the next round's jobs start at the first
 * position whose token changed and overwrite their KV (the device lets a
 * slot continue from any position whose predecessors ran).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wafer_backend.h"
#include "wafer_spec.h"

#define NGRAM_DEFAULT	3
#define NGRAM_MAX	16
/* The draft's sampler: the seed's, moved, so the two streams differ. */
#define DRAFT_SEED_MIX	0x9e3779b97f4a7c15ull

/**
 * struct spec - one speculative generation in progress
 * @ctx: the target's context
 * @o: generation options
 * @so: speculation options
 * @st: generation statistics being gathered
 * @sst: speculation statistics being gathered
 * @in: target token ids, one per position
 * @out: the target's results (K + 1 per verify)
 * @din: draft token ids, one per position
 * @dout: the draft's last result
 * @top_k: pairs per result
 * @k: proposals per round at most
 * @seq: the text so far, prompt included: the token at each position
 * @n: tokens in @seq
 * @dvalid: the draft's KV holds @seq's tokens at positions below this
 * @ts: the target's sampler
 * @ds: the draft's sampler
 * @t0: start, host time
 * @t_first: when the first token was sampled (0: not yet)
 */
struct spec {
	struct wafer_ctx *ctx;
	const struct wafer_gen_opts *o;
	const struct wafer_spec_opts *so;
	struct wafer_gen_stats *st;
	struct wafer_spec_stats *sst;
	struct wafer_bo *in;
	struct wafer_bo *out;
	struct wafer_bo *din;
	struct wafer_bo *dout;
	unsigned int top_k;
	unsigned int k;
	int *seq;
	unsigned int n;
	unsigned int dvalid;
	struct wafer_sampler ts;
	struct wafer_sampler ds;
	uint64_t t0;
	uint64_t t_first;
};

/* Target jobs: counted in the generation's statistics. */
static int run_target(struct spec *g, unsigned int pos, unsigned int n, unsigned int flags,
		      uint64_t *ns)
{
	uint64_t t = 0;
	int ret = wafer_run_positions(g->ctx, g->o->slot, g->in, g->out, pos, n, flags, g->top_k, &t,
		      &g->st->jobs);

	g->st->device_ns += t;
	if (ns)
		*ns += t;
	return ret;
}

static int run_draft(struct spec *g, unsigned int pos, unsigned int n, uint64_t *ns)
{
	uint64_t t = 0;
	int ret = wafer_run_positions(g->so->draft, g->so->draft_slot, g->din, g->dout, pos, n, 0, g->top_k,
		      &t, &g->sst->draft_jobs);

	g->st->device_ns += t;
	if (ns)
		*ns += t;
	return ret;
}

/*
 * Appends @token to the text and hands its piece to the caller.  1: stop
 * (BOS, the caller said so, or the token sits at the last position).
 */
static int push(struct spec *g, const struct wafer_tokenizer *tok, int token,
		unsigned int steps)
{
	const char *piece;

	if (!g->t_first) {
		g->t_first = wafer_now_ns();
		g->st->ttft_ns = g->t_first - g->t0;
	}
	if (token == WAFER_TOKEN_BOS)
		return 1;
	g->st->generated_tokens++;
	piece = wafer_tokenizer_decode(tok, g->seq[g->n - 1], token);
	if (!piece)
		return wafer_set_error(-ERANGE, "token %d is outside the vocabulary", token);
	g->seq[g->n++] = token;
	if (g->o->on_piece && g->o->on_piece(g->o->arg, token, piece, 0))
		return 1;
	return g->n - 1 >= steps;
}

/*
 * n-gram draft: the continuation (at most @k tokens) of the latest earlier
 * occurrence of the longest suffix of @seq, up to @maxn tokens long.
 */
static unsigned int ngram_propose(const int *seq, unsigned int n, unsigned int maxn,
				  unsigned int k, int *d)
{
	unsigned int m, j, i, c = 0;

	for (m = maxn < n - 1 ? maxn : n - 1; m >= 1; m--) {
		for (j = n - m; j-- > 0;) {
			if (memcmp(seq + j, seq + n - m, m * sizeof(*seq)))
				continue;
			for (i = j + m; i < n && c < k; i++)
				d[c++] = seq[i];
			return c;
		}
	}
	return 0;
}

static void to_dist(const struct wafer_sampler *s, const struct wafer_token_result *r,
		    struct wafer_spec_dist *q)
{
	q->n = wafer_sample_dist(s, r, q->tok, q->p);
}

static double mass(const struct wafer_spec_dist *q, uint32_t token)
{
	unsigned int i;

	for (i = 0; i < q->n; i++) {
		if (q->tok[i] == token)
			return q->p[i];
	}
	return 0.0;
}

/*
 * Model draft: catch its KV up with the text through @pos (the positions
 * from the first that changed), then propose @k tokens one job at a time,
 * each from the last one's result; their distributions into @q.
 */
static int draft_model(struct spec *g, unsigned int pos, unsigned int k, int *d,
		       struct wafer_spec_dist *q)
{
	uint32_t *ids = wafer_bo_map(g->din);
	unsigned int i;
	int ret;

	for (i = g->dvalid; i <= pos; i++)
		ids[i] = (uint32_t)g->seq[i];
	ret = run_draft(g, g->dvalid, pos + 1 - g->dvalid, &g->sst->draft_ns);
	for (i = 0; !ret && i < k; i++) {
		const struct wafer_token_result *r = wafer_result(g->dout, 0, g->top_k, 0);

		if (g->ts.temperature > 0.0f) {
			to_dist(&g->ds, r, &q[i]);
			d[i] = wafer_sample(&g->ds, r);
		} else {
			d[i] = (int)r->argmax;
		}
		if (i + 1 < k) {
			ids[pos + 1 + i] = (uint32_t)d[i];
			ret = run_draft(g, pos + 1 + i, 1, &g->sst->draft_ns);
		}
	}
	g->dvalid = pos + k;
	return ret;
}

/* A token from norm(max(0, p - q)); from p if that has no mass (rounding). */
static int residual(struct wafer_sampler *ts, const struct wafer_spec_dist *p,
		    const struct wafer_spec_dist *q, int ngram_x)
{
	double w[WAFER_MAX_TOPK], sum = 0.0, u, cdf = 0.0;
	unsigned int i;

	for (i = 0; i < p->n; i++) {
		double qi = q ? mass(q, p->tok[i]) : (int)p->tok[i] == ngram_x;

		w[i] = p->p[i] > qi ? p->p[i] - qi : 0.0;
		sum += w[i];
	}
	if (sum <= 0.0) {
		for (i = 0; i < p->n; i++)
			w[i] = p->p[i];
		sum = 1.0;
	}
	u = wafer_sample_uniform(ts) * sum;
	for (i = 0; i < p->n; i++) {
		cdf += w[i];
		if (u < cdf)
			return (int)p->tok[i];
	}
	for (i = p->n; i-- > 0;) {
		if (w[i] > 0.0)
			return (int)p->tok[i];
	}
	return (int)p->tok[0];
}

/* wafer_spec.h: the rule; p is the target's distribution. */
int wafer_spec_accept(struct wafer_sampler *ts, const struct wafer_spec_dist *p, int x,
		      const struct wafer_spec_dist *q, int *next)
{
	double px = mass(p, (uint32_t)x), qx = q ? mass(q, (uint32_t)x) : 1.0;

	/* min(1, p/q): p >= q always passes (u < 1) */
	if (qx > 0.0 ? wafer_sample_uniform(ts) < px / qx : px > 0.0)
		return 1;
	*next = residual(ts, p, q, x);
	return 0;
}

/*
 * Is draft token @x (the @i-th) accepted against the target's result @r?
 * If not, *@next is the target's token in its place.
 */
static int accept(struct spec *g, const struct wafer_token_result *r, int x,
		  const struct wafer_spec_dist *q, int *next)
{
	struct wafer_spec_dist p;

	if (g->ts.temperature <= 0.0f) {
		*next = (int)r->argmax;
		return x == (int)r->argmax;
	}
	to_dist(&g->ts, r, &p);
	return wafer_spec_accept(&g->ts, &p, x, q, next);
}

/* One round at @pos (the last token's position): 1 when generation ended. */
static int round_at(struct spec *g, const struct wafer_tokenizer *tok, unsigned int pos,
		    unsigned int steps)
{
	struct wafer_spec_dist q[WAFER_SPEC_MAX_DRAFT];
	int d[WAFER_SPEC_MAX_DRAFT], next = 0, ret = 0;
	uint32_t *ids = wafer_bo_map(g->in);
	unsigned int k = g->k, j;
	struct wafer_ctx *dc = g->so->draft;

	/* proposals sit at pos + 1 .. pos + k, all before the last position */
	if (k > steps - 1 - pos)
		k = steps - 1 - pos;
	if (dc) {
		if (pos >= dc->ctx_len)
			k = 0;
		else if (k > dc->ctx_len - pos)
			k = dc->ctx_len - pos;
		if (k)
			ret = draft_model(g, pos, k, d, q);
	} else {
		k = ngram_propose(g->seq, g->n, g->so->ngram ? g->so->ngram : NGRAM_DEFAULT, k, d);
	}
	if (ret)
		return ret;
	ids[pos] = (uint32_t)g->seq[pos];
	for (j = 0; j < k; j++)
		ids[pos + 1 + j] = (uint32_t)d[j];
	ret = run_target(g, pos, k + 1, WAFER_JOB_ALL_POSITIONS, &g->sst->verify_ns);
	if (ret)
		return ret;
	g->sst->verifies++;
	g->sst->drafted += k;
	for (j = 0; j < k; j++) {
		const struct wafer_token_result *r = wafer_result(g->out, 0, g->top_k, j);

		if (!accept(g, r, d[j], dc ? &q[j] : NULL, &next))
			break;
		g->sst->accepted++;
		ret = push(g, tok, d[j], steps);
		if (ret)
			return ret;
	}
	/* the draft's KV agrees with the text below pos + j + 1 (and ran below pos + k) */
	if (dc && g->dvalid > pos + j + 1)
		g->dvalid = pos + j + 1;
	if (j == k)	/* all accepted: the target's own next token */
		next = wafer_sample(&g->ts, wafer_result(g->out, 0, g->top_k, k));
	return push(g, tok, next, steps);
}

static int loop(struct spec *g, const struct wafer_tokenizer *tok, const int *prompt,
		unsigned int np, unsigned int steps)
{
	struct wafer_ctx *dc = g->so->draft;
	unsigned int i, pre;
	int ret = 0;

	/* Prompt pieces as llama2.c prints them while it forces the prompt. */
	for (i = 1; i < np && i <= steps; i++) {
		const char *piece = wafer_tokenizer_decode(tok, prompt[i - 1], prompt[i]);

		if (!piece)
			return wafer_set_error(-ERANGE, "token %d is outside the vocabulary",
					       prompt[i]);
		if (g->o->on_piece && g->o->on_piece(g->o->arg, prompt[i], piece, 1))
			return 0;
	}
	if (np > steps)
		return 0;
	memcpy(g->seq, prompt, np * sizeof(*prompt));
	g->n = np;
	/* All but the last prompt token: the first round runs that one. */
	if (np > 1) {
		uint32_t *ids = wafer_bo_map(g->in);

		for (i = 0; i < np - 1; i++)
			ids[i] = (uint32_t)prompt[i];
		ret = run_target(g, 0, np - 1, 0, NULL);
		pre = dc ? (np - 1 < dc->ctx_len ? np - 1 : dc->ctx_len) : 0;
		if (!ret && pre) {
			ids = wafer_bo_map(g->din);
			for (i = 0; i < pre; i++)
				ids[i] = (uint32_t)prompt[i];
			ret = run_draft(g, 0, pre, NULL);
			g->dvalid = pre;
		}
	}
	while (!ret)
		ret = round_at(g, tok, g->n - 1, steps);
	if (g->t_first)
		g->st->decode_ns = wafer_now_ns() - g->t_first;
	return ret < 0 ? ret : 0;
}

static int check(struct wafer_ctx *ctx, const struct wafer_tokenizer *tok,
		 const struct wafer_gen_opts *o, const struct wafer_spec_opts *so)
{
	const struct wafer_model_info *ti;
	unsigned int per;

	if (!ctx || !tok || !o || !so)
		return wafer_set_error(-EINVAL, "wafer_generate_spec: NULL argument");
	ti = &ctx->model->info;
	per = ctx->model->dev->info.max_tokens_per_job;
	if (so->draft_tokens < 1 || so->draft_tokens > WAFER_SPEC_MAX_DRAFT)
		return wafer_set_error(-EINVAL, "draft_tokens %u: K must be 1..%d",
				       so->draft_tokens, WAFER_SPEC_MAX_DRAFT);
	if (per && so->draft_tokens + 1 > per)
		return wafer_set_error(-EINVAL, "draft_tokens %u: a verify job of %u tokens, the "
				       "device takes %u per job", so->draft_tokens,
				       so->draft_tokens + 1, per);
	if (!so->draft && so->ngram > NGRAM_MAX)
		return wafer_set_error(-EINVAL, "ngram %u: must be 1..%d (0: %d)", so->ngram,
				       NGRAM_MAX, NGRAM_DEFAULT);
	if (o->slot >= ctx->slots)
		return wafer_set_error(-EINVAL, "slot %u: the context has %u", o->slot, ctx->slots);
	if (o->top_k > WAFER_MAX_TOPK)
		return wafer_set_error(-EINVAL, "top_k %u above %d", o->top_k, WAFER_MAX_TOPK);
	if (wafer_tokenizer_vocab_size(tok) != ti->vocab_size)
		return wafer_set_error(-EINVAL, "the tokenizer has %u tokens, the model %u",
				       wafer_tokenizer_vocab_size(tok), ti->vocab_size);
	if (!so->draft)
		return 0;
	if (so->draft == ctx)
		return wafer_set_error(-EINVAL, "the draft's context is the target's");
	if (so->draft->model->info.vocab_size != ti->vocab_size)
		return wafer_set_error(-EINVAL, "the draft has a vocabulary of %u tokens, the "
				       "target %u", so->draft->model->info.vocab_size,
				       ti->vocab_size);
	if (so->draft_slot >= so->draft->slots)
		return wafer_set_error(-EINVAL, "draft_slot %u: the draft's context has %u",
				       so->draft_slot, so->draft->slots);
	return 0;
}

int wafer_generate_spec(struct wafer_ctx *ctx, const struct wafer_tokenizer *tok,
			const char *prompt, const struct wafer_gen_opts *opts,
			const struct wafer_spec_opts *so, struct wafer_gen_stats *stats,
			struct wafer_spec_stats *sst)
{
	struct wafer_gen_stats st = { 0 };
	struct wafer_spec_stats ss = { 0 };
	struct spec g = { .ctx = ctx, .o = opts, .so = so, .st = &st, .sst = &ss };
	unsigned int steps, max;
	int *toks = NULL, np, ret;

	g.t0 = wafer_now_ns();
	ret = check(ctx, tok, opts, so);
	if (ret)
		goto out;
	g.top_k = opts->top_k ? opts->top_k : WAFER_MAX_TOPK;
	g.k = so->draft_tokens;
	steps = opts->steps && opts->steps <= ctx->ctx_len ? opts->steps : ctx->ctx_len;
	wafer_sampler_init(&g.ts, opts->temperature, opts->top_p, opts->seed);
	wafer_sampler_init(&g.ds, opts->temperature, opts->top_p,
			   (opts->seed ? opts->seed : 1) ^ DRAFT_SEED_MIX);
	if (!prompt)
		prompt = "";
	max = (unsigned int)strlen(prompt) + 3;
	toks = malloc(max * sizeof(*toks));
	g.seq = malloc(((size_t)(max > steps ? max : steps) + 1) * sizeof(*g.seq));
	if (!toks || !g.seq) {
		ret = wafer_set_error(-ENOMEM, "out of memory");
		goto out;
	}
	np = wafer_tokenizer_encode(tok, prompt, 1, 0, toks, max);
	ret = np < 0 ? np : 0;
	if (!ret)
		ret = wafer_bo_create(ctx->model->dev, (size_t)ctx->ctx_len * 4, &g.in);
	if (!ret)
		ret = wafer_bo_create(ctx->model->dev,
				      (size_t)(g.k + 1) * WAFER_RESULT_SIZE(g.top_k), &g.out);
	if (!ret && so->draft)
		ret = wafer_bo_create(so->draft->model->dev, (size_t)so->draft->ctx_len * 4,
				      &g.din);
	if (!ret && so->draft)
		ret = wafer_bo_create(so->draft->model->dev, WAFER_RESULT_SIZE(g.top_k), &g.dout);
	if (!ret) {
		st.prompt_tokens = (unsigned int)np;
		ret = loop(&g, tok, toks, (unsigned int)np, steps);
	}
	st.decode_device_ns = ss.verify_ns + ss.draft_ns;
out:
	st.total_ns = wafer_now_ns() - g.t0;
	wafer_bo_destroy(g.dout);
	wafer_bo_destroy(g.din);
	wafer_bo_destroy(g.out);
	wafer_bo_destroy(g.in);
	free(g.seq);
	free(toks);
	if (stats)
		*stats = st;
	if (sst)
		*sst = ss;
	return ret;
}
