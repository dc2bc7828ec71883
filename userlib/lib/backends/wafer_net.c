// SPDX-License-Identifier: MIT
/*
 * The chain backend: a device made of chain members on `wafer node`s,
 * possibly on other hosts (wafer_open_chain(), docs/SCALE-OUT.md).  The
 * generic front ends (generate, bench, serve) see one device.
 *
 * A model is split in layer ranges over the members, in order (as the
 * pipeline backend splits it over local devices); each node is sent its
 * range's part of the model's blob (wafer_blob_part.h) over the control
 * connection (TCP), every LOAD before the first answer is read, and the
 * members' links are set up from the last to the first: the last member's
 * outgoing link comes back to this process, and this process's outgoing
 * link goes to the first member.  A job goes out as a record (its header
 * and token ids) on that link; its results come back on the other.
 * Nothing of a job's data travels on the control connection.
 *
 * The modelled clock is the pipeline's (wafer_pipe_clock.c): the first
 * member's job is floored at its slot's last completion (or the latest
 * reaped one), and a job's device_ns is the chain's makespan, from the
 * first member's start to the last one's done_ns.
 *
 * A member that fails (its node dies: its control connection closes; a
 * link breaks; nothing arrives within the timeout) fails every job in
 * flight and every later call, naming the node and device.  A node that
 * hangs (stopped, its host stuck) closes nothing: while jobs are in flight
 * each member is asked HEALTH every second, and one that has not answered
 * within the timeout is named as hung, before a neighbour whose link to it
 * timed out.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../wafer_backend.h"
#include "../wafer_blob_part.h"
#include "../wafer_node_io.h"
#include "wafer_link.h"
#include "wfs_model.h"

#define NET_MAX		128	/* members */
#define NET_SLOTS	8	/* jobs in flight (slots per link) */
#define NET_CTX		WND_MAX_CTX
#define NET_PROBE_MS	1000	/* a member asked HEALTH at most this often */

struct net_member {
	struct wafer_chain_member m;
	char name[96];
	int fd;
	struct wnd_welcome w;
	struct wnd_loaded ld;
	uint32_t first;
	uint64_t probe_ns;
	uint64_t healthy_ns;
};

struct net_slot {
	unsigned int pending;
	uint64_t done_ns;
};

struct net_ctx {
	int used;
	uint32_t slots;
	uint32_t ctx_len;
	struct net_slot *slot;
};

struct net_job {
	struct wafer_job_hw job;
};

struct net {
	unsigned int n;
	struct net_member mb[NET_MAX];
	unsigned int split[NET_MAX];
	int timeout_ms;
	int loaded;
	int started;
	int clocked;
	uint32_t slot_bytes;
	struct wafer_link_listener *lis;
	struct wafer_link *out, *in;
	struct net_ctx ctx[NET_CTX];
	struct net_job fifo[NET_SLOTS];
	unsigned int head, count;
	uint64_t reaped_ns;
	int dead;
	char dead_msg[400];
	int finding;
};

static struct net *net_of(const struct wafer_dev *dev)
{
	return dev->priv;
}

