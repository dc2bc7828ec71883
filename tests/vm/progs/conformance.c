// SPDX-License-Identifier: MIT
/*
 * VM test: uapi conformance of the wafer DRM accel driver.
 *
 * For every ioctl (GET_INFO, BO_CREATE, BO_INFO, MODEL_LOAD, MODEL_UNLOAD,
 * CTX_CREATE, CTX_DESTROY, SUBMIT, WAIT), PRIME export/import and mmap of
 * a BO: the valid use, then each invalid field as its own named case that
 * expects its documented errno.  Output structs are poisoned (0xA5) first
 * and every output byte is checked.  Handles and ids of another open file
 * must not work (isolation).  After the invalid cases the shared model still
 * decodes correctly (compared with firmware-sim run in this process).
 *
 * Jobs that must stay queued (WAIT -ETIME, the in-flight limit, closing a
 * file with queued jobs) wait on an in-syncobj holding a vgem fence that the
 * test signals itself (vgem must be loaded; conformance.sh does it).
 *
 * Usage: conformance [main|limits|nospc]
 *   main    every case that runs with the default module parameters
 *   limits  per-file limits; run with small max_file_bo_mib,
 *           max_file_contexts and max_file_inflight
 *   nospc   MODEL_LOAD -ENOSPC; run with stages=1 sram_kib=64
 *
 * One "ok - " / "not ok - " line per case; exits 1 if any case failed.
 * CONFORMANCE.md maps every case to its errno.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <liburing.h>
#include <xf86drm.h>

#include "drm/wafer_accel.h"
#include "wafer.h"
#include "wfs_model.h"
#include "wfs_pack.h"
#include "wt_dev.h"
#include "wt_model.h"
#include "wt_util.h"

#define TOPK		4
#define POISON		0xA5
#define POISON32	0xA5A5A5A5u
#define POISON64	0xA5A5A5A5A5A5A5A5ull
#define NDECODE		24

/* vgem's uapi (not shipped in libdrm's headers). */
struct vgem_fence_attach {
	uint32_t handle;
	uint32_t flags;
	uint32_t out_fence;
	uint32_t pad;
};

struct vgem_fence_signal {
	uint32_t fence;
	uint32_t flags;
};

#define VGEM_FENCE_WRITE	0x1
#define VGEM_IOCTL_FENCE_ATTACH	DRM_IOWR(DRM_COMMAND_BASE + 0x1, struct vgem_fence_attach)
#define VGEM_IOCTL_FENCE_SIGNAL	DRM_IOW(DRM_COMMAND_BASE + 0x2, struct vgem_fence_signal)

/* ------------------------------------------------------------ helpers -- */

static int ioc(int fd, unsigned long req, void *arg)
{
	return drmIoctl(fd, req, arg) ? -errno : 0;
}

static const char *ename(int e)
{
	const char *n;

	if (!e)
		return "0";
	n = strerrorname_np(e < 0 ? -e : e);
	return n ? n : "E?";
}

/* One case: the call returned @got, the documented result is @want. */
static int expect(int got, int want, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int expect(int got, int want, const char *fmt, ...)
{
	char name[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	if (got == want)
		return wt_ok(1, "%s -> %s%s", name, want ? "-" : "", ename(want));
	return wt_ok(0, "%s -> %s%s (got %s%s)", name, want ? "-" : "", ename(want),
		     got ? "-" : "", ename(got));
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static int64_t deadline(int seconds)
{
	return now_ns() + (int64_t)seconds * 1000000000ll;
}

static int looks_like_kernel_ptr(uint64_t v)
{
	return (v >> 48) == 0xffff && v != ~0ull;
}

static int open_dev(void)
{
	int fd = open("/dev/accel/accel0", O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		printf("not ok - open /dev/accel/accel0: %s\n", strerror(errno));
		exit(1);
	}
	return fd;
}

struct bo {
	uint32_t handle;
	uint64_t size;
	uint64_t offset;
	void *map;
};

static int bo_new(int fd, struct bo *b, uint64_t size)
{
	struct drm_wafer_bo_create c = { .size = size };
	struct drm_wafer_bo_info i = { 0 };
	int ret = ioc(fd, DRM_IOCTL_WAFER_BO_CREATE, &c);

	memset(b, 0, sizeof(*b));
	if (ret)
		return ret;
	i.handle = c.handle;
	ret = ioc(fd, DRM_IOCTL_WAFER_BO_INFO, &i);
	if (ret)
		return ret;
	b->handle = c.handle;
	b->size = i.size;
	b->offset = i.mmap_offset;
	b->map = mmap(NULL, i.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, i.mmap_offset);
	if (b->map == MAP_FAILED) {
		b->map = NULL;
		return -errno;
	}
	return 0;
}

static int gem_close(int fd, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	return ioc(fd, DRM_IOCTL_GEM_CLOSE, &c);
}

static void bo_free(int fd, struct bo *b)
{
	if (b->map)
		munmap(b->map, b->size);
	if (b->handle)
		gem_close(fd, b->handle);
	memset(b, 0, sizeof(*b));
}

static int syncobj_new(int fd, uint32_t flags, uint32_t *h)
{
	struct drm_syncobj_create c = { .flags = flags };
	int ret = ioc(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c);

	*h = c.handle;
	return ret;
}

static void syncobj_free(int fd, uint32_t h)
{
	struct drm_syncobj_destroy d = { .handle = h };

	ioc(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
}

static int prime_export(int fd, uint32_t handle, uint32_t flags, int *out)
{
	struct drm_prime_handle p = { .handle = handle, .flags = flags, .fd = -1 };
	int ret = ioc(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p);

	*out = p.fd;
	return ret;
}

static int prime_import(int fd, int dmabuf, uint32_t *handle)
{
	struct drm_prime_handle p = { .fd = dmabuf };
	int ret = ioc(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p);

	*handle = p.handle;
	return ret;
}

/* ------------------------------------------------------ shared state -- */

static struct drm_wafer_device_info info;
static void *blob, *blob_ck;		/* valid blobs: plain, with checksum */
static size_t blob_len, blob_ck_len;
static uint32_t ref_tok[NDECODE + 1];	/* greedy decode from BOS */

static int vgem_fd = -1;

/* Opens the vgem device if it is there. */
static void vgem_open(void)
{
	char path[64];
	int i, fd;

	for (i = 0; i < 16 && vgem_fd < 0; i++) {
		drmVersionPtr v;

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		v = drmGetVersion(fd);
		if (v && !strcmp(v->name, "vgem"))
			vgem_fd = fd;
		else
			close(fd);
		if (v)
			drmFreeVersion(v);
	}
}

/*
 * A wafer syncobj holding an unsignalled vgem fence (signalled by
 * vgem_signal(*fence_id), or by vgem itself after 10 s).
 */
static int vgem_syncobj(int fd, uint32_t *syncobj, uint32_t *fence_id)
{
	struct drm_mode_create_dumb d = { .width = 1024, .height = 1, .bpp = 32 };
	struct vgem_fence_attach a = { .flags = VGEM_FENCE_WRITE };
	struct dma_buf_export_sync_file e = { .flags = DMA_BUF_SYNC_WRITE, .fd = -1 };
	struct drm_syncobj_handle imp = { .flags = DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE };
	int dmabuf = -1, ret;

	if (vgem_fd < 0)
		return -ENODEV;
	ret = ioc(vgem_fd, DRM_IOCTL_MODE_CREATE_DUMB, &d);
	if (ret)
		return ret;
	a.handle = d.handle;
	ret = ioc(vgem_fd, VGEM_IOCTL_FENCE_ATTACH, &a);
	if (!ret)
		ret = prime_export(vgem_fd, d.handle, DRM_CLOEXEC | DRM_RDWR, &dmabuf);
	gem_close(vgem_fd, d.handle);
	if (ret)
		return ret;
	if (ioctl(dmabuf, DMA_BUF_IOCTL_EXPORT_SYNC_FILE, &e))
		ret = -errno;
	close(dmabuf);
	if (ret)
		return ret;
	ret = syncobj_new(fd, 0, syncobj);
	if (!ret) {
		imp.handle = *syncobj;
		imp.fd = e.fd;
		ret = ioc(fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &imp);
	}
	close(e.fd);
	*fence_id = a.out_fence;
	return ret;
}

static void vgem_signal(uint32_t fence_id)
{
	struct vgem_fence_signal s = { .fence = fence_id };

	ioc(vgem_fd, VGEM_IOCTL_FENCE_SIGNAL, &s);
}

struct delayed_signal {
	pthread_t thread;
	uint32_t fence;
	int ms;
};

static void *delayed_signal_fn(void *arg)
{
	struct delayed_signal *d = arg;
	struct timespec ts = { d->ms / 1000, (long)(d->ms % 1000) * 1000000l };

	nanosleep(&ts, NULL);
	vgem_signal(d->fence);
	return NULL;
}

/* Loads the valid blob through a fresh BO; returns the model id or 0. */
static uint32_t load_model(int fd, int *err)
{
	struct drm_wafer_model_load ml = { 0 };
	struct bo b;
	int ret = bo_new(fd, &b, blob_len);

	if (!ret) {
		memcpy(b.map, blob, blob_len);
		ml.bo_handle = b.handle;
		ml.blob_size = blob_len;
		ret = ioc(fd, DRM_IOCTL_WAFER_MODEL_LOAD, &ml);
	}
	bo_free(fd, &b);
	if (err)
		*err = ret;
	return ret ? 0 : ml.model_id;
}

static uint32_t ctx_new(int fd, uint32_t model, uint32_t slots, uint32_t len, int *err)
{
	struct drm_wafer_ctx_create c = { .model_id = model, .kv_slots = slots, .ctx_len = len };
	int ret = ioc(fd, DRM_IOCTL_WAFER_CTX_CREATE, &c);

	if (err)
		*err = ret;
	return ret ? 0 : c.ctx_id;
}

static int wait_job(int fd, uint64_t seqno, int seconds, int *status)
{
	struct drm_wafer_wait w = { .seqno = seqno, .timeout_ns = deadline(seconds) };
	int ret = ioc(fd, DRM_IOCTL_WAFER_WAIT, &w);

	if (status)
		*status = ret ? 0 : w.status;
	return ret;
}

/*
 * Greedy decode of NDECODE tokens one job each on @slot, results written to
 * @out at @out_off; returns how many positions matched the reference.
 */
static uint32_t decode_check(int fd, uint32_t ctx, uint32_t slot, struct bo *in,
			     struct bo *out, uint64_t out_off)
{
	const struct drm_wafer_token_result *r = (const void *)((char *)out->map + out_off);
	uint32_t pos;

	memcpy(in->map, ref_tok, sizeof(ref_tok));
	for (pos = 0; pos < NDECODE; pos++) {
		struct drm_wafer_submit s = { .job = {
			.ctx_id = ctx, .slot = slot, .start_pos = pos, .n_tokens = 1,
			.top_k = TOPK, .in_handle = in->handle, .out_handle = out->handle,
			.in_offset = pos * 4, .out_offset = out_off } };
		int st;

		if (ioc(fd, DRM_IOCTL_WAFER_SUBMIT, &s) || wait_job(fd, s.seqno, 60, &st) || st)
			break;
		if (r->position != pos || r->argmax != ref_tok[pos + 1] || r->top_k != TOPK)
			break;
	}
	return pos;
}

/* A wafer module parameter from sysfs, or -1. */
static long param(const char *name)
{
	char path[128], buf[64];
	FILE *f;
	long v = -1;

	snprintf(path, sizeof(path), "/sys/module/wafer/parameters/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		v = strtol(buf, NULL, 0);
	fclose(f);
	return v;
}

/* ------------------------------------------------------------ GET_INFO -- */

/* GET_INFO of the file's model @id (0: its first); its model members. */
static int info_of(int fd, uint32_t id, struct drm_wafer_device_info *d)
{
	struct drm_wafer_get_info gi = { .info_ptr = (uintptr_t)d, .info_size = sizeof(*d),
					 .model_id = id };

	memset(d, 0, sizeof(*d));
	return ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi);
}

static void test_get_info(int fd)
{
	unsigned char page[4096];
	struct drm_wafer_get_info gi;
	struct drm_wafer_device_info *d = (void *)page;
	uint64_t known = DRM_WAFER_CAP_URING_SUBMIT | DRM_WAFER_CAP_INT4 | DRM_WAFER_CAP_INT8 |
			 DRM_WAFER_CAP_ALL_POSITIONS | DRM_WAFER_CAP_PRIME |
			 DRM_WAFER_CAP_WEIGHT_STREAM | DRM_WAFER_CAP_NOT_BEFORE |
			 DRM_WAFER_CAP_LAYER_PARTS | DRM_WAFER_CAP_EXPERT_GROUPS |
			 DRM_WAFER_CAP_EXPERT_PARALLEL;
	void *unmapped;
	size_t i;
	int ret, ok;

	/* Valid, with a 4 KiB buffer: exactly sizeof(info) written. */
	memset(page, POISON, sizeof(page));
	gi = (struct drm_wafer_get_info){ .info_ptr = (uintptr_t)page, .info_size = sizeof(page) };
	ret = ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi);
	expect(ret, 0, "GET_INFO valid, info_size 4096");
	memcpy(&info, page, sizeof(info));
	wt_ok(gi.info_size == sizeof(info) && gi.model_id == 0,
	      "GET_INFO info_size out is sizeof(info) %zu (got %u)", sizeof(info), gi.info_size);
	for (ok = 1, i = sizeof(info); i < sizeof(page); i++)
		ok &= page[i] == POISON;
	wt_ok(ok, "GET_INFO writes nothing beyond sizeof(info)");
	for (ok = 1, i = 0; i + 4 <= sizeof(info); i += 4) {
		uint32_t w;

		memcpy(&w, page + i, 4);
		if (w == POISON32) {
			wt_diag("GET_INFO: word at offset %zu still holds the poison", i);
			ok = 0;
		}
	}
	wt_ok(ok, "GET_INFO every output word written (no poison left in sizeof(info))");
	ok = !looks_like_kernel_ptr(d->caps) && !looks_like_kernel_ptr(d->sram_bytes_per_stage) &&
	     !looks_like_kernel_ptr(d->sram_bytes_free) && !looks_like_kernel_ptr(d->clock_hz) &&
	     !looks_like_kernel_ptr(d->max_bo_size);
	wt_ok(ok, "GET_INFO no kernel pointer in the output");
	wt_ok(d->size == sizeof(info) && d->api_version == DRM_WAFER_API_VERSION,
	      "GET_INFO size %u == %zu, api_version %u == %d", d->size, sizeof(info),
	      d->api_version, DRM_WAFER_API_VERSION);
	wt_ok(!(d->caps & ~known) && (d->caps & DRM_WAFER_CAP_PRIME),
	      "GET_INFO caps 0x%" PRIx64 " only known bits, PRIME set", (uint64_t)d->caps);
	wt_ok(d->profile <= DRM_WAFER_PROFILE_LPU && d->stages > 0 &&
	      d->sram_bytes_per_stage > 0 && d->clock_hz > 0 && d->macs_per_cycle > 0 &&
	      d->numa_node >= -1,
	      "GET_INFO profile %u, %u stages x %" PRIu64 " bytes, clock %" PRIu64
	      ", macs %u, numa %d plausible", d->profile, d->stages,
	      (uint64_t)d->sram_bytes_per_stage, (uint64_t)d->clock_hz, d->macs_per_cycle,
	      d->numa_node);
	wt_ok(d->sram_bytes_free > 0 &&
	      d->sram_bytes_free <= (uint64_t)d->stages * d->sram_bytes_per_stage,
	      "GET_INFO sram_bytes_free %" PRIu64 " in 1..stages*sram (%" PRIu64 ")",
	      (uint64_t)d->sram_bytes_free, (uint64_t)(d->stages * d->sram_bytes_per_stage));
	wt_ok(d->max_bo_size > 0 && d->max_models >= 1 && d->max_contexts >= 1 &&
	      d->max_inflight_jobs >= 1 && d->job_timeout_ms >= 1,
	      "GET_INFO limits: max_bo_size %" PRIu64 ", models %u, contexts %u, inflight %u, "
	      "timeout %u ms", (uint64_t)d->max_bo_size, d->max_models, d->max_contexts,
	      d->max_inflight_jobs, d->job_timeout_ms);
	wt_ok(d->max_tokens_per_job >= 1,
	      "GET_INFO max_tokens_per_job >= 1 (got %u)", d->max_tokens_per_job);
	wt_ok(d->max_in_syncobjs >= 1,
	      "GET_INFO max_in_syncobjs >= 1 (got %u)", d->max_in_syncobjs);

	/* The limits and sizes it reports are the module parameters in force. */
	{
		long bo_mib = param("max_file_bo_mib"), nctx = param("max_file_contexts");
		long infl = param("max_file_inflight"), tmo = param("job_timeout_ms");
		long kib = param("sram_kib"), nst = param("stages");

		/* Per-device lists: empty (unparsed, < 0) when not given. */
		kib = kib < 0 ? 0 : kib;
		nst = nst < 0 ? 0 : nst;

		wt_ok(bo_mib < 0 || d->max_bo_size == (uint64_t)bo_mib << 20,
		      "GET_INFO max_bo_size == max_file_bo_mib MiB (%ld)", bo_mib);
		wt_ok(nctx < 0 || d->max_contexts == (uint32_t)nctx,
		      "GET_INFO max_contexts == max_file_contexts (%ld)", nctx);
		wt_ok(infl < 0 || d->max_inflight_jobs == (uint32_t)infl,
		      "GET_INFO max_inflight_jobs == max_file_inflight (%ld)", infl);
		wt_ok(tmo < 0 || d->job_timeout_ms == (uint32_t)tmo,
		      "GET_INFO job_timeout_ms == job_timeout_ms parameter (%ld)", tmo);
		wt_ok(nst <= 0 || d->stages == (uint32_t)nst,
		      "GET_INFO stages == stages parameter (%ld)", nst);
		wt_ok(kib <= 0 ? !(d->sram_bytes_per_stage & 1023) :
		      d->sram_bytes_per_stage == (uint64_t)kib << 10,
		      "GET_INFO sram_bytes_per_stage %" PRIu64 " == sram_kib parameter (%ld KiB; "
		      "0: the profile's, whole KiB)", (uint64_t)d->sram_bytes_per_stage, kib);
	}

	/* Size negotiation: 8 bytes in, 8 written. */
	memset(page, POISON, sizeof(page));
	gi = (struct drm_wafer_get_info){ .info_ptr = (uintptr_t)page, .info_size = 8 };
	ret = ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi);
	for (ok = 1, i = 8; i < sizeof(page); i++)
		ok &= page[i] == POISON;
	expect(ret, 0, "GET_INFO info_size 8 (an old binary)");
	wt_ok(ok && gi.info_size == 8 && d->size == sizeof(info),
	      "GET_INFO info_size 8: 8 bytes written, size field %u, info_size out %u",
	      d->size, gi.info_size);
	memset(page, POISON, sizeof(page));
	gi = (struct drm_wafer_get_info){ .info_ptr = (uintptr_t)page, .info_size = 13 };
	ret = ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi);
	for (ok = 1, i = 13; i < sizeof(page); i++)
		ok &= page[i] == POISON;
	wt_ok(!ret && ok && gi.info_size == 13,
	      "GET_INFO info_size 13 (unaligned): exactly 13 bytes written (%d)", ret);

	gi = (struct drm_wafer_get_info){ .info_ptr = (uintptr_t)page, .info_size = sizeof(info),
					  .model_id = 1 };
	expect(ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi), -ENOENT,
	       "GET_INFO model_id 1 of a file that holds no model");
	gi.model_id = 0xffffffffu;
	expect(ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi), -ENOENT, "GET_INFO model_id 0xffffffff");
	ret = info_of(fd, 0, d);
	wt_ok(!ret && d->model_id == 0 && d->model_sram_bytes == 0 && d->model_layers == 0 &&
	      d->device_max_models >= d->max_models && d->max_models >= 1,
	      "GET_INFO without a model: model_id 0, model members 0, device_max_models %u >= "
	      "max_models %u", d->device_max_models, d->max_models);
	gi = (struct drm_wafer_get_info){ .info_ptr = (uintptr_t)page, .info_size = 0 };
	expect(ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi), -EINVAL, "GET_INFO info_size 0");
	gi = (struct drm_wafer_get_info){ .info_ptr = (uintptr_t)page, .info_size = 7 };
	expect(ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi), -EINVAL, "GET_INFO info_size 7 (< 8)");
	gi = (struct drm_wafer_get_info){ .info_ptr = 0, .info_size = sizeof(info) };
	expect(ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi), -EINVAL, "GET_INFO info_ptr NULL");
	unmapped = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(unmapped, 4096);
	gi = (struct drm_wafer_get_info){ .info_ptr = (uintptr_t)unmapped,
					  .info_size = sizeof(info) };
	expect(ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi), -EFAULT, "GET_INFO info_ptr unmapped");
	unmapped = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	gi = (struct drm_wafer_get_info){ .info_ptr = (uintptr_t)unmapped,
					  .info_size = sizeof(info) };
	expect(ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi), -EFAULT, "GET_INFO info_ptr read-only");
	munmap(unmapped, 4096);
	gi = (struct drm_wafer_get_info){ .info_ptr = 0xffff800000000000ull,
					  .info_size = sizeof(info) };
	expect(ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi), -EFAULT, "GET_INFO info_ptr kernel address");
	gi = (struct drm_wafer_get_info){ .info_ptr = (uintptr_t)page, .info_size = 0xffffffffu };
	memset(page, POISON, sizeof(page));
	ret = ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi);
	wt_ok(!ret && gi.info_size == sizeof(info) && page[sizeof(info)] == POISON,
	      "GET_INFO info_size 0xffffffff writes only sizeof(info) (%d, out %u)", ret,
	      gi.info_size);

	/* An ioctl number past the table. */
	{
		struct drm_wafer_get_info x = { 0 };

		expect(ioc(fd, DRM_IOWR(DRM_COMMAND_BASE + DRM_WAFER_WAIT + 1,
					struct drm_wafer_get_info), &x), -EINVAL,
		       "driver ioctl nr 0x%x (unknown)", DRM_WAFER_WAIT + 1);
	}
}

