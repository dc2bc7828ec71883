/* SPDX-License-Identifier: (GPL-2.0-only WITH Linux-syscall-note) OR MIT */
/*
 * wafer: userspace ABI of the DRM accel driver for the simulated wafer-scale
 * LLM inference accelerator (/dev/accel/accelN, DRM driver name "wafer").
 *
 * Flags are written (1ULL << n): BIT() is not available to userspace.
 *
 * Rules (Documentation/process/botching-up-ioctls.rst): fixed-width types,
 * 64-bit aligned structs, user pointers as __u64, explicit padding that must
 * be zero, flags that reject unknown bits (-EINVAL), absolute timeouts.
 */
#ifndef _UAPI_DRM_WAFER_ACCEL_H_
#define _UAPI_DRM_WAFER_ACCEL_H_

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

/**
 * DOC: versioning
 *
 * DRM_IOCTL_VERSION reports the driver version.  Within one major version
 * the ABI only grows: new ioctls, new flag bits, new struct members appended
 * at the end.  Userspace checks &drm_wafer_device_info.api_version and the
 * DRM_WAFER_CAP_* bits in &drm_wafer_device_info.caps before using a
 * feature.  Structs the kernel fills (device info) are size-versioned: the
 * caller passes the size it knows and the kernel writes at most that much
 * and reports the size it has, so old binaries keep working and new ones
 * can tell what an old kernel left out.
 */
#define DRM_WAFER_API_VERSION		1

/** DRM_WAFER_CAP_URING_SUBMIT: jobs can be submitted by io_uring uring_cmd. */
#define DRM_WAFER_CAP_URING_SUBMIT	(1ULL << 0)
/** DRM_WAFER_CAP_INT4: the firmware runs int4-weight models. */
#define DRM_WAFER_CAP_INT4		(1ULL << 1)
/** DRM_WAFER_CAP_INT8: the firmware runs int8-weight models. */
#define DRM_WAFER_CAP_INT8		(1ULL << 2)
/** DRM_WAFER_CAP_ALL_POSITIONS: jobs can return results for every position. */
#define DRM_WAFER_CAP_ALL_POSITIONS	(1ULL << 3)
/** DRM_WAFER_CAP_PRIME: buffer objects can be exported/imported as dma-bufs. */
#define DRM_WAFER_CAP_PRIME		(1ULL << 4)
/** DRM_WAFER_CAP_WEIGHT_STREAM: MODEL_LOAD takes DRM_WAFER_LOAD_STREAM. */
#define DRM_WAFER_CAP_WEIGHT_STREAM	(1ULL << 5)
/**
 * DRM_WAFER_CAP_NOT_BEFORE: jobs take DRM_WAFER_JOB_NOT_BEFORE and
 * DRM_WAFER_JOB_DONE_NS, and WAIT reports &drm_wafer_wait.done_ns.
 */
#define DRM_WAFER_CAP_NOT_BEFORE	(1ULL << 6)
/**
 * DRM_WAFER_CAP_LAYER_PARTS: MODEL_LOAD takes &drm_wafer_model_load.part
 * (attention-FFN disaggregation) and jobs take DRM_WAFER_JOB_LAYER.
 */
#define DRM_WAFER_CAP_LAYER_PARTS	(1ULL << 7)
/** DRM_WAFER_CAP_EXPERT_GROUPS: MODEL_LOAD takes &drm_wafer_model_load.expert_group. */
#define DRM_WAFER_CAP_EXPERT_GROUPS	(1ULL << 8)
/**
 * DRM_WAFER_CAP_EXPERT_PARALLEL: MODEL_LOAD takes DRM_WAFER_PART_XHOME and
 * DRM_WAFER_PART_XSHARD with &drm_wafer_model_load.expert_first and
 * &drm_wafer_model_load.expert_count, and jobs carry an expert phase in
 * &drm_wafer_job.layer (DRM_WAFER_XPHASE_SHIFT).
 */
#define DRM_WAFER_CAP_EXPERT_PARALLEL	(1ULL << 9)

#define DRM_WAFER_GET_INFO		0x00
#define DRM_WAFER_BO_CREATE		0x01
#define DRM_WAFER_BO_INFO		0x02
#define DRM_WAFER_MODEL_LOAD		0x03
#define DRM_WAFER_MODEL_UNLOAD		0x04
#define DRM_WAFER_CTX_CREATE		0x05
#define DRM_WAFER_CTX_DESTROY		0x06
#define DRM_WAFER_SUBMIT		0x07
#define DRM_WAFER_WAIT			0x08

/** DRM_WAFER_PROFILE_WAFER: many stages with large SRAM each. */
#define DRM_WAFER_PROFILE_WAFER		0
/** DRM_WAFER_PROFILE_ASIC: few stages with small SRAM. */
#define DRM_WAFER_PROFILE_ASIC		1
/** DRM_WAFER_PROFILE_WSE3: a Cerebras WSE-3 from its public figures. */
#define DRM_WAFER_PROFILE_WSE3		2
/** DRM_WAFER_PROFILE_WSE2: a Cerebras WSE-2 from its public figures. */
#define DRM_WAFER_PROFILE_WSE2		3
/** DRM_WAFER_PROFILE_LPU: a Groq-LPU-like chip from its public figures. */
#define DRM_WAFER_PROFILE_LPU		4

/** DRM_WAFER_MAX_TOPK: most (token, logit) pairs a job returns per position. */
#define DRM_WAFER_MAX_TOPK		32

/**
 * struct drm_wafer_device_info - what DRM_IOCTL_WAFER_GET_INFO reports
 *
 * Filled by the kernel; see &struct drm_wafer_get_info for how its size is
 * negotiated.  Members are only ever appended.
 */
