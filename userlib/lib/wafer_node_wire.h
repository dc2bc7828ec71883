/* SPDX-License-Identifier: MIT */
/*
 * The wire format of `wafer node` (docs/SCALE-OUT.md): the control
 * messages between a chain's client and each node, and the header of a
 * job's record on the chain's links.  Pure functions: no sockets, no
 * verbs; every field that arrives is checked here, and what is wrong is
 * said naming the field.
 */
#ifndef WAFER_NODE_WIRE_H
#define WAFER_NODE_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define WND_MAGIC	0x444f4e57u	/* "WNOD", little-endian on the wire */
/* 2: a LOAD carries its layers' part of the blob, not the whole model. */
#define WND_VERSION	2
#define WND_HDR		16
/* A control message's payload at most, but a LOAD's (its blob). */
#define WND_MSG_MAX	4096
/* A LOAD's blob at most. */
#define WND_BLOB_MAX	(1ull << 30)
/* An ERROR's or a REFUSE's text at most. */
#define WND_TEXT_MAX	200
/* A START's host, bytes with its NUL. */
#define WND_HOST_MAX	64
/* Contexts a node session holds at most (client ids 1..WND_MAX_CTX). */
#define WND_MAX_CTX	64

enum wnd_type {
	WND_HELLO = 1,		/* client: node version (header), link version, device */
	WND_WELCOME = 2,	/* node: the device's info */
	WND_REFUSE = 3,		/* node: why (text); the connection closes */
	WND_ERROR = 4,		/* node: a request failed, or the chain did: errno, text */
	WND_LOAD = 5,		/* client: a layer range and the model blob */
	WND_LOADED = 6,		/* node: what the range holds */
	WND_CTX = 7,		/* client: a context (its id, slots, positions) */
	WND_CTX_MADE = 8,	/* node: its KV bytes */
	WND_CTX_FREE = 9,	/* client: context id */
	WND_START = 10,		/* client: the links' shape and where the next one listens */
	WND_STARTED = 11,	/* node: the port its incoming link listens on */
	WND_STOP = 12,		/* client: the links end */
	WND_HEALTH = 13,	/* client: how are you */
	WND_HEALTHY = 14,	/* node: state, jobs run */
	WND_DONE = 15,		/* node: CTX_FREE, STOP or UNLOAD done */
	WND_UNLOAD = 16,	/* client: the model goes */
	WND_TYPE_MAX = 16,
};

/* A control message's header (host order once parsed). */
struct wnd_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t len;		/* payload bytes after the header */
	uint32_t arg;		/* unused: 0 */
};

/* HELLO's payload. */
struct wnd_hello {
	uint32_t link_version;
	uint32_t device;	/* the node's device index (its -d list) */
};

/* WELCOME's payload: the device, as wafer_info says. */
struct wnd_welcome {
	uint64_t caps;
	uint32_t api_version;
	uint32_t stages;
	uint64_t sram_bytes_per_stage;
	uint64_t sram_bytes_free;
	uint64_t clock_hz;
	uint32_t macs_per_cycle;
	uint32_t max_tokens_per_job;
	uint32_t max_inflight_jobs;
	uint32_t job_timeout_ms;
	uint32_t max_contexts;
	uint32_t profile;
	int32_t index;		/* accelN, or -1 in process */
};

/*
 * LOAD's payload, then the part of the model blob holding exactly the
 * layers named (the rest of the message; wafer_model_part.h).
 */
struct wnd_load {
	uint32_t layer_first;
	uint32_t layer_count;
	uint32_t stream;
	uint32_t expert_group;
};

struct wnd_loaded {
	uint32_t n_layers;
	uint32_t embed;
	uint32_t head;
	uint32_t act_size;
	uint64_t sram_bytes;
};

struct wnd_ctx {
	uint32_t ctx;		/* the client's id, 1..WND_MAX_CTX */
	uint32_t slots;
	uint32_t ctx_len;
};

/* START: the links.  The node listens for its incoming one, connects its
 * outgoing one to @host:@port (the next node, or the client). */
struct wnd_start {
	uint32_t slots;
	uint32_t slot_bytes;
	uint32_t timeout_ms;
	uint32_t port;
	char host[WND_HOST_MAX];
};

struct wnd_healthy {
	uint32_t state;		/* 0 idle, 1 loaded, 2 running, 3 failed */
	uint64_t jobs;
};

/* Payload bytes of each fixed-size message (0: none; -1: variable). */
long wnd_payload_len(enum wnd_type t);

/* A header into @buf (WND_HDR bytes). */
void wnd_put_hdr(void *buf, enum wnd_type type, uint32_t len);
/*
 * Parses a header: magic, version, known type, payload length allowed for
 * the type.  0, or -EPROTO with @why naming the field.
 */
