/* SPDX-License-Identifier: MIT */
/*
 * A link's ring of slots in host memory the device can use in place: one
 * memfd, each slot of it a dma-buf made by udmabuf and PRIME-imported into
 * the device, with a syncobj per slot.  No network code.
 */
#ifndef WAFER_LINK_SLOTS_H
#define WAFER_LINK_SLOTS_H

#include <stddef.h>
#include <stdint.h>

#include "wafer_link.h"

struct wlk_slots {
	unsigned int n;
	size_t bytes;			/* per slot, a page multiple */
	int memfd;
	unsigned char *base;		/* n * bytes, mapped shared */
	int drm_fd;			/* -1: host memory only */
	uint32_t bo[WAFER_LINK_MAX_SLOTS];	/* GEM handles (PRIME imports) */
	uint32_t syncobj[WAFER_LINK_MAX_SLOTS];
};

/*
 * N slots of BYTES (rounded up to a page); with DRM_FD >= 0 each is made a
 * dma-buf (/dev/udmabuf) and imported into the device, and has a syncobj
 * when SYNCOBJS.  0 or -errno with wafer_last_error() saying which step.
 */
int wlk_slots_alloc(struct wlk_slots *s, unsigned int n, size_t bytes, int drm_fd,
		    int syncobjs);
void wlk_slots_free(struct wlk_slots *s);
/* Waits for SYNCOBJ on S's device to signal, up to TIMEOUT_MS: 0 or -ETIME. */
int wlk_syncobj_wait(const struct wlk_slots *s, uint32_t syncobj, int timeout_ms);

#endif /* WAFER_LINK_SLOTS_H */
