// SPDX-License-Identifier: MIT
/*
 * device_sram.c - the per-stage SRAM arena allocator: byte accounting,
 * exhaustion, fragmentation and gap reuse, alignment, names, bad frees,
 * plus a randomised allocate/free soak checked against a shadow model.
 */
#include <stdlib.h>
#include <string.h>

#include "wfs_sram.h"
#include "wt_util.h"

#define ARENA	(64 * 1024)
#define NBLK	64

static u8 *mem;
static struct wfs_sram_block blocks[NBLK];

static int no_overlap(const struct wfs_sram *s)
{
	u32 i;

	for (i = 0; i < s->n_blocks; i++) {
		const struct wfs_sram_block *b = &s->blocks[i];

		if (b->off + b->size > s->size || b->off % WFS_SRAM_ALIGN)
			return 0;
		if (i && s->blocks[i - 1].off + s->blocks[i - 1].size > b->off)
			return 0;
	}
	return 1;
}

static u64 sum_sizes(const struct wfs_sram *s)
{
	u64 t = 0;
	u32 i;

	for (i = 0; i < s->n_blocks; i++)
		t += s->blocks[i].size;
	return t;
}

static void test_basic(void)
{
	struct wfs_sram s;
	void *a, *b, *c, *d;
	int ret;

	ret = wfs_sram_init(&s, mem + 3, ARENA + 64, blocks, NBLK);
	wt_ok(ret == 0 &&
	      ((uintptr_t)s.base % WFS_SRAM_ALIGN) == 0 && s.size >= ARENA,
	      "init aligns an unaligned base (size %llu)",
	      (unsigned long long)s.size);
	wt_ok(wfs_sram_init(&s, mem, 10, blocks, NBLK) == -WFS_EINVAL &&
	      wfs_sram_init(&s, mem, ARENA, blocks, 0) == -WFS_EINVAL,
	      "init rejects tiny memory and empty block table");
	wfs_sram_init(&s, mem, ARENA, blocks, NBLK);

	a = wfs_sram_alloc(&s, 1, 0, "a");
	b = wfs_sram_alloc(&s, 100, 0, "b");
	c = wfs_sram_alloc(&s, 64, 0, "c");
	wt_ok(a && b && c && s.used == 64 + 128 + 64 && s.n_blocks == 3 &&
	      s.used == sum_sizes(&s) && wfs_sram_free_bytes(&s) == s.size - s.used,
	      "accounting: 1 -> 64, 100 -> 128, 64 -> 64 bytes reserved (used %llu)",
	      (unsigned long long)s.used);
	wt_ok(!strcmp(s.blocks[0].name, "a") && s.blocks[1].req == 100,
	      "blocks carry names and requested sizes");
	wt_ok(wfs_sram_free(&s, b) == 0 && s.used == 128 &&
	      wfs_sram_free(&s, b) == -WFS_ENOENT &&
	      wfs_sram_free(&s, (u8 *)a + 64 * 1024 * 1024) == -WFS_ENOENT &&
	      wfs_sram_free(&s, (u8 *)c + 1) == -WFS_ENOENT &&
	      wfs_sram_free(&s, NULL) == 0,
	      "free: double free, foreign and interior pointers refused");
	d = wfs_sram_alloc(&s, 128, 0, "d");
	wt_ok(d == b, "first fit reuses the freed gap");
	d = wfs_sram_alloc(&s, 4096, 4096, "page");
	wt_ok(d && ((uintptr_t)d % 4096) == 0 && no_overlap(&s),
	      "4096-byte alignment of the absolute address");
	wt_ok(!wfs_sram_alloc(&s, 64, 8192, "x") && !wfs_sram_alloc(&s, 64, 96, "x"),
	      "alignment above the maximum or not a power of two refused");
	wt_ok(!wfs_sram_alloc(&s, s.size + 1, 0, "huge") &&
	      !wfs_sram_alloc(&s, ~(u64)0, 0, "ovf") && s.n_fails >= 4,
	      "oversized and overflowing requests fail (fails counted: %llu)",
	      (unsigned long long)s.n_fails);
	wfs_sram_reset(&s);
	wt_ok(s.used == 0 && s.n_blocks == 0 && s.peak > 0,
	      "reset frees everything, keeps the peak");
}

