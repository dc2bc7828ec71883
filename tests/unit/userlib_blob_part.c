// SPDX-License-Identifier: MIT
/*
 * Unit test: what a chain member is sent to load, its layers' part of the
 * model blob (userlib/lib/wafer_blob_part.c), and the node's checks on a
 * LOAD's blob (wnd_check_part(), userlib/lib/wafer_node_wire.c), on a
 * synthetic Sol-shaped model of 5 layers:
 *
 * - parts at the start, in the middle, at the end and the whole range are
 *   valid blobs: their first_layer, n_layers, input and output kinds, an
 *   embedding only at the start and a head only at the end; each layer's
 *   section is the model's byte for byte but its index; a part is smaller
 *   than the model;
 * - a range beyond the model or of no layer is refused;
 * - a LOAD's blob is refused naming the field when it is not the layers
 *   the LOAD names (first_layer, n_layers), shorter than a header, of
 *   another magic, not the length its header says (total_size), or has a
 *   section out of the blob (an offset that overflows) or a bad byte.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/wafer_blob_part.h"
#include "lib/wafer_node_wire.h"
#include "wafer.h"
#include "wfs_model.h"
#include "wt_util.h"

#define LAYERS 5

static char why[200];

static int rejects(int ret, const char *pattern)
{
	return ret == -EPROTO && strstr(why, pattern);
}

/* Section I of the blob (table entry) into *E. */
static void entry(const unsigned char *b, const struct wfs_model_info *mi, unsigned int i,
		  struct wfs_section_entry *e)
{
	memcpy(e, b + mi->section_table_offset + (size_t)i * sizeof(*e), sizeof(*e));
}

/* Layer L's section in the part equals the model's layer FIRST + L's, but its index. */
static int same_layers(const unsigned char *m, const struct wfs_model_info *mm,
		       const unsigned char *p, const struct wfs_model_info *pm, unsigned int first)
{
	unsigned int l;

	for (l = 0; l < pm->n_layers; l++) {
		struct wfs_section_range a, b;
		struct wfs_section_header ha, hb;

		if (wfs_model_layer_section(mm, m, first + l, &a) ||
		    wfs_model_layer_section(pm, p, l, &b) || a.size != b.size)
			return 0;
		memcpy(&ha, m + a.offset, sizeof(ha));
		memcpy(&hb, p + b.offset, sizeof(hb));
		if (hb.index != l || ha.index != first + l)
			return 0;
		if (memcmp(m + a.offset + sizeof(ha), p + b.offset + sizeof(hb),
			   a.size - sizeof(ha)))
			return 0;
	}
	return 1;
}

static void test_parts(const unsigned char *blob, size_t len, const struct wfs_model_info *mi)
{
	static const unsigned int ranges[][2] = { { 0, 2 }, { 2, 2 }, { 4, 1 }, { 0, LAYERS } };
	unsigned int i;

	for (i = 0; i < sizeof(ranges) / sizeof(ranges[0]); i++) {
		unsigned int first = ranges[i][0], count = ranges[i][1];
		int starts = first == 0, ends = first + count == LAYERS;
		struct wfs_model_info pm;
		unsigned char *p;
		size_t plen;
		int r = wafer_blob_part(blob, mi, first, count, &p, &plen);

		if (!wt_ok(!r, "layers %u+%u: a part%s%s", first, count, r ? ": " : "",
			   r ? wafer_last_error() : ""))
			continue;
		wt_ok(!wfs_model_parse(p, plen, &pm) && pm.first_layer == first &&
		      pm.n_layers == count && pm.total_layers == LAYERS &&
		      pm.input_kind == (starts ? WFS_IO_TOKENS : WFS_IO_ACT) &&
		      pm.output_kind == (ends ? WFS_IO_TOKENS : WFS_IO_ACT) &&
		      !pm.embed.size == !starts && !pm.head.size == !ends,
		      "layers %u+%u: a valid blob of those layers%s%s", first, count,
		      starts ? " +embed" : "", ends ? " +head" : "");
		wt_ok(same_layers(blob, mi, p, &pm, first) &&
		      (!starts || !memcmp(blob + mi->embed.offset, p + pm.embed.offset,
					 mi->embed.size)) &&
		      (!ends || !memcmp(blob + mi->head.offset, p + pm.head.offset, mi->head.size)),
		      "layers %u+%u: its sections are the model's, byte for byte", first, count);
		wt_ok(count == LAYERS ? plen <= len : plen < len, "layers %u+%u: %zu bytes of %zu",
		      first, count, plen, len);
		free(p);
	}
}

