// SPDX-License-Identifier: MIT
/* `wafer node`'s wire format and the checks on what arrives (wafer_node_wire.h). */
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "wafer.h"
#include "wafer_link.h"
#include "wafer_node_wire.h"
#include "wfs_model.h"

static void p32(unsigned char **b, uint32_t v)
{
	v = htole32(v);
	memcpy(*b, &v, 4);
	*b += 4;
}

static void p64(unsigned char **b, uint64_t v)
{
	v = htole64(v);
	memcpy(*b, &v, 8);
	*b += 8;
}

static uint32_t g32(const unsigned char **b)
{
	uint32_t v;

	memcpy(&v, *b, 4);
	*b += 4;
	return le32toh(v);
}

static uint64_t g64(const unsigned char **b)
{
	uint64_t v;

	memcpy(&v, *b, 8);
	*b += 8;
	return le64toh(v);
}

static int bad(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
	return -EPROTO;
}

static const char *const names[] = {
	"?", "HELLO", "WELCOME", "REFUSE", "ERROR", "LOAD", "LOADED", "CTX", "CTX_MADE",
	"CTX_FREE", "START", "STARTED", "STOP", "HEALTH", "HEALTHY", "DONE", "UNLOAD",
};

long wnd_payload_len(enum wnd_type t)
{
	switch (t) {
	case WND_HELLO:
		return 8;
	case WND_WELCOME:
		return 68;
	case WND_LOADED:
		return 24;
	case WND_CTX:
		return 12;
	case WND_CTX_MADE:
		return 8;
	case WND_CTX_FREE:
	case WND_STARTED:
		return 4;
	case WND_START:
		return 16 + WND_HOST_MAX;
	case WND_HEALTHY:
		return 12;
	case WND_STOP:
	case WND_HEALTH:
	case WND_DONE:
	case WND_UNLOAD:
		return 0;
	default:
		return -1;
	}
}

void wnd_put_hdr(void *buf, enum wnd_type type, uint32_t len)
{
	unsigned char *b = buf;
	uint16_t v;

	p32(&b, WND_MAGIC);
	v = htole16(WND_VERSION);
	memcpy(b, &v, 2);
	v = htole16(type);
	memcpy(b + 2, &v, 2);
	b += 4;
	p32(&b, len);
	p32(&b, 0);
}

int wnd_parse_hdr(const void *buf, struct wnd_hdr *h, char *why, size_t n)
{
	const unsigned char *b = buf;
	uint16_t v;
	long want;

	h->magic = g32(&b);
	memcpy(&v, b, 2);
	h->version = le16toh(v);
	memcpy(&v, b + 2, 2);
	h->type = le16toh(v);
	b += 4;
	h->len = g32(&b);
	h->arg = g32(&b);
	if (h->magic != WND_MAGIC)
		return bad(why, n, "bad magic 0x%08x (not a wafer node peer)", h->magic);
	if (h->version != WND_VERSION)
		return bad(why, n, "peer speaks node version %u, this end %u", h->version,
			   WND_VERSION);
	if (h->type < WND_HELLO || h->type > WND_TYPE_MAX)
		return bad(why, n, "unknown message type %u", h->type);
	if (h->arg)
		return bad(why, n, "%s: arg %u (must be 0)", names[h->type], h->arg);
	want = wnd_payload_len(h->type);
	if (h->type == WND_LOAD) {
		if (h->len <= 16 || h->len - 16 > WND_BLOB_MAX)
			return bad(why, n, "LOAD: length %u out of range (17..%llu)", h->len,
				   16 + WND_BLOB_MAX);
	} else if (want < 0) {
		if (h->len > WND_MSG_MAX)
			return bad(why, n, "%s: length %u out of range (0..%u)", names[h->type],
				   h->len, WND_MSG_MAX);
	} else if (h->len != (uint32_t)want) {
		return bad(why, n, "%s: length %u (must be %ld)", names[h->type], h->len, want);
	}
	return 0;
}

static int len_is(size_t len, long want, const char *what, char *why, size_t n)
{
	if (len < (size_t)want)
		return bad(why, n, "%s: %zu bytes (must be %ld)", what, len, want);
	return 0;
}

