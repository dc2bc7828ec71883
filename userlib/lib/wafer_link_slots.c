// SPDX-License-Identifier: MIT
/*
 * A link's slots: memfd pages, a udmabuf dma-buf per slot, PRIME-imported
 * into the device (wafer_link_slots.h).
 *
 * Why udmabuf: the NIC must register the memory a record lands in.  A GEM
 * shmem BO's mmap is VM_PFNMAP, which ibv_reg_mr() cannot pin, and
 * Soft-RoCE (rxe) cannot register a dma-buf (ibv_reg_dmabuf_mr() is for
 * NICs with dma-buf support: mlx5, efa, irdma, bnxt_re).  So the memory is
 * ordinary memfd pages the NIC registers with ibv_reg_mr(), and the device
 * reads them through a dma-buf udmabuf makes of the same pages.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/udmabuf.h>
#include <xf86drm.h>

#include "wafer.h"
#include "wafer_internal.h"
#include "wafer_link_slots.h"

static int import_slots(struct wlk_slots *s, int syncobjs)
{
	int udev, err = 0;
	unsigned int i;

	udev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (udev < 0)
		return wafer_set_error(-errno, "link slots: open /dev/udmabuf: %s "
				       "(the kernel needs CONFIG_UDMABUF to share slots with the device)",
				       strerror(errno));
	for (i = 0; i < s->n && !err; i++) {
		struct udmabuf_create c = {
			.memfd = (uint32_t)s->memfd,
			.flags = UDMABUF_FLAGS_CLOEXEC,
			.offset = (uint64_t)i * s->bytes,
			.size = s->bytes,
		};
		int dbuf = ioctl(udev, UDMABUF_CREATE, &c);

		if (dbuf < 0) {
			err = wafer_set_error(-errno, "link slots: UDMABUF_CREATE slot %u: %s", i,
					      strerror(errno));
			break;
		}
		if (drmPrimeFDToHandle(s->drm_fd, dbuf, &s->bo[i]))
			err = wafer_set_error(-errno, "link slots: PRIME import of slot %u: %s", i,
					      strerror(errno));
		close(dbuf);
		if (!err && syncobjs && drmSyncobjCreate(s->drm_fd, 0, &s->syncobj[i]))
			err = wafer_set_error(-errno, "link slots: syncobj for slot %u: %s", i,
					      strerror(errno));
	}
	close(udev);
	return err;
}

int wlk_slots_alloc(struct wlk_slots *s, unsigned int n, size_t bytes, int drm_fd,
		    int syncobjs)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int err;

	memset(s, 0, sizeof(*s));
	s->memfd = -1;
	s->drm_fd = -1;
	if (n < 1 || n > WAFER_LINK_MAX_SLOTS)
		return wafer_set_error(-EINVAL, "link: slots %u out of range (1..%u)", n,
				       WAFER_LINK_MAX_SLOTS);
	if (bytes < 1 || bytes > WAFER_LINK_MAX_SLOT_BYTES)
		return wafer_set_error(-EINVAL, "link: slot_bytes %zu out of range (1..%u)",
				       bytes, WAFER_LINK_MAX_SLOT_BYTES);
	s->n = n;
	s->bytes = (bytes + page - 1) / page * page;
	/* Sealed against shrinking: udmabuf requires it. */
	s->memfd = memfd_create("wafer-link", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (s->memfd < 0)
		return wafer_set_error(-errno, "link slots: memfd_create: %s", strerror(errno));
	if (ftruncate(s->memfd, (off_t)(s->n * s->bytes)) ||
	    fcntl(s->memfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		err = wafer_set_error(-errno, "link slots: sizing the memfd: %s", strerror(errno));
		goto fail;
	}
	s->base = mmap(NULL, s->n * s->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, s->memfd, 0);
	if (s->base == MAP_FAILED) {
		s->base = NULL;
		err = wafer_set_error(-errno, "link slots: mmap: %s", strerror(errno));
		goto fail;
	}
	if (drm_fd >= 0) {
		s->drm_fd = drm_fd;
		err = import_slots(s, syncobjs);
		if (err)
			goto fail;
	}
	return 0;
fail:
	wlk_slots_free(s);
	return err;
}

void wlk_slots_free(struct wlk_slots *s)
{
	unsigned int i;

	for (i = 0; s->drm_fd >= 0 && i < s->n; i++) {
		if (s->syncobj[i])
			drmSyncobjDestroy(s->drm_fd, s->syncobj[i]);
		if (s->bo[i])
			drmCloseBufferHandle(s->drm_fd, s->bo[i]);
	}
	if (s->base)
		munmap(s->base, s->n * s->bytes);
	if (s->memfd >= 0)
		close(s->memfd);
	memset(s, 0, sizeof(*s));
	s->memfd = -1;
	s->drm_fd = -1;
}

int wlk_syncobj_wait(const struct wlk_slots *s, uint32_t syncobj, int timeout_ms)
{
	int64_t until = (int64_t)wafer_now_ns() + (int64_t)timeout_ms * 1000000;
	uint32_t h = syncobj;

	if (!syncobj)
		return 0;
	if (s->drm_fd < 0)
		return wafer_set_error(-EINVAL, "link: a syncobj to wait on but no device (drm_fd)");
	/* Also waits for a fence to be attached: the job may not be queued yet. */
	if (drmSyncobjWait(s->drm_fd, &h, 1, until, DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT, NULL))
		return -errno;
	return 0;
}
