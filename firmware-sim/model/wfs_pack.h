/* SPDX-License-Identifier: MIT */
/*
 * wfs_pack.h - host-side model packer (userspace only, floats allowed):
 * llama2.c checkpoint -> firmware-sim model blob (see wfs_model.h).
 *
 * Used by tests and benchmarks; libwafer has the user-facing converter.
 */
#ifndef WFS_PACK_H
#define WFS_PACK_H

#include <stddef.h>
#include <stdint.h>

/**
 * struct wfs_ckpt - an fp32 llama2.c checkpoint in memory
 *
 * Tensors are row-major W[out][in] as in llama2.c run.c; @wcls points at
 * @tok_emb when @shared_cls is set.  All arrays live in @mem.
 */
struct wfs_ckpt {
	int dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
	int shared_cls;
	float *tok_emb;		/* [vocab][dim] */
	float *rms_att;		/* [L][dim] */
	float *wq;		/* [L][dim][dim] */
	float *wk;		/* [L][kv_dim][dim] */
	float *wv;		/* [L][kv_dim][dim] */
	float *wo;		/* [L][dim][dim] */
	float *rms_ffn;		/* [L][dim] */
	float *w1;		/* [L][hidden][dim] */
	float *w2;		/* [L][dim][hidden] */
	float *w3;		/* [L][hidden][dim] */
	float *rms_final;	/* [dim] */
	float *wcls;		/* [vocab][dim] */
	float *mem;
	size_t mem_floats;
};

/**
 * struct wfs_pack_opts - packing choices
 * @wbits: layer matrices: 8 or 4
 * @group_size: weights per scale group (1..256, even for 4-bit)
 * @embed_bits: embedding: 0 (= @wbits), 8 or 4
 * @cls_bits: classifier: 0 (= @wbits), 8 or 4
 * @kv_int8: set WFS_MF_KV_INT8 (int8 KV cache by default)
 * @checksum: store an FNV-1a checksum
 * @first_layer: first layer of a layer-range blob (0: from the start)
 * @n_layers: layers in the blob (0: all from @first_layer)
 * @rope_theta: RoPE base (0: 10000)
 */
struct wfs_pack_opts {
	unsigned int wbits;
	unsigned int group_size;
	unsigned int embed_bits;
	unsigned int cls_bits;
	int kv_int8;
	int checksum;
	unsigned int first_layer;
	unsigned int n_layers;
	double rope_theta;
};

int wfs_ckpt_load(const char *path, struct wfs_ckpt *c);
int wfs_ckpt_alloc(struct wfs_ckpt *c);
int wfs_ckpt_clone(const struct wfs_ckpt *src, struct wfs_ckpt *dst);
void wfs_ckpt_free(struct wfs_ckpt *c);

int wfs_pack(const struct wfs_ckpt *c, const struct wfs_pack_opts *o,
	     void **blob, size_t *len);
int wfs_pack_dequant(const struct wfs_ckpt *c, const struct wfs_pack_opts *o,
		     struct wfs_ckpt *out);

/* Quantise one matrix exactly as wfs_pack() does (for tests). */
int wfs_pack_quant_matrix(const float *w, unsigned int rows,
			  unsigned int cols, unsigned int bits,
			  unsigned int group_size, int8_t *q, uint16_t *m,
			  int *scale_exp);
/* Quantise a vector to s16 mantissas with one exponent. */
int wfs_pack_quant_vec16(const float *w, unsigned int n, int16_t *q,
			 int *scale_exp);
/* RoPE frequency table entry i of a head: Q64 turns per position. */
uint64_t wfs_pack_rope_freq(double theta, unsigned int i,
			    unsigned int head_size);

#endif /* WFS_PACK_H */
