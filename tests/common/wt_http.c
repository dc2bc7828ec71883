// SPDX-License-Identifier: MIT
/* wt_http.c - see wt_http.h */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <curl/curl.h>

#include "wt_http.h"

void wt_http_init(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

struct sink {
	struct wt_http *r;
	size_t abort_after;
	double t0;
	int aborted;
};

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static size_t on_data(char *p, size_t size, size_t nmemb, void *arg)
{
	struct sink *k = arg;
	size_t n = size * nmemb;
	char *b = realloc(k->r->body, k->r->len + n + 1);

	if (!b)
		return 0;
	if (!k->r->len && n)
		k->r->t_first = now() - k->t0;
	memcpy(b + k->r->len, p, n);
	k->r->body = b;
	k->r->len += n;
	b[k->r->len] = '\0';
	if (k->abort_after && k->r->len >= k->abort_after) {
		k->aborted = 1;
		return 0;	/* libcurl drops the connection */
	}
	return n;
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *arg)
{
	struct wt_http *r = arg;
	size_t n = size * nmemb, have = r->headers ? strlen(r->headers) : 0;
	char *b = realloc(r->headers, have + n + 1);

	if (!b)
		return 0;
	memcpy(b + have, p, n);
	b[have + n] = '\0';
	r->headers = b;
	return n;
}

int wt_http_on(struct wt_http_conn *conn, unsigned int port, const char *method,
	       const char *path, const char *body, size_t abort_after, struct wt_http *out)
{
	return wt_http_hdrs(conn, port, method, path, NULL, body, abort_after, out);
}

int wt_http_hdrs(struct wt_http_conn *conn, unsigned int port, const char *method,
		 const char *path, const char *const *hdrs, const char *body, size_t abort_after,
		 struct wt_http *out)
{
	struct sink k = { .r = out, .abort_after = abort_after };
	struct curl_slist *h = NULL;
	char url[256];
	CURL *c = conn->curl;
	CURLcode rc;

	memset(out, 0, sizeof(*out));
	out->body = calloc(1, 1);
	if (!c)
		c = conn->curl = curl_easy_init();
	if (!c || !out->body)
		return -1;
	curl_easy_reset(c);	/* options go, the connection stays */
	snprintf(url, sizeof(url), "http://127.0.0.1:%u%s", port, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &k);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, out);
	while (hdrs && *hdrs)
		h = curl_slist_append(h, *hdrs++);
	if (body) {
		h = curl_slist_append(h, "Content-Type: application/json");
		/* No "Expect: 100-continue" (libcurl waits up to 1 s for it on big bodies). */
		h = curl_slist_append(h, "Expect:");
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	}
	if (h)
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	k.t0 = now();
	rc = curl_easy_perform(c);
	out->t_end = now() - k.t0;
	out->curl_err = (int)rc;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
	curl_slist_free_all(h);
	return rc == CURLE_OK || (k.aborted && rc == CURLE_WRITE_ERROR) ? 0 : -1;
}

void wt_http_close(struct wt_http_conn *conn)
{
	if (conn->curl)
		curl_easy_cleanup(conn->curl);
	conn->curl = NULL;
}

int wt_http(unsigned int port, const char *method, const char *path, const char *body,
	    size_t abort_after, struct wt_http *out)
{
	struct wt_http_conn conn = { NULL };
	int ret = wt_http_on(&conn, port, method, path, body, abort_after, out);

	wt_http_close(&conn);
	return ret;
}

void wt_http_free(struct wt_http *r)
{
	free(r->body);
	r->body = NULL;
	free(r->headers);
	r->headers = NULL;
}

int wt_server_start(struct wt_server *s, const char *model, const char *tok, const char *extra)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char bin[512], *copy = strdup(extra ? extra : ""), *argv[66], *save, *w, line[512];
	int fd[2], n = 0;
	const char *p;

	if (!copy || pipe(fd))
		return -1;
	snprintf(bin, sizeof(bin), "%s/bin/wafer", build);
	argv[n++] = bin;
	argv[n++] = "serve";
	argv[n++] = (char *)model;
	argv[n++] = "-z";
	argv[n++] = (char *)tok;
	argv[n++] = "--backend";
	argv[n++] = "inproc";
	argv[n++] = "--port";
	argv[n++] = "0";
	for (w = strtok_r(copy, " ", &save); w && n < 62; w = strtok_r(NULL, " ", &save))
		argv[n++] = w;
	/* The access log only where a test reads it. */
	if (!strstr(extra ? extra : "", "--log-file") && n < 62) {
		argv[n++] = "--log-file";
		argv[n++] = "/dev/null";
	}
	argv[n] = NULL;
	s->pid = fork();
	if (s->pid < 0)
		return -1;
	if (!s->pid) {
		dup2(fd[1], STDOUT_FILENO);
		close(fd[0]);
		close(fd[1]);
		execv(bin, argv);
		_exit(127);
	}
	free(copy);
	close(fd[1]);
	s->out = fdopen(fd[0], "r");
	s->start[0] = line[0] = '\0';
	while (s->out && fgets(line, (int)sizeof(line), s->out)) {
		if (strlen(s->start) + strlen(line) < sizeof(s->start))
			strcat(s->start, line);
		if (strstr(line, "listening on"))
			break;
	}
	if (!s->out || !strstr(line, "listening on")) {
		wt_server_stop(s, SIGKILL);
		return -1;
	}
	p = strrchr(line, ':');
	s->port = p ? (unsigned int)atoi(p + 1) : 0;
	return s->port ? 0 : -1;
}

int wt_server_wait_line(struct wt_server *s, const char *what, char *line, size_t n)
{
	while (fgets(line, (int)n, s->out))
		if (strstr(line, what))
			return 0;
	return -1;
}

int wt_server_stop(struct wt_server *s, int sig)
{
	int st;

	if (s->pid <= 0)
		return -1;
	if (sig)
		kill(s->pid, sig);
	if (waitpid(s->pid, &st, 0) != s->pid)
		st = -1;
	s->pid = 0;
	if (s->out)
		fclose(s->out);
	s->out = NULL;
	return st;
}

double wt_server_metric(const struct wt_server *s, const char *name)
{
	struct wt_http r;
	double v = -1;
	size_t n = strlen(name);
	char *p;

	if (wt_http(s->port, "GET", "/metrics", NULL, 0, &r) || r.status != 200) {
		wt_http_free(&r);
		return -1;
	}
	for (p = r.body; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, name, n) && p[n] == ' ') {
			v = strtod(p + n + 1, NULL);
			break;
		}
	wt_http_free(&r);
	return v;
}
