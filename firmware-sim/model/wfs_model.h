/* SPDX-License-Identifier: MIT */
/*
 * wfs_model.h - the firmware-sim model blob: format, validator, views.
 *
 * A blob is one little-endian byte range:
 *
 *   [0, header_size)            struct wfs_blob_header
 *   [section_table_offset, +)   n_sections x struct wfs_section_entry
 *   sections                    each 64-byte aligned, in table order,
 *                               ascending and non-overlapping
 *
 * Sections, in this order:
 *   - WFS_SEC_EMBED   present iff input_kind == WFS_IO_TOKENS
 *   - WFS_SEC_LAYER   one per layer, index 0..n_layers-1
 *   - WFS_SEC_HEAD    present iff output_kind == WFS_IO_TOKENS
 *
 * Each section is self-contained: all offsets inside it are relative to the
 * section start, so the device can copy a section anywhere (64-byte aligned,
 * at least 8) and bind a view onto the copy.  A section starts with a
 * struct wfs_section_header followed by n_tensors struct wfs_tensor_desc,
 * then tensor data.  Tensors, in this fixed order:
 *
 *   EMBED: TOK_EMB   matrix [vocab][dim]
 *   LAYER: RMS_ATT   s16 [dim]
 *          WQ        matrix [dim][dim]
 *          WK        matrix [kv_dim][dim]
 *          WV        matrix [kv_dim][dim]
 *          WO        matrix [dim][dim]
 *          RMS_FFN   s16 [dim]
 *          W1        matrix [hidden][dim]
 *          W2        matrix [dim][hidden]
 *          W3        matrix [hidden][dim]
 *          ROPE      u64 [head_size / 2]: frequency of pair i in Q64 turns
 *                    per position, theta^(-2i/head_size) / (2 pi) * 2^64
 *   LAYER of a mixture-of-experts blob (ffn_kind WFS_FFN_MOE):
 *          RMS_ATT, WQ, WK, WV, WO, RMS_FFN as above, then
 *          ROUTER    matrix [n_experts][dim]: routing logits
 *          n_shared_experts + n_experts triples, shared experts first:
 *            W1 [h_x][dim], W2 [dim][h_x], W3 [h_x][dim]
 *          (h_x >= 1 is expert x's width, the same in its three tensors;
 *          the widths sum to hidden_dim; every expert of a layer has the
 *          same scale_exp per role, so partial sums add exactly), then
 *          ROPE
 *   HEAD:  RMS_FINAL s16 [dim]
 *          CLS       matrix [vocab][dim] (a copy of TOK_EMB when the
 *                    checkpoint ties them: every stage is self-contained)
 *
 * Matrix tensors: qtype WFS_QT_INT8 or WFS_QT_INT4 (layout: struct
 * wfs_qmat), data at data_offset, u16 scales [rows][ceil(cols/group_size)]
 * at scale_offset; W = q * scale * 2^scale_exp.  s16 tensors: qtype
 * WFS_QT_S16, value = q * 2^scale_exp.  The rope tensor: qtype WFS_QT_U64.
 * Every data and scale region is 64-byte aligned, and regions follow each
 * other in descriptor order (data before scales) without overlap.
 */
#ifndef WFS_MODEL_H
#define WFS_MODEL_H

#include "wfs_compat.h"
#include "wfs_qfmt.h"

#define WFS_BLOB_MAGIC		0x4d534657u	/* "WFSM" */
#define WFS_SECTION_MAGIC	0x53534657u	/* "WFSS" */
#define WFS_BLOB_VERSION_MAJOR	1
#define WFS_BLOB_VERSION_MINOR	0
#define WFS_SECTION_ALIGN	64

/* struct wfs_blob_header.flags */
#define WFS_MF_CHECKSUM		BIT(0) /* checksum field is valid */
#define WFS_MF_KV_INT8		BIT(1) /* pack KV as int8 (default int16) */
#define WFS_MF_TIED_CLS		BIT(2) /* head CLS is a copy of TOK_EMB */
#define WFS_MF_MOE		BIT(4) /* MoE FFN: set iff ffn_kind is MOE */
#define WFS_MF_KNOWN		(WFS_MF_CHECKSUM | WFS_MF_KV_INT8 | \
				 WFS_MF_TIED_CLS | WFS_MF_MOE)
