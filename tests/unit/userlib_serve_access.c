// SPDX-License-Identifier: MIT
/*
 * `wafer serve --backend inproc`: who may call it and what it logs.  The API
 * key (--api-key and --api-key-file: none, a wrong one, one in the wrong
 * header, each 401 with an OpenAI error object; /health and /metrics open
 * unless --open-endpoints none), CORS (a preflight from an allowed origin
 * and from another; the headers on an answer), the access log (a line per
 * request, as text and as JSON), 503 with Retry-After past
 * --max-connections (for every one of a flood, never a reset, with the
 * server's descriptors bounded meanwhile), Retry-After on 429, and the
 * server living on.
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <json-c/json.h>

#include "wt_http.h"
#include "wt_util.h"

#define MODEL_ID	"stories260K"
#define KEY		"k3y-with-some-length"
#define C		"/v1/completions"
#define BODY		"{\"model\":\"" MODEL_ID "\",\"prompt\":\"Once\",\"max_tokens\":3," \
			"\"temperature\":0}"

static const char *model, *tokpath;

/* @method @path with the header lines @h (NULL-terminated). */
static long ask(unsigned int port, const char *method, const char *path, const char *const *h,
		const char *body, struct wt_http *r)
{
	struct wt_http_conn conn = { NULL };

	wt_http_hdrs(&conn, port, method, path, h, body, 0, r);
	wt_http_close(&conn);
	return r->status;
}

/* The answer is {"error": {...}} with this code. */
static int error_code(const char *body, const char *code)
{
	struct json_object *o = json_tokener_parse(body), *e, *c;
	int ok = o && json_object_object_get_ex(o, "error", &e) &&
		json_object_object_get_ex(e, "code", &c) && c &&
		!strcmp(json_object_get_string(c), code);

	json_object_put(o);
	return ok;
}

/* The header @name: @value is among @r's (case-insensitive name). */
static int has_header(const struct wt_http *r, const char *name, const char *value)
{
	char want[256];
	const char *p;

	snprintf(want, sizeof(want), "%s: %s\r\n", name, value);
	for (p = r->headers; p && *p; p++)
		if (!strncasecmp(p, want, strlen(want)))
			return 1;
	return 0;
}

static void key_checks(const char *extra, const char *how)
{
	static const char *const good[] = { "Authorization: Bearer " KEY, NULL };
	static const char *const wrong[] = { "Authorization: Bearer " KEY "x", NULL };
	static const char *const shorter[] = { "Authorization: Bearer k3y", NULL };
	static const char *const basic[] = { "Authorization: Basic " KEY, NULL };
	static const char *const other[] = { "X-Api-Key: " KEY, NULL };
	static const char *const api_key[] = { "api-key: " KEY, NULL };
	static const struct {
		const char *what;
		const char *const *h;
	} bad[] = {
		{ "no key", NULL }, { "a wrong key", wrong }, { "a prefix of the key", shorter },
		{ "the key as Basic", basic }, { "the key in X-Api-Key", other },
		{ "the key in api-key", api_key },
	};
	struct wt_server s;
	struct wt_http r;
	unsigned int i;
	int st;

	if (!wt_ok(!wt_server_start(&s, model, tokpath, extra), "a server with %s starts", how))
		return;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		st = (int)ask(s.port, "POST", C, bad[i].h, BODY, &r);
		if (!wt_ok(st == 401 && error_code(r.body, "invalid_api_key") &&
			   has_header(&r, "WWW-Authenticate", "Bearer"),
			   "%s: %s -> 401 invalid_api_key", how, bad[i].what))
			wt_diag("%d %s", st, r.body);
		wt_http_free(&r);
		st = (int)ask(s.port, "GET", "/v1/models", bad[i].h, NULL, &r);
		wt_ok(st == 401, "%s: GET /v1/models with %s -> 401 (%d)", how, bad[i].what, st);
		wt_http_free(&r);
	}
	st = (int)ask(s.port, "POST", C, good, BODY, &r);
	wt_ok(st == 200 && strstr(r.body, "\"text_completion\""), "%s: the key as Bearer -> 200",
	      how);
	wt_http_free(&r);
	st = (int)ask(s.port, "GET", "/v1/models", good, NULL, &r);
	wt_ok(st == 200, "%s: GET /v1/models with the key -> 200", how);
	wt_http_free(&r);
	st = (int)ask(s.port, "GET", "/health", NULL, NULL, &r);
	wt_ok(st == 200, "%s: GET /health needs no key (%d)", how, st);
	wt_http_free(&r);
	st = (int)ask(s.port, "GET", "/metrics", NULL, NULL, &r);
	wt_ok(st == 200 && strstr(r.body, "wafer_serve_requests_total{code=\"4xx\"}"),
	      "%s: GET /metrics needs no key (%d)", how, st);
	wt_http_free(&r);
	st = (int)ask(s.port, "GET", "/", NULL, NULL, &r);
	wt_ok(st == 200 && strstr(r.body, "<html"), "%s: GET / (the page) needs no key (%d)",
	      how, st);
	wt_http_free(&r);
	st = wt_server_stop(&s, SIGTERM);
	wt_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: the server lived on and exits 0", how);
}

