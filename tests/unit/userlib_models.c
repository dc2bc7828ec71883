// SPDX-License-Identifier: MIT
/*
 * Several models on one in-process device (firmware ABI 1.4): the shared
 * model at int8 (a target) and at int4 (its draft) loaded side by side;
 * generation from each, greedy and sampled, gives the text it gives alone,
 * token for token, also with the other model's generations in between
 * (tests/unit/device_models.c runs both models' jobs in flight at once);
 * unloading either leaves the other generating as alone;
 * wafer_query() counts the models; a second model that does not fit is
 * -ENOSPC with a message that says what it needed and what is left;
 * `wafer info -m A -m B -q int4` shows both models on one device;
 * `wafer run --draft int4` in process puts the draft beside the model on
 * its device, the greedy text identical to plain decoding's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wafer.h"
#include "wt_util.h"

#define MAX_TOK		600
#define STEPS		48
#define PROMPT		"Once upon a time, there was a little girl"

static const char *model_path, *tok_path;
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

/**
 * struct side - one model on the device
 * @bits: its weights' bits
 * @m: the model
 * @ctx: its context
 * @greedy: its greedy text alone
 * @sampled: its sampled text alone (temperature 1, seed 7)
 */
struct side {
	unsigned int bits;
	struct wafer_model *m;
	struct wafer_ctx *ctx;
	struct rec greedy;
	struct rec sampled;
};

static int on_piece(void *arg, int token, const char *piece, int from_prompt)
{
	struct rec *r = arg;

	(void)piece;
	if (!from_prompt && r->n < MAX_TOK)
		r->tok[r->n++] = token;
	return 0;
}

static int same(const struct rec *a, const struct rec *b)
{
	return a->n && a->n == b->n && !memcmp(a->tok, b->tok, a->n * sizeof(a->tok[0]));
}

static struct wafer_dev *open_inproc(uint64_t sram_kib, unsigned int stages)
{
	struct wafer_open_opts o = { .backend = WAFER_BACKEND_INPROC, .profile = "asic",
				     .stages = stages, .sram_bytes = sram_kib << 10 };
	struct wafer_dev *dev = NULL;

	return wafer_open(&o, &dev) ? NULL : dev;
}

static int load(struct wafer_dev *dev, struct side *s)
{
	struct wafer_convert_opts c = { .wbits = s->bits };
	int ret;

	s->m = NULL;
	s->ctx = NULL;
	ret = wafer_model_load_file(dev, model_path, &c, &s->m);
	return ret ? ret : wafer_ctx_create(s->m, 1, 64, &s->ctx);
}

static void unload(struct side *s)
{
	wafer_ctx_destroy(s->ctx);
	wafer_model_unload(s->m);
	s->ctx = NULL;
	s->m = NULL;
}

/* Greedy (@temp 0) or sampled text of @s from the prompt. */
static int gen(struct side *s, float temp, struct rec *r)
{
	struct wafer_gen_opts go = { .steps = STEPS, .temperature = temp, .top_p = 0.9f,
				     .seed = 7, .on_piece = on_piece, .arg = r };

	r->n = 0;
	return wafer_generate(s->ctx, tok, PROMPT, &go, NULL);
}

/* Both texts of @s equal what it gave alone. */
static int as_alone(struct side *s)
{
	struct rec g, r;

	return !gen(s, 0, &g) && !gen(s, 1.0f, &r) && same(&g, &s->greedy) &&
	       same(&r, &s->sampled);
}

/* Each model alone on a fresh device: the texts to compare with. */
static int alone(struct side *s)
{
	struct wafer_dev *dev = open_inproc(0, 0);
	int ret = -1;

	if (dev && !load(dev, s))
		ret = gen(s, 0, &s->greedy) || gen(s, 1.0f, &s->sampled);
	unload(s);
	wafer_close(dev);
	return ret;
}

/*
 * The two models' generations in turn: a sampled run of @a, then of @b,
 * then @a's greedy one, @b's: each model's contexts see the other's jobs
 * run between theirs.
 */
static int interleaved(struct side *a, struct side *b)
{
	struct rec r[4];

	return !gen(a, 1.0f, &r[0]) && !gen(b, 1.0f, &r[1]) && !gen(a, 0, &r[2]) &&
	       !gen(b, 0, &r[3]) && same(&r[0], &a->sampled) && same(&r[1], &b->sampled) &&
	       same(&r[2], &a->greedy) && same(&r[3], &b->greedy);
}