struct drm_wafer_device_info {
	/** @size: bytes of this struct the kernel knows (its sizeof). */
	__u32 size;
	/** @api_version: DRM_WAFER_API_VERSION of the running driver. */
	__u32 api_version;
	/** @caps: DRM_WAFER_CAP_* bits. */
	__u64 caps;
	/** @fw_version_major: firmware ABI major version. */
	__u32 fw_version_major;
	/** @fw_version_minor: firmware ABI minor version. */
	__u32 fw_version_minor;
	/** @profile: DRM_WAFER_PROFILE_*. */
	__u32 profile;
	/** @stages: number of pipeline stages. */
	__u32 stages;
	/** @sram_bytes_per_stage: SRAM capacity of each stage. */
	__u64 sram_bytes_per_stage;
	/** @sram_bytes_free: SRAM not allocated, summed over all stages. */
	__u64 sram_bytes_free;
	/** @clock_hz: modelled device clock. */
	__u64 clock_hz;
	/** @macs_per_cycle: modelled multiply-accumulates per cycle per stage. */
	__u32 macs_per_cycle;
	/** @numa_node: NUMA node of the device's memory, or -1. */
	__s32 numa_node;
	/** @max_bo_size: largest buffer object this file may create. */
	__u64 max_bo_size;
	/**
	 * @max_models: models one file may have loaded at once (the lesser of
	 * the max_file_models module parameter and the device's limit).
	 */
	__u32 max_models;
	/** @max_contexts: contexts one file may have at once. */
	__u32 max_contexts;
	/** @max_tokens_per_job: largest &drm_wafer_job.n_tokens. */
	__u32 max_tokens_per_job;
	/** @max_in_syncobjs: largest &drm_wafer_job.in_syncobj_count. */
	__u32 max_in_syncobjs;
	/** @max_inflight_jobs: jobs one file may have submitted and not completed. */
	__u32 max_inflight_jobs;
	/** @job_timeout_ms: a job not done after this long is failed with -ETIMEDOUT. */
	__u32 job_timeout_ms;
	/** @models_loaded: models loaded on the device now (by any file). */
	__u32 models_loaded;
	/** @contexts: contexts on the device now (of any file). */
	__u32 contexts;
	/** @jobs_inflight: jobs the device is running now (of any file). */
	__u32 jobs_inflight;
	/** @pad: zero. */
	__u32 pad;
	/**
	 * @stream_bytes_per_cycle: modelled bandwidth from host memory of
	 * weight streaming (DRM_WAFER_LOAD_STREAM), per device clock cycle.
	 */
	__u32 stream_bytes_per_cycle;
	/** @stream_latency_cycles: modelled latency of one layer's read. */
	__u32 stream_latency_cycles;
	/**
	 * @model_id: the model the model_* members describe:
	 * &drm_wafer_get_info.model_id, or with 0 there the file's first
	 * model; 0 when the file holds none (those members are then 0).
	 */
	__u32 model_id;
	/**
	 * @device_max_models: models the device holds at once, of all files,
	 * as far as its SRAM allows (&drm_wafer_device_info.max_models is
	 * one file's limit).
	 */
	__u32 device_max_models;
	/** @model_sram_bytes: SRAM the model was placed in, all stages. */
	__u64 model_sram_bytes;
	/**
	 * @model_kv_bytes_per_pos: KV bytes one position of one sequence slot
	 * of the model takes, summed over its layers.
	 */
	__u64 model_kv_bytes_per_pos;
	/** @model_layers: layers of the model the device loaded. */
	__u32 model_layers;
	/** @model_max_ctx: longest context the model supports. */
	__u32 model_max_ctx;
	/**
	 * @model_slots_at_max_ctx: further KV slots of @model_max_ctx
	 * positions that fit in the SRAM left now.
	 */
	__u32 model_slots_at_max_ctx;
	/** @model_flags: DRM_WAFER_MODEL_* of the model, as MODEL_LOAD gave. */
	__u32 model_flags;
};

/**
 * struct drm_wafer_get_info - DRM_IOCTL_WAFER_GET_INFO
 */
struct drm_wafer_get_info {
	/** @info_ptr: user pointer to a &struct drm_wafer_device_info. */
	__u64 info_ptr;
	/**
	 * @info_size: in: bytes available at @info_ptr (at least 8); out: bytes
	 * written, min(in, the kernel's sizeof(struct drm_wafer_device_info)).
	 */
	__u32 info_size;
	/**
	 * @model_id: a model this file loaded (&drm_wafer_model_load.model_id)
	 * for &drm_wafer_device_info's model_* members to describe; 0: the
	 * file's first model.  A model the file does not hold is -ENOENT.
	 * Kernels whose &drm_wafer_device_info.size stops before
	 * &drm_wafer_device_info.model_id had pad here and say -EINVAL for
	 * any value but 0.
	 */
	__u32 model_id;
};

/**
 * struct drm_wafer_bo_create - DRM_IOCTL_WAFER_BO_CREATE
 *
 * Creates a shmem-backed buffer object: job inputs (token ids), job outputs
 * (&struct drm_wafer_token_result records) and model blobs live in BOs.
 */
struct drm_wafer_bo_create {
	/** @size: in: bytes, rounded up to the page size; 0 is -EINVAL. */
	__u64 size;
	/** @flags: must be zero (no flags are defined yet). */
	__u32 flags;
	/** @handle: out: GEM handle, local to this file. */
	__u32 handle;
};

/**
 * struct drm_wafer_bo_info - DRM_IOCTL_WAFER_BO_INFO
 */
struct drm_wafer_bo_info {
	/** @handle: in: GEM handle. */
	__u32 handle;
	/** @pad: must be zero. */
	__u32 pad;
	/** @size: out: size in bytes. */
	__u64 size;
	/** @mmap_offset: out: offset to pass to mmap() on the device fd. */
	__u64 mmap_offset;
};

/** DRM_WAFER_MODEL_EMBED: the loaded layers start the model: jobs take token ids. */
#define DRM_WAFER_MODEL_EMBED		(1U << 0)
/** DRM_WAFER_MODEL_HEAD: the loaded layers end the model: jobs give results. */
#define DRM_WAFER_MODEL_HEAD		(1U << 1)
/** DRM_WAFER_MODEL_STREAM: the loaded layers' weights stream from host memory. */
#define DRM_WAFER_MODEL_STREAM		(1U << 2)
/** DRM_WAFER_MODEL_ATTN: the model holds the attention part of its layers. */
#define DRM_WAFER_MODEL_ATTN		(1U << 3)
/** DRM_WAFER_MODEL_FFN: the model holds the FFN part of its layers. */
#define DRM_WAFER_MODEL_FFN		(1U << 4)
/** DRM_WAFER_MODEL_XHOME: the model is the expert-parallel home of its layers. */
#define DRM_WAFER_MODEL_XHOME		(1U << 5)
/** DRM_WAFER_MODEL_XSHARD: the model holds a shard of its layers' routed experts. */
#define DRM_WAFER_MODEL_XSHARD		(1U << 6)

/** DRM_WAFER_PART_WHOLE: &drm_wafer_model_load.part: whole layers. */
#define DRM_WAFER_PART_WHOLE		0
/**
 * DRM_WAFER_PART_ATTN: &drm_wafer_model_load.part: only each layer's
 * attention (norm, Q/K/V, RoPE, attention over the KV cache, output
 * projection and its residual add), and the embedding if the range starts
 * at layer 0.  The KV cache lives here.
 */