static void closed_endpoints(void)
{
	static const char *const good[] = { "Authorization: Bearer " KEY, NULL };
	struct wt_server s;
	struct wt_http r;
	int st;

	if (!wt_ok(!wt_server_start(&s, model, tokpath, "--api-key " KEY " --open-endpoints none"),
		   "a server with --open-endpoints none starts"))
		return;
	st = (int)ask(s.port, "GET", "/health", NULL, NULL, &r);
	wt_ok(st == 401, "--open-endpoints none: GET /health without the key -> 401 (%d)", st);
	wt_http_free(&r);
	st = (int)ask(s.port, "GET", "/metrics", NULL, NULL, &r);
	wt_ok(st == 401, "--open-endpoints none: GET /metrics without the key -> 401 (%d)", st);
	wt_http_free(&r);
	st = (int)ask(s.port, "GET", "/metrics", good, NULL, &r);
	wt_ok(st == 200, "--open-endpoints none: GET /metrics with it -> 200 (%d)", st);
	wt_http_free(&r);
	wt_server_stop(&s, SIGTERM);
}

static void key_args(void)
{
	char out[4096], err[4096], cmd[2048];
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	int st;

	snprintf(cmd, sizeof(cmd), "%s/bin/wafer serve %s -z %s --backend inproc --port 0 "
		 "--api-key-file /nonexistent/key", build, model, tokpath);
	st = wt_capture_err(cmd, out, err, sizeof(out));
	wt_ok(st != 0 && strstr(err, "--api-key-file /nonexistent/key"),
	      "--api-key-file that cannot be read: an error naming it, no server (%d)", st);
	snprintf(cmd, sizeof(cmd), "%s/bin/wafer serve %s -z %s --backend inproc --port 0 "
		 "--api-key a --api-key-file /dev/null", build, model, tokpath);
	st = wt_capture_err(cmd, out, err, sizeof(out));
	wt_ok(WIFEXITED(st) && WEXITSTATUS(st) == 2 && strstr(err, "--api-key"),
	      "--api-key with --api-key-file: exit 2 (%d)", st);
	snprintf(cmd, sizeof(cmd), "%s/bin/wafer serve %s -z %s --backend inproc --port 0 "
		 "--chat-template '<{role}>{content}{oops}'", build, model, tokpath);
	st = wt_capture_err(cmd, out, err, sizeof(out));
	wt_ok(WIFEXITED(st) && WEXITSTATUS(st) == 2 &&
	      strstr(err, "--chat-template does not parse") && strstr(err, "{oops}") &&
	      strstr(err, "byte 17"),
	      "--chat-template that does not parse: exit 2 naming the placeholder and its byte");
	snprintf(cmd, sizeof(cmd), "%s/bin/wafer serve %s -z %s --backend inproc --port 0 "
		 "--chat-template nosuch", build, model, tokpath);
	st = wt_capture_err(cmd, out, err, sizeof(out));
	wt_ok(WIFEXITED(st) && WEXITSTATUS(st) == 2 && strstr(err, "no built-in template"),
	      "--chat-template of an unknown name: exit 2 listing the built-ins");
}

