// SPDX-License-Identifier: MIT
/*
 * `wafer serve --backend inproc` over HTTP (libcurl): every endpoint; greedy
 * completions, streamed and not, equal to wafer_generate() run alone in
 * this process, also when 64 clients of mixed prompt lengths run at once
 * (batching must not change a byte); a seeded sampled request the same
 * alone and batched; stop strings; the bad-input table (each case with the
 * status it gets and an OpenAI error object); 2,400 mutated bodies from 8
 * threads each answered in shape, the server's memory flat over them; the
 * openai npm client; queue full -> 429; a client
 * gone mid-stream frees its slot; SIGTERM drains (and with a zero deadline
 * cuts with 503); the server exits 0.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>
#include <math.h>

#include "wafer.h"
#include "wt_http.h"
#include "wt_util.h"

#define MODEL_ID	"stories260K"
#define CLIENTS		64

static const char *model, *tokpath;
static struct wafer_tokenizer *tok;
static struct wafer_ctx *ref_ctx;

static const char *const prompts[] = {
	"", "Once", "Once upon a time", "The cat sat on the mat and",
	"Lily and Ben went to the park. They saw a big dog. The dog was",
	"One day, a little girl named Sue found a shiny red ball in the garden. She wanted to "
	"play with it, but her mom said it was time for lunch. Sue was sad. After lunch, she "
	"ran back to the garden, but the ball was gone. She looked under the tree and behind "
	"the flowers. Then she heard a bark. A small puppy had the ball in its mouth, and",
};
#define N_PROMPTS	(sizeof(prompts) / sizeof(prompts[0]))
#define N_FUZZ_SEEDS	4

struct piece_buf {
	char text[16384];
};

static int collect(void *arg, int token, const char *piece, int from_prompt)
{
	struct piece_buf *b = arg;

	(void)token;
	if (!from_prompt && wafer_piece_printable(piece) &&
	    strlen(b->text) + strlen(piece) < sizeof(b->text))
		strcat(b->text, piece);
	return 0;
}

/* The text wafer_generate() gives for @prompt and @max_new tokens, alone. */
static int reference(const char *prompt, unsigned int max_new, float temp, uint64_t seed,
		     char *out, size_t n, unsigned int *np)
{
	int toks[1024];
	struct wafer_gen_opts go = { .temperature = temp, .top_p = 1.0f, .seed = seed,
				     .on_piece = collect };
	struct piece_buf *b = calloc(1, sizeof(*b));
	int k = wafer_tokenizer_encode(tok, prompt, 1, 0, toks, 1024), ret;

	if (!b || k < 1)
		return -1;
	*np = (unsigned int)k;
	go.steps = (unsigned int)k + max_new - 1;
	go.arg = b;
	ret = wafer_generate(ref_ctx, tok, prompt, &go, NULL);
	snprintf(out, n, "%s", b->text);
	free(b);
	return ret;
}

/* A JSON string of @s (escaped by json-c); malloc'd. */
static char *jstr(const char *s)
{
	struct json_object *o = json_object_new_string(s);
	char *r = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));

	json_object_put(o);
	return r;
}

static char *body_for(int chat, const char *prompt, unsigned int max_new, int stream,
		      const char *extra)
{
	char *p = jstr(prompt), *b = malloc(strlen(p) + 512);

	if (chat)
		sprintf(b, "{\"model\":\"%s\",\"messages\":[{\"role\":\"user\",\"content\":%s}],"
			"\"max_tokens\":%u,\"temperature\":0,\"stream\":%s%s}", MODEL_ID, p,
			max_new, stream ? "true" : "false", extra ? extra : "");
	else
		sprintf(b, "{\"model\":\"%s\",\"prompt\":%s,\"max_tokens\":%u,\"temperature\":0,"
			"\"stream\":%s%s}", MODEL_ID, p, max_new, stream ? "true" : "false",
			extra ? extra : "");
	free(p);
	return b;
}

/**
 * struct answer - a completion's text, however it came
 * @text: the text
 * @finish: finish_reason
 * @prompt_tokens: usage
 * @completion_tokens: usage
 * @ok: the shape was right (streams: events in order, then [DONE])
 */
struct answer {
	char text[16384];
	char finish[16];
	int prompt_tokens;
	int completion_tokens;
	int ok;
};

static const char *choice_text(struct json_object *c, int chat)
{
	struct json_object *m, *t;

	if (chat)
		return (json_object_object_get_ex(c, "message", &m) ||
			json_object_object_get_ex(c, "delta", &m)) &&
			json_object_object_get_ex(m, "content", &t) ? json_object_get_string(t) : "";
	return json_object_object_get_ex(c, "text", &t) ? json_object_get_string(t) : NULL;
}

static void take_usage(struct json_object *o, struct answer *a)
{
	struct json_object *u, *v;

	if (!json_object_object_get_ex(o, "usage", &u) || !u)
		return;
	if (json_object_object_get_ex(u, "prompt_tokens", &v))
		a->prompt_tokens = json_object_get_int(v);
	if (json_object_object_get_ex(u, "completion_tokens", &v))
		a->completion_tokens = json_object_get_int(v);
}

/* One choice object's text and finish_reason into @a; 0 or -1. */
static int take_choice(struct json_object *o, int chat, struct answer *a)
{
	struct json_object *ch, *c, *f;
	const char *t;

	if (!json_object_object_get_ex(o, "choices", &ch) ||
	    !json_object_is_type(ch, json_type_array))
		return -1;
	if (!json_object_array_length(ch))
		return 0;	/* the usage chunk */
	c = json_object_array_get_idx(ch, 0);
	t = choice_text(c, chat);
	if (!t)
		return -1;
	if (strlen(a->text) + strlen(t) < sizeof(a->text))
		strcat(a->text, t);
	if (json_object_object_get_ex(c, "finish_reason", &f) && f)
		snprintf(a->finish, sizeof(a->finish), "%s", json_object_get_string(f));
	return 0;
}

static void parse_answer(const struct wt_http *r, int chat, int stream, struct answer *a)
{
	memset(a, 0, sizeof(*a));
	if (r->status != 200)
		return;
	if (!stream) {
		struct json_object *o = json_tokener_parse(r->body), *v;

		a->ok = o && !take_choice(o, chat, a) &&
			json_object_object_get_ex(o, "object", &v) &&
			!strcmp(json_object_get_string(v), chat ? "chat.completion" :
				"text_completion");
		if (o)
			take_usage(o, a);
		json_object_put(o);
		return;
	}
	a->ok = 1;
	{
		char *copy = strdup(r->body), *ev = copy, *next;
		int done = 0;

		for (; ev && *ev; ev = next) {
			struct json_object *o;

			next = strstr(ev, "\n\n");
			if (next) {
				*next = '\0';
				next += 2;
			}
			if (strncmp(ev, "data: ", 6) || done) {
				a->ok = 0;
				break;
			}
			if (!strcmp(ev + 6, "[DONE]")) {
				done = 1;
				continue;
			}
			o = json_tokener_parse(ev + 6);
			if (!o || take_choice(o, chat, a))
				a->ok = 0;
			if (o)
				take_usage(o, a);
			json_object_put(o);
		}
		a->ok &= done;
		free(copy);
	}
}

/* ---------------------------------------------------------------- clients */

/**
 * struct client - one concurrent request and its expected text
 * @port: server
 * @body: request
 * @chat: chat endpoint
 * @stream: streaming
 * @r: answer
 */
struct client {
	unsigned int port;
	char *body;
	int chat;
	int stream;
	struct wt_http r;
};

static void *client_main(void *arg)
{
	struct client *c = arg;

	wt_http(c->port, "POST", c->chat ? "/v1/chat/completions" : "/v1/completions", c->body,
		0, &c->r);
	return NULL;
}

static int ask(unsigned int port, int chat, const char *body, int stream, struct answer *a)
{
	struct wt_http r;
	int st;

	wt_http(port, "POST", chat ? "/v1/chat/completions" : "/v1/completions", body, 0, &r);
	parse_answer(&r, chat, stream, a);
	st = (int)r.status;
	wt_http_free(&r);
	return st;
}

/* ------------------------------------------------------------------ parts */

static void endpoints(const struct wt_server *s)
{
	struct wt_http r;

	wt_http(s->port, "GET", "/health", NULL, 0, &r);
	wt_ok(r.status == 200 && strstr(r.body, "\"ok\""), "GET /health: 200 ok");
	wt_http_free(&r);
	wt_http(s->port, "GET", "/v1/models", NULL, 0, &r);
	wt_ok(r.status == 200 && strstr(r.body, "\"id\":\"" MODEL_ID "\"") &&
	      strstr(r.body, "\"object\":\"list\""), "GET /v1/models lists " MODEL_ID);
	wt_http_free(&r);
	wt_http(s->port, "GET", "/metrics", NULL, 0, &r);
	wt_ok(r.status == 200 && strstr(r.body, "# TYPE wafer_serve_time_to_first_token_seconds "
					 "histogram") &&
	      strstr(r.body, "wafer_serve_queue_depth 0") &&
	      strstr(r.body, "wafer_serve_slots_in_use 0") &&
	      strstr(r.body, "wafer_serve_device_modelled_seconds_total"),
	      "GET /metrics: Prometheus text with the histograms and gauges");
	wt_http_free(&r);
}