/*
 * Reserved for later minors, rejected by this version: bit 3 weight
 * streaming (sections not resident, fetched per use).  Streaming is the
 * load's choice, not the blob's: LOAD_MODEL's WFW_LOAD_STREAM (wfw_abi.h)
 * streams the layer sections of any blob.
 */

/* input_kind / output_kind */
#define WFS_IO_TOKENS		0	/* token ids in, argmax/top-k out */
#define WFS_IO_ACT		1	/* activation records (layer range) */

/* ffn_kind */
#define WFS_FFN_SWIGLU		0	/* dense w2(silu(w1 x) * w3 x) */
#define WFS_FFN_MOE		1	/* router + experts of SwiGLU FFNs */

/*
 * gate_kind: how the selected experts' outputs are weighted.  SOFTMAX:
 * softmax over the top-k logits; SIGMOID: sigmoids normalised over the
 * top-k (DeepSeek-V3, Kimi K2); UNIT: weight 1 each, the router only
 * selects (upcycled models: with top-k = E exactly the dense model).
 */
#define WFS_GATE_SOFTMAX	0
#define WFS_GATE_SIGMOID	1
#define WFS_GATE_UNIT		2
#define WFS_GATE_MAX		WFS_GATE_UNIT

/* section kinds */
#define WFS_SEC_EMBED		1
#define WFS_SEC_LAYER		2
#define WFS_SEC_HEAD		3

/* tensor roles */
#define WFS_T_TOK_EMB		1
#define WFS_T_RMS_ATT		2
#define WFS_T_WQ		3
#define WFS_T_WK		4
#define WFS_T_WV		5
#define WFS_T_WO		6
#define WFS_T_RMS_FFN		7
#define WFS_T_W1		8
#define WFS_T_W2		9
#define WFS_T_W3		10
#define WFS_T_ROPE		11
#define WFS_T_RMS_FINAL		12
#define WFS_T_CLS		13
#define WFS_T_ROUTER		14

#define WFS_EMBED_TENSORS	1
#define WFS_LAYER_TENSORS	10
#define WFS_HEAD_TENSORS	2

/* Validator limits (keep every size computation far from 64-bit overflow) */
#define WFS_MAX_DIM		65536
#define WFS_MAX_HIDDEN		262144
#define WFS_MAX_LAYERS		1024
#define WFS_MAX_HEAD_SIZE	1024
#define WFS_MAX_VOCAB		(1u << 24)
#define WFS_MAX_SEQ		(1u << 20)
#define WFS_MAX_SCALE_EXP	256	/* |scale_exp| bound */
#define WFS_MAX_EXPERTS		512	/* routed + shared per layer */
#define WFS_MAX_EXPERTS_ACTIVE	64	/* top-k bound */
/* Tensors of an MoE layer section before the expert triples. */
#define WFS_MOE_FIXED_TENSORS	7

/**
 * struct wfs_blob_header - blob header, 256 bytes, at offset 0
 * @magic: WFS_BLOB_MAGIC.
 * @version_major: WFS_BLOB_VERSION_MAJOR; a different major is rejected.
 * @version_minor: any minor of the same major is accepted: new features
 *	are signalled by flags and reserved fields, which are checked.
 * @header_size: sizeof(struct wfs_blob_header) (256).
 * @flags: WFS_MF_*; unknown bits are rejected.
 * @total_size: blob length in bytes; must equal the length handed in.
 * @checksum: FNV-1a 32 of bytes [header_size, total_size) when
 *	WFS_MF_CHECKSUM is set, else 0.
 * @n_sections: entries in the section table (see file comment).
 * @section_table_offset: offset of the section table, 64-byte aligned,
 *	>= header_size.
 * @dim: model (residual) width.
 * @hidden_dim: FFN width (any value; scale groups may have a short tail).
 * @n_layers: layers in this blob (>= 1).
 * @n_heads: query heads; dim = n_heads * head_size.
 * @n_kv_heads: key/value heads; divides n_heads (grouped-query attention).
 * @head_size: dim / n_heads, even.
 * @vocab_size: tokens; classifier rows.
 * @seq_len: longest context the model was trained for (informational:
 *	the device picks the context length, RoPE works at any position).
 * @rope_theta: RoPE base (e.g. 10000), informational: each layer section
 *	carries its precomputed frequency table.
 * @norm_eps_q40: RMSNorm epsilon * 2^40 (1e-5 -> 10995116).
 * @first_layer: index of this blob's first layer in the full model
 *	(non-zero when a device runs a contiguous layer range).
 * @total_layers: layers in the full model; first_layer + n_layers <= it.
 * @input_kind: WFS_IO_TOKENS (blob has an embedding) or WFS_IO_ACT (jobs
 *	carry activation records from the previous device); WFS_IO_ACT
 *	requires first_layer > 0.
 * @output_kind: WFS_IO_TOKENS (blob has a head) or WFS_IO_ACT (jobs
 *	return activation records); WFS_IO_ACT requires first_layer +
 *	n_layers < total_layers.
 * @ffn_kind: WFS_FFN_SWIGLU, or WFS_FFN_MOE (then flag WFS_MF_MOE too).
 * @n_experts: routed experts per layer: 1..WFS_MAX_EXPERTS with
 *	WFS_FFN_MOE (with the shared ones at most WFS_MAX_EXPERTS), else 0.
 * @n_experts_active: routed experts per token (top-k): 1..n_experts and
 *	at most WFS_MAX_EXPERTS_ACTIVE with WFS_FFN_MOE, else 0.
 * @n_shared_experts: experts every token runs (weight 1) besides the
 *	routed ones; 0 for a dense FFN.
 * @gate_kind: WFS_GATE_*, 0 for a dense FFN.
 * @reserved: must be zero.
 */
