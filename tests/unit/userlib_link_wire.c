// SPDX-License-Identifier: MIT
/*
 * Unit test: the link's wire format and the checks on what arrives
 * (userlib/lib/wafer_link_wire.c), without a network:
 *
 * - a control message round-trips through wlk_put_msg/wlk_parse_msg; a
 *   short one, bad magic, another version and an unknown type are refused
 *   with a message naming what is wrong;
 * - an ACCEPT with slots or slot bytes out of range, or a length not
 *   matching its slot count, is refused;
 * - records: the expected one passes; a slot out of range, a replayed or
 *   skipped sequence, the wrong slot for the sequence, a record without a
 *   credit, a zero or too long length each fail and say which; the
 *   sequence wraps at 24 bits;
 * - credits only in order and only for records sent;
 * - the link API of a libwafer without RDMA (when so built) says so.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/wafer_link_wire.h"
#include "wafer.h"
#include "wafer_link.h"
#include "wt_util.h"

static char why[200];

static int rejects(int ret, const char *pattern)
{
	return ret == -EPROTO && strstr(why, pattern);
}

static void test_messages(void)
{
	unsigned char buf[64];
	struct wlk_msg m;

	wlk_put_msg(buf, WAFER_LINK_VERSION, WLK_CREDIT, 7, 9);
	wt_ok(!wlk_parse_msg(buf, 16, &m, why, sizeof(why)) && m.type == WLK_CREDIT &&
	      m.arg0 == 7 && m.arg1 == 9 && m.version == WAFER_LINK_VERSION,
	      "a control message round-trips");
	wt_ok(buf[0] == 0x57 && buf[1] == 0x4c && buf[2] == 0x4e && buf[3] == 0x4b,
	      "the magic is \"WLNK\" on the wire");
	wt_ok(rejects(wlk_parse_msg(buf, 15, &m, why, sizeof(why)), "short control message of 15"),
	      "a short message is refused: %s", why);
	buf[0] ^= 1;
	wt_ok(rejects(wlk_parse_msg(buf, 16, &m, why, sizeof(why)), "bad magic"),
	      "bad magic is refused: %s", why);
	wlk_put_msg(buf, WAFER_LINK_VERSION + 1, WLK_HELLO, 0, 0);
	wt_ok(rejects(wlk_parse_msg(buf, 16, &m, why, sizeof(why)), "link version 2, this end 1"),
	      "another version is refused: %s", why);
	wlk_put_msg(buf, WAFER_LINK_VERSION, 99, 0, 0);
	wt_ok(rejects(wlk_parse_msg(buf, 16, &m, why, sizeof(why)), "unknown control message type 99"),
	      "an unknown type is refused: %s", why);
}

static void test_accept(void)
{
	struct wlk_msg m = { WLK_MAGIC, WAFER_LINK_VERSION, WLK_ACCEPT, 4, 4096 };

	wt_ok(!wlk_check_accept(&m, WLK_ACCEPT_BYTES(4), why, sizeof(why)), "a good ACCEPT");
	wt_ok(rejects(wlk_check_accept(&m, WLK_ACCEPT_BYTES(5), why, sizeof(why)), "expected 40"),
	      "an ACCEPT whose length does not match its slots: %s", why);
	m.arg0 = 0;
	wt_ok(rejects(wlk_check_accept(&m, WLK_ACCEPT_BYTES(0), why, sizeof(why)), "0 slots"),
	      "an ACCEPT of no slots: %s", why);
	m.arg0 = WAFER_LINK_MAX_SLOTS + 1;
	wt_ok(rejects(wlk_check_accept(&m, WLK_ACCEPT_BYTES(m.arg0), why, sizeof(why)), "257 slots"),
	      "an ACCEPT of too many slots: %s", why);
	m.arg0 = 4;
	m.arg1 = WAFER_LINK_MAX_SLOT_BYTES + 1;
	wt_ok(rejects(wlk_check_accept(&m, WLK_ACCEPT_BYTES(4), why, sizeof(why)), "-byte slots"),
	      "an ACCEPT of too large slots: %s", why);
}

static void test_records(void)
{
	struct wlk_rx rx = { .slots = 4, .slot_bytes = 4096, .arrived = 5, .released = 3 };

	wt_ok(!wlk_check_record(&rx, wlk_imm(5, 1), 100, why, sizeof(why)), "the next record passes");
	wt_ok(!wlk_check_record(&rx, wlk_imm(5, 1), 4096, why, sizeof(why)), "a full slot passes");
	wt_ok(rejects(wlk_check_record(&rx, wlk_imm(5, 9), 100, why, sizeof(why)),
		      "slot 9 out of range (4 slots)"), "slot out of range: %s", why);
	wt_ok(rejects(wlk_check_record(&rx, wlk_imm(4, 0), 100, why, sizeof(why)),
		      "replayed sequence 4 (expected 5)"), "a replay: %s", why);
	wt_ok(rejects(wlk_check_record(&rx, wlk_imm(7, 3), 100, why, sizeof(why)),
		      "skipped to sequence 7 (expected 5)"), "a skip: %s", why);
	wt_ok(rejects(wlk_check_record(&rx, wlk_imm(5, 2), 100, why, sizeof(why)),
		      "in slot 2 (expected slot 1)"), "the wrong slot: %s", why);
	wt_ok(rejects(wlk_check_record(&rx, wlk_imm(5, 1), 0, why, sizeof(why)),
		      "length 0 out of range (1..4096)"), "an empty record: %s", why);
	wt_ok(rejects(wlk_check_record(&rx, wlk_imm(5, 1), 4097, why, sizeof(why)),
		      "length 4097 out of range"), "a too long record: %s", why);
	rx.released = 1;
	wt_ok(rejects(wlk_check_record(&rx, wlk_imm(5, 1), 100, why, sizeof(why)),
		      "without a credit (all 4 slots held)"), "no credit: %s", why);
	/* 2^24 + 1 records arrived: the sequence on the wire wrapped. */
	rx.arrived = (1u << 24) + 1;
	rx.released = rx.arrived - 1;
	wt_ok(!wlk_check_record(&rx, wlk_imm(1, rx.arrived % 4), 1, why, sizeof(why)),
	      "the sequence wraps at 24 bits");
	wt_ok(rejects(wlk_check_record(&rx, wlk_imm(0xffffff, 0), 1, why, sizeof(why)),
		      "replayed sequence 16777215 (expected 1)"), "a replay across the wrap: %s", why);
}

