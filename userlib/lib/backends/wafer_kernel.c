// SPDX-License-Identifier: MIT
/*
 * The "kernel" backend: the wafer DRM accel driver through its ioctls
 * (uapi/drm/wafer_accel.h).  Jobs go through a submission path
 * (wafer_submit.h): io_uring or the SUBMIT/WAIT ioctls.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xf86drm.h>

#include "drm/wafer_accel.h"
#include "../wafer_backend.h"
#include "wfs_profile.h"
#include "wafer_submit.h"

_Static_assert(sizeof(struct wafer_token_result) == sizeof(struct drm_wafer_token_result),
	       "result layout");
_Static_assert(sizeof(struct wafer_topk) == sizeof(struct drm_wafer_topk), "pair layout");
_Static_assert(WAFER_MAX_TOPK == DRM_WAFER_MAX_TOPK, "top-k limit");
_Static_assert(WAFER_LOGIT_FRAC_BITS == DRM_WAFER_LOGIT_FRAC_BITS, "logit format");
_Static_assert(WAFER_JOB_ALL_POSITIONS == DRM_WAFER_JOB_ALL_POSITIONS &&
	       WAFER_JOB_NOP == DRM_WAFER_JOB_NOP && WAFER_JOB_TIMES == DRM_WAFER_JOB_TIMES,
	       "job flags");
_Static_assert(sizeof(struct wafer_chunk_time) == sizeof(struct drm_wafer_chunk_time) &&
	       WAFER_CHUNK_VALID == DRM_WAFER_CHUNK_VALID &&
	       WAFER_CHUNK_LINK == DRM_WAFER_CHUNK_LINK, "chunk time records");
_Static_assert(WAFER_CAP_URING_SUBMIT == DRM_WAFER_CAP_URING_SUBMIT &&
	       WAFER_CAP_PRIME == DRM_WAFER_CAP_PRIME &&
	       WAFER_CAP_WEIGHT_STREAM == DRM_WAFER_CAP_WEIGHT_STREAM &&
	       WAFER_CAP_NOT_BEFORE == DRM_WAFER_CAP_NOT_BEFORE &&
	       WAFER_CAP_LAYER_PARTS == DRM_WAFER_CAP_LAYER_PARTS &&
	       WAFER_CAP_EXPERT_GROUPS == DRM_WAFER_CAP_EXPERT_GROUPS &&
	       WAFER_CAP_EXPERT_PARALLEL == DRM_WAFER_CAP_EXPERT_PARALLEL, "caps");

/**
 * struct kernel_dev - kernel backend state
 * @fd: the device file
 * @sub: the submission path
 * @sub_priv: its state
 */
struct kernel_dev {
	int fd;
	const struct wafer_submit_ops *sub;
	void *sub_priv;
};

static struct kernel_dev *kd(const struct wafer_dev *dev)
{
	return dev->priv;
}

static int ioc(struct wafer_dev *dev, unsigned long req, void *arg, const char *what)
{
	if (drmIoctl(kd(dev)->fd, req, arg))
		return wafer_set_error(-errno, "%s failed: %s", what, strerror(errno));
	return 0;
}

static int query(struct wafer_dev *dev)
{
	struct drm_wafer_device_info di = { 0 };
	struct drm_wafer_get_info gi = { .info_ptr = (uintptr_t)&di, .info_size = sizeof(di) };
	struct wafer_info *i = &dev->info;
	struct wfs_profile prof;
	int ret = ioc(dev, DRM_IOCTL_WAFER_GET_INFO, &gi, "DRM_IOCTL_WAFER_GET_INFO");

	if (ret)
		return ret;
	memset(i, 0, sizeof(*i));
	i->api_version = di.api_version;
	i->caps = di.caps;
	i->fw_major = di.fw_version_major;
	i->fw_minor = di.fw_version_minor;
	i->profile = di.profile;
	if (wfs_profile_get(di.profile, &prof))
		strcpy(i->profile_name, "unknown");
	else
		memcpy(i->profile_name, prof.name, sizeof(i->profile_name));
	i->profile_name[sizeof(i->profile_name) - 1] = '\0';
	i->stages = di.stages;
	i->sram_bytes_per_stage = di.sram_bytes_per_stage;
	i->sram_bytes_free = di.sram_bytes_free;
	i->clock_hz = di.clock_hz;
	i->macs_per_cycle = di.macs_per_cycle;
	i->numa_node = di.numa_node;
	i->max_bo_size = di.max_bo_size;
	i->max_models = di.max_models;
	i->max_contexts = di.max_contexts;
	i->max_tokens_per_job = di.max_tokens_per_job;
	i->max_inflight_jobs = di.max_inflight_jobs;
	i->job_timeout_ms = di.job_timeout_ms;
	/* Older drivers stop before these (di.size says so); they read 0. */
	i->models_loaded = di.models_loaded;
	i->contexts = di.contexts;
	i->jobs_inflight = di.jobs_inflight;
	i->stream_bytes_per_cycle = di.stream_bytes_per_cycle;
	i->stream_latency_cycles = di.stream_latency_cycles;
	return 0;
}