struct wfs_blob_header {
	u32 magic;
	u16 version_major;
	u16 version_minor;
	u32 header_size;
	u32 flags;
	u64 total_size;
	u32 checksum;
	u32 n_sections;
	u64 section_table_offset;
	u32 dim;
	u32 hidden_dim;
	u32 n_layers;
	u32 n_heads;
	u32 n_kv_heads;
	u32 head_size;
	u32 vocab_size;
	u32 seq_len;
	u32 rope_theta;
	u32 norm_eps_q40;
	u32 first_layer;
	u32 total_layers;
	u32 input_kind;
	u32 output_kind;
	u32 ffn_kind;
	u32 n_experts;
	u32 n_experts_active;
	u32 n_shared_experts;
	u32 gate_kind;
	u32 reserved[35];
};

/**
 * struct wfs_section_entry - one section table entry, 32 bytes
 * @kind: WFS_SEC_*.
 * @index: layer index within the blob for WFS_SEC_LAYER, else 0.
 * @offset: byte offset in the blob, multiple of WFS_SECTION_ALIGN.
 * @size: bytes; the section ends inside the blob and before the next one.
 * @reserved: must be zero.
 */
struct wfs_section_entry {
	u32 kind;
	u32 index;
	u64 offset;
	u64 size;
	u32 reserved[2];
};

/**
 * struct wfs_section_header - start of every section, 32 bytes
 * @magic: WFS_SECTION_MAGIC.
 * @kind: WFS_SEC_*, equal to the table entry.
 * @index: equal to the table entry.
 * @n_tensors: WFS_EMBED_TENSORS, WFS_LAYER_TENSORS or WFS_HEAD_TENSORS.
 * @size: section size, equal to the table entry.
 * @reserved: must be zero.
 */
struct wfs_section_header {
	u32 magic;
	u32 kind;
	u32 index;
	u32 n_tensors;
	u64 size;
	u32 reserved[2];
};

/**
 * struct wfs_tensor_desc - one tensor of a section, 48 bytes
 * @role: WFS_T_*, in the order given in the file comment.
 * @qtype: WFS_QT_* allowed for the role.
 * @rows: output dim (matrices) or 1.
 * @cols: input dim (matrices) or vector length.
 * @group_size: matrices: weights per scale group, 1..WFS_MAX_GROUP, even
 *	for INT4; 0 for other tensors.
 * @scale_exp: tensor exponent, |scale_exp| <= WFS_MAX_SCALE_EXP; 0 for
 *	the rope table.
 * @data_offset: offset of the data from the section start, 64-aligned.
 * @scale_offset: matrices: offset of the u16 scales, 64-aligned; else 0.
 * @reserved: must be zero.
 */
struct wfs_tensor_desc {
	u32 role;
	u32 qtype;
	u32 rows;
	u32 cols;
	u32 group_size;
	s32 scale_exp;
	u64 data_offset;
	u64 scale_offset;
	u32 reserved[2];
};

WFS_STATIC_ASSERT(sizeof(struct wfs_blob_header) == 256, "header size");
WFS_STATIC_ASSERT(sizeof(struct wfs_section_entry) == 32, "entry size");
WFS_STATIC_ASSERT(sizeof(struct wfs_section_header) == 32, "sect size");
WFS_STATIC_ASSERT(sizeof(struct wfs_tensor_desc) == 48, "desc size");

