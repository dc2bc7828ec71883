// SPDX-License-Identifier: MIT
/*
 * wafer serve: an OpenAI-compatible HTTP server over one model (libmicrohttpd,
 * a thread per connection).  A connection's thread parses its request and
 * queues it for the engine thread, then waits for text: all of it (JSON
 * response) or as it comes (server-sent events).  While waiting it watches
 * its socket, so a client that goes away frees its slot at the next step.
 * SIGTERM/SIGINT: stop accepting, let in-flight requests finish until the
 * drain deadline, end the rest with 503, exit 0.
 */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "cli.h"
#include "cli_serve.h"
#include "cli_serve_web.h"

/* How often a waiting connection looks at its socket. */
#define WATCH_MS	50

/**
 * struct serve_args - parsed command line
 * @model: checkpoint path
 * @tokenizer: tokenizer path
 * @host: address to listen on
 * @port: TCP port (0: any free one, printed)
 * @slots: sequences in the batch
 * @queue: requests waiting for a slot at most
 * @ctx_len: positions per sequence (0: the model's)
 * @chunk: prompt tokens per sequence per step
 * @max_tokens: largest max_tokens (0: the context)
 * @max_body: largest request body, bytes
 * @max_conn: connections at once
 * @idle_timeout: seconds a connection may stay silent
 * @header_timeout: seconds a request may take to arrive whole
 * @drain: seconds SIGTERM waits for in-flight requests
 * @api_key: --api-key
 * @api_key_file: --api-key-file
 * @open_endpoints: --open-endpoints (NULL: health,metrics)
 * @origins: --allowed-origins
 * @log_file: --log-file (NULL: stderr)
 * @log_json: --log-format json
 * @tmpl: --chat-template, parsed
 * @conv: --quant
 * @devs: --backend, -d
 */
struct serve_args {
	const char *model;
	const char *tokenizer;
	const char *host;
	unsigned int port;
	unsigned int slots;
	unsigned int queue;
	unsigned int ctx_len;
	unsigned int chunk;
	unsigned int max_tokens;
	unsigned int max_body;
	unsigned int max_conn;
	unsigned int idle_timeout;
	unsigned int header_timeout;
	unsigned int drain;
	const char *api_key;
	const char *api_key_file;
	const char *open_endpoints;
	const char *origins;
	const char *log_file;
	int log_json;
	struct cli_srv_template tmpl;
	struct wafer_convert_opts conv;
	struct cli_devices devs;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: wafer serve MODEL.bin -z TOKENIZER.bin [options]\n"
		"  -z PATH              llama2.c tokenizer.bin\n"
		"  --host ADDR          address to listen on (default 127.0.0.1)\n"
		"  --port N             TCP port (default 8000; 0: a free one, printed)\n"
		"  --slots N            sequences decoded together, 1..256 (default 16)\n"
		"  --queue N            requests waiting for a slot before 429 (default 64)\n"
		"  --ctx N              positions per sequence (default: the model's)\n"
		"  --prefill-chunk N    prompt tokens per sequence per step (default 32)\n"
		"  --max-tokens N       largest max_tokens accepted (default: the context)\n"
		"  --max-body BYTES     largest request body (default 1048576)\n"
		"  --max-connections N  connections at once (default 256)\n"
		"  --idle-timeout S     seconds a connection may stay silent (default 30)\n"
		"  --header-timeout S   seconds a request's headers and body may take to\n"
		"                       arrive, however they trickle (default 10)\n"
		"  --drain-timeout S    on SIGTERM, seconds in-flight requests may finish\n"
		"                       (default 30; then they end with 503)\n"
		"  --api-key KEY        clients must send \"Authorization: Bearer KEY\"\n"
		"  --api-key-file F     the same, the key read from F's first line\n"
		"  --open-endpoints LIST  of health,metrics: GET paths that need no key\n"
		"                       (default health,metrics; none: all need it)\n"
		"  --allowed-origins LIST  comma-separated origins browsers may call from\n"
		"                       (CORS; * for any; default none)\n"
		"  --log-file PATH      the access log and server messages (default stderr)\n"
		"  --log-format text|json  a line of text or a JSON object per request\n"
		"  --chat-template T    story (default), chatml, llama2, zephyr, or a template:\n"
		"                       \"<|{role}|>\\n{content}</s>\\n{generation}<|assistant|>\\n\"\n"
		"  --quant int8|int4    weight format (default int8)\n"
		"  -d LIST              devices (as wafer run; several: the model's layers\n"
		"                       split over them, a pipeline)\n"
		"  --backend kernel|inproc  (default: kernel if a wafer device exists)\n"
		"  --chain HOST[:PORT]:DEVICES[,...]  the model's layers over `wafer node`s'\n"
		"                       devices, in order, jobs carried by RDMA links; or\n"
		"                       --chain FILE.json (as wafer run --chain)\n"
		"  --stream-weights auto|on|off  weights streamed from host memory (auto, the\n"
		"                       default: when the model does not fit in SRAM)\n");
}

enum { OPT_HOST = 256, OPT_PORT, OPT_SLOTS, OPT_QUEUE, OPT_CTX, OPT_CHUNK, OPT_MAXTOK,
       OPT_MAXBODY, OPT_MAXCONN, OPT_IDLE, OPT_HEADER, OPT_DRAIN, OPT_QUANT, OPT_BACKEND,
       OPT_HELP, OPT_STREAM, OPT_KEY, OPT_KEYFILE, OPT_OPEN, OPT_ORIGINS, OPT_LOGFILE,
       OPT_LOGFMT, OPT_TEMPLATE, OPT_CHAIN };

