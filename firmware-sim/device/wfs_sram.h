/* SPDX-License-Identifier: MIT */
/*
 * wfs_sram.h - the SRAM arena of one pipeline stage.
 *
 * Each stage owns one fixed-size arena, allocated once when the device is
 * created (on the device's NUMA node).  Everything the firmware places in a
 * stage afterwards - weights, KV cache, FIFO buffers, scratch - is carved
 * out of that arena by this allocator; nothing else allocates memory while
 * the device is up.
 *
 * The allocator keeps its blocks in an array sorted by offset (allocated
 * with the arena, so it needs no memory of its own) and places a request in
 * the first gap that fits (first fit).  Every block carries a name so the
 * driver can show an SRAM map in debugfs.  Arenas are small in block count
 * (tens of blocks), so linear scans are fine.
 *
 * Locking: an arena given a lock (wfs_sram_set_lock()) takes it in every
 * call, so the command processor and the load worker may both allocate,
 * free and read it; the lock is a leaf.  Nothing here touches a block's
 * bytes under it: a new block is zeroed after it is reserved, by then its
 * caller's alone.  Without a lock the caller serialises.
 */
#ifndef WFS_SRAM_H
#define WFS_SRAM_H

#include "wfs_compat.h"

struct wfs_os_mutex;

/* Default and minimum alignment of every block (a cache line). */
#define WFS_SRAM_ALIGN		64
/* Largest alignment a caller may ask for. */
#define WFS_SRAM_MAX_ALIGN	4096
/* Bytes of a block name, including the terminating NUL. */
#define WFS_SRAM_NAME_LEN	24

/**
 * struct wfs_sram_block - one allocation
 * @off: offset of the block from the arena base
 * @size: bytes reserved (the request rounded up to WFS_SRAM_ALIGN)
 * @req: bytes requested
 * @name: NUL-terminated name shown in the SRAM map
 * @owner: who allocated it (the caller's tag, 0: nobody in particular):
 *	wfs_sram_free_owner() frees one owner's blocks
 */
struct wfs_sram_block {
	u64 off;
	u64 size;
	u64 req;
	char name[WFS_SRAM_NAME_LEN];
	u32 owner;
};

/**
 * struct wfs_sram - a stage's SRAM arena
 * @base: first byte of the arena (aligned to WFS_SRAM_ALIGN)
 * @size: arena capacity in bytes
 * @blocks: live blocks, sorted by offset
 * @n_blocks: entries used in @blocks
 * @max_blocks: capacity of @blocks
 * @used: bytes reserved by live blocks
 * @peak: high-water mark of @used
 * @n_allocs: successful allocations so far
 * @n_fails: failed allocations so far
 * @lock: guards the fields above (not the blocks' bytes), or NULL
 */
struct wfs_sram {
	u8 *base;
	u64 size;
	struct wfs_sram_block *blocks;
	u32 n_blocks;
	u32 max_blocks;
	u64 used;
	u64 peak;
	u64 n_allocs;
	u64 n_fails;
	struct wfs_os_mutex *lock;
};

/**
 * struct wfs_sram_stats - a consistent snapshot of an arena's counters
 * @used: bytes reserved
 * @peak: high-water mark of @used
 * @n_blocks: live blocks
 */
struct wfs_sram_stats {
	u64 used;
	u64 peak;
	u32 n_blocks;
};

/**
 * wfs_sram_init() - set up an arena over memory the caller owns
 * @s: arena
 * @mem: the arena memory; it is aligned up to WFS_SRAM_ALIGN internally
 * @mem_bytes: bytes at @mem
 * @blocks: storage for block records
 * @max_blocks: entries at @blocks
 *
 * Return: 0, or -WFS_EINVAL if the memory is too small to hold anything.
 */
int wfs_sram_init(struct wfs_sram *s, void *mem, u64 mem_bytes,
		  struct wfs_sram_block *blocks, u32 max_blocks);

/**
 * wfs_sram_alloc() - carve a named block out of the arena
 * @s: arena
 * @bytes: size (0 is treated as 1)
 * @align: alignment, a power of two up to WFS_SRAM_MAX_ALIGN (0: default)
 * @name: name for the SRAM map (truncated to fit)
 *
 * The block is zeroed.
 *
 * Return: the block, or NULL if no gap fits, the block table is full or the
 * arguments are invalid.
 */
void *wfs_sram_alloc(struct wfs_sram *s, u64 bytes, u64 align,
		     const char *name);

/**
 * wfs_sram_alloc_owned() - wfs_sram_alloc() for an owner
 * @s: arena
 * @bytes: size
 * @align: alignment (as wfs_sram_alloc())
 * @name: name for the SRAM map
 * @owner: the block's owner tag
 *
 * Return: the block, or NULL (as wfs_sram_alloc()).
 */
void *wfs_sram_alloc_owned(struct wfs_sram *s, u64 bytes, u64 align,
			   const char *name, u32 owner);

/**
 * wfs_sram_free_owner() - release every block of one owner
 * @s: arena
 * @owner: the owner tag (not 0)
 *
 * Return: blocks released.
 */
u32 wfs_sram_free_owner(struct wfs_sram *s, u32 owner);

/**
 * wfs_sram_owner_bytes() - bytes reserved by one owner's blocks
 * @s: arena
 * @owner: the owner tag
 * @blocks: set to the owner's block count, or NULL
 *
 * Return: bytes.
 */
u64 wfs_sram_owner_bytes(const struct wfs_sram *s, u32 owner, u32 *blocks);

/**
 * wfs_sram_free() - release a block
 * @s: arena
 * @p: a pointer returned by wfs_sram_alloc() on @s, or NULL
 *
 * Return: 0, or -WFS_ENOENT if @p is not the start of a live block.
 */
int wfs_sram_free(struct wfs_sram *s, void *p);

/**
 * wfs_sram_reset() - release every block at once
 * @s: arena
 */
void wfs_sram_reset(struct wfs_sram *s);

/**
 * wfs_sram_set_lock() - guard an arena by @lock from now on
 * @s: arena (initialised)
 * @lock: a mutex every call on @s takes, or NULL
 */
void wfs_sram_set_lock(struct wfs_sram *s, struct wfs_os_mutex *lock);

/**
 * wfs_sram_stats() - read an arena's counters at once
 * @s: arena
 * @st: out: the counters
 */
void wfs_sram_stats(const struct wfs_sram *s, struct wfs_sram_stats *st);

/**
 * wfs_sram_block_at() - copy one block record
 * @s: arena
 * @idx: its index in offset order
 * @out: out: the record
 *
 * Return: 0, or -WFS_ENOENT past the last block.
 */
int wfs_sram_block_at(const struct wfs_sram *s, u32 idx,
		      struct wfs_sram_block *out);

/**
 * wfs_sram_free_bytes() - bytes not reserved by any block
 * @s: arena
 *
 * Return: size - used.
 */
u64 wfs_sram_free_bytes(const struct wfs_sram *s);

/**
 * wfs_sram_largest_free() - the largest gap, i.e. the largest block that
 *	could be allocated with default alignment
 * @s: arena
 *
 * Return: bytes of the largest gap.
 */
u64 wfs_sram_largest_free(const struct wfs_sram *s);

/**
 * wfs_sram_block_size() - bytes an allocation of @bytes would reserve
 * @bytes: requested size
 *
 * Return: @bytes rounded up to WFS_SRAM_ALIGN (at least WFS_SRAM_ALIGN),
 * or U64 max on overflow.
 */
u64 wfs_sram_block_size(u64 bytes);

#endif /* WFS_SRAM_H */
