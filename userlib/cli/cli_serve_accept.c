// SPDX-License-Identifier: MIT
/*
 * wafer serve: who gets a connection.  libmicrohttpd, at its connection
 * limit, accepts a connection and closes it at once, unread: the client
 * sees a reset.  So the server takes the listening socket from it
 * (MHD_quiesce_daemon()) and accepts here: below --max-connections a
 * connection goes to libmicrohttpd (MHD_add_connection()); past it, this
 * thread reads the request's head, answers 503 with Retry-After and an
 * OpenAI error, shuts its side and waits for the client to close (closing
 * with unread bytes would send a reset that can overtake the answer).
 *
 * A flood costs bounded memory and descriptors: at most REJECT_MAX
 * connections are being refused at once, each for at most HEAD_MS to send
 * its head and LINGER_MS to close after the answer; while all are busy the
 * listening socket is not polled and new connections wait in the kernel's
 * backlog, which drops what overflows it (the client retries its SYN)
 * rather than resetting it.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "cli.h"
#include "cli_serve.h"

#define REJECT_MAX	64
#define HEAD_MAX	2048
#define HEAD_MS		1000
#define LINGER_MS	1000

/**
 * struct reject - a connection past the limit being answered 503
 * @fd: its socket (-1: the entry is free)
 * @answered: the 503 went out; now waiting for the client to close
 * @due: CLOCK_MONOTONIC ns of the next step (answer anyway, or close)
 * @head: the request's first bytes (the line, the Origin header)
 * @len: bytes in @head
 * @log: the access log's record
 */
struct reject {
	int fd;
	int answered;
	uint64_t due;
	char head[HEAD_MAX + 1];
	size_t len;
	struct cli_srv_log_rec log;
};

/**
 * struct cli_srv_accept - the accepting thread
 * @s: the server
 * @d: libmicrohttpd's daemon
 * @a: the access options (CORS, the log)
 * @lfd: the listening socket
 * @wake: a pipe: a byte written to [1] stops the thread
 * @max_conn: --max-connections
 * @thr: the thread
 * @rej: the connections being refused
 */
struct cli_srv_accept {
	struct cli_srv *s;
	struct MHD_Daemon *d;
	const struct cli_srv_access *a;
	int lfd;
	int wake[2];
	unsigned int max_conn;
	pthread_t thr;
	struct reject rej[REJECT_MAX];
};

static unsigned int mhd_connections(struct MHD_Daemon *d)
{
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(d,
							     MHD_DAEMON_INFO_CURRENT_CONNECTIONS);

	return di ? di->num_connections : 0;
}

/* The value of header @name in @head (NUL-terminated), copied to @out; 0 or -1. */
static int header(const char *head, const char *name, char *out, size_t n)
{
	size_t nl = strlen(name), k;
	const char *p = head, *e;

	while ((p = strstr(p, "\r\n"))) {
		p += 2;
		if (!strncasecmp(p, name, nl) && p[nl] == ':') {
			p += nl + 1;
			while (*p == ' ' || *p == '\t')
				p++;
			e = strstr(p, "\r\n");
			k = e ? (size_t)(e - p) : strlen(p);
			if (k >= n)
				return -1;
			memcpy(out, p, k);
			out[k] = '\0';
			return 0;
		}
	}
	return -1;
}

/* The method and path of the request line, for the log. */
static void request_line(struct reject *r)
{
	char *sp, *sp2;

	r->head[r->len] = '\0';
	sp = strchr(r->head, ' ');
	if (!sp || sp - r->head >= (long)sizeof(r->log.method))
		return;
	snprintf(r->log.method, sizeof(r->log.method), "%.*s", (int)(sp - r->head), r->head);
	sp2 = strpbrk(sp + 1, " \r");
	snprintf(r->log.path, sizeof(r->log.path), "%.*s",
		 (int)(sp2 ? sp2 - sp - 1 : (long)strlen(sp + 1)), sp + 1);
}

