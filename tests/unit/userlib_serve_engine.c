// SPDX-License-Identifier: MIT
/*
 * wafer serve's engine thread (userlib/cli/cli_serve_engine.c, compiled in
 * here) over a scripted batch: a step that fails as a whole fails the
 * running requests with 500 and the engine serves the next one; a batch
 * whose sequence count wrapped below zero ("4294967293 sequences") fails
 * its requests with 500 and stops the engine stepping (it does not spin),
 * new requests get 500, stderr gets a line or two, not a flood; an event
 * for a slot out of range is ignored and counted; the engine stops.
 */
/* The engine's batch calls go to the script below. */
#define wafer_batch_step	fake_step
#define wafer_batch_active	fake_active
#define wafer_batch_slots	fake_slots
#define wafer_batch_cancel	fake_cancel
#define wafer_batch_start	fake_start
#define wafer_tokenizer_decode	fake_decode
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wafer.h"
#include "lib/wafer_internal.h"
#include "wt_util.h"

#include "../../userlib/cli/cli_serve_engine.c"
#include "../../userlib/cli/cli_serve_api.c"
#include "../../userlib/cli/cli_serve_template.c"
#include "../../userlib/cli/cli_serve_logprobs.c"
#include "../../userlib/cli/cli_clock.c"
#undef wafer_batch_step
#undef wafer_batch_active
#undef wafer_batch_slots
#undef wafer_batch_cancel
#undef wafer_batch_start
#undef wafer_tokenizer_decode

#define SLOTS	4

enum script { NORMAL, FAIL_ONCE, WRAP, BAD_SLOT };

/**
 * struct fake - the scripted batch
 * @used: slot holds a sequence
 * @left: tokens it still generates
 * @active: sequences (the count the engine sees)
 * @steps: wafer_batch_step() calls
 * @script: what the next step does
 */
static struct fake {
	int used[SLOTS];
	unsigned int left[SLOTS];
	unsigned int active;
	unsigned long steps;
	enum script script;
} fb;
static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;

void cli_srv_hist_observe(struct cli_srv_hist *h, uint64_t ns)
{
	h->n++;
	h->sum_ns += ns;
}

unsigned int fake_slots(const struct wafer_batch *b)
{
	(void)b;
	return SLOTS;
}

unsigned int fake_active(const struct wafer_batch *b)
{
	(void)b;
	return fb.active;
}

int fake_start(struct wafer_batch *b, const int *prompt, unsigned int n,
	       const struct wafer_batch_seq *seq, uint64_t user_data)
{
	unsigned int i;

	(void)b;
	(void)prompt;
	(void)n;
	(void)user_data;
	for (i = 0; i < SLOTS; i++)
		if (!fb.used[i]) {
			fb.used[i] = 1;
			fb.left[i] = seq->max_new;
			fb.active++;
			return (int)i;
		}
	return -EBUSY;
}

int fake_cancel(struct wafer_batch *b, unsigned int slot)
{
	(void)b;
	if (slot >= SLOTS || !fb.used[slot])
		return -EINVAL;
	fb.used[slot] = 0;
	fb.active--;
	return 0;
}

const char *fake_decode(const struct wafer_tokenizer *t, int prev, int token)
{
	(void)t;
	(void)prev;
	(void)token;
	return "a";
}

/* The real batch's own check: more sequences than events is -EINVAL. */
int fake_step(struct wafer_batch *b, struct wafer_batch_event *ev, unsigned int max,
	      struct wafer_batch_stats *st)
{
	unsigned int i;
	int n = 0;

	(void)b;
	(void)st;
	pthread_mutex_lock(&fake_lock);
	fb.steps++;
	if (fb.script == FAIL_ONCE) {		/* the device failed: every sequence ended */
		fb.script = NORMAL;
		memset(fb.used, 0, sizeof(fb.used));
		fb.active = 0;
		pthread_mutex_unlock(&fake_lock);
		return -EIO;
	}
	if (fb.script == WRAP) {		/* a count wrapped below zero */
		memset(fb.used, 0, sizeof(fb.used));
		fb.active = (unsigned int)-3;
	}
	if (max < fb.active) {
		pthread_mutex_unlock(&fake_lock);
		return wafer_set_error(-EINVAL, "room for %u events, %u sequences", max,
				       fb.active);
	}
	for (i = 0; i < SLOTS; i++) {
		if (!fb.used[i])
			continue;
		ev[n] = (struct wafer_batch_event){ .slot = i, .token = 100, .prev = 1,
						    .end = WAFER_BATCH_RUNNING };
		if (fb.script == BAD_SLOT) {
			ev[n].slot = SLOTS + 7;
			fb.script = NORMAL;
		} else if (!--fb.left[i]) {
			ev[n].end = WAFER_BATCH_MAX_NEW;
			fb.used[i] = 0;
			fb.active--;
		}
		n++;
	}
	pthread_mutex_unlock(&fake_lock);
	return n;
}

static struct cli_srv srv;
static int prompt[2] = { 1, 100 };

/* A request for @max_new tokens, queued; NULL (and @e filled) if refused. */
static struct cli_srv_req *submit(unsigned int max_new, struct cli_srv_error *e)
{
	struct cli_srv_req *r = cli_srv_req_new(&srv);

	r->prompt = malloc(sizeof(prompt));
	memcpy(r->prompt, prompt, sizeof(prompt));
	r->n_prompt = 2;
	r->seq.max_new = max_new;
	pthread_mutex_lock(&srv.lock);
	if (cli_srv_enqueue(&srv, r, e)) {
		cli_srv_req_put(r);
		r = NULL;
	}
	pthread_mutex_unlock(&srv.lock);
	return r;
}

