// SPDX-License-Identifier: MIT
/*
 * The "inproc" backend: a firmware-sim device in this process, driven
 * through its firmware ABI by the driver core in wafer_inproc_hw.c.  The
 * device runs the same integer code as the one inside wafer.ko, so results
 * are identical bit for bit to the kernel backend's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "drm/wafer_accel.h"
#include "../wafer_backend.h"
#include "wafer_inproc_hw.h"

#define CTRL_TIMEOUT_MS		10000
#define LOAD_TIMEOUT_MS		120000
#define JOB_TIMEOUT_MS		5000
#define MAX_INFLIGHT		128

int wafer_inproc_fault_inject;

/**
 * struct inproc_dev - inproc backend state
 * @hw: the driver core
 * @numa_node: node of the device's memory, or -1
 */
struct inproc_dev {
	struct wip_hw hw;
	int numa_node;
};

static struct wip_hw *hw(const struct wafer_dev *dev)
{
	return &((struct inproc_dev *)dev->priv)->hw;
}

/* GET_INFO of @model (0: the device, and its first model) into a bounce buffer. */
/* GET_INFO about @model; with model 0, about the @index-th loaded model. */
static int fw_info_nth(struct wafer_dev *dev, uint32_t model, uint32_t index,
		       struct wfw_info *fi)
{
	struct wfw_cmd cmd = { .opcode = WFW_OP_GET_INFO, .model = model };
	struct wfw_info *buf = calloc(1, sizeof(*buf));
	struct wfw_cpl cpl;
	int ret;

	if (!buf)
		return wafer_set_error(-ENOMEM, "out of memory");
	ret = wip_hw_region_add(hw(dev), buf, sizeof(*buf));
	if (!ret) {
		cmd.buf.addr = (uintptr_t)buf;
		cmd.buf.len = sizeof(*buf);
		cmd.buf.index = index;
		ret = wip_hw_ctrl(hw(dev), &cmd, &cpl, CTRL_TIMEOUT_MS);
		wip_hw_region_del(hw(dev), buf);
		if (ret)
			ret = wafer_set_error(ret, "inproc: GET_INFO failed: %s",
					      wafer_strerror(ret));
	}
	if (!ret)
		*fi = *buf;
	free(buf);
	return ret;
}

static int fw_info(struct wafer_dev *dev, uint32_t model, struct wfw_info *fi)
{
	return fw_info_nth(dev, model, 0, fi);
}

static int query(struct wafer_dev *dev)
{
	struct inproc_dev *d = dev->priv;
	struct wafer_info *i = &dev->info;
	struct wfw_info fi = { 0 };
	uint64_t total;
	int ret = fw_info(dev, 0, &fi);

	if (ret)
		return ret;
	memset(i, 0, sizeof(*i));
	i->api_version = DRM_WAFER_API_VERSION;
	i->caps = WAFER_CAP_INT4 | WAFER_CAP_INT8 | WAFER_CAP_WEIGHT_STREAM | WAFER_CAP_NOT_BEFORE |
		  ((fi.caps & WFW_CAP_ALL_POSITIONS) ? WAFER_CAP_ALL_POSITIONS : 0) |
		  (WFW_ABI_VERSION_MINOR(fi.abi_version) >= 5 ? WAFER_CAP_LAYER_PARTS : 0) |
		  (WFW_ABI_VERSION_MINOR(fi.abi_version) >= 6 ? WAFER_CAP_EXPERT_GROUPS : 0) |
		  (WFW_ABI_VERSION_MINOR(fi.abi_version) >= 7 ? WAFER_CAP_EXPERT_PARALLEL : 0);
	i->fw_major = WFW_ABI_VERSION_MAJOR(fi.abi_version);
	i->fw_minor = WFW_ABI_VERSION_MINOR(fi.abi_version);
	i->profile = fi.profile;
	memcpy(i->profile_name, fi.profile_name, sizeof(i->profile_name));
	i->profile_name[sizeof(i->profile_name) - 1] = '\0';
	i->stages = fi.num_stages;
	i->sram_bytes_per_stage = fi.sram_bytes;
	total = (uint64_t)fi.num_stages * fi.sram_bytes;
	i->sram_bytes_free = total > fi.sram_used ? total - fi.sram_used : 0;
	i->clock_hz = fi.clock_hz;
	i->macs_per_cycle = fi.macs_per_cycle;
	i->numa_node = d->numa_node;
	i->max_bo_size = 1ull << 30;
	i->max_models = WFW_ABI_VERSION_MINOR(fi.abi_version) >= 3 ? WFW_MAX_MODELS : 1;
	i->max_contexts = fi.max_contexts;
	i->max_inflight_jobs = fi.max_jobs < MAX_INFLIGHT ? fi.max_jobs : MAX_INFLIGHT;
	i->job_timeout_ms = JOB_TIMEOUT_MS;
	i->models_loaded = fi.models ? fi.models : fi.model_loaded;
	i->contexts = fi.contexts;
	i->stream_bytes_per_cycle = fi.stream_bytes_per_cycle;
	i->stream_latency_cycles = fi.stream_latency_cycles;
	return 0;
}

