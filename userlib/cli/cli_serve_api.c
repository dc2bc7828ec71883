// SPDX-License-Identifier: MIT
/*
 * wafer serve: the OpenAI request and response shapes in JSON (json-c).
 * A request is checked whole before it is queued: the JSON (strict, UTF-8
 * validated, nesting bounded), every field's type and range, fields OpenAI
 * does not know (rejected as OpenAI does), the model's name, and the prompt
 * against the context.
 *
 * Chat template: the shared model is a story model with no notion of roles,
 * so a chat is the story so far: the messages' contents in order (system,
 * developer, user and assistant alike), joined by one space, are the prompt,
 * and the reply is the model's continuation of it.
 */
#include <ctype.h>
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

char *cli_srv_models_json(const struct cli_srv *s)
{
	struct json_object *o = json_object_new_object(), *list = json_object_new_array();
	struct json_object *m = json_object_new_object();

	json_object_object_add(m, "id", json_object_new_string(s->model_id));
	json_object_object_add(m, "object", json_object_new_string("model"));
	json_object_object_add(m, "created", json_object_new_int64(s->created));
	json_object_object_add(m, "owned_by", json_object_new_string("wafer"));
	json_object_object_add(m, "context_length", json_object_new_int((int)s->ctx_len));
	json_object_array_add(list, m);
	json_object_object_add(o, "object", json_object_new_string("list"));
	json_object_object_add(o, "data", list);
	return dump(o);
}

static struct json_object *usage(const struct cli_srv_req *r)
{
	struct json_object *u = json_object_new_object();

