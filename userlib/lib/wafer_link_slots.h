/* SPDX-License-Identifier: MIT */
/*
 * A link's ring of slots in memory the device uses in place, with a
 * syncobj per slot.  Two kinds of memory, chosen per link:
 *
 * - the device's own BOs, PRIME-exported and registered by the NIC as
 *   dma-bufs (ibv_reg_dmabuf_mr: mlx5, efa, irdma, bnxt_re);
 * - else memfd pages, each slot a dma-buf made by udmabuf and
 *   PRIME-imported into the device, registered by the NIC as host memory
 *   (Soft-RoCE, or a libibverbs without ibv_reg_dmabuf_mr).
 *
 * No network code: the NIC's registrations are struct wlk_slot_ops calls.
 */
#ifndef WAFER_LINK_SLOTS_H
#define WAFER_LINK_SLOTS_H

#include <stddef.h>
#include <stdint.h>

#include "wafer_link.h"

/*
 * What the slots need of the device and of the NIC.  The device's side is
 * wafer.ko's ioctls when NULL (tests put fakes there); the NIC's is the
 * link's verbs, NULL when nothing registers the slots (a sender's ring
 * before the link is up; tests).
 */
struct wlk_slot_ops {
	/* A device BO of BYTES: its GEM handle and a dma-buf fd of it (PRIME). */
	int (*bo_export)(int drm_fd, size_t bytes, uint32_t *handle, int *dmabuf);
	/* MEMFD's BYTES at OFF made a dma-buf and imported: its GEM handle. */
	int (*import_pages)(int drm_fd, int memfd, size_t off, size_t bytes, uint32_t *handle);
	void (*bo_close)(int drm_fd, uint32_t handle);

	const char *nic;	/* the RDMA device's name, for the message */
	void *ctx;
	/*
	 * Registers dma-buf FD (BYTES) as slot I's memory at IOVA: 0, or
	 * -errno; -EOPNOTSUPP, -EINVAL, -EPROTONOSUPPORT and -ENOSYS (the
	 * verbs lack the call) mean this NIC cannot, and the slots fall back.
	 */
	int (*reg_dmabuf)(void *ctx, unsigned int i, int fd, size_t bytes, uint64_t iova);
	/* Registers host memory ADDR (BYTES) as slot I's: 0 or -errno. */
	int (*reg_mem)(void *ctx, unsigned int i, void *addr, size_t bytes);
	/* Undoes slot I's registration (a fall-back after some succeeded). */
	void (*dereg)(void *ctx, unsigned int i);
};

enum wlk_slot_kind {
	WLK_SLOTS_HOST,		/* memfd pages, no device */
	WLK_SLOTS_UDMABUF,	/* memfd pages, udmabuf-imported into the device */
	WLK_SLOTS_DEVICE_BO,	/* the device's BOs, registered as dma-bufs */
};

struct wlk_slots {
	unsigned int n;
	size_t bytes;			/* per slot, a page multiple */
	int memfd;			/* -1 with the device's BOs */
	unsigned char *base;		/* n * bytes, mapped shared */
	int drm_fd;			/* -1: host memory only */
	enum wlk_slot_kind kind;
	char said[200];			/* which memory and why ("slots: ...") */
	struct wlk_slot_ops ops;	/* the device's side filled in */
	uint32_t bo[WAFER_LINK_MAX_SLOTS];	/* GEM handles (BOs or PRIME imports) */
	uint32_t syncobj[WAFER_LINK_MAX_SLOTS];
};

/*
 * N slots of BYTES (rounded up to a page).  With DRM_FD >= 0 they are the
 * device's BOs when OPS->reg_dmabuf registers them, else udmabuf imports
 * of memfd pages (each with a syncobj when SYNCOBJS); OPS->reg_mem
 * registers host memory.  S->said says which and why.  0 or -errno with
 * wafer_last_error() saying which step.
 */
int wlk_slots_alloc(struct wlk_slots *s, unsigned int n, size_t bytes, int drm_fd,
		    int syncobjs, const struct wlk_slot_ops *ops);
void wlk_slots_free(struct wlk_slots *s);
/* Waits for SYNCOBJ on S's device to signal, up to TIMEOUT_MS: 0 or -ETIME. */
int wlk_syncobj_wait(const struct wlk_slots *s, uint32_t syncobj, int timeout_ms);

#endif /* WAFER_LINK_SLOTS_H */
