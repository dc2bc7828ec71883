/* SPDX-License-Identifier: MIT */
/*
 * A layer range's part of a model blob, itself a blob (firmware-sim's
 * format allows it: first_layer, total_layers, activation records in or
 * out): what a chain member is sent to load, rather than the whole model.
 */
#ifndef WAFER_BLOB_PART_H
#define WAFER_BLOB_PART_H

#include <stddef.h>

struct wfs_model_info;

/*
 * The part of blob BLOB, which wfs_model_parse() found valid (INFO), holding its layers FIRST ..
 * FIRST + COUNT - 1 alone, in a new allocation *OUT of *OUT_LEN bytes
 * (free()): those layers' sections byte for byte (each renumbered within
 * the part), the embedding when the range starts the blob, the head when
 * it ends it; the header's first_layer, n_layers, input and output kinds,
 * sections and checksum its own.  0, or -errno with wafer_last_error().
 */
int wafer_blob_part(const void *blob, const struct wfs_model_info *info, unsigned int first,
		     unsigned int count, unsigned char **out, size_t *out_len);

#endif /* WAFER_BLOB_PART_H */
