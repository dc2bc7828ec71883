// SPDX-License-Identifier: MIT
/*
 * wafer serve: log-probabilities from the device's top-k.  A result holds
 * the k best (token, logit) pairs, the logits fixed point with
 * WAFER_LOGIT_FRAC_BITS fraction bits (the device's integer arithmetic, a
 * logit of 1.0 is 65536).  A token's log-probability is that of the softmax
 * over those k at temperature 1, the distribution the sampler draws from:
 *
 *   lp(t) = l_t / 2^16 - log(sum over the k of exp(l_j / 2^16))
 *
 * computed in double.  It leaves out the mass outside the top-k, so it is
 * at least the full softmax's (by log of 1 / the top-k's mass); a token
 * outside the top-k has none (null).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "cli_serve.h"

void cli_srv_logprob(const struct wafer_token_result *res, int token, int prev,
		     unsigned int top, struct cli_srv_lp *out)
{
	unsigned int k = res->top_k < WAFER_MAX_TOPK ? res->top_k : WAFER_MAX_TOPK, i;
	const double one = (double)(1 << WAFER_LOGIT_FRAC_BITS);
	double max = k ? res->topk[0].logit / one : 0, sum = 0;

	out->token = token;
	out->prev = prev;
	out->lp = NAN;
	for (i = 0; i < k; i++)
		if (res->topk[i].logit / one > max)
			max = res->topk[i].logit / one;
	for (i = 0; i < k; i++)
		sum += exp(res->topk[i].logit / one - max);
	for (i = 0; i < k; i++) {
		double lp = res->topk[i].logit / one - max - log(sum);

		if ((int)res->topk[i].token == token && isnan(out->lp))
			out->lp = lp;
		if (i < top) {
			out->top[i].token = (int)res->topk[i].token;
			out->top[i].lp = lp;
		}
	}
	out->n_top = top < k ? top : k;
}

/* Whether @p (@n bytes) is valid UTF-8. */
static int utf8_ok(const unsigned char *p, size_t n)
{
	size_t i = 0, len, j;

	while (i < n) {
		len = p[i] < 0x80 ? 1 : p[i] >= 0xc2 && p[i] < 0xe0 ? 2 :
			p[i] >= 0xe0 && p[i] < 0xf0 ? 3 : p[i] >= 0xf0 && p[i] < 0xf5 ? 4 : 0;
		if (!len || i + len > n)
			return 0;
		for (j = 1; j < len; j++)
			if ((p[i + j] & 0xc0) != 0x80)
				return 0;
		i += len;
	}
	return 1;
}

/* A token's text; a piece that is no valid UTF-8 alone as "bytes:\xNN..." (OpenAI's way). */
static struct json_object *token_text(const struct wafer_tokenizer *tok, int prev, int token,
				      struct json_object **bytes)
{
	const char *piece = wafer_tokenizer_decode(tok, prev, token);
	char buf[256];
	size_t n, i, o;

	if (!piece)
		piece = "";
	n = strlen(piece);
	if (bytes) {
		*bytes = json_object_new_array();
		for (i = 0; i < n; i++)
			json_object_array_add(*bytes,
					      json_object_new_int((unsigned char)piece[i]));
	}
	if (utf8_ok((const unsigned char *)piece, n))
		return json_object_new_string(piece);
	o = (size_t)snprintf(buf, sizeof(buf), "bytes:");
	for (i = 0; i < n && o + 5 < sizeof(buf); i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "\\x%02x", (unsigned char)piece[i]);
	return json_object_new_string(buf);
}

static struct json_object *lp_value(double lp)
{
	return isnan(lp) ? NULL : json_object_new_double(lp);
}

static struct json_object *chat_entry(const struct wafer_tokenizer *tok, int prev, int token,
				      double lp)
{
	struct json_object *o = json_object_new_object(), *bytes;

	json_object_object_add(o, "token", token_text(tok, prev, token, &bytes));
	json_object_object_add(o, "logprob", lp_value(lp));
	json_object_object_add(o, "bytes", bytes);
	return o;
}

struct json_object *cli_srv_logprobs_json(const struct wafer_tokenizer *tok, int chat,
					  const struct cli_srv_lp *lp, unsigned int n,
					  size_t base)
{
	struct json_object *o = json_object_new_object(), *a, *b, *c, *d, *e, *t;
	unsigned int i, j;

	if (chat) {
		a = json_object_new_array();
		for (i = 0; i < n; i++) {
			e = chat_entry(tok, lp[i].prev, lp[i].token, lp[i].lp);
			t = json_object_new_array();
			for (j = 0; j < lp[i].n_top; j++)
				json_object_array_add(t, chat_entry(tok, lp[i].prev,
								    lp[i].top[j].token,
								    lp[i].top[j].lp));
			json_object_object_add(e, "top_logprobs", t);
			json_object_array_add(a, e);
		}
		json_object_object_add(o, "content", a);
		return o;
	}
	a = json_object_new_array();
	b = json_object_new_array();
	c = json_object_new_array();
	d = json_object_new_array();
	for (i = 0; i < n; i++) {
		json_object_array_add(a, token_text(tok, lp[i].prev, lp[i].token, NULL));
		json_object_array_add(b, lp_value(lp[i].lp));
		t = json_object_new_object();
		for (j = 0; j < lp[i].n_top; j++) {
			struct json_object *k = token_text(tok, lp[i].prev, lp[i].top[j].token, NULL);

			if (!json_object_object_get_ex(t, json_object_get_string(k), NULL))
				json_object_object_add(t, json_object_get_string(k),
						       json_object_new_double(lp[i].top[j].lp));
			json_object_put(k);
		}
		json_object_array_add(c, t);
		json_object_array_add(d, json_object_new_int64((int64_t)(base + lp[i].off)));
	}
	json_object_object_add(o, "tokens", a);
	json_object_object_add(o, "token_logprobs", b);
	json_object_object_add(o, "top_logprobs", c);
	json_object_object_add(o, "text_offset", d);
	return o;
}
