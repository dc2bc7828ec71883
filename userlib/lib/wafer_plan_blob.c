// SPDX-License-Identifier: MIT
/*
 * libwafer: the shape wafer plan projects, read from a packed blob
 * (wafer_plan_shape_from_blob()): the header firmware-sim parses to load it,
 * and the precision of its layer weights (layer 0's, as firmware-sim binds it).
 */
#include <errno.h>

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

int wafer_plan_shape_from_blob(const void *blob, size_t len, const char *name,
			       struct wafer_plan_shape *s)
{
	struct wfs_model_info mi;
	unsigned int bits = 0;
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
	};
	if (mi.ffn_kind == WFS_FFN_MOE) {
		/* Experts of the dense FFN's width (wafer_moe_upcycle()). */
		s->n_experts = mi.n_experts;
		s->n_active = mi.n_experts_active;
		s->n_shared = mi.n_shared_experts;
		s->expert_hidden = mi.hidden_dim;
		s->moe_every = 1;
	}
	return 0;
}