int wnd_parse_hdr(const void *buf, struct wnd_hdr *h, char *why, size_t n);

/* Payloads to and from the wire (little-endian, packed).  The parsers
 * check every field's range; 0, or -EPROTO / -EINVAL with @why. */
size_t wnd_put_hello(void *buf, const struct wnd_hello *m);
int wnd_get_hello(const void *buf, size_t len, struct wnd_hello *m, char *why, size_t n);
size_t wnd_put_welcome(void *buf, const struct wnd_welcome *m);
int wnd_get_welcome(const void *buf, size_t len, struct wnd_welcome *m, char *why, size_t n);
size_t wnd_put_load(void *buf, const struct wnd_load *m);
int wnd_get_load(const void *buf, size_t len, struct wnd_load *m, char *why, size_t n);
/*
 * A LOAD's blob (LEN bytes at BLOB) against its LOAD M: a valid model blob
 * (into *MI) whose own length, first_layer and n_layers are what the
 * message says.  0, or -EPROTO with @why naming the field.
 */
struct wfs_model_info;
int wnd_check_part(const struct wnd_load *m, const void *blob, size_t len,
		   struct wfs_model_info *mi, char *why, size_t n);
size_t wnd_put_loaded(void *buf, const struct wnd_loaded *m);
int wnd_get_loaded(const void *buf, size_t len, struct wnd_loaded *m, char *why, size_t n);
size_t wnd_put_ctx(void *buf, const struct wnd_ctx *m);
int wnd_get_ctx(const void *buf, size_t len, struct wnd_ctx *m, char *why, size_t n);
size_t wnd_put_start(void *buf, const struct wnd_start *m);
int wnd_get_start(const void *buf, size_t len, struct wnd_start *m, char *why, size_t n);
size_t wnd_put_healthy(void *buf, const struct wnd_healthy *m);
int wnd_get_healthy(const void *buf, size_t len, struct wnd_healthy *m, char *why, size_t n);
/* ERROR: errno (negative) and text; REFUSE: text.  Text is cut to WND_TEXT_MAX. */
size_t wnd_put_error(void *buf, int err, const char *text);
int wnd_get_error(const void *buf, size_t len, int *err, char *text, size_t tn,
		  char *why, size_t n);
size_t wnd_put_text(void *buf, const char *text);
int wnd_get_text(const void *buf, size_t len, char *text, size_t tn, char *why, size_t n);

/* A u32 payload (CTX_FREE: the context; STARTED: the port). */
size_t wnd_put_u32(void *buf, uint32_t v);
int wnd_get_u32(const void *buf, size_t len, uint32_t *v, char *why, size_t n);

/*
 * The header of a job's record in a link slot: what the job is, then its
 * payload at WND_JOB_HDR: the token ids (to the first node), the
 * activation records (node to node, given to the device unchanged), the
 * results (the last node to the client).
 */
#define WND_JOB_MAGIC	0x424f4a57u	/* "WJOB" */
#define WND_JOB_HDR	64

struct wnd_job {
	uint32_t ctx;		/* the client's context id */
	uint32_t slot;
	uint32_t start_pos;
	uint32_t n_tokens;
	uint32_t flags;		/* WAFER_JOB_ALL_POSITIONS (the rest the node refuses) */
	uint32_t top_k;
	uint32_t out_len;	/* result bytes the last node's job may write */
	uint64_t floor_ns;	/* the first node's WFW_JOB_NOT_BEFORE floor */
	uint64_t start_ns;	/* modelled time the first node started (0: not yet) */
	uint64_t done_ns;	/* modelled time the last node finished (to the client) */
	int32_t status;		/* 0, or the failed node's -errno: no payload follows */
	uint32_t payload;	/* bytes after the header */
};

void wnd_put_job(void *slot, const struct wnd_job *j);
/*
 * Parses a record of @len bytes (what the link delivered) and checks its
 * header: magic, flags, status, payload within the record.  The context
 * checks (ctx, slot, positions) are the node's (wnd_check_job()).
 */
int wnd_get_job(const void *slot, size_t len, struct wnd_job *j, char *why, size_t n);

/* What a node's session knows of a context. */
struct wnd_ctx_limits {
	uint32_t slots;
	uint32_t ctx_len;	/* 0: no such context */
};

/*
 * A record's job against the node's contexts and its part: ctx live, slot
 * in range, positions within the context, 1..@max_tokens tokens, payload
 * exactly what the part takes (@in_bytes per token), results fitting
 * @room bytes.  0, or -EPROTO with @why naming the field.
 */
int wnd_check_job(const struct wnd_job *j, const struct wnd_ctx_limits *ctx,
		  uint32_t max_tokens, uint32_t in_bytes, uint64_t room, char *why, size_t n);

#endif /* WAFER_NODE_WIRE_H */
