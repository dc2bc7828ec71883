/* SPDX-License-Identifier: MIT */
/*
 * wafer serve: the objects shared by its files.  cli_serve.c is the HTTP
 * side (libmicrohttpd), cli_serve_api.c the OpenAI JSON shapes (json-c),
 * cli_serve_engine.c the thread that owns the batch, cli_serve_metrics.c
 * the Prometheus counters, cli_serve_watch.c the header timeout.
 */
#ifndef CLI_SERVE_H
#define CLI_SERVE_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "wafer.h"

#define CLI_SRV_MAX_STOP		4
#define CLI_SRV_MAX_STOP_LEN	64
#define CLI_SRV_HIST_BUCKETS	14

/**
 * struct cli_srv_error - an OpenAI error object and its HTTP status
 * @status: HTTP status (4xx, 5xx)
 * @type: "invalid_request_error", "not_found_error", ...
 * @code: OpenAI's code ("context_length_exceeded", ...), or NULL
 * @param: the request field at fault ("": none)
 * @message: what is wrong
 */
struct cli_srv_error {
	int status;
	const char *type;
	const char *code;
	char param[64];
	char message[256];
};

enum cli_srv_state { CLI_SRV_QUEUED, CLI_SRV_RUNNING, CLI_SRV_DONE };

/**
 * struct cli_srv_lp - one token's log-probability and its alternatives
 * @token: the token
 * @prev: the token before it (its text depends on it)
 * @off: where its text starts in the choice's text
 * @lp: its natural log-probability among the device's top-k (NAN: not
 *	among them)
 * @n_top: entries in @top
 * @top: the most likely tokens there, best first, and theirs
 */
struct cli_srv_lp {
	int token;
	int prev;
	size_t off;
	double lp;
	unsigned int n_top;
	struct {
		int token;
		double lp;
	} top[WAFER_MAX_TOPK];
};

struct cli_srv;
struct cli_srv_template;
struct json_object;

/**
 * struct cli_srv_req - one completion request, shared by its connection's
 * thread and the engine; the fields after @state are guarded by srv->lock
 * @srv: the server
 * @chat: /v1/chat/completions
 * @stream: answer with server-sent events
 * @include_usage: stream_options.include_usage
 * @prompt: token ids, BOS first
 * @n_prompt: how many
 * @seq: sampling parameters for the batch
 * @stop: stop strings
 * @n_stop: how many
 * @id: the response id
 * @created: Unix time of arrival
 * @fd: the connection's socket, to notice a client gone
 * @t_arrive: CLOCK_MONOTONIC ns at arrival
 * @state: enum cli_srv_state
 * @cancel: the client is gone or the server drops it: free the slot
 * @refs: the connection's reference and the engine's
 * @slot: batch slot while running
 * @text: generated text so far (valid UTF-8)
 * @len: its bytes
 * @cap: allocated
 * @safe: bytes that can be sent (no stop string can start before)
 * @sent: bytes already sent (streaming)
 * @n_new: tokens generated
 * @finish: "stop" or "length" once done
 * @err: set when the request failed after it was accepted
 * @t_first: time of the first token
 * @t_last: time of the last
 * @cond: signalled when text arrives or the request ends
 * @next: queue link
 * @sse: streaming: events built, not yet handed to the connection
 * @sse_len: their bytes
 * @sse_off: bytes handed over
 * @role_sent: chat streaming: the role chunk went out
 * @final_sent: the stream's last event went out
 * @logprobs: answer with log-probabilities
 * @top_logprobs: and this many alternatives a token
 * @echo: completions: the prompt comes first in the text
 * @no_output: max_tokens 0 with echo: the prompt scored, nothing generated
 * @echo_text: the prompt as given (echo)
 * @echo_len: its bytes
 * @lp: the generated tokens' log-probabilities (logprobs)
 * @n_lp: how many
 * @cap_lp: allocated
 * @plp: the prompt's tokens' (echo with logprobs): plp[i] for token i + 1
 * @n_plp: how many were filled
 * @lp_sent: streaming: entries of @lp sent
 * @echo_sent: streaming: the echoed prompt went out
 * @scored: the prompt has run (its scores, @plp, are whole)
 * @finish_sent: streaming: this choice's last chunk went out
 * @n: choices (n); above 1, each is a request of @child
 * @child: the choices, batched together (n > 1)
 * @parent: the request this choice belongs to (NULL: its own)
 * @index: its index among the choices
 */
