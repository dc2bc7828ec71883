// SPDX-License-Identifier: MIT
/*
 * wafer top --url / --backend inproc: a running wafer serve watched through
 * its GET /metrics.  An in-process device lives inside its server, so its
 * counters are the server's to report: slots and queue, tokens/s, and its
 * devices' modelled time against the host time that passed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_top.h"

#define M(x)	"wafer_serve_" x

/* A counter's gain over the interval (0 when it went backwards: a restart). */
static double gain(const char *a, const char *b, const char *name, const char *labels)
{
	double x = 0, y = 0;

	if (cli_prom_value(b, name, labels, &y) || cli_prom_value(a, name, labels, &x))
		return 0;
	return y > x ? y - x : 0;
}

static double value(const char *t, const char *name, const char *labels)
{
	double v = 0;

	cli_prom_value(t, name, labels, &v);
	return v;
}

/* Pipeline members: a row each, while the server lists them. */
static void print_members(const char *a, const char *b, double dt)
{
	char labels[64], dev[32];
	unsigned int k;
	double x;

	for (k = 0; k < 64; k++) {
		const char *l = NULL;

		snprintf(labels, sizeof(labels), "member=\"%u\",device=\"", k);
		l = strstr(b, labels);
		if (!l || sscanf(l + strlen(labels), "%31[^\"]", dev) != 1)
			break;
		snprintf(labels, sizeof(labels), "member=\"%u\",device=\"%s\"", k, dev);
		if (!k)
			printf("member device    jobs/s  busy%% (modelled)\n");
		x = gain(a, b, M("member_busy_seconds_total"), labels);
		printf("%6u %-8s %8.1f  %8.4f\n", k, dev,
		       gain(a, b, M("member_jobs_total"), labels) / dt, x / dt * 100);
	}
}

static void print_block(const char *url, const char *a, const char *b, double dt, int tty)
{
	double gen = gain(a, b, M("completion_tokens_total"), NULL);
	double modelled = gain(a, b, M("device_modelled_seconds_total"), NULL);
	double span = gain(a, b, M("device_makespan_seconds_total"), NULL);

	if (tty)
		fputs("\033[H\033[2J", stdout);
	printf("wafer top: %s  interval %.0f ms  slots %.0f/%.0f in use  queued %.0f  "
	       "requests %.0f\n", url, dt * 1e3, value(b, M("slots_in_use"), NULL),
	       value(b, M("slots"), NULL), value(b, M("queue_depth"), NULL),
	       gain(a, b, M("requests_total"), "code=\"2xx\""));
	printf("tokens %.0f (%.1f/s), %.0f in all  prompt tokens %.0f (%.1f/s)  steps %.1f/s  "
	       "jobs %.1f/s\n", gen, gen / dt, value(b, M("completion_tokens_total"), NULL),
	       gain(a, b, M("prompt_tokens_total"), NULL),
	       gain(a, b, M("prompt_tokens_total"), NULL) / dt,
	       gain(a, b, M("steps_total"), NULL) / dt,
	       gain(a, b, M("device_jobs_total"), NULL) / dt);
	printf("modelled device time %.6f s in %.3f s of host time (%.4f%%)",
	       modelled, dt, modelled / dt * 100);
	if (span > 0)
		printf("; modelled %.1f tok/s", gen / span);
	printf("\n");
	print_members(a, b, dt);
	if (!tty)
		printf("\n");
	fflush(stdout);
}

int cli_top_serve(const char *url, long iters, long interval_ms, int tty)
{
	char *text[2] = { NULL, NULL }, err[512];
	uint64_t t[2];
	struct timespec ts;
	int cur = 0, ret = 0;
	long it;

	if (cli_http_get(url, &text[cur], err, sizeof(err))) {
		fprintf(stderr, "wafer top: %s\n", err);
		return 1;
	}
	t[cur] = cli_now_ns();
	if (!strstr(text[cur], M("slots"))) {
		fprintf(stderr, "wafer top: %s: not a wafer serve's /metrics\n", url);
		free(text[cur]);
		return 1;
	}
	for (it = 0; !iters || it < iters; it++) {
		ts.tv_sec = interval_ms / 1000;
		ts.tv_nsec = (interval_ms % 1000) * 1000000L;
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
		if (cli_http_get(url, &text[!cur], err, sizeof(err))) {
			fprintf(stderr, "wafer top: %s\n", err);
			ret = 1;
			break;
		}
		t[!cur] = cli_now_ns();
		print_block(url, text[cur], text[!cur], (t[!cur] - t[cur]) / 1e9, tty);
		free(text[cur]);
		text[cur] = NULL;
		cur = !cur;
	}
	free(text[0]);
	free(text[1]);
	return ret;
}