/**
 * struct wfs_section_range - where a section lives in the blob
 * @offset: byte offset from the blob start
 * @size: bytes (0: section absent)
 */
struct wfs_section_range {
	u64 offset;
	u64 size;
};

/**
 * struct wfs_model_info - what wfs_model_parse() learned (about 180 bytes)
 * @version_major: blob major version.
 * @version_minor: blob minor version.
 * @flags: blob WFS_MF_* flags.
 * @dim: see struct wfs_blob_header, same for the next fields.
 * @hidden_dim: FFN width.
 * @n_layers: layers in the blob.
 * @n_heads: query heads.
 * @n_kv_heads: key/value heads.
 * @head_size: dim / n_heads.
 * @kv_dim: n_kv_heads * head_size.
 * @vocab_size: tokens.
 * @seq_len: trained context length (informational).
 * @rope_theta: RoPE base (informational).
 * @norm_eps_q40: RMSNorm epsilon * 2^40.
 * @first_layer: first layer index in the full model.
 * @total_layers: layers of the full model.
 * @input_kind: WFS_IO_*.
 * @output_kind: WFS_IO_*.
 * @ffn_kind: WFS_FFN_*.
 * @n_experts: routed experts per layer (0: dense).
 * @n_experts_active: routed experts per token.
 * @n_shared_experts: shared experts per layer.
 * @gate_kind: WFS_GATE_*.
 * @kv_bits: KV cache element width, 8 or 16, set from WFS_MF_KV_INT8.
 *	The device may change it (8 or 16) before binding layer views and
 *	computing KV sizes; it is a property of the deployment, not of the
 *	weights.
 * @n_sections: section table entries.
 * @total_size: blob bytes.
 * @section_table_offset: offset of the section table.
 * @embed: embedding section (size 0 if input_kind is WFS_IO_ACT).
 * @head: head section (size 0 if output_kind is WFS_IO_ACT).
 * @max_layer_section: largest layer section in bytes.
 * @layer_sections_bytes: sum of all layer section sizes.
 * @bad_field: after a failed wfs_model_parse(), the header field or
 *	tensor that failed (a static string), or NULL.
 */
struct wfs_model_info {
	u32 version_major;
	u32 version_minor;
	u32 flags;
	u32 dim;
	u32 hidden_dim;
	u32 n_layers;
	u32 n_heads;
	u32 n_kv_heads;
	u32 head_size;
	u32 kv_dim;
	u32 vocab_size;
	u32 seq_len;
	u32 rope_theta;
	u32 norm_eps_q40;
	u32 first_layer;
	u32 total_layers;
	u32 input_kind;
	u32 output_kind;
	u32 ffn_kind;
	u32 n_experts;
	u32 n_experts_active;
	u32 n_shared_experts;
	u32 gate_kind;
	u32 kv_bits;
	u32 n_sections;
	u64 total_size;
	u64 section_table_offset;
	struct wfs_section_range embed;
	struct wfs_section_range head;
	u64 max_layer_section;
	u64 layer_sections_bytes;
	const char *bad_field;
};

/**
 * struct wfs_embed_view - a bound embedding section
 * @emb: token embedding [vocab][dim]
 * @dim: model width
 * @vocab: vocabulary size
 * @weight_bytes: section bytes (for the timing model)
 */
struct wfs_embed_view {
	struct wfs_qmat emb;
	u32 dim;
	u32 vocab;
	u64 weight_bytes;
};

/**
 * struct wfs_vec16 - an s16 parameter vector (RMSNorm gain)
 * @data: n mantissas
 * @n: length
 * @exp: exponent: value = data * 2^exp
 */
struct wfs_vec16 {
	const s16 *data;
	u32 n;
	s32 exp;
};

/* Most expert groups of a layer (LOAD_MODEL's WFW_MAX_EXPERT_GROUPS). */
#define WFS_XMAP_MAX_GROUPS	64

/**
 * struct wfs_xgroup - one group of routed experts of a layer
 * @off: the section offset of its first tensor byte (first W1 data)
 * @bytes: its bytes in the section (data, scales and alignment gaps)
 * @base: where those bytes are (another stage's SRAM)
 * @first: its first routed expert
 * @count: its routed experts
 * @stage: the stage holding it
 */
