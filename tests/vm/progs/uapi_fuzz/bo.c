// SPDX-License-Identifier: MIT
/*
 * bo.c - uapi_fuzz: BO_CREATE, BO_INFO, GEM_CLOSE, mmap, munmap and touching mappings.
 */
#include "uapi_fuzz.h"

int gem_close(int fi, int fd, struct drm_gem_close *c)
{
	int ret;

	atomic_fetch_add(&closes_begun[fi], 1);
	ret = raw_ioctl(fd, DRM_IOCTL_GEM_CLOSE, c);
	atomic_fetch_add(&closes_ended[fi], 1);
	return ret;
}

void op_bo_create(struct tctx *t, int fi, int fd, unsigned int gen)
{
	struct drm_wafer_bo_create c = { 0 };
	struct drm_wafer_bo_info i = { 0 };
	const char *invalid = NULL;
	static const uint64_t sz[] = { 1, 4, 64, 4095, 4096, 4097, 8192, 12288, 65536,
				       1 << 20 };
	unsigned long begun, ended;
	int m = nmut(t), ret, sure, wrong;

	c.size = pct(t, 85) ? sz[rn(t, 10)] : 1 + rn(t, 1 << 18);
	while (m--) {
		if (pct(t, 30)) {
			c.flags = (uint32_t)v_flags(t);
			invalid = "flags != 0";
		} else {
			c.size = v_size(t, c.size);
		}
	}
	if (!c.size)
		invalid = invalid ? invalid : "size 0";
	if (c.size > dinfo.max_bo_size)
		invalid = invalid ? invalid : "size > max_bo_size";
	/* Big valid BOs cost nothing until touched; allow a few. */
	if (!invalid && c.size > (64ull << 20) && pct(t, 70))
		c.size = PAGE;
	/* ended, then begun: equal means no close of this file in flight now */
	ended = atomic_load(&closes_ended[fi]);
	begun = atomic_load(&closes_begun[fi]);
	ret = raw_ioctl(fd, DRM_IOCTL_WAFER_BO_CREATE, &c);
	count(OP_BO_CREATE, ret);
	tlog(t, OP_BO_CREATE, fi, ret, "size %#" PRIx64 " flags %#x -> handle %u", c.size,
	     c.flags, ret ? 0 : c.handle);
	if (!ret && invalid)
		sure_bug(t, OP_BO_CREATE, ret, "accepted %s (size %#" PRIx64 ", flags %#x)",
			 invalid, c.size, c.flags);
	if (ret == -EFAULT)
		sure_bug(t, OP_BO_CREATE, ret, "no user pointer in the argument");
	if (ret && ret != -EINVAL && ret != -EDQUOT && ret != -ENOMEM)
		odd(t, OP_BO_CREATE, ret, "size %#" PRIx64, c.size);
	if (ret)
		return;
	i.handle = c.handle;
	ret = raw_ioctl(fd, DRM_IOCTL_WAFER_BO_INFO, &i);
	/* no close began since before BO_CREATE: c.handle is still this BO */
	sure = ended == begun && atomic_load(&closes_begun[fi]) == begun;
	if (sure && ret == -ENOENT)
		sure_bug(t, OP_BO_CREATE, 0, "BO_INFO -ENOENT for the handle %u just created, "
			 "no GEM_CLOSE since", c.handle);
	if (ret)
		return;
	wrong = i.size != ((c.size + PAGE - 1) & ~(PAGE - 1));
	if (sure) {
		atomic_fetch_add(&size_checks, 1);
		if (wrong)
			sure_bug(t, OP_BO_CREATE, 0, "BO_INFO size %#llx for a %#llx-byte BO, "
				 "no GEM_CLOSE since", (unsigned long long)i.size,
				 (unsigned long long)c.size);
	} else {
		atomic_fetch_add(&size_skips, 1);
		if (wrong)
			atomic_fetch_add(&size_reused, 1);
	}
	add_bo(fi, gen, c.handle, i.size, i.mmap_offset, 0, 0);
}

