/* SPDX-License-Identifier: MIT */
/*
 * ref_llama.h - fp32 reference forward pass (llama2.c run.c numerics) over
 * a struct wfs_ckpt: the yardstick for the integer firmware-sim path.
 */
#ifndef REF_LLAMA_H
#define REF_LLAMA_H

#include "wfs_pack.h"

struct ref_moe;

struct ref_state {
	const struct wfs_ckpt *c;
	const struct ref_moe *moe;	/* NULL: dense FFN (set after ref_init) */
	int ctx;
	float *x, *xb, *xb2, *hb, *hb2, *q, *att, *logits;
	float *key_cache, *value_cache;	/* [L][ctx][kv_dim] */
};

int ref_init(struct ref_state *s, const struct wfs_ckpt *c, int ctx);
void ref_free(struct ref_state *s);
/* Run token at pos (0..ctx-1, in order); returns vocab logits. */
float *ref_forward(struct ref_state *s, int token, int pos);
int ref_argmax(const float *v, int n);
/*
 * Greedy text: toks[0] = BOS (1), toks[i + 1] = argmax after toks[0..i],
 * for i < n - 1.  Returns 0 or -errno.
 */
int ref_greedy(const struct wfs_ckpt *c, int n, int *toks);

#endif /* REF_LLAMA_H */
