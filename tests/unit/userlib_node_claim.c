// SPDX-License-Identifier: MIT
/*
 * Unit test: `wafer node` hands a device from one chain to the next
 * (userlib/lib/wafer_node.c), a node of in-process devices on 127.0.0.1
 * and control connections without links:
 *
 * - a HELLO claims a device (WELCOME); a second HELLO for it while the
 *   first client is connected is refused at once ("in another chain");
 * - once the first client has hung up, a HELLO sent right after, while
 *   its session still works on the LOAD of a large model (the seed's
 *   shape, 16 MB) the client sent before it went, waits for the free and
 *   is welcomed: a chain that follows another at once gets its devices;
 * - the node's log says each.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/wafer_node_io.h"
#include "lib/wafer_node_wire.h"
#include "wafer.h"
#include "wafer_link.h"
#include "wt_util.h"

static volatile int stop;
static struct wafer_node_opts opts;

static void *serve(void *arg)
{
	(void)arg;
	wafer_node_serve(&opts);
	return NULL;
}

/* A control connection's HELLO for @device; the answer's type (or -errno), its text in @text. */
static int hello(unsigned int port, unsigned int device, int *fdp, char *text, size_t tn)
{
	struct wnd_hello h = { .link_version = WAFER_LINK_VERSION, .device = device };
	unsigned char out[64], buf[WND_MSG_MAX];
	struct wnd_hdr hd;
	char why[200];
	int fd, r, i;

	text[0] = 0;
	/* The node may still be coming up. */
	for (i = 0; i < 100; i++) {
		fd = wnd_connect("127.0.0.1", port, 5000);
		if (fd >= 0)
			break;
		usleep(20000);
	}
	if (fd < 0)
		return fd;
	*fdp = fd;
	r = wnd_send(fd, WND_HELLO, out, wnd_put_hello(out, &h), NULL, 0);
	if (!r)
		r = wnd_recv(fd, &hd, buf, sizeof(buf), 20000, why, sizeof(why));
	if (r)
		return r;
	if (hd.type == WND_REFUSE)
		wnd_get_text(buf, hd.len, text, tn, why, sizeof(why));
	return (int)hd.type;
}

/* Occurrences of @what in the log at @path so far (read into @buf). */
static int count(const char *path, const char *what, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	const char *p = buf;
	size_t n = 0;
	int k = 0;

	if (f) {
		n = fread(buf, 1, size - 1, f);
		fclose(f);
	}
	buf[n] = 0;
	while ((p = strstr(p, what))) {
		k++;
		p++;
	}
	return k;
}

int main(void)
{
	static const unsigned int devices[] = { 0 };
	char text[256], path[] = "/tmp/wafer-node-claim-XXXXXX", log[8192];
	int fd1 = -1, fd2 = -1, fd3 = -1, lfd = mkstemp(path), r;
	unsigned int port = wt_free_port();
	struct wafer_convert_opts c = { .wbits = 8, .group_size = 4 };
	struct wnd_load ld = { .layer_first = 0, .layer_count = 80 };
	unsigned char out[64];
	struct wafer_synth_opts sy;
	void *blob = NULL;
	size_t len = 0;
	pthread_t t;
	FILE *f;
	int i, q = 0, ret;

	if (!wt_ok(port && lfd >= 0, "a free port (%u) and a log file", port))
		return wt_done();
	f = fdopen(lfd, "w+");
	opts = (struct wafer_node_opts){ .addr = "127.0.0.1", .port = port, .devices = devices,
					 .n_devices = 1, .inproc = 1, .timeout_ms = 10000,
					 .log = f, .stop = &stop };
	if (!wt_ok(!pthread_create(&t, NULL, serve, NULL), "the node runs"))
		return wt_done();

	r = hello(port, 0, &fd1, text, sizeof(text));
	wt_ok(r == WND_WELCOME, "a HELLO for device 0: WELCOME (%d)", r);
	r = hello(port, 0, &fd2, text, sizeof(text));
	wt_ok(r == WND_REFUSE && strstr(text, "device 0 is in another chain"),
	      "a second HELLO while the first client is connected: refused (%s)", text);
	close(fd2);
	ret = wafer_synth_preset("sol", &sy, &c.moe) || wafer_synthesize(&sy, &c, &blob, &len);
	if (!wt_ok(!ret, "a large model: %zu bytes", len))
		goto stop;
	/*
	 * Gone once the node's end has every byte (none left to send, so the
	 * hang-up reaches it at once): its session still reads and loads.
	 */
	r = wnd_send(fd1, WND_LOAD, out, wnd_put_load(out, &ld), blob, len);
	for (i = 0; i < 1000 && !ioctl(fd1, SIOCOUTQ, &q) && q > 0; i++)
		usleep(10000);
	close(fd1);
	wt_ok(!r, "the first client sent a LOAD and hung up");
	r = hello(port, 0, &fd3, text, sizeof(text));
	wt_ok(r == WND_WELCOME, "a HELLO right after the first client hung up: WELCOME (%d %s)",
	      r, text);
	close(fd3);
	free(blob);

	/* Both welcomed sessions leave (the node's threads use it until then). */
	for (i = 0; i < 200 && count(path, "left the chain; the device is free", log, sizeof(log)) < 2;
	     i++)
		usleep(50000);
stop:
	stop = 1;
	pthread_join(t, NULL);
	wt_ok(strstr(log, "refused: HELLO: device 0 is in another chain") &&
	      count(path, "left the chain; the device is free", log, sizeof(log)) == 2,
	      "the log says the refusal and both frees");
	fclose(f);
	unlink(path);
	return wt_done();
}
