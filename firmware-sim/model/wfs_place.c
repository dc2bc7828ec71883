// SPDX-License-Identifier: MIT
/*
 * wfs_place.c - layer-to-stage placement (see wfs_place.h).
 */
#include "wfs_place.h"

static u64 sat_add(u64 a, u64 b)
{
	u64 r;

	return WFS_ADD_OVF(a, b, &r) ? ~(u64)0 : r;
}

static void plan_balanced(const struct wfs_map_input *in, struct wfs_map *m)
{
	u32 used = WFS_MIN(in->n_layers, in->n_stages);
	u32 base = in->n_layers / used, extra = in->n_layers % used;
	u32 s, l, layer = 0;

	m->stages_used = used;
	m->greedy = 0;
	m->total_bytes = 0;
	m->max_stage_bytes = 0;
	for (s = 0; s < used; s++) {
		u64 need = in->stage_fixed;

		m->first_layer[s] = layer;
		m->n_layers[s] = base + (s < extra);
		for (l = 0; l < m->n_layers[s]; l++)
			need = sat_add(need, in->layer_bytes[layer + l]);
		layer += m->n_layers[s];
		if (s == 0)
			need = sat_add(need, in->embed_bytes);
		if (s == used - 1)
			need = sat_add(need, in->head_bytes);
		m->need[s] = need;
		m->total_bytes = sat_add(m->total_bytes, need);
		if (need > m->max_stage_bytes)
			m->max_stage_bytes = need;
	}
}

/*
 * Greedy first fit over [embed, layers..., head].  Keeps counting stages
 * past n_stages so the caller can report how many would be needed.
 * Returns 0 if it fits in n_stages.
 */
static int plan_greedy(const struct wfs_map_input *in, struct wfs_map *m)
{
	u32 n_items = in->n_layers + 2, i, s = 0, items_here = 0, too_big = 0;
	u64 cur = in->stage_fixed, total = 0;

	m->greedy = 1;
	m->first_layer[0] = 0;
	m->n_layers[0] = 0;
	for (i = 0; i < n_items; i++) {
		u32 is_layer = i >= 1 && i <= in->n_layers;
		u64 b = i == 0 ? in->embed_bytes :
			is_layer ? in->layer_bytes[i - 1] : in->head_bytes;

		if (!is_layer && b == 0)
			continue;
		/* An item that fits no stage: keep counting the bytes. */
		if (sat_add(in->stage_fixed, b) > in->capacity)
			too_big = 1;
		if (items_here && sat_add(cur, b) > in->capacity) {
			total = sat_add(total, cur);
			s++;
			cur = in->stage_fixed;
			items_here = 0;
			if (s < WFS_MAX_STAGES) {
				m->first_layer[s] = is_layer ? i - 1 :
						    i == 0 ? 0 : in->n_layers;
				m->n_layers[s] = 0;
			}
		}
		cur = sat_add(cur, b);
		items_here++;
		if (s < WFS_MAX_STAGES) {
			if (is_layer)
				m->n_layers[s]++;
			m->need[s] = cur;
		}
	}
	total = sat_add(total, cur);
	m->stages_needed = too_big ? 0 : s + 1;
	m->total_bytes = total;
	if (too_big || s + 1 > in->n_stages)
		return -WFS_ENOSPC;
	m->stages_used = s + 1;
	return 0;
}

int wfs_place(const struct wfs_map_input *in, struct wfs_map *out)
{
	u64 balanced_max;
	u32 s;
	int ret;

	WFS_MEMSET(out, 0, sizeof(*out));
	if (in->n_layers < 1 || in->n_layers > WFS_DEV_MAX_LAYERS ||
	    in->n_stages < 1 || in->n_stages > WFS_MAX_STAGES ||
	    !in->layer_bytes)
		return -WFS_EINVAL;

	plan_balanced(in, out);
	balanced_max = out->max_stage_bytes;
	if (balanced_max <= in->capacity)
		return 0;

	/* Greedy needs a clean table: it writes entries as it goes. */
	WFS_MEMSET(out, 0, sizeof(*out));
	ret = plan_greedy(in, out);
	out->max_stage_bytes = balanced_max;
	if (ret) {
		out->stages_used = 0;
		return ret;
	}
	for (s = out->stages_used; s < WFS_MAX_STAGES; s++) {
		out->first_layer[s] = 0;
		out->n_layers[s] = 0;
		out->need[s] = 0;
	}
	return 0;
}
