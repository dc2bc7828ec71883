// SPDX-License-Identifier: MIT
/*
 * VM program: both ends of libwafer's link (userlib/wafer_link.h) and a
 * hostile sender, for tests/vm/cases/link.sh (one guest, Soft-RoCE).
 *
 *   link recv ADDR PORT [--drm] [--accepts N] [--slots S] [--bytes B]
 *             [--timeout MS] [--hold]
 *     accepts N senders in turn; checks every record bit for bit (a pattern
 *     of its sequence), its slot's syncobj signalled on arrival and, with
 *     --drm, the same bytes through the device's PRIME import of the slot
 *     (mmap of the GEM handle); releases each slot (--hold: keeps them, so
 *     the sender runs out of credits).  Prints "ok - ..." lines, and for a
 *     link that ends "closed: MESSAGE" or "refused: MESSAGE".
 *   link send HOST PORT [--count K] [--len L] [--stall-after J] [--timeout MS]
 *     sends K records of L bytes, then flushes; --stall-after J: sends J and
 *     then hangs without a word (a dead host, as the peer sees it).
 *   link hostile HOST PORT MODE [--timeout MS]
 *     garbage | version | silent (hellos); replay | skip | slot | wrongslot |
 *     overlong | empty (records after one good record).
 * Exit status 0 when every check passed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xf86drm.h>

#include "wafer.h"
#include "wafer_link.h"
#include "wt_dev.h"
#include "wt_util.h"

#ifdef WAFER_HAVE_RDMA
#include "lib/wafer_link_internal.h"

static int timeout_ms = 5000;

static unsigned char pattern(uint32_t seq, size_t i)
{
	return (unsigned char)(seq * 131u + i * 7u + (i >> 8));
}

static void fill(unsigned char *p, uint32_t seq, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pattern(seq, i);
}

static int matches(const unsigned char *p, uint32_t seq, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pattern(seq, i))
			return 0;
	return 1;
}

/* The device's view of a slot: its PRIME import mapped through the device. */
static void *device_map(int fd, uint32_t handle, size_t *size)
{
	struct drm_wafer_bo_info i = { .handle = handle };
	void *p;

	if (wt_ioctl(fd, DRM_IOCTL_WAFER_BO_INFO, &i))
		return NULL;
	p = mmap(NULL, i.size, PROT_READ, MAP_SHARED, fd, (off_t)i.mmap_offset);
	*size = i.size;
	return p == MAP_FAILED ? NULL : p;
}

static int signalled(int fd, uint32_t h)
{
	return !drmSyncobjWait(fd, &h, 1, 0, 0, NULL);
}

/* One accepted link: records until the link ends. */
static void serve_link(struct wafer_link *l, int drm_fd, int hold)
{
	unsigned int n = wafer_link_slots(l), slot, i, sig = 0, written = 0;
	size_t l_len[WAFER_LINK_MAX_SLOTS] = { 0 };
	void *dmap[WAFER_LINK_MAX_SLOTS] = { 0 };
	size_t dsize[WAFER_LINK_MAX_SLOTS] = { 0 }, len;
	uint32_t seq = 0, good = 0, dev_good = 0;

	for (i = 0; drm_fd >= 0 && i < n; i++) {
		dmap[i] = device_map(drm_fd, wafer_link_slot_bo(l, i), &dsize[i]);
		wt_ok(wafer_link_slot_bo(l, i) && dmap[i] && dsize[i] == wafer_link_slot_bytes(l),
		      "slot %u is a PRIME import on the device (%zu bytes)", i, dsize[i]);
	}
	for (;;) {
		if (wafer_link_recv(l, &slot, &len)) {
			printf("closed: %s\n", wafer_last_error());
			break;
		}
		good += slot == seq % n && matches(wafer_link_slot(l, slot), seq, len);
		l_len[slot] = len;
		if (drm_fd >= 0) {
			sig += signalled(drm_fd, wafer_link_slot_syncobj(l, slot));
			dev_good += dmap[slot] && matches(dmap[slot], seq, len);
		}
		if (!hold && wafer_link_release(l, slot, 0)) {
			printf("closed: %s\n", wafer_last_error());
			seq++;
			break;
		}
		seq++;
	}
	if (seq) {
		wt_ok(good == seq, "%u of %u records bit-exact in their slots", good, seq);
		if (drm_fd >= 0) {
			wt_ok(sig == seq, "%u of %u slot syncobjs signalled on arrival", sig, seq);
			wt_ok(dev_good == seq, "%u of %u records read the same through the device",
			      dev_good, seq);
		}
	}
	/*
	 * What a bad record must not touch: a slot's last good record.  A free
	 * slot may hold what the NIC wrote there; it was never delivered.
	 */
	for (i = 0; i < n; i++) {
		const unsigned char *p = wafer_link_slot(l, i);
		uint32_t last = UINT32_MAX, s;
		size_t k;

		for (s = 0; s < seq; s++)
			if (s % n == i)
				last = s;
		if (last != UINT32_MAX) {
			if (!matches(p, last, l_len[i]))
				printf("slot %u: its last good record (sequence %u) was "
				       "overwritten\n", i, last);
			continue;
		}
		for (k = 0; k < wafer_link_slot_bytes(l) && !p[k]; k++)
			;
		written += k < wafer_link_slot_bytes(l);
	}
	printf("free slots written but not delivered: %u\n", written);
	for (i = 0; i < n; i++)
		if (dmap[i])
			munmap(dmap[i], dsize[i]);
	wafer_link_close(l);
}

