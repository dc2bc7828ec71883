// SPDX-License-Identifier: MIT
/*
 * conformance: what every group uses: ioctls, BOs, syncobjs, vgem fences,
 * the model blobs and their reference decode.
 */
#include "conformance.h"

int ioc(int fd, unsigned long req, void *arg)
{
	return drmIoctl(fd, req, arg) ? -errno : 0;
}

const char *ename(int e)
{
	const char *n;

	if (!e)
		return "0";
	n = strerrorname_np(e < 0 ? -e : e);
	return n ? n : "E?";
}

/* One case: the call returned @got, the documented result is @want. */
int expect(int got, int want, const char *fmt, ...)
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

int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

int64_t deadline(int seconds)
{
	return now_ns() + (int64_t)seconds * 1000000000ll;
}

int looks_like_kernel_ptr(uint64_t v)
{
	return (v >> 48) == 0xffff && v != ~0ull;
}

int open_dev(void)
{
	int fd = open("/dev/accel/accel0", O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		printf("not ok - open /dev/accel/accel0: %s\n", strerror(errno));
		exit(1);
	}
	return fd;
}

int bo_new(int fd, struct bo *b, uint64_t size)
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

int gem_close(int fd, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	return ioc(fd, DRM_IOCTL_GEM_CLOSE, &c);
}

void bo_free(int fd, struct bo *b)
{
	if (b->map)
		munmap(b->map, b->size);
	if (b->handle)
		gem_close(fd, b->handle);
	memset(b, 0, sizeof(*b));
}

int syncobj_new(int fd, uint32_t flags, uint32_t *h)
{
	struct drm_syncobj_create c = { .flags = flags };
	int ret = ioc(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c);

	*h = c.handle;
	return ret;
}

void syncobj_free(int fd, uint32_t h)
{
	struct drm_syncobj_destroy d = { .handle = h };

	ioc(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
}

int prime_export(int fd, uint32_t handle, uint32_t flags, int *out)
{
	struct drm_prime_handle p = { .handle = handle, .flags = flags, .fd = -1 };
	int ret = ioc(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p);

	*out = p.fd;
	return ret;
}

int prime_import(int fd, int dmabuf, uint32_t *handle)
{
	struct drm_prime_handle p = { .fd = dmabuf };
	int ret = ioc(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p);

	*handle = p.handle;
	return ret;
}

/* ------------------------------------------------------ shared state -- */

struct drm_wafer_device_info info;
void *blob, *blob_ck;		/* valid blobs: plain, with checksum */
size_t blob_len, blob_ck_len;
uint32_t ref_tok[NDECODE + 1];	/* greedy decode from BOS */

int vgem_fd = -1;

/* Opens the vgem device if it is there. */
void vgem_open(void)
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
int vgem_syncobj(int fd, uint32_t *syncobj, uint32_t *fence_id)
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

void vgem_signal(uint32_t fence_id)
{
	struct vgem_fence_signal s = { .fence = fence_id };

	ioc(vgem_fd, VGEM_IOCTL_FENCE_SIGNAL, &s);
}

void *delayed_signal_fn(void *arg)
{
	struct delayed_signal *d = arg;
	struct timespec ts = { d->ms / 1000, (long)(d->ms % 1000) * 1000000l };

	nanosleep(&ts, NULL);
	vgem_signal(d->fence);
	return NULL;
}

/* Loads the valid blob through a fresh BO; returns the model id or 0. */
uint32_t load_model(int fd, int *err)
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

uint32_t ctx_new(int fd, uint32_t model, uint32_t slots, uint32_t len, int *err)
{
	struct drm_wafer_ctx_create c = { .model_id = model, .kv_slots = slots, .ctx_len = len };
	int ret = ioc(fd, DRM_IOCTL_WAFER_CTX_CREATE, &c);

	if (err)
		*err = ret;
	return ret ? 0 : c.ctx_id;
}

int wait_job(int fd, uint64_t seqno, int seconds, int *status)
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
uint32_t decode_check(int fd, uint32_t ctx, uint32_t slot, struct bo *in,
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
long param(const char *name)
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
