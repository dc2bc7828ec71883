// SPDX-License-Identifier: MIT
/*
 * `wafer serve --backend inproc -d 0-2` (and `-d 0-1`): the model split by
 * layers over a pipeline of in-process devices.  At start the server names
 * which layers sit on which device; /health and /v1/models answer; 16
 * clients at once on 8 slots (prompts of 1 to ~90 tokens, so several
 * prefill chunks of 16 and a queue; completions and chat, some streamed)
 * each get, byte for byte, the text wafer_generate() gives on ONE device
 * alone, with the engine keeping one micro-batch per device in flight
 * (wafer_batch_opts.micro_batches); one streamed request alone the same;
 * every member ran every job
 * (/metrics per member); SIGTERM stops the server with exit 0.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <json-c/json.h>

#include "wafer.h"
#include "wt_http.h"
#include "wt_util.h"

#define MODEL_ID	"stories260K"
#define CLIENTS		16

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

static int collect(void *arg, int token, const char *piece, int from_prompt)
{
	char *b = arg;

	(void)token;
	if (!from_prompt && wafer_piece_printable(piece) && strlen(b) + strlen(piece) < 4096)
		strcat(b, piece);
	return 0;
}

/* The greedy text of @max_new tokens after @prompt on one device alone (4096 bytes). */
static int reference(const char *prompt, unsigned int max_new, char *out)
{
	struct wafer_gen_opts go = { .top_p = 1.0f, .on_piece = collect, .arg = out };
	int toks[1024], k = wafer_tokenizer_encode(tok, prompt, 1, 0, toks, 1024);

	out[0] = '\0';
	if (k < 1)
		return -1;
	go.steps = (unsigned int)k + max_new - 1;
	return wafer_generate(ref_ctx, tok, prompt, &go, NULL);
}

static char *body_for(int chat, const char *prompt, unsigned int max_new, int stream)
{
	struct json_object *o = json_object_new_string(prompt);
	const char *p = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	char *b = malloc(strlen(p) + 256);

	if (chat)
		sprintf(b, "{\"model\":\"" MODEL_ID "\",\"messages\":[{\"role\":\"user\","
			"\"content\":%s}],\"max_tokens\":%u,\"temperature\":0,\"stream\":%s}", p,
			max_new, stream ? "true" : "false");
	else
		sprintf(b, "{\"model\":\"" MODEL_ID "\",\"prompt\":%s,\"max_tokens\":%u,"
			"\"temperature\":0,\"stream\":%s}", p, max_new, stream ? "true" : "false");
	json_object_put(o);
	return b;
}

/* Appends choice 0's text of one response or chunk @o to @text; 0 or -1. */
static int take_text(struct json_object *o, int chat, char *text)
{
	struct json_object *ch, *c, *m, *t;

	if (!o || !json_object_object_get_ex(o, "choices", &ch) ||
	    json_object_array_length(ch) < 1)
		return -1;
	c = json_object_array_get_idx(ch, 0);
	if (chat && !json_object_object_get_ex(c, "message", &m) &&
	    !json_object_object_get_ex(c, "delta", &m))
		return -1;
	if (!json_object_object_get_ex(chat ? m : c, chat ? "content" : "text", &t))
		return !chat ? -1 : 0;	/* a chat role or finish chunk has none */
	if (t && strlen(text) + strlen(json_object_get_string(t)) < 4096)
		strcat(text, json_object_get_string(t));
	return 0;
}

