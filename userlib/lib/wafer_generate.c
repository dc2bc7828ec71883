// SPDX-License-Identifier: MIT
/*
 * libwafer: text generation, the loop of llama2.c run.c generate() on the
 * device: encode the prompt with BOS, prefill it (as few jobs as the device
 * allows, submitted as one batch), then one job per sampled token until
 * @steps positions ran or BOS was sampled.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wafer_backend.h"

/**
 * struct gen - one generation in progress
 * @ctx: context
 * @o: options
 * @st: statistics being gathered
 * @in: token ids, one per position
 * @out: the result of the last job
 * @top_k: pairs per result
 */
struct gen {
	struct wafer_ctx *ctx;
	const struct wafer_gen_opts *o;
	struct wafer_gen_stats *st;
	struct wafer_bo *in;
	struct wafer_bo *out;
	unsigned int top_k;
};

/*
 * Runs positions [pos, pos + n) of @slot of @ctx, ids already in @in, in
 * as few jobs as the device takes, all in flight at once; results at
 * @out's start (one per position with WAFER_JOB_ALL_POSITIONS, else the
 * last).  Adds the jobs' modelled time to *@ns and their count to *@jobs.
 */
int wafer_run_positions(struct wafer_ctx *ctx, unsigned int slot, struct wafer_bo *in,
			struct wafer_bo *out, unsigned int pos, unsigned int n, unsigned int flags,
			unsigned int top_k, uint64_t *ns, unsigned int *jobs)
{
	struct wafer_dev *dev = ctx->model->dev;
	unsigned int per = dev->info.max_tokens_per_job ? dev->info.max_tokens_per_job : n;
	unsigned int njobs = (n + per - 1) / per, i, got = 0;
	struct wafer_job *j = calloc(njobs, sizeof(*j));
	struct wafer_trace_run tr;
	struct wafer_completion c;
	int ret = 0, sub = 0;

	if (!j)
		return wafer_set_error(-ENOMEM, "out of memory");
	for (i = 0; i < njobs; i++) {
		unsigned int p = pos + i * per;

		j[i] = (struct wafer_job){
			.ctx = ctx, .slot = slot, .start_pos = p,
			.n_tokens = n - i * per < per ? n - i * per : per, .flags = flags,
			.top_k = top_k, .in = in, .in_offset = (uint64_t)p * 4, .out = out,
			.out_offset = (flags & WAFER_JOB_ALL_POSITIONS) ?
				      (uint64_t)(p - pos) * WAFER_RESULT_SIZE(top_k) : 0,
			.user_data = i,
		};
	}
	ret = wafer_trace_run_begin(dev, j, njobs, &tr);
	/* One batch: all chunks of a prefill are in flight together. */
	for (i = 0; !ret && i < njobs; i += (unsigned int)sub) {
		sub = wafer_submit(dev, j + i, njobs - i);
		if (sub == -EAGAIN && wafer_inflight(dev))
			break;	/* reap what is in flight and fail below */
		if (sub < 0) {
			ret = sub;
			break;
		}
	}
	free(j);
	while (wafer_inflight(dev)) {
		int r = wafer_reap(dev, &c, 1, 1, -1);

		if (r <= 0) {
			wafer_trace_run_end(&tr, 0);
			return r < 0 ? r : wafer_set_error(-ETIMEDOUT, "a job at position %u did "
							   "not complete in time", pos);
		}
		got++;
		(*jobs)++;
		*ns += c.device_ns;
		wafer_trace_run_done(&tr, &c);
		if (c.status && !ret)
			ret = wafer_set_error(c.status, "the job at positions %u..+%u failed: %s",
					      pos, n, wafer_strerror(c.status));
	}
	if (!ret && got < njobs)
		ret = wafer_set_error(-EAGAIN, "the device took %u of %u jobs", got, njobs);
	sub = wafer_trace_run_end(&tr, !ret);
	return ret ? ret : sub;
}

/* Runs positions [pos, pos + n) (ids already in g->in); result of the last in g->out. */
static int run(struct gen *g, unsigned int pos, unsigned int n)
{
	uint64_t ns = 0;
	int ret = wafer_run_positions(g->ctx, g->o->slot, g->in, g->out, pos, n, 0, g->top_k,
				      &ns, &g->st->jobs);

	g->st->device_ns += ns;
	if (n == 1)
		g->st->decode_device_ns += ns;
	return ret;
}

