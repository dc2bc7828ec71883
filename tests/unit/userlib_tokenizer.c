// SPDX-License-Identifier: MIT
/*
 * libwafer's llama2.c tokenizer on the shared tok512 vocabulary: known
 * encodings, byte fallback, decode rules (leading space after BOS, <0xNN>
 * pieces, safe printing), encode/decode round trips, merge fixpoint.
 * The merge loop against llama2.c's own O(n^2) algorithm (kept here as the
 * reference) on random and real text, over tok512 and over generated
 * vocabularies full of score ties, duplicates and unmergeable scores; its
 * work counted as the text grows; text that cannot fit refused before any.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wafer.h"
#include "lib/wafer_internal.h"
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

/* ------------------------------------------- llama2.c's encode(), as was */

struct ref_index {
	const char *str;
	int id;
};

/**
 * struct ref_tok - the reference's copy of a vocabulary
 * @vocab: token strings
 * @scores: merge scores
 * @sorted: sorted by string
 * @n: tokens
 * @maxlen: longest token
 */
struct ref_tok {
	char **vocab;
	float *scores;
	struct ref_index *sorted;
	unsigned int n;
	unsigned int maxlen;
};

static int ref_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ref_index *)a)->str, ((const struct ref_index *)b)->str);
}

static int ref_load(const char *path, unsigned int n, struct ref_tok *r)
{
	FILE *f = fopen(path, "rb");
	uint32_t maxlen;
	unsigned int i;
	int32_t len;

	memset(r, 0, sizeof(*r));
	if (!f || fread(&maxlen, 4, 1, f) != 1)
		return -1;
	r->n = n;
	r->maxlen = maxlen;
	r->vocab = calloc(n, sizeof(*r->vocab));
	r->scores = calloc(n, sizeof(*r->scores));
	r->sorted = calloc(n, sizeof(*r->sorted));
	for (i = 0; i < n; i++) {
		if (fread(&r->scores[i], 4, 1, f) != 1 || fread(&len, 4, 1, f) != 1)
			break;
		r->vocab[i] = calloc(1, (size_t)len + 1);
		if (len && fread(r->vocab[i], (size_t)len, 1, f) != 1)
			break;
		r->sorted[i] = (struct ref_index){ r->vocab[i], (int)i };
		if (strlen(r->vocab[i]) > r->maxlen)
			r->maxlen = (unsigned int)strlen(r->vocab[i]);
	}
	fclose(f);
	qsort(r->sorted, n, sizeof(*r->sorted), ref_cmp);
	return i == n ? 0 : -1;
}

static void ref_free(struct ref_tok *r)
{
	unsigned int i;

	for (i = 0; i < r->n; i++)
		free(r->vocab[i]);
	free(r->vocab);
	free(r->scores);
	free(r->sorted);
}

static int ref_lookup(const struct ref_tok *r, const char *s)
{
	struct ref_index key = { .str = s }, *res;

	res = bsearch(&key, r->sorted, r->n, sizeof(key), ref_cmp);
	return res ? res->id : -1;
}

/* run.c's encode() with BOS: @out holds strlen(@text) + 3; *@pairs counts pair lookups. */
static int ref_encode(const struct ref_tok *r, const char *text, int *out,
		      unsigned long long *pairs)
{
	char *buf = malloc((size_t)r->maxlen * 2 + 8);
	size_t len = 0;
	const char *c;
	int n = 0;

	out[n++] = 1;
	if (text[0])
		out[n++] = ref_lookup(r, " ");
	for (c = text; *c; c++) {
		int id;

		if ((*c & 0xC0) != 0x80)
			len = 0;
		buf[len++] = *c;
		buf[len] = '\0';
		if ((*(c + 1) & 0xC0) == 0x80 && len < 4)
			continue;
		id = ref_lookup(r, buf);
		if (id != -1) {
			out[n++] = id;
		} else {
			size_t i;

			for (i = 0; i < len; i++)
				out[n++] = (unsigned char)buf[i] + 3;
		}
		len = 0;
	}
	for (;;) {
		float best_score = -1e10f;
		int best_id = -1, best_idx = -1, i;

		for (i = 0; i < n - 1; i++) {
			int id;

			sprintf(buf, "%s%s", r->vocab[out[i]], r->vocab[out[i + 1]]);
			(*pairs)++;
			id = ref_lookup(r, buf);
			if (id != -1 && r->scores[id] > best_score) {
				best_score = r->scores[id];
				best_id = id;
				best_idx = i;
			}
		}
		if (best_idx == -1)
			break;
		out[best_idx] = best_id;
		for (i = best_idx + 1; i < n - 1; i++)
			out[i] = out[i + 1];
		n--;
	}
	free(buf);
	return n;
}

