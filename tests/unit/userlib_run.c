// SPDX-License-Identifier: MIT
/*
 * `wafer run --backend inproc` against llama2.c's printing loop over the
 * fp32 reference forward pass (tests/common/ref_llama.h): greedy stdout is
 * exactly the reference text for int8 (which agrees with fp32 for > 100
 * tokens), with and without a prompt; int4 is judged against the float
 * reference on its own de-quantised weights.  Plus the CLI's error paths.
 *
 * -m chat: each reply is libwafer's greedy continuation of the
 * conversation rendered by the chat template (written out here by hand,
 * the template's spec), up to EOS: one turn from -i with the story
 * template, and two turns from stdin with llama2's and a system prompt.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "ref_llama.h"
#include "wafer.h"
#include "wfs_pack.h"
#include "wt_util.h"

#define TEXT_MAX	65536

static const char *model, *tokpath;
static struct wafer_tokenizer *tok;

/* Appends what llama2.c's safe_printf would print. */
static void put(char *text, const char *piece)
{
	if (wafer_piece_printable(piece) && strlen(text) + strlen(piece) < TEXT_MAX - 2)
		strcat(text, piece);
}

/* llama2.c run.c generate() with greedy sampling over the float model. */
static int ref_text(const struct wfs_ckpt *c, const char *prompt, int steps, char *text)
{
	int toks[512], n = wafer_tokenizer_encode(tok, prompt, 1, 0, toks, 512);
	int token, next, pos = 0;
	struct ref_state s;

	if (n < 1 || ref_init(&s, c, steps))
		return -1;
	text[0] = '\0';
	token = toks[0];
	while (pos < steps) {
		float *logits = ref_forward(&s, token, pos);

		next = pos < n - 1 ? toks[pos + 1] : ref_argmax(logits, c->vocab_size);
		pos++;
		if (next == 1)
			break;
		put(text, wafer_tokenizer_decode(tok, token, next));
		token = next;
	}
	strcat(text, "\n");
	ref_free(&s);
	return 0;
}

/* Runs the CLI; returns its exit status, stdout in @out. */
static int cli(const char *args, char *out)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), "%s/bin/wafer run %s -z %s %s 2>/dev/null", build, model,
		 tokpath, args);
	return wt_capture(cmd, out, TEXT_MAX);
}

static int first_diff(const char *a, const char *b)
{
	int i = 0;

	while (a[i] && a[i] == b[i])
		i++;
	return i;
}

static void check(const char *name, const char *args, const struct wfs_ckpt *c,
		  const char *prompt, int steps)
{
	char *want = malloc(TEXT_MAX), *got = malloc(TEXT_MAX);
	char full[512];
	int rc;

	snprintf(full, sizeof(full), "--backend inproc -t 0 -n %d %s", steps, args);
	if (!want || !got || ref_text(c, prompt, steps, want)) {
		wt_ok(0, "%s: reference text", name);
		return;
	}
	rc = cli(full, got);
	if (!wt_ok(rc == 0 && !strcmp(got, want), "%s: stdout equals llama2.c's greedy text "
		   "over %d positions (%zu bytes)", name, steps, strlen(want)))
		wt_diag("exit %d, first difference at byte %d:\n# want: %.200s\n#  got: %.200s",
			rc, first_diff(want, got), want, got);
	else if (steps >= 100)
		wt_diag("%.160s...", want);
	free(want);
	free(got);
}

