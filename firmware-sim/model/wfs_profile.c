// SPDX-License-Identifier: MIT
/*
 * wfs_profile.c - the built-in hardware profiles (see wfs_profile.h).
 *
 * The figures are order-of-magnitude plausible, not a datasheet: a wafer
 * region is given 16 Ki MACs and 64 KiB of SRAM bandwidth per cycle at
 * 1.1 GHz with a 16-cycle fabric hop; the ASIC a 1 Ki MAC array, 256 B of
 * SRAM bandwidth per cycle at 1 GHz and a 64-cycle link.  SRAM sizes are
 * kept small enough that several simulated devices fit in a test VM.
 *
 * Between devices (layer ranges of one model): a wafer's system I/O, 1.2
 * Tb/s (12 x 100 GbE on CS-3, ../shared/hardware/PUBLISHED.md) = 150 GB/s,
 * 136 B per 1.1 GHz cycle, with about 2 us per Ethernet hop; the ASIC a
 * 64 GB/s chip-to-chip link with 0.5 us latency.
 *
 * wse3 and wse2 are the public figures of Cerebras's wafers divided over
 * 44 and 40 stages of 1 GB (../shared/hardware/PUBLISHED.md; docs/TIMING.md
 * lists each parameter with its source or why it is assumed).  Their mesh
 * hop is the one parameter fitted: to Llama 3.1 8B at 1,800 tok/s on one
 * CS-3 (WSE3_MESH_HOP); everything else about them is arithmetic on the
 * published figures or a stated assumption.
 *
 * lpu is a Groq LPU v1 chip from its public figures (900 MHz, 230 MB of
 * SRAM, 80 TB/s, 188 TFLOPS FP16; ../shared/hardware/PUBLISHED.md): one
 * stage per chip, no mesh (a single deterministic core), no external
 * memory.  A model spans hundreds of chips and a layer several of them
 * (wfs_profile_tensor_group()); the chip-to-chip link's latency is the
 * one parameter fitted (LPU_LINK_HOP, to Llama 3.1 70B at 250 tok/s).
 */
#include "wfs_profile.h"

/* Fitted, see docs/TIMING.md; WSE-2 assumed to have the same fabric. */
#define WSE3_MESH_HOP	6
/* Side of a stage's square of cores: 900,000 / 44 and 850,000 / 40. */
#define WSE3_STAGE_SIDE	143
#define WSE2_STAGE_SIDE	146
/* Fitted, see docs/TIMING.md: cycles per chip-to-chip step. */
#define LPU_LINK_HOP	1440

