// SPDX-License-Identifier: MIT
/*
 * pool.c - uapi_fuzz: the pool of live and stale objects per file.
 */
#include "uapi_fuzz.h"

struct bo_rec *pick_bo_locked(struct tctx *t, int fi, uint64_t min_size, int usable,
			      int allow_huge)
{
	struct file_slot *f = &files[fi];
	int i, start = (int)rn(t, NBO);

	for (i = 0; i < NBO; i++) {
		struct bo_rec *b = &f->bo[(start + i) % NBO];

		if (!b->handle || (b->huge && !allow_huge))
			continue;
		if (usable && (!b->live || b->huge || b->blob || b->size < min_size))
			continue;
		return b;
	}
	return NULL;
}

/* A BO handle for file @fi: mostly its own live ones, sometimes stale,
 * foreign or made up.  *size gets the BO's size (0 if unknown). */
uint32_t pick_handle(struct tctx *t, int fi, uint64_t min_size, uint64_t *size,
		     int *kind, int allow_huge)
{
	struct bo_rec *b = NULL;
	uint32_t h = 0;
	int r = (int)rn(t, 100);

	*size = 0;
	*kind = 0;
	pthread_mutex_lock(&pool_mu);
	if (r < 82) {
		b = pick_bo_locked(t, fi, min_size, 1, 0);
	} else if (r < 90) {
		b = pick_bo_locked(t, fi, 0, 0, allow_huge);
		*kind = 1;
	} else if (r < 96) {
		b = pick_bo_locked(t, (fi + 1 + (int)rn(t, nfiles - 1)) % nfiles, 0, 0,
				   allow_huge);
		*kind = 2;
	}
	if (b) {
		h = b->handle;
		*size = b->size;
	} else {
		h = (uint32_t)v_id(t, 0);
		*kind = 3;
	}
	pthread_mutex_unlock(&pool_mu);
	return h;
}

void add_bo(int fi, unsigned int gen, uint32_t handle, uint64_t size,
	    uint64_t mmap_off, int imported, int blob_bo)
{
	struct file_slot *f = &files[fi];
	struct bo_rec *b;
	int i;

	pthread_mutex_lock(&pool_mu);
	if (f->gen != gen) {
		pthread_mutex_unlock(&pool_mu);
		return;
	}
	/* Re-importing gives the same handle: update it in place. */
	for (i = 0; i < NBO; i++)
		if (f->bo[i].handle == handle && f->bo[i].live)
			break;
	if (i == NBO) {
		/* Prefer a dead record's place. */
		for (i = 0; i < NBO; i++)
			if (!f->bo[(f->bo_next + i) % NBO].live)
				break;
		i = (f->bo_next + (i == NBO ? 0 : i)) % NBO;
		f->bo_next = i + 1;
	}
	b = &f->bo[i];
	b->handle = handle;
	b->size = size;
	b->mmap_off = mmap_off;
	b->live = 1;
	b->imported = imported;
	b->huge = size > (64ull << 20);
	b->blob = blob_bo;
	pthread_mutex_unlock(&pool_mu);
}

void kill_bo(int fi, unsigned int gen, uint32_t handle)
{
	struct file_slot *f = &files[fi];
	int i;

	pthread_mutex_lock(&pool_mu);
	if (f->gen == gen) {
		for (i = 0; i < NBO; i++)
			if (f->bo[i].handle == handle)
				f->bo[i].live = 0;
		if (f->blob_bo == handle)
			f->blob_bo = 0;
	}
	pthread_mutex_unlock(&pool_mu);
}

struct ctx_rec pick_ctx(struct tctx *t, int fi, int *kind)
{
	struct ctx_rec c = { 0 };
	int i, start = (int)rn(t, NCTX), r = (int)rn(t, 100), src = fi;

	*kind = 0;
	if (r >= 88 && r < 94) {
		src = (fi + 1 + (int)rn(t, nfiles - 1)) % nfiles;
		*kind = 2;
	}
	pthread_mutex_lock(&pool_mu);
	for (i = 0; i < NCTX; i++) {
		struct ctx_rec *x = &files[src].ctx[(start + i) % NCTX];

		if (!x->id)
			continue;
		if (r < 80 && !x->live)
			continue;
		if (r >= 80 && r < 88 && x->live)
			continue;
		c = *x;
		break;
	}
	pthread_mutex_unlock(&pool_mu);
	if (r >= 80 && r < 88)
		*kind = 1;
	if (!c.id || r >= 94) {
		c.id = (uint32_t)v_id(t, 0);
		c.slots = 1 + (uint32_t)rn(t, 4);
		c.ctx_len = 16;
		*kind = 3;
	}
	return c;
}

