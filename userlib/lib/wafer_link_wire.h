/* SPDX-License-Identifier: MIT */
/*
 * The link's wire format (docs/SCALE-OUT.md): control messages sent with
 * RDMA SEND, records written with RDMA WRITE WITH IMMEDIATE, and the checks
 * a receiver and a sender make on what arrives.  Pure functions: no verbs.
 */
#ifndef WAFER_LINK_WIRE_H
#define WAFER_LINK_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "wafer_link.h"

#define WLK_MAGIC 0x4b4e4c57u /* "WLNK", little-endian on the wire */

enum wlk_type {
	WLK_HELLO = 1,	/* sender -> receiver: magic, version */
	WLK_ACCEPT = 2,	/* receiver -> sender: slots, slot bytes, base, rkeys */
	WLK_REFUSE = 3,	/* either way: a reason as text, then a close */
	WLK_CREDIT = 4,	/* receiver -> sender: arg0 = sequence released */
	WLK_CLOSE = 5,	/* either way: the end of the link */
};

/* Every control message starts so (little-endian fields). */
struct wlk_msg {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t arg0;
	uint32_t arg1;
};

/* ACCEPT: the header (arg0 slots, arg1 slot bytes), the ring's base, rkeys. */
#define WLK_ACCEPT_BYTES(n) (sizeof(struct wlk_msg) + 8 + 4 * (size_t)(n))
/* The largest control message (an ACCEPT of the most slots). */
#define WLK_MSG_MAX 2048
/* A REFUSE's text, at most. */
#define WLK_REASON_MAX 200

/* The immediate data of a record: sequence (24 bits) over slot (8 bits). */
#define WLK_SEQ_MASK 0xffffffu
static inline uint32_t wlk_imm(uint32_t seq, unsigned int slot)
{
	return (seq & WLK_SEQ_MASK) << 8 | (slot & 0xff);
}

/* What a receiver knows of its ring when a record arrives. */
struct wlk_rx {
	uint32_t slots;
	uint32_t slot_bytes;
	uint32_t arrived;	/* records accepted so far: the next sequence */
	uint32_t released;	/* slots given back so far */
};

/*
 * Parses a control message of @len bytes: 0 and *m filled (host order), or
 * -EPROTO with @why saying what is wrong (short, magic, version, type).
 */
int wlk_parse_msg(const void *buf, size_t len, struct wlk_msg *m, char *why, size_t n);
/* Writes a control message header into @buf (16 bytes). */
void wlk_put_msg(void *buf, uint16_t version, enum wlk_type type, uint32_t a0, uint32_t a1);
/*
 * Checks an ACCEPT of @len bytes (already parsed into @m): slot count and
 * size in range, length matching; 0 or -EPROTO with @why.
 */
int wlk_check_accept(const struct wlk_msg *m, size_t len, char *why, size_t n);
/*
 * Checks a record's immediate data and length against the ring: the slot
 * in range and the one the sequence names, the sequence the next (not a
 * replay, not a skip), a credit held for it, the length in 1..slot bytes.
 * 0, or -EPROTO with @why.
 */
int wlk_check_record(const struct wlk_rx *rx, uint32_t imm, uint32_t len, char *why, size_t n);
/* Checks a CREDIT for @seq: the oldest unreleased record of @sent. */
int wlk_check_credit(uint32_t seq, uint32_t credited, uint32_t sent, char *why, size_t n);

#endif /* WAFER_LINK_WIRE_H */