static const struct wfs_profile wfs_profiles[WFS_PROFILE_COUNT] = {
	[WFS_PROFILE_WAFER] = {
		.name = "wafer",
		.id = WFS_PROFILE_WAFER,
		.stages = 16,
		.sram_bytes = 4ull << 20,
		.clock_hz = 1100000000ull,
		.macs_per_cycle = 16384,
		.sram_bytes_per_cycle = 65536,
		.fabric_bytes_per_cycle = 4096,
		.hop_cycles = 16,
		.link_bytes_per_cycle = 136,
		.link_hop_cycles = 2200,
		.fifo_depth = 4,
		.chunk_tokens = 16,
		.stream_bytes_per_cycle = 136,		/* host memory: the link's */
		.stream_latency_cycles = 2200,
	},
	[WFS_PROFILE_ASIC] = {
		.name = "asic",
		.id = WFS_PROFILE_ASIC,
		.stages = 4,
		.sram_bytes = 1ull << 20,
		.clock_hz = 1000000000ull,
		.macs_per_cycle = 1024,
		.sram_bytes_per_cycle = 256,
		.fabric_bytes_per_cycle = 64,
		.hop_cycles = 64,
		.link_bytes_per_cycle = 64,
		.link_hop_cycles = 500,
		.fifo_depth = 2,
		.chunk_tokens = 16,
		.stream_bytes_per_cycle = 64,		/* host memory: the link's */
		.stream_latency_cycles = 500,
	},
	[WFS_PROFILE_WSE3] = {
		.name = "wse3",
		.id = WFS_PROFILE_WSE3,
		.stages = 44,				/* 44 GB of SRAM */
		.sram_bytes = 1000000000ull,
		.clock_hz = 1100000000ull,		/* assumed */
		.macs_per_cycle = 322830,		/* 125 PFLOPS sparse / 4 */
		.sram_bytes_per_cycle = 433884,		/* 21 PB/s */
		.fabric_bytes_per_cycle = 552686,	/* 214 Pb/s */
		.hop_cycles = WSE3_STAGE_SIDE * WSE3_MESH_HOP,
		.link_bytes_per_cycle = 136,		/* 12 x 100 GbE */
		.link_hop_cycles = 2200,
		.fifo_depth = 4,
		.chunk_tokens = 16,
		.core_sram_bytes = 48889,		/* 44 GB / 900,000 */
		.mesh_hop_cycles = WSE3_MESH_HOP,
		.stage_cores = 20454,			/* 900,000 / 44 */
		.stream_bytes_per_cycle = 136,		/* MemoryX over the system I/O */
		.stream_latency_cycles = 2200,		/* assumed: the link's */
	},
	[WFS_PROFILE_WSE2] = {
		.name = "wse2",
		.id = WFS_PROFILE_WSE2,
		.stages = 40,				/* 40 GB of SRAM */
		.sram_bytes = 1000000000ull,
		.clock_hz = 1100000000ull,		/* assumed */
		.macs_per_cycle = 167650,		/* assumed: WSE-3's / 2 */
		.sram_bytes_per_cycle = 454545,		/* 20 PB/s */
		.fabric_bytes_per_cycle = 625000,	/* 220 Pb/s */
		.hop_cycles = WSE2_STAGE_SIDE * WSE3_MESH_HOP,
		.link_bytes_per_cycle = 136,		/* assumed: CS-3's */
		.link_hop_cycles = 2200,
		.fifo_depth = 4,
		.chunk_tokens = 16,
		.core_sram_bytes = 48000,		/* 48 kB per core */
		.mesh_hop_cycles = WSE3_MESH_HOP,
		.stage_cores = 21250,			/* 850,000 / 40 */
		.stream_bytes_per_cycle = 136,		/* assumed: CS-3's */
		.stream_latency_cycles = 2200,		/* assumed: CS-3's */
	},
	[WFS_PROFILE_LPU] = {
		.name = "lpu",
		.id = WFS_PROFILE_LPU,
		.stages = 1,				/* assumed: a chip */
		.sram_bytes = 230000000ull,		/* 230 MB */
		.clock_hz = 900000000ull,		/* 900 MHz */
		.macs_per_cycle = 104444,		/* 188 TFLOPS FP16 / 2 */
		.sram_bytes_per_cycle = 88889,		/* 80 TB/s */
		.fabric_bytes_per_cycle = 88889,	/* assumed: the SRAM's */
		.hop_cycles = 90,			/* assumed: 100 ns */
		.link_bytes_per_cycle = 111,		/* assumed: 100 GB/s */
		.link_hop_cycles = LPU_LINK_HOP,
		.fifo_depth = 2,
		.chunk_tokens = 16,
		.tensor_max = 256,			/* assumed */
	},
};

int wfs_profile_get(u32 id, struct wfs_profile *out)
{
	if (id >= WFS_PROFILE_COUNT)
		return -WFS_EINVAL;
	*out = wfs_profiles[id];
	return 0;
}

static int name_eq(const char *a, const char *b)
{
	unsigned int i;

	for (i = 0; i < WFS_PROFILE_NAME_LEN; i++) {
		if (a[i] != b[i])
			return 0;
		if (!a[i])
			return 1;
	}
	return 0;
}

int wfs_profile_find(const char *name, struct wfs_profile *out)
{
	u32 i;

	if (!name || !name[0])
		return wfs_profile_get(WFS_PROFILE_WAFER, out);
	for (i = 0; i < WFS_PROFILE_COUNT; i++) {
		if (name_eq(name, wfs_profiles[i].name))
			return wfs_profile_get(i, out);
	}
	return -WFS_ENOENT;
}

int wfs_profile_apply_overrides(struct wfs_profile *p, u32 stages,
				u64 sram_bytes)
{
	if (stages && stages > WFS_MAX_STAGES)
		return -WFS_EINVAL;
	if (sram_bytes && (sram_bytes < WFS_MIN_SRAM_BYTES ||
			   sram_bytes > WFS_MAX_SRAM_BYTES ||
			   !WFS_IS_ALIGNED(sram_bytes, 64ull)))
		return -WFS_EINVAL;
	if (stages)
		p->stages = stages;
	if (sram_bytes)
		p->sram_bytes = sram_bytes;
	return 0;
}

int wfs_profile_tensor_group(struct wfs_profile *p, u32 chips)
{
	if (!chips || chips > WFS_MAX(p->tensor_max, 1u))
		return -WFS_EINVAL;
	p->tensor_chips = chips;
	p->sram_bytes *= chips;
	p->macs_per_cycle *= chips;
	p->sram_bytes_per_cycle *= chips;
	return 0;
}
