// SPDX-License-Identifier: MIT
/*
 * `wafer serve --backend inproc`: who may call it and what it logs.  The API
 * key (--api-key and --api-key-file: none, a wrong one, one in the wrong
 * header, each 401 with an OpenAI error object; /health and /metrics open
 * unless --open-endpoints none), CORS (a preflight from an allowed origin
 * and from another; the headers on an answer), the access log (a line per
 * request, as text and as JSON), 503 with Retry-After past
 * --max-connections, Retry-After on 429, and the server living on.
 */
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
	return wt_done();
}