static int cmd_recv(int argc, char **argv)
{
	struct wafer_link_opts o = { .slots = 4, .slot_bytes = 8192, .drm_fd = -1 };
	struct wafer_link_listener *ls;
	int accepts = 1, hold = 0, waits = 0, i;

	for (i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "--drm"))
			o.drm_fd = wt_dev_open(0);
		else if (!strcmp(argv[i], "--hold"))
			hold = 1;
		else if (!strcmp(argv[i], "--accepts") && i + 1 < argc)
			accepts = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--slots") && i + 1 < argc)
			o.slots = (unsigned int)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--bytes") && i + 1 < argc)
			o.slot_bytes = (size_t)atol(argv[++i]);
	}
	o.timeout_ms = timeout_ms;
	if (wafer_link_listen(argv[2], argv[3], &o, &ls)) {
		printf("not ok - listen: %s\n", wafer_last_error());
		return 1;
	}
	printf("listening\n");
	fflush(stdout);
	for (i = 0; i < accepts; i++) {
		struct wafer_link *l;

		if (wafer_link_accept(ls, &l)) {
			/* Nobody yet (the next sender still starting): not a link. */
			if (strstr(wafer_last_error(), "no peer connected") && waits++ < 5) {
				i--;
				continue;
			}
			printf("refused: %s\n", wafer_last_error());
			fflush(stdout);
			continue;
		}
		printf("accepted %s: %u slots of %zu bytes\n", wafer_link_peer(l),
		       wafer_link_slots(l), wafer_link_slot_bytes(l));
		printf("%s\n", wafer_link_slot_memory(l));
		serve_link(l, o.drm_fd, hold);
		fflush(stdout);
	}
	wafer_link_listener_close(ls);
	return wt_done();
}

static int cmd_send(int argc, char **argv)
{
	struct wafer_link_opts o = { .drm_fd = -1, .timeout_ms = timeout_ms };
	unsigned int count = 16, stall = UINT32_MAX, slot, k;
	struct wafer_link *l;
	size_t len = 5000;
	int i;

	for (i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "--count") && i + 1 < argc)
			count = (unsigned int)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--len") && i + 1 < argc)
			len = (size_t)atol(argv[++i]);
		else if (!strcmp(argv[i], "--stall-after") && i + 1 < argc)
			stall = (unsigned int)atoi(argv[++i]);
	}
	if (wafer_link_connect(argv[2], argv[3], &o, &l)) {
		printf("send failed: %s\n", wafer_last_error());
		return 1;
	}
	for (k = 0; k < count; k++) {
		if (k == stall) {
			printf("stalling after %u records\n", k);
			fflush(stdout);
			for (;;)
				pause();
		}
		if (wafer_link_acquire(l, &slot)) {
			printf("send failed: %s\n", wafer_last_error());
			return 1;
		}
		fill(wafer_link_slot(l, slot), k, len);
		if (wafer_link_send(l, len, 0)) {
			printf("send failed: %s\n", wafer_last_error());
			return 1;
		}
	}
	if (wafer_link_flush(l)) {
		printf("send failed: %s\n", wafer_last_error());
		return 1;
	}
	printf("ok - sent %u records of %zu bytes, every credit back\n", count, len);
	wafer_link_close(l);
	return 0;
}