/* Load @x next to @y, use both, unload @x first: @y generates on. */
static void side_by_side(struct side *x, struct side *y)
{
	struct wafer_dev *dev = open_inproc(0, 0);
	struct wafer_info info = { 0 };
	int ok;

	ok = dev && !load(dev, y) && !load(dev, x) && !wafer_query(dev, &info);
	if (!wt_ok(ok && info.models_loaded == 2 && info.max_models >= 2,
		   "int%u loaded next to int%u on one in-process device (%u models of at most %u)",
		   x->bits, y->bits, info.models_loaded, info.max_models)) {
		wt_diag("%s", wafer_last_error());
		goto out;
	}
	wt_ok(as_alone(x) && as_alone(y) && interleaved(x, y),
	      "int%u and int%u side by side: greedy and sampled text as each alone, also "
	      "interleaved", x->bits, y->bits);
	unload(x);
	ok = as_alone(y) && !wafer_query(dev, &info) && info.models_loaded == 1;
	wt_ok(ok, "int%u unloaded first: int%u generates on as alone, 1 model left", x->bits,
	      y->bits);
	ok = !load(dev, x) && as_alone(x) && as_alone(y);
	wt_ok(ok, "int%u loaded again: both as alone", x->bits);
out:
	unload(x);
	unload(y);
	wafer_close(dev);
}

/* A second model where only one fits: -ENOSPC naming what it needed. */
static void does_not_fit(struct side *a, struct side *b)
{
	struct wafer_dev *dev = open_inproc(576, 1);
	const char *err;
	int ret;

	if (!wt_ok(dev && !load(dev, a), "int%u alone on asic/1 x 576 KiB", a->bits))
		goto out;
	ret = load(dev, b);
	err = wafer_last_error();
	wt_ok(ret == -ENOSPC && strstr(err, "does not fit next to the 1 model") &&
	      strstr(err, "needs") && strstr(err, "KiB per stage are left"),
	      "int%u next to it: -ENOSPC: %s", b->bits, err);
	wt_ok(!b->m && as_alone(a), "nothing of it left, int%u generates on as alone", a->bits);
out:
	unload(b);
	unload(a);
	wafer_close(dev);
}

/* A wafer command line, its output piped into @check: 0 if @check passes. */
static int cli_check(const char *args, const char *check)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char cmd[1536];

	snprintf(cmd, sizeof(cmd), "%s/bin/wafer %s | %s", build, args, check);
	return system(cmd);
}

/*
 * wafer info with two -m: both models, the second at int4, side by side;
 * wafer run --draft int4 in process: the draft beside the model.
 */
static void cli(void)
{
	char args[1024];

	snprintf(args, sizeof(args), "info -b inproc -m %s -m %s -q int4 2>/dev/null",
		 model_path, model_path);
	wt_ok(!cli_check(args, "grep -c -e '5 layers, int8, over 1 device' "
			 "-e '5 layers, int4, over 1 device' "
			 "-e 'models:   2 loaded side by side' | grep -qx 3"),
	      "wafer info -m MODEL -m MODEL -q int4: both models, int8 and int4, loaded "
	      "side by side on one in-process device");
	snprintf(args, sizeof(args), "run %s -z %s --backend inproc --draft int4 -n 48 "
		 "-i 'Once upon a time' 2>&1 >/dev/null", model_path, tok_path);
	wt_ok(!cli_check(args, "grep -c -e '^wafer: draft beside the model on its in-process "
			 "device$' -e 'text identical (greedy)' | grep -qx 2"),
	      "wafer run --draft int4 in process: the draft beside the model on its device, "
	      "text identical to plain greedy decoding");
}

int main(void)
{
	const char *tp = wt_model_path("tok512.bin");
	struct side s8 = { .bits = 8 }, s4 = { .bits = 4 };
	int ok;

	ok = tp && !wafer_tokenizer_load(tp, 512, &tok);
	tok_path = tp ? strdup(tp) : NULL;
	model_path = wt_model_path("stories260K.bin") ? strdup(wt_model_path("stories260K.bin")) :
		     NULL;
	if (!wt_ok(ok && model_path,
		   "shared model and tokenizer found"))
		return wt_done();
	ok = !alone(&s8) && !alone(&s4);
	if (!wt_ok(ok, "int8 and int4 alone: %u and %u tokens", s8.greedy.n, s4.greedy.n))
		return wt_done();
	side_by_side(&s4, &s8);
	side_by_side(&s8, &s4);
	does_not_fit(&s8, &s4);
	cli();
	wafer_tokenizer_free(tok);
	return wt_done();
}