#define DRM_WAFER_PART_ATTN		1
/**
 * DRM_WAFER_PART_FFN: &drm_wafer_model_load.part: only each layer's FFN
 * (norm, w1/w3, SiLU, w2, or the MoE block, and its residual add), and the
 * final norm and classifier if the range ends at the last layer.  Its
 * contexts hold no KV cache.
 */
#define DRM_WAFER_PART_FFN		2
/**
 * DRM_WAFER_PART_XHOME: &drm_wafer_model_load.part
 * (DRM_WAFER_CAP_EXPERT_PARALLEL): the expert-parallel home of each MoE
 * layer's FFN: its norm, router and shared experts, no routed expert (the
 * shards hold them) and no KV cache; the final norm and classifier if the
 * range ends at the last layer.  Its jobs run the phases
 * DRM_WAFER_XPHASE_ROUTE, DRM_WAFER_XPHASE_GLU and DRM_WAFER_XPHASE_FIN.
 */
#define DRM_WAFER_PART_XHOME		3
/**
 * DRM_WAFER_PART_XSHARD: &drm_wafer_model_load.part
 * (DRM_WAFER_CAP_EXPERT_PARALLEL): routed experts
 * [&drm_wafer_model_load.expert_first, + &drm_wafer_model_load.expert_count)
 * of each MoE layer; no KV cache, embedding or head.  Its jobs run the
 * phases DRM_WAFER_XPHASE_UP and DRM_WAFER_XPHASE_DOWN.
 */
#define DRM_WAFER_PART_XSHARD		4
/** DRM_WAFER_PART_MAX: the largest &drm_wafer_model_load.part. */
#define DRM_WAFER_PART_MAX		DRM_WAFER_PART_XSHARD
/**
 * DRM_WAFER_MAX_EXPERT_GROUP: the largest &drm_wafer_model_load.expert_group
 * (the most routed experts a layer has).
 */
#define DRM_WAFER_MAX_EXPERT_GROUP	512

/**
 * DRM_WAFER_LOAD_STREAM: weight streaming.  The layers' weights stay in
 * host memory (the driver's copy of the blob, kept until the model is
 * unloaded) and every used stage reads them, layer by layer, into a
 * two-layer SRAM window; the embedding, head, KV cache and activations stay
 * in SRAM.  For a model larger than the device's SRAM; results are the
 * resident ones bit for bit, the modelled time adds the reads.
 */
#define DRM_WAFER_LOAD_STREAM		(1U << 0)
/** DRM_WAFER_LOAD_FLAGS: every MODEL_LOAD flag this ABI knows. */
#define DRM_WAFER_LOAD_FLAGS		DRM_WAFER_LOAD_STREAM

/**
 * struct drm_wafer_model_load - DRM_IOCTL_WAFER_MODEL_LOAD
 *
 * Loads a model blob (firmware-sim's packed format, see
 * firmware-sim/model/wfs_model.h) from a BO into stage SRAM.  The blob is
 * validated field by field; a model that does not fit fails with -ENOSPC and
 * @sram_needed says how much it would take.
 *
 * A device holds several models at once (a draft next to its target,
 * &drm_wafer_device_info.device_max_models), of one file or of several,
 * as far as SRAM allows: each is placed in the SRAM the others left, and
 * -ENOSPC counts only that.  A file holds at most
 * &drm_wafer_device_info.max_models (-EMFILE beyond); a device holding its
 * most is -EBUSY.  Each model has its own contexts; unloading one leaves
 * the others, their contexts and jobs running.
 *
 * One model across several devices: each device loads a contiguous range
 * of its layers (@layer_first, @layer_count), of the full blob or of a
 * layer-range blob.  A range that does not start the model has jobs take
 * activation records (DRM_WAFER_JOB_IN_ACT), one that does not end it has
 * jobs give them (DRM_WAFER_JOB_OUT_ACT); @model_flags says which.
 * Userspace older than these fields passes a shorter struct, which the
 * DRM core zero-fills: the whole blob.
 *
 * Attention-FFN disaggregation (DRM_WAFER_CAP_LAYER_PARTS): @part loads
 * only the attention or only the FFN part of each layer of the range, so
 * that one device group runs attention and another the FFNs, activation
 * records going back and forth every layer; results are bit for bit those
 * of whole layers.  Every job of a part model runs one layer's part
 * (DRM_WAFER_JOB_LAYER).  An attention part holds the embedding only on a
 * range from layer 0, an FFN part the head only on one to the last layer.
 *
 * Expert parallelism (DRM_WAFER_CAP_EXPERT_PARALLEL): an MoE model's FFN
 * parts split further, the home (DRM_WAFER_PART_XHOME) and shards of the
 * routed experts (DRM_WAFER_PART_XSHARD, @expert_first, @expert_count),
 * each layer's FFN running as five jobs on &struct drm_wafer_xrec_hdr
 * records (see DRM_WAFER_XPHASE_SHIFT); results are bit for bit those of
 * whole layers.  @expert_first and @expert_count were appended: older
 * userspace passes the 64-byte struct that ends before them, which the
 * DRM core zero-fills (and copies back only those 64 bytes).
 */