void op_bo_info(struct tctx *t, int fi, int fd)
{
	struct drm_wafer_bo_info i = { 0 };
	uint64_t size;
	int kind, ret;

	i.handle = pick_handle(t, fi, 0, &size, &kind, 1);
	if (pct(t, 15))
		i.pad = v_nonzero32(t);
	if (pct(t, 10))
		i.size = rnd(t), i.mmap_offset = rnd(t);	/* out fields: ignored */
	ret = raw_ioctl(fd, DRM_IOCTL_WAFER_BO_INFO, &i);
	count(OP_BO_INFO, ret);
	tlog(t, OP_BO_INFO, fi, ret, "handle %u (kind %d) pad %u", i.handle, kind, i.pad);
	if (!ret && i.pad)
		sure_bug(t, OP_BO_INFO, ret, "accepted pad %#x", i.pad);
	if (!ret && (i.size == 0 || (i.mmap_offset & (PAGE - 1))))
		sure_bug(t, OP_BO_INFO, ret, "size %#llx mmap_offset %#llx",
			 (unsigned long long)i.size, (unsigned long long)i.mmap_offset);
	if (ret == -EFAULT)
		sure_bug(t, OP_BO_INFO, ret, "no user pointer in the argument");
	if (ret && ret != -EINVAL && ret != -ENOENT && ret != -ENOMEM)
		odd(t, OP_BO_INFO, ret, "handle %u", i.handle);
}

void op_gem_close(struct tctx *t, int fi, int fd, unsigned int gen)
{
	struct drm_gem_close c = { 0 };
	uint64_t size;
	int kind, ret;

	c.handle = pick_handle(t, fi, 0, &size, &kind, 1);
	if (pct(t, 10))
		c.pad = v_nonzero32(t);
	ret = gem_close(fi, fd, &c);
	count(OP_GEM_CLOSE, ret);
	tlog(t, OP_GEM_CLOSE, fi, ret, "handle %u (kind %d)", c.handle, kind);
	if (!ret)
		kill_bo(fi, gen, c.handle);
	if (ret == -EFAULT)
		sure_bug(t, OP_GEM_CLOSE, ret, "no user pointer in the argument");
}

