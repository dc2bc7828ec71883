/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wafer device address space: what the firmware's "DMA" reaches.
 *
 * Like an IOMMU, the driver maps a kernel mapping (ring memory, a model blob
 * copy, a vmapped GEM buffer) into a window and hands the firmware a u64
 * device address: window id in bits 63..40, byte offset below.  The
 * firmware reaches host memory only through wdrv_dma_ops, which checks
 * every access against the window it falls in.
 */
#ifndef WDRV_DMA_H
#define WDRV_DMA_H

#include <linux/types.h>
#include <linux/xarray.h>

#include "wfs_device.h"

#define WDRV_DMA_OFFSET_BITS	40

/* Window flags */
#define WDRV_DMA_WRITE		BIT(0)	/* the device may write */
#define WDRV_DMA_MAPPABLE	BIT(1)	/* the device may map it (blobs) */

/**
 * struct wdrv_dma - one device's address space
 * @windows: window id -> struct wdrv_dma_window; ids allocated from 1
 */
struct wdrv_dma {
	struct xarray windows;
};

void wdrv_dma_init(struct wdrv_dma *dma);
void wdrv_dma_fini(struct wdrv_dma *dma);
int wdrv_dma_map(struct wdrv_dma *dma, void *vaddr, u64 size, u32 flags,
		 gfp_t gfp, u64 *addr);
void wdrv_dma_unmap(struct wdrv_dma *dma, u64 addr);

extern const struct wfs_dma_ops wdrv_dma_ops;

#endif /* WDRV_DMA_H */