struct drm_wafer_model_load {
	/** @bo_handle: in: BO holding the blob. */
	__u32 bo_handle;
	/**
	 * @flags: in: DRM_WAFER_LOAD_* (DRM_WAFER_CAP_WEIGHT_STREAM); other
	 * bits are -EINVAL.
	 */
	__u32 flags;
	/** @bo_offset: in: byte offset of the blob in the BO (8-byte aligned). */
	__u64 bo_offset;
	/**
	 * @blob_size: in: bytes of the blob; at most the device's total SRAM
	 * (stages x SRAM per stage) plus 1 MiB, else -EINVAL (streaming, or
	 * a range by @layer_count: at most the file's BO limit).
	 */
	__u64 blob_size;
	/** @sram_needed: out: SRAM bytes the model needs (also set on -ENOSPC). */
	__u64 sram_needed;
	/**
	 * @model_id: out: id of the loaded model, never 0; only this file
	 * names it (CTX_CREATE, MODEL_UNLOAD, GET_INFO).
	 */
	__u32 model_id;
	/**
	 * @part: in: DRM_WAFER_PART_* (DRM_WAFER_CAP_LAYER_PARTS): the part
	 * of each layer to load; 0 (what older userspace passes in this
	 * former padding) loads whole layers.  Above DRM_WAFER_PART_MAX, or a
	 * part with DRM_WAFER_LOAD_STREAM (parts are resident), is -EINVAL;
	 * a valid part without the capability is -EOPNOTSUPP.
	 */
	__u32 part;
	/**
	 * @layer_first: in: with @layer_count, the first layer to load,
	 * numbered as in the full model.
	 */
	__u32 layer_first;
	/**
	 * @layer_count: in: layers to load; 0 (with @layer_first 0) loads
	 * every layer of the blob.  A range outside the blob is -EINVAL; more
	 * than 256 layers (a blob may have up to 1024) is -E2BIG.
	 */
	__u32 layer_count;
	/** @n_layers: out: layers loaded. */
	__u32 n_layers;
	/** @model_flags: out: DRM_WAFER_MODEL_* of the loaded range. */
	__u32 model_flags;
	/**
	 * @act_size: out: bytes of one &struct drm_wafer_act_rec of this
	 * model (DRM_WAFER_ACT_REC_SIZE(dim)); of an expert-parallel part
	 * (DRM_WAFER_PART_XHOME, DRM_WAFER_PART_XSHARD), bytes of one expert
	 * record (DRM_WAFER_XREC_SIZE(dim, hidden)), what its jobs take and
	 * give.
	 */
	__u32 act_size;
	/**
	 * @expert_group: in: (DRM_WAFER_CAP_EXPERT_GROUPS) routed experts
	 * per expert group: each MoE layer's routed experts, in groups of
	 * this many consecutive ones, are placed across the stages with the
	 * most free SRAM; results are bit for bit those of local experts.  0
	 * (what older userspace passes in this former padding): the
	 * firmware's default (experts stay with their layer unless the layers
	 * do not fit so).  Above DRM_WAFER_MAX_EXPERT_GROUP, with
	 * DRM_WAFER_LOAD_STREAM or DRM_WAFER_PART_ATTN, on a model without
	 * MoE layers, or making more than 64 groups of a layer is -EINVAL;
	 * a valid value but 0 without the capability is -EOPNOTSUPP.
	 * With DRM_WAFER_PART_XHOME or DRM_WAFER_PART_XSHARD: -EINVAL.
	 */
	__u32 expert_group;
	/**
	 * @expert_first: in: (DRM_WAFER_CAP_EXPERT_PARALLEL) with
	 * DRM_WAFER_PART_XSHARD, the first routed expert of the shard, of
	 * every MoE layer of the range; with any other part it must be 0
	 * (-EINVAL).
	 */
	__u32 expert_first;
	/**
	 * @expert_count: in: (DRM_WAFER_CAP_EXPERT_PARALLEL) with
	 * DRM_WAFER_PART_XSHARD, the shard's routed experts, at least 1;
	 * @expert_first + @expert_count must not overflow and must not pass
	 * the model's routed experts per layer (-EINVAL, as are a
	 * DRM_WAFER_PART_XHOME or DRM_WAFER_PART_XSHARD of a model without
	 * MoE layers); with any other part it must be 0 (-EINVAL).
	 */
	__u32 expert_count;
};

/**
 * struct drm_wafer_model_unload - DRM_IOCTL_WAFER_MODEL_UNLOAD
 *
 * Fails with -EBUSY while contexts of the model exist, -ENOENT for a model
 * this file does not hold.  Waits (interruptibly) for the jobs of its
 * contexts already destroyed, not for those of other models, which are
 * not touched.
 */
struct drm_wafer_model_unload {
	/** @model_id: in: model to unload. */
	__u32 model_id;
	/** @pad: must be zero. */
	__u32 pad;
};

/**
 * struct drm_wafer_ctx_create - DRM_IOCTL_WAFER_CTX_CREATE
 *
 * A context holds the KV cache of @kv_slots sequences of up to @ctx_len
 * positions each, in stage SRAM next to the model's weights.
 */
struct drm_wafer_ctx_create {
	/** @model_id: in: a model this file loaded. */
	__u32 model_id;
	/** @kv_slots: in: independent sequences (1..256). */
	__u32 kv_slots;
	/** @ctx_len: in: positions per sequence (1..the model's max). */
	__u32 ctx_len;
	/** @flags: must be zero. */
	__u32 flags;
	/** @kv_bytes: out: SRAM bytes the KV cache took. */
	__u64 kv_bytes;
	/** @ctx_id: out: context id, local to this file. */
	__u32 ctx_id;
	/** @pad: must be zero. */
	__u32 pad;
};

/**
 * struct drm_wafer_ctx_destroy - DRM_IOCTL_WAFER_CTX_DESTROY
 *
 * Jobs of the context still in flight keep it alive until they finish.
 */
struct drm_wafer_ctx_destroy {
	/** @ctx_id: in: context to destroy. */
	__u32 ctx_id;
	/** @pad: must be zero. */
	__u32 pad;
};

/** DRM_WAFER_JOB_ALL_POSITIONS: return a result for every input position. */
#define DRM_WAFER_JOB_ALL_POSITIONS	(1U << 0)
/**
 * DRM_WAFER_JOB_IN_ACT: the input BO holds @n_tokens &struct
 * drm_wafer_act_rec (required iff the model's range lacks DRM_WAFER_MODEL_EMBED).
 */
#define DRM_WAFER_JOB_IN_ACT		(1U << 1)
/**
 * DRM_WAFER_JOB_OUT_ACT: the output BO receives @n_tokens &struct
 * drm_wafer_act_rec, one per position (required iff the range lacks
 * DRM_WAFER_MODEL_HEAD; @top_k must be 0 and ALL_POSITIONS unset).
 */
#define DRM_WAFER_JOB_OUT_ACT		(1U << 2)
/**
 * DRM_WAFER_JOB_NOP: a job that does nothing: the device completes it as
 * soon as it takes it, with status 0 and no modelled device time, reading
 * and writing no buffer and leaving the KV cache alone.  It costs what
 * submitting and completing a job cost, which is what it is for (a
 * submission benchmark).  It names a context of the file and one of its
 * slots, and may wait for in-syncobjs and signal @out_syncobj like any
 * job; @n_tokens, @start_pos, @top_k, the other flags, both handles and
 * both offsets must be zero (-EINVAL).
 */
