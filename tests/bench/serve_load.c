// SPDX-License-Identifier: MIT
/*
 * serve_load.c - a load generator for `wafer serve`: for 1, 4, 16 and 64
 * concurrent clients, each sending streamed greedy completions of mixed
 * prompts back to back, the aggregate generated tokens/s and the p50/p99
 * time to first token and time per output token seen by the clients.
 * Beside it, the same batch engine (wafer_batch_*) driven in this process
 * without HTTP at 16 sequences: what the server adds.  "modelled tok/s"
 * is the generated tokens over the device's modelled makespan in the run
 * (GET /metrics): what the simulated device would sustain, where the
 * in-process backend's host time is the CPU simulating it.
 *
 *   build/tests/bench/serve_load [--engine-only] [--port N] [--backend inproc|kernel]
 *                                [--requests R] [--max-tokens M]
 *
 * Without --port it starts `wafer serve --slots 64` on
 * ../shared/models/stories260K.bin with the given backend (default inproc),
 * then runs the engine alone on the same backend, so the ratio of the two
 * comes from one machine (one guest, for the kernel backend) and one run;
 * with --port it loads a server already running there and the engine-only
 * row is skipped; --engine-only prints that row alone (tests/bench/serve_vm
 * runs the server in a guest, the clients on the host, then this in the
 * guest).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "wafer.h"
#include "wt_http.h"
#include "wt_util.h"

static const char *const prompts[] = {
	"Once upon a time", "The cat", "Lily and Ben went to the park. They saw a big dog and",
	"One day, a little girl named Sue found a shiny red ball in the garden. She wanted to "
	"play with it, but her mom said it was time for lunch. Sue was sad, so",
};
#define N_PROMPTS	(sizeof(prompts) / sizeof(prompts[0]))
#define MAX_SAMPLES	4096

static unsigned int port, requests = 4, max_tokens = 64;
static enum wafer_backend backend = WAFER_BACKEND_INPROC;
static struct wt_server *srv;

/**
 * struct load - one run's clients and what they measured
 * @next: requests started
 * @total: requests to run
 * @lock: guards everything
 * @ttft: seconds to the first token, per request
 * @tpot: seconds per token after the first, per request
 * @n: samples
 * @tokens: generated tokens, all requests
 * @errors: requests that failed
 * @connect: held while a client opens its connection
 * @ready: the clients, connected, and run(): the load starts at once
 */
struct load {
	unsigned int next;
	unsigned int total;
	pthread_mutex_t lock;
	double ttft[MAX_SAMPLES];
	double tpot[MAX_SAMPLES];
	unsigned int n;
	unsigned long tokens;
	unsigned int errors;
	pthread_mutex_t connect;
	pthread_barrier_t ready;
};

/* Completion tokens from the usage chunk of a stream. */
static int usage_tokens(const char *body)
{
	const char *p = strstr(body, "\"completion_tokens\":");

	return p ? atoi(p + 20) : -1;
}

