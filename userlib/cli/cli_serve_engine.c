// SPDX-License-Identifier: MIT
/*
 * wafer serve: the engine thread.  It alone drives the batch: between steps
 * it frees the slots of cancelled requests and admits queued ones into free
 * slots; each step's tokens become text on their requests (stop strings
 * cut there), and the connections waiting on them are woken.
 *
 * A state that cannot happen (a failed step, an event for a slot out of
 * range, a count that would wrap below zero, the batch holding sequences
 * no request owns) fails the requests involved with 500 and writes one
 * line to stderr, at most one a second; if the batch still cannot be
 * trusted the engine stops stepping it and fails every request, rather
 * than spin on it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_serve.h"

struct cli_srv_req *cli_srv_req_new(struct cli_srv *s)
{
	struct cli_srv_req *r = calloc(1, sizeof(*r));
	pthread_condattr_t ca;

	if (!r)
		return NULL;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->cond, &ca);
	pthread_condattr_destroy(&ca);
	r->srv = s;
	r->refs = 1;
	r->slot = -1;
	r->fd = -1;
	return r;
}

void cli_srv_req_put(struct cli_srv_req *r)
{
	unsigned int i;

	if (!r || --r->refs)
		return;
	for (i = 0; r->child && i < r->n; i++)
		cli_srv_req_put(r->child[i]);
	free(r->child);
	pthread_cond_destroy(&r->cond);
	free(r->prompt);
	free(r->text);
	free(r->sse);
	free(r->echo_text);
	free(r->lp);
	free(r->plp);
	free(r);
}

void cli_srv_req_cancel(struct cli_srv_req *r)
{
	unsigned int i;

	for (i = 0; r->child && i < r->n; i++)
		cli_srv_req_cancel(r->child[i]);
	if (r->state == CLI_SRV_DONE || r->cancel)
		return;
	r->cancel = 1;
	pthread_cond_signal(&r->srv->wake);
}

int cli_srv_req_done(const struct cli_srv_req *r)
{
	unsigned int i;

	if (!r->child)
		return r->state == CLI_SRV_DONE;
	for (i = 0; i < r->n; i++)
		if (r->child[i]->state != CLI_SRV_DONE)
			return 0;
	return 1;
}

int cli_srv_req_split(struct cli_srv_req *r, unsigned int n)
{
	struct cli_srv_req *c;
	unsigned int i;

	r->child = calloc(n, sizeof(*r->child));
	if (!r->child)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		c = cli_srv_req_new(r->srv);
		if (!c)
			return -ENOMEM;
		r->child[i] = c;
		r->n = i + 1;
		c->prompt = malloc(r->n_prompt * sizeof(*c->prompt));
		if (!c->prompt)
			return -ENOMEM;
		memcpy(c->prompt, r->prompt, r->n_prompt * sizeof(*c->prompt));
		c->n_prompt = r->n_prompt;
		c->seq = r->seq;
		c->seq.seed = r->seq.seed + i;	/* choice i: what a request seeded so gets */
		memcpy(c->stop, r->stop, sizeof(c->stop));
		c->n_stop = r->n_stop;
		c->chat = r->chat;
		c->logprobs = r->logprobs;
		c->top_logprobs = r->top_logprobs;
		c->echo = r->echo;
		c->no_output = r->no_output;
		c->fd = r->fd;
		c->t_arrive = r->t_arrive;
		c->parent = r;
		c->index = i;
	}
	return 0;
}

/* Wakes the connection waiting on @r (a choice's is its request's). */
static void wake(struct cli_srv_req *r)
{
	pthread_cond_broadcast(&(r->parent ? r->parent : r)->cond);
}