/* Each prompt alone: completions and chat, streamed and not, against wafer_generate(). */
static void alone(const struct wt_server *s)
{
	static char ref[16384];
	unsigned int i, np, m;
	int chat, stream, st;
	struct answer a;
	char *b;

	for (i = 0; i < N_PROMPTS; i++) {
		m = 24 + 40 * i;
		if (reference(prompts[i], m, 0, 0, ref, sizeof(ref), &np)) {
			wt_ok(0, "reference for prompt %u", i);
			continue;
		}
		for (chat = 0; chat < 2; chat++)
			for (stream = 0; stream < 2; stream++) {
				b = body_for(chat, prompts[i], m, stream,
					     stream ? ",\"stream_options\":{\"include_usage\":true}" :
					     NULL);
				st = ask(s->port, chat, b, stream, &a);
				free(b);
				if (!wt_ok(st == 200 && a.ok && !strcmp(a.text, ref) &&
					   a.prompt_tokens == (int)np && a.completion_tokens > 0 &&
					   a.completion_tokens <= (int)m &&
					   (a.completion_tokens == (int)m ?
					    !strcmp(a.finish, "length") : !strcmp(a.finish, "stop")),
					   "%s %s, prompt of %u tokens, max_tokens %u: wafer_generate's "
					   "text, usage and finish_reason", chat ? "chat" : "completion",
					   stream ? "streamed" : "whole", np, m))
					wt_diag("status %d ok %d finish '%s' usage %d/%d\n#  got '%s'\n"
						"# want '%s'", st, a.ok, a.finish, a.prompt_tokens,
						a.completion_tokens, a.text, ref);
			}
	}
}

static int jeq(struct json_object *o, const char *path1, const char *key, const char *want)
{
	struct json_object *a, *b;

	return json_object_object_get_ex(o, path1, &a) && json_object_object_get_ex(a, key, &b) &&
		b && !strcmp(json_object_get_string(b), want);
}

/* The openai npm client (tests/unit/serve_openai.cjs under node). */
static void openai_client(const struct wt_server *s)
{
	const char *cache = getenv("WAFER_CACHE"), *xdg = getenv("XDG_CACHE_HOME");
	static char ref[16384], out[65536], cmd[1024], npm[512];
	struct json_object *o, *v, *u;
	unsigned int np;
	size_t n = 0, r;
	FILE *p;
	int rc, ok;

	if (cache)
		snprintf(npm, sizeof(npm), "%s/npm", cache);
	else if (xdg)
		snprintf(npm, sizeof(npm), "%s/wafer/npm", xdg);
	else
		snprintf(npm, sizeof(npm), "%s/.cache/wafer/npm", getenv("HOME"));
	reference("Once upon a time", 40, 0, 0, ref, sizeof(ref), &np);
	snprintf(cmd, sizeof(cmd), "WAFER_NPM='%s' node tests/unit/serve_openai.cjs %u "
		 "'Once upon a time' 40 2>&1", npm, s->port);
	p = popen(cmd, "r");
	while (p && (r = fread(out + n, 1, sizeof(out) - 1 - n, p)) > 0)
		n += r;
	out[n] = '\0';
	rc = p ? pclose(p) : -1;
	o = json_tokener_parse(out);
	if (!wt_ok(rc == 0 && o, "the openai npm client (node) ran against the server")) {
		wt_diag("%s: %.500s", cmd, out);
		json_object_put(o);
		return;
	}
	wt_ok(json_object_object_get_ex(o, "models", &v) &&
	      strstr(json_object_to_json_string(v), "\"" MODEL_ID "\"") != NULL,
	      "openai client: models.list() has " MODEL_ID);
	ok = jeq(o, "completion", "text", ref) && jeq(o, "completion", "finish", "length") &&
		json_object_object_get_ex(o, "completion", &v) &&
		json_object_object_get_ex(v, "usage", &u) &&
		json_object_object_get_ex(u, "prompt_tokens", &v) &&
		json_object_get_int(v) == (int)np;
	wt_ok(ok, "openai client: completions.create() gives wafer_generate's text, usage");
	wt_ok(jeq(o, "completion_stream", "text", ref) &&
	      jeq(o, "completion_stream", "finish", "length") &&
	      json_object_object_get_ex(o, "completion_stream", &v) &&
	      json_object_object_get_ex(v, "usage", &u) && u,
	      "openai client: the same streamed, with the usage chunk");
	wt_ok(jeq(o, "chat", "text", ref) && jeq(o, "chat", "role", "assistant"),
	      "openai client: chat.completions.create() gives the same text as the assistant");
	wt_ok(jeq(o, "chat_stream", "text", ref) && jeq(o, "chat_stream", "role", "assistant") &&
	      jeq(o, "chat_stream", "finish", "length"), "openai client: chat streamed, the same");
	wt_ok(jeq(o, "error", "status", "404") && jeq(o, "error", "code", "model_not_found") &&
	      jeq(o, "error", "param", "model"),
	      "openai client: an unknown model raises its APIError 404 model_not_found");
	json_object_put(o);
}

#define C	"/v1/completions"
#define CH	"/v1/chat/completions"
#define M	"\"model\":\"" MODEL_ID "\""

static int error_object(const char *body, const char *param);

/* POST @path @body; the answer parsed (NULL unless 200). */
static struct json_object *post_json(unsigned int port, const char *path, const char *body)
{
	struct json_object *o = NULL;
	struct wt_http r;

	wt_http(port, "POST", path, body, 0, &r);
	if (r.status == 200)
		o = json_tokener_parse(r.body);
	else
		wt_diag("%s -> %ld %.300s", path, r.status, r.body);
	wt_http_free(&r);
	return o;
}

/* o.choices[i] member @key (text, logprobs, ...). */
static struct json_object *choice_get(struct json_object *o, unsigned int i, const char *key)
{
	struct json_object *c, *v = NULL;

	if (json_object_object_get_ex(o, "choices", &c) &&
	    (c = json_object_array_get_idx(c, i)))
		json_object_object_get_ex(c, key, &v);
	return v;
}

static const char *choice_str(struct json_object *o, unsigned int i)
{
	struct json_object *v = choice_get(o, i, "text");

	return v ? json_object_get_string(v) : "";
}

static unsigned int n_choices(struct json_object *o)
{
	struct json_object *c;

	return json_object_object_get_ex(o, "choices", &c) ?
		(unsigned int)json_object_array_length(c) : 0;
}

/* n: each choice equals the request alone, greedy and seeded (choice i: seed + i). */
static void choices_n(const struct wt_server *s)
{
	static char ref[16384], body[512];
	struct json_object *o, *one;
	unsigned int np, i, same = 0;

	reference("Once upon a time", 24, 0, 0, ref, sizeof(ref), &np);
	o = post_json(s->port, C, "{" M ",\"prompt\":\"Once upon a time\",\"max_tokens\":24,"
		      "\"temperature\":0,\"n\":3}");
	for (i = 0; o && i < n_choices(o); i++)
		same += !strcmp(choice_str(o, i), ref);
	wt_ok(o && n_choices(o) == 3 && same == 3,
	      "n 3, greedy: three choices, each wafer_generate's text alone (%u of 3)", same);
	json_object_put(o);
	o = post_json(s->port, C, "{" M ",\"prompt\":\"Once\",\"max_tokens\":24,"
		      "\"temperature\":0.9,\"seed\":77,\"n\":4}");
	same = 0;
	for (i = 0; o && i < 4; i++) {
		snprintf(body, sizeof(body), "{" M ",\"prompt\":\"Once\",\"max_tokens\":24,"
			 "\"temperature\":0.9,\"seed\":%u}", 77 + i);
		one = post_json(s->port, C, body);
		same += one && !strcmp(choice_str(o, i), choice_str(one, 0));
		json_object_put(one);
	}
	wt_ok(o && n_choices(o) == 4 && same == 4, "n 4, sampled, seed 77: choice i is the "
	      "single request with seed 77 + i (%u of 4)", same);
	wt_ok(o && strcmp(choice_str(o, 0), choice_str(o, 1)),
	      "and the sampled choices differ from each other");
	json_object_put(o);
}

/* A logprobs object: token_logprobs <= 0, the top-k's probabilities summing to 1. */
static void logprobs(const struct wt_server *s)
{
	static char ref[16384], joined[16384];
	struct json_object *o, *lp, *toks, *tlp, *top, *t, *c, *e;
	unsigned int np, i, n = 0, best = 0, bad = 0;
	double sum_worst = 1;

	reference("Once upon a time", 16, 0, 0, ref, sizeof(ref), &np);
	o = post_json(s->port, C, "{" M ",\"prompt\":\"Once upon a time\",\"max_tokens\":16,"
		      "\"temperature\":0,\"logprobs\":32}");
	lp = o ? choice_get(o, 0, "logprobs") : NULL;
	joined[0] = '\0';
	if (lp && json_object_object_get_ex(lp, "tokens", &toks) &&
	    json_object_object_get_ex(lp, "token_logprobs", &tlp) &&
	    json_object_object_get_ex(lp, "top_logprobs", &top)) {
		n = (unsigned int)json_object_array_length(toks);
		for (i = 0; i < n; i++) {
			double v = json_object_get_double(json_object_array_get_idx(tlp, i)),
			       max = -1e300, sum = 0;

			strcat(joined, json_object_get_string(json_object_array_get_idx(toks, i)));
			t = json_object_array_get_idx(top, i);
			json_object_object_foreach(t, k, x) {
				(void)k;
				sum += exp(json_object_get_double(x));
				if (json_object_get_double(x) > max)
					max = json_object_get_double(x);
			}
			best += v == max;
			bad += !(v <= 0);
			if (fabs(sum - 1) > fabs(sum_worst - 1))
				sum_worst = sum;
		}
	}
	wt_ok(n == 16 && !strcmp(joined, ref) && !strcmp(choice_str(o, 0), ref),
	      "logprobs 32, greedy: 16 tokens whose text is the answer, wafer_generate's (%u)", n);
	wt_ok(n && best == n && !bad, "each greedy token is its top-k's best, log-probability "
	      "<= 0 (%u of %u)", best, n);
	wt_ok(n && fabs(sum_worst - 1) < 1e-3, "the top-k's probabilities sum to 1, the softmax "
	      "over the device's k (worst %.6f; fewer if tokens share a text)", sum_worst);
	json_object_put(o);
	o = post_json(s->port, CH, "{" M ",\"messages\":[{\"role\":\"user\",\"content\":"
		      "\"Once upon a time\"}],\"max_tokens\":16,\"temperature\":0,"
		      "\"logprobs\":true,\"top_logprobs\":3}");
	lp = o ? choice_get(o, 0, "logprobs") : NULL;
	n = 0;
	if (lp && json_object_object_get_ex(lp, "content", &c)) {
		for (i = 0; i < json_object_array_length(c); i++) {
			e = json_object_array_get_idx(c, i);
			n += json_object_object_get_ex(e, "token", NULL) &&
				json_object_object_get_ex(e, "bytes", NULL) &&
				json_object_object_get_ex(e, "logprob", NULL) &&
				json_object_object_get_ex(e, "top_logprobs", &t) &&
				json_object_array_length(t) == 3;
		}
	}
	wt_ok(n == 16, "chat logprobs with top_logprobs 3: 16 entries of token, logprob, bytes "
	      "and 3 alternatives (%u)", n);
	json_object_put(o);
}

