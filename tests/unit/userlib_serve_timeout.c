// SPDX-License-Identifier: MIT
/*
 * `wafer serve --header-timeout 1`: a client trickling its request's
 * headers a byte every 0.3 s (slowloris), or its body after whole headers,
 * is cut once its request is not whole a second after the connection
 * started, although libmicrohttpd's idle timeout (30 s) would keep it;
 * /metrics counts both.  A kept-alive connection's next request gets its
 * own time, a request being answered none (20 long completions queued on
 * one slot all finish), and normal requests still work.
 */
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wt_http.h"
#include "wt_util.h"

#define NBUSY	20
#define BODY	"{\"model\":\"stories260K\",\"prompt\":\"Once\",\"max_tokens\":508," \
		"\"temperature\":0}"

static int dial(unsigned int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * Sends @head at once, then @drip a byte every 0.3 s.  Returns the seconds
 * from the connection's start until the server closed it without a word,
 * -1 if it answered, -2 if @drip ran out first (or no connection).
 */
static double trickle(unsigned int port, const char *head, const char *drip)
{
	double t0 = wt_now();
	int fd = dial(port);
	struct pollfd p;
	double ret = -2;
	size_t i;
	char c;

	if (fd < 0)
		return -2;
	if (*head && send(fd, head, strlen(head), MSG_NOSIGNAL) < 0)
		ret = wt_now() - t0;
	for (i = 0; ret == -2 && drip[i]; i++) {
		if (send(fd, drip + i, 1, MSG_NOSIGNAL) < 0) {
			ret = wt_now() - t0;
			break;
		}
		p = (struct pollfd){ .fd = fd, .events = POLLIN };
		if (poll(&p, 1, 300) > 0)
			ret = recv(fd, &c, 1, 0) > 0 ? -1 : wt_now() - t0;
	}
	close(fd);
	return ret;
}

/* Three GET /health on one connection 0.6 s apart: how many got 200. */
static int kept_alive(unsigned int port)
{
	const char *req = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n";
	int fd = dial(port), i, ok = 0;
	char buf[1024];
	ssize_t n;

	for (i = 0; fd >= 0 && i < 3; i++) {
		if (i)
			usleep(600000);
		if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0)
			break;
		n = recv(fd, buf, sizeof(buf) - 1, 0);
		if (n <= 0)
			break;
		buf[n] = '\0';
		ok += !strncmp(buf, "HTTP/1.1 200", 12) && strstr(buf, "\"ok\"");
	}
	if (fd >= 0)
		close(fd);
	return ok;
}

/**
 * struct client - one request from a thread
 * @port: the server
 * @r: its answer
 */
struct client {
	unsigned int port;
	struct wt_http r;
};

static void *post(void *arg)
{
	struct client *c = arg;

	wt_http(c->port, "POST", "/v1/completions", BODY, 0, &c->r);
	return NULL;
}

/* Long completions queued on one slot: the last waits for all the others. */
static void busy(const struct wt_server *s)
{
	struct client c[NBUSY];
	pthread_t t[NBUSY];
	double t0 = wt_now();
	int i, ok = 0;

	for (i = 0; i < NBUSY; i++) {
		c[i].port = s->port;
		pthread_create(&t[i], NULL, post, &c[i]);
	}
	for (i = 0; i < NBUSY; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < NBUSY; i++) {
		const char *a = c[i].r.body ? strstr(c[i].r.body, "\"choices\"") : NULL;
		const char *b = c[0].r.body ? strstr(c[0].r.body, "\"choices\"") : NULL;

		ok += c[i].r.status == 200 && a && b && !strcmp(a, b) &&
			strstr(a, "\"finish_reason\"");
	}
	for (i = 0; i < NBUSY; i++)
		wt_http_free(&c[i].r);
	wt_ok(ok == NBUSY, "%d completions of 508 tokens queued on 1 slot all answered in full, "
	      "the same (%d; %.2f s: no header timeout while queued or running)", NBUSY, ok,
	      wt_now() - t0);
}

int main(void)
{
	const char *model = wt_model_path("stories260K.bin");
	char *mp = model ? strdup(model) : NULL, *tok, pad[400], slow[512];
	struct wt_server s;
	struct wt_http r;
	double t;
	int st;

	signal(SIGPIPE, SIG_IGN);
	tok = wt_model_path("tok512.bin") ? strdup(wt_model_path("tok512.bin")) : NULL;
	if (!wt_ok(mp && tok, "shared model and tokenizer found"))
		return wt_done();
	wt_http_init();
	st = system("\"${BUILD:-build}/bin/wafer\" serve x -z y --header-timeout 0 2>&1 | "
		    "grep -q \"bad value '0' for --header-timeout\"");
	wt_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "--header-timeout 0 is refused by name");
	if (!wt_ok(!wt_server_start(&s, mp, tok, "--slots 1 --header-timeout 1"),
		   "wafer serve --slots 1 --header-timeout 1 starts"))
		return wt_done();
	memset(pad, 'a', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	snprintf(slow, sizeof(slow), "POST /v1/completions HTTP/1.1\r\nHost: x\r\nX-Pad: %s", pad);
	t = trickle(s.port, "", slow);
	wt_ok(t >= 0.9 && t < 10, "slowloris: headers a byte every 0.3 s, closed without an "
	      "answer after %.2f s (timeout 1 s, idle timeout 30 s)", t);
	t = trickle(s.port, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 400\r\n"
		    "Content-Type: application/json\r\n\r\n", pad);
	wt_ok(t >= 0.9 && t < 10, "a body a byte every 0.3 s after whole headers: closed after "
	      "%.2f s", t);
	wt_ok(wt_server_metric(&s, "wafer_serve_header_timeouts_total") == 2,
	      "/metrics: wafer_serve_header_timeouts_total 2");
	wt_ok(kept_alive(s.port) == 3, "a kept-alive connection: 3 requests 0.6 s apart all "
	      "answered (each request has its own time)");
	busy(&s);
	wt_http(s.port, "POST", "/v1/completions",
		"{\"model\":\"stories260K\",\"prompt\":\"Once\",\"max_tokens\":4}", 0, &r);
	wt_ok(r.status == 200 && strstr(r.body, "\"text\""), "a normal request still works");
	wt_http_free(&r);
	wt_ok(wt_server_metric(&s, "wafer_serve_header_timeouts_total") == 2,
	      "and no other connection was cut");
	st = wt_server_stop(&s, SIGTERM);
	wt_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "SIGTERM: exit 0");
	free(mp);
	free(tok);
	return wt_done();
}
