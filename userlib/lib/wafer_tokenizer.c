// SPDX-License-Identifier: MIT
/*
 * libwafer: the llama2.c tokenizer (run.c's build_tokenizer, encode,
 * decode and safe_printf), reproduced byte for byte: a sorted vocabulary
 * for exact lookups, a dummy " " prefix, UTF-8 code points or byte
 * fallback, then greedy merges by score.
 *
 * The merges are llama2.c's (the adjacent pair whose merge scores highest,
 * the leftmost on a tie, until none merges) found in O(n log n) rather than
 * its O(n^2) rescans: the symbols form a linked list and every mergeable
 * pair sits in a binary heap ordered by (score, position); a merge retires
 * its pair's stale entries lazily (per-symbol generations) and pushes the
 * two new neighbour pairs.  Pairs are looked up in a hash of the vocabulary
 * without building their string.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wafer_internal.h"
#include "wafer.h"

/**
 * struct wafer_tokenizer - a loaded vocabulary
 * @vocab: NUL-terminated token strings
 * @len: their strlen()
 * @scores: merge scores
 * @sorted: the vocabulary sorted by string, for exact lookups
 * @hash: open-addressed table of the distinct strings: id + 1 (0: empty),
 *	the id an exact lookup in @sorted gives
 * @hash_mask: its size - 1 (a power of two)
 * @n: tokens
 * @max_token_length: longest token (the file's claim or the real one,
 *	whichever is larger)
 * @max_cover: most text bytes one token can stand for (0: no bound)
 * @byte_pieces: "\x00\0\x01\0..." for byte tokens
 */
struct wafer_tokenizer {
	char **vocab;
	unsigned int *len;
	float *scores;
	struct tok_index *sorted;
	unsigned int *hash;
	size_t hash_mask;
	unsigned int n;
	unsigned int max_token_length;
	unsigned int max_cover;
	unsigned char byte_pieces[512];
};

_Thread_local unsigned long long wafer_tokenizer_work;

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
	free(t->len);
	free(t->scores);
	free(t->sorted);
	free(t->hash);
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

/* Sorts the vocabulary; returns the longest token's length. */
static unsigned int sort_vocab(struct wafer_tokenizer *t)
{
	unsigned int i, longest = 0;

	for (i = 0; i < t->n; i++) {
		t->len[i] = (unsigned int)strlen(t->vocab[i]);
		t->sorted[i] = (struct tok_index){ .str = t->vocab[i], .id = (int)i };
		if (t->len[i] > longest)
			longest = t->len[i];
	}
	qsort(t->sorted, t->n, sizeof(*t->sorted), cmp_index);
	return longest;
}

/* FNV-1a over @n bytes of @p, continuing from @h. */
static uint64_t fnv(uint64_t h, const char *p, size_t n)
{
	while (n--) {
		h ^= (unsigned char)*p++;
		h *= 0x100000001b3ull;
	}
	return h;
}

#define FNV_SEED	0xcbf29ce484222325ull

/*
 * The id of the token spelled @a (@la bytes) then @b (@lb bytes), -1 if
 * none: the same id as an exact lookup of their concatenation.
 */
static int hash_find(const struct wafer_tokenizer *t, const char *a, size_t la,
		     const char *b, size_t lb)
{
	size_t i = (size_t)fnv(fnv(FNV_SEED, a, la), b, lb) & t->hash_mask;
	unsigned int e;

	for (; (e = t->hash[i]); i = (i + 1) & t->hash_mask) {
		unsigned int id = e - 1;

		wafer_tokenizer_work++;
		if (t->len[id] == la + lb && !memcmp(t->vocab[id], a, la) &&
		    !memcmp(t->vocab[id] + la, b, lb))
			return (int)id;
	}
	return -1;
}

static int lookup(const struct wafer_tokenizer *t, const char *s);

/*
 * The hash of the distinct strings, each to the id lookup() gives it (the
 * same one even when the file spells a token twice), and the bound on the
 * text one token stands for: a code point's token stands for its own bytes,
 * a merge for its two halves', a byte token for one byte; so while no byte
 * token is empty, no token stands for more bytes than it spells.
 */
