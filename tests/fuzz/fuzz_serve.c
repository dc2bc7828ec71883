// SPDX-License-Identifier: MIT
/*
 * fuzz_serve.c - libFuzzer harness for wafer serve's request parsing:
 * cli_srv_parse() (JSON body -> checked request, prompt tokenised) with
 * no server around it, then the error object it would answer with.
 *
 * Input byte 0: bit 0 picks the endpoint (chat or completions); bits 1-2
 * pick the mode:
 *   0  the rest of the input is the body, as is;
 *   1  a valid built-in request (byte 1 picks which) with the rest applied
 *      as patches: each 3-byte record (offset lo, offset hi, value)
 *      overwrites one byte, or with value 0 cuts the body there; a record
 *      whose offset hi has bit 7 set inserts the value instead;
 *   2  a built-in request with values replaced: each 2-byte record (node,
 *      value) replaces the node-th value of the request's JSON tree (depth
 *      first) with one of a list of wrong types, nulls and extremes.
 * The templates reach every field without a corpus (make test runs it as
 * "-seed=1 -runs=N" with no corpus directory).
 *
 * Checked on every input: no crash, leak or undefined behaviour (ASan,
 * UBSan); an accepted request has 1..ctx prompt tokens and 1..room new
 * tokens; a refused one a 4xx/5xx status, a message, and valid JSON.
 *
 * The tokenizer: $WAFER_FUZZ_TOKENIZER, else ../shared/models/tok512.bin,
 * else a small generated vocabulary.
 *
 * Longer runs:  build/tests/fuzz/fuzz_serve -max_total_time=600 -jobs=4 CORPUS_DIR
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli/cli_serve.h"

#define CTX		64
#define MAX_TOKENS	48
#define MAX_BODY	8192

static struct wafer_tokenizer *tok;

static const char *const templates[] = {
	"{\"model\":\"m\",\"prompt\":\"Once upon a time\",\"max_tokens\":3,\"temperature\":0}",
	"{\"model\":\"m\",\"prompt\":[\"The cat\"],\"max_tokens\":2,\"stop\":[\" the\",\"x\"],"
	"\"seed\":5,\"temperature\":0.7,\"top_p\":0.9,\"n\":1,\"user\":\"u\"}",
	"{\"model\":\"m\",\"prompt\":\"a\",\"max_tokens\":null,\"stream\":true,"
	"\"stream_options\":{\"include_usage\":true}}",
	"{\"model\":\"m\",\"messages\":[{\"role\":\"system\",\"content\":\"x\"},{\"role\":\"user\","
	"\"name\":\"n\",\"content\":[{\"type\":\"text\",\"text\":\"Once\"},{\"type\":\"text\","
	"\"text\":\"upon\"}]}],\"max_completion_tokens\":3,\"stop\":\"y\"}",
};
#define N_TEMPLATES	(sizeof(templates) / sizeof(templates[0]))

/* A llama2.c vocabulary: <unk>, BOS, EOS, the byte tokens, ASCII, a few merges. */
static int make_vocab(const char *path, unsigned int *n)
{
	static const char *const merges[] = { "th", "he", "the", " t", " the", "in", "on",
					      " a", "Once", " upon", "at", " c", " cat" };
	FILE *f = fopen(path, "wb");
	uint32_t maxlen = 8;
	char s[16];
	unsigned int i, k = 0;

	if (!f)
		return -1;
	fwrite(&maxlen, 4, 1, f);
	for (i = 0; i < 3 + 256 + 95 + sizeof(merges) / sizeof(merges[0]); i++, k++) {
		float score = i < 354 ? 0.0f : (float)(i % 5);
		int32_t len;

		if (i == 0)
			snprintf(s, sizeof(s), "<unk>");
		else if (i == 1)
			snprintf(s, sizeof(s), "\n<s>\n");
		else if (i == 2)
			snprintf(s, sizeof(s), "\n</s>\n");
		else if (i < 259)
			snprintf(s, sizeof(s), "<0x%02X>", i - 3);
		else if (i < 354)
			snprintf(s, sizeof(s), "%c", (char)(i - 259 + 32));
		else
			snprintf(s, sizeof(s), "%s", merges[i - 354]);
		len = (int32_t)strlen(s);
		fwrite(&score, 4, 1, f);
		fwrite(&len, 4, 1, f);
		fwrite(s, 1, (size_t)len, f);
	}
	*n = k;
	return fclose(f);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *path = getenv("WAFER_FUZZ_TOKENIZER");
	char tmp[] = "/tmp/fuzz_serve_tok_XXXXXX";
	unsigned int n = 512;
	int fd;

	(void)argc;
	(void)argv;
	if (!path && !access("../shared/models/tok512.bin", R_OK))
		path = "../shared/models/tok512.bin";
	if (path) {
		if (!wafer_tokenizer_load(path, n, &tok))
			return 0;
		fprintf(stderr, "fuzz_serve: %s: %s\n", path, wafer_last_error());
		abort();
	}
	fd = mkstemp(tmp);
	if (fd < 0 || close(fd) || make_vocab(tmp, &n) || wafer_tokenizer_load(tmp, n, &tok)) {
		fprintf(stderr, "fuzz_serve: cannot build a vocabulary\n");
		abort();
	}
	unlink(tmp);
	return 0;
}

