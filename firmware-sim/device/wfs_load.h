/* SPDX-License-Identifier: MIT */
/*
 * wfs_load.h - model load and unload: the allocation table, placement of
 * the table's items on the stages, the copy of each stage's share into its
 * SRAM, and the views bound on the copies.
 *
 * The allocation table (struct wfs_load_table) lists every SRAM block a
 * model needs on a stage: what loading allocates, plus what contexts will
 * need at least (KV for one slot of WFS_MIN_KV_POSITIONS, a slot table).
 * Placement's input is summed from the table, and loading allocates from
 * it, so the two cannot disagree about a size.
 */
#ifndef WFS_LOAD_H
#define WFS_LOAD_H

#include "wfs_forward.h"
#include "wfs_model.h"
#include "wfs_place.h"
#include "wfs_sram.h"
#include "wfs_timing.h"
#include "wfw_abi.h"

struct wfs_device;
struct wfs_stage;
struct wfw_cpl;

/*
 * Minimum KV a model must leave room for: one slot of this many positions
 * (or the model's maximum context, if shorter).
 */
#define WFS_MIN_KV_POSITIONS	256
/* Slots whose slot table (stage 0) every stage keeps room for. */
#define WFS_MIN_CTX_SLOTS	64
/*
 * Rounding slack per stage: the layer views are budgeted per layer
 * unrounded but live in one block, which rounds up once; the second unit
 * is margin.
 */
#define WFS_STAGE_SLACK		(2 * WFS_SRAM_ALIGN)

/* Models a device holds at once (the ABI's limit). */
#define WFS_MAX_MODELS		WFW_MAX_MODELS
/* Deepest stage FIFO a model keeps entry buffers for. */
#define WFS_FIFO_MAX_DEPTH	8

/**
 * enum wfs_alloc_id - the rows of the allocation table
 * @WFS_A_FIFO: FIFO entry buffers, fifo_depth per stage
 * @WFS_A_WORK: the stage's activation work area
 * @WFS_A_SCRATCH: layer scratch (allocated by stages with layers)
 * @WFS_A_SLOTS: room for a context's slot table (allocated by contexts,
 *	on stage 0 only)
 * @WFS_A_SLACK: rounding slack (not allocated)
 * @WFS_A_WEIGHTS: a layer's weights (bytes per layer in the table)
 * @WFS_A_VIEWS: a layer's bound view, one block per stage
 * @WFS_A_KV: KV of one slot of the minimum positions (allocated by
 *	contexts)
 * @WFS_A_EMBED_VIEW: the bound embedding view
 * @WFS_A_EMBED: the embedding's weights
 * @WFS_A_HEAD_VIEW: the bound head view
 * @WFS_A_HEAD: the head's weights
 * @WFS_A_HEAD_SCRATCH: head scratch (allocated when the stage has no layer
 *	scratch or the head needs more)
 * @WFS_A_TOPK: top-k work entries
 * @WFS_A_OUT: one output record of WFW_MAX_TOPK pairs
 * @WFS_A_WINDOW: weight streaming: the two window slots a stage reads its
 *	layers into, each the range's largest layer section (0 blocks
 *	without streaming, when @WFS_A_WEIGHTS holds the weights instead)
 * @WFS_A_COUNT: rows
 */
enum wfs_alloc_id {
	WFS_A_FIFO,
	WFS_A_WORK,
	WFS_A_SCRATCH,
	WFS_A_SLOTS,
	WFS_A_SLACK,
	WFS_A_WEIGHTS,
	WFS_A_VIEWS,
	WFS_A_KV,
	WFS_A_EMBED_VIEW,
	WFS_A_EMBED,
	WFS_A_HEAD_VIEW,
	WFS_A_HEAD,
	WFS_A_HEAD_SCRATCH,
	WFS_A_TOPK,
	WFS_A_OUT,
	WFS_A_WINDOW,
	WFS_A_COUNT
};

/*
 * Slots of a stage's weight streaming window; each holds the view bound on
 * it (first WFS_STREAM_VIEW_BYTES), then a layer's section.
 */
