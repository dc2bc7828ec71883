/* SPDX-License-Identifier: MIT */
/*
 * wafer_link.h - libwafer's host-to-host link: a one-way stream of
 * activation records from a sender's job to a receiver's job on another
 * host, over RDMA verbs (rdma_cm, RC queue pairs).
 *
 * The receiver owns a ring of slots, one per job in flight; the sender
 * writes a record into the receiver's next slot with an RDMA write with
 * immediate data (the slot and a sequence number) once the producing job's
 * fence has signalled; the receiver's completion signals the slot's
 * syncobj, which the next job waits on; the slot goes back to the sender (a
 * credit) when the consuming job completes.  Slots on both ends are the
 * local device's BOs where the NIC registers dma-bufs, else memfd pages
 * made dma-bufs by udmabuf and PRIME-imported into it (when a DRM fd is
 * given), so jobs read and write them in place.
 * docs/SCALE-OUT.md has the wire format and the failure semantics.
 *
 * Every call that waits is bounded by the link's timeout: a peer that dies,
 * hangs or sends what the wire format does not allow fails the call with a
 * negative errno and wafer_last_error() naming the peer and what was wrong;
 * the link is then closed (every later call fails the same way).
 *
 * A link is used by one thread at a time.
 *
 * libwafer built without rdma-core (pkg-config found no libibverbs or
 * librdmacm) has these functions too: they fail with -EPROTONOSUPPORT.
 */
#ifndef WAFER_LINK_H
#define WAFER_LINK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The link's wire version: a peer with another is refused. */
#define WAFER_LINK_VERSION 1
/* Slots per ring, at most (the immediate data carries the slot in 8 bits). */
#define WAFER_LINK_MAX_SLOTS 256
/* Bytes per slot, at most. */
#define WAFER_LINK_MAX_SLOT_BYTES (64u << 20)

struct wafer_link;
struct wafer_link_listener;

/**
 * struct wafer_link_opts - how a link is set up.
 * @slots:      receive slots, one per job in flight (1..WAFER_LINK_MAX_SLOTS;
 *              the receiver's count is the link's, a sender's is ignored)
 * @slot_bytes: bytes per slot, rounded up to a page (receiver's; a sender's
 *              is ignored)
 * @timeout_ms: bound on every wait: connecting, the hello, a credit, a
 *              record, a fence (0: 10000)
 * @drm_fd:     the local device: slots are PRIME-imported into it and
 *              syncobjs are made and signalled on it; -1 for none (slots in
 *              host memory only, e.g. `wafer bench --link`)
 */
struct wafer_link_opts {
	unsigned int slots;
	size_t slot_bytes;
	int timeout_ms;
	int drm_fd;
};

/* Listens on ADDR (an address of an RDMA device's netdev) and PORT. */
int wafer_link_listen(const char *addr, const char *port,
		      const struct wafer_link_opts *opts,
		      struct wafer_link_listener **out);
/* The port a listener is bound to (useful with port "0"). */
int wafer_link_listener_port(const struct wafer_link_listener *l);
/*
 * Accepts one sender, exchanges hellos, returns the receiving end.  A peer
 * that fails the hello (another version, garbage, silence until the
 * timeout) is refused and closed: -EPROTO (or -ETIMEDOUT) with the peer
 * named; the listener stays usable.
 */
int wafer_link_accept(struct wafer_link_listener *l, struct wafer_link **out);
void wafer_link_listener_close(struct wafer_link_listener *l);

/* Connects to a receiver at HOST:PORT: the sending end. */
int wafer_link_connect(const char *host, const char *port,
		       const struct wafer_link_opts *opts, struct wafer_link **out);
/* Closes either end (tells the peer when it still can); NULL is allowed. */
void wafer_link_close(struct wafer_link *l);

/* "ADDR:PORT" of the peer. */
const char *wafer_link_peer(const struct wafer_link *l);
unsigned int wafer_link_slots(const struct wafer_link *l);
size_t wafer_link_slot_bytes(const struct wafer_link *l);
/* The CPU's view of local slot @slot. */
void *wafer_link_slot(struct wafer_link *l, unsigned int slot);
/* Local slot @slot as a GEM handle on drm_fd (0 without a device). */
uint32_t wafer_link_slot_bo(const struct wafer_link *l, unsigned int slot);
/*
 * Which memory the slots are and why, a line: "slots: the device's BOs,
 * registered as dma-bufs by mlx5_0", "slots: udmabuf import (rxe0 cannot
 * register a dma-buf: Operation not supported)", "slots: host memory (no
 * device)".  The NIC registers the device's own BOs where it can register
 * a dma-buf; else the slots are memfd pages udmabuf shares with the device.
 */
