// SPDX-License-Identifier: MIT
/*
 * prime.c - uapi_fuzz: PRIME export and import, dma-buf and sync_file operations.
 */
#include "uapi_fuzz.h"

void op_prime_export(struct tctx *t, int fi, int fd)
{
	struct drm_prime_handle p = { .flags = DRM_CLOEXEC | (pct(t, 70) ? DRM_RDWR : 0) };
	uint64_t size;
	int kind, ret;

	p.handle = pick_handle(t, fi, 0, &size, &kind, 1);
	if (pct(t, 10))
		p.flags = (uint32_t)v_flags(t);
	ret = raw_ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p);
	count(OP_PRIME_EXPORT, ret);
	tlog(t, OP_PRIME_EXPORT, fi, ret, "handle %u (kind %d) flags %#x", p.handle, kind,
	     p.flags);
	if (ret == -EFAULT)
		sure_bug(t, OP_PRIME_EXPORT, ret, "no user pointer in the argument");
	if (!ret)
		add_prime(p.fd, size, 0);
}

void op_prime_import(struct tctx *t, int fi, int fd, unsigned int gen)
{
	struct drm_prime_handle p = { 0 };
	struct drm_wafer_bo_info i = { 0 };
	uint64_t size = 0;
	int ret;

	p.fd = peek_prime(t, 0, &size);
	if (p.fd < 0 || pct(t, 10)) {
		int v[] = { -1, fd, 0, 1 << 20 };

		p.fd = v[rn(t, 4)];
	}
	ret = raw_ioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p);
	count(OP_PRIME_IMPORT, ret);
	tlog(t, OP_PRIME_IMPORT, fi, ret, "fd %d -> handle %u", p.fd, ret ? 0 : p.handle);
	if (ret == -EFAULT)
		sure_bug(t, OP_PRIME_IMPORT, ret, "no user pointer in the argument");
	if (ret)
		return;
	i.handle = p.handle;
	if (!raw_ioctl(fd, DRM_IOCTL_WAFER_BO_INFO, &i))
		add_bo(fi, gen, p.handle, i.size, i.mmap_offset, 1, 0);
}

/* mmap of the dma-buf itself, DMA_BUF_IOCTL_SYNC, closing it. */
void op_prime_misc(struct tctx *t)
{
	uint64_t size = 0;
	int ret = 0, what = (int)rn(t, 3), fd;

	if (what == 0) {
		fd = take_prime(t, &size);
		if (fd < 0)
			return;
		ret = close(fd) ? -errno : 0;
	} else if (what == 1) {
		struct dma_buf_sync s = { .flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW };

		fd = peek_prime(t, 0, &size);
		if (fd < 0)
			return;
		if (pct(t, 20))
			s.flags = v_flags(t);
		ret = raw_ioctl(fd, DMA_BUF_IOCTL_SYNC, &s);
		if (!ret && (s.flags & DMA_BUF_SYNC_START)) {
			s.flags = (s.flags & ~DMA_BUF_SYNC_START) | DMA_BUF_SYNC_END;
			ioctl(fd, DMA_BUF_IOCTL_SYNC, &s);
		}
	} else {
		void *p;
		uint64_t len;

		fd = peek_prime(t, 0, &size);
		if (fd < 0 || !size || size > (64ull << 20))
			return;
		len = pct(t, 80) ? size : size + PAGE;
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 pct(t, 85) ? 0 : (off_t)PAGE);
		ret = p == MAP_FAILED ? -errno : 0;
		if (!ret)
			add_map(p, len, 0);
	}
	count(OP_PRIME_MISC, ret);
	tlog(t, OP_PRIME_MISC, -1, ret, "kind %d", what);
}
