// SPDX-License-Identifier: MIT
/*
 * The link's data path (wafer_link.h): records written with RDMA WRITE WITH
 * IMMEDIATE into the receiver's slots, each checked on arrival against the
 * ring (wlk_check_record) before its slot's syncobj is signalled, and
 * credits sent back with RDMA SEND as slots are released.  One completion
 * queue per link carries both ends' work; wlk_progress() drains it and the
 * connection's events, so a disconnect or a failed work request fails the
 * link at once and a silent peer fails it at the timeout.
 */
#ifdef WAFER_HAVE_RDMA
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include <xf86drm.h>

#include "wafer.h"
#include "wafer_internal.h"
#include "wafer_link_internal.h"

/* A control message arrived in receive buffer I (LEN bytes). */
static int on_message(struct wafer_link *l, unsigned int i, uint32_t len)
{
	const unsigned char *buf = l->msg + (size_t)i * WLK_MSG_MAX;
	struct wlk_msg m;
	char why[160];
	int err;

	if (!l->first_seen) {
		/* The hello or its answer: the connection steps check it. */
		memcpy(l->first, buf, len);
		l->first_len = len;
		l->first_seen = 1;
		return wlk_post_recv(l, i);
	}
	err = wlk_parse_msg(buf, len, &m, why, sizeof(why));
	if (err)
		return wlk_fail(l, err, "%s", why);
	if (m.type == WLK_CLOSE)
		return wlk_fail(l, -ECONNRESET, "closed the link");
	if (m.type == WLK_REFUSE)
		return wlk_fail(l, -EPROTO, "refused: %.*s", (int)(len - sizeof(m)),
				(const char *)buf + sizeof(m));
	if (m.type != WLK_CREDIT || l->receiver)
		return wlk_fail(l, -EPROTO, "unexpected control message type %u", m.type);
	err = wlk_check_credit(m.arg0, l->credited, l->sent, why, sizeof(why));
	if (err)
		return wlk_fail(l, err, "%s", why);
	l->credited++;
	return wlk_post_recv(l, i);
}

/* A record arrived: checked, then its slot's syncobj signalled. */
static int on_record(struct wafer_link *l, unsigned int i, uint32_t imm, uint32_t len)
{
	unsigned int slot = imm & 0xff;
	char why[160];
	int err;

	if (!l->receiver || !l->first_seen)
		return wlk_fail(l, -EPROTO, "a record %s", l->receiver ? "before the hello" :
				"written to the sender");
	err = wlk_check_record(&l->rx, imm, len, why, sizeof(why));
	if (err)
		return wlk_fail(l, err, "%s", why);
	l->len[slot] = len;
	l->rx.arrived++;
	if (l->slots.syncobj[slot] && drmSyncobjSignal(l->slots.drm_fd, &l->slots.syncobj[slot], 1))
		return wlk_fail(l, -errno, "signalling slot %u's syncobj: %s", slot,
				strerror(errno));
	return wlk_post_recv(l, i);
}

static int on_completion(struct wafer_link *l, const struct ibv_wc *wc)
{
	if (wc->wr_id & (WLK_WR_CTRL | WLK_WR_DATA)) {
		if (wc->wr_id & WLK_WR_CTRL)
			l->ctrl_pending--;
		if (wc->status == IBV_WC_SUCCESS)
			return 0;
		return wlk_fail(l, -EIO, "RDMA %s failed: %s", wc->wr_id & WLK_WR_CTRL ?
				"send" : "write", ibv_wc_status_str(wc->status));
	}
	if (wc->status == IBV_WC_WR_FLUSH_ERR)
		return wlk_fail(l, -EIO, "the queue pair failed (a write the NIC refused, "
				"or the connection lost)");
	if (wc->status != IBV_WC_SUCCESS)
		return wlk_fail(l, -EIO, "receive failed: %s", ibv_wc_status_str(wc->status));
	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM)
		return on_record(l, (unsigned int)wc->wr_id, ntohl(wc->imm_data), wc->byte_len);
	if (wc->opcode == IBV_WC_RECV)
		return on_message(l, (unsigned int)wc->wr_id, wc->byte_len);
	return wlk_fail(l, -EPROTO, "unexpected completion opcode %d", wc->opcode);
}

/* How long a hang-up during the hello waits for the answer sent before it. */
#define HANGUP_GRACE_MS	500

/* Hands what the completion queue holds to on_completion(): how many, or -EIO. */
static int poll_cq(struct wafer_link *l)
{
	struct ibv_wc wc[16];
	int n, i, seen = 0;

	while ((n = ibv_poll_cq(l->cq, 16, wc)) > 0) {
		for (i = 0; i < n; i++)
			on_completion(l, &wc[i]);
		seen += n;
	}
	if (n < 0)
		return wlk_fail(l, -EIO, "polling the completion queue failed");
	return seen;
}

