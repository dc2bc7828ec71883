// SPDX-License-Identifier: MIT
/* wafer serve: GET /metrics, the Prometheus text exposition format 0.0.4. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_serve.h"

/* Bucket upper bounds in seconds (the last bucket is +Inf). */
static const double bounds[CLI_SRV_HIST_BUCKETS] = {
	0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
};

void cli_srv_hist_observe(struct cli_srv_hist *h, uint64_t ns)
{
	unsigned int i;

	for (i = 0; i < CLI_SRV_HIST_BUCKETS && ns / 1e9 > bounds[i]; i++)
		;
	h->count[i]++;
	h->n++;
	h->sum_ns += ns;
}

struct buf {
	char *p;
	size_t len;
	size_t cap;
	int oom;
};

static void put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	char *np;
	int n;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		np = realloc(b->p, b->cap * 2);
		if (!np) {
			free(b->p);
			b->p = NULL;
			b->oom = 1;
			return;
		}
		b->p = np;
		b->cap *= 2;
	}
}

static void metric(struct buf *b, const char *name, const char *type, const char *help)
{
	put(b, "# HELP wafer_serve_%s %s\n# TYPE wafer_serve_%s %s\n", name, help, name, type);
}

static void hist(struct buf *b, const char *name, const char *help, const struct cli_srv_hist *h)
{
	uint64_t cum = 0;
	unsigned int i;

	metric(b, name, "histogram", help);
	for (i = 0; i < CLI_SRV_HIST_BUCKETS; i++) {
		cum += h->count[i];
		put(b, "wafer_serve_%s_bucket{le=\"%g\"} %llu\n", name, bounds[i],
		    (unsigned long long)cum);
	}
	put(b, "wafer_serve_%s_bucket{le=\"+Inf\"} %llu\n", name, (unsigned long long)h->n);
	put(b, "wafer_serve_%s_sum %.9f\n", name, h->sum_ns / 1e9);
	put(b, "wafer_serve_%s_count %llu\n", name, (unsigned long long)h->n);
}

/* A pipeline's members one by one, labelled by position and device. */
static void members(struct buf *b, struct wafer_dev *dev)
{
	static const char *const names[3] = { "member_jobs_total", "member_busy_seconds_total",
					      "member_makespan_seconds_total" };
	static const char *const helps[3] = {
		"Jobs a pipeline member completed (every job runs on each member in turn).",
		"A pipeline member's modelled busy time (0: not reported).",
		"A pipeline member's modelled clock: time with jobs in flight (0: not reported).",
	};
	unsigned int k, i, n = wafer_pipe_size(dev);
	struct wafer_dev_stats ds[WAFER_PIPE_MAX_DEVICES];
	int ok[WAFER_PIPE_MAX_DEVICES];
	char dn[16];

	for (k = 0; k < n; k++)
		ok[k] = !wafer_dev_stats(wafer_pipe_member(dev, k), &ds[k]);
	for (i = 0; i < 3; i++) {
		metric(b, names[i], "counter", helps[i]);
		for (k = 0; k < n; k++) {
			int idx = wafer_device_index(wafer_pipe_member(dev, k));

			if (!ok[k])
				continue;
			if (idx >= 0)
				snprintf(dn, sizeof(dn), "accel%d", idx);
			else
				snprintf(dn, sizeof(dn), "inproc");
			put(b, "wafer_serve_%s{member=\"%u\",device=\"%s\"} ", names[i], k,
			    dn);
			if (!i)
				put(b, "%llu\n", (unsigned long long)ds[k].jobs_completed);
			else
				put(b, "%.9f\n", (i == 1 ? ds[k].modelled_busy_ns :
						  ds[k].modelled_makespan_ns) / 1e9);
		}
	}
}

/*
 * Every stage of every member: its modelled busy time (over the member's
 * makespan: the stage's occupancy, what the web page draws), and where
 * the backend reports them its tokens and the layers it holds.  In
 * process they are the firmware's (GET_STATS); a kernel device's are this
 * server's file's busy time per stage from its fdinfo, which the batch's
 * jobs fill (they ask for their chunk times), with no tokens or layers:
 * those series are left out rather than shown as zero.  Before a first
 * completion, or where no member reports stages, there are none.
 */
