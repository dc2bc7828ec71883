// SPDX-License-Identifier: MIT
/*
 * conformance: BO_CREATE, BO_INFO, mmap and PRIME.
 */
#include "conformance.h"

void test_bos(int fa, int fb)
{
	struct drm_wafer_bo_create c;
	struct drm_wafer_bo_info bi;
	struct bo a, b2;
	uint32_t foreign = 0, h;
	void *p;
	int ret, dmabuf, i;

	/* Valid create: handle written, size rounded up. */
	memset(&c, POISON, sizeof(c));
	c.size = 1;
	c.flags = 0;
	ret = ioc(fa, DRM_IOCTL_WAFER_BO_CREATE, &c);
	expect(ret, 0, "BO_CREATE size 1");
	wt_ok(!ret && c.handle != POISON32 && c.handle != 0 && c.size == 1,
	      "BO_CREATE output: handle %u written, size in untouched", c.handle);
	memset(&bi, POISON, sizeof(bi));
	bi.handle = c.handle;
	bi.pad = 0;
	ret = ioc(fa, DRM_IOCTL_WAFER_BO_INFO, &bi);
	expect(ret, 0, "BO_INFO valid");
	wt_ok(!ret && bi.size == 4096 && bi.mmap_offset != POISON64 && bi.mmap_offset &&
	      !(bi.mmap_offset & 4095) && !looks_like_kernel_ptr(bi.mmap_offset),
	      "BO_INFO output: size %" PRIu64 " (1 rounded to a page), mmap_offset 0x%" PRIx64
	      " page aligned", (uint64_t)bi.size, (uint64_t)bi.mmap_offset);
	gem_close(fa, c.handle);

	c = (struct drm_wafer_bo_create){ .size = 4096, .flags = 1 };
	expect(ioc(fa, DRM_IOCTL_WAFER_BO_CREATE, &c), -EINVAL, "BO_CREATE flags 0x1");
	c = (struct drm_wafer_bo_create){ .size = 4096, .flags = 0x80000000u };
	expect(ioc(fa, DRM_IOCTL_WAFER_BO_CREATE, &c), -EINVAL, "BO_CREATE flags 0x80000000");
	c = (struct drm_wafer_bo_create){ .size = 0 };
	expect(ioc(fa, DRM_IOCTL_WAFER_BO_CREATE, &c), -EINVAL, "BO_CREATE size 0");
	c = (struct drm_wafer_bo_create){ .size = info.max_bo_size + 1 };
	expect(ioc(fa, DRM_IOCTL_WAFER_BO_CREATE, &c), -EINVAL,
	       "BO_CREATE size max_bo_size + 1");
	c = (struct drm_wafer_bo_create){ .size = 1ull << 62 };
	expect(ioc(fa, DRM_IOCTL_WAFER_BO_CREATE, &c), -EINVAL, "BO_CREATE size 2^62");
	c = (struct drm_wafer_bo_create){ .size = ~0ull };
	expect(ioc(fa, DRM_IOCTL_WAFER_BO_CREATE, &c), -EINVAL,
	       "BO_CREATE size 2^64-1 (page rounding would wrap)");
	c = (struct drm_wafer_bo_create){ .size = ~0ull - 4094 };
	expect(ioc(fa, DRM_IOCTL_WAFER_BO_CREATE, &c), -EINVAL,
	       "BO_CREATE size 2^64-4095 (rounds up to 0)");

	/* Isolation: handles of file B, numbered above anything A has. */
	for (i = 0; i < 40; i++) {
		c = (struct drm_wafer_bo_create){ .size = 4096 };
		if (!ioc(fb, DRM_IOCTL_WAFER_BO_CREATE, &c))
			foreign = c.handle;
	}
	ret = bo_new(fa, &a, 8192);
	expect(ret, 0, "BO_CREATE + BO_INFO + mmap 8 KiB");
	if (ret)
		return;
	if (a.handle >= foreign)
		wt_diag("foreign handle %u is not above A's %u", foreign, a.handle);

	bi = (struct drm_wafer_bo_info){ .handle = a.handle, .pad = 1 };
	expect(ioc(fa, DRM_IOCTL_WAFER_BO_INFO, &bi), -EINVAL, "BO_INFO pad != 0");
	bi = (struct drm_wafer_bo_info){ .handle = 0 };
	expect(ioc(fa, DRM_IOCTL_WAFER_BO_INFO, &bi), -ENOENT, "BO_INFO handle 0");
	bi = (struct drm_wafer_bo_info){ .handle = 0xfffffff0u };
	expect(ioc(fa, DRM_IOCTL_WAFER_BO_INFO, &bi), -ENOENT, "BO_INFO handle never created");
	bi = (struct drm_wafer_bo_info){ .handle = foreign };
	expect(ioc(fa, DRM_IOCTL_WAFER_BO_INFO, &bi), -ENOENT,
	       "BO_INFO another file's handle %u (isolation)", foreign);
	c = (struct drm_wafer_bo_create){ .size = 4096 };
	ioc(fa, DRM_IOCTL_WAFER_BO_CREATE, &c);
	gem_close(fa, c.handle);
	bi = (struct drm_wafer_bo_info){ .handle = c.handle };
	expect(ioc(fa, DRM_IOCTL_WAFER_BO_INFO, &bi), -ENOENT, "BO_INFO closed handle");
	expect(gem_close(fa, c.handle), -EINVAL, "GEM_CLOSE closed handle (DRM core)");
	expect(gem_close(fa, foreign), -EINVAL, "GEM_CLOSE another file's handle (DRM core)");

	/* mmap */
	memset(a.map, 0x5a, a.size);
	wt_ok(((unsigned char *)a.map)[a.size - 1] == 0x5a, "mmap of a BO is readable and writable");
	p = mmap(NULL, a.size + 4096, PROT_READ, MAP_SHARED, fa, a.offset);
	expect(p == MAP_FAILED ? -errno : 0, -EINVAL, "mmap longer than the BO");
	if (p != MAP_FAILED)
		munmap(p, a.size + 4096);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fa, a.offset + 4096);
	expect(p == MAP_FAILED ? -errno : 0, -EINVAL, "mmap at an offset inside the BO");
	if (p != MAP_FAILED)
		munmap(p, 4096);
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fa, 0);
	expect(p == MAP_FAILED ? -errno : 0, -EINVAL, "mmap offset 0");
	if (p != MAP_FAILED)
		munmap(p, 4096);
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fa, a.offset);
	expect(p == MAP_FAILED ? -errno : 0, -EINVAL, "mmap MAP_PRIVATE (COW of a shared BO)");
	if (p != MAP_FAILED)
		munmap(p, 4096);
	bi = (struct drm_wafer_bo_info){ .handle = foreign };
	if (!ioc(fb, DRM_IOCTL_WAFER_BO_INFO, &bi)) {
		p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fa, bi.mmap_offset);
		expect(p == MAP_FAILED ? -errno : 0, -EACCES,
		       "mmap another file's BO offset on this file (isolation)");
		if (p != MAP_FAILED)
			munmap(p, 4096);
	}

	/* PRIME export/import between the two files. */
	ret = prime_export(fa, a.handle, DRM_CLOEXEC | DRM_RDWR, &dmabuf);
	expect(ret, 0, "PRIME export (HANDLE_TO_FD)");
	if (!ret) {
		struct bo ib = { 0 };

		ret = prime_import(fb, dmabuf, &h);
		expect(ret, 0, "PRIME import into another file (FD_TO_HANDLE)");
		bi = (struct drm_wafer_bo_info){ .handle = h };
		ret = ret ? ret : ioc(fb, DRM_IOCTL_WAFER_BO_INFO, &bi);
		wt_ok(!ret && bi.size == a.size, "BO_INFO of the imported BO: size %" PRIu64,
		      (uint64_t)bi.size);
		ib.map = mmap(NULL, bi.size, PROT_READ | PROT_WRITE, MAP_SHARED, fb, bi.mmap_offset);
		wt_ok(ib.map != MAP_FAILED && ((unsigned char *)ib.map)[100] == 0x5a,
		      "mmap of the imported BO shows the exporter's bytes");
		if (ib.map != MAP_FAILED) {
			((unsigned char *)ib.map)[200] = 0x33;
			wt_ok(((unsigned char *)a.map)[200] == 0x33,
			      "writes through the importer's map reach the exporter's");
			munmap(ib.map, bi.size);
		}
		{
			uint32_t h2 = 0;

			ret = prime_import(fb, dmabuf, &h2);
			wt_ok(!ret && h2 == h, "PRIME import twice gives the same handle (%u, %u)",
			      h, h2);
		}
		gem_close(fb, h);
		close(dmabuf);
	}
	expect(prime_export(fa, 0xfffffff0u, DRM_CLOEXEC, &dmabuf), -ENOENT,
	       "PRIME export bad handle");
	expect(prime_export(fa, foreign, DRM_CLOEXEC, &dmabuf), -ENOENT,
	       "PRIME export another file's handle (isolation)");
	expect(prime_export(fa, a.handle, 0x4, &dmabuf), -EINVAL, "PRIME export unknown flags");
	expect(prime_import(fa, -1, &h), -EBADF, "PRIME import fd -1");
	{
		int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);

		expect(prime_import(fa, nul, &h), -EINVAL, "PRIME import a non-dma-buf fd");
		close(nul);
	}

	/* A foreign exporter: a system dma-heap buffer imported as a BO. */
	{
		int heap = open("/dev/dma_heap/system", O_RDWR | O_CLOEXEC);
		struct dma_heap_allocation_data al = { .len = 8192, .fd_flags = O_RDWR | O_CLOEXEC };

		if (heap < 0 || ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &al)) {
			wt_diag("no system dma-heap: foreign import not tested");
		} else {
			ret = prime_import(fa, (int)al.fd, &h);
			expect(ret, 0, "PRIME import of a system dma-heap buffer");
			bi = (struct drm_wafer_bo_info){ .handle = h };
			ret = ret ? ret : ioc(fa, DRM_IOCTL_WAFER_BO_INFO, &bi);
			wt_ok(!ret && bi.size == 8192, "BO_INFO of the dma-heap BO (%d, %" PRIu64 ")",
			      ret, (uint64_t)bi.size);
			p = ret ? MAP_FAILED : mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED,
						    fa, bi.mmap_offset);
			wt_ok(p != MAP_FAILED, "mmap of the dma-heap BO through the device");
			if (p != MAP_FAILED)
				munmap(p, 8192);
			gem_close(fa, h);
			close((int)al.fd);
		}
		if (heap >= 0)
			close(heap);
	}

	/* The mapping outlives the handle. */
	ret = bo_new(fa, &b2, 4096);
	if (!ret) {
		gem_close(fa, b2.handle);
		memset(b2.map, 1, 4096);
		wt_ok(1, "a mapping stays usable after GEM_CLOSE of its handle");
		munmap(b2.map, 4096);
	}
	bo_free(fa, &a);
}
