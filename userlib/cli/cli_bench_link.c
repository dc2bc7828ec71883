// SPDX-License-Identifier: MIT
/*
 * wafer bench --link: the host-to-host link (userlib/wafer_link.h) measured
 * through libwafer's own transport, as perftest measures a verbs link:
 *
 *   latency    one record at a time: RDMA WRITE WITH IMM of N bytes, the
 *              receiver's completion and check, its credit back (an RDMA
 *              SEND): a round trip, reported halved as ib_write_lat
 *              reports its ping-pong (minimum and typical, i.e. median)
 *   bandwidth  records of N bytes with every slot in flight, until the
 *              last credit is back: MB/s (10^6 bytes, as ib_write_bw)
 *
 *   wafer bench --link-serve ADDR[:PORT]   a receiver: releases each record
 *                                          as it arrives; serves links one
 *                                          after another (--count N links)
 *   wafer bench --link HOST[:PORT]         the sender: the table
 *   wafer bench --link-loopback ADDR       both in one process (a thread
 *                                          serves), over ADDR's RDMA device
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "wafer.h"
#include "wafer_link.h"

#define LINK_PORT "7480"
#define LINK_SLOTS 16
#define LINK_SLOT_BYTES (1u << 20)

struct link_args {
	const char *serve, *host, *loopback;
	char addr[128], port[16];
	unsigned int iters, links;
	size_t sizes[32];
	unsigned int nsizes;
	int timeout_ms;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: wafer bench --link HOST[:PORT] [options]\n"
		"       wafer bench --link-serve ADDR[:PORT] [--count N]\n"
		"       wafer bench --link-loopback ADDR [options]\n"
		"  the host-to-host link over RDMA verbs: latency (half a record's round\n"
		"  trip with its credit, as ib_write_lat) and bandwidth (every slot in\n"
		"  flight, as ib_write_bw) by message size; port default " LINK_PORT "\n"
		"  --sizes A,B,...   message bytes (default 2,64,1024,4096,65536,1048576)\n"
		"  --iters N         records per size (default 200)\n"
		"  --count N         --link-serve: links to serve, then exit (default 0: forever)\n"
		"  --timeout MS      bound on every wait (default 10000)\n");
}

static void split_host(const char *s, char *addr, size_t n, char *port, size_t pn)
{
	const char *c = strrchr(s, ':');

	snprintf(addr, n, "%.*s", c ? (int)(c - s) : (int)strlen(s), s);
	snprintf(port, pn, "%s", c ? c + 1 : LINK_PORT);
}

static int parse_sizes(struct link_args *a, char *s)
{
	char *tok, *save = NULL;

	a->nsizes = 0;
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		unsigned long v = strtoul(tok, &end, 10);

		if (*end || v < 1 || v > LINK_SLOT_BYTES || a->nsizes == 32) {
			fprintf(stderr, "wafer bench: --sizes: '%s' is not 1..%u bytes (32 sizes "
				"at most)\n", tok, LINK_SLOT_BYTES);
			return -1;
		}
		a->sizes[a->nsizes++] = v;
	}
	return a->nsizes ? 0 : -1;
}

static int parse(struct link_args *a, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "link", required_argument, NULL, 'l' },
		{ "link-serve", required_argument, NULL, 's' },
		{ "link-loopback", required_argument, NULL, 'L' },
		{ "sizes", required_argument, NULL, 'z' },
		{ "iters", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'c' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const size_t dflt[] = { 2, 64, 1024, 4096, 65536, 1048576 };
	int opt;

	memset(a, 0, sizeof(*a));
	a->iters = 200;
	a->timeout_ms = 10000;
	memcpy(a->sizes, dflt, sizeof(dflt));
	a->nsizes = sizeof(dflt) / sizeof(dflt[0]);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		/* wafer bench --link --help */
		if (optarg && !strcmp(optarg, "--help"))
			opt = 'h';
		switch (opt) {
		case 'l': a->host = optarg; break;
		case 's': a->serve = optarg; break;
		case 'L': a->loopback = optarg; break;
		case 'z': if (parse_sizes(a, optarg)) return -1; break;
		case 'i': a->iters = (unsigned int)atoi(optarg); break;
		case 'c': a->links = (unsigned int)atoi(optarg); break;
		case 't': a->timeout_ms = atoi(optarg); break;
		case 'h': usage(stdout); return 1;
		default: usage(stderr); return -1;
		}
	}
	if (!!a->host + !!a->serve + !!a->loopback != 1 || a->iters < 1 || a->timeout_ms < 1) {
		usage(stderr);
		return -1;
	}
	split_host(a->host ? a->host : a->serve ? a->serve : a->loopback, a->addr,
		   sizeof(a->addr), a->port, sizeof(a->port));
	return 0;
}