/* One line on stderr (lock held), at most one a second; the rest are counted. */
static void engine_log(struct cli_srv *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void engine_log(struct cli_srv *s, const char *fmt, ...)
{
	uint64_t now = cli_now_ns();
	va_list ap;

	s->m.engine_errors++;
	if (s->log_ns && now - s->log_ns < 1000000000ull) {
		s->log_dropped++;
		return;
	}
	s->log_ns = now;
	fputs("wafer serve: engine: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (s->log_dropped)
		fprintf(stderr, " (%llu more such lines dropped)",
			(unsigned long long)s->log_dropped);
	fputc('\n', stderr);
	s->log_dropped = 0;
}

/* --*@c, unless it is 0: then the count is wrong, not wrapped. */
static void count_down(struct cli_srv *s, unsigned int *c, const char *what)
{
	if (*c)
		(*c)--;
	else
		engine_log(s, "%s would go below zero; kept at 0", what);
}

static void queue_one(struct cli_srv *s, struct cli_srv_req *r)
{
	r->state = CLI_SRV_QUEUED;
	r->refs++;	/* the engine's */
	r->next = NULL;
	if (s->tail)
		s->tail->next = r;
	else
		s->head = r;
	s->tail = r;
	s->queued++;
	s->admitted++;
	s->m.prompt_tokens += r->n_prompt;
}

int cli_srv_enqueue(struct cli_srv *s, struct cli_srv_req *r, struct cli_srv_error *e)
{
	unsigned int n = r->child ? r->n : 1, i;

	if (s->broken)
		return cli_srv_fail(e, 500, "server_error", NULL, NULL,
				"the server's engine failed; it takes no more requests");
	if (s->draining)
		return cli_srv_fail(e, 503, "server_error", NULL, "server_shutting_down",
				"the server is shutting down");
	if (s->admitted + n > wafer_batch_slots(s->batch) + s->queue_max) {
		s->m.rejected_full++;
		return cli_srv_fail(e, 429, "rate_limit_error", NULL, "queue_full",
				"all %u slots are busy and %u requests wait: retry later",
				wafer_batch_slots(s->batch), s->queued);
	}
	/* a request's choices wait next to each other and start together */
	for (i = 0; i < n; i++)
		queue_one(s, r->child ? r->child[i] : r);
	pthread_cond_signal(&s->wake);
	return 0;
}

/* Ends @r (lock held): wakes its connection, drops the engine's reference. */
static void done(struct cli_srv *s, struct cli_srv_req *r, const char *finish)
{
	r->state = CLI_SRV_DONE;
	r->finish = finish;
	r->safe = r->len;
	if (r->cancel)
		s->m.cancelled++;
	if (r->n_new > 1 && r->t_last >= r->t_first)
		cli_srv_hist_observe(&s->m.tpot, (r->t_last - r->t_first) / (r->n_new - 1));
	count_down(s, &s->admitted, "the admitted requests' count");
	r->scored = 1;
	wake(r);
	cli_srv_req_put(r);
}

static int grow(struct cli_srv_req *r, size_t more)
{
	size_t cap = r->cap ? r->cap : 256;
	char *p;

	while (cap < r->len + more + 1)
		cap *= 2;
	if (cap == r->cap)
		return 0;
	p = realloc(r->text, cap);
	if (!p)
		return -1;
	r->text = p;
	r->cap = cap;
	return 0;
}

/* Length of the valid UTF-8 sequence at @p (n bytes left), 0 if invalid. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
	size_t len, i;
	uint32_t cp;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] < 0xe0)
		len = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] < 0xf0)
		len = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] < 0xf5)
		len = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp < 0xe000))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

/* Appends @piece as valid UTF-8 (an invalid byte becomes U+FFFD). */
static int append(struct cli_srv_req *r, const char *piece)
{
	const unsigned char *p = (const unsigned char *)piece;
	size_t n = strlen(piece), i = 0, k;

	if (grow(r, n * 3))
		return -1;
	while (i < n) {
		k = utf8_len(p + i, n - i);
		if (k) {
			memcpy(r->text + r->len, p + i, k);
			r->len += k;
			i += k;
		} else {
			memcpy(r->text + r->len, "\xef\xbf\xbd", 3);
			r->len += 3;
			i++;
		}
	}
	r->text[r->len] = '\0';
	return 0;
}

/*
 * After text was appended from @from on: 1 if a stop string now appears
 * (the text is cut there), else 0 with @r->safe past everything that no
 * stop string can still begin in.
 */
static int check_stop(struct cli_srv_req *r, size_t from)
{
	size_t best = r->len + 1, hold = 0, i, k;

	for (i = 0; i < r->n_stop; i++) {
		size_t sl = strlen(r->stop[i]), start = from >= sl - 1 ? from - (sl - 1) : 0;
		char *hit = memmem(r->text + start, r->len - start, r->stop[i], sl);

		if (hit && (size_t)(hit - r->text) < best)
			best = (size_t)(hit - r->text);
		for (k = sl - 1 < r->len ? sl - 1 : r->len; k > hold; k--)
			if (!memcmp(r->text + r->len - k, r->stop[i], k)) {
				hold = k;
				break;
			}
	}
	if (best <= r->len) {
		r->len = best;
		r->text[best] = '\0';
		return 1;
	}
	r->safe = r->len - hold;
	return 0;
}

/*
 * The prompt's scores in @ev's results: the result at position p is what
 * the model made of prompt token p + 1 (lock held).
 */
static void prompt_scores(struct cli_srv *s, struct cli_srv_req *r,
			  const struct wafer_batch_event *ev)
{
	struct cli_srv_lp *q;
	const char *piece;
	unsigned int j, p;

	for (j = 0; r->plp && j < ev->n_results; j++) {
		p = ev->pos0 + j;
		if (p + 1 >= r->n_prompt || p != r->n_plp)
			break;
		q = &r->plp[p];
		cli_srv_logprob(WAFER_BATCH_RESULT(ev, j), r->prompt[p + 1], r->prompt[p],
				r->top_logprobs, q);
		q->off = 0;
		if (p) {
			piece = wafer_tokenizer_decode(s->tok, q[-1].prev, q[-1].token);
			q->off = q[-1].off + (piece ? strlen(piece) : 0);
		}
		r->n_plp++;
	}
}

/* The sampled token's log-probability, where its text starts (lock held); 0 or -1. */
static int token_score(struct cli_srv_req *r, const struct wafer_batch_event *ev)
{
	struct cli_srv_lp *p;
	unsigned int cap;

	if (r->n_lp == r->cap_lp) {
		cap = r->cap_lp ? r->cap_lp * 2 : 16;
		p = realloc(r->lp, cap * sizeof(*p));
		if (!p)
			return -1;
		r->lp = p;
		r->cap_lp = cap;
	}
	cli_srv_logprob(WAFER_BATCH_RESULT(ev, ev->n_results - 1), ev->token, ev->prev,
			r->top_logprobs, &r->lp[r->n_lp]);
	r->lp[r->n_lp++].off = r->len;
	return 0;
}

/* One event of a step (lock held). */
static void event(struct cli_srv *s, const struct wafer_batch_event *ev, uint64_t now)
{
	static const char *const why[] = {
		[WAFER_BATCH_BOS] = "stop", [WAFER_BATCH_MAX_NEW] = "length",
		[WAFER_BATCH_CONTEXT] = "length",
	};
	struct cli_srv_req *r;
	const char *piece;
	size_t from;

	if (ev->slot >= wafer_batch_slots(s->batch)) {
		engine_log(s, "an event for slot %u of %u", ev->slot, wafer_batch_slots(s->batch));
		return;
	}
	r = s->running[ev->slot];
	if (!r)
		return;
	if (ev->end < WAFER_BATCH_RUNNING || ev->end > WAFER_BATCH_FAILED) {
		engine_log(s, "slot %u ended in an unknown way (%d)", ev->slot, ev->end);
		wafer_batch_cancel(s->batch, ev->slot);
		s->running[ev->slot] = NULL;
		cli_srv_fail(&r->err, 500, "server_error", NULL, NULL,
			     "the server's engine failed on this request");
		done(s, r, NULL);
		return;
	}
	if (ev->n_results && r->plp)
		prompt_scores(s, r, ev);
	if (ev->token >= 0 || ev->end)
		r->scored = 1;
	if (ev->token >= 0 && r->no_output) {
		wake(r);	/* the prompt is scored; the token is not shown */
	} else if (ev->token >= 0) {
		r->n_new++;
		s->m.completion_tokens++;
		if (!r->t_first) {
			r->t_first = now;
			cli_srv_hist_observe(&s->m.ttft, now - r->t_arrive);
		}
		r->t_last = now;
		piece = wafer_tokenizer_decode(s->tok, ev->prev, ev->token);
		from = r->len;
		if ((r->logprobs && ev->n_results && token_score(r, ev)) ||
		    (piece && wafer_piece_printable(piece) && append(r, piece))) {
			cli_srv_fail(&r->err, 500, "server_error", NULL, NULL, "out of memory");
			if (!ev->end)
				wafer_batch_cancel(s->batch, ev->slot);
			s->running[ev->slot] = NULL;
			done(s, r, NULL);
			return;
		}
		if (r->n_stop && check_stop(r, from)) {
			if (!ev->end)
				wafer_batch_cancel(s->batch, ev->slot);
			s->running[ev->slot] = NULL;
			done(s, r, "stop");
			return;
		}
		if (!r->n_stop)
			r->safe = r->len;
		wake(r);
	}
	if (ev->end == WAFER_BATCH_RUNNING)
		return;
	s->running[ev->slot] = NULL;
	if (ev->end == WAFER_BATCH_FAILED) {
		cli_srv_fail(&r->err, 500, "server_error", NULL, NULL, "the device failed: %s",
			 wafer_strerror(ev->status));
		done(s, r, NULL);
		return;
	}
	done(s, r, why[ev->end]);
}

/* Slots @r needs at once: a request's first choice brings them all. */
static unsigned int group(const struct cli_srv_req *r)
{
	return r->parent && !r->index ? r->parent->n : 1;
}

/* Between steps (lock held): free cancelled slots, fill free ones. */
static void schedule(struct cli_srv *s)
{
	unsigned int i, slots = wafer_batch_slots(s->batch);
	struct cli_srv_req *r;
	int slot;

	for (i = 0; i < slots; i++) {
		r = s->running[i];
		if (r && (r->cancel || s->abort_all)) {
			wafer_batch_cancel(s->batch, i);
			s->running[i] = NULL;
			if (s->abort_all)
				cli_srv_fail(&r->err, 503, "server_error", NULL, "server_shutting_down",
					 "the server shut down before the request finished");
			r->cancel = 1;
			done(s, r, NULL);
		}
	}
	while (s->head && (s->abort_all || s->broken || s->head->cancel ||
			   wafer_batch_active(s->batch) + group(s->head) <= slots)) {
		r = s->head;
		s->head = r->next;
		if (!s->head)
			s->tail = NULL;
		count_down(s, &s->queued, "the queued requests' count");
		if (s->broken && !s->abort_all && !r->cancel) {
			cli_srv_fail(&r->err, 500, "server_error", NULL, NULL,
				     "the server's engine failed before the request started");
			done(s, r, NULL);
			continue;
		}
		if (s->abort_all || r->cancel) {
			if (s->abort_all)
				cli_srv_fail(&r->err, 503, "server_error", NULL, "server_shutting_down",
					 "the server shut down before the request started");
			r->cancel = 1;
			done(s, r, NULL);
			continue;
		}
		slot = wafer_batch_start(s->batch, r->prompt, r->n_prompt, &r->seq, 0);
		if (slot < 0) {
			cli_srv_fail(&r->err, 500, "server_error", NULL, NULL, "%s",
				 wafer_last_error());
			done(s, r, NULL);
			continue;
		}
		r->slot = slot;
		r->state = CLI_SRV_RUNNING;
		s->running[slot] = r;
	}
}

/* Fails every running request with 500 (lock held); their slots are cancelled. */
static void fail_running(struct cli_srv *s, const char *why)
{
	unsigned int i, slots = wafer_batch_slots(s->batch);
	struct cli_srv_req *r;

	for (i = 0; i < slots; i++) {
		r = s->running[i];
		if (!r)
			continue;
		wafer_batch_cancel(s->batch, i);	/* -EINVAL if the batch ended it */
		s->running[i] = NULL;
		cli_srv_fail(&r->err, 500, "server_error", NULL, NULL, "%s", why);
		done(s, r, NULL);
	}
}

/*
 * The batch must hold exactly the running requests' sequences (lock held).
 * Sequences no request owns are cancelled; if it then still counts more
 * than it could hold, it cannot be trusted: the engine breaks (every
 * request fails with 500 from now on) instead of stepping it for ever.
 */
static void check_batch(struct cli_srv *s)
{
	unsigned int i, slots = wafer_batch_slots(s->batch), owned = 0, active;

	for (i = 0; i < slots; i++)
		owned += s->running[i] != NULL;
	active = wafer_batch_active(s->batch);
	if (active == owned)
		return;
	engine_log(s, "the batch holds %u sequences, the requests %u", active, owned);
	for (i = 0; i < slots; i++)
		if (!s->running[i])
			wafer_batch_cancel(s->batch, i);
	active = wafer_batch_active(s->batch);
	if (active == owned)
		return;
	fail_running(s, "the server's engine failed: its batch is inconsistent");
	if (wafer_batch_active(s->batch)) {
		engine_log(s, "the batch still holds %u sequences with no request: no more "
			   "steps, every request fails with 500", wafer_batch_active(s->batch));
		s->broken = 1;
	}
}

static void *engine(void *arg)
{
	struct cli_srv *s = arg;
	unsigned int slots = wafer_batch_slots(s->batch);
	struct wafer_batch_event *ev = s->events;
	struct wafer_batch_stats st;
	int i, n;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		schedule(s);
		if (!s->broken)
			check_batch(s);
		if (s->broken || !wafer_batch_active(s->batch)) {
			if (s->broken && s->head)
				continue;	/* schedule() fails them */
			if (s->stop)
				break;
			pthread_cond_wait(&s->wake, &s->lock);
			continue;
		}
		pthread_mutex_unlock(&s->lock);
		memset(&st, 0, sizeof(st));
		n = wafer_batch_step(s->batch, ev, slots, &st);
		pthread_mutex_lock(&s->lock);
		s->m.steps++;
		s->m.jobs += st.jobs;
		s->m.device_ns += st.device_ns;
		if (n < 0) {
			/* every sequence ended: their requests fail */
			engine_log(s, "step: %s", wafer_last_error());
			fail_running(s, "the device failed");
			continue;
		}
		if ((unsigned int)n > slots) {
			engine_log(s, "a step gave %d events for %u slots", n, slots);
			n = (int)slots;
		}
		for (i = 0; i < n; i++)
			event(s, &ev[i], cli_now_ns());
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/*
 * A pipeline's devices each hold whole layers: with one micro-batch per
 * device, micro-batch g is on device k while g + 1 is on device k - 1.
 * Not on one device (nothing to overlap), nor on AFD groups (their parts
 * are not whole layers: they cut every step into micro-batches
 * themselves), nor when the slots' jobs cannot all be in flight at once.
 */
unsigned int cli_srv_micro_batches(struct wafer_dev *dev, const struct wafer_model *m,
				   unsigned int slots)
{
	unsigned int n = wafer_model_parts(m), k;
	struct wafer_model_part p;
	struct wafer_info di;

	if (n < 2 || wafer_query(dev, &di) ||
	    (di.max_inflight_jobs && slots > di.max_inflight_jobs))
		return 0;
	for (k = 0; k < n; k++)
		if (wafer_model_part(m, k, &p) || p.part != WAFER_PART_WHOLE)
			return 0;
	return n < slots ? n : slots;
}

int cli_srv_engine_start(struct cli_srv *s, pthread_t *thr)
{
	int ret;

	s->events = calloc(wafer_batch_slots(s->batch), sizeof(*s->events));
	if (!s->events)
		return -ENOMEM;
	ret = pthread_create(thr, NULL, engine, s);
	if (ret) {
		free(s->events);
		s->events = NULL;
	}
	return -ret;
}

void cli_srv_engine_stop(struct cli_srv *s, pthread_t thr)
{
	pthread_mutex_lock(&s->lock);
	s->stop = 1;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	pthread_join(thr, NULL);
	free(s->events);
	s->events = NULL;
}
