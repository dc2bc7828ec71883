/* SPDX-License-Identifier: MIT */
/*
 * One link's state on RDMA verbs (wafer_link.c: connection and hello,
 * wafer_link_data.c: records and credits).  Only built with rdma-core.
 */
#ifndef WAFER_LINK_INTERNAL_H
#define WAFER_LINK_INTERNAL_H

#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "wafer_link.h"
#include "wafer_link_slots.h"
#include "wafer_link_wire.h"

/* Control-message buffers: receives posted at once beyond one per slot. */
#define WLK_RECV_EXTRA 4
/* Largest control message sent inline (no registered buffer). */
#define WLK_INLINE 64
/* Work-request ids of sends (receives use their buffer's index). */
#define WLK_WR_CTRL 0x100000000ull
#define WLK_WR_DATA 0x200000000ull

struct wafer_link {
	int receiver;			/* which end: receiver or sender */
	int timeout_ms;
	char peer[64];			/* "ADDR:PORT" */
	int err;			/* first failure (negative errno), then sticky */
	char why[320];			/* its message */

	struct rdma_event_channel *ech;
	struct rdma_cm_id *id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *cch;
	struct ibv_cq *cq;
	unsigned int cq_events;		/* CQ events to acknowledge before destroy */
	int connected;

	/* Control messages: nrecv receive buffers, then one send buffer. */
	unsigned char *msg;
	struct ibv_mr *msg_mr;
	unsigned int nrecv;

	struct wlk_slots slots;		/* local slots */
	struct ibv_mr *slot_mr[WAFER_LINK_MAX_SLOTS];	/* receiver, or device BOs: one per slot */
	struct ibv_mr *ring_mr;		/* sender's memfd ring: the whole ring */

	/* Sender: the receiver's ring from its ACCEPT. */
	uint64_t raddr;
	uint32_t rkey[WAFER_LINK_MAX_SLOTS];
	uint32_t sent, credited;

	/* Receiver: the ring's counters (wlk_check_record) and lengths. */
	struct wlk_rx rx;
	uint32_t delivered;
	uint32_t len[WAFER_LINK_MAX_SLOTS];

	/* The first control message: the HELLO, or the answer to ours. */
	int first_seen;
	size_t first_len;
	unsigned char first[WLK_MSG_MAX];
	unsigned int ctrl_pending;	/* control sends not completed yet */
};

/* Marks the link failed with a message naming the peer; returns ERR. */
int wlk_fail(struct wafer_link *l, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Reports the link's failure again (for calls after it). */
int wlk_failed(struct wafer_link *l);
/* Posts receive buffer I. */
int wlk_post_recv(struct wafer_link *l, unsigned int i);
/* Sends a control message of LEN bytes from the send buffer (or inline). */
int wlk_send_msg(struct wafer_link *l, const void *buf, size_t len);
/*
 * Makes progress: completions and connection events, waiting up to
 * WAIT_MS (0: no wait) for one.  0, or the link's failure.
 */
int wlk_progress(struct wafer_link *l, int wait_ms);

/*
 * For tests of hostile peers: connects as a sender and sends HELLO_LEN
 * bytes of HELLO (none when NULL) without waiting for an answer; then
 * wlk_await_accept() finishes the hello, and wlk_post_raw() writes LEN
 * bytes of local slot 0 into remote slot RSLOT with immediate data IMM.
 */
int wlk_connect_raw(const char *host, const char *port, const struct wafer_link_opts *opts,
		    const void *hello, size_t hello_len, struct wafer_link **out);
int wlk_await_accept(struct wafer_link *l);
int wlk_post_raw(struct wafer_link *l, unsigned int rslot, uint32_t imm, size_t len);

#endif /* WAFER_LINK_INTERNAL_H */
