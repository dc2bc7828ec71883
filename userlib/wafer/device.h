/* SPDX-License-Identifier: MIT */
/*
 * wafer/device.h - libwafer's versions and errors, and the devices: find,
 * open (backend "kernel" = /dev/accel/accelN through the DRM driver, or
 * "inproc" = firmware-sim linked into this process), query, counters.
 *
 * Part of the public API; include "wafer.h", which includes every topic.
 */
#ifndef WAFER_H_DEVICE
#define WAFER_H_DEVICE

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------- versions -- */

/**
 * struct wafer_versions - the interfaces libwafer was built against
 * @uapi: DRM_WAFER_API_VERSION of its uAPI header (the driver's may be
 *	newer: wafer_query()'s api_version)
 * @fw_abi_major: major version of the firmware ABI (the in-process
 *	backend runs this firmware; a kernel device reports its own in
 *	wafer_query())
 * @fw_abi_minor: its minor version
 */
struct wafer_versions {
	unsigned int uapi;
	unsigned int fw_abi_major;
	unsigned int fw_abi_minor;
};

/** wafer_versions() - fill @v with the versions libwafer was built against. */
void wafer_versions(struct wafer_versions *v);

/* ------------------------------------------------------------ errors -- */

/** wafer_strerror() - a short name for a (negative or positive) errno code. */
const char *wafer_strerror(int err);

/** wafer_last_error() - the calling thread's message for its last failure. */
const char *wafer_last_error(void);

/* ----------------------------------------------------------- devices -- */

/** Path prefix of the DRM accel nodes. */
#define WAFER_ACCEL_DIR "/dev/accel"

/**
 * struct wafer_device_desc - what wafer_list_devices() reports per device
 * @index: N in /dev/accel/accelN
 * @path: the device node
 * @drv_major: DRM driver version, major
 * @drv_minor: DRM driver version, minor
 * @drv_patchlevel: DRM driver version, patch level
 * @desc: the driver's description string
 */
struct wafer_device_desc {
	int index;
	char path[64];
	int drv_major;
	int drv_minor;
	int drv_patchlevel;
	char desc[128];
};

/**
 * wafer_list_devices() - find the wafer devices among /dev/accel/accel*
 * @out: array to fill, in ascending index order (may be NULL if @max is 0)
 * @max: capacity of @out
 *
 * A node counts as a wafer device when DRM_IOCTL_VERSION names the driver
 * "wafer"; nodes of other accel drivers are skipped, and so are wafer nodes
 * this process may not open (see the udev rule, userlib/udev/70-wafer.rules).
 *
 * Return: the number of wafer devices found (may exceed @max: only @max are
 * written), or a negative errno: -EACCES when wafer nodes exist but none
 * could be opened (wafer_last_error() names the node, its group and mode).
 */
int wafer_list_devices(struct wafer_device_desc *out, int max);

/**
 * wafer_open_device() - open /dev/accel/accel@index after checking it is wafer
 * @index: accel index, or -1 for the first wafer device
 *
 * The raw file descriptor, for programs that issue ioctls themselves; most
 * callers want wafer_open().
 *
 * Return: an open file descriptor (O_RDWR | O_CLOEXEC), or a negative errno:
 * -ENOENT when there is no such device, -ENODEV when it is not a wafer device.
 */
int wafer_open_device(int index);

/**
 * enum wafer_backend - how a struct wafer_dev reaches the device
 * @WAFER_BACKEND_AUTO: "kernel" if a wafer device node exists, else "inproc";
 *	a wafer node the caller may not open fails with -EACCES (no fallback)
 * @WAFER_BACKEND_KERNEL: /dev/accel/accelN through the wafer DRM driver
 * @WAFER_BACKEND_INPROC: a firmware-sim device created in this process and
 *	driven through its firmware ABI exactly as the kernel driver drives
 *	it; results are identical bit for bit
 */
enum wafer_backend {
	WAFER_BACKEND_AUTO = 0,
	WAFER_BACKEND_KERNEL,
	WAFER_BACKEND_INPROC,
};

/**
 * enum wafer_submit_path - how the kernel backend submits jobs
 * @WAFER_SUBMIT_AUTO: io_uring when available, else the ioctl
 * @WAFER_SUBMIT_IOCTL: DRM_IOCTL_WAFER_SUBMIT + DRM_IOCTL_WAFER_WAIT
 * @WAFER_SUBMIT_URING: IORING_OP_URING_CMD (fails if unavailable)
 *
 * The inproc backend ignores it (AUTO/IOCTL) or refuses URING.
 */