static void test_exhaustion_fragmentation(void)
{
	struct wfs_sram s;
	void *p[NBLK];
	u32 n = 0, i;
	void *big;

	wfs_sram_init(&s, mem, ARENA, blocks, NBLK);
	while (n < NBLK && (p[n] = wfs_sram_alloc(&s, 1024, 0, "blk")))
		n++;
	wt_ok(n == ARENA / 1024 && s.used == s.size &&
	      wfs_sram_largest_free(&s) == 0 && !wfs_sram_alloc(&s, 1, 0, "x"),
	      "exhaustion: %u x 1 KiB fill 64 KiB exactly, the next fails", n);
	for (i = 0; i < n; i += 2)
		wfs_sram_free(&s, p[i]);
	wt_ok(wfs_sram_free_bytes(&s) == ARENA / 2 &&
	      wfs_sram_largest_free(&s) == 1024 &&
	      !wfs_sram_alloc(&s, 2048, 0, "2k"),
	      "fragmentation: 32 KiB free in 1 KiB holes, a 2 KiB block does not fit");
	wfs_sram_free(&s, p[1]);
	big = wfs_sram_alloc(&s, 3072, 0, "3k");
	wt_ok(big == p[0] && wfs_sram_largest_free(&s) == 1024 && no_overlap(&s),
	      "freeing a neighbour coalesces the gap: 3 KiB fits where 3 holes met");
	for (i = 0; i < NBLK; i++)
		wfs_sram_free(&s, p[i]);
	wfs_sram_free(&s, big);
	wt_ok(s.used == 0 && wfs_sram_largest_free(&s) == s.size,
	      "everything freed: one gap again");
	{
		struct wfs_sram_block few[4];
		struct wfs_sram t;
		int k = 0;

		wfs_sram_init(&t, mem, ARENA, few, 4);
		while (wfs_sram_alloc(&t, 64, 0, "b"))
			k++;
		wt_ok(k == 4, "block table exhaustion: 4 records allow 4 blocks");
	}
}

static void test_random(void)
{
	struct wfs_sram s;
	struct {
		u8 *p;
		u64 n;
		u8 tag;
	} live[NBLK];
	struct wt_rng r;
	u32 n_live = 0, it, i, bad = 0, allocs = 0;

	wt_rng_seed(&r, 7);
	wfs_sram_init(&s, mem, ARENA, blocks, NBLK);
	for (it = 0; it < 20000; it++) {
		if (n_live && (n_live == NBLK || wt_rng_range(&r, 0, 2) == 0)) {
			u32 k = (u32)wt_rng_range(&r, 0, n_live - 1);

			for (i = 0; i < live[k].n; i++)
				bad += live[k].p[i] != live[k].tag;
			bad += wfs_sram_free(&s, live[k].p) != 0;
			live[k] = live[--n_live];
		} else {
			u64 n = (u64)wt_rng_range(&r, 1, 4000);
			u64 al = 1ull << wt_rng_range(&r, 0, 9);
			u8 *p = wfs_sram_alloc(&s, n, al, "r");

			if (!p)
				continue;
			allocs++;
			bad += ((uintptr_t)p % (al < 64 ? 64 : al)) != 0;
			for (i = 0; i < n; i++)
				bad += p[i] != 0;
			live[n_live].p = p;
			live[n_live].n = n;
			live[n_live].tag = (u8)it;
			memset(p, (u8)it, n);
			n_live++;
		}
		if (!no_overlap(&s) || s.used != sum_sizes(&s) ||
		    s.n_blocks != n_live)
			bad++;
	}
	wt_ok(bad == 0,
	      "20000 random alloc/free steps (%u allocations): no overlap, zeroed, contents intact, accounting exact",
	      allocs);
}

int main(void)
{
	if (posix_memalign((void **)&mem, 4096, ARENA + 128))
		return 1;
	test_basic();
	test_exhaustion_fragmentation();
	test_random();
	free(mem);
	return wt_done();
}
