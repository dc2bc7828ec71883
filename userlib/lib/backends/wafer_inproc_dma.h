/* SPDX-License-Identifier: MIT */
/*
 * wafer_inproc_dma.h - host memory a firmware-sim device in this process
 * may reach: device addresses are plain pointers, and every DMA access is
 * checked against the regions registered here, the way a kernel driver
 * checks them against pinned pages.
 *
 * Shared by the inproc backend's driver core (wafer_inproc_hw.c) and the
 * device tests' harness (tests/unit/device_harness.h, also built into the
 * fuzzer), so it depends on firmware-sim and libc only.
 */
#ifndef WAFER_INPROC_DMA_H
#define WAFER_INPROC_DMA_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "wfs_device.h"

#define WIP_MAX_REGIONS		256

/**
 * struct wip_region - host memory the device may access
 * @p: start
 * @len: bytes
 */
struct wip_region {
	uint8_t *p;
	uint64_t len;
};

/**
 * struct wip_dma - the registered regions
 * @lock: Protects @reg and @n_reg
 * @reg: registered regions
 * @n_reg: entries in @reg
 */
struct wip_dma {
	pthread_mutex_t lock;
	struct wip_region reg[WIP_MAX_REGIONS];
	int n_reg;
};

/* The device's DMA callbacks; their context is a struct wip_dma. */
extern const struct wfs_dma_ops wip_dma_ops;

void wip_dma_init(struct wip_dma *d);
void wip_dma_fini(struct wip_dma *d);

/* Make [p, p + len) reachable by the device (0, or -ENOMEM when full), or not any more. */
int wip_dma_add(struct wip_dma *d, void *p, uint64_t len);
void wip_dma_del(struct wip_dma *d, void *p);

/* Zeroed host memory aligned for the device (WFW_RING_ALIGN), or NULL. */
void *wip_dma_alloc(size_t bytes);

#endif /* WAFER_INPROC_DMA_H */