struct cli_srv_req {
	struct cli_srv *srv;
	int chat;
	int stream;
	int include_usage;
	int *prompt;
	unsigned int n_prompt;
	struct wafer_batch_seq seq;
	char stop[CLI_SRV_MAX_STOP][CLI_SRV_MAX_STOP_LEN + 1];
	unsigned int n_stop;
	char id[40];
	long long created;
	int fd;
	uint64_t t_arrive;

	int state;
	int cancel;
	int refs;
	int slot;
	char *text;
	size_t len;
	size_t cap;
	size_t safe;
	size_t sent;
	unsigned int n_new;
	const char *finish;
	struct cli_srv_error err;
	uint64_t t_first;
	uint64_t t_last;
	pthread_cond_t cond;
	struct cli_srv_req *next;
	char *sse;
	size_t sse_len;
	size_t sse_off;
	int role_sent;
	int final_sent;
	int logprobs;
	unsigned int top_logprobs;
	int echo;
	int no_output;
	char *echo_text;
	size_t echo_len;
	struct cli_srv_lp *lp;
	unsigned int n_lp;
	unsigned int cap_lp;
	struct cli_srv_lp *plp;
	unsigned int n_plp;
	unsigned int lp_sent;
	int echo_sent;
	int scored;
	int finish_sent;
	unsigned int n;
	struct cli_srv_req **child;
	struct cli_srv_req *parent;
	unsigned int index;
};

/**
 * struct cli_srv_hist - a Prometheus histogram of seconds
 * @count: observations per bucket (not cumulative)
 * @n: observations
 * @sum_ns: their sum
 */
struct cli_srv_hist {
	uint64_t count[CLI_SRV_HIST_BUCKETS + 1];
	uint64_t n;
	uint64_t sum_ns;
};

/**
 * struct cli_srv_metrics - counters (guarded by srv->lock)
 * @requests: answered requests by status class (index status / 100)
 * @rejected_full: 429s for a full queue
 * @cancelled: requests whose client went away or that the drain cut
 * @prompt_tokens: prompt tokens admitted
 * @completion_tokens: tokens generated
 * @steps: engine steps
 * @jobs: device jobs
 * @device_ns: modelled device time of those jobs
 * @engine_errors: states the engine found impossible (a failed step, a
 *	count that would wrap): the requests involved failed with 500
 * @ttft: time to first token
 * @tpot: time per output token after the first
 */
struct cli_srv_metrics {
	uint64_t requests[6];
	uint64_t rejected_full;
	uint64_t cancelled;
	uint64_t engine_errors;
	uint64_t prompt_tokens;
	uint64_t completion_tokens;
	uint64_t steps;
	uint64_t jobs;
	uint64_t device_ns;
	struct cli_srv_hist ttft;
	struct cli_srv_hist tpot;
};

struct cli_srv_conn;

/**
 * struct cli_srv_watch - the header timeout's watchdog (cli_serve_watch.c)
 * @lock: guards everything below and the connections' records
 * @cond: wakes the thread to stop
 * @thr: the thread
 * @head: the connections followed
 * @header_ns: --header-timeout
 * @idle_ns: --idle-timeout (a kept-alive connection's next request gets it too)
 * @timeouts: connections cut
 * @stop: the thread returns
 */
struct cli_srv_watch {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thr;
	struct cli_srv_conn *head;
	uint64_t header_ns;
	uint64_t idle_ns;
	uint64_t timeouts;
	int stop;
};

