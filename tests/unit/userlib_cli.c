// SPDX-License-Identifier: MIT
/*
 * The wafer CLI as a person meets it, run as the built binary:
 * --version names the uAPI and firmware ABI versions of the headers; every
 * command's --help (and `wafer help CMD`) exits 0 with its usage on stdout;
 * without a device `wafer list` exits 1 with a hint (load the driver, or
 * --backend inproc), its --json an empty array; `wafer info --json` parses
 * (json-c) with the in-process device's fields, one object or an array;
 * a bad value names the flag as typed and what is allowed (convert --quant
 * int3, info -q, top -i, plan --ctx); plan takes the --quant and --ctx
 * the other commands spell; run's chat options outside -m chat and a chat
 * template that does not parse are refused with the reason;
 * `wafer top --url` shows a running wafer serve's slots and the tokens it
 * generated (the completion's usage), and says why when nothing listens.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "drm/wafer_accel.h"
#include "wafer.h"
#include "wfs_os.h"
#include "wfw_abi.h"
#include "wt_http.h"
#include "wt_util.h"

#define OUT_MAX	65536

static const char *build;
static char out[OUT_MAX], err[OUT_MAX];

/* wafer ARGS: its exit status, stdout in out, stderr in err. */
static int wafer(const char *args)
{
	char line[2048];
	int st;

	snprintf(line, sizeof(line), "%s/bin/wafer %s", build, args);
	st = wt_capture_err(line, out, err, OUT_MAX);
	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_version(void)
{
	char want[128];
	int st = wafer("--version");

	snprintf(want, sizeof(want), "uAPI %u, firmware ABI %u.%u",
		 DRM_WAFER_API_VERSION, WFW_ABI_MAJOR, WFW_ABI_MINOR);
	wt_ok(st == 0 && !strncmp(out, "wafer ", 6) && strstr(out, want),
	      "wafer --version exits 0 with the release and \"%s\"", want);
}

static void test_help(void)
{
	static const char *const cmds[] = { "list", "info", "run", "bench", "top", "plan",
					    "serve", "convert" };
	char args[64], want[64];
	unsigned int i;
	int st;

	st = wafer("--help");
	wt_ok(st == 0 && strstr(out, "usage: wafer COMMAND"), "wafer --help exits 0");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		snprintf(args, sizeof(args), "%s --help", cmds[i]);
		snprintf(want, sizeof(want), "usage: wafer %s", cmds[i]);
		st = wafer(args);
		wt_ok(st == 0 && !strncmp(out, want, strlen(want)),
		      "wafer %s --help exits 0 (%d) with its usage on stdout", cmds[i], st);
		if (st)
			wt_diag("stderr: %.200s", err);
		snprintf(args, sizeof(args), "help %s", cmds[i]);
		st = wafer(args);
		wt_ok(st == 0 && !strncmp(out, want, strlen(want)), "wafer help %s exits 0",
		      cmds[i]);
	}
	st = wafer("frobnicate");
	wt_ok(st == 2 && strstr(err, "unknown command 'frobnicate'"),
	      "an unknown command: exit 2, named");
}

static void test_list_none(void)
{
	struct json_object *j;
	int st;

	if (wafer_list_devices(NULL, 0) > 0) {
		wt_diag("SKIP: this machine has wafer devices");
		return;
	}
	st = wafer("list");
	wt_ok(st == 1 && strstr(err, "no wafer devices") && strstr(err, "modprobe wafer") &&
	      strstr(err, "--backend inproc"),
	      "wafer list without a device: exit 1 (%d), the driver and --backend inproc named",
	      st);
	st = wafer("list --json");
	j = json_tokener_parse(out);
	wt_ok(st == 1 && j && json_object_is_type(j, json_type_array) &&
	      !json_object_array_length(j), "wafer list --json without a device: [] and exit 1");
	json_object_put(j);
	st = wafer("info");
	wt_ok(st == 1 && strstr(err, "--backend inproc"),
	      "wafer info without a device: exit 1 with the hint");
}

/* @j's member @key as an integer, or -1. */
static long long member(struct json_object *j, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(j, key, &v) ? json_object_get_int64(v) : -1;
}

static void test_info_json(void)
{
	struct json_object *j, *v;
	char abi[32];
	int st;

	snprintf(abi, sizeof(abi), "%u.%u", WFW_ABI_MAJOR, WFW_ABI_MINOR);
	st = wafer("info --backend inproc --json");
	j = json_tokener_parse(out);
	wt_ok(st == 0 && j && json_object_is_type(j, json_type_object) &&
	      member(j, "stages") > 0 && member(j, "sram_bytes_per_stage") > 0 &&
	      member(j, "uapi_version") == DRM_WAFER_API_VERSION &&
	      json_object_object_get_ex(j, "firmware_abi", &v) &&
	      !strcmp(json_object_get_string(v), abi) &&
	      json_object_object_get_ex(j, "caps", &v) &&
	      json_object_is_type(v, json_type_array),
	      "wafer info --backend inproc --json: an object with stages, SRAM, uAPI, ABI %s, caps",
	      abi);
	json_object_put(j);
	st = wafer("info -b inproc --stages 4 --json");
	j = json_tokener_parse(out);
	wt_ok(st == 0 && j && member(j, "stages") == 4,
	      "-b is --backend; --stages 4 shows in the JSON");
	json_object_put(j);
	st = wafer("info --backend inproc -d 0,1 --json");
	j = json_tokener_parse(out);
	wt_ok(st == 0 && j && json_object_is_type(j, json_type_array) &&
	      json_object_array_length(j) == 2, "two devices: an array of two");
	json_object_put(j);
	st = wafer("info --backend inproc --json -m x.bin");
	wt_ok(st == 2 && strstr(err, "not with -m"), "--json with -m: exit 2, said why");
}