/* ----------------------------------------------------- BOs, mmap, PRIME -- */

static void test_bos(int fa, int fb)
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

/* ------------------------------------------------- MODEL_LOAD / UNLOAD -- */

struct corrupt {
	const char *name;
	size_t off;		/* byte offset in the blob, or SIZE_MAX */
	unsigned int width;	/* 4 or 8 */
	uint64_t val;
	int add;		/* add val instead of setting */
	int want;
};

#define HDR(f)	offsetof(struct wfs_blob_header, f)

/* MODEL_LOAD with every output member poisoned and the inputs given. */
static int model_load_poisoned(int fd, uint32_t bo, uint64_t offset, uint32_t first,
			       uint32_t count, struct drm_wafer_model_load *ml)
{
	memset(ml, POISON, sizeof(*ml));
	ml->bo_handle = bo;
	ml->flags = 0;
	ml->part = 0;
	ml->bo_offset = offset;
	ml->blob_size = blob_len;
	ml->layer_first = first;
	ml->layer_count = count;
	ml->expert_group = 0;
	ml->expert_first = 0;
	ml->expert_count = 0;
	return ioc(fd, DRM_IOCTL_WAFER_MODEL_LOAD, ml);
}

/*
 * Weight streaming where the model fits: it loads, says so, and unloads
 * (the driver frees the blob copy it kept for the firmware to read).
 */
static void test_model_load_stream(int fa, struct bo *b)
{
	struct drm_wafer_model_unload u = { 0 };
	struct drm_wafer_model_load ml;
	int ret;

	wt_ok(info.caps & DRM_WAFER_CAP_WEIGHT_STREAM && info.stream_bytes_per_cycle,
	      "GET_INFO caps has DRM_WAFER_CAP_WEIGHT_STREAM, stream_bytes_per_cycle %u",
	      info.stream_bytes_per_cycle);
	memcpy(b->map, blob, blob_len);
	memset(&ml, 0xa5, sizeof(ml));
	ml = (struct drm_wafer_model_load){ .bo_handle = b->handle, .blob_size = blob_len,
					    .flags = DRM_WAFER_LOAD_STREAM,
					    .sram_needed = POISON64, .model_id = POISON32 };
	ret = ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml);
	expect(ret, 0, "MODEL_LOAD DRM_WAFER_LOAD_STREAM");
	wt_ok(!ret && ml.model_flags == (DRM_WAFER_MODEL_EMBED | DRM_WAFER_MODEL_HEAD |
					 DRM_WAFER_MODEL_STREAM) && ml.n_layers == 5,
	      "MODEL_LOAD streaming output: model_flags 0x%x has DRM_WAFER_MODEL_STREAM",
	      ml.model_flags);
	u.model_id = ret ? 0 : ml.model_id;
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), 0, "MODEL_UNLOAD a streaming model");
}

/*
 * A second model beside the first (the device holds several as far as
 * SRAM allows): of the same file, then of another file, each unloaded
 * again with the first left loaded.
 */
static void test_model_load_beside(int fa, int fb, struct bo *b, uint32_t first)
{
	struct drm_wafer_model_load ml = { .bo_handle = b->handle, .bo_offset = 8,
					   .blob_size = blob_len };
	struct drm_wafer_model_unload u = { 0 };
	struct drm_wafer_device_info d;
	uint32_t other;
	int ret;

	ret = ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml);
	expect(ret, 0, "MODEL_LOAD a second model on the same file (beside the first)");
	wt_ok(!ret && ml.model_id && ml.model_id != first && ml.n_layers == 5,
	      "MODEL_LOAD second model: its own id %u (first %u), %u layers", ml.model_id,
	      first, ml.n_layers);
	ret = ret ? ret : info_of(fa, ml.model_id, &d);
	expect(ret, 0, "GET_INFO model_id of the second model");
	wt_ok(!ret && d.model_id == ml.model_id && d.model_sram_bytes == ml.sram_needed &&
	      d.model_layers == 5 && d.model_flags == ml.model_flags && d.model_max_ctx > 0 &&
	      d.model_kv_bytes_per_pos > 0 && d.models_loaded == 2,
	      "GET_INFO of the second model: model_id %u, sram %" PRIu64 " == sram_needed, "
	      "%u layers, models_loaded %u", d.model_id, (uint64_t)d.model_sram_bytes,
	      d.model_layers, d.models_loaded);
	ret = info_of(fa, 0, &d);
	wt_ok(!ret && d.model_id == first,
	      "GET_INFO model_id 0 describes the file's first model (%u, got %u)", first,
	      d.model_id);
	expect(info_of(fb, ml.model_id, &d), -ENOENT, "GET_INFO another file's model_id (isolation)");
	u.model_id = ml.model_id;
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), 0,
	       "MODEL_UNLOAD the second model (the first stays)");
	expect(info_of(fa, ml.model_id, &d), -ENOENT, "GET_INFO model_id of an unloaded model");
	ret = info_of(fa, first, &d);
	wt_ok(!ret && d.model_id == first && d.models_loaded == 1,
	      "GET_INFO of the first model after the second's unload (models_loaded %u)",
	      d.models_loaded);

	other = load_model(fb, &ret);
	expect(ret, 0, "MODEL_LOAD from another file beside this file's model");
	u.model_id = other;
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), -ENOENT,
	       "MODEL_UNLOAD another file's second model (isolation)");
	if (other)
		expect(ioc(fb, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), 0,
		       "MODEL_UNLOAD the other file's model (this file's stays)");
}

/*
 * part and expert_group (the former padding): values the driver refuses
 * before the firmware sees them, and expert groups on the dense test model,
 * which the firmware loads and the driver then refuses (and unloads).
 */
static void test_model_load_bad_parts(int fa, uint32_t bo)
{
	static const struct {
		uint32_t flags, part, group;
		const char *name;
	} c[] = {
		{ 0, DRM_WAFER_PART_MAX + 1, 0, "part 5 (unknown)" },
		{ 0, 0xffffffffu, 0, "part 0xffffffff" },
		{ DRM_WAFER_LOAD_STREAM, DRM_WAFER_PART_ATTN, 0, "part ATTN with LOAD_STREAM" },
		{ DRM_WAFER_LOAD_STREAM, DRM_WAFER_PART_FFN, 0, "part FFN with LOAD_STREAM" },
		{ 0, 0, DRM_WAFER_MAX_EXPERT_GROUP + 1, "expert_group 513 (above the most)" },
		{ 0, 0, 0xffffffffu, "expert_group 0xffffffff" },
		{ DRM_WAFER_LOAD_STREAM, 0, 2, "expert_group 2 with LOAD_STREAM" },
		{ 0, DRM_WAFER_PART_ATTN, 2, "expert_group 2 on an attention part" },
		{ 0, 0, 2, "expert_group 2 on a dense model" },
		{ 0, DRM_WAFER_PART_FFN, 1, "expert_group 1 on a dense model's FFN part" },
	};
	struct drm_wafer_model_load ml;
	struct drm_wafer_model_unload u = { 0 };
	size_t i;
	int ret;

	wt_ok((info.caps & DRM_WAFER_CAP_LAYER_PARTS) && (info.caps & DRM_WAFER_CAP_EXPERT_GROUPS),
	      "GET_INFO caps has DRM_WAFER_CAP_LAYER_PARTS and DRM_WAFER_CAP_EXPERT_GROUPS "
	      "(firmware 1.%u)", info.fw_version_minor);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		ml = (struct drm_wafer_model_load){ .bo_handle = bo, .blob_size = blob_len,
			.flags = c[i].flags, .part = c[i].part, .expert_group = c[i].group };
		ret = ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml);
		expect(ret, -EINVAL, "MODEL_LOAD %s", c[i].name);
		u.model_id = ml.model_id;
		if (!ret)
			ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u);
	}
}

