// SPDX-License-Identifier: MIT
/* The link's wire format and the checks on what arrives (wafer_link_wire.h). */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "wafer_link_wire.h"

int wlk_parse_msg(const void *buf, size_t len, struct wlk_msg *m, char *why, size_t n)
{
	struct wlk_msg w;

	if (len < sizeof(w)) {
		snprintf(why, n, "short control message of %zu bytes (a header is %zu)",
			 len, sizeof(w));
		return -EPROTO;
	}
	memcpy(&w, buf, sizeof(w));
	m->magic = le32toh(w.magic);
	m->version = le16toh(w.version);
	m->type = le16toh(w.type);
	m->arg0 = le32toh(w.arg0);
	m->arg1 = le32toh(w.arg1);
	if (m->magic != WLK_MAGIC) {
		snprintf(why, n, "bad magic 0x%08x (not a wafer link)", m->magic);
		return -EPROTO;
	}
	if (m->version != WAFER_LINK_VERSION) {
		snprintf(why, n, "peer speaks link version %u, this end %u",
			 m->version, WAFER_LINK_VERSION);
		return -EPROTO;
	}
	if (m->type < WLK_HELLO || m->type > WLK_CLOSE) {
		snprintf(why, n, "unknown control message type %u", m->type);
		return -EPROTO;
	}
	return 0;
}

void wlk_put_msg(void *buf, uint16_t version, enum wlk_type type, uint32_t a0, uint32_t a1)
{
	struct wlk_msg w = {
		.magic = htole32(WLK_MAGIC),
		.version = htole16(version),
		.type = htole16((uint16_t)type),
		.arg0 = htole32(a0),
		.arg1 = htole32(a1),
	};

	memcpy(buf, &w, sizeof(w));
}

int wlk_check_accept(const struct wlk_msg *m, size_t len, char *why, size_t n)
{
	if (m->arg0 < 1 || m->arg0 > WAFER_LINK_MAX_SLOTS) {
		snprintf(why, n, "ACCEPT with %u slots (1..%u)", m->arg0, WAFER_LINK_MAX_SLOTS);
		return -EPROTO;
	}
	if (m->arg1 < 1 || m->arg1 > WAFER_LINK_MAX_SLOT_BYTES) {
		snprintf(why, n, "ACCEPT with %u-byte slots (1..%u)", m->arg1,
			 WAFER_LINK_MAX_SLOT_BYTES);
		return -EPROTO;
	}
	if (len != WLK_ACCEPT_BYTES(m->arg0)) {
		snprintf(why, n, "ACCEPT of %zu bytes for %u slots (expected %zu)", len,
			 m->arg0, WLK_ACCEPT_BYTES(m->arg0));
		return -EPROTO;
	}
	return 0;
}

int wlk_check_record(const struct wlk_rx *rx, uint32_t imm, uint32_t len, char *why, size_t n)
{
	uint32_t slot = imm & 0xff, seq = imm >> 8, want = rx->arrived & WLK_SEQ_MASK;
	uint32_t behind = (want - seq) & WLK_SEQ_MASK;

	if (slot >= rx->slots) {
		snprintf(why, n, "record for slot %u out of range (%u slots)", slot, rx->slots);
		return -EPROTO;
	}
	if (seq != want) {
		/* Half the sequence space behind is a replay, the rest a skip. */
		if (behind <= WLK_SEQ_MASK / 2)
			snprintf(why, n, "replayed sequence %u (expected %u)", seq, want);
		else
			snprintf(why, n, "skipped to sequence %u (expected %u)", seq, want);
		return -EPROTO;
	}
	if (slot != rx->arrived % rx->slots) {
		snprintf(why, n, "sequence %u in slot %u (expected slot %u)", seq, slot,
			 rx->arrived % rx->slots);
		return -EPROTO;
	}
	if (rx->arrived - rx->released >= rx->slots) {
		snprintf(why, n, "sequence %u without a credit (all %u slots held)", seq,
			 rx->slots);
		return -EPROTO;
	}
	if (len < 1 || len > rx->slot_bytes) {
		snprintf(why, n, "record length %u out of range (1..%u)", len, rx->slot_bytes);
		return -EPROTO;
	}
	return 0;
}

int wlk_check_credit(uint32_t seq, uint32_t credited, uint32_t sent, char *why, size_t n)
{
	if (seq != credited || credited == sent) {
		snprintf(why, n, "credit for sequence %u (expected %u of %u sent)", seq,
			 credited, sent);
		return -EPROTO;
	}
	return 0;
}