#define WFS_STREAM_SLOTS	2
#define WFS_STREAM_VIEW_BYTES	WFS_ALIGN_UP(sizeof(struct wfs_layer_view), 64u)

/**
 * enum wfs_item - the placement item a row is budgeted to
 * @WFS_ITEM_STAGE: every used stage
 * @WFS_ITEM_LAYER: each layer
 * @WFS_ITEM_EMBED: the embedding
 * @WFS_ITEM_HEAD: the head
 */
enum wfs_item {
	WFS_ITEM_STAGE,
	WFS_ITEM_LAYER,
	WFS_ITEM_EMBED,
	WFS_ITEM_HEAD,
};

/**
 * struct wfs_alloc - one row of the allocation table
 * @name: SRAM block name (a "%u" takes the index)
 * @item: enum wfs_item
 * @count: blocks per item
 * @rounded: 1 if each block is budgeted rounded up to an SRAM block; 0 if
 *	summed raw (rows that share one block per stage)
 * @bytes: bytes per block (@WFS_A_WEIGHTS: see &wfs_load_table.layer)
 */
struct wfs_alloc {
	const char *name;
	u32 item;
	u32 count;
	u32 rounded;
	u64 bytes;
};

/**
 * struct wfs_load_table - the model's SRAM needs, the one source of truth
 *	for every size placement budgets and loading allocates
 * @a: the rows
 * @layer: per layer of the range, its weights' section in the blob
 * @layer_weight: per layer of the range, what its weights take in SRAM: its
 *	section, or its part's copy (wfs_part.h)
 * @layer_need: per layer of the range, the placement item's bytes (summed
 *	from @a)
 *
 * The per-layer arrays hold the loaded range only, indexed from its first
 * layer (wfs_load_row()): a blob may have up to WFS_MAX_LAYERS layers, a
 * range at most WFS_DEV_MAX_LAYERS (LOAD_MODEL refuses more with -E2BIG).
 */
struct wfs_load_table {
	struct wfs_alloc a[WFS_A_COUNT];
	struct wfs_section_range layer[WFS_DEV_MAX_LAYERS];
	u64 layer_weight[WFS_DEV_MAX_LAYERS];
	u64 layer_need[WFS_DEV_MAX_LAYERS];
};

/**
 * struct wfs_stage_model - a stage's share of one loaded model (written by
 *	wfs_load.c only, while no job of the model is in flight: on the load
 *	worker while the model is loading, else on the CP)
 * @first_layer: first layer placed here
 * @n_layers: layers placed here
 * @embed: holds the embedding
 * @head: holds the head
 * @last: the last used stage (posts completions)
 * @lviews: @n_layers bound layer views (in SRAM)
 * @eview: bound embedding view (in SRAM) or NULL
 * @hview: bound head view (in SRAM) or NULL
 * @work: chunk_tokens activation records (in SRAM)
 * @scratch: forward-pass scratch (in SRAM)
 * @topk: WFS_TOPK_MAX top-k entries (head stage, in SRAM)
 * @rec: one output record of WFW_MAX_TOPK pairs (head stage, in SRAM)
 * @expert_cnt: the stage's first MoE layer's entries in
 *	&wfs_model_state.expert_cnt (NULL: no MoE layer here)
 * @weight_bytes: bytes of the layer sections placed here
 * @window: weight streaming: the window's slots (in SRAM), else NULL
 * @fifo: the model's buffer for each entry of the stage's input FIFO (in
 *	SRAM): an entry holding a chunk of this model uses its buffer, so
 *	the models share the FIFO and each sizes its own entries
 * @pass_chunks: weight streaming: chunks in the stage's current pass over
 *	its layers, 0 before the first (the stage worker's)
 */
struct wfs_stage_model {
	u32 first_layer;
	u32 n_layers;
	u32 embed;
	u32 head;
	u32 last;
	struct wfs_layer_view *lviews;
	struct wfs_embed_view *eview;
	struct wfs_head_view *hview;
	u8 *work;
	u8 *scratch;
	struct wfs_topk_entry *topk;
	u8 *rec;
	u64 *expert_cnt;
	u64 weight_bytes;
	u8 *window[WFS_STREAM_SLOTS];
	u8 *fifo[WFS_FIFO_MAX_DEPTH];
	u32 pass_chunks;
};