static void test_model_load(int fa, int fb, uint32_t *model_id)
{
	const struct wfs_blob_header *h = blob;
	size_t sec0 = h->section_table_offset;
	struct corrupt cases[] = {
		{ "magic", HDR(magic), 4, 0x12345678, 0, -EINVAL },
		{ "version_major 2", HDR(version_major), 2, 2, 0, -EPROTO },
		{ "header_size 128", HDR(header_size), 4, 128, 0, -EINVAL },
		{ "flags bit 3 (reserved: weight streaming)", HDR(flags), 4, 1u << 3, 1, -EOPNOTSUPP },
		{ "flags bit 31", HDR(flags), 4, 1u << 31, 1, -EOPNOTSUPP },
		{ "total_size + 64", HDR(total_size), 8, 64, 1, -EINVAL },
		{ "checksum set without the checksum flag", HDR(checksum), 4, 1, 0, -EINVAL },
		{ "n_sections + 1", HDR(n_sections), 4, 1, 1, -EINVAL },
		{ "section_table_offset 2^63", HDR(section_table_offset), 8, 1ull << 63, 0, -EINVAL },
		{ "section_table_offset misaligned", HDR(section_table_offset), 8, 8, 1, -EINVAL },
		{ "dim 0", HDR(dim), 4, 0, 0, -EINVAL },
		{ "dim 2^31", HDR(dim), 4, 1u << 31, 0, -EINVAL },
		{ "hidden_dim 0", HDR(hidden_dim), 4, 0, 0, -EINVAL },
		{ "n_layers 0", HDR(n_layers), 4, 0, 0, -EINVAL },
		{ "n_layers 0xffffffff", HDR(n_layers), 4, 0xffffffffu, 0, -EINVAL },
		{ "n_heads 0", HDR(n_heads), 4, 0, 0, -EINVAL },
		{ "n_kv_heads 0", HDR(n_kv_heads), 4, 0, 0, -EINVAL },
		{ "head_size odd", HDR(head_size), 4, 1, 1, -EINVAL },
		{ "vocab_size 0", HDR(vocab_size), 4, 0, 0, -EINVAL },
		{ "vocab_size 2^31", HDR(vocab_size), 4, 1u << 31, 0, -EINVAL },
		{ "first_layer 1 with token input", HDR(first_layer), 4, 1, 0, -EINVAL },
		{ "input_kind 7", HDR(input_kind), 4, 7, 0, -EINVAL },
		{ "ffn_kind 1 (MoE) without the MoE flag", HDR(ffn_kind), 4, 1, 0, -EINVAL },
		{ "n_experts 8 on a dense model", HDR(n_experts), 4, 8, 0, -EINVAL },
		{ "reserved[0] != 0", HDR(reserved), 4, 1, 0, -EINVAL },
		{ "reserved[36] != 0", HDR(reserved) + 36 * 4, 4, 1, 0, -EINVAL },
		{ "section[0].kind", sec0 + 0, 4, 9, 0, -EINVAL },
		{ "section[0].index", sec0 + 4, 4, 3, 0, -EINVAL },
		{ "section[0].offset past the blob", sec0 + 8, 8, blob_len, 0, -EINVAL },
		{ "section[0].offset 2^64-64 (wraps)", sec0 + 8, 8, ~63ull, 0, -EINVAL },
		{ "section[0].size 2^64-64 (wraps)", sec0 + 16, 8, ~63ull, 0, -EINVAL },
		{ "section[0].reserved", sec0 + 24, 4, 1, 0, -EINVAL },
	};
	struct drm_wafer_model_load ml;
	struct bo b;
	uint32_t foreign, i;
	size_t bo_size = (blob_len + 4096 + 4095) & ~(size_t)4095;
	int ret;

	/* One BO, big enough for the blob at offset 0 and at offset 8 with slack. */
	ret = bo_new(fa, &b, bo_size);
	if (!expect(ret, 0, "BO for the model blob (%zu bytes)", blob_len))
		return;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct corrupt *k = &cases[i];
		unsigned char *dst = b.map;
		uint64_t v = 0;

		memcpy(dst, blob, blob_len);
		memcpy(&v, dst + k->off, k->width);
		v = k->add ? v + k->val : k->val;
		memcpy(dst + k->off, &v, k->width);
		ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = blob_len };
		expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), k->want,
		       "MODEL_LOAD corrupt blob: %s", k->name);
	}
	/* The first section's own header. */
	{
		struct { uint32_t kind, index; uint64_t offset, size; uint32_t r[2]; } se;

		memcpy(b.map, blob, blob_len);
		memcpy(&se, (char *)blob + sec0, sizeof(se));
		((unsigned char *)b.map)[se.offset] ^= 0xff;
		ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = blob_len };
		expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL,
		       "MODEL_LOAD corrupt blob: section 0 header magic");
	}
	/* Checksummed blob with one payload byte flipped. */
	memcpy(b.map, blob_ck, blob_ck_len);
	((unsigned char *)b.map)[blob_ck_len - 1] ^= 1;
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = blob_ck_len };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EBADMSG,
	       "MODEL_LOAD corrupt blob: checksum mismatch (last byte flipped)");

	/* Truncated blobs. */
	memcpy(b.map, blob, blob_len);
	{
		uint64_t sizes[] = { blob_len - 1, blob_len - 64, blob_len / 2, 256, 255, 8, 1 };

		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			ml = (struct drm_wafer_model_load){ .bo_handle = b.handle,
							    .blob_size = sizes[i] };
			expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL,
			       "MODEL_LOAD truncated blob: %" PRIu64 " of %zu bytes", sizes[i],
			       blob_len);
		}
	}
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = blob_len + 64 };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL,
	       "MODEL_LOAD blob_size 64 bytes more than the blob (trailing bytes)");

	/* Invalid fields. */
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = blob_len, .flags = 2 };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL, "MODEL_LOAD flags 0x2");
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = blob_len,
					    .flags = DRM_WAFER_LOAD_STREAM | 1u << 31 };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL,
	       "MODEL_LOAD flags STREAM + bit 31");
	test_model_load_bad_parts(fa, b.handle);
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = blob_len,
					    .layer_first = 2 };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL,
	       "MODEL_LOAD layer_first 2 without a layer_count");
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = blob_len,
					    .layer_first = 3, .layer_count = 5 };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL,
	       "MODEL_LOAD layers 3..7 of a 5-layer blob");
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = blob_len,
					    .layer_first = 0xffffffffu, .layer_count = 2 };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL,
	       "MODEL_LOAD layer_first 0xffffffff + layer_count 2 (wraps u32)");
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = 0 };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL, "MODEL_LOAD blob_size 0");
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = b.size + 8 };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL,
	       "MODEL_LOAD blob_size larger than the BO");
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = 1ull << 63 };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL, "MODEL_LOAD blob_size 2^63");
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = blob_len,
					    .bo_offset = 4 };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL,
	       "MODEL_LOAD bo_offset 4 (not 8-byte aligned)");
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = blob_len,
					    .bo_offset = b.size };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL, "MODEL_LOAD bo_offset at the BO end");
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = 64,
					    .bo_offset = ~7ull };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL,
	       "MODEL_LOAD bo_offset 2^64-8 + blob_size 64 (wraps)");
	ml = (struct drm_wafer_model_load){ .bo_handle = 0, .blob_size = blob_len };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -ENOENT, "MODEL_LOAD bo_handle 0");
	ml = (struct drm_wafer_model_load){ .bo_handle = 0xfffffff0u, .blob_size = blob_len };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -ENOENT, "MODEL_LOAD bo_handle never created");
	{
		struct bo fbo;

		ret = bo_new(fb, &fbo, bo_size);
		foreign = fbo.handle;
		if (!ret)
			memcpy(fbo.map, blob, blob_len);
		while (!ret && foreign <= b.handle + 4) {	/* above anything A has */
			struct drm_wafer_bo_create c = { .size = 4096 };

			ret = ioc(fb, DRM_IOCTL_WAFER_BO_CREATE, &c);
			foreign = c.handle;
		}
		ml = (struct drm_wafer_model_load){ .bo_handle = foreign, .blob_size = blob_len };
		expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -ENOENT,
		       "MODEL_LOAD another file's BO handle (isolation)");
		bo_free(fb, &fbo);
	}

	test_model_load_stream(fa, &b);

	/* Valid: at offset 8, with poisoned outputs. */
	memset(b.map, 0, b.size);
	memcpy((char *)b.map + 8, blob, blob_len);
	ret = model_load_poisoned(fa, b.handle, 8, 0, 0, &ml);
	expect(ret, 0, "MODEL_LOAD valid blob at bo_offset 8");
	wt_ok(!ret && ml.model_id && ml.model_id != POISON32 && ml.sram_needed != POISON64 &&
	      ml.sram_needed > 0 &&
	      ml.sram_needed <= (uint64_t)info.stages * info.sram_bytes_per_stage &&
	      ml.part == 0 && ml.bo_offset == 8 && ml.blob_size == blob_len,
	      "MODEL_LOAD output: model_id %u, sram_needed %" PRIu64 ", inputs untouched",
	      ml.model_id, (uint64_t)ml.sram_needed);
	wt_ok(!ret && ml.n_layers == 5 &&
	      ml.model_flags == (DRM_WAFER_MODEL_EMBED | DRM_WAFER_MODEL_HEAD) &&
	      ml.act_size == DRM_WAFER_ACT_REC_SIZE(64) && ml.expert_group == 0,
	      "MODEL_LOAD output of the whole model: %u layers, model_flags 0x%x, act_size %u",
	      ml.n_layers, ml.model_flags, ml.act_size);
	*model_id = ret ? 0 : ml.model_id;
	{
		struct drm_wafer_device_info d2 = { 0 };
		struct drm_wafer_get_info gi = { .info_ptr = (uintptr_t)&d2, .info_size = sizeof(d2) };

		ioc(fa, DRM_IOCTL_WAFER_GET_INFO, &gi);
		wt_ok(d2.sram_bytes_free + ml.sram_needed <= info.sram_bytes_free,
		      "GET_INFO sram_bytes_free drops by at least sram_needed after MODEL_LOAD "
		      "(%" PRIu64 " -> %" PRIu64 ")", (uint64_t)info.sram_bytes_free,
		      (uint64_t)d2.sram_bytes_free);
	}

	test_model_load_beside(fa, fb, &b, *model_id);
	bo_free(fa, &b);
}

static void test_model_unload_invalid(int fa, int fb, uint32_t model)
{
	struct drm_wafer_model_unload u;

	u = (struct drm_wafer_model_unload){ .model_id = model, .pad = 1 };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), -EINVAL, "MODEL_UNLOAD pad != 0");
	u = (struct drm_wafer_model_unload){ .model_id = 0 };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), -EINVAL, "MODEL_UNLOAD model_id 0");
	u = (struct drm_wafer_model_unload){ .model_id = model + 1 };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), -ENOENT, "MODEL_UNLOAD wrong model_id");
	u = (struct drm_wafer_model_unload){ .model_id = 0xffffffffu };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), -ENOENT,
	       "MODEL_UNLOAD model_id 0xffffffff");
	u = (struct drm_wafer_model_unload){ .model_id = model };
	expect(ioc(fb, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), -ENOENT,
	       "MODEL_UNLOAD another file's model (isolation)");
}

/* ------------------------------------------------- CTX_CREATE/DESTROY -- */

static uint32_t test_ctx(int fa, int fb, uint32_t model)
{
	struct drm_wafer_ctx_create c;
	struct drm_wafer_ctx_destroy d;
	uint32_t ctx, ctx2;
	int ret;

	memset(&c, POISON, sizeof(c));
	c.model_id = model;
	c.kv_slots = 4;
	c.ctx_len = 64;
	c.flags = 0;
	c.pad = 0;
	ret = ioc(fa, DRM_IOCTL_WAFER_CTX_CREATE, &c);
	expect(ret, 0, "CTX_CREATE 4 slots x 64");
	wt_ok(!ret && c.ctx_id && c.ctx_id != POISON32 && c.kv_bytes != POISON64 && c.kv_bytes &&
	      c.pad == 0 && c.model_id == model && c.kv_slots == 4 && c.ctx_len == 64,
	      "CTX_CREATE output: ctx_id %u, kv_bytes %" PRIu64 ", inputs untouched", c.ctx_id,
	      (uint64_t)c.kv_bytes);
	ctx = ret ? 0 : c.ctx_id;

#define CC(m, s, l, f, p) (struct drm_wafer_ctx_create){ .model_id = (m), .kv_slots = (s), \
		.ctx_len = (l), .flags = (f), .pad = (p) }
	c = CC(model, 1, 16, 1, 0);
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_CREATE, &c), -EINVAL, "CTX_CREATE flags 0x1");
	c = CC(model, 1, 16, 0, 1);
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_CREATE, &c), -EINVAL, "CTX_CREATE pad != 0");
	c = CC(model, 0, 16, 0, 0);
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_CREATE, &c), -EINVAL, "CTX_CREATE kv_slots 0");
	c = CC(model, 257, 16, 0, 0);
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_CREATE, &c), -EINVAL, "CTX_CREATE kv_slots 257");
	c = CC(model, 0xffffffffu, 16, 0, 0);
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_CREATE, &c), -EINVAL, "CTX_CREATE kv_slots 0xffffffff");
	c = CC(model, 1, 0, 0, 0);
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_CREATE, &c), -EINVAL, "CTX_CREATE ctx_len 0");
	c = CC(model, 1, ((const struct wfs_blob_header *)blob)->seq_len + 1, 0, 0);
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_CREATE, &c), -EINVAL,
	       "CTX_CREATE ctx_len the model's max + 1 (%u)", c.ctx_len);
	c = CC(model, 1, 0xffffffffu, 0, 0);
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_CREATE, &c), -EINVAL, "CTX_CREATE ctx_len 0xffffffff");
	c = CC(model, 256, ((const struct wfs_blob_header *)blob)->seq_len, 0, 0);
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_CREATE, &c), -ENOSPC,
	       "CTX_CREATE 256 slots x %u (KV cache larger than SRAM)", c.ctx_len);
	c = CC(model + 1, 1, 16, 0, 0);
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_CREATE, &c), -ENOENT, "CTX_CREATE wrong model_id");
	c = CC(0, 1, 16, 0, 0);
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_CREATE, &c), -ENOENT, "CTX_CREATE model_id 0");
	c = CC(model, 1, 16, 0, 0);
	expect(ioc(fb, DRM_IOCTL_WAFER_CTX_CREATE, &c), -ENOENT,
	       "CTX_CREATE on another file's model (isolation)");

	/* CTX_DESTROY */
	ctx2 = ctx_new(fa, model, 1, 16, &ret);
	expect(ret, 0, "CTX_CREATE 1 slot x 16");
	d = (struct drm_wafer_ctx_destroy){ .ctx_id = ctx2, .pad = 1 };
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_DESTROY, &d), -EINVAL, "CTX_DESTROY pad != 0");
	d = (struct drm_wafer_ctx_destroy){ .ctx_id = 0 };
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_DESTROY, &d), -ENOENT, "CTX_DESTROY ctx_id 0");
	d = (struct drm_wafer_ctx_destroy){ .ctx_id = 0xffffffffu };
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_DESTROY, &d), -ENOENT, "CTX_DESTROY ctx_id 0xffffffff");
	d = (struct drm_wafer_ctx_destroy){ .ctx_id = ctx2 };
	expect(ioc(fb, DRM_IOCTL_WAFER_CTX_DESTROY, &d), -ENOENT,
	       "CTX_DESTROY another file's context (isolation)");
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_DESTROY, &d), 0, "CTX_DESTROY valid");
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_DESTROY, &d), -ENOENT, "CTX_DESTROY twice");
	return ctx;
}

/* ------------------------------------------------------------- SUBMIT -- */

static struct drm_wafer_job job_base;

static int submit(int fd, const struct drm_wafer_job *j, uint64_t *seqno)
{
	struct drm_wafer_submit s = { .job = *j, .seqno = POISON64 };
	int ret = ioc(fd, DRM_IOCTL_WAFER_SUBMIT, &s);

	if (seqno)
		*seqno = s.seqno;
	return ret;
}

/* A job that must be rejected; if it was accepted, reap it. */
static void reject(int fd, const struct drm_wafer_job *j, int want, const char *name)
{
	uint64_t seqno;
	int ret = submit(fd, j, &seqno);

	expect(ret, want, "SUBMIT %s", name);
	if (!ret)
		wait_job(fd, seqno, 60, NULL);
}

/* The producer of test_wait_submit(): submits once @tid sleeps in SUBMIT. */
struct wait_submit_producer {
	int fd;
	pid_t tid;
	uint32_t sync;
	int slept;	/* out: the waiting thread was seen asleep in an ioctl */
	int ret;	/* out: the producer's SUBMIT */
};

/* Whether thread @tid sleeps (state S) in ioctl(2). */
static int asleep_in_ioctl(pid_t tid)
{
	char path[64], buf[256], *p;
	int nr = -1, ok;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	ok = fscanf(f, "%d", &nr) == 1 && nr == SYS_ioctl;
	fclose(f);
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	return ok && p && p[1] == ' ' && p[2] == 'S';
}

static void *wait_submit_produce(void *arg)
{
	struct wait_submit_producer *pr = arg;
	struct drm_wafer_job j = job_base;
	int i;

	for (i = 0; i < 400 && !pr->slept; i++) {
		pr->slept = asleep_in_ioctl(pr->tid);
		usleep(10000);
	}
	j.out_syncobj = pr->sync;
	pr->ret = submit(pr->fd, &j, NULL);
	return NULL;
}

/*
 * DRM_WAFER_JOB_WAIT_SUBMIT: an in-syncobj with no fence is waited for
 * until a job puts one there (another thread here, as another device's
 * submission from io_uring's worker would), or 5 s (-ETIME).
 */
static void test_wait_submit(int fa, uint32_t sync_sig, uint32_t sync_nofence)
{
	struct wait_submit_producer pr = { .fd = fa, .tid = (pid_t)syscall(SYS_gettid) };
	struct drm_wafer_job j = job_base;
	pthread_t th;
	uint64_t seq;
	int ret, st;

	j.flags |= DRM_WAFER_JOB_WAIT_SUBMIT;
	reject(fa, &j, -EINVAL, "WAIT_SUBMIT without in-syncobjs");
	j.in_syncobjs = (uintptr_t)&sync_nofence;
	j.in_syncobj_count = 1;
	reject(fa, &j, -ETIME, "WAIT_SUBMIT on an in-syncobj no job fills (5 s)");
	j.in_syncobjs = (uintptr_t)&sync_sig;
	ret = submit(fa, &j, &seq);
	if (!ret)
		ret = wait_job(fa, seq, 60, &st);
	expect(ret ? ret : st, 0, "SUBMIT WAIT_SUBMIT on a signalled in-syncobj");

	if (syncobj_new(fa, 0, &pr.sync))
		return;
	j.in_syncobjs = (uintptr_t)&pr.sync;
	if (pthread_create(&th, NULL, wait_submit_produce, &pr)) {
		wt_ok(0, "pthread_create for the WAIT_SUBMIT producer");
		syncobj_free(fa, pr.sync);
		return;
	}
	ret = submit(fa, &j, &seq);
	pthread_join(th, NULL);
	wt_ok(pr.slept, "WAIT_SUBMIT: the submission slept until another thread's job "
	      "filled its in-syncobj");
	expect(pr.ret, 0, "SUBMIT of the job that fills the in-syncobj");
	if (!ret)
		ret = wait_job(fa, seq, 60, &st);
	expect(ret ? ret : st, 0, "SUBMIT WAIT_SUBMIT on an in-syncobj filled while it waits");
	syncobj_free(fa, pr.sync);

	j = (struct drm_wafer_job){ .ctx_id = job_base.ctx_id, .slot = 3,
				    .flags = DRM_WAFER_JOB_NOP | DRM_WAFER_JOB_WAIT_SUBMIT,
				    .in_syncobjs = (uintptr_t)&sync_sig, .in_syncobj_count = 1 };
	ret = submit(fa, &j, &seq);
	if (!ret)
		ret = wait_job(fa, seq, 60, &st);
	expect(ret ? ret : st, 0, "SUBMIT NOP with WAIT_SUBMIT");
}

