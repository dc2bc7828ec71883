/* SPDX-License-Identifier: MIT */
/*
 * libwafer: the userspace library for wafer accelerators.
 *
 * Layers, each using only the ones above it in this header:
 *
 *   devices      find, open (backend "kernel" = /dev/accel/accelN through
 *                the DRM driver, or "inproc" = firmware-sim linked into
 *                this process), query
 *   pipelines    several devices opened as one: a model's layers split
 *                across them, activations handed from device to device
 *   buffers      memory the device reads job inputs from and writes results to
 *   models       convert a llama2.c checkpoint and load it into stage SRAM
 *   contexts     KV cache for a number of sequences ("slots")
 *   jobs         submit many, reap completions (batch-friendly)
 *   tokenizer    llama2.c's tokenizer, byte for byte
 *   sampling     greedy / temperature / top-p over a result's top-k
 *   generation   prompt in, pieces streamed to a callback
 *
 * Errors: every call that can fail returns 0 (or a count) on success and a
 * negative errno value on failure; wafer_strerror() names the code and
 * wafer_last_error() says, for the calling thread, what exactly was wrong.
 * Functions returning a pointer return NULL only where documented.
 *
 * Threads: the library has no global state besides the per-thread error
 * message.  Objects of one device may be used from several threads, but
 * wafer_submit()/wafer_reap() on one device must not run concurrently.
 */
#ifndef WAFER_H
#define WAFER_H

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
 * In process: from the firmware (GET_STATS).  A kernel device's are in
 * debugfs only (root): -EOPNOTSUPP.
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

/* --------------------------------------------------------- pipelines -- */

/** Most devices in a pipeline. */
#define WAFER_PIPE_MAX_DEVICES	16

/**
 * struct wafer_pipe_opts - wafer_open_pipeline() parameters
 * @n_devices: members, 1..WAFER_PIPE_MAX_DEVICES
 * @devices: each member's wafer_open() options; all members must get the
 *	same backend (for the inproc backend each entry makes a new device,
 *	with its own profile, stages and SRAM)
 * @split: NULL to split automatically (wafer_split_layers()); else
 *	@n_devices layer counts, each >= 1, in member order, summing to the
 *	model's layers (checked when the model is loaded)
 */
struct wafer_pipe_opts {
	unsigned int n_devices;
	const struct wafer_open_opts *devices;
	const unsigned int *split;
};

/**
 * wafer_open_pipeline() - open several devices as one
 * @po: members and split
 * @out: receives the pipeline, a struct wafer_dev like any other
 *
 * Everything that takes a device takes a pipeline.  A model loaded on it is
 * split into contiguous layer ranges, one per member (the first holds the
 * embedding, the last the classifier); a job runs on each member in turn,
 * its activations passed on in buffers shared between neighbours (PRIME on
 * the kernel backend), so results are bit-identical to one device running
 * the whole model.  Buffers of the pipeline are usable by every member.
 * Kernel members submit by ioctl unless a member's @submit says otherwise:
 * then all parts of a job are queued at once, each member's job waiting
 * for the previous member's through a shared syncobj, and a token crosses
 * the members with no return to userspace (with io_uring, whose commands
 * may be issued out of order, the library posts each part when the
 * previous one completed, as it does in process).
 * wafer_query() reports the members combined: stages and free SRAM summed,
 * limits the smallest member's; jobs take at most WAFER_PIPE_MAX_TOKENS
 * tokens (wafer_generate() splits a longer prompt).  A member that fails
 * (its reap returns an error other than -EAGAIN, -EINTR, -ETIME,
 * -ETIMEDOUT: a device gone, a broken completion ring) fails every job it
 * holds once, each reaped with that error as its status; the jobs before
 * it fail likewise as they reach it, those past it complete as they would
 * have, and a job submitted later whose model has a part on it completes
 * with the error at once.  -EEXIST (a kernel member's io_uring ring reaped
 * by another thread than the one that first used it) is wafer_reap()'s
 * error and fails nothing.  Destroying a buffer, context or model of the
 * pipeline waits for the jobs in flight that use it (in-process members
 * move a job on from their own threads), at most its job timeout.
 *
 * Return: 0 or a negative errno (-EINVAL: bad options, mixed backends; a
 * member's wafer_open() error).
 */
int wafer_open_pipeline(const struct wafer_pipe_opts *po, struct wafer_dev **out);

/* Devices in each group of wafer_open_afd(). */
#define WAFER_AFD_MAX_GROUP	8
/* Most tokens of one of its micro-batches (wafer_afd_opts.micro_batch_tokens). */
#define WAFER_AFD_MAX_MB	64

/**
 * struct wafer_afd_opts - the two groups of an attention-FFN disaggregation
 * @n_attn: devices for the attention parts, 1..WAFER_AFD_MAX_GROUP
 * @attn: their options (each its own profile, stages, SRAM)
 * @n_ffn: devices for the FFN parts, 1..WAFER_AFD_MAX_GROUP
 * @ffn: their options
 * @micro_batch_tokens: most tokens of one micro-batch, 1..WAFER_AFD_MAX_MB
 *	(0: 16).  Smaller micro-batches give a prefill more of them to keep
 *	both groups busy, at more steps (and link hops) per token; results are
 *	the same
 * @polled: move each micro-batch from member to member in wafer_reap()
 *	rather than from the members' completion threads; what kernel
 *	members (which have no such thread) always do; results are the same
 * @n_expert: expert parallelism (in process, or kernel devices with
 *	WAFER_CAP_EXPERT_PARALLEL; 0: none): devices holding the
 *	routed experts of every MoE layer, 1..WAFER_AFD_MAX_GROUP, each a
 *	contiguous range of them (E / n_expert, the first E % n_expert one
 *	more); the FFN devices keep the norm, router and shared experts (the
 *	"home"), and each MoE layer's FFN runs in two exchanges with the
 *	expert devices (dispatch: the normed activations out, the experts'
 *	W1/W3 units back; the home's one SwiGLU over all of them; combine:
 *	the units out, each device's s64 sum of its experts' gated W2 back),
 *	bit for bit the unsplit model.  The model must have experts and at
 *	least @n_expert routed experts a layer (wafer_model_load() fails
 *	otherwise, nothing loaded)
 * @expert: their options
 */
struct wafer_afd_opts {
	unsigned int n_attn;
	const struct wafer_open_opts *attn;
	unsigned int n_ffn;
	const struct wafer_open_opts *ffn;
	unsigned int micro_batch_tokens;
	int polled;
	unsigned int n_expert;
	const struct wafer_open_opts *expert;
};

/**
 * wafer_open_afd() - open in-process devices as one, each layer split into
 *	its attention part and its FFN part (attention-FFN disaggregation,
 *	MegaScale-Infer's ping-pong pipeline)
 * @o: the groups
 * @out: receives the device, a struct wafer_dev like any other
 *
 * A model loaded on it puts the attention part of every layer (with the
 * KV cache; the first range also the embedding) on the attention devices,
 * contiguous layer ranges, and the FFN part (the last range also the
 * classifier) on the FFN devices.  A job is cut into micro-batches of up
 * to @o->micro_batch_tokens (16) tokens; each goes attention, FFN,
 * attention, FFN ... through the
 * layers, activations passed back and forth in buffers both groups share,
 * while the next micro-batch (of the job, or of another job in flight)
 * keeps the other group busy.  Results are bit-identical to one device
 * running whole layers.  The members are in process unless their options
 * ask for WAFER_BACKEND_KERNEL (every member the same backend; AUTO is
 * in process): kernel devices (WAFER_CAP_LAYER_PARTS) share the buffers
 * through PRIME and the caller's wafer_reap() moves each micro-batch from
 * member to member; the results are the same bit for bit.  Jobs take at
 * most 64 tokens (WAFER_JOB_TIMES: a record per micro-batch and layer
 * part); weights are resident.  A member that fails (its reap returns an
 * error other than -EAGAIN, -EINTR, -ETIME, -ETIMEDOUT: a device gone, a
 * broken completion ring) fails every job in flight once, each reaped
 * with that error as its status, and every job submitted later likewise:
 * each job needs every member.  -EEXIST (a polled member's io_uring ring
 * reaped by another thread than the one that first used it) is
 * wafer_reap()'s error and fails nothing.  Destroying a buffer, context or
 * model of the device waits for the jobs in flight that use it (hooked
 * members move them on from their own threads), at most its job timeout.
 *
 * Return: 0 or a negative errno (-EINVAL: bad groups, mixed backends; a
 * member's wafer_open() error).
 */
int wafer_open_afd(const struct wafer_afd_opts *o, struct wafer_dev **out);

/** Most tokens of one job through a pipeline. */
#define WAFER_PIPE_MAX_TOKENS	128

