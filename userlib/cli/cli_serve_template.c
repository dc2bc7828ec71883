// SPDX-License-Identifier: MIT
/*
 * Chat templates, how a chat's messages become the prompt, for wafer serve
 * (/v1/chat/completions) and wafer run -m chat alike.  The llama2.c
 * checkpoint format carries none, so there are built-ins named as
 * llama-server names them, and a template of one's own:
 *
 *   story   the messages' contents joined by one space (the default: the
 *           shared model tells stories and knows no roles)
 *   chatml  <|im_start|>ROLE\nCONTENT<|im_end|>\n ... <|im_start|>assistant\n
 *   llama2  [INST] <<SYS>>\nSYSTEM\n<</SYS>>\n\nUSER [/INST] ASSISTANT</s> ...
 *   zephyr  <|ROLE|>\nCONTENT</s>\n ... <|assistant|>\n
 *
 * A template of one's own is a message's text with {role} and {content}
 * in it, then optionally {generation} and the text that asks for the
 * reply: "<|{role}|>\n{content}</s>\n{generation}<|assistant|>\n".  \n, \t,
 * \\, \{ and \} are escapes; any other {name}, a { not closed, a
 * backslash before anything else, or no {content} is a parse error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_serve.h"

struct builtin {
	const char *name;
	const char *text;
};

/* llama2 is its own code (the system prompt goes inside the first [INST]). */
static const struct builtin builtins[] = {
	{ "chatml", "<|im_start|>{role}\\n{content}<|im_end|>\\n{generation}"
		    "<|im_start|>assistant\\n" },
	{ "zephyr", "<|{role}|>\\n{content}</s>\\n{generation}<|assistant|>\\n" },
};

/* Appends @n bytes of @p to @t's part @part (0: per message, 1: the end). */
static int put(struct cli_srv_template *t, int part, const char *p, size_t n)
{
	struct cli_srv_tpl_piece *x;

	if (t->n_pieces[part] == CLI_SRV_TPL_PIECES)
		return -1;
	x = &t->piece[part][t->n_pieces[part]++];
	x->kind = CLI_SRV_TPL_TEXT_PIECE;
	if (n > sizeof(x->text) - 1)
		return -1;
	memcpy(x->text, p, n);
	x->text[n] = '\0';
	x->len = n;
	return 0;
}

static int put_kind(struct cli_srv_template *t, int part, int kind)
{
	if (t->n_pieces[part] == CLI_SRV_TPL_PIECES)
		return -1;
	t->piece[part][t->n_pieces[part]++].kind = kind;
	return 0;
}

static int parse_custom(const char *src, struct cli_srv_template *t, char *err, size_t n)
{
	char text[CLI_SRV_TPL_TEXT];
	size_t len = 0, i;
	int part = 0, has_content = 0;
	const char *e;

#define FLUSH() do { \
		if (len && put(t, part, text, len)) \
			goto too_big; \
		len = 0; \
	} while (0)
	for (i = 0; src[i]; i++) {
		char c = src[i];

		if (c == '\\') {
			c = src[++i];
			c = c == 'n' ? '\n' : c == 't' ? '\t' : c == '\\' || c == '{' || c == '}' ?
				c : 0;
			if (!c) {
				snprintf(err, n, "byte %zu: '\\' must be followed by n, t, \\, { or }",
					 i - 1);
				return -1;
			}
		} else if (c == '{') {
			e = strchr(src + i, '}');
			if (!e) {
				snprintf(err, n, "byte %zu: '{' is not closed", i);
				return -1;
			}
			FLUSH();
			if (e - (src + i) == 5 && !strncmp(src + i, "{role}", 6)) {
				if (part || put_kind(t, part, CLI_SRV_TPL_ROLE))
					goto misplaced;
			} else if (e - (src + i) == 8 && !strncmp(src + i, "{content}", 9)) {
				if (part || put_kind(t, part, CLI_SRV_TPL_CONTENT))
					goto misplaced;
				has_content = 1;
			} else if (e - (src + i) == 11 && !strncmp(src + i, "{generation}", 12)) {
				if (part++)
					goto misplaced;
			} else {
				snprintf(err, n, "byte %zu: unknown placeholder '%.*s' (known: {role}, "
					 "{content}, {generation})", i, (int)(e - (src + i) + 1 < 32 ?
									   e - (src + i) + 1 : 32),
					 src + i);
				return -1;
			}
			i = (size_t)(e - src);
			continue;
		} else if (c == '}') {
			snprintf(err, n, "byte %zu: '}' without '{' (write \\})", i);
			return -1;
		}
		if (len == sizeof(text) - 1)
			FLUSH();
		text[len++] = c;
	}
	FLUSH();
