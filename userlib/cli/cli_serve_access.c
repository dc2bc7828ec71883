// SPDX-License-Identifier: MIT
/*
 * wafer serve: who may call it and what it writes about each call.  The API
 * key (OpenAI's "Authorization: Bearer KEY", compared in time that depends
 * on the key's length only), the origins browsers may call from (CORS), and
 * the access log: one line a request, as text or as a JSON object.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "cli.h"
#include "cli_serve.h"

int cli_srv_key_file(struct cli_srv_access *a, const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!f) {
		fprintf(stderr, "wafer serve: --api-key-file %s: %m\n", path);
		return -1;
	}
	n = getline(&line, &cap, f);
	fclose(f);
	while (n > 0 && isspace((unsigned char)line[n - 1]))
		line[--n] = '\0';
	if (n <= 0) {
		fprintf(stderr, "wafer serve: --api-key-file %s: no key on its first line\n", path);
		free(line);
		return -1;
	}
	a->key = line;
	a->key_len = (size_t)n;
	return 0;
}

int cli_srv_key_ok(const struct cli_srv_access *a, const char *auth)
{
	static const char bearer[] = "Bearer ";
	unsigned char diff;
	size_t i, n;

	if (!a->key)
		return 1;
	if (!auth || strncasecmp(auth, bearer, sizeof(bearer) - 1))
		return 0;
	auth += sizeof(bearer) - 1;
	n = strlen(auth);
	diff = n != a->key_len;
	for (i = 0; i < a->key_len; i++)
		diff |= (unsigned char)a->key[i] ^ (unsigned char)(i < n ? auth[i] : 0);
	return !diff;
}

int cli_srv_origin_ok(const struct cli_srv_access *a, const char *origin)
{
	const char *p = a->origins, *e;
	size_t n;

	if (!p || !origin || !*origin)
		return 0;
	n = strlen(origin);
	while (*p) {
		e = strchr(p, ',');
		if (!e)
			e = p + strlen(p);
		if ((e - p == 1 && *p == '*') || ((size_t)(e - p) == n && !memcmp(p, origin, n)))
			return 1;
		p = *e ? e + 1 : e;
	}
	return 0;
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

void cli_srv_log_request(const struct cli_srv_access *a, const struct cli_srv_log_rec *rec,
			 uint64_t t_end)
{
	uint64_t dur = t_end > rec->t_start ? t_end - rec->t_start : 0;
	char when[32];
	struct tm tm;
	time_t now = time(NULL);
	struct json_object *o;

	if (!a->log)
		return;
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	if (!a->log_json) {
		/* one fprintf: stdio writes it whole under the stream's lock */
		fprintf(a->log, "%s %s %s %s %d prompt=%u completion=%u ttft_ms=%.3f "
			"duration_ms=%.3f\n", when, rec->client, rec->method, rec->path, rec->status,
			rec->prompt_tokens, rec->completion_tokens, ms(rec->ttft_ns), ms(dur));
		fflush(a->log);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "time", json_object_new_string(when));
	json_object_object_add(o, "client", json_object_new_string(rec->client));
	json_object_object_add(o, "method", json_object_new_string(rec->method));
	json_object_object_add(o, "path", json_object_new_string(rec->path));
	json_object_object_add(o, "status", json_object_new_int(rec->status));
	json_object_object_add(o, "prompt_tokens", json_object_new_int((int)rec->prompt_tokens));
	json_object_object_add(o, "completion_tokens",
			       json_object_new_int((int)rec->completion_tokens));
	json_object_object_add(o, "ttft_ms", rec->ttft_ns ?
			       json_object_new_double(ms(rec->ttft_ns)) : NULL);
	json_object_object_add(o, "duration_ms", json_object_new_double(ms(dur)));
	fprintf(a->log, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							       JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(a->log);
	json_object_put(o);
}

void cli_srv_log_msg(const struct cli_srv_access *a, const char *what, const char *fmt,
		     va_list ap)
{
	char msg[512];
	size_t n;
	struct json_object *o;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = '\0';
	if (!a->log)
		return;
	if (!a->log_json) {
		fprintf(a->log, "wafer serve: %s: %s\n", what, msg);
	} else {
		o = json_object_new_object();
		json_object_object_add(o, "source", json_object_new_string(what));
		json_object_object_add(o, "message", json_object_new_string(msg));
		fprintf(a->log, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
		json_object_put(o);
	}
	fflush(a->log);
}