uint32_t pick_sync(struct tctx *t, int fi, int fenced_only)
{
	struct file_slot *f = &files[fi];
	uint32_t h = 0;
	int i, start = (int)rn(t, NSYNC);

	if (pct(t, 8))
		return (uint32_t)v_id(t, 0);
	if (pct(t, 5))
		f = &files[(fi + 1) % nfiles];
	pthread_mutex_lock(&pool_mu);
	for (i = 0; i < NSYNC; i++) {
		struct sync_rec *s = &f->sync[(start + i) % NSYNC];

		if (!s->handle || (fenced_only && (!s->live || !s->fenced) && pct(t, 90)))
			continue;
		h = s->handle;
		break;
	}
	pthread_mutex_unlock(&pool_mu);
	return h;
}

void set_sync(int fi, unsigned int gen, uint32_t h, int live, int fenced)
{
	struct file_slot *f = &files[fi];
	int i;

	pthread_mutex_lock(&pool_mu);
	if (f->gen == gen) {
		for (i = 0; i < NSYNC; i++)
			if (f->sync[i].handle == h)
				break;
		if (i == NSYNC) {
			if (!live)
				goto out;
			i = f->sync_next++ % NSYNC;
		}
		f->sync[i].handle = h;
		f->sync[i].live = live;
		f->sync[i].fenced = fenced;
	}
out:
	pthread_mutex_unlock(&pool_mu);
}

void add_seq(int fi, unsigned int gen, uint64_t s)
{
	pthread_mutex_lock(&pool_mu);
	if (files[fi].gen == gen) {
		files[fi].seq[files[fi].seq_next++ % NSEQ] = s;
		if (s > files[fi].last_seq)
			files[fi].last_seq = s;
	}
	pthread_mutex_unlock(&pool_mu);
}

void add_map(void *addr, size_t len, int blob_bo)
{
	int i;

	pthread_mutex_lock(&pool_mu);
	for (i = 0; i < NMAP; i++)
		if (!maps[i].live)
			break;
	if (i == NMAP) {
		pthread_mutex_unlock(&pool_mu);
		munmap(addr, len);
		return;
	}
	maps[i].addr = addr;
	maps[i].len = len;
	maps[i].live = 1;
	maps[i].blob = blob_bo;
	pthread_mutex_unlock(&pool_mu);
}

void add_prime(int fd, uint64_t size, int syncfile)
{
	int i;

	pthread_mutex_lock(&pool_mu);
	for (i = 0; i < NPRIME; i++)
		if (!primes[i].live)
			break;
	if (i == NPRIME) {
		pthread_mutex_unlock(&pool_mu);
		close(fd);
		return;
	}
	primes[i].fd = fd;
	primes[i].size = size;
	primes[i].live = 1;
	primes[i].syncfile = syncfile;
	pthread_mutex_unlock(&pool_mu);
}

/* Takes a live prime fd out of the pool (the caller closes it). */
int take_prime(struct tctx *t, uint64_t *size)
{
	int i, start = (int)rn(t, NPRIME), fd = -1;

	pthread_mutex_lock(&pool_mu);
	for (i = 0; i < NPRIME; i++) {
		struct prime_rec *p = &primes[(start + i) % NPRIME];

		if (p->live) {
			p->live = 0;
			fd = p->fd;
			*size = p->size;
			break;
		}
	}
	pthread_mutex_unlock(&pool_mu);
	return fd;
}

/* A dma-buf or sync_file fd number from the pool (may be closed meanwhile). */
int peek_prime(struct tctx *t, int want_sync, uint64_t *size)
{
	int i, start = (int)rn(t, NPRIME), fd = -1;

	pthread_mutex_lock(&pool_mu);
	for (i = 0; i < NPRIME; i++) {
		struct prime_rec *p = &primes[(start + i) % NPRIME];

		if (p->live && p->syncfile == want_sync) {
			fd = p->fd;
			*size = p->size;
			break;
		}
	}
	pthread_mutex_unlock(&pool_mu);
	return fd;
}

int file_get(int fi, unsigned int *gen)
{
	pthread_rwlock_rdlock(&files[fi].rw);
	pthread_mutex_lock(&pool_mu);
	*gen = files[fi].gen;
	pthread_mutex_unlock(&pool_mu);
	return files[fi].fd;
}

void file_put(int fi)
{
	pthread_rwlock_unlock(&files[fi].rw);
}
