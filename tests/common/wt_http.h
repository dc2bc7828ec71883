/* SPDX-License-Identifier: MIT */
/*
 * wt_http.h - a `wafer serve` process for the tests and benchmarks, and
 * HTTP requests to it (libcurl), safe to use from several threads.
 */
#ifndef WT_HTTP_H
#define WT_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/**
 * struct wt_http - an answer
 * @status: HTTP status (0: none came)
 * @curl_err: libcurl's result (0: the transfer completed)
 * @body: the body, NUL-terminated (malloc'd)
 * @headers: the response's header lines as they came (malloc'd; NULL: none)
 * @len: its bytes
 * @t_first: seconds from the start to the first body byte (0: none)
 * @t_end: seconds from the start to the end
 */
struct wt_http {
	long status;
	int curl_err;
	char *body;
	char *headers;
	size_t len;
	double t_first;
	double t_end;
};

/* Once per process, before threads. */
void wt_http_init(void);
/*
 * @method @path on 127.0.0.1:@port with @body (NULL: none); the connection
 * is dropped once @abort_after body bytes came (0: read all).  Returns 0
 * when an answer (or the chosen abort) came, else -1; free with wt_http_free().
 */
int wt_http(unsigned int port, const char *method, const char *path, const char *body,
	    size_t abort_after, struct wt_http *out);
void wt_http_free(struct wt_http *r);

/* A client connection kept alive across requests (zero-initialised). */
struct wt_http_conn {
	void *curl;
};

/* wt_http() on @conn's connection (opened by the first request). */
int wt_http_on(struct wt_http_conn *conn, unsigned int port, const char *method,
	       const char *path, const char *body, size_t abort_after, struct wt_http *out);
void wt_http_close(struct wt_http_conn *conn);
/* wt_http_on() with request header lines @hdrs (NULL-terminated; NULL: none). */
int wt_http_hdrs(struct wt_http_conn *conn, unsigned int port, const char *method,
		 const char *path, const char *const *hdrs, const char *body, size_t abort_after,
		 struct wt_http *out);

/**
 * struct wt_server - a running `wafer serve`
 * @pid: its process
 * @port: the port it listens on
 * @out: its stdout
 * @start: its stdout up to and with the "listening" line (truncated)
 */
struct wt_server {
	pid_t pid;
	unsigned int port;
	FILE *out;
	char start[2048];
};

/*
 * Starts $BUILD/bin/wafer serve MODEL -z TOK --backend inproc --port 0
 * plus @extra (space-separated) and waits for its "listening" line, keeping
 * what it printed until then in @s->start.
 * Returns 0 or -1.
 */
int wt_server_start(struct wt_server *s, const char *model, const char *tok, const char *extra);
/* Reads stdout lines until one contains @what (copied to @line); 0 or -1 at EOF. */
int wt_server_wait_line(struct wt_server *s, const char *what, char *line, size_t n);
/* Sends @sig (0: none) and reaps; returns the wait status, or -1. */
int wt_server_stop(struct wt_server *s, int sig);
/* A gauge or counter of GET /metrics (no labels), or -1. */
double wt_server_metric(const struct wt_server *s, const char *name);

#endif /* WT_HTTP_H */