void op_mmap(struct tctx *t, int fi, int fd)
{
	struct bo_rec b = { 0 };
	struct bo_rec *pb;
	uint64_t off, len;
	int prot = PROT_READ | PROT_WRITE, flags = MAP_SHARED, m = nmut(t), ret;
	const char *invalid = NULL;
	void *p;

	pthread_mutex_lock(&pool_mu);
	pb = pick_bo_locked(t, pct(t, 90) ? fi : (int)rn(t, nfiles), 0, pct(t, 80), 1);
	if (pb)
		b = *pb;
	pthread_mutex_unlock(&pool_mu);
	if (!b.handle || !b.mmap_off)
		return;
	off = b.mmap_off;
	len = b.huge ? PAGE * (1 + rn(t, 4)) : b.size;
	if (b.huge)
		invalid = NULL;	/* shorter than the BO is allowed */
	while (m--) {
		switch (rn(t, 5)) {
		case 0: {
			static const int64_t d[] = { (int64_t)PAGE, -(int64_t)PAGE, 1, -1,
						     (int64_t)(PAGE * 2) };
			off += (uint64_t)d[rn(t, 5)];
			break;
		}
		case 1: {
			uint64_t l[] = { PAGE, b.size + PAGE, b.size - 1, b.size + 1,
					 1ull << 40, 0, b.size * 2 };
			len = l[rn(t, 7)];
			if (len > b.size && !b.huge)
				invalid = "length beyond the BO";
			break;
		}
		case 2:
			flags = MAP_PRIVATE;
			if (!b.imported)
				invalid = "MAP_PRIVATE of a shmem BO (COW)";
			break;
		case 3: {
			static const int pr[] = { PROT_READ, PROT_WRITE, PROT_NONE,
						  PROT_READ | PROT_EXEC };
			prot = pr[rn(t, 4)];
			break;
		}
		default:
			off = rnd(t) & ~(PAGE - 1);
		}
	}
	p = mmap(NULL, len, prot, flags, fd, (off_t)off);
	ret = p == MAP_FAILED ? -errno : 0;
	count(OP_MMAP, ret);
	tlog(t, OP_MMAP, fi, ret, "handle %u off %#" PRIx64 " (bo %#" PRIx64 ") len %#" PRIx64
	     " prot %d flags %d", b.handle, off, b.mmap_off, len, prot, flags);
	if (ret)
		return;
	if (invalid && off == b.mmap_off && len > (b.size + PAGE - 1) / PAGE * PAGE) {
		/* The record may be stale (handle and offset reused): ask. */
		struct drm_wafer_bo_info i = { .handle = b.handle };

		if (!raw_ioctl(fd, DRM_IOCTL_WAFER_BO_INFO, &i) && i.mmap_offset == off &&
		    i.size < len)
			odd(t, OP_MMAP, ret, "%s: mapped %#" PRIx64 " bytes of a %#llx-byte BO",
			    invalid, len, (unsigned long long)i.size);
	}
	else if (invalid && flags == MAP_PRIVATE && !b.imported)
		odd(t, OP_MMAP, ret, "%s", invalid);
	add_map(p, len, b.blob);
}

void op_munmap(struct tctx *t)
{
	int i, start = (int)rn(t, NMAP);
	void *addr = NULL;
	size_t len = 0;

	pthread_mutex_lock(&pool_mu);
	for (i = 0; i < NMAP; i++) {
		struct map_rec *m = &maps[(start + i) % NMAP];

		if (!m->live)
			continue;
		if (m->len > PAGE && pct(t, 30)) {
			/* Unmap a tail part, keep the head. */
			size_t keep = PAGE * (1 + rn(t, m->len / PAGE - 1));

			addr = (char *)m->addr + keep;
			len = m->len - keep;
			m->len = keep;
		} else {
			addr = m->addr;
			len = m->len;
			m->live = 0;
		}
		break;
	}
	pthread_mutex_unlock(&pool_mu);
	if (!addr)
		return;
	i = munmap(addr, len) ? -errno : 0;
	count(OP_MUNMAP, i);
	tlog(t, OP_MUNMAP, -1, i, "%p + %#zx", addr, len);
}

void op_touch(struct tctx *t)
{
	int i, start = (int)rn(t, NMAP), ret;
	uint8_t tmp[64];
	struct map_rec m = { 0 };
	size_t at;

	pthread_mutex_lock(&pool_mu);
	for (i = 0; i < NMAP; i++)
		if (maps[(start + i) % NMAP].live) {
			m = maps[(start + i) % NMAP];
			break;
		}
	pthread_mutex_unlock(&pool_mu);
	if (!m.live)
		return;
	/* Another thread may unmap it meanwhile: the copy is guarded. */
	at = rn(t, m.len > 64 ? m.len - 64 : 1) & ~3ull;
	if (m.blob || pct(t, 50)) {
		ret = guarded_copy(tmp, (char *)m.addr + at, sizeof(tmp));
	} else {
		for (i = 0; i < 16; i++)	/* token ids: mostly < vocab */
			((uint32_t *)tmp)[i] = pct(t, 90) ? (uint32_t)rn(t, 512) :
							     (uint32_t)rnd(t);
		ret = guarded_copy((char *)m.addr + at, tmp, sizeof(tmp));
	}
	count(OP_TOUCH, ret);
	tlog(t, OP_TOUCH, -1, ret, "%p + %#zx", m.addr, at);
}
