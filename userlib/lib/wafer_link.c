// SPDX-License-Identifier: MIT
/*
 * The link's connections (wafer_link.h): rdma_cm for addresses, routes and
 * RC queue pairs, the hello that checks versions and hands the sender the
 * receiver's ring, and teardown.  Records and credits: wafer_link_data.c; a link's
 * failure and its control messages: wafer_link_msg.c.
 */
#ifdef WAFER_HAVE_RDMA
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wafer.h"
#include "wafer_internal.h"
#include "wafer_link_internal.h"

#define WLK_DEFAULT_TIMEOUT_MS 10000
/* How long a close waits for its CLOSE message to be sent, at most. */
#define WLK_CLOSE_WAIT_MS 1000
/* A queue pair's depth beyond two per slot (records and credits). */
#define WLK_QP_EXTRA 8

struct wafer_link_listener {
	struct rdma_event_channel *ech;
	struct rdma_cm_id *id;
	struct wafer_link_opts opts;
	char name[64];
};

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) ? -errno : 0;
}

static void name_addr(const struct sockaddr *sa, char *buf, size_t n)
{
	const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
	char a[INET_ADDRSTRLEN] = "?";

	if (sa && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &in->sin_addr, a, sizeof(a));
	snprintf(buf, n, "%s:%u", a, sa ? ntohs(in->sin_port) : 0);
}

static int resolve(const char *host, const char *port, int passive, struct addrinfo **ai)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM,
				  .ai_flags = passive ? AI_PASSIVE : 0 };
	int rc = getaddrinfo(host, port, &hints, ai);

	if (rc)
		return wafer_set_error(-EINVAL, "link: address %s port %s: %s",
				       host ? host : "*", port, gai_strerror(rc));
	return 0;
}

/* Waits up to TIMEOUT_MS for the next event on ECH into *EV. */
static int cm_next(struct rdma_event_channel *ech, int timeout_ms, struct rdma_cm_event **ev)
{
	uint64_t end = wafer_now_ns() + (uint64_t)timeout_ms * 1000000;

	for (;;) {
		struct pollfd p = { .fd = ech->fd, .events = POLLIN };
		uint64_t now;

		if (!rdma_get_cm_event(ech, ev))
			return 0;
		if (errno != EAGAIN)
			return -errno;
		now = wafer_now_ns();
		if (now >= end)
			return -ETIMEDOUT;
		if (poll(&p, 1, (int)((end - now) / 1000000) + 1) < 0 && errno != EINTR)
			return -errno;
	}
}

/* The sender's connection steps: waits for event WANT on its channel. */
static int cm_expect(struct wafer_link *l, enum rdma_cm_event_type want, const char *step)
{
	struct rdma_cm_event *ev;
	int err = cm_next(l->ech, l->timeout_ms, &ev);
	enum rdma_cm_event_type got;
	int status;

	if (err == -ETIMEDOUT)
		return wlk_fail(l, err, "%s: nothing within %d ms", step, l->timeout_ms);
	if (err)
		return wlk_fail(l, err, "%s: %s", step, strerror(-err));
	got = ev->event;
	status = ev->status;
	rdma_ack_cm_event(ev);
	if (got == want)
		return 0;
	if (got == RDMA_CM_EVENT_REJECTED)
		return wlk_fail(l, -ECONNREFUSED, "%s: refused (nobody listening there?)", step);
	return wlk_fail(l, -EHOSTUNREACH, "%s: %s (status %d)", step, rdma_event_str(got), status);
}

