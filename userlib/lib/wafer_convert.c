// SPDX-License-Identifier: MIT
/*
 * libwafer: llama2.c checkpoint -> device blob, through firmware-sim's
 * packer (firmware-sim/model/wfs_pack.c).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wafer_internal.h"
#include "wafer.h"
#include "wfs_model.h"
#include "wfs_pack.h"

static void progress(const struct wafer_convert_opts *o, const char *what, double done)
{
	if (o->progress)
		o->progress(o->progress_arg, what, done);
}

static int to_pack_opts(const struct wafer_convert_opts *o, struct wfs_pack_opts *po)
{
	memset(po, 0, sizeof(*po));
	po->wbits = o->wbits ? o->wbits : 8;
	po->group_size = o->group_size ? o->group_size : 32;
	po->kv_int8 = o->kv_int8;
	if (po->wbits != 4 && po->wbits != 8)
		return wafer_set_error(-EINVAL, "weights must be 4 or 8 bits, not %u", po->wbits);
	if (po->group_size > 256 || (po->wbits == 4 && (po->group_size & 1)))
		return wafer_set_error(-EINVAL, "group size %u: must be 1..256 (even for int4)",
				       po->group_size);
	if (o->keep_embed_cls_int8) {
		po->embed_bits = 8;
		po->cls_bits = 8;
	}
	return 0;
}

/* The MoE upcycling of a dense blob in *blob (replaced; freed on failure). */
static int maybe_upcycle(const struct wafer_convert_opts *o, void **blob, size_t *len)
{
	void *dense = *blob;
	size_t dlen = *len;
	int ret;

	if (!o->moe.n_experts)
		return 0;
	progress(o, "upcycling", 0.8);
	ret = wafer_moe_upcycle(dense, dlen, &o->moe, blob, len);
	free(dense);
	if (ret)
		*blob = NULL;
	return ret;
}

/*
 * A packed blob (wafer convert's output) is taken as it is: read whole,
 * checked, upcycled if asked.  1: not a blob (a checkpoint).
 */
static int read_blob(const char *path, const struct wafer_convert_opts *o, void **blob,
		     size_t *len)
{
	uint32_t magic = 0;
	FILE *f = fopen(path, "rb");
	long n;

	if (!f)
		return 1;	/* the checkpoint reader reports it */
	if (fread(&magic, 4, 1, f) != 1 || magic != WFS_BLOB_MAGIC || fseek(f, 0, SEEK_END) ||
	    (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return 1;
	}
	*blob = malloc((size_t)n);
	if (!*blob || fread(*blob, (size_t)n, 1, f) != 1) {
		fclose(f);
		free(*blob);
		*blob = NULL;
		return wafer_set_error(-EIO, "cannot read the blob %s", path);
	}
	fclose(f);
	*len = (size_t)n;
	return maybe_upcycle(o, blob, len);
}

/* Packs @ck (named @what in errors) and upcycles it as @o says. */
int wafer_convert_ckpt(const struct wfs_ckpt *ck, const struct wafer_convert_opts *o,
		       const char *what, void **blob, size_t *len)
{
	struct wfs_pack_opts po;
	int ret = to_pack_opts(o, &po);

	if (ret)
		return ret;
	progress(o, "quantising", 0.3);
	ret = wfs_pack(ck, &po, blob, len);
	if (ret)
		return wafer_set_error(ret, "converting %s to int%u (group %u) failed: %s",
				       what, po.wbits, po.group_size, wafer_strerror(ret));
	ret = maybe_upcycle(o, blob, len);
	if (ret)
		return ret;
	progress(o, "converted", 1.0);
	return 0;
}

int wafer_convert(const char *ckpt_path, const struct wafer_convert_opts *opts,
		  void **blob, size_t *len)
{
	struct wafer_convert_opts def = { 0 };
	const struct wafer_convert_opts *o = opts ? opts : &def;
	struct wfs_pack_opts po;
	struct wfs_ckpt ck;
	int ret;

	if (!ckpt_path || !blob || !len)
		return wafer_set_error(-EINVAL, "wafer_convert: NULL argument");
	ret = to_pack_opts(o, &po);
	if (ret)
		return ret;
	ret = read_blob(ckpt_path, o, blob, len);
	if (ret <= 0)
		return ret;
	progress(o, "reading", 0.0);
	ret = wfs_ckpt_load(ckpt_path, &ck);
	if (ret)
		return wafer_set_error(ret, "cannot read the llama2.c checkpoint %s: %s%s",
				       ckpt_path, wafer_strerror(ret),
				       ret == -EINVAL ? " (bad header dimensions)" : "");
	if (o->early_layers > (unsigned int)ck.n_layers) {
		int layers = ck.n_layers;

		wfs_ckpt_free(&ck);
		return wafer_set_error(-EINVAL, "early_layers %u: %s has %d layers", o->early_layers,
				       ckpt_path, layers);
	}
	/* Layer tensors are [L][...]: the first N are the same arrays, shorter. */
	if (o->early_layers)
		ck.n_layers = (int)o->early_layers;
	ret = wafer_convert_ckpt(&ck, o, ckpt_path, blob, len);
	wfs_ckpt_free(&ck);
	return ret;
}