static void stages(struct buf *b, struct wafer_dev *dev)
{
	struct wafer_stage_stats st[256];
	int i, n = wafer_dev_stage_stats(dev, st, 256);
	bool placed = false;

	if (n <= 0)
		return;
	if (n > 256)
		n = 256;
	for (i = 0; i < n; i++)
		placed |= st[i].n_layers != 0;
	metric(b, "stage_busy_seconds_total", "counter",
	       "A stage's modelled busy time (over its member's makespan: its occupancy).");
	for (i = 0; i < n; i++)
		put(b, "wafer_serve_stage_busy_seconds_total{member=\"%u\",stage=\"%u\"} %.9f\n",
		    st[i].member, st[i].stage, st[i].modelled_busy_ns / 1e9);
	if (!placed)
		return;
	metric(b, "stage_tokens_total", "counter", "Tokens a stage processed.");
	for (i = 0; i < n; i++)
		put(b, "wafer_serve_stage_tokens_total{member=\"%u\",stage=\"%u\"} %llu\n",
		    st[i].member, st[i].stage, (unsigned long long)st[i].tokens);
	metric(b, "stage_layers", "gauge", "Model layers a stage holds.");
	for (i = 0; i < n; i++)
		put(b, "wafer_serve_stage_layers{member=\"%u\",stage=\"%u\"} %u\n",
		    st[i].member, st[i].stage, st[i].n_layers);
}

char *cli_srv_metrics_text(struct cli_srv *s)
{
	const struct cli_srv_metrics *m = &s->m;
	struct buf b = { .cap = 8192 };
	struct wafer_dev_stats ds;
	unsigned int i;

	b.p = malloc(b.cap);
	if (!b.p)
		return NULL;
	metric(&b, "requests_total", "counter", "Completion requests answered, by status class.");
	for (i = 1; i < 6; i++)
		put(&b, "wafer_serve_requests_total{code=\"%uxx\"} %llu\n", i,
		    (unsigned long long)m->requests[i]);
	metric(&b, "rejected_queue_full_total", "counter", "Requests refused with 429: queue full.");
	put(&b, "wafer_serve_rejected_queue_full_total %llu\n", (unsigned long long)m->rejected_full);
	metric(&b, "cancelled_total", "counter",
	       "Requests ended early: client gone, or cut by the shutdown deadline.");
	put(&b, "wafer_serve_cancelled_total %llu\n", (unsigned long long)m->cancelled);
	metric(&b, "engine_errors_total", "counter",
	       "Impossible states the engine met (a failed step, a count that would wrap); "
	       "the requests involved failed with 500.");
	put(&b, "wafer_serve_engine_errors_total %llu\n", (unsigned long long)m->engine_errors);
	metric(&b, "header_timeouts_total", "counter",
	       "Connections closed because a request's headers and body did not arrive in time.");
	put(&b, "wafer_serve_header_timeouts_total %llu\n",
	    (unsigned long long)cli_srv_watch_timeouts(s));
	metric(&b, "prompt_tokens_total", "counter", "Prompt tokens admitted (BOS included).");
	put(&b, "wafer_serve_prompt_tokens_total %llu\n", (unsigned long long)m->prompt_tokens);
	metric(&b, "completion_tokens_total", "counter", "Tokens generated.");
	put(&b, "wafer_serve_completion_tokens_total %llu\n",
	    (unsigned long long)m->completion_tokens);
	metric(&b, "queue_depth", "gauge", "Requests waiting for a slot.");
	put(&b, "wafer_serve_queue_depth %u\n", s->queued);
	metric(&b, "slots", "gauge", "Sequence slots of the batch.");
	put(&b, "wafer_serve_slots %u\n", wafer_batch_slots(s->batch));
	metric(&b, "slots_in_use", "gauge", "Slots holding a request.");
	put(&b, "wafer_serve_slots_in_use %u\n", s->admitted > s->queued ? s->admitted - s->queued : 0);
	metric(&b, "steps_total", "counter", "Batch steps run.");
	put(&b, "wafer_serve_steps_total %llu\n", (unsigned long long)m->steps);
	metric(&b, "device_jobs_total", "counter", "Device jobs run by this server.");
	put(&b, "wafer_serve_device_jobs_total %llu\n", (unsigned long long)m->jobs);
	metric(&b, "device_modelled_seconds_total", "counter",
	       "Modelled device time of this server's jobs, summed.");
	put(&b, "wafer_serve_device_modelled_seconds_total %.9f\n", m->device_ns / 1e9);
	if (!wafer_dev_stats(s->dev, &ds)) {
		metric(&b, "device_busy_seconds_total", "counter",
		       "The device's modelled busy time, all its users; a pipeline's members "
		       "summed (0: not reported).");
		put(&b, "wafer_serve_device_busy_seconds_total %.9f\n", ds.modelled_busy_ns / 1e9);
		metric(&b, "device_makespan_seconds_total", "counter",
		       "The device's modelled clock: time with jobs in flight; a pipeline's is its "
		       "last member's, where every job ends (0: not reported).");
		put(&b, "wafer_serve_device_makespan_seconds_total %.9f\n",
		    ds.modelled_makespan_ns / 1e9);
	}
	if (wafer_pipe_size(s->dev) > 1)
		members(&b, s->dev);
	stages(&b, s->dev);
	hist(&b, "time_to_first_token_seconds", "From arrival to the first generated token.",
	     &m->ttft);
	hist(&b, "time_per_output_token_seconds",
	     "Per request: (last token - first token) / (tokens - 1).", &m->tpot);
	if (b.oom)
		return NULL;
	return b.p;
}