/* -------------------------------------------------- differential checks */

/* Random text: vocabulary pieces, ASCII, UTF-8 (valid or not), any byte but NUL. */
static void random_text(struct wt_rng *g, const struct ref_tok *r, char *s, size_t len)
{
	static const char *const extra[] = { "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
					     "\xc3", "\x80", " ", "  ", "\n", "\t" };
	size_t k = 0;

	while (k < len) {
		int kind = (int)wt_rng_range(g, 0, 9);
		const char *p;
		char one[2] = { 0, 0 };

		if (kind < 5) {
			p = r->vocab[wt_rng_range(g, 3, r->n - 1)];
			if (!strncmp(p, "<0x", 3))
				continue;
		} else if (kind < 8) {
			p = extra[wt_rng_range(g, 0, 8)];
		} else if (kind < 9) {
			one[0] = (char)wt_rng_range(g, 32, 126);
			p = one;
		} else {
			one[0] = (char)wt_rng_range(g, 1, 255);
			p = one;
		}
		while (*p && k < len)
			s[k++] = *p++;
	}
	s[k] = '\0';
}

/* @count texts: the library's tokens equal the reference's; returns mismatches. */
static unsigned int differ(const struct wafer_tokenizer *t, const struct ref_tok *r,
			   uint64_t seed, unsigned int count, size_t max_len, const char *what)
{
	unsigned int i, bad = 0;
	unsigned long long pairs = 0;
	char *s = malloc(max_len + 1);
	int *a = malloc((max_len + 3) * sizeof(int)), *b = malloc((max_len + 3) * sizeof(int));
	struct wt_rng g;

	wt_rng_seed(&g, seed);
	for (i = 0; i < count; i++) {
		int na, nb;

		random_text(&g, r, s, (size_t)wt_rng_range(&g, 0, (int64_t)max_len));
		na = wafer_tokenizer_encode(t, s, 1, 0, a, (unsigned int)strlen(s) + 3);
		nb = ref_encode(r, s, b, &pairs);
		if (na != nb || memcmp(a, b, (size_t)nb * sizeof(int))) {
			if (!bad++)
				wt_diag("%s: text %u (%zu bytes) gives %d tokens, the reference %d",
					what, i, strlen(s), na, nb);
		}
	}
	free(s);
	free(a);
	free(b);
	return bad;
}

/*
 * A vocabulary file in llama2.c's format: <unk>, BOS, EOS, the 256 byte
 * tokens, printable ASCII and " ", then merges of earlier tokens; scores
 * from a handful of values (ties everywhere), some below llama2.c's
 * -1e10 floor or NaN, a few strings spelled twice.  Returns the size.
 */