/**
 * struct cli_srv - the server
 * @model_id: the name clients give as "model"
 * @created: Unix time the model was loaded
 * @tok: tokenizer
 * @dev: device
 * @batch: the batch (the engine thread's alone)
 * @ctx_len: positions per sequence
 * @max_tokens: largest max_tokens accepted
 * @slots: the batch's slots
 * @tmpl: --chat-template (NULL: story)
 * @queue_max: requests waiting for a slot at most
 * @lock: guards everything below and the requests' shared fields
 * @wake: signalled when the engine has work or must stop
 * @head: waiting requests, oldest first
 * @tail: the newest
 * @queued: how many wait
 * @running: the request in each slot
 * @admitted: queued + running
 * @open: requests begun and not yet answered (libmicrohttpd's notion: from
 *	the first headers to the response's end), any endpoint
 * @draining: SIGTERM came: new requests get 503
 * @abort_all: the drain deadline passed: the engine ends everything
 * @broken: the batch's state cannot be trusted: the engine steps no more,
 *	every request fails with 500
 * @log_ns: when the engine last wrote to stderr (its lines are rate-limited)
 * @log_dropped: lines not written since
 * @stop: the engine thread returns
 * @next_id: counter for response ids
 * @events: the engine's step events
 * @m: metrics
 * @watch: the header timeout
 */
struct cli_srv {
	char model_id[128];
	long long created;
	struct wafer_tokenizer *tok;
	struct wafer_dev *dev;
	struct wafer_batch *batch;
	unsigned int ctx_len;
	unsigned int max_tokens;
	unsigned int slots;
	const struct cli_srv_template *tmpl;
	unsigned int queue_max;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct cli_srv_req *head;
	struct cli_srv_req *tail;
	unsigned int queued;
	struct cli_srv_req **running;
	unsigned int admitted;
	unsigned int open;
	int draining;
	int abort_all;
	int broken;
	uint64_t log_ns;
	uint64_t log_dropped;
	int stop;
	uint64_t next_id;
	struct wafer_batch_event *events;
	struct cli_srv_metrics m;
	struct cli_srv_watch watch;
};

/* ---- cli_serve_api.c: OpenAI JSON shapes ---- */

