// SPDX-License-Identifier: MIT
/*
 * wfs_sram.c - first-fit arena allocator with named blocks (see wfs_sram.h).
 */
#include "wfs_os.h"
#include "wfs_sram.h"

#define WFS_U64_MAX	(~(u64)0)

u64 wfs_sram_block_size(u64 bytes)
{
	u64 r;

	if (bytes == 0)
		bytes = 1;
	if (wfs_align_up_chk(bytes, WFS_SRAM_ALIGN, &r))
		return WFS_U64_MAX;
	return r;
}

int wfs_sram_init(struct wfs_sram *s, void *mem, u64 mem_bytes,
		  struct wfs_sram_block *blocks, u32 max_blocks)
{
	u64 addr = (u64)(unsigned long)mem;
	u64 skip = WFS_ALIGN_UP(addr, (u64)WFS_SRAM_ALIGN) - addr;

	WFS_MEMSET(s, 0, sizeof(*s));
	if (!mem || !blocks || max_blocks == 0 ||
	    mem_bytes < skip + WFS_SRAM_ALIGN)
		return -WFS_EINVAL;
	s->base = (u8 *)mem + skip;
	s->size = (mem_bytes - skip) & ~(u64)(WFS_SRAM_ALIGN - 1);
	s->blocks = blocks;
	s->max_blocks = max_blocks;
	return 0;
}

static void copy_name(char *dst, const char *src)
{
	unsigned int i = 0;

	if (src) {
		for (; i < WFS_SRAM_NAME_LEN - 1 && src[i]; i++)
			dst[i] = src[i];
	}
	dst[i] = '\0';
}

static void arena_lock(const struct wfs_sram *s)
{
	if (s->lock)
		wfs_os_mutex_lock(s->lock);
}

static void arena_unlock(const struct wfs_sram *s)
{
	if (s->lock)
		wfs_os_mutex_unlock(s->lock);
}

void wfs_sram_set_lock(struct wfs_sram *s, struct wfs_os_mutex *lock)
{
	s->lock = lock;
}

void *wfs_sram_alloc(struct wfs_sram *s, u64 bytes, u64 align,
		     const char *name)
{
	return wfs_sram_alloc_owned(s, bytes, align, name, 0);
}

/* Reserve a block; its bytes are zeroed by the caller, outside the lock. */
static u8 *sram_reserve(struct wfs_sram *s, u64 bytes, u64 align,
			const char *name, u32 owner, u64 *size_out)
{
	u64 size = wfs_sram_block_size(bytes);
	u64 base_addr = (u64)(unsigned long)s->base;
	u64 gap_start = 0, start = 0;
	u32 i, pos = 0;

	if (align == 0)
		align = WFS_SRAM_ALIGN;
	if ((align & (align - 1)) || align > WFS_SRAM_MAX_ALIGN ||
	    size > s->size || s->n_blocks >= s->max_blocks)
		goto fail;
	if (align < WFS_SRAM_ALIGN)
		align = WFS_SRAM_ALIGN;

	/* Gaps: before block 0, between blocks, after the last block. */
	for (i = 0; i <= s->n_blocks; i++) {
		u64 gap_end = i < s->n_blocks ? s->blocks[i].off : s->size;

		/* Align the absolute address, not just the offset. */
		start = WFS_ALIGN_UP(base_addr + gap_start, align) - base_addr;
		if (start >= gap_start && start <= gap_end &&
		    gap_end - start >= size) {
			pos = i;
			goto found;
		}
		if (i < s->n_blocks)
			gap_start = s->blocks[i].off + s->blocks[i].size;
	}
fail:
	s->n_fails++;
	return NULL;

found:
	for (i = s->n_blocks; i > pos; i--)
		s->blocks[i] = s->blocks[i - 1];
	s->blocks[pos].off = start;
	s->blocks[pos].size = size;
	s->blocks[pos].req = bytes;
	copy_name(s->blocks[pos].name, name);
	s->blocks[pos].owner = owner;
	s->n_blocks++;
	s->used += size;
	if (s->used > s->peak)
		s->peak = s->used;
	s->n_allocs++;
	*size_out = size;
	return s->base + start;
}

