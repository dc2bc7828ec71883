// SPDX-License-Identifier: MIT
/*
 * `wafer node`: a daemon per host owning some of its devices.  A client
 * claims one per control connection (TCP; messages in wafer_node_wire.h,
 * docs/SCALE-OUT.md): HELLO names the device, LOAD gives a layer range and
 * the model blob, CTX makes contexts, START sets up the member's links and
 * runs its jobs (wafer_node_run.c), STOP ends them, HEALTH asks.  A peer
 * that sends a bad message, another version or nothing is refused with
 * the reason and closed.  When the connection ends, whatever the session
 * held goes with the device's close: the device is free for the next
 * chain once its links are stopped; a HELLO for a device still held waits
 * for it up to the node's timeout (a new chain right after a client or a
 * neighbour died), and is refused after.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "wafer_node.h"
#include "wafer_node_io.h"
#include "wfs_model.h"

/**
 * struct wnd_node - the daemon
 * @o: its options
 * @log: where it says what happens
 * @lock: guards @busy and @holder
 * @freed: signalled when a session frees its device
 * @busy: per owned device, a session holds it
 * @holder: per busy device, its session's control connection
 */
struct wnd_node {
	const struct wafer_node_opts *o;
	FILE *log;
	pthread_mutex_t lock;
	pthread_cond_t freed;
	int busy[64];
	int holder[64];
};

struct wnd_conn {
	struct wnd_node *node;
	int fd;
};

static int reply(struct wnd_session *s, enum wnd_type t, const void *p, size_t len)
{
	int r;

	pthread_mutex_lock(&s->lock);
	r = wnd_send(s->fd, t, p, len, NULL, 0);
	pthread_mutex_unlock(&s->lock);
	return r;
}

static int refuse(int fd, const char *peer, FILE *log, const char *why)
{
	char text[WND_TEXT_MAX];
	size_t n = wnd_put_text(text, why);

	fprintf(log, "wafer node: client %s refused: %s\n", peer, why);
	fflush(log);
	wnd_send(fd, WND_REFUSE, text, n, NULL, 0);
	wnd_linger(fd, 1000);
	return -EPROTO;
}