/**
 * struct wfs_model_state - a loaded model (changed only by the CP while no
 *	job of it is in flight, or by a reset with everything parked; while
 *	it is loading, by the load worker until the CP commits it)
 * @loaded: 1 if a model is loaded here (sync.lock)
 * @loading: 1 while a LOAD_MODEL holds the slot (wfs_loadq.c): no lookup
 *	finds it, no other load takes it (CP only)
 * @idx: its index in &wfs_models.m (its SRAM blocks' owner is @idx + 1)
 * @id: its id, WFW_MODEL_ID(generation, @idx)
 * @info: what the blob validator found
 * @range_first: first layer loaded, as an index into the blob's layers
 * @n_layers: layers loaded (the device's layer range)
 * @embed: the range holds the embedding (jobs take tokens, else
 *	activation records: WFW_JOB_IN_ACT)
 * @head: the range holds the head (jobs give results, else activation
 *	records: WFW_JOB_OUT_ACT)
 * @map: the placement
 * @act_bytes: bytes of an activation record
 * @flit_bytes: bytes of one FIFO entry buffer
 * @max_ctx: longest context (the model's seq_len)
 * @kv_pos_bytes: KV bytes of one position of one layer
 * @min_kv_pos: positions of the minimum KV placement keeps room for
 * @sram_used: SRAM the model took (all stages)
 * @dims: shape for the timing model
 * @head_weight_bytes: head section bytes
 * @table: the allocation table
 * @moe_layers: MoE layers loaded
 * @expert_cnt: per MoE layer loaded, in order: its tokens, then each
 *	routed expert's (host memory, not SRAM: the device's counters); a
 *	layer's entries are written by its stage's worker under that stage's
 *	FIFO lock (see wfs_stage.c)
 * @expert_cnt_n: u64 entries of @expert_cnt
 * @stream: weights stream from host memory (WFW_LOAD_STREAM)
 * @stream_addr: the blob's device address, streaming
 * @part: WFW_PART_*: whole layers, or each layer's attention or FFN part
 * @xfirst: WFW_PART_XSHARD: its first routed expert (wfs_moe_ep.h)
 * @xcount: WFW_PART_XSHARD: its routed experts
 * @xgroup: routed experts per expert group placed across the stages
 *	(LOAD_MODEL expert_group, wfs_xplace.h); 0: experts with their layer
 *
 * Every model is placed from stage 0 (wfs_stage.c): a chunk of any model
 * enters stage 0 and leaves at its model's last stage, so each stage FIFO
 * keeps one producer.
 */
struct wfs_model_state {
	u32 loaded;
	u32 loading;
	u32 idx;
	u32 id;
	struct wfs_model_info info;
	u32 range_first;
	u32 n_layers;
	u32 embed;
	u32 head;
	struct wfs_map map;
	u32 act_bytes;
	u32 flit_bytes;
	u32 max_ctx;
	u32 kv_pos_bytes;
	u32 min_kv_pos;
	u64 sram_used;
	struct wfs_timing_dims dims;
	u64 head_weight_bytes;
	struct wfs_load_table table;
	u32 moe_layers;
	u64 *expert_cnt;
	u32 expert_cnt_n;
	u32 stream;
	u64 stream_addr;
	u32 part;
	u32 xgroup;
	u32 xfirst;
	u32 xcount;
};

/**
 * struct wfs_models - the loaded models
 * @m: the models by index
 * @n: models loaded
 * @gen: the generation the next load takes (ids are never 0)
 */
struct wfs_models {
	struct wfs_model_state m[WFS_MAX_MODELS];
	u32 n;
	u32 gen;
};

/**
 * wfs_load_row() - a layer's index in the per-layer arrays of the table
 * @m: the model
 * @layer: the layer, numbered as in the blob (&wfs_stage_model.first_layer
 *	and its layers): in [@m->range_first, +@m->n_layers)
 *
 * Return: @layer - @m->range_first, below WFS_DEV_MAX_LAYERS.
 */
