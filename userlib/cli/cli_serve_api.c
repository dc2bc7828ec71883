// SPDX-License-Identifier: MIT
/*
 * wafer serve: the OpenAI request and response shapes in JSON (json-c).
 * A request is checked whole before it is queued: the JSON (strict, UTF-8
 * validated, nesting bounded), every field's type and range, fields OpenAI
 * does not know (rejected as OpenAI does), the model's name, and the prompt
 * against the context.
 *
 * Chat template: by default ("story") the shared model, a story model with
 * no notion of roles, gets the story so far: the messages' contents in
 * order (system, developer, user and assistant alike), joined by one space,
 * are the prompt, and the reply is the model's continuation of it.  That
 * and the other templates (--chat-template, or the request's
 * chat_template) are cli_serve_template.c's.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "cli_serve.h"

#define JSON_DEPTH	16
/* Completions default to OpenAI's 16 tokens; chat to the room left. */
#define DEFAULT_MAX_TOKENS	16

int cli_srv_fail(struct cli_srv_error *e, int status, const char *type, const char *param,
	     const char *code, const char *fmt, ...)
{
	va_list ap;

	e->status = status;
	e->type = type;
	e->code = code;
	snprintf(e->param, sizeof(e->param), "%s", param ? param : "");
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	return status;
}

static int bad(struct cli_srv_error *e, const char *param, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int bad(struct cli_srv_error *e, const char *param, const char *fmt, ...)
{
	va_list ap;

	cli_srv_fail(e, 400, "invalid_request_error", param, NULL, "%s", "");
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	return 400;
}

static char *dump(struct json_object *o)
{
	char *s = NULL;

	if (o)
		s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							  JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	return s;
}

char *cli_srv_error_json(const struct cli_srv_error *e)
{
	struct json_object *o = json_object_new_object(), *err = json_object_new_object();

	json_object_object_add(err, "message", json_object_new_string(e->message));
	json_object_object_add(err, "type", json_object_new_string(e->type));
	json_object_object_add(err, "param", e->param[0] ? json_object_new_string(e->param) : NULL);
	json_object_object_add(err, "code", e->code ? json_object_new_string(e->code) : NULL);
	json_object_object_add(o, "error", err);
	return dump(o);
}

static struct json_object *model_obj(const struct cli_srv *s)
{
	struct json_object *m = json_object_new_object();

	json_object_object_add(m, "id", json_object_new_string(s->model_id));
	json_object_object_add(m, "object", json_object_new_string("model"));
	json_object_object_add(m, "created", json_object_new_int64(s->created));
	json_object_object_add(m, "owned_by", json_object_new_string("wafer"));
	json_object_object_add(m, "context_length", json_object_new_int((int)s->ctx_len));
	return m;
}

char *cli_srv_models_json(const struct cli_srv *s)
{
	struct json_object *o = json_object_new_object(), *list = json_object_new_array();

	json_object_array_add(list, model_obj(s));
	json_object_object_add(o, "object", json_object_new_string("list"));
	json_object_object_add(o, "data", list);
	return dump(o);
}

char *cli_srv_model_json(const struct cli_srv *s)
{
	return dump(model_obj(s));
}

struct cli_srv_req *cli_srv_choice(const struct cli_srv_req *r, unsigned int i)
{
	return r->child ? r->child[i] : (struct cli_srv_req *)r;
}

static unsigned int choices(const struct cli_srv_req *r)
{
	return r->child ? r->n : 1;
}

/* Prompt tokens once; completion tokens of every choice. */
static struct json_object *usage(const struct cli_srv_req *r)
{
	struct json_object *u = json_object_new_object();
	unsigned int i, gen = 0;

	for (i = 0; i < choices(r); i++)
		gen += cli_srv_choice(r, i)->n_new;
	json_object_object_add(u, "prompt_tokens", json_object_new_int((int)r->n_prompt));
	json_object_object_add(u, "completion_tokens", json_object_new_int((int)gen));
	json_object_object_add(u, "total_tokens", json_object_new_int((int)(r->n_prompt + gen)));
	return u;
}

static struct json_object *head(const struct cli_srv *s, const struct cli_srv_req *r,
				const char *object)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "id", json_object_new_string(r->id));
	json_object_object_add(o, "object", json_object_new_string(object));
	json_object_object_add(o, "created", json_object_new_int64(r->created));
	json_object_object_add(o, "model", json_object_new_string(s->model_id));
	return o;
}

static struct json_object *str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

/* Generated tokens whose text starts before @len (a stop string cut the rest). */
static unsigned int lp_upto(const struct cli_srv_req *ch, size_t len)
{
	unsigned int n = 0;

	while (n < ch->n_lp && (ch->lp[n].off < len || (ch->lp[n].off == len && !len)))
		n++;
	return n;
}

/*
 * A choice's logprobs: with @prompt the echoed prompt's tokens first, then
 * generated entries [@from, @to), their offsets after the echoed text.
 */
