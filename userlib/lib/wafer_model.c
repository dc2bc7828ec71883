// SPDX-License-Identifier: MIT
/* libwafer: loading models into stage SRAM and unloading them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wafer_backend.h"
#include "wfs_model.h"

/* The dimensions, from the blob. */
static void model_info(struct wafer_model *m, const struct wfs_model_info *mi, size_t len)
{
	m->info.dim = mi->dim;
	m->info.hidden_dim = mi->hidden_dim;
	m->info.n_layers = mi->n_layers;
	m->info.n_heads = mi->n_heads;
	m->info.n_kv_heads = mi->n_kv_heads;
	m->info.vocab_size = mi->vocab_size;
	m->info.seq_len = mi->seq_len;
	m->info.n_experts = mi->n_experts;
	m->info.n_experts_active = mi->n_experts_active;
	m->info.n_shared_experts = mi->n_shared_experts;
	m->info.moe_gate = mi->gate_kind;
	m->info.blob_bytes = len;
}

/* The backend load; a streamed model keeps @bo (*@kept), else it goes. */
static int load_hw(struct wafer_dev *dev, const void *blob, size_t len, int stream,
		   struct wafer_load_hw *ld, struct wafer_bo **kept)
{
	struct wafer_bo *bo;
	int ret;

	*kept = NULL;
	if (stream && !(dev->info.caps & WAFER_CAP_WEIGHT_STREAM))
		return wafer_set_error(-EOPNOTSUPP, "the driver cannot stream weights "
				       "(no WAFER_CAP_WEIGHT_STREAM)");
	ret = wafer_bo_create(dev, len, &bo);
	if (ret)
		return ret;
	memcpy(wafer_bo_map(bo), blob, len);
	ld->stream = stream;
	ret = dev->ops->model_load(dev, bo, len, ld);
	if (!ret && stream)
		*kept = bo;	/* the device reads the weights from it */
	else
		wafer_bo_destroy(bo);	/* the device keeps its own copy */
	return ret;
}

/*
 * WAFER_STREAM_AUTO: resident, else (-ENOSPC) streamed; if that fails too,
 * the resident error stands, with what streaming said after it.
 */
static int load_auto(struct wafer_dev *dev, const void *blob, size_t len,
		     struct wafer_load_hw *ld, struct wafer_bo **kept, int *fallback)
{
	char resident[256], streamed[256];
	int ret = load_hw(dev, blob, len, 0, ld, kept);

	*fallback = 0;
	if (ret != -ENOSPC || !(dev->info.caps & WAFER_CAP_WEIGHT_STREAM))
		return ret;
	snprintf(resident, sizeof(resident), "%s", wafer_last_error());
	ret = load_hw(dev, blob, len, 1, ld, kept);
	if (!ret) {
		*fallback = 1;
		return 0;
	}
	snprintf(streamed, sizeof(streamed), "%s", wafer_last_error());
	return wafer_set_error(ret, "%s; streaming the weights: %s", resident, streamed);
}