/* echo; echo with logprobs and max_tokens 0 scores the prompt. */
static void echo(const struct wt_server *s)
{
	static char ref[16384], want[16384 + 32];
	struct json_object *o, *lp, *toks, *tlp;
	unsigned int np, n = 0, nulls = 0, i;
	double scored, gen;
	struct answer an;
	int ids[64], st;
	char *b;

	reference("Once upon a time", 8, 0, 0, ref, sizeof(ref), &np);
	snprintf(want, sizeof(want), "Once upon a time%s", ref);
	o = post_json(s->port, C, "{" M ",\"prompt\":\"Once upon a time\",\"max_tokens\":8,"
		      "\"temperature\":0,\"echo\":true}");
	wt_ok(o && !strcmp(choice_str(o, 0), want), "echo: the prompt, then the answer");
	json_object_put(o);
	b = body_for(0, "Once upon a time", 8, 1, ",\"echo\":true,\"logprobs\":2");
	st = ask(s->port, 0, b, 1, &an);
	free(b);
	wt_ok(st == 200 && an.ok && !strcmp(an.text, want),
	      "echo with logprobs, streamed: the same text");
	o = post_json(s->port, C, "{" M ",\"prompt\":\"Once upon a time\",\"max_tokens\":0,"
		      "\"echo\":true,\"logprobs\":1,\"n\":2}");
	for (i = 0, n = 0; o && i < 2; i++) {
		lp = choice_get(o, i, "logprobs");
		n += lp && json_object_object_get_ex(lp, "tokens", &toks) &&
			json_object_array_length(toks) == 4;
	}
	wt_ok(n == 2, "echo, logprobs, n 2: each choice has the prompt's scores (%u of 2)", n);
	json_object_put(o);
	n = 0;
	o = post_json(s->port, C, "{" M ",\"prompt\":\"Once upon a time\",\"max_tokens\":0,"
		      "\"echo\":true,\"logprobs\":1}");
	lp = o ? choice_get(o, 0, "logprobs") : NULL;
	if (lp && json_object_object_get_ex(lp, "tokens", &toks) &&
	    json_object_object_get_ex(lp, "token_logprobs", &tlp)) {
		n = (unsigned int)json_object_array_length(toks);
		for (i = 0; i < n; i++)
			nulls += !json_object_array_get_idx(tlp, i);
	}
	np = (unsigned int)wafer_tokenizer_encode(tok, "Once upon a time", 1, 0, ids, 64);
	wt_ok(o && !strcmp(choice_str(o, 0), "Once upon a time") && n == np - 1,
	      "echo, logprobs, max_tokens 0: the prompt scored, a log-probability for each of "
	      "its %u tokens after BOS (%u, %u outside the top-k), nothing generated", np - 1, n,
	      nulls);
	json_object_put(o);
	/* the score of " upon" after "Once" is what generating it after "Once" gives */
	o = post_json(s->port, C, "{" M ",\"prompt\":\"Once upon\",\"max_tokens\":0,"
		      "\"echo\":true,\"logprobs\":0}");
	lp = o ? choice_get(o, 0, "logprobs") : NULL;
	scored = lp && json_object_object_get_ex(lp, "token_logprobs", &tlp) &&
		json_object_array_length(tlp) == 2 ?
		json_object_get_double(json_object_array_get_idx(tlp, 1)) : 1;
	json_object_put(o);
	o = post_json(s->port, C, "{" M ",\"prompt\":\"Once\",\"max_tokens\":1,"
		      "\"temperature\":0,\"logprobs\":0}");
	lp = o ? choice_get(o, 0, "logprobs") : NULL;
	gen = lp && json_object_object_get_ex(lp, "token_logprobs", &tlp) &&
		json_object_array_length(tlp) == 1 ?
		json_object_get_double(json_object_array_get_idx(tlp, 0)) : 2;
	wt_ok(!strcmp(choice_str(o, 0), " upon") && scored == gen && gen < 0,
	      "the prompt's score of \" upon\" after \"Once\" is the log-probability of "
	      "generating it there (%.6f, %.6f)", scored, gen);
	json_object_put(o);
}

/* Penalties 0 change nothing; 2 change the greedy text. */
static void penalties(const struct wt_server *s)
{
	static char ref[16384];
	struct json_object *o;
	unsigned int np;

	reference("Once upon a time", 64, 0, 0, ref, sizeof(ref), &np);
	o = post_json(s->port, C, "{" M ",\"prompt\":\"Once upon a time\",\"max_tokens\":64,"
		      "\"temperature\":0,\"presence_penalty\":0,\"frequency_penalty\":0}");
	wt_ok(o && !strcmp(choice_str(o, 0), ref), "penalties 0: wafer_generate's text");
	json_object_put(o);
	o = post_json(s->port, C, "{" M ",\"prompt\":\"Once upon a time\",\"max_tokens\":64,"
		      "\"temperature\":0,\"frequency_penalty\":2}");
	wt_ok(o && strcmp(choice_str(o, 0), ref), "frequency_penalty 2: another text");
	json_object_put(o);
	o = post_json(s->port, C, "{" M ",\"prompt\":\"Once upon a time\",\"max_tokens\":64,"
		      "\"temperature\":0,\"presence_penalty\":2}");
	wt_ok(o && strcmp(choice_str(o, 0), ref), "presence_penalty 2: another text");
	json_object_put(o);
}

/* GET /v1/models/{id}, /tokenize, /detokenize, chat templates, max_tokens 1e9's message. */
static void surface(const struct wt_server *s)
{
	struct json_object *o, *v;
	struct wt_http r;
	int ids[64], n, i, same = 0;
	char body[512];

	wt_http(s->port, "GET", "/v1/models/" MODEL_ID, NULL, 0, &r);
	wt_ok(r.status == 200 && strstr(r.body, "\"id\":\"" MODEL_ID "\"") &&
	      strstr(r.body, "\"object\":\"model\""), "GET /v1/models/" MODEL_ID ": the model");
	wt_http_free(&r);
	wt_http(s->port, "GET", "/v1/models/gpt-4", NULL, 0, &r);
	wt_ok(r.status == 404 && error_object(r.body, "model"), "GET /v1/models/gpt-4: 404");
	wt_http_free(&r);
	n = wafer_tokenizer_encode(tok, "Once upon a time", 0, 0, ids, 64);
	o = post_json(s->port, "/tokenize", "{\"content\":\"Once upon a time\"}");
	if (o && json_object_object_get_ex(o, "tokens", &v) &&
	    (int)json_object_array_length(v) == n)
		for (i = 0; i < n; i++)
			same += json_object_get_int(json_object_array_get_idx(v, i)) == ids[i];
	wt_ok(n > 0 && same == n, "POST /tokenize: the tokenizer's ids (%d of %d)", same, n);
	json_object_put(o);
	snprintf(body, sizeof(body), "{\"tokens\":[");
	for (i = 0; i < n; i++)
		snprintf(body + strlen(body), sizeof(body) - strlen(body), "%s%d", i ? "," : "",
			 ids[i]);
	strcat(body, "]}");
	o = post_json(s->port, "/detokenize", body);
	wt_ok(o && json_object_object_get_ex(o, "content", &v) &&
	      !strcmp(json_object_get_string(v), "Once upon a time"),
	      "POST /detokenize: the text back");
	json_object_put(o);
	wt_http(s->port, "POST", "/detokenize", "{\"tokens\":[1,99999]}", 0, &r);
	wt_ok(r.status == 400 && error_object(r.body, "tokens[1]"),
	      "POST /detokenize of an id past the vocabulary: 400 on tokens[1]");
	wt_http_free(&r);
	/* chatml: the prompt is the rendered template, so its tokens are counted */
	n = wafer_tokenizer_encode(tok, "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
				   1, 0, ids, 64);
	o = post_json(s->port, CH, "{" M ",\"messages\":[{\"role\":\"user\",\"content\":"
		      "\"hi\"}],\"max_tokens\":2,\"chat_template\":\"chatml\"}");
	wt_ok(o && json_object_object_get_ex(o, "usage", &v) &&
	      json_object_object_get_ex(v, "prompt_tokens", &v) && json_object_get_int(v) == n,
	      "chat_template chatml: the prompt is the rendered template (%d tokens)", n);
	json_object_put(o);
	wt_http(s->port, "POST", C, "{" M ",\"prompt\":\"a\",\"max_tokens\":1e9}", 0, &r);
	wt_ok(r.status == 400 && strstr(r.body, "too large") && strstr(r.body, "512"),
	      "max_tokens 1e9: 400 saying it is too large, naming the limit 512");
	wt_http_free(&r);
}