static struct json_object *choice_logprobs(const struct cli_srv *s, const struct cli_srv_req *r,
					   const struct cli_srv_req *ch, int prompt,
					   unsigned int from, unsigned int to)
{
	size_t base = r->echo ? r->echo_len : 0;
	struct json_object *o;
	struct cli_srv_lp *all;
	unsigned int np = prompt ? ch->n_plp : 0, i;

	if (!r->logprobs)
		return NULL;
	if (!np)
		return cli_srv_logprobs_json(s->tok, r->chat, ch->lp + from, to - from, base);
	all = malloc(((size_t)np + to - from + 1) * sizeof(*all));
	if (!all)
		return NULL;
	memcpy(all, ch->plp, np * sizeof(*all));
	for (i = from; i < to; i++) {
		all[np + i - from] = ch->lp[i];
		all[np + i - from].off += base;
	}
	o = cli_srv_logprobs_json(s->tok, r->chat, all, np + to - from, 0);
	free(all);
	return o;
}

/* The text of a whole choice: the echoed prompt, then what was generated. */
static struct json_object *choice_text(const struct cli_srv_req *r, const struct cli_srv_req *ch)
{
	struct json_object *t;
	char *p;

	if (!r->echo)
		return json_object_new_string_len(ch->text ? ch->text : "", (int)ch->len);
	p = malloc(r->echo_len + ch->len + 1);
	if (!p)
		return NULL;
	memcpy(p, r->echo_text, r->echo_len);
	if (ch->len)
		memcpy(p + r->echo_len, ch->text, ch->len);
	t = json_object_new_string_len(p, (int)(r->echo_len + ch->len));
	free(p);
	return t;
}

char *cli_srv_response_json(const struct cli_srv *s, const struct cli_srv_req *r)
{
	struct json_object *o = head(s, r, r->chat ? "chat.completion" : "text_completion");
	struct json_object *list = json_object_new_array(), *c, *text;
	const struct cli_srv_req *ch;
	unsigned int i;

	for (i = 0; i < choices(r); i++) {
		ch = cli_srv_choice(r, i);
		c = json_object_new_object();
		text = choice_text(r, ch);
		json_object_object_add(c, "index", json_object_new_int((int)i));
		if (r->chat) {
			struct json_object *msg = json_object_new_object();

			json_object_object_add(msg, "role", json_object_new_string("assistant"));
			json_object_object_add(msg, "content", text);
			json_object_object_add(c, "message", msg);
		} else {
			json_object_object_add(c, "text", text);
		}
		json_object_object_add(c, "logprobs", choice_logprobs(s, r, ch, 1, 0,
								       lp_upto(ch, ch->len)));
		json_object_object_add(c, "finish_reason", str_or_null(ch->finish));
		json_object_array_add(list, c);
	}
	json_object_object_add(o, "choices", list);
	json_object_object_add(o, "usage", usage(r));
	return dump(o);
}

char *cli_srv_chunk_json(const struct cli_srv *s, const struct cli_srv_req *r,
			 const struct cli_srv_req *ch, int role, const char *text, size_t n,
			 const char *finish, int usage_only, int prompt, unsigned int lp_to)
{
	struct json_object *o = head(s, r, r->chat ? "chat.completion.chunk" : "text_completion");
	struct json_object *list = json_object_new_array(), *c;

	if (usage_only) {
		json_object_object_add(o, "choices", list);
		json_object_object_add(o, "usage", usage(r));
		return dump(o);
	}
	c = json_object_new_object();
	json_object_object_add(c, "index", json_object_new_int((int)ch->index));
	if (r->chat) {
		struct json_object *d = json_object_new_object();

		if (role) {
			json_object_object_add(d, "role", json_object_new_string("assistant"));
			json_object_object_add(d, "content", json_object_new_string(""));
		} else if (!finish) {
			json_object_object_add(d, "content", json_object_new_string_len(text, (int)n));
		}
		json_object_object_add(c, "delta", d);
	} else {
		json_object_object_add(c, "text", json_object_new_string_len(finish ? "" : text,
									      finish ? 0 : (int)n));
	}
	json_object_object_add(c, "logprobs", role || finish ? NULL :
			       choice_logprobs(s, r, ch, prompt, ch->lp_sent, lp_to));
	json_object_object_add(c, "finish_reason", str_or_null(finish));
	json_object_array_add(list, c);
	json_object_object_add(o, "choices", list);
	if (r->include_usage)
		json_object_object_add(o, "usage", NULL);
	return dump(o);
}

/* ---- requests ---- */

static const char *const common_fields[] = {
	"model", "max_tokens", "temperature", "top_p", "seed", "stop", "stream",
	"stream_options", "n", "user", "logprobs", "presence_penalty", "frequency_penalty",
	NULL,
};

/* Known to OpenAI's API, not served here: a 400 that says so, not "unrecognized". */
static const char *const unsupported[] = {
	"tools", "tool_choice", "parallel_tool_calls", "functions", "function_call",
	"response_format", NULL,
};

static int known(const char *key, int chat)
{
	unsigned int i;

	for (i = 0; common_fields[i]; i++)
		if (!strcmp(key, common_fields[i]))
			return 1;
	for (i = 0; unsupported[i]; i++)
		if (!strcmp(key, unsupported[i]))
			return 1;
	return chat ? !strcmp(key, "messages") || !strcmp(key, "max_completion_tokens") ||
		!strcmp(key, "top_logprobs") || !strcmp(key, "chat_template") :
		!strcmp(key, "prompt") || !strcmp(key, "echo");
}

static int is_num(struct json_object *v)
{
	return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
}