/* PD, CQ, RC QP on ID's device; NRECV control buffers posted. */
static int setup_qp(struct wafer_link *l, unsigned int slots, unsigned int nrecv)
{
	unsigned int depth = 2 * slots + WLK_QP_EXTRA, i;
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = depth, .max_recv_wr = nrecv, .max_send_sge = 1,
			 .max_recv_sge = 1, .max_inline_data = WLK_INLINE },
	};
	int err;

	l->pd = ibv_alloc_pd(l->id->verbs);
	if (!l->pd)
		return wlk_fail(l, -ENOMEM, "ibv_alloc_pd failed");
	l->cch = ibv_create_comp_channel(l->id->verbs);
	if (!l->cch || set_nonblock(l->cch->fd))
		return wlk_fail(l, -ENOMEM, "ibv_create_comp_channel failed");
	l->cq = ibv_create_cq(l->id->verbs, (int)(depth + nrecv), NULL, l->cch, 0);
	if (!l->cq)
		return wlk_fail(l, -ENOMEM, "ibv_create_cq of %u entries failed", depth + nrecv);
	qa.send_cq = l->cq;
	qa.recv_cq = l->cq;
	if (rdma_create_qp(l->id, l->pd, &qa))
		return wlk_fail(l, -errno, "rdma_create_qp: %s", strerror(errno));
	l->nrecv = nrecv;
	l->msg = calloc((size_t)nrecv + 1, WLK_MSG_MAX);
	if (!l->msg)
		return wlk_fail(l, -ENOMEM, "control buffers");
	l->msg_mr = ibv_reg_mr(l->pd, l->msg, ((size_t)nrecv + 1) * WLK_MSG_MAX,
			       IBV_ACCESS_LOCAL_WRITE);
	if (!l->msg_mr)
		return wlk_fail(l, -errno, "registering control buffers: %s", strerror(errno));
	for (i = 0; i < nrecv; i++) {
		err = wlk_post_recv(l, i);
		if (err)
			return err;
	}
	if (ibv_req_notify_cq(l->cq, 0))
		return wlk_fail(l, -EIO, "ibv_req_notify_cq failed");
	return 0;
}

/* ---- the slots' registrations (wafer_link_slots.h) ---- */

static int slot_access(const struct wafer_link *l)
{
	return IBV_ACCESS_LOCAL_WRITE | (l->receiver ? IBV_ACCESS_REMOTE_WRITE : 0);
}

static int nic_reg_dmabuf(void *ctx, unsigned int i, int fd, size_t bytes, uint64_t iova)
{
#ifdef WAFER_HAVE_REG_DMABUF
	struct wafer_link *l = ctx;

	l->slot_mr[i] = ibv_reg_dmabuf_mr(l->pd, 0, bytes, iova, fd, slot_access(l));
	return l->slot_mr[i] ? 0 : errno ? -errno : -EOPNOTSUPP;
#else
	(void)ctx, (void)i, (void)fd, (void)bytes, (void)iova;
	return -ENOSYS;
#endif
}

static int nic_reg_mem(void *ctx, unsigned int i, void *addr, size_t bytes)
{
	struct wafer_link *l = ctx;

	l->slot_mr[i] = ibv_reg_mr(l->pd, addr, bytes, slot_access(l));
	return l->slot_mr[i] ? 0 : errno ? -errno : -ENOMEM;
}

static void nic_dereg(void *ctx, unsigned int i)
{
	struct wafer_link *l = ctx;

	if (l->slot_mr[i])
		ibv_dereg_mr(l->slot_mr[i]);
	l->slot_mr[i] = NULL;
}

/*
 * The link's slots: the device's BOs where the NIC registers a dma-buf,
 * else udmabuf-imported memfd pages.  A receiver's are registered one by
 * one (the NIC bounds a peer's write to one slot); a sender's memfd ring
 * is one registration, its device BOs one each.
 */
static int slots_alloc(struct wafer_link *l, unsigned int n, size_t bytes, int drm_fd,
		       int syncobjs)
{
	struct wlk_slot_ops ops = { .nic = ibv_get_device_name(l->id->verbs->device), .ctx = l,
				    .reg_dmabuf = nic_reg_dmabuf,
				    .reg_mem = l->receiver ? nic_reg_mem : NULL,
				    .dereg = nic_dereg };
	int err = wlk_slots_alloc(&l->slots, n, bytes, drm_fd, syncobjs, &ops);

	if (err || l->receiver || l->slots.kind == WLK_SLOTS_DEVICE_BO)
		return err;
	l->ring_mr = ibv_reg_mr(l->pd, l->slots.base, (size_t)l->slots.n * l->slots.bytes,
				IBV_ACCESS_LOCAL_WRITE);
	if (!l->ring_mr)
		return wafer_set_error(-errno, "registering the send ring: %s", strerror(errno));
	return 0;
}

static struct wafer_link *link_new(int receiver, const struct wafer_link_opts *o)
{
	struct wafer_link *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->receiver = receiver;
	l->timeout_ms = o && o->timeout_ms > 0 ? o->timeout_ms : WLK_DEFAULT_TIMEOUT_MS;
	l->slots.memfd = -1;
	l->slots.drm_fd = -1;
	snprintf(l->peer, sizeof(l->peer), "?");
	return l;
}