static void stops(const struct wt_server *s)
{
	static char ref[16384];
	const char *stop = " Lily";
	unsigned int np;
	struct answer a;
	char *b, want[16384], *hit;
	int stream;

	reference("Once upon a time", 60, 0, 0, ref, sizeof(ref), &np);
	hit = strstr(ref, stop);
	if (!wt_ok(hit != NULL, "the reference text holds the stop string '%s'", stop))
		return;
	snprintf(want, sizeof(want), "%.*s", (int)(hit - ref), ref);
	for (stream = 0; stream < 2; stream++) {
		b = body_for(0, "Once upon a time", 60, stream, ",\"stop\":[\"zzz\",\" Lily\"]");
		ask(s->port, 0, b, stream, &a);
		free(b);
		wt_ok(a.ok && !strcmp(a.text, want) && !strcmp(a.finish, "stop"),
		      "stop [\"zzz\", \" Lily\"] %s: the text ends before it, finish_reason stop",
		      stream ? "streamed (nothing of it was sent)" : "whole");
	}
}

/**
 * struct bad_case - one bad request
 * @name: what is wrong
 * @method: HTTP method
 * @path: URL path
 * @body: body (NULL: none)
 * @status: the status it must get
 * @param: the error's param (NULL: not checked)
 */
struct bad_case {
	const char *name;
	const char *method;
	const char *path;
	const char *body;
	int status;
	const char *param;
};


static const struct bad_case bad_cases[] = {
	{ "malformed JSON", "POST", C, "{\"model\":", 400, NULL },
	{ "JSON syntax error", "POST", C, "{" M ",}", 400, NULL },
	{ "data after the JSON", "POST", C, "{" M "} x", 400, NULL },
	{ "empty body", "POST", C, "", 400, NULL },
	{ "body is an array", "POST", C, "[1,2]", 400, NULL },
	{ "body is null", "POST", C, "null", 400, NULL },
	{ "non-UTF-8 string", "POST", C, "{" M ",\"prompt\":\"caf\xe9\"}", 400, NULL },
	{ "nesting 64 deep", "POST", C,
	  "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
	  "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", 400, NULL },
	{ "unknown field", "POST", C, "{" M ",\"prompt\":\"a\",\"frobnicate\":1}", 400,
	  "frobnicate" },
	{ "model missing", "POST", C, "{\"prompt\":\"a\"}", 400, "model" },
	{ "model not a string", "POST", C, "{\"model\":7,\"prompt\":\"a\"}", 400, "model" },
	{ "unknown model", "POST", C, "{\"model\":\"gpt-9\",\"prompt\":\"a\"}", 404, "model" },
	{ "prompt a number", "POST", C, "{" M ",\"prompt\":12}", 400, "prompt" },
	{ "prompt of two strings", "POST", C, "{" M ",\"prompt\":[\"a\",\"b\"]}", 400, "prompt" },
	{ "prompt with NUL", "POST", C, "{" M ",\"prompt\":\"a\\u0000b\"}", 400, "prompt" },
	{ "max_tokens a string", "POST", C, "{" M ",\"max_tokens\":\"5\"}", 400, "max_tokens" },
	{ "max_tokens 0", "POST", C, "{" M ",\"max_tokens\":0}", 400, "max_tokens" },
	{ "max_tokens negative", "POST", C, "{" M ",\"max_tokens\":-3}", 400, "max_tokens" },
	{ "max_tokens 1.5", "POST", C, "{" M ",\"max_tokens\":1.5}", 400, "max_tokens" },
	{ "max_tokens past the context", "POST", C, "{" M ",\"prompt\":\"a\",\"max_tokens\":512}",
	  400, "max_tokens" },
	{ "temperature 3", "POST", C, "{" M ",\"temperature\":3}", 400, "temperature" },
	{ "temperature a string", "POST", C, "{" M ",\"temperature\":\"hot\"}", 400,
	  "temperature" },
	{ "top_p 0", "POST", C, "{" M ",\"top_p\":0}", 400, "top_p" },
	{ "top_p 1.5", "POST", C, "{" M ",\"top_p\":1.5}", 400, "top_p" },
	{ "seed 1.5", "POST", C, "{" M ",\"seed\":1.5}", 400, "seed" },
	{ "stream a string", "POST", C, "{" M ",\"stream\":\"yes\"}", 400, "stream" },
	{ "stream_options without stream", "POST", C,
	  "{" M ",\"stream_options\":{\"include_usage\":true}}", 400, "stream_options" },
	{ "stream_options unknown key", "POST", C,
	  "{" M ",\"stream\":true,\"stream_options\":{\"x\":1}}", 400, "stream_options" },
	{ "n 9, above the 8 slots", "POST", C, "{" M ",\"n\":9}", 400, "n" },
	{ "n 0", "POST", C, "{" M ",\"n\":0}", 400, "n" },
	{ "logprobs 33, above the device's top-k", "POST", C, "{" M ",\"logprobs\":33}", 400,
	  "logprobs" },
	{ "top_logprobs 33", "POST", CH, "{" M ",\"logprobs\":true,\"top_logprobs\":33,"
	  "\"messages\":[{\"role\":\"user\",\"content\":\"a\"}]}", 400, "top_logprobs" },
	{ "top_logprobs without logprobs", "POST", CH, "{" M ",\"top_logprobs\":2,"
	  "\"messages\":[{\"role\":\"user\",\"content\":\"a\"}]}", 400, "top_logprobs" },
	{ "tools", "POST", CH, "{" M ",\"tools\":[],\"messages\":[{\"role\":\"user\",\"content\":"
	  "\"a\"}]}", 400, "tools" },
	{ "response_format", "POST", CH, "{" M ",\"response_format\":{\"type\":\"json_object\"},"
	  "\"messages\":[{\"role\":\"user\",\"content\":\"a\"}]}", 400, "response_format" },
	{ "a chat_template that does not parse", "POST", CH, "{" M ",\"chat_template\":"
	  "\"{role}: {nope}\",\"messages\":[{\"role\":\"user\",\"content\":\"a\"}]}", 400,
	  "chat_template" },
	{ "max_tokens 1e9", "POST", C, "{" M ",\"prompt\":\"a\",\"max_tokens\":1e9}", 400,
	  "max_tokens" },
	{ "presence_penalty 3", "POST", C, "{" M ",\"presence_penalty\":3}", 400,
	  "presence_penalty" },
	{ "echo on chat", "POST", CH, "{" M ",\"echo\":true,\"messages\":[{\"role\":\"user\","
	  "\"content\":\"a\"}]}", 400, "echo" },
	{ "max_tokens 0 without echo", "POST", C, "{" M ",\"prompt\":\"a\",\"max_tokens\":0}", 400,
	  "max_tokens" },
	{ "stop a number", "POST", C, "{" M ",\"stop\":1}", 400, "stop" },
	{ "stop empty", "POST", C, "{" M ",\"stop\":\"\"}", 400, "stop" },
	{ "five stops", "POST", C, "{" M ",\"stop\":[\"a\",\"b\",\"c\",\"d\",\"e\"]}", 400, "stop" },
	{ "user a number", "POST", C, "{" M ",\"user\":1}", 400, "user" },
	{ "chat without messages", "POST", CH, "{" M "}", 400, "messages" },
	{ "chat messages not an array", "POST", CH, "{" M ",\"messages\":\"hi\"}", 400,
	  "messages" },
	{ "chat messages empty", "POST", CH, "{" M ",\"messages\":[]}", 400, "messages" },
	{ "chat role unknown", "POST", CH,
	  "{" M ",\"messages\":[{\"role\":\"robot\",\"content\":\"a\"}]}", 400,
	  "messages[0].role" },
	{ "chat content a number", "POST", CH,
	  "{" M ",\"messages\":[{\"role\":\"user\",\"content\":5}]}", 400,
	  "messages[0].content" },
	{ "chat message with an unknown field", "POST", CH,
	  "{" M ",\"messages\":[{\"role\":\"user\",\"content\":\"a\",\"x\":1}]}", 400,
	  "messages[0]" },
	{ "chat with a prompt field", "POST", CH,
	  "{" M ",\"prompt\":\"a\",\"messages\":[{\"role\":\"user\",\"content\":\"a\"}]}", 400,
	  "prompt" },
	{ "GET on completions", "GET", C, NULL, 405, NULL },
	{ "POST on models", "POST", "/v1/models", "{}", 405, NULL },
	{ "unknown path", "GET", "/v1/nothing", NULL, 404, NULL },
};

/* The body is {"error": {"message": STRING, "type": STRING, "param": ..., "code": ...}}. */
static int error_object(const char *body, const char *param)
{
	struct json_object *o = json_tokener_parse(body), *e, *m, *t, *p, *c;
	int ok = o && json_object_object_get_ex(o, "error", &e) &&
		json_object_object_get_ex(e, "message", &m) &&
		json_object_is_type(m, json_type_string) &&
		json_object_object_get_ex(e, "type", &t) &&
		json_object_is_type(t, json_type_string) &&
		json_object_object_get_ex(e, "param", &p) &&
		json_object_object_get_ex(e, "code", &c) &&
		(!param || (p && !strcmp(json_object_get_string(p), param)));

	json_object_put(o);
	return ok;
}