static void cors(void)
{
	static const char *const pre_ok[] = {
		"Origin: http://app.example:8080", "Access-Control-Request-Method: POST",
		"Access-Control-Request-Headers: authorization, content-type", NULL };
	static const char *const pre_bad[] = {
		"Origin: http://evil.example", "Access-Control-Request-Method: POST", NULL };
	static const char *const get_ok[] = { "Origin: http://app.example:8080", NULL };
	static const char *const get_bad[] = { "Origin: http://evil.example", NULL };
	struct wt_server s;
	struct wt_http r;
	int st;

	if (!wt_ok(!wt_server_start(&s, model, tokpath, "--api-key " KEY " --allowed-origins "
				    "http://other.example,http://app.example:8080"),
		   "a server with --allowed-origins starts"))
		return;
	st = (int)ask(s.port, "OPTIONS", C, pre_ok, NULL, &r);
	if (!wt_ok(st == 204 &&
		   has_header(&r, "Access-Control-Allow-Origin", "http://app.example:8080") &&
		   has_header(&r, "Access-Control-Allow-Methods", "GET, POST, OPTIONS") &&
		   has_header(&r, "Access-Control-Allow-Headers", "authorization, content-type") &&
		   has_header(&r, "Vary", "Origin"),
		   "CORS preflight from an allowed origin, without the key: 204 with the "
		   "Allow-Origin, -Methods and -Headers it asked for"))
		wt_diag("%d\n%s", st, r.headers);
	wt_http_free(&r);
	st = (int)ask(s.port, "OPTIONS", C, pre_bad, NULL, &r);
	wt_ok(st == 403 && error_code(r.body, "origin_not_allowed") &&
	      !strstr(r.headers, "Access-Control-Allow-Origin"),
	      "CORS preflight from another origin: 403 origin_not_allowed, no Allow-Origin (%d)",
	      st);
	wt_http_free(&r);
	st = (int)ask(s.port, "GET", "/health", get_ok, NULL, &r);
	wt_ok(st == 200 && has_header(&r, "Access-Control-Allow-Origin", "http://app.example:8080"),
	      "an answer to an allowed origin carries Access-Control-Allow-Origin");
	wt_http_free(&r);
	st = (int)ask(s.port, "POST", C, get_ok, BODY, &r);
	wt_ok(st == 401 && has_header(&r, "Access-Control-Allow-Origin", "http://app.example:8080"),
	      "so does a 401 (the page can read why)");
	wt_http_free(&r);
	st = (int)ask(s.port, "GET", "/health", get_bad, NULL, &r);
	wt_ok(st == 200 && !strstr(r.headers, "Access-Control-Allow-Origin"),
	      "an answer to another origin does not");
	wt_http_free(&r);
	st = wt_server_stop(&s, SIGTERM);
	wt_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "CORS: the server exits 0");
}

/* Reads @path's lines into @lines (at most @max); their count. */
static unsigned int read_lines(const char *path, char lines[][1024], unsigned int max)
{
	FILE *f = fopen(path, "r");
	unsigned int n = 0;

	while (f && n < max && fgets(lines[n], 1024, f))
		n++;
	if (f)
		fclose(f);
	return n;
}

static const char *jget(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) && v ? json_object_get_string(v) : "(null)";
}