/* WAFER_STAGE_WORKERS: "auto" (or unset), 0 (one per stage) or N. */
static int stage_workers(int *out)
{
	const char *e = getenv("WAFER_STAGE_WORKERS");
	char *end;
	long v;

	*out = WFS_STAGE_WORKERS_AUTO;
	if (!e || !*e || !strcmp(e, "auto"))
		return 0;
	errno = 0;
	v = strtol(e, &end, 10);
	if (errno || *end || v < 0 || v > WFS_STAGE_WORKERS_MAX)
		return wafer_set_error(-EINVAL,
				       "WAFER_STAGE_WORKERS=%s: expected auto or 0..%d",
				       e, WFS_STAGE_WORKERS_MAX);
	*out = (int)v;
	return 0;
}

static int inproc_open(struct wafer_dev *dev, const struct wafer_open_opts *o)
{
	struct inproc_dev *d = calloc(1, sizeof(*d));
	struct wfs_device_config cfg = {
		.profile = o->profile,
		.stages = o->stages,
		.sram_bytes = o->sram_bytes,
		.numa_node = o->numa_node_set ? o->numa_node : -1,
		.flags = wafer_inproc_fault_inject ? WFS_DEV_FAULT_INJECT : 0,
	};
	int ret;

	if (!d)
		return wafer_set_error(-ENOMEM, "out of memory");
	ret = stage_workers(&cfg.stage_workers);
	if (ret) {
		free(d);
		return ret;
	}
	if (o->submit == WAFER_SUBMIT_URING) {
		free(d);
		return wafer_set_error(-EOPNOTSUPP,
				       "io_uring submission needs the kernel backend");
	}
	d->numa_node = cfg.numa_node;
	dev->priv = d;
	dev->index = -1;
	ret = wip_hw_init(&d->hw, &cfg, MAX_INFLIGHT);
	if (!ret) {
		ret = query(dev);
		if (ret)
			wip_hw_fini(&d->hw);
	}
	if (ret) {
		free(d);
		dev->priv = NULL;
	}
	return ret;
}

static void inproc_close(struct wafer_dev *dev)
{
	wip_hw_fini(hw(dev));
	free(dev->priv);
}

static const char *inproc_submit_name(const struct wafer_dev *dev)
{
	(void)dev;
	return "inproc";
}

static int inproc_bo_create(struct wafer_dev *dev, struct wafer_bo *bo)
{
	int ret;

	bo->map = wafer_numa_alloc(bo->size, dev->info.numa_node);
	if (!bo->map)
		return wafer_set_error(-ENOMEM, "cannot allocate a %zu-byte buffer", bo->size);
	ret = wip_hw_region_add(hw(dev), bo->map, bo->size);
	if (ret)
		wafer_numa_free(bo->map, bo->size);
	return ret;
}

static void inproc_bo_destroy(struct wafer_dev *dev, struct wafer_bo *bo)
{
	wip_hw_region_del(hw(dev), bo->map);
	if (!bo->view_of)
		wafer_numa_free(bo->map, bo->size);
}