#define DRM_WAFER_JOB_NOP		(1U << 3)
/**
 * DRM_WAFER_JOB_TIMES: the device also writes the job's modelled
 * timeline into the output BO: at @out_offset + @times_offset, one
 * &struct drm_wafer_chunk_time per pipeline chunk and stage the chunk
 * passed, record (chunk * stages used + stage), each with
 * DRM_WAFER_CHUNK_VALID set; records past the job's are left alone.
 * @times_offset must be 8-byte aligned and at or past the end of the
 * results (or activation records), and @times_len must hold every record
 * (n_tokens * &drm_wafer_device_info.stages records always do), else the
 * job fails with -EINVAL.  Without the flag both fields must be zero.
 */
#define DRM_WAFER_JOB_TIMES		(1U << 4)
/**
 * DRM_WAFER_JOB_WAIT_SUBMIT: the driver's flag, not the device's: an
 * in-syncobj that holds no fence yet is waited for until another job puts
 * one there (at most 5 s, DRM core's DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT
 * limit; then the submission fails with -ETIME), instead of failing at
 * once with -EINVAL.  It lets a chain of devices be submitted through
 * io_uring, where the previous device's job may be issued after this one:
 * the caller resets each link's syncobj (DRM_IOCTL_SYNCOBJ_RESET) before
 * it uses it again, so that a fence left from the last use is not taken
 * for the next.  Through io_uring such a job is issued from io_uring's
 * worker, since the wait sleeps.  Requires @in_syncobj_count >= 1
 * (-EINVAL).
 */
#define DRM_WAFER_JOB_WAIT_SUBMIT	(1U << 5)
/**
 * DRM_WAFER_JOB_NOT_BEFORE: the input BO holds, right after the @n_tokens
 * token ids (at @in_offset + 4 * @n_tokens, so the BO must hold 8 bytes
 * more), a __u64 modelled time on the file's timeline on the device (see
 * DRM_WAFER_NOT_BEFORE_MAX) before which the job is not ready: the device
 * starts it no earlier than the later of this floor and its own rule (the
 * slot's previous job's completion if that had completed, the file's clock
 * if none of its jobs was in flight).  For a model split over
 * devices: the first device's job of a decode step gets the time the
 * slot's previous token left the last device (that job's
 * &drm_wafer_wait.done_ns), which the first device cannot know.  Token
 * input only: with DRM_WAFER_JOB_IN_ACT it is -EINVAL (activation records
 * carry their own time, &drm_wafer_act_rec.t_ns).  A floor above
 * DRM_WAFER_NOT_BEFORE_MAX fails the job (WAIT status -EINVAL; nothing ran),
 * as a token id out of range does.
 */
#define DRM_WAFER_JOB_NOT_BEFORE	(1U << 6)
/**
 * DRM_WAFER_NOT_BEFORE_MAX: the latest floor (2^62 ns, 146 years), and the
 * latest &drm_wafer_act_rec.t_ns.  Modelled times are per open file: the
 * contexts of a file share a timeline on the device, which starts at 0 and
 * which no other file's floors or record times move (another file's jobs
 * delay this file's only by the stages' work on them, as a shared pipeline
 * does).
 */
#define DRM_WAFER_NOT_BEFORE_MAX	(1ULL << 62)
/**
 * DRM_WAFER_JOB_DONE_NS: the driver's flag, not the device's: through
 * io_uring, the CQE32's big_cqe[0] carries the job's modelled completion
 * time (&drm_wafer_wait.done_ns) instead of its modelled device time (a
 * CQE has room for one).  DRM_IOCTL_WAFER_WAIT reports both either way.
 */
#define DRM_WAFER_JOB_DONE_NS		(1U << 7)
/**
 * DRM_WAFER_JOB_LAYER: (DRM_WAFER_CAP_LAYER_PARTS) the job runs the part
 * of layer &drm_wafer_job.layer that its model holds (a model loaded with
 * &drm_wafer_model_load.part); required by a part model's jobs, -EINVAL
 * for a whole-layer model's.  The device reads the layer number from the
 * input BO, right after the input (after NOT_BEFORE's floor): the driver
 * writes &drm_wafer_job.layer there when it hands the job to the device
 * (after its in-syncobjs signalled), so the input span is 4 bytes longer,
 * the BO must have room for it, and two jobs the device may take in
 * together (not ordered by a syncobj) must not share that word.  Token ids go in (no
 * DRM_WAFER_JOB_IN_ACT) only for the attention of layer 0 on a range
 * holding the embedding, results come out (no DRM_WAFER_JOB_OUT_ACT) only
 * from the FFN of the model's last layer on a range holding the head (of
 * an expert-parallel home: from its DRM_WAFER_XPHASE_FIN only);
 * every other part job takes and gives activation records (expert records
 * on an expert-parallel part).  The driver writes the whole word, phase
 * included.
 */
#define DRM_WAFER_JOB_LAYER		(1U << 8)
#define DRM_WAFER_JOB_FLAGS		(DRM_WAFER_JOB_ALL_POSITIONS | \
					 DRM_WAFER_JOB_IN_ACT | DRM_WAFER_JOB_OUT_ACT | \
					 DRM_WAFER_JOB_NOP | DRM_WAFER_JOB_TIMES | \
					 DRM_WAFER_JOB_WAIT_SUBMIT | DRM_WAFER_JOB_NOT_BEFORE | \
					 DRM_WAFER_JOB_DONE_NS | \
					 DRM_WAFER_JOB_LAYER)

/** DRM_WAFER_CHUNK_VALID: set in every record the device wrote. */
#define DRM_WAFER_CHUNK_VALID		(1U << 0)
/** DRM_WAFER_CHUNK_LINK: the chunk's hop out is the link to the next device. */
#define DRM_WAFER_CHUNK_LINK		(1U << 1)

/**
 * struct drm_wafer_chunk_time - one chunk on one stage, in modelled time
 *
 * Times are modelled device nanoseconds on the device's timeline (the
 * one a chain of devices shares, see &drm_wafer_act_rec.t_ns), the same
 * numbers the job's modelled latency is made of: the job's device_ns is
 * the last record's @hop_end_ns minus the first's @start_ns.
 */
struct drm_wafer_chunk_time {
	/** @stage: stage index on the device. */
	__u32 stage;
	/** @pos0: position of the chunk's first token. */
	__u32 pos0;
	/** @n_tokens: tokens in the chunk. */
	__u32 n_tokens;
	/** @flags: DRM_WAFER_CHUNK_* (0 in a record the device did not write). */
	__u32 flags;
	/** @start_ns: the stage starts the chunk. */
	__u64 start_ns;
	/** @end_ns: the stage is done with it. */
	__u64 end_ns;
	/** @hop_end_ns: it reaches the next stage, the next device or the host. */
	__u64 hop_end_ns;
};