static inline u32 wfs_load_row(const struct wfs_model_state *m, u32 layer)
{
	return layer - m->range_first;
}

/**
 * wfs_model_lookup() - the model a command names
 * @dev: device
 * @id: struct wfw_cmd.model; 0: the only model
 * @any: with @id 0 and several models, take the lowest-index one (read-only
 *	commands) instead of failing
 * @err: set to -WFS_ENOENT (no such model) or -WFS_EINVAL (0 with several)
 *
 * Return: the model, or NULL with @err set.
 */
struct wfs_model_state *wfs_model_lookup(struct wfs_device *dev, u32 id,
					 int any, int *err);

/**
 * wfs_load_reserve() - reserve a model slot for a LOAD_MODEL (marked loading)
 * @dev: device (CP thread)
 *
 * Return: the slot, or NULL (logged) when every slot is loaded or loading.
 */
struct wfs_model_state *wfs_load_reserve(struct wfs_device *dev);

/**
 * wfs_load_cancel() - give back a reserved slot whose load did not
 *	complete, and the SRAM blocks its placement took
 * @dev: device (CP thread, or a reset with every thread parked; the load
 *	worker done with the slot)
 * @m: the slot
 */
void wfs_load_cancel(struct wfs_device *dev, struct wfs_model_state *m);

/**
 * wfs_load_check() - LOAD_MODEL's check of a blob: the validator and the
 *	checksum over every byte; reads the blob only, touches no device state
 * @dev: device (for its log; any thread)
 * @blob: the mapped blob
 * @len: its bytes
 * @info: out: the blob's description
 *
 * Return: 0 or the validator's -errno (logged).
 */
int wfs_load_check(struct wfs_device *dev, const u8 *blob, u64 len,
		   struct wfs_model_info *info);

/**
 * wfs_load_place() - LOAD_MODEL's placement of a checked blob, or a layer
 *	range of it, into the room the other models leave, and its copy
 * @dev: device (the load worker, while the CP serves the rings: it reads
 *	the other models and the arenas under their locks, and writes only
 *	@m and the blocks the arenas give @m)
 * @m: the slot wfs_load_reserve() gave, still loading; on failure it keeps
 *	what it took until wfs_load_cancel()
 * @p: the command's payload (blob address and bytes, layer range)
 * @blob: the mapped blob
 * @info: what wfs_load_check() found
 * @c: completion (on -ENOSPC what was needed)
 * @copied_one: called once the first stage is copied (the load worker's
 *	fault-injection hold: a hook, so that this layer calls nothing
 *	above it), or NULL
 *
 * Return: 0, -WFS_ECANCELED (a reset or destroy began), or -errno (see
 * WFW_OP_LOAD_MODEL in wfw_abi.h).
 */
int wfs_load_place(struct wfs_device *dev, struct wfs_model_state *m,
		   const struct wfw_cmd_load_model *p, const u8 *blob,
		   const struct wfs_model_info *info, struct wfw_cpl *c,
		   void (*copied_one)(struct wfs_device *dev));

/**
 * wfs_load_commit() - make a placed model loaded: its stage workers, its
 *	id, its presence
 * @dev: device (CP thread)
 * @m: the slot wfs_load_place() filled
 * @len: the blob's bytes
 * @c: completion: the results
 *
 * Return: 0, or -errno with the slot given back (wfs_load_cancel()).
 */
int wfs_load_commit(struct wfs_device *dev, struct wfs_model_state *m,
		    u64 len, struct wfw_cpl *c);

/**
 * wfs_load_release() - forget every model and free all stage SRAM
 * @dev: device (no contexts, no jobs; a reset with all parked)
 */
void wfs_load_release(struct wfs_device *dev);

/**
 * wfs_load_unload() - forget one model and free its stages' SRAM blocks
 * @dev: device (the CP; the model has no contexts, so no jobs)
 * @m: the model
 */
void wfs_load_unload(struct wfs_device *dev, struct wfs_model_state *m);

/* Slots of @ctx_len positions a new context of @m could still get. */
u64 wfs_load_max_slots(struct wfs_device *dev, const struct wfs_model_state *m,
		       u32 ctx_len);

#endif /* WFS_LOAD_H */