/* Whether access-log @line is request @want's (@tokens: it generated 3 of 2). */
static int log_line_is(const char *line, int json, const char *const want[3], int tokens)
{
	int ok;

	if (json) {
		struct json_object *o = json_tokener_parse(line);

		ok = o && !strcmp(jget(o, "method"), want[0]) &&
		     !strcmp(jget(o, "path"), want[1]) &&
		     !strcmp(jget(o, "status"), want[2]) &&
		     !strncmp(jget(o, "client"), "127.0.0.1:", 10) &&
		     atoi(jget(o, "prompt_tokens")) == (tokens ? 2 : 0) &&
		     atoi(jget(o, "completion_tokens")) == (tokens ? 3 : 0) &&
		     (tokens ? atof(jget(o, "ttft_ms")) > 0 :
		      !strcmp(jget(o, "ttft_ms"), "(null)")) &&
		     atof(jget(o, "duration_ms")) > 0 && strstr(jget(o, "time"), "T");
		json_object_put(o);
	} else {
		char m[16], p[128], c[64], t[32];
		unsigned int st, pt, ct;
		double ttft, dur;

		ok = sscanf(line, "%31s %63s %15s %127s %u prompt=%u completion=%u "
			    "ttft_ms=%lf duration_ms=%lf", t, c, m, p, &st, &pt, &ct,
			    &ttft, &dur) == 9 && !strcmp(m, want[0]) &&
		     !strcmp(p, want[1]) && st == (unsigned int)atoi(want[2]) &&
		     pt == (tokens ? 2u : 0u) && ct == (tokens ? 3u : 0u) &&
		     (tokens ? ttft > 0 : ttft == 0) && dur > 0;
	}
	return ok;
}

/*
 * The access log, line by line: each request's method, path, status,
 * tokens, TTFT, duration and client, as JSON and as text.
 */
static void access_log(void)
{
	static const char *const want[][3] = {
		{ "GET", "/health", "200" }, { "POST", C, "200" }, { "POST", C, "200" },
		{ "POST", C, "400" }, { "GET", "/nowhere", "404" },
	};
	static char lines[16][1024];
	char path[] = "/tmp/wafer-log-XXXXXX", extra[256];
	struct wt_server s;
	struct wt_http r;
	unsigned int n, i, j, used, good = 0;
	int fd = mkstemp(path), json;

	if (!wt_ok(fd >= 0, "a log file"))
		return;
	close(fd);
	for (json = 1; json >= 0; json--) {
		truncate(path, 0);
		used = 0;
		snprintf(extra, sizeof(extra), "--log-file %s%s", path,
			 json ? " --log-format json" : "");
		if (!wt_ok(!wt_server_start(&s, model, tokpath, extra), "a server with %s starts",
			   extra))
			break;
		ask(s.port, "GET", "/health", NULL, NULL, &r);
		wt_http_free(&r);
		ask(s.port, "POST", C, NULL, BODY, &r);
		wt_http_free(&r);
		ask(s.port, "POST", C, NULL, "{\"model\":\"" MODEL_ID "\",\"prompt\":\"Once\","
		    "\"max_tokens\":3,\"temperature\":0,\"stream\":true}", &r);
		wt_http_free(&r);
		ask(s.port, "POST", C, NULL, "{\"model\":\"" MODEL_ID "\",\"max_tokens\":-1}", &r);
		wt_http_free(&r);
		ask(s.port, "GET", "/nowhere", NULL, NULL, &r);
		wt_http_free(&r);
		wt_server_stop(&s, SIGTERM);
		n = read_lines(path, lines, 16);
		/*
		 * A line is written when its request completes, which may be
		 * after the client has its answer: match lines to requests in
		 * any order, each line to one request.
		 */
		good = 0;
		for (j = 0; j < 5; j++) {
			for (i = 0; i < n; i++)
				if (!(used & 1u << i) && log_line_is(lines[i], json, want[j],
								    j == 1 || j == 2))
					break;
			if (i < n) {
				used |= 1u << i;
				good++;
			} else {
				wt_diag("no line for %s %s %s", want[j][0], want[j][1], want[j][2]);
			}
		}
		if (good != 5)
			for (i = 0; i < n; i++)
				wt_diag("line %u: %s", i, lines[i]);
		wt_ok(n == 5 && good == 5, "--log-format %s: a line per request, with "
		      "method, path, status, tokens, TTFT, duration and client (%u of %u good)",
		      json ? "json" : "text", good, n);
	}
	unlink(path);
}