size_t wnd_put_hello(void *buf, const struct wnd_hello *m)
{
	unsigned char *b = buf;

	p32(&b, m->link_version);
	p32(&b, m->device);
	return 8;
}

int wnd_get_hello(const void *buf, size_t len, struct wnd_hello *m, char *why, size_t n)
{
	const unsigned char *b = buf;

	if (len_is(len, 8, "HELLO", why, n))
		return -EPROTO;
	m->link_version = g32(&b);
	m->device = g32(&b);
	if (m->link_version != WAFER_LINK_VERSION)
		return bad(why, n, "HELLO: peer's link version %u, this end %u", m->link_version,
			   WAFER_LINK_VERSION);
	if (m->device > 4095)
		return bad(why, n, "HELLO: device %u out of range (0..4095)", m->device);
	return 0;
}

size_t wnd_put_welcome(void *buf, const struct wnd_welcome *m)
{
	unsigned char *b = buf;

	p64(&b, m->caps);
	p32(&b, m->api_version);
	p32(&b, m->stages);
	p64(&b, m->sram_bytes_per_stage);
	p64(&b, m->sram_bytes_free);
	p64(&b, m->clock_hz);
	p32(&b, m->macs_per_cycle);
	p32(&b, m->max_tokens_per_job);
	p32(&b, m->max_inflight_jobs);
	p32(&b, m->job_timeout_ms);
	p32(&b, m->max_contexts);
	p32(&b, m->profile);
	p32(&b, (uint32_t)m->index);
	return 68;
}

int wnd_get_welcome(const void *buf, size_t len, struct wnd_welcome *m, char *why, size_t n)
{
	const unsigned char *b = buf;

	if (len_is(len, 68, "WELCOME", why, n))
		return -EPROTO;
	m->caps = g64(&b);
	m->api_version = g32(&b);
	m->stages = g32(&b);
	m->sram_bytes_per_stage = g64(&b);
	m->sram_bytes_free = g64(&b);
	m->clock_hz = g64(&b);
	m->macs_per_cycle = g32(&b);
	m->max_tokens_per_job = g32(&b);
	m->max_inflight_jobs = g32(&b);
	m->job_timeout_ms = g32(&b);
	m->max_contexts = g32(&b);
	m->profile = g32(&b);
	m->index = (int32_t)g32(&b);
	if (!m->stages || m->stages > 4096)
		return bad(why, n, "WELCOME: stages %u out of range (1..4096)", m->stages);
	if (!m->max_tokens_per_job)
		return bad(why, n, "WELCOME: max_tokens_per_job 0");
	if (!m->job_timeout_ms || m->job_timeout_ms > 3600000)
		return bad(why, n, "WELCOME: job_timeout_ms %u out of range (1..3600000)",
			   m->job_timeout_ms);
	if (m->index < -1 || m->index > 4095)
		return bad(why, n, "WELCOME: index %d out of range (-1..4095)", m->index);
	return 0;
}

size_t wnd_put_load(void *buf, const struct wnd_load *m)
{
	unsigned char *b = buf;

	p32(&b, m->layer_first);
	p32(&b, m->layer_count);
	p32(&b, m->stream);
	p32(&b, m->expert_group);
	return 16;
}

int wnd_get_load(const void *buf, size_t len, struct wnd_load *m, char *why, size_t n)
{
	const unsigned char *b = buf;

	if (len_is(len, 16, "LOAD", why, n))
		return -EPROTO;
	m->layer_first = g32(&b);
	m->layer_count = g32(&b);
	m->stream = g32(&b);
	m->expert_group = g32(&b);
	if (!m->layer_count || m->layer_count > 4096 || m->layer_first > 4096 - m->layer_count)
		return bad(why, n, "LOAD: layers %u+%u out of range (1..4096 layers)",
			   m->layer_first, m->layer_count);
	if (m->stream > 2)
		return bad(why, n, "LOAD: stream %u out of range (0..2)", m->stream);
	if (m->expert_group > 512)
		return bad(why, n, "LOAD: expert_group %u out of range (0..512)",
			   m->expert_group);
	return 0;
}