static void test_ranges(const unsigned char *blob, const struct wfs_model_info *mi)
{
	unsigned char *p = NULL;
	size_t plen;

	wt_ok(wafer_blob_part(blob, mi, 3, 3, &p, &plen) == -EINVAL && !p &&
	      strstr(wafer_last_error(), "layers 3+3 beyond the blob's 5"),
	      "a range beyond the model is refused: %s", wafer_last_error());
	wt_ok(wafer_blob_part(blob, mi, 5, 1, &p, &plen) == -EINVAL && !p,
	      "a range after the model is refused");
	wt_ok(wafer_blob_part(blob, mi, 2, 0, &p, &plen) == -EINVAL && !p,
	      "a range of no layer is refused");
}

static void test_load_checks(const unsigned char *blob, const struct wfs_model_info *mi)
{
	struct wnd_load ld = { .layer_first = 2, .layer_count = 2 };
	struct wfs_model_info pm;
	struct wfs_section_entry e;
	unsigned char *p;
	uint32_t magic = 0x20544547;
	uint64_t off = UINT64_MAX - 63;
	size_t plen;

	if (!wt_ok(!wafer_blob_part(blob, mi, 2, 2, &p, &plen), "a part of layers 2+2"))
		return;
	wt_ok(!wnd_check_part(&ld, p, plen, &pm, why, sizeof(why)) && pm.n_layers == 2,
	      "a LOAD of layers 2+2 with their part passes");
	ld.layer_first = 1;
	wt_ok(rejects(wnd_check_part(&ld, p, plen, &pm, why, sizeof(why)),
		      "LOAD: the blob's first_layer 2, not the layer_first 1 asked"),
	      "a part of other layers: %s", why);
	ld.layer_first = 2;
	ld.layer_count = 3;
	wt_ok(rejects(wnd_check_part(&ld, p, plen, &pm, why, sizeof(why)),
		      "LOAD: the blob's n_layers 2, not the layer_count 3 asked"),
	      "a part of fewer layers: %s", why);
	ld.layer_count = 2;
	wt_ok(rejects(wnd_check_part(&ld, p, 100, &pm, why, sizeof(why)),
		      "LOAD: blob of 100 bytes, shorter than a model header (256)"),
	      "a blob shorter than a header: %s", why);
	wt_ok(rejects(wnd_check_part(&ld, p, plen - 1, &pm, why, sizeof(why)),
		      "LOAD: the blob's total_size"),
	      "a blob shorter than its header says: %s", why);
	memcpy(p, &magic, 4);
	wt_ok(rejects(wnd_check_part(&ld, p, plen, &pm, why, sizeof(why)),
		      "LOAD: blob magic 0x20544547"), "a blob of another magic: %s", why);
	free(p);

	wafer_blob_part(blob, mi, 2, 2, &p, &plen);
	wfs_model_parse(p, plen, &pm);
	entry(p, &pm, 1, &e);
	memcpy(p + pm.section_table_offset + sizeof(e) + offsetof(struct wfs_section_entry,
								    offset), &off, 8);
	wt_ok(rejects(wnd_check_part(&ld, p, plen, &pm, why, sizeof(why)),
		      "LOAD: the blob is not a valid model"),
	      "a section whose offset overflows: %s", why);
	free(p);
	wafer_blob_part(blob, mi, 2, 2, &p, &plen);
	wfs_model_parse(p, plen, &pm);
	entry(p, &pm, 0, &e);
	p[e.offset + 12] ^= 0x40;	/* the section header's n_tensors */
	wt_ok(rejects(wnd_check_part(&ld, p, plen, &pm, why, sizeof(why)),
		      "LOAD: the blob is not a valid model"),
	      "a section with a bad byte: %s", why);
	free(p);
}

int main(void)
{
	struct wafer_convert_opts c = { .wbits = 8, .group_size = 4 };
	struct wafer_synth_opts sy;
	struct wfs_model_info mi;
	void *blob = NULL;
	size_t len = 0;

	if (!wt_ok(!wafer_synth_preset("sol", &sy, &c.moe), "the sol preset"))
		return wt_done();
	sy.n_layers = LAYERS;
	if (!wt_ok(!wafer_synthesize(&sy, &c, &blob, &len) && !wfs_model_parse(blob, len, &mi),
		   "a synthetic Sol-shaped model of %d layers: %zu bytes", LAYERS, len))
		return wt_done();
	test_parts(blob, len, &mi);
	test_ranges(blob, &mi);
	test_load_checks(blob, &mi);
	free(blob);
	return wt_done();
}