/* Waits (at most ~10 s: a liveness bound) for @r to end; its status, or -1. */
static int finish(struct cli_srv_req *r)
{
	int i, st = -1;

	pthread_mutex_lock(&srv.lock);
	for (i = 0; i < 1000 && r->state != CLI_SRV_DONE; i++) {
		pthread_mutex_unlock(&srv.lock);
		usleep(10000);
		pthread_mutex_lock(&srv.lock);
	}
	if (r->state == CLI_SRV_DONE)
		st = r->err.status;
	cli_srv_req_put(r);
	pthread_mutex_unlock(&srv.lock);
	return st;
}

/* Waits (at most ~10 s) until @r holds a slot. */
static void wait_running(struct cli_srv_req *r)
{
	int i;

	pthread_mutex_lock(&srv.lock);
	for (i = 0; i < 1000 && r->state != CLI_SRV_RUNNING; i++) {
		pthread_mutex_unlock(&srv.lock);
		usleep(10000);
		pthread_mutex_lock(&srv.lock);
	}
	pthread_mutex_unlock(&srv.lock);
}

static unsigned long steps(void)
{
	unsigned long n;

	pthread_mutex_lock(&fake_lock);
	n = fb.steps;
	pthread_mutex_unlock(&fake_lock);
	return n;
}

static void set_script(enum script sc)
{
	pthread_mutex_lock(&fake_lock);
	fb.script = sc;
	pthread_mutex_unlock(&fake_lock);
}

static enum script get_script(void)
{
	enum script sc;

	pthread_mutex_lock(&fake_lock);
	sc = fb.script;
	pthread_mutex_unlock(&fake_lock);
	return sc;
}

static unsigned int lines_in(FILE *f)
{
	unsigned int n = 0;
	int c;

	fflush(stderr);
	rewind(f);
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	return n;
}

int main(void)
{
	struct cli_srv_error e = { 0 };
	struct cli_srv_req *r[3];
	FILE *log = tmpfile();
	unsigned long before;
	uint64_t errors;
	pthread_t thr;
	int saved = dup(2), st0, st1;
	unsigned int lines;

	pthread_mutex_init(&srv.lock, NULL);
	pthread_cond_init(&srv.wake, NULL);
	srv.batch = (struct wafer_batch *)&fb;
	srv.running = calloc(SLOTS, sizeof(*srv.running));
	srv.queue_max = 8;
	dup2(fileno(log), 2);
	if (!wt_ok(!cli_srv_engine_start(&srv, &thr), "the engine starts over a scripted batch"))
		return wt_done();

	r[0] = submit(5, &e);
	wt_ok(r[0] && finish(r[0]) == 0, "a request of 5 tokens completes");

	/* The step fails as a whole: the running requests fail, the next one runs. */
	r[0] = submit(1u << 30, &e);
	r[1] = submit(1u << 30, &e);
	wait_running(r[0]);
	wait_running(r[1]);
	set_script(FAIL_ONCE);
	st0 = finish(r[0]);
	st1 = finish(r[1]);
	wt_ok(st0 == 500 && st1 == 500, "a step that fails as a whole: both running requests "
	      "fail with 500 (%d, %d), none hangs", st0, st1);
	r[0] = submit(3, &e);
	wt_ok(r[0] && finish(r[0]) == 0 && !srv.broken, "and the next request is served");

	/* An event for a slot out of range: ignored, counted. */
	errors = srv.m.engine_errors;
	r[0] = submit(1u << 30, &e);
	wait_running(r[0]);
	set_script(BAD_SLOT);
	while (get_script() == BAD_SLOT)
		usleep(1000);
	pthread_mutex_lock(&srv.lock);
	cli_srv_req_cancel(r[0]);
	pthread_mutex_unlock(&srv.lock);
	st0 = finish(r[0]);
	wt_ok(st0 == 0 && srv.m.engine_errors == errors + 1,
	      "an event for a slot out of range is ignored and counted (%d, %llu errors)", st0,
	      (unsigned long long)(srv.m.engine_errors - errors));

	/* The sequence count wraps below zero: fail, stop stepping, no flood. */
	r[0] = submit(1u << 30, &e);
	r[1] = submit(1u << 30, &e);
	wait_running(r[0]);
	wait_running(r[1]);
	set_script(WRAP);
	st0 = finish(r[0]);
	st1 = finish(r[1]);
	wt_ok(st0 == 500 && st1 == 500, "the batch's count wraps to 4294967293: both requests "
	      "fail with 500 (%d, %d)", st0, st1);
	before = steps();
	usleep(300000);
	wt_ok(steps() == before, "and the engine stops stepping the batch (%lu steps, then "
	      "%lu after 0.3 s)", before, steps());
	r[2] = submit(3, &e);
	wt_ok(!r[2] && e.status == 500, "a new request is refused with 500 (%d: %s)", e.status,
	      e.message);
	cli_srv_engine_stop(&srv, thr);
	lines = lines_in(log);
	dup2(saved, 2);
	wt_ok(srv.broken && lines >= 1 && lines <= 4,
	      "stderr got %u line(s) from the engine, not a flood", lines);
	wt_ok(srv.admitted == 0 && srv.queued == 0, "no request left counted (admitted %u, "
	      "queued %u)", srv.admitted, srv.queued);
	free(srv.running);
	fclose(log);
	return wt_done();
}