/* wafer run's text equals the reference decode's, int8 and int4, on 1 to 5 devices. */
static void test_text_as_reference(const struct wfs_ckpt *c)
{
	struct wfs_pack_opts o4 = { .wbits = 4, .group_size = 32 };
	struct wfs_ckpt dq;

	check("int8, no prompt", "", c, "", 100);
	check("int8, prompt", "-i 'Once upon a time, there was a dog'", c,
	      "Once upon a time, there was a dog", 64);
	check("int8, prompt longer than -n", "-i 'One day, Tom and Lily went to the park'", c,
	      "One day, Tom and Lily went to the park", 5);
	if (wt_ok(wfs_pack_dequant(c, &o4, &dq) == 0, "de-quantised int4 weights")) {
		check("int4 vs its de-quantised float model", "--quant int4", &dq, "", 256);
		check("int4 over 3 devices vs its de-quantised float model", "--quant int4 -d 0-2",
		      &dq, "", 256);
	}
	/* The model over five in-process devices, and over two by an explicit split. */
	check("int8 over 5 devices", "-d 0-4", c, "", 100);
	check("int8 over 2 devices split 4+1, prompt", "-d 0,1 --split 4,1 "
	      "-i 'Once upon a time, there was a dog'", c, "Once upon a time, there was a dog", 64);
	/* Weight streaming: the same text, on one device and over three. */
	check("int8, weights streamed", "--stream-weights on", c, "", 100);
	check("int8 over 3 devices, weights streamed, prompt", "-d 0-2 --stream-weights on "
	      "-i 'Once upon a time, there was a dog'", c, "Once upon a time, there was a dog", 64);
}

/* The generated pieces of a greedy wafer_generate(), up to EOS (chat's reply). */
static int reply_piece(void *arg, int token, const char *piece, int from_prompt)
{
	if (from_prompt)
		return 0;
	if (token == WAFER_TOKEN_EOS)
		return 1;
	put(arg, piece);
	return 0;
}

/* libwafer's greedy reply to @prompt over @steps positions into @text. */
static int reply(struct wafer_ctx *ctx, const char *prompt, unsigned int steps, char *text)
{
	struct wafer_gen_opts go = { .steps = steps, .on_piece = reply_piece, .arg = text };

	text[0] = '\0';
	return wafer_generate(ctx, tok, prompt, &go, NULL);
}

static void test_chat(void)
{
	struct wafer_convert_opts co = { .wbits = 8, .group_size = 32 };
	struct wafer_open_opts o = { .backend = WAFER_BACKEND_INPROC };
	char *a1 = malloc(TEXT_MAX), *a2 = malloc(TEXT_MAX), *want = malloc(TEXT_MAX);
	char *got = malloc(TEXT_MAX), *conv = malloc(TEXT_MAX);
	const char *sys1 = "[INST] <<SYS>>\nBe kind\n<</SYS>>\n\nHi [/INST]";
	struct wafer_model *m = NULL;
	struct wafer_ctx *ctx = NULL;
	struct wafer_dev *dev = NULL;
	char cmd[2048];
	int rc;

	if (!wt_ok(a1 && a2 && want && got && conv && !wafer_open(&o, &dev) &&
		   !wafer_model_load_file(dev, model, &co, &m) &&
		   !wafer_ctx_create(m, 1, wafer_model_get_info(m)->seq_len, &ctx), "-m chat: an in-process model to compare with"))
		goto out;
	/* one turn, -i, the story template: the reply continues the user's text */
	if (!reply(ctx, "Once upon a time", 80, a1))
		snprintf(want, TEXT_MAX, "Assistant: %s\n", a1);
	rc = cli("--backend inproc -m chat -i 'Once upon a time' --single-turn -t 0 -n 80", got);
	if (!wt_ok(rc == 0 && !strcmp(got, want), "-m chat --single-turn -i: \"Assistant: \", "
		   "the greedy reply to the story so far (%zu bytes)", strlen(want)))
		wt_diag("exit %d\n# want: %.200s\n#  got: %.200s", rc, want, got);
	/* two turns from stdin, llama2's template, a system prompt */
	rc = reply(ctx, sys1, 0, a1);
	snprintf(conv, TEXT_MAX, "%s %s </s><s>[INST] More [/INST]", sys1, a1);
	rc |= reply(ctx, conv, 0, a2);
	snprintf(want, TEXT_MAX, "User: Assistant: %s\nUser: Assistant: %s\nUser: \n", a1, a2);
	snprintf(cmd, sizeof(cmd), "printf 'Hi\\nMore\\n' | %s/bin/wafer run %s -z %s "
		 "--backend inproc -m chat --chat-template llama2 -y 'Be kind' -t 0 -n 0 "
		 "2>/dev/null", getenv("BUILD") ? getenv("BUILD") : "build", model, tokpath);
	rc |= wt_capture(cmd, got, TEXT_MAX);
	if (!wt_ok(rc == 0 && !strcmp(got, want) && strlen(a2) > 0, "-m chat, two turns from "
		   "stdin, --chat-template llama2, -y: each reply is the greedy one to the "
		   "conversation in the template (%zu and %zu bytes)", strlen(a1), strlen(a2)))
		wt_diag("exit %d\n# want: %.300s\n#  got: %.300s", rc, want, got);
out:
	wafer_ctx_destroy(ctx);
	wafer_model_unload(m);
	wafer_close(dev);
	free(a1);
	free(a2);
	free(want);
	free(got);
	free(conv);
}