static int cmd_hostile(char **argv)
{
	struct wafer_link_opts o = { .drm_fd = -1, .timeout_ms = timeout_ms };
	const char *mode = argv[4];
	unsigned char hello[32];
	const void *h = hello;
	size_t hlen = 16, bytes;
	struct wafer_link *l;
	unsigned int slot;
	int err;

	wlk_put_msg(hello, WAFER_LINK_VERSION, WLK_HELLO, 0, 0);
	if (!strcmp(mode, "garbage")) {
		memcpy(hello, "GET / HTTP/1.0\r\n\r\n", 18);
		hlen = 18;
	} else if (!strcmp(mode, "version")) {
		wlk_put_msg(hello, WAFER_LINK_VERSION + 1, WLK_HELLO, 0, 0);
	} else if (!strcmp(mode, "silent")) {
		/* Outlasts the receiver's wait for a hello. */
		h = NULL;
		o.timeout_ms = 3 * timeout_ms;
	}
	err = wlk_connect_raw(argv[2], argv[3], &o, h, hlen, &l);
	if (err) {
		printf("hostile: connect: %s\n", wafer_last_error());
		return 1;
	}
	if (!strcmp(mode, "garbage") || !strcmp(mode, "version") || !strcmp(mode, "silent")) {
		/* The receiver's answer (a refusal, or nothing but the close). */
		err = wlk_await_accept(l);
		printf("hostile %s: %s\n", mode, err ? wafer_last_error() : "accepted?!");
		wafer_link_close(l);
		return 0;
	}
	if (wlk_await_accept(l) || wafer_link_acquire(l, &slot)) {
		printf("hostile: hello: %s\n", wafer_last_error());
		return 1;
	}
	bytes = wafer_link_slot_bytes(l);
	/* One good record (sequence 0, slot 0), held by the receiver. */
	fill(wafer_link_slot(l, 0), 0, 100);
	wafer_link_send(l, 100, 0);
	/* The bad one goes into a free slot: what lands must not be delivered. */
	for (slot = 1; slot < wafer_link_slots(l); slot++)
		memset(wafer_link_slot(l, slot), 0xee, bytes);
	if (!strcmp(mode, "replay"))
		err = wlk_post_raw(l, 1, wlk_imm(0, 1), 100);
	else if (!strcmp(mode, "skip"))
		err = wlk_post_raw(l, 1, wlk_imm(2, 1), 100);
	else if (!strcmp(mode, "slot"))
		err = wlk_post_raw(l, 1, wlk_imm(1, 200), 100);
	else if (!strcmp(mode, "wrongslot"))
		err = wlk_post_raw(l, 2, wlk_imm(1, 2), 100);
	else if (!strcmp(mode, "overlong"))
		err = wlk_post_raw(l, 1, wlk_imm(1, 1), bytes + 1);
	else if (!strcmp(mode, "empty"))
		err = wlk_post_raw(l, 1, wlk_imm(1, 1), 0);
	else
		return printf("hostile: unknown mode %s\n", mode), 2;
	/* Wait for the receiver to close on us (or time out). */
	if (!err)
		err = wafer_link_flush(l);
	printf("hostile %s: %s\n", mode, err ? wafer_last_error() : "not closed?!");
	wafer_link_close(l);
	return 0;
}

int main(int argc, char **argv)
{
	const char *t = getenv("LINK_TIMEOUT_MS");

	if (t)
		timeout_ms = atoi(t);
	if (argc >= 4 && !strcmp(argv[1], "recv"))
		return cmd_recv(argc, argv);
	if (argc >= 4 && !strcmp(argv[1], "send"))
		return cmd_send(argc, argv);
	if (argc >= 5 && !strcmp(argv[1], "hostile"))
		return cmd_hostile(argv);
	fprintf(stderr, "usage: link recv|send|hostile ... (see the source)\n");
	return 2;
}
#else
int main(void)
{
	printf("SKIP: libwafer built without RDMA\n");
	return 77;
}
#endif
