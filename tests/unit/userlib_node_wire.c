// SPDX-License-Identifier: MIT
/*
 * Unit test: `wafer node`'s wire format and the checks on what arrives
 * (userlib/lib/wafer_node_wire.c) and the --chain syntax
 * (wafer_chain_parse()), without a network:
 *
 * - a header round-trips; a short one is not parsed; bad magic, another
 *   version, an unknown type, a non-zero arg, a length wrong for the type
 *   or too long, a LOAD without a blob or with one too big are refused
 *   naming the field;
 * - every payload round-trips, and each field out of range is refused
 *   naming it: HELLO's link version and device, WELCOME's stages and
 *   timeout, LOAD's layers, stream and expert group, LOADED's flags and
 *   record size, CTX's id, slots and positions, START's slots, slot
 *   bytes, timeout, port and host (unterminated, empty, not an address),
 *   ERROR's errno and text (not printable, too long);
 * - a job's record: the header round-trips; bad magic, unknown flags, a
 *   positive status, a payload not what the record carries, a failed job
 *   with a payload are refused; against a node's contexts: an unknown
 *   context, a slot, token count or positions out of range, a payload
 *   not what the part takes, results beyond the slot, top_k too big;
 * - chains: "HOST:DEVICES", ports, device ranges and "+" lists, several
 *   nodes; an empty spec, no devices, a bad port or range, too many
 *   members are refused; a JSON chain file gives the same members, and
 *   one not JSON, of another version, without members, or with a member
 *   whose host, port or devices are wrong is refused naming the field.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/wafer_node_wire.h"
#include "wafer.h"
#include "wafer_link.h"
#include "wt_util.h"

static char why[200];

static int rejects(int ret, const char *pattern)
{
	return ret == -EPROTO && strstr(why, pattern);
}

static void hdr_bytes(unsigned char *b, uint32_t magic, uint16_t ver, uint16_t type,
		      uint32_t len, uint32_t arg)
{
	memcpy(b, &magic, 4);
	memcpy(b + 4, &ver, 2);
	memcpy(b + 6, &type, 2);
	memcpy(b + 8, &len, 4);
	memcpy(b + 12, &arg, 4);
}

static void test_header(void)
{
	unsigned char b[WND_HDR];
	struct wnd_hdr h;

	wnd_put_hdr(b, WND_CTX, 12);
	wt_ok(!wnd_parse_hdr(b, &h, why, sizeof(why)) && h.type == WND_CTX && h.len == 12 &&
	      h.version == WND_VERSION, "a header round-trips");
	wt_ok(!memcmp(b, "WNOD", 4), "the magic is \"WNOD\" on the wire");
	hdr_bytes(b, 0x20544547, 1, 1, 8, 0);
	wt_ok(rejects(wnd_parse_hdr(b, &h, why, sizeof(why)), "bad magic 0x20544547"),
	      "garbage is refused: %s", why);
	hdr_bytes(b, WND_MAGIC, 1, 1, 8, 0);
	wt_ok(rejects(wnd_parse_hdr(b, &h, why, sizeof(why)), "peer speaks node version 1, this end 2"),
	      "another version (one whose LOAD is the whole blob) is refused: %s", why);
	hdr_bytes(b, WND_MAGIC, WND_VERSION, 99, 0, 0);
	wt_ok(rejects(wnd_parse_hdr(b, &h, why, sizeof(why)), "unknown message type 99"),
	      "an unknown type is refused: %s", why);
	hdr_bytes(b, WND_MAGIC, WND_VERSION, 0, 0, 0);
	wt_ok(rejects(wnd_parse_hdr(b, &h, why, sizeof(why)), "unknown message type 0"),
	      "type 0 is refused: %s", why);
	hdr_bytes(b, WND_MAGIC, WND_VERSION, WND_HEALTH, 0, 5);
	wt_ok(rejects(wnd_parse_hdr(b, &h, why, sizeof(why)), "HEALTH: arg 5"),
	      "a non-zero arg is refused: %s", why);
	hdr_bytes(b, WND_MAGIC, WND_VERSION, WND_CTX, 13, 0);
	wt_ok(rejects(wnd_parse_hdr(b, &h, why, sizeof(why)), "CTX: length 13 (must be 12)"),
	      "a length wrong for its type is refused: %s", why);
	hdr_bytes(b, WND_MAGIC, WND_VERSION, WND_ERROR, WND_MSG_MAX + 1, 0);
	wt_ok(rejects(wnd_parse_hdr(b, &h, why, sizeof(why)), "ERROR: length 4097 out of range"),
	      "a text message too long is refused: %s", why);
	hdr_bytes(b, WND_MAGIC, WND_VERSION, WND_LOAD, 16, 0);
	wt_ok(rejects(wnd_parse_hdr(b, &h, why, sizeof(why)), "LOAD: length 16 out of range"),
	      "a LOAD without a blob is refused: %s", why);
	hdr_bytes(b, WND_MAGIC, WND_VERSION, WND_LOAD, 0xffffffffu, 0);
	wt_ok(rejects(wnd_parse_hdr(b, &h, why, sizeof(why)), "LOAD: length 4294967295 out of range"),
	      "a LOAD's blob beyond the bound is refused: %s", why);
}

static void test_payloads(void)
{
	unsigned char b[256];
	struct wnd_hello he = { .link_version = WAFER_LINK_VERSION, .device = 3 }, he2;
	struct wnd_welcome we = { .caps = 5, .stages = 8, .max_tokens_per_job = 64,
				  .job_timeout_ms = 2000, .index = 1 }, we2;
	struct wnd_load lo = { .layer_first = 2, .layer_count = 3, .stream = 1 }, lo2;
	struct wnd_loaded ld = { .n_layers = 3, .embed = 1, .act_size = 512 }, ld2;
	struct wnd_ctx cx = { .ctx = 1, .slots = 4, .ctx_len = 256 }, cx2;
	struct wnd_start st = { .slots = 8, .slot_bytes = 8192, .timeout_ms = 5000, .port = 7470 },
			 st2;
	char text[WND_TEXT_MAX + 1];
	size_t n;
	int e;

	n = wnd_put_hello(b, &he);
	wt_ok(!wnd_get_hello(b, n, &he2, why, sizeof(why)) && he2.device == 3, "HELLO round-trips");
	he.link_version = 9;
	wnd_put_hello(b, &he);
	wt_ok(rejects(wnd_get_hello(b, n, &he2, why, sizeof(why)), "HELLO: peer's link version 9"),
	      "HELLO with another link version: %s", why);
	he = (struct wnd_hello){ .link_version = WAFER_LINK_VERSION, .device = 5000 };
	wnd_put_hello(b, &he);
	wt_ok(rejects(wnd_get_hello(b, n, &he2, why, sizeof(why)), "HELLO: device 5000"),
	      "HELLO with a device out of range: %s", why);
	wt_ok(rejects(wnd_get_hello(b, 7, &he2, why, sizeof(why)), "HELLO: 7 bytes"),
	      "a short HELLO: %s", why);

	n = wnd_put_welcome(b, &we);
	wt_ok(n == (size_t)wnd_payload_len(WND_WELCOME) &&
	      !wnd_get_welcome(b, n, &we2, why, sizeof(why)) && we2.stages == 8 &&
	      we2.caps == 5 && we2.index == 1, "WELCOME round-trips");
	we.stages = 0;
	wnd_put_welcome(b, &we);
	wt_ok(rejects(wnd_get_welcome(b, n, &we2, why, sizeof(why)), "WELCOME: stages 0"),
	      "WELCOME with no stage: %s", why);
	we.stages = 8;
	we.job_timeout_ms = 0;
	wnd_put_welcome(b, &we);
	wt_ok(rejects(wnd_get_welcome(b, n, &we2, why, sizeof(why)), "WELCOME: job_timeout_ms 0"),
	      "WELCOME with no timeout: %s", why);

	n = wnd_put_load(b, &lo);
	wt_ok(!wnd_get_load(b, n, &lo2, why, sizeof(why)) && lo2.layer_first == 2 &&
	      lo2.layer_count == 3 && lo2.stream == 1, "LOAD round-trips");
	lo.layer_count = 0;
	wnd_put_load(b, &lo);
	wt_ok(rejects(wnd_get_load(b, n, &lo2, why, sizeof(why)), "LOAD: layers 2+0"),
	      "LOAD of no layer: %s", why);
	lo = (struct wnd_load){ .layer_first = 0xfffffff0u, .layer_count = 0x20 };
	wnd_put_load(b, &lo);
	wt_ok(rejects(wnd_get_load(b, n, &lo2, why, sizeof(why)), "LOAD: layers"),
	      "LOAD with a range that wraps: %s", why);
	lo = (struct wnd_load){ .layer_count = 1, .stream = 3 };
	wnd_put_load(b, &lo);
	wt_ok(rejects(wnd_get_load(b, n, &lo2, why, sizeof(why)), "LOAD: stream 3"),
	      "LOAD with an unknown stream mode: %s", why);
	lo = (struct wnd_load){ .layer_count = 1, .expert_group = 513 };
	wnd_put_load(b, &lo);
	wt_ok(rejects(wnd_get_load(b, n, &lo2, why, sizeof(why)), "LOAD: expert_group 513"),
	      "LOAD with too big an expert group: %s", why);

	n = wnd_put_loaded(b, &ld);
	wt_ok(!wnd_get_loaded(b, n, &ld2, why, sizeof(why)) && ld2.act_size == 512 && ld2.embed,
	      "LOADED round-trips");
	ld.head = 2;
	wnd_put_loaded(b, &ld);
	wt_ok(rejects(wnd_get_loaded(b, n, &ld2, why, sizeof(why)), "head 2"),
	      "LOADED with head 2: %s", why);
	ld.head = 0;
	ld.act_size = 0;
	wnd_put_loaded(b, &ld);
	wt_ok(rejects(wnd_get_loaded(b, n, &ld2, why, sizeof(why)), "LOADED: act_size 0"),
	      "LOADED with empty records: %s", why);

	n = wnd_put_ctx(b, &cx);
	wt_ok(!wnd_get_ctx(b, n, &cx2, why, sizeof(why)) && cx2.slots == 4 && cx2.ctx_len == 256,
	      "CTX round-trips");
	cx.ctx = WND_MAX_CTX + 1;
	wnd_put_ctx(b, &cx);
	wt_ok(rejects(wnd_get_ctx(b, n, &cx2, why, sizeof(why)), "CTX: ctx 65"),
	      "CTX with an id out of range: %s", why);
	cx = (struct wnd_ctx){ .ctx = 1, .slots = 0, .ctx_len = 1 };
	wnd_put_ctx(b, &cx);
	wt_ok(rejects(wnd_get_ctx(b, n, &cx2, why, sizeof(why)), "CTX: slots 0"),
	      "CTX with no slot: %s", why);
	cx = (struct wnd_ctx){ .ctx = 1, .slots = 1, .ctx_len = 0 };
	wnd_put_ctx(b, &cx);
	wt_ok(rejects(wnd_get_ctx(b, n, &cx2, why, sizeof(why)), "CTX: ctx_len 0"),
	      "CTX with no position: %s", why);

	strcpy(st.host, "10.9.0.1");
	n = wnd_put_start(b, &st);
	wt_ok(!wnd_get_start(b, n, &st2, why, sizeof(why)) && !strcmp(st2.host, "10.9.0.1") &&
	      st2.port == 7470 && st2.slots == 8, "START round-trips");
	memset(b + 16, 'a', WND_HOST_MAX);
	wt_ok(rejects(wnd_get_start(b, n, &st2, why, sizeof(why)), "START: host is not terminated"),
	      "START with an unterminated host: %s", why);
	memset(b + 16, 0, WND_HOST_MAX);
	wt_ok(rejects(wnd_get_start(b, n, &st2, why, sizeof(why)), "START: host is empty"),
	      "START with no host: %s", why);
	strcpy((char *)b + 16, "a;rm -rf");
	wt_ok(rejects(wnd_get_start(b, n, &st2, why, sizeof(why)), "START: host has a byte 0x3b"),
	      "START with a host not an address: %s", why);
	st.slots = WAFER_LINK_MAX_SLOTS + 1;
	wnd_put_start(b, &st);
	wt_ok(rejects(wnd_get_start(b, n, &st2, why, sizeof(why)), "START: slots 257"),
	      "START with too many slots: %s", why);
	st.slots = 8;
	st.slot_bytes = WND_JOB_HDR;
	wnd_put_start(b, &st);
	wt_ok(rejects(wnd_get_start(b, n, &st2, why, sizeof(why)), "START: slot_bytes 64"),
	      "START with slots too small for a job's header: %s", why);
	st.slot_bytes = 8192;
	st.port = 70000;
	wnd_put_start(b, &st);
	wt_ok(rejects(wnd_get_start(b, n, &st2, why, sizeof(why)), "START: port 70000"),
	      "START with a port out of range: %s", why);
	st.port = 1;
	st.timeout_ms = 0;
	wnd_put_start(b, &st);
	wt_ok(rejects(wnd_get_start(b, n, &st2, why, sizeof(why)), "START: timeout_ms 0"),
	      "START with no timeout: %s", why);

	n = wnd_put_error(b, -ENOSPC, "full");
	wt_ok(!wnd_get_error(b, n, &e, text, sizeof(text), why, sizeof(why)) && e == -ENOSPC &&
	      !strcmp(text, "full"), "ERROR round-trips");
	wnd_put_error(b, 5, "x");
	wt_ok(rejects(wnd_get_error(b, 5, &e, text, sizeof(text), why, sizeof(why)),
		      "ERROR: errno 5"), "ERROR with a positive errno: %s", why);
	n = wnd_put_error(b, -EIO, "bad\n");
	wt_ok(rejects(wnd_get_error(b, n, &e, text, sizeof(text), why, sizeof(why)),
		      "text byte 3 is 0x0a"), "ERROR with a control byte: %s", why);
	memset(b, 'a', sizeof(b));
	wt_ok(rejects(wnd_get_text(b, WND_TEXT_MAX + 1, text, sizeof(text), why, sizeof(why)),
		      "text of 201 bytes"), "text too long: %s", why);
}

static void test_jobs(void)
{
	unsigned char slot[WND_JOB_HDR + 64];
	struct wnd_ctx_limits ctx[WND_MAX_CTX] = { [0] = { .slots = 2, .ctx_len = 100 } };
	struct wnd_job j = { .ctx = 1, .slot = 1, .start_pos = 10, .n_tokens = 4, .top_k = 1,
			     .out_len = 32, .floor_ns = 7, .payload = 16 }, j2;

	wnd_put_job(slot, &j);
	wt_ok(!wnd_get_job(slot, WND_JOB_HDR + 16, &j2, why, sizeof(why)) && j2.start_pos == 10 &&
	      j2.floor_ns == 7 && j2.out_len == 32, "a job's header round-trips");
	wt_ok(!wnd_check_job(&j2, ctx, 128, 4, 4096, why, sizeof(why)), "a good job passes");
	wt_ok(rejects(wnd_get_job(slot, WND_JOB_HDR + 17, &j2, why, sizeof(why)),
		      "payload 16 bytes, the record carries 17"), "a payload longer: %s", why);
	wt_ok(rejects(wnd_get_job(slot, 10, &j2, why, sizeof(why)), "record of 10 bytes"),
	      "a record shorter than a header: %s", why);
	slot[0] ^= 1;
	wt_ok(rejects(wnd_get_job(slot, WND_JOB_HDR + 16, &j2, why, sizeof(why)), "bad magic"),
	      "a record of garbage: %s", why);
	j.flags = WAFER_JOB_TIMES;
	wnd_put_job(slot, &j);
	wt_ok(rejects(wnd_get_job(slot, WND_JOB_HDR + 16, &j2, why, sizeof(why)),
		      "unknown flags 0x10"), "a job with flags a chain does not carry: %s", why);
	j.flags = 0;
	j.status = 3;
	wnd_put_job(slot, &j);
	wt_ok(rejects(wnd_get_job(slot, WND_JOB_HDR + 16, &j2, why, sizeof(why)), "status 3"),
	      "a positive status: %s", why);
	j.status = -EIO;
	wnd_put_job(slot, &j);
	wt_ok(rejects(wnd_get_job(slot, WND_JOB_HDR + 16, &j2, why, sizeof(why)),
		      "a failed job (status -5) with 16 bytes"), "a failed job with data: %s", why);
	j.status = 0;

#define CHECK(field, val, pattern, what)                                           \
	do {                                                                       \
		struct wnd_job k = j;                                              \
		k.field = val;                                                     \
		wt_ok(rejects(wnd_check_job(&k, ctx, 128, 4, 4096, why, sizeof(why)), \
			      pattern), what ": %s", why);                         \
	} while (0)
	CHECK(ctx, 2, "ctx 2 is not a context", "a context the node does not have");
	CHECK(ctx, 0, "ctx 0 is not a context", "context 0");
	CHECK(ctx, 1000, "ctx 1000 is not a context", "a context beyond the table");
	CHECK(slot, 2, "slot 2 out of range (0..1)", "a slot out of range");
	CHECK(n_tokens, 0, "n_tokens 0 out of range", "no token");
	CHECK(n_tokens, 129, "n_tokens 129 out of range", "too many tokens");
	CHECK(start_pos, 98, "positions 98..101 beyond the context's 100", "positions beyond");
	CHECK(start_pos, 0xfffffffeu, "beyond the context's 100", "positions that wrap");
	CHECK(payload, 20, "payload 20 bytes (4 tokens take 16)", "a payload not the part's");
	CHECK(out_len, 5000, "out_len 5000 beyond the slot's 4096", "results beyond the slot");
	CHECK(top_k, WAFER_MAX_TOPK + 1, "top_k 33", "top_k too big");
#undef CHECK
}

static void test_chains(void)
{
	struct wafer_chain_member m[8];
	int n;

	n = wafer_chain_parse("10.9.0.1:0,10.9.0.2:7471:1-2,h:0+3", m, 8);
	wt_ok(n == 5 && !strcmp(m[0].host, "10.9.0.1") && !m[0].port && !m[0].device &&
	      !strcmp(m[1].host, "10.9.0.2") && m[1].port == 7471 && m[1].device == 1 &&
	      m[2].device == 2 && m[2].port == 7471 && !strcmp(m[3].host, "h") &&
	      m[3].device == 0 && m[4].device == 3, "a chain of three nodes, five members (%d)", n);
	wt_ok(wafer_chain_parse("", m, 8) == -EINVAL, "an empty chain: %s", wafer_last_error());
	wt_ok(wafer_chain_parse("host", m, 8) == -EINVAL &&
	      strstr(wafer_last_error(), "'host' is not HOST[:PORT]:DEVICES"),
	      "no devices: %s", wafer_last_error());
	wt_ok(wafer_chain_parse("h:0:1", m, 8) == -EINVAL &&
	      strstr(wafer_last_error(), "bad port"), "port 0: %s", wafer_last_error());
	wt_ok(wafer_chain_parse("h:1:3-1", m, 8) == -EINVAL &&
	      strstr(wafer_last_error(), "bad devices"), "a range backwards: %s",
	      wafer_last_error());
	wt_ok(wafer_chain_parse("h:0+", m, 8) == -EINVAL, "a list ending in '+': %s",
	      wafer_last_error());
	wt_ok(wafer_chain_parse("h:0-8", m, 8) == -EINVAL &&
	      strstr(wafer_last_error(), "8 members at most"), "too many members: %s",
	      wafer_last_error());
	wt_ok(wafer_chain_parse("h:0,", m, 8) == -EINVAL, "a trailing comma: %s",
	      wafer_last_error());
}

static int load(const char *json, struct wafer_chain_member *m, unsigned int max)
{
	char path[] = "/tmp/wafer-chain-XXXXXX.json";
	int fd = mkstemps(path, 5), r;
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (!f)
		return -999;
	fputs(json, f);
	fclose(f);
	r = wafer_chain_load(path, m, max);
	unlink(path);
	return r;
}

static void test_chain_files(void)
{
	struct wafer_chain_member m[8];
	int n;

	n = load("{\"version\": 1, \"members\": [{\"host\": \"10.9.0.1\", \"port\": 7471, "
		 "\"devices\": 0}, {\"host\": \"h\", \"devices\": \"1-2\"}]}", m, 8);
	wt_ok(n == 3 && !strcmp(m[0].host, "10.9.0.1") && m[0].port == 7471 && !m[0].device &&
	      !strcmp(m[2].host, "h") && !m[2].port && m[2].device == 2,
	      "a JSON chain file (%d members)", n);
#define REFUSED(json, pattern, what)                                                  \
	wt_ok(load(json, m, 8) == -EINVAL && strstr(wafer_last_error(), pattern), what ": %s", \
	      wafer_last_error())
	REFUSED("{", "not a JSON file", "a file not JSON");
	REFUSED("{\"version\": 2, \"members\": []}", "\"version\" is not 1", "another version");
	REFUSED("{\"version\": 1, \"members\": []}", "\"members\" is not a non-empty array",
		"no members");
	REFUSED("{\"version\": 1, \"members\": [3]}", "members[0] is not an object",
		"a member not an object");
	REFUSED("{\"version\": 1, \"members\": [{\"host\": \"a:b\", \"devices\": 0}]}",
		"members[0].host is not an address", "a host with a colon");
	REFUSED("{\"version\": 1, \"members\": [{\"host\": \"a\", \"port\": 0, \"devices\": 0}]}",
		"members[0].port is not 1..65535", "port 0");
	REFUSED("{\"version\": 1, \"members\": [{\"host\": \"a\"}]}",
		"members[0].devices is missing", "no devices");
	REFUSED("{\"version\": 1, \"members\": [{\"host\": \"a\", \"devices\": \"0-9\"}]}",
		"members[0].devices '0-9' is not a list", "too many members");
#undef REFUSED
}

/* HEALTH (no payload) and its answer HEALTHY: state (0..3), jobs run. */
static void test_health(void)
{
	struct wnd_healthy hl = { .state = 2, .jobs = 0x100000002ull }, hl2;
	unsigned char b[WND_HDR + 16];
	struct wnd_hdr h;
	size_t n;

	wnd_put_hdr(b, WND_HEALTH, 0);
	wt_ok(!wnd_parse_hdr(b, &h, why, sizeof(why)) && h.type == WND_HEALTH && !h.len,
	      "a HEALTH header round-trips");
	hdr_bytes(b, WND_MAGIC, WND_VERSION, WND_HEALTH, 4, 0);
	wt_ok(rejects(wnd_parse_hdr(b, &h, why, sizeof(why)), "HEALTH: length 4 (must be 0)"),
	      "a HEALTH with a payload is refused: %s", why);
	n = wnd_put_healthy(b, &hl);
	wt_ok(n == 12 && n == (size_t)wnd_payload_len(WND_HEALTHY) &&
	      !wnd_get_healthy(b, n, &hl2, why, sizeof(why)) && hl2.state == 2 &&
	      hl2.jobs == 0x100000002ull, "HEALTHY round-trips (state, 64-bit jobs)");
	hdr_bytes(b, WND_MAGIC, WND_VERSION, WND_HEALTHY, 8, 0);
	wt_ok(rejects(wnd_parse_hdr(b, &h, why, sizeof(why)), "HEALTHY: length 8 (must be 12)"),
	      "a short HEALTHY header is refused: %s", why);
	wt_ok(rejects(wnd_get_healthy(b, 11, &hl2, why, sizeof(why)), "HEALTHY: 11 bytes"),
	      "a short HEALTHY payload is refused: %s", why);
	hl.state = 4;
	wnd_put_healthy(b, &hl);
	wt_ok(rejects(wnd_get_healthy(b, 12, &hl2, why, sizeof(why)),
		      "HEALTHY: state 4 out of range (0..3)"), "an unknown state is refused: %s",
	      why);
}

int main(void)
{
	test_header();
	test_health();
	test_payloads();
	test_jobs();
	test_chains();
	test_chain_files();
	return wt_done();
}