/* Under nd->lock: device @i's holder's client has hung up (its session is leaving). */
static int holder_gone(const struct wnd_node *nd, unsigned int i)
{
	struct pollfd p = { .fd = nd->holder[i], .events = POLLRDHUP };

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

/*
 * Claims device @i (index @device) for session @s: 0, or -EBUSY while another
 * chain's session holds it.  A session whose client has gone frees its
 * device in a moment (its links stop, the device closes); the claim waits
 * for that, up to the session's timeout, so a chain that follows another at once
 * gets the device.
 */
static int claim(struct wnd_node *nd, struct wnd_session *s, unsigned int i,
		 unsigned int device)
{
	uint64_t t0 = wafer_now_ns(), end = t0 + (uint64_t)s->timeout_ms * 1000000;
	struct timespec ts;
	int r = 0, waited = 0;

	pthread_mutex_lock(&nd->lock);
	while (nd->busy[i] && !r) {
		uint64_t t;

		if (!holder_gone(nd, i) || wafer_now_ns() >= end) {
			r = -EBUSY;
			break;
		}
		waited = 1;
		/* Woken by the free, or a slice later to look again. */
		clock_gettime(CLOCK_REALTIME, &ts);
		t = (uint64_t)ts.tv_nsec + 100000000;
		ts.tv_sec += (time_t)(t / 1000000000);
		ts.tv_nsec = (long)(t % 1000000000);
		pthread_cond_timedwait(&nd->freed, &nd->lock, &ts);
	}
	if (!r) {
		nd->busy[i] = 1;
		nd->holder[i] = s->fd;
	}
	pthread_mutex_unlock(&nd->lock);
	if (waited) {
		fprintf(s->log, "wafer node: client %s: device %u %s after %llu ms of its "
			"previous session leaving\n", s->peer, device,
			r ? "still held" : "was freed",
			(unsigned long long)((wafer_now_ns() - t0) / 1000000));
		fflush(s->log);
	}
	return r;
}

/* Frees device @i for the next chain. */
static void unclaim(struct wnd_node *nd, unsigned int i)
{
	pthread_mutex_lock(&nd->lock);
	nd->busy[i] = 0;
	pthread_cond_broadcast(&nd->freed);
	pthread_mutex_unlock(&nd->lock);
}

/* HELLO: the device claimed, opened; WELCOME with its info. */
static int hello(struct wnd_node *nd, struct wnd_session *s)
{
	unsigned char buf[WND_MSG_MAX], out[128];
	struct wafer_open_opts oo = { .index = -1 };
	struct wnd_welcome w = { 0 };
	struct wnd_hello h;
	struct wnd_hdr hd;
	char why[200];
	unsigned int i;
	int r;

	r = wnd_recv(s->fd, &hd, buf, sizeof(buf), s->timeout_ms, why, sizeof(why));
	if (r == -ETIMEDOUT)
		return refuse(s->fd, s->peer, s->log, "connected and sent no hello in time");
	if (r == -ECONNRESET)
		return refuse(s->fd, s->peer, s->log, "hung up before its hello");
	if (r)
		return refuse(s->fd, s->peer, s->log, why);
	if (hd.type != WND_HELLO)
		return refuse(s->fd, s->peer, s->log, "the first message is not a HELLO");
	if (wnd_get_hello(buf, hd.len, &h, why, sizeof(why)))
		return refuse(s->fd, s->peer, s->log, why);
	for (i = 0; i < nd->o->n_devices && nd->o->devices[i] != h.device; i++)
		;
	if (i == nd->o->n_devices) {
		snprintf(why, sizeof(why), "HELLO: device %u is not one of this node's", h.device);
		return refuse(s->fd, s->peer, s->log, why);
	}
	if (claim(nd, s, i, h.device)) {
		snprintf(why, sizeof(why), "HELLO: device %u is in another chain", h.device);
		return refuse(s->fd, s->peer, s->log, why);
	}
	s->device = h.device;
	oo.backend = nd->o->inproc ? WAFER_BACKEND_INPROC : WAFER_BACKEND_KERNEL;
	oo.submit = WAFER_SUBMIT_IOCTL;
	if (!nd->o->inproc)
		oo.index = (int)h.device;
	r = wafer_open(&oo, &s->dev);
	if (r) {
		snprintf(why, sizeof(why), "device %u: %s", h.device, wafer_last_error());
		refuse(s->fd, s->peer, s->log, why);
		goto out;
	}
	w.caps = s->dev->info.caps;
	w.api_version = s->dev->info.api_version;
	w.stages = s->dev->info.stages;
	w.sram_bytes_per_stage = s->dev->info.sram_bytes_per_stage;
	w.sram_bytes_free = s->dev->info.sram_bytes_free;
	w.clock_hz = s->dev->info.clock_hz;
	w.macs_per_cycle = s->dev->info.macs_per_cycle;
	w.max_tokens_per_job = s->dev->info.max_tokens_per_job;
	w.max_inflight_jobs = s->dev->info.max_inflight_jobs;
	w.job_timeout_ms = s->dev->info.job_timeout_ms;
	w.max_contexts = s->dev->info.max_contexts;
	w.profile = s->dev->info.profile;
	w.index = s->dev->index;
	r = reply(s, WND_WELCOME, out, wnd_put_welcome(out, &w));
	if (!r) {
		wnd_log(s, "joined a chain (%s backend)", s->dev->ops->name);
		return 0;
	}
	wafer_close(s->dev);
	s->dev = NULL;
out:
	unclaim(nd, i);
	return r ? r : -EIO;
}

static int do_load(struct wnd_session *s, const struct wnd_hdr *hd)
{
	size_t len = hd->len - 16;
	unsigned char head[16], out[64];
	struct wnd_load ld;
	struct wfs_model_info mi;
	char why[200];
	int r;

	r = wnd_read(s->fd, head, sizeof(head), s->timeout_ms);
	if (r)
		return r;
	if (wnd_get_load(head, sizeof(head), &ld, why, sizeof(why))) {
		wafer_set_error(-EPROTO, "%s", why);
		return -EPROTO;
	}
	if (s->model) {
		wafer_set_error(-EBUSY, "LOAD: a part is loaded already (UNLOAD first)");
		return -EBUSY;
	}
	r = wafer_bo_create(s->dev, len, &s->blob);
	if (r)
		return r;
	r = wnd_read(s->fd, s->blob->map, len, s->timeout_ms);
	if (r)
		return r;
	/* The blob is the part: exactly the layers asked (in the model's numbering). */
	if (wnd_check_part(&ld, s->blob->map, len, &mi, why, sizeof(why))) {
		r = wafer_set_error(-EPROTO, "%s", why);
		goto drop;
	}
	s->part = (struct wafer_load_hw){ .layer_first = ld.layer_first,
					  .layer_count = ld.layer_count,
					  .stream = ld.stream != 0,
					  .expert_group = ld.expert_group };
	r = s->dev->ops->model_load(s->dev, s->blob, len, &s->part);
	if (r)
		goto drop;
	s->model = s->part.id;
	if (!s->part.stream) {
		wafer_bo_destroy(s->blob);
		s->blob = NULL;
	}
	wnd_log(s, "loaded layers %u..%u%s%s", ld.layer_first,
		ld.layer_first + ld.layer_count - 1, s->part.embed ? " +embed" : "",
		s->part.head ? " +head" : "");
	{
		struct wnd_loaded l = { .n_layers = s->part.n_layers, .embed = !!s->part.embed,
					.head = !!s->part.head, .act_size = s->part.act_size,
					.sram_bytes = s->part.sram_bytes };

		return reply(s, WND_LOADED, out, wnd_put_loaded(out, &l));
	}
drop:
	wafer_bo_destroy(s->blob);
	s->blob = NULL;
	return r;
}

static void unload(struct wnd_session *s)
{
	unsigned int c;

	wnd_run_stop(s);
	for (c = 0; c < WND_MAX_CTX; c++)
		if (s->ctx_id[c]) {
			s->dev->ops->ctx_destroy(s->dev, s->ctx_id[c]);
			s->ctx_id[c] = 0;
			s->ctx[c].ctx_len = 0;
		}
	if (s->model)
		s->dev->ops->model_unload(s->dev, s->model);
	s->model = 0;
	if (s->blob)
		wafer_bo_destroy(s->blob);
	s->blob = NULL;
}

/* One request; 0, or -errno with wafer_last_error() (the session goes on), or -EPIPE. */
static int request(struct wnd_session *s, const struct wnd_hdr *hd, const unsigned char *buf)
{
	unsigned char out[64];
	struct wnd_ctx c;
	uint64_t kv;
	uint32_t v;
	char why[200];
	int r;

	switch (hd->type) {
	case WND_LOAD:
		return do_load(s, hd);
	case WND_CTX:
		if (wnd_get_ctx(buf, hd->len, &c, why, sizeof(why)))
			return wafer_set_error(-EPROTO, "%s", why);
		if (!s->model)
			return wafer_set_error(-EINVAL, "CTX before a LOAD");
		if (s->ctx_id[c.ctx - 1])
			return wafer_set_error(-EEXIST, "CTX: ctx %u exists", c.ctx);
		r = s->dev->ops->ctx_create(s->dev, s->model, c.slots, c.ctx_len,
					    &s->ctx_id[c.ctx - 1], &kv);
		if (r)
			return r;
		s->ctx[c.ctx - 1] = (struct wnd_ctx_limits){ .slots = c.slots, .ctx_len = c.ctx_len };
		wnd_put_u32(out, (uint32_t)kv);
		wnd_put_u32(out + 4, (uint32_t)(kv >> 32));
		return reply(s, WND_CTX_MADE, out, 8);
	case WND_CTX_FREE:
		wnd_get_u32(buf, hd->len, &v, why, sizeof(why));
		if (!v || v > WND_MAX_CTX || !s->ctx_id[v - 1])
			return wafer_set_error(-EPROTO, "CTX_FREE: ctx %u is not a context here", v);
		if (s->running)
			return wafer_set_error(-EBUSY, "CTX_FREE while started (STOP first)");
		s->dev->ops->ctx_destroy(s->dev, s->ctx_id[v - 1]);
		s->ctx_id[v - 1] = 0;
		s->ctx[v - 1].ctx_len = 0;
		return reply(s, WND_DONE, NULL, 0);
	case WND_START:
		if (wnd_get_start(buf, hd->len, &s->start, why, sizeof(why)))
			return wafer_set_error(-EPROTO, "%s", why);
		r = wnd_run_start(s);
		if (r < 0)
			return r;
		return reply(s, WND_STARTED, out, wnd_put_u32(out, (uint32_t)r));
	case WND_STOP:
		wnd_run_stop(s);
		return reply(s, WND_DONE, NULL, 0);
	case WND_UNLOAD:
		unload(s);
		return reply(s, WND_DONE, NULL, 0);
	case WND_HEALTH: {
		struct wnd_healthy h = { .state = s->failed ? 3 : s->running ? 2 : s->model ? 1 : 0,
					 .jobs = s->jobs };

		return reply(s, WND_HEALTHY, out, wnd_put_healthy(out, &h));
	}
	default:
		return wafer_set_error(-EPROTO, "a client does not send message type %u", hd->type);
	}
}

static void session(struct wnd_node *nd, int fd)
{
	struct wnd_session *s = calloc(1, sizeof(*s));
	unsigned char buf[WND_MSG_MAX];
	unsigned int i;
	char why[200];

	if (!s) {
		close(fd);
		return;
	}
	s->fd = fd;
	s->log = nd->log;
	s->addr = nd->o->addr;
	s->timeout_ms = nd->o->timeout_ms > 0 ? nd->o->timeout_ms : 10000;
	s->device = ~0u;
	pthread_mutex_init(&s->lock, NULL);
	wnd_addr(fd, 0, s->peer, sizeof(s->peer));
	if (hello(nd, s))
		goto out;
	while (!(nd->o->stop && *nd->o->stop)) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		struct wnd_hdr hd;
		int r;

		if (poll(&p, 1, 200) <= 0)
			continue;
		r = wnd_recv(fd, &hd, buf, sizeof(buf), s->timeout_ms, why, sizeof(why));
		if (r == -ECONNRESET) {
			wnd_log(s, "the client hung up");
			break;
		}
		if (r) {
			wnd_tell_error(s, r == -ETIMEDOUT ? -ETIMEDOUT : -EPROTO, "closed: %s",
				       r == -ETIMEDOUT ? "a message cut short" : why);
			wnd_linger(fd, 1000);
			break;
		}
		r = request(s, &hd, buf);
		if (r == -EPROTO) {
			wnd_tell_error(s, r, "closed: %s", wafer_last_error());
			wnd_linger(fd, 1000);
			break;
		}
		if (r)
			wnd_tell_error(s, r, "%s", wafer_last_error());
	}
	unload(s);
	wnd_log(s, "left the chain; the device is free");
	wafer_close(s->dev);
	for (i = 0; i < nd->o->n_devices; i++)
		if (nd->o->devices[i] == s->device)
			unclaim(nd, i);
out:
	close(fd);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static void *conn_thread(void *arg)
{
	struct wnd_conn *c = arg;

	session(c->node, c->fd);
	free(c);
	return NULL;
}

int wafer_node_serve(const struct wafer_node_opts *o)
{
	struct wnd_node nd = { .o = o, .log = o->log ? o->log : stderr };
	int lfd;

	if (!o->n_devices || o->n_devices > 64)
		return wafer_set_error(-EINVAL, "wafer node: %u devices (1..64)", o->n_devices);
	lfd = wnd_listen(o->addr, o->port ? o->port : WAFER_NODE_PORT);
	if (lfd < 0)
		return wafer_set_error(lfd, "wafer node: listening on %s:%u: %s",
				       o->addr ? o->addr : "*", o->port ? o->port : WAFER_NODE_PORT,
				       strerror(-lfd));
	pthread_mutex_init(&nd.lock, NULL);
	pthread_cond_init(&nd.freed, NULL);
	fprintf(nd.log, "wafer node: listening on %s:%u, %u device(s)\n", o->addr ? o->addr : "*",
		o->port ? o->port : WAFER_NODE_PORT, o->n_devices);
	fflush(nd.log);
	while (!(o->stop && *o->stop)) {
		struct pollfd p = { .fd = lfd, .events = POLLIN };
		struct wnd_conn *c;
		pthread_t t;
		int fd;

		if (poll(&p, 1, 200) <= 0)
			continue;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		c = malloc(sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->node = &nd;
		c->fd = fd;
		if (pthread_create(&t, NULL, conn_thread, c)) {
			close(fd);
			free(c);
			continue;
		}
		pthread_detach(t);
	}
	close(lfd);
	return 0;
}