/*
 * DRM_IOCTL_WAFER_SUBMIT as userspace built before drm_wafer_job.layer
 * sends it: an 80-byte struct, the seqno at byte 72.  It still runs, and
 * the seqno comes back where that userspace reads it.
 */
struct submit_v1 {
	unsigned char job[72];
	uint64_t seqno;
};

#define SUBMIT_V1	DRM_IOWR(DRM_COMMAND_BASE + DRM_WAFER_SUBMIT, struct submit_v1)

static void test_submit_v1(int fa)
{
	struct submit_v1 s;
	int ret, st = -1;

	memcpy(s.job, &job_base, sizeof(s.job));
	s.seqno = POISON64;
	ret = ioc(fa, SUBMIT_V1, &s);
	expect(ret, 0, "SUBMIT of the old 80-byte size (seqno at byte 72)");
	ret = ret ? ret : wait_job(fa, s.seqno, 60, &st);
	expect(ret ? ret : st, 0, "WAIT for the old-size SUBMIT's seqno %" PRIu64,
	       (uint64_t)s.seqno);
	memcpy(s.job, &job_base, sizeof(s.job));
	memcpy(s.job + offsetof(struct drm_wafer_job, flags), &(uint32_t){ 0x20 }, 4);
	expect(ioc(fa, SUBMIT_V1, &s), -EINVAL, "SUBMIT of the old size, flags 0x20");
}

static void test_submit(int fa, int fb, uint32_t ctx, struct bo *in, struct bo *out)
{
	struct drm_wafer_job j;
	struct drm_wafer_submit s;
	uint32_t foreign_bo = 0, foreign_sync = 0, sync_sig, sync_nofence, many[65];
	uint32_t *syncs_ro;
	uint64_t seq1, seq2;
	void *unmapped;
	int ret, st, i;

	memcpy(in->map, ref_tok, sizeof(ref_tok));
	job_base = (struct drm_wafer_job){ .ctx_id = ctx, .slot = 0, .start_pos = 0,
		.n_tokens = 1, .top_k = TOPK, .in_handle = in->handle, .out_handle = out->handle };

	/* Valid, with poisoned seqno; consecutive seqnos. */
	memset(&s, POISON, sizeof(s));
	s.job = job_base;
	ret = ioc(fa, DRM_IOCTL_WAFER_SUBMIT, &s);
	expect(ret, 0, "SUBMIT valid");
	seq1 = s.seqno;
	wt_ok(!ret && s.seqno != POISON64 && s.seqno > 0 && !memcmp(&s.job, &job_base, sizeof(j)),
	      "SUBMIT output: seqno %" PRIu64 ", job untouched", (uint64_t)s.seqno);
	ret = submit(fa, &job_base, &seq2);
	wt_ok(!ret && seq2 == seq1 + 1, "SUBMIT seqnos increase by one (%" PRIu64 ", %" PRIu64 ")",
	      seq1, seq2);
	wait_job(fa, seq1, 60, NULL);
	wait_job(fa, seq2, 60, &st);

#define BAD(field, value, want, name) do { j = job_base; j.field = (value); \
		reject(fa, &j, (want), (name)); } while (0)
	BAD(flags, 0x20, -EINVAL, "flags 0x20 (unknown)");
	BAD(flags, DRM_WAFER_JOB_TIMES, -EINVAL, "TIMES without times_len");
	BAD(flags, DRM_WAFER_JOB_IN_ACT, -EINVAL,
	    "flags IN_ACT on a model whose layers start it (it takes token ids)");
	j = job_base;
	j.flags = DRM_WAFER_JOB_OUT_ACT;
	j.top_k = 0;
	reject(fa, &j, -EINVAL, "flags OUT_ACT on a model whose layers end it (it gives results)");
	BAD(flags, 0x80000000u, -EINVAL, "flags 0x80000000");
	BAD(flags, DRM_WAFER_JOB_LAYER, -EINVAL, "flags LAYER on a model of whole layers");
	BAD(layer, 1, -EINVAL, "layer 1 without DRM_WAFER_JOB_LAYER");
	BAD(pad, 1, -EINVAL, "pad != 0");
	test_submit_v1(fa);
	BAD(times_len, 8, -EINVAL, "times_len without TIMES");
	BAD(ctx_id, 0, -ENOENT, "ctx_id 0");
	BAD(ctx_id, 0xffffffffu, -ENOENT, "ctx_id never created");
	BAD(n_tokens, 0, -EINVAL, "n_tokens 0");
	BAD(n_tokens, 0xffffffffu, -EINVAL, "n_tokens 0xffffffff");
	BAD(top_k, DRM_WAFER_MAX_TOPK + 1, -EINVAL, "top_k MAX_TOPK + 1");
	BAD(top_k, 0xffffffffu, -EINVAL, "top_k 0xffffffff");
	BAD(slot, 4, -EINVAL, "slot == kv_slots");
	BAD(slot, 0xffffffffu, -EINVAL, "slot 0xffffffff");
	BAD(start_pos, 64, -EINVAL, "start_pos == ctx_len");
	BAD(start_pos, 0xffffffffu, -EINVAL, "start_pos 0xffffffff (start_pos + n_tokens wraps u32)");
	j = job_base;
	j.start_pos = 60;
	j.n_tokens = 5;
	reject(fa, &j, -EINVAL, "start_pos + n_tokens == ctx_len + 1");
	j = job_base;
	j.n_tokens = 65;
	reject(fa, &j, -EINVAL, "n_tokens ctx_len + 1");
	if (info.max_tokens_per_job >= 1 && info.max_tokens_per_job < 64) {
		j = job_base;
		j.n_tokens = info.max_tokens_per_job + 1;
		reject(fa, &j, -EINVAL, "n_tokens max_tokens_per_job + 1");
	} else {
		wt_ok(info.max_tokens_per_job >= 64,
		      "SUBMIT n_tokens max_tokens_per_job + 1 -> -EINVAL (max_tokens_per_job %u "
		      "is above ctx_len 64: covered by n_tokens ctx_len + 1)",
		      info.max_tokens_per_job);
	}
	BAD(in_offset, 2, -EINVAL, "in_offset 2 (not 4-byte aligned)");
	BAD(out_offset, 4, -EINVAL, "out_offset 4 (not 8-byte aligned)");
	BAD(in_offset, in->size, -EINVAL, "in_offset at the input BO's end");
	j = job_base;
	j.in_offset = in->size - 4;
	j.n_tokens = 2;
	reject(fa, &j, -EINVAL, "in tokens run past the input BO (offset size-4, 2 tokens)");
	BAD(in_offset, ~3ull, -EINVAL, "in_offset 2^64-4 (offset + length wraps)");
	BAD(out_offset, out->size - 8, -EINVAL, "result runs past the output BO");
	BAD(out_offset, ~7ull, -EINVAL, "out_offset 2^64-8 (offset + length wraps)");
	j = job_base;
	j.flags = DRM_WAFER_JOB_ALL_POSITIONS;
	j.n_tokens = 64;
	j.top_k = DRM_WAFER_MAX_TOPK;	/* 64 x 272 bytes > the 4 KiB output BO */
	reject(fa, &j, -EINVAL, "ALL_POSITIONS results larger than the output BO");
	BAD(in_handle, 0, -ENOENT, "in_handle 0");
	BAD(in_handle, 0xfffffff0u, -ENOENT, "in_handle never created");
	BAD(out_handle, 0xfffffff0u, -ENOENT, "out_handle never created");
	{
		struct drm_wafer_bo_create c = { .size = 4096 };

		for (i = 0; i < 80; i++)
			if (!ioc(fb, DRM_IOCTL_WAFER_BO_CREATE, &c))
				foreign_bo = c.handle;
	}
	BAD(in_handle, foreign_bo, -ENOENT, "another file's in_handle (isolation)");
	BAD(out_handle, foreign_bo, -ENOENT, "another file's out_handle (isolation)");

	/* NOP: a context's slot and nothing else; completed at once. */
	{
		const struct drm_wafer_job nop = { .ctx_id = ctx, .slot = 3,
						   .flags = DRM_WAFER_JOB_NOP };
		struct drm_wafer_wait w = { 0 };
		uint64_t seq;

		ret = submit(fa, &nop, &seq);
		expect(ret, 0, "SUBMIT NOP (context and slot only)");
		if (!ret) {
			w = (struct drm_wafer_wait){ .seqno = seq, .timeout_ns = deadline(60) };
			ret = ioc(fa, DRM_IOCTL_WAFER_WAIT, &w);
		}
		wt_ok(!ret && w.status == 0 && w.device_ns == 0,
		      "SUBMIT NOP completes with status 0 and no device time (wait %d, status %d, "
		      "%" PRIu64 " ns)", ret, w.status, (uint64_t)w.device_ns);
#define NOP_BAD(field, value, name) do { j = nop; j.field = (value); \
		reject(fa, &j, -EINVAL, (name)); } while (0)
		NOP_BAD(n_tokens, 1, "NOP with n_tokens 1");
		NOP_BAD(start_pos, 1, "NOP with start_pos 1");
		NOP_BAD(top_k, 1, "NOP with top_k 1");
		NOP_BAD(in_handle, in->handle, "NOP with an input BO");
		NOP_BAD(out_handle, out->handle, "NOP with an output BO");
		NOP_BAD(out_offset, 8, "NOP with out_offset 8");
		NOP_BAD(flags, DRM_WAFER_JOB_NOP | DRM_WAFER_JOB_ALL_POSITIONS,
			"NOP with ALL_POSITIONS");
		NOP_BAD(flags, DRM_WAFER_JOB_NOP | DRM_WAFER_JOB_IN_ACT, "NOP with IN_ACT");
		NOP_BAD(slot, 4, "NOP on slot == kv_slots");
#undef NOP_BAD
	}

	/* Syncobjs. */
	syncobj_new(fa, DRM_SYNCOBJ_CREATE_SIGNALED, &sync_sig);
	syncobj_new(fa, 0, &sync_nofence);
	for (i = 0; i < 8; i++)
		syncobj_new(fb, DRM_SYNCOBJ_CREATE_SIGNALED, &foreign_sync);
	for (i = 0; i < 65; i++)
		many[i] = sync_sig;
	j = job_base;
	j.in_syncobjs = (uintptr_t)many;
	j.in_syncobj_count = 1;
	{
		uint64_t seq;

		ret = submit(fa, &j, &seq);
		if (!ret)
			ret = wait_job(fa, seq, 60, &st);
		expect(ret ? ret : st, 0, "SUBMIT one signalled in-syncobj");
	}
	if (info.max_in_syncobjs >= 1 && info.max_in_syncobjs <= 64) {
		uint64_t seq;

		j.in_syncobj_count = info.max_in_syncobjs;
		ret = submit(fa, &j, &seq);
		if (!ret)
			ret = wait_job(fa, seq, 60, &st);
		expect(ret ? ret : st, 0, "SUBMIT in_syncobj_count == max_in_syncobjs (%u)",
		       info.max_in_syncobjs);
	}
	j.in_syncobj_count = info.max_in_syncobjs + 1;
	{
		char name[96];

		snprintf(name, sizeof(name), "in_syncobj_count max_in_syncobjs + 1 (%u)",
			 info.max_in_syncobjs + 1);
		reject(fa, &j, -EINVAL, name);
	}
	j.in_syncobj_count = 65;
	reject(fa, &j, -EINVAL, "in_syncobj_count 65");
	j.in_syncobj_count = 0xffffffffu;
	reject(fa, &j, -EINVAL, "in_syncobj_count 0xffffffff");
	j = job_base;
	j.in_syncobj_count = 1;
	j.in_syncobjs = 0;
	reject(fa, &j, -EINVAL, "in_syncobjs NULL with count 1");
	unmapped = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(unmapped, 4096);
	j.in_syncobjs = (uintptr_t)unmapped;
	reject(fa, &j, -EFAULT, "in_syncobjs unmapped");
	j.in_syncobjs = 0xffff800000000000ull;
	reject(fa, &j, -EFAULT, "in_syncobjs kernel address");
	/* The last handle of the array on an unmapped page. */
	syncs_ro = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap((char *)syncs_ro + 4096, 4096);
	syncs_ro[1023] = sync_sig;
	j.in_syncobjs = (uintptr_t)&syncs_ro[1023];
	j.in_syncobj_count = 2;
	reject(fa, &j, -EFAULT, "in_syncobjs array crosses into an unmapped page");
	munmap(syncs_ro, 4096);
	j = job_base;
	j.in_syncobjs = (uintptr_t)many;
	j.in_syncobj_count = 0;
	many[0] = 0xfffffff0u;
	{
		uint64_t seq;

		ret = submit(fa, &j, &seq);
		if (!ret)
			wait_job(fa, seq, 60, NULL);
		expect(ret, 0, "SUBMIT in_syncobjs set with count 0 (ignored)");
	}
	j.in_syncobj_count = 1;
	reject(fa, &j, -ENOENT, "in-syncobj handle never created");
	many[0] = foreign_sync;
	reject(fa, &j, -ENOENT, "another file's in-syncobj (isolation)");
	many[0] = sync_nofence;
	reject(fa, &j, -EINVAL, "in-syncobj with no fence (drm_syncobj_find_fence)");
	many[0] = sync_sig;
	test_wait_submit(fa, sync_sig, sync_nofence);
	j = job_base;
	j.out_syncobj = 0xfffffff0u;
	reject(fa, &j, -ENOENT, "out_syncobj never created");
	j.out_syncobj = foreign_sync;
	reject(fa, &j, -ENOENT, "another file's out_syncobj (isolation)");
	{
		uint32_t outs;
		uint64_t seq;
		struct drm_syncobj_wait w = { 0 };

		syncobj_new(fa, 0, &outs);
		j.out_syncobj = outs;
		ret = submit(fa, &j, &seq);
		w.handles = (uintptr_t)&outs;
		w.count_handles = 1;
		w.timeout_nsec = deadline(60);
		if (!ret)
			ret = ioc(fa, DRM_IOCTL_SYNCOBJ_WAIT, &w);
		expect(ret, 0, "SUBMIT out_syncobj receives a fence that signals");
		if (!ret)
			expect(wait_job(fa, seq, 60, &st) ? -1 : st, 0,
			       "WAIT after the out_syncobj signalled");
		syncobj_free(fa, outs);
	}

	/* Job errors reported by WAIT's status: a token id outside the vocabulary. */
	{
		uint64_t seq;

		((uint32_t *)in->map)[40] = 0x7fffffff;
		j = job_base;
		j.in_offset = 40 * 4;
		ret = submit(fa, &j, &seq);
		expect(ret, 0, "SUBMIT a token id >= vocab_size (checked by the device)");
		if (!ret) {
			ret = wait_job(fa, seq, 60, &st);
			expect(ret ? ret : st, -EINVAL, "WAIT status of that job");
		}
		memcpy(in->map, ref_tok, sizeof(ref_tok));
	}
	syncobj_free(fa, sync_sig);
	syncobj_free(fa, sync_nofence);
}

/* ----------------------------------------------------------- io_uring -- */

/*
 * CQE res of one DRM_WAFER_URING_CMD_SUBMIT of @j with @tail in bytes
 * 72-79 of the command area: the job's layer and pad (older userspace had
 * to leave them zero).
 */
static int uring_submit_tail(int fd, const struct drm_wafer_job *j, uint64_t tail)
{
	struct drm_wafer_job t = *j;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	int res;

	memcpy(&t.layer, &tail, sizeof(tail));
	if (io_uring_queue_init(4, &ring, IORING_SETUP_SQE128))
		return -1000;
	sqe = io_uring_get_sqe(&ring);
	wt_uring_prep_submit(sqe, fd, &t, 1);
	io_uring_submit(&ring);
	res = io_uring_wait_cqe(&ring, &cqe) ? -1001 : cqe->res;
	if (res > -1000)
		io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
	return res;
}

static void test_uring(int fa)
{
	static const struct {
		uint64_t tail;
		int want;
		const char *name;
	} c[] = {
		{ 0, 0, "valid, command area bytes 72-79 (layer, pad) zero" },
		{ 1, -EINVAL, "layer 1 (byte 72) without DRM_WAFER_JOB_LAYER" },
		{ 1ull << 56, -EINVAL, "pad (byte 79) non-zero" },
	};
	size_t i;

	if (!wt_ok(sizeof(struct drm_wafer_job) == 80 &&
		   offsetof(struct drm_wafer_job, layer) == 72,
		   "drm_wafer_job is 80 bytes, layer at 72 (the SQE128 command area)"))
		return;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		expect(uring_submit_tail(fa, &job_base, c[i].tail), c[i].want,
		       "io_uring SUBMIT %s", c[i].name);
}

