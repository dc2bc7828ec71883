// SPDX-License-Identifier: MIT
/*
 * wafer serve: the header timeout.  libmicrohttpd's connection timeout
 * restarts at every byte, so a client trickling a byte a second keeps its
 * connection forever.  Here each connection (MHD_OPTION_NOTIFY_CONNECTION)
 * gets a deadline by which its request must be whole (headers and body):
 * --header-timeout seconds after the connection starts, or, on a kept-alive
 * connection, the idle timeout plus that after the previous answer.  While
 * a request is answered there is none.  A thread shuts down the socket of
 * a connection past its deadline, and libmicrohttpd closes it.
 *
 * libmicrohttpd reports a connection closed before it closes its socket,
 * and the record leaves the list under the lock the watchdog holds while
 * it calls shutdown(), so the descriptor it shuts is never a reused one.
 */
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include <microhttpd.h>

#include "cli.h"
#include "cli_serve.h"

/**
 * struct cli_srv_conn - one connection the watchdog follows (w->lock)
 * @fd: its socket
 * @due: CLOCK_MONOTONIC ns by which its request must be whole (0: none)
 * @cut: its socket was shut down
 * @next: list link
 * @prev: list link
 */
struct cli_srv_conn {
	int fd;
	uint64_t due;
	int cut;
	struct cli_srv_conn *next;
	struct cli_srv_conn *prev;
};

void cli_srv_watch_notify(void *cls, struct MHD_Connection *c, void **ctx,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct cli_srv_watch *w = &((struct cli_srv *)cls)->watch;
	const union MHD_ConnectionInfo *ci;
	struct cli_srv_conn *k = *ctx;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		k = ci ? calloc(1, sizeof(*k)) : NULL;
		if (!k)
			return;	/* not followed: the idle timeout still applies */
		k->fd = ci->connect_fd;
		pthread_mutex_lock(&w->lock);
		k->due = cli_now_ns() + w->header_ns;
		k->next = w->head;
		if (w->head)
			w->head->prev = k;
		w->head = k;
		pthread_mutex_unlock(&w->lock);
		*ctx = k;
		return;
	}
	if (!k)
		return;
	pthread_mutex_lock(&w->lock);
	if (k->prev)
		k->prev->next = k->next;
	else
		w->head = k->next;
	if (k->next)
		k->next->prev = k->prev;
	pthread_mutex_unlock(&w->lock);
	free(k);
	*ctx = NULL;
}

void cli_srv_watch_request(struct cli_srv *s, struct MHD_Connection *c, int whole)
{
	const union MHD_ConnectionInfo *ci;
	struct cli_srv_watch *w = &s->watch;
	struct cli_srv_conn *k;

	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	k = ci ? ci->socket_context : NULL;
	if (!k)
		return;
	pthread_mutex_lock(&w->lock);
	if (!k->cut)
		k->due = whole ? 0 : cli_now_ns() + w->idle_ns + w->header_ns;
	pthread_mutex_unlock(&w->lock);
}

/* Cuts the connections past their deadline; returns the next one (lock held). */
static uint64_t sweep(struct cli_srv_watch *w, uint64_t now)
{
	uint64_t next = now + w->header_ns;
	struct cli_srv_conn *k;

	for (k = w->head; k; k = k->next) {
		if (!k->due)
			continue;
		if (k->due <= now) {
			shutdown(k->fd, SHUT_RDWR);
			k->due = 0;
			k->cut = 1;
			w->timeouts++;
		} else if (k->due < next) {
			next = k->due;
		}
	}
	return next;
}

static void *watch_main(void *arg)
{
	struct cli_srv_watch *w = arg;
	struct timespec t;
	uint64_t next;

	pthread_mutex_lock(&w->lock);
	while (!w->stop) {
		next = sweep(w, cli_now_ns());
		t.tv_sec = (time_t)(next / 1000000000ull);
		t.tv_nsec = (long)(next % 1000000000ull);
		pthread_cond_timedwait(&w->cond, &w->lock, &t);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

int cli_srv_watch_start(struct cli_srv *s, unsigned int header_s, unsigned int idle_s)
{
	struct cli_srv_watch *w = &s->watch;
	pthread_condattr_t ca;
	int ret;

	w->header_ns = (uint64_t)header_s * 1000000000ull;
	w->idle_ns = (uint64_t)idle_s * 1000000000ull;
	pthread_mutex_init(&w->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cond, &ca);
	pthread_condattr_destroy(&ca);
	ret = pthread_create(&w->thr, NULL, watch_main, w);
	if (ret) {
		pthread_cond_destroy(&w->cond);
		pthread_mutex_destroy(&w->lock);
	}
	return -ret;
}

void cli_srv_watch_stop(struct cli_srv *s)
{
	struct cli_srv_watch *w = &s->watch;

	pthread_mutex_lock(&w->lock);
	w->stop = 1;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thr, NULL);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
}

uint64_t cli_srv_watch_timeouts(struct cli_srv *s)
{
	uint64_t n;

	pthread_mutex_lock(&s->watch.lock);
	n = s->watch.timeouts;
	pthread_mutex_unlock(&s->watch.lock);
	return n;
}