/* Drains the CQ and the connection's events: how many there were, or <0. */
static int drain(struct wafer_link *l)
{
	enum rdma_cm_event_type gone = RDMA_CM_EVENT_ESTABLISHED;
	struct rdma_cm_event *ev;
	int n, seen = poll_cq(l);
	uint64_t end;

	if (seen < 0)
		return seen;
	while (l->ech && !rdma_get_cm_event(l->ech, &ev)) {
		enum rdma_cm_event_type t = ev->event;

		rdma_ack_cm_event(ev);
		seen++;
		if (t == RDMA_CM_EVENT_DISCONNECTED || t == RDMA_CM_EVENT_DEVICE_REMOVAL)
			gone = t;
	}
	if (gone == RDMA_CM_EVENT_ESTABLISHED)
		return seen;
	wlk_fail(l, -ECONNRESET, "%s", gone == RDMA_CM_EVENT_DISCONNECTED ?
		 "disconnected" : "the RDMA device was removed");
	l->connected = 0;
	/*
	 * What the peer sent before it hung up (a refusal's reason) can
	 * complete after its hang-up is seen (rxe completes receives on its
	 * own schedule): take it too, waiting a little for an answer to the
	 * hello.  The hang-up stays the link's error; flushed receives add none.
	 */
	end = wafer_now_ns() + HANGUP_GRACE_MS * 1000000ull;
	do {
		n = poll_cq(l);
		if (n < 0)
			return n;
		seen += n;
		if (l->first_seen)
			break;
		poll(NULL, 0, 1);
	} while (wafer_now_ns() < end);
	return seen;
}

int wlk_progress(struct wafer_link *l, int wait_ms)
{
	struct pollfd p[2] = { { .fd = l->cch->fd, .events = POLLIN },
			       { .fd = l->ech ? l->ech->fd : -1, .events = POLLIN } };
	struct ibv_cq *cq;
	void *ctx;
	int seen = drain(l);

	if (seen < 0 || l->err)
		return l->err;
	if (seen || !wait_ms)
		return 0;
	if (ibv_req_notify_cq(l->cq, 0))
		return wlk_fail(l, -EIO, "ibv_req_notify_cq failed");
	/* What completed before the request is not notified: drain again. */
	seen = drain(l);
	if (seen || l->err)
		return l->err;
	if (poll(p, 2, wait_ms) < 0 && errno != EINTR)
		return wlk_fail(l, -errno, "poll: %s", strerror(errno));
	if ((p[0].revents & POLLIN) && !ibv_get_cq_event(l->cch, &cq, &ctx))
		ibv_ack_cq_events(cq, 1);
	drain(l);
	return l->err;
}

/* Polls until COND holds, the link fails, or the timeout. */
static int await(struct wafer_link *l, int (*cond)(const struct wafer_link *), const char *what)
{
	uint64_t end = wafer_now_ns() + (uint64_t)l->timeout_ms * 1000000;

	for (;;) {
		uint64_t now;
		int err = wlk_progress(l, 0);

		if (cond(l))
			return 0;
		if (err)
			return err;
		now = wafer_now_ns();
		if (now >= end)
			return wlk_fail(l, -ETIMEDOUT, "%s within %d ms (dead or hung?)", what,
					l->timeout_ms);
		wlk_progress(l, (int)((end - now) / 1000000) + 1);
	}
}

static int have_credit(const struct wafer_link *l)
{
	return !l->err && l->sent - l->credited < l->slots.n;
}

static int all_credited(const struct wafer_link *l)
{
	return !l->err && l->credited == l->sent;
}

static int have_record(const struct wafer_link *l)
{
	return l->delivered != l->rx.arrived;
}

int wafer_link_acquire(struct wafer_link *l, unsigned int *slot)
{
	int err;

	if (l->receiver)
		return wafer_set_error(-EINVAL, "link from %s: acquire on the receiving end",
				       l->peer);
	err = await(l, have_credit, "no credit returned");
	if (err)
		return err;
	*slot = l->sent % l->slots.n;
	return 0;
}