static const struct option long_opts[] = {
	{ "host", required_argument, NULL, OPT_HOST },
	{ "port", required_argument, NULL, OPT_PORT },
	{ "slots", required_argument, NULL, OPT_SLOTS },
	{ "queue", required_argument, NULL, OPT_QUEUE },
	{ "ctx", required_argument, NULL, OPT_CTX },
	{ "prefill-chunk", required_argument, NULL, OPT_CHUNK },
	{ "max-tokens", required_argument, NULL, OPT_MAXTOK },
	{ "max-body", required_argument, NULL, OPT_MAXBODY },
	{ "max-connections", required_argument, NULL, OPT_MAXCONN },
	{ "idle-timeout", required_argument, NULL, OPT_IDLE },
	{ "header-timeout", required_argument, NULL, OPT_HEADER },
	{ "drain-timeout", required_argument, NULL, OPT_DRAIN },
	{ "quant", required_argument, NULL, OPT_QUANT },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "stream-weights", required_argument, NULL, OPT_STREAM },
	{ "api-key", required_argument, NULL, OPT_KEY },
	{ "api-key-file", required_argument, NULL, OPT_KEYFILE },
	{ "open-endpoints", required_argument, NULL, OPT_OPEN },
	{ "allowed-origins", required_argument, NULL, OPT_ORIGINS },
	{ "log-file", required_argument, NULL, OPT_LOGFILE },
	{ "log-format", required_argument, NULL, OPT_LOGFMT },
	{ "chat-template", required_argument, NULL, OPT_TEMPLATE },
	{ "chain", required_argument, NULL, OPT_CHAIN },
	{ NULL, 0, NULL, 0 },
};

static int parse_opt(struct serve_args *a, int opt, const char *arg)
{
	int ret, bad;

	switch (opt) {
	case 'z':
		a->tokenizer = arg;
		return 0;
	case 'd':
		ret = cli_parse_list(arg, 0, 4095, a->devs.index, WAFER_PIPE_MAX_DEVICES);
		bad = ret < 0;
		if (!bad)
			a->devs.n = (unsigned int)ret;
		break;
	case OPT_HOST:
		a->host = arg;
		return 0;
	case OPT_PORT:
		bad = cli_parse_uint(arg, 0, 65535, &a->port);
		break;
	case OPT_SLOTS:
		bad = cli_parse_uint(arg, 1, 256, &a->slots);
		break;
	case OPT_QUEUE:
		bad = cli_parse_uint(arg, 0, 1 << 20, &a->queue);
		break;
	case OPT_CTX:
		bad = cli_parse_uint(arg, 1, 1 << 20, &a->ctx_len);
		break;
	case OPT_CHUNK:
		bad = cli_parse_uint(arg, 1, 4096, &a->chunk);
		break;
	case OPT_MAXTOK:
		bad = cli_parse_uint(arg, 1, 1 << 20, &a->max_tokens);
		break;
	case OPT_MAXBODY:
		bad = cli_parse_uint(arg, 64, 1 << 30, &a->max_body);
		break;
	case OPT_MAXCONN:
		bad = cli_parse_uint(arg, 1, 65536, &a->max_conn);
		break;
	case OPT_IDLE:
		bad = cli_parse_uint(arg, 1, 86400, &a->idle_timeout);
		break;
	case OPT_HEADER:
		bad = cli_parse_uint(arg, 1, 86400, &a->header_timeout);
		break;
	case OPT_DRAIN:
		bad = cli_parse_uint(arg, 0, 86400, &a->drain);
		break;
	case OPT_QUANT:
		bad = strcmp(arg, "int8") && strcmp(arg, "int4");
		a->conv.wbits = strcmp(arg, "int4") ? 8 : 4;
		break;
	case OPT_BACKEND:
		bad = cli_parse_backend(arg, &a->devs.base.backend);
		break;
	case OPT_STREAM:
		bad = cli_parse_stream(arg, &a->conv.stream);
		break;
	case OPT_KEY:
		a->api_key = arg;
		bad = !*arg;
		break;
	case OPT_KEYFILE:
		a->api_key_file = arg;
		return 0;
	case OPT_OPEN:
		a->open_endpoints = arg;
		bad = strcmp(arg, "none") && strcmp(arg, "health") && strcmp(arg, "metrics") &&
			strcmp(arg, "health,metrics") && strcmp(arg, "metrics,health");
		break;
	case OPT_ORIGINS:
		a->origins = arg;
		bad = !*arg;
		break;
	case OPT_LOGFILE:
		a->log_file = arg;
		return 0;
	case OPT_LOGFMT:
		bad = strcmp(arg, "text") && strcmp(arg, "json");
		a->log_json = !strcmp(arg, "json");
		break;
	case OPT_TEMPLATE: {
		char err[160];

		if (!cli_srv_template_parse(arg, &a->tmpl, err, sizeof(err)))
			return 0;
		fprintf(stderr, "wafer serve: --chat-template does not parse: %s\n", err);
		return 2;
	}
	case OPT_CHAIN:
		bad = cli_parse_chain(arg, &a->devs);
		break;
	case OPT_HELP:
		usage(stdout);
		exit(0);
	default:
		usage(stderr);
		return 2;
	}
	if (!bad)
		return 0;
	fprintf(stderr, "wafer serve: bad value '%s' for -%c%s%s%s\n", arg ? arg : "",
		opt < 256 ? opt : '-', opt < 256 ? "" : long_opts[opt - OPT_HOST].name,
		opt == OPT_CHAIN ? ": " : "", opt == OPT_CHAIN ? wafer_last_error() : "");
	return 2;
}