/** wafer_pipe_size() - members of a pipeline; 1 for a single device. */
unsigned int wafer_pipe_size(const struct wafer_dev *dev);

/**
 * wafer_pipe_member() - the @i-th member of a pipeline
 * @dev: pipeline or device (a device is its own member 0)
 * @i: index, < wafer_pipe_size()
 *
 * For wafer_query(), wafer_dev_stats() and the like; objects of the
 * pipeline must not be used with a member directly.
 *
 * Return: the member, or NULL if @i is out of range.
 */
struct wafer_dev *wafer_pipe_member(struct wafer_dev *dev, unsigned int i);

/**
 * wafer_split_layers() - the automatic split of a model across devices
 * @n_layers: layers of the model
 * @n_devices: devices, 1..WAFER_PIPE_MAX_DEVICES
 * @capacity: each device's SRAM bytes (weights go where there is room), or
 *	NULL for devices of one kind
 * @out: @n_devices layer counts, contiguous in device order
 *
 * One layer per device when there are at least as many devices as layers
 * (the devices beyond get 0); else layers in proportion to @capacity
 * (largest remainder, every device at least one).
 *
 * Return: the number of devices used (those with a count > 0), or -EINVAL.
 */
int wafer_split_layers(unsigned int n_layers, unsigned int n_devices,
		       const uint64_t *capacity, unsigned int *out);

/* ----------------------------------------------------------- buffers -- */

/** A buffer the device can read and write (opaque). */
struct wafer_bo;

/**
 * wafer_bo_create() - allocate and map a buffer
 * @dev: device
 * @size: bytes (rounded up to the page size)
 * @out: receives the buffer, mapped and zeroed
 *
 * Kernel: a GEM BO mmap'd from the device file; inproc: host memory.  When
 * the device has a NUMA node, the pages are placed there (libnuma).
 *
 * Return: 0 or a negative errno.
 */
int wafer_bo_create(struct wafer_dev *dev, size_t size, struct wafer_bo **out);

/** wafer_bo_map() - the CPU address of the buffer (never NULL). */
void *wafer_bo_map(const struct wafer_bo *bo);

/** wafer_bo_size() - the buffer's size in bytes (after rounding). */
size_t wafer_bo_size(const struct wafer_bo *bo);

/** wafer_bo_destroy() - unmap and free a buffer (NULL is a no-op). */
void wafer_bo_destroy(struct wafer_bo *bo);

/* ------------------------------------------------------------ models -- */

/**
 * struct wafer_moe_opts - sparse upcycling of a dense model
 * @n_experts: routed experts per layer (1..512 with @n_shared)
 * @top_k: routed experts per token, 1..min(@n_experts, 64)
 * @n_shared: experts every token runs
 * @gate: WAFER_MOE_GATE_SOFTMAX over the top-k, _SIGMOID normalised over
 *	the top-k (DeepSeek-V3, Kimi), _UNIT gates (slices with @top_k =
 *	@n_experts: the dense model exactly)
 * @copies: every expert a copy of the dense FFN (sparse upcycling's
 *	initialisation) instead of a slice of it; the @n_shared + @top_k that
 *	run each weigh 1 / (@n_shared + @top_k), which must be a power of two
 *	(the down projection's exponent lowered, so the sum is exact): the
 *	dense model exactly at any top-k; @gate is not used
 */
struct wafer_moe_opts {
	unsigned int n_experts;
	unsigned int top_k;
	unsigned int n_shared;
	unsigned int gate;
	unsigned int copies;
};

#define WAFER_MOE_GATE_SOFTMAX	0
#define WAFER_MOE_GATE_SIGMOID	1
#define WAFER_MOE_GATE_UNIT	2

/**
 * wafer_moe_upcycle() - turn a packed dense blob into a mixture of experts
 * @dense: a dense blob (wafer_convert())
 * @dense_len: its length
 * @o: the experts
 * @blob: receives a malloc'd blob; free() it
 * @len: its length
 *
 * Each layer's FFN hidden units are split into @o->n_shared +
 * @o->n_experts contiguous experts on the dense W2's scale groups (so
 * there must be at least as many groups), keeping the dense quantised
 * weights; router row e is the mean of expert e's W1 rows.  With
 * @o->copies every expert is the whole dense FFN instead (the router the
 * same), each weighing 1 / (shared + top-k).
 *
 * Return: 0 or a negative errno with a message.
 */
int wafer_moe_upcycle(const void *dense, size_t dense_len, const struct wafer_moe_opts *o,
		      void **blob, size_t *len);

/**
 * struct wafer_convert_opts - llama2.c checkpoint -> device blob
 * @wbits: layer weights: 8 or 4 (0: 8)
 * @group_size: weights per quantisation scale, 1..256, even for 4-bit; a
 *	short tail group is handled (0: 32)
 * @keep_embed_cls_int8: with @wbits 4, keep the token embedding and the
 *	classifier at 8 bits
 * @kv_int8: int8 KV cache with per-head scales (default: int16)
 * @early_layers: an early-exit model (a speculative draft): only the first
 *	@early_layers layers, then the final norm and the classifier (0: all
 *	layers; at most the checkpoint's layers)
 * @moe: mixture of experts by sparse upcycling (@moe.n_experts 0: dense);
 *	see wafer_moe_upcycle()
 * @stream: wafer_model_load_file() only: weight streaming, see
 *	wafer_model_load_stream() (0, WAFER_STREAM_OFF: resident only)
 * @expert_group: wafer_model_load_file() only: routed experts per expert
 *	group, each MoE layer's groups placed across the stages with the most
 *	free SRAM (WAFER_CAP_EXPERT_GROUPS; 0: the device's default, experts
 *	with their layer unless the layers do not fit so); results are the
 *	same.  -EINVAL on a model without experts or with streamed weights
 * @progress: if set, called as conversion proceeds with the phase's name and
 *	the fraction done, in [0, 1]
 * @progress_arg: its first argument
 */
struct wafer_convert_opts {
	unsigned int wbits;
	unsigned int group_size;
	int keep_embed_cls_int8;
	int kv_int8;
	unsigned int early_layers;
	struct wafer_moe_opts moe;
	void (*progress)(void *arg, const char *what, double done);
	void *progress_arg;
	int stream;
	unsigned int expert_group;
};

/**
 * wafer_convert() - convert a llama2.c (v0, fp32) checkpoint into a blob
 * @ckpt_path: the checkpoint file, or a packed blob (`wafer convert`'s
 *	output, recognised by its magic): taken as it is, the quantisation
 *	options unused, upcycled if @opts->moe asks
 * @opts: options (NULL: int8, group 32)
 * @blob: receives a malloc'd blob; free() it
 * @len: its length
 *
 * Return: 0 or a negative errno (-EINVAL: bad options or checkpoint).
 */
int wafer_convert(const char *ckpt_path, const struct wafer_convert_opts *opts,
		  void **blob, size_t *len);

/**
 * struct wafer_model_info - a loaded model
 * @dim: width
 * @hidden_dim: feed-forward width
 * @n_layers: layers
 * @n_heads: query heads
 * @n_kv_heads: key/value heads
 * @vocab_size: tokens
 * @seq_len: longest context
 * @blob_bytes: size of the blob
 * @sram_bytes: SRAM the weights take on the device
 * @n_experts: routed experts in every layer's FFN (0: dense FFNs)
 * @n_experts_active: routed experts per token (top-k)
 * @n_shared_experts: experts every token runs
 * @moe_gate: 0 softmax, 1 normalised sigmoid, 2 unit (wafer_moe_opts.gate)
 * @weights_streamed: the layers' weights stream from host memory (weight
 *	streaming) rather than sit in SRAM
 * @stream_fallback: WAFER_STREAM_AUTO streamed them because the model did
 *	not fit resident
 */
struct wafer_model_info {
	uint32_t dim;
	uint32_t hidden_dim;
	uint32_t n_layers;
	uint32_t n_heads;
	uint32_t n_kv_heads;
	uint32_t vocab_size;
	uint32_t seq_len;
	uint64_t blob_bytes;
	uint64_t sram_bytes;
	uint32_t n_experts;
	uint32_t n_experts_active;
	uint32_t n_shared_experts;
	uint32_t moe_gate;
	int weights_streamed;
	int stream_fallback;
};

/** A model loaded on a device (opaque). */
struct wafer_model;

/**
 * wafer_model_load() - load a blob into the device's stage SRAM
 * @dev: device
 * @blob: the blob (firmware-sim's packed format); copied, may be freed after
 * @len: its length
 * @out: receives the model
 *
 * Return: 0 or a negative errno; -ENOSPC when the model does not fit (the
 * message says how much SRAM it needs).
 */
int wafer_model_load(struct wafer_dev *dev, const void *blob, size_t len,
		     struct wafer_model **out);