/* libmicrohttpd's own messages go to the log, marked as the server's. */
static void http_messages(void)
{
	char path[] = "/tmp/wafer-log-XXXXXX", cmd[2048], out[4096], err[4096];
	static char lines[16][1024];
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	struct wt_server s;
	unsigned int n, i, marked = 0;
	int fd = mkstemp(path), st;

	if (!wt_ok(fd >= 0 && !wt_server_start(&s, model, tokpath, NULL),
		   "a server holding a port"))
		return;
	close(fd);
	snprintf(cmd, sizeof(cmd), "%s/bin/wafer serve %s -z %s --backend inproc --port %u "
		 "--log-file %s --log-format json", build, model, tokpath, s.port, path);
	st = wt_capture_err(cmd, out, err, sizeof(out));
	n = read_lines(path, lines, 16);
	for (i = 0; i < n; i++) {
		struct json_object *o = json_tokener_parse(lines[i]);

		marked += o && !strcmp(jget(o, "source"), "http") &&
			strstr(jget(o, "message"), "bind") != NULL;
		json_object_put(o);
	}
	wt_ok(st != 0 && marked >= 1 && !strstr(err, "Failed to bind"),
	      "a second server on the same port fails; libmicrohttpd's bind message is a JSON "
	      "line of the log (%u), not raw stderr", marked);
	if (!marked)
		wt_diag("log: %s stderr: %s", n ? lines[0] : "(empty)", err);
	wt_server_stop(&s, SIGTERM);
	unlink(path);
}

/* Descriptors process @pid has open, or -1. */
static int fds_open(pid_t pid)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

#define FLOOD		120
/* The server refuses at most this many connections at once (REJECT_MAX). */
#define REFUSING	64

/*
 * FLOOD clients past the limit, connected at once and silent: the server
 * holds at most REFUSING of them (the rest wait in the listen backlog);
 * then each sends its request and reads 503 with Retry-After, none a reset.
 */
