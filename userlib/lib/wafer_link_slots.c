// SPDX-License-Identifier: MIT
/*
 * A link's slots (wafer_link_slots.h): the device's own BOs where the NIC
 * registers a dma-buf, else memfd pages made dma-bufs by udmabuf and
 * PRIME-imported into the device.
 *
 * Why two: the NIC must register the memory a record lands in.  A GEM
 * shmem BO's mmap is VM_PFNMAP, which ibv_reg_mr() cannot pin, so the BO
 * itself can be registered only as a dma-buf (ibv_reg_dmabuf_mr(), on
 * NICs with dma-buf support: mlx5, efa, irdma, bnxt_re).  wafer.ko's
 * export is DRM's GEM PRIME one: an importer's attach pins the shmem
 * pages and maps their sg table for its device, and the dma-buf mmaps
 * through the BO.  Soft-RoCE (rxe) cannot register a dma-buf: there the
 * memory is ordinary memfd pages the NIC registers with ibv_reg_mr(), and
 * the device reads them through a dma-buf udmabuf makes of the same pages.
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

#include "drm/wafer_accel.h"
#include "wafer.h"
#include "wafer_internal.h"
#include "wafer_link_slots.h"

/* ---- the device's side: wafer.ko's ioctls ---- */

static int wafer_bo_export(int drm_fd, size_t bytes, uint32_t *handle, int *dmabuf)
{
	struct drm_wafer_bo_create c = { .size = bytes };

	if (drmIoctl(drm_fd, DRM_IOCTL_WAFER_BO_CREATE, &c))
		return -errno;
	*handle = c.handle;
	if (drmPrimeHandleToFD(drm_fd, c.handle, DRM_CLOEXEC | DRM_RDWR, dmabuf)) {
		int err = -errno;

		drmCloseBufferHandle(drm_fd, c.handle);
		*handle = 0;
		return err;
	}
	return 0;
}

static int udmabuf_import(int drm_fd, int memfd, size_t off, size_t bytes, uint32_t *handle)
{
	struct udmabuf_create c = { .memfd = (uint32_t)memfd, .flags = UDMABUF_FLAGS_CLOEXEC,
				    .offset = off, .size = bytes };
	int udev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC), dbuf, err = 0;

	if (udev < 0)
		return wafer_set_error(-errno, "link slots: open /dev/udmabuf: %s "
				       "(the kernel needs CONFIG_UDMABUF to share slots with the device)",
				       strerror(errno));
	dbuf = ioctl(udev, UDMABUF_CREATE, &c);
	if (dbuf < 0)
		err = wafer_set_error(-errno, "UDMABUF_CREATE: %s", strerror(errno));
	else if (drmPrimeFDToHandle(drm_fd, dbuf, handle))
		err = wafer_set_error(-errno, "PRIME import: %s", strerror(errno));
	if (dbuf >= 0)
		close(dbuf);
	close(udev);
	return err;
}

static void wafer_bo_close(int drm_fd, uint32_t handle)
{
	drmCloseBufferHandle(drm_fd, handle);
}

static const struct wlk_slot_ops wafer_dev_ops = {
	.bo_export = wafer_bo_export,
	.import_pages = udmabuf_import,
	.bo_close = wafer_bo_close,
};

/* ---- choosing the memory ---- */

/* What a NIC (or verbs) that cannot register a dma-buf answers. */
static int nic_cannot(int err)
{
	return err == -EOPNOTSUPP || err == -EINVAL || err == -EPROTONOSUPPORT || err == -ENOSYS;
}

static void say_fallback(struct wlk_slots *s, int err)
{
	if (err == -ENOSYS)
		snprintf(s->said, sizeof(s->said), "slots: udmabuf import (this libibverbs has "
			 "no ibv_reg_dmabuf_mr)");
	else
		snprintf(s->said, sizeof(s->said), "slots: udmabuf import (%s cannot register a "
			 "dma-buf: %s)", s->ops.nic ? s->ops.nic : "the NIC", strerror(-err));
}

/*
 * The device's BOs as the slots, each PRIME-exported, mapped into one
 * range and registered by the NIC at its address there (so the ring's
 * addresses are those of one range, as with memfd pages).  0; 1 when the
 * NIC cannot (S->said says why, nothing is left); or -errno.
 */