/* Another in-process device's buffer: the same memory in this DMA window. */
static int inproc_bo_import(struct wafer_dev *dev, const struct wafer_bo *src,
			    struct wafer_bo *bo)
{
	bo->map = src->map;
	bo->size = src->size;
	return wip_hw_region_add(hw(dev), bo->map, bo->size);
}

static int simple(struct wafer_dev *dev, struct wfw_cmd *cmd, const char *what)
{
	struct wfw_cpl cpl;
	int ret = wip_hw_ctrl(hw(dev), cmd, &cpl, CTRL_TIMEOUT_MS);

	if (ret)
		return wafer_set_error(ret, "%s failed: %s", what, wafer_strerror(ret));
	return 0;
}

static int inproc_model_unload(struct wafer_dev *dev, uint32_t id)
{
	struct wfw_cmd cmd = { .opcode = WFW_OP_UNLOAD_MODEL, .model = id };
	int ret = simple(dev, &cmd, "UNLOAD_MODEL");

	/* wafer_query()'s models and free SRAM as they are now. */
	if (!ret)
		query(dev);
	return ret;
}

/* LOAD_MODEL's -ENOSPC: what the model needed, and what the others left. */
static int load_nospc(struct wafer_dev *dev, const struct wfw_cpl *cpl)
{
	uint64_t kib = dev->info.sram_bytes_per_stage >> 10;
	struct wfw_info fi = { 0 };

	if (cpl->result1 >= kib || fw_info(dev, 0, &fi) || !fi.models)
		return wafer_set_error(-ENOSPC, "the model does not fit: it needs %llu bytes of "
				       "SRAM (%u stages packed; 0: a layer exceeds a stage), "
				       "the device has %u stages of %u KiB",
				       (unsigned long long)cpl->value, cpl->result0,
				       dev->info.stages, cpl->result1);
	return wafer_set_error(-ENOSPC, "the model does not fit next to the %u model%s loaded: "
			       "it needs %llu bytes of SRAM (%u stages packed; 0: a layer "
			       "exceeds a stage), %u KiB per stage are left of the %llu KiB "
			       "of each of the device's %u stages", fi.models,
			       fi.models == 1 ? "" : "s", (unsigned long long)cpl->value,
			       cpl->result0, cpl->result1, (unsigned long long)kib,
			       dev->info.stages);
}

static int inproc_model_load(struct wafer_dev *dev, struct wafer_bo *bo, size_t len,
			     struct wafer_load_hw *ld)
{
	struct wfw_cmd cmd = { .opcode = WFW_OP_LOAD_MODEL };
	struct wfw_info fi;
	struct wfw_cpl cpl;
	int ret;

	cmd.load.addr = (uintptr_t)bo->map;
	cmd.load.len = len;
	cmd.load.layer_first = ld->layer_first;
	cmd.load.layer_count = ld->layer_count;
	cmd.load.flags = ld->stream ? WFW_LOAD_STREAM : 0;
	cmd.load.part = ld->part;
	cmd.load.expert_group = ld->expert_group;
	cmd.load.expert_first = ld->expert_first;
	cmd.load.expert_count = ld->expert_count;
	ret = wip_hw_ctrl(hw(dev), &cmd, &cpl, LOAD_TIMEOUT_MS);
	if (ret == -ENOSPC)
		return load_nospc(dev, &cpl);
	if (ret == -EBUSY)
		return wafer_set_error(ret, "the device holds %u models already, its most",
				       dev->info.max_models);
	if (ret)
		return wafer_set_error(ret, "loading the model failed: %s", wafer_strerror(ret));
	ld->id = cpl.model;
	ld->sram_bytes = cpl.value;
	ld->n_layers = cpl.result1;
	/* What the range holds, as the kernel driver learns it (GET_INFO). */
	ret = fw_info(dev, cpl.model, &fi);
	/* Expert groups of layers without experts: refused, as the driver does. */
	if (!ret && ld->expert_group && !fi.moe_layers)
		ret = wafer_set_error(-EINVAL, "expert groups of %u: the loaded layers have no "
				      "experts", ld->expert_group);
	if (ret) {
		inproc_model_unload(dev, cpl.model);
		return ret;
	}
	ld->embed = !!(fi.model_flags & WFW_MODEL_EMBED);
	ld->head = !!(fi.model_flags & WFW_MODEL_HEAD);
	ld->act_size = fi.act_rec_size;
	query(dev);
	return 0;
}