/* ----------------------------------------------- NOT_BEFORE, DONE_NS -- */

/* Job @j submitted and waited for: 0 or -errno; WAIT's output in @w. */
static int run_wait(int fd, const struct drm_wafer_job *j, struct drm_wafer_wait *w)
{
	uint64_t seq;
	int ret = submit(fd, j, &seq);

	memset(w, POISON, sizeof(*w));
	w->seqno = seq;
	w->timeout_ns = deadline(60);
	w->flags = 0;
	return ret ? ret : ioc(fd, DRM_IOCTL_WAFER_WAIT, w);
}

/* One token id at @off of the input BO, then the floor @t (NOT_BEFORE). */
static struct drm_wafer_job floor_job(struct bo *in, uint64_t off, uint64_t t)
{
	struct drm_wafer_job j = job_base;

	memcpy((char *)in->map + off, &ref_tok[0], sizeof(ref_tok[0]));
	memcpy((char *)in->map + off + sizeof(ref_tok[0]), &t, sizeof(t));
	j.in_offset = off;
	j.flags = DRM_WAFER_JOB_NOT_BEFORE;
	return j;
}

/* io_uring with CQE32: the CQE's res, and big_cqe[0] in *@big. */
static int uring_big(int fd, const struct drm_wafer_job *j, uint64_t *big)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	int res;

	if (io_uring_queue_init_params(4, &ring, &p))
		return -1000;
	wt_uring_prep_submit(io_uring_get_sqe(&ring), fd, j, 1);
	io_uring_submit(&ring);
	res = io_uring_wait_cqe(&ring, &cqe) ? -1001 : cqe->res;
	if (res > -1000) {
		*big = cqe->big_cqe[0];
		io_uring_cqe_seen(&ring, cqe);
	}
	io_uring_queue_exit(&ring);
	return res;
}

/*
 * DRM_WAFER_JOB_NOT_BEFORE: a floor after the token ids delays the job to
 * it and never advances it; WAIT's done_ns; DRM_WAFER_JOB_DONE_NS puts the
 * completion time in the CQE.  Floors a second past the device's clock
 * make the effect exact whatever ran before.
 */
static void test_not_before(int fa, struct bo *in)
{
	uint64_t off = in->size - 64, f, big = 0;
	struct drm_wafer_wait a, b;
	struct drm_wafer_job j;
	int ret;

	ret = run_wait(fa, &job_base, &a);
	wt_ok(!ret && !a.status && a.done_ns != POISON64 && a.device_ns > 0 &&
	      a.done_ns >= a.device_ns, "WAIT output: done_ns %" PRIu64 " (the completion on "
	      "the device's clock, past its device_ns %" PRIu64 ")", (uint64_t)a.done_ns,
	      (uint64_t)a.device_ns);
	f = a.done_ns + 1000000000ull;
	j = floor_job(in, off, f);
	ret = run_wait(fa, &j, &b);
	expect(ret ? ret : b.status, 0, "SUBMIT NOT_BEFORE a second past the device's clock");
	wt_ok(!ret && b.done_ns - b.device_ns == f, "NOT_BEFORE: the job started at its floor "
	      "(done_ns - device_ns = floor)");
	j = floor_job(in, off, 1);
	ret = run_wait(fa, &j, &a);
	wt_ok(!ret && !a.status && a.done_ns - a.device_ns == b.done_ns, "NOT_BEFORE 1: an "
	      "earlier floor leaves the slot's rule (it starts where the last job ended)");
	j = job_base;
	j.flags = DRM_WAFER_JOB_NOT_BEFORE;
	j.in_offset = in->size - 8;
	reject(fa, &j, -EINVAL, "NOT_BEFORE whose floor runs past the input BO (1 token at "
	       "its last 8 bytes)");
	j = floor_job(in, off, DRM_WAFER_NOT_BEFORE_MAX + 1);
	ret = run_wait(fa, &j, &b);
	expect(ret ? ret : b.status, -EINVAL, "WAIT status of a NOT_BEFORE job whose floor is "
	       "past DRM_WAFER_NOT_BEFORE_MAX (checked by the device)");
	j = (struct drm_wafer_job){ .ctx_id = job_base.ctx_id,
				    .flags = DRM_WAFER_JOB_NOP | DRM_WAFER_JOB_NOT_BEFORE };
	reject(fa, &j, -EINVAL, "NOP with NOT_BEFORE");
	j.flags = DRM_WAFER_JOB_NOP | DRM_WAFER_JOB_DONE_NS;
	reject(fa, &j, -EINVAL, "NOP with DONE_NS");
	f = a.done_ns + 1000000000ull;
	j = floor_job(in, off, f);
	j.flags |= DRM_WAFER_JOB_DONE_NS;
	ret = uring_big(fa, &j, &big);
	expect(ret, 0, "io_uring SUBMIT NOT_BEFORE with DONE_NS");
	wt_ok(!ret && big > f && big - f < 1000000000ull, "io_uring DONE_NS: big_cqe[0] is the "
	      "completion time (past the floor by the job's device time)");
}

/* --------------------------------------------------------------- WAIT -- */

static void test_wait(int fa, int fb)
{
	struct drm_wafer_wait w;
	uint64_t seq;
	int ret;

	ret = submit(fa, &job_base, &seq);
	expect(ret, 0, "SUBMIT for WAIT");
	memset(&w, POISON, sizeof(w));
	w.seqno = seq;
	w.timeout_ns = deadline(60);
	w.flags = 0;
	ret = ioc(fa, DRM_IOCTL_WAFER_WAIT, &w);
	expect(ret, 0, "WAIT valid");
	wt_ok(!ret && w.status == 0 && w.device_ns != POISON64 && w.device_ns > 0 &&
	      w.flags == 0 && w.seqno == seq,
	      "WAIT output: status %d, device_ns %" PRIu64 ", inputs untouched", w.status,
	      (uint64_t)w.device_ns);
	w = (struct drm_wafer_wait){ .seqno = seq, .timeout_ns = deadline(1) };
	expect(ioc(fa, DRM_IOCTL_WAFER_WAIT, &w), -ENOENT, "WAIT the same seqno twice");

	ret = submit(fa, &job_base, &seq);
	w = (struct drm_wafer_wait){ .seqno = seq, .timeout_ns = deadline(60), .flags = 1 };
	expect(ioc(fa, DRM_IOCTL_WAFER_WAIT, &w), -EINVAL, "WAIT flags 0x1");
	w = (struct drm_wafer_wait){ .seqno = 0, .timeout_ns = deadline(1) };
	expect(ioc(fa, DRM_IOCTL_WAFER_WAIT, &w), -EINVAL, "WAIT seqno 0");
	w = (struct drm_wafer_wait){ .seqno = seq + 1, .timeout_ns = deadline(1) };
	expect(ioc(fa, DRM_IOCTL_WAFER_WAIT, &w), -EINVAL, "WAIT seqno never issued (last + 1)");
	w = (struct drm_wafer_wait){ .seqno = ~0ull, .timeout_ns = deadline(1) };
	expect(ioc(fa, DRM_IOCTL_WAFER_WAIT, &w), -EINVAL, "WAIT seqno 2^64-1");
	w = (struct drm_wafer_wait){ .seqno = seq, .timeout_ns = deadline(1) };
	expect(ioc(fb, DRM_IOCTL_WAFER_WAIT, &w), -EINVAL,
	       "WAIT another file's seqno (isolation: this file never issued it)");
	/* A deadline in the past on a completed job still reports it. */
	wait_job(fa, seq, 60, NULL);	/* consume */
	{
		struct drm_wafer_job j = job_base;
		struct drm_syncobj_wait sw = { .count_handles = 1 };
		uint32_t so = 0;

		syncobj_new(fa, 0, &so);
		j.out_syncobj = so;
		ret = submit(fa, &j, &seq);
		sw.handles = (uintptr_t)&so;
		sw.timeout_nsec = deadline(60);
		if (!ret)
			ret = ioc(fa, DRM_IOCTL_SYNCOBJ_WAIT, &sw);
		w = (struct drm_wafer_wait){ .seqno = seq, .timeout_ns = 0 };
		if (!ret)
			ret = ioc(fa, DRM_IOCTL_WAFER_WAIT, &w);
		expect(ret ? ret : w.status, 0, "WAIT deadline 0 on a completed job");
		syncobj_free(fa, so);
	}
}

/* WAIT on jobs that stay queued behind a vgem fence. */
static void test_wait_queued(int fa)
{
	struct drm_wafer_job j = job_base;
	struct drm_wafer_wait w;
	struct delayed_signal ds;
	uint32_t so, fence;
	uint64_t seq, seq2;
	int64_t t0;
	int ret, ret2, st;

	ret = vgem_syncobj(fa, &so, &fence);
	if (!wt_ok(!ret, "vgem fence in a syncobj (%s)", ename(ret)))
		return;
	j.in_syncobjs = (uintptr_t)&so;
	j.in_syncobj_count = 1;
	ret = submit(fa, &j, &seq);
	expect(ret, 0, "SUBMIT behind an unsignalled in-syncobj");
	ret = submit(fa, &job_base, &seq2);
	expect(ret, 0, "SUBMIT a second job behind it (same file, in order)");

	memset(&w, POISON, sizeof(w));
	w.seqno = seq;
	w.flags = 0;
	w.timeout_ns = now_ns() + 50000000;
	t0 = now_ns();
	ret = ioc(fa, DRM_IOCTL_WAFER_WAIT, &w);
	expect(ret, -ETIME, "WAIT deadline 50 ms ahead on a queued job");
	wt_ok(now_ns() - t0 >= 40000000, "WAIT -ETIME returned after the deadline (%.1f ms)",
	      (now_ns() - t0) / 1e6);
	wt_ok((w.status == (int32_t)POISON32 || w.status == 0) &&
	      (w.device_ns == POISON64 || w.device_ns == 0),
	      "WAIT -ETIME output: status and device_ns untouched or zero");
	w = (struct drm_wafer_wait){ .seqno = seq, .timeout_ns = 0 };
	expect(ioc(fa, DRM_IOCTL_WAFER_WAIT, &w), -ETIME, "WAIT deadline 0 on a queued job");
	w = (struct drm_wafer_wait){ .seqno = seq, .timeout_ns = now_ns() - 1000000000ll };
	expect(ioc(fa, DRM_IOCTL_WAFER_WAIT, &w), -ETIME, "WAIT deadline 1 s in the past");
	w = (struct drm_wafer_wait){ .seqno = seq2, .timeout_ns = 0 };
	expect(ioc(fa, DRM_IOCTL_WAFER_WAIT, &w), -ETIME,
	       "WAIT deadline 0 on the job queued behind the blocked one");

	/*
	 * INT64_MIN, the furthest past, on the second job: a watchdog signals
	 * the fence after 1.5 s in case the WAIT blocks.
	 */
	ds.fence = fence;
	ds.ms = 1500;
	pthread_create(&ds.thread, NULL, delayed_signal_fn, &ds);
	w = (struct drm_wafer_wait){ .seqno = seq2, .timeout_ns = INT64_MIN };
	t0 = now_ns();
	ret2 = ioc(fa, DRM_IOCTL_WAFER_WAIT, &w);
	expect(ret2, -ETIME, "WAIT deadline INT64_MIN on a queued job (took %.0f ms)",
	       (now_ns() - t0) / 1e6);
	pthread_join(ds.thread, NULL);

	/* After the fence signals, both complete; -ETIME did not consume them. */
	ret = wait_job(fa, seq, 60, &st);
	expect(ret ? ret : st, 0, "WAIT after -ETIME, once the in-fence signalled");
	if (ret2) {
		ret = wait_job(fa, seq2, 60, &st);
		expect(ret ? ret : st, 0, "WAIT the job queued behind it");
	}
	syncobj_free(fa, so);
}

/* ------------------------------------------------------ limits (mode) -- */

/*
 * max_file_models: the file holding @model loads up to the limit, one more
 * is -EMFILE, another file still loads, an unload frees a place.
 */
static void test_limit_models(int fa, int fb)
{
	long lim = param("max_file_models");
	struct drm_wafer_model_unload u = { 0 };
	uint32_t extra[4] = { 0 }, other;
	int ret, n;

	if (lim < 1 || lim > 4 || lim >= (long)info.device_max_models) {
		wt_ok(0, "limits: run with max_file_models in 1..3 (is %ld)", lim);
		return;
	}
	wt_ok(info.max_models == (uint32_t)lim,
	      "GET_INFO max_models == max_file_models (%ld, got %u)", lim, info.max_models);
	for (n = 1, ret = 0; n < lim && !ret; n++)
		extra[n] = load_model(fa, &ret);
	expect(ret, 0, "MODEL_LOAD max_models (%ld) models in one file", lim);
	load_model(fa, &ret);
	expect(ret, -EMFILE, "MODEL_LOAD one model over max_file_models");
	other = load_model(fb, &ret);
	expect(ret, 0, "MODEL_LOAD in another file (max_file_models is per file)");
	u.model_id = other;
	if (other)
		ioc(fb, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u);
	for (n = 1; n < lim; n++) {
		u.model_id = extra[n];
		if (extra[n])
			ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u);
	}
	extra[1] = lim > 1 ? load_model(fa, &ret) : 0;
	if (lim > 1)
		expect(ret, 0, "MODEL_LOAD after MODEL_UNLOAD freed a place");
	u.model_id = extra[1];
	if (extra[1])
		ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u);
}