static void bad_input(const struct wt_server *s)
{
	unsigned int i;
	struct wt_http r;
	char *big, *over;

	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *b = &bad_cases[i];

		wt_http(s->port, b->method, b->path, b->body, 0, &r);
		if (!wt_ok(r.status == b->status && error_object(r.body, b->param),
			   "bad input: %s -> %d%s%s", b->name, b->status,
			   b->param ? ", param " : "", b->param ? b->param : ""))
			wt_diag("got %ld: %s", r.status, r.body);
		wt_http_free(&r);
	}
	/* A prompt longer than the context: ~700 tokens of " the". */
	big = malloc(8192);
	over = malloc(8192 + 64);
	big[0] = '\0';
	for (i = 0; i < 1400; i++)
		strcat(big, " the");
	sprintf(over, "{" M ",\"prompt\":\"%.2800s\"}", big);
	wt_http(s->port, "POST", C, over, 0, &r);
	wt_ok(r.status == 400 && error_object(r.body, "prompt") &&
	      strstr(r.body, "context_length_exceeded"),
	      "bad input: a prompt longer than the context -> 400 context_length_exceeded");
	wt_http_free(&r);
	/* Above --max-body 4096. */
	sprintf(over, "{" M ",\"prompt\":\"%s\"}", big);
	wt_http(s->port, "POST", C, over, 0, &r);
	if (!wt_ok(r.status == 413 && error_object(r.body, NULL),
		   "bad input: a body of %zu bytes, above --max-body 4096 -> 413", strlen(over)))
		wt_diag("got %ld: %s", r.status, r.body);
	wt_http_free(&r);
	free(big);
	free(over);
	wt_http(s->port, "GET", "/health", NULL, 0, &r);
	wt_ok(r.status == 200, "the server still answers after the bad input");
	wt_http_free(&r);
}

/*
 * Every field the server reads, null and of the wrong type: each a 400
 * whose param and message name the field, or (an optional top-level
 * parameter, nullable as in OpenAI's API) null taken as its default.
 */
#define B1	"{" M ",\"prompt\":\"a\",\"max_tokens\":1"
#define MSG(x)	"{" M ",\"max_tokens\":1,\"messages\":[" x "]}"
#define PART(x)	MSG("{\"role\":\"user\",\"content\":[" x "]}")

static const struct bad_case typed_cases[] = {
	{ "model null", "POST", C, "{\"model\":null,\"prompt\":\"a\"}", 400, "model" },
	{ "model an object", "POST", C, "{\"model\":{},\"prompt\":\"a\"}", 400, "model" },
	{ "model an array", "POST", CH, "{\"model\":[],\"messages\":[]}", 400, "model" },
	{ "prompt null", "POST", C, "{" M ",\"prompt\":null}", 400, "prompt" },
	{ "prompt an object", "POST", C, "{" M ",\"prompt\":{}}", 400, "prompt" },
	{ "prompt [null]", "POST", C, "{" M ",\"prompt\":[null]}", 400, "prompt" },
	{ "prompt true", "POST", C, "{" M ",\"prompt\":true}", 400, "prompt" },
	{ "max_tokens null (default)", "POST", C, "{" M ",\"prompt\":\"a\",\"max_tokens\":null}",
	  200, NULL },
	{ "max_tokens an object", "POST", C, "{" M ",\"max_tokens\":{}}", 400, "max_tokens" },
	{ "max_tokens true", "POST", C, "{" M ",\"max_tokens\":true}", 400, "max_tokens" },
	{ "max_tokens an array", "POST", C, "{" M ",\"max_tokens\":[1]}", 400, "max_tokens" },
	{ "max_completion_tokens null (default)", "POST", CH,
	  "{" M ",\"max_completion_tokens\":null,\"max_tokens\":1,\"messages\":[{\"role\":\"user\","
	  "\"content\":\"a\"}]}", 200, NULL },
	{ "max_completion_tokens a string", "POST", CH,
	  "{" M ",\"max_completion_tokens\":\"x\",\"messages\":[{\"role\":\"user\","
	  "\"content\":\"a\"}]}", 400, "max_completion_tokens" },
	{ "max_completion_tokens a string beside max_tokens", "POST", CH,
	  "{" M ",\"max_tokens\":1,\"max_completion_tokens\":\"x\",\"messages\":[{\"role\":"
	  "\"user\",\"content\":\"a\"}]}", 400, "max_completion_tokens" },
	{ "temperature null (default)", "POST", C, B1 ",\"temperature\":null}", 200, NULL },
	{ "temperature an array", "POST", C, B1 ",\"temperature\":[]}", 400, "temperature" },
	{ "temperature true", "POST", C, B1 ",\"temperature\":true}", 400, "temperature" },
	{ "top_p null (default)", "POST", C, B1 ",\"top_p\":null}", 200, NULL },
	{ "top_p an object", "POST", C, B1 ",\"top_p\":{}}", 400, "top_p" },
	{ "seed null (default)", "POST", C, B1 ",\"seed\":null}", 200, NULL },
	{ "seed a string", "POST", C, B1 ",\"seed\":\"1\"}", 400, "seed" },
	{ "stream null (default)", "POST", C, B1 ",\"stream\":null}", 200, NULL },
	{ "stream 1", "POST", C, B1 ",\"stream\":1}", 400, "stream" },
	{ "stream_options null (default)", "POST", C, B1 ",\"stream_options\":null}", 200, NULL },
	{ "stream_options an array", "POST", C, B1 ",\"stream\":true,\"stream_options\":[]}", 400,
	  "stream_options" },
	{ "stream_options.include_usage null (default)", "POST", C,
	  B1 ",\"stream\":true,\"stream_options\":{\"include_usage\":null}}", 200, NULL },
	{ "stream_options.include_usage a string", "POST", C,
	  B1 ",\"stream\":true,\"stream_options\":{\"include_usage\":\"yes\"}}", 400,
	  "stream_options.include_usage" },
	{ "n null (default)", "POST", C, B1 ",\"n\":null}", 200, NULL },
	{ "n a string", "POST", C, B1 ",\"n\":\"1\"}", 400, "n" },
	{ "n true", "POST", C, B1 ",\"n\":true}", 400, "n" },
	{ "user null (default)", "POST", C, B1 ",\"user\":null}", 200, NULL },
	{ "user an object", "POST", C, B1 ",\"user\":{}}", 400, "user" },
	{ "stop null (default)", "POST", C, B1 ",\"stop\":null}", 200, NULL },
	{ "stop [null]", "POST", C, B1 ",\"stop\":[null]}", 400, "stop" },
	{ "stop an object", "POST", C, B1 ",\"stop\":{}}", 400, "stop" },
	{ "stop [1]", "POST", C, B1 ",\"stop\":[1]}", 400, "stop" },
	{ "messages null", "POST", CH, "{" M ",\"messages\":null}", 400, "messages" },
	{ "messages an object", "POST", CH, "{" M ",\"messages\":{}}", 400, "messages" },
	{ "messages [null]", "POST", CH, MSG("null"), 400, "messages[0]" },
	{ "messages [5]", "POST", CH, MSG("5"), 400, "messages[0]" },
	{ "role null", "POST", CH, MSG("{\"role\":null,\"content\":\"a\"}"), 400,
	  "messages[0].role" },
	{ "role 5", "POST", CH, MSG("{\"role\":5,\"content\":\"a\"}"), 400, "messages[0].role" },
	{ "role missing", "POST", CH, MSG("{\"content\":\"a\"}"), 400, "messages[0].role" },
	{ "name null", "POST", CH, MSG("{\"role\":\"user\",\"name\":null,\"content\":\"a\"}"), 400,
	  "messages[0].name" },
	{ "name 5", "POST", CH, MSG("{\"role\":\"user\",\"name\":5,\"content\":\"a\"}"), 400,
	  "messages[0].name" },
	{ "content null", "POST", CH, MSG("{\"role\":\"user\",\"content\":null}"), 400,
	  "messages[0].content" },
	{ "content an object", "POST", CH, MSG("{\"role\":\"user\",\"content\":{}}"), 400,
	  "messages[0].content" },
	{ "content missing", "POST", CH, MSG("{\"role\":\"user\"}"), 400, "messages[0].content" },
	{ "second message's content null", "POST", CH,
	  MSG("{\"role\":\"user\",\"content\":\"a\"},{\"role\":\"user\",\"content\":null}"), 400,
	  "messages[1].content" },
	{ "content part null", "POST", CH, PART("null"), 400, "messages[0].content[0]" },
	{ "content part a string", "POST", CH, PART("\"a\""), 400, "messages[0].content[0]" },
	{ "content part type null", "POST", CH, PART("{\"type\":null}"), 400,
	  "messages[0].content[0].type" },
	{ "content part type null with text", "POST", CH,
	  PART("{\"type\":null,\"text\":\"a\"}"), 400, "messages[0].content[0].type" },
	{ "content part type 5", "POST", CH, PART("{\"type\":5,\"text\":\"a\"}"), 400,
	  "messages[0].content[0].type" },
	{ "content part type an object", "POST", CH, PART("{\"type\":{},\"text\":\"a\"}"), 400,
	  "messages[0].content[0].type" },
	{ "content part type missing", "POST", CH, PART("{\"text\":\"a\"}"), 400,
	  "messages[0].content[0].type" },
	{ "content part type image_url", "POST", CH, PART("{\"type\":\"image_url\",\"text\":\"a\"}"),
	  400, "messages[0].content[0].type" },
	{ "content part text null", "POST", CH, PART("{\"type\":\"text\",\"text\":null}"), 400,
	  "messages[0].content[0].text" },
	{ "content part text 5", "POST", CH, PART("{\"type\":\"text\",\"text\":5}"), 400,
	  "messages[0].content[0].text" },
	{ "content part text missing", "POST", CH, PART("{\"type\":\"text\"}"), 400,
	  "messages[0].content[0].text" },
	{ "second content part's type null", "POST", CH,
	  PART("{\"type\":\"text\",\"text\":\"a\"},{\"type\":null,\"text\":\"b\"}"), 400,
	  "messages[0].content[1].type" },
	{ "content parts as they should be", "POST", CH,
	  PART("{\"type\":\"text\",\"text\":\"Once\"},{\"type\":\"text\",\"text\":\"upon\"}"), 200,
	  NULL },
};