static int parse(struct serve_args *a, int argc, char **argv)
{
	int opt, ret;

	memset(a, 0, sizeof(*a));
	a->host = "127.0.0.1";
	a->port = 8000;
	a->slots = 16;
	a->queue = 64;
	a->max_body = 1 << 20;
	a->max_conn = 256;
	a->idle_timeout = 30;
	a->header_timeout = 10;
	a->drain = 30;
	a->conv.wbits = 8;
	a->conv.group_size = 32;
	a->conv.stream = WAFER_STREAM_AUTO;
	a->devs.base.index = -1;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "z:d:", long_opts, NULL)) != -1) {
		ret = parse_opt(a, opt, optarg);
		if (ret)
			return ret;
	}
	if (optind != argc - 1 || !a->tokenizer) {
		fprintf(stderr, "wafer serve: need exactly one MODEL.bin and -z TOKENIZER.bin\n");
		usage(stderr);
		return 2;
	}
	if (a->api_key && a->api_key_file) {
		fprintf(stderr, "wafer serve: --api-key and --api-key-file: give one\n");
		return 2;
	}
	a->model = argv[optind];
	if (a->devs.n && a->devs.base.backend == WAFER_BACKEND_AUTO)
		a->devs.base.backend = WAFER_BACKEND_KERNEL;
	return 0;
}

/**
 * struct conn - one HTTP request's upload
 * @body: the body so far
 * @len: its bytes
 * @too_big: it passed --max-body (the rest is dropped)
 * @stream: the streamed request it started (a reference), cancelled if
 *	libmicrohttpd ends the request other than by sending it all
 * @answered: refused on its headers: its body is dropped
 * @log: what the access log says of it
 */
struct conn {
	char *body;
	size_t len;
	int too_big;
	int answered;
	struct cli_srv_req *stream;
	struct cli_srv_log_rec log;
};

/* Set at start, read-only after. */
static unsigned int max_body;
static struct cli_srv_access access_opts;

/*
 * Connections past --max-connections are answered 503 by cli_serve_accept.c
 * and never reach libmicrohttpd; its own limit, a little above, is slack.
 */
#define CONN_SPARE	16

/*
 * The request the handler runs for: libmicrohttpd calls a connection's
 * handlers on that connection's own thread, so reply() finds here where to
 * note the status for the access log.
 */
static __thread struct conn *current;

/* The peer closed its end (EOF or error); pipelined bytes do not count. */
static int peer_gone(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP };
	char c;

	if (fd < 0 || poll(&p, 1, 0) <= 0)
		return 0;
	if (p.revents & (POLLERR | POLLHUP | POLLRDHUP | POLLNVAL))
		return 1;
	return recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

/* Waits on @r->cond for at most WATCH_MS (lock held). */
static void wait_a_bit(struct cli_srv_req *r)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_nsec += WATCH_MS * 1000000L;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(&r->cond, &r->srv->lock, &t);
}

/* CORS headers for an allowed Origin (a response varies with it either way). */
static void cors(struct MHD_Connection *c, struct MHD_Response *resp)
{
	const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");

	if (!access_opts.origins)
		return;
	MHD_add_response_header(resp, "Vary", "Origin");
	if (!cli_srv_origin_ok(&access_opts, origin))
		return;
	MHD_add_response_header(resp, "Access-Control-Allow-Origin", origin);
	MHD_add_response_header(resp, "Access-Control-Expose-Headers", "Retry-After");
}

/* Queues @resp with the CORS headers; notes @status for the access log. */
static enum MHD_Result queue(struct MHD_Connection *c, int status, struct MHD_Response *resp)
{
	cors(c, resp);
	if (current)
		current->log.status = status;
	return MHD_queue_response(c, (unsigned int)status, resp);
}

static enum MHD_Result reply(struct MHD_Connection *c, struct cli_srv *s, int status,
			     const char *type, char *body)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	if (!body) {
		status = 500;
		body = strdup("{\"error\":{\"message\":\"out of memory\",\"type\":\"server_error\","
			      "\"param\":null,\"code\":null}}");
		if (!body)
			return MHD_NO;
	}
	resp = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", type);
	if (status == 429 || status == 503)
		MHD_add_response_header(resp, "Retry-After", "1");
	if (status == 401)
		MHD_add_response_header(resp, "WWW-Authenticate", "Bearer");
	ret = queue(c, status, resp);
	MHD_destroy_response(resp);
	if (s) {
		pthread_mutex_lock(&s->lock);
		if (status >= 100 && status < 600)
			s->m.requests[status / 100]++;
		pthread_mutex_unlock(&s->lock);
	}
	return ret;
}

static enum MHD_Result reply_error(struct MHD_Connection *c, struct cli_srv *s,
				   const struct cli_srv_error *e)
{
	return reply(c, s, e->status, "application/json", cli_srv_error_json(e));
}

/* Appends one "data: ..." event to the request's stream buffer (lock held). */
static int sse(struct cli_srv_req *r, char *json)
{
	size_t n;
	char *p;

	if (!json)
		return -1;
	n = strlen(json);
	p = realloc(r->sse, r->sse_len + n + 9);
	if (!p) {
		free(json);
		return -1;
	}
	r->sse = p;
	r->sse_len += (size_t)sprintf(p + r->sse_len, "data: %s\n\n", json);
	free(json);
	return 0;
}