int wnd_check_part(const struct wnd_load *m, const void *blob, size_t len,
		   struct wfs_model_info *mi, char *why, size_t n)
{
	struct wfs_blob_header h;

	if (len < sizeof(h))
		return bad(why, n, "LOAD: blob of %zu bytes, shorter than a model header (%zu)",
			   len, sizeof(h));
	memcpy(&h, blob, sizeof(h));
	if (h.magic != WFS_BLOB_MAGIC)
		return bad(why, n, "LOAD: blob magic 0x%08x (not a model blob)", h.magic);
	if (h.total_size != len)
		return bad(why, n, "LOAD: the blob's total_size %llu, but %zu bytes came",
			   (unsigned long long)h.total_size, len);
	if (wfs_model_parse(blob, len, mi))
		return bad(why, n, "LOAD: the blob is not a valid model (%s)",
			   mi->bad_field ? mi->bad_field : "its header or sections");
	if (mi->first_layer != m->layer_first)
		return bad(why, n, "LOAD: the blob's first_layer %u, not the layer_first %u asked",
			   mi->first_layer, m->layer_first);
	if (mi->n_layers != m->layer_count)
		return bad(why, n, "LOAD: the blob's n_layers %u, not the layer_count %u asked",
			   mi->n_layers, m->layer_count);
	return 0;
}

size_t wnd_put_loaded(void *buf, const struct wnd_loaded *m)
{
	unsigned char *b = buf;

	p32(&b, m->n_layers);
	p32(&b, m->embed);
	p32(&b, m->head);
	p32(&b, m->act_size);
	p64(&b, m->sram_bytes);
	return 24;
}

int wnd_get_loaded(const void *buf, size_t len, struct wnd_loaded *m, char *why, size_t n)
{
	const unsigned char *b = buf;

	if (len_is(len, 24, "LOADED", why, n))
		return -EPROTO;
	m->n_layers = g32(&b);
	m->embed = g32(&b);
	m->head = g32(&b);
	m->act_size = g32(&b);
	m->sram_bytes = g64(&b);
	if (m->embed > 1 || m->head > 1)
		return bad(why, n, "LOADED: embed %u / head %u (must be 0 or 1)", m->embed,
			   m->head);
	if (!m->act_size || m->act_size > (1u << 20))
		return bad(why, n, "LOADED: act_size %u out of range (1..%u)", m->act_size,
			   1u << 20);
	return 0;
}

size_t wnd_put_ctx(void *buf, const struct wnd_ctx *m)
{
	unsigned char *b = buf;

	p32(&b, m->ctx);
	p32(&b, m->slots);
	p32(&b, m->ctx_len);
	return 12;
}

int wnd_get_ctx(const void *buf, size_t len, struct wnd_ctx *m, char *why, size_t n)
{
	const unsigned char *b = buf;

	if (len_is(len, 12, "CTX", why, n))
		return -EPROTO;
	m->ctx = g32(&b);
	m->slots = g32(&b);
	m->ctx_len = g32(&b);
	if (!m->ctx || m->ctx > WND_MAX_CTX)
		return bad(why, n, "CTX: ctx %u out of range (1..%u)", m->ctx, WND_MAX_CTX);
	if (!m->slots || m->slots > 4096)
		return bad(why, n, "CTX: slots %u out of range (1..4096)", m->slots);
	if (!m->ctx_len || m->ctx_len > (1u << 20))
		return bad(why, n, "CTX: ctx_len %u out of range (1..%u)", m->ctx_len, 1u << 20);
	return 0;
}

size_t wnd_put_start(void *buf, const struct wnd_start *m)
{
	unsigned char *b = buf;

	p32(&b, m->slots);
	p32(&b, m->slot_bytes);
	p32(&b, m->timeout_ms);
	p32(&b, m->port);
	memset(b, 0, WND_HOST_MAX);
	memcpy(b, m->host, strnlen(m->host, WND_HOST_MAX - 1));
	return 16 + WND_HOST_MAX;
}