static int inproc_ctx_create(struct wafer_dev *dev, uint32_t model_id, unsigned int slots,
			     unsigned int ctx_len, uint32_t *id, uint64_t *kv_bytes)
{
	struct wfw_cmd cmd = { .opcode = WFW_OP_CREATE_CONTEXT };
	struct wfw_cpl cpl;
	int ret;

	cmd.model = model_id;
	cmd.ctx.slots = slots;
	cmd.ctx.ctx_len = ctx_len;
	ret = wip_hw_ctrl(hw(dev), &cmd, &cpl, CTRL_TIMEOUT_MS);
	if (ret == -ENOSPC)
		return wafer_set_error(ret, "the KV cache for %u x %u positions does not fit: "
				       "a stage lacks %llu bytes of SRAM", slots, ctx_len,
				       (unsigned long long)cpl.value);
	if (ret == -E2BIG)
		return wafer_set_error(ret, "context length %u is above the model's", ctx_len);
	if (ret)
		return wafer_set_error(ret, "CREATE_CONTEXT failed: %s", wafer_strerror(ret));
	*id = cpl.result0;
	*kv_bytes = cpl.value;
	return 0;
}

static int inproc_ctx_destroy(struct wafer_dev *dev, uint32_t id)
{
	struct wfw_cmd cmd = { .opcode = WFW_OP_DESTROY_CONTEXT };

	cmd.ctx.ctx_id = id;
	return simple(dev, &cmd, "DESTROY_CONTEXT");
}

/* Posts @n <= WAFER_SUBMIT_BATCH jobs as RUN_JOB commands. */
static int inproc_post(struct wafer_dev *dev, const struct wafer_job_hw *jobs, unsigned int n)
{
	struct wfw_cmd cmds[WAFER_SUBMIT_BATCH];
	uint64_t ud[WAFER_SUBMIT_BATCH];
	unsigned int i;

	for (i = 0; i < n; i++) {
		const struct wafer_job_hw *j = &jobs[i];
		struct wfw_cmd *c = &cmds[i];

		memset(c, 0, sizeof(*c));
		c->opcode = WFW_OP_RUN_JOB;
		c->job.ctx_id = j->ctx_id;
		c->job.slot = j->slot;
		c->job.start_pos = j->start_pos;
		c->job.n_tokens = j->n_tokens;
		/* A NOP has no buffers: addresses 0. */
		c->job.in_addr = j->in ? (uintptr_t)j->in->map + j->in_offset : 0;
		c->job.out_addr = j->out ? (uintptr_t)j->out->map + j->out_offset : 0;
		c->job.out_len = (u32)j->out_len;
		c->job.topk = (u16)j->top_k;
		c->job.flags = ((j->flags & WAFER_JOB_ALL_POSITIONS) ? WFW_JOB_ALL_POSITIONS : 0) |
			       ((j->flags & WAFER_JOB_HW_IN_ACT) ? WFW_JOB_IN_ACT : 0) |
			       ((j->flags & WAFER_JOB_HW_OUT_ACT) ? WFW_JOB_OUT_ACT : 0) |
			       ((j->flags & WAFER_JOB_NOP) ? WFW_JOB_NOP : 0) |
			       ((j->flags & WAFER_JOB_TIMES) ? WFW_JOB_TIMES : 0) |
			       ((j->flags & WAFER_JOB_HW_NOT_BEFORE) ? WFW_JOB_NOT_BEFORE : 0) |
			       ((j->flags & WAFER_JOB_HW_LAYER) ? WFW_JOB_LAYER : 0);
		c->job.times_offset = j->times_offset;
		c->job.times_len = j->times_len;
		ud[i] = j->user_data;
	}
	return wip_hw_post_jobs(hw(dev), cmds, ud, n);
}