/* One choice's events: its role, its text and scores so far, its end (lock held). */
static int choice_events(struct cli_srv_req *r, struct cli_srv_req *ch)
{
	struct cli_srv *s = r->srv;
	unsigned int to;

	if (r->chat && !ch->role_sent) {
		ch->role_sent = 1;
		if (sse(r, cli_srv_chunk_json(s, r, ch, 1, NULL, 0, NULL, 0, 0, 0)))
			return -1;
	}
	if (r->echo && !ch->echo_sent && (ch->scored || !r->logprobs)) {
		ch->echo_sent = 1;
		if (sse(r, cli_srv_chunk_json(s, r, ch, 0, r->echo_text, r->echo_len, NULL, 0, 1,
					      ch->lp_sent)))
			return -1;
	}
	if (r->echo && !ch->echo_sent)
		return 0;
	if (ch->safe > ch->sent) {
		for (to = ch->lp_sent; to < ch->n_lp && ch->lp[to].off < ch->safe; to++)
			;
		if (sse(r, cli_srv_chunk_json(s, r, ch, 0, ch->text + ch->sent,
					      ch->safe - ch->sent, NULL, 0, 0, to)))
			return -1;
		ch->sent = ch->safe;
		ch->lp_sent = to;
	}
	if (ch->state != CLI_SRV_DONE || ch->sent < ch->len || ch->finish_sent || ch->err.status)
		return 0;
	ch->finish_sent = 1;
	return sse(r, cli_srv_chunk_json(s, r, ch, 0, NULL, 0, ch->finish, 0, 0, 0));
}

/* Turns what the engine produced into events (lock held). */
static int build_events(struct cli_srv_req *r)
{
	struct cli_srv_req *ch;
	unsigned int i, n = r->child ? r->n : 1;

	for (i = 0; i < n; i++) {
		ch = cli_srv_choice(r, i);
		if (ch->err.status && ch->state == CLI_SRV_DONE) {
			cli_srv_req_cancel(r);	/* the other choices end too */
			r->final_sent = 1;
			if (sse(r, cli_srv_error_json(&ch->err)))
				return -1;
			return sse(r, strdup("[DONE]"));
		}
		if (choice_events(r, ch))
			return -1;
	}
	for (i = 0; i < n; i++)
		if (!cli_srv_choice(r, i)->finish_sent)
			return 0;
	if (r->include_usage && sse(r, cli_srv_chunk_json(r->srv, r, r, 0, NULL, 0, NULL, 1, 0, 0)))
		return -1;
	r->final_sent = 1;
	return sse(r, strdup("[DONE]"));
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct cli_srv_req *r = cls;
	struct cli_srv *s = r->srv;
	ssize_t n;

	(void)pos;
	pthread_mutex_lock(&s->lock);
	for (;;) {
		if (r->sse_off < r->sse_len) {
			n = (ssize_t)(r->sse_len - r->sse_off < max ? r->sse_len - r->sse_off : max);
			memcpy(buf, r->sse + r->sse_off, (size_t)n);
			r->sse_off += (size_t)n;
			pthread_mutex_unlock(&s->lock);
			return n;
		}
		r->sse_len = r->sse_off = 0;
		if (r->final_sent)
			break;
		if (build_events(r))
			goto gone;
		if (r->sse_len)
			continue;
		wait_a_bit(r);
		if (!cli_srv_req_done(r) && peer_gone(r->fd))
			goto gone;
	}
	pthread_mutex_unlock(&s->lock);
	return MHD_CONTENT_READER_END_OF_STREAM;
gone:
	cli_srv_req_cancel(r);
	pthread_mutex_unlock(&s->lock);
	return MHD_CONTENT_READER_END_WITH_ERROR;
}

static void stream_free(void *cls)
{
	struct cli_srv_req *r = cls;
	struct cli_srv *s = r->srv;

	pthread_mutex_lock(&s->lock);
	cli_srv_req_cancel(r);	/* no-op once done */
	cli_srv_req_put(r);
	pthread_mutex_unlock(&s->lock);
}

/* @r's tokens and first-token time into the access log's record (lock held). */
static void note_tokens(struct conn *cn, const struct cli_srv_req *r)
{
	const struct cli_srv_req *ch;
	unsigned int i;

	cn->log.prompt_tokens = r->n_prompt;
	cn->log.completion_tokens = 0;
	cn->log.ttft_ns = 0;
	for (i = 0; i < (r->child ? r->n : 1); i++) {
		ch = cli_srv_choice(r, i);
		cn->log.completion_tokens += ch->n_new;
		if (ch->t_first > r->t_arrive &&
		    (!cn->log.ttft_ns || ch->t_first - r->t_arrive < cn->log.ttft_ns))
			cn->log.ttft_ns = ch->t_first - r->t_arrive;
	}
}

/* Room for the prompt's scores (echo with logprobs) on each choice; 0 or -1. */
static int score_room(struct cli_srv_req *r)
{
	struct cli_srv_req *ch;
	unsigned int i;

	for (i = 0; r->seq.prompt_results && i < (r->child ? r->n : 1); i++) {
		ch = cli_srv_choice(r, i);
		ch->plp = calloc(r->n_prompt, sizeof(*ch->plp));
		if (!ch->plp)
			return -1;
	}
	return 0;
}