/**
 * enum wafer_stream - where a model's layer weights live
 * @WAFER_STREAM_OFF: in stage SRAM (resident); -ENOSPC if they do not fit
 * @WAFER_STREAM_AUTO: resident if the model fits, else streamed
 *	(wafer_model_info.stream_fallback says it happened)
 * @WAFER_STREAM_ON: streamed: the weights stay in host memory and every
 *	stage reads its layers, one by one, into a two-layer SRAM window
 *	(the next layer's read overlapping this one's compute); embedding,
 *	head, KV cache and activations stay in SRAM.  Results are the
 *	resident ones bit for bit; the modelled time adds the reads, shared
 *	by the sequences in flight.
 */
enum wafer_stream {
	WAFER_STREAM_OFF,
	WAFER_STREAM_AUTO,
	WAFER_STREAM_ON,
};

/**
 * wafer_model_load_stream() - wafer_model_load() with weight streaming
 * @dev: device
 * @blob: the blob; with streaming libwafer keeps a copy until the unload
 * @len: its length
 * @stream: enum wafer_stream
 * @out: receives the model
 *
 * Return: 0 or a negative errno; -EOPNOTSUPP if @stream is
 * WAFER_STREAM_ON and the driver cannot stream (no WAFER_CAP_WEIGHT_STREAM).
 */
int wafer_model_load_stream(struct wafer_dev *dev, const void *blob, size_t len,
			    int stream, struct wafer_model **out);

/**
 * wafer_model_load_file() - wafer_convert() + wafer_model_load()
 * @dev: device
 * @ckpt_path: llama2.c checkpoint
 * @opts: conversion options (NULL: defaults)
 * @out: receives the model
 *
 * Return: 0 or a negative errno.
 */
int wafer_model_load_file(struct wafer_dev *dev, const char *ckpt_path,
			  const struct wafer_convert_opts *opts,
			  struct wafer_model **out);

/** wafer_model_get_info() - dimensions and sizes of a loaded model. */
const struct wafer_model_info *wafer_model_get_info(const struct wafer_model *m);

/**
 * struct wafer_model_part - where one layer range of a model sits
 * @member: pipeline member index (0 on a single device)
 * @device_index: that device's N of /dev/accel/accelN, or -1 (inproc)
 * @layer_first: first layer of the range
 * @layer_count: layers
 * @sram_bytes: SRAM the range's weights take on the device
 * @kv_bytes: SRAM the range's KV caches take there (contexts alive)
 * @embed: the range holds the token embedding
 * @head: the range holds the final norm and classifier
 * @chained: a job of this range waits in the device for the previous
 *	range's (a fence), rather than being posted by the library when that
 *	one completed (0 for the first range)
 * @part: WAFER_PART_*: whole layers, or (wafer_open_afd()) the attention
 *	or the FFN part of each layer of the range, or (expert parallelism)
 *	routed experts of each MoE layer of the range
 * @expert_first: WAFER_PART_EXPERTS: the first routed expert it holds
 * @expert_count: WAFER_PART_EXPERTS: routed experts it holds (an FFN part
 *	with expert devices holds none: 0 here, its router and shared ones)
 */
struct wafer_model_part {
	unsigned int member;
	int device_index;
	unsigned int layer_first;
	unsigned int layer_count;
	uint64_t sram_bytes;
	uint64_t kv_bytes;
	int embed;
	int head;
	int chained;
	int part;
	unsigned int expert_first;
	unsigned int expert_count;
};

/* struct wafer_model_part.part */
#define WAFER_PART_WHOLE	0
#define WAFER_PART_ATTN		1	/* attention and its KV cache */
#define WAFER_PART_FFN		2	/* the feed-forward block (or MoE) */
#define WAFER_PART_EXPERTS	3	/* routed experts (expert parallelism) */

/** wafer_model_parts() - layer ranges of a model: 1 on a single device. */
unsigned int wafer_model_parts(const struct wafer_model *m);

/**
 * wafer_model_part() - describe the @i-th layer range of a model
 * @m: model
 * @i: range, < wafer_model_parts()
 * @p: filled
 *
 * Return: 0, or -EINVAL for an out-of-range @i.
 */
int wafer_model_part(const struct wafer_model *m, unsigned int i, struct wafer_model_part *p);

/** wafer_model_unload() - unload (its contexts must be gone); NULL is a no-op. */
void wafer_model_unload(struct wafer_model *m);

/* ---------------------------------------------------------- contexts -- */

/** A KV cache for @slots sequences of a model (opaque). */
struct wafer_ctx;

/**
 * wafer_ctx_create() - allocate KV cache on the device
 * @m: model
 * @slots: independent sequences, 1..256
 * @ctx_len: positions per sequence, 1..the model's seq_len
 * @out: receives the context
 *
 * Return: 0 or a negative errno (-ENOSPC: the KV cache does not fit).
 */
int wafer_ctx_create(struct wafer_model *m, unsigned int slots,
		     unsigned int ctx_len, struct wafer_ctx **out);

/** wafer_ctx_len() - positions per slot. */
unsigned int wafer_ctx_len(const struct wafer_ctx *ctx);

/** wafer_ctx_slots() - sequences. */
unsigned int wafer_ctx_slots(const struct wafer_ctx *ctx);

/** wafer_ctx_model() - the context's model. */
struct wafer_model *wafer_ctx_model(const struct wafer_ctx *ctx);

/** wafer_ctx_destroy() - free the KV cache (NULL is a no-op). */
void wafer_ctx_destroy(struct wafer_ctx *ctx);

/* -------------------------------------------------------------- jobs -- */

/** Most (token, logit) pairs a result carries. */
#define WAFER_MAX_TOPK		32
/** Fraction bits of the fixed-point logits in results. */
#define WAFER_LOGIT_FRAC_BITS	16

/** WAFER_JOB_ALL_POSITIONS: one result per input position, not just the last. */
#define WAFER_JOB_ALL_POSITIONS	(1u << 0)
/**
 * WAFER_JOB_NOP: a job that does nothing: the device completes it at once
 * (status 0, no device time, no buffer or KV touched), so it costs what
 * submitting and completing a job cost.  It names @ctx and @slot only:
 * @n_tokens, @start_pos, @top_k, other flags, @in, @out and the offsets
 * must be 0 / NULL (-EINVAL).  Not on a pipeline (-EOPNOTSUPP).
 */
#define WAFER_JOB_NOP		(1u << 3)
/**
 * WAFER_JOB_TIMES: the device also writes the job's modelled timeline
 * into @out at @out_offset + @times_offset: a struct wafer_chunk_time per
 * chunk and stage (WAFER_CHUNK_VALID set in each it wrote; zero the area
 * first to tell them apart).  @times_offset is 8-byte aligned, past the
 * results; @times_len holds them all: wafer_times_len() bytes do.  On a
 * pipeline, each device's records one after another (the first device's
 * first, @n_tokens records per stage of each), @stage counting the
 * pipeline's stages (device k's stage s: the stages of devices 0..k-1
 * plus s).  On wafer_open_afd()'s device, a record per micro-batch and
 * layer part (micro-batch b's part s at b * 2 L + s: the attention of
 * layer s / 2 when s is even, its FFN when odd), @stage the first stage
 * of the member that ran it, its hop out the link to the other group.
 */
#define WAFER_JOB_TIMES		(1u << 4)

/** WAFER_CHUNK_VALID: the device wrote this record. */
#define WAFER_CHUNK_VALID	(1u << 0)
/** WAFER_CHUNK_LINK: the chunk's hop out is the link to the next device. */
#define WAFER_CHUNK_LINK	(1u << 1)

/**
 * struct wafer_chunk_time - one chunk on one stage, in modelled time
 *	(the device's own numbers, the same on every backend)
 * @stage: stage index on the device
 * @pos0: the chunk's first position
 * @n_tokens: its tokens
 * @flags: WAFER_CHUNK_*
 * @start_ns: modelled ns the stage starts it
 * @end_ns: ... is done with it
 * @hop_end_ns: ... it reaches the next stage, device, or the host
 */
struct wafer_chunk_time {
	uint32_t stage;
	uint32_t pos0;
	uint32_t n_tokens;
	uint32_t flags;
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t hop_end_ns;
};

/**
 * struct wafer_job - run @n_tokens tokens of sequence @slot
 * @ctx: context
 * @slot: sequence, < wafer_ctx_slots()
 * @start_pos: position of the first token (earlier ones must have run)
 * @n_tokens: tokens, >= 1 (0 for a NOP); start_pos + n_tokens <= wafer_ctx_len()
 * @flags: WAFER_JOB_*
 * @top_k: (token, logit) pairs per result, 0..WAFER_MAX_TOPK
 * @in: buffer holding @n_tokens uint32_t token ids at @in_offset
 * @in_offset: byte offset, 4-byte aligned
 * @out: buffer receiving the results at @out_offset
 * @out_offset: byte offset, 8-byte aligned; WAFER_RESULT_SIZE(@top_k)
 *	bytes per result
 * @user_data: returned in the job's completion
 * @times_offset: WAFER_JOB_TIMES: the timeline's offset from @out_offset
 * @times_len: WAFER_JOB_TIMES: its bytes (0 without the flag)
 */
