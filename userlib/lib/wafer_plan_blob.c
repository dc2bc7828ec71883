// SPDX-License-Identifier: MIT
/*
 * libwafer: the shape wafer plan projects, read from a packed blob
 * (wafer_plan_shape_from_blob()): the header firmware-sim parses to load it,
 * the precision of its layer weights (layer 0's, as firmware-sim binds it),
 * and the parameters its tensors hold.
 */
#include <errno.h>
#include <string.h>

#include "wafer_backend.h"
#include "wfs_model.h"

/* The bits of the blob's layer weights (wafer convert --wbits): layer 0's wq, 4 or 8. */
static int blob_weight_bits(const void *blob, const struct wfs_model_info *mi,
			    const char *name, unsigned int *bits)
{
	struct wfs_section_range r;
	struct wfs_layer_view v;
	int ret;

	ret = wfs_model_layer_section(mi, blob, 0, &r);
	if (!ret)
		ret = wfs_layer_bind(mi, (const char *)blob + r.offset, r.size, 0, &v);
	if (ret)
		return wafer_set_error(ret, "%s: layer 0 does not bind", name);
	*bits = v.wq.qtype == WFS_QT_INT4 ? 4 : 8;
	return 0;
}

/*
 * Parameters in the blob's tensors: matrices rows x cols, RMSNorm gains
 * their width; not the rope tables (precomputed), nor the head's copy of a
 * tied embedding.  With experts, @routed_units gets the routed experts'
 * hidden units summed over the layers.  The blob has been validated.
 */
static uint64_t blob_params(const uint8_t *blob, const struct wfs_model_info *mi,
			    uint64_t *routed_units)
{
	const struct wfs_section_entry *se = (const void *)(blob + mi->section_table_offset);
	uint64_t n = 0;
	unsigned int i, t;

	*routed_units = 0;
	for (i = 0; i < mi->n_sections; i++) {
		const uint8_t *sec = blob + se[i].offset;
		struct wfs_section_header sh;

		memcpy(&sh, sec, sizeof(sh));
		for (t = 0; t < sh.n_tensors; t++) {
			struct wfs_tensor_desc d;

			memcpy(&d, sec + sizeof(sh) + t * sizeof(d), sizeof(d));
			if (d.role == WFS_T_ROPE ||
			    (d.role == WFS_T_CLS && (mi->flags & WFS_MF_TIED_CLS)))
				continue;
			n += d.qtype == WFS_QT_S16 ? d.cols : (uint64_t)d.rows * d.cols;
			/* An expert's W1 (past the shared ones): its hidden units. */
			if (mi->ffn_kind == WFS_FFN_MOE && d.role == WFS_T_W1 &&
			    t >= WFS_MOE_FIXED_TENSORS + 3 * mi->n_shared_experts)
				*routed_units += d.rows;
		}
	}
	return n;
}

int wafer_plan_shape_from_blob(const void *blob, size_t len, const char *name,
			       struct wafer_plan_shape *s)
{
	struct wfs_model_info mi;
	unsigned int bits = 0;
	uint64_t routed;
	int ret;

	if (!blob || !s)
		return wafer_set_error(-EINVAL, "wafer_plan_shape_from_blob: NULL argument");
	ret = wfs_model_parse(blob, len, &mi);
	if (ret)
		return wafer_set_error(ret, "%s: not a valid blob%s%s", name ? name : "blob",
				       mi.bad_field ? ": bad " : "",
				       mi.bad_field ? mi.bad_field : "");
	if (mi.first_layer || mi.n_layers != mi.total_layers)
		return wafer_set_error(-EINVAL, "%s: layers %u..%u of a model of %u, not the whole",
				       name ? name : "blob", mi.first_layer,
				       mi.first_layer + mi.n_layers - 1, mi.total_layers);
	ret = blob_weight_bits(blob, &mi, name ? name : "blob", &bits);
	if (ret)
		return ret;
	*s = (struct wafer_plan_shape){
		.name = name, .n_layers = mi.n_layers, .dim = mi.dim,
		.hidden_dim = mi.hidden_dim, .n_heads = mi.n_heads, .n_kv_heads = mi.n_kv_heads,
		.head_dim = mi.head_size, .vocab = mi.vocab_size, .weight_bits = bits,
		.tied_head = !!(mi.flags & WFS_MF_TIED_CLS),
		.params = blob_params(blob, &mi, &routed),
	};
	if (mi.ffn_kind == WFS_FFN_MOE) {
		/*
		 * The timing model's experts are of one width: the routed
		 * experts' mean (wafer_moe_upcycle()'s slices of the dense FFN
		 * differ by a scale group; its copies are the FFN's width).
		 */
		s->n_experts = mi.n_experts;
		s->n_active = mi.n_experts_active;
		s->n_shared = mi.n_shared_experts;
		s->expert_hidden = (unsigned int)((routed + (uint64_t)mi.n_layers * mi.n_experts / 2) /
						  ((uint64_t)mi.n_layers * mi.n_experts));
		if (!s->expert_hidden)
			s->expert_hidden = 1;
		s->moe_every = 1;
	}
	return 0;
}