static enum MHD_Result completion(struct MHD_Connection *c, struct cli_srv *s, struct conn *cn,
				  int chat)
{
	const union MHD_ConnectionInfo *ci;
	struct MHD_Response *resp;
	struct cli_srv_error e = { 0 };
	struct cli_srv_req *r = cli_srv_req_new(s);
	enum MHD_Result ret;
	unsigned int i;
	int status;
	char *body;

	if (!r) {
		cli_srv_fail(&e, 500, "server_error", NULL, NULL, "out of memory");
		return reply_error(c, s, &e);
	}
	if (cn->too_big) {
		cli_srv_fail(&e, 413, "invalid_request_error", NULL, "request_too_large",
			 "the request body is above %u bytes", max_body);
		goto fail;
	}
	if (cli_srv_parse_request(s, cn->body, cn->len, chat, r, &e))
		goto fail;
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	r->fd = ci ? ci->connect_fd : -1;
	r->created = (long long)time(NULL);
	r->t_arrive = cli_now_ns();
	pthread_mutex_lock(&s->lock);
	snprintf(r->id, sizeof(r->id), "%s-%llu", chat ? "chatcmpl" : "cmpl",
		 (unsigned long long)++s->next_id);
	if (!r->seq.seed)
		r->seq.seed = r->t_arrive ^ s->next_id << 32;
	if ((r->n > 1 && cli_srv_req_split(r, r->n)) || score_room(r)) {
		cli_srv_fail(&e, 500, "server_error", NULL, NULL, "out of memory");
		pthread_mutex_unlock(&s->lock);
		goto fail;
	}
	if (cli_srv_enqueue(s, r, &e)) {
		pthread_mutex_unlock(&s->lock);
		goto fail;
	}
	if (r->stream) {
		pthread_mutex_unlock(&s->lock);
		resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_read, r,
							 stream_free);
		if (!resp) {
			stream_free(r);
			return MHD_NO;
		}
		MHD_add_response_header(resp, "Content-Type", "text/event-stream");
		MHD_add_response_header(resp, "Cache-Control", "no-cache");
		ret = queue(c, MHD_HTTP_OK, resp);
		MHD_destroy_response(resp);
		pthread_mutex_lock(&s->lock);
		s->m.requests[2]++;
		if (!cn->stream) {
			r->refs++;	/* the connection's, until on_completed() */
			cn->stream = r;
		}
		pthread_mutex_unlock(&s->lock);
		return ret;
	}
	while (!cli_srv_req_done(r)) {
		wait_a_bit(r);
		if (!cli_srv_req_done(r) && peer_gone(r->fd))
			cli_srv_req_cancel(r);
	}
	e = r->err;
	for (i = 0; !e.status && r->child && i < r->n; i++)
		e = r->child[i]->err;	/* a choice that failed fails the request */
	status = e.status;
	body = status ? NULL : cli_srv_response_json(s, r);
	note_tokens(cn, r);
	cli_srv_req_put(r);
	pthread_mutex_unlock(&s->lock);
	if (status)
		return reply_error(c, s, &e);
	return reply(c, s, 200, "application/json", body);
fail:
	pthread_mutex_lock(&s->lock);
	cli_srv_req_put(r);
	pthread_mutex_unlock(&s->lock);
	return reply_error(c, s, &e);
}

/* GET /v1/models/{id}: this server's model, or 404 as OpenAI answers. */
static enum MHD_Result model(struct MHD_Connection *c, struct cli_srv *s, const char *id)
{
	struct cli_srv_error e = { 0 };

	if (!strcmp(id, s->model_id))
		return reply(c, NULL, 200, "application/json", cli_srv_model_json(s));
	cli_srv_fail(&e, 404, "invalid_request_error", "model", "model_not_found",
		     "The model '%.100s' does not exist; this server serves '%s'", id, s->model_id);
	return reply_error(c, NULL, &e);
}

/* POST /tokenize, /detokenize (llama-server's). */
static enum MHD_Result tokenize(struct MHD_Connection *c, struct cli_srv *s, struct conn *cn,
				int detok)
{
	struct cli_srv_error e = { 0 };
	char *out;

	if (cn->too_big)
		cli_srv_fail(&e, 413, "invalid_request_error", NULL, "request_too_large",
			     "the request body is above %u bytes", max_body);
	else if (!cli_srv_tokenize(s, cn->body, cn->len, detok, &out, &e))
		return reply(c, NULL, 200, "application/json", out);
	return reply_error(c, NULL, &e);
}