struct wafer_job {
	struct wafer_ctx *ctx;
	unsigned int slot;
	unsigned int start_pos;
	unsigned int n_tokens;
	unsigned int flags;
	unsigned int top_k;
	struct wafer_bo *in;
	uint64_t in_offset;
	struct wafer_bo *out;
	uint64_t out_offset;
	uint64_t user_data;
	uint32_t times_offset;
	uint32_t times_len;
};

/**
 * wafer_times_len() - bytes a WAFER_JOB_TIMES job of @n_tokens on @dev
 *	may write: a record per token and stage, more than the chunks need
 * @dev: the device
 * @n_tokens: the job's tokens
 *
 * Return: the bytes (a pipeline: for all its devices' stages).
 */
uint64_t wafer_times_len(const struct wafer_dev *dev, unsigned int n_tokens);

/**
 * struct wafer_completion - a finished job
 * @user_data: the job's
 * @status: 0, or the job's negative errno
 * @device_ns: modelled device time the job took (a pipeline: its makespan
 *	across the devices, from its first chunk starting on the first device
 *	to its last result reaching the host from the last one)
 * @done_ns: the modelled time it completed, on the device's timeline (a
 *	pipeline: its devices share one); 0 where the backend does not say
 *	(the kernel backend's io_uring path, or a kernel without
 *	&drm_wafer_wait.done_ns)
 */
struct wafer_completion {
	uint64_t user_data;
	int status;
	uint64_t device_ns;
	uint64_t done_ns;
};

/**
 * wafer_submit() - queue jobs
 * @dev: device
 * @jobs: jobs, run in order per slot
 * @n: how many
 *
 * All jobs are validated before any is queued.  The kernel backend hands
 * them to the submit path (io_uring: one io_uring_submit for the batch).
 *
 * Return: the number of jobs queued (a prefix of @jobs; fewer than @n when
 * the device's in-flight limit was reached: reap, then submit the rest),
 * or a negative errno (-EAGAIN: none fit).
 */
int wafer_submit(struct wafer_dev *dev, const struct wafer_job *jobs, unsigned int n);

/**
 * wafer_reap() - collect completions
 * @dev: device
 * @out: completions, in completion order
 * @max: capacity of @out
 * @min: wait until at least this many completed (or @timeout_ms passed)
 * @timeout_ms: how long to wait for @min; -1 for the device's job timeout
 *	plus a margin
 *
 * Return: the number of completions written (possibly fewer than @min on
 * timeout; 0 if nothing is in flight), or a negative errno.
 */
int wafer_reap(struct wafer_dev *dev, struct wafer_completion *out,
	       unsigned int max, unsigned int min, int timeout_ms);

/** wafer_inflight() - jobs submitted and not reaped yet. */
unsigned int wafer_inflight(const struct wafer_dev *dev);

/**
 * struct wafer_topk - one (token, logit) pair
 * @token: token id
 * @logit: logit, fixed point with WAFER_LOGIT_FRAC_BITS fraction bits
 */
struct wafer_topk {
	uint32_t token;
	int32_t logit;
};

/**
 * struct wafer_token_result - the result for one position
 * @position: position the result follows
 * @argmax: most likely next token
 * @argmax_logit: its logit
 * @top_k: entries in @topk
 * @topk: best pairs, best first
 */
struct wafer_token_result {
	uint32_t position;
	uint32_t argmax;
	int32_t argmax_logit;
	uint32_t top_k;
	struct wafer_topk topk[];
};

/** WAFER_RESULT_SIZE: bytes of one result carrying @k pairs. */
#define WAFER_RESULT_SIZE(k)	(16u + 8u * (uint32_t)(k))

/**
 * wafer_result() - the @i-th result of a job's output
 * @out: the job's output buffer
 * @out_offset: the job's out_offset
 * @top_k: the job's top_k
 * @i: result index
 *
 * Return: the record, or NULL if it lies outside the buffer.
 */
const struct wafer_token_result *wafer_result(const struct wafer_bo *out,
					      uint64_t out_offset,
					      unsigned int top_k, unsigned int i);

/* --------------------------------------------------------- tokenizer -- */

/** A llama2.c tokenizer (opaque). */
struct wafer_tokenizer;

#define WAFER_TOKEN_BOS	1
#define WAFER_TOKEN_EOS	2

/**
 * wafer_tokenizer_load() - read a llama2.c tokenizer.bin
 * @path: file: u32 max_token_length, then per token f32 score, i32 len,
 *	len bytes
 * @vocab_size: tokens to read (the model's vocab_size)
 * @out: receives the tokenizer
 *
 * Return: 0 or a negative errno.
 */
int wafer_tokenizer_load(const char *path, unsigned int vocab_size,
			 struct wafer_tokenizer **out);

/** wafer_tokenizer_free() - release a tokenizer (NULL is a no-op). */
void wafer_tokenizer_free(struct wafer_tokenizer *t);

/** wafer_tokenizer_vocab_size() - tokens in the vocabulary. */
unsigned int wafer_tokenizer_vocab_size(const struct wafer_tokenizer *t);

/**
 * wafer_tokenizer_encode() - text to tokens, as llama2.c run.c encode()
 * @t: tokenizer
 * @text: UTF-8 text
 * @bos: prepend BOS (1)
 * @eos: append EOS (2)
 * @tokens: output
 * @max: capacity of @tokens (the merged tokens); strlen(@text) + 3 always
 *	suffices
 *
 * A dummy " " is prepended to non-empty text, code points missing from the
 * vocabulary fall back to byte tokens (<0xNN>, id byte + 3), then the pair
 * whose merge has the highest score is merged until none can be (the
 * leftmost of equal scores first), in O(n log n).  Text too long to merge
 * into @max tokens is refused in time linear in its bytes.
 *
 * Return: the number of tokens, or a negative errno (-ENOSPC if @max is too
 * small).
 */
int wafer_tokenizer_encode(const struct wafer_tokenizer *t, const char *text,
			   int bos, int eos, int *tokens, unsigned int max);

/**
 * wafer_tokenizer_decode() - the text of @token following @prev, as run.c
 * @t: tokenizer
 * @prev: previous token (a leading space is stripped after BOS)
 * @token: token
 *
 * Byte tokens "<0xNN>" decode to the single byte.
 *
 * Return: a string owned by @t, or NULL for an out-of-range @token.
 */
const char *wafer_tokenizer_decode(const struct wafer_tokenizer *t, int prev, int token);

/**
 * wafer_piece_printable() - llama2.c safe_printf()'s test
 * @piece: a decoded piece, or NULL
 *
 * Return: 0 for NULL, "" and single bytes that are neither printable nor
 * whitespace (control codes from byte tokens); 1 otherwise.
 */
int wafer_piece_printable(const char *piece);

/* ---------------------------------------------------------- sampling -- */

/**
 * struct wafer_sampler - llama2.c's sampler over a result's top-k
 * @temperature: 0 = greedy (the device's argmax)
 * @top_p: nucleus threshold; <= 0 or >= 1 samples the whole top-k
 * @rng: xorshift64* state (llama2.c random_u32); never 0
 */
struct wafer_sampler {
	float temperature;
	float top_p;
	uint64_t rng;
};

/** wafer_sampler_init() - set parameters; @seed 0 is replaced by 1. */
void wafer_sampler_init(struct wafer_sampler *s, float temperature, float top_p,
			uint64_t seed);

/**
 * wafer_sample() - pick the next token from a result
 * @s: sampler
 * @r: result; with temperature > 0 it needs top_k >= 1 (softmax over the
 *	top-k logits / temperature, then top-p as llama2.c sample_topp())
 *
 * Return: a token id.
 */
int wafer_sample(struct wafer_sampler *s, const struct wafer_token_result *r);

/* -------------------------------------------------------- generation -- */

/**
 * struct wafer_gen_opts - wafer_generate() parameters
 * @steps: positions to run, prompt included, as llama2.c -n (0 or above
 *	the context length: the context length)
 * @temperature: 0 = greedy
 * @top_p: nucleus sampling threshold (llama2.c default 0.9)
 * @seed: RNG seed (0: 1)
 * @top_k: pairs the device returns per position (0: WAFER_MAX_TOPK)
 * @slot: KV slot of the context to use
 * @on_piece: called for every piece as produced (prompt pieces first, then
 *	generated ones), with the token, its decoded text and whether it came
 *	from the prompt; a non-zero return stops generation
 * @arg: first argument of @on_piece
 */