/* The error's message names @param too. */
static int names(const char *body, const char *param)
{
	struct json_object *o = json_tokener_parse(body), *e, *m;
	int ok = o && json_object_object_get_ex(o, "error", &e) &&
		json_object_object_get_ex(e, "message", &m) &&
		strstr(json_object_get_string(m), param) != NULL;

	json_object_put(o);
	return ok;
}

static void typed_input(const struct wt_server *s)
{
	unsigned int i, bad = 0;
	struct wt_http r;

	for (i = 0; i < sizeof(typed_cases) / sizeof(typed_cases[0]); i++) {
		const struct bad_case *b = &typed_cases[i];
		int ok;

		wt_http(s->port, b->method, b->path, b->body, 0, &r);
		if (b->status == 200)
			ok = r.status == 200 && r.body && !strstr(r.body, "\"error\"");
		else
			ok = r.status == b->status && error_object(r.body, b->param) &&
				(!b->param || names(r.body, b->param));
		if (!wt_ok(ok, "typed field: %s -> %d%s%s", b->name, b->status,
			   b->param ? ", naming " : "", b->param ? b->param : ""))
			bad++;
		if (!ok)
			wt_diag("got %ld: %s", r.status, r.body ? r.body : "");
		wt_http_free(&r);
	}
	wt_http(s->port, "GET", "/health", NULL, 0, &r);
	wt_ok(r.status == 200, "the server is alive after the %zu typed-field requests",
	      sizeof(typed_cases) / sizeof(typed_cases[0]));
	wt_http_free(&r);
}

/* ------------------------------------------------------------ boundaries */

/**
 * struct pieces - a generation's text and where each generated piece starts
 * @text: the text
 * @at: the offset of each piece
 * @n: pieces
 */
struct pieces {
	char text[16384];
	size_t at[1024];
	unsigned int n;
};

static int collect_pieces(void *arg, int token, const char *piece, int from_prompt)
{
	struct pieces *p = arg;
	size_t len = strlen(p->text);

	(void)token;
	if (from_prompt || !wafer_piece_printable(piece) || p->n >= 1024 ||
	    len + strlen(piece) >= sizeof(p->text))
		return 0;
	p->at[p->n++] = len;
	strcat(p->text, piece);
	return 0;
}

/* A completion's status, text, finish_reason and completion tokens. */
static int ask_max(unsigned int port, const char *prompt, int max_tokens, struct answer *a)
{
	char *b = body_for(0, prompt, (unsigned int)max_tokens, 0, NULL);
	int st = ask(port, 0, b, 0, a);

	free(b);
	return st;
}

/*
 * max_tokens exactly at the room the context leaves and one above; a stop
 * string that straddles two generated pieces, found and cut there (and,
 * streamed, none of it sent).
 */
static void boundaries(const struct wt_server *s)
{
	static char prompt[4096], want[16384];
	static struct pieces pc;
	int toks[1024], np, room, stream, k;
	struct wafer_gen_opts go = { .temperature = 0, .top_p = 1.0f, .on_piece = collect_pieces,
				     .arg = &pc };
	char stop[16], extra[64], *b, *hit, *js;
	struct answer a;
	struct wt_http r;
	unsigned int i;

	/* A prompt that leaves a few positions: " the" repeated. */
	prompt[0] = '\0';
	for (i = 0; i < 1000; i++) {
		strcat(prompt, " the");
		np = wafer_tokenizer_encode(tok, prompt, 1, 0, toks, 1024);
		if (np >= 505)
			break;
	}
	room = 512 - np + 1;
	k = ask_max(s->port, prompt, room, &a);
	wt_ok(k == 200 && a.ok &&
	      a.prompt_tokens == np && a.completion_tokens <= room,
	      "max_tokens %d, exactly the room a %d-token prompt leaves in 512: 200 "
	      "(%d tokens, %s)", room, np, a.completion_tokens, a.finish);
	b = body_for(0, prompt, (unsigned int)room + 1, 0, NULL);
	wt_http(s->port, "POST", C, b, 0, &r);
	free(b);
	wt_ok(r.status == 400 && error_object(r.body, "max_tokens") &&
	      strstr(r.body, "context_length_exceeded"),
	      "max_tokens %d, one above that room: 400 context_length_exceeded on max_tokens",
	      room + 1);
	wt_http_free(&r);

	/* A stop string across a piece boundary of the greedy text. */
	memset(&pc, 0, sizeof(pc));
	go.steps = 4 + 60;
	k = wafer_generate(ref_ctx, tok, "Once upon a time", &go, NULL);
	if (!wt_ok(!k && pc.n > 4, "the reference generation (%u pieces)", pc.n))
		return;
	stop[0] = '\0';
	for (k = 1; k + 1 < (int)pc.n && !stop[0]; k++) {
		size_t prev = pc.at[k] - pc.at[k - 1], next = pc.at[k + 1] - pc.at[k];

		/* two bytes of each side, its first occurrence there */
		if (prev < 2 || next < 2)
			continue;
		snprintf(stop, sizeof(stop), "%.4s", pc.text + pc.at[k] - 2);
		if ((size_t)(strstr(pc.text, stop) - pc.text) != pc.at[k] - 2)
			stop[0] = '\0';
	}
	if (!wt_ok(stop[0] != '\0', "a stop string across two pieces: \"%s\"", stop))
		return;
	hit = strstr(pc.text, stop);
	snprintf(want, sizeof(want), "%.*s", (int)(hit - pc.text), pc.text);
	js = jstr(stop);
	snprintf(extra, sizeof(extra), ",\"stop\":%s", js);
	free(js);
	for (stream = 0; stream < 2; stream++) {
		b = body_for(0, "Once upon a time", 60, stream, extra);
		ask(s->port, 0, b, stream, &a);
		free(b);
		if (!wt_ok(a.ok && !strcmp(a.text, want) && !strcmp(a.finish, "stop"),
			   "stop \"%s\" straddling two pieces %s: cut where it starts, "
			   "finish_reason stop", stop, stream ? "streamed (none of it sent)" :
			   "whole"))
			wt_diag("got '%s'\n# want '%s'", a.text, want);
	}
}

/* ------------------------------------------------- fuzz and memory soak */

static const char *const fuzz_seeds[] = {
	"{" M ",\"prompt\":\"Once upon a time\",\"max_tokens\":3,\"temperature\":0}",
	"{" M ",\"prompt\":[\"The cat\"],\"max_tokens\":2,\"stop\":[\" the\"],\"seed\":5,"
	"\"temperature\":0.7,\"top_p\":0.9}",
	"{" M ",\"prompt\":\"a\",\"max_tokens\":2,\"stream\":true,"
	"\"stream_options\":{\"include_usage\":true}}",
	"{" M ",\"messages\":[{\"role\":\"system\",\"content\":\"x\"},{\"role\":\"user\","
	"\"content\":[{\"type\":\"text\",\"text\":\"Once\"}]}],\"max_tokens\":3}",
};

/**
 * struct fuzzer - one thread of mutated requests
 * @port: server
 * @seed: its RNG seed
 * @n: requests
 * @bad: answers outside {200, 400, 404, 413} or not in their shape
 * @n200: answers 200
 * @last: the last such answer, for the log
 */
struct fuzzer {
	unsigned int port;
	uint64_t seed;
	unsigned int n;
	unsigned int bad;
	unsigned int n200;
	char last[256];
};

static void mutate(struct wt_rng *g, char *b, size_t cap)
{
	size_t len = strlen(b), at;
	int k, i, n = (int)wt_rng_range(g, 0, 3);

	for (i = 0; i < n && len; i++) {
		at = (size_t)wt_rng_range(g, 0, (int64_t)len - 1);
		k = (int)wt_rng_range(g, 0, 4);
		if (k == 0) {			/* any byte, NUL and invalid UTF-8 included */
			b[at] = (char)wt_rng_range(g, 1, 255);
		} else if (k == 1) {		/* cut */
			b[at] = '\0';
			len = at;
		} else if (k == 2 && len + 1 < cap) {	/* insert */
			memmove(b + at + 1, b + at, len - at + 1);
			b[at] = "{}[]\",:0-9e\\\xff\xc3 "[wt_rng_range(g, 0, 16)];
			len++;
		} else if (k == 3 && len + 6 < cap) {	/* a digit becomes a big number */
			if (b[at] >= '0' && b[at] <= '9') {
				memmove(b + at + 5, b + at, len - at + 1);
				memcpy(b + at, "99999", 5);
				len += 5;
			}
		} else {			/* swap two bytes */
			size_t o = (size_t)wt_rng_range(g, 0, (int64_t)len - 1);
			char c = b[at];

			b[at] = b[o];
			b[o] = c;
		}
	}
}

static int shaped(const struct wt_http *r, const char *body)
{
	struct json_object *o, *x;
	int ok;

	if (r->status == 200 && strstr(body, "\"stream\":true"))
		return !strncmp(r->body, "data: ", 6) && strstr(r->body, "data: [DONE]\n\n");
	if (r->status == 200) {
		o = json_tokener_parse(r->body);
		ok = o && json_object_object_get_ex(o, "choices", &x);
		json_object_put(o);
		return ok;
	}
	if (r->status == 400 || r->status == 404 || r->status == 413)
		return error_object(r->body, NULL);
	return 0;
}