static void connection_flood(const struct wt_server *s, const struct sockaddr_in *a)
{
	static const char req[] = "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
	int fd[FLOOD], base = fds_open(s->pid), peak, i, got503 = 0, reset = 0;
	struct timeval tv = { .tv_sec = 10 };
	char buf[512];
	ssize_t n;

	for (i = 0; i < FLOOD; i++) {
		fd[i] = socket(AF_INET, SOCK_STREAM, 0);
		setsockopt(fd[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		if (connect(fd[i], (const struct sockaddr *)a, sizeof(*a)))
			wt_diag("connect %d: %m", i);
	}
	usleep(300000);
	peak = fds_open(s->pid);
	wt_ok(base > 0 && peak <= base + REFUSING,
	      "%d silent connections past the limit: the server holds %d more descriptors "
	      "(at most %d)", FLOOD, peak - base, REFUSING);
	for (i = 0; i < FLOOD; i++)
		if (send(fd[i], req, sizeof(req) - 1, MSG_NOSIGNAL) < 0)
			reset++;
	for (i = 0; i < FLOOD; i++) {
		n = recv(fd[i], buf, sizeof(buf) - 1, 0);
		if (n < 0)
			reset++;
		buf[n > 0 ? n : 0] = '\0';
		got503 += !strncmp(buf, "HTTP/1.1 503", 12) && strstr(buf, "Retry-After: 1") &&
			  strstr(buf, "too_many_connections");
		close(fd[i]);
	}
	wt_ok(got503 == FLOOD && !reset, "every one of them gets 503, Retry-After and the "
	      "OpenAI error (%d of %d; %d resets or errors)", got503, FLOOD, reset);
}

/* Past --max-connections: 503 with Retry-After, not a reset. */
static void connection_limit(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	struct wt_server s;
	struct wt_http r;
	int fd[2], i, st;

	if (!wt_ok(!wt_server_start(&s, model, tokpath, "--max-connections 2"),
		   "a server with --max-connections 2 starts"))
		return;
	a.sin_port = htons((uint16_t)s.port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (i = 0; i < 2; i++) {
		fd[i] = socket(AF_INET, SOCK_STREAM, 0);
		connect(fd[i], (struct sockaddr *)&a, sizeof(a));
	}
	/* both held before the third comes (the server counts them as they start) */
	for (i = 0; i < 100; i++) {
		st = (int)ask(s.port, "GET", "/health", NULL, NULL, &r);
		if (st == 503)
			break;
		wt_http_free(&r);
		usleep(10000);
	}
	wt_ok(st == 503 && has_header(&r, "Retry-After", "1") &&
	      error_code(r.body, "too_many_connections"),
	      "2 connections held: a third gets 503, Retry-After and an OpenAI error (%d)", st);
	wt_http_free(&r);
	connection_flood(&s, &a);
	for (i = 0; i < 2; i++)
		close(fd[i]);
	for (i = 0; i < 100; i++) {
		st = (int)ask(s.port, "GET", "/health", NULL, NULL, &r);
		wt_http_free(&r);
		if (st == 200)
			break;
		usleep(10000);
	}
	wt_ok(st == 200, "once they close, the next gets 200");
	st = wt_server_stop(&s, SIGTERM);
	wt_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the server exits 0");
}

/* JSON path a.b (b may be an index) as a string, or "(none)". */
static const char *at(struct json_object *o, const char *a, const char *b)
{
	struct json_object *x, *y = NULL;

	if (!json_object_object_get_ex(o, a, &x) || !x)
		return "(none)";
	if (!b)
		return json_object_to_json_string_ext(x, JSON_C_TO_STRING_PLAIN);
	if (json_object_is_type(x, json_type_array))
		y = json_object_array_get_idx(x, atoi(b));
	else
		json_object_object_get_ex(x, b, &y);
	return y ? json_object_to_json_string_ext(y, JSON_C_TO_STRING_PLAIN) : "(none)";
}

/* The openai npm client (tests/unit/serve_openai_surface.cjs) with a key. */
static void openai_client(void)
{
	const char *cache = getenv("WAFER_CACHE"), *xdg = getenv("XDG_CACHE_HOME");
	static char out[1 << 16], cmd[1024], npm[512];
	struct json_object *o, *c0, *c1, *v;
	struct wt_server s;
	size_t n = 0, r;
	FILE *p;
	int rc;

	if (cache)
		snprintf(npm, sizeof(npm), "%s/npm", cache);
	else if (xdg)
		snprintf(npm, sizeof(npm), "%s/wafer/npm", xdg);
	else
		snprintf(npm, sizeof(npm), "%s/.cache/wafer/npm", getenv("HOME"));
	if (!wt_ok(!wt_server_start(&s, model, tokpath, "--api-key " KEY " --slots 4"),
		   "a server with a key and 4 slots for the openai client"))
		return;
	snprintf(cmd, sizeof(cmd), "WAFER_NPM='%s' node tests/unit/serve_openai_surface.cjs %u '"
		 KEY "' 2>&1", npm, s.port);
	p = popen(cmd, "r");
	while (p && (r = fread(out + n, 1, sizeof(out) - 1 - n, p)) > 0)
		n += r;
	out[n] = '\0';
	rc = p ? pclose(p) : -1;
	o = json_tokener_parse(out);
	if (!wt_ok(rc == 0 && o, "the openai npm client ran against the server with a key")) {
		wt_diag("%s: %.500s", cmd, out);
		json_object_put(o);
		wt_server_stop(&s, SIGTERM);
		return;
	}
	wt_ok(!strcmp(at(o, "wrong_key", "status"), "401") &&
	      !strcmp(at(o, "wrong_key", "code"), "\"invalid_api_key\""),
	      "openai client: a wrong key raises 401 invalid_api_key");
	wt_ok(!strcmp(at(o, "model", NULL), "\"" MODEL_ID "\""),
	      "openai client: models.retrieve() with the key");
	json_object_object_get_ex(o, "completion", &v);
	c0 = json_object_array_get_idx(v, 0);
	c1 = json_object_array_get_idx(v, 1);
	wt_ok(c0 && c1 && !strcmp(at(c0, "text", NULL), at(c1, "text", NULL)) &&
	      !strcmp(at(c1, "index", NULL), "1") &&
	      json_object_array_length(json_object_object_get(c0, "logprobs")) == 8 &&
	      !strcmp(at(c0, "top", "0"), "3"),
	      "openai client: n 2, logprobs 3: two greedy choices alike, 8 log-probabilities, "
	      "3 alternatives each");
	wt_ok(c0 && !strcmp(at(json_object_object_get(o, "completion_stream"), "texts", "0"),
		      at(c0, "text", NULL)) &&
	      !strcmp(at(json_object_object_get(o, "completion_stream"), "logprobs", "1"),
		      at(c1, "logprobs", NULL)),
	      "openai client: the same streamed, text and log-probabilities per index");
	wt_ok(!strcmp(at(o, "echo", "text"), "\"Once upon a time\"") &&
	      json_object_array_length(json_object_object_get(json_object_object_get(o, "echo"),
							      "tokens")) == 4,
	      "openai client: echo with max_tokens 0 scores the prompt's 4 tokens");
	wt_ok(!strcmp(at(o, "chat", "text"), at(c0, "text", NULL)) &&
	      json_object_array_length(json_object_object_get(json_object_object_get(o, "chat"),
							      "logprobs")) == 8 &&
	      !strcmp(at(json_object_object_get(o, "chat"), "top", "0"), "2"),
	      "openai client: chat with logprobs and top_logprobs 2");
	wt_ok(!strcmp(at(o, "chat_stream", "text"), at(o, "chat", "text")) &&
	      !strcmp(at(o, "chat_stream", "logprobs"),
		      at(json_object_object_get(o, "chat"), "logprobs", NULL)),
	      "openai client: the same chat streamed, text and log-probabilities");
	/* chatml's "<|im_start|>system\nBe kind<|im_end|>\n..." is far more than the 7 of
	 * "Be kind Once upon a time" (story) */
	wt_ok(atoi(at(o, "chat_template_usage", "prompt_tokens")) > 20,
	      "openai client: chat_template chatml renders the messages (%s prompt tokens)",
	      at(o, "chat_template_usage", "prompt_tokens"));
	wt_ok(!strcmp(at(o, "detokenize", "content"), "\"Once upon a time\"") &&
	      strstr(at(o, "tokenize", "tokens"), "["),
	      "fetch with the key: /tokenize, then /detokenize gives the text back");
	wt_ok(!strcmp(at(o, "n_error", "status"), "400") &&
	      !strcmp(at(o, "n_error", "param"), "\"n\"") &&
	      !strcmp(at(o, "top_error", "status"), "400") &&
	      !strcmp(at(o, "top_error", "param"), "\"top_logprobs\""),
	      "openai client: n above the slots and top_logprobs above the device's k: 400 "
	      "naming them");
	json_object_put(o);
	rc = wt_server_stop(&s, SIGTERM);
	wt_ok(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "the server lived on and exits 0");
}

int main(void)
{
	char path[] = "/tmp/wafer-key-XXXXXX", extra[256];
	int fd;

	signal(SIGPIPE, SIG_IGN);
	model = wt_model_path("stories260K.bin") ? strdup(wt_model_path("stories260K.bin")) : NULL;
	tokpath = wt_model_path("tok512.bin") ? strdup(wt_model_path("tok512.bin")) : NULL;
	if (!wt_ok(model && tokpath, "shared model and tokenizer found"))
		return wt_done();
	wt_http_init();
	key_checks("--api-key " KEY, "--api-key");
	fd = mkstemp(path);
	if (wt_ok(fd >= 0 && write(fd, KEY "\n", sizeof(KEY)) == (ssize_t)sizeof(KEY),
		  "a key file")) {
		close(fd);
		snprintf(extra, sizeof(extra), "--api-key-file %s", path);
		key_checks(extra, "--api-key-file");
		unlink(path);
	}
	closed_endpoints();
	key_args();
	cors();
	access_log();
	http_messages();
	connection_limit();
	openai_client();
	return wt_done();
}