/* Fills @e; returns e->status. */
int cli_srv_fail(struct cli_srv_error *e, int status, const char *type, const char *param,
	     const char *code, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/**
 * struct cli_srv_limits - what a request is checked against
 * @model_id: the name clients give as "model"
 * @tok: tokenizer
 * @ctx_len: positions per sequence
 * @max_tokens: largest max_tokens accepted
 * @slots: the batch's slots (the most choices, n)
 * @tmpl: the chat template (NULL: story)
 */
struct cli_srv_limits {
	const char *model_id;
	const struct wafer_tokenizer *tok;
	unsigned int ctx_len;
	unsigned int max_tokens;
	unsigned int slots;
	const struct cli_srv_template *tmpl;
};

/*
 * Parses and checks a request body into @r (prompt tokenised into a
 * malloc'd r->prompt, limits applied), with no server state: the fuzzer
 * calls it alone.  Returns 0, or an HTTP status with @e filled.
 */
int cli_srv_parse(const struct cli_srv_limits *l, const char *body, size_t len, int chat,
		  struct cli_srv_req *r, struct cli_srv_error *e);
/* cli_srv_parse() against @s's model and limits. */
int cli_srv_parse_request(struct cli_srv *s, const char *body, size_t len, int chat,
		      struct cli_srv_req *r, struct cli_srv_error *e);
/* malloc'd JSON texts; NULL when out of memory. */
char *cli_srv_error_json(const struct cli_srv_error *e);
char *cli_srv_models_json(const struct cli_srv *s);
/* A finished request's whole response (its choices' text, finish, logprobs, usage). */
char *cli_srv_response_json(const struct cli_srv *s, const struct cli_srv_req *r);
/*
 * A streaming chunk of @r for its choice @ch: @role for chat's first, else
 * @n bytes of @text (and @ch's log-probabilities from ch->lp_sent up to
 * @lp_to; @prompt: the echoed prompt's), or the final one with @finish, or
 * (@usage_only) the usage chunk.
 */
char *cli_srv_chunk_json(const struct cli_srv *s, const struct cli_srv_req *r,
			 const struct cli_srv_req *ch, int role, const char *text, size_t n,
			 const char *finish, int usage_only, int prompt, unsigned int lp_to);
/* The @i-th choice of @r: a child, or @r itself. */
struct cli_srv_req *cli_srv_choice(const struct cli_srv_req *r, unsigned int i);
/* GET /v1/models/{id}; POST /tokenize and /detokenize (llama-server's). */
char *cli_srv_model_json(const struct cli_srv *s);
int cli_srv_tokenize(const struct cli_srv *s, const char *body, size_t len, int detok,
		     char **out, struct cli_srv_error *e);

/* ---- cli_serve_logprobs.c ---- */

/* @token's log-probability and the @top best of @res into @out. */
void cli_srv_logprob(const struct wafer_token_result *res, int token, int prev,
		     unsigned int top, struct cli_srv_lp *out);
/* The logprobs object of @n entries of @lp (chat's shape or completions'); NULL: none. */
struct json_object *cli_srv_logprobs_json(const struct wafer_tokenizer *tok, int chat,
					  const struct cli_srv_lp *lp, unsigned int n,
					  size_t base);

/* ---- cli_serve_template.c: chat templates (wafer run -m chat's too) ---- */

/** A growing text (doubling, so many small appends cost linear time). */
struct cli_srv_text {
	char *p;
	size_t len;
	size_t cap;
};

#define CLI_SRV_TPL_PIECES	32
#define CLI_SRV_TPL_TEXT	64

enum { CLI_SRV_TPL_STORY, CLI_SRV_TPL_LLAMA2, CLI_SRV_TPL_CUSTOM };
enum { CLI_SRV_TPL_TEXT_PIECE, CLI_SRV_TPL_ROLE, CLI_SRV_TPL_CONTENT };

/**
 * struct cli_srv_tpl_piece - literal text, or where the role or content goes
 * @kind: CLI_SRV_TPL_TEXT_PIECE, _ROLE or _CONTENT
 * @len: the text's bytes
 * @text: the text
 */
struct cli_srv_tpl_piece {
	int kind;
	size_t len;
	char text[CLI_SRV_TPL_TEXT];
};

/**
 * struct cli_srv_template - a parsed chat template
 * @kind: CLI_SRV_TPL_STORY (the contents joined by a space: the caller's),
 *	_LLAMA2, or _CUSTOM (@piece)
 * @piece: [0] what each message becomes, [1] what follows them all
 * @n_pieces: how many of each
 */
struct cli_srv_template {
	int kind;
	struct cli_srv_tpl_piece piece[2][CLI_SRV_TPL_PIECES];
	unsigned int n_pieces[2];
};

/* A built-in's name or a template's text into @t; 0, or -1 with @err saying why. */
int cli_srv_template_parse(const char *src, struct cli_srv_template *t, char *err, size_t n);
/* The @n messages through @t appended to @out; 0 or -1 (out of memory). */
int cli_srv_template_apply(const struct cli_srv_template *t, const char *const *roles,
			   const struct cli_srv_text *contents, size_t n, struct cli_srv_text *out);

/* ---- cli_serve_engine.c: the batch's thread, the queue ---- */

int cli_srv_engine_start(struct cli_srv *s, pthread_t *thr);
/*
 * The micro-batches the engine keeps in flight (wafer_batch_opts
 * .micro_batches) for @m, loaded on @dev, with @slots slots: one per device
 * of a pipeline, so every device works on one; 0 (lockstep) otherwise.
 */
unsigned int cli_srv_micro_batches(struct wafer_dev *dev, const struct wafer_model *m,
				   unsigned int slots);
/* Stops and joins the engine (every request must be done). */
void cli_srv_engine_stop(struct cli_srv *s, pthread_t thr);
/* Queues @r (lock held); returns 0 or fills @e (429 full, 503 draining). */
int cli_srv_enqueue(struct cli_srv *s, struct cli_srv_req *r, struct cli_srv_error *e);
/* A new request (refs 1), or NULL. */
struct cli_srv_req *cli_srv_req_new(struct cli_srv *s);
/* Drops a reference (lock held); frees on the last. */
void cli_srv_req_put(struct cli_srv_req *r);
/* Marks @r cancelled (lock held) so its slot is freed at the next step. */
void cli_srv_req_cancel(struct cli_srv_req *r);
/* Whether @r (every choice) is done (lock held). */
int cli_srv_req_done(const struct cli_srv_req *r);
/* @r's @n choices as requests of their own, batched together (lock held); 0 or -ENOMEM. */
int cli_srv_req_split(struct cli_srv_req *r, unsigned int n);

/* ---- cli_serve_watch.c: the header timeout ---- */

int cli_srv_watch_start(struct cli_srv *s, unsigned int header_s, unsigned int idle_s);
/* After the HTTP daemon stopped. */
void cli_srv_watch_stop(struct cli_srv *s);
/* Connections cut for a request not whole in time. */
uint64_t cli_srv_watch_timeouts(struct cli_srv *s);
#ifdef MHD_VERSION
/* MHD_OPTION_NOTIFY_CONNECTION's callback (cls: the server). */
void cli_srv_watch_notify(void *cls, struct MHD_Connection *c, void **ctx,
			  enum MHD_ConnectionNotificationCode toe);
/* @c's request is whole (1), or was answered (0: the next one's clock starts). */
void cli_srv_watch_request(struct cli_srv *s, struct MHD_Connection *c, int whole);
#endif

/* ---- cli_serve_access.c: the API key, CORS, the access log ---- */

/**
 * struct cli_srv_access - who may call and what is logged (set at start)
 * @key: --api-key / --api-key-file (NULL: no key asked)
 * @key_len: its bytes
 * @open_health: GET /health needs no key
 * @open_metrics: GET /metrics needs no key
 * @origins: --allowed-origins, comma-separated ("*": any; NULL: none)
 * @log: the access log (stderr or --log-file)
 * @log_json: --log-format json: one JSON object a line
 */
struct cli_srv_access {
	char *key;
	size_t key_len;
	int open_health;
	int open_metrics;
	const char *origins;
	FILE *log;
	int log_json;
};

/**
 * struct cli_srv_log_rec - what the access log says of one request
 * @method: HTTP method
 * @path: the URL's path
 * @client: the peer's address
 * @status: the status answered (0: none)
 * @prompt_tokens: prompt tokens (completions)
 * @completion_tokens: tokens generated
 * @t_start: CLOCK_MONOTONIC ns the request began
 * @ttft_ns: time to the first token (0: none)
 */
struct cli_srv_log_rec {
	char method[16];
	char path[128];
	char client[64];
	int status;
	unsigned int prompt_tokens;
	unsigned int completion_tokens;
	uint64_t t_start;
	uint64_t ttft_ns;
};

/* Reads --api-key-file @path into @a (first line, trailing whitespace cut); 0 or -1. */
int cli_srv_key_file(struct cli_srv_access *a, const char *path);
/*
 * Whether the Authorization header value @auth (NULL: absent) carries the
 * key: "Bearer KEY", compared in time that does not depend on the key.
 */
int cli_srv_key_ok(const struct cli_srv_access *a, const char *auth);
/* Whether @origin (an Origin header) is in --allowed-origins. */
int cli_srv_origin_ok(const struct cli_srv_access *a, const char *origin);
/* One access-log line for @rec, ended at @t_end (CLOCK_MONOTONIC ns). */
void cli_srv_log_request(const struct cli_srv_access *a, const struct cli_srv_log_rec *rec,
			 uint64_t t_end);
/* A line of the server's own (libmicrohttpd's messages): "wafer serve: @what: ..." */
void cli_srv_log_msg(const struct cli_srv_access *a, const char *what, const char *fmt,
		     va_list ap);

/* ---- cli_serve_accept.c: connections to libmicrohttpd, or 503 past the limit ---- */

struct cli_srv_accept;
#ifdef MHD_VERSION
/*
 * Takes @d's listening socket and accepts on a thread of its own: below
 * @max_conn connections to @d, past it a 503 (logged through @a); 0 or -1.
 */
int cli_srv_accept_start(struct cli_srv *s, struct MHD_Daemon *d,
			 const struct cli_srv_access *a, unsigned int max_conn,
			 struct cli_srv_accept **out);
#endif
/* Stops accepting and closes the listening socket (NULL: nothing). */
void cli_srv_accept_stop(struct cli_srv_accept *x);

/* ---- cli_serve_metrics.c ---- */

void cli_srv_hist_observe(struct cli_srv_hist *h, uint64_t ns);
/* The Prometheus text of @s (lock held); malloc'd. */
char *cli_srv_metrics_text(struct cli_srv *s);

#endif /* CLI_SERVE_H */