static int index_vocab(struct wafer_tokenizer *t, unsigned int longest)
{
	size_t size = 16;
	unsigned int i;

	while (size < (size_t)t->n * 2)
		size *= 2;
	t->hash = calloc(size, sizeof(*t->hash));
	if (!t->hash)
		return wafer_set_error(-ENOMEM, "out of memory");
	t->hash_mask = size - 1;
	for (i = 0; i < t->n; i++) {
		size_t h;

		if (hash_find(t, t->vocab[i], t->len[i], "", 0) >= 0)
			continue;
		h = (size_t)fnv(FNV_SEED, t->vocab[i], t->len[i]) & t->hash_mask;
		while (t->hash[h])
			h = (h + 1) & t->hash_mask;
		t->hash[h] = (unsigned int)lookup(t, t->vocab[i]) + 1;
	}
	t->max_cover = longest;
	for (i = 3; i < 259 && i < t->n; i++)
		if (!t->len[i])
			t->max_cover = 0;
	return 0;
}

int wafer_tokenizer_load(const char *path, unsigned int vocab_size,
			 struct wafer_tokenizer **out)
{
	struct wafer_tokenizer *t;
	unsigned int longest;
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
	t->len = calloc(vocab_size, sizeof(*t->len));
	t->scores = calloc(vocab_size, sizeof(*t->scores));
	t->sorted = calloc(vocab_size, sizeof(*t->sorted));
	for (i = 0; i < 256; i++) {
		t->byte_pieces[i * 2] = (unsigned char)i;
		t->byte_pieces[i * 2 + 1] = '\0';
	}
	if (!t->vocab || !t->len || !t->scores || !t->sorted)
		ret = wafer_set_error(-ENOMEM, "out of memory");
	else if (fread(&maxlen, sizeof(maxlen), 1, f) != 1 || !maxlen || maxlen > 65536)
		ret = wafer_set_error(-EINVAL, "%s: bad or missing max_token_length", path);
	else
		ret = read_vocab(f, t, path);
	fclose(f);
	if (!ret) {
		t->max_token_length = maxlen;
		longest = sort_vocab(t);
		if (longest > t->max_token_length)
			t->max_token_length = longest;
		ret = index_vocab(t, longest);
	}
	if (ret) {
		wafer_tokenizer_free(t);
		return ret;
	}
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

/*
 * A candidate merge: symbols @left and @right (adjacent when pushed) into
 * @id.  Stale once either symbol's generation moved on.
 */
struct cand {
	float score;
	int id;
	unsigned int left, right;
	unsigned int gen_left, gen_right;
};

/**
 * struct merger - the symbols being merged
 * @id: each symbol's token
 * @next: the symbol after it (-1: none)
 * @prev: the one before it (-1: none)
 * @gen: bumped when the symbol changes or is merged away
 * @heap: the candidates, a binary max-heap by before()
 * @n_heap: how many
 */
struct merger {
	int *id;
	int *next;
	int *prev;
	unsigned int *gen;
	struct cand *heap;
	size_t n_heap;
};

/*
 * @a is merged before @b: a higher score, or the same score further left.
 * Symbols keep their left-to-right order, so index order is text order:
 * llama2.c's rescan keeps the first pair of the best score (strict >).
 */
static int before(const struct cand *a, const struct cand *b)
{
	return a->score > b->score || (a->score == b->score && a->left < b->left);
}

static void heap_push(struct merger *m, const struct cand *c)
{
	size_t i = m->n_heap++, up;

	while (i) {
		up = (i - 1) / 2;
		wafer_tokenizer_work++;
		if (!before(c, &m->heap[up]))
			break;
		m->heap[i] = m->heap[up];
		i = up;
	}
	m->heap[i] = *c;
}

static struct cand heap_pop(struct merger *m)
{
	struct cand top = m->heap[0], last = m->heap[--m->n_heap];
	size_t i = 0, k;