/* Polls until COND holds, the link fails, or the timeout: what says what for. */
static int wait_until(struct wafer_link *l, int (*cond)(const struct wafer_link *),
		      const char *what)
{
	uint64_t end = wafer_now_ns() + (uint64_t)l->timeout_ms * 1000000;
	int err;

	for (;;) {
		uint64_t now;

		err = wlk_progress(l, 0);
		/* What arrived before a failure still counts (a refusal's reason). */
		if (cond(l))
			return 0;
		if (err)
			return err;
		now = wafer_now_ns();
		if (now >= end)
			return wlk_fail(l, -ETIMEDOUT, "%s within %d ms", what, l->timeout_ms);
		err = wlk_progress(l, (int)((end - now) / 1000000) + 1);
		if (err)
			return err;
	}
}

static int first_seen(const struct wafer_link *l)
{
	return l->first_seen;
}

static int ctrl_done(const struct wafer_link *l)
{
	return !l->ctrl_pending;
}

/* ---- the sender ---- */

int wlk_connect_raw(const char *host, const char *port, const struct wafer_link_opts *opts,
		    const void *hello, size_t hello_len, struct wafer_link **out)
{
	struct wafer_link *l = link_new(0, opts);
	struct rdma_conn_param cp = { .initiator_depth = 1, .responder_resources = 1,
				      .retry_count = 7, .rnr_retry_count = 7 };
	struct addrinfo *ai = NULL;
	int err;

	*out = NULL;
	if (!l)
		return wafer_set_error(-ENOMEM, "link: out of memory");
	snprintf(l->peer, sizeof(l->peer), "%s:%s", host, port);
	l->slots.drm_fd = opts ? opts->drm_fd : -1;
	err = resolve(host, port, 0, &ai);
	if (err)
		goto fail_plain;
	l->ech = rdma_create_event_channel();
	if (!l->ech || set_nonblock(l->ech->fd) ||
	    rdma_create_id(l->ech, &l->id, l, RDMA_PS_TCP)) {
		err = wlk_fail(l, -ENODEV, "no RDMA connection manager (%s)", strerror(errno));
		goto fail;
	}
	if (rdma_resolve_addr(l->id, NULL, ai->ai_addr, l->timeout_ms)) {
		err = wlk_fail(l, -errno, "resolving the address: %s (no RDMA device?)",
			       strerror(errno));
		goto fail;
	}
	err = cm_expect(l, RDMA_CM_EVENT_ADDR_RESOLVED, "resolving the address");
	if (!err && rdma_resolve_route(l->id, l->timeout_ms))
		err = wlk_fail(l, -errno, "resolving the route: %s", strerror(errno));
	if (!err)
		err = cm_expect(l, RDMA_CM_EVENT_ROUTE_RESOLVED, "resolving the route");
	/* Credits for up to the most slots a receiver may have. */
	if (!err)
		err = setup_qp(l, WAFER_LINK_MAX_SLOTS, WAFER_LINK_MAX_SLOTS + WLK_RECV_EXTRA);
	if (!err && rdma_connect(l->id, &cp))
		err = wlk_fail(l, -errno, "rdma_connect: %s", strerror(errno));
	if (!err)
		err = cm_expect(l, RDMA_CM_EVENT_ESTABLISHED, "connecting");
	if (err)
		goto fail;
	l->connected = 1;
	if (hello) {
		err = wlk_send_msg(l, hello, hello_len);
		if (err)
			goto fail;
	}
	freeaddrinfo(ai);
	*out = l;
	return 0;
fail:
	err = wlk_failed(l);
fail_plain:
	if (ai)
		freeaddrinfo(ai);
	wafer_link_close(l);
	return err;
}