/* The answer's text (4096 bytes); 0 when well formed (streams end with [DONE]). */
static int answer_text(const struct wt_http *r, int chat, int stream, char *text)
{
	char *copy, *ev, *next;
	int bad = 0, done = 0;

	text[0] = '\0';
	if (r->status != 200 || !r->body)
		return -1;
	if (!stream) {
		struct json_object *o = json_tokener_parse(r->body);

		bad = take_text(o, chat, text);
		json_object_put(o);
		return bad;
	}
	copy = strdup(r->body);
	for (ev = copy; ev && *ev && !bad; ev = next) {
		struct json_object *o;

		next = strstr(ev, "\n\n");
		if (next) {
			*next = '\0';
			next += 2;
		}
		bad = strncmp(ev, "data: ", 6) || done;
		if (bad || (done = !strcmp(ev + 6, "[DONE]")))
			continue;
		o = json_tokener_parse(ev + 6);
		bad = take_text(o, chat, text);
		json_object_put(o);
	}
	free(copy);
	return bad || !done ? -1 : 0;
}

struct client {
	unsigned int port;
	int chat;
	int stream;
	char *body;
	char want[4096];
	struct wt_http r;
};

static void *client_main(void *arg)
{
	struct client *c = arg;

	wt_http(c->port, "POST", c->chat ? "/v1/chat/completions" : "/v1/completions", c->body,
		0, &c->r);
	return NULL;
}

/* The layer map printed at start: one line per member, its layers. */
static void layout(const struct wt_server *s, unsigned int n)
{
	char want[64];
	unsigned int k, lines = 0;

	snprintf(want, sizeof(want), "layers over %u devices:", n);
	for (k = 0; k < n; k++) {
		char m[32];

		snprintf(m, sizeof(m), "inproc %u  layers", k);
		lines += strstr(s->start, m) != NULL;
	}
	if (!wt_ok(strstr(s->start, want) && lines == n && strstr(s->start, "(pipe backend)") &&
		   strstr(s->start, "+embed") && strstr(s->start, "+head"),
		   "%u devices: the start names each member's layers (embedding first, head last)",
		   n))
		wt_diag("stdout at start:\n%s", s->start);
	snprintf(want, sizeof(want), "%u micro-batches kept in flight, one per device", n);
	if (!wt_ok(strstr(s->start, want) != NULL, "%u devices: the engine keeps %u "
		   "micro-batches in flight (wafer_batch_opts.micro_batches)", n, n))
		wt_diag("stdout at start:\n%s", s->start);
}

static void endpoints(const struct wt_server *s)
{
	struct wt_http r;

	wt_http(s->port, "GET", "/health", NULL, 0, &r);
	wt_ok(r.status == 200 && strstr(r.body, "\"ok\""), "GET /health: 200 ok");
	wt_http_free(&r);
	wt_http(s->port, "GET", "/v1/models", NULL, 0, &r);
	wt_ok(r.status == 200 && strstr(r.body, "\"id\":\"" MODEL_ID "\""),
	      "GET /v1/models lists " MODEL_ID);
	wt_http_free(&r);
}

/* One streamed chat alone, with the long prompt (6 prefill chunks). */
static void streamed(const struct wt_server *s)
{
	static char want[4096], got[4096];
	char *b = body_for(1, prompts[N_PROMPTS - 1], 48, 1);
	struct wt_http r;

	reference(prompts[N_PROMPTS - 1], 48, want);
	wt_http(s->port, "POST", "/v1/chat/completions", b, 0, &r);
	if (!wt_ok(!answer_text(&r, 1, 1, got) && !strcmp(got, want),
		   "a streamed chat alone: the text of one device alone"))
		wt_diag(" got '%s'\n# want '%s'", got, want);
	wt_http_free(&r);
	free(b);
}