int wnd_get_start(const void *buf, size_t len, struct wnd_start *m, char *why, size_t n)
{
	const unsigned char *b = buf;

	if (len_is(len, 16 + WND_HOST_MAX, "START", why, n))
		return -EPROTO;
	m->slots = g32(&b);
	m->slot_bytes = g32(&b);
	m->timeout_ms = g32(&b);
	m->port = g32(&b);
	memcpy(m->host, b, WND_HOST_MAX);
	if (!m->slots || m->slots > WAFER_LINK_MAX_SLOTS)
		return bad(why, n, "START: slots %u out of range (1..%u)", m->slots,
			   WAFER_LINK_MAX_SLOTS);
	if (m->slot_bytes <= WND_JOB_HDR || m->slot_bytes > WAFER_LINK_MAX_SLOT_BYTES)
		return bad(why, n, "START: slot_bytes %u out of range (%u..%u)", m->slot_bytes,
			   WND_JOB_HDR + 1, WAFER_LINK_MAX_SLOT_BYTES);
	if (!m->timeout_ms || m->timeout_ms > 3600000)
		return bad(why, n, "START: timeout_ms %u out of range (1..3600000)",
			   m->timeout_ms);
	if (!m->port || m->port > 65535)
		return bad(why, n, "START: port %u out of range (1..65535)", m->port);
	if (!memchr(m->host, 0, WND_HOST_MAX) || !m->host[0])
		return bad(why, n, "START: host is %s", m->host[0] ? "not terminated" : "empty");
	for (const char *c = m->host; *c; c++)
		if (!strchr("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:",
			    *c))
			return bad(why, n, "START: host has a byte 0x%02x not of an address",
				   (unsigned char)*c);
	return 0;
}

size_t wnd_put_healthy(void *buf, const struct wnd_healthy *m)
{
	unsigned char *b = buf;

	p32(&b, m->state);
	p64(&b, m->jobs);
	return 12;
}

int wnd_get_healthy(const void *buf, size_t len, struct wnd_healthy *m, char *why, size_t n)
{
	const unsigned char *b = buf;

	if (len_is(len, 12, "HEALTHY", why, n))
		return -EPROTO;
	m->state = g32(&b);
	m->jobs = g64(&b);
	if (m->state > 3)
		return bad(why, n, "HEALTHY: state %u out of range (0..3)", m->state);
	return 0;
}

size_t wnd_put_text(void *buf, const char *text)
{
	size_t l = strnlen(text, WND_TEXT_MAX);

	memcpy(buf, text, l);
	return l;
}

/* Text of @len bytes: printable ASCII only, copied with a NUL. */
int wnd_get_text(const void *buf, size_t len, char *text, size_t tn, char *why, size_t n)
{
	const unsigned char *b = buf;
	size_t i;

	if (len > WND_TEXT_MAX)
		return bad(why, n, "text of %zu bytes (at most %u)", len, WND_TEXT_MAX);
	for (i = 0; i < len; i++)
		if (b[i] < 0x20 || b[i] > 0x7e)
			return bad(why, n, "text byte %zu is 0x%02x (not printable)", i, b[i]);
	if (tn) {
		size_t c = len < tn - 1 ? len : tn - 1;

		memcpy(text, b, c);
		text[c] = 0;
	}
	return 0;
}

size_t wnd_put_error(void *buf, int err, const char *text)
{
	unsigned char *b = buf;

	p32(&b, (uint32_t)err);
	return 4 + wnd_put_text(b, text);
}

int wnd_get_error(const void *buf, size_t len, int *err, char *text, size_t tn,
		  char *why, size_t n)
{
	const unsigned char *b = buf;
	int32_t e;

	if (len_is(len, 4, "ERROR", why, n))
		return -EPROTO;
	e = (int32_t)g32(&b);
	if (e >= 0 || e < -4095)
		return bad(why, n, "ERROR: errno %d out of range (-4095..-1)", e);
	*err = e;
	return wnd_get_text(b, len - 4, text, tn, why, n);
}

size_t wnd_put_u32(void *buf, uint32_t v)
{
	unsigned char *b = buf;

	p32(&b, v);
	return 4;
}