static int pick_path(struct wafer_dev *dev, enum wafer_submit_path want)
{
	struct kernel_dev *k = kd(dev);
	int ret;

	if (want == WAFER_SUBMIT_URING || want == WAFER_SUBMIT_AUTO) {
		k->sub = &wafer_submit_uring;
		ret = k->sub->init(k->fd, &dev->info, &k->sub_priv);
		if (ret != -EOPNOTSUPP || want == WAFER_SUBMIT_URING)
			return ret;
	}
	k->sub = &wafer_submit_ioctl;
	return k->sub->init(k->fd, &dev->info, &k->sub_priv);
}

static int kernel_open(struct wafer_dev *dev, const struct wafer_open_opts *o)
{
	struct kernel_dev *k = calloc(1, sizeof(*k));
	int ret;

	if (!k)
		return wafer_set_error(-ENOMEM, "out of memory");
	dev->priv = k;
	dev->index = o->index;
	if (dev->index < 0) {
		struct wafer_device_desc d;

		ret = wafer_list_devices(&d, 1);
		if (ret <= 0) {
			free(k);
			return ret < 0 ? ret : wafer_set_error(-ENOENT, "no wafer device found in "
							       WAFER_ACCEL_DIR);
		}
		dev->index = d.index;
	}
	k->fd = wafer_open_device(dev->index);
	if (k->fd < 0) {
		ret = k->fd;
		goto err;
	}
	ret = query(dev);
	if (!ret)
		ret = pick_path(dev, o->submit);
	if (!ret)
		return 0;
	close(k->fd);
err:
	free(k);
	dev->priv = NULL;
	return ret;
}

static void kernel_close(struct wafer_dev *dev)
{
	struct kernel_dev *k = kd(dev);

	if (k->sub && k->sub->fini)
		k->sub->fini(k->sub_priv);
	close(k->fd);
	free(k);
}

static const char *kernel_submit_name(const struct wafer_dev *dev)
{
	return kd(dev)->sub->name;
}

static void gem_close(struct wafer_dev *dev, uint32_t handle)
{
	struct drm_gem_close c = { .handle = handle };

	drmIoctl(kd(dev)->fd, DRM_IOCTL_GEM_CLOSE, &c);
}

static int kernel_bo_create(struct wafer_dev *dev, struct wafer_bo *bo)
{
	struct drm_wafer_bo_create c = { .size = bo->size };
	struct drm_wafer_bo_info i = { 0 };
	int ret = ioc(dev, DRM_IOCTL_WAFER_BO_CREATE, &c, "DRM_IOCTL_WAFER_BO_CREATE");

	if (ret)
		return ret;
	i.handle = c.handle;
	ret = ioc(dev, DRM_IOCTL_WAFER_BO_INFO, &i, "DRM_IOCTL_WAFER_BO_INFO");
	if (ret)
		goto err;
	bo->map = mmap(NULL, i.size, PROT_READ | PROT_WRITE, MAP_SHARED, kd(dev)->fd,
		       (off_t)i.mmap_offset);
	if (bo->map == MAP_FAILED) {
		ret = wafer_set_error(-errno, "mmap of a %llu-byte BO failed: %s",
				      (unsigned long long)i.size, strerror(errno));
		goto err;
	}
	bo->size = i.size;
	bo->handle = c.handle;
	/* Before the first touch, so the pages come from the device's node. */
	wafer_numa_place(bo->map, bo->size, dev->info.numa_node);
	return 0;
err:
	gem_close(dev, c.handle);
	return ret;
}

static void kernel_bo_destroy(struct wafer_dev *dev, struct wafer_bo *bo)
{
	if (!bo->view_of)
		munmap(bo->map, bo->size);
	gem_close(dev, bo->handle);
}

/* The same pages on this device: a dma-buf of @src's device imported here. */
static int kernel_bo_import(struct wafer_dev *dev, const struct wafer_bo *src,
			    struct wafer_bo *bo)
{
	int fd, ret;