struct wafer_gen_opts {
	unsigned int steps;
	float temperature;
	float top_p;
	uint64_t seed;
	unsigned int top_k;
	unsigned int slot;
	int (*on_piece)(void *arg, int token, const char *piece, int from_prompt);
	void *arg;
};

/**
 * struct wafer_gen_stats - what wafer_generate() measured
 * @prompt_tokens: prompt tokens, BOS included
 * @generated_tokens: tokens sampled
 * @jobs: jobs submitted
 * @total_ns: host time of the whole generation
 * @ttft_ns: host time until the first sampled token was known
 * @decode_ns: host time from the first sampled token to the last
 * @device_ns: modelled device time, all jobs
 * @decode_device_ns: modelled device time of the decode jobs
 */
struct wafer_gen_stats {
	unsigned int prompt_tokens;
	unsigned int generated_tokens;
	unsigned int jobs;
	uint64_t total_ns;
	uint64_t ttft_ns;
	uint64_t decode_ns;
	uint64_t device_ns;
	uint64_t decode_device_ns;
};

/**
 * wafer_generate() - run a prompt and sample a continuation
 * @ctx: context (the sequence starts at position 0 of @opts->slot)
 * @tok: tokenizer of the context's model
 * @prompt: text, or NULL / "" for none (BOS only)
 * @opts: parameters
 * @stats: filled (may be NULL)
 *
 * The same loop as llama2.c run.c generate(): the prompt is encoded with
 * BOS, prefilled in as few jobs as the device allows, then one job per
 * token; generation stops after @opts->steps positions or when BOS is
 * sampled.  Pieces follow llama2.c's decode().
 *
 * Return: 0 or a negative errno.
 */
int wafer_generate(struct wafer_ctx *ctx, const struct wafer_tokenizer *tok,
		   const char *prompt, const struct wafer_gen_opts *opts,
		   struct wafer_gen_stats *stats);

/* ---- continuous batching (wafer serve) ---- */

/**
 * struct wafer_batch_opts - wafer_batch_create() parameters
 * @slots: sequences running at once, 1..256 (one context slot each)
 * @ctx_len: positions per sequence (0: the model's seq_len)
 * @prefill_chunk: most prompt tokens of one sequence run per step, so a
 *	long prompt shares each step with the running sequences' decode
 *	(0: 32; also capped by the device's max_tokens_per_job)
 * @micro_batches: 0 or 1: each step runs every sequence's job and waits
 *	for all of them (lockstep); M > 1 (up to 64, and @slots at most the
 *	device's max_inflight_jobs): slot i is in micro-batch i % M, and the
 *	micro-batches are kept in flight: each wafer_batch_step() submits
 *	every micro-batch that is not in flight and reaps the oldest one,
 *	returning its sequences' events, so on a pipeline of devices the
 *	micro-batches are at different devices at once.  A sequence's tokens
 *	are the same either way.  Jobs stay in flight between steps: a slot
 *	cancelled then is free once its job comes back
 */
struct wafer_batch_opts {
	unsigned int slots;
	unsigned int ctx_len;
	unsigned int prefill_chunk;
	unsigned int micro_batches;
};

/**
 * struct wafer_batch_seq - one sequence's sampling parameters
 * @max_new: tokens to sample at most, >= 1
 * @temperature: 0 = greedy
 * @top_p: nucleus threshold (<= 0 or >= 1: the whole top-k)
 * @seed: the sequence's own RNG seed (0: 1), so its text does not depend
 *	on what else runs in the batch
 * @presence_penalty: subtracted from the logit of every token sampled
 *	before in this sequence, before sampling (OpenAI's; 0: none)
 * @frequency_penalty: ... times the times it was sampled (0: none)
 * @prompt_results: the prompt's jobs return a result per position, and
 *	the events carry them (scoring a prompt: echo with logprobs)
 */
struct wafer_batch_seq {
	unsigned int max_new;
	float temperature;
	float top_p;
	uint64_t seed;
	float presence_penalty;
	float frequency_penalty;
	int prompt_results;
};

/**
 * enum wafer_batch_end - why a sequence ended
 * @WAFER_BATCH_RUNNING: it did not
 * @WAFER_BATCH_BOS: BOS was sampled (llama2.c's end of text)
 * @WAFER_BATCH_MAX_NEW: @max_new tokens were sampled
 * @WAFER_BATCH_CONTEXT: the context is full
 * @WAFER_BATCH_FAILED: a job failed (the event's status says why)
 */
enum wafer_batch_end {
	WAFER_BATCH_RUNNING,
	WAFER_BATCH_BOS,
	WAFER_BATCH_MAX_NEW,
	WAFER_BATCH_CONTEXT,
	WAFER_BATCH_FAILED,
};

/**
 * struct wafer_batch_event - what one step did for one sequence
 * @slot: the sequence's slot
 * @user_data: given to wafer_batch_start()
 * @token: the token sampled, or -1 (none: BOS or a failure)
 * @prev: the token before it (for wafer_tokenizer_decode())
 * @end: enum wafer_batch_end; when not RUNNING the slot is free again
 * @status: 0, or the failed job's negative errno
 * @results: the device's results of the step's job, @n_results of them,
 *	WAFER_BATCH_RESULT_SIZE bytes apart (WAFER_BATCH_RESULT()); valid
 *	until the next wafer_batch_step().  With @token >= 0 the last is
 *	what it was sampled from (before any penalty); earlier ones are the
 *	prompt's (wafer_batch_seq.prompt_results)
 * @n_results: how many (0: none)
 * @pos0: the position the first follows
 */
struct wafer_batch_event {
	unsigned int slot;
	uint64_t user_data;
	int token;
	int prev;
	int end;
	int status;
	const void *results;
	unsigned int n_results;
	unsigned int pos0;
};

/** Bytes between an event's results. */
#define WAFER_BATCH_RESULT_SIZE	WAFER_RESULT_SIZE(WAFER_MAX_TOPK)
/** The @i-th of event @ev's results. */
#define WAFER_BATCH_RESULT(ev, i) ((const struct wafer_token_result *) \
	((const char *)(ev)->results + (size_t)(i) * WAFER_BATCH_RESULT_SIZE))

/**
 * struct wafer_batch_stats - what one step cost
 * @jobs: jobs run
 * @tokens: positions run (prefill chunks and decodes)
 * @device_ns: modelled device time of those jobs, summed
 */
struct wafer_batch_stats {
	unsigned int jobs;
	unsigned int tokens;
	uint64_t device_ns;
};

struct wafer_batch;

/**
 * wafer_batch_create() - a context of @o->slots sequences and its buffers
 * @m: model
 * @o: parameters
 * @out: receives the batch
 *
 * Return: 0 or a negative errno (wafer_last_error() says why).
 */
int wafer_batch_create(struct wafer_model *m, const struct wafer_batch_opts *o,
		       struct wafer_batch **out);

/** wafer_batch_destroy() - free a batch (NULL is a no-op). */
void wafer_batch_destroy(struct wafer_batch *b);

/**
 * wafer_batch_start() - put a sequence into a free slot
 * @b: batch
 * @prompt: token ids, BOS first; 1..ctx_len of them
 * @n: how many
 * @seq: sampling parameters
 * @user_data: returned in the sequence's events
 *
 * The prompt runs in chunks over the next steps, then one token a step.
 *
 * Return: the slot, -EBUSY when none is free, -E2BIG when the prompt does
 * not fit the context, -EINVAL on bad parameters.
 */
int wafer_batch_start(struct wafer_batch *b, const int *prompt, unsigned int n,
		      const struct wafer_batch_seq *seq, uint64_t user_data);

/**
 * wafer_batch_cancel() - end the sequence in @slot now (between steps)
 * Return: 0, or -EINVAL if the slot holds no sequence.
 */
int wafer_batch_cancel(struct wafer_batch *b, unsigned int slot);

/** wafer_batch_active() - sequences in slots. */
unsigned int wafer_batch_active(const struct wafer_batch *b);

/** wafer_batch_slots() - slots of the batch. */
unsigned int wafer_batch_slots(const struct wafer_batch *b);

/** wafer_batch_ctx_len() - positions per sequence. */
unsigned int wafer_batch_ctx_len(const struct wafer_batch *b);

/**
 * wafer_batch_step() - one step: a job per active sequence (its next
 * prompt chunk, or its last sampled token), all submitted together, reaped,
 * and a token sampled for each sequence whose prompt is done
 * @b: batch
 * @ev: receives at most one event per active sequence
 * @max: capacity of @ev (wafer_batch_slots() always suffices)
 * @st: filled (may be NULL)
 *
 * Return: the number of events, or a negative errno when the device
 * failed as a whole (every sequence then ended with WAFER_BATCH_FAILED).
 */
int wafer_batch_step(struct wafer_batch *b, struct wafer_batch_event *ev, unsigned int max,
		     struct wafer_batch_stats *st);