static unsigned int make_vocab(const char *path, uint64_t seed, unsigned int n)
{
	static char strs[1024][64];
	static const float pick[] = { 0, 1, 2, 3, -1, -2.5f, -1e10f, -3e10f, 1e30f };
	FILE *f = fopen(path, "wb");
	unsigned int i, k = 0;
	uint32_t maxlen = 1;
	struct wt_rng g;

	wt_rng_seed(&g, seed);
	strcpy(strs[k++], "<unk>");
	strcpy(strs[k++], "\n<s>\n");
	strcpy(strs[k++], "\n</s>\n");
	for (i = 0; i < 256; i++)
		sprintf(strs[k++], "<0x%02X>", i);
	for (i = 32; i < 127; i++)
		sprintf(strs[k++], "%c", (char)i);
	strcpy(strs[k++], "\xc3\xa9");
	while (k < n) {
		char a[64], b[64];

		snprintf(a, sizeof(a), "%s", strs[wt_rng_range(&g, 259, k - 1)]);
		snprintf(b, sizeof(b), "%s",
			 strs[wt_rng_range(&g, wt_rng_range(&g, 0, 3) ? 259 : 1, k - 1)]);
		if (wt_rng_range(&g, 0, 40) == 0) {
			memcpy(strs[k++], a, sizeof(a));	/* spelled twice */
			continue;
		}
		if (strlen(a) + strlen(b) >= sizeof(strs[0]))
			continue;
		memcpy(strs[k], a, strlen(a));
		memcpy(strs[k] + strlen(a), b, strlen(b) + 1);
		k++;
	}
	for (i = 0; i < n; i++)
		if (strlen(strs[i]) > maxlen)
			maxlen = (uint32_t)strlen(strs[i]);
	fwrite(&maxlen, 4, 1, f);
	for (i = 0; i < n; i++) {
		float sc = i < 259 ? 0 : wt_rng_range(&g, 0, 30) == 0 ? NAN :
			pick[wt_rng_range(&g, 0, 8)];
		int32_t len = (int32_t)strlen(strs[i]);

		fwrite(&sc, 4, 1, f);
		fwrite(&len, 4, 1, f);
		fwrite(strs[i], 1, (size_t)len, f);
	}
	fclose(f);
	return n;
}

/* Stories-like text of @len bytes (repeats of real sentences). */
static void story(char *s, size_t len)
{
	static const char *const part =
		"Once upon a time, there was a little girl named Lily. She loved to play "
		"outside in the sunshine. One day, she saw a big, red ball in the park. ";
	size_t k, pl = strlen(part);

	for (k = 0; k < len; k++)
		s[k] = part[k % pl];
	s[len] = '\0';
}

static void differential(const char *path)
{
	static const char *const real[] = {
		"Once upon a time", "Lily and Ben went to the park. They saw a big dog.",
		"The cat sat on the mat and", "h\xc3\xa9llo \xf0\x9f\x98\x80 \xe2\x82\xac\n\ttabs",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"   leading and trailing   ", "\xff\xfe not UTF-8 \xc3",
	};
	char tmp[] = "/tmp/wafer_tok_XXXXXX";
	struct wafer_tokenizer *t = NULL;
	struct ref_tok r;
	unsigned int i, bad = 0, v;
	unsigned long long pairs = 0;
	static char text[4096];
	int a[4100], b[4100], na, nb;

	if (!wt_ok(!ref_load(path, 512, &r) && !wafer_tokenizer_load(path, 512, &t),
		   "the reference and the library load tok512"))
		return;
	for (i = 0; i < sizeof(real) / sizeof(real[0]) + 8; i++) {
		if (i < sizeof(real) / sizeof(real[0]))
			snprintf(text, sizeof(text), "%s", real[i]);
		else
			story(text, 100 + 250 * (i - sizeof(real) / sizeof(real[0])));
		na = wafer_tokenizer_encode(t, text, 1, 0, a, 4100);
		nb = ref_encode(&r, text, b, &pairs);
		bad += na != nb || memcmp(a, b, (size_t)nb * sizeof(int));
	}
	wt_ok(!bad, "tok512: real text (up to 1.9 KB) encodes as llama2.c's algorithm does "
	      "(%u differ)", bad);
	bad = differ(t, &r, 1, 3000, 200, "tok512");
	wt_ok(!bad, "tok512: 3000 random texts (vocabulary pieces, UTF-8, raw bytes) encode "
	      "as llama2.c's algorithm does (%u differ)", bad);
	wafer_tokenizer_free(t);
	ref_free(&r);
	for (v = 0; v < 4; v++) {
		int fd = mkstemp(tmp);
		unsigned int n = 400 + 150 * v;

		close(fd);
		make_vocab(tmp, 77 + v, n);
		t = NULL;
		if (!wt_ok(!ref_load(tmp, n, &r) && !wafer_tokenizer_load(tmp, n, &t),
			   "generated vocabulary %u (%u tokens) loads", v, n))
			break;
		bad = differ(t, &r, 100 + v, 1500, 160, "generated");
		wt_ok(!bad, "generated vocabulary %u: 1500 random texts encode as llama2.c's "
		      "algorithm does: score ties leftmost first, nothing at or below -1e10 or NaN "
		      "merged, duplicates resolved alike (%u differ)", v, bad);
		wafer_tokenizer_free(t);
		ref_free(&r);
		unlink(tmp);
		strcpy(tmp, "/tmp/wafer_tok_XXXXXX");
	}
}