static void *fuzz_main(void *arg)
{
	struct fuzzer *f = arg;
	struct wt_rng g;
	struct wt_http r;
	char body[1024];
	unsigned int i;
	int chat;

	wt_rng_seed(&g, f->seed);
	for (i = 0; i < f->n; i++) {
		unsigned int k = (unsigned int)wt_rng_range(&g, 0, N_FUZZ_SEEDS - 1);

		snprintf(body, sizeof(body), "%s", fuzz_seeds[k]);
		chat = k == 3;
		if (i % 4)	/* one in four stays valid */
			mutate(&g, body, sizeof(body));
		if (wt_http(f->port, "POST", chat ? CH : C, body, 0, &r) || !shaped(&r, body)) {
			f->bad++;
			snprintf(f->last, sizeof(f->last), "%ld for %.120s: %.100s", r.status, body,
				 r.body ? r.body : "");
		}
		f->n200 += r.status == 200;
		wt_http_free(&r);
	}
	return NULL;
}

/* Resident KiB of @pid, or -1. */
static long rss_kib(pid_t pid)
{
	char path[64], line[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			v = atol(line + 6);
	if (f)
		fclose(f);
	return v;
}

/*
 * Rounds of mutated and valid requests from 8 threads: every answer is a
 * 200 or a 4xx in its shape, and the server's resident memory does not
 * grow from the first round to the last.
 */
static void fuzz_soak(const struct wt_server *s)
{
	struct fuzzer f[8];
	pthread_t t[8];
	unsigned int round, i, bad = 0, total = 0, n200 = 0;
	long rss[3];

	for (round = 0; round < 3; round++) {
		for (i = 0; i < 8; i++) {
			f[i] = (struct fuzzer){ .port = s->port, .seed = 1000 * round + i, .n = 100 };
			pthread_create(&t[i], NULL, fuzz_main, &f[i]);
		}
		for (i = 0; i < 8; i++) {
			pthread_join(t[i], NULL);
			bad += f[i].bad;
			total += f[i].n;
			n200 += f[i].n200;
			if (f[i].bad)
				wt_diag("fuzz: %s", f[i].last);
		}
		rss[round] = rss_kib(s->pid);
	}
	wt_ok(!bad, "fuzz: %u mutated or valid bodies from 8 threads, each answered 200 or "
	      "4xx in its shape (%u not; %u were 200)", total, bad, n200);
	wt_ok(rss[0] > 0 && rss[2] - rss[0] < 1024,
	      "soak: the server's resident memory stays flat (%ld -> %ld -> %ld KiB)",
	      rss[0], rss[1], rss[2]);
	wt_ok(wt_server_metric(s, "wafer_serve_slots_in_use") == 0, "after the fuzz: no slot held");
}

/* CLIENTS at once, mixed prompts, lengths, endpoints and streaming; each vs alone. */
static void concurrent(const struct wt_server *s)
{
	static struct client cl[CLIENTS];
	static char ref[CLIENTS][4096];
	static char sampled_alone[16384];
	unsigned int i, np, same = 0, shaped = 0;
	struct answer a;
	double peak;

	/* A sampled request alone first; it runs again among the others. */
	{
		char *b = strdup("{" M ",\"prompt\":\"Once upon a time\",\"max_tokens\":80,"
			   "\"temperature\":0.9,\"top_p\":0.95,\"seed\":4242}");
		ask(s->port, 0, b, 0, &a);
		snprintf(sampled_alone, sizeof(sampled_alone), "%s", a.text);
		free(b);
		wt_ok(a.ok && a.text[0], "a sampled request (temperature 0.9, seed 4242) alone");
	}
	for (i = 0; i < CLIENTS; i++) {
		unsigned int m = 8 + (i * 37) % 120;

		cl[i].port = s->port;
		cl[i].chat = i % 3 == 1;
		cl[i].stream = i % 2;
		if (i == CLIENTS - 1) {
			cl[i].chat = cl[i].stream = 0;
			cl[i].body = strdup("{" M ",\"prompt\":\"Once upon a time\",\"max_tokens\":80,"
					    "\"temperature\":0.9,\"top_p\":0.95,\"seed\":4242}");
			continue;
		}
		reference(prompts[i % N_PROMPTS], m, 0, 0, ref[i], sizeof(ref[i]), &np);
		cl[i].body = body_for(cl[i].chat, prompts[i % N_PROMPTS], m, cl[i].stream, NULL);
	}
	{
		pthread_t t[CLIENTS];

		for (i = 0; i < CLIENTS; i++)
			pthread_create(&t[i], NULL, client_main, &cl[i]);
		peak = 0;
		for (i = 0; i < 20; i++) {
			double v = wt_server_metric(s, "wafer_serve_slots_in_use");

			peak = v > peak ? v : peak;
			usleep(2000);
		}
		for (i = 0; i < CLIENTS; i++)
			pthread_join(t[i], NULL);
	}
	for (i = 0; i < CLIENTS; i++) {
		parse_answer(&cl[i].r, cl[i].chat, cl[i].stream, &a);
		shaped += a.ok;
		if (i == CLIENTS - 1) {
			wt_ok(a.ok && !strcmp(a.text, sampled_alone),
			      "the sampled request among %d others: the same text as alone",
			      CLIENTS - 1);
			continue;
		}
		if (a.ok && !strcmp(a.text, ref[i]))
			same++;
		else
			wt_diag("client %u (%s%s): status %ld\n#  got '%s'\n# want '%s'", i,
				cl[i].chat ? "chat" : "completion", cl[i].stream ? ", streamed" : "",
				cl[i].r.status, a.text, ref[i]);
		wt_http_free(&cl[i].r);
		free(cl[i].body);
	}
	wt_http_free(&cl[CLIENTS - 1].r);
	free(cl[CLIENTS - 1].body);
	wt_ok(shaped == CLIENTS, "%d concurrent clients: every answer well formed (%u)", CLIENTS,
	      shaped);
	wt_ok(same == CLIENTS - 1, "%d concurrent greedy clients of mixed prompts: each text "
	      "byte-identical to the request run alone (%u)", CLIENTS - 1, same);
	wt_diag("slots in use seen during the burst: up to %.0f", peak);
	wt_ok(wt_server_metric(s, "wafer_serve_slots_in_use") == 0 &&
	      wt_server_metric(s, "wafer_serve_queue_depth") == 0,
	      "after the burst: no slot in use, nothing queued");
	wt_ok(wt_server_metric(s, "wafer_serve_engine_errors_total") == 0,
	      "the engine met no impossible state");
}

static void cancellation(const struct wt_server *s)
{
	double before = wt_server_metric(s, "wafer_serve_completion_tokens_total"), after, busy;
	double cancelled = wt_server_metric(s, "wafer_serve_cancelled_total");
	char *b = body_for(0, "Once", 508, 1, NULL);
	struct wt_http r;
	int i;

	/* Drop the connection once the first event came. */
	wt_http(s->port, "POST", C, b, 1, &r);
	free(b);
	wt_ok(r.status == 200 && !strncmp(r.body, "data: ", 6),
	      "a streaming client reads its first event and hangs up");
	wt_http_free(&r);
	for (i = 0; i < 6000; i++) {	/* a liveness bound of 60 s for a loaded host */
		busy = wt_server_metric(s, "wafer_serve_slots_in_use");
		if (busy == 0)
			break;
		usleep(10000);
	}
	after = wt_server_metric(s, "wafer_serve_completion_tokens_total");
	wt_ok(busy == 0 && wt_server_metric(s, "wafer_serve_cancelled_total") == cancelled + 1,
	      "its slot is freed and counted as cancelled");
	wt_ok(after - before < 508, "it stopped early: %.0f of 508 tokens generated",
	      after - before);
}

/* Waits (at most ~60 s: a liveness bound for a loaded host) until @name reads @want. */
static double wait_metric(const struct wt_server *s, const char *name, double want)
{
	double v = -1;
	int i;

	for (i = 0; i < 6000; i++) {
		v = wt_server_metric(s, name);
		if (v == want)
			break;
		usleep(10000);
	}
	return v;
}

/*
 * A client of a whole (not streamed) completion closes its socket while the
 * request runs: the server cancels it and frees its slot long before the
 * 508 tokens it asked for.
 */
static void hangup_whole(const struct wt_server *s)
{
	double cancelled = wt_server_metric(s, "wafer_serve_cancelled_total");
	double before = wt_server_metric(s, "wafer_serve_completion_tokens_total"), busy;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)s->port) };
	char *b = body_for(0, "Once", 508, 0, NULL), req[1024];
	int fd = socket(AF_INET, SOCK_STREAM, 0), n;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	n = snprintf(req, sizeof(req), "POST /v1/completions HTTP/1.1\r\nHost: x\r\n"
		     "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
		     strlen(b), b);
	free(b);
	if (!wt_ok(fd >= 0 && !connect(fd, (struct sockaddr *)&a, sizeof(a)) &&
		   write(fd, req, (size_t)n) == n, "a raw client sends a whole completion of 508 "
		   "tokens")) {
		if (fd >= 0)
			close(fd);
		return;
	}
	busy = wait_metric(s, "wafer_serve_slots_in_use", 1);
	wt_ok(busy == 1, "it runs in a slot");
	close(fd);
	busy = wait_metric(s, "wafer_serve_slots_in_use", 0);
	wt_ok(busy == 0 && wt_server_metric(s, "wafer_serve_cancelled_total") == cancelled + 1,
	      "it hangs up: its slot is freed and counted as cancelled");
	wt_ok(wt_server_metric(s, "wafer_serve_completion_tokens_total") - before < 508,
	      "it stopped early: %.0f of 508 tokens generated",
	      wt_server_metric(s, "wafer_serve_completion_tokens_total") - before);
}