static void test_limits(void)
{
	int fa = open_dev(), fb = open_dev(), ret, i, n;
	uint32_t handles[64], model, ctxs[64];
	struct drm_wafer_bo_create c;
	uint64_t limit = info.max_bo_size;
	struct bo in, out;

	/* BO quota */
	if (limit > (64ull << 20)) {
		wt_ok(0, "limits: run with max_file_bo_mib <= 64 (max_bo_size is %" PRIu64 ")",
		      limit);
	} else {
		uint64_t chunk = limit / 4;

		for (n = 0, ret = 0; n < 4 && !ret; n++) {
			c = (struct drm_wafer_bo_create){ .size = chunk };
			ret = ioc(fa, DRM_IOCTL_WAFER_BO_CREATE, &c);
			handles[n] = c.handle;
		}
		expect(ret, 0, "BO_CREATE 4 x max_bo_size/4 (the whole quota)");
		c = (struct drm_wafer_bo_create){ .size = 4096 };
		expect(ioc(fa, DRM_IOCTL_WAFER_BO_CREATE, &c), -EDQUOT,
		       "BO_CREATE one page over the file's quota");
		c = (struct drm_wafer_bo_create){ .size = limit };
		ret = ioc(fb, DRM_IOCTL_WAFER_BO_CREATE, &c);
		expect(ret, 0, "BO_CREATE max_bo_size in another file (quota is per file)");
		if (!ret)
			gem_close(fb, c.handle);
		gem_close(fa, handles[0]);
		c = (struct drm_wafer_bo_create){ .size = chunk };
		ret = ioc(fa, DRM_IOCTL_WAFER_BO_CREATE, &c);
		expect(ret, 0, "BO_CREATE after GEM_CLOSE returned quota");
		handles[0] = c.handle;
		/* An exported BO stays charged to its creator. */
		{
			int dmabuf;
			uint32_t h;

			prime_export(fa, handles[1], DRM_CLOEXEC, &dmabuf);
			prime_import(fb, dmabuf, &h);
			close(dmabuf);
			gem_close(fa, handles[1]);
			c = (struct drm_wafer_bo_create){ .size = chunk };
			expect(ioc(fa, DRM_IOCTL_WAFER_BO_CREATE, &c), -EDQUOT,
			       "BO_CREATE while an exported BO, closed here, lives in another file");
			if (c.handle && c.handle != handles[1])
				gem_close(fa, c.handle);
			gem_close(fb, h);
			c = (struct drm_wafer_bo_create){ .size = chunk };
			ret = ioc(fa, DRM_IOCTL_WAFER_BO_CREATE, &c);
			expect(ret, 0, "BO_CREATE once the importer closed it too");
			handles[1] = c.handle;
		}
		{
			struct drm_wafer_model_load ml = { .bo_handle = handles[0],
							   .blob_size = limit + 8 };

			expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL,
			       "MODEL_LOAD blob_size over max_bo_size");
		}
		for (i = 0; i < 4; i++)
			gem_close(fa, handles[i]);
	}

	/* Contexts */
	model = load_model(fa, &ret);
	if (!expect(ret, 0, "MODEL_LOAD (limits run)"))
		goto out;
	test_limit_models(fa, fb);
	if (info.max_contexts > 32) {
		wt_ok(0, "limits: run with max_file_contexts <= 32 (is %u)", info.max_contexts);
		ctxs[0] = ctx_new(fa, model, 1, 64, &ret);
	} else {
		for (n = 0, ret = 0; n < (int)info.max_contexts && !ret; n++)
			ctxs[n] = ctx_new(fa, model, 1, 64, &ret);
		expect(ret, 0, "CTX_CREATE max_contexts (%u) contexts", info.max_contexts);
		ctx_new(fa, model, 1, 16, &ret);
		expect(ret, -EMFILE, "CTX_CREATE one more than max_contexts");
		{
			struct drm_wafer_ctx_destroy d = { .ctx_id = ctxs[0] };

			ioc(fa, DRM_IOCTL_WAFER_CTX_DESTROY, &d);
		}
		ctxs[0] = ctx_new(fa, model, 1, 64, &ret);
		expect(ret, 0, "CTX_CREATE after CTX_DESTROY freed a place");
		for (i = 1; i < (int)info.max_contexts; i++) {
			struct drm_wafer_ctx_destroy d = { .ctx_id = ctxs[i] };

			ioc(fa, DRM_IOCTL_WAFER_CTX_DESTROY, &d);
		}
	}

	/* In-flight jobs */
	if (bo_new(fa, &in, 4096) || bo_new(fa, &out, 4096)) {
		wt_ok(0, "limits: job buffers");
		goto out;
	}
	memcpy(in.map, ref_tok, sizeof(ref_tok));
	job_base = (struct drm_wafer_job){ .ctx_id = ctxs[0], .n_tokens = 1, .top_k = TOPK,
		.in_handle = in.handle, .out_handle = out.handle };
	if (info.max_inflight_jobs > 32) {
		wt_ok(0, "limits: run with max_file_inflight <= 32 (is %u)", info.max_inflight_jobs);
	} else {
		uint32_t so, fence;
		uint64_t seqs[33], seq;
		struct drm_wafer_job j = job_base;
		int st;

		ret = vgem_syncobj(fa, &so, &fence);
		if (!wt_ok(!ret, "vgem fence in a syncobj (%s)", ename(ret)))
			goto out;
		j.in_syncobjs = (uintptr_t)&so;
		j.in_syncobj_count = 1;
		for (n = 0, ret = 0; n < (int)info.max_inflight_jobs && !ret; n++)
			ret = submit(fa, &j, &seqs[n]);
		expect(ret, 0, "SUBMIT max_inflight_jobs (%u) jobs held by an in-fence",
		       info.max_inflight_jobs);
		ret = submit(fa, &job_base, &seq);
		expect(ret, -EBUSY, "SUBMIT one job over max_inflight_jobs");
		if (!ret)
			wait_job(fa, seq, 60, NULL);
		vgem_signal(fence);
		for (i = 0, ret = 0; i < n && !ret; i++) {
			ret = wait_job(fa, seqs[i], 60, &st);
			ret = ret ? ret : st;
		}
		expect(ret, 0, "WAIT every held job once the fence signalled");
		usleep(100000);	/* jobs are freed by the scheduler after they signal */
		ret = submit(fa, &job_base, &seq);
		if (!ret)
			ret = wait_job(fa, seq, 60, &st);
		expect(ret ? ret : st, 0, "SUBMIT again once the in-flight jobs completed");
		syncobj_free(fa, so);
	}
	{
		uint32_t got = decode_check(fa, ctxs[0], 0, &in, &out, 0);

		wt_ok(got == NDECODE, "limits run: greedy decode of %d tokens matches (%u)", NDECODE,
		      got);
	}
	/*
	 * MODEL_UNLOAD right after the last CTX_DESTROY (its job just waited
	 * for): nothing of the context may still hold the model.
	 */
	{
		struct drm_wafer_ctx_destroy d = { .ctx_id = ctxs[0] };
		struct drm_wafer_model_unload u = { .model_id = model };
		int first = 0;

		ioc(fa, DRM_IOCTL_WAFER_CTX_DESTROY, &d);
		ret = ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u);
		for (i = 0; i < 20 && !ret; i++) {
			uint64_t seq;
			int st;

			model = load_model(fa, &ret);
			job_base.ctx_id = ret ? 0 : ctx_new(fa, model, 1, 64, &ret);
			if (!ret)
				ret = submit(fa, &job_base, &seq);
			if (!ret)
				ret = wait_job(fa, seq, 60, &st);
			d.ctx_id = job_base.ctx_id;
			if (!ret)
				ret = ioc(fa, DRM_IOCTL_WAFER_CTX_DESTROY, &d);
			u.model_id = model;
			if (!ret)
				ret = ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u);
			first = i;
		}
		expect(ret, 0, "MODEL_UNLOAD at once after WAIT + CTX_DESTROY, 20 rounds (stopped "
		       "at round %d)", first);
		if (ret == -EBUSY) {
			usleep(200000);
			ret = ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u);
			wt_diag("the same MODEL_UNLOAD 200 ms later: %s (0: the context was "
				"still being released asynchronously)", ename(ret));
		}
	}
	bo_free(fa, &in);
	bo_free(fa, &out);
out:
	close(fa);
	close(fb);
}

/* --------------------------------------------------------------- main -- */

static int setup_blobs(void)
{
	struct wfs_pack_opts po = { .wbits = 8, .group_size = 32 };
	struct wfs_pack_opts pc = { .wbits = 8, .group_size = 32, .checksum = 1 };
	struct wfs_topk_entry tk[TOPK];
	struct wt_model ref;
	struct wfs_ckpt ck;
	uint32_t pos;

	if (wfs_ckpt_load(wt_model_path("stories260K.bin"), &ck) ||
	    wfs_pack(&ck, &po, &blob, &blob_len) || wfs_pack(&ck, &pc, &blob_ck, &blob_ck_len))
		return -1;
	if (wt_model_open(&ref, blob, blob_len, 64, 0))
		return -1;
	ref_tok[0] = 1;	/* BOS */
	for (pos = 0; pos < NDECODE; pos++)
		ref_tok[pos + 1] = wt_model_step(&ref, ref_tok[pos], pos, TOPK, tk);
	wt_model_close(&ref);
	return 0;
}

#define BAD2(field, value, name) do { j = job_base; j.field = (value); \
		reject(fd, &j, -EINVAL, (name)); } while (0)
/*
 * A middle layer range (layers 1-2 of 5): its jobs take and give
 * activation records, and each field that does not fit that is refused.
 */
static void test_layer_range(void)
{
	const uint32_t act = DRM_WAFER_ACT_REC_SIZE(64);
	int fd = open_dev(), ret, st = -1;
	struct drm_wafer_model_load ml;
	struct drm_wafer_job j;
	struct bo b, in, out;
	uint32_t ctx = 0;
	uint64_t seq = 0;

	ret = bo_new(fd, &b, blob_len);
	if (ret || bo_new(fd, &in, 4 * act) || bo_new(fd, &out, 4096)) {
		wt_ok(0, "layer range: BOs (%s)", ename(ret));
		close(fd);
		return;
	}
	memcpy(b.map, blob, blob_len);
	ret = model_load_poisoned(fd, b.handle, 0, 1, 2, &ml);
	expect(ret, 0, "MODEL_LOAD layers 1-2 of 5 (a middle range)");
	wt_ok(!ret && ml.n_layers == 2 && ml.model_flags == 0 && ml.act_size == act,
	      "MODEL_LOAD output of a middle range: %u layers, model_flags 0x%x, act_size %u",
	      ml.n_layers, ml.model_flags, ml.act_size);
	if (!ret)
		ctx = ctx_new(fd, ml.model_id, 1, 64, &ret);
	if (!ctx) {
		wt_ok(0, "layer range: context (%s)", ename(ret));
		close(fd);
		return;
	}
	/* Records a previous device would give: width 64, all zero. */
	memset(in.map, 0, in.size);
	for (ret = 0; ret < 4; ret++)
		((struct drm_wafer_act_rec *)((char *)in.map + ret * act))->dim = 64;
	job_base = (struct drm_wafer_job){ .ctx_id = ctx, .n_tokens = 2,
		.flags = DRM_WAFER_JOB_IN_ACT | DRM_WAFER_JOB_OUT_ACT,
		.in_handle = in.handle, .out_handle = out.handle };
	j = job_base;
	ret = submit(fd, &j, &seq);
	ret = ret ? ret : wait_job(fd, seq, 60, &st);
	expect(ret ? ret : st, 0, "SUBMIT valid on a middle range: records in, records out");
	wt_ok(((struct drm_wafer_act_rec *)out.map)->dim == 64 &&
	      ((struct drm_wafer_act_rec *)((char *)out.map + act))->dim == 64,
	      "its output: 2 records of width 64");
	BAD2(flags, DRM_WAFER_JOB_OUT_ACT, "on a middle range without IN_ACT (token ids)");
	BAD2(flags, DRM_WAFER_JOB_IN_ACT, "on a middle range without OUT_ACT (results)");
	BAD2(top_k, 4, "OUT_ACT with top_k 4");
	BAD2(flags, job_base.flags | DRM_WAFER_JOB_ALL_POSITIONS,
	     "OUT_ACT with ALL_POSITIONS");
	BAD2(in_offset, 32, "IN_ACT in_offset 32 (not 64-byte aligned)");
	BAD2(out_offset, 8, "OUT_ACT out_offset 8 (not 64-byte aligned)");
	BAD2(in_offset, in.size - act, "IN_ACT records past the input BO (2 from its last)");
	BAD2(out_offset, 4096 - act, "OUT_ACT records past the output BO (2 from its last)");
	((struct drm_wafer_act_rec *)in.map)->dim = 65;
	j = job_base;
	ret = submit(fd, &j, &seq);
	ret = ret ? ret : wait_job(fd, seq, 60, &st);
	expect(ret ? ret : st, -EINVAL, "SUBMIT with an activation record of width 65: the job fails");
	bo_free(fd, &b);
	bo_free(fd, &in);
	bo_free(fd, &out);
	close(fd);
}

/* ------------------------------------------- layer parts (AFD) -- */

#define N_LAYERS	5	/* of the test model */
#define ACT_GAP		1024	/* the two activation buffers' distance */

/* Part @part of every layer of the test blob in @b; its context, or 0. */
static uint32_t part_ctx(int fd, struct bo *b, uint32_t part, uint32_t want_flags)
{
	struct drm_wafer_model_load ml = { .bo_handle = b->handle, .blob_size = blob_len,
					   .part = part };
	int ret = ioc(fd, DRM_IOCTL_WAFER_MODEL_LOAD, &ml);

	expect(ret, 0, "MODEL_LOAD part %u of every layer", part);
	wt_ok(!ret && ml.n_layers == N_LAYERS && ml.model_flags == want_flags &&
	      ml.part == part,
	      "MODEL_LOAD part %u output: %u layers, model_flags 0x%x (want 0x%x)", part,
	      ml.n_layers, ml.model_flags, want_flags);
	return ret ? 0 : ctx_new(fd, ml.model_id, 1, 64, NULL);
}

/*
 * One token at @pos through the layer parts: attention then FFN of each
 * layer, activation records ping-ponging between two spans of @x, the
 * last FFN writing the result into @out.  0 or the first failure.
 */
static int part_step(int fd, const uint32_t ctx[2], struct bo *x, struct bo *out,
		     uint32_t tok, uint32_t pos)
{
	uint32_t l, p, k = 0;
	uint64_t seq;
	int ret, st;

	memcpy(x->map, &tok, sizeof(tok));
	for (l = 0; l < N_LAYERS; l++) {
		for (p = 0; p < 2; p++, k++) {
			struct drm_wafer_job j = { .ctx_id = ctx[p], .start_pos = pos,
				.n_tokens = 1, .flags = DRM_WAFER_JOB_LAYER, .layer = l,
				.in_handle = x->handle, .in_offset = (k % 2) * ACT_GAP,
				.out_handle = x->handle, .out_offset = ((k + 1) % 2) * ACT_GAP };

			if (k)
				j.flags |= DRM_WAFER_JOB_IN_ACT;
			if (l + 1 < N_LAYERS || !p) {
				j.flags |= DRM_WAFER_JOB_OUT_ACT;
			} else {
				j.out_handle = out->handle;
				j.out_offset = 0;
				j.top_k = TOPK;
			}
			ret = submit(fd, &j, &seq);
			ret = ret ? ret : wait_job(fd, seq, 60, &st);
			if (ret || st)
				return ret ? ret : st;
		}
	}
	return 0;
}

/*
 * The attention and the FFN parts of every layer as two models of one
 * file: a greedy decode through them, two jobs a layer, gives the
 * reference tokens (the split changes no bit); the driver writes each
 * job's layer after its input; and what a part model's job must not be.
 */
static void test_layer_parts(void)
{
	const struct drm_wafer_token_result *r;
	int fd = open_dev(), ret = 0, st;
	struct drm_wafer_job j;
	struct bo b, x, out;
	uint32_t ctx[2], pos;
	uint64_t seq;

	if (bo_new(fd, &b, blob_len) || bo_new(fd, &x, 2 * ACT_GAP) ||
	    bo_new(fd, &out, 4096)) {
		wt_ok(0, "layer parts: BOs");
		close(fd);
		return;
	}
	memcpy(b.map, blob, blob_len);
	ctx[0] = part_ctx(fd, &b, DRM_WAFER_PART_ATTN,
			  DRM_WAFER_MODEL_ATTN | DRM_WAFER_MODEL_EMBED);
	ctx[1] = part_ctx(fd, &b, DRM_WAFER_PART_FFN, DRM_WAFER_MODEL_FFN | DRM_WAFER_MODEL_HEAD);
	if (!ctx[0] || !ctx[1]) {
		wt_ok(0, "layer parts: contexts");
		close(fd);
		return;
	}
	r = out.map;
	for (pos = 0; pos < NDECODE; pos++) {
		ret = part_step(fd, ctx, &x, &out, ref_tok[pos], pos);
		if (ret || r->position != pos || r->argmax != ref_tok[pos + 1] || r->top_k != TOPK)
			break;
	}
	wt_ok(pos == NDECODE, "greedy decode of %d tokens through attention and FFN part models "
	      "matches in-process firmware-sim (first mismatch at %u, %s)", NDECODE, pos,
	      ename(ret));
	/* The driver put the layer after the token id, over what was there. */
	memcpy((char *)x.map + 4, &(uint32_t){ 0xdeadbeef }, 4);
	j = (struct drm_wafer_job){ .ctx_id = ctx[0], .n_tokens = 1,
		.flags = DRM_WAFER_JOB_LAYER | DRM_WAFER_JOB_OUT_ACT, .layer = 0,
		.in_handle = x.handle, .out_handle = x.handle, .out_offset = ACT_GAP };
	job_base = j;
	ret = submit(fd, &j, &seq);
	ret = ret ? ret : wait_job(fd, seq, 60, &st);
	expect(ret ? ret : st, 0, "SUBMIT attention of layer 0 (token ids in)");
	wt_ok(((uint32_t *)x.map)[1] == 0, "the driver wrote layer 0 after the token id (0x%x)",
	      ((uint32_t *)x.map)[1]);
	BAD2(flags, DRM_WAFER_JOB_OUT_ACT, "on a part model without DRM_WAFER_JOB_LAYER");
	BAD2(layer, N_LAYERS, "layer 5 of a 5-layer model");
	BAD2(layer, 0xffffffffu, "layer 0xffffffff");
	BAD2(layer, 1, "attention of layer 1 with token ids (no IN_ACT)");
	BAD2(pad, 1, "a part job with pad != 0");
	BAD2(in_offset, x.size - 4, "a token id and no room for the layer in the input BO");
	j.ctx_id = ctx[1];
	j.flags |= DRM_WAFER_JOB_IN_ACT;
	j.layer = N_LAYERS - 1;
	j.out_offset = 0;
	reject(fd, &j, -EINVAL, "FFN of the last layer with OUT_ACT (it gives results)");
	bo_free(fd, &b);
	bo_free(fd, &x);
	bo_free(fd, &out);
	close(fd);
}

/* --------------------------------------- expert parallelism (EP) -- */

#define EP_SHARDS	2
#define EP_MODELS	(2 + EP_SHARDS)	/* attention, home, shards */
#define EP_LW(l, ph)	((l) | (uint32_t)(ph) << DRM_WAFER_XPHASE_SHIFT)

/*
 * The MoE model on one device as four models: attention, the FFN home and
 * two shards of its routed experts; the exchange BO's buffers A, B, C are
 * @gap bytes apart (a record and the layer word after it).
 */