int wlk_await_accept(struct wafer_link *l)
{
	struct wlk_msg m;
	char why[160];
	uint32_t i;
	int was, err = wait_until(l, first_seen, "no answer to the hello");

	if (err)
		return err;
	err = wlk_parse_msg(l->first, l->first_len, &m, why, sizeof(why));
	/* The answer, not the hang-up after it, is why the link ended. */
	was = l->err;
	l->err = 0;
	if (err)
		return wlk_fail(l, err, "answer to the hello: %s", why);
	if (m.type == WLK_REFUSE) {
		int n = (int)(l->first_len - sizeof(m));

		return wlk_fail(l, -EPROTO, "refused the hello: %.*s", n < 0 ? 0 : n,
				(const char *)l->first + sizeof(m));
	}
	if (m.type != WLK_ACCEPT)
		return wlk_fail(l, -EPROTO, "answered the hello with message type %u", m.type);
	if (was) {
		l->err = was;
		return wlk_failed(l);
	}
	err = wlk_check_accept(&m, l->first_len, why, sizeof(why));
	if (err)
		return wlk_fail(l, err, "%s", why);
	memcpy(&l->raddr, l->first + sizeof(m), 8);
	l->raddr = le64toh(l->raddr);
	for (i = 0; i < m.arg0; i++) {
		memcpy(&l->rkey[i], l->first + sizeof(m) + 8 + 4 * i, 4);
		l->rkey[i] = le32toh(l->rkey[i]);
	}
	if (m.arg1 % (uint32_t)sysconf(_SC_PAGESIZE))
		return wlk_fail(l, -EPROTO, "ACCEPT with %u-byte slots, not a page multiple",
				m.arg1);
	err = slots_alloc(l, m.arg0, m.arg1, l->slots.drm_fd, 0);
	if (err)
		return wlk_fail(l, err, "%s", wafer_last_error());
	return 0;
}

int wafer_link_connect(const char *host, const char *port, const struct wafer_link_opts *opts,
		       struct wafer_link **out)
{
	unsigned char hello[sizeof(struct wlk_msg)];
	int err;

	wlk_put_msg(hello, WAFER_LINK_VERSION, WLK_HELLO, 0, 0);
	err = wlk_connect_raw(host, port, opts, hello, sizeof(hello), out);
	if (err)
		return err;
	err = wlk_await_accept(*out);
	if (err) {
		wafer_link_close(*out);
		*out = NULL;
	}
	return err;
}

/* ---- the receiver ---- */

int wafer_link_listen(const char *addr, const char *port, const struct wafer_link_opts *opts,
		      struct wafer_link_listener **out)
{
	struct wafer_link_listener *ls;
	struct addrinfo *ai = NULL;
	int err;

	*out = NULL;
	if (!opts || opts->slots < 1 || opts->slots > WAFER_LINK_MAX_SLOTS)
		return wafer_set_error(-EINVAL, "link: slots %u out of range (1..%u)",
				       opts ? opts->slots : 0, WAFER_LINK_MAX_SLOTS);
	if (opts->slot_bytes < 1 || opts->slot_bytes > WAFER_LINK_MAX_SLOT_BYTES)
		return wafer_set_error(-EINVAL, "link: slot_bytes %zu out of range (1..%u)",
				       opts->slot_bytes, WAFER_LINK_MAX_SLOT_BYTES);
	err = resolve(addr, port, 1, &ai);
	if (err)
		return err;
	ls = calloc(1, sizeof(*ls));
	if (!ls) {
		freeaddrinfo(ai);
		return wafer_set_error(-ENOMEM, "link: out of memory");
	}
	ls->opts = *opts;
	if (ls->opts.timeout_ms <= 0)
		ls->opts.timeout_ms = WLK_DEFAULT_TIMEOUT_MS;
	name_addr(ai->ai_addr, ls->name, sizeof(ls->name));
	ls->ech = rdma_create_event_channel();
	if (!ls->ech || set_nonblock(ls->ech->fd) ||
	    rdma_create_id(ls->ech, &ls->id, NULL, RDMA_PS_TCP)) {
		err = wafer_set_error(-ENODEV, "link: no RDMA connection manager (%s)",
				      strerror(errno));
	} else if (rdma_bind_addr(ls->id, ai->ai_addr) || rdma_listen(ls->id, 8)) {
		err = wafer_set_error(-errno, "link: listening on %s: %s (no RDMA device on "
				      "that address?)", ls->name, strerror(errno));
	}
	freeaddrinfo(ai);
	if (err) {
		wafer_link_listener_close(ls);
		return err;
	}
	*out = ls;
	return 0;
}

int wafer_link_listener_port(const struct wafer_link_listener *l)
{
	return ntohs(rdma_get_src_port(l->id));
}