const char *wafer_link_slot_memory(const struct wafer_link *l);
/*
 * Receiver: the syncobj on drm_fd that a record's arrival in @slot
 * signals (reset when the slot is released); 0 without a device.
 */
uint32_t wafer_link_slot_syncobj(const struct wafer_link *l, unsigned int slot);

/*
 * Sender: waits for a credit and returns in *slot the local slot the next
 * record is written to (the producing job's output BO).
 */
int wafer_link_acquire(struct wafer_link *l, unsigned int *slot);
/*
 * Sender: once @wait_syncobj (on drm_fd; 0: none) has signalled, writes
 * @len bytes of the acquired slot into the receiver's slot of the same
 * index, with the slot and sequence number as immediate data.
 */
int wafer_link_send(struct wafer_link *l, size_t len, uint32_t wait_syncobj);
/* Sender: waits until the receiver has released every record sent. */
int wafer_link_flush(struct wafer_link *l);

/*
 * Receiver: waits for the next record; its slot and length into *slot and
 * *len, the slot's syncobj signalled.  Records arrive in sequence order.
 */
int wafer_link_recv(struct wafer_link *l, unsigned int *slot, size_t *len);
/*
 * Receiver: 1 when a record is there for wafer_link_recv(), else waits up
 * to @wait_ms for one: 1, 0 (none yet), or the link's error.
 */
int wafer_link_poll(struct wafer_link *l, int wait_ms);
/*
 * Receiver: once @done_syncobj (on drm_fd; 0: none) has signalled, gives
 * the oldest received slot (which must be @slot) back to the sender.
 */
int wafer_link_release(struct wafer_link *l, unsigned int slot, uint32_t done_syncobj);

/*
 * `wafer node` (docs/SCALE-OUT.md): a chain of devices over hosts.
 *
 * A node owns devices of its host and serves chain members on them: a
 * client connects (TCP, the control messages), names a device, loads a
 * layer range on it, makes contexts, and starts the member's links: jobs
 * arrive as records on its incoming link and leave on its outgoing one.
 */
#define WAFER_NODE_PORT 7470

/**
 * struct wafer_node_opts - a node
 * @addr: the address to listen on (its RDMA device's netdev's)
 * @port: the control port (0: WAFER_NODE_PORT)
 * @devices: the device indices it owns (accelN; in process: labels)
 * @n_devices: their count (1..64)
 * @inproc: devices in process (firmware-sim) instead of the kernel's
 * @timeout_ms: a peer that sends no hello, a link's waits (0: 10000)
 * @log: where the node says what happens (NULL: stderr)
 * @stop: the node returns once *@stop is set (NULL: never)
 */
struct wafer_node_opts {
	const char *addr;
	unsigned int port;
	const unsigned int *devices;
	unsigned int n_devices;
	int inproc;
	int timeout_ms;
	void *log;
	volatile int *stop;
};

/* Serves chain members until *opts->stop; 0, or -errno (it could not listen). */
int wafer_node_serve(const struct wafer_node_opts *opts);

/**
 * struct wafer_chain_member - one part of a chain
 * @host: the node's address
 * @port: its control port (0: WAFER_NODE_PORT)
 * @device: the node's device index
 */
struct wafer_chain_member {
	char host[64];
	unsigned int port;
	unsigned int device;
};

/*
 * Parses "HOST[:PORT]:DEVICES[,...]" (DEVICES a list as -d takes: 0, 0-3,
 * 0+2) into @m, at most @max; the count, or -EINVAL with the error said.
 */
int wafer_chain_parse(const char *spec, struct wafer_chain_member *m, unsigned int max);
/*
 * Reads a chain from a JSON file: {"version": 1, "members": [{"host":
 * "10.9.0.1", "port": 7471, "devices": "0-3"}, ...]} ("port" optional,
 * "devices" a number or a list as above); the count, or -EINVAL with the
 * field said.
 */
int wafer_chain_load(const char *path, struct wafer_chain_member *m, unsigned int max);

/*
 * Opens a chain of @n members as one device: models, contexts and jobs go
 * to the nodes; jobs' results come back from the last.  A model's layers
 * are split over the members in order: @split's @n_split counts (one per
 * member), or evenly when @n_split is 0.  @timeout_ms bounds the links'
 * and the control connections' waits (0: 10000).
 */
struct wafer_dev;
int wafer_open_chain(const struct wafer_chain_member *m, unsigned int n,
		     const unsigned int *split, unsigned int n_split, int timeout_ms,
		     struct wafer_dev **out);

#ifdef __cplusplus
}
#endif

#endif /* WAFER_LINK_H */
