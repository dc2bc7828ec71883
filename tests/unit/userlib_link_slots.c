// SPDX-License-Identifier: MIT
/*
 * Unit test: which memory a link's slots are (userlib/lib/wafer_link_slots.c),
 * with a fake device and a fake NIC in place of wafer.ko and verbs:
 *
 * - a NIC that registers dma-bufs gets the device's own BOs: every slot a
 *   BO, mapped where the ring says (bytes written there are the BO's), no
 *   memfd, and the slots say so;
 * - a NIC that refuses the dma-buf (-EOPNOTSUPP as Soft-RoCE, -EINVAL)
 *   and verbs without ibv_reg_dmabuf_mr (-ENOSYS) fall back to udmabuf
 *   imports of memfd pages, registered as host memory, and say which path
 *   and why; the BOs made for the try are closed and what was registered
 *   is undone, even when the refusal comes at a later slot;
 * - any other failure to register (-EFAULT) fails the slots, naming the
 *   slot and the NIC: no silent fall-back;
 * - no device: host memory, said.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/wafer_link_slots.h"
#include "wafer.h"
#include "wt_util.h"

#define FAKE_DRM 1000

static struct {
	int refuse;		/* reg_dmabuf's answer from slot refuse_at on */
	unsigned int refuse_at;
	int bo_fd[64];		/* the fake BOs' pages, by handle - 1 */
	unsigned int bos, closed, imports, dmabufs, mems, deregs;
} f;

static int fake_export(int drm_fd, size_t bytes, uint32_t *handle, int *dmabuf)
{
	int fd = memfd_create("fake-bo", MFD_CLOEXEC);

	if (drm_fd != FAKE_DRM || fd < 0 || ftruncate(fd, (off_t)bytes))
		return -EIO;
	f.bo_fd[f.bos] = fd;
	*handle = ++f.bos;
	*dmabuf = dup(fd);
	return 0;
}

static int fake_import(int drm_fd, int memfd, size_t off, size_t bytes, uint32_t *handle)
{
	(void)memfd, (void)bytes;
	if (drm_fd != FAKE_DRM)
		return -EIO;
	f.imports++;
	*handle = 1000 + (uint32_t)(off / (size_t)sysconf(_SC_PAGESIZE));
	return 0;
}

static void fake_close(int drm_fd, uint32_t handle)
{
	(void)drm_fd, (void)handle;
	f.closed++;
}

static int fake_reg_dmabuf(void *ctx, unsigned int i, int fd, size_t bytes, uint64_t iova)
{
	(void)ctx, (void)fd, (void)bytes, (void)iova;
	if (f.refuse && i >= f.refuse_at)
		return f.refuse;
	f.dmabufs++;
	return 0;
}

static int fake_reg_mem(void *ctx, unsigned int i, void *addr, size_t bytes)
{
	(void)ctx, (void)i, (void)addr, (void)bytes;
	f.mems++;
	return 0;
}

static void fake_dereg(void *ctx, unsigned int i)
{
	(void)ctx, (void)i;
	f.deregs++;
}

static const struct wlk_slot_ops ops = {
	.bo_export = fake_export, .import_pages = fake_import, .bo_close = fake_close,
	.nic = "fake0", .reg_dmabuf = fake_reg_dmabuf, .reg_mem = fake_reg_mem,
	.dereg = fake_dereg,
};

static void reset(int refuse, unsigned int at)
{
	unsigned int i;

	for (i = 0; i < f.bos; i++)
		close(f.bo_fd[i]);
	memset(&f, 0, sizeof(f));
	f.refuse = refuse;
	f.refuse_at = at;
}

static void test_device_bos(void)
{
	struct wlk_slots s;
	char got[8] = "";
	unsigned int i, bos = 1;
	int r;

	reset(0, 0);
	r = wlk_slots_alloc(&s, 4, 5000, FAKE_DRM, 0, &ops);
	wt_ok(!r && s.kind == WLK_SLOTS_DEVICE_BO && s.memfd < 0 && f.bos == 4 && f.dmabufs == 4 &&
	      !f.imports && !f.mems, "a NIC that registers dma-bufs gets the device's 4 BOs");
	wt_ok(!strcmp(s.said, "slots: the device's BOs, registered as dma-bufs by fake0"),
	      "and says so: %s", s.said);
	for (i = 0; i < 4; i++)
		bos &= s.bo[i] == i + 1;
	memcpy(s.base + 3 * s.bytes, "slot3", 6);
	wt_ok(bos && pread(f.bo_fd[3], got, 6, 0) == 6 && !strcmp(got, "slot3"),
	      "each slot is its BO, mapped in ring order (slot 3's bytes are BO 4's)");
	wlk_slots_free(&s);
	wt_ok(f.closed == 4, "freeing the slots closes the 4 BOs");
}

static void test_fallback(int refuse, unsigned int at, const char *said)
{
	struct wlk_slots s;
	int r;

	reset(refuse, at);
	r = wlk_slots_alloc(&s, 4, 5000, FAKE_DRM, 0, &ops);
	wt_ok(!r && s.kind == WLK_SLOTS_UDMABUF && s.memfd >= 0 && f.imports == 4 && f.mems == 4 &&
	      s.bo[0] == 1000, "%s at slot %u: udmabuf imports of memfd pages", strerror(-refuse),
	      at);
	wt_ok(f.closed == f.bos && f.deregs == at, "the %u BOs of the try closed, the %u "
	      "registrations undone", f.bos, f.deregs);
	wt_ok(!strcmp(s.said, said), "it says which path and why: %s", s.said);
	wlk_slots_free(&s);
}

static void test_failure(void)
{
	struct wlk_slots s;
	int r;

	reset(-EFAULT, 1);
	r = wlk_slots_alloc(&s, 4, 5000, FAKE_DRM, 0, &ops);
	wt_ok(r == -EFAULT && !f.imports && f.closed == f.bos && f.deregs == 1 &&
	      strstr(wafer_last_error(), "fake0 registering slot 1's dma-buf: Bad address"),
	      "another failure to register fails the slots, no fall-back: %s",
	      wafer_last_error());
	reset(0, 0);
	r = wlk_slots_alloc(&s, 2, 100, -1, 0, &ops);
	wt_ok(!r && s.kind == WLK_SLOTS_HOST && !f.bos && !f.imports && f.mems == 2 &&
	      !strcmp(s.said, "slots: host memory (no device)"), "no device: host memory: %s",
	      s.said);
	wlk_slots_free(&s);
}

int main(void)
{
	test_device_bos();
	test_fallback(-EOPNOTSUPP, 0,
		      "slots: udmabuf import (fake0 cannot register a dma-buf: Operation not supported)");
	test_fallback(-EINVAL, 2,
		      "slots: udmabuf import (fake0 cannot register a dma-buf: Invalid argument)");
	test_fallback(-ENOSYS, 0, "slots: udmabuf import (this libibverbs has no ibv_reg_dmabuf_mr)");
	test_failure();
	reset(0, 0);
	return wt_done();
}