static enum MHD_Result route(struct MHD_Connection *c, struct cli_srv *s, struct conn *cn,
			     const char *url, const char *method)
{
	int get = !strcmp(method, "GET"), post = !strcmp(method, "POST");
	struct cli_srv_error e = { 0 };
	char *body;
	int draining;

	if (!strcmp(url, "/v1/completions") || !strcmp(url, "/v1/chat/completions")) {
		if (post)
			return completion(c, s, cn, !strcmp(url, "/v1/chat/completions"));
	} else if (!strcmp(url, "/v1/models")) {
		if (get)
			return reply(c, NULL, 200, "application/json", cli_srv_models_json(s));
	} else if (!strncmp(url, "/v1/models/", 11)) {
		if (get)
			return model(c, s, url + 11);
	} else if (!strcmp(url, "/tokenize") || !strcmp(url, "/detokenize")) {
		if (post)
			return tokenize(c, s, cn, url[1] == 'd');
	} else if (!strcmp(url, "/health")) {
		if (get) {
			pthread_mutex_lock(&s->lock);
			draining = s->draining;
			pthread_mutex_unlock(&s->lock);
			return reply(c, NULL, draining ? 503 : 200, "application/json",
				     strdup(draining ? "{\"status\":\"draining\"}" :
					    "{\"status\":\"ok\"}"));
		}
	} else if (!strcmp(url, "/metrics")) {
		if (get) {
			pthread_mutex_lock(&s->lock);
			body = cli_srv_metrics_text(s);
			pthread_mutex_unlock(&s->lock);
			return reply(c, NULL, 200, "text/plain; version=0.0.4", body);
		}
	} else if (cli_srv_web_has(url)) {
		if (get)
			return cli_srv_web_reply(c, url);
	} else {
		cli_srv_fail(&e, 404, "invalid_request_error", NULL, "unknown_url",
			 "Unknown request URL: %s %.100s", method, url);
		return reply_error(c, NULL, &e);
	}
	cli_srv_fail(&e, 405, "invalid_request_error", NULL, "method_not_allowed",
		 "%s is not allowed on %.100s", method, url);
	return reply_error(c, NULL, &e);
}

/* The peer's address, for the access log. */
static void client_name(struct MHD_Connection *c, char *out, size_t n)
{
	const union MHD_ConnectionInfo *ci;
	char host[NI_MAXHOST], port[NI_MAXSERV];
	const struct sockaddr *sa;

	snprintf(out, n, "-");
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	sa = ci ? ci->client_addr : NULL;
	if (!sa || getnameinfo(sa, sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
			       sizeof(struct sockaddr_in), host, sizeof(host), port, sizeof(port),
			       NI_NUMERICHOST | NI_NUMERICSERV))
		return;
	snprintf(out, n, sa->sa_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
}

/* A CORS preflight: the allowed origin gets the methods and headers it asks for. */
static enum MHD_Result preflight(struct MHD_Connection *c, struct cli_srv *s)
{
	const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	const char *hdrs = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						       "Access-Control-Request-Headers");
	struct cli_srv_error e = { 0 };
	struct MHD_Response *resp;
	enum MHD_Result ret;

	if (origin && !cli_srv_origin_ok(&access_opts, origin)) {
		cli_srv_fail(&e, 403, "invalid_request_error", NULL, "origin_not_allowed",
			     "the origin %.100s is not in this server's --allowed-origins", origin);
		return reply_error(c, s, &e);
	}
	resp = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, "Allow", "GET, POST, OPTIONS");
	if (origin) {
		MHD_add_response_header(resp, "Access-Control-Allow-Methods", "GET, POST, OPTIONS");
		MHD_add_response_header(resp, "Access-Control-Allow-Headers",
					hdrs ? hdrs : "Authorization, Content-Type");
		MHD_add_response_header(resp, "Access-Control-Max-Age", "600");
	}
	ret = queue(c, MHD_HTTP_NO_CONTENT, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* Whether @method @url needs the API key: all but the page and the --open-endpoints. */
static int needs_key(const char *url, const char *method)
{
	if (strcmp(method, "GET"))
		return 1;
	/* The page's files hold no data; the page sends the key it is given. */
	if (cli_srv_web_has(url))
		return 0;
	return !((!strcmp(url, "/health") && access_opts.open_health) ||
		 (!strcmp(url, "/metrics") && access_opts.open_metrics));
}

/*
 * Checks a request on its headers alone, before its body is read: a CORS
 * preflight, the API key (401).  MHD_YES with *@answered 0: go on reading it.
 */
static enum MHD_Result admit(struct MHD_Connection *c, struct cli_srv *s, const char *url,
			     const char *method, int *answered)
{
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						       MHD_HTTP_HEADER_AUTHORIZATION);
	struct cli_srv_error e = { 0 };

	*answered = 1;
	if (!strcmp(method, "OPTIONS"))
		return preflight(c, s);
	if (needs_key(url, method) && !cli_srv_key_ok(&access_opts, auth)) {
		cli_srv_fail(&e, 401, "invalid_request_error", NULL, "invalid_api_key",
			     auth ? "Incorrect API key provided: give it as \"Authorization: "
			     "Bearer KEY\"" : "You didn't provide an API key: give it as "
			     "\"Authorization: Bearer KEY\"");
		return reply_error(c, s, &e);
	}
	*answered = 0;
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload, size_t *upload_size, void **con_cls)
{
	struct cli_srv *s = cls;
	struct conn *cn = *con_cls;
	enum MHD_Result ret;
	const char *cl;
	int answered;
	char *p;

	(void)version;
	if (!cn) {
		cn = calloc(1, sizeof(*cn));
		if (!cn)
			return MHD_NO;
		*con_cls = cn;
		pthread_mutex_lock(&s->lock);
		s->open++;
		pthread_mutex_unlock(&s->lock);
		cn->log.t_start = cli_now_ns();
		snprintf(cn->log.method, sizeof(cn->log.method), "%s", method);
		snprintf(cn->log.path, sizeof(cn->log.path), "%s", url);
		client_name(c, cn->log.client, sizeof(cn->log.client));
		cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (cl && strtoull(cl, NULL, 10) > max_body)
			cn->too_big = 1;
		current = cn;
		ret = admit(c, s, url, method, &answered);
		current = NULL;
		cn->answered = answered;
		if (answered)
			cli_srv_watch_request(s, c, 1);
		return ret;
	}
	if (cn->answered) {
		*upload_size = 0;
		return MHD_YES;
	}
	if (*upload_size) {
		if (!cn->too_big && cn->len + *upload_size > max_body)
			cn->too_big = 1;
		if (!cn->too_big) {
			p = realloc(cn->body, cn->len + *upload_size + 1);
			if (!p)
				return MHD_NO;
			cn->body = p;
			memcpy(p + cn->len, upload, *upload_size);
			cn->len += *upload_size;
			p[cn->len] = '\0';
		}
		*upload_size = 0;
		return MHD_YES;
	}
	cli_srv_watch_request(s, c, 1);
	current = cn;
	ret = route(c, s, cn, url, method);
	current = NULL;
	return ret;
}


