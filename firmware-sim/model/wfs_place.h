/* SPDX-License-Identifier: MIT */
/*
 * wfs_place.h - layer-to-stage placement: pure arithmetic, unit-tested on
 * its own.  Its input comes from the model-load allocation table
 * (wfs_load.c), so what placement budgets is what loading allocates.
 *
 * The model is a sequence of items [embedding, layer 0 .. layer L-1, head],
 * each with the SRAM bytes it needs on a stage (weights + the minimum KV
 * cache + per-layer bookkeeping).  Every used stage also needs a fixed
 * amount for its buffers (FIFO slots, work area, scratch).
 *
 *  1. Balanced (the default): one layer per stage when L <= S (stages_used
 *     = L); contiguous groups when L > S, the first L % S stages taking one
 *     layer more than the others.  The embedding joins stage 0, the head the
 *     last used stage.
 *  2. If some stage of the balanced plan does not fit, greedy first fit over
 *     the item sequence: each stage takes as many following items as fit.
 *     This uses the fewest stages any contiguous placement can; an embedding
 *     or head may then get a stage of its own.
 *  3. If greedy needs more than S stages (or one item alone exceeds a
 *     stage), -ENOSPC: struct wfs_map's @total_bytes, @stages_needed and
 *     @max_stage_bytes say how much was needed.
 */
#ifndef WFS_PLACE_H
#define WFS_PLACE_H

#include "wfs_compat.h"
#include "wfs_profile.h"

/* Most layers a device accepts (the placement tables are sized by it). */
#define WFS_DEV_MAX_LAYERS	256

/**
 * struct wfs_map_input - what placement needs to know
 * @n_layers: layers L (1..WFS_DEV_MAX_LAYERS)
 * @n_stages: stages S (1..WFS_MAX_STAGES)
 * @capacity: SRAM bytes per stage
 * @stage_fixed: bytes every used stage needs besides its items
 * @embed_bytes: bytes of the embedding item (0: the model has none)
 * @head_bytes: bytes of the head item (0: the model has none)
 * @layer_bytes: L entries: bytes of each layer item
 */
struct wfs_map_input {
	u32 n_layers;
	u32 n_stages;
	u64 capacity;
	u64 stage_fixed;
	u64 embed_bytes;
	u64 head_bytes;
	const u64 *layer_bytes;
};

/**
 * struct wfs_map - a placement
 * @stages_used: stages that hold items (stages 0 .. stages_used-1)
 * @greedy: 1 if the balanced plan did not fit and greedy was used
 * @first_layer: per stage, its first layer
 * @n_layers: per stage, layers it holds (may be 0 for an embedding- or
 *	head-only stage)
 * @need: per stage, SRAM bytes it needs
 * @total_bytes: SRAM bytes the model needs in total, over the stages of the
 *	plan tried last (on -ENOSPC: over as many stages as greedy would need)
 * @stages_needed: stages greedy would need (on -ENOSPC; 0 if a single
 *	item does not fit a stage)
 * @max_stage_bytes: the largest per-stage requirement of the balanced plan
 *	(the SRAM per stage the default placement would need)
 */
struct wfs_map {
	u32 stages_used;
	u32 greedy;
	u32 first_layer[WFS_MAX_STAGES];
	u32 n_layers[WFS_MAX_STAGES];
	u64 need[WFS_MAX_STAGES];
	u64 total_bytes;
	u32 stages_needed;
	u64 max_stage_bytes;
};

/**
 * wfs_place() - place a model's layers on the stages
 * @in: sizes and limits
 * @out: the placement (see the file comment for the policy)
 *
 * Return: 0, -WFS_EINVAL for out-of-range input, or -WFS_ENOSPC if the model
 * does not fit (@out->total_bytes, @out->stages_needed and
 * @out->max_stage_bytes say how much was needed).
 */
int wfs_place(const struct wfs_map_input *in, struct wfs_map *out);

#endif /* WFS_PLACE_H */