static int emit(struct gen *g, const struct wafer_tokenizer *tok, int prev, int token,
		int from_prompt)
{
	const char *piece = wafer_tokenizer_decode(tok, prev, token);

	if (!piece)
		return wafer_set_error(-ERANGE, "token %d is outside the vocabulary", token);
	if (g->o->on_piece && g->o->on_piece(g->o->arg, token, piece, from_prompt))
		return 1;
	return 0;
}

static int loop(struct gen *g, const struct wafer_tokenizer *tok, const int *prompt,
		unsigned int np, unsigned int steps, uint64_t t0)
{
	uint32_t *ids = wafer_bo_map(g->in);
	struct wafer_sampler s;
	unsigned int pos, i;
	uint64_t t_first = 0;
	int ret, token, next;

	wafer_sampler_init(&s, g->o->temperature, g->o->top_p, g->o->seed);
	/* Prompt pieces as llama2.c prints them while it forces the prompt. */
	for (i = 1; i < np && i <= steps; i++) {
		ret = emit(g, tok, prompt[i - 1], prompt[i], 1);
		if (ret)
			return ret < 0 ? ret : 0;
	}
	if (np > steps)
		return 0;
	for (i = 0; i < np; i++)
		ids[i] = (uint32_t)prompt[i];
	ret = run(g, 0, np);
	token = prompt[np - 1];
	for (pos = np; !ret; pos++) {
		next = wafer_sample(&s, wafer_result(g->out, 0, g->top_k, 0));
		if (!t_first) {
			t_first = wafer_now_ns();
			g->st->ttft_ns = t_first - t0;
		}
		if (next == WAFER_TOKEN_BOS)
			break;
		g->st->generated_tokens++;
		ret = emit(g, tok, token, next, 0);
		if (ret)
			break;
		token = next;
		if (pos >= steps)
			break;
		ids[pos] = (uint32_t)token;
		ret = run(g, pos, 1);
	}
	if (t_first)
		g->st->decode_ns = wafer_now_ns() - t_first;
	return ret < 0 ? ret : 0;
}

int wafer_generate(struct wafer_ctx *ctx, const struct wafer_tokenizer *tok,
		   const char *prompt, const struct wafer_gen_opts *opts,
		   struct wafer_gen_stats *stats)
{
	struct wafer_gen_stats st = { 0 };
	struct gen g = { .ctx = ctx, .o = opts, .st = &st };
	uint64_t t0 = wafer_now_ns();
	unsigned int steps, max;
	int *toks = NULL, np, ret;

	if (!ctx || !tok || !opts)
		return wafer_set_error(-EINVAL, "wafer_generate: NULL argument");
	if (opts->slot >= ctx->slots)
		return wafer_set_error(-EINVAL, "slot %u: the context has %u", opts->slot, ctx->slots);
	if (opts->top_k > WAFER_MAX_TOPK)
		return wafer_set_error(-EINVAL, "top_k %u above %d", opts->top_k, WAFER_MAX_TOPK);
	if (wafer_tokenizer_vocab_size(tok) != ctx->model->info.vocab_size)
		return wafer_set_error(-EINVAL, "the tokenizer has %u tokens, the model %u",
				       wafer_tokenizer_vocab_size(tok), ctx->model->info.vocab_size);
	g.top_k = opts->top_k ? opts->top_k : WAFER_MAX_TOPK;
	steps = opts->steps && opts->steps <= ctx->ctx_len ? opts->steps : ctx->ctx_len;
	if (!prompt)
		prompt = "";
	max = (unsigned int)strlen(prompt) + 3;
	toks = malloc(max * sizeof(*toks));
	if (!toks)
		return wafer_set_error(-ENOMEM, "out of memory");
	np = wafer_tokenizer_encode(tok, prompt, 1, 0, toks, max);
	ret = np < 0 ? np : 0;
	if (!ret)
		ret = wafer_bo_create(ctx->model->dev, (size_t)ctx->ctx_len * 4, &g.in);
	if (!ret)
		ret = wafer_bo_create(ctx->model->dev, WAFER_RESULT_SIZE(g.top_k), &g.out);
	if (!ret) {
		st.prompt_tokens = (unsigned int)np;
		ret = loop(&g, tok, toks, (unsigned int)np, steps, t0);
	}
	st.total_ns = wafer_now_ns() - t0;
	wafer_bo_destroy(g.out);
	wafer_bo_destroy(g.in);
	free(toks);
	if (stats)
		*stats = st;
	return ret;
}
