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

/*
 * @nseq sequences of @npos tokens, ids[s * npos + p]: BOS, then tokens in
 * [3, vocab - 1) from the seeded RNG.
 */
void wt_model_tokens(uint64_t seed, uint32_t nseq, uint32_t npos, uint32_t vocab,
		     uint32_t *ids);
/*
 * The reference of those sequences, each alone in a context of @ctx:
 * argmax[s * npos + p] and @k entries at topk[(s * npos + p) * k].
 * Returns 0 or <0.
 */
int wt_model_reference(const void *blob, size_t len, uint32_t ctx, const uint32_t *ids,
		       uint32_t nseq, uint32_t npos, uint32_t k, uint32_t *argmax,
		       struct wfs_topk_entry *topk);

#endif /* WT_MODEL_H */