enum wafer_submit_path {
	WAFER_SUBMIT_AUTO = 0,
	WAFER_SUBMIT_IOCTL,
	WAFER_SUBMIT_URING,
};

/**
 * struct wafer_open_opts - wafer_open() options; zero-initialise for defaults
 * @backend: enum wafer_backend
 * @submit: enum wafer_submit_path
 * @index: kernel: accel index, or -1 for the first wafer device (NB: a
 *	zeroed struct means accel0; set -1 explicitly for "first")
 * @profile: inproc: "wafer", "asic", "wse3", "wse2" or "lpu" (NULL: "wafer"; the
 *	wse profiles need @stages or @sram_bytes smaller: a simulated device
 *	allocates at most 1 GiB of SRAM)
 * @stages: inproc: stage count (0: the profile's)
 * @sram_bytes: inproc: SRAM bytes per stage (0: the profile's)
 * @numa_node: inproc: NUMA node of the simulated device (-1 or 0 with
 *	@numa_node_set clear: none)
 * @numa_node_set: inproc: @numa_node is meaningful
 */
struct wafer_open_opts {
	enum wafer_backend backend;
	enum wafer_submit_path submit;
	int index;
	const char *profile;
	unsigned int stages;
	uint64_t sram_bytes;
	int numa_node;
	int numa_node_set;
};

/** An open device (opaque). */
struct wafer_dev;

/**
 * wafer_open() - open a device with a backend
 * @opts: options, or NULL for all defaults (AUTO backend, first device)
 * @out: receives the device
 *
 * Queries the device and, when it reports a NUMA node, binds the calling
 * thread to that node (the submitting thread should be the opening one).
 *
 * Return: 0 or a negative errno (-ENOENT: no wafer device for the kernel
 * backend; -EOPNOTSUPP: the submit path is not available).
 */
int wafer_open(const struct wafer_open_opts *opts, struct wafer_dev **out);

/**
 * wafer_close() - close a device
 * @dev: device, or NULL
 *
 * Objects created on @dev must have been destroyed first.
 */
void wafer_close(struct wafer_dev *dev);

/** wafer_backend_name() - "kernel" or "inproc". */
const char *wafer_backend_name(const struct wafer_dev *dev);

/** wafer_device_index() - N of /dev/accel/accelN (kernel backend), or -1 (inproc). */
int wafer_device_index(const struct wafer_dev *dev);

/** wafer_submit_name() - the submission path in use: "ioctl", "uring" or "inproc". */
const char *wafer_submit_name(const struct wafer_dev *dev);

/* Profiles (struct wafer_info.profile). */
#define WAFER_PROFILE_WAFER	0
#define WAFER_PROFILE_ASIC	1

/* Capability bits (struct wafer_info.caps), same values as the ABI's. */
#define WAFER_CAP_URING_SUBMIT	(1ULL << 0)
#define WAFER_CAP_INT4		(1ULL << 1)
#define WAFER_CAP_INT8		(1ULL << 2)
#define WAFER_CAP_ALL_POSITIONS	(1ULL << 3)
#define WAFER_CAP_PRIME		(1ULL << 4)
#define WAFER_CAP_WEIGHT_STREAM	(1ULL << 5)	/* weights can stream from host */
/* Jobs take a modelled "not before" floor and report their completion time
 * (a pipeline uses it to time a split model's decode loop). */
#define WAFER_CAP_NOT_BEFORE	(1ULL << 6)
/* Models load as attention or FFN parts of their layers (wafer_open_afd()). */
#define WAFER_CAP_LAYER_PARTS	(1ULL << 7)
/* Models load with their routed experts in groups across the stages. */
#define WAFER_CAP_EXPERT_GROUPS	(1ULL << 8)
/* Models load as expert-parallel homes and shards (wafer_afd_opts.n_expert). */
#define WAFER_CAP_EXPERT_PARALLEL	(1ULL << 9)

/**
 * struct wafer_info - what wafer_query() reports (0 = not reported)
 * @api_version: uAPI version of the driver (inproc: the header's)
 * @caps: WAFER_CAP_*
 * @fw_major: firmware ABI major version
 * @fw_minor: firmware ABI minor version
 * @profile: WAFER_PROFILE_*
 * @profile_name: "wafer" or "asic"
 * @stages: pipeline stages
 * @sram_bytes_per_stage: SRAM capacity of one stage
 * @sram_bytes_free: SRAM not allocated, all stages (0 if not reported)
 * @clock_hz: modelled clock
 * @macs_per_cycle: modelled MACs per cycle per stage
 * @numa_node: NUMA node of the device, or -1
 * @max_bo_size: largest buffer
 * @max_models: models loaded at once
 * @max_contexts: contexts at once
 * @max_tokens_per_job: largest job (0: only the context length limits it)
 * @max_inflight_jobs: jobs submitted and not reaped at once
 * @job_timeout_ms: a job taking longer fails with -ETIMEDOUT
 * @stream_bytes_per_cycle: modelled bandwidth of weight streaming from
 *	host memory (0: not reported)
 * @stream_latency_cycles: modelled latency of one layer's read
 */