/* A receiver's link: every record released as it arrives, until it ends. */
static void serve_one(struct wafer_link *l)
{
	unsigned int slot;
	size_t len;

	while (!wafer_link_recv(l, &slot, &len))
		if (wafer_link_release(l, slot, 0))
			break;
	wafer_link_close(l);
}

struct server {
	struct wafer_link_listener *ls;
	unsigned int links;
	int ret;
};

static void *serve_links(void *arg)
{
	struct server *s = arg;
	unsigned int n;

	for (n = 0; !s->links || n < s->links; n++) {
		struct wafer_link *l;

		if (wafer_link_accept(s->ls, &l)) {
			/* No sender yet: keep listening; a bad one is refused. */
			if (!strstr(wafer_last_error(), "no peer connected"))
				fprintf(stderr, "wafer bench: %s\n", wafer_last_error());
			n--;
			continue;
		}
		serve_one(l);
	}
	return NULL;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* One size: latency then bandwidth. */
static int measure(struct wafer_link *l, size_t size, unsigned int iters, uint64_t *lat,
		   double *min_us, double *typ_us, double *mbs)
{
	unsigned int i, slot;
	uint64_t t0;

	for (i = 0; i < iters; i++) {
		t0 = now_ns();
		if (wafer_link_acquire(l, &slot) || wafer_link_send(l, size, 0) ||
		    wafer_link_flush(l))
			return -1;
		lat[i] = now_ns() - t0;
	}
	qsort(lat, iters, sizeof(*lat), cmp_u64);
	*min_us = (double)lat[0] / 2e3;
	*typ_us = (double)lat[iters / 2] / 2e3;
	t0 = now_ns();
	for (i = 0; i < iters; i++)
		if (wafer_link_acquire(l, &slot) || wafer_link_send(l, size, 0))
			return -1;
	if (wafer_link_flush(l))
		return -1;
	*mbs = (double)size * iters / ((double)(now_ns() - t0) / 1e9) / 1e6;
	return 0;
}

static int run_sender(const struct link_args *a)
{
	struct wafer_link_opts o = { .drm_fd = -1, .timeout_ms = a->timeout_ms };
	uint64_t *lat = calloc(a->iters, sizeof(*lat));
	struct wafer_link *l;
	unsigned int i;
	int ret = 0;

	if (!lat)
		return 1;
	if (wafer_link_connect(a->addr, a->port, &o, &l)) {
		fprintf(stderr, "wafer bench: %s\n", wafer_last_error());
		free(lat);
		return 1;
	}
	printf("link to %s: RDMA verbs, %u slots of %zu bytes, %u records per size\n",
	       wafer_link_peer(l), wafer_link_slots(l), wafer_link_slot_bytes(l), a->iters);
	printf("%10s %12s %12s %12s\n", "bytes", "lat_min_us", "lat_typ_us", "bw_MB/s");
	for (i = 0; i < a->nsizes; i++) {
		double mn, typ, bw;

		if (a->sizes[i] > wafer_link_slot_bytes(l)) {
			printf("%10zu  (larger than the receiver's slots)\n", a->sizes[i]);
			continue;
		}
		if (measure(l, a->sizes[i], a->iters, lat, &mn, &typ, &bw)) {
			fprintf(stderr, "wafer bench: %s\n", wafer_last_error());
			ret = 1;
			break;
		}
		printf("%10zu %12.2f %12.2f %12.2f\n", a->sizes[i], mn, typ, bw);
		fflush(stdout);
	}
	wafer_link_close(l);
	free(lat);
	return ret;
}

int cli_bench_link(int argc, char **argv)
{
	struct wafer_link_opts o = { .slots = LINK_SLOTS, .slot_bytes = LINK_SLOT_BYTES,
				     .drm_fd = -1 };
	struct server s = { 0 };
	struct link_args a;
	pthread_t t;
	int ret = parse(&a, argc, argv);

	if (ret)
		return ret < 0 ? 2 : 0;
	if (a.host)
		return run_sender(&a);
	o.timeout_ms = a.timeout_ms;
	if (wafer_link_listen(a.addr, a.port, &o, &s.ls)) {
		fprintf(stderr, "wafer bench: %s\n", wafer_last_error());
		return 1;
	}
	if (a.serve) {
		printf("serving links on %s:%d\n", a.addr, wafer_link_listener_port(s.ls));
		fflush(stdout);
		s.links = a.links;
		serve_links(&s);
		wafer_link_listener_close(s.ls);
		return 0;
	}
	/* Loopback: a thread serves one link, this one measures it. */
	s.links = 1;
	if (pthread_create(&t, NULL, serve_links, &s)) {
		wafer_link_listener_close(s.ls);
		return 1;
	}
	snprintf(a.port, sizeof(a.port), "%d", wafer_link_listener_port(s.ls));
	ret = run_sender(&a);
	if (ret)
		pthread_cancel(t);
	pthread_join(t, NULL);
	wafer_link_listener_close(s.ls);
	return ret;
}
