// SPDX-License-Identifier: MIT
/*
 * `wafer run --backend inproc` against llama2.c's printing loop over the
 * fp32 reference forward pass (tests/common/ref_llama.h): greedy stdout is
 * exactly the reference text for int8 (which agrees with fp32 for > 100
 * tokens), with and without a prompt; int4 is judged against the float
 * reference on its own de-quantised weights.  Plus the CLI's error paths.
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
	test_errors(out);
	wafer_tokenizer_free(tok);
	free(out);
	return wt_done();
}