void wafer_link_listener_close(struct wafer_link_listener *l)
{
	if (!l)
		return;
	if (l->id)
		rdma_destroy_id(l->id);
	if (l->ech)
		rdma_destroy_event_channel(l->ech);
	free(l);
}

/* Refuses the peer with REASON (sent, then the link fails with it). */
static int refuse(struct wafer_link *l, int err, const char *reason)
{
	unsigned char buf[sizeof(struct wlk_msg) + WLK_REASON_MAX];
	size_t n = strnlen(reason, WLK_REASON_MAX);

	wlk_put_msg(buf, WAFER_LINK_VERSION, WLK_REFUSE, 0, 0);
	memcpy(buf + sizeof(struct wlk_msg), reason, n);
	/* Best effort, bounded: the refusal reaches a peer that listens. */
	if (!wlk_send_msg(l, buf, sizeof(struct wlk_msg) + n))
		wait_until(l, ctrl_done, "the refusal not sent");
	/* The refusal, not what followed it (the peer hanging up), is why. */
	l->err = 0;
	return wlk_fail(l, err, "refused: %s", reason);
}

static int hello_answer(struct wafer_link *l)
{
	unsigned char buf[WLK_ACCEPT_BYTES(WAFER_LINK_MAX_SLOTS)];
	uint64_t base = htole64((uintptr_t)l->slots.base);
	struct wlk_msg m;
	char why[160];
	uint32_t i;
	int err = wait_until(l, first_seen, "connected and sent no hello");

	if (err)
		return err;
	err = wlk_parse_msg(l->first, l->first_len, &m, why, sizeof(why));
	if (err)
		return refuse(l, err, why);
	if (m.type != WLK_HELLO) {
		snprintf(why, sizeof(why), "expected a HELLO, got message type %u", m.type);
		return refuse(l, -EPROTO, why);
	}
	wlk_put_msg(buf, WAFER_LINK_VERSION, WLK_ACCEPT, l->slots.n, (uint32_t)l->slots.bytes);
	memcpy(buf + sizeof(m), &base, 8);
	for (i = 0; i < l->slots.n; i++) {
		uint32_t k = htole32(l->slot_mr[i]->rkey);

		memcpy(buf + sizeof(m) + 8 + 4 * i, &k, 4);
	}
	return wlk_send_msg(l, buf, WLK_ACCEPT_BYTES(l->slots.n));
}

/* Waits on the listener for ID's connection to be established. */
static int await_established(struct wafer_link_listener *ls, struct wafer_link *l)
{
	uint64_t end = wafer_now_ns() + (uint64_t)l->timeout_ms * 1000000;

	for (;;) {
		struct rdma_cm_event *ev;
		uint64_t now = wafer_now_ns();
		int err = now >= end ? -ETIMEDOUT :
			  cm_next(ls->ech, (int)((end - now) / 1000000) + 1, &ev);

		if (err)
			return wlk_fail(l, err, "connection not established: %s", strerror(-err));
		if (ev->id == l->id) {
			enum rdma_cm_event_type t = ev->event;

			rdma_ack_cm_event(ev);
			if (t == RDMA_CM_EVENT_ESTABLISHED)
				return 0;
			return wlk_fail(l, -ECONNABORTED, "connection not established: %s",
					rdma_event_str(t));
		}
		/* Another peer meanwhile: one accept at a time. */
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			rdma_reject(ev->id, NULL, 0);
		rdma_ack_cm_event(ev);
	}
}