struct wafer_info {
	uint32_t api_version;
	uint64_t caps;
	uint32_t fw_major;
	uint32_t fw_minor;
	uint32_t profile;
	char profile_name[16];
	uint32_t stages;
	uint64_t sram_bytes_per_stage;
	uint64_t sram_bytes_free;
	uint64_t clock_hz;
	uint32_t macs_per_cycle;
	int32_t numa_node;
	uint64_t max_bo_size;
	uint32_t max_models;
	uint32_t max_contexts;
	uint32_t max_tokens_per_job;
	uint32_t max_inflight_jobs;
	uint32_t job_timeout_ms;
	uint32_t models_loaded;
	uint32_t contexts;
	uint32_t jobs_inflight;
	uint32_t stream_bytes_per_cycle;
	uint32_t stream_latency_cycles;
};

/**
 * wafer_query() - describe the device
 * @dev: device
 * @info: filled
 *
 * Return: 0 or a negative errno.
 */
int wafer_query(struct wafer_dev *dev, struct wafer_info *info);

/**
 * struct wafer_dev_stats - the device's running counters (0 = not reported)
 * @jobs_completed: jobs completed since the device was created
 * @tokens: tokens run since the device was created
 * @modelled_busy_ns: modelled latencies of those jobs, summed
 * @modelled_makespan_ns: the device's modelled clock: modelled time from
 *	its first job to its latest completion (idle time while no job was in
 *	flight does not count), so tokens / makespan is the modelled aggregate
 *	throughput; jobs queued together overlap in the pipeline
 * @bottleneck_busy_ns: modelled busy time of the busiest stage
 * @moe_imbalance_milli: 1000 * the busiest routed expert's tokens / the
 *	mean, of the most imbalanced MoE layer of any model the device holds
 *	(0: no MoE layer ran a token; per layer: wafer_dev_expert_load())
 */
struct wafer_dev_stats {
	uint64_t jobs_completed;
	uint64_t tokens;
	uint64_t modelled_busy_ns;
	uint64_t modelled_makespan_ns;
	uint64_t bottleneck_busy_ns;
	uint64_t moe_imbalance_milli;
};

/**
 * wafer_dev_stats() - read the device's counters
 * @dev: device
 * @st: filled; members the backend cannot report are 0
 *
 * Inproc: all members, from the firmware.  Kernel: what the driver exposes
 * in sysfs (/sys/class/accel/accelN/device/: jobs_completed, busy_ns, and
 * modelled_makespan_ns / bottleneck_busy_ns / tokens / moe_imbalance_milli
 * where the driver has them); the counters are the device's, shared by every process using it.
 *
 * Return: 0 or a negative errno.
 */
int wafer_dev_stats(struct wafer_dev *dev, struct wafer_dev_stats *st);

/**
 * struct wafer_stage_stats - one pipeline stage's counters, the firmware's
 * @member: the pipeline member holding the stage (0: a single device)
 * @stage: the stage's index on that member
 * @first_layer: first model layer on the stage
 * @n_layers: layers on the stage (0: none)
 * @sram_used: SRAM bytes allocated
 * @sram_size: SRAM bytes
 * @tokens: tokens it processed
 * @jobs: jobs that finished on it
 * @modelled_busy_ns: modelled time it was busy; over the device's
 *	modelled makespan (struct wafer_dev_stats), the stage's occupancy
 */
struct wafer_stage_stats {
	uint32_t member;
	uint32_t stage;
	uint32_t first_layer;
	uint32_t n_layers;
	uint64_t sram_used;
	uint64_t sram_size;
	uint64_t tokens;
	uint64_t jobs;
	uint64_t modelled_busy_ns;
};