/**
 * struct drm_wafer_act_rec - one position's activations between devices
 *
 * What a device running layers [a, b) of a model gives the device running
 * [b, c): the residual stream after layer b - 1, exactly as the device's
 * own stages pass it on, so a model split over devices gives the same
 * results bit for bit.  Records are DRM_WAFER_ACT_REC_SIZE(dim) bytes
 * (zero padded), one per position, at 64-byte aligned offsets.  A record
 * out of range fails the job that reads it with -EINVAL.
 */
struct drm_wafer_act_rec {
	/** @dim: values that follow: the model's width. */
	__u32 dim;
	/** @exp: power-of-two exponent of the values, |exp| <= 2^20. */
	__s32 exp;
	/**
	 * @t_ns: modelled time the record reaches the next device, on the
	 * timeline the devices of a chain share (the previous device's finish
	 * plus the inter-device link); 0 from userspace.  A time above
	 * DRM_WAFER_NOT_BEFORE_MAX fails the job that reads it (WAIT status
	 * -EINVAL) and is not taken.
	 */
	__u64 t_ns;
	/** @x: value x[i] * 2^exp, |x[i]| <= 2^30. */
	__s32 x[];
};

/** DRM_WAFER_ACT_REC_SIZE: bytes of one activation record of width @dim. */
#define DRM_WAFER_ACT_REC_SIZE(dim)	((16U + 4U * (__u32)(dim) + 63U) & ~63U)

/**
 * DOC: expert parallelism
 *
 * (DRM_WAFER_CAP_EXPERT_PARALLEL) An MoE layer's FFN split over a home
 * (DRM_WAFER_PART_XHOME) and N shards (DRM_WAFER_PART_XSHARD) runs as
 * five jobs per layer, each on one expert record per position, the phase
 * in bits 24..31 of &drm_wafer_job.layer (DRM_WAFER_XPHASE_SHIFT), the
 * layer in bits 0..23 (DRM_WAFER_JOB_LAYER_MASK):
 *
 * - DRM_WAFER_XPHASE_ROUTE (home): h = norm(x), the selected experts and
 *   their gates, the shared experts' W1 h and W3 h.
 * - DRM_WAFER_XPHASE_UP (each shard): its selected experts' W1 h and
 *   W3 h, units [u0, u1) of the record (&drm_wafer_xrec_hdr.u0, .u1);
 *   userspace copies those units of a1 and a3 into the home's record.
 * - DRM_WAFER_XPHASE_GLU (home): u = SwiGLU over all units, y = the
 *   shared experts' W2 u.
 * - DRM_WAFER_XPHASE_DOWN (each shard): y = the sum over its selected
 *   experts of gate * W2 u; userspace adds each shard's s64 y into the
 *   home's (exact in any order).
 * - DRM_WAFER_XPHASE_FIN (home): x += y: an expert record whose
 *   activation part is the next attention's input, or the results (the
 *   head, FIN of the model's last layer only).
 *
 * Every such job is DRM_WAFER_JOB_IN_ACT and DRM_WAFER_JOB_OUT_ACT with
 * records of &drm_wafer_model_load.act_size bytes (DRM_WAFER_XREC_SIZE),
 * but FIN of the last layer, which gives results.  The record is a
 * &struct drm_wafer_act_rec (the residual and its time, t_ns: userspace
 * keeps the latest of the shards' replies), then, each part 64-byte
 * aligned, &struct drm_wafer_xrec_hdr, __s16 h[dim], __s64 a1[hidden],
 * __s64 a3[hidden], __s16 u[hidden], __s64 y[dim], where hidden is the
 * model's FFN width (the DRM_WAFER_XREC_*_OFF offsets).  A record the
 * device cannot have written fails the job (-EINVAL).  Every other
 * model's jobs take phase 0.
 */
/** DRM_WAFER_JOB_LAYER_MASK: the layer bits of &drm_wafer_job.layer. */
#define DRM_WAFER_JOB_LAYER_MASK	0x00ffffffU
/** DRM_WAFER_XPHASE_SHIFT: where &drm_wafer_job.layer's phase starts. */
#define DRM_WAFER_XPHASE_SHIFT		24
/** DRM_WAFER_XPHASE_ROUTE: the home's norm, routing and shared W1/W3. */
#define DRM_WAFER_XPHASE_ROUTE		1
/** DRM_WAFER_XPHASE_UP: a shard's W1/W3 of its selected experts. */
#define DRM_WAFER_XPHASE_UP		2
/** DRM_WAFER_XPHASE_GLU: the home's SwiGLU over all units, shared W2. */
#define DRM_WAFER_XPHASE_GLU		3
/** DRM_WAFER_XPHASE_DOWN: a shard's gated W2 of its selected experts. */
#define DRM_WAFER_XPHASE_DOWN		4
/** DRM_WAFER_XPHASE_FIN: the home's residual add (and the head). */
#define DRM_WAFER_XPHASE_FIN		5
/** DRM_WAFER_XREC_MAX_SEL: most routed experts a position selects. */
#define DRM_WAFER_XREC_MAX_SEL		64

/**
 * struct drm_wafer_xrec_hdr - the expert state of one position
 *
 * At DRM_WAFER_XREC_HDR_OFF(dim) in an expert record; exponents are
 * powers of two of the integer vectors that follow it.
 */
struct drm_wafer_xrec_hdr {
	/** @n_units: SwiGLU units of the selected experts, shared and routed. */
	__u32 n_units;
	/** @u0: first unit the shard that wrote the record computed (UP, DOWN). */
	__u32 u0;
	/** @u1: one past its last (@u0 == @u1: none of its experts was selected). */
	__u32 u1;
	/** @n_sel: routed experts selected (the layer's top-k). */
	__u32 n_sel;
	/** @eh: exponent of h. */
	__s32 eh;
	/** @ea1: exponent of a1 (W1 h). */
	__s32 ea1;
	/** @ea3: exponent of a3 (W3 h). */
	__s32 ea3;
	/** @eu: exponent of u. */
	__s32 eu;
	/** @ey: exponent of y. */
	__s32 ey;
	/** @reserved: zero. */
	__u32 reserved[7];
	/** @expert: the selected routed experts, ascending. */
	__u32 expert[DRM_WAFER_XREC_MAX_SEL];
	/** @gate: their gates in Q30 (at most 2^30). */
	__u32 gate[DRM_WAFER_XREC_MAX_SEL];
};