static const char *const values[] = {
	"null", "0", "-1", "1", "1.5", "1e300", "-9223372036854775808", "18446744073709551616",
	"\"\"", "\"x\"", "\"text\"", "\"a\\u0000b\"", "true", "false", "[]", "{}", "[null]",
	"[1]", "[\"a\",\"b\",\"c\",\"d\",\"e\"]", "{\"type\":null}", "{\"type\":\"text\"}",
	"{\"include_usage\":null}", "[{\"type\":\"text\",\"text\":null}]",
	"[{\"role\":\"user\",\"content\":null}]",
};
#define N_VALUES	(sizeof(values) / sizeof(values[0]))

/**
 * struct slot - where a value sits in its parent
 * @parent: an object or array
 * @key: the object's key (NULL: an array)
 * @idx: the array's index
 */
struct slot {
	struct json_object *parent;
	const char *key;
	size_t idx;
};

/* The slots of @o's values, depth first, into @s (at most @max); returns the count. */
static size_t slots(struct json_object *o, struct slot *s, size_t n, size_t max)
{
	size_t i;

	if (json_object_is_type(o, json_type_object)) {
		json_object_object_foreach(o, key, val) {
			if (n < max)
				s[n++] = (struct slot){ o, key, 0 };
			n = slots(val, s, n, max);
		}
	} else if (json_object_is_type(o, json_type_array)) {
		for (i = 0; i < json_object_array_length(o); i++) {
			if (n < max)
				s[n++] = (struct slot){ o, NULL, i };
			n = slots(json_object_array_get_idx(o, i), s, n, max);
		}
	}
	return n;
}

/* The template @k with values replaced by @p (@n bytes) into @out; its length. */
static size_t replace(unsigned int k, const uint8_t *p, size_t n, char *out)
{
	struct json_object *o = json_tokener_parse(templates[k]), *v;
	struct slot s[64];
	size_t i, cnt, len;
	const char *txt;

	for (i = 0; i + 2 <= n && o; i += 2) {
		cnt = slots(o, s, 0, 64);
		if (!cnt)
			break;
		v = json_tokener_parse(values[p[i + 1] % N_VALUES]);
		if (s[p[i] % cnt].key)
			json_object_object_add(s[p[i] % cnt].parent, s[p[i] % cnt].key, v);
		else
			json_object_array_put_idx(s[p[i] % cnt].parent, s[p[i] % cnt].idx, v);
	}
	txt = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	len = strlen(txt) < MAX_BODY ? strlen(txt) : MAX_BODY;
	memcpy(out, txt, len);
	json_object_put(o);
	return len;
}

/* The template @k patched by @p (@n bytes) into @out; returns its length. */
static size_t patch(unsigned int k, const uint8_t *p, size_t n, char *out)
{
	size_t len = strlen(templates[k]), i, at;

	memcpy(out, templates[k], len);
	for (i = 0; i + 3 <= n && len; i += 3) {
		at = (size_t)(p[i] | (p[i + 1] & 0x7f) << 8) % (len + 1);
		if (p[i + 1] & 0x80) {
			if (len >= MAX_BODY)
				continue;
			memmove(out + at + 1, out + at, len - at);
			out[at] = (char)p[i + 2];
			len++;
		} else if (!p[i + 2]) {
			len = at;
		} else if (at < len) {
			out[at] = (char)p[i + 2];
		}
	}
	return len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char body[MAX_BODY + 1];
	const struct cli_srv_limits l = { .model_id = "m", .tok = tok, .ctx_len = CTX,
					  .max_tokens = MAX_TOKENS, .slots = 4 };
	struct cli_srv_error e = { 0 };
	struct cli_srv_req *r;
	size_t len;
	int chat, ret;
	char *json;

	if (!size)
		return 0;
	chat = data[0] & 1;
	if (data[0] & 6) {
		if (size < 2)
			return 0;
		if (data[0] & 4)
			len = replace(data[1] % N_TEMPLATES, data + 2, size - 2, body);
		else
			len = patch(data[1] % N_TEMPLATES, data + 2, size - 2, body);
		chat = data[1] % N_TEMPLATES == 3 ? !chat : chat;
	} else {
		len = size - 1 < MAX_BODY ? size - 1 : MAX_BODY;
		memcpy(body, data + 1, len);
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return 0;
	ret = cli_srv_parse(&l, body, len, chat, r, &e);
	if (!ret) {
		if (r->n_prompt < 1 || r->n_prompt > CTX || !r->prompt || r->seq.max_new < 1 ||
		    r->seq.max_new > MAX_TOKENS || r->seq.max_new > CTX - r->n_prompt + 1 ||
		    r->n_stop > CLI_SRV_MAX_STOP)
			abort();
	} else {
		if (ret != e.status || ret < 400 || ret > 599 || !e.message[0] || !e.type)
			abort();
		json = cli_srv_error_json(&e);
		if (!json)
			abort();
		json_object_put(json_tokener_parse(json));
		free(json);
	}
	free(r->prompt);
	free(r->echo_text);
	free(r);
	return 0;
}