int wnd_get_u32(const void *buf, size_t len, uint32_t *v, char *why, size_t n)
{
	const unsigned char *b = buf;

	if (len_is(len, 4, "message", why, n))
		return -EPROTO;
	*v = g32(&b);
	return 0;
}

void wnd_put_job(void *slot, const struct wnd_job *j)
{
	unsigned char *b = slot;

	p32(&b, WND_JOB_MAGIC);
	p32(&b, j->ctx);
	p32(&b, j->slot);
	p32(&b, j->start_pos);
	p32(&b, j->n_tokens);
	p32(&b, j->flags);
	p32(&b, j->top_k);
	p32(&b, j->out_len);
	p64(&b, j->floor_ns);
	p64(&b, j->start_ns);
	p64(&b, j->done_ns);
	p32(&b, (uint32_t)j->status);
	p32(&b, j->payload);
}

int wnd_get_job(const void *slot, size_t len, struct wnd_job *j, char *why, size_t n)
{
	const unsigned char *b = slot;
	uint32_t magic;

	if (len < WND_JOB_HDR)
		return bad(why, n, "record of %zu bytes (a job's header is %u)", len, WND_JOB_HDR);
	magic = g32(&b);
	if (magic != WND_JOB_MAGIC)
		return bad(why, n, "record: bad magic 0x%08x (not a job)", magic);
	j->ctx = g32(&b);
	j->slot = g32(&b);
	j->start_pos = g32(&b);
	j->n_tokens = g32(&b);
	j->flags = g32(&b);
	j->top_k = g32(&b);
	j->out_len = g32(&b);
	j->floor_ns = g64(&b);
	j->start_ns = g64(&b);
	j->done_ns = g64(&b);
	j->status = (int32_t)g32(&b);
	j->payload = g32(&b);
	if (j->flags & ~(uint32_t)WAFER_JOB_ALL_POSITIONS)
		return bad(why, n, "record: unknown flags 0x%x", j->flags);
	if (j->status > 0 || j->status < -4095)
		return bad(why, n, "record: status %d out of range (-4095..0)", j->status);
	if (j->payload != len - WND_JOB_HDR)
		return bad(why, n, "record: payload %u bytes, the record carries %zu", j->payload,
			   len - WND_JOB_HDR);
	if (j->status && j->payload)
		return bad(why, n, "record: a failed job (status %d) with %u bytes of payload",
			   j->status, j->payload);
	return 0;
}

int wnd_check_job(const struct wnd_job *j, const struct wnd_ctx_limits *ctx,
		  uint32_t max_tokens, uint32_t in_bytes, uint64_t room, char *why, size_t n)
{
	const struct wnd_ctx_limits *c;

	if (!j->ctx || j->ctx > WND_MAX_CTX || !ctx[j->ctx - 1].ctx_len)
		return bad(why, n, "record: ctx %u is not a context of this node", j->ctx);
	c = &ctx[j->ctx - 1];
	if (j->slot >= c->slots)
		return bad(why, n, "record: slot %u out of range (0..%u)", j->slot, c->slots - 1);
	if (!j->n_tokens || j->n_tokens > max_tokens)
		return bad(why, n, "record: n_tokens %u out of range (1..%u)", j->n_tokens,
			   max_tokens);
	if (j->start_pos >= c->ctx_len || j->n_tokens > c->ctx_len - j->start_pos)
		return bad(why, n, "record: positions %u..%u beyond the context's %u",
			   j->start_pos, j->start_pos + j->n_tokens - 1, c->ctx_len);
	if (j->status)
		return 0;
	if (j->payload != (uint64_t)j->n_tokens * in_bytes)
		return bad(why, n, "record: payload %u bytes (%u tokens take %llu)", j->payload,
			   j->n_tokens, (unsigned long long)j->n_tokens * in_bytes);
	if (j->out_len > room)
		return bad(why, n, "record: out_len %u beyond the slot's %llu", j->out_len,
			   (unsigned long long)room);
	if (j->top_k > WAFER_MAX_TOPK)
		return bad(why, n, "record: top_k %u out of range (0..%u)", j->top_k,
			   WAFER_MAX_TOPK);
	return 0;
}