void *wfs_sram_alloc_owned(struct wfs_sram *s, u64 bytes, u64 align,
			   const char *name, u32 owner)
{
	u64 size = 0;
	u8 *p;

	arena_lock(s);
	p = sram_reserve(s, bytes, align, name, owner, &size);
	arena_unlock(s);
	/* The block is the caller's now: no other thread reads it. */
	if (p)
		WFS_MEMSET(p, 0, size);
	return p;
}

static int sram_free(struct wfs_sram *s, void *p)
{
	u64 off;
	u32 i;

	if (!p)
		return 0;
	if ((u8 *)p < s->base || (u8 *)p >= s->base + s->size)
		return -WFS_ENOENT;
	off = (u64)((u8 *)p - s->base);
	for (i = 0; i < s->n_blocks; i++) {
		if (s->blocks[i].off == off)
			break;
	}
	if (i == s->n_blocks)
		return -WFS_ENOENT;
	s->used -= s->blocks[i].size;
	for (; i + 1 < s->n_blocks; i++)
		s->blocks[i] = s->blocks[i + 1];
	s->n_blocks--;
	return 0;
}

int wfs_sram_free(struct wfs_sram *s, void *p)
{
	int ret;

	arena_lock(s);
	ret = sram_free(s, p);
	arena_unlock(s);
	return ret;
}

u32 wfs_sram_free_owner(struct wfs_sram *s, u32 owner)
{
	u32 i, n = 0;

	arena_lock(s);
	for (i = 0; i < s->n_blocks; i++) {
		if (s->blocks[i].owner == owner) {
			s->used -= s->blocks[i].size;
			n++;
		} else if (n) {
			s->blocks[i - n] = s->blocks[i];
		}
	}
	s->n_blocks -= n;
	arena_unlock(s);
	return n;
}

u64 wfs_sram_owner_bytes(const struct wfs_sram *s, u32 owner, u32 *blocks)
{
	u64 bytes = 0;
	u32 i, n = 0;

	arena_lock(s);
	for (i = 0; i < s->n_blocks; i++) {
		if (s->blocks[i].owner != owner)
			continue;
		bytes += s->blocks[i].size;
		n++;
	}
	arena_unlock(s);
	if (blocks)
		*blocks = n;
	return bytes;
}

void wfs_sram_reset(struct wfs_sram *s)
{
	arena_lock(s);
	s->n_blocks = 0;
	s->used = 0;
	arena_unlock(s);
}

u64 wfs_sram_free_bytes(const struct wfs_sram *s)
{
	u64 free;

	arena_lock(s);
	free = s->size - s->used;
	arena_unlock(s);
	return free;
}

void wfs_sram_stats(const struct wfs_sram *s, struct wfs_sram_stats *st)
{
	arena_lock(s);
	st->used = s->used;
	st->peak = s->peak;
	st->n_blocks = s->n_blocks;
	arena_unlock(s);
}

int wfs_sram_block_at(const struct wfs_sram *s, u32 idx,
		      struct wfs_sram_block *out)
{
	int ret = -WFS_ENOENT;

	arena_lock(s);
	if (idx < s->n_blocks) {
		*out = s->blocks[idx];
		ret = 0;
	}
	arena_unlock(s);
	return ret;
}

u64 wfs_sram_largest_free(const struct wfs_sram *s)
{
	u64 gap_start = 0, best = 0;
	u32 i;

	arena_lock(s);
	for (i = 0; i <= s->n_blocks; i++) {
		u64 gap_end = i < s->n_blocks ? s->blocks[i].off : s->size;

		if (gap_end - gap_start > best)
			best = gap_end - gap_start;
		if (i < s->n_blocks)
			gap_start = s->blocks[i].off + s->blocks[i].size;
	}
	arena_unlock(s);
	return best;
}