static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct conn *cn = *con_cls;
	struct cli_srv *s = cls;

	cli_srv_watch_request(cls, c, 0);
	if (cn) {
		free(cn->body);
		*con_cls = NULL;
		pthread_mutex_lock(&s->lock);
		/* the client left or a write failed: stop generating for it */
		if (cn->stream && toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
			cli_srv_req_cancel(cn->stream);
		if (cn->stream)
			note_tokens(cn, cn->stream);
		cli_srv_req_put(cn->stream);
		s->open--;
		pthread_mutex_unlock(&s->lock);
		cli_srv_log_request(&access_opts, &cn->log, cli_now_ns());
		free(cn);
	}
}

/*
 * libmicrohttpd's messages (a bind that failed, a limit hit) go to the
 * server's log, marked as its.  Not the one for a stream whose client went
 * away: that is the stream ending as meant, and the access log has it.
 */
static void http_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	if (strstr(fmt, "application error generating response"))
		return;
	cli_srv_log_msg(&access_opts, "http", fmt, ap);
}

static struct MHD_Daemon *listen_on(struct cli_srv *s, const struct serve_args *a,
				    unsigned int *port)
{
	struct addrinfo hints = { .ai_flags = AI_PASSIVE, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai;
	struct MHD_Daemon *d;
	const union MHD_DaemonInfo *di;
	char service[8];
	int err;

	snprintf(service, sizeof(service), "%u", a->port);
	err = getaddrinfo(a->host, service, &hints, &ai);
	if (err) {
		fprintf(stderr, "wafer serve: --host %s: %s\n", a->host, gai_strerror(err));
		return NULL;
	}
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
			     MHD_USE_POLL | MHD_USE_ITC | MHD_USE_ERROR_LOG |
			     (ai->ai_family == AF_INET6 ? MHD_USE_IPv6 : 0),
			     0, NULL, NULL, on_request, s,
			     MHD_OPTION_EXTERNAL_LOGGER, http_log, NULL,
			     MHD_OPTION_SOCK_ADDR, ai->ai_addr,
			     MHD_OPTION_CONNECTION_LIMIT, a->max_conn + CONN_SPARE,
			     MHD_OPTION_CONNECTION_TIMEOUT, a->idle_timeout,
			     MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)64 * 1024,
			     MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
			     MHD_OPTION_NOTIFY_CONNECTION, cli_srv_watch_notify, s,
			     MHD_OPTION_END);
	freeaddrinfo(ai);
	if (!d) {
		fprintf(stderr, "wafer serve: cannot listen on %s port %u\n", a->host, a->port);
		return NULL;
	}
	di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
	*port = di ? di->port : a->port;
	return d;
}

/*
 * SIGTERM: refuse new work, wait for in-flight requests, cut what is left.
 * A request is over when its response has been sent (s->open), which is
 * after the engine let it go (s->admitted): stopping the daemon in between
 * would cut answers already made.
 */
static void drain(struct cli_srv *s, struct cli_srv_accept *acc, unsigned int seconds)
{
	uint64_t deadline = cli_now_ns() + (uint64_t)seconds * 1000000000ull;
	unsigned int left, open;

	pthread_mutex_lock(&s->lock);
	s->draining = 1;
	left = s->admitted;
	pthread_mutex_unlock(&s->lock);
	cli_srv_accept_stop(acc);
	printf("wafer serve: draining: %u requests in flight, %u s to finish\n", left, seconds);
	fflush(stdout);
	for (;;) {
		pthread_mutex_lock(&s->lock);
		left = s->admitted;
		open = s->open;
		if (left && cli_now_ns() >= deadline && !s->abort_all) {
			s->abort_all = 1;
			pthread_cond_signal(&s->wake);
			printf("wafer serve: drain deadline: ending %u requests with 503\n", left);
			fflush(stdout);
		}
		pthread_mutex_unlock(&s->lock);
		/* Past the deadline, answers still being sent get one more second. */
		if (!left && (!open || cli_now_ns() >= deadline + 1000000000ull))
			break;
		usleep(10000);
	}
}

static int fail(const char *what)
{
	fprintf(stderr, "wafer serve: %s: %s\n", what, wafer_last_error());
	return 1;
}

static void model_name(char *out, size_t n, const char *path)
{
	const char *b = strrchr(path, '/');
	size_t len;

	b = b ? b + 1 : path;
	len = strlen(b);
	if (len > 4 && !strcmp(b + len - 4, ".bin"))
		len -= 4;
	snprintf(out, n, "%.*s", (int)len, b);
}

/* Which layers sit on which device: a pipeline's members, in order. */
static void print_layout(const struct wafer_model *m)
{
	unsigned int n = wafer_model_parts(m);

	printf("wafer serve: the model's %u layers over %u device%s:\n",
	       wafer_model_get_info(m)->n_layers, n, n == 1 ? "" : "s");
	cli_print_parts(m, stdout);
}