/*
 * Typed access to the request's fields: every field the server reads goes
 * through field() or one of the get_*() wrappers, which return 0 with the
 * value (or nothing, for an absent optional field) or a 400 that names the
 * field.  json-c reports a JSON null as present with a NULL object: only a
 * FIELD_NULLABLE field takes null, as its default (OpenAI's optional
 * parameters are nullable); everywhere else null is the wrong type.
 */
#define FIELD_REQUIRED	1	/* absent is an error */
#define FIELD_NULLABLE	2	/* null is the same as absent */
#define FIELD_ANY	json_type_null	/* any type but null: the caller checks */

static const char *type_name(enum json_type t)
{
	switch (t) {
	case json_type_boolean:	return "a boolean";
	case json_type_double:	return "a number";
	case json_type_int:	return "an integer";
	case json_type_object:	return "an object";
	case json_type_array:	return "an array";
	case json_type_string:	return "a string";
	default:		return "a value";
	}
}

/*
 * Member @key of the object @o as *@v, checked to be of @type (json_type_double:
 * any number): *@v is NULL when it is absent (or null and FIELD_NULLABLE).
 */
static int field(struct json_object *o, const char *key, enum json_type type, int flags,
		 const char *param, struct json_object **v, struct cli_srv_error *e)
{
	*v = NULL;
	if (!json_object_object_get_ex(o, key, v) || (!*v && (flags & FIELD_NULLABLE))) {
		*v = NULL;
		return flags & FIELD_REQUIRED ? bad(e, param, "'%s' is required", param) : 0;
	}
	if (!*v && type == FIELD_ANY)
		return bad(e, param, "'%s' must not be null", param);
	if (!*v)
		return bad(e, param, "'%s' must be %s, not null", param, type_name(type));
	if (type == FIELD_ANY || (type == json_type_double ? is_num(*v) :
				  json_object_is_type(*v, type)))
		return 0;
	return bad(e, param, "'%s' must be %s", param, type_name(type));
}

/* @v's text when it is a string without NUL bytes (json-c keeps \u0000); else NULL. */
static const char *text_of(struct json_object *v, size_t *len)
{
	const char *s;

	if (!v || !json_object_is_type(v, json_type_string))
		return NULL;
	s = json_object_get_string(v);
	*len = (size_t)json_object_get_string_len(v);
	return strlen(s) == *len ? s : NULL;
}

/* A string field without NUL characters; *@s NULL when absent. */
static int get_str(struct json_object *o, const char *key, int flags, const char *param,
		   const char **s, size_t *n, struct cli_srv_error *e)
{
	struct json_object *v;
	int ret = field(o, key, json_type_string, flags, param, &v, e);

	*s = NULL;
	*n = 0;
	if (ret || !v)
		return ret;
	*s = text_of(v, n);
	return *s ? 0 : bad(e, param, "'%s' must not contain NUL characters", param);
}

/*
 * An integer field; *@set 0 when absent.  A number written with a fraction
 * or an exponent but whole (1e9, 16.0) is that integer, so that its range,
 * not its spelling, is what a message about it names.
 */
static int get_int(struct json_object *o, const char *key, int flags, const char *param,
		   int64_t *out, int *set, struct cli_srv_error *e)
{
	struct json_object *v;
	int ret = field(o, key, json_type_int, flags, param, &v, e);
	double d;

	if (ret && v && json_object_is_type(v, json_type_double))
		ret = 0;	/* a whole number? */
	*set = !ret && v;
	if (!*set)
		return ret;
	if (json_object_is_type(v, json_type_int)) {
		*out = json_object_get_int64(v);
		return 0;
	}
	d = json_object_get_double(v);
	/* the range first: converting a double out of int64_t's range is undefined */
	if (!(d >= -9.2e18 && d <= 9.2e18) || d != (double)(int64_t)d) {
		*set = 0;
		return bad(e, param, "'%s' must be an integer", param);
	}
	*out = (int64_t)d;
	return 0;
}

/* A number field; *@set 0 when absent. */
static int get_num(struct json_object *o, const char *key, int flags, const char *param,
		   double *out, int *set, struct cli_srv_error *e)
{
	struct json_object *v;
	int ret = field(o, key, json_type_double, flags, param, &v, e);

	*set = !ret && v;
	if (*set)
		*out = json_object_get_double(v);
	return ret;
}

/* A boolean field; *@out unchanged when absent. */
static int get_bool(struct json_object *o, const char *key, int flags, const char *param,
		    int *out, struct cli_srv_error *e)
{
	struct json_object *v;
	int ret = field(o, key, json_type_boolean, flags, param, &v, e);

	if (!ret && v)
		*out = json_object_get_boolean(v);
	return ret;
}

/* The prompt being built. */
#define text_buf cli_srv_text