	for (;;) {
		k = 2 * i + 1;
		if (k >= m->n_heap)
			break;
		wafer_tokenizer_work++;
		if (k + 1 < m->n_heap && before(&m->heap[k + 1], &m->heap[k]))
			k++;
		if (!before(&m->heap[k], &last))
			break;
		m->heap[i] = m->heap[k];
		i = k;
	}
	if (m->n_heap)
		m->heap[i] = last;
	return top;
}

/*
 * Queues the merge of symbol @l with the one after it, if their spellings
 * joined are a token that llama2.c would merge (a score above its -1e10
 * floor; a NaN never is).  Byte tokens beyond a small vocabulary spell
 * nothing and merge with nothing.
 */
static void candidate(const struct wafer_tokenizer *t, struct merger *m, int l)
{
	int r = l >= 0 ? m->next[l] : -1, a, b, id;
	struct cand c;

	if (r < 0)
		return;
	a = m->id[l];
	b = m->id[r];
	if ((unsigned int)a >= t->n || (unsigned int)b >= t->n)
		return;
	id = hash_find(t, t->vocab[a], t->len[a], t->vocab[b], t->len[b]);
	if (id < 0 || !(t->scores[id] > -1e10f))
		return;
	c = (struct cand){ .score = t->scores[id], .id = id, .left = (unsigned int)l,
			   .right = (unsigned int)r, .gen_left = m->gen[l], .gen_right = m->gen[r] };
	heap_push(m, &c);
}

/*
 * Merges the best-scoring adjacent pair until none merges (run.c's loop),
 * in place on @tokens[0..*n).
 */
static int merge(const struct wafer_tokenizer *t, int *tokens, unsigned int *n)
{
	struct merger m = { .id = tokens };
	unsigned int i, k;
	struct cand c;
	int j, ret = 0;

	if (*n < 2)
		return 0;
	m.next = malloc(*n * sizeof(*m.next));
	m.prev = malloc(*n * sizeof(*m.prev));
	m.gen = calloc(*n, sizeof(*m.gen));
	/* n - 1 pairs to start with; each merge adds at most 2 and removes 1 */
	m.heap = malloc((size_t)*n * 2 * sizeof(*m.heap));
	if (!m.next || !m.prev || !m.gen || !m.heap) {
		ret = wafer_set_error(-ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < *n; i++) {
		m.next[i] = i + 1 < *n ? (int)i + 1 : -1;
		m.prev[i] = (int)i - 1;
	}
	for (i = 0; i + 1 < *n; i++)
		candidate(t, &m, (int)i);
	while (m.n_heap) {
		c = heap_pop(&m);
		if (m.gen[c.left] != c.gen_left || m.gen[c.right] != c.gen_right ||
		    m.next[c.left] != (int)c.right)
			continue;	/* a neighbour merged since */
		m.id[c.left] = c.id;
		m.gen[c.left]++;
		m.gen[c.right]++;	/* merged away */
		m.next[c.left] = m.next[c.right];
		if (m.next[c.right] >= 0)
			m.prev[m.next[c.right]] = (int)c.left;
		m.next[c.right] = -1;
		candidate(t, &m, m.prev[c.left]);
		candidate(t, &m, (int)c.left);
	}
	/* the survivors in order (symbol 0 is never merged away) */
	k = 0;
	for (j = 0; j >= 0; j = m.next[j])
		tokens[k++] = m.id[j];
	*n = k;
out:
	free(m.next);
	free(m.prev);
	free(m.gen);
	free(m.heap);
	return ret;
}

int wafer_tokenizer_encode(const struct wafer_tokenizer *t, const char *text,
			   int bos, int eos, int *tokens, unsigned int max)
{
	unsigned int n = 0, cap;
	size_t len;
	char buf[8];
	int *sym, ret = 0;

	if (!t || !text || (max && !tokens))
		return wafer_set_error(-EINVAL, "wafer_tokenizer_encode: NULL argument");
	len = strlen(text);
	/*
	 * Refuse in time linear in the text what cannot fit: the text and its
	 * dummy " " need at least that many bytes / max_cover tokens.
	 */
	if (t->max_cover && len &&
	    (len + 1 + t->max_cover - 1) / t->max_cover + (eos ? 1 : 0) > max)
		return wafer_set_error(-ENOSPC, "more than %u tokens: %zu bytes of text", max, len);
	if (len > (size_t)INT_MAX - 4)
		return wafer_set_error(-ENOSPC, "more than %u tokens: %zu bytes of text", max, len);
	/* BOS, the dummy prefix and one symbol per byte at most */
	cap = (unsigned int)len + 3;
	sym = malloc((size_t)cap * sizeof(*sym));
	if (!sym)
		return wafer_set_error(-ENOMEM, "out of memory");
	if (bos)
		ret = push(sym, &n, cap, WAFER_TOKEN_BOS);
	/* sentencepiece's add_dummy_prefix, only for non-empty text */
	if (!ret && text[0]) {
		int sp = lookup(t, " ");

		if (sp < 0)
			ret = wafer_set_error(-EINVAL, "the vocabulary has no \" \" token");
		else
			ret = push(sym, &n, cap, sp);
	}
	if (!ret)
		ret = split(t, text, buf, sym, &n, cap);
	if (!ret)
		ret = merge(t, sym, &n);
	if (!ret && eos)
		ret = push(sym, &n, cap, WAFER_TOKEN_EOS);
	if (!ret && n > max)
		ret = wafer_set_error(-ENOSPC, "more than %u tokens", max);
	if (!ret && n)
		memcpy(tokens, sym, (size_t)n * sizeof(*sym));
	free(sym);
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
