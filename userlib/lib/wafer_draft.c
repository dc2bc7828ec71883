// SPDX-License-Identifier: MIT
/*
 * libwafer: speculative decoding's draft models, by name ("ngram[:N]",
 * "int4", "early:N", a checkpoint path) and converted for a target: the
 * target's checkpoint at int4, its first N layers with its classifier, or
 * another checkpoint, always with the target's vocabulary.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wafer_backend.h"
#include "wfs_model.h"

#define NGRAM_DEFAULT	3
#define NGRAM_MAX	16

/* "N" in [lo, hi]; 0 or -1. */
static int parse_uint(const char *s, unsigned int lo, unsigned int hi, unsigned int *out)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	v = strtoul(s, &end, 10);
	if (*end || v < lo || v > hi)
		return -1;
	*out = (unsigned int)v;
	return 0;
}

int wafer_draft_parse(const char *s, struct wafer_draft_spec *out)
{
	if (!s || !out)
		return wafer_set_error(-EINVAL, "wafer_draft_parse: NULL argument");
	memset(out, 0, sizeof(*out));
	if (!strcmp(s, "ngram")) {
		out->kind = WAFER_DRAFT_NGRAM;
		out->n = NGRAM_DEFAULT;
	} else if (!strncmp(s, "ngram:", 6)) {
		out->kind = WAFER_DRAFT_NGRAM;
		if (parse_uint(s + 6, 1, NGRAM_MAX, &out->n))
			return wafer_set_error(-EINVAL, "draft '%s': ngram:N takes N in 1..%d", s,
					       NGRAM_MAX);
	} else if (!strcmp(s, "int4")) {
		out->kind = WAFER_DRAFT_INT4;
	} else if (!strncmp(s, "early:", 6) || !strcmp(s, "early")) {
		out->kind = WAFER_DRAFT_EARLY;
		if (parse_uint(s + (s[5] ? 6 : 5), 1, 4096, &out->n))
			return wafer_set_error(-EINVAL, "draft '%s': early:N takes a layer count "
					       "N >= 1", s);
	} else if (*s) {
		out->kind = WAFER_DRAFT_FILE;
		out->path = s;
	} else {
		return wafer_set_error(-EINVAL, "draft '': give ngram[:N], int4, early:N or a "
				       "checkpoint");
	}
	return 0;
}

int wafer_draft_load(struct wafer_dev *dev, const struct wafer_draft_spec *d,
		     const char *target_ckpt, const struct wafer_convert_opts *target_conv,
		     const struct wafer_model *target, struct wafer_model **out)
{
	struct wafer_convert_opts c = { 0 };
	const char *path = target_ckpt;
	struct wfs_model_info mi;
	void *blob;
	size_t len;
	int ret;

	if (!dev || !d || !target || !out || (d->kind != WAFER_DRAFT_FILE && !target_ckpt))
		return wafer_set_error(-EINVAL, "wafer_draft_load: NULL argument");
	*out = NULL;
	if (target_conv)
		c = *target_conv;
	c.early_layers = 0;
	switch (d->kind) {
	case WAFER_DRAFT_INT4:
		c.wbits = 4;
		c.keep_embed_cls_int8 = 0;
		break;
	case WAFER_DRAFT_EARLY:
		/* all layers would be the target itself */
		if (d->n < 1 || d->n >= target->info.n_layers)
			return wafer_set_error(-EINVAL, "draft early:%u: the target has %u layers, "
					       "so N must be 1..%u", d->n, target->info.n_layers,
					       target->info.n_layers - 1);
		c.early_layers = d->n;
		break;
	case WAFER_DRAFT_FILE:
		if (!d->path)
			return wafer_set_error(-EINVAL, "draft: no checkpoint path");
		path = d->path;
		break;
	case WAFER_DRAFT_NGRAM:
		return wafer_set_error(-EINVAL, "the n-gram draft has no model to load");
	default:
		return wafer_set_error(-EINVAL, "draft kind %d unknown", (int)d->kind);
	}
	ret = wafer_convert(path, &c, &blob, &len);
	if (ret)
		return wafer_prefix_error(ret, "draft %s", path);
	/* Checked before the device sees it: a wrong draft loads nothing. */
	ret = wfs_model_parse(blob, len, &mi);
	if (ret)
		ret = wafer_set_error(ret, "draft %s: the converted blob does not parse", path);
	else if (mi.vocab_size != target->info.vocab_size)
		ret = wafer_set_error(-EINVAL, "draft %s: a vocabulary of %u tokens, the target's "
				      "has %u (a draft must share the target's vocabulary)", path,
				      mi.vocab_size, target->info.vocab_size);
	else
		ret = wafer_model_load(dev, blob, len, out);
	free(blob);
	return ret;
}

int wafer_draft_load_beside(const struct wafer_draft_spec *d, const char *target_ckpt,
			    const struct wafer_convert_opts *target_conv,
			    const struct wafer_model *target, struct wafer_model **out)
{
	struct wafer_info info;
	struct wafer_dev *dev;
	int ret;

	if (!target || !out)
		return wafer_set_error(-EINVAL, "wafer_draft_load_beside: NULL argument");
	dev = target->dev;
	if (wafer_pipe_size(dev) != 1)
		return wafer_set_error(-EOPNOTSUPP, "the draft beside a target over %u devices",
				       wafer_pipe_size(dev));
	ret = wafer_query(dev, &info);
	if (ret)
		return ret;
	if (info.max_models < 2)
		return wafer_set_error(-EOPNOTSUPP, "the target's device holds one model at once "
				       "(max_models %u)", info.max_models);
	return wafer_draft_load(dev, d, target_ckpt, target_conv, target, out);
}
