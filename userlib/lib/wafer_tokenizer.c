// SPDX-License-Identifier: MIT
/*
 * libwafer: the llama2.c tokenizer (run.c's build_tokenizer, encode,
 * decode and safe_printf), reproduced byte for byte: a sorted vocabulary
 * for exact lookups, a dummy " " prefix, UTF-8 code points or byte
 * fallback, then greedy merges by score.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wafer_internal.h"
#include "wafer.h"

/**
 * struct wafer_tokenizer - a loaded vocabulary
 * @vocab: NUL-terminated token strings
 * @scores: merge scores
 * @sorted: the vocabulary sorted by string, for exact lookups
 * @n: tokens
 * @max_token_length: longest token (the file's claim or the real one,
 *	whichever is larger)
 * @byte_pieces: "\x00\0\x01\0..." for byte tokens
 */
struct wafer_tokenizer {
	char **vocab;
	float *scores;
	struct tok_index *sorted;
	unsigned int n;
	unsigned int max_token_length;
	unsigned char byte_pieces[512];
};

/* run.c's TokenIndex */
struct tok_index {
	const char *str;
	int id;
};

static int cmp_index(const void *a, const void *b)
{
	return strcmp(((const struct tok_index *)a)->str, ((const struct tok_index *)b)->str);
}

void wafer_tokenizer_free(struct wafer_tokenizer *t)
{
	unsigned int i;

	if (!t)
		return;
	for (i = 0; t->vocab && i < t->n; i++)
		free(t->vocab[i]);
	free(t->vocab);
	free(t->scores);
	free(t->sorted);
	free(t);
}

static int read_vocab(FILE *f, struct wafer_tokenizer *t, const char *path)
{
	unsigned int i;

	for (i = 0; i < t->n; i++) {
		int32_t len;

		if (fread(&t->scores[i], sizeof(float), 1, f) != 1 ||
		    fread(&len, sizeof(len), 1, f) != 1)
			return wafer_set_error(-EINVAL, "%s: truncated at token %u of %u",
					       path, i, t->n);
		if (len < 0 || len > 65536)
			return wafer_set_error(-EINVAL, "%s: token %u has length %d", path, i, len);
		t->vocab[i] = malloc((size_t)len + 1);
		if (!t->vocab[i])
			return wafer_set_error(-ENOMEM, "out of memory");
		if (len && fread(t->vocab[i], (size_t)len, 1, f) != 1)
			return wafer_set_error(-EINVAL, "%s: truncated in token %u", path, i);
		t->vocab[i][len] = '\0';
	}
	return 0;
}

static void sort_vocab(struct wafer_tokenizer *t)
{
	unsigned int i;

	for (i = 0; i < t->n; i++) {
		size_t len = strlen(t->vocab[i]);

		t->sorted[i] = (struct tok_index){ .str = t->vocab[i], .id = (int)i };
		if (len > t->max_token_length)
			t->max_token_length = (unsigned int)len;
	}
	qsort(t->sorted, t->n, sizeof(*t->sorted), cmp_index);
}

int wafer_tokenizer_load(const char *path, unsigned int vocab_size,
			 struct wafer_tokenizer **out)
{
	struct wafer_tokenizer *t;
	uint32_t maxlen;
	FILE *f;
	int ret, i;

	if (!path || !out)
		return wafer_set_error(-EINVAL, "wafer_tokenizer_load: NULL argument");
	*out = NULL;
	if (!vocab_size || vocab_size > 1u << 20)
		return wafer_set_error(-EINVAL, "vocabulary size %u is invalid", vocab_size);
	f = fopen(path, "rb");
	if (!f)
		return wafer_set_error(-errno, "cannot open the tokenizer %s: %s", path,
				       strerror(errno));
	t = calloc(1, sizeof(*t));
	if (!t) {
		fclose(f);
		return wafer_set_error(-ENOMEM, "out of memory");
	}
	t->n = vocab_size;
	t->vocab = calloc(vocab_size, sizeof(*t->vocab));
	t->scores = calloc(vocab_size, sizeof(*t->scores));
	t->sorted = calloc(vocab_size, sizeof(*t->sorted));
	for (i = 0; i < 256; i++) {
		t->byte_pieces[i * 2] = (unsigned char)i;
		t->byte_pieces[i * 2 + 1] = '\0';
	}
	if (!t->vocab || !t->scores || !t->sorted)
		ret = wafer_set_error(-ENOMEM, "out of memory");
	else if (fread(&maxlen, sizeof(maxlen), 1, f) != 1 || !maxlen || maxlen > 65536)
		ret = wafer_set_error(-EINVAL, "%s: bad or missing max_token_length", path);
	else
		ret = read_vocab(f, t, path);
	fclose(f);
	if (ret) {
		wafer_tokenizer_free(t);
		return ret;
	}
	t->max_token_length = maxlen;
	sort_vocab(t);
	*out = t;
	return 0;
}