#undef FLUSH
	if (!has_content) {
		snprintf(err, n, "no {content} in it");
		return -1;
	}
	return 0;
misplaced:
	snprintf(err, n, "byte %zu: {role} and {content} go before {generation}, which comes "
		 "once", i);
	return -1;
too_big:
	snprintf(err, n, "longer than %d pieces of %d bytes", CLI_SRV_TPL_PIECES,
		 CLI_SRV_TPL_TEXT - 1);
	return -1;
}

int cli_srv_template_parse(const char *src, struct cli_srv_template *t, char *err, size_t n)
{
	unsigned int i;

	memset(t, 0, sizeof(*t));
	if (!strcmp(src, "story")) {
		t->kind = CLI_SRV_TPL_STORY;
		return 0;
	}
	if (!strcmp(src, "llama2")) {
		t->kind = CLI_SRV_TPL_LLAMA2;
		return 0;
	}
	for (i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
		if (!strcmp(src, builtins[i].name))
			src = builtins[i].text;
	t->kind = CLI_SRV_TPL_CUSTOM;
	if (!strchr(src, '{')) {
		snprintf(err, n, "'%.40s' is no built-in template (story, chatml, llama2, zephyr) "
			 "and has no {content}", src);
		return -1;
	}
	return parse_custom(src, t, err, n);
}

/* Appends @n bytes of @p to @b; 0 or -1 (out of memory). */
static int grow_cat(struct cli_srv_text *b, const char *p, size_t n)
{
	size_t cap = b->cap ? b->cap : 256;
	char *q;

	while (cap < b->len + n + 1)
		cap *= 2;
	if (cap != b->cap) {
		q = realloc(b->p, cap);
		if (!q)
			return -1;
		b->p = q;
		b->cap = cap;
	}
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

static int cat_str(struct cli_srv_text *b, const char *s)
{
	return grow_cat(b, s, strlen(s));
}

static int apply_part(const struct cli_srv_template *t, int part, const char *role,
		      const struct cli_srv_text *content, struct cli_srv_text *out)
{
	const struct cli_srv_tpl_piece *x;
	unsigned int i;
	int ret = 0;

	for (i = 0; i < t->n_pieces[part] && !ret; i++) {
		x = &t->piece[part][i];
		ret = x->kind == CLI_SRV_TPL_ROLE ? cat_str(out, role) :
			x->kind == CLI_SRV_TPL_CONTENT ? grow_cat(out, content->p, content->len) :
			grow_cat(out, x->text, x->len);
	}
	return ret;
}

/* llama2's: the system prompt inside the first [INST]; each answer ends with </s>. */
static int apply_llama2(const char *const *roles, const struct cli_srv_text *contents,
			size_t n, struct cli_srv_text *out)
{
	size_t i;
	int ret = 0, open = 0;

	for (i = 0; i < n && !ret; i++) {
		if (!strcmp(roles[i], "assistant")) {
			ret = (open ? cat_str(out, " [/INST] ") : cat_str(out, " ")) ||
				grow_cat(out, contents[i].p, contents[i].len) || cat_str(out, " </s>");
			open = 0;
			continue;
		}
		if (!open)
			ret = cat_str(out, out->len ? "<s>[INST] " : "[INST] ");
		else
			ret = cat_str(out, "\n\n");
		if (!ret && (!strcmp(roles[i], "system") || !strcmp(roles[i], "developer")))
			ret = cat_str(out, "<<SYS>>\n") ||
				grow_cat(out, contents[i].p, contents[i].len) ||
				cat_str(out, "\n<</SYS>>");
		else if (!ret)
			ret = grow_cat(out, contents[i].p, contents[i].len);
		open = 1;
	}
	if (!ret && open)
		ret = cat_str(out, " [/INST]");
	return ret;
}

int cli_srv_template_apply(const struct cli_srv_template *t, const char *const *roles,
			   const struct cli_srv_text *contents, size_t n, struct cli_srv_text *out)
{
	size_t i;
	int ret = 0;

	if (t->kind == CLI_SRV_TPL_STORY) {
		/* the contents, each after a space unless nothing came before */
		for (i = 0; i < n && !ret; i++)
			ret = (out->len && cat_str(out, " ")) ||
				grow_cat(out, contents[i].p, contents[i].len);
		return ret || cat_str(out, "");
	}
	if (t->kind == CLI_SRV_TPL_LLAMA2)
		return apply_llama2(roles, contents, n, out) || cat_str(out, "");
	for (i = 0; i < n && !ret; i++)
		ret = apply_part(t, 0, roles[i], &contents[i], out);
	return ret || apply_part(t, 1, NULL, NULL, out) || cat_str(out, "");
}
