// SPDX-License-Identifier: MIT
/* wt_dev.c - see wt_dev.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>

#include "wfs_forward.h"
#include "wfs_pack.h"
#include "wt_dev.h"
#include "wt_model.h"
#include "wt_util.h"

int wt_ioctl(int fd, unsigned long req, void *arg)
{
	int ret;

	do {
		ret = ioctl(fd, req, arg);
	} while (ret == -1 && (errno == EINTR || errno == EAGAIN));
	return ret ? -errno : 0;
}

int wt_dev_open(int index)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/dev/accel/accel%d", index);
	fd = open(path, O_RDWR | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int wt_bo_new(int fd, struct wt_bo *b, size_t size)
{
	struct drm_wafer_bo_create c = { .size = size };
	struct drm_wafer_bo_info i = { 0 };
	int ret = wt_ioctl(fd, DRM_IOCTL_WAFER_BO_CREATE, &c);

	if (ret)
		return ret;
	i.handle = c.handle;
	ret = wt_ioctl(fd, DRM_IOCTL_WAFER_BO_INFO, &i);
	if (ret)
		return ret;
	b->handle = c.handle;
	b->size = i.size;
	b->map = mmap(NULL, i.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, i.mmap_offset);
	return b->map == MAP_FAILED ? -errno : 0;
}

int64_t wt_deadline_ms(int64_t ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec + ms * 1000000ll;
}

int wt_wait_job(int fd, uint64_t seqno, uint64_t *device_ns)
{
	struct drm_wafer_wait w = { .seqno = seqno, .timeout_ns = wt_deadline_ms(120000) };
	int ret = wt_ioctl(fd, DRM_IOCTL_WAFER_WAIT, &w);

	if (ret)
		return ret;
	if (device_ns)
		*device_ns = w.device_ns;
	return w.status;
}

int wt_dev_load_model(int fd, unsigned int wbits, uint32_t slots, uint32_t ctx_len,
		      struct wt_dev_model *m)
{
	return wt_dev_load_range(fd, wbits, 0, 0, slots, ctx_len, m);
}

int wt_dev_load_range(int fd, unsigned int wbits, uint32_t layer_first,
		      uint32_t layer_count, uint32_t slots, uint32_t ctx_len,
		      struct wt_dev_model *m)
{
	struct wfs_pack_opts po = { .wbits = wbits, .group_size = 32 };
	struct drm_wafer_model_load ml = { 0 };
	struct drm_wafer_ctx_create cc = { 0 };
	struct wfs_ckpt ck;
	struct wt_bo b;
	int ret;

	memset(m, 0, sizeof(*m));
	if (wfs_ckpt_load(wt_model_path("stories260K.bin"), &ck))
		return -ENOENT;
	ret = wfs_pack(&ck, &po, &m->blob, &m->blob_len);
	wfs_ckpt_free(&ck);
	if (ret)
		return ret < 0 ? ret : -EINVAL;
	ret = wt_bo_new(fd, &b, m->blob_len);
	if (ret)
		return ret;
	memcpy(b.map, m->blob, m->blob_len);
	ml.bo_handle = b.handle;
	ml.blob_size = m->blob_len;
	ml.layer_first = layer_first;
	ml.layer_count = layer_count;
	ret = wt_ioctl(fd, DRM_IOCTL_WAFER_MODEL_LOAD, &ml);
	munmap(b.map, b.size);
	if (ret)
		return ret;
	m->model_id = ml.model_id;
	m->sram_needed = ml.sram_needed;
	m->n_layers = ml.n_layers;
	m->model_flags = ml.model_flags;
	m->act_size = ml.act_size;
	cc.model_id = ml.model_id;
	cc.kv_slots = slots;
	cc.ctx_len = ctx_len;
	ret = wt_ioctl(fd, DRM_IOCTL_WAFER_CTX_CREATE, &cc);
	if (ret)
		return ret;
	m->ctx_id = cc.ctx_id;
	m->kv_bytes = cc.kv_bytes;
	return 0;
}

const struct drm_wafer_token_result *wt_result(const struct wt_bo *b, size_t off,
					       uint32_t k, uint32_t i)
{
	return (const void *)((const char *)b->map + off + (size_t)i * DRM_WAFER_RESULT_SIZE(k));
}

void wt_uring_prep_submit(struct io_uring_sqe *sqe, int fd, const struct drm_wafer_job *job,
			  uint64_t user_data)
{
	memset(sqe, 0, 2 * sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = DRM_WAFER_URING_CMD_SUBMIT;
	memcpy(sqe->cmd, job, sizeof(*job));
	sqe->user_data = user_data;
}

int wt_result_matches(const struct drm_wafer_token_result *r, uint32_t pos, uint32_t argmax,
		      const struct wfs_topk_entry *ref, uint32_t k)
{
	uint32_t i;

	if (r->position != pos || r->argmax != argmax || r->top_k != k)
		return 0;
	for (i = 0; i < k; i++)
		if (r->topk[i].token != ref[i].token || r->topk[i].logit != ref[i].logit)
			return 0;
	return 1;
}

int wt_inject_fault(int dev, const char *what)
{
	char path[96];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "/sys/kernel/debug/accel/wafer.%d/inject_fault", dev);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	ret = fputs(what, f) < 0 ? -EIO : 0;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

long wt_syscall_of(pid_t pid, unsigned long long *arg1)
{
	unsigned long long arg0;
	char path[64];
	long nr = -1;
	FILE *f;

	*arg1 = 0;
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%ld %llx %llx", &nr, &arg0, arg1) < 1)
		nr = -1;
	fclose(f);
	return nr;
}

int wt_in_ioctl(pid_t pid, unsigned long req)
{
	unsigned long long arg1;

	return wt_syscall_of(pid, &arg1) == SYS_ioctl && arg1 == req;
}

unsigned int wt_debugfs_inflight(void)
{
	FILE *f = fopen("/sys/kernel/debug/accel/wafer.0/jobs", "r");
	char line[256];
	unsigned int n = ~0u;

	if (!f)
		return ~0u;
	while (fgets(line, sizeof(line), f))
		sscanf(line, "in flight: %u", &n);
	fclose(f);
	return n;
}

long long wt_fdinfo(int fd, const char *key)
{
	char path[64], line[256];
	size_t kl = strlen(key);
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, kl) && line[kl] == ':')
			v = strtoll(line + kl + 1, NULL, 10);
	}
	fclose(f);
	return v;
}

int wt_decode_reference(uint32_t n, uint32_t *expect)
{
	struct wfs_pack_opts po = { .wbits = 8, .group_size = 32 };
	struct wfs_topk_entry topk[WT_DECODE_TOPK];
	struct wt_model ref;
	struct wfs_ckpt ck;
	size_t len;
	uint32_t i;
	void *blob;
	int ret;

	if (wfs_ckpt_load(wt_model_path("stories260K.bin"), &ck))
		return -ENOENT;
	ret = wfs_pack(&ck, &po, &blob, &len);
	wfs_ckpt_free(&ck);
	if (ret)
		return ret < 0 ? ret : -EINVAL;
	ret = wt_model_open(&ref, blob, len, n, 0);
	if (!ret) {
		for (i = 0; i < n; i++)
			expect[i] = wt_model_step(&ref, i ? expect[i - 1] : 1, i,
						  WT_DECODE_TOPK, topk);
		wt_model_close(&ref);
	}
	free(blob);
	return ret ? -EINVAL : 0;
}

int wt_decode_fresh(uint32_t n, const uint32_t *expect)
{
	return wt_decode_fresh_on(0, n, expect);
}

int wt_accel_index(int dev)
{
	char path[96], link[256], want[32];
	ssize_t len;
	int i;

	snprintf(want, sizeof(want), "/wafer.%d", dev);
	for (i = 0; i < 64; i++) {
		snprintf(path, sizeof(path), "/sys/class/accel/accel%d/device", i);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = 0;
		if (len >= (ssize_t)strlen(want) && !strcmp(link + len - strlen(want), want))
			return i;
	}
	return -ENOENT;
}

int wt_decode_fresh_on(int index, uint32_t n, const uint32_t *expect)
{
	struct drm_wafer_submit sub = { 0 };
	struct wt_dev_model m;
	struct wt_bo in = { 0 }, out = { 0 };
	uint32_t pos;
	int fd, ret;

	fd = wt_dev_open(index);
	if (fd < 0)
		return fd;
	ret = wt_dev_load_model(fd, 8, 1, 256, &m);
	if (!ret)
		ret = wt_bo_new(fd, &in, 4096);
	if (!ret)
		ret = wt_bo_new(fd, &out, (size_t)n * DRM_WAFER_RESULT_SIZE(WT_DECODE_TOPK));
	if (!ret) {
		((uint32_t *)in.map)[0] = 1;
		memcpy((uint32_t *)in.map + 1, expect, (n - 1) * 4);
		/* One prefill job returning every position: n greedy steps. */
		sub.job = (struct drm_wafer_job){ .ctx_id = m.ctx_id, .n_tokens = n,
			.top_k = WT_DECODE_TOPK, .flags = DRM_WAFER_JOB_ALL_POSITIONS,
			.in_handle = in.handle, .out_handle = out.handle };
		ret = wt_ioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &sub);
	}
	if (!ret)
		ret = wt_wait_job(fd, sub.seqno, NULL);
	for (pos = 0; pos < n && !ret; pos++)
		if (wt_result(&out, 0, WT_DECODE_TOPK, pos)->argmax != expect[pos])
			ret = -EBADMSG;
	if (in.map && in.map != MAP_FAILED)
		munmap(in.map, in.size);
	if (out.map && out.map != MAP_FAILED)
		munmap(out.map, out.size);
	free(m.blob);
	close(fd);
	return ret;
}