static int device_bos(struct wlk_slots *s)
{
	size_t total = s->n * s->bytes;
	unsigned int i, made = 0, reg = 0;
	int err = 0, nic = 0;
	void *va;

	va = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (va == MAP_FAILED)
		return wafer_set_error(-errno, "link slots: reserving %zu bytes: %s", total,
				       strerror(errno));
	s->base = va;
	for (i = 0; i < s->n && !err; i++) {
		unsigned char *at = s->base + (size_t)i * s->bytes;
		int fd = -1;

		err = s->ops.bo_export(s->drm_fd, s->bytes, &s->bo[i], &fd);
		if (err) {
			err = wafer_set_error(err, "link slots: a device BO for slot %u: %s", i,
					      strerror(-err));
			break;
		}
		made++;
		if (mmap(at, s->bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) ==
		    MAP_FAILED) {
			err = wafer_set_error(-errno, "link slots: mapping slot %u's BO: %s", i,
					      strerror(errno));
		} else {
			err = s->ops.reg_dmabuf(s->ops.ctx, i, fd, s->bytes, (uintptr_t)at);
			nic = err != 0;
			reg += !err;
		}
		close(fd);
	}
	if (!err) {
		s->kind = WLK_SLOTS_DEVICE_BO;
		snprintf(s->said, sizeof(s->said), "slots: the device's BOs, registered as "
			 "dma-bufs by %s", s->ops.nic ? s->ops.nic : "the NIC");
		return 0;
	}
	for (i = 0; i < reg && s->ops.dereg; i++)
		s->ops.dereg(s->ops.ctx, i);
	for (i = 0; i < made; i++)
		s->ops.bo_close(s->drm_fd, s->bo[i]);
	memset(s->bo, 0, sizeof(s->bo));
	munmap(s->base, total);
	s->base = NULL;
	if (nic && nic_cannot(err)) {
		say_fallback(s, err);
		return 1;
	}
	if (nic)
		err = wafer_set_error(err, "link slots: %s registering slot %u's dma-buf: %s",
				      s->ops.nic ? s->ops.nic : "the NIC", i - 1, strerror(-err));
	return err;
}

/* memfd pages as the slots; imported into the device when there is one. */
static int memfd_pages(struct wlk_slots *s)
{
	unsigned int i;
	int err;

	/* Sealed against shrinking: udmabuf requires it. */
	s->memfd = memfd_create("wafer-link", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (s->memfd < 0)
		return wafer_set_error(-errno, "link slots: memfd_create: %s", strerror(errno));
	if (ftruncate(s->memfd, (off_t)(s->n * s->bytes)) ||
	    fcntl(s->memfd, F_ADD_SEALS, F_SEAL_SHRINK))
		return wafer_set_error(-errno, "link slots: sizing the memfd: %s", strerror(errno));
	s->base = mmap(NULL, s->n * s->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, s->memfd, 0);
	if (s->base == MAP_FAILED) {
		s->base = NULL;
		return wafer_set_error(-errno, "link slots: mmap: %s", strerror(errno));
	}
	for (i = 0; s->drm_fd >= 0 && i < s->n; i++) {
		err = s->ops.import_pages(s->drm_fd, s->memfd, (size_t)i * s->bytes, s->bytes,
					  &s->bo[i]);
		if (err)
			return wafer_prefix_error(err, "link slots: slot %u", i);
	}
	return 0;
}

int wlk_slots_alloc(struct wlk_slots *s, unsigned int n, size_t bytes, int drm_fd,
		    int syncobjs, const struct wlk_slot_ops *ops)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned int i;
	int err = 1;

	memset(s, 0, sizeof(*s));
	s->memfd = -1;
	s->drm_fd = -1;
	if (n < 1 || n > WAFER_LINK_MAX_SLOTS)
		return wafer_set_error(-EINVAL, "link: slots %u out of range (1..%u)", n,
				       WAFER_LINK_MAX_SLOTS);
	if (bytes < 1 || bytes > WAFER_LINK_MAX_SLOT_BYTES)
		return wafer_set_error(-EINVAL, "link: slot_bytes %zu out of range (1..%u)",
				       bytes, WAFER_LINK_MAX_SLOT_BYTES);
	if (ops)
		s->ops = *ops;
	if (!s->ops.bo_export || !s->ops.import_pages || !s->ops.bo_close) {
		s->ops.bo_export = wafer_dev_ops.bo_export;
		s->ops.import_pages = wafer_dev_ops.import_pages;
		s->ops.bo_close = wafer_dev_ops.bo_close;
	}
	s->n = n;
	s->bytes = (bytes + page - 1) / page * page;
	s->drm_fd = drm_fd;
	if (drm_fd >= 0 && s->ops.reg_dmabuf)
		err = device_bos(s);
	if (err < 0)
		goto fail;
	if (err) {
		if (drm_fd < 0)
			snprintf(s->said, sizeof(s->said), "slots: host memory (no device)");
		else if (!s->ops.reg_dmabuf)
			snprintf(s->said, sizeof(s->said), "slots: udmabuf import");
		s->kind = drm_fd < 0 ? WLK_SLOTS_HOST : WLK_SLOTS_UDMABUF;
		err = memfd_pages(s);
		for (i = 0; !err && s->ops.reg_mem && i < s->n; i++) {
			err = s->ops.reg_mem(s->ops.ctx, i, s->base + (size_t)i * s->bytes, s->bytes);
			if (err)
				err = wafer_set_error(err, "link slots: registering slot %u: %s", i,
						      strerror(-err));
		}
		if (err)
			goto fail;
	}
	for (i = 0; drm_fd >= 0 && syncobjs && i < s->n; i++)
		if (drmSyncobjCreate(drm_fd, 0, &s->syncobj[i])) {
			err = wafer_set_error(-errno, "link slots: syncobj for slot %u: %s", i,
					      strerror(errno));
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
			s->ops.bo_close(s->drm_fd, s->bo[i]);
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
