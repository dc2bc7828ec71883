// SPDX-License-Identifier: MIT
/*
 * wafer serve's web page in a real browser: headless Chromium (Debian's
 * chromium, driven over the DevTools pipe by tests/unit/serve_web.cjs,
 * nothing but loopback) opens /, sends a prompt and waits for the streamed
 * answer.  The page shows the text the same completion gives unstreamed,
 * its token count as the server's metrics count it, a KV slot per --slots,
 * and stage occupancy drawn from /metrics: every stage holding a layer was
 * busy during the completion, no stage without one was.  A screenshot goes
 * to $BUILD/test-logs/userlib_serve_web/page.png.  The page's files come
 * with a policy that keeps it to this server; other paths stay 404.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "wt_http.h"
#include "wt_util.h"

#define MAX_TOKENS	160
#define SLOTS		8

static char out[262144];

/* Runs @cmd; stdout into out. Returns its exit status, or -1. */
static int sh(const char *cmd)
{
	int st = wt_capture(cmd, out, sizeof(out));

	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static const char *jstr(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "";
}

static double jnum(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_double(v) : -1;
}

static void test_files(unsigned int port)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "curl -si http://127.0.0.1:%u/ 2>&1", port);
	sh(cmd);
	wt_ok(strstr(out, "HTTP/1.1 200") && strstr(out, "Content-Type: text/html") &&
	      strstr(out, "Content-Security-Policy: default-src 'self'") &&
	      strstr(out, "<script src=\"/app.js\">"),
	      "GET /: the page, kept to this server by its Content-Security-Policy");
	snprintf(cmd, sizeof(cmd), "for p in app.js style.css nope; do curl -s -o /dev/null "
		 "-w '%%{http_code} ' http://127.0.0.1:%u/$p; done; curl -s -o /dev/null "
		 "-w '%%{http_code}' -X POST http://127.0.0.1:%u/", port, port);
	sh(cmd);
	wt_ok(!strcmp(out, "200 200 404 405"),
	      "app.js and style.css 200, an unknown path 404, POST / 405 (%s)", out);
}

static void test_browser(unsigned int port)
{
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	char dir[512], shot[600], cmd[2048];
	struct json_object *o, *stages, *st;
	unsigned int i, layered = 0, ok = 1;
	struct stat sb;
	int rc;

	snprintf(dir, sizeof(dir), "%s/test-logs/userlib_serve_web", build);
	snprintf(shot, sizeof(shot), "%s/page.png", dir);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s && rm -f %s", dir, shot);
	sh(cmd);
	snprintf(cmd, sizeof(cmd), "node tests/unit/serve_web.cjs %u %s 'Once upon a time' %d "
		 "2>&1", port, shot, MAX_TOKENS);
	rc = sh(cmd);
	o = rc == 0 ? json_tokener_parse(out) : NULL;
	if (!wt_ok(o != NULL, "headless Chromium drove the page (node serve_web.cjs: %d)", rc)) {
		wt_diag("%.1500s", out);
		return;
	}
	wt_ok(!strcmp(jstr(o, "state"), "done") && jstr(o, "answer")[0] &&
	      !strcmp(jstr(o, "answer"), jstr(o, "reference")),
	      "the page streamed the answer: the unstreamed completion's text (%zu bytes)",
	      strlen(jstr(o, "answer")));
	wt_ok(jnum(o, "tokens_answer") > 0 &&
	      jnum(o, "tokens_answer") == atof(jstr(o, "tokens")),
	      "its token count (%g) is what the server's metrics show (%s)",
	      jnum(o, "tokens_answer"), jstr(o, "tokens"));
	wt_ok(jnum(o, "slots") == SLOTS && jnum(o, "slot_cells") == SLOTS &&
	      !strcmp(jstr(o, "inflight"), "0"),
	      "%d KV slots drawn, none in flight once done", SLOTS);
	wt_ok(jnum(o, "tps_peak") > 0 && jnum(o, "modelled_peak") > 0,
	      "tokens/s (peak %.1f) and modelled device time per host second (peak %g) shown",
	      jnum(o, "tps_peak"), jnum(o, "modelled_peak"));
	json_object_object_get_ex(o, "stages", &stages);
	for (i = 0; stages && i < json_object_array_length(stages); i++) {
		st = json_object_array_get_idx(stages, i);
		layered += jnum(st, "layers") > 0;
		if ((jnum(st, "layers") > 0) != (jnum(st, "peak") > 0)) {
			wt_diag("stage %g: %g layers, peak occupancy %g", jnum(st, "stage"),
				jnum(st, "layers"), jnum(st, "peak"));
			ok = 0;
		}
	}
	wt_ok(ok && layered == 5 && stages && json_object_array_length(stages) == 16,
	      "stage occupancy: the 5 stages holding stories260K's layers busy, the other 11 "
	      "idle, of 16");
	if (stat(shot, &sb))
		sb.st_size = 0;
	wt_ok(sb.st_size > 10000, "screenshot %s (%lld bytes)", shot, (long long)sb.st_size);
	json_object_put(o);
}

int main(void)
{
	char *model = wt_model_path("stories260K.bin") ? strdup(wt_model_path("stories260K.bin")) :
		      NULL;
	char *tok = wt_model_path("tok512.bin") ? strdup(wt_model_path("tok512.bin")) : NULL;
	struct wt_server s;

	wt_http_init();
	if (!wt_ok(!sh("command -v chromium node >/dev/null"),
		   "chromium and node are installed (tests/setup/setup)") ||
	    !wt_ok(model && tok, "the shared model and tokenizer") ||
	    !wt_ok(!wt_server_start(&s, model, tok, "--slots 8"), "wafer serve starts"))
		goto out;
	test_files(s.port);
	test_browser(s.port);
	wt_ok(wt_server_stop(&s, SIGTERM) == 0, "the server stops cleanly");
out:
	free(model);
	free(tok);
	return wt_done();
}