	json_object_object_add(u, "prompt_tokens", json_object_new_int((int)r->n_prompt));
	json_object_object_add(u, "completion_tokens", json_object_new_int((int)r->n_new));
	json_object_object_add(u, "total_tokens", json_object_new_int((int)(r->n_prompt + r->n_new)));
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

char *cli_srv_response_json(const struct cli_srv *s, const struct cli_srv_req *r)
{
	struct json_object *o = head(s, r, r->chat ? "chat.completion" : "text_completion");
	struct json_object *choices = json_object_new_array(), *c = json_object_new_object();
	struct json_object *text = json_object_new_string_len(r->text ? r->text : "", (int)r->len);

	json_object_object_add(c, "index", json_object_new_int(0));
	if (r->chat) {
		struct json_object *msg = json_object_new_object();

		json_object_object_add(msg, "role", json_object_new_string("assistant"));
		json_object_object_add(msg, "content", text);
		json_object_object_add(c, "message", msg);
	} else {
		json_object_object_add(c, "text", text);
	}
	json_object_object_add(c, "logprobs", NULL);
	json_object_object_add(c, "finish_reason", str_or_null(r->finish));
	json_object_array_add(choices, c);
	json_object_object_add(o, "choices", choices);
	json_object_object_add(o, "usage", usage(r));
	return dump(o);
}

char *cli_srv_chunk_json(const struct cli_srv *s, const struct cli_srv_req *r, int role,
			 const char *text,
		     size_t n, const char *finish, int usage_only)
{
	struct json_object *o = head(s, r, r->chat ? "chat.completion.chunk" : "text_completion");
	struct json_object *choices = json_object_new_array(), *c;

	if (usage_only) {
		json_object_object_add(o, "choices", choices);
		json_object_object_add(o, "usage", usage(r));
		return dump(o);
	}
	c = json_object_new_object();
	json_object_object_add(c, "index", json_object_new_int(0));
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
	json_object_object_add(c, "logprobs", NULL);
	json_object_object_add(c, "finish_reason", str_or_null(finish));
	json_object_array_add(choices, c);
	json_object_object_add(o, "choices", choices);
	if (r->include_usage)
		json_object_object_add(o, "usage", NULL);
	return dump(o);
}

/* ---- requests ---- */

static const char *const common_fields[] = {
	"model", "max_tokens", "temperature", "top_p", "seed", "stop", "stream",
	"stream_options", "n", "user", NULL,
};

static int known(const char *key, int chat)
{
	unsigned int i;

	for (i = 0; common_fields[i]; i++)
		if (!strcmp(key, common_fields[i]))
			return 1;
	return chat ? !strcmp(key, "messages") || !strcmp(key, "max_completion_tokens") :
		!strcmp(key, "prompt");
}

static int is_num(struct json_object *v)
{
	return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
}

/* A string without NUL bytes (json-c keeps \u0000); NULL otherwise. */
static const char *text_of(struct json_object *v, size_t *len)
{
	const char *s;

	if (!json_object_is_type(v, json_type_string))
		return NULL;
	s = json_object_get_string(v);
	*len = (size_t)json_object_get_string_len(v);
	return strlen(s) == *len ? s : NULL;
}

/* Appends @s to the prompt text being built (malloc'd *@p). */
static int cat(char **p, size_t *len, const char *s, size_t n, struct cli_srv_error *e)
{
	char *q = realloc(*p, *len + n + 2);

	if (!q)
		return cli_srv_fail(e, 500, "server_error", NULL, NULL, "out of memory");
	*p = q;
	if (*len)
		q[(*len)++] = ' ';
	memcpy(q + *len, s, n);
	*len += n;
	q[*len] = '\0';
	return 0;
}

/* One message's content: a string, or an array of {"type":"text","text":...} parts. */
static int content(struct json_object *c, char **p, size_t *len, struct cli_srv_error *e)
{
	const char *s;
	size_t i, n;

	if ((s = text_of(c, &n)))
		return cat(p, len, s, n, e);
	if (!json_object_is_type(c, json_type_array))
		return bad(e, "messages", "a message's content must be a string or an array of "
			   "text parts (without NUL characters)");
	for (i = 0; i < json_object_array_length(c); i++) {
		struct json_object *part = json_object_array_get_idx(c, i), *t, *x;

		if (!json_object_is_type(part, json_type_object) ||
		    !json_object_object_get_ex(part, "type", &t) ||
		    strcmp(json_object_get_string(t), "text") ||
		    !json_object_object_get_ex(part, "text", &x) || !(s = text_of(x, &n)))
			return bad(e, "messages", "content part %zu: only {\"type\": \"text\", "
				   "\"text\": STRING} parts are supported", i);
		if (cat(p, len, s, n, e))
			return e->status;
	}
	return 0;
}

static int chat_prompt(struct json_object *msgs, char **p, size_t *len, struct cli_srv_error *e)
{
	static const char *const roles[] = { "system", "developer", "user", "assistant", NULL };
	size_t i, k;

	if (!json_object_is_type(msgs, json_type_array) || !json_object_array_length(msgs))
		return bad(e, "messages", "'messages' must be a non-empty array");
	for (i = 0; i < json_object_array_length(msgs); i++) {
		struct json_object *m = json_object_array_get_idx(msgs, i), *role, *c;

		if (!json_object_is_type(m, json_type_object))
			return bad(e, "messages", "messages[%zu] is not an object", i);
		json_object_object_foreach(m, key, val) {
			(void)val;
			if (strcmp(key, "role") && strcmp(key, "content") && strcmp(key, "name"))
				return bad(e, "messages", "messages[%zu]: unrecognized field '%s'",
					   i, key);
		}
		if (!json_object_object_get_ex(m, "role", &role) ||
		    !json_object_is_type(role, json_type_string))
			return bad(e, "messages", "messages[%zu].role must be a string", i);
		for (k = 0; roles[k] && strcmp(roles[k], json_object_get_string(role)); k++)
			;
		if (!roles[k])
			return bad(e, "messages", "messages[%zu].role '%s': one of system, "
				   "developer, user, assistant", i, json_object_get_string(role));
		if (!json_object_object_get_ex(m, "content", &c))
			return bad(e, "messages", "messages[%zu] has no content", i);
		if (content(c, p, len, e))
			return e->status;
	}
	return 0;
}

static int completion_prompt(struct json_object *v, char **p, size_t *len, struct cli_srv_error *e)
{
	const char *s;
	size_t n;

	if (json_object_is_type(v, json_type_array) && json_object_array_length(v) == 1)
		v = json_object_array_get_idx(v, 0);
	if (!(s = text_of(v, &n)))
		return bad(e, "prompt", "'prompt' must be a string (or an array of one string), "
			   "without NUL characters");
	return cat(p, len, s, n, e);
}

static int stops(struct json_object *v, struct cli_srv_req *r, struct cli_srv_error *e)
{
	size_t i, n, cnt = 1;
	const char *s;

	if (!v)
		return 0;
	if (json_object_is_type(v, json_type_array))
		cnt = json_object_array_length(v);
	if (cnt > CLI_SRV_MAX_STOP)
		return bad(e, "stop", "at most %d stop sequences", CLI_SRV_MAX_STOP);
	for (i = 0; i < cnt; i++) {
		struct json_object *x = json_object_is_type(v, json_type_array) ?
			json_object_array_get_idx(v, i) : v;

		s = text_of(x, &n);
		if (!s || !n || n > CLI_SRV_MAX_STOP_LEN)
			return bad(e, "stop", "'stop' must be a string or an array of strings, "
				   "each 1..%d bytes", CLI_SRV_MAX_STOP_LEN);
		memcpy(r->stop[r->n_stop++], s, n + 1);
	}
	return 0;
}

/* The scalar fields; 0 or 400. */
static int params(struct json_object *o, int chat, struct cli_srv_req *r, int *max_tokens,
		  struct cli_srv_error *e)
{
	struct json_object *v;
	double d;