/*
 * The merge work (pair probes and heap steps) per byte grows like log n:
 * from 1 KiB to 64 KiB of text (64x) it grows by far less than the 64x a
 * quadratic loop's would; and llama2.c's loop's pair lookups do grow so.
 */
static void work_growth(void)
{
	static const size_t sizes[] = { 1024, 4096, 16384, 65536 };
	unsigned long long w[4];
	double per[4];
	char *s = malloc(65537);
	int *out = malloc(65540 * sizeof(int));
	unsigned int i;

	for (i = 0; i < 4; i++) {
		story(s, sizes[i]);
		wafer_tokenizer_work = 0;
		wafer_tokenizer_encode(tok, s, 1, 0, out, 65540);
		w[i] = wafer_tokenizer_work;
		per[i] = (double)w[i] / (double)sizes[i];
		wt_diag("%zu bytes: %llu units of merge work (%.1f per byte)", sizes[i], w[i],
			per[i]);
	}
	wt_ok(w[0] > 0 && per[3] < per[0] * 2.0,
	      "merge work per byte from 1 KiB to 64 KiB: %.1f -> %.1f (n log n: under 2x; "
	      "quadratic: 64x)", per[0], per[3]);
	{
		struct ref_tok r;
		unsigned long long p1 = 0, p4 = 0;

		if (!ref_load(wt_model_path("tok512.bin"), 512, &r)) {
			story(s, 1024);
			ref_encode(&r, s, out, &p1);
			story(s, 4096);
			ref_encode(&r, s, out, &p4);
			wt_ok(p4 > 12 * p1, "the reference's pair lookups grow quadratically: "
			      "%llu for 1 KiB, %llu for 4 KiB", p1, p4);
			ref_free(&r);
		}
	}
	free(s);
	free(out);
}

/* Text that cannot fit @max tokens is refused before any merge work. */
static void refuse_early(void)
{
	size_t len = 1 << 20;
	char *s = malloc(len + 1);
	int out[512], n;

	story(s, len);
	wafer_tokenizer_work = 0;
	n = wafer_tokenizer_encode(tok, s, 1, 0, out, 512);
	wt_ok(n == -28 && wafer_tokenizer_work == 0,
	      "1 MiB of text into 512 tokens: -ENOSPC (%d) before any merge work (%llu)", n,
	      wafer_tokenizer_work);
	story(s, 1000);
	n = wafer_tokenizer_encode(tok, s, 1, 0, out, 512);
	wt_ok(n > 0 && n <= 512, "1000 bytes that merge into %d tokens fit 512 (only the "
	      "merged count is bounded by max)", n);
	n = wafer_tokenizer_encode(tok, "Once upon a time", 1, 0, out, 5);
	wt_ok(n == 5, "\"Once upon a time\" into exactly its 5 tokens (%d)", n);
	free(s);
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

	differential(path);
	work_growth();
	refuse_early();

	ret = wafer_tokenizer_load("/nonexistent/tok.bin", 512, &other);
	wt_ok(ret == -2 && !other && strstr(wafer_last_error(), "/nonexistent/tok.bin"),
	      "a missing file is -ENOENT with the path in the message (%s)", wafer_last_error());
	ret = wafer_tokenizer_load(path, 100000, &other);
	wt_ok(ret == -22 && !other, "a vocabulary larger than the file is -EINVAL (%s)",
	      wafer_last_error());
	wafer_tokenizer_free(tok);
	return wt_done();
}
