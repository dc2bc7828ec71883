// SPDX-License-Identifier: MIT
/* `wafer node`'s control connection: whole messages, bounded waits (wafer_node_io.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wafer_node_io.h"

static int wait_fd(int fd, short ev, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = ev };
	int r;

	do
		r = poll(&p, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	return r ? 0 : -ETIMEDOUT;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *b = buf;

	while (len) {
		ssize_t w = send(fd, b, len, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			int r = wait_fd(fd, POLLOUT, 10000);

			if (r)
				return r;
			continue;
		}
		if (w <= 0)
			return w < 0 ? -errno : -ECONNRESET;
		b += w;
		len -= (size_t)w;
	}
	return 0;
}

int wnd_send(int fd, enum wnd_type type, const void *p, size_t len, const void *p2,
	     size_t len2)
{
	unsigned char h[WND_HDR];
	int r;

	wnd_put_hdr(h, type, (uint32_t)(len + len2));
	r = write_all(fd, h, sizeof(h));
	if (!r && len)
		r = write_all(fd, p, len);
	if (!r && len2)
		r = write_all(fd, p2, len2);
	return r;
}

int wnd_read(int fd, void *buf, size_t len, int timeout_ms)
{
	char *b = buf;

	while (len) {
		ssize_t r;
		int w = wait_fd(fd, POLLIN, timeout_ms);

		if (w)
			return w;
		r = recv(fd, b, len, 0);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -ECONNRESET;
		b += r;
		len -= (size_t)r;
	}
	return 0;
}

int wnd_recv(int fd, struct wnd_hdr *h, void *buf, size_t max, int timeout_ms, char *why,
	     size_t n)
{
	unsigned char hb[WND_HDR];
	int r = wnd_read(fd, hb, sizeof(hb), timeout_ms);

	if (r)
		return r;
	r = wnd_parse_hdr(hb, h, why, n);
	if (r)
		return r;
	if (h->type == WND_LOAD)
		return 0;
	if (h->len > max) {
		snprintf(why, n, "message type %u of %u bytes (at most %zu here)", h->type, h->len,
			 max);
		return -EPROTO;
	}
	return wnd_read(fd, buf, h->len, timeout_ms);
}

int wnd_connect(const char *host, unsigned int port, int timeout_ms)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai;
	char ps[16];
	int fd, r, one = 1, err = 0;
	socklen_t el = sizeof(err);

	snprintf(ps, sizeof(ps), "%u", port);
	r = getaddrinfo(host, ps, &hints, &ai);
	if (r)
		return -EHOSTUNREACH;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		freeaddrinfo(ai);
		return -errno;
	}
	r = connect(fd, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	if (r && errno != EINPROGRESS) {
		r = -errno;
		close(fd);
		return r;
	}
	if (r) {
		r = wait_fd(fd, POLLOUT, timeout_ms);
		if (!r && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el))
			r = -errno;
		if (!r && err)
			r = -err;
		if (r) {
			close(fd);
			return r;
		}
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

int wnd_listen(const char *addr, unsigned int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd, one = 1;

	if (addr && *addr && inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
		return -EINVAL;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16)) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

void wnd_addr(int fd, int local, char *out, size_t n)
{
	struct sockaddr_storage ss;
	socklen_t l = sizeof(ss);
	char a[64] = "?";
	unsigned int port = 0;

	if (!(local ? getsockname(fd, (struct sockaddr *)&ss, &l) :
		      getpeername(fd, (struct sockaddr *)&ss, &l))) {
		if (ss.ss_family == AF_INET) {
			struct sockaddr_in *s = (struct sockaddr_in *)&ss;

			inet_ntop(AF_INET, &s->sin_addr, a, sizeof(a));
			port = ntohs(s->sin_port);
		} else if (ss.ss_family == AF_INET6) {
			struct sockaddr_in6 *s = (struct sockaddr_in6 *)&ss;

			inet_ntop(AF_INET6, &s->sin6_addr, a, sizeof(a));
			port = ntohs(s->sin6_port);
		}
	}
	snprintf(out, n, "%s:%u", a, port);
}

void wnd_linger(int fd, int timeout_ms)
{
	uint64_t waited = 0;
	char buf[4096];

	shutdown(fd, SHUT_WR);
	while (waited < (uint64_t)timeout_ms && !wait_fd(fd, POLLIN, 100)) {
		ssize_t r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
			return;
		waited += r > 0 ? 0 : 100;
	}
}
