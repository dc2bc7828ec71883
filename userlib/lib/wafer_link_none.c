// SPDX-License-Identifier: MIT
/*
 * wafer_link.h without rdma-core: libwafer was built where pkg-config found
 * no libibverbs or librdmacm (or with RDMA=0), so every link call fails
 * with a message that says so.  The rest of libwafer is unaffected.
 */
#ifndef WAFER_HAVE_RDMA
#include <errno.h>

#include "wafer.h"
#include "wafer_internal.h"
#include "wafer_link.h"

static int no_rdma(void)
{
	return wafer_set_error(-EPROTONOSUPPORT, "link: libwafer was built without RDMA "
			       "(rdma-core's libibverbs and librdmacm were not found by pkg-config)");
}

int wafer_link_listen(const char *addr, const char *port, const struct wafer_link_opts *opts,
		      struct wafer_link_listener **out)
{
	(void)addr, (void)port, (void)opts;
	*out = NULL;
	return no_rdma();
}

int wafer_link_listener_port(const struct wafer_link_listener *l)
{
	(void)l;
	return no_rdma();
}

int wafer_link_accept(struct wafer_link_listener *l, struct wafer_link **out)
{
	(void)l;
	*out = NULL;
	return no_rdma();
}

void wafer_link_listener_close(struct wafer_link_listener *l)
{
	(void)l;
}

int wafer_link_connect(const char *host, const char *port, const struct wafer_link_opts *opts,
		       struct wafer_link **out)
{
	(void)host, (void)port, (void)opts;
	*out = NULL;
	return no_rdma();
}

void wafer_link_close(struct wafer_link *l)
{
	(void)l;
}

const char *wafer_link_peer(const struct wafer_link *l)
{
	(void)l;
	return "";
}

unsigned int wafer_link_slots(const struct wafer_link *l)
{
	(void)l;
	return 0;
}

size_t wafer_link_slot_bytes(const struct wafer_link *l)
{
	(void)l;
	return 0;
}

void *wafer_link_slot(struct wafer_link *l, unsigned int slot)
{
	(void)l, (void)slot;
	return NULL;
}

uint32_t wafer_link_slot_bo(const struct wafer_link *l, unsigned int slot)
{
	(void)l, (void)slot;
	return 0;
}

const char *wafer_link_slot_memory(const struct wafer_link *l)
{
	(void)l;
	return "slots: none (libwafer was built without RDMA)";
}

uint32_t wafer_link_slot_syncobj(const struct wafer_link *l, unsigned int slot)
{
	(void)l, (void)slot;
	return 0;
}

int wafer_link_acquire(struct wafer_link *l, unsigned int *slot)
{
	(void)l, (void)slot;
	return no_rdma();
}

int wafer_link_send(struct wafer_link *l, size_t len, uint32_t wait_syncobj)
{
	(void)l, (void)len, (void)wait_syncobj;
	return no_rdma();
}

int wafer_link_flush(struct wafer_link *l)
{
	(void)l;
	return no_rdma();
}

int wafer_link_recv(struct wafer_link *l, unsigned int *slot, size_t *len)
{
	(void)l, (void)slot, (void)len;
	return no_rdma();
}

int wafer_link_poll(struct wafer_link *l, int wait_ms)
{
	(void)l, (void)wait_ms;
	return no_rdma();
}

int wafer_link_release(struct wafer_link *l, unsigned int slot, uint32_t done_syncobj)
{
	(void)l, (void)slot, (void)done_syncobj;
	return no_rdma();
}
#else
/* ISO C forbids an empty translation unit. */
typedef int wafer_link_none_unused;
#endif