struct ep {
	int fd;
	uint32_t ctx[EP_MODELS], model[EP_MODELS];
	uint32_t dim, hidden, act, xrec, gap;
	struct bo x, out;
};

/* Part @part of the MoE blob in @b (a shard: experts [first, +count)). */
static int ep_load(struct ep *e, uint32_t k, struct bo *b, size_t len, uint32_t part,
		   uint32_t first, uint32_t count, uint32_t want_flags, uint32_t want_act,
		   const char *what)
{
	struct drm_wafer_model_load ml = { .bo_handle = b->handle, .blob_size = len,
		.part = part, .expert_first = first, .expert_count = count };
	int ret = ioc(e->fd, DRM_IOCTL_WAFER_MODEL_LOAD, &ml);

	expect(ret, 0, "MODEL_LOAD %s of the MoE model: part %u, experts [%u, +%u)", what, part,
	       first, count);
	wt_ok(!ret && ml.n_layers == N_LAYERS && ml.model_flags == want_flags &&
	      ml.act_size == want_act,
	      "MODEL_LOAD %s output: %u layers, model_flags 0x%x (want 0x%x), act_size %u "
	      "(want %u)", what, ml.n_layers, ml.model_flags, want_flags, ml.act_size, want_act);
	e->model[k] = ret ? 0 : ml.model_id;
	e->ctx[k] = ret ? 0 : ctx_new(e->fd, ml.model_id, 1, 64, NULL);
	return e->ctx[k] ? 0 : -1;
}

/* One job of member @k: records from buffer @in to @out (< 0: results). */
static int ep_job(struct ep *e, uint32_t k, uint32_t pos, uint32_t lw, uint32_t in, int out)
{
	struct drm_wafer_job j = { .ctx_id = e->ctx[k], .start_pos = pos, .n_tokens = 1,
		.flags = DRM_WAFER_JOB_LAYER | DRM_WAFER_JOB_IN_ACT | DRM_WAFER_JOB_OUT_ACT,
		.layer = lw, .in_handle = e->x.handle, .in_offset = (uint64_t)in * e->gap,
		.out_handle = e->x.handle, .out_offset = (uint64_t)(out < 0 ? 0 : out) * e->gap };
	uint64_t seq;
	int ret, st;

	if (!k && !lw)
		j.flags &= ~DRM_WAFER_JOB_IN_ACT;	/* attention of layer 0: a token */
	if (out < 0) {
		j.flags &= ~DRM_WAFER_JOB_OUT_ACT;
		j.out_handle = e->out.handle;
		j.top_k = TOPK;
	}
	ret = submit(e->fd, &j, &seq);
	ret = ret ? ret : wait_job(e->fd, seq, 60, &st);
	return ret ? ret : st;
}

static uint64_t ep_t_ns(const uint8_t *rec)
{
	uint64_t t;

	memcpy(&t, rec + offsetof(struct drm_wafer_act_rec, t_ns), sizeof(t));
	return t;
}

/*
 * A shard's reply @s into the home's record @h: UP's units [u0, u1) of a1
 * and a3, or DOWN's s64 sum added; the home goes on at the latest reply.
 */
static void ep_merge(const struct ep *e, uint8_t *h, const uint8_t *s, int down, uint64_t *t)
{
	struct drm_wafer_xrec_hdr xh;
	uint32_t a1 = DRM_WAFER_XREC_A1_OFF(e->dim), a3 = DRM_WAFER_XREC_A3_OFF(e->dim, e->hidden);
	uint32_t y = DRM_WAFER_XREC_Y_OFF(e->dim, e->hidden), i;
	uint64_t hv, sv;

	if (ep_t_ns(s) > *t)
		*t = ep_t_ns(s);
	if (down) {
		for (i = 0; i < e->dim; i++) {
			memcpy(&hv, h + y + 8 * i, 8);
			memcpy(&sv, s + y + 8 * i, 8);
			hv += sv;	/* s64 sums: exact in any order */
			memcpy(h + y + 8 * i, &hv, 8);
		}
		return;
	}
	memcpy(&xh, s + DRM_WAFER_XREC_HDR_OFF(e->dim), sizeof(xh));
	memcpy(h + a1 + 8 * xh.u0, s + a1 + 8 * xh.u0, 8 * (xh.u1 - xh.u0));
	memcpy(h + a3 + 8 * xh.u0, s + a3 + 8 * xh.u0, 8 * (xh.u1 - xh.u0));
}

/* Each shard runs phase @ph on buffer @in, its reply merged into @in. */
static int ep_exchange(struct ep *e, uint32_t l, uint32_t pos, uint32_t ph, uint32_t in)
{
	uint8_t *h = (uint8_t *)e->x.map + (size_t)in * e->gap;
	uint8_t *c = (uint8_t *)e->x.map + 2 * (size_t)e->gap;
	uint64_t t = 0;
	uint32_t s;
	int ret;

	for (s = 0; s < EP_SHARDS; s++) {
		ret = ep_job(e, 2 + s, pos, EP_LW(l, ph), in, 2);
		if (ret)
			return ret;
		ep_merge(e, h, c, ph == DRM_WAFER_XPHASE_DOWN, &t);
	}
	if (t > ep_t_ns(h))
		memcpy(h + offsetof(struct drm_wafer_act_rec, t_ns), &t, sizeof(t));
	return 0;
}

/*
 * Layer @l of a token at @pos: attention (A -> B), the home's ROUTE
 * (A -> B), UP on each shard (B), GLU (B -> A), DOWN on each (A), FIN
 * (A -> B, or the results of the last layer).
 */
static int ep_layer(struct ep *e, uint32_t l, uint32_t pos)
{
	uint8_t *a = e->x.map, *b = a + e->gap;
	int last = l + 1 == N_LAYERS, ret;

	ret = ep_job(e, 0, pos, l, 0, 1);
	if (ret)
		return ret;
	memset(a, 0, e->xrec);
	memcpy(a, b, e->act);	/* the activation record opens the expert record */
	ret = ep_job(e, 1, pos, EP_LW(l, DRM_WAFER_XPHASE_ROUTE), 0, 1);
	ret = ret ? ret : ep_exchange(e, l, pos, DRM_WAFER_XPHASE_UP, 1);
	ret = ret ? ret : ep_job(e, 1, pos, EP_LW(l, DRM_WAFER_XPHASE_GLU), 1, 0);
	ret = ret ? ret : ep_exchange(e, l, pos, DRM_WAFER_XPHASE_DOWN, 0);
	ret = ret ? ret : ep_job(e, 1, pos, EP_LW(l, DRM_WAFER_XPHASE_FIN), 0, last ? -1 : 1);
	if (!ret && !last)
		memcpy(a, b, e->act);	/* the next attention's input */
	return ret;
}

/* A greedy decode through the four models against the in-process reference. */
static void ep_decode(struct ep *e, const void *moe, size_t len)
{
	const struct drm_wafer_token_result *r = e->out.map;
	struct wfs_topk_entry tk[TOPK];
	uint32_t tok = 1, want, pos, l, i;
	struct wt_model ref;
	int ret = 0, same = 1;

	if (wt_model_open(&ref, moe, len, 64, 0)) {
		wt_ok(0, "expert parallelism: the in-process reference");
		return;
	}
	for (pos = 0; pos < NDECODE && same; pos++) {
		want = wt_model_step(&ref, tok, pos, TOPK, tk);
		memcpy(e->x.map, &tok, sizeof(tok));
		for (l = 0; l < N_LAYERS && !ret; l++)
			ret = ep_layer(e, l, pos);
		same = !ret && r->position == pos && r->argmax == want && r->top_k == TOPK;
		for (i = 0; i < TOPK && same; i++)
			same = r->topk[i].token == tk[i].token && r->topk[i].logit == tk[i].logit;
		if (same)
			tok = want;
	}
	wt_ok(same && pos == NDECODE, "greedy decode of %d tokens through attention, the expert "
	      "home and %d expert shards as 4 models of one device: tokens and top-%d logits "
	      "match in-process firmware-sim (first mismatch at %u, %s)", NDECODE, EP_SHARDS,
	      TOPK, same ? pos : pos - 1, ename(ret));
	wt_model_close(&ref);
}

/*
 * MODEL_LOAD's expert fields: each bad value on the MoE blob in @moe and
 * the dense one in @dense, refused by the driver or (a range past the
 * experts, a model without experts) by the firmware: -EINVAL either way.
 */
static void ep_bad_loads(int fd, struct bo *moe, size_t moe_len, struct bo *dense)
{
	static const struct {
		uint32_t flags, part, group, first, count;
		int dense;
		const char *name;
	} c[] = {
		{ 0, DRM_WAFER_PART_XSHARD, 0, 0, 0, 0, "XSHARD with expert_count 0" },
		{ 0, DRM_WAFER_PART_XSHARD, 0, 0xffffffffu, 1, 0,
		  "XSHARD expert_first 0xffffffff + 1 (overflows)" },
		{ 0, DRM_WAFER_PART_XSHARD, 0, 3, 2, 0, "XSHARD experts [3, +2) of 4 (firmware)" },
		{ 0, DRM_WAFER_PART_XSHARD, 0, 4, 1, 0, "XSHARD experts [4, +1) of 4 (firmware)" },
		{ 0, DRM_WAFER_PART_XHOME, 0, 0, 1, 0, "XHOME with expert_count 1" },
		{ 0, DRM_WAFER_PART_XHOME, 0, 1, 0, 0, "XHOME with expert_first 1" },
		{ 0, DRM_WAFER_PART_FFN, 0, 1, 0, 0, "FFN part with expert_first 1" },
		{ 0, DRM_WAFER_PART_ATTN, 0, 0, 1, 0, "attention part with expert_count 1" },
		{ 0, DRM_WAFER_PART_WHOLE, 0, 0, 2, 0, "whole layers with expert_count 2" },
		{ 0, DRM_WAFER_PART_XHOME, 1, 0, 0, 0, "XHOME with expert_group 1" },
		{ 0, DRM_WAFER_PART_XSHARD, 1, 0, 2, 0, "XSHARD with expert_group 1" },
		{ DRM_WAFER_LOAD_STREAM, DRM_WAFER_PART_XSHARD, 0, 0, 2, 0, "XSHARD with LOAD_STREAM" },
		{ DRM_WAFER_LOAD_STREAM, DRM_WAFER_PART_XHOME, 0, 0, 0, 0, "XHOME with LOAD_STREAM" },
		{ 0, DRM_WAFER_PART_XHOME, 0, 0, 0, 1, "XHOME of a dense model (firmware)" },
		{ 0, DRM_WAFER_PART_XSHARD, 0, 0, 1, 1, "XSHARD of a dense model (firmware)" },
	};
	struct drm_wafer_model_unload u = { 0 };
	struct drm_wafer_model_load ml;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		ml = (struct drm_wafer_model_load){
			.bo_handle = c[i].dense ? dense->handle : moe->handle,
			.blob_size = c[i].dense ? blob_len : moe_len, .flags = c[i].flags,
			.part = c[i].part, .expert_group = c[i].group,
			.expert_first = c[i].first, .expert_count = c[i].count };
		ret = ioc(fd, DRM_IOCTL_WAFER_MODEL_LOAD, &ml);
		expect(ret, -EINVAL, "MODEL_LOAD %s", c[i].name);
		u.model_id = ml.model_id;
		if (!ret)
			ioc(fd, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u);
	}
}

/*
 * MODEL_LOAD of userspace built before expert_first / expert_count: the
 * 64-byte struct (its own ioctl number) loads whole layers, and the
 * kernel writes back no byte past it.
 */
static void test_model_load_v1(int fd, struct bo *b)
{
	struct ml_v1 {
		uint8_t b[offsetof(struct drm_wafer_model_load, expert_first)];
	};
	struct {
		struct drm_wafer_model_load ml;
		uint64_t guard;
	} a;
	struct drm_wafer_model_unload u = { 0 };
	int ret;

	_Static_assert(sizeof(struct ml_v1) == 64, "the older MODEL_LOAD");
	memset(&a, POISON, sizeof(a));
	a.ml = (struct drm_wafer_model_load){ .bo_handle = b->handle, .blob_size = blob_len };
	memset(&a.ml.expert_first, POISON, 8);
	ret = ioc(fd, DRM_IOWR(DRM_COMMAND_BASE + DRM_WAFER_MODEL_LOAD, struct ml_v1), &a.ml);
	expect(ret, 0, "MODEL_LOAD with the 64-byte struct of older userspace (before "
	       "expert_first), the bytes after it poisoned");
	wt_ok(!ret && a.ml.model_id && a.ml.n_layers == N_LAYERS &&
	      a.ml.expert_first == POISON32 && a.ml.expert_count == POISON32 &&
	      a.guard == POISON64,
	      "its output: model %u, %u layers, nothing written past 64 bytes", a.ml.model_id,
	      a.ml.n_layers);
	u.model_id = a.ml.model_id;
	if (!ret)
		expect(ioc(fd, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), 0,
		       "MODEL_UNLOAD the model the 64-byte struct loaded");
}

/* Jobs the parts refuse: phases, the layer, where results come from. */
static void ep_bad_jobs(struct ep *e)
{
	static const struct {
		uint32_t k, lw, flags;
		const char *name;
	} c[] = {
		{ 1, 0, 0, "home, phase 0" },
		{ 1, EP_LW(0, DRM_WAFER_XPHASE_UP), 0, "home, phase UP" },
		{ 1, EP_LW(0, DRM_WAFER_XPHASE_DOWN), 0, "home, phase DOWN" },
		{ 1, EP_LW(0, 6), 0, "home, phase 6" },
		{ 1, EP_LW(0, 0xff), 0, "home, phase 0xff" },
		{ 2, EP_LW(0, DRM_WAFER_XPHASE_ROUTE), 0, "shard, phase ROUTE" },
		{ 2, EP_LW(0, DRM_WAFER_XPHASE_FIN), 0, "shard, phase FIN" },
		{ 3, 0, 0, "shard, phase 0" },
		{ 0, EP_LW(1, DRM_WAFER_XPHASE_ROUTE), 0, "attention, phase ROUTE" },
		{ 1, EP_LW(N_LAYERS, DRM_WAFER_XPHASE_ROUTE), 0, "home, ROUTE of layer 5 of 5" },
		{ 1, EP_LW(N_LAYERS - 1, DRM_WAFER_XPHASE_FIN), 0,
		  "home, FIN of the last layer with OUT_ACT (it gives results)" },
		{ 1, EP_LW(N_LAYERS - 1, DRM_WAFER_XPHASE_GLU), DRM_WAFER_JOB_OUT_ACT,
		  "home, GLU of the last layer without OUT_ACT (results)" },
		{ 1, EP_LW(0, DRM_WAFER_XPHASE_ROUTE), DRM_WAFER_JOB_IN_ACT,
		  "home, ROUTE of layer 0 without IN_ACT (token ids)" },
		{ 1, EP_LW(0, DRM_WAFER_XPHASE_ROUTE), DRM_WAFER_JOB_LAYER,
		  "home without DRM_WAFER_JOB_LAYER" },
	};
	struct drm_wafer_job j;
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		j = (struct drm_wafer_job){ .ctx_id = e->ctx[c[i].k], .n_tokens = 1,
			.flags = (DRM_WAFER_JOB_LAYER | DRM_WAFER_JOB_IN_ACT |
				  DRM_WAFER_JOB_OUT_ACT) & ~c[i].flags,
			.layer = c[i].lw, .in_handle = e->x.handle,
			.out_handle = e->x.handle, .out_offset = e->gap };
		if (!(j.flags & DRM_WAFER_JOB_LAYER))
			j.layer = 0;
		if (!(j.flags & DRM_WAFER_JOB_OUT_ACT))
			j.top_k = TOPK;
		reject(e->fd, &j, -EINVAL, c[i].name);
	}
}

/*
 * GLU on a record whose unit count no ROUTE can have written: the device
 * refuses the record, the job fails with -EINVAL.
 */
static void ep_bad_record(struct ep *e)
{
	struct drm_wafer_xrec_hdr xh = { .n_units = 0xffffffffu };
	uint8_t *b = (uint8_t *)e->x.map + e->gap;

	memset(b, 0, e->xrec);
	((struct drm_wafer_act_rec *)b)->dim = e->dim;
	memcpy(b + DRM_WAFER_XREC_HDR_OFF(e->dim), &xh, sizeof(xh));
	expect(ep_job(e, 1, 0, EP_LW(0, DRM_WAFER_XPHASE_GLU), 1, 0), -EINVAL,
	       "GLU on an expert record with n_units 0xffffffff: the job fails");
}

