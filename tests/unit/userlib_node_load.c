// SPDX-License-Identifier: MIT
/*
 * Unit test: a `wafer node` LOAD (userlib/lib/wafer_node.c), a node of one
 * in-process device on 127.0.0.1 and a control connection without links,
 * a synthetic Sol-shaped model of 5 layers cut into parts as a chain's
 * client cuts them (wafer_blob_part()):
 *
 * - a part of the middle layers loads (LOADED: no embedding, no head),
 *   then a part of the last layer (the head); UNLOAD between;
 * - a part that is not the layers its LOAD names is refused naming the
 *   field, and the connection closes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/wafer_blob_part.h"
#include "lib/wafer_node_io.h"
#include "lib/wafer_node_wire.h"
#include "wafer.h"
#include "wafer_link.h"
#include "wfs_model.h"
#include "wt_util.h"

static volatile int stop;
static struct wafer_node_opts opts;

static void *serve(void *arg)
{
	(void)arg;
	wafer_node_serve(&opts);
	return NULL;
}

/* Sends TYPE with P, P2; the answer's type (or -errno), its payload in BUF, an ERROR's text. */
static int ask(int fd, enum wnd_type type, const void *p, size_t len, const void *p2,
	       size_t len2, unsigned char *buf, char *text, size_t tn)
{
	char why[200];
	struct wnd_hdr hd;
	int r = wnd_send(fd, type, p, len, p2, len2), e;

	text[0] = 0;
	if (!r)
		r = wnd_recv(fd, &hd, buf, WND_MSG_MAX, 20000, why, sizeof(why));
	if (r)
		return r;
	if (hd.type == WND_ERROR)
		wnd_get_error(buf, hd.len, &e, text, tn, why, sizeof(why));
	return (int)hd.type;
}

/* LOADs layers FIRST+COUNT with the part of layers PF+PC; the answer. */
static int load(int fd, const void *blob, const struct wfs_model_info *mi, unsigned int first,
		unsigned int count, unsigned int pf, unsigned int pc, struct wnd_loaded *l,
		char *text, size_t tn)
{
	struct wnd_load ld = { .layer_first = first, .layer_count = count };
	unsigned char out[64], buf[WND_MSG_MAX], *part;
	size_t plen;
	char why[200];
	int r;

	if (wafer_blob_part(blob, mi, pf, pc, &part, &plen))
		return -EINVAL;
	r = ask(fd, WND_LOAD, out, wnd_put_load(out, &ld), part, plen, buf, text, tn);
	free(part);
	if (r == WND_LOADED && wnd_get_loaded(buf, 24, l, why, sizeof(why)))
		return -EPROTO;
	return r;
}

int main(void)
{
	static const unsigned int devices[] = { 0 };
	struct wafer_convert_opts c = { .wbits = 8, .group_size = 4 };
	struct wnd_hello h = { .link_version = WAFER_LINK_VERSION, .device = 0 };
	unsigned char out[64], buf[WND_MSG_MAX];
	unsigned int port = wt_free_port();
	struct wafer_synth_opts sy;
	struct wfs_model_info mi;
	struct wnd_loaded l;
	char text[256];
	void *blob = NULL;
	size_t len = 0;
	pthread_t t;
	int fd = -1, r, i;

	if (!wt_ok(!wafer_synth_preset("sol", &sy, &c.moe), "the sol preset"))
		return wt_done();
	sy.n_layers = 5;
	if (!wt_ok(!wafer_synthesize(&sy, &c, &blob, &len) && !wfs_model_parse(blob, len, &mi),
		   "a synthetic Sol-shaped model of 5 layers") || !wt_ok(port, "a free port"))
		return wt_done();
	opts = (struct wafer_node_opts){ .addr = "127.0.0.1", .port = port, .devices = devices,
					 .n_devices = 1, .inproc = 1, .timeout_ms = 10000,
					 .log = stderr, .stop = &stop };
	if (!wt_ok(!pthread_create(&t, NULL, serve, NULL), "the node runs"))
		return wt_done();
	for (i = 0; i < 100 && fd < 0; i++) {
		fd = wnd_connect("127.0.0.1", port, 5000);
		if (fd < 0)
			usleep(20000);
	}
	r = fd < 0 ? fd : ask(fd, WND_HELLO, out, wnd_put_hello(out, &h), NULL, 0, buf, text,
			      sizeof(text));
	if (!wt_ok(r == WND_WELCOME, "device 0 welcomes (%d)", r))
		goto stop;

	r = load(fd, blob, &mi, 2, 2, 2, 2, &l, text, sizeof(text));
	wt_ok(r == WND_LOADED && !l.embed && !l.head, "a part of layers 2+2 loads: LOADED (%d%s%s)",
	      r, text[0] ? ": " : "", text);
	r = ask(fd, WND_UNLOAD, NULL, 0, NULL, 0, buf, text, sizeof(text));
	wt_ok(r == WND_DONE, "UNLOAD: DONE (%d)", r);
	r = load(fd, blob, &mi, 4, 1, 4, 1, &l, text, sizeof(text));
	wt_ok(r == WND_LOADED && !l.embed && l.head, "a part of layer 4+1 loads, with the head "
	      "(%d%s%s)", r, text[0] ? ": " : "", text);
	ask(fd, WND_UNLOAD, NULL, 0, NULL, 0, buf, text, sizeof(text));

	r = load(fd, blob, &mi, 1, 2, 2, 2, &l, text, sizeof(text));
	wt_ok(r == WND_ERROR &&
	      strstr(text, "closed: LOAD: the blob's first_layer 2, not the layer_first 1 asked"),
	      "the part of other layers is refused: %s", text);
	r = ask(fd, WND_HEALTH, NULL, 0, NULL, 0, buf, text, sizeof(text));
	wt_ok(r < 0, "and the connection is closed (%d)", r);
stop:
	if (fd >= 0)
		close(fd);
	stop = 1;
	pthread_join(t, NULL);
	free(blob);
	return wt_done();
}