static void *client(void *arg)
{
	struct load *l = arg;
	struct wt_http_conn conn = { NULL };
	char body[1024];
	struct wt_http r;
	unsigned int i;
	int toks;

	/*
	 * Connect first, one client at a time, and keep the connection for
	 * every request: QEMU's port forward (tests/bench/serve_vm) listens
	 * with a backlog of 1, and a burst of connects there loses SYNs to
	 * 1-15 s retransmits that would count as time to first token.
	 */
	pthread_mutex_lock(&l->connect);
	wt_http_on(&conn, port, "GET", "/health", NULL, 0, &r);
	pthread_mutex_unlock(&l->connect);
	wt_http_free(&r);
	pthread_barrier_wait(&l->ready);
	for (;;) {
		pthread_mutex_lock(&l->lock);
		i = l->next++;
		pthread_mutex_unlock(&l->lock);
		if (i >= l->total)
			break;
		snprintf(body, sizeof(body), "{\"model\":\"stories260K\",\"prompt\":\"%s\","
			 "\"max_tokens\":%u,\"temperature\":0,\"stream\":true,"
			 "\"stream_options\":{\"include_usage\":true}}", prompts[i % N_PROMPTS],
			 max_tokens);
		wt_http_on(&conn, port, "POST", "/v1/completions", body, 0, &r);
		toks = r.status == 200 ? usage_tokens(r.body) : -1;
		pthread_mutex_lock(&l->lock);
		if (toks < 1) {
			/* the first failure says what it was */
			if (!l->errors++)
				fprintf(stderr, "serve_load: a request failed: HTTP %ld, curl error %d: "
					"%.200s\n", r.status, r.curl_err, r.body ? r.body : "");
		} else if (l->n < MAX_SAMPLES) {
			l->ttft[l->n] = r.t_first;
			l->tpot[l->n] = toks > 1 ? (r.t_end - r.t_first) / (toks - 1) : 0;
			l->n++;
			l->tokens += (unsigned long)toks;
		}
		pthread_mutex_unlock(&l->lock);
		wt_http_free(&r);
	}
	wt_http_close(&conn);
	return NULL;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, unsigned int n, double p)
{
	unsigned int i = (unsigned int)(p * (n - 1) + 0.5);

	return n ? v[i < n ? i : n - 1] : 0;
}

static double run(unsigned int clients)
{
	static struct load l;
	pthread_t t[64];
	unsigned int i;
	double t0, dt;

	double ms0 = wt_server_metric(srv, "wafer_serve_device_makespan_seconds_total"), ms;

	memset(&l, 0, sizeof(l));
	pthread_mutex_init(&l.lock, NULL);
	pthread_mutex_init(&l.connect, NULL);
	pthread_barrier_init(&l.ready, NULL, clients + 1);
	l.total = clients * requests;
	for (i = 0; i < clients; i++)
		pthread_create(&t[i], NULL, client, &l);
	pthread_barrier_wait(&l.ready);
	t0 = wt_now();
	for (i = 0; i < clients; i++)
		pthread_join(t[i], NULL);
	dt = wt_now() - t0;
	pthread_barrier_destroy(&l.ready);
	ms = wt_server_metric(srv, "wafer_serve_device_makespan_seconds_total") - ms0;
	qsort(l.ttft, l.n, sizeof(double), cmp);
	qsort(l.tpot, l.n, sizeof(double), cmp);
	printf("%7u %9u %10.0f %10.2f %10.2f %10.3f %10.3f %6u %14.0f\n", clients, l.n,
	       l.tokens / dt, pct(l.ttft, l.n, 0.5) * 1e3, pct(l.ttft, l.n, 0.99) * 1e3,
	       pct(l.tpot, l.n, 0.5) * 1e3, pct(l.tpot, l.n, 0.99) * 1e3, l.errors,
	       ms > 0 ? l.tokens / ms : 0);
	return l.tokens / dt;
}

/* The engine alone: 16 sequences of the same prompts in wafer_batch, no HTTP, same backend. */
static double engine_only(const char *model, const char *tok_path, unsigned int seqs)
{
	struct wafer_open_opts oo = { .backend = backend, .index = -1 };
	struct wafer_convert_opts co = { .wbits = 8, .group_size = 32 };
	struct wafer_batch_opts bo = { .slots = seqs, .ctx_len = 128 };
	struct wafer_batch_event ev[64];
	struct wafer_tokenizer *tok = NULL;
	struct wafer_model *m = NULL;
	struct wafer_batch *b = NULL;
	struct wafer_dev *dev = NULL;
	unsigned long tokens = 0;
	unsigned int started = 0, i;
	double t0, dt = 0;
	int ids[512], n, k;

	if (wafer_open(&oo, &dev) || wafer_model_load_file(dev, model, &co, &m) ||
	    wafer_tokenizer_load(tok_path, 512, &tok) || wafer_batch_create(m, &bo, &b))
		goto out;
	t0 = wt_now();
	while (started < seqs * requests || wafer_batch_active(b)) {
		while (started < seqs * requests && wafer_batch_active(b) < seqs) {
			struct wafer_batch_seq sq = { .max_new = max_tokens };

			n = wafer_tokenizer_encode(tok, prompts[started % N_PROMPTS], 1, 0, ids, 512);
			if (wafer_batch_start(b, ids, (unsigned int)n, &sq, started) < 0)
				goto out;
			started++;
		}
		k = wafer_batch_step(b, ev, 64, NULL);
		if (k < 0)
			goto out;
		for (i = 0; i < (unsigned int)k; i++)
			tokens += ev[i].token >= 0;
	}
	dt = wt_now() - t0;
out:
	wafer_batch_destroy(b);
	wafer_tokenizer_free(tok);
	wafer_model_unload(m);
	wafer_close(dev);
	return dt > 0 ? tokens / dt : 0;
}