static void concurrent(const struct wt_server *s, unsigned int n)
{
	static struct client cl[CLIENTS];
	pthread_t t[CLIENTS];
	unsigned int i, same = 0;
	char got[4096];

	for (i = 0; i < CLIENTS; i++) {
		unsigned int m = 6 + (i * 29) % 60;

		cl[i] = (struct client){ .port = s->port, .chat = i % 3 == 1, .stream = i % 4 == 3 };
		reference(prompts[i % N_PROMPTS], m, cl[i].want);
		cl[i].body = body_for(cl[i].chat, prompts[i % N_PROMPTS], m, cl[i].stream);
	}
	for (i = 0; i < CLIENTS; i++)
		pthread_create(&t[i], NULL, client_main, &cl[i]);
	for (i = 0; i < CLIENTS; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < CLIENTS; i++) {
		if (!answer_text(&cl[i].r, cl[i].chat, cl[i].stream, got) &&
		    !strcmp(got, cl[i].want))
			same++;
		else
			wt_diag("client %u: status %ld\n#  got '%s'\n# want '%s'", i,
				cl[i].r.status, got, cl[i].want);
		wt_http_free(&cl[i].r);
		free(cl[i].body);
	}
	wt_ok(same == CLIENTS, "%u devices: %d concurrent greedy clients on 8 slots, each "
	      "byte-identical to wafer_generate() on one device alone (%u)", n, CLIENTS, same);
}

/* /metrics: every member completed every job of the server. */
static void members(const struct wt_server *s, unsigned int n)
{
	double jobs = wt_server_metric(s, "wafer_serve_device_jobs_total");
	unsigned int k, equal = 0;
	struct wt_http r;

	wt_http(s->port, "GET", "/metrics", NULL, 0, &r);
	for (k = 0; k < n && r.body; k++) {
		char key[96], *p;

		snprintf(key, sizeof(key), "wafer_serve_member_jobs_total{member=\"%u\","
			 "device=\"inproc\"} ", k);
		p = strstr(r.body, key);
		equal += p && jobs > 0 && strtod(p + strlen(key), NULL) == jobs;
	}
	if (!wt_ok(equal == n, "%u devices: /metrics, each member ran all %.0f jobs", n, jobs))
		wt_diag("%s", r.body ? r.body : "(no body)");
	wt_http_free(&r);
	wt_ok(wt_server_metric(s, "wafer_serve_engine_errors_total") == 0 &&
	      wt_server_metric(s, "wafer_serve_slots_in_use") == 0,
	      "%u devices: the engine met no impossible state, no slot is held", n);
}

static void serve_on(const char *model, const char *tokpath, const char *list, unsigned int n)
{
	char extra[128];
	struct wt_server s;
	int st;

	snprintf(extra, sizeof(extra), "-d %s --slots 8 --prefill-chunk 16", list);
	if (!wt_ok(!wt_server_start(&s, model, tokpath, extra),
		   "wafer serve --backend inproc %s starts", extra))
		return;
	layout(&s, n);
	endpoints(&s);
	concurrent(&s, n);
	streamed(&s);
	members(&s, n);
	st = wt_server_stop(&s, SIGTERM);
	wt_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "SIGTERM: the server exits 0");
}

int main(void)
{
	struct wafer_open_opts oo = { .backend = WAFER_BACKEND_INPROC };
	struct wafer_convert_opts co = { .wbits = 8, .group_size = 32 };
	const char *mp = wt_model_path("stories260K.bin"), *tp;
	struct wafer_model *m = NULL;
	struct wafer_dev *dev = NULL;
	char *model, *tokpath;

	signal(SIGPIPE, SIG_IGN);
	model = mp ? strdup(mp) : NULL;
	tp = wt_model_path("tok512.bin");
	tokpath = tp ? strdup(tp) : NULL;
	if (!wt_ok(model && tokpath, "shared model and tokenizer found"))
		return wt_done();
	if (!wt_ok(!wafer_open(&oo, &dev) && !wafer_model_load_file(dev, model, &co, &m) &&
		   !wafer_tokenizer_load(tokpath, 512, &tok) &&
		   !wafer_ctx_create(m, 1, 512, &ref_ctx),
		   "the reference: the model on one in-process device"))
		return wt_done();
	wt_http_init();
	serve_on(model, tokpath, "0-2", 3);
	serve_on(model, tokpath, "0-1", 2);
	wafer_ctx_destroy(ref_ctx);
	wafer_model_unload(m);
	wafer_close(dev);
	wafer_tokenizer_free(tok);
	free(model);
	free(tokpath);
	return wt_done();
}