/**
 * wafer_dev_stage_stats() - every stage's counters, member after member
 * @dev: device or pipeline
 * @out: filled with at most @max entries
 * @max: room in @out
 *
 * In process: from the firmware (GET_STATS).  A kernel device: this
 * process's own file's, from its fdinfo (drm-engine-stage<N>, only
 * @stage and @modelled_busy_ns), counting the jobs that asked for their
 * chunk times (WAFER_JOB_TIMES, which a struct wafer_batch's jobs on a
 * kernel device ask for); -EOPNOTSUPP while there are none (the whole
 * device's are in debugfs, for root).
 *
 * Return: the device's (a pipeline: all members') stage count, which may
 * exceed @max, or a negative errno.
 */
int wafer_dev_stage_stats(struct wafer_dev *dev, struct wafer_stage_stats *out,
			  unsigned int max);

/**
 * struct wafer_expert_load - tokens one expert of one MoE layer ran
 * @layer: the layer, in the full model's numbering
 * @expert: a routed expert's router index, or a shared expert's index
 * @shared: 1 for a shared expert (every token of the layer runs it)
 * @top_k: routed experts each token of the layer runs; a layer's routed
 *	entries sum to its tokens * @top_k
 * @tokens: tokens routed to the expert since the model was loaded
 * @stage: the stage holding a routed expert the firmware placed in an
 *	expert group across the stages (firmware ABI 1.6: the layers did not
 *	fit with their experts), else WAFER_EXPERT_LOCAL: with its layer (or
 *	not known: the kernel backend's debugfs table has no stage)
 */
struct wafer_expert_load {
	uint32_t layer;
	uint32_t expert;
	uint32_t shared;
	uint32_t top_k;
	uint64_t tokens;
	uint32_t stage;
};

/* struct wafer_expert_load.stage of an expert that lives with its layer */
#define WAFER_EXPERT_LOCAL	UINT32_MAX

/**
 * wafer_dev_expert_load() - read the device's per-expert load counters
 * @dev: device or pipeline (members' entries in member order)
 * @out: up to @max entries: each MoE layer in order, its shared experts
 *	then its routed ones
 * @max: entries available at @out
 *
 * The counts come from the firmware's integer routing, so the same jobs
 * give the same counts on every backend.  Inproc: from the firmware.
 * Kernel: from debugfs (accel/wafer.M/experts: root, debugfs mounted).
 * With several models on the device: the first model's (the lowest
 * firmware index; the kernel's debugfs table has a section per model).
 *
 * Return: the device's entry count (more than @max: only @max were
 * filled; 0: no MoE layer loaded) or a negative errno.
 */
int wafer_dev_expert_load(struct wafer_dev *dev, struct wafer_expert_load *out,
			  unsigned int max);

/**
 * wafer_dev_expert_load_model() - wafer_dev_expert_load() of one model
 * @dev: device or pipeline (each member's @nth model, in member order)
 * @nth: the model: 0 the device's first (wafer_dev_expert_load()'s), 1 the
 *	next, in the firmware's index order (the kernel's debugfs sections)
 * @out: up to @max entries
 * @max: entries available at @out
 *
 * Return: the model's entry count (0: a dense model, or no model for @nth
 * 0), -ENOENT when @nth is 1 or more and the device holds no @nth model,
 * or another negative errno.
 */
int wafer_dev_expert_load_model(struct wafer_dev *dev, unsigned int nth,
				struct wafer_expert_load *out, unsigned int max);

struct wafer_model;

/**
 * wafer_model_expert_load() - wafer_dev_expert_load() of model @m alone
 * @m: a model, on a device, a pipeline or wafer_open_afd()'s device
 *	(each member's part of it, in member order)
 * @out: up to @max entries
 * @max: entries available at @out
 *
 * Whatever else the device holds (a kernel device's models of other
 * processes, models loaded and unloaded in any order, a pipeline's models
 * over different members): @m's entries, found by @m's id, where
 * wafer_dev_expert_load_model() takes the firmware's index order.
 *
 * Return: the model's entry count (0: a dense model) or a negative errno
 * (-ENOENT: the kernel's table has no section of it).
 */
int wafer_model_expert_load(const struct wafer_model *m, struct wafer_expert_load *out,
			    unsigned int max);

/**
 * wafer_expert_imbalance() - a layer's expert load imbalance
 * @e: entries as wafer_dev_expert_load() gives them
 * @n: entries at @e
 * @layer: the layer
 *
 * Return: the busiest routed expert's tokens / the mean over the layer's
 * routed experts (1: balanced); 0 if the layer ran no token or is not in @e.
 */
double wafer_expert_imbalance(const struct wafer_expert_load *e, unsigned int n,
			      uint32_t layer);

#ifdef __cplusplus
}
#endif

#endif /* WAFER_H_DEVICE */