/* SIGTERM with requests in flight: they finish, new connections are refused, exit 0. */
static void drain(struct wt_server *s)
{
	static struct client cl[16];
	static char ref[16][4096];
	pthread_t t[16];
	unsigned int i, np, same = 0;
	struct answer a;
	struct wt_http r;
	char line[256];
	int st, inflight = 0;

	for (i = 0; i < 16; i++)
		reference(prompts[i % N_PROMPTS], 300, 0, 0, ref[i], sizeof(ref[i]), &np);
	for (i = 0; i < 16; i++) {
		cl[i] = (struct client){ .port = s->port, .stream = i % 2,
					 .body = body_for(0, prompts[i % N_PROMPTS], 300, i % 2,
							  NULL) };
		pthread_create(&t[i], NULL, client_main, &cl[i]);
	}
	/* Every one admitted (8 running, 8 queued) before the signal. */
	for (i = 0; i < 2000 && wt_server_metric(s, "wafer_serve_slots_in_use") +
	     wt_server_metric(s, "wafer_serve_queue_depth") < 16; i++)
		usleep(1000);
	kill(s->pid, SIGTERM);
	if (!wt_server_wait_line(s, "draining", line, sizeof(line)))
		inflight = atoi(strstr(line, "draining: ") + 10);
	wt_ok(inflight > 0, "SIGTERM with %d requests in flight", inflight);
	wt_ok(wt_http(s->port, "GET", "/health", NULL, 0, &r) && !r.status,
	      "while draining, a new connection is refused");
	wt_http_free(&r);
	for (i = 0; i < 16; i++) {
		pthread_join(t[i], NULL);
		parse_answer(&cl[i].r, 0, cl[i].stream, &a);
		if (a.ok && !strcmp(a.text, ref[i]))
			same++;
		else
			wt_diag("request %u: status %ld, curl %d: %.200s", i, cl[i].r.status,
				cl[i].r.curl_err, cl[i].r.body);
		wt_http_free(&cl[i].r);
		free(cl[i].body);
	}
	wt_ok(same == 16, "every request in flight finished whole (%u of 16)", same);
	st = wt_server_stop(s, 0);
	wt_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the server exits 0 after the drain");
}

/* --slots 1 --queue 1: one running, one waiting, the next gets 429. */
static void queue_full(void)
{
	struct wt_server s;
	struct client cl[2];
	pthread_t t[2];
	struct wt_http r;
	int i, try, got429 = 0, held;

	if (!wt_ok(!wt_server_start(&s, model, tokpath, "--slots 1 --queue 1"),
		   "a server with 1 slot and a queue of 1 starts"))
		return;
	for (try = 0; try < 5 && !got429; try++) {
		/*
		 * One after the other: the second sent while the first still
		 * waits to be moved into the slot would find the queue full.
		 */
		for (i = 0; i < 2; i++) {
			const char *m = i ? "wafer_serve_queue_depth" : "wafer_serve_slots_in_use";
			int k;

			cl[i] = (struct client){ .port = s.port,
						 .body = body_for(0, "Once", 508, 0, NULL) };
			pthread_create(&t[i], NULL, client_main, &cl[i]);
			for (k = 0; k < 500 && wt_server_metric(&s, m) < 1; k++)
				usleep(1000);
		}
		wt_http(s.port, "POST", C, "{" M ",\"prompt\":\"a\",\"max_tokens\":4}", 0, &r);
		/* Only a fair test if both were still there when the third was answered. */
		held = wt_server_metric(&s, "wafer_serve_queue_depth") == 1;
		if (held) {
			got429 = r.status == 429 && error_object(r.body, NULL) &&
				strstr(r.body, "rate_limit") != NULL && r.headers &&
				strstr(r.headers, "Retry-After: 1\r\n") != NULL;
			if (!got429)
				wt_diag("third request: %ld %s", r.status, r.body);
		}
		wt_http_free(&r);
		for (i = 0; i < 2; i++) {
			pthread_join(t[i], NULL);
			if (cl[i].r.status != 200)
				got429 = -1000;
			wt_http_free(&cl[i].r);
			free(cl[i].body);
		}
		if (!held)
			wt_diag("try %d: the slot freed before the third request was answered", try);
	}
	wt_ok(got429 == 1, "1 running + 1 queued: the next request gets 429 with an OpenAI "
	      "error object and Retry-After, the two others 200");
	wt_ok(wt_server_metric(&s, "wafer_serve_rejected_queue_full_total") >= 1,
	      "/metrics counts the rejection");
	i = wt_server_stop(&s, SIGTERM);
	wt_ok(WIFEXITED(i) && WEXITSTATUS(i) == 0, "SIGTERM on an idle server: exit 0");
}

/* --max-tokens 8: max_tokens 8 is served, 9 refused; a chat without it gets at most 8. */
static void server_limit(void)
{
	struct wt_server s;
	struct answer a;
	struct wt_http r;
	int st;

	if (!wt_ok(!wt_server_start(&s, model, tokpath, "--slots 1 --max-tokens 8"),
		   "a server with --max-tokens 8 starts"))
		return;
	st = ask_max(s.port, "Once upon a time", 8, &a);
	wt_ok(st == 200 && a.ok && a.completion_tokens >= 1 && a.completion_tokens <= 8,
	      "max_tokens 8, exactly the server's limit: 200 (%d tokens)", a.completion_tokens);
	wt_http(s.port, "POST", C, "{" M ",\"prompt\":\"Once\",\"max_tokens\":9}", 0, &r);
	wt_ok(r.status == 400 && error_object(r.body, "max_tokens"),
	      "max_tokens 9, one above it: 400 on max_tokens (%ld)", r.status);
	wt_http_free(&r);
	st = ask(s.port, 1, "{" M ",\"messages\":[{\"role\":\"user\",\"content\":\"Once upon a "
		 "time\"}],\"temperature\":0}", 0, &a);
	wt_ok(st == 200 && a.ok && a.completion_tokens <= 8,
	      "a chat without max_tokens gets at most the limit (%d tokens)",
	      a.completion_tokens);
	st = wt_server_stop(&s, SIGTERM);
	wt_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "it exits 0");
}

/* --drain-timeout 0: SIGTERM cuts what runs with 503, still exits 0. */
static void drain_cut(void)
{
	struct client cl[4];
	struct wt_server s;
	pthread_t t[4];
	int i, n503 = 0, other = 0, st;

	if (!wt_ok(!wt_server_start(&s, model, tokpath, "--slots 2 --drain-timeout 0"),
		   "a server with a drain deadline of 0 starts"))
		return;
	for (i = 0; i < 4; i++) {
		cl[i] = (struct client){ .port = s.port, .stream = i == 3,
					 .body = body_for(0, "Once", 508, i == 3, NULL) };
		pthread_create(&t[i], NULL, client_main, &cl[i]);
	}
	/* Both slots busy before the signal (a liveness bound of 60 s for a loaded host). */
	for (i = 0; i < 6000 && wt_server_metric(&s, "wafer_serve_slots_in_use") < 2; i++)
		usleep(10000);
	st = wt_server_stop(&s, SIGTERM);
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		if (i < 3 && cl[i].r.status == 503 && error_object(cl[i].r.body, NULL))
			n503++;
		else if (i == 3 && cl[i].r.status == 200 && strstr(cl[i].r.body, "\"error\""))
			n503++;
		else if (cl[i].r.status != 200)
			other++;
		wt_http_free(&cl[i].r);
		free(cl[i].body);
	}
	wt_ok(n503 >= 2 && !other, "past the deadline the requests in flight end with 503 "
	      "(streams with an error event): %d of 4", n503);
	wt_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "and the server exits 0");
}

static double t_part;

static void part_done(const char *what)
{
	wt_diag("%s: %.2f s", what, wt_now() - t_part);
	t_part = wt_now();
}

int main(void)
{
	struct wafer_open_opts oo = { .backend = WAFER_BACKEND_INPROC };
	struct wafer_convert_opts co = { .wbits = 8, .group_size = 32 };
	struct wafer_model *m = NULL;
	struct wafer_dev *dev = NULL;
	struct wt_server s;

	signal(SIGPIPE, SIG_IGN);
	model = wt_model_path("stories260K.bin") ? strdup(wt_model_path("stories260K.bin")) : NULL;
	tokpath = wt_model_path("tok512.bin") ? strdup(wt_model_path("tok512.bin")) : NULL;
	if (!wt_ok(model && tokpath, "shared model and tokenizer found"))
		return wt_done();
	if (!wt_ok(!wafer_open(&oo, &dev) && !wafer_model_load_file(dev, model, &co, &m) &&
		   !wafer_tokenizer_load(tokpath, 512, &tok) &&
		   !wafer_ctx_create(m, 1, 512, &ref_ctx), "the reference: the model in process"))
		return wt_done();
	wt_http_init();
	if (!wt_ok(!wt_server_start(&s, model, tokpath,
				    "--slots 8 --queue 64 --max-body 4096 --prefill-chunk 16"),
		   "wafer serve starts (8 slots, prefill chunks of 16)"))
		return wt_done();
	t_part = wt_now();
	endpoints(&s);
	alone(&s);
	openai_client(&s);
	choices_n(&s);
	logprobs(&s);
	echo(&s);
	penalties(&s);
	surface(&s);
	stops(&s);
	part_done("endpoints, alone, stops");
	bad_input(&s);
	typed_input(&s);
	boundaries(&s);
	part_done("bad input, typed fields, boundaries");
	fuzz_soak(&s);
	part_done("fuzz and soak");
	concurrent(&s);
	part_done("concurrent");
	cancellation(&s);
	hangup_whole(&s);
	drain(&s);
	part_done("cancellation, drain");
	queue_full();
	part_done("queue full");
	drain_cut();
	server_limit();
	part_done("drain cut, --max-tokens");
	wafer_ctx_destroy(ref_ctx);
	wafer_model_unload(m);
	wafer_close(dev);
	wafer_tokenizer_free(tok);
	return wt_done();
}