unsigned int wafer_tokenizer_vocab_size(const struct wafer_tokenizer *t)
{
	return t->n;
}

/* Exact lookup of @s; -1 if it is not a token (run.c str_lookup). */
static int lookup(const struct wafer_tokenizer *t, const char *s)
{
	struct tok_index key = { .str = s };
	const struct tok_index *r = bsearch(&key, t->sorted, t->n, sizeof(key), cmp_index);

	return r ? r->id : -1;
}

/* Appends a token; -ENOSPC when @max is reached. */
static int push(int *tokens, unsigned int *n, unsigned int max, int id)
{
	if (*n >= max)
		return wafer_set_error(-ENOSPC, "more than %u tokens", max);
	tokens[(*n)++] = id;
	return 0;
}

/* UTF-8 code points (or their bytes) to tokens; run.c's first pass. */
static int split(const struct wafer_tokenizer *t, const char *text, char *buf,
		 int *tokens, unsigned int *n, unsigned int max)
{
	size_t len = 0;
	const char *c;
	int ret = 0;

	for (c = text; *c && !ret; c++) {
		int id;

		/* A byte that is not a continuation byte starts a new code point. */
		if ((*c & 0xC0) != 0x80)
			len = 0;
		buf[len++] = *c;
		buf[len] = '\0';
		if ((*(c + 1) & 0xC0) == 0x80 && len < 4)
			continue;
		id = lookup(t, buf);
		if (id != -1) {
			ret = push(tokens, n, max, id);
		} else {
			/* byte fallback: ids 3..258 are <0x00>..<0xFF> */
			size_t i;

			for (i = 0; i < len && !ret; i++)
				ret = push(tokens, n, max, (unsigned char)buf[i] + 3);
		}
		len = 0;
	}
	return ret;
}

/* Merges the best-scoring adjacent pair until none merges; run.c's loop. */
static void merge(const struct wafer_tokenizer *t, char *buf, int *tokens, unsigned int *n)
{
	for (;;) {
		float best_score = -1e10f;
		int best_id = -1, best_idx = -1;
		unsigned int i;

		for (i = 0; i + 1 < *n; i++) {
			int id;

			sprintf(buf, "%s%s", t->vocab[tokens[i]], t->vocab[tokens[i + 1]]);
			id = lookup(t, buf);
			if (id != -1 && t->scores[id] > best_score) {
				best_score = t->scores[id];
				best_id = id;
				best_idx = (int)i;
			}
		}
		if (best_idx == -1)
			return;
		tokens[best_idx] = best_id;
		for (i = (unsigned int)best_idx + 1; i + 1 < *n; i++)
			tokens[i] = tokens[i + 1];
		(*n)--;
	}
}

int wafer_tokenizer_encode(const struct wafer_tokenizer *t, const char *text,
			   int bos, int eos, int *tokens, unsigned int max)
{
	unsigned int n = 0;
	char *buf;
	int ret = 0;

	if (!t || !text || (max && !tokens))
		return wafer_set_error(-EINVAL, "wafer_tokenizer_encode: NULL argument");
	/* two tokens for a merge candidate, +1 NUL, +2 for UTF-8 when tokens are short */
	buf = malloc((size_t)t->max_token_length * 2 + 1 + 2 + 4);
	if (!buf)
		return wafer_set_error(-ENOMEM, "out of memory");
	if (bos)
		ret = push(tokens, &n, max, WAFER_TOKEN_BOS);
	/* sentencepiece's add_dummy_prefix, only for non-empty text */
	if (!ret && text[0]) {
		int sp = lookup(t, " ");

		if (sp < 0)
			ret = wafer_set_error(-EINVAL, "the vocabulary has no \" \" token");
		else
			ret = push(tokens, &n, max, sp);
	}
	if (!ret)
		ret = split(t, text, buf, tokens, &n, max);
	if (!ret)
		merge(t, buf, tokens, &n);
	if (!ret && eos)
		ret = push(tokens, &n, max, WAFER_TOKEN_EOS);
	free(buf);
	return ret ? ret : (int)n;
}

const char *wafer_tokenizer_decode(const struct wafer_tokenizer *t, int prev, int token)
{
	const char *piece;
	unsigned char byte;

	if (!t || token < 0 || (unsigned int)token >= t->n)
		return NULL;
	piece = t->vocab[token];
	/* after BOS, sentencepiece strips the leading space */
	if (prev == WAFER_TOKEN_BOS && piece[0] == ' ')
		piece++;
	/* raw byte tokens look like <0x01> */
	if (sscanf(piece, "<0x%02hhX>", &byte) == 1)
		piece = (const char *)t->byte_pieces + byte * 2;
	return piece;
}

int wafer_piece_printable(const char *piece)
{
	unsigned char b;

	if (!piece || !piece[0])
		return 0;
	if (piece[1])
		return 1;
	b = (unsigned char)piece[0];
	return isprint(b) || isspace(b);
}