int wlk_post_raw(struct wafer_link *l, unsigned int rslot, uint32_t imm, size_t len)
{
	unsigned int from = (imm & 0xff) % (l->slots.n ? l->slots.n : 1);
	struct ibv_sge sge = { .addr = (uintptr_t)l->slots.base + (size_t)from * l->slots.bytes,
			       .length = (uint32_t)len };
	struct ibv_send_wr wr = {
		.wr_id = WLK_WR_DATA, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM, .send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(imm),
	}, *bad;
	int rc;

	if (l->err)
		return wlk_failed(l);
	if (rslot >= l->slots.n)
		return wafer_set_error(-EINVAL, "link to %s: slot %u out of range", l->peer, rslot);
	sge.lkey = l->ring_mr ? l->ring_mr->lkey : l->slot_mr[from]->lkey;
	wr.wr.rdma.remote_addr = l->raddr + (uint64_t)rslot * l->slots.bytes;
	wr.wr.rdma.rkey = l->rkey[rslot];
	rc = ibv_post_send(l->id->qp, &wr, &bad);
	return rc ? wlk_fail(l, -rc, "posting a write: %s", strerror(rc)) : 0;
}

int wafer_link_send(struct wafer_link *l, size_t len, uint32_t wait_syncobj)
{
	unsigned int slot = l->sent % (l->slots.n ? l->slots.n : 1);
	int err;

	if (l->receiver)
		return wafer_set_error(-EINVAL, "link from %s: send on the receiving end", l->peer);
	if (l->err)
		return wlk_failed(l);
	if (!have_credit(l))
		return wafer_set_error(-EINVAL, "link to %s: send without an acquired slot",
				       l->peer);
	if (len < 1 || len > l->slots.bytes)
		return wafer_set_error(-EINVAL, "link to %s: len %zu out of range (1..%zu)",
				       l->peer, len, l->slots.bytes);
	err = wlk_syncobj_wait(&l->slots, wait_syncobj, l->timeout_ms);
	if (err == -ETIME || err == -ETIMEDOUT)
		return wafer_set_error(-ETIMEDOUT, "link to %s: the producing job's fence did not "
				       "signal within %d ms", l->peer, l->timeout_ms);
	if (err)
		return err;
	err = wlk_post_raw(l, slot, wlk_imm(l->sent, slot), len);
	if (err)
		return err;
	l->sent++;
	/* Completions and credits that came meanwhile. */
	return wlk_progress(l, 0);
}

int wafer_link_flush(struct wafer_link *l)
{
	if (l->receiver)
		return wafer_set_error(-EINVAL, "link from %s: flush on the receiving end", l->peer);
	return await(l, all_credited, "not every record released");
}

int wafer_link_recv(struct wafer_link *l, unsigned int *slot, size_t *len)
{
	int err;

	if (!l->receiver)
		return wafer_set_error(-EINVAL, "link to %s: recv on the sending end", l->peer);
	/* Records that arrived before a failure or a close are still delivered. */
	err = await(l, have_record, "no record");
	if (err && !have_record(l))
		return err;
	*slot = l->delivered % l->slots.n;
	*len = l->len[*slot];
	l->delivered++;
	return 0;
}

int wafer_link_poll(struct wafer_link *l, int wait_ms)
{
	int err;

	if (!l->receiver)
		return wafer_set_error(-EINVAL, "link to %s: poll on the sending end", l->peer);
	if (have_record(l))
		return 1;
	err = wlk_progress(l, wait_ms);
	if (have_record(l))
		return 1;
	return err ? err : 0;
}

int wafer_link_release(struct wafer_link *l, unsigned int slot, uint32_t done_syncobj)
{
	unsigned char credit[sizeof(struct wlk_msg)];
	uint32_t seq = l->rx.released;
	int err;

	if (!l->receiver)
		return wafer_set_error(-EINVAL, "link to %s: release on the sending end", l->peer);
	if (seq == l->delivered || slot != seq % l->slots.n)
		return wafer_set_error(-EINVAL, "link from %s: release of slot %u (the oldest "
				       "received is %s%u)", l->peer, slot,
				       seq == l->delivered ? "none, next " : "",
				       seq % l->slots.n);
	if (l->err)
		return wlk_failed(l);
	err = wlk_syncobj_wait(&l->slots, done_syncobj, l->timeout_ms);
	if (err == -ETIME || err == -ETIMEDOUT)
		return wafer_set_error(-ETIMEDOUT, "link from %s: the consuming job's fence did "
				       "not signal within %d ms", l->peer, l->timeout_ms);
	if (err)
		return err;
	/* The next record in this slot signals it afresh. */
	if (l->slots.syncobj[slot] && drmSyncobjReset(l->slots.drm_fd, &l->slots.syncobj[slot], 1))
		return wlk_fail(l, -errno, "resetting slot %u's syncobj: %s", slot,
				strerror(errno));
	l->rx.released++;
	wlk_put_msg(credit, WAFER_LINK_VERSION, WLK_CREDIT, seq, 0);
	err = wlk_send_msg(l, credit, sizeof(credit));
	return err ? err : wlk_progress(l, 0);
}
#endif /* WAFER_HAVE_RDMA */