/**
 * struct bad - a bad value and what its message must say
 * @args: the command line
 * @says: in stderr
 */
struct bad {
	const char *args;
	const char *says;
};

static const struct bad bads[] = {
	{ "convert in.bin out.blob --quant int3",
	  "bad value 'int3' for --quant; allowed: int8 or int4" },
	{ "convert in.bin --quant=int3 out.blob",
	  "bad value 'int3' for --quant; allowed: int8 or int4" },
	{ "convert in.bin out.blob --group 0", "bad value '0' for --group; allowed: 1..256" },
	{ "info -b inproc -q int3", "bad value 'int3' for -q; allowed: int8 or int4" },
	{ "info --backend gpu", "bad value 'gpu' for --backend; allowed: kernel, inproc or auto" },
	{ "top -i 5", "bad value '5' for -i; allowed: 10..3600000 ms" },
	{ "top --interval=5", "bad value '5' for --interval" },
	{ "top --backend gpu", "bad value 'gpu' for --backend" },
	{ "run m.bin -z t.bin --quant int3", "bad value 'int3' for --quant; allowed: int8 or int4" },
	{ "run m.bin -z t.bin -m poem", "bad value 'poem' for -m; allowed: generate or chat" },
	{ "run m.bin -z t.bin -y 'be kind'", "-y, --chat-template and --single-turn go with -m chat" },
	{ "run m.bin -z t.bin -m chat --chat-template '<{who}>'",
	  "--chat-template does not parse: byte 1: unknown placeholder '{who}'" },
	{ "run m.bin -z t.bin -m chat --draft ngram", "-m chat: not with --draft" },
	{ "convert in.bin", "need MODEL.bin and OUT.blob, got 1 argument" },
	{ "plan llama3.1-8b --quant int3", "bad value 'int3' for --quant; allowed: int8 or int4" },
	{ "plan llama3.1-8b --ctx 0x", "bad value '0x' for --ctx" },
};

static void test_bad_values(void)
{
	unsigned int i;
	int st;

	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		st = wafer(bads[i].args);
		if (!wt_ok(st == 2 && strstr(err, bads[i].says), "wafer %s: exit 2 (%d), \"%s\"",
			   bads[i].args, st, bads[i].says))
			wt_diag("stderr: %.300s", err);
	}
	st = wafer("run m.bin -z t.bin -m generate --help");
	wt_ok(st == 0, "wafer run -m generate parses");
}

/* The spelling the other commands use gives plan the same projection. */
static void test_plan_spellings(void)
{
	static char ref[OUT_MAX];
	int st = wafer("plan llama3.1-8b --weight-bits 4 --context 4096 --json");

	snprintf(ref, sizeof(ref), "%s", out);
	st |= wafer("plan llama3.1-8b --quant int4 --ctx 4096 --json");
	wt_ok(st == 0 && ref[0] && !strcmp(out, ref) && strstr(out, "\"weight_bits\":4"),
	      "wafer plan --quant int4 --ctx 4096 is --weight-bits 4 --context 4096");
}

static void test_top_url(void)
{
	char *model = wt_model_path("stories260K.bin") ? strdup(wt_model_path("stories260K.bin")) :
		      NULL;
	char *tok = wt_model_path("tok512.bin") ? strdup(wt_model_path("tok512.bin")) : NULL;
	struct json_object *j = NULL, *u, *n;
	struct wt_server srv;
	struct wt_http r = { 0 };
	char args[256], want[64];
	int st;

	st = wafer("top --url http://127.0.0.1:1 -n 1 -i 10");
	wt_ok(st == 1 && strstr(err, "is wafer serve running there?"),
	      "top --url with nothing listening: exit 1, said why");
	if (!wt_ok(model && tok && !wt_server_start(&srv, model, tok, "--slots 4"),
		   "wafer serve --backend inproc starts"))
		goto out;
	wt_http(srv.port, "POST", "/v1/completions",
		"{\"model\":\"stories260K\",\"prompt\":\"Once upon a time\",\"max_tokens\":12,"
		"\"temperature\":0}", 0, &r);
	j = r.body ? json_tokener_parse(r.body) : NULL;
	if (wt_ok(r.status == 200 && j && json_object_object_get_ex(j, "usage", &u) &&
		  json_object_object_get_ex(u, "completion_tokens", &n),
		  "a completion (%ld)", r.status)) {
		snprintf(args, sizeof(args), "top --backend inproc --url http://127.0.0.1:%u/ -n 1 "
			 "-i 10", srv.port);
		snprintf(want, sizeof(want), "%d in all", json_object_get_int(n));
		st = wafer(args);
		wt_ok(st == 0 && strstr(out, "slots 0/4 in use") && strstr(out, want) &&
		      strstr(out, "modelled device time"),
		      "wafer top --url (the server's base URL): its slots, \"%s\" (the "
		      "completion's usage), modelled time", want);
		if (st || !strstr(out, want))
			wt_diag("stdout: %.400s stderr: %.200s", out, err);
	}
	json_object_put(j);
	wt_http_free(&r);
	wt_server_stop(&srv, SIGTERM);
out:
	free(model);
	free(tok);
}

int main(void)
{
	build = getenv("BUILD") ? getenv("BUILD") : "build";
	wt_http_init();
	test_version();
	test_help();
	test_list_none();
	test_info_json();
	test_bad_values();
	test_plan_spellings();
	test_top_url();
	return wt_done();
}