	if (drmPrimeHandleToFD(kd(src->dev)->fd, src->handle, DRM_CLOEXEC | DRM_RDWR, &fd))
		return wafer_set_error(-errno, "PRIME export from accel%d failed: %s",
				       src->dev->index, strerror(errno));
	ret = drmPrimeFDToHandle(kd(dev)->fd, fd, &bo->handle);
	ret = ret ? -errno : 0;
	close(fd);
	if (ret)
		return wafer_set_error(ret, "PRIME import into accel%d failed: %s",
				       dev->index, strerror(-ret));
	bo->map = src->map;
	bo->size = src->size;
	return 0;
}

/* A failed MODEL_LOAD: beside other models, SRAM left is what counts. */
static int kernel_load_error(struct wafer_dev *dev, int err,
			     const struct drm_wafer_model_load *ml)
{
	struct drm_wafer_device_info di = { 0 };
	struct drm_wafer_get_info gi = { .info_ptr = (uintptr_t)&di, .info_size = sizeof(di) };

	if (err == EMFILE)
		return wafer_set_error(-EMFILE, "this file holds %u models already, its most "
				       "(module parameter max_file_models)", dev->info.max_models);
	if (err == EBUSY)
		return wafer_set_error(-EBUSY, "the device holds as many models as it can");
	if (err != ENOSPC)
		return wafer_set_error(-err, "DRM_IOCTL_WAFER_MODEL_LOAD failed: %s",
				       strerror(err));
	if (drmIoctl(kd(dev)->fd, DRM_IOCTL_WAFER_GET_INFO, &gi) || !di.models_loaded)
		return wafer_set_error(-ENOSPC,
			"the model does not fit: it needs %llu bytes of SRAM, "
			"the device has %u stages x %llu bytes",
			(unsigned long long)ml->sram_needed, dev->info.stages,
			(unsigned long long)dev->info.sram_bytes_per_stage);
	return wafer_set_error(-ENOSPC, "the model does not fit next to the %u model%s loaded: "
			       "it needs %llu bytes of SRAM, %llu KiB are left of the device's "
			       "%u stages x %llu KiB", di.models_loaded,
			       di.models_loaded == 1 ? "" : "s",
			       (unsigned long long)ml->sram_needed,
			       (unsigned long long)di.sram_bytes_free >> 10, dev->info.stages,
			       (unsigned long long)dev->info.sram_bytes_per_stage >> 10);
}

static int kernel_model_load(struct wafer_dev *dev, struct wafer_bo *bo, size_t len,
			     struct wafer_load_hw *ld)
{
	struct drm_wafer_model_load ml = {
		.bo_handle = bo->handle, .blob_size = len,
		.layer_first = ld->layer_first, .layer_count = ld->layer_count,
		.flags = ld->stream ? DRM_WAFER_LOAD_STREAM : 0,
		.part = ld->part, .expert_group = ld->expert_group,
		.expert_first = ld->expert_first, .expert_count = ld->expert_count,
	};

	/* ld->part is a WFW_PART_*, the uapi's DRM_WAFER_PART_* (wfw_uapi_ties.h). */
	if ((ld->part == DRM_WAFER_PART_XHOME || ld->part == DRM_WAFER_PART_XSHARD) &&
	    !(dev->info.caps & WAFER_CAP_EXPERT_PARALLEL))
		return wafer_set_error(-EOPNOTSUPP, "accel%d: the driver loads no expert-parallel "
				       "parts (no DRM_WAFER_CAP_EXPERT_PARALLEL)", dev->index);
	if (ld->part && !(dev->info.caps & WAFER_CAP_LAYER_PARTS))
		return wafer_set_error(-EOPNOTSUPP, "accel%d: the driver loads whole layers only "
				       "(no DRM_WAFER_CAP_LAYER_PARTS)", dev->index);
	if (ld->expert_group && !(dev->info.caps & WAFER_CAP_EXPERT_GROUPS))
		return wafer_set_error(-EOPNOTSUPP, "accel%d: the driver places no expert groups "
				       "(no DRM_WAFER_CAP_EXPERT_GROUPS)", dev->index);
	if (drmIoctl(kd(dev)->fd, DRM_IOCTL_WAFER_MODEL_LOAD, &ml))
		return kernel_load_error(dev, errno, &ml);
	ld->id = ml.model_id;
	ld->sram_bytes = ml.sram_needed;
	ld->n_layers = ml.n_layers;
	ld->embed = !!(ml.model_flags & DRM_WAFER_MODEL_EMBED);
	ld->head = !!(ml.model_flags & DRM_WAFER_MODEL_HEAD);
	ld->act_size = ml.act_size;
	/* wafer_query()'s models and free SRAM as they are now (as inproc). */
	query(dev);
	return 0;
}