int main(int argc, char **argv)
{
	static const unsigned int clients[] = { 1, 4, 16, 64 };
	const char *model = wt_model_path("stories260K.bin") ?
		strdup(wt_model_path("stories260K.bin")) : NULL;
	const char *tok = wt_model_path("tok512.bin") ? strdup(wt_model_path("tok512.bin")) : NULL;
	struct wt_server s = { 0 };
	double at16 = 0, eng;
	unsigned int i;
	int own = 1, engine = 0;

	for (i = 1; i < (unsigned int)argc && !strcmp(argv[i], "--engine-only"); i++)
		engine = 1;
	for (; i + 1 < (unsigned int)argc; i += 2) {
		if (!strcmp(argv[i], "--port"))
			port = (unsigned int)atoi(argv[i + 1]), own = 0;
		else if (!strcmp(argv[i], "--requests"))
			requests = (unsigned int)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--max-tokens"))
			max_tokens = (unsigned int)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--backend"))
			backend = strcmp(argv[i + 1], "kernel") ? WAFER_BACKEND_INPROC :
				  WAFER_BACKEND_KERNEL;
	}
	if ((own || engine) && (!model || !tok)) {
		fprintf(stderr, "serve_load: the shared model is missing\n");
		return 1;
	}
	if (engine) {
		printf("engine alone (wafer_batch, 16 sequences, no HTTP): %.0f tok/s\n",
		       engine_only(model, tok, 16));
		return 0;
	}
	signal(SIGPIPE, SIG_IGN);
	wt_http_init();
	if (own) {
		if (wt_server_start(&s, model, tok, backend == WAFER_BACKEND_KERNEL ?
				    "--slots 64 --ctx 128 --queue 256 --backend kernel" :
				    "--slots 64 --ctx 128 --queue 256")) {
			fprintf(stderr, "serve_load: wafer serve did not start\n");
			return 1;
		}
		port = s.port;
	}
	s.port = port;
	srv = &s;
	printf("wafer serve load: %u streamed greedy requests per client, max_tokens %u, "
	       "port %u%s\n", requests, max_tokens, port,
	       !own ? "" : backend == WAFER_BACKEND_KERNEL ?
	       " (kernel, 64 slots of 128 positions)" : " (inproc, 64 slots of 128 positions)");
	printf("%7s %9s %10s %10s %10s %10s %10s %6s %14s\n", "clients", "requests", "tok/s",
	       "ttft p50ms", "ttft p99ms", "tpot p50ms", "tpot p99ms", "errors",
	       "modelled tok/s");
	for (i = 0; i < sizeof(clients) / sizeof(clients[0]); i++) {
		double v = run(clients[i]);

		if (clients[i] == 16)
			at16 = v;
	}
	if (own) {
		wt_server_stop(&s, SIGTERM);
		eng = engine_only(model, tok, 16);
		printf("engine alone (wafer_batch, 16 sequences, no HTTP): %.0f tok/s; "
		       "the server at 16 clients: %.2fx of it\n", eng, eng > 0 ? at16 / eng : 0);
	}
	return 0;
}
