// SPDX-License-Identifier: MIT
/*
 * Checked DMA over registered host regions for a firmware-sim device in
 * this process (see wafer_inproc_dma.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wafer_inproc_dma.h"

/* Returns the host pointer for [addr, addr + len), or NULL; caller holds lock. */
static uint8_t *lookup(struct wip_dma *d, uint64_t addr, uint64_t len)
{
	int i;

	for (i = 0; i < d->n_reg; i++) {
		uint64_t b = (uint64_t)(uintptr_t)d->reg[i].p;

		if (addr >= b && len <= d->reg[i].len && addr - b <= d->reg[i].len - len)
			return d->reg[i].p + (addr - b);
	}
	return NULL;
}

static int dma_read(void *ctx, u64 addr, void *dst, u64 len)
{
	struct wip_dma *d = ctx;
	uint8_t *p;

	pthread_mutex_lock(&d->lock);
	p = lookup(d, addr, len);
	if (p)
		memcpy(dst, p, len);
	pthread_mutex_unlock(&d->lock);
	return p ? 0 : -EFAULT;
}

static int dma_write(void *ctx, u64 addr, const void *src, u64 len)
{
	struct wip_dma *d = ctx;
	uint8_t *p;

	pthread_mutex_lock(&d->lock);
	p = lookup(d, addr, len);
	if (p)
		memcpy(p, src, len);
	pthread_mutex_unlock(&d->lock);
	return p ? 0 : -EFAULT;
}

/* LOAD_MODEL only: the blob's buffer stays registered until the load completes. */
static const void *dma_map(void *ctx, u64 addr, u64 len)
{
	struct wip_dma *d = ctx;
	uint8_t *p;

	pthread_mutex_lock(&d->lock);
	p = lookup(d, addr, len);
	pthread_mutex_unlock(&d->lock);
	return p;
}

const struct wfs_dma_ops wip_dma_ops = {
	.read = dma_read,
	.write = dma_write,
	.map = dma_map,
};

void wip_dma_init(struct wip_dma *d)
{
	memset(d, 0, sizeof(*d));
	pthread_mutex_init(&d->lock, NULL);
}

void wip_dma_fini(struct wip_dma *d)
{
	pthread_mutex_destroy(&d->lock);
}

int wip_dma_add(struct wip_dma *d, void *p, uint64_t len)
{
	int ret = 0;

	pthread_mutex_lock(&d->lock);
	if (d->n_reg < WIP_MAX_REGIONS)
		d->reg[d->n_reg++] = (struct wip_region){ .p = p, .len = len };
	else
		ret = -ENOMEM;
	pthread_mutex_unlock(&d->lock);
	return ret;
}

void wip_dma_del(struct wip_dma *d, void *p)
{
	int i;

	pthread_mutex_lock(&d->lock);
	for (i = 0; i < d->n_reg; i++) {
		if (d->reg[i].p == p) {
			d->reg[i] = d->reg[--d->n_reg];
			break;
		}
	}
	pthread_mutex_unlock(&d->lock);
}

void *wip_dma_alloc(size_t bytes)
{
	void *p = NULL;

	if (posix_memalign(&p, WFW_RING_ALIGN, bytes ? bytes : 1))
		return NULL;
	memset(p, 0, bytes);
	return p;
}
