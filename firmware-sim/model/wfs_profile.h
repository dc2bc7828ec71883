/* SPDX-License-Identifier: MIT */
/*
 * wfs_profile.h - hardware profiles of the simulated device.
 *
 * A profile is a table of the parameters the device model and the timing
 * model (wfs_timing.h) are built from.  Built in:
 *
 *   wafer  a wafer-scale engine for the test suite: many pipeline stages
 *          (wafer regions), each with a large SRAM, wide MAC arrays and a
 *          fast on-wafer fabric, small enough that several fit in a VM;
 *   asic   a custom inference ASIC for the test suite: a few stages, small
 *          SRAM, narrower MAC arrays, slower chip-to-chip links;
 *   wse3   a Cerebras WSE-3 (CS-3) from its public figures, and
 *   wse2   a WSE-2 (CS-2): 44 and 40 stages of 1 GB, each stage a region
 *          of the wafer's core mesh (docs/TIMING.md has every parameter
 *          with its source or the reason for the assumption), and
 *   lpu    a Groq-LPU-like chip: one stage of 230 MB; a model spans
 *          hundreds of them, a layer several (tensor parallelism, see
 *          wfs_profile_tensor_group()).
 *
 * The stage count and the SRAM per stage can be overridden when a device is
 * created (module parameters in the driver); everything else comes from the
 * profile.
 */
#ifndef WFS_PROFILE_H
#define WFS_PROFILE_H

#include "wfs_compat.h"

/* Hard limits of the device model, whatever the profile says. */
#define WFS_MAX_STAGES		64
#define WFS_MIN_SRAM_BYTES	(64ull << 10)
#define WFS_MAX_SRAM_BYTES	(1024ull * 1024 * 1024)
/*
 * SRAM a simulated device may allocate in all (its stages are host memory):
 * wse3's 44 GB are for projections (wafer plan) and for the timing of a
 * device whose stages or SRAM per stage are given smaller.
 */
#define WFS_MAX_DEVICE_SRAM_BYTES (1024ull * 1024 * 1024)
#define WFS_PROFILE_NAME_LEN	16

/**
 * enum wfs_profile_id - built-in profiles (values are ABI: GET_INFO reports them)
 * @WFS_PROFILE_WAFER: wafer-scale engine (default)
 * @WFS_PROFILE_ASIC: inference ASIC
 * @WFS_PROFILE_WSE3: Cerebras WSE-3
 * @WFS_PROFILE_WSE2: Cerebras WSE-2
 * @WFS_PROFILE_LPU: Groq-LPU-like chip
 * @WFS_PROFILE_COUNT: number of profiles
 */
enum wfs_profile_id {
	WFS_PROFILE_WAFER = 0,
	WFS_PROFILE_ASIC = 1,
	WFS_PROFILE_WSE3 = 2,
	WFS_PROFILE_WSE2 = 3,
	WFS_PROFILE_LPU = 4,
	WFS_PROFILE_COUNT
};

/**
 * struct wfs_profile - parameters of one hardware generation
 * @name: "wafer", "asic", "wse3", "wse2" or "lpu"
 * @id: enum wfs_profile_id
 * @stages: pipeline stages
 * @sram_bytes: SRAM per stage
 * @clock_hz: stage clock
 * @macs_per_cycle: 16-bit multiply-accumulates per cycle per stage
 * @sram_bytes_per_cycle: SRAM bandwidth per stage
 * @fabric_bytes_per_cycle: bandwidth of the link from a stage to the next
 * @hop_cycles: latency of one fabric hop, in cycles
 * @link_bytes_per_cycle: bandwidth of the link to the next device of a
 *	multi-device pipeline (activation records between layer ranges)
 * @link_hop_cycles: latency of that link, in cycles
 * @fifo_depth: entries of the bounded FIFO in front of each stage
 * @chunk_tokens: tokens per pipeline transfer (a job of N tokens moves
 *	through the pipeline as ceil(N / chunk_tokens) chunks)
 * @core_sram_bytes: SRAM of one core of the stage's 2-D mesh of cores: a
 *	layer's weights spread over ceil(W / core_sram_bytes) cores, whose
 *	side every reduction crosses (0: no mesh, the test profiles)
 * @mesh_hop_cycles: cycles of one core-to-core hop of that mesh
 * @stage_cores: cores of a stage as built (not changed by a smaller SRAM
 *	per stage, which keeps the profile's timing): the region its layers
 *	share (wfs_timing_core_bytes())
 * @stream_bytes_per_cycle: bandwidth from the external weight store of
 *	weight streaming (host memory; 0: none)
 * @stream_latency_cycles: latency of one layer's read from that store
 * @tensor_max: most chips one layer may be split over (tensor
 *	parallelism over the device link; 0 or 1: a layer stays on one device)
 * @tensor_chips: chips this profile's stages stand for, each holding a
 *	slice of every layer (wfs_profile_tensor_group(); 0 or 1: one)
 */
struct wfs_profile {
	char name[WFS_PROFILE_NAME_LEN];
	u32 id;
	u32 stages;
	u64 sram_bytes;
	u64 clock_hz;
	u32 macs_per_cycle;
	u32 sram_bytes_per_cycle;
	u32 fabric_bytes_per_cycle;
	u32 hop_cycles;
	u32 link_bytes_per_cycle;
	u32 link_hop_cycles;
	u32 fifo_depth;
	u32 chunk_tokens;
	u32 core_sram_bytes;
	u32 mesh_hop_cycles;
	u32 stage_cores;
	u32 stream_bytes_per_cycle;
	u32 stream_latency_cycles;
	u32 tensor_max;
	u32 tensor_chips;
};

/**
 * wfs_profile_get() - a built-in profile by id
 * @id: enum wfs_profile_id
 * @out: filled with a copy of the profile
 *
 * Return: 0, or -WFS_EINVAL for an unknown id.
 */
int wfs_profile_get(u32 id, struct wfs_profile *out);

/**
 * wfs_profile_find() - a built-in profile by name
 * @name: a profile's name (NULL or "" selects the default, "wafer")
 * @out: filled with a copy of the profile
 *
 * Return: 0, or -WFS_ENOENT for an unknown name.
 */
int wfs_profile_find(const char *name, struct wfs_profile *out);

/**
 * wfs_profile_apply_overrides() - apply the stage-count and SRAM overrides
 * @p: profile to modify
 * @stages: stage count, or 0 to keep the profile's
 * @sram_bytes: SRAM bytes per stage, or 0 to keep the profile's
 *
 * Return: 0, or -WFS_EINVAL if an override is out of range
 * (1..WFS_MAX_STAGES stages, WFS_MIN_SRAM_BYTES..WFS_MAX_SRAM_BYTES,
 * a multiple of 64 bytes).
 */
int wfs_profile_apply_overrides(struct wfs_profile *p, u32 stages,
				u64 sram_bytes);

/**
 * wfs_profile_tensor_group() - make @p a group of @chips devices that
 *	split every layer between them (tensor parallelism)
 * @p: a device's profile, modified: SRAM, MACs and SRAM bandwidth per
 *	stage times @chips, @tensor_chips = @chips (the timing model then
 *	adds the all-reduces over the device link, wfs_timing.h)
 * @chips: devices in the group, 1..max(1, @p->tensor_max)
 *
 * Return: 0, or -WFS_EINVAL for a group the profile does not allow.
 */
int wfs_profile_tensor_group(struct wfs_profile *p, u32 chips);

#endif /* WFS_PROFILE_H */