static int kernel_model_unload(struct wafer_dev *dev, uint32_t id)
{
	struct drm_wafer_model_unload u = { .model_id = id };
	int ret = ioc(dev, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u, "DRM_IOCTL_WAFER_MODEL_UNLOAD");

	if (!ret)
		query(dev);
	return ret;
}

static int kernel_ctx_create(struct wafer_dev *dev, uint32_t model_id, unsigned int slots,
			     unsigned int ctx_len, uint32_t *id, uint64_t *kv_bytes)
{
	struct drm_wafer_ctx_create c = { .model_id = model_id, .kv_slots = slots,
					  .ctx_len = ctx_len };
	int ret = ioc(dev, DRM_IOCTL_WAFER_CTX_CREATE, &c, "DRM_IOCTL_WAFER_CTX_CREATE");

	if (ret)
		return ret;
	*id = c.ctx_id;
	*kv_bytes = c.kv_bytes;
	return 0;
}

static int kernel_ctx_destroy(struct wafer_dev *dev, uint32_t id)
{
	struct drm_wafer_ctx_destroy d = { .ctx_id = id };

	return ioc(dev, DRM_IOCTL_WAFER_CTX_DESTROY, &d, "DRM_IOCTL_WAFER_CTX_DESTROY");
}

static uint32_t job_flags(uint32_t f)
{
	return (f & (WAFER_JOB_ALL_POSITIONS | WAFER_JOB_NOP | WAFER_JOB_TIMES)) |
	       ((f & WAFER_JOB_HW_IN_ACT) ? DRM_WAFER_JOB_IN_ACT : 0) |
	       ((f & WAFER_JOB_HW_OUT_ACT) ? DRM_WAFER_JOB_OUT_ACT : 0) |
	       ((f & WAFER_JOB_HW_NOT_BEFORE) ? DRM_WAFER_JOB_NOT_BEFORE : 0) |
	       ((f & WAFER_JOB_HW_DONE_NS) ? DRM_WAFER_JOB_DONE_NS : 0) |
	       ((f & WAFER_JOB_HW_LAYER) ? DRM_WAFER_JOB_LAYER : 0);
}

/*
 * A job waiting for another device's job: through io_uring this one may be
 * issued first, so the driver waits for the other to be submitted.
 */
static uint32_t sync_flags(const struct wafer_job_hw *j)
{
	return j->in_sync ? DRM_WAFER_JOB_WAIT_SUBMIT : 0;
}

/* Hands @n <= WAFER_SUBMIT_BATCH jobs to the submission path. */
static int kernel_post(struct wafer_dev *dev, const struct wafer_job_hw *jobs, unsigned int n)
{
	struct kernel_dev *k = kd(dev);
	struct drm_wafer_job dj[WAFER_SUBMIT_BATCH];
	uint64_t ud[WAFER_SUBMIT_BATCH];
	unsigned int i;

	for (i = 0; i < n; i++) {
		const struct wafer_job_hw *j = &jobs[i];

		dj[i] = (struct drm_wafer_job){
			.ctx_id = j->ctx_id, .slot = j->slot,
			.start_pos = j->start_pos, .n_tokens = j->n_tokens,
			.flags = job_flags(j->flags) | sync_flags(j), .top_k = j->top_k,
			.in_handle = j->in ? j->in->handle : 0,
			.out_handle = j->out ? j->out->handle : 0,
			.in_offset = j->in_offset, .out_offset = j->out_offset,
			.in_syncobjs = (uintptr_t)j->in_sync,
			.in_syncobj_count = j->in_sync ? 1 : 0,
			.out_syncobj = j->out_sync,
			.times_offset = j->times_offset, .times_len = j->times_len,
			.layer = (j->flags & WAFER_JOB_HW_LAYER) ? j->layer : 0,
		};
		ud[i] = j->user_data;
	}
	return k->sub->submit(k->sub_priv, dj, ud, n);
}

static int kernel_submit(struct wafer_dev *dev, const struct wafer_job_hw *jobs, unsigned int n)
{
	int ret = wafer_submit_batches(dev, jobs, n, kernel_post);

	if (ret > 0)
		return ret;
	if (ret == -EBUSY)
		ret = -EAGAIN;
	return ret ? ret : -EAGAIN;
}

static int kernel_reap(struct wafer_dev *dev, struct wafer_completion *out, unsigned int max,
		       unsigned int min, uint64_t deadline_ns)
{
	struct kernel_dev *k = kd(dev);

	return k->sub->reap(k->sub_priv, out, max, min, deadline_ns);
}

static void kernel_sync_free(struct wafer_dev *dev, uint32_t h)
{
	drmSyncobjDestroy(kd(dev)->fd, h);
}