/* The 503, in one non-blocking send (it fits an empty socket buffer). */
static void answer(struct cli_srv_accept *x, struct reject *r)
{
	struct cli_srv_error e = { 0 };
	char resp[1024], origin[256], cors[400] = "";
	char *body;
	int n;

	request_line(r);
	cli_srv_fail(&e, 503, "server_error", NULL, "too_many_connections",
		     "the server has its %u connections: retry later", x->max_conn);
	body = cli_srv_error_json(&e);
	if (x->a->origins) {
		if (!header(r->head, "Origin", origin, sizeof(origin)) &&
		    cli_srv_origin_ok(x->a, origin))
			snprintf(cors, sizeof(cors), "Vary: Origin\r\nAccess-Control-Allow-Origin: "
				 "%s\r\nAccess-Control-Expose-Headers: Retry-After\r\n", origin);
		else
			snprintf(cors, sizeof(cors), "Vary: Origin\r\n");
	}
	n = snprintf(resp, sizeof(resp), "HTTP/1.1 503 Service Unavailable\r\n"
		     "Content-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\n"
		     "%sContent-Length: %zu\r\n\r\n%s", cors, body ? strlen(body) : 0,
		     body ? body : "");
	free(body);
	if (n > 0 && (size_t)n < sizeof(resp))
		send(r->fd, resp, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	shutdown(r->fd, SHUT_WR);
	r->answered = 1;
	r->due = cli_now_ns() + LINGER_MS * 1000000ull;
	r->log.status = 503;
	cli_srv_log_request(x->a, &r->log, cli_now_ns());
	pthread_mutex_lock(&x->s->lock);
	x->s->m.requests[5]++;
	pthread_mutex_unlock(&x->s->lock);
}

static void drop(struct reject *r)
{
	close(r->fd);
	r->fd = -1;
}

/* @r is readable: its head (answered once whole), or what follows the answer. */
static void readable(struct cli_srv_accept *x, struct reject *r)
{
	char scratch[4096];
	ssize_t n;

	if (r->answered) {
		n = recv(r->fd, scratch, sizeof(scratch), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			drop(r);
		return;
	}
	n = recv(r->fd, r->head + r->len, HEAD_MAX - r->len, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n > 0) {
		r->len += (size_t)n;
		r->head[r->len] = '\0';
	}
	/* the head whole, too big to keep, or the client done sending */
	if (n <= 0 || strstr(r->head, "\r\n\r\n") || r->len == HEAD_MAX)
		answer(x, r);
}

static void client_name(const struct sockaddr_storage *sa, socklen_t len, char *out, size_t n)
{
	char host[NI_MAXHOST], port[NI_MAXSERV];

	snprintf(out, n, "-");
	if (getnameinfo((const struct sockaddr *)sa, len, host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV))
		return;
	snprintf(out, n, sa->ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
}

/*
 * One connection off the backlog: to libmicrohttpd, or refused here in
 * @free_slot.  Only this thread adds connections, so room seen before the
 * accept is room still.
 */
static void take(struct cli_srv_accept *x, struct reject *free_slot)
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);
	int fd = accept4(x->lfd, (struct sockaddr *)&sa, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	if (mhd_connections(x->d) < x->max_conn || !free_slot) {
		/* libmicrohttpd owns it now, and closes it if it fails */
		MHD_add_connection(x->d, fd, (struct sockaddr *)&sa, len);
		return;
	}
	memset(free_slot, 0, sizeof(*free_slot));
	free_slot->fd = fd;
	free_slot->due = cli_now_ns() + HEAD_MS * 1000000ull;
	free_slot->log.t_start = cli_now_ns();
	snprintf(free_slot->log.method, sizeof(free_slot->log.method), "-");
	snprintf(free_slot->log.path, sizeof(free_slot->log.path), "-");
	client_name(&sa, len, free_slot->log.client, sizeof(free_slot->log.client));
}

static void *accept_thread(void *arg)
{
	struct cli_srv_accept *x = arg;
	struct pollfd p[REJECT_MAX + 2];
	struct reject *slot[REJECT_MAX], *free_slot;
	unsigned int n, i;
	uint64_t now, next;
	int timeout;

	for (;;) {
		now = cli_now_ns();
		next = now + 1000000000ull;
		free_slot = NULL;
		p[0] = (struct pollfd){ .fd = x->wake[0], .events = POLLIN };
		n = 2;
		for (i = 0; i < REJECT_MAX; i++) {
			struct reject *r = &x->rej[i];

			if (r->fd >= 0 && r->due <= now) {
				if (r->answered)
					drop(r);
				else
					answer(x, r);
			}
			if (r->fd < 0) {
				free_slot = free_slot ? free_slot : r;
				continue;
			}
			next = r->due < next ? r->due : next;
			slot[n - 2] = r;
			p[n++] = (struct pollfd){ .fd = r->fd, .events = POLLIN };
		}
		/* no room and all refusing slots busy: new connections wait in the backlog */
		p[1] = (struct pollfd){ .fd = free_slot || mhd_connections(x->d) < x->max_conn ?
					      x->lfd : -1, .events = POLLIN };
		timeout = (int)((next - now) / 1000000ull) + 1;
		if (poll(p, n, timeout) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			break;
		for (i = 2; i < n; i++)
			if (p[i].revents)
				readable(x, slot[i - 2]);
		if (p[1].revents & POLLIN)
			take(x, free_slot);
	}
	return NULL;
}

int cli_srv_accept_start(struct cli_srv *s, struct MHD_Daemon *d,
			 const struct cli_srv_access *a, unsigned int max_conn,
			 struct cli_srv_accept **out)
{
	struct cli_srv_accept *x = calloc(1, sizeof(*x));
	MHD_socket lfd;
	unsigned int i;

	if (!x)
		return -1;
	x->s = s;
	x->d = d;
	x->a = a;
	x->max_conn = max_conn;
	for (i = 0; i < REJECT_MAX; i++)
		x->rej[i].fd = -1;
	lfd = MHD_quiesce_daemon(d);
	if (lfd == MHD_INVALID_SOCKET || pipe2(x->wake, O_CLOEXEC)) {
		if (lfd != MHD_INVALID_SOCKET)
			close(lfd);
		free(x);
		return -1;
	}
	x->lfd = lfd;
	fcntl(lfd, F_SETFL, fcntl(lfd, F_GETFL) | O_NONBLOCK);
	if (pthread_create(&x->thr, NULL, accept_thread, x)) {
		close(x->wake[0]);
		close(x->wake[1]);
		close(lfd);
		free(x);
		return -1;
	}
	*out = x;
	return 0;
}

void cli_srv_accept_stop(struct cli_srv_accept *x)
{
	unsigned int i;

	if (!x)
		return;
	if (write(x->wake[1], "", 1) < 0)
		perror("wafer serve: stopping the accepting thread");
	pthread_join(x->thr, NULL);
	for (i = 0; i < REJECT_MAX; i++)
		if (x->rej[i].fd >= 0)
			close(x->rej[i].fd);
	close(x->lfd);
	close(x->wake[0]);
	close(x->wake[1]);
	free(x);
}