/* ---------------------------------------------- speculative decoding -- */

/** Most tokens a draft proposes per verify job (K). */
#define WAFER_SPEC_MAX_DRAFT	16

/**
 * enum wafer_draft_kind - where draft tokens come from
 * @WAFER_DRAFT_NGRAM: no model: prompt lookup, the continuation of the
 *	latest earlier occurrence of the longest suffix (at most @n tokens)
 *	of the prompt and output so far
 * @WAFER_DRAFT_INT4: the target's checkpoint quantised to int4
 * @WAFER_DRAFT_EARLY: the target's first @n layers, its final norm and
 *	classifier (an early-exit model, struct wafer_convert_opts.early_layers)
 * @WAFER_DRAFT_FILE: another llama2.c checkpoint with the same vocabulary
 */
enum wafer_draft_kind {
	WAFER_DRAFT_NGRAM = 1,
	WAFER_DRAFT_INT4,
	WAFER_DRAFT_EARLY,
	WAFER_DRAFT_FILE,
};

/**
 * struct wafer_draft_spec - a draft, as wafer_draft_parse() reads it
 * @kind: enum wafer_draft_kind
 * @n: n-gram: longest suffix matched (1..16, default 3); early: layers
 * @path: file: the checkpoint (points into the parsed string)
 */
struct wafer_draft_spec {
	enum wafer_draft_kind kind;
	unsigned int n;
	const char *path;
};

/**
 * wafer_draft_parse() - "ngram[:N]", "int4", "early:N" or a checkpoint path
 * @s: the text
 * @out: filled
 *
 * Return: 0, or -EINVAL with a message.
 */
int wafer_draft_parse(const char *s, struct wafer_draft_spec *out);

/**
 * wafer_draft_load() - convert and load a draft model for a target
 * @dev: the device to load it on: another than the target's, or the
 *	target's if it holds several models (wafer_draft_load_beside())
 * @d: the draft (not n-gram)
 * @target_ckpt: the target's checkpoint (int4 and early drafts are made
 *	from it)
 * @target_conv: the target's conversion options (NULL: defaults); the
 *	draft keeps its group size and KV format
 * @target: the loaded target, whose vocabulary the draft must share
 * @out: receives the draft model
 *
 * Return: 0 or a negative errno (-EINVAL: another vocabulary, early layers
 * out of range; nothing is left loaded on failure).
 */
int wafer_draft_load(struct wafer_dev *dev, const struct wafer_draft_spec *d,
		     const char *target_ckpt, const struct wafer_convert_opts *target_conv,
		     const struct wafer_model *target, struct wafer_model **out);

/**
 * wafer_draft_load_beside() - wafer_draft_load() on the target's own device
 * @d: the draft (not n-gram)
 * @target_ckpt: see wafer_draft_load()
 * @target_conv: see wafer_draft_load()
 * @target: the loaded target; the draft goes on its device, beside it
 * @out: receives the draft model
 *
 * The draft and the target as two models of one device (a kernel device
 * or an in-process one: struct wafer_info.max_models of 2 or more), as
 * `wafer run --draft` places it by default and `wafer bench -z` on kernel
 * devices.
 *
 * Return: 0; -EOPNOTSUPP for a target over a pipeline or on a device that
 * holds one model at once; or wafer_draft_load()'s error (-ENOSPC: no room
 * beside the target).
 */
int wafer_draft_load_beside(const struct wafer_draft_spec *d, const char *target_ckpt,
			    const struct wafer_convert_opts *target_conv,
			    const struct wafer_model *target, struct wafer_model **out);

/**
 * struct wafer_draft_dev - a draft on an in-process device of its own
 * @dev: the device: the target's profile and SRAM per stage, @stages stages
 * @model: the draft model on it
 * @ctx: its context (one slot)
 * @stages: the device's stages
 */
struct wafer_draft_dev {
	struct wafer_dev *dev;
	struct wafer_model *model;
	struct wafer_ctx *ctx;
	unsigned int stages;
};

/**
 * wafer_draft_load_packed() - a draft on a device of as few stages as hold it
 * @o: the target's in-process device options (profile, SRAM per stage; its
 *	stages, or the profile's, are the most tried)
 * @stages: the draft device's stages; 0: the fewest (from 1 up) on which the
 *	draft and its context fit
 * @d: the draft (not n-gram)
 * @target_ckpt: see wafer_draft_load()
 * @target_conv: see wafer_draft_load()
 * @target: the loaded target
 * @ctx_len: positions of the draft's context
 * @out: receives the device, the draft model, its context and the stages
 *
 * A wafer's stage is a region of its cores; the firmware spreads a model
 * over every stage it has (a layer per stage while there are more stages
 * than layers) and a chunk pays a fabric hop after each stage.  A small
 * draft packed into few stages crosses few hops: its step costs much less
 * than that of a target spread over the wafer, as a deployment would place
 * it (`wafer run --draft-stages`, `wafer bench -z`'s wse3 rows).
 *
 * Return: 0; -EOPNOTSUPP for a kernel backend; -ENOSPC: it fits on no
 * device of 1..max stages (or of @stages); or wafer_draft_load()'s error.
 * Free with wafer_draft_dev_free().
 */
int wafer_draft_load_packed(const struct wafer_open_opts *o, unsigned int stages,
			    const struct wafer_draft_spec *d, const char *target_ckpt,
			    const struct wafer_convert_opts *target_conv,
			    const struct wafer_model *target, unsigned int ctx_len,
			    struct wafer_draft_dev *out);

/** wafer_draft_dev_free() - destroy what wafer_draft_load_packed() made (NULL: none) */
void wafer_draft_dev_free(struct wafer_draft_dev *dd);

/**
 * struct wafer_spec_opts - wafer_generate_spec() parameters
 * @draft_tokens: K, tokens proposed per verify job, 1..WAFER_SPEC_MAX_DRAFT
 * @draft: the draft model's context, on a device of its own; NULL for the
 *	n-gram draft
 * @draft_slot: the slot of @draft to use
 * @ngram: n-gram draft: longest suffix matched, 1..16 (0: 3)
 */
struct wafer_spec_opts {
	unsigned int draft_tokens;
	struct wafer_ctx *draft;
	unsigned int draft_slot;
	unsigned int ngram;
};

/**
 * struct wafer_spec_stats - what speculation did
 * @verifies: target jobs that checked draft tokens (one per round)
 * @drafted: tokens the draft proposed
 * @accepted: of which the target accepted
 * @draft_jobs: jobs of the draft model (prompt included)
 * @verify_ns: modelled time of the verify jobs
 * @draft_ns: modelled time of the draft's jobs after the prompt
 *
 * Tokens per verify = generated tokens / @verifies; the acceptance rate
 * @accepted / @drafted.  The rounds' modelled time, @verify_ns + @draft_ns
 * (draft and target take turns), is also struct wafer_gen_stats'
 * decode_device_ns.
 */
struct wafer_spec_stats {
	unsigned int verifies;
	unsigned int drafted;
	unsigned int accepted;
	unsigned int draft_jobs;
	uint64_t verify_ns;
	uint64_t draft_ns;
};

/**
 * wafer_generate_spec() - wafer_generate() with speculative decoding
 * @ctx: the target's context
 * @tok: tokenizer of the target's model
 * @prompt: text, or NULL / "" for none
 * @opts: as wafer_generate()'s
 * @so: the draft and K
 * @stats: filled (may be NULL)
 * @sst: filled (may be NULL)
 *
 * Each round the draft proposes up to K tokens, and the target runs its
 * last token and the proposals in one job with a result per position
 * (WAFER_JOB_ALL_POSITIONS).  Greedy: the longest prefix equal to the
 * target's argmax is accepted, then the target's token at the first
 * mismatch (or a bonus token when all match), so the text is exactly
 * wafer_generate()'s.  Sampling: a proposal x is accepted with probability
 * min(1, p(x) / q(x)), on rejection a token is drawn from
 * norm(max(0, p - q)) (Leviathan et al. 2023), p and q being the
 * distributions wafer_sample() draws from for the target's and the draft's
 * results, so tokens follow plain sampling's distribution; the same seed
 * gives the same text.  Rejected positions are rewritten by the next round
 * (the target's and the draft's jobs restart at an earlier position).
 *
 * Return: 0 or a negative errno (-EINVAL: K out of range, a draft with
 * another vocabulary, bad slot).
 */
int wafer_generate_spec(struct wafer_ctx *ctx, const struct wafer_tokenizer *tok,
			const char *prompt, const struct wafer_gen_opts *opts,
			const struct wafer_spec_opts *so, struct wafer_gen_stats *stats,
			struct wafer_spec_stats *sst);

/* ---- timeline traces (Chrome trace events: Perfetto, chrome://tracing) ---- */