/** DRM_WAFER_XREC_A64: @x rounded up to 64 bytes. */
#define DRM_WAFER_XREC_A64(x)		(((__u32)(x) + 63U) & ~63U)
/** DRM_WAFER_XREC_HDR_OFF: offset of &struct drm_wafer_xrec_hdr. */
#define DRM_WAFER_XREC_HDR_OFF(d)	DRM_WAFER_ACT_REC_SIZE(d)
/** DRM_WAFER_XREC_H_OFF: offset of h (__s16 [dim]). */
#define DRM_WAFER_XREC_H_OFF(d)		(DRM_WAFER_XREC_HDR_OFF(d) + \
					 DRM_WAFER_XREC_A64(sizeof(struct drm_wafer_xrec_hdr)))
/** DRM_WAFER_XREC_A1_OFF: offset of a1 (__s64 [hidden]). */
#define DRM_WAFER_XREC_A1_OFF(d)	(DRM_WAFER_XREC_H_OFF(d) + DRM_WAFER_XREC_A64(2U * (d)))
/** DRM_WAFER_XREC_A3_OFF: offset of a3 (__s64 [hidden]). */
#define DRM_WAFER_XREC_A3_OFF(d, h)	(DRM_WAFER_XREC_A1_OFF(d) + DRM_WAFER_XREC_A64(8U * (h)))
/** DRM_WAFER_XREC_U_OFF: offset of u (__s16 [hidden]). */
#define DRM_WAFER_XREC_U_OFF(d, h)	(DRM_WAFER_XREC_A3_OFF(d, h) + \
					 DRM_WAFER_XREC_A64(8U * (h)))
/** DRM_WAFER_XREC_Y_OFF: offset of y (__s64 [dim]). */
#define DRM_WAFER_XREC_Y_OFF(d, h)	(DRM_WAFER_XREC_U_OFF(d, h) + \
					 DRM_WAFER_XREC_A64(2U * (h)))
/** DRM_WAFER_XREC_SIZE: bytes of one expert record. */
#define DRM_WAFER_XREC_SIZE(d, h)	(DRM_WAFER_XREC_Y_OFF(d, h) + \
					 DRM_WAFER_XREC_A64(8U * (d)))

/**
 * struct drm_wafer_job - one job: run @n_tokens tokens of one sequence
 *
 * The same descriptor is the argument of DRM_IOCTL_WAFER_SUBMIT and the
 * payload of the io_uring command DRM_WAFER_URING_CMD_SUBMIT (it fills the
 * 80-byte command area of an SQE128: it can grow no more).
 *
 * The input BO holds @n_tokens __u32 token ids at @in_offset; they occupy
 * positions @start_pos .. @start_pos + @n_tokens - 1 of sequence @slot.
 * The output BO receives &struct drm_wafer_token_result records at
 * @out_offset, DRM_WAFER_RESULT_SIZE(@top_k) bytes each: one for the last
 * position, or one per position with DRM_WAFER_JOB_ALL_POSITIONS.  With
 * DRM_WAFER_JOB_IN_ACT / DRM_WAFER_JOB_OUT_ACT, input / output are
 * activation records instead (64-byte aligned offsets): a chain of devices
 * passes them in BOs shared with PRIME, each job taking the previous
 * device's out-syncobj as an in-syncobj.
 */
struct drm_wafer_job {
	/** @ctx_id: context to run in. */
	__u32 ctx_id;
	/** @slot: KV slot (sequence) within the context. */
	__u32 slot;
	/**
	 * @start_pos: position of the first token; start_pos + n_tokens <=
	 * ctx_len.  Positions before it must have run on @slot (the KV cache
	 * is not checked).  A job may start at any such position, also one
	 * earlier than where the slot's previous job ended: the positions it
	 * runs get their KV rewritten (attention at a position reads only the
	 * positions up to it), and the stale ones after them count as not run
	 * by the rule above.  Speculative decoding drops rejected draft tokens
	 * this way, starting its next job at the first rejected position.
	 */
	__u32 start_pos;
	/** @n_tokens: tokens to run, 1..max_tokens_per_job. */
	__u32 n_tokens;
	/** @flags: DRM_WAFER_JOB_* bits; others are -EINVAL. */
	__u32 flags;
	/** @top_k: (token, logit) pairs wanted per result, 0..DRM_WAFER_MAX_TOPK. */
	__u32 top_k;
	/** @in_handle: BO with the input (token ids or activation records). */
	__u32 in_handle;
	/** @out_handle: BO the output (results or activation records) goes to. */
	__u32 out_handle;
	/**
	 * @in_offset: byte offset of the input in @in_handle (4-byte aligned;
	 * 64 with DRM_WAFER_JOB_IN_ACT).
	 */
	__u64 in_offset;
	/**
	 * @out_offset: byte offset of the output in @out_handle (8-byte
	 * aligned; 64 with DRM_WAFER_JOB_OUT_ACT).
	 */
	__u64 out_offset;
	/**
	 * @in_syncobjs: user pointer to @in_syncobj_count __u32 syncobj
	 * handles to wait for.  A job whose in-fence signalled an error (the
	 * previous device's job failed) does not run: it completes with
	 * -ECANCELED, and so on down a chain of devices.
	 */
	__u64 in_syncobjs;
	/** @in_syncobj_count: number of handles at @in_syncobjs. */
	__u32 in_syncobj_count;
	/** @out_syncobj: syncobj that receives the job's fence, or 0. */
	__u32 out_syncobj;
	/**
	 * @times_offset: with DRM_WAFER_JOB_TIMES, where the timeline goes,
	 * in bytes from @out_offset in @out_handle; else zero.
	 */
	__u32 times_offset;
	/** @times_len: with DRM_WAFER_JOB_TIMES, bytes for it; else zero. */
	__u32 times_len;
	/**
	 * @layer: with DRM_WAFER_JOB_LAYER, the layer whose part the job
	 * runs, numbered as in the full model and inside the model's loaded
	 * range (-EINVAL otherwise); else zero.  Bits 24..31 are the
	 * expert phase (DRM_WAFER_XPHASE_SHIFT): one the model's part runs
	 * (ROUTE, GLU, FIN on DRM_WAFER_PART_XHOME, UP, DOWN on
	 * DRM_WAFER_PART_XSHARD), 0 on every other model (-EINVAL
	 * otherwise).  Older userspace, whose
	 * descriptor ended before it, passes zeros here (io_uring: the
	 * command area's unused bytes, which had to be zero).
	 */
	__u32 layer;
	/** @pad: must be zero. */
	__u32 pad;
};

