// SPDX-License-Identifier: MIT
/*
 * wfs_model.c - model blob validator and section views.
 *
 * Everything read from a blob is copied out with memcpy before use (the
 * blob may be unaligned) and checked before it is trusted.  Sizes are
 * computed in u64 from fields bounded by the WFS_MAX_* limits, and every
 * "offset + size <= limit" test is overflow-checked.
 */
#include "wfs_model.h"

/* Tensor classes for the expectation table. */
#define WFS_TC_MAT	0
#define WFS_TC_S16	1
#define WFS_TC_U64	2

struct wfs_expect {
	u32 role;
	u32 cls;
	u32 rows;
	u32 cols;
};

/**
 * wfs_fnv1a32() - FNV-1a 32-bit hash (the blob checksum)
 * @data: bytes
 * @len: byte count
 *
 * Return: the hash.
 */
u32 wfs_fnv1a32(const void *data, u64 len)
{
	const u8 *p = data;
	u32 h = 2166136261u;
	u64 i;

	for (i = 0; i < len; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static int wfs_zero(const u32 *w, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (w[i])
			return 0;
	return 1;
}

/* Is [off, off + size) inside [lo, limit) and off aligned?  Overflow safe. */
static int wfs_range_ok(u64 off, u64 size, u64 lo, u64 limit, u64 align)
{
	u64 end;

	if (off < lo || !WFS_IS_ALIGNED(off, align))
		return 0;
	if (WFS_ADD_OVF(off, size, &end))
		return 0;
	return end <= limit;
}

/* Tensors in a section of @kind. */
static u32 wfs_section_tensors(const struct wfs_model_info *info, u32 kind)
{
	if (kind == WFS_SEC_EMBED)
		return WFS_EMBED_TENSORS;
	if (kind == WFS_SEC_HEAD)
		return WFS_HEAD_TENSORS;
	if (kind != WFS_SEC_LAYER)
		return 0;
	if (info->ffn_kind == WFS_FFN_MOE)
		return WFS_MOE_FIXED_TENSORS + 1 +
		       3 * (info->n_experts + info->n_shared_experts);
	return WFS_LAYER_TENSORS;
}

static void wfs_exp_set(struct wfs_expect *e, u32 role, u32 cls, u32 rows,
			u32 cols)
{
	e->role = role;
	e->cls = cls;
	e->rows = rows;
	e->cols = cols;
}

/*
 * Expectation for tensor @i of a layer section.  @hx is the width of the
 * expert whose triple @i is in (MoE), read from its W1 by the caller.
 */
static void wfs_expect_layer(const struct wfs_model_info *info, u32 i,
			     u32 hx, struct wfs_expect *e)
{
	static const u32 role[] = { WFS_T_RMS_ATT, WFS_T_WQ, WFS_T_WK,
		WFS_T_WV, WFS_T_WO, WFS_T_RMS_FFN, WFS_T_W1, WFS_T_W2,
		WFS_T_W3, WFS_T_ROPE };
	u32 d = info->dim, h = info->hidden_dim, kv = info->kv_dim;
	u32 n = wfs_section_tensors(info, WFS_SEC_LAYER);

	if (info->ffn_kind == WFS_FFN_MOE && i == 6) {
		wfs_exp_set(e, WFS_T_ROUTER, WFS_TC_MAT, info->n_experts, d);
		return;
	}
	if (info->ffn_kind == WFS_FFN_MOE) {
		/* expert triples of width hx; the rope table ends it */
		h = hx;
		if (i + 1 == n)
			i = 9;
		else if (i > 6)
			i = 6 + (i - WFS_MOE_FIXED_TENSORS) % 3;
	}
	switch (i) {
	case 0: case 5: case 9:
		wfs_exp_set(e, role[i], i == 9 ? WFS_TC_U64 : WFS_TC_S16, 1,
			    i == 9 ? info->head_size / 2 : d);
		break;
	case 1: case 4:
		wfs_exp_set(e, role[i], WFS_TC_MAT, d, d);
		break;
	case 2: case 3:
		wfs_exp_set(e, role[i], WFS_TC_MAT, kv, d);
		break;
	default:
		wfs_exp_set(e, role[i], WFS_TC_MAT, i == 7 ? d : h,
			    i == 7 ? h : d);
		break;
	}
}

/* Expectation for tensor @i of a section of @kind. */
static void wfs_expect_at(const struct wfs_model_info *info, u32 kind,
			  u32 i, u32 hx, struct wfs_expect *e)
{
	if (kind == WFS_SEC_EMBED)
		wfs_exp_set(e, WFS_T_TOK_EMB, WFS_TC_MAT, info->vocab_size,
			    info->dim);
	else if (kind == WFS_SEC_HEAD && i == 0)
		wfs_exp_set(e, WFS_T_RMS_FINAL, WFS_TC_S16, 1, info->dim);
	else if (kind == WFS_SEC_HEAD)
		wfs_exp_set(e, WFS_T_CLS, WFS_TC_MAT, info->vocab_size,
			    info->dim);
	else
		wfs_expect_layer(info, i, hx, e);
}

/*
 * Check one tensor descriptor against its expectation; advance *cursor
 * past its data (and scales).
 */
static int wfs_check_tensor(const struct wfs_tensor_desc *t,
			    const struct wfs_expect *e, u64 size, u64 *cursor)
{
	u64 bytes, sbytes = 0;

	if (t->role != e->role || t->rows != e->rows || t->cols != e->cols ||
	    !wfs_zero(t->reserved, WFS_ARRAY_SIZE(t->reserved)))
		return -WFS_EINVAL;
	if (t->scale_exp > WFS_MAX_SCALE_EXP ||
	    t->scale_exp < -WFS_MAX_SCALE_EXP)
		return -WFS_ERANGE;
	switch (e->cls) {
	case WFS_TC_MAT:
		if (t->qtype != WFS_QT_INT8 && t->qtype != WFS_QT_INT4)
			return -WFS_EINVAL;
		if (!t->group_size || t->group_size > WFS_MAX_GROUP ||
		    (t->qtype == WFS_QT_INT4 && (t->group_size & 1)))
			return -WFS_EINVAL;
		bytes = (u64)t->rows * wfs_qmat_row_bytes(t->qtype, t->cols,
							  t->group_size);
		sbytes = (u64)t->rows *
			 ((t->cols + t->group_size - 1) / t->group_size) * 2;
		break;
	case WFS_TC_S16:
		if (t->qtype != WFS_QT_S16 || t->group_size || t->scale_offset)
			return -WFS_EINVAL;
		bytes = (u64)t->cols * 2;
		break;
	default:
		if (t->qtype != WFS_QT_U64 || t->group_size || t->scale_offset ||
		    t->scale_exp)
			return -WFS_EINVAL;
		bytes = (u64)t->cols * 8;
		break;
	}
	if (!wfs_range_ok(t->data_offset, bytes, *cursor, size,
			  WFS_SECTION_ALIGN))
		return -WFS_EFAULT;
	*cursor = t->data_offset + bytes;
	if (e->cls == WFS_TC_MAT) {
		if (!wfs_range_ok(t->scale_offset, sbytes, *cursor, size,
				  WFS_SECTION_ALIGN))
			return -WFS_EFAULT;
		*cursor = t->scale_offset + sbytes;
	}
	return 0;
}

/* Running checks over the expert triples of an MoE layer section. */
struct wfs_moe_walk {
	u32 hx;		/* width of the current expert, from its W1 */
	u64 widths;	/* sum of the widths so far */
	s32 exp[3];	/* scale_exp of expert 0's W1, W2, W3 */
};

/*
 * Before tensor @i of an MoE layer is checked: an expert's W1 sets its
 * width, bounded so that the widths can sum to at most hidden_dim.
 */
static int wfs_moe_pre(const struct wfs_model_info *info, u32 i,
		       const struct wfs_tensor_desc *t, struct wfs_moe_walk *w,
		       const char **why)
{
	u32 n = wfs_section_tensors(info, WFS_SEC_LAYER);

	if (i < WFS_MOE_FIXED_TENSORS || i + 1 == n ||
	    (i - WFS_MOE_FIXED_TENSORS) % 3)
		return 0;
	if (t->role != WFS_T_W1 || !t->rows ||
	    w->widths + t->rows > info->hidden_dim) {
		*why = "expert width (W1 rows: 1.., summing to hidden_dim)";
		return -WFS_EINVAL;
	}
	w->hx = t->rows;
	w->widths += t->rows;
	return 0;
}

/* After tensor @i passed: experts of a layer share each role's exponent. */
static int wfs_moe_post(const struct wfs_model_info *info, u32 i,
			const struct wfs_tensor_desc *t,
			struct wfs_moe_walk *w, const char **why)
{
	u32 n = wfs_section_tensors(info, WFS_SEC_LAYER), j;

	if (i < WFS_MOE_FIXED_TENSORS)
		return 0;
	if (i + 1 == n) {
		if (w->widths == info->hidden_dim)
			return 0;
		*why = "expert widths (their sum must be hidden_dim)";
		return -WFS_EINVAL;
	}
	j = (i - WFS_MOE_FIXED_TENSORS) % 3;
	if (i < WFS_MOE_FIXED_TENSORS + 3)
		w->exp[j] = t->scale_exp;
	if (w->exp[j] == t->scale_exp)
		return 0;
	*why = "expert scale_exp (one per role in a layer)";
	return -WFS_EINVAL;
}

/*
 * Validate a whole section: header, descriptor table, every tensor, one
 * descriptor at a time (an MoE layer has up to 3 * WFS_MAX_EXPERTS + 8).
 * @t receives the descriptors a view binds: all of a dense layer's, an MoE
 * layer's first WFS_MOE_FIXED_TENSORS and its rope table in t[9].
 */
static int wfs_check_section(const struct wfs_model_info *info,
			     const u8 *sec, u64 size, u32 kind, u32 index,
			     struct wfs_tensor_desc *t, const char **why)
{
	struct wfs_moe_walk w = { 0 };
	struct wfs_section_header sh;
	struct wfs_tensor_desc d;
	struct wfs_expect e;
	u64 cursor;
	u32 n, i;
	int ret;

	n = wfs_section_tensors(info, kind);
	if (!n)
		return -WFS_EINVAL;
	cursor = sizeof(sh) + (u64)n * sizeof(d);
	*why = "section size (truncated descriptor table)";
	if (size < cursor)
		return -WFS_EFAULT;
	WFS_MEMCPY(&sh, sec, sizeof(sh));
	*why = "section header";
	if (sh.magic != WFS_SECTION_MAGIC || sh.kind != kind ||
	    sh.index != index || sh.n_tensors != n || sh.size != size ||
	    !wfs_zero(sh.reserved, WFS_ARRAY_SIZE(sh.reserved)))
		return -WFS_EINVAL;
	for (i = 0; i < n; i++) {
		WFS_MEMCPY(&d, sec + sizeof(sh) + (u64)i * sizeof(d), sizeof(d));
		ret = info->ffn_kind == WFS_FFN_MOE && kind == WFS_SEC_LAYER ?
		      wfs_moe_pre(info, i, &d, &w, why) : 0;
		if (ret)
			return ret;
		wfs_expect_at(info, kind, i, w.hx, &e);
		*why = "tensor descriptor (role, shape, type or range)";
		ret = wfs_check_tensor(&d, &e, size, &cursor);
		if (!ret && info->ffn_kind == WFS_FFN_MOE &&
		    kind == WFS_SEC_LAYER)
			ret = wfs_moe_post(info, i, &d, &w, why);
		if (ret)
			return ret;
		if (i < WFS_LAYER_TENSORS)
			t[i] = d;
		if (i + 1 == n && kind == WFS_SEC_LAYER)
			t[9] = d;
	}
	*why = NULL;
	return 0;
}

static int wfs_check_dims(const struct wfs_blob_header *h)
{
	u64 last;

	if (!h->dim || h->dim > WFS_MAX_DIM || !h->hidden_dim ||
	    h->hidden_dim > WFS_MAX_HIDDEN || !h->n_layers ||
	    h->n_layers > WFS_MAX_LAYERS || !h->n_heads || !h->n_kv_heads ||
	    !h->vocab_size || h->vocab_size > WFS_MAX_VOCAB ||
	    !h->seq_len || h->seq_len > WFS_MAX_SEQ)
		return -WFS_EINVAL;
	if (h->n_heads > h->dim || h->dim % h->n_heads ||
	    h->head_size != h->dim / h->n_heads || (h->head_size & 1) ||
	    h->head_size > WFS_MAX_HEAD_SIZE ||
	    h->n_kv_heads > h->n_heads || h->n_heads % h->n_kv_heads)
		return -WFS_EINVAL;
	last = (u64)h->first_layer + h->n_layers;
	if (h->total_layers > WFS_MAX_LAYERS || last > h->total_layers)
		return -WFS_EINVAL;
	if (h->input_kind > WFS_IO_ACT || h->output_kind > WFS_IO_ACT)
		return -WFS_EINVAL;
	if (h->input_kind == WFS_IO_ACT && !h->first_layer)
		return -WFS_EINVAL;
	if (h->output_kind == WFS_IO_ACT && last == h->total_layers)
		return -WFS_EINVAL;
	if (h->input_kind == WFS_IO_TOKENS && h->first_layer)
		return -WFS_EINVAL;
	if (h->output_kind == WFS_IO_TOKENS && last != h->total_layers)
		return -WFS_EINVAL;
	return 0;
}

/* The FFN fields: dense with every MoE field zero, or a checked MoE. */
static int wfs_check_ffn(const struct wfs_blob_header *h, const char **why)
{
	int moe = h->ffn_kind == WFS_FFN_MOE;

	*why = "ffn_kind";
	if (h->ffn_kind > WFS_FFN_MOE)
		return -WFS_EOPNOTSUPP;
	*why = "flags (WFS_MF_MOE must be set iff ffn_kind is MOE)";
	if (!moe != !(h->flags & WFS_MF_MOE))
		return -WFS_EINVAL;
	*why = "n_experts";
	if (moe ? !h->n_experts || h->n_experts > WFS_MAX_EXPERTS :
		  h->n_experts != 0)
		return -WFS_EINVAL;
	*why = "n_experts_active (top-k: 1..n_experts, at most 64)";
	if (moe ? !h->n_experts_active ||
		  h->n_experts_active > h->n_experts ||
		  h->n_experts_active > WFS_MAX_EXPERTS_ACTIVE :
		  h->n_experts_active != 0)
		return -WFS_EINVAL;
	*why = "n_shared_experts";
	if (moe ? h->n_shared_experts > WFS_MAX_EXPERTS - h->n_experts :
		  h->n_shared_experts != 0)
		return -WFS_EINVAL;
	*why = "gate_kind";
	if (moe ? h->gate_kind > WFS_GATE_MAX : h->gate_kind != 0)
		return -WFS_EINVAL;
	*why = NULL;
	return 0;
}

/*
 * The header's own checks, for a blob of @len bytes, but the checksum; on
 * success *nsec is its section count.
 */
static int header_fields(const struct wfs_blob_header *h, u64 len, u32 *nsec,
			 const char **why)
{
	int ret;

	if (h->magic != WFS_BLOB_MAGIC)
		return -WFS_EINVAL;
	if (h->version_major != WFS_BLOB_VERSION_MAJOR)
		return -WFS_EPROTO;
	if (h->header_size != sizeof(*h) || h->total_size != len ||
	    !wfs_zero(h->reserved, WFS_ARRAY_SIZE(h->reserved)))
		return -WFS_EINVAL;
	if (h->flags & ~WFS_MF_KNOWN)
		return -WFS_EOPNOTSUPP;
	if (!(h->flags & WFS_MF_CHECKSUM) && h->checksum)
		return -WFS_EINVAL;
	ret = wfs_check_dims(h);
	if (!ret)
		ret = wfs_check_ffn(h, why);
	if (ret)
		return ret;
	*nsec = h->n_layers + (h->input_kind == WFS_IO_TOKENS) +
		(h->output_kind == WFS_IO_TOKENS);
	if (h->n_sections != *nsec)
		return -WFS_EINVAL;
	if (!wfs_range_ok(h->section_table_offset,
			  (u64)*nsec * sizeof(struct wfs_section_entry),
			  sizeof(*h), len, WFS_SECTION_ALIGN))
		return -WFS_EFAULT;
	return 0;
}

/**
 * wfs_model_check_header() - check a blob's header before having the blob
 * @h: a copy of the blob's header
 * @len: the whole blob's length
 * @why: out: the field at fault, when one is named (may be NULL)
 *
 * Every check wfs_model_parse() makes of the header, but the checksum,
 * which needs the whole blob: a host can refuse what the firmware would
 * without copying the blob (the firmware checks it all again).
 *
 * Return: 0, or wfs_model_parse()'s errors but -WFS_EBADMSG.
 */
int wfs_model_check_header(const struct wfs_blob_header *h, u64 len, const char **why)
{
	const char *field = NULL;
	u32 nsec = 0;
	int ret;

	if (len < sizeof(*h))
		return -WFS_EINVAL;
	ret = header_fields(h, len, &nsec, &field);
	if (why)
		*why = field;
	return ret;
}

static int parse_header(const u8 *b, u64 len, struct wfs_blob_header *h,
			u32 *nsec, const char **why)
{
	int ret;

	if (!b || len < sizeof(*h))
		return -WFS_EINVAL;
	WFS_MEMCPY(h, b, sizeof(*h));
	ret = header_fields(h, len, nsec, why);
	if (ret)
		return ret;
	if ((h->flags & WFS_MF_CHECKSUM) &&
	    wfs_fnv1a32(b + sizeof(*h), len - sizeof(*h)) != h->checksum)
		return -WFS_EBADMSG;
	return 0;
}

static void info_from_header(const struct wfs_blob_header *h, u64 len,
			     u32 nsec, struct wfs_model_info *info)
{
	info->version_major = h->version_major;
	info->version_minor = h->version_minor;
	info->flags = h->flags;
	info->dim = h->dim;
	info->hidden_dim = h->hidden_dim;
	info->n_layers = h->n_layers;
	info->n_heads = h->n_heads;
	info->n_kv_heads = h->n_kv_heads;
	info->head_size = h->head_size;
	info->kv_dim = h->n_kv_heads * h->head_size;
	info->vocab_size = h->vocab_size;
	info->seq_len = h->seq_len;
	info->rope_theta = h->rope_theta;
	info->norm_eps_q40 = h->norm_eps_q40;
	info->first_layer = h->first_layer;
	info->total_layers = h->total_layers;
	info->input_kind = h->input_kind;
	info->output_kind = h->output_kind;
	info->ffn_kind = h->ffn_kind;
	info->n_experts = h->n_experts;
	info->n_experts_active = h->n_experts_active;
	info->n_shared_experts = h->n_shared_experts;
	info->gate_kind = h->gate_kind;
	info->kv_bits = (h->flags & WFS_MF_KV_INT8) ? 8 : 16;
	info->n_sections = nsec;
	info->total_size = len;
	info->section_table_offset = h->section_table_offset;
}

/* What section @i must be: [embed] layers... [head]. */
static void section_expected(const struct wfs_blob_header *h, u32 i,
			     u32 nsec, u32 *kind, u32 *index)
{
	*index = 0;
	if (h->input_kind == WFS_IO_TOKENS && i == 0) {
		*kind = WFS_SEC_EMBED;
	} else if (h->output_kind == WFS_IO_TOKENS && i == nsec - 1) {
		*kind = WFS_SEC_HEAD;
	} else {
		*kind = WFS_SEC_LAYER;
		*index = i - (h->input_kind == WFS_IO_TOKENS);
	}
}

static void info_add_section(struct wfs_model_info *info, u32 kind,
			     const struct wfs_section_entry *se)
{
	if (kind == WFS_SEC_EMBED) {
		info->embed.offset = se->offset;
		info->embed.size = se->size;
	} else if (kind == WFS_SEC_HEAD) {
		info->head.offset = se->offset;
		info->head.size = se->size;
	} else {
		info->layer_sections_bytes += se->size;
		if (se->size > info->max_layer_section)
			info->max_layer_section = se->size;
	}
}

/* Check every section in order; they must not overlap or go backwards. */
static int parse_sections(const u8 *b, u64 len,
			  const struct wfs_blob_header *h, u32 nsec,
			  struct wfs_model_info *info, const char **why)
{
	struct wfs_tensor_desc t[WFS_LAYER_TENSORS];
	struct wfs_section_entry se;
	u64 cursor = h->section_table_offset + (u64)nsec * sizeof(se);
	u32 i, kind, index;
	int ret;

	for (i = 0; i < nsec; i++) {
		WFS_MEMCPY(&se, b + h->section_table_offset +
			   (u64)i * sizeof(se), sizeof(se));
		section_expected(h, i, nsec, &kind, &index);
		if (se.kind != kind || se.index != index ||
		    !wfs_zero(se.reserved, WFS_ARRAY_SIZE(se.reserved)))
			return -WFS_EINVAL;
		if (!wfs_range_ok(se.offset, se.size, cursor, len,
				  WFS_SECTION_ALIGN))
			return -WFS_EFAULT;
		ret = wfs_check_section(info, b + se.offset, se.size, kind,
					index, t, why);
		if (ret)
			return ret;
		cursor = se.offset + se.size;
		info_add_section(info, kind, &se);
	}
	return 0;
}

/**
 * wfs_model_parse() - validate a model blob
 * @blob: the blob, any alignment
 * @len: its length in bytes
 * @info: filled on success
 *
 * Checks every header field, the section table and every section's
 * descriptors against @len with overflow-safe arithmetic; reads nothing
 * outside [blob, blob + len).  Tensor payloads are not interpreted (any
 * weight bits are valid).
 *
 * On failure, @info is zero but for @info->bad_field, which names the field
 * (mixture-of-experts fields and tensors) when known.
 *
 * Return: 0, -WFS_EINVAL (bad field), -WFS_EFAULT (range outside the blob),
 * -WFS_ERANGE (exponent), -WFS_EBADMSG (checksum), -WFS_EPROTO (version),
 * or -WFS_EOPNOTSUPP (feature reserved for later versions).
 */
int wfs_model_parse(const void *blob, u64 len, struct wfs_model_info *info)
{
	struct wfs_blob_header h;
	const char *why = NULL;
	u32 nsec = 0;
	int ret;

	WFS_MEMSET(info, 0, sizeof(*info));
	ret = parse_header(blob, len, &h, &nsec, &why);
	if (!ret) {
		info_from_header(&h, len, nsec, info);
		ret = parse_sections(blob, len, &h, nsec, info, &why);
	}
	if (ret) {
		WFS_MEMSET(info, 0, sizeof(*info));
		info->bad_field = why;
	}
	return ret;
}

/**
 * wfs_model_layer_section() - locate a layer section in a parsed blob
 * @info: from wfs_model_parse() on @blob
 * @blob: the same blob
 * @layer: layer index within the blob, < info->n_layers
 * @out: offset and size of the section
 *
 * Return: 0 or -WFS_EINVAL.
 */
int wfs_model_layer_section(const struct wfs_model_info *info,
			    const void *blob, u32 layer,
			    struct wfs_section_range *out)
{
	struct wfs_section_entry se;
	u32 i = layer + (info->input_kind == WFS_IO_TOKENS);

	if (layer >= info->n_layers || i >= info->n_sections)
		return -WFS_EINVAL;
	WFS_MEMCPY(&se, (const u8 *)blob + info->section_table_offset +
		   (u64)i * sizeof(se), sizeof(se));
	if (se.kind != WFS_SEC_LAYER || se.index != layer)
		return -WFS_EINVAL;
	out->offset = se.offset;
	out->size = se.size;
	return 0;
}

static void wfs_qmat_init(struct wfs_qmat *m, const u8 *sec,
			  const struct wfs_tensor_desc *t)
{
	m->data = sec + t->data_offset;
	m->scales = (const u16 *)(sec + t->scale_offset);
	m->rows = t->rows;
	m->cols = t->cols;
	m->group_size = t->group_size;
	m->n_groups = (t->cols + t->group_size - 1) / t->group_size;
	m->row_bytes = (u32)wfs_qmat_row_bytes(t->qtype, t->cols,
					       t->group_size);
	m->qtype = t->qtype;
	m->scale_exp = t->scale_exp;
}

static void wfs_vec16_init(struct wfs_vec16 *v, const u8 *sec,
			   const struct wfs_tensor_desc *t)
{
	v->data = (const s16 *)(sec + t->data_offset);
	v->n = t->cols;
	v->exp = t->scale_exp;
}

static int wfs_bind_check(const struct wfs_model_info *info,
			  const void *section)
{
	if (!info || !section || ((uintptr_t)section & 7))
		return -WFS_EINVAL;
	if (!info->dim || info->dim > WFS_MAX_DIM || !info->n_heads ||
	    !info->hidden_dim || info->hidden_dim > WFS_MAX_HIDDEN ||
	    !info->vocab_size || info->vocab_size > WFS_MAX_VOCAB ||
	    info->head_size > WFS_MAX_HEAD_SIZE || (info->head_size & 1) ||
	    info->head_size * info->n_heads != info->dim ||
	    !info->n_kv_heads ||
	    info->kv_dim != info->n_kv_heads * info->head_size ||
	    info->n_heads % info->n_kv_heads ||
	    (info->kv_bits != 8 && info->kv_bits != 16))
		return -WFS_EINVAL;
	if (info->ffn_kind == WFS_FFN_MOE)
		return !info->n_experts || info->n_experts > WFS_MAX_EXPERTS ||
		       info->n_shared_experts >
		       WFS_MAX_EXPERTS - info->n_experts ||
		       !info->n_experts_active ||
		       info->n_experts_active > info->n_experts ||
		       info->n_experts_active > WFS_MAX_EXPERTS_ACTIVE ||
		       info->gate_kind > WFS_GATE_MAX ? -WFS_EINVAL : 0;
	if (info->ffn_kind != WFS_FFN_SWIGLU || info->n_experts ||
	    info->n_experts_active || info->n_shared_experts ||
	    info->gate_kind)
		return -WFS_EINVAL;
	return 0;
}

/**
 * wfs_embed_bind() - bind a view onto a copy of the embedding section
 * @info: parsed model
 * @section: the section bytes, 8-byte aligned (64 recommended)
 * @size: section size
 * @out: the view; valid as long as @section is
 *
 * Return: 0 or a negative WFS_E* code (see wfs_model_parse()).
 */
int wfs_embed_bind(const struct wfs_model_info *info, const void *section,
		   u64 size, struct wfs_embed_view *out)
{
	struct wfs_tensor_desc t[WFS_LAYER_TENSORS];
	int ret = wfs_bind_check(info, section);
	const char *why;

	if (!ret)
		ret = wfs_check_section(info, section, size, WFS_SEC_EMBED, 0, t,
					&why);
	if (ret)
		return ret;
	wfs_qmat_init(&out->emb, section, &t[0]);
	out->dim = info->dim;
	out->vocab = info->vocab_size;
	out->weight_bytes = size;
	return 0;
}

/**
 * wfs_layer_bind() - bind a view onto a copy of a layer section
 * @info: parsed model (its kv_bits selects the KV cache format)
 * @section: the section bytes, 8-byte aligned (64 recommended)
 * @size: section size
 * @layer: layer index within the blob (checked against the section)
 * @out: the view; valid as long as @section is
 *
 * Return: 0 or a negative WFS_E* code (see wfs_model_parse()).
 */
int wfs_layer_bind(const struct wfs_model_info *info, const void *section,
		   u64 size, u32 layer, struct wfs_layer_view *out)
{
	struct wfs_tensor_desc t[WFS_LAYER_TENSORS];
	const u8 *sec = section;
	const char *why;
	u64 r, inv;
	u32 s;
	int ret = wfs_bind_check(info, section);

	if (!ret)
		ret = wfs_check_section(info, section, size, WFS_SEC_LAYER,
					layer, t, &why);
	if (ret)
		return ret;
	WFS_MEMSET(out, 0, sizeof(*out));
	out->dim = info->dim;
	out->hidden = info->hidden_dim;
	out->n_heads = info->n_heads;
	out->n_kv_heads = info->n_kv_heads;
	out->head_size = info->head_size;
	out->kv_dim = info->kv_dim;
	out->kv_bits = info->kv_bits;
	out->kv_stride = (u32)WFS_ALIGN_UP(4 * info->n_kv_heads +
					   2 * info->kv_dim *
					   (info->kv_bits / 8), 8u);
	out->eps_q40 = info->norm_eps_q40;
	/* 1/sqrt(head_size) = 2^s / isqrt(head_size * 4^s) */
	s = (62 - wfs_bitlen64(info->head_size)) / 2;
	r = wfs_isqrt64((u64)info->head_size << (2 * s));
	inv = wfs_div_u64((1ULL << 61) - 1, (u32)r);
	wfs_mult_from_u64(inv, (s32)s - 61, &out->qk_mult, &out->qk_shift);
	wfs_vec16_init(&out->rms_att, sec, &t[0]);
	wfs_qmat_init(&out->wq, sec, &t[1]);
	wfs_qmat_init(&out->wk, sec, &t[2]);
	wfs_qmat_init(&out->wv, sec, &t[3]);
	wfs_qmat_init(&out->wo, sec, &t[4]);
	wfs_vec16_init(&out->rms_ffn, sec, &t[5]);
	if (info->ffn_kind == WFS_FFN_MOE) {
		out->n_experts = info->n_experts;
		out->n_active = info->n_experts_active;
		out->n_shared = info->n_shared_experts;
		out->gate_kind = info->gate_kind;
		wfs_qmat_init(&out->router, sec, &t[6]);
	} else {
		wfs_qmat_init(&out->w1, sec, &t[6]);
		wfs_qmat_init(&out->w2, sec, &t[7]);
		wfs_qmat_init(&out->w3, sec, &t[8]);
	}
	out->rope = (const u64 *)(sec + t[9].data_offset);
	out->weight_bytes = size;
	out->sec = sec;
	return 0;
}

/**
 * wfs_layer_expert() - the matrices of one expert of a bound MoE layer
 * @v: view bound by wfs_layer_bind() (which validated every descriptor)
 * @x: expert: 0..n_shared-1 the shared ones, then the routed ones
 * @w1: its gate projection [h_x][dim]
 * @w2: its down projection [dim][h_x]
 * @w3: its up projection [h_x][dim]
 *
 * Return: 0, or -WFS_EINVAL for a dense layer or @x out of range.
 */
int wfs_layer_expert(const struct wfs_layer_view *v, u32 x,
		     struct wfs_qmat *w1, struct wfs_qmat *w2,
		     struct wfs_qmat *w3)
{
	struct wfs_tensor_desc t[3];
	const struct wfs_xgroup *g;
	const u8 *base = v->sec;
	u32 i;

	if (!v->n_experts || x >= v->n_shared + v->n_experts)
		return -WFS_EINVAL;
	WFS_MEMCPY(t, v->sec + sizeof(struct wfs_section_header) +
		   (u64)(WFS_MOE_FIXED_TENSORS + 3 * x) * sizeof(t[0]),
		   sizeof(t));
	/*
	 * A routed expert of a group on another stage: its bytes are there
	 * (per 0: an expert shard's one group, wfs_moe_ep.h).
	 */
	if (v->xmap && x >= v->n_shared) {
		g = &v->xmap->g[v->xmap->per ?
				(x - v->n_shared) / v->xmap->per : 0];
		for (i = 0; i < 3; i++) {
			t[i].data_offset -= g->off;
			t[i].scale_offset -= g->off;
		}
		base = g->base;
	}
	wfs_qmat_init(w1, base, &t[0]);
	wfs_qmat_init(w2, base, &t[1]);
	wfs_qmat_init(w3, base, &t[2]);
	return 0;
}

/**
 * wfs_head_bind() - bind a view onto a copy of the head section
 * @info: parsed model
 * @section: the section bytes, 8-byte aligned (64 recommended)
 * @size: section size
 * @out: the view; valid as long as @section is
 *
 * Return: 0 or a negative WFS_E* code (see wfs_model_parse()).
 */
int wfs_head_bind(const struct wfs_model_info *info, const void *section,
		  u64 size, struct wfs_head_view *out)
{
	struct wfs_tensor_desc t[WFS_LAYER_TENSORS];
	int ret = wfs_bind_check(info, section);
	const char *why;

	if (!ret)
		ret = wfs_check_section(info, section, size, WFS_SEC_HEAD, 0, t,
					&why);
	if (ret)
		return ret;
	out->dim = info->dim;
	out->vocab = info->vocab_size;
	out->eps_q40 = info->norm_eps_q40;
	wfs_vec16_init(&out->rms, section, &t[0]);
	wfs_qmat_init(&out->cls, section, &t[1]);
	out->weight_bytes = size;
	return 0;
}
