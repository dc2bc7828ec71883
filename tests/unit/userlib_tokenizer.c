// SPDX-License-Identifier: MIT
/*
 * libwafer's llama2.c tokenizer on the shared tok512 vocabulary: known
 * encodings, byte fallback, decode rules (leading space after BOS, <0xNN>
 * pieces, safe printing), encode/decode round trips, merge fixpoint.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wafer.h"
#include "wt_util.h"

static struct wafer_tokenizer *tok;

static int same(const int *a, int n, const int *b, int m)
{
	return n == m && !memcmp(a, b, (size_t)n * sizeof(*a));
}

static void known(const char *name, const char *text, const int *want, int n_want)
{
	int t[256], n = wafer_tokenizer_encode(tok, text, 1, 0, t, 256);

	wt_ok(same(t, n, want, n_want), "encode %s gives the known %d tokens (got %d)",
	      name, n_want, n);
}

/* Pieces after BOS, joined as llama2.c prints them (unprintable bytes kept). */
static void decode_all(const int *t, int n, char *out, size_t cap)
{
	size_t len = 0;
	int i;

	out[0] = '\0';
	for (i = 1; i < n; i++) {
		const char *p = wafer_tokenizer_decode(tok, t[i - 1], t[i]);
		size_t pl = strlen(p);

		if (len + pl + 1 > cap)
			break;
		memcpy(out + len, p, pl + 1);
		len += pl;
	}
}

static void round_trip(const char *text)
{
	char back[1024];
	int t[512], n = wafer_tokenizer_encode(tok, text, 1, 0, t, 512);

	decode_all(t, n, back, sizeof(back));
	wt_ok(n > 0 && !strcmp(back, text), "round trip \"%s\" (%d tokens) -> \"%s\"",
	      text, n, back);
}

int main(void)
{
	static const int once[] = { 1, 403, 407, 261, 378 };
	static const int hello[] = { 1, 346, 306, 414, 432, 263, 304, 341, 443 };
	static const int emoji[] = { 1, 270, 485, 306, 414, 410, 243, 162, 155, 131 };
	static const int nl[] = { 1, 404, 424, 13, 421, 271, 411 };
	static const int bos_only[] = { 1 };
	const char *path = wt_model_path("tok512.bin");
	struct wafer_tokenizer *other = NULL;
	int t[16], n, ret;

	if (!wt_ok(path != NULL, "tok512.bin found"))
		return wt_done();
	ret = wafer_tokenizer_load(path, 512, &tok);
	if (!wt_ok(ret == 0, "load tok512.bin (%d: %s)", ret, wafer_last_error()))
		return wt_done();
	wt_ok(wafer_tokenizer_vocab_size(tok) == 512, "512 tokens");

	known("\"Once upon a time\"", "Once upon a time", once, 5);
	known("\"Hello, world!\"", "Hello, world!", hello, 9);
	known("h\\xc3\\xa9llo \\xf0\\x9f\\x98\\x80 (byte fallback)", "h\xc3\xa9llo \xf0\x9f\x98\x80", emoji, 10);
	known("new\\nline", "new\nline", nl, 7);
	known("the empty string", "", bos_only, 1);

	n = wafer_tokenizer_encode(tok, "a", 1, 1, t, 16);
	wt_ok(n == 3 && t[0] == 1 && t[2] == 2, "bos and eos are added (%d tokens)", n);
	n = wafer_tokenizer_encode(tok, "a", 0, 0, t, 16);
	wt_ok(n == 1 && !strcmp(wafer_tokenizer_decode(tok, 0, t[0]), " a"),
	      "without BOS the dummy prefix stays: \" a\"");
	n = wafer_tokenizer_encode(tok, "Once upon a time", 1, 0, t, 3);
	wt_ok(n == -28, "too small an output array is -ENOSPC (%d)", n);

	wt_ok(!strcmp(wafer_tokenizer_decode(tok, 1, 403), "Once"),
	      "the leading space is stripped after BOS");
	wt_ok(!strcmp(wafer_tokenizer_decode(tok, 5, 407), " upon"),
	      "and kept after other tokens");
	wt_ok(!strcmp(wafer_tokenizer_decode(tok, 1, 13), "\n"), "<0x0A> decodes to a newline");
	wt_ok(!strcmp(wafer_tokenizer_decode(tok, 1, 243), "\xf0"), "<0xF0> decodes to the byte");
	wt_ok(wafer_tokenizer_decode(tok, 1, 512) == NULL &&
	      wafer_tokenizer_decode(tok, 1, -1) == NULL, "out-of-range tokens decode to NULL");
	wt_ok(!wafer_piece_printable(wafer_tokenizer_decode(tok, 1, 4)) &&
	      wafer_piece_printable("\n") && wafer_piece_printable(" t") &&
	      !wafer_piece_printable("") && !wafer_piece_printable(NULL),
	      "safe printing skips control bytes only");

	round_trip("Once upon a time, there was a little girl named Lily.");
	round_trip("She said, \"I want to play with my ball.\" The end.");
	round_trip("Z\xc3\xbcrich caf\xc3\xa9 \xe2\x82\xac 42 \xf0\x9f\x98\x80!");
	round_trip("tabs  here   and ~`^ symbols {}[]|\\");

	ret = wafer_tokenizer_load("/nonexistent/tok.bin", 512, &other);
	wt_ok(ret == -2 && !other && strstr(wafer_last_error(), "/nonexistent/tok.bin"),
	      "a missing file is -ENOENT with the path in the message (%s)", wafer_last_error());
	ret = wafer_tokenizer_load(path, 100000, &other);
	wt_ok(ret == -22 && !other, "a vocabulary larger than the file is -EINVAL (%s)",
	      wafer_last_error());
	wafer_tokenizer_free(tok);
	return wt_done();
}