/* Appends @s (@n bytes), after a space unless first. */
static int cat(struct text_buf *b, const char *s, size_t n, struct cli_srv_error *e)
{
	size_t need = b->len + n + 2, cap = b->cap ? b->cap : 256;
	char *q;

	while (cap < need)
		cap *= 2;
	if (cap != b->cap) {
		q = realloc(b->p, cap);
		if (!q)
			return cli_srv_fail(e, 500, "server_error", NULL, NULL, "out of memory");
		b->p = q;
		b->cap = cap;
	}
	if (b->len)
		b->p[b->len++] = ' ';
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

/*
 * One message's content: a string, or an array of {"type":"text","text":...}
 * parts, into @mine (its parts joined by a space).
 */
static int content(struct json_object *m, size_t i, struct text_buf *mine,
		   struct cli_srv_error *e)
{
	struct json_object *c, *part;
	char param[64], pp[96];
	const char *s;
	size_t j, n;
	int ret;

	snprintf(param, sizeof(param), "messages[%zu].content", i);
	ret = field(m, "content", FIELD_ANY, FIELD_REQUIRED, param, &c, e);
	if (ret)
		return ret;
	if (json_object_is_type(c, json_type_string)) {
		if (!(s = text_of(c, &n)))
			return bad(e, param, "'%s' must not contain NUL characters", param);
		return cat(mine, s, n, e);
	}
	if (!json_object_is_type(c, json_type_array))
		return bad(e, param, "'%s' must be a string or an array of text parts", param);
	for (j = 0; j < json_object_array_length(c); j++) {
		part = json_object_array_get_idx(c, j);
		snprintf(pp, sizeof(pp), "messages[%zu].content[%zu]", i, j);
		if (!json_object_is_type(part, json_type_object))
			return bad(e, pp, "'%s' must be an object {\"type\": \"text\", \"text\": "
				   "STRING}", pp);
		json_object_object_foreach(part, key, val) {
			(void)val;
			if (strcmp(key, "type") && strcmp(key, "text"))
				return bad(e, pp, "'%s': unrecognized field '%.32s'", pp, key);
		}
		snprintf(pp, sizeof(pp), "messages[%zu].content[%zu].type", i, j);
		ret = get_str(part, "type", FIELD_REQUIRED, pp, &s, &n, e);
		if (ret)
			return ret;
		if (strcmp(s, "text"))
			return bad(e, pp, "'%s': only \"text\" parts are supported", pp);
		snprintf(pp, sizeof(pp), "messages[%zu].content[%zu].text", i, j);
		ret = get_str(part, "text", FIELD_REQUIRED, pp, &s, &n, e);
		if (ret || (ret = cat(mine, s, n, e)))
			return ret;	/* a status */
	}
	return 0;
}

/* The messages (their contents @mine) through @t into @b. */
static int templated(const struct cli_srv_template *t, struct json_object *msgs,
		     struct text_buf *mine, struct text_buf *b, struct cli_srv_error *e)
{
	size_t i, n = json_object_array_length(msgs);
	const char **roles = calloc(n, sizeof(*roles));
	struct json_object *r;
	int ret = -1;

	if (roles) {
		for (i = 0; i < n; i++) {
			json_object_object_get_ex(json_object_array_get_idx(msgs, i), "role", &r);
			roles[i] = json_object_get_string(r);
		}
		ret = cli_srv_template_apply(t, roles, mine, n, b);
	}
	free(roles);
	return ret ? cli_srv_fail(e, 500, "server_error", NULL, NULL, "out of memory") : 0;
}

/* Message @i: its fields checked, its content into @mine. */
static int message(struct json_object *msgs, size_t i, struct text_buf *mine,
		   struct cli_srv_error *e)
{
	static const char *const roles[] = { "system", "developer", "user", "assistant", NULL };
	struct json_object *m = json_object_array_get_idx(msgs, i);
	char param[64];
	const char *s;
	size_t k, n;
	int ret;

	snprintf(param, sizeof(param), "messages[%zu]", i);
	if (!json_object_is_type(m, json_type_object))
		return bad(e, param, "'%s' must be an object", param);
	json_object_object_foreach(m, key, val) {
		(void)val;
		if (strcmp(key, "role") && strcmp(key, "content") && strcmp(key, "name"))
			return bad(e, param, "'%s': unrecognized field '%.32s'", param, key);
	}
	snprintf(param, sizeof(param), "messages[%zu].role", i);
	ret = get_str(m, "role", FIELD_REQUIRED, param, &s, &n, e);
	if (ret)
		return ret;
	for (k = 0; roles[k] && strcmp(roles[k], s); k++)
		;
	if (!roles[k])
		return bad(e, param, "'%s' '%.32s': one of system, developer, user, "
			   "assistant", param, s);
	snprintf(param, sizeof(param), "messages[%zu].name", i);
	ret = get_str(m, "name", 0, param, &s, &n, e);
	return ret ? ret : content(m, i, mine, e);
}

static int chat_prompt(const struct cli_srv_template *t, struct json_object *o,
		       struct text_buf *b, struct cli_srv_error *e)
{
	static const struct cli_srv_template story = { .kind = CLI_SRV_TPL_STORY };
	struct json_object *msgs;
	struct text_buf *mine;
	size_t i, cnt;
	int ret;

	ret = field(o, "messages", json_type_array, FIELD_REQUIRED, "messages", &msgs, e);
	if (ret)
		return ret;
	cnt = json_object_array_length(msgs);
	if (!cnt)
		return bad(e, "messages", "'messages' must be a non-empty array");
	mine = calloc(cnt, sizeof(*mine));
	if (!mine)
		return cli_srv_fail(e, 500, "server_error", NULL, NULL, "out of memory");
	for (i = 0; i < cnt && !ret; i++)
		ret = message(msgs, i, &mine[i], e);
	if (!ret)
		ret = templated(t ? t : &story, msgs, mine, b, e);
	for (i = 0; i < cnt; i++)
		free(mine[i].p);
	free(mine);
	return ret;
}

static int completion_prompt(struct json_object *o, struct text_buf *b, struct cli_srv_error *e)
{
	struct json_object *v;
	const char *s;
	size_t n;
	int ret = field(o, "prompt", FIELD_ANY, 0, "prompt", &v, e);

	if (ret)
		return ret;
	if (!v)
		return cat(b, "", 0, e);
	if (json_object_is_type(v, json_type_array) && json_object_array_length(v) == 1)
		v = json_object_array_get_idx(v, 0);
	if (!(s = text_of(v, &n)))
		return bad(e, "prompt", "'prompt' must be a string (or an array of one string), "
			   "without NUL characters");
	return cat(b, s, n, e);
}

static int stops(struct json_object *o, struct cli_srv_req *r, struct cli_srv_error *e)
{
	struct json_object *v, *x;
	size_t i, n, cnt = 1;
	const char *s;
	int ret = field(o, "stop", FIELD_ANY, FIELD_NULLABLE, "stop", &v, e);

	if (ret || !v)
		return ret;
	if (json_object_is_type(v, json_type_array))
		cnt = json_object_array_length(v);
	if (cnt > CLI_SRV_MAX_STOP)
		return bad(e, "stop", "at most %d stop sequences", CLI_SRV_MAX_STOP);
	for (i = 0; i < cnt; i++) {
		x = json_object_is_type(v, json_type_array) ? json_object_array_get_idx(v, i) : v;
		s = text_of(x, &n);
		if (!s || !n || n > CLI_SRV_MAX_STOP_LEN)
			return bad(e, "stop", "'stop' must be a string or an array of strings, "
				   "each 1..%d bytes without NUL characters", CLI_SRV_MAX_STOP_LEN);
		memcpy(r->stop[r->n_stop++], s, n + 1);
	}
	return 0;
}

/* The scalar fields; 0 or 400. */
/* A number field in [@lo, @hi]. */
static int get_range(struct json_object *o, const char *key, double lo, double hi, float *out,
		     struct cli_srv_error *e)
{
	double d;
	int set, ret = get_num(o, key, FIELD_NULLABLE, key, &d, &set, e);

	if (ret || !set)
		return ret;
	if (!(d >= lo && d <= hi))
		return bad(e, key, "'%s' must be a number in [%g, %g]", key, lo, hi);
	*out = (float)d;
	return 0;
}

/* logprobs, top_logprobs, echo, n, the penalties; and what is not served. */
static int more_params(const struct cli_srv_limits *l, struct json_object *o, int chat,
		       struct cli_srv_req *r, struct cli_srv_error *e)
{
	const int N = FIELD_NULLABLE;
	const char *key = chat ? "top_logprobs" : "logprobs";
	unsigned int i;
	int64_t v;
	int set, ret;

	for (i = 0; unsupported[i]; i++)
		if (json_object_object_get_ex(o, unsupported[i], NULL))
			return bad(e, unsupported[i], "'%s' is not supported: this server "
				   "generates plain text only", unsupported[i]);
	if (chat && (ret = get_bool(o, "logprobs", N, "logprobs", &r->logprobs, e)))
		return ret;
	if ((ret = get_int(o, key, N, key, &v, &set, e)))
		return ret;
	if (set && (v < 0 || v > WAFER_MAX_TOPK))
		return bad(e, key, "'%s' %lld: it must be 0..%d, the most alternatives the "
			   "device returns (its top-k)", key, (long long)v, WAFER_MAX_TOPK);
	if (set && chat && !r->logprobs)
		return bad(e, key, "'top_logprobs' needs 'logprobs': true");
	if (set) {
		r->top_logprobs = (unsigned int)v;
		r->logprobs = 1;
	}
	if (!chat && (ret = get_bool(o, "echo", N, "echo", &r->echo, e)))
		return ret;
	if ((ret = get_int(o, "n", N, "n", &v, &set, e)))
		return ret;
	if (set && (v < 1 || v > (int64_t)l->slots))
		return bad(e, "n", "'n' %lld: it must be 1..%u, this server's slots (the choices "
			   "run together)", (long long)v, l->slots);
	r->n = set ? (unsigned int)v : 1;
	if ((ret = get_range(o, "presence_penalty", -2, 2, &r->seq.presence_penalty, e)))
		return ret;
	return get_range(o, "frequency_penalty", -2, 2, &r->seq.frequency_penalty, e);
}

static int params(const struct cli_srv_limits *l, struct json_object *o, int chat,
		  struct cli_srv_req *r, int *max_tokens, struct cli_srv_error *e)
{
	const int N = FIELD_NULLABLE;
	struct json_object *v;
	const char *s;
	int64_t i;
	double d;
	size_t n;
	int set, ret;

	r->seq.temperature = 1.0f;
	r->seq.top_p = 1.0f;
	*max_tokens = -1;
	ret = get_int(o, "max_tokens", N, "max_tokens", &i, &set, e);
	if (!ret && chat) {
		int64_t mct;
		int mset;

		/* both are checked; max_tokens wins when both are given */
		ret = get_int(o, "max_completion_tokens", N, "max_completion_tokens", &mct, &mset,
			      e);
		if (!ret && !set && mset) {
			i = mct;
			set = 1;
		}
	}
	if (ret)
		return ret;
	if (set && i < 0)
		return bad(e, "max_tokens", "'max_tokens' %lld: it must be >= 1 (0 only with "
			   "'echo': true)", (long long)i);
	if (set && i > (int64_t)l->max_tokens)
		return bad(e, "max_tokens", "'max_tokens' %lld is too large: this server's limit "
			   "is %u", (long long)i, l->max_tokens);
	if (set)
		*max_tokens = (int)i;
	if ((ret = get_num(o, "temperature", N, "temperature", &d, &set, e)))
		return ret;
	if (set && !(d >= 0 && d <= 2))
		return bad(e, "temperature", "'temperature' must be a number in [0, 2]");
	if (set)
		r->seq.temperature = (float)d;
	if ((ret = get_num(o, "top_p", N, "top_p", &d, &set, e)))
		return ret;
	if (set && !(d > 0 && d <= 1))
		return bad(e, "top_p", "'top_p' must be a number in (0, 1]");
	if (set)
		r->seq.top_p = (float)d;
	if ((ret = get_int(o, "seed", N, "seed", &i, &set, e)))
		return ret;
	if (set)
		r->seq.seed = (uint64_t)i;
	if ((ret = get_bool(o, "stream", N, "stream", &r->stream, e)))
		return ret;
	if ((ret = field(o, "stream_options", json_type_object, N, "stream_options", &v, e)))
		return ret;
	if (v) {
		if (!r->stream)
			return bad(e, "stream_options", "'stream_options' is only allowed with "
				   "'stream': true");
		json_object_object_foreach(v, key, val) {
			(void)val;
			if (strcmp(key, "include_usage"))
				return bad(e, "stream_options", "unrecognized stream option '%.32s'",
					   key);
		}
		ret = get_bool(v, "include_usage", N, "stream_options.include_usage",
			       &r->include_usage, e);
		if (ret)
			return ret;
	}
	if ((ret = more_params(l, o, chat, r, e)))
		return ret;
	if ((ret = get_str(o, "user", N, "user", &s, &n, e)))
		return ret;
	return stops(o, r, e);
}

/* The request's chat_template (a built-in's name or a template), else the server's. */
static int request_template(const struct cli_srv_limits *l, struct json_object *o,
			    const struct cli_srv_template **out, struct cli_srv_error *e)
{
	struct cli_srv_template *t;
	char err[160];
	const char *s;
	size_t n;
	int ret = get_str(o, "chat_template", FIELD_NULLABLE, "chat_template", &s, &n, e);

	*out = l->tmpl;
	if (ret || !s)
		return ret;
	t = malloc(sizeof(*t));
	if (!t)
		return cli_srv_fail(e, 500, "server_error", NULL, NULL, "out of memory");
	if (cli_srv_template_parse(s, t, err, sizeof(err))) {
		free(t);
		return bad(e, "chat_template", "'chat_template' does not parse: %s", err);
	}
	*out = t;
	return 0;
}

static int parse_obj(const struct cli_srv_limits *l, struct json_object *o, int chat,
		     struct cli_srv_req *r, struct cli_srv_error *e)
{
	const char *what = chat ? "messages" : "prompt", *model;
	const struct cli_srv_template *tmpl = l->tmpl;
	struct text_buf text = { 0 };
	int max_tokens, np, ret;
	unsigned int room;
	size_t n;

	if (!json_object_is_type(o, json_type_object))
		return bad(e, NULL, "the request body must be a JSON object");
	json_object_object_foreach(o, key, val) {
		(void)val;
		if (!known(key, chat))
			return bad(e, key, "Unrecognized request argument supplied: %.32s", key);
	}
	ret = get_str(o, "model", FIELD_REQUIRED, "model", &model, &n, e);
	if (ret)
		return ret;
	if (strcmp(model, l->model_id))
		return cli_srv_fail(e, 404, "invalid_request_error", "model", "model_not_found",
				"The model '%.100s' does not exist; this server serves '%s'",
				model, l->model_id);
	ret = params(l, o, chat, r, &max_tokens, e);
	if (!ret && chat)
		ret = request_template(l, o, &tmpl, e);
	if (!ret)
		ret = chat ? chat_prompt(tmpl, o, &text, e) : completion_prompt(o, &text, e);
	if (!ret && max_tokens == 0 && !r->echo)
		ret = bad(e, "max_tokens", "'max_tokens' 0: it must be >= 1 (0 only with "
			  "'echo': true)");
	if (!ret && r->echo) {
		r->echo_text = strdup(text.p);
		r->echo_len = text.len;
		if (!r->echo_text)
			ret = cli_srv_fail(e, 500, "server_error", NULL, NULL, "out of memory");
	}
	if (tmpl != l->tmpl)
		free((void *)tmpl);
	if (ret) {
		free(text.p);
		return ret;
	}
	/*
	 * Room for the context only: the tokenizer refuses in linear time a
	 * text too long to fit, before it merges anything.
	 */
	r->prompt = malloc(((size_t)l->ctx_len + 1) * sizeof(*r->prompt));
	if (!r->prompt) {
		free(text.p);
		return cli_srv_fail(e, 500, "server_error", NULL, NULL, "out of memory");
	}
	np = wafer_tokenizer_encode(l->tok, text.p, 1, 0, r->prompt, l->ctx_len);
	free(text.p);
	if (np == -ENOSPC)
		return cli_srv_fail(e, 400, "invalid_request_error", what,
				"context_length_exceeded", "the prompt is more than %u tokens: "
				"this model's context holds %u", l->ctx_len, l->ctx_len);
	if (np < 1)
		return bad(e, what, "the prompt cannot be encoded: %s", wafer_last_error());
	r->n_prompt = (unsigned int)np;
	/* The last prompt position and each sampled token but the last run on the device. */
	room = l->ctx_len - r->n_prompt + 1;
	if (max_tokens > (int)room)
		return cli_srv_fail(e, 400, "invalid_request_error", "max_tokens",
				"context_length_exceeded", "%u prompt tokens + max_tokens %d exceed "
				"the context of %u (at most %u new tokens)", r->n_prompt,
				max_tokens, l->ctx_len, room);
	if (max_tokens < 0)
		max_tokens = (int)(chat ? room : room < DEFAULT_MAX_TOKENS ? room : DEFAULT_MAX_TOKENS);
	if (max_tokens > (int)l->max_tokens)
		max_tokens = (int)l->max_tokens;
	/* echo with max_tokens 0: one token is run for the prompt's last result, not shown */
	r->no_output = !max_tokens;
	r->seq.max_new = max_tokens ? (unsigned int)max_tokens : 1;
	r->seq.prompt_results = r->echo && r->logprobs;
	r->chat = chat;
	return 0;
}

int cli_srv_parse(const struct cli_srv_limits *l, const char *body, size_t len, int chat,
		  struct cli_srv_req *r, struct cli_srv_error *e)
{
	struct json_tokener *tk;
	enum json_tokener_error je;
	struct json_object *o;
	size_t end;
	int ret;

	if (len > INT_MAX)
		return bad(e, NULL, "the request body is too large");
	tk = json_tokener_new_ex(JSON_DEPTH);
	if (!tk)
		return cli_srv_fail(e, 500, "server_error", NULL, NULL, "out of memory");
	json_tokener_set_flags(tk, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	o = len ? json_tokener_parse_ex(tk, body, (int)len) : NULL;
	end = json_tokener_get_parse_end(tk);
	je = json_tokener_get_error(tk);
	if (!o) {
		ret = bad(e, NULL, "We could not parse the JSON body of your request: %s",
			  !len ? "the body is empty" :
			  je == json_tokener_continue ? "the JSON ends early" :
			  je == json_tokener_success ? "null is not an object" :
			  json_tokener_error_desc(je));
		json_tokener_free(tk);
		return ret;
	}
	json_tokener_free(tk);
	while (end < len && isspace((unsigned char)body[end]))
		end++;
	if (end < len) {
		json_object_put(o);
		return bad(e, NULL, "We could not parse the JSON body of your request: data after "
			   "the JSON value at byte %zu", end);
	}
	ret = parse_obj(l, o, chat, r, e);
	json_object_put(o);
	return ret;
}

int cli_srv_parse_request(struct cli_srv *s, const char *body, size_t len, int chat,
			  struct cli_srv_req *r, struct cli_srv_error *e)
{
	const struct cli_srv_limits l = { .model_id = s->model_id, .tok = s->tok,
					  .ctx_len = s->ctx_len, .max_tokens = s->max_tokens,
					  .slots = s->slots, .tmpl = s->tmpl };

	return cli_srv_parse(&l, body, len, chat, r, e);
}

/* ---- /tokenize, /detokenize ---- */

/* Appends @n bytes of @p, no separator. */
static int append_raw(struct text_buf *b, const char *p, size_t n, struct cli_srv_error *e)
{
	int ret;

	if (!b->len)
		return cat(b, p, n, e);
	ret = cat(b, p, n, e);	/* "... p" */
	if (!ret) {
		memmove(b->p + b->len - n - 1, b->p + b->len - n, n + 1);
		b->len--;
	}
	return ret;
}

/* @n bytes of @p as a JSON string, each byte of no valid UTF-8 as U+FFFD. */
static struct json_object *valid_text(const char *p, size_t n)
{
	const unsigned char *u = (const unsigned char *)p;
	struct json_object *o;
	size_t i = 0, k, j, o_len = 0;
	char *q = malloc(n * 3 + 1);

	if (!q)
		return NULL;
	while (i < n) {
		k = u[i] < 0x80 ? 1 : u[i] >= 0xc2 && u[i] < 0xe0 ? 2 :
			u[i] >= 0xe0 && u[i] < 0xf0 ? 3 : u[i] >= 0xf0 && u[i] < 0xf5 ? 4 : 0;
		for (j = 1; k && j < k; j++)
			if (i + j >= n || (u[i + j] & 0xc0) != 0x80)
				k = 0;
		if (k) {
			memcpy(q + o_len, p + i, k);
			o_len += k;
			i += k;
		} else {
			memcpy(q + o_len, "\xef\xbf\xbd", 3);
			o_len += 3;
			i++;
		}
	}
	o = json_object_new_string_len(q, (int)o_len);
	free(q);
	return o;
}


/* @body as a JSON object of the fields in @keys; NULL with @e filled. */
static struct json_object *small_body(const char *body, size_t len, const char *const *keys,
				      struct cli_srv_error *e)
{
	struct json_tokener *tk = json_tokener_new_ex(JSON_DEPTH);
	struct json_object *o = NULL;
	unsigned int i;

	if (!tk) {
		cli_srv_fail(e, 500, "server_error", NULL, NULL, "out of memory");
		return NULL;
	}
	json_tokener_set_flags(tk, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	if (len && len <= INT_MAX)
		o = json_tokener_parse_ex(tk, body, (int)len);
	if (o && json_tokener_get_parse_end(tk) != len) {
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tk);
	if (!o || !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		bad(e, NULL, "the body must be a JSON object");
		return NULL;
	}
	json_object_object_foreach(o, key, val) {
		(void)val;
		for (i = 0; keys[i] && strcmp(keys[i], key); i++)
			;
		if (!keys[i]) {
			bad(e, key, "Unrecognized request argument supplied: %.32s", key);
			json_object_put(o);
			return NULL;
		}
	}
	return o;
}

static int tokenize(const struct cli_srv *s, struct json_object *o, char **out,
		    struct cli_srv_error *e)
{
	struct json_object *res, *list;
	int add_special = 0, pieces = 0, n, i, ret, prev = WAFER_TOKEN_BOS;
	const char *text;
	size_t len;
	int *ids;

	ret = get_str(o, "content", FIELD_REQUIRED, "content", &text, &len, e);
	if (!ret)
		ret = get_bool(o, "add_special", FIELD_NULLABLE, "add_special", &add_special, e);
	if (!ret)
		ret = get_bool(o, "with_pieces", FIELD_NULLABLE, "with_pieces", &pieces, e);
	if (ret)
		return ret;
	ids = malloc(((size_t)s->ctx_len + 1) * sizeof(*ids));
	if (!ids)
		return cli_srv_fail(e, 500, "server_error", NULL, NULL, "out of memory");
	n = wafer_tokenizer_encode(s->tok, text, add_special, 0, ids, s->ctx_len);
	if (n < 0) {
		free(ids);
		return n == -ENOSPC ?
			cli_srv_fail(e, 400, "invalid_request_error", "content",
				     "context_length_exceeded", "'content' is more than %u tokens, "
				     "this model's context", s->ctx_len) :
			bad(e, "content", "'content' cannot be encoded: %s", wafer_last_error());
	}
	res = json_object_new_object();
	list = json_object_new_array();
	for (i = 0; i < n; i++) {
		if (pieces) {
			struct json_object *p = json_object_new_object();
			const char *piece = wafer_tokenizer_decode(s->tok, prev, ids[i]);

			json_object_object_add(p, "id", json_object_new_int(ids[i]));
			json_object_object_add(p, "piece", json_object_new_string(piece ? piece : ""));
			json_object_array_add(list, p);
		} else {
			json_object_array_add(list, json_object_new_int(ids[i]));
		}
		prev = ids[i];
	}
	free(ids);
	json_object_object_add(res, "tokens", list);
	*out = dump(res);
	return 0;
}

static int detokenize(const struct cli_srv *s, struct json_object *o, char **out,
		      struct cli_srv_error *e)
{
	struct json_object *list, *v, *res;
	struct text_buf b = { 0 };
	unsigned int vocab = wafer_tokenizer_vocab_size(s->tok);
	int prev = WAFER_TOKEN_BOS, ret, id;
	const char *piece;
	char param[32];
	size_t i;

	ret = field(o, "tokens", json_type_array, FIELD_REQUIRED, "tokens", &list, e);
	if (ret)
		return ret;
	for (i = 0; i < json_object_array_length(list); i++) {
		v = json_object_array_get_idx(list, i);
		snprintf(param, sizeof(param), "tokens[%zu]", i);
		if (!v || !json_object_is_type(v, json_type_int) ||
		    json_object_get_int64(v) < 0 || json_object_get_int64(v) >= vocab) {
			free(b.p);
			return bad(e, param, "'%s' must be a token id, 0..%u", param, vocab - 1);
		}
		id = (int)json_object_get_int64(v);
		piece = wafer_tokenizer_decode(s->tok, prev, id);
		prev = id;
		if (!piece || !wafer_piece_printable(piece))
			continue;
		ret = append_raw(&b, piece, strlen(piece), e);
		if (ret) {
			free(b.p);
			return ret;
		}
	}
	res = json_object_new_object();
	json_object_object_add(res, "content", valid_text(b.p ? b.p : "", b.len));
	free(b.p);
	*out = dump(res);
	return 0;
}

int cli_srv_tokenize(const struct cli_srv *s, const char *body, size_t len, int detok,
		     char **out, struct cli_srv_error *e)
{
	static const char *const tok_keys[] = { "content", "add_special", "with_pieces", NULL };
	static const char *const detok_keys[] = { "tokens", NULL };
	struct json_object *o = small_body(body, len, detok ? detok_keys : tok_keys, e);
	int ret;

	*out = NULL;
	if (!o)
		return e->status;
	ret = detok ? detokenize(s, o, out, e) : tokenize(s, o, out, e);
	json_object_put(o);
	if (!ret && !*out)
		ret = cli_srv_fail(e, 500, "server_error", NULL, NULL, "out of memory");
	return ret;
}
