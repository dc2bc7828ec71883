// SPDX-License-Identifier: GPL-2.0-only
/*
 * wafer device address space: windows over kernel mappings, and the DMA
 * callbacks firmware-sim calls to reach them.
 */
#include <linux/kref.h>
#include <linux/overflow.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "wdrv_dma.h"

/**
 * struct wdrv_dma_window - a mapped range
 * @ref: held by the mapping and by each access in progress
 * @vaddr: kernel address of the range
 * @size: bytes
 * @flags: WDRV_DMA_*
 * @rcu: frees the struct after concurrent lookups are done
 */
struct wdrv_dma_window {
	struct kref ref;
	void *vaddr;
	u64 size;
	u32 flags;
	struct rcu_head rcu;
};

#define WDRV_DMA_MAX_WINDOWS	((1u << 24) - 1)

void wdrv_dma_init(struct wdrv_dma *dma)
{
	xa_init_flags(&dma->windows, XA_FLAGS_ALLOC1);
}

void wdrv_dma_fini(struct wdrv_dma *dma)
{
	WARN_ON(!xa_empty(&dma->windows));
	xa_destroy(&dma->windows);
}

/**
 * wdrv_dma_map() - give the device access to a kernel mapping
 * @dma: address space
 * @vaddr: kernel address
 * @size: bytes (> 0)
 * @flags: WDRV_DMA_*
 * @gfp: for the window's allocations (GFP_NOWAIT where it may not sleep)
 * @addr: out: device address of @vaddr
 *
 * Return: 0, -ENOMEM, or -EBUSY when every window id is in use.
 */
int wdrv_dma_map(struct wdrv_dma *dma, void *vaddr, u64 size, u32 flags,
		 gfp_t gfp, u64 *addr)
{
	struct wdrv_dma_window *w;
	u32 id;
	int ret;

	if (!size || size > BIT_ULL(WDRV_DMA_OFFSET_BITS))
		return -EINVAL;
	w = kzalloc(sizeof(*w), gfp);
	if (!w)
		return -ENOMEM;
	kref_init(&w->ref);
	w->vaddr = vaddr;
	w->size = size;
	w->flags = flags;
	ret = xa_alloc(&dma->windows, &id, w,
		       XA_LIMIT(1, WDRV_DMA_MAX_WINDOWS), gfp);
	if (ret) {
		kfree(w);
		return ret == -EBUSY ? -EBUSY : ret;
	}
	*addr = (u64)id << WDRV_DMA_OFFSET_BITS;
	return 0;
}

static void window_release(struct kref *ref)
{
	struct wdrv_dma_window *w = container_of(ref, struct wdrv_dma_window, ref);

	kfree_rcu(w, rcu);
}

/**
 * wdrv_dma_unmap() - revoke a window
 * @dma: address space
 * @addr: the device address wdrv_dma_map() returned
 *
 * New accesses fail at once; an access in progress finishes first only in
 * the sense that the window's struct lives on, so callers unmap only what
 * the device no longer uses (completed or reset jobs).
 */
void wdrv_dma_unmap(struct wdrv_dma *dma, u64 addr)
{
	struct wdrv_dma_window *w;

	w = xa_erase(&dma->windows, addr >> WDRV_DMA_OFFSET_BITS);
	if (w)
		kref_put(&w->ref, window_release);
}

/* Finds the window of [addr, addr + len) and takes a reference on it. */
static struct wdrv_dma_window *window_get(struct wdrv_dma *dma, u64 addr,
					  u64 len, u32 need)
{
	u64 off = addr & (BIT_ULL(WDRV_DMA_OFFSET_BITS) - 1);
	struct wdrv_dma_window *w;
	u64 end;

	rcu_read_lock();
	w = xa_load(&dma->windows, addr >> WDRV_DMA_OFFSET_BITS);
	if (w && !kref_get_unless_zero(&w->ref))
		w = NULL;
	rcu_read_unlock();
	if (!w)
		return NULL;
	if (check_add_overflow(off, len, &end) || end > w->size ||
	    (w->flags & need) != need) {
		kref_put(&w->ref, window_release);
		return NULL;
	}
	return w;
}

static int wdrv_dma_read(void *ctx, u64 addr, void *dst, u64 len)
{
	struct wdrv_dma_window *w = window_get(ctx, addr, len, 0);
	u64 off = addr & (BIT_ULL(WDRV_DMA_OFFSET_BITS) - 1);

	if (!w)
		return -EFAULT;
	memcpy(dst, w->vaddr + off, len);
	kref_put(&w->ref, window_release);
	return 0;
}

static int wdrv_dma_write(void *ctx, u64 addr, const void *src, u64 len)
{
	struct wdrv_dma_window *w = window_get(ctx, addr, len, WDRV_DMA_WRITE);
	u64 off = addr & (BIT_ULL(WDRV_DMA_OFFSET_BITS) - 1);

	if (!w)
		return -EFAULT;
	memcpy(w->vaddr + off, src, len);
	kref_put(&w->ref, window_release);
	return 0;
}

/* The reference taken here is dropped by wdrv_dma_unmap_ptr(). */
static const void *wdrv_dma_map_ptr(void *ctx, u64 addr, u64 len)
{
	struct wdrv_dma_window *w = window_get(ctx, addr, len, WDRV_DMA_MAPPABLE);

	if (!w)
		return NULL;
	return w->vaddr + (addr & (BIT_ULL(WDRV_DMA_OFFSET_BITS) - 1));
}

static void wdrv_dma_unmap_ptr(void *ctx, const void *p, u64 len)
{
	struct wdrv_dma *dma = ctx;
	struct wdrv_dma_window *w;
	unsigned long id;

	/* Few mappable windows exist (model blobs): a scan is fine. */
	rcu_read_lock();
	xa_for_each(&dma->windows, id, w) {
		if ((w->flags & WDRV_DMA_MAPPABLE) && p >= w->vaddr &&
		    p < w->vaddr + w->size) {
			rcu_read_unlock();
			kref_put(&w->ref, window_release);
			return;
		}
	}
	rcu_read_unlock();
	WARN_ONCE(1, "wafer: firmware unmapped %p, which it never mapped\n", p);
}

const struct wfs_dma_ops wdrv_dma_ops = {
	.read = wdrv_dma_read,
	.write = wdrv_dma_write,
	.map = wdrv_dma_map_ptr,
	.unmap = wdrv_dma_unmap_ptr,
};