/* Sampling: a seed makes it reproducible. */
static void test_sampling_seeded(void)
{
	char *a = malloc(TEXT_MAX), *b = malloc(TEXT_MAX);
	int rc;

	rc = cli("--backend inproc -t 1.0 -p 0.9 -s 42 -n 64", a) |
	     cli("--backend inproc -t 1.0 -p 0.9 -s 42 -n 64", b);
	wt_ok(rc == 0 && !strcmp(a, b) && strlen(a) > 20,
	      "temperature 1, top-p 0.9: the same seed gives the same text");
	rc = cli("--backend inproc -t 1.0 -p 0.9 -s 43 -n 64", b);
	wt_ok(rc == 0 && strcmp(a, b), "and another seed another text");
	free(a);
	free(b);
}

/* Errors: non-zero exit, nothing on stdout. */
static void test_errors(char *out)
{
	int rc;

	rc = cli("--backend inproc --submit uring -n 8", out);
	wt_ok(rc != 0 && !out[0], "--submit uring with the inproc backend is refused");
	rc = cli("--backend inproc --quant int5", out);
	wt_ok(rc != 0 && !out[0], "--quant int5 is a usage error");
	rc = cli("--backend kernel -d 4000 -n 8", out);
	wt_ok(rc != 0 && !out[0], "a device that does not exist fails");
	wt_ok(cli("second.bin", out) != 0 && !out[0], "a second model argument is a usage error");
	rc = cli("--backend inproc -d 0-4 --split 1,1 -n 8", out);
	wt_ok(WEXITSTATUS(rc) == 2 && !out[0], "--split of 2 counts for 5 devices is a usage error");
	rc = cli("--backend inproc -d 0-1 --split 2,2 -n 8", out);
	wt_ok(WEXITSTATUS(rc) == 1 && !out[0], "--split of 4 layers for a 5-layer model fails at load");
	rc = cli("--backend inproc -d 3-1 -n 8", out);
	wt_ok(WEXITSTATUS(rc) == 2 && !out[0], "-d 3-1 is a usage error");
	rc = cli("--backend inproc --stream-weights sometimes -n 8", out);
	wt_ok(WEXITSTATUS(rc) == 2 && !out[0], "--stream-weights sometimes is a usage error");
}

int main(void)
{
	char *out = malloc(TEXT_MAX);
	struct wfs_ckpt c;

	/* wt_model_path() returns a static buffer */
	model = wt_model_path("stories260K.bin") ? strdup(wt_model_path("stories260K.bin")) : NULL;
	tokpath = wt_model_path("tok512.bin") ? strdup(wt_model_path("tok512.bin")) : NULL;
	if (!wt_ok(model && tokpath && out, "shared model and tokenizer found"))
		return wt_done();
	if (!wt_ok(wfs_ckpt_load(model, &c) == 0 && wafer_tokenizer_load(tokpath, 512, &tok) == 0,
		   "load the checkpoint and the tokenizer"))
		return wt_done();
	test_text_as_reference(&c);
	test_sampling_seeded();
	test_chat();
	test_errors(out);
	wafer_tokenizer_free(tok);
	free(out);
	return wt_done();
}