int wafer_link_accept(struct wafer_link_listener *ls, struct wafer_link **out)
{
	struct rdma_conn_param cp = { .initiator_depth = 1, .responder_resources = 1,
				      .retry_count = 7, .rnr_retry_count = 7 };
	struct rdma_cm_event *ev = NULL;
	struct wafer_link *l;
	int err;

	*out = NULL;
	for (;;) {
		err = cm_next(ls->ech, ls->opts.timeout_ms, &ev);
		if (err)
			return wafer_set_error(err, "link: no peer connected to %s within %d ms",
					       ls->name, ls->opts.timeout_ms);
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			break;
		rdma_ack_cm_event(ev);
	}
	l = link_new(1, &ls->opts);
	if (!l) {
		rdma_reject(ev->id, NULL, 0);
		rdma_destroy_id(ev->id);
		rdma_ack_cm_event(ev);
		return wafer_set_error(-ENOMEM, "link: out of memory");
	}
	l->id = ev->id;
	rdma_ack_cm_event(ev);
	name_addr(rdma_get_peer_addr(l->id), l->peer, sizeof(l->peer));
	err = setup_qp(l, ls->opts.slots, ls->opts.slots + WLK_RECV_EXTRA);
	if (!err)
		err = slots_alloc(l, ls->opts.slots, ls->opts.slot_bytes, ls->opts.drm_fd, 1);
	if (err) {
		err = wlk_fail(l, err, "%s", wafer_last_error());
		rdma_reject(l->id, NULL, 0);
		goto fail;
	}
	l->rx.slots = l->slots.n;
	l->rx.slot_bytes = (uint32_t)l->slots.bytes;
	if (rdma_accept(l->id, &cp)) {
		err = wlk_fail(l, -errno, "rdma_accept: %s", strerror(errno));
		goto fail;
	}
	err = await_established(ls, l);
	if (err)
		goto fail;
	l->connected = 1;
	l->ech = rdma_create_event_channel();
	if (!l->ech || set_nonblock(l->ech->fd) || rdma_migrate_id(l->id, l->ech)) {
		err = wlk_fail(l, -ENOMEM, "an event channel of its own: %s", strerror(errno));
		goto fail;
	}
	err = hello_answer(l);
	if (err)
		goto fail;
	*out = l;
	return 0;
fail:
	err = wlk_failed(l);
	wafer_link_close(l);
	return err;
}

/* ---- both ---- */

void wafer_link_close(struct wafer_link *l)
{
	char keep[320];
	unsigned int i;

	if (!l)
		return;
	/* Closing keeps the caller's view of why the link failed. */
	snprintf(keep, sizeof(keep), "%s", wafer_last_error());
	if (l->connected && !l->err) {
		unsigned char bye[sizeof(struct wlk_msg)];

		wlk_put_msg(bye, WAFER_LINK_VERSION, WLK_CLOSE, 0, 0);
		/* A peer that went quiet does not hold a close for long. */
		if (l->timeout_ms > WLK_CLOSE_WAIT_MS)
			l->timeout_ms = WLK_CLOSE_WAIT_MS;
		if (!wlk_send_msg(l, bye, sizeof(bye)))
			wait_until(l, ctrl_done, "the close not sent");
	}
	if (l->connected)
		rdma_disconnect(l->id);
	if (l->id && l->id->qp)
		rdma_destroy_qp(l->id);
	for (i = 0; i < WAFER_LINK_MAX_SLOTS; i++)
		if (l->slot_mr[i])
			ibv_dereg_mr(l->slot_mr[i]);
	if (l->ring_mr)
		ibv_dereg_mr(l->ring_mr);
	if (l->msg_mr)
		ibv_dereg_mr(l->msg_mr);
	if (l->cq)
		ibv_destroy_cq(l->cq);
	if (l->cch)
		ibv_destroy_comp_channel(l->cch);
	if (l->pd)
		ibv_dealloc_pd(l->pd);
	if (l->id)
		rdma_destroy_id(l->id);
	if (l->ech)
		rdma_destroy_event_channel(l->ech);
	wlk_slots_free(&l->slots);
	free(l->msg);
	free(l);
	wafer_set_error(-EIO, "%s", keep);
}

const char *wafer_link_peer(const struct wafer_link *l)
{
	return l->peer;
}

unsigned int wafer_link_slots(const struct wafer_link *l)
{
	return l->slots.n;
}

size_t wafer_link_slot_bytes(const struct wafer_link *l)
{
	return l->slots.bytes;
}

void *wafer_link_slot(struct wafer_link *l, unsigned int slot)
{
	return slot < l->slots.n ? l->slots.base + (size_t)slot * l->slots.bytes : NULL;
}

uint32_t wafer_link_slot_bo(const struct wafer_link *l, unsigned int slot)
{
	return slot < l->slots.n ? l->slots.bo[slot] : 0;
}

const char *wafer_link_slot_memory(const struct wafer_link *l)
{
	return l->slots.said;
}

uint32_t wafer_link_slot_syncobj(const struct wafer_link *l, unsigned int slot)
{
	return slot < l->slots.n ? l->slots.syncobj[slot] : 0;
}
#endif /* WAFER_HAVE_RDMA */