static int inproc_submit(struct wafer_dev *dev, const struct wafer_job_hw *jobs, unsigned int n)
{
	int ret = wafer_submit_batches(dev, jobs, n, inproc_post);

	if (ret > 0)
		return ret;
	if (ret < 0)
		return wafer_set_error(ret, "inproc: the command ring is full");
	return wafer_set_error(-EAGAIN, "inproc: %u jobs in flight already", MAX_INFLIGHT);
}

static int inproc_reap(struct wafer_dev *dev, struct wafer_completion *out, unsigned int max,
		       unsigned int min, uint64_t deadline_ns)
{
	return wip_hw_reap(hw(dev), out, max, min, deadline_ns);
}

static void inproc_set_cpl_hook(struct wafer_dev *dev,
				void (*fn)(void *arg, const struct wafer_completion *c), void *arg)
{
	wip_hw_set_hook(hw(dev), fn, arg);
}

static int inproc_stats(struct wafer_dev *dev, struct wafer_dev_stats *st)
{
	struct wfw_info fi, more;
	uint32_t i, worst;
	int ret = fw_info(dev, 0, &fi);

	if (ret)
		return ret;
	/* The most imbalanced layer of any model (GET_INFO: the first model's). */
	worst = fi.moe_imbalance_milli;
	for (i = 1; i < fi.models && !fw_info_nth(dev, 0, i, &more); i++)
		worst = more.moe_imbalance_milli > worst ? more.moe_imbalance_milli : worst;
	fi.moe_imbalance_milli = worst;
	st->jobs_completed = fi.jobs_completed;
	st->tokens = fi.tokens;
	st->modelled_makespan_ns = fi.modelled_makespan_ns;
	st->bottleneck_busy_ns = fi.bottleneck_busy_ns;
	st->moe_imbalance_milli = fi.moe_imbalance_milli;
	return 0;
}

/*
 * GET_EXPERT_LOAD of firmware model @model (0: the first), a bounce
 * buffer's worth of entries at a time.
 */
static int inproc_model_expert_load(struct wafer_dev *dev, uint32_t model,
				    struct wafer_expert_load *out, unsigned int max)
{
	enum { PAGE = 256 };
	struct wfw_cmd cmd = { .opcode = WFW_OP_GET_EXPERT_LOAD, .model = model };
	struct wfw_expert_load *buf;
	struct wfw_cpl cpl = { 0 };
	unsigned int i, first = 0;
	int ret;

	buf = calloc(PAGE, sizeof(*buf));
	if (!buf)
		return wafer_set_error(-ENOMEM, "out of memory");
	ret = wip_hw_region_add(hw(dev), buf, PAGE * sizeof(*buf));
	if (ret) {
		free(buf);
		return wafer_set_error(ret, "inproc: cannot map a buffer: %s", wafer_strerror(ret));
	}
	cmd.buf.addr = (uintptr_t)buf;
	cmd.buf.len = PAGE * sizeof(*buf);
	do {
		cmd.buf.index = first;
		ret = wip_hw_ctrl(hw(dev), &cmd, &cpl, CTRL_TIMEOUT_MS);
		for (i = 0; !ret && i < cpl.result0 && first + i < max; i++) {
			out[first + i].layer = buf[i].layer;
			out[first + i].expert = buf[i].expert;
			out[first + i].shared = !!(buf[i].flags & WFW_EXPERT_SHARED);
			out[first + i].top_k = buf[i].top_k;
			out[first + i].tokens = buf[i].tokens;
			out[first + i].stage = buf[i].flags & WFW_EXPERT_GROUP ?
					       WFW_EXPERT_STAGE(buf[i].flags) :
					       WAFER_EXPERT_LOCAL;
		}
		first += cpl.result0;
	} while (!ret && cpl.result0 && first < max && first < cpl.result1);
	wip_hw_region_del(hw(dev), buf);
	free(buf);
	if (ret)
		return wafer_set_error(ret, "inproc: GET_EXPERT_LOAD failed: %s",
				       wafer_strerror(ret));
	return (int)cpl.result1;
}