	r->seq.temperature = 1.0f;
	r->seq.top_p = 1.0f;
	*max_tokens = -1;
	if (json_object_object_get_ex(o, "max_tokens", &v) ||
	    (chat && json_object_object_get_ex(o, "max_completion_tokens", &v))) {
		if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 1 ||
		    json_object_get_int64(v) > 1 << 30)
			return bad(e, "max_tokens", "'max_tokens' must be an integer >= 1");
		*max_tokens = (int)json_object_get_int64(v);
	}
	if (json_object_object_get_ex(o, "temperature", &v) && v) {
		d = json_object_get_double(v);
		if (!is_num(v) || !(d >= 0 && d <= 2))
			return bad(e, "temperature", "'temperature' must be a number in [0, 2]");
		r->seq.temperature = (float)d;
	}
	if (json_object_object_get_ex(o, "top_p", &v) && v) {
		d = json_object_get_double(v);
		if (!is_num(v) || !(d > 0 && d <= 1))
			return bad(e, "top_p", "'top_p' must be a number in (0, 1]");
		r->seq.top_p = (float)d;
	}
	if (json_object_object_get_ex(o, "seed", &v) && v) {
		if (!json_object_is_type(v, json_type_int))
			return bad(e, "seed", "'seed' must be an integer");
		r->seq.seed = (uint64_t)json_object_get_int64(v);
	}
	if (json_object_object_get_ex(o, "stream", &v) && v) {
		if (!json_object_is_type(v, json_type_boolean))
			return bad(e, "stream", "'stream' must be a boolean");
		r->stream = json_object_get_boolean(v);
	}
	if (json_object_object_get_ex(o, "stream_options", &v) && v) {
		struct json_object *u;

		if (!r->stream)
			return bad(e, "stream_options", "'stream_options' is only allowed with "
				   "'stream': true");
		if (!json_object_is_type(v, json_type_object))
			return bad(e, "stream_options", "'stream_options' must be an object");
		json_object_object_foreach(v, key, val) {
			(void)val;
			if (strcmp(key, "include_usage"))
				return bad(e, "stream_options", "unrecognized stream option '%s'", key);
		}
		if (json_object_object_get_ex(v, "include_usage", &u)) {
			if (!json_object_is_type(u, json_type_boolean))
				return bad(e, "stream_options", "'include_usage' must be a boolean");
			r->include_usage = json_object_get_boolean(u);
		}
	}
	if (json_object_object_get_ex(o, "n", &v) && v &&
	    (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) != 1))
		return bad(e, "n", "only 'n': 1 is supported");
	if (json_object_object_get_ex(o, "user", &v) && v && !json_object_is_type(v, json_type_string))
		return bad(e, "user", "'user' must be a string");
	return stops(json_object_object_get_ex(o, "stop", &v) ? v : NULL, r, e);
}