struct wafer_trace;

/**
 * struct wafer_trace_event - one complete ("X") event
 * @name: shown on the bar
 * @cat: category ("stage", "hop", "link", "job")
 * @pid: process (track group): a device, or the host
 * @tid: thread (track) in it
 * @start_ns: start, ns (written in microseconds, as the format wants)
 * @dur_ns: duration, ns
 * @pos0: the chunk's or job's first position (args.pos0)
 * @n_tokens: its tokens (args.tokens)
 * @job: job number in the run (args.job), or -1
 * @device_ns: the job's modelled time as its completion reported it
 *	(args.device_ns; 0: none)
 */
struct wafer_trace_event {
	const char *name;
	const char *cat;
	unsigned int pid;
	unsigned int tid;
	uint64_t start_ns;
	uint64_t dur_ns;
	unsigned int pos0;
	unsigned int n_tokens;
	int64_t job;
	uint64_t device_ns;
};

/** WAFER_TRACE_HOST_PID: the host's process in a run's trace (wall time). */
#define WAFER_TRACE_HOST_PID	1000
/**
 * WAFER_TRACE_LANE_TIDS: thread @tid's lane L (L >= 1) is thread tid + L *
 * WAFER_TRACE_LANE_TIDS: the events that would overlap an earlier one of
 * the thread (complete events must nest) go to the first lane where none
 * does (wafer_trace_close()).
 */
#define WAFER_TRACE_LANE_TIDS	1000

/**
 * wafer_trace_open() - start a trace to be written to @path
 * @path: the JSON file, created (or truncated) now: a bad path fails here
 * @out: the trace
 *
 * Return: 0, or -errno with wafer_last_error() naming the path.
 */
int wafer_trace_open(const char *path, struct wafer_trace **out);

/** wafer_trace_name() - name process @pid (@tid < 0) or its thread @tid. */
void wafer_trace_name(struct wafer_trace *t, unsigned int pid, int tid, const char *name);

/** wafer_trace_add() - add an event; 0 or -ENOMEM. */
int wafer_trace_add(struct wafer_trace *t, const struct wafer_trace_event *e);

/**
 * wafer_trace_close() - write the trace (events by start time, after the
 *	names; overlapping ones of a thread on its lanes, see
 *	WAFER_TRACE_LANE_TIDS) and free it
 * @t: the trace (NULL: nothing)
 *
 * Return: 0, or -EIO with wafer_last_error() naming the file.
 */
int wafer_trace_close(struct wafer_trace *t);

/** wafer_trace_discard() - free a trace without writing it. */
void wafer_trace_discard(struct wafer_trace *t);

/**
 * wafer_trace_attach() - trace every job libwafer's generation runs on @dev
 *	(wafer_generate(), wafer_generate_spec()): each chunk on each stage
 *	and its hop out as the device modelled them (WAFER_JOB_TIMES: the
 *	firmware's own numbers), a process "device N (modelled ns)" with a
 *	thread per stage and one per stage's hops; and each job from
 *	submission to completion in host wall time (WAFER_TRACE_HOST_PID);
 *	on a pipeline, process k is its device k, all on device 0's
 *	modelled clock (docs/TIMING.md)
 * @dev: a device or a pipeline
 * @t: the trace, or NULL to stop; it must outlive the runs
 *
 * Return: 0, or -EINVAL without @dev.
 */
int wafer_trace_attach(struct wafer_dev *dev, struct wafer_trace *t);

/* ---- projection (wafer plan) ---- */

/**
 * struct wafer_plan_shape - a decoder's shape, dense or mixture-of-experts
 * @name: preset name, or what the caller calls it
 * @n_layers: transformer layers
 * @dim: model width
 * @hidden_dim: feed-forward width
 * @n_heads: query heads
 * @n_kv_heads: key/value heads (divides @n_heads)
 * @head_dim: width of one head
 * @vocab: vocabulary size
 * @n_experts: mixture of experts in every layer: routed experts (0: dense)
 * @n_active: routed experts per token
 * @n_shared: experts every token takes
 * @expert_hidden: feed-forward width of one expert
 * @moe_every: with experts: every @moe_every-th layer has them (layers
 *	moe_every-1, 2*moe_every-1, ...), the others a dense FFN of
 *	@hidden_dim; 0 or 1: every layer
 * @weight_bits: the bits its weights are stored in (a packed blob's: 4 or
 *	8), 0 if the shape does not say (presets, checkpoints, custom);
 *	wafer_plan() takes it when struct wafer_plan_opts.weight_bits is 0
 * @tied_head: the head is the embedding (a llama2.c checkpoint's shared
 *	classifier): its parameters count once (its bytes twice: every stage
 *	holding it keeps a copy)
 * @params: parameters the model's tensors hold, counted from a packed
 *	blob's (RMSNorm gains included, the rope tables and a tied head's
 *	copy not); 0: wafer_plan() counts them from the shape
 */
struct wafer_plan_shape {
	const char *name;
	unsigned int n_layers;
	unsigned int dim;
	unsigned int hidden_dim;
	unsigned int n_heads;
	unsigned int n_kv_heads;
	unsigned int head_dim;
	unsigned int vocab;
	unsigned int n_experts;
	unsigned int n_active;
	unsigned int n_shared;
	unsigned int expert_hidden;
	unsigned int moe_every;
	unsigned int weight_bits;
	unsigned int tied_head;
	uint64_t params;
};

/**
 * enum wafer_plan_event_kind - what a traced interval is
 * @WAFER_PLAN_EV_STAGE: a stage working on a chunk
 * @WAFER_PLAN_EV_HOP: a chunk's fabric hop to the next stage (or the host)
 * @WAFER_PLAN_EV_LINK: a chunk's link hop to the next device
 * @WAFER_PLAN_EV_STREAM: weight streaming: a layer's weights (or the
 *	embedding's and head's) coming in from the external store while the
 *	stage computes with them; the layer takes the longer of the two
 * @WAFER_PLAN_EV_DRAFT: speculative decoding: a draft token on the draft's
 *	devices (one process past the target's, its token time each)
 */
enum wafer_plan_event_kind {
	WAFER_PLAN_EV_STAGE,
	WAFER_PLAN_EV_HOP,
	WAFER_PLAN_EV_LINK,
	WAFER_PLAN_EV_STREAM,
	WAFER_PLAN_EV_DRAFT,
};

/**
 * struct wafer_plan_event - one interval of the modelled timeline
 * @kind: enum wafer_plan_event_kind
 * @device: device index
 * @stage: stage index on that device
 * @pos0: the chunk's first position
 * @n_tokens: the chunk's tokens
 * @start_ns: modelled start
 * @dur_ns: modelled duration
 */
struct wafer_plan_event {
	enum wafer_plan_event_kind kind;
	unsigned int device;
	unsigned int stage;
	unsigned int pos0;
	unsigned int n_tokens;
	uint64_t start_ns;
	uint64_t dur_ns;
};

/**
 * struct wafer_plan_opts - what to project
 * @profile: device profile (NULL: "wse3")
 * @devices: device count (lpu: chips), 0 for as few as hold the model
 * @weight_bits: 4, 8 or 16; 0: the shape's (struct wafer_plan_shape.weight_bits,
 *	a packed blob's precision), which it must then give
 * @batch: sequences decoding at once
 * @context: positions of each sequence (its KV cache and the position the
 *	decode step is modelled at)
 * @prompt: prompt tokens for the time to first token (0: min(context, 1024))
 * @draft_params: speculative decoding: parameters of the draft model (0:
 *	none); its shape is wafer_plan_draft_shape()'s, on devices of its own
 * @draft_accept: probability that the target accepts a draft token (0..1)
 * @draft_tokens: tokens the draft proposes per verify step (1..64)
 * @stream: weight streaming: the weights stay in the profile's external
 *	store and pass through one device layer by layer, its SRAM holding
 *	two layers and the KV cache; each decode step streams them all once
 *	for the whole batch
 * @trace: called for every interval of the prompt's timeline and of the
 *	decode step after it, in simulation order (NULL: none)
 * @trace_arg: passed to @trace
 * @draft_head: speculative decoding with a draft head as EAGLE builds it:
 *	one decoder layer of the target's width sharing its embedding and
 *	head, on the target's last device (no devices of its own, no link);
 *	@draft_params unused
 * @deployment: project what a production deployment runs: without a
 *	draft given, the family's draft from the literature (struct
 *	wafer_plan.deploy_draft says which, its tokens per verify and
 *	acceptance, and the acceptance range the band spans)
 */
struct wafer_plan_opts {
	const char *profile;
	unsigned int devices;
	unsigned int weight_bits;
	unsigned int batch;
	unsigned int context;
	unsigned int prompt;
	uint64_t draft_params;
	double draft_accept;
	unsigned int draft_tokens;
	int stream;
	void (*trace)(void *arg, const struct wafer_plan_event *e);
	void *trace_arg;
	int draft_head;
	int deployment;
};