/* wafer_model_load_stream() with @expert_group (struct wafer_convert_opts). */
static int model_load(struct wafer_dev *dev, const void *blob, size_t len, int stream,
		      unsigned int expert_group, struct wafer_model **out)
{
	struct wafer_load_hw ld = { .expert_group = expert_group };	/* every layer */
	struct wafer_bo *kept = NULL;
	struct wfs_model_info mi;
	struct wafer_model *m;
	int ret, fallback = 0;

	if (!dev || !blob || !out)
		return wafer_set_error(-EINVAL, "wafer_model_load: NULL argument");
	*out = NULL;
	if (stream < WAFER_STREAM_OFF || stream > WAFER_STREAM_ON)
		return wafer_set_error(-EINVAL, "wafer_model_load_stream: stream %d is not "
				       "WAFER_STREAM_OFF, _AUTO or _ON", stream);
	ret = wfs_model_parse(blob, len, &mi);
	if (ret)
		return wafer_set_error(ret, "the model blob is not valid (%s%s%s)", wafer_strerror(ret),
				       mi.bad_field ? ": " : "", mi.bad_field ? mi.bad_field : "");
	if (mi.input_kind != WFS_IO_TOKENS || mi.output_kind != WFS_IO_TOKENS)
		return wafer_set_error(-EOPNOTSUPP, "layer-range blobs are not supported yet");
	m = calloc(1, sizeof(*m));
	if (!m)
		return wafer_set_error(-ENOMEM, "out of memory");
	if (stream == WAFER_STREAM_AUTO)
		ret = load_auto(dev, blob, len, &ld, &kept, &fallback);
	else
		ret = load_hw(dev, blob, len, stream == WAFER_STREAM_ON, &ld, &kept);
	if (ret) {
		free(m);
		return ret;
	}
	m->dev = dev;
	m->id = ld.id;
	m->stream_bo = kept;
	m->info.weights_streamed = kept != NULL;
	m->info.stream_fallback = fallback;
	m->info.sram_bytes = ld.sram_bytes;
	m->embed = ld.embed;
	m->head = ld.head;
	model_info(m, &mi, len);
	*out = m;
	return 0;
}

int wafer_model_load_stream(struct wafer_dev *dev, const void *blob, size_t len,
			    int stream, struct wafer_model **out)
{
	return model_load(dev, blob, len, stream, 0, out);
}

int wafer_model_load(struct wafer_dev *dev, const void *blob, size_t len,
		     struct wafer_model **out)
{
	return wafer_model_load_stream(dev, blob, len, WAFER_STREAM_OFF, out);
}

int wafer_model_load_file(struct wafer_dev *dev, const char *ckpt_path,
			  const struct wafer_convert_opts *opts, struct wafer_model **out)
{
	void *blob;
	size_t len;
	int ret;

	if (out)
		*out = NULL;
	ret = wafer_convert(ckpt_path, opts, &blob, &len);
	if (ret)
		return ret;
	ret = model_load(dev, blob, len, opts ? opts->stream : 0,
			 opts ? opts->expert_group : 0, out);
	free(blob);
	return ret;
}

const struct wafer_model_info *wafer_model_get_info(const struct wafer_model *m)
{
	return &m->info;
}

unsigned int wafer_model_parts(const struct wafer_model *m)
{
	if (!m->dev->ops->model_parts)
		return 1;
	return (unsigned int)m->dev->ops->model_parts(m->dev, m->id, NULL, 0);
}

int wafer_model_part(const struct wafer_model *m, unsigned int i, struct wafer_model_part *p)
{
	struct wafer_model_part parts[WAFER_PIPE_MAX_DEVICES];
	unsigned int n = 1;

	if (!m || !p)
		return wafer_set_error(-EINVAL, "wafer_model_part: NULL argument");
	if (m->dev->ops->model_parts) {
		n = (unsigned int)m->dev->ops->model_parts(m->dev, m->id, parts,
							   WAFER_PIPE_MAX_DEVICES);
	} else {
		parts[0] = (struct wafer_model_part){
			.member = 0, .device_index = m->dev->index,
			.layer_first = 0, .layer_count = m->info.n_layers,
			.sram_bytes = m->info.sram_bytes, .kv_bytes = m->kv_bytes,
			.embed = m->embed, .head = m->head,
		};
	}
	if (i >= n)
		return wafer_set_error(-EINVAL, "layer range %u: the model has %u", i, n);
	*p = parts[i];
	return 0;
}

void wafer_model_unload(struct wafer_model *m)
{
	if (!m)
		return;
	/* A failure leaves the device with the model until the device is closed. */
	if (!m->contexts)
		m->dev->ops->model_unload(m->dev, m->id);
	/* Kept (device reads) only if the unload failed: the device may stream. */
	if (m->stream_bo && !m->contexts)
		wafer_bo_destroy(m->stream_bo);
	free(m);
}