/**
 * struct drm_wafer_topk - one (token, logit) pair of a result
 */
struct drm_wafer_topk {
	/** @token: token id. */
	__u32 token;
	/** @logit: logit in signed fixed point, DRM_WAFER_LOGIT_FRAC_BITS fraction bits. */
	__s32 logit;
};

/** DRM_WAFER_LOGIT_FRAC_BITS: fraction bits of the logits in results. */
#define DRM_WAFER_LOGIT_FRAC_BITS	16

/**
 * struct drm_wafer_token_result - the result for one position, in the output BO
 *
 * Results are packed back to back, each DRM_WAFER_RESULT_SIZE(top_k) bytes
 * (the device writes them there directly).
 */
struct drm_wafer_token_result {
	/** @position: sequence position this result follows. */
	__u32 position;
	/** @argmax: most likely next token. */
	__u32 argmax;
	/** @argmax_logit: its logit. */
	__s32 argmax_logit;
	/** @top_k: entries in @topk (the job's &drm_wafer_job.top_k). */
	__u32 top_k;
	/** @topk: best (token, logit) pairs, best first. */
	struct drm_wafer_topk topk[];
};

/** DRM_WAFER_RESULT_SIZE: bytes of one result carrying @k pairs. */
#define DRM_WAFER_RESULT_SIZE(k)	(16u + 8u * (__u32)(k))

/**
 * struct drm_wafer_submit - DRM_IOCTL_WAFER_SUBMIT
 *
 * 88 bytes since &drm_wafer_job.layer; the driver still takes the 80-byte
 * struct of older userspace (its ioctl number differs by the size), whose
 * job ends before @job.layer and whose @seqno sits at byte 72, and
 * answers it in that layout.  Userspace facing a driver without
 * DRM_WAFER_CAP_LAYER_PARTS sends that older struct.
 */
struct drm_wafer_submit {
	/** @job: in: the job. */
	struct drm_wafer_job job;
	/** @seqno: out: the job's sequence number, for DRM_IOCTL_WAFER_WAIT. */
	__u64 seqno;
};

/**
 * DRM_WAFER_MAX_UNWAITED: finished jobs a file's WAIT can still report
 * without having waited for them (see &struct drm_wafer_wait).
 */
#define DRM_WAFER_MAX_UNWAITED	1024

/**
 * struct drm_wafer_wait - DRM_IOCTL_WAFER_WAIT
 *
 * Waits for the job with @seqno submitted through this file.  Returns 0
 * when it completed (its own status is in @status), -ETIME when
 * @timeout_ns passed first, -EINVAL for a seqno this file never returned.
 * A completed job is forgotten once waited for; waiting again is -ENOENT.
 *
 * WAIT is optional (a job's out-syncobj or io_uring CQE tells as much): a
 * file keeps the results of at most DRM_WAFER_MAX_UNWAITED finished jobs it
 * has not waited for, besides those of its unfinished jobs.  Past that,
 * each new submission drops the oldest finished result; WAIT on a dropped
 * job is -ENOENT.
 *
 * @done_ns was appended after the first release: a caller built against
 * the older, 32-byte struct passes that size and gets the fields before it
 * (DRM core copies only the size the command number says).
 */
struct drm_wafer_wait {
	/** @seqno: in: from &drm_wafer_submit.seqno. */
	__u64 seqno;
	/** @timeout_ns: in: absolute CLOCK_MONOTONIC deadline in nanoseconds. */
	__s64 timeout_ns;
	/** @status: out: 0, or the job's negative errno (-ETIMEDOUT, -ENODEV, -EIO...). */
	__s32 status;
	/** @flags: must be zero. */
	__u32 flags;
	/** @device_ns: out: modelled device time the job took. */
	__u64 device_ns;
	/**
	 * @done_ns: out: modelled time the job completed (its last result
	 * reached the host), on the device's timeline, which the devices of
	 * a chain share (&drm_wafer_act_rec.t_ns).  What a later job's
	 * DRM_WAFER_JOB_NOT_BEFORE floor is made of.
	 */
	__u64 done_ns;
};

/**
 * DOC: io_uring submission
 *
 * IORING_OP_URING_CMD on the device fd with cmd_op DRM_WAFER_URING_CMD_SUBMIT
 * and a &struct drm_wafer_job in the SQE's command area.  The ring must use
 * IORING_SETUP_SQE128 (-EINVAL otherwise).  The 80-byte command area's bytes
 * after the job are reserved and must be zero (-EINVAL otherwise).  The CQE's res is the job's
 * status (0 or a negative errno); with IORING_SETUP_CQE32, big_cqe[0] is
 * the job's modelled device time in nanoseconds (its modelled completion
 * time with DRM_WAFER_JOB_DONE_NS).  Commands are cancelable:
 * a command whose ring goes away before its job finished completes with
 * -ECANCELED (the job itself still runs).  Commands in flight together are
 * not ordered with respect to each other (io_uring may start them in any
 * order); a job that needs an earlier one (the same slot) is linked to it
 * with IOSQE_IO_LINK or submitted after its completion.
 */
#define DRM_WAFER_URING_CMD_SUBMIT	0x1

#define DRM_IOCTL_WAFER_GET_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_WAFER_GET_INFO, struct drm_wafer_get_info)
#define DRM_IOCTL_WAFER_BO_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_WAFER_BO_CREATE, struct drm_wafer_bo_create)
#define DRM_IOCTL_WAFER_BO_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_WAFER_BO_INFO, struct drm_wafer_bo_info)
#define DRM_IOCTL_WAFER_MODEL_LOAD \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_WAFER_MODEL_LOAD, struct drm_wafer_model_load)
#define DRM_IOCTL_WAFER_MODEL_UNLOAD \
	DRM_IOW(DRM_COMMAND_BASE + DRM_WAFER_MODEL_UNLOAD, struct drm_wafer_model_unload)
#define DRM_IOCTL_WAFER_CTX_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_WAFER_CTX_CREATE, struct drm_wafer_ctx_create)
#define DRM_IOCTL_WAFER_CTX_DESTROY \
	DRM_IOW(DRM_COMMAND_BASE + DRM_WAFER_CTX_DESTROY, struct drm_wafer_ctx_destroy)
#define DRM_IOCTL_WAFER_SUBMIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_WAFER_SUBMIT, struct drm_wafer_submit)
#define DRM_IOCTL_WAFER_WAIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_WAFER_WAIT, struct drm_wafer_wait)

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_DRM_WAFER_ACCEL_H_ */
