/* SPDX-License-Identifier: MIT */
/*
 * wt_model.h - run a firmware-sim blob in-process the way a device would:
 * parse, copy every section into its own aligned buffer ("SRAM"), bind
 * views, own KV slots (one sequence) and scratch, step token by token.
 */
#ifndef WT_MODEL_H
#define WT_MODEL_H

#include "wfs_forward.h"

struct wt_model {
	struct wfs_model_info info;
	void *embed_sec, *head_sec, **layer_sec;
	struct wfs_embed_view ev;
	struct wfs_head_view hv;
	struct wfs_layer_view *lv;
	void **kv;
	void *act, *lscratch, *hscratch;
	uint32_t ctx;
};

/* kv_bits: 0 keeps the blob's choice, else 8 or 16.  Returns 0 or <0. */
int wt_model_open(struct wt_model *m, const void *blob, size_t len,
		  uint32_t ctx, unsigned int kv_bits);
void wt_model_close(struct wt_model *m);
/* Embed token (if the blob takes tokens) and run all layers at pos. */
int wt_model_layers(struct wt_model *m, uint32_t token, uint32_t pos);
/* Full step: layers then head; returns argmax, fills k top-k entries. */
uint32_t wt_model_step(struct wt_model *m, uint32_t token, uint32_t pos,
		       uint32_t k, struct wfs_topk_entry *topk);

#endif /* WT_MODEL_H */
