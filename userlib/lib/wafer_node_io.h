/* SPDX-License-Identifier: MIT */
/*
 * `wafer node`'s control connection (TCP): whole messages in and out,
 * every wait bounded.  Used by the node (wafer_node.c) and the client's
 * chain backend (backends/wafer_net.c).
 */
#ifndef WAFER_NODE_IO_H
#define WAFER_NODE_IO_H

#include <stddef.h>
#include <stdint.h>

#include "wafer_node_wire.h"

/* Sends a message: header and @len bytes of payload (then @len2 of @p2). */
int wnd_send(int fd, enum wnd_type type, const void *p, size_t len, const void *p2,
	     size_t len2);
/*
 * Reads a message's header within @timeout_ms, checks it (wnd_parse_hdr)
 * and reads its payload (at most @max bytes into @buf; a LOAD's blob is
 * left for wnd_read()).  0; -ETIMEDOUT; -ECONNRESET on EOF; -EPROTO with
 * @why saying what was wrong.
 */
int wnd_recv(int fd, struct wnd_hdr *h, void *buf, size_t max, int timeout_ms, char *why,
	     size_t n);
/* Reads exactly @len bytes, each gap bounded by @timeout_ms. */
int wnd_read(int fd, void *buf, size_t len, int timeout_ms);
/* A TCP connection to @host:@port within @timeout_ms; the fd or -errno. */
int wnd_connect(const char *host, unsigned int port, int timeout_ms);
/* A TCP listener on @addr (NULL: any):@port; the fd or -errno. */
int wnd_listen(const char *addr, unsigned int port);
/*
 * Before a close that follows a refusal: no more to send, and what the
 * peer still sends is read and dropped (up to @timeout_ms) so that the
 * close does not reset the connection before the peer read the reason.
 */
void wnd_linger(int fd, int timeout_ms);
/* "ADDR:PORT" of @fd's peer (or of its own end with @local). */
void wnd_addr(int fd, int local, char *out, size_t n);

#endif /* WAFER_NODE_IO_H */