/* The device, the model, the tokenizer and the batch the server runs on. */
static int serve_setup(const struct serve_args *a, struct cli_srv *s, struct wafer_model **model)
{
	struct wafer_batch_opts bo = { .slots = a->slots, .ctx_len = a->ctx_len,
				       .prefill_chunk = a->chunk };

	if (cli_open(&a->devs, &s->dev))
		return fail("opening the device");
	if (wafer_model_load_file(s->dev, a->model, &a->conv, model))
		return fail("loading the model");
	if (wafer_model_get_info(*model)->weights_streamed)
		cli_print_stream(wafer_model_get_info(*model), stderr);
	if (wafer_tokenizer_load(a->tokenizer, wafer_model_get_info(*model)->vocab_size, &s->tok))
		return fail("loading the tokenizer");
	bo.micro_batches = cli_srv_micro_batches(s->dev, *model, a->slots);
	if (wafer_batch_create(*model, &bo, &s->batch))
		return fail("creating the batch");
	if (bo.micro_batches > 1)
		printf("wafer serve: %u micro-batches kept in flight, one per device\n",
		       bo.micro_batches);
	model_name(s->model_id, sizeof(s->model_id), a->model);
	s->created = (long long)time(NULL);
	s->ctx_len = wafer_batch_ctx_len(s->batch);
	s->max_tokens = a->max_tokens ? a->max_tokens : s->ctx_len;
	s->slots = a->slots;
	s->tmpl = &a->tmpl;
	s->queue_max = a->queue;
	s->running = calloc(a->slots, sizeof(*s->running));
	if (!s->running)
		return fail("allocating");
	return 0;
}

/* The engine, the watchdog and the HTTP daemon, until SIGTERM/SIGINT and the drain. */
static int serve_run(const struct serve_args *a, struct cli_srv *s,
		     const struct wafer_model *model)
{
	struct cli_srv_accept *acc;
	struct MHD_Daemon *d;
	unsigned int port;
	pthread_t engine;
	sigset_t sigs;
	int sig;

	/* Every thread started from here on leaves these signals to sigwait(). */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (cli_srv_engine_start(s, &engine))
		return fail("starting the engine");
	if (cli_srv_watch_start(s, a->header_timeout, a->idle_timeout)) {
		cli_srv_engine_stop(s, engine);
		return fail("starting the header watchdog");
	}
	d = listen_on(s, a, &port);
	if (d && cli_srv_accept_start(s, d, &access_opts, a->max_conn, &acc)) {
		fprintf(stderr, "wafer serve: cannot start accepting connections\n");
		MHD_stop_daemon(d);
		d = NULL;
	}
	if (!d) {
		cli_srv_watch_stop(s);
		cli_srv_engine_stop(s, engine);
		return 1;
	}
	print_layout(model);
	printf("wafer serve: model %s (%s backend), %u slots x %u positions, queue %u; "
	       "listening on http://%s:%u\n", s->model_id, wafer_backend_name(s->dev),
	       a->slots, s->ctx_len, a->queue, a->host, port);
	fflush(stdout);
	sigwait(&sigs, &sig);
	drain(s, acc, a->drain);
	cli_srv_engine_stop(s, engine);
	MHD_stop_daemon(d);
	cli_srv_watch_stop(s);
	printf("wafer serve: stopped (%s)\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	fflush(stdout);
	return 0;
}

/* The key, the open endpoints, the origins and the log, from the command line. */
static int access_setup(const struct serve_args *a)
{
	const char *open = a->open_endpoints ? a->open_endpoints : "health,metrics";

	access_opts.open_health = !!strstr(open, "health");
	access_opts.open_metrics = !!strstr(open, "metrics");
	access_opts.origins = a->origins;
	access_opts.log_json = a->log_json;
	access_opts.log = stderr;
	if (a->api_key) {
		access_opts.key = strdup(a->api_key);
		access_opts.key_len = strlen(a->api_key);
		if (!access_opts.key)
			return -1;
	} else if (a->api_key_file && cli_srv_key_file(&access_opts, a->api_key_file)) {
		return -1;
	}
	if (a->log_file) {
		access_opts.log = fopen(a->log_file, "a");
		if (!access_opts.log) {
			fprintf(stderr, "wafer serve: --log-file %s: %m\n", a->log_file);
			return -1;
		}
	}
	return 0;
}

int cli_cmd_serve(int argc, char **argv)
{
	struct wafer_model *model = NULL;
	struct cli_srv s = { 0 };
	struct serve_args a;
	int ret = parse(&a, argc, argv);

	if (ret)
		return ret;
	pthread_mutex_init(&s.lock, NULL);
	pthread_cond_init(&s.wake, NULL);
	max_body = a.max_body;
	if (access_setup(&a)) {
		ret = 1;
		goto out;
	}
	ret = serve_setup(&a, &s, &model) || serve_run(&a, &s, model);
	wafer_batch_destroy(s.batch);
	wafer_tokenizer_free(s.tok);
	wafer_model_unload(model);
	wafer_close(s.dev);
	free(s.running);
out:
	free(access_opts.key);
	if (access_opts.log && access_opts.log != stderr)
		fclose(access_opts.log);
	pthread_cond_destroy(&s.wake);
	pthread_mutex_destroy(&s.lock);
	return ret;
}
