// SPDX-License-Identifier: MIT
/* libwafer: a layer range's part of a model blob (wafer_blob_part.h). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wafer.h"
#include "wafer_internal.h"
#include "wafer_blob_part.h"
#include "wfs_model.h"

static uint64_t align_up(uint64_t x)
{
	return (x + WFS_SECTION_ALIGN - 1) & ~(uint64_t)(WFS_SECTION_ALIGN - 1);
}

int wafer_blob_part(const void *blob, const struct wfs_model_info *info, unsigned int first,
		     unsigned int count, unsigned char **out, size_t *out_len)
{
	struct wfs_section_range *r = NULL;
	struct wfs_model_info mi = *info;
	struct wfs_section_entry se;
	struct wfs_blob_header h;
	unsigned int embed, head, nsec, i;
	uint64_t table, at, total;
	unsigned char *p = NULL;
	int err;

	*out = NULL;
	*out_len = 0;
	if (!count || first >= mi.n_layers || count > mi.n_layers - first)
		return wafer_set_error(-EINVAL, "model part: layers %u+%u beyond the blob's %u",
				       first, count, mi.n_layers);
	embed = first == 0 && mi.input_kind == WFS_IO_TOKENS;
	head = first + count == mi.n_layers && mi.output_kind == WFS_IO_TOKENS;
	nsec = embed + count + head;
	r = calloc(nsec, sizeof(*r));
	if (!r)
		return wafer_set_error(-ENOMEM, "out of memory");
	i = 0;
	if (embed)
		r[i++] = (struct wfs_section_range){ mi.embed.offset, mi.embed.size };
	for (; i < embed + count; i++)
		if (wfs_model_layer_section(&mi, blob, first + i - embed, &r[i])) {
			err = wafer_set_error(-EINVAL, "model part: layer %u's section",
					      first + i - embed);
			goto out;
		}
	if (head)
		r[i++] = (struct wfs_section_range){ mi.head.offset, mi.head.size };

	memcpy(&h, blob, sizeof(h));
	table = align_up(h.header_size);
	at = align_up(table + (uint64_t)nsec * sizeof(se));
	total = at;
	for (i = 0; i < nsec; i++)
		total = align_up(total) + r[i].size;
	p = calloc(1, total);
	if (!p) {
		err = wafer_set_error(-ENOMEM, "out of memory for a %llu-byte part",
				      (unsigned long long)total);
		goto out;
	}
	for (i = 0; i < nsec; i++) {
		int layer = i >= embed && i < embed + count;

		at = align_up(at);
		se = (struct wfs_section_entry){
			.kind = layer ? WFS_SEC_LAYER : i < embed ? WFS_SEC_EMBED : WFS_SEC_HEAD,
			.index = layer ? i - embed : 0, .offset = at, .size = r[i].size };
		memcpy(p + table + (uint64_t)i * sizeof(se), &se, sizeof(se));
		memcpy(p + at, (const unsigned char *)blob + r[i].offset, r[i].size);
		/* The section header's index is its place in this blob. */
		memcpy(p + at + offsetof(struct wfs_section_header, index), &se.index,
		       sizeof(se.index));
		at += r[i].size;
	}
	h.total_size = total;
	h.n_sections = nsec;
	h.section_table_offset = table;
	h.n_layers = count;
	h.first_layer = mi.first_layer + first;
	if (first)
		h.input_kind = WFS_IO_ACT;
	if (first + count < mi.n_layers)
		h.output_kind = WFS_IO_ACT;
	h.checksum = 0;
	if (h.flags & WFS_MF_CHECKSUM)
		h.checksum = wfs_fnv1a32(p + h.header_size, total - h.header_size);
	memcpy(p, blob, h.header_size);
	memcpy(p, &h, sizeof(h));
	if (wfs_model_parse(p, total, &mi)) {
		err = wafer_set_error(-EINVAL, "model part: layers %u+%u make no valid blob (%s)",
				      first, count, mi.bad_field ? mi.bad_field : "?");
		goto out;
	}
	*out = p;
	*out_len = total;
	p = NULL;
	err = 0;
out:
	free(p);
	free(r);
	return err;
}
