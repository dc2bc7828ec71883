/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wafer device address space: what the firmware's "DMA" reaches.
 *
 * Like an IOMMU, the driver maps a kernel mapping (ring memory, a model blob
 * copy, a vmapped GEM buffer) into a window and hands the firmware a u64
 * device address: window id in bits 63..40, byte offset below.  The
 * firmware reaches host memory only through wafer_dma_ops, which checks
 * every access against the window it falls in.
 */
#ifndef WAFER_DMA_H
#define WAFER_DMA_H

#include <linux/types.h>
#include <linux/xarray.h>

#include "wfs_device.h"

#define WAFER_DMA_OFFSET_BITS	40

/* Window flags */
#define WAFER_DMA_WRITE		BIT(0)	/* the device may write */
#define WAFER_DMA_MAPPABLE	BIT(1)	/* the device may map it (blobs) */

/**
 * struct wafer_dma - one device's address space
 * @windows: window id -> struct wafer_dma_window; ids allocated from 1
 */
struct wafer_dma {
	struct xarray windows;
};

void wafer_dma_init(struct wafer_dma *dma);
void wafer_dma_fini(struct wafer_dma *dma);
int wafer_dma_map(struct wafer_dma *dma, void *vaddr, u64 size, u32 flags,
		  u64 *addr);
void wafer_dma_unmap(struct wafer_dma *dma, u64 addr);

extern const struct wfs_dma_ops wafer_dma_ops;

#endif /* WAFER_DMA_H */