/* The @nth model's: model 0 is the first, the others by the id GET_INFO's index gives. */
static int inproc_expert_load(struct wafer_dev *dev, unsigned int nth,
			      struct wafer_expert_load *out, unsigned int max)
{
	struct wfw_info fi;
	int ret;

	if (!nth)
		return inproc_model_expert_load(dev, 0, out, max);
	ret = fw_info_nth(dev, 0, nth, &fi);
	if (ret)
		return ret;
	if (!fi.model_id)
		return wafer_set_error(-ENOENT, "inproc: no model %u (%u models)", nth, fi.models);
	return inproc_model_expert_load(dev, fi.model_id, out, max);
}

/* GET_STATS, a bounce buffer's worth of stages at a time. */
static int inproc_stage_stats(struct wafer_dev *dev, struct wafer_stage_stats *out,
			      unsigned int max)
{
	enum { PAGE = 64 };
	struct wfw_cmd cmd = { .opcode = WFW_OP_GET_STATS };
	struct wfw_stage_stats *buf;
	struct wfw_cpl cpl = { 0 };
	unsigned int i, first = 0;
	int ret;

	buf = calloc(PAGE, sizeof(*buf));
	if (!buf)
		return wafer_set_error(-ENOMEM, "out of memory");
	ret = wip_hw_region_add(hw(dev), buf, PAGE * sizeof(*buf));
	if (ret) {
		free(buf);
		return wafer_set_error(ret, "inproc: cannot map a buffer: %s", wafer_strerror(ret));
	}
	cmd.buf.addr = (uintptr_t)buf;
	cmd.buf.len = PAGE * sizeof(*buf);
	do {
		cmd.buf.index = first;
		ret = wip_hw_ctrl(hw(dev), &cmd, &cpl, CTRL_TIMEOUT_MS);
		for (i = 0; !ret && i < cpl.result0 && first + i < max; i++)
			out[first + i] = (struct wafer_stage_stats){
				.stage = buf[i].stage,
				.first_layer = buf[i].first_layer,
				.n_layers = buf[i].n_layers,
				.sram_used = buf[i].sram_used,
				.sram_size = buf[i].sram_size,
				.tokens = buf[i].tokens,
				.jobs = buf[i].jobs,
				.modelled_busy_ns = buf[i].modelled_busy_ns,
			};
		first += cpl.result0;
	} while (!ret && cpl.result0 && first < max && first < cpl.result1);
	wip_hw_region_del(hw(dev), buf);
	free(buf);
	if (ret)
		return wafer_set_error(ret, "inproc: GET_STATS failed: %s", wafer_strerror(ret));
	return (int)cpl.result1;
}

/* Tests only: arms firmware fault @fault (enum wfw_fault) on @dev, see wafer_backend.h. */
int wafer_inproc_fault(struct wafer_dev *dev, uint32_t fault)
{
	struct wfw_cmd cmd = { .opcode = WFW_OP_FAULT_INJECT };

	if (!dev || dev->ops != &wafer_inproc_backend)
		return wafer_set_error(-EINVAL, "fault injection: not an in-process device");
	cmd.fault.fault = fault;
	return simple(dev, &cmd, "FAULT_INJECT");
}

const struct wafer_backend_ops wafer_inproc_backend = {
	.name = "inproc",
	.open = inproc_open,
	.close = inproc_close,
	.submit_name = inproc_submit_name,
	.bo_create = inproc_bo_create,
	.bo_destroy = inproc_bo_destroy,
	.bo_import = inproc_bo_import,
	.model_load = inproc_model_load,
	.model_unload = inproc_model_unload,
	.ctx_create = inproc_ctx_create,
	.ctx_destroy = inproc_ctx_destroy,
	.submit = inproc_submit,
	.reap = inproc_reap,
	.stats = inproc_stats,
	.stage_stats = inproc_stage_stats,
	.expert_load = inproc_expert_load,
	.model_expert_load = inproc_model_expert_load,
	.set_cpl_hook = inproc_set_cpl_hook,
};