/* Loads the four parts of @moe (in @b) on @e's file; 0 or -1. */
static int ep_up(struct ep *e, struct bo *b, size_t len)
{
	const uint32_t n = 4 / EP_SHARDS;	/* routed experts a shard */
	uint32_t s;
	int ret;

	ret = ep_load(e, 0, b, len, DRM_WAFER_PART_ATTN, 0, 0,
		      DRM_WAFER_MODEL_ATTN | DRM_WAFER_MODEL_EMBED, e->act, "the attention");
	ret = ret ? ret : ep_load(e, 1, b, len, DRM_WAFER_PART_XHOME, 0, 0,
				  DRM_WAFER_MODEL_XHOME | DRM_WAFER_MODEL_HEAD, e->xrec,
				  "the expert home");
	for (s = 0; s < EP_SHARDS && !ret; s++)
		ret = ep_load(e, 2 + s, b, len, DRM_WAFER_PART_XSHARD, s * n, n,
			      DRM_WAFER_MODEL_XSHARD, e->xrec,
			      s ? "the second expert shard" : "the first expert shard");
	return ret;
}

/*
 * Expert parallelism (DRM_WAFER_CAP_EXPERT_PARALLEL): stories260K upcycled
 * to 4 experts top-2 + 1 shared, its attention, FFN home and two shards of
 * two experts as four models of one file; a greedy decode, five jobs a
 * MoE layer with the shards' replies merged here through the uapi's
 * record layout, gives the in-process tokens and logits; then each bad
 * MODEL_LOAD field and job.
 */
static void test_expert_parallel(void)
{
	const struct wafer_moe_opts mo = { .n_experts = 4, .top_k = 2, .n_shared = 1 };
	struct ep e = { .fd = open_dev() };
	struct wfs_model_info mi;
	struct bo b, d;
	void *moe = NULL;
	size_t len = 0;

	wt_ok(info.caps & DRM_WAFER_CAP_EXPERT_PARALLEL, "GET_INFO caps has "
	      "DRM_WAFER_CAP_EXPERT_PARALLEL (firmware 1.%u)", info.fw_version_minor);
	if (wafer_moe_upcycle(blob, blob_len, &mo, &moe, &len) || wfs_model_parse(moe, len, &mi) ||
	    bo_new(e.fd, &b, len) || bo_new(e.fd, &d, blob_len)) {
		wt_ok(0, "expert parallelism: the MoE blob and its BOs");
		free(moe);
		close(e.fd);
		return;
	}
	memcpy(b.map, moe, len);
	memcpy(d.map, blob, blob_len);
	test_model_load_v1(e.fd, &d);
	ep_bad_loads(e.fd, &b, len, &d);
	e.dim = mi.dim;
	e.hidden = mi.hidden_dim;
	e.act = DRM_WAFER_ACT_REC_SIZE(mi.dim);
	e.xrec = DRM_WAFER_XREC_SIZE(mi.dim, mi.hidden_dim);
	e.gap = (e.xrec + 64 + 63) & ~63u;
	if (ep_up(&e, &b, len) || bo_new(e.fd, &e.x, 3 * (uint64_t)e.gap) ||
	    bo_new(e.fd, &e.out, 4096)) {
		wt_ok(0, "expert parallelism: the four models, contexts and buffers");
	} else {
		ep_decode(&e, moe, len);
		ep_bad_jobs(&e);
		ep_bad_record(&e);
		bo_free(e.fd, &e.x);
		bo_free(e.fd, &e.out);
	}
	bo_free(e.fd, &b);
	bo_free(e.fd, &d);
	free(moe);
	close(e.fd);
}

/*
 * Two models of one file at once, each with its own context: each decodes
 * as the in-process reference does (as it does alone), and unloading the
 * second leaves the first and the job it has queued (behind a vgem fence
 * when vgem is there) running.
 */
static void test_two_models(int fa, uint32_t ctx, struct bo *in, struct bo *out)
{
	uint32_t m2, ctx2, so = 0, fence = 0, got;
	struct drm_wafer_model_unload u = { 0 };
	struct drm_wafer_ctx_destroy d = { 0 };
	uint64_t seq = 0;
	struct bo o2 = { 0 };
	int ret, st = 0;

	m2 = load_model(fa, &ret);
	ctx2 = ret ? 0 : ctx_new(fa, m2, 2, 64, &ret);
	expect(ret, 0, "CTX_CREATE on the file's second model");
	got = ctx2 ? decode_check(fa, ctx2, 1, in, out, 0) : 0;
	wt_ok(got == NDECODE, "greedy decode on a second model beside the first matches "
	      "in-process firmware-sim (first mismatch at %u)", got);
	got = decode_check(fa, ctx, 3, in, out, 0);
	wt_ok(got == NDECODE, "greedy decode on the first model with the second loaded matches "
	      "(first mismatch at %u)", got);
	/* A job of the first model in flight, or queued behind a fence. */
	memcpy(in->map, ref_tok, sizeof(ref_tok));
	ret = bo_new(fa, &o2, 4096);
	if (!ret && vgem_fd >= 0)
		ret = vgem_syncobj(fa, &so, &fence);
	if (!ret) {
		struct drm_wafer_job j = { .ctx_id = ctx, .slot = 3, .n_tokens = 1, .top_k = TOPK,
			.in_handle = in->handle, .out_handle = o2.handle,
			.in_syncobjs = so ? (uintptr_t)&so : 0, .in_syncobj_count = so ? 1 : 0 };

		ret = submit(fa, &j, &seq);
	}
	expect(ret, 0, "SUBMIT on the first model before the second's unload");
	d.ctx_id = ctx2;
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_DESTROY, &d), 0, "CTX_DESTROY the second model's context");
	u.model_id = m2;
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), 0,
	       "MODEL_UNLOAD the second model while the first has a job queued");
	if (fence)
		vgem_signal(fence);
	ret = ret ? ret : wait_job(fa, seq, 60, &st);
	expect(ret ? ret : st, 0, "WAIT the first model's job after the second's unload");
	wt_ok(!ret && ((struct drm_wafer_token_result *)o2.map)->argmax == ref_tok[1],
	      "the first model's job result is right (argmax %u, reference %u)",
	      ret ? 0 : ((struct drm_wafer_token_result *)o2.map)->argmax, ref_tok[1]);
	ctx_new(fa, m2, 1, 16, &ret);
	expect(ret, -ENOENT, "CTX_CREATE on the unloaded second model");
	bo_free(fa, &o2);
	if (so)
		syncobj_free(fa, so);
	got = decode_check(fa, ctx, 3, in, out, 0);
	wt_ok(got == NDECODE, "greedy decode on the first model after the second's unload "
	      "matches (first mismatch at %u)", got);
}

static void run_main(void)
{
	int fa = open_dev(), fb = open_dev(), fc, ret;
	uint32_t model = 0, ctx, got;
	struct bo in, out, heap_out = { 0 };

	test_get_info(fa);
	test_bos(fa, fb);
	test_model_load(fa, fb, &model);
	if (!model)
		return;
	test_model_unload_invalid(fa, fb, model);
	ctx = test_ctx(fa, fb, model);
	if (!ctx || bo_new(fa, &in, 4096) || bo_new(fa, &out, 4096)) {
		wt_ok(0, "context and job buffers");
		return;
	}
	test_submit(fa, fb, ctx, &in, &out);
	test_uring(fa);
	test_not_before(fa, &in);
	test_wait(fa, fb);
	if (vgem_fd >= 0)
		test_wait_queued(fa);
	else
		wt_ok(0, "vgem is not loaded: the queued-job WAIT cases did not run");

	/* The valid flow after all of the above. */
	got = decode_check(fa, ctx, 1, &in, &out, 0);
	wt_ok(got == NDECODE, "greedy decode of %d tokens after the invalid cases matches "
	      "in-process firmware-sim (first mismatch at %u)", NDECODE, got);
	test_two_models(fa, ctx, &in, &out);

	/* A job writing into an imported system dma-heap buffer. */
	{
		int heap = open("/dev/dma_heap/system", O_RDWR | O_CLOEXEC);
		struct dma_heap_allocation_data al = { .len = 4096, .fd_flags = O_RDWR | O_CLOEXEC };
		struct drm_wafer_bo_info bi = { 0 };

		if (heap >= 0 && !ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &al) &&
		    !prime_import(fa, (int)al.fd, &heap_out.handle)) {
			bi.handle = heap_out.handle;
			ioc(fa, DRM_IOCTL_WAFER_BO_INFO, &bi);
			heap_out.size = bi.size;
			heap_out.map = mmap(NULL, bi.size, PROT_READ | PROT_WRITE, MAP_SHARED, fa,
					    bi.mmap_offset);
			if (heap_out.map == MAP_FAILED)
				heap_out.map = NULL;
			got = heap_out.map ? decode_check(fa, ctx, 2, &in, &heap_out, 64) : 0;
			wt_ok(got == NDECODE, "greedy decode into an imported dma-heap BO matches "
			      "(first mismatch at %u)", got);
			bo_free(fa, &heap_out);
			close((int)al.fd);
		} else {
			wt_diag("no system dma-heap: imported output BO not tested");
		}
		if (heap >= 0)
			close(heap);
	}

	/* A queued job keeps its context and buffers alive. */
	if (vgem_fd >= 0) {
		uint32_t ctx2 = ctx_new(fa, model, 1, 16, &ret), so = 0, fence = 0;
		struct drm_wafer_ctx_destroy d = { .ctx_id = ctx2 };
		struct bo o2;
		uint64_t seq = 0;
		int st = 0;

		memcpy(in.map, ref_tok, sizeof(ref_tok));
		if (!ret)
			ret = bo_new(fa, &o2, 4096);
		if (!ret)
			ret = vgem_syncobj(fa, &so, &fence);
		if (!ret) {
			struct drm_wafer_job j = { .ctx_id = ctx2, .n_tokens = 1, .top_k = TOPK,
				.in_handle = in.handle, .out_handle = o2.handle,
				.in_syncobjs = (uintptr_t)&so, .in_syncobj_count = 1 };

			ret = submit(fa, &j, &seq);
		}
		expect(ret, 0, "SUBMIT on a fresh context behind an unsignalled fence");
		expect(ioc(fa, DRM_IOCTL_WAFER_CTX_DESTROY, &d), 0,
		       "CTX_DESTROY while its job is queued");
		expect(gem_close(fa, o2.handle), 0, "GEM_CLOSE the queued job's output BO");
		o2.handle = 0;
		vgem_signal(fence);
		ret = ret ? ret : wait_job(fa, seq, 60, &st);
		expect(ret ? ret : st, 0, "WAIT the job whose context and output handle are gone");
		wt_ok(o2.map && ((struct drm_wafer_token_result *)o2.map)->argmax == ref_tok[1],
		      "its result is right (argmax %u, reference %u)",
		      o2.map ? ((struct drm_wafer_token_result *)o2.map)->argmax : 0, ref_tok[1]);
		bo_free(fa, &o2);
		syncobj_free(fa, so);
	}

	/* Teardown: unload is refused while a context exists. */
	{
		struct drm_wafer_model_unload u = { .model_id = model };
		struct drm_wafer_ctx_destroy d = { .ctx_id = ctx };

		expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), -EBUSY,
		       "MODEL_UNLOAD while a context of the model exists");
		expect(ioc(fa, DRM_IOCTL_WAFER_CTX_DESTROY, &d), 0, "CTX_DESTROY the last context");
		expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), 0, "MODEL_UNLOAD valid");
		expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), -ENOENT, "MODEL_UNLOAD twice");
		ctx_new(fa, model, 1, 16, &ret);
		expect(ret, -ENOENT, "CTX_CREATE on an unloaded model");
	}
	bo_free(fa, &in);
	bo_free(fa, &out);

	/* Another file loads the model once the first unloaded it. */
	model = load_model(fb, &ret);
	expect(ret, 0, "MODEL_LOAD from the other file after the owner unloaded");
	if (!ret) {
		struct drm_wafer_model_unload u = { .model_id = model };

		expect(ioc(fb, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), 0, "MODEL_UNLOAD by the other file");
	}

	/* Closing a file whose job is still queued behind an unsignalled fence. */
	fc = open_dev();
	model = load_model(fc, &ret);
	ctx = model ? ctx_new(fc, model, 1, 16, &ret) : 0;
	if (vgem_fd >= 0 && ctx && !bo_new(fc, &in, 4096) && !bo_new(fc, &out, 4096)) {
		struct drm_wafer_job j = { .ctx_id = ctx, .n_tokens = 1, .top_k = TOPK,
			.in_handle = in.handle, .out_handle = out.handle, .in_syncobj_count = 1 };
		uint32_t so, fence;
		uint64_t seq;

		memcpy(in.map, ref_tok, sizeof(ref_tok));
		ret = vgem_syncobj(fc, &so, &fence);
		j.in_syncobjs = (uintptr_t)&so;
		if (!ret)
			ret = submit(fc, &j, &seq);
		expect(ret, 0, "SUBMIT behind an unsignalled fence, then close the file");
		munmap(in.map, in.size);
		munmap(out.map, out.size);
		close(fc);
		vgem_signal(fence);
		usleep(500000);
		model = load_model(fa, &ret);
		expect(ret, 0, "MODEL_LOAD after a file closed with a queued job (its model is "
		       "released)");
	} else {
		wt_ok(0, "close with a queued job: setup (%s)", ename(ret));
		close(fc);
		model = load_model(fa, &ret);
	}

	/* And the device still works from a fresh state. */
	if (model) {
		ctx = ctx_new(fa, model, 2, 64, &ret);
		if (ctx && !bo_new(fa, &in, 4096) && !bo_new(fa, &out, 4096)) {
			got = decode_check(fa, ctx, 1, &in, &out, 0);
			wt_ok(got == NDECODE, "final greedy decode of %d tokens matches (%u)", NDECODE,
			      got);
			bo_free(fa, &in);
			bo_free(fa, &out);
		} else {
			wt_ok(0, "final context and buffers (%s)", ename(ret));
		}
	} else {
		wt_ok(0, "final decode: no model loaded (%s)", ename(ret));
	}
	close(fa);
	close(fb);
	test_layer_range();
	test_layer_parts();
	test_expert_parallel();
}

static void run_nospc(void)
{
	int fa = open_dev(), ret;
	struct drm_wafer_model_load ml;
	struct bo b;

	ret = bo_new(fa, &b, blob_len);
	if (!expect(ret, 0, "BO for the model blob"))
		return;
	memcpy(b.map, blob, blob_len);
	ret = model_load_poisoned(fa, b.handle, 0, 0, 0, &ml);
	expect(ret, -ENOSPC, "MODEL_LOAD a model larger than SRAM (%u x %" PRIu64 " bytes)",
	       info.stages, (uint64_t)info.sram_bytes_per_stage);
	wt_ok(ml.sram_needed != POISON64 && ml.sram_needed > info.sram_bytes_per_stage,
	      "MODEL_LOAD -ENOSPC sets sram_needed (%" PRIu64 ")", (uint64_t)ml.sram_needed);
	wt_ok(ml.model_id == POISON32 || ml.model_id == 0,
	      "MODEL_LOAD -ENOSPC leaves model_id untouched or zero (0x%x)", ml.model_id);
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = blob_len,
					    .flags = DRM_WAFER_LOAD_STREAM };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -ENOSPC,
	       "MODEL_LOAD DRM_WAFER_LOAD_STREAM where even the streaming window does not fit");
	wt_ok(ml.sram_needed > info.sram_bytes_per_stage,
	      "MODEL_LOAD streaming -ENOSPC sets sram_needed (%" PRIu64 ")",
	      (uint64_t)ml.sram_needed);
	bo_free(fa, &b);
	/* The failed load left nothing behind: a CTX_CREATE finds no model. */
	ctx_new(fa, 1, 1, 16, &ret);
	expect(ret, -ENOENT, "CTX_CREATE after a failed MODEL_LOAD");
	close(fa);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "main";
	struct drm_wafer_get_info gi = { .info_ptr = (uintptr_t)&info, .info_size = sizeof(info) };
	int fd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (setup_blobs()) {
		printf("not ok - packing the shared model / in-process reference\n");
		return 1;
	}
	fd = open_dev();
	if (ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi)) {
		printf("not ok - GET_INFO: %s\n", strerror(errno));
		return 1;
	}
	close(fd);
	vgem_open();
	if (vgem_fd < 0)
		wt_diag("vgem not found: load it (modprobe vgem) for the queued-job cases");

	if (!strcmp(mode, "main")) {
		run_main();
	} else if (!strcmp(mode, "limits")) {
		test_limits();
	} else if (!strcmp(mode, "nospc")) {
		run_nospc();
	} else {
		fprintf(stderr, "usage: conformance [main|limits|nospc]\n");
		return 2;
	}
	return wt_done();
}