/* A failure of the chain: every later call says it again. */
static int die(struct net *t, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int die(struct net *t, int err, const char *fmt, ...)
{
	va_list ap;

	if (!t->dead) {
		va_start(ap, fmt);
		vsnprintf(t->dead_msg, sizeof(t->dead_msg), fmt, ap);
		va_end(ap);
		t->dead = err;
	}
	return wafer_set_error(t->dead, "%s", t->dead_msg);
}

/* The first member whose control connection closed (its node died), or -1. */
static int hung_up(struct net *t, int wait_ms)
{
	uint64_t end = wafer_now_ns() + (uint64_t)wait_ms * 1000000;
	struct pollfd p[NET_MAX];
	unsigned int k;
	char c;

	for (;;) {
		for (k = 0; k < t->n; k++)
			p[k] = (struct pollfd){ .fd = t->mb[k].fd, .events = POLLRDHUP };
		if (poll(p, t->n, 0) > 0)
			for (k = 0; k < t->n; k++)
				if ((p[k].revents & (POLLRDHUP | POLLHUP | POLLERR)) &&
				    recv(t->mb[k].fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) <= 0)
					return (int)k;
		if (wafer_now_ns() >= end)
			return -1;
		poll(NULL, 0, 20);
	}
}

/* Asks HEALTH of each member not asked within NET_PROBE_MS (@all: of each not waited on). */
static void probe(struct net *t, int all)
{
	uint64_t now = wafer_now_ns();
	unsigned int k;

	for (k = 0; k < t->n; k++) {
		struct net_member *m = &t->mb[k];

		if (m->probe_ns || (!all && now - m->healthy_ns < NET_PROBE_MS * 1000000ull))
			continue;
		if (!wnd_send(m->fd, WND_HEALTH, NULL, 0, NULL, 0))
			m->probe_ns = now;
	}
}

/* The member longest asked HEALTH without answering, for over @ms; or -1. */
static int unanswered(struct net *t, int ms)
{
	uint64_t now = wafer_now_ns(), oldest = 0;
	unsigned int k;
	int who = -1;

	for (k = 0; k < t->n; k++) {
		uint64_t at = t->mb[k].probe_ns;

		if (at && now - at > (uint64_t)ms * 1000000 && (who < 0 || at < oldest)) {
			who = (int)k;
			oldest = at;
		}
	}
	return who;
}

/* Member @k's HEALTHY, the answer to its probe. */
static int healthy(struct net *t, unsigned int k, const void *buf, uint32_t len)
{
	struct wnd_healthy hl;
	char why[200];

	if (!t->mb[k].probe_ns)
		return die(t, -EPROTO, "%s: a HEALTHY it was not asked for", t->mb[k].name);
	if (wnd_get_healthy(buf, len, &hl, why, sizeof(why)))
		return die(t, -EPROTO, "%s: %s", t->mb[k].name, why);
	t->mb[k].probe_ns = 0;
	t->mb[k].healthy_ns = wafer_now_ns();
	return 0;
}

/* The hung member named: its HEALTH unanswered. */
static int die_hung(struct net *t, int k)
{
	return die(t, -ETIMEDOUT, "%s: no answer to HEALTH in %llu ms (the node hung?)",
		   t->mb[k].name,
		   (unsigned long long)((wafer_now_ns() - t->mb[k].probe_ns) / 1000000));
}

static int check_nodes(struct net *t, int wait_ms);

/*
 * Before a failure is blamed on the member that saw it: every member is
 * asked HEALTH, and one that does not answer within @ms is named instead
 * (the others' answers are read).  0: all answered.
 */
static int find_hung(struct net *t, int ms)
{
	uint64_t end = wafer_now_ns() + (uint64_t)ms * 1000000;
	int k, r = 0;

	t->finding = 1;	/* the neighbours' ERRORs are read, not believed */
	probe(t, 1);
	while (!r && wafer_now_ns() < end && unanswered(t, 0) >= 0)
		r = check_nodes(t, 50);
	t->finding = 0;
	if (r)
		return r;
	k = unanswered(t, ms);
	return k < 0 ? 0 : die_hung(t, k);
}

/*
 * What the nodes said of their own (an ERROR of a member's jobs, a HEALTHY)
 * or that a node's connection closed; waits up to @wait_ms for it.  0:
 * nothing wrong.  A node that died or hung is named before its neighbours'
 * errors (their links to it broke or timed out): an ERROR waits a second
 * for a death to show and for every member's answer to HEALTH.
 */
static int check_nodes(struct net *t, int wait_ms)
{
	char why[200], text[WND_TEXT_MAX + 1];
	struct pollfd p[NET_MAX];
	unsigned int k;
	int dead, e = 0, from = -1;

	for (k = 0; k < t->n; k++)
		p[k] = (struct pollfd){ .fd = t->mb[k].fd, .events = POLLIN };
	if (poll(p, t->n, wait_ms) <= 0)
		return 0;
	for (k = 0; k < t->n && from < 0; k++) {
		unsigned char buf[WND_MSG_MAX];
		struct wnd_hdr h;
		int r;

		if (!(p[k].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		r = wnd_recv(t->mb[k].fd, &h, buf, sizeof(buf), t->timeout_ms, why, sizeof(why));
		if (r == -ECONNRESET || r == -EPIPE)
			return die(t, -ECONNRESET, "%s: its connection closed (the node died?)",
				   t->mb[k].name);
		if (r)
			return die(t, -EPROTO, "%s: %s", t->mb[k].name,
				   r == -EPROTO ? why : strerror(-r));
		if (h.type == WND_HEALTHY) {
			if (healthy(t, k, buf, h.len))
				return t->dead;
			continue;
		}
		if (h.type != WND_ERROR || wnd_get_error(buf, h.len, &e, text, sizeof(text), why,
							 sizeof(why)))
			return die(t, -EPROTO, "%s: unexpected message type %u", t->mb[k].name,
				   h.type);
		if (!t->finding)
			from = (int)k;
	}
	if (from < 0)
		return 0;
	dead = hung_up(t, 1000);
	if (dead >= 0)
		return die(t, -ECONNRESET, "%s: its connection closed (the node died?)",
			   t->mb[dead].name);
	if (find_hung(t, 1000))
		return t->dead;
	return die(t, e, "%s: %s", t->mb[from].name, text);
}

/* Sends member K a request: 0, or the chain's failure. */
static int ask(struct net *t, unsigned int k, enum wnd_type type, const void *p, size_t len,
	       const void *p2, size_t len2)
{
	struct net_member *m = &t->mb[k];
	int r;

	if (t->dead)
		return wafer_set_error(t->dead, "%s", t->dead_msg);
	r = wnd_send(m->fd, type, p, len, p2, len2);
	return r ? die(t, r, "%s: sending: %s", m->name, strerror(-r)) : 0;
}

/* Member K's answer to what it was asked: WANT (its payload into ANS, ALEN), or an ERROR. */
static int answer(struct net *t, unsigned int k, enum wnd_type want, void *ans, size_t *alen)
{
	struct net_member *m = &t->mb[k];
	unsigned char buf[WND_MSG_MAX];
	char why[200], text[WND_TEXT_MAX + 1];
	struct wnd_hdr h;
	int r, e;

	if (t->dead)
		return wafer_set_error(t->dead, "%s", t->dead_msg);
	do {	/* the answer to a HEALTH asked while jobs ran comes first */
		r = wnd_recv(m->fd, &h, buf, sizeof(buf),
			     t->timeout_ms + (int)m->w.job_timeout_ms, why, sizeof(why));
		if (!r && h.type == WND_HEALTHY && m->probe_ns && healthy(t, k, buf, h.len))
			return t->dead;
	} while (!r && h.type == WND_HEALTHY);
	if (r == -ECONNRESET)
		return die(t, r, "%s: its connection closed (the node died?)", m->name);
	if (r == -ETIMEDOUT)
		return die(t, r, "%s: no answer within %d ms", m->name,
			   t->timeout_ms + (int)m->w.job_timeout_ms);
	if (r)
		return die(t, r, "%s: %s", m->name, r == -EPROTO ? why : strerror(-r));
	if (h.type == WND_ERROR) {
		if (wnd_get_error(buf, h.len, &e, text, sizeof(text), why, sizeof(why)))
			return die(t, -EPROTO, "%s: %s", m->name, why);
		return wafer_set_error(e, "%s: %s", m->name, text);
	}
	if (h.type != want)
		return die(t, -EPROTO, "%s: answered with message type %u (expected %u)", m->name,
			   h.type, want);
	if (ans)
		memcpy(ans, buf, h.len);
	if (alen)
		*alen = h.len;
	return 0;
}

/* A request to member @k and its answer (@want, or an ERROR said as the error). */
static int call(struct net *t, unsigned int k, enum wnd_type type, const void *p, size_t len,
		const void *p2, size_t len2, enum wnd_type want, void *ans, size_t *alen)
{
	int r = ask(t, k, type, p, len, p2, len2);

	return r ? r : answer(t, k, want, ans, alen);
}

static int hello(struct net *t, unsigned int k)
{
	struct net_member *m = &t->mb[k];
	struct wnd_hello h = { .link_version = WAFER_LINK_VERSION, .device = m->m.device };
	unsigned char out[16], buf[WND_MSG_MAX];
	char why[200], text[WND_TEXT_MAX + 1];
	struct wnd_hdr hd;
	int r;

	char host[sizeof(m->m.host)];

	memcpy(host, m->m.host, sizeof(host));
	host[sizeof(host) - 1] = 0;
	snprintf(m->name, sizeof(m->name), "node %s:%u device %u", host,
		 m->m.port ? m->m.port : WAFER_NODE_PORT, m->m.device);
	m->fd = wnd_connect(m->m.host, m->m.port ? m->m.port : WAFER_NODE_PORT, t->timeout_ms);
	if (m->fd < 0)
		return wafer_set_error(m->fd, "%s: connecting: %s", m->name, strerror(-m->fd));
	r = wnd_send(m->fd, WND_HELLO, out, wnd_put_hello(out, &h), NULL, 0);
	if (!r)
		r = wnd_recv(m->fd, &hd, buf, sizeof(buf), t->timeout_ms, why, sizeof(why));
	if (r)
		return wafer_set_error(r, "%s: the hello: %s", m->name,
				       r == -EPROTO ? why : r == -ECONNRESET ? "hung up" :
				       strerror(-r));
	if (hd.type == WND_REFUSE) {
		wnd_get_text(buf, hd.len, text, sizeof(text), why, sizeof(why));
		return wafer_set_error(-EPROTO, "%s: refused: %s", m->name, text);
	}
	if (hd.type != WND_WELCOME || wnd_get_welcome(buf, hd.len, &m->w, why, sizeof(why)))
		return wafer_set_error(-EPROTO, "%s: the hello: %s", m->name,
				       hd.type != WND_WELCOME ? "no WELCOME" : why);
	return 0;
}

static void net_info(struct wafer_dev *dev)
{
	struct net *t = net_of(dev);
	struct wafer_info *i = &dev->info;
	unsigned int k;

	memset(i, 0, sizeof(*i));
	i->api_version = t->mb[0].w.api_version;
	i->caps = ~0ull;
	i->profile = t->mb[0].w.profile;
	strcpy(i->profile_name, "chain");
	i->sram_bytes_per_stage = t->mb[0].w.sram_bytes_per_stage;
	i->clock_hz = t->mb[0].w.clock_hz;
	i->macs_per_cycle = t->mb[0].w.macs_per_cycle;
	i->numa_node = -1;
	i->max_models = 1;
	i->max_contexts = NET_CTX;
	i->max_tokens_per_job = WAFER_PIPE_MAX_TOKENS;
	i->max_inflight_jobs = NET_SLOTS;
	for (k = 0; k < t->n; k++) {
		const struct wnd_welcome *w = &t->mb[k].w;

		i->caps &= w->caps;
		i->stages += w->stages;
		i->sram_bytes_free += w->sram_bytes_free;
		i->job_timeout_ms += w->job_timeout_ms;
		if (w->max_tokens_per_job < i->max_tokens_per_job)
			i->max_tokens_per_job = w->max_tokens_per_job;
		if (w->max_contexts && w->max_contexts < i->max_contexts)
			i->max_contexts = w->max_contexts;
	}
	/* A job waits on every member in turn, and on the links. */
	i->job_timeout_ms += (uint32_t)t->timeout_ms;
	t->clocked = t->n > 1 && (i->caps & WAFER_CAP_NOT_BEFORE);
}

static void net_close(struct wafer_dev *dev)
{
	struct net *t = net_of(dev);
	unsigned int k;

	wafer_link_close(t->out);
	wafer_link_close(t->in);
	wafer_link_listener_close(t->lis);
	for (k = 0; k < t->n; k++)
		if (t->mb[k].fd >= 0)
			close(t->mb[k].fd);
	for (k = 0; k < NET_CTX; k++)
		free(t->ctx[k].slot);
	free(t);
}

int wafer_open_chain(const struct wafer_chain_member *m, unsigned int n,
		     const unsigned int *split, unsigned int n_split, int timeout_ms,
		     struct wafer_dev **out)
{
	struct wafer_dev *dev;
	struct net *t;
	unsigned int k;
	int r = 0;

	if (!out)
		return wafer_set_error(-EINVAL, "wafer_open_chain: no output pointer");
	*out = NULL;
	if (!m || !n || n > NET_MAX)
		return wafer_set_error(-EINVAL, "a chain of %u members (1..%u)", n, NET_MAX);
	if (n_split && (n_split != n || !split))
		return wafer_set_error(-EINVAL, "split: %u layer counts for a chain of %u",
				       n_split, n);
	dev = calloc(1, sizeof(*dev));
	t = calloc(1, sizeof(*t));
	if (!dev || !t) {
		free(dev);
		free(t);
		return wafer_set_error(-ENOMEM, "out of memory");
	}
	dev->ops = &wafer_net_backend;
	dev->priv = t;
	dev->index = -1;
	t->timeout_ms = timeout_ms > 0 ? timeout_ms : 10000;
	for (k = 0; k < n; k++)
		t->mb[k].fd = -1;
	t->n = n;
	for (k = 0; k < n && !r; k++) {
		t->mb[k].m = m[k];
		if (n_split)
			t->split[k] = split[k];
		r = hello(t, k);
	}
	if (r) {
		net_close(dev);
		free(dev);
		return r;
	}
	net_info(dev);
	*out = dev;
	return 0;
}

static const char *net_submit_name(const struct wafer_dev *dev)
{
	(void)dev;
	return "link";
}

static int net_bo_create(struct wafer_dev *dev, struct wafer_bo *bo)
{
	(void)dev;
	bo->size = (bo->size + 4095) & ~(size_t)4095;
	bo->map = aligned_alloc(4096, bo->size);
	if (!bo->map)
		return wafer_set_error(-ENOMEM, "out of memory for a %zu-byte buffer", bo->size);
	memset(bo->map, 0, bo->size);
	return 0;
}

static void net_bo_destroy(struct wafer_dev *dev, struct wafer_bo *bo)
{
	(void)dev;
	free(bo->map);
}

/* The links: the last member's back to here, each member's to the next, here to the first. */
static int links_start(struct net *t)
{
	struct wafer_link_opts lo = { .slots = NET_SLOTS, .slot_bytes = t->slot_bytes,
				      .timeout_ms = t->timeout_ms, .drm_fd = -1 };
	struct wnd_start st = { .slots = NET_SLOTS, .slot_bytes = t->slot_bytes,
				.timeout_ms = (uint32_t)t->timeout_ms };
	unsigned char out[128], ans[WND_MSG_MAX];
	char here[WND_HOST_MAX], *colon, port[16];
	uint32_t p;
	size_t al;
	int k, r;

	/* This end's address as the last node reaches it. */
	wnd_addr(t->mb[t->n - 1].fd, 1, here, sizeof(here));
	colon = strrchr(here, ':');
	if (colon)
		*colon = 0;
	r = wafer_link_listen(here, "0", &lo, &t->lis);
	if (r)
		return r;
	snprintf(st.host, sizeof(st.host), "%s", here);
	st.port = (uint32_t)wafer_link_listener_port(t->lis);
	for (k = (int)t->n - 1; k >= 0; k--) {
		r = call(t, (unsigned int)k, WND_START, out, wnd_put_start(out, &st), NULL, 0,
			 WND_STARTED, ans, &al);
		if (r)
			return r;
		if (wnd_get_u32(ans, al, &p, here, sizeof(here)) || !p || p > 65535)
			return die(t, -EPROTO, "%s: STARTED with port %u", t->mb[k].name, p);
		snprintf(st.host, sizeof(st.host), "%s", t->mb[k].m.host);
		st.port = p;
	}
	r = wafer_link_accept(t->lis, &t->in);
	if (r)
		return wafer_prefix_error(r, "%s (its outgoing link)", t->mb[t->n - 1].name);
	snprintf(port, sizeof(port), "%u", st.port);
	r = wafer_link_connect(st.host, port, &lo, &t->out);
	if (r)
		return wafer_prefix_error(r, "%s (its incoming link)", t->mb[0].name);
	t->started = 1;
	return 0;
}

static int net_model_load(struct wafer_dev *dev, struct wafer_bo *bo, size_t len,
			  struct wafer_load_hw *ld)
{
	struct net *t = net_of(dev);
	struct wfs_model_info mi;
	unsigned int k, count[NET_MAX], sum = 0;
	unsigned char out[64], ans[WND_MSG_MAX];
	char said[320];
	uint64_t bytes;
	size_t al;
	int r, err;

	if (t->loaded)
		return wafer_set_error(-EBUSY, "a chain holds one model at a time");
	if (wfs_model_parse(bo->map, len, &mi))
		return wafer_set_error(-EINVAL, "the model blob is not valid");
	for (k = 0; k < t->n; k++) {
		count[k] = t->split[0] ? t->split[k] : wafer_split_even(mi.n_layers, t->n, k);
		sum += count[k];
		if (!count[k])
			return wafer_set_error(-EINVAL, "%s gets no layer (%u layers over %u "
					       "members)", t->mb[k].name, mi.n_layers, t->n);
	}
	if (sum != mi.n_layers)
		return wafer_set_error(-EINVAL, "split: %u layers given, the model has %u", sum,
				       mi.n_layers);
	/*
	 * Each member is sent its layers' part of the blob alone, and every
	 * LOAD goes out before the first answer is read: the members load at
	 * once while the next are sent theirs.
	 */
	for (k = 0; k < t->n; k++) {
		/* The LOAD names the layers in the model's numbering. */
		struct wnd_load l = { .layer_first = mi.first_layer + (k ? t->mb[k - 1].first +
								      count[k - 1] : 0),
				      .layer_count = count[k], .stream = (uint32_t)ld->stream,
				      .expert_group = ld->expert_group };
		unsigned char *part;
		size_t plen;

		t->mb[k].first = l.layer_first - mi.first_layer;
		r = wafer_blob_part(bo->map, &mi, t->mb[k].first, l.layer_count, &part, &plen);
		if (r)
			return wafer_prefix_error(r, "%s", t->mb[k].name);
		r = ask(t, k, WND_LOAD, out, wnd_put_load(out, &l), part, plen);
		free(part);
		if (r)
			return r;
	}
	/* Every answer is read, so a member's failure leaves none unread. */
	for (k = 0, err = 0; k < t->n; k++) {
		r = answer(t, k, WND_LOADED, ans, &al);
		if (!r && wnd_get_loaded(ans, al, &t->mb[k].ld, (char *)out, sizeof(out)))
			r = die(t, -EPROTO, "%s: %s", t->mb[k].name, (char *)out);
		if (r && !err) {
			err = r;
			snprintf(said, sizeof(said), "%s", wafer_last_error());
		}
		ld->sram_bytes += r ? 0 : t->mb[k].ld.sram_bytes;
	}
	if (err)
		return wafer_set_error(err, "%s", said);
	ld->act_size = t->mb[0].ld.act_size;
	ld->embed = (int)t->mb[0].ld.embed;
	ld->head = (int)t->mb[t->n - 1].ld.head;
	ld->n_layers = mi.n_layers;
	ld->id = 1;
	/* A slot holds a job's largest record: ids and a floor, activations, results. */
	bytes = (uint64_t)WAFER_PIPE_MAX_TOKENS * ld->act_size;
	if (bytes < (uint64_t)WAFER_PIPE_MAX_TOKENS * WAFER_RESULT_SIZE(WAFER_MAX_TOPK))
		bytes = (uint64_t)WAFER_PIPE_MAX_TOKENS * WAFER_RESULT_SIZE(WAFER_MAX_TOPK);
	bytes = (WND_JOB_HDR + bytes + 8 + 4095) & ~4095ull;
	t->slot_bytes = (uint32_t)bytes;
	t->loaded = 1;
	r = links_start(t);
	return r;
}

static int net_model_unload(struct wafer_dev *dev, uint32_t id)
{
	struct net *t = net_of(dev);
	unsigned int k;

	(void)id;
	/* From the last member: each stops before the one that feeds it closes its link. */
	if (!t->dead)
		for (k = t->n; k-- > 0;)
			call(t, k, WND_STOP, NULL, 0, NULL, 0, WND_DONE, NULL, NULL);
	wafer_link_close(t->out);
	wafer_link_close(t->in);
	wafer_link_listener_close(t->lis);
	t->out = t->in = NULL;
	t->lis = NULL;
	t->started = 0;
	if (!t->dead)
		for (k = 0; k < t->n; k++)
			call(t, k, WND_UNLOAD, NULL, 0, NULL, 0, WND_DONE, NULL, NULL);
	for (k = 0; k < NET_CTX; k++)	/* the nodes freed every context */
		if (t->ctx[k].used < 0)
			t->ctx[k].used = 0;
	t->loaded = 0;
	return 0;
}

static int net_ctx_create(struct wafer_dev *dev, uint32_t model_id, unsigned int slots,
			  unsigned int ctx_len, uint32_t *id, uint64_t *kv_bytes)
{
	struct net *t = net_of(dev);
	unsigned char out[16], ans[WND_MSG_MAX];
	unsigned int c, k;
	size_t al;
	int r;

	(void)model_id;
	for (c = 0; c < NET_CTX && t->ctx[c].used; c++)
		;
	if (c == NET_CTX)
		return wafer_set_error(-EBUSY, "%d contexts exist on the chain already", NET_CTX);
	t->ctx[c].slot = calloc(slots, sizeof(*t->ctx[c].slot));
	if (!t->ctx[c].slot)
		return wafer_set_error(-ENOMEM, "out of memory");
	*kv_bytes = 0;
	for (k = 0; k < t->n; k++) {
		struct wnd_ctx m = { .ctx = c + 1, .slots = slots, .ctx_len = ctx_len };
		uint32_t lo = 0, hi = 0;

		r = call(t, k, WND_CTX, out, wnd_put_ctx(out, &m), NULL, 0, WND_CTX_MADE, ans, &al);
		if (r) {
			free(t->ctx[c].slot);
			t->ctx[c].slot = NULL;
			return r;
		}
		wnd_get_u32(ans, al, &lo, (char *)out, 0);
		wnd_get_u32(ans + 4, al - 4, &hi, (char *)out, 0);
		*kv_bytes += (uint64_t)hi << 32 | lo;
	}
	t->ctx[c] = (struct net_ctx){ .used = 1, .slots = slots, .ctx_len = ctx_len,
				      .slot = t->ctx[c].slot };
	*id = c + 1;
	return 0;
}

static int net_ctx_destroy(struct wafer_dev *dev, uint32_t id)
{
	struct net *t = net_of(dev);
	unsigned char out[8];
	unsigned int k;

	/* A context's jobs end first: the nodes free it after a STOP (or on close). */
	if (!t->dead && !t->started)
		for (k = 0; k < t->n; k++)
			call(t, k, WND_CTX_FREE, out, wnd_put_u32(out, id), NULL, 0, WND_DONE, NULL,
			     NULL);
	free(t->ctx[id - 1].slot);
	memset(&t->ctx[id - 1], 0, sizeof(t->ctx[id - 1]));
	/* Started, the nodes keep it until the model's unload: its id is not reused before. */
	if (t->started)
		t->ctx[id - 1].used = -1;
	return 0;
}

static int net_submit(struct wafer_dev *dev, const struct wafer_job_hw *jobs, unsigned int n)
{
	struct net *t = net_of(dev);
	unsigned int i;

	if (t->dead)
		return wafer_set_error(t->dead, "%s", t->dead_msg);
	if (!t->started)
		return wafer_set_error(-EINVAL, "no model is loaded on the chain");
	for (i = 0; i < n; i++) {
		const struct wafer_job_hw *j = &jobs[i];
		struct net_ctx *c = &t->ctx[j->ctx_id - 1];
		struct net_slot *sl = &c->slot[j->slot];
		struct wnd_job w = { .ctx = j->ctx_id, .slot = j->slot, .start_pos = j->start_pos,
				     .n_tokens = j->n_tokens, .flags = j->flags, .top_k = j->top_k,
				     .out_len = (uint32_t)j->out_len,
				     .payload = j->n_tokens * 4 };
		unsigned int s;
		int r;

		if (j->flags & ~(uint32_t)WAFER_JOB_ALL_POSITIONS)
			return i ? (int)i : wafer_set_error(-EOPNOTSUPP, "a chain runs no NOP or "
							    "TIMES jobs (flags 0x%x)", j->flags);
		if (j->out_len > t->slot_bytes - WND_JOB_HDR)
			return i ? (int)i : wafer_set_error(-EINVAL, "a job's %llu result bytes "
							    "exceed a link slot",
							    (unsigned long long)j->out_len);
		if (t->count == NET_SLOTS)
			return i ? (int)i : -EAGAIN;
		r = wafer_link_acquire(t->out, &s);
		if (r && !check_nodes(t, 0) && !find_hung(t, 1000))
			return die(t, r, "%s (its incoming link): %s", t->mb[0].name,
				   wafer_last_error());
		if (r)
			return t->dead;
		if (t->clocked) {
			w.floor_ns = sl->pending ? 0 : sl->done_ns;
			if (t->reaped_ns > w.floor_ns)
				w.floor_ns = t->reaped_ns;
		}
		wnd_put_job(wafer_link_slot(t->out, s), &w);
		memcpy((char *)wafer_link_slot(t->out, s) + WND_JOB_HDR,
		       (const char *)j->in->map + j->in_offset, w.payload);
		r = wafer_link_send(t->out, WND_JOB_HDR + w.payload, 0);
		if (r)
			return die(t, r, "%s (its incoming link): %s", t->mb[0].name,
				   wafer_last_error());
		sl->pending++;
		t->fifo[(t->head + t->count) % NET_SLOTS].job = *j;
		t->count++;
	}
	return (int)n;
}

/* The oldest job's results, back from the last member in slot @k. */
static int take(struct net *t, unsigned int k, size_t len, struct wafer_completion *c)
{
	struct wafer_job_hw *j = &t->fifo[t->head].job;
	struct net_slot *sl = &t->ctx[j->ctx_id - 1].slot[j->slot];
	const char *rec = wafer_link_slot(t->in, k);
	const char *last = t->mb[t->n - 1].name;
	struct wnd_job w;
	char why[200];

	if (wnd_get_job(rec, len, &w, why, sizeof(why)))
		return die(t, -EPROTO, "%s (its outgoing link): %s", last, why);
	if (w.ctx != j->ctx_id || w.slot != j->slot || w.start_pos != j->start_pos ||
	    w.n_tokens != j->n_tokens)
		return die(t, -EPROTO, "%s (its outgoing link): results for ctx %u slot %u "
			   "positions %u+%u, expected ctx %u slot %u positions %u+%u", last,
			   w.ctx, w.slot, w.start_pos, w.n_tokens, j->ctx_id, j->slot,
			   j->start_pos, j->n_tokens);
	if (!w.status && w.payload != j->out_len)
		return die(t, -EPROTO, "%s (its outgoing link): %u result bytes, expected %llu",
			   last, w.payload, (unsigned long long)j->out_len);
	if (!w.status)
		memcpy((char *)j->out->map + j->out_offset, rec + WND_JOB_HDR, w.payload);
	*c = (struct wafer_completion){ .user_data = j->user_data, .status = w.status,
					.done_ns = w.done_ns };
	if (w.done_ns >= w.start_ns && w.start_ns)
		c->device_ns = w.done_ns - w.start_ns;
	sl->pending--;
	if (!w.status && w.done_ns > sl->done_ns)
		sl->done_ns = w.done_ns;
	if (!w.status && w.done_ns > t->reaped_ns)
		t->reaped_ns = w.done_ns;
	t->head = (t->head + 1) % NET_SLOTS;
	t->count--;
	return wafer_link_release(t->in, k, 0);
}

static int net_reap(struct wafer_dev *dev, struct wafer_completion *out, unsigned int max,
		    unsigned int min, uint64_t deadline_ns)
{
	struct net *t = net_of(dev);
	uint64_t quiet_since = wafer_now_ns();
	unsigned int got = 0;

	while (got < max) {
		uint64_t now = wafer_now_ns();
		int wait = 0, r;
		unsigned int k;
		size_t len;

		if (t->dead)
			return got ? (int)got : wafer_set_error(t->dead, "%s", t->dead_msg);
		if (!t->count)
			break;
		if (got < min && now < deadline_ns)
			wait = (int)((deadline_ns - now) / 1000000 + 1) < 100 ?
			       (int)((deadline_ns - now) / 1000000 + 1) : 100;
		r = wafer_link_poll(t->in, wait);
		if (r == 1) {
			r = wafer_link_recv(t->in, &k, &len);
			if (!r)
				r = take(t, k, len, &out[got]);
			if (r)
				goto failed;
			got++;
			quiet_since = wafer_now_ns();
			continue;
		}
		if (r < 0)
			goto failed;
		probe(t, 0);
		r = check_nodes(t, 0);
		if (!r && unanswered(t, t->timeout_ms) >= 0)
			r = die_hung(t, unanswered(t, t->timeout_ms));
		if (r)
			return got ? (int)got : r;
		now = wafer_now_ns();
		if (now - quiet_since > (uint64_t)dev->info.job_timeout_ms * 1000000)
			return die(t, -ETIMEDOUT, "no results from %s within %u ms (a node hung or "
				   "its host is gone?)", t->mb[t->n - 1].name,
				   dev->info.job_timeout_ms);
		if (got >= min || now >= deadline_ns)
			break;
	}
	return (int)got;
failed:
	{
		char msg[300];

		snprintf(msg, sizeof(msg), "%s", wafer_last_error());
		/* A node's own word on why (or its death, or its hang) names it best. */
		if (check_nodes(t, 1000) || find_hung(t, 1000))
			return got ? (int)got : t->dead;
		return die(t, -EIO, "%s: %s", t->mb[t->n - 1].name, msg);
	}
}

/* The chain's modelled clock: the latest done_ns of the results reaped. */
static int net_stats(struct wafer_dev *dev, struct wafer_dev_stats *st)
{
	st->modelled_makespan_ns = net_of(dev)->reaped_ns;
	return 0;
}

const struct wafer_backend_ops wafer_net_backend = {
	.name = "chain",
	.close = net_close,
	.submit_name = net_submit_name,
	.bo_create = net_bo_create,
	.bo_destroy = net_bo_destroy,
	.model_load = net_model_load,
	.model_unload = net_model_unload,
	.ctx_create = net_ctx_create,
	.ctx_destroy = net_ctx_destroy,
	.submit = net_submit,
	.reap = net_reap,
	.stats = net_stats,
};
