// SPDX-License-Identifier: MIT
/*
 * wafer top --url: a plain HTTP/1.0 GET of a running wafer serve's
 * /metrics (no TLS: the server speaks plain HTTP), and the Prometheus text
 * format's samples read back.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli_top.h"

#define HTTP_MAX	(4u << 20)	/* a /metrics page is a few KiB */
#define HTTP_TIMEOUT_MS	5000

/* "http://HOST[:PORT][/PATH]" into its parts; 0 or -1. */
static int split_url(const char *url, char *host, size_t hl, char *port, size_t pl,
		     const char **path)
{
	const char *h, *end, *colon;
	size_t n;

	if (strncmp(url, "http://", 7))
		return -1;
	h = url + 7;
	end = h + strcspn(h, "/");
	*path = *end && strcmp(end, "/") ? end : "/metrics";	/* the server's base URL too */
	if (*h == '[') {	/* [v6]:port */
		colon = memchr(h, ']', (size_t)(end - h));
		if (!colon)
			return -1;
		n = (size_t)(colon - h - 1);
		h++;
		colon = colon[1] == ':' ? colon + 1 : NULL;
	} else {
		colon = memchr(h, ':', (size_t)(end - h));
		n = (size_t)((colon ? colon : end) - h);
	}
	if (!n || n >= hl)
		return -1;
	memcpy(host, h, n);
	host[n] = '\0';
	n = colon ? (size_t)(end - colon - 1) : 0;
	if (n >= pl || (colon && !n))
		return -1;
	if (colon) {
		memcpy(port, colon + 1, n);
		port[n] = '\0';
	} else {
		snprintf(port, pl, "80");
	}
	return 0;
}

static int dial(const char *host, const char *port, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	int fd = -1, ret = getaddrinfo(host, port, &hints, &res);

	if (ret) {
		snprintf(err, errlen, "%s: %s", host, gai_strerror(ret));
		return -1;
	}
	for (ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen)) {
			ret = errno;
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(res);
	if (fd < 0)
		snprintf(err, errlen, "%s port %s: %s (is wafer serve running there?)", host,
			 port, strerror(ret ? ret : ECONNREFUSED));
	return fd;
}

int cli_http_get(const char *url, char **body, char *err, size_t errlen)
{
	char host[256], port[16], req[512], *buf = NULL, *p;
	size_t len = 0, cap = 0;
	struct pollfd pfd;
	const char *path;
	int fd, status;
	ssize_t n;

	*body = NULL;
	if (split_url(url, host, sizeof(host), port, sizeof(port), &path)) {
		snprintf(err, errlen, "%s: not an http://HOST[:PORT][/PATH] URL", url);
		return -1;
	}
	fd = dial(host, port, err, errlen);
	if (fd < 0)
		return -1;
	n = snprintf(req, sizeof(req), "GET %.300s HTTP/1.0\r\nHost: %s\r\n\r\n", path, host);
	if (write(fd, req, (size_t)n) != n) {
		snprintf(err, errlen, "%s: %s", url, strerror(errno));
		close(fd);
		return -1;
	}
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	for (;;) {
		if (len + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 16384;
			p = cap <= HTTP_MAX ? realloc(buf, cap) : NULL;
			if (!p) {
				snprintf(err, errlen, "%s: answer too large", url);
				goto fail;
			}
			buf = p;
		}
		if (poll(&pfd, 1, HTTP_TIMEOUT_MS) != 1) {
			snprintf(err, errlen, "%s: no answer in %d ms", url, HTTP_TIMEOUT_MS);
			goto fail;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errlen, "%s: %s", url, strerror(errno));
			goto fail;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (!buf) {
		snprintf(err, errlen, "%s: empty answer", url);
		return -1;
	}
	buf[len] = '\0';
	p = strstr(buf, "\r\n\r\n");
	if (sscanf(buf, "HTTP/%*d.%*d %d", &status) != 1 || !p) {
		snprintf(err, errlen, "%s: not an HTTP answer", url);
		free(buf);
		return -1;
	}
	if (status != 200) {
		snprintf(err, errlen, "%s: HTTP status %d", url, status);
		free(buf);
		return -1;
	}
	memmove(buf, p + 4, len - (size_t)(p + 4 - buf) + 1);
	*body = buf;
	return 0;
fail:
	close(fd);
	free(buf);
	return -1;
}

int cli_prom_value(const char *text, const char *name, const char *labels, double *out)
{
	size_t nl = strlen(name), ll = labels ? strlen(labels) : 0;
	const char *l, *v;
	char *end;

	for (l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (*l == '#' || strncmp(l, name, nl))
			continue;
		v = l + nl;
		if (labels) {
			if (*v != '{' || strncmp(v + 1, labels, ll) || v[1 + ll] != '}')
				continue;
			v += ll + 2;
		}
		if (*v != ' ')
			continue;
		*out = strtod(v + 1, &end);
		if (end == v + 1)
			return -1;
		return 0;
	}
	return -1;
}