static int kernel_sync_reset(struct wafer_dev *dev, uint32_t h)
{
	if (drmSyncobjReset(kd(dev)->fd, &h, 1))
		return wafer_set_error(-errno, "DRM_IOCTL_SYNCOBJ_RESET on accel%d failed: %s",
				       dev->index, strerror(errno));
	return 0;
}

static int kernel_sync_link(struct wafer_dev *dev, struct wafer_dev *to, uint32_t *h,
			    uint32_t *h_to)
{
	int fd, ret;

	if (drmSyncobjCreate(kd(dev)->fd, 0, h))
		return wafer_set_error(-errno, "DRM_IOCTL_SYNCOBJ_CREATE on accel%d failed: %s",
				       dev->index, strerror(errno));
	ret = drmSyncobjHandleToFD(kd(dev)->fd, *h, &fd) ? -errno : 0;
	if (!ret) {
		ret = drmSyncobjFDToHandle(kd(to)->fd, fd, h_to) ? -errno : 0;
		close(fd);
	}
	if (ret) {
		kernel_sync_free(dev, *h);
		return wafer_set_error(ret, "sharing a syncobj of accel%d with accel%d: %s",
				       dev->index, to->index, strerror(-ret));
	}
	return 0;
}

/* One unsigned sysfs attribute of the device; 0 when absent or unreadable. */
static uint64_t sysfs_u64(int index, const char *attr)
{
	unsigned long long v = 0;
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/accel/accel%d/device/%s", index, attr);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

static int kernel_stats(struct wafer_dev *dev, struct wafer_dev_stats *st)
{
	st->jobs_completed = sysfs_u64(dev->index, "jobs_completed");
	st->tokens = sysfs_u64(dev->index, "tokens");
	st->modelled_busy_ns = sysfs_u64(dev->index, "busy_ns");
	st->modelled_makespan_ns = sysfs_u64(dev->index, "modelled_makespan_ns");
	st->bottleneck_busy_ns = sysfs_u64(dev->index, "bottleneck_busy_ns");
	st->moe_imbalance_milli = sysfs_u64(dev->index, "moe_imbalance_milli");
	return 0;
}

/*
 * This file's stages, from its fdinfo: drm-engine-stage<N> is stage N's
 * modelled busy time for the file's jobs that asked for their chunk times
 * (WAFER_JOB_TIMES).  Without such a job there are none: -EOPNOTSUPP (a
 * whole device's stages are in debugfs, for root).
 */
static int kernel_stage_stats(struct wafer_dev *dev, struct wafer_stage_stats *out,
			      unsigned int max)
{
	unsigned int stage, i, n = dev->info.stages, seen = 0;
	unsigned long long ns;
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", kd(dev)->fd);
	f = fopen(path, "re");
	if (!f)
		return wafer_set_error(-errno, "%s: %s", path, strerror(errno));
	for (i = 0; i < n && i < max; i++)
		out[i] = (struct wafer_stage_stats){ .stage = i };
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "drm-engine-stage%u: %llu", &stage, &ns) != 2 || stage >= n)
			continue;
		seen++;
		if (stage < max)
			out[stage].modelled_busy_ns = ns;
	}
	fclose(f);
	if (!seen)
		return wafer_set_error(-EOPNOTSUPP, "accel%d: no per-stage time in this file's "
				       "fdinfo (its jobs asked for no chunk times); the "
				       "device's: debugfs, root", dev->index);
	return (int)n;
}

const struct wafer_backend_ops wafer_kernel_backend = {
	.name = "kernel",
	.open = kernel_open,
	.close = kernel_close,
	.submit_name = kernel_submit_name,
	.bo_create = kernel_bo_create,
	.bo_destroy = kernel_bo_destroy,
	.bo_import = kernel_bo_import,
	.model_load = kernel_model_load,
	.model_unload = kernel_model_unload,
	.ctx_create = kernel_ctx_create,
	.ctx_destroy = kernel_ctx_destroy,
	.submit = kernel_submit,
	.reap = kernel_reap,
	.stats = kernel_stats,
	.stage_stats = kernel_stage_stats,
	.expert_load = wafer_kernel_expert_load,
	.model_expert_load = wafer_kernel_model_expert_load,
	.sync_link = kernel_sync_link,
	.sync_reset = kernel_sync_reset,
	.sync_free = kernel_sync_free,
};

/* The device file of a kernel backend device, or -1 (`wafer node`'s links import into it). */
int wafer_kernel_fd(const struct wafer_dev *dev)
{
	return dev->ops == &wafer_kernel_backend ? kd(dev)->fd : -1;
}