static int parse_obj(struct cli_srv *s, struct json_object *o, int chat, struct cli_srv_req *r,
		     struct cli_srv_error *e)
{
	struct json_object *v;
	char *text = NULL;
	size_t len = 0, max;
	int max_tokens, np, ret;
	unsigned int room;

	if (!json_object_is_type(o, json_type_object))
		return bad(e, NULL, "the request body must be a JSON object");
	json_object_object_foreach(o, key, val) {
		(void)val;
		if (!known(key, chat))
			return bad(e, key, "Unrecognized request argument supplied: %s", key);
	}
	if (!json_object_object_get_ex(o, "model", &v) || !json_object_is_type(v, json_type_string))
		return bad(e, "model", "'model' must be a string (GET /v1/models lists it)");
	if (strcmp(json_object_get_string(v), s->model_id))
		return cli_srv_fail(e, 404, "invalid_request_error", "model", "model_not_found",
				"The model '%.100s' does not exist; this server serves '%s'",
				json_object_get_string(v), s->model_id);
	ret = params(o, chat, r, &max_tokens, e);
	if (ret)
		return ret;
	if (chat)
		ret = json_object_object_get_ex(o, "messages", &v) ? chat_prompt(v, &text, &len, e) :
			bad(e, "messages", "'messages' is required");
	else
		ret = json_object_object_get_ex(o, "prompt", &v) ?
			completion_prompt(v, &text, &len, e) : cat(&text, &len, "", 0, e);
	if (ret) {
		free(text);
		return ret;
	}
	max = len + 3;
	r->prompt = malloc(max * sizeof(*r->prompt));
	if (!r->prompt) {
		free(text);
		return cli_srv_fail(e, 500, "server_error", NULL, NULL, "out of memory");
	}
	np = wafer_tokenizer_encode(s->tok, text, 1, 0, r->prompt, max);
	free(text);
	if (np < 1)
		return bad(e, chat ? "messages" : "prompt", "the prompt cannot be encoded: %s",
			   wafer_last_error());
	r->n_prompt = (unsigned int)np;
	/* The last prompt position and each sampled token but the last run on the device. */
	if (r->n_prompt > s->ctx_len)
		return cli_srv_fail(e, 400, "invalid_request_error", chat ? "messages" : "prompt",
				"context_length_exceeded", "the prompt is %u tokens; this model's "
				"context holds %u", r->n_prompt, s->ctx_len);
	room = s->ctx_len - r->n_prompt + 1;
	if (max_tokens > (int)s->max_tokens)
		return bad(e, "max_tokens", "'max_tokens' %d is above this server's limit %u",
			   max_tokens, s->max_tokens);
	if (max_tokens > (int)room)
		return cli_srv_fail(e, 400, "invalid_request_error", "max_tokens",
				"context_length_exceeded", "%u prompt tokens + max_tokens %d exceed "
				"the context of %u (at most %u new tokens)", r->n_prompt,
				max_tokens, s->ctx_len, room);
	if (max_tokens < 0)
		max_tokens = (int)(chat ? room : room < DEFAULT_MAX_TOKENS ? room : DEFAULT_MAX_TOKENS);
	if (max_tokens > (int)s->max_tokens)
		max_tokens = (int)s->max_tokens;
	r->seq.max_new = (unsigned int)max_tokens;
	r->chat = chat;
	return 0;
}

int cli_srv_parse_request(struct cli_srv *s, const char *body, size_t len, int chat,
		      struct cli_srv_req *r, struct cli_srv_error *e)
{
	struct json_tokener *tk = json_tokener_new_ex(JSON_DEPTH);
	enum json_tokener_error je;
	struct json_object *o;
	size_t end;
	int ret;

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
	ret = parse_obj(s, o, chat, r, e);
	json_object_put(o);
	return ret;
}