/**
 * struct wafer_plan - a projection, from the firmware's timing model
 * @profile: the profile's name
 * @devices: devices used (lpu: chips, @groups x @tensor_chips + @extra_chips)
 * @layers_per_device: layers of the fullest device, or group of
 *	@tensor_chips chips: layers are split as wafer_split_layers() splits
 *	them over equal devices, the first (layers % devices) this many, the
 *	others one fewer
 * @tensor_chips: a profile whose layers span chips (lpu): chips each layer
 *	is split over (tensor parallelism); 0 for the others
 * @groups: those groups, each a pipeline stage of the plan
 * @extra_chips: chips holding the embedding and the head
 * @stages: stages used over all devices (a device's layers over at most
 *	its profile's stages, as the firmware places them)
 * @why: why that many devices
 * @device_sram_bytes: SRAM of one device
 * @weight_bytes: weights of the whole model
 * @active_params: parameters a token uses (all of a dense model's)
 * @params: parameters of the whole model (struct wafer_plan_shape.params
 *	when given)
 * @layer_bytes: weights of the largest layer
 * @kv_bytes_per_seq: KV cache of one sequence over all layers
 * @sequences_fit: sequences whose KV fits beside the weights (fullest device)
 * @prompt: tokens of the prompt @ttft_ns is for
 * @ttft_ns: modelled time to the first token of that prompt
 * @token_ns: modelled time of one decode step of a lone sequence
 * @link_ns: of which inter-device links
 * @stage_ns: the slowest stage's time for one token
 * @tok_s_single: tokens/s of a lone sequence
 * @tok_s_aggregate: tokens/s of the batch
 * @bound: what bounds the batch: "compute", "sram", "latency" (the mesh
 *	reductions of the slowest stage), "latency (too few sequences to
 *	fill the pipeline)", or "kv (fewer sequences fit than the batch)"
 *	(then @tok_s_aggregate is that of the sequences that fit)
 * @single_bound: what bounds a lone sequence's step
 * @draft_devices: speculative decoding: the draft's devices
 * @draft_token_ns: the draft's lone decode step
 * @verify_ns: the target's step over @draft_tokens + 1 positions (one
 *	chunk: the mesh latency paid once)
 * @tokens_per_step: expected tokens a verify step yields,
 *	(1 - a^(k+1)) / (1 - a)
 * @tok_s_spec: a lone sequence's tokens/s with the draft
 * @tok_s_single_low: the band of @tok_s_single: the projection with the
 *	device link's latency doubled (halved for @tok_s_single_high),
 *	times the smallest published / projected ratio of the profile's
 *	calibration figures (struct wafer_plan_figure.band) if below 1
 * @tok_s_single_high: ... times the largest ratio if above 1
 * @tok_s_spec_low: the band of @tok_s_spec: besides the link and the
 *	residuals, acceptance 0.1 lower and a draft twice as large
 * @tok_s_spec_high: acceptance 0.1 higher (at most 0.95), a draft half as
 *	large
 * @residual_low: the smallest published / projected ratio of the
 *	profile's calibration figures, at most 1 (1: none)
 * @residual_high: the largest, at least 1
 * @deploy_draft: with struct wafer_plan_opts.deployment and no draft
 *	given: the draft a deployment of this family runs (NULL otherwise)
 * @deploy_source: where its acceptance comes from
 * @draft_tokens: draft tokens per verify pass used
 * @draft_accept: acceptance used; its band spans @draft_accept_low ..
 *	@draft_accept_high
 * @draft_accept_low: see @draft_accept
 * @draft_accept_high: see @draft_accept
 * @tok_s_spec_ceiling: tokens/s with every draft token accepted: what the
 *	verify pass and the drafting allow at most
 */
struct wafer_plan {
	char profile[16];
	unsigned int devices;
	unsigned int layers_per_device;
	unsigned int tensor_chips;
	unsigned int groups;
	unsigned int extra_chips;
	unsigned int stages;
	const char *why;
	uint64_t device_sram_bytes;
	uint64_t weight_bytes;
	uint64_t active_params;
	uint64_t params;
	uint64_t layer_bytes;
	uint64_t kv_bytes_per_seq;
	uint64_t sequences_fit;
	unsigned int prompt;
	uint64_t ttft_ns;
	uint64_t token_ns;
	uint64_t link_ns;
	uint64_t stage_ns;
	uint64_t tok_s_single;
	uint64_t tok_s_aggregate;
	const char *bound;
	const char *single_bound;
	unsigned int draft_devices;
	uint64_t draft_token_ns;
	uint64_t verify_ns;
	double tokens_per_step;
	uint64_t tok_s_spec;
	uint64_t tok_s_single_low;
	uint64_t tok_s_single_high;
	uint64_t tok_s_spec_low;
	uint64_t tok_s_spec_high;
	double residual_low;
	double residual_high;
	const char *deploy_draft;
	const char *deploy_source;
	unsigned int draft_tokens;
	double draft_accept;
	double draft_accept_low;
	double draft_accept_high;
	uint64_t tok_s_spec_ceiling;
};

/**
 * wafer_plan_draft_shape() - an assumed dense shape with about @params
 *	parameters: 16 layers below 2 B parameters, else 32; 64-wide heads, a
 *	quarter of them for K/V; FFN 3.5 x dim; the target's @vocab
 * @params: parameters
 * @vocab: vocabulary (shared with the target)
 * @out: the shape (named "draft")
 */
void wafer_plan_draft_shape(uint64_t params, unsigned int vocab, struct wafer_plan_shape *out);

/**
 * struct wafer_plan_figure - a published figure and the configuration that
 *	projects it (../shared/hardware/PUBLISHED.md; docs/TIMING.md's table)
 * @what: the figure's conditions as published
 * @shape: the model's shape, or NULL for the preset @preset
 * @profile: the profile projecting it
 * @preset: the model's name
 * @devices: devices (lpu: chips), 0 for as few as hold it
 * @weight_bits: the weights' precision
 * @speculative: the published conditions include speculative decoding
 *	(the draft not disclosed): projected as struct
 *	wafer_plan_opts.deployment projects it, with the family's draft
 * @published: the figure: tokens/s of one sequence, or (@count) devices
 * @count: the figure is a device count
 * @role: whether it set a parameter or is a prediction
 * @band: its residual (published / projected) is one of the profile's
 *	band (plain decode of a published shape)
 *
 * Projections take context 1,024 and one sequence.
 */
struct wafer_plan_figure {
	const char *what;
	const struct wafer_plan_shape *shape;
	const char *profile;
	const char *preset;
	unsigned int devices;
	unsigned int weight_bits;
	int speculative;
	double published;
	int count;
	const char *role;
	int band;
};

/** wafer_plan_figure() - the @i-th published figure, NULL past the last. */
const struct wafer_plan_figure *wafer_plan_figure(unsigned int i);

/** wafer_plan_figure_shape() - the shape @f projects. */
const struct wafer_plan_shape *wafer_plan_figure_shape(const struct wafer_plan_figure *f);

/** wafer_plan_preset() - the @i-th built-in shape, NULL past the last. */
const struct wafer_plan_shape *wafer_plan_preset(unsigned int i);

/** wafer_plan_preset_find() - a built-in shape by name, or NULL. */
const struct wafer_plan_shape *wafer_plan_preset_find(const char *name);

/**
 * wafer_plan_shape_from_blob() - the shape of a packed blob (wafer_convert())
 * @blob: the blob, whole (its header and section table are checked)
 * @len: its bytes
 * @name: what @s->name points to (the file's name)
 * @s: filled: dims, layers, heads, vocabulary; a mixture of experts' counts
 *	with experts of the FFN's width in every layer; the layer weights'
 *	bits (4 or 8, layer 0's) in @s->weight_bits
 *
 * Return: 0, or -EINVAL (not a valid blob, or a layer range of one).
 */
int wafer_plan_shape_from_blob(const void *blob, size_t len, const char *name,
			       struct wafer_plan_shape *s);

/**
 * wafer_plan() - project a shape onto devices of a profile
 * @shape: the model
 * @opts: profile, devices, precision, batch, context
 * @out: the projection
 *
 * Layers go to devices in contiguous ranges and to stages as the firmware
 * places them; the modelled times come from the same functions and
 * timeline the firmware accounts a real run with.
 *
 * Return: 0; -EINVAL for a bad field (wafer_last_error() names it);
 * -ENOSPC when the model cannot be placed.
 */
int wafer_plan(const struct wafer_plan_shape *shape, const struct wafer_plan_opts *opts,
	       struct wafer_plan *out);

#ifdef __cplusplus
}
#endif

#endif /* WAFER_H */
