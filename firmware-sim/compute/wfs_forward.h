/* SPDX-License-Identifier: MIT */
/*
 * wfs_forward.h - the integer-only Llama forward pass, one stage piece at a
 * time: embedding, one transformer layer, head (final norm + classifier +
 * argmax + top-k).  The device runs these on bound section views (see
 * wfs_model.h) with memory it owns: activation records, KV slots, scratch.
 *
 * Activation record (wfs_act_bytes(), opaque to the device, passed from
 * stage to stage and, for layer-range models, between devices):
 *   struct wfs_act_hdr, then s32 x[dim]: the residual stream as a 30-bit
 *   block floating point vector, value x[i] * 2^exp.  Keeping the residual
 *   at 30 bits makes its rounding error negligible; every matmul input is
 *   an s16 vector (15 bits) derived from it.
 *
 * KV slot (wfs_kv_bytes(), one per layer and sequence slot): ctx_len
 * position records of wfs_kv_stride() bytes.  Position t holds
 *   s16 kexp[n_kv_heads], s16 vexp[n_kv_heads],
 *   K[n_kv_heads][head_size], V[n_kv_heads][head_size]   (s8 or s16)
 * padded to 8 bytes: one power-of-two exponent per head and position
 * ("per-head scales"), mantissas normalised to 7 bits (int8 KV,
 * kv_bits = 8) or 15 bits (int16 KV).  K is stored after RoPE.
 *
 * Layer numerics (x: residual, real value x * 2^ex):
 *   h   = rmsnorm(x) * rms_att                      s16, wfs_rmsnorm()
 *   q,k,v = Wq h, Wk h, Wv h                        s64, wfs_matvec()
 *   q,k = rope(q), rope(k)   (30-bit, Q30 cos/sin)  wfs_rope_apply()
 *   q   = q / sqrt(head_size)                       wfs_requant()
 *   store k, v at pos (per head exponent)
 *   per head: s_t = q . k_t (s64) -> Q24; p = softmax(s) Q30;
 *             o = sum_t p_t v_t (aligned to the largest v exponent)
 *   x  += Wo o                                      wfs_residual_add()
 *   h   = rmsnorm(x) * rms_ffn
 *   x  += W2 (silu(W1 h) * W3 h)                    wfs_swiglu()
 *
 * wfs_layer_forward() is wfs_layer_attn() (the lines up to x += Wo o) then
 * wfs_layer_ffn() (the rest), the record's header written in between: the
 * two parts of attention-FFN disaggregation (WFW_PART_*).
 */
#ifndef WFS_FORWARD_H
#define WFS_FORWARD_H

#include "wfs_compat.h"
#include "wfs_math.h"
#include "wfs_model.h"

/* Largest k wfs_head() returns. */
#define WFS_TOPK_MAX		32
/* Logits in struct wfs_topk_entry are Q16 fixed point. */
#define WFS_LOGIT_FRAC_BITS	16
/* Exponents of activation records are clamped to +-this. */
#define WFS_ACT_EXP_LIMIT	(1 << 20)

/**
 * struct wfs_act_hdr - header of an activation record
 * @dim: number of s32 values that follow (the model width)
 * @exp: exponent of the values
 * @t_ns: modelled time (the device's timing, not the math: zero here)
 */
struct wfs_act_hdr {
	u32 dim;
	s32 exp;
	u64 t_ns;
};

/**
 * struct wfs_topk_entry - one top-k result
 * @token: token id
 * @logit: logit in Q16 (WFS_LOGIT_FRAC_BITS), saturated to s32
 */
struct wfs_topk_entry {
	u32 token;
	s32 logit;
};

u64 wfs_act_bytes(const struct wfs_model_info *info);
u32 wfs_kv_stride(const struct wfs_model_info *info);
u64 wfs_kv_bytes(const struct wfs_model_info *info, u32 ctx_len);
u64 wfs_layer_scratch_bytes(const struct wfs_model_info *info, u32 ctx_len);
u64 wfs_head_scratch_bytes(const struct wfs_model_info *info);

u64 wfs_layer_macs(const struct wfs_model_info *info);
u64 wfs_layer_attn_macs(const struct wfs_model_info *info, u32 pos);
u64 wfs_head_macs(const struct wfs_model_info *info);

int wfs_embed(const struct wfs_embed_view *v, u32 token, void *act);
s32 wfs_act_load(const struct wfs_layer_view *v, void *act,
		 struct wfs_act_hdr *hdr);
void wfs_act_store(void *act, struct wfs_act_hdr *hdr, s32 ex);
struct wfs_moe_sel;
const struct wfs_moe_sel *wfs_layer_moe_sel(const struct wfs_layer_view *v,
					    u32 pos, const void *scratch);
void wfs_layer_attn(const struct wfs_layer_view *v, void *kv_slot, u32 pos,
		    void *act, void *scratch);
void wfs_layer_ffn(const struct wfs_layer_view *v, u32 pos, void *act,
		   void *scratch);
void wfs_layer_forward(const struct wfs_layer_view *v, void *kv_slot,
		       u32 pos, void *act, void *scratch);
void wfs_head(const struct wfs_head_view *v, const void *act, u32 k,
	      struct wfs_topk_entry *out, u32 *argmax, void *scratch);

#endif /* WFS_FORWARD_H */