static void test_credits(void)
{
	wt_ok(!wlk_check_credit(3, 3, 5, why, sizeof(why)), "the oldest record's credit");
	wt_ok(rejects(wlk_check_credit(4, 3, 5, why, sizeof(why)), "credit for sequence 4 (expected 3"),
	      "a credit out of order: %s", why);
	wt_ok(rejects(wlk_check_credit(5, 5, 5, why, sizeof(why)), "expected 5 of 5 sent"),
	      "a credit for a record never sent: %s", why);
}

static void test_api(void)
{
	struct wafer_link_opts o = { .slots = 2, .slot_bytes = 4096, .timeout_ms = 100, .drm_fd = -1 };
	struct wafer_link_listener *ls = NULL;
	int ret = wafer_link_listen("127.0.0.1", "0", &o, &ls);

#ifdef WAFER_HAVE_RDMA
	/* Built with RDMA: fields are checked before any device is needed. */
	o.slots = 0;
	ret = wafer_link_listen("127.0.0.1", "0", &o, &ls);
	wt_ok(ret == -EINVAL && strstr(wafer_last_error(), "slots 0 out of range"),
	      "listen with 0 slots: %s", wafer_last_error());
	o.slots = 2;
	o.slot_bytes = 0;
	ret = wafer_link_listen("127.0.0.1", "0", &o, &ls);
	wt_ok(ret == -EINVAL && strstr(wafer_last_error(), "slot_bytes 0 out of range"),
	      "listen with 0-byte slots: %s", wafer_last_error());
#else
	wt_ok(ret == -EPROTONOSUPPORT && strstr(wafer_last_error(), "built without RDMA") && !ls,
	      "without RDMA the link says so: %s", wafer_last_error());
#endif
	wafer_link_listener_close(ls);
}

int main(void)
{
	test_messages();
	test_accept();
	test_records();
	test_credits();
	test_api();
	return wt_done();
}
