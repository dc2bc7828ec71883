// SPDX-License-Identifier: MIT
/*
 * serve_soak.c - the memory of a long-running `wafer serve`: 8 clients send
 * thousands of requests of every kind (greedy and sampled, completions and
 * chat, streamed and not, stop strings, bad bodies, unknown paths, streams
 * dropped after the first event, trickled headers cut by the header
 * timeout) and the server's resident memory and open descriptors are
 * printed every tenth of the run.  It fails (exit 1) when the answers
 * were not the kinds expected, when a slot is still held at the end, or
 * when resident memory grew by more than 1 MiB from the first tenth to the
 * last (descriptors: by more than 8), i.e. a leak per request.  Not part
 * of `make test`; `make bench` runs it.
 *
 *   build/tests/bench/serve_soak [--requests N]   (default 20000)
 */
#include <dirent.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wt_http.h"
#include "wt_util.h"

#define THREADS		8
#define M		"\"model\":\"stories260K\""

/**
 * struct kind - one kind of request
 * @path: URL path
 * @body: body (NULL: GET)
 * @status: the status it must get
 * @abort_after: drop the connection after this many body bytes (0: never)
 */
struct kind {
	const char *path;
	const char *body;
	long status;
	size_t abort_after;
};

static const struct kind kinds[] = {
	{ "/v1/completions", "{" M ",\"prompt\":\"Once upon a time\",\"max_tokens\":12,"
	  "\"temperature\":0}", 200, 0 },
	{ "/v1/completions", "{" M ",\"prompt\":\"The cat\",\"max_tokens\":8,\"temperature\":0.8,"
	  "\"top_p\":0.9,\"seed\":3,\"stop\":[\" the\"]}", 200, 0 },
	{ "/v1/completions", "{" M ",\"prompt\":\"Lily\",\"max_tokens\":10,\"stream\":true,"
	  "\"stream_options\":{\"include_usage\":true}}", 200, 0 },
	{ "/v1/chat/completions", "{" M ",\"messages\":[{\"role\":\"system\",\"content\":\"x\"},"
	  "{\"role\":\"user\",\"content\":\"Once\"}],\"max_tokens\":6}", 200, 0 },
	{ "/v1/chat/completions", "{" M ",\"messages\":[{\"role\":\"user\",\"content\":\"Sue\"}],"
	  "\"max_tokens\":8,\"stream\":true}", 200, 0 },
	{ "/v1/completions", "{" M ",\"prompt\":\"Once\",\"max_tokens\":400,\"stream\":true}",
	  200, 1 },
	{ "/v1/completions", "{" M ",\"prompt\":\"caf\xe9\"}", 400, 0 },
	{ "/v1/completions", "{" M ",\"prompt\":", 400, 0 },
	{ "/v1/completions", "{\"model\":\"gpt-9\",\"prompt\":\"a\"}", 404, 0 },
	{ "/v1/nothing", NULL, 404, 0 },
	{ "/metrics", NULL, 200, 0 },
};
#define N_KINDS	(sizeof(kinds) / sizeof(kinds[0]))

static unsigned int port, total = 20000, next, bad, done;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* A connection that sends half a request line and stops: the header timeout cuts it. */
static void stall(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	char c;

	if (fd >= 0 && !connect(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    send(fd, "POST /v1/comp", 13, MSG_NOSIGNAL) == 13)
		(void)!recv(fd, &c, 1, 0);	/* returns when the server closes */
	if (fd >= 0)
		close(fd);
}

static void *client(void *arg)
{
	const struct kind *k;
	struct wt_http r;
	unsigned int i;
	int ok;

	(void)arg;
	for (;;) {
		pthread_mutex_lock(&lock);
		i = next++;
		pthread_mutex_unlock(&lock);
		if (i >= total)
			return NULL;
		if (i % 500 == 499) {
			stall();
			ok = 1;
		} else {
			k = &kinds[i % N_KINDS];
			ok = !wt_http(port, k->body ? "POST" : "GET", k->path, k->body,
				      k->abort_after, &r) && r.status == k->status;
			if (!ok)
				fprintf(stderr, "request %u (%s): status %ld\n", i, k->path, r.status);
			wt_http_free(&r);
		}
		pthread_mutex_lock(&lock);
		bad += !ok;
		done++;
		pthread_mutex_unlock(&lock);
	}
}

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

static int fds(pid_t pid)
{
	char path[64];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	char *model = wt_model_path("stories260K.bin") ? strdup(wt_model_path("stories260K.bin")) :
		NULL;
	char *tok = wt_model_path("tok512.bin") ? strdup(wt_model_path("tok512.bin")) : NULL;
	long rss_first = -1, rss_last = -1, rss;
	int fd_first = -1, fd_last = -1, i, st, fail = 0;
	unsigned int tenth = 0, d;
	pthread_t t[THREADS];
	struct wt_server s;
	double t0;

	signal(SIGPIPE, SIG_IGN);
	for (i = 1; i + 1 < argc; i += 2)
		if (!strcmp(argv[i], "--requests"))
			total = (unsigned int)atoi(argv[i + 1]);
	if (!model || !tok || total < 100) {
		fprintf(stderr, "serve_soak: need the shared model and --requests >= 100\n");
		return 1;
	}
	wt_http_init();
	if (wt_server_start(&s, model, tok, "--slots 8 --queue 64 --header-timeout 1")) {
		fprintf(stderr, "serve_soak: the server did not start\n");
		return 1;
	}
	port = s.port;
	printf("serve_soak: %u requests of %zu kinds (and a stalled connection every 500) "
	       "from %d threads\n%10s %8s %10s %5s\n", total, N_KINDS, THREADS, "requests", "s",
	       "RSS KiB", "fds");
	t0 = wt_now();
	for (i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, client, NULL);
	while (tenth < 10) {
		pthread_mutex_lock(&lock);
		d = done;
		pthread_mutex_unlock(&lock);
		if (d < total / 10 * (tenth + 1)) {
			usleep(20000);
			continue;
		}
		tenth++;
		rss = rss_kib(s.pid);
		fd_last = fds(s.pid);
		rss_last = rss;
		if (tenth == 1) {
			rss_first = rss;
			fd_first = fd_last;
		}
		printf("%10u %8.1f %10ld %5d\n", d, wt_now() - t0, rss, fd_last);
		fflush(stdout);
	}
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	if (bad) {
		printf("FAIL: %u answers not the status their kind gets\n", bad);
		fail = 1;
	}
	if (wt_server_metric(&s, "wafer_serve_slots_in_use") != 0) {
		printf("FAIL: a slot is still held after the soak\n");
		fail = 1;
	}
	printf("resident memory %ld -> %ld KiB (%+ld), descriptors %d -> %d; "
	       "%.0f connections cut by the header timeout\n", rss_first, rss_last,
	       rss_last - rss_first, fd_first, fd_last,
	       wt_server_metric(&s, "wafer_serve_header_timeouts_total"));
	if (rss_first < 0 || rss_last - rss_first > 1024 || fd_last - fd_first > 8) {
		printf("FAIL: the server's memory or descriptors grew over the soak\n");
		fail = 1;
	}
	st = wt_server_stop(&s, SIGTERM);
	free(model);
	free(tok);
	return fail || !WIFEXITED(st) || WEXITSTATUS(st);
}