struct wfs_xgroup {
	u64 off;
	u64 bytes;
	const u8 *base;
	u32 first;
	u32 count;
	u32 stage;
};

/**
 * struct wfs_xmap - the expert groups of an MoE layer (wfs_xplace.h)
 * @n: groups
 * @per: routed experts per group (the last may have fewer)
 * @g: the groups, in expert order
 */
struct wfs_xmap {
	u32 n;
	u32 per;
	struct wfs_xgroup g[WFS_XMAP_MAX_GROUPS];
};

/**
 * struct wfs_layer_view - a bound layer section
 * @dim: model width
 * @hidden: FFN width
 * @n_heads: query heads
 * @n_kv_heads: key/value heads
 * @head_size: values per head
 * @kv_dim: n_kv_heads * head_size
 * @kv_bits: KV element width (8 or 16), from the info at bind time
 * @kv_stride: bytes of one position in a KV slot
 * @eps_q40: RMSNorm epsilon * 2^40
 * @qk_mult: requantisation multiplier of 1/sqrt(head_size)
 * @qk_shift: its shift (see wfs_requant())
 * @rms_att: attention RMSNorm gain
 * @rms_ffn: FFN RMSNorm gain
 * @wq: query projection
 * @wk: key projection
 * @wv: value projection
 * @wo: output projection
 * @w1: FFN gate projection
 * @w2: FFN down projection
 * @w3: FFN up projection
 * @rope: head_size / 2 RoPE frequencies (Q64 turns per position)
 * @weight_bytes: section bytes (for the timing model)
 * @n_experts: routed experts (0: dense FFN in @w1, @w2, @w3)
 * @n_active: routed experts per token
 * @n_shared: shared experts
 * @gate_kind: WFS_GATE_*
 * @router: MoE router [n_experts][dim]
 * @sec: the bound section (MoE: expert descriptors are read from it)
 * @xmap: MoE layer with expert groups placed across stages: where each
 *	group's tensors are (wfs_layer_expert() reads them there); NULL:
 *	every expert is in @sec
 */
struct wfs_layer_view {
	u32 dim;
	u32 hidden;
	u32 n_heads;
	u32 n_kv_heads;
	u32 head_size;
	u32 kv_dim;
	u32 kv_bits;
	u32 kv_stride;
	u32 eps_q40;
	s32 qk_mult;
	s32 qk_shift;
	struct wfs_vec16 rms_att;
	struct wfs_vec16 rms_ffn;
	struct wfs_qmat wq;
	struct wfs_qmat wk;
	struct wfs_qmat wv;
	struct wfs_qmat wo;
	struct wfs_qmat w1;
	struct wfs_qmat w2;
	struct wfs_qmat w3;
	const u64 *rope;
	u64 weight_bytes;
	u32 n_experts;
	u32 n_active;
	u32 n_shared;
	u32 gate_kind;
	struct wfs_qmat router;
	const u8 *sec;
	const struct wfs_xmap *xmap;
};

/**
 * struct wfs_head_view - a bound head section
 * @dim: model width
 * @vocab: vocabulary size
 * @eps_q40: RMSNorm epsilon * 2^40
 * @rms: final RMSNorm gain
 * @cls: classifier [vocab][dim]
 * @weight_bytes: section bytes (for the timing model)
 */
struct wfs_head_view {
	u32 dim;
	u32 vocab;
	u32 eps_q40;
	struct wfs_vec16 rms;
	struct wfs_qmat cls;
	u64 weight_bytes;
};

u32 wfs_fnv1a32(const void *data, u64 len);
int wfs_model_parse(const void *blob, u64 len, struct wfs_model_info *info);
int wfs_model_check_header(const struct wfs_blob_header *h, u64 len, const char **why);
int wfs_model_layer_section(const struct wfs_model_info *info,
			    const void *blob, u32 layer,
			    struct wfs_section_range *out);
int wfs_embed_bind(const struct wfs_model_info *info, const void *section,
		   u64 size, struct wfs_embed_view *out);
int wfs_layer_bind(const struct wfs_model_info *info, const void *section,
		   u64 size, u32 layer, struct wfs_layer_view *out);
int wfs_layer_expert(const struct wfs_layer_view *v, u32 x,
		     struct wfs_qmat *w1, struct wfs_qmat *w2,
		     struct wfs_qmat *w3);
int wfs_head_bind(const struct wfs_model_info *info, const void *section,
		  u64 size, struct wfs_head_view *out);

#endif /* WFS_MODEL_H */
