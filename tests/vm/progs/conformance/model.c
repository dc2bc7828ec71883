// SPDX-License-Identifier: MIT
/*
 * conformance: MODEL_LOAD and MODEL_UNLOAD.
 */
#include "conformance.h"

struct corrupt {
	const char *name;
	size_t off;		/* byte offset in the blob, or SIZE_MAX */
	unsigned int width;	/* 4 or 8 */
	uint64_t val;
	int add;		/* add val instead of setting */
	int want;
};

#define HDR(f)	offsetof(struct wfs_blob_header, f)

/* MODEL_LOAD with every output member poisoned and the inputs given. */
int model_load_poisoned(int fd, uint32_t bo, uint64_t offset, uint32_t first,
			uint32_t count, struct drm_wafer_model_load *ml)
{
	memset(ml, POISON, sizeof(*ml));
	ml->bo_handle = bo;
	ml->flags = 0;
	ml->part = 0;
	ml->bo_offset = offset;
	ml->blob_size = blob_len;
	ml->layer_first = first;
	ml->layer_count = count;
	ml->expert_group = 0;
	ml->expert_first = 0;
	ml->expert_count = 0;
	return ioc(fd, DRM_IOCTL_WAFER_MODEL_LOAD, ml);
}

/*
 * Weight streaming where the model fits: it loads, says so, and unloads
 * (the driver frees the blob copy it kept for the firmware to read).
 */
static void test_model_load_stream(int fa, struct bo *b)
{
	struct drm_wafer_model_unload u = { 0 };
	struct drm_wafer_model_load ml;
	int ret;

	wt_ok(info.caps & DRM_WAFER_CAP_WEIGHT_STREAM && info.stream_bytes_per_cycle,
	      "GET_INFO caps has DRM_WAFER_CAP_WEIGHT_STREAM, stream_bytes_per_cycle %u",
	      info.stream_bytes_per_cycle);
	memcpy(b->map, blob, blob_len);
	memset(&ml, 0xa5, sizeof(ml));
	ml = (struct drm_wafer_model_load){ .bo_handle = b->handle, .blob_size = blob_len,
					    .flags = DRM_WAFER_LOAD_STREAM,
					    .sram_needed = POISON64, .model_id = POISON32 };
	ret = ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml);
	expect(ret, 0, "MODEL_LOAD DRM_WAFER_LOAD_STREAM");
	wt_ok(!ret && ml.model_flags == (DRM_WAFER_MODEL_EMBED | DRM_WAFER_MODEL_HEAD |
					 DRM_WAFER_MODEL_STREAM) && ml.n_layers == 5,
	      "MODEL_LOAD streaming output: model_flags 0x%x has DRM_WAFER_MODEL_STREAM",
	      ml.model_flags);
	u.model_id = ret ? 0 : ml.model_id;
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), 0, "MODEL_UNLOAD a streaming model");
}

/*
 * A second model beside the first (the device holds several as far as
 * SRAM allows): of the same file, then of another file, each unloaded
 * again with the first left loaded.
 */
static void test_model_load_beside(int fa, int fb, struct bo *b, uint32_t first)
{
	struct drm_wafer_model_load ml = { .bo_handle = b->handle, .bo_offset = 8,
					   .blob_size = blob_len };
	struct drm_wafer_model_unload u = { 0 };
	struct drm_wafer_device_info d;
	uint32_t other;
	int ret;

	ret = ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml);
	expect(ret, 0, "MODEL_LOAD a second model on the same file (beside the first)");
	wt_ok(!ret && ml.model_id && ml.model_id != first && ml.n_layers == 5,
	      "MODEL_LOAD second model: its own id %u (first %u), %u layers", ml.model_id,
	      first, ml.n_layers);
	ret = ret ? ret : info_of(fa, ml.model_id, &d);
	expect(ret, 0, "GET_INFO model_id of the second model");
	wt_ok(!ret && d.model_id == ml.model_id && d.model_sram_bytes == ml.sram_needed &&
	      d.model_layers == 5 && d.model_flags == ml.model_flags && d.model_max_ctx > 0 &&
	      d.model_kv_bytes_per_pos > 0 && d.models_loaded == 2,
	      "GET_INFO of the second model: model_id %u, sram %" PRIu64 " == sram_needed, "
	      "%u layers, models_loaded %u", d.model_id, (uint64_t)d.model_sram_bytes,
	      d.model_layers, d.models_loaded);
	ret = info_of(fa, 0, &d);
	wt_ok(!ret && d.model_id == first,
	      "GET_INFO model_id 0 describes the file's first model (%u, got %u)", first,
	      d.model_id);
	expect(info_of(fb, ml.model_id, &d), -ENOENT, "GET_INFO another file's model_id (isolation)");
	u.model_id = ml.model_id;
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), 0,
	       "MODEL_UNLOAD the second model (the first stays)");
	expect(info_of(fa, ml.model_id, &d), -ENOENT, "GET_INFO model_id of an unloaded model");
	ret = info_of(fa, first, &d);
	wt_ok(!ret && d.model_id == first && d.models_loaded == 1,
	      "GET_INFO of the first model after the second's unload (models_loaded %u)",
	      d.models_loaded);

	other = load_model(fb, &ret);
	expect(ret, 0, "MODEL_LOAD from another file beside this file's model");
	u.model_id = other;
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), -ENOENT,
	       "MODEL_UNLOAD another file's second model (isolation)");
	if (other)
		expect(ioc(fb, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), 0,
		       "MODEL_UNLOAD the other file's model (this file's stays)");
}

/*
 * part and expert_group (the former padding): values the driver refuses
 * before the firmware sees them, and expert groups on the dense test model,
 * which the firmware loads and the driver then refuses (and unloads).
 */
static void test_model_load_bad_parts(int fa, uint32_t bo)
{
	static const struct {
		uint32_t flags, part, group;
		const char *name;
	} c[] = {
		{ 0, DRM_WAFER_PART_MAX + 1, 0, "part 5 (unknown)" },
		{ 0, 0xffffffffu, 0, "part 0xffffffff" },
		{ DRM_WAFER_LOAD_STREAM, DRM_WAFER_PART_ATTN, 0, "part ATTN with LOAD_STREAM" },
		{ DRM_WAFER_LOAD_STREAM, DRM_WAFER_PART_FFN, 0, "part FFN with LOAD_STREAM" },
		{ 0, 0, DRM_WAFER_MAX_EXPERT_GROUP + 1, "expert_group 513 (above the most)" },
		{ 0, 0, 0xffffffffu, "expert_group 0xffffffff" },
		{ DRM_WAFER_LOAD_STREAM, 0, 2, "expert_group 2 with LOAD_STREAM" },
		{ 0, DRM_WAFER_PART_ATTN, 2, "expert_group 2 on an attention part" },
		{ 0, 0, 2, "expert_group 2 on a dense model" },
		{ 0, DRM_WAFER_PART_FFN, 1, "expert_group 1 on a dense model's FFN part" },
	};
	struct drm_wafer_model_load ml;
	struct drm_wafer_model_unload u = { 0 };
	size_t i;
	int ret;

	wt_ok((info.caps & DRM_WAFER_CAP_LAYER_PARTS) && (info.caps & DRM_WAFER_CAP_EXPERT_GROUPS),
	      "GET_INFO caps has DRM_WAFER_CAP_LAYER_PARTS and DRM_WAFER_CAP_EXPERT_GROUPS "
	      "(firmware 1.%u)", info.fw_version_minor);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		ml = (struct drm_wafer_model_load){ .bo_handle = bo, .blob_size = blob_len,
			.flags = c[i].flags, .part = c[i].part, .expert_group = c[i].group };
		ret = ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml);
		expect(ret, -EINVAL, "MODEL_LOAD %s", c[i].name);
		u.model_id = ml.model_id;
		if (!ret)
			ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u);
	}
}

void test_model_load(int fa, int fb, uint32_t *model_id)
{
	const struct wfs_blob_header *h = blob;
	size_t sec0 = h->section_table_offset;
	struct corrupt cases[] = {
		{ "magic", HDR(magic), 4, 0x12345678, 0, -EINVAL },
		{ "version_major 2", HDR(version_major), 2, 2, 0, -EPROTO },
		{ "header_size 128", HDR(header_size), 4, 128, 0, -EINVAL },
		{ "flags bit 3 (reserved: weight streaming)", HDR(flags), 4, 1u << 3, 1, -EOPNOTSUPP },
		{ "flags bit 31", HDR(flags), 4, 1u << 31, 1, -EOPNOTSUPP },
		{ "total_size + 64", HDR(total_size), 8, 64, 1, -EINVAL },
		{ "checksum set without the checksum flag", HDR(checksum), 4, 1, 0, -EINVAL },
		{ "n_sections + 1", HDR(n_sections), 4, 1, 1, -EINVAL },
		{ "section_table_offset 2^63", HDR(section_table_offset), 8, 1ull << 63, 0, -EINVAL },
		{ "section_table_offset misaligned", HDR(section_table_offset), 8, 8, 1, -EINVAL },
		{ "dim 0", HDR(dim), 4, 0, 0, -EINVAL },
		{ "dim 2^31", HDR(dim), 4, 1u << 31, 0, -EINVAL },
		{ "hidden_dim 0", HDR(hidden_dim), 4, 0, 0, -EINVAL },
		{ "n_layers 0", HDR(n_layers), 4, 0, 0, -EINVAL },
		{ "n_layers 0xffffffff", HDR(n_layers), 4, 0xffffffffu, 0, -EINVAL },
		{ "n_heads 0", HDR(n_heads), 4, 0, 0, -EINVAL },
		{ "n_kv_heads 0", HDR(n_kv_heads), 4, 0, 0, -EINVAL },
		{ "head_size odd", HDR(head_size), 4, 1, 1, -EINVAL },
		{ "vocab_size 0", HDR(vocab_size), 4, 0, 0, -EINVAL },
		{ "vocab_size 2^31", HDR(vocab_size), 4, 1u << 31, 0, -EINVAL },
		{ "first_layer 1 with token input", HDR(first_layer), 4, 1, 0, -EINVAL },
		{ "input_kind 7", HDR(input_kind), 4, 7, 0, -EINVAL },
		{ "ffn_kind 1 (MoE) without the MoE flag", HDR(ffn_kind), 4, 1, 0, -EINVAL },
		{ "n_experts 8 on a dense model", HDR(n_experts), 4, 8, 0, -EINVAL },
		{ "reserved[0] != 0", HDR(reserved), 4, 1, 0, -EINVAL },
		{ "reserved[36] != 0", HDR(reserved) + 36 * 4, 4, 1, 0, -EINVAL },
		{ "section[0].kind", sec0 + 0, 4, 9, 0, -EINVAL },
		{ "section[0].index", sec0 + 4, 4, 3, 0, -EINVAL },
		{ "section[0].offset past the blob", sec0 + 8, 8, blob_len, 0, -EINVAL },
		{ "section[0].offset 2^64-64 (wraps)", sec0 + 8, 8, ~63ull, 0, -EINVAL },
		{ "section[0].size 2^64-64 (wraps)", sec0 + 16, 8, ~63ull, 0, -EINVAL },
		{ "section[0].reserved", sec0 + 24, 4, 1, 0, -EINVAL },
	};
	struct drm_wafer_model_load ml;
	struct bo b;
	uint32_t foreign, i;
	size_t bo_size = (blob_len + 4096 + 4095) & ~(size_t)4095;
	int ret;

	/* One BO, big enough for the blob at offset 0 and at offset 8 with slack. */
	ret = bo_new(fa, &b, bo_size);
	if (!expect(ret, 0, "BO for the model blob (%zu bytes)", blob_len))
		return;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct corrupt *k = &cases[i];
		unsigned char *dst = b.map;
		uint64_t v = 0;

		memcpy(dst, blob, blob_len);
		memcpy(&v, dst + k->off, k->width);
		v = k->add ? v + k->val : k->val;
		memcpy(dst + k->off, &v, k->width);
		ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = blob_len };
		expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), k->want,
		       "MODEL_LOAD corrupt blob: %s", k->name);
	}
	/* The first section's own header. */
	{
		struct { uint32_t kind, index; uint64_t offset, size; uint32_t r[2]; } se;

		memcpy(b.map, blob, blob_len);
		memcpy(&se, (char *)blob + sec0, sizeof(se));
		((unsigned char *)b.map)[se.offset] ^= 0xff;
		ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = blob_len };
		expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL,
		       "MODEL_LOAD corrupt blob: section 0 header magic");
	}
	/* Checksummed blob with one payload byte flipped. */
	memcpy(b.map, blob_ck, blob_ck_len);
	((unsigned char *)b.map)[blob_ck_len - 1] ^= 1;
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = blob_ck_len };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EBADMSG,
	       "MODEL_LOAD corrupt blob: checksum mismatch (last byte flipped)");

	/* Truncated blobs. */
	memcpy(b.map, blob, blob_len);
	{
		uint64_t sizes[] = { blob_len - 1, blob_len - 64, blob_len / 2, 256, 255, 8, 1 };

		for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			ml = (struct drm_wafer_model_load){ .bo_handle = b.handle,
							    .blob_size = sizes[i] };
			expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL,
			       "MODEL_LOAD truncated blob: %" PRIu64 " of %zu bytes", sizes[i],
			       blob_len);
		}
	}
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = blob_len + 64 };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL,
	       "MODEL_LOAD blob_size 64 bytes more than the blob (trailing bytes)");

	/* Invalid fields. */
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = blob_len, .flags = 2 };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL, "MODEL_LOAD flags 0x2");
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = blob_len,
					    .flags = DRM_WAFER_LOAD_STREAM | 1u << 31 };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL,
	       "MODEL_LOAD flags STREAM + bit 31");
	test_model_load_bad_parts(fa, b.handle);
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = blob_len,
					    .layer_first = 2 };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL,
	       "MODEL_LOAD layer_first 2 without a layer_count");
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = blob_len,
					    .layer_first = 3, .layer_count = 5 };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL,
	       "MODEL_LOAD layers 3..7 of a 5-layer blob");
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = blob_len,
					    .layer_first = 0xffffffffu, .layer_count = 2 };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL,
	       "MODEL_LOAD layer_first 0xffffffff + layer_count 2 (wraps u32)");
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = 0 };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL, "MODEL_LOAD blob_size 0");
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = b.size + 8 };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL,
	       "MODEL_LOAD blob_size larger than the BO");
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = 1ull << 63 };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL, "MODEL_LOAD blob_size 2^63");
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = blob_len,
					    .bo_offset = 4 };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL,
	       "MODEL_LOAD bo_offset 4 (not 8-byte aligned)");
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = blob_len,
					    .bo_offset = b.size };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL, "MODEL_LOAD bo_offset at the BO end");
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = 64,
					    .bo_offset = ~7ull };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL,
	       "MODEL_LOAD bo_offset 2^64-8 + blob_size 64 (wraps)");
	ml = (struct drm_wafer_model_load){ .bo_handle = 0, .blob_size = blob_len };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -ENOENT, "MODEL_LOAD bo_handle 0");
	ml = (struct drm_wafer_model_load){ .bo_handle = 0xfffffff0u, .blob_size = blob_len };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -ENOENT, "MODEL_LOAD bo_handle never created");
	{
		struct bo fbo;

		ret = bo_new(fb, &fbo, bo_size);
		foreign = fbo.handle;
		if (!ret)
			memcpy(fbo.map, blob, blob_len);
		while (!ret && foreign <= b.handle + 4) {	/* above anything A has */
			struct drm_wafer_bo_create c = { .size = 4096 };

			ret = ioc(fb, DRM_IOCTL_WAFER_BO_CREATE, &c);
			foreign = c.handle;
		}
		ml = (struct drm_wafer_model_load){ .bo_handle = foreign, .blob_size = blob_len };
		expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -ENOENT,
		       "MODEL_LOAD another file's BO handle (isolation)");
		bo_free(fb, &fbo);
	}

	test_model_load_stream(fa, &b);

	/* Valid: at offset 8, with poisoned outputs. */
	memset(b.map, 0, b.size);
	memcpy((char *)b.map + 8, blob, blob_len);
	ret = model_load_poisoned(fa, b.handle, 8, 0, 0, &ml);
	expect(ret, 0, "MODEL_LOAD valid blob at bo_offset 8");
	wt_ok(!ret && ml.model_id && ml.model_id != POISON32 && ml.sram_needed != POISON64 &&
	      ml.sram_needed > 0 &&
	      ml.sram_needed <= (uint64_t)info.stages * info.sram_bytes_per_stage &&
	      ml.part == 0 && ml.bo_offset == 8 && ml.blob_size == blob_len,
	      "MODEL_LOAD output: model_id %u, sram_needed %" PRIu64 ", inputs untouched",
	      ml.model_id, (uint64_t)ml.sram_needed);
	wt_ok(!ret && ml.n_layers == 5 &&
	      ml.model_flags == (DRM_WAFER_MODEL_EMBED | DRM_WAFER_MODEL_HEAD) &&
	      ml.act_size == DRM_WAFER_ACT_REC_SIZE(64) && ml.expert_group == 0,
	      "MODEL_LOAD output of the whole model: %u layers, model_flags 0x%x, act_size %u",
	      ml.n_layers, ml.model_flags, ml.act_size);
	*model_id = ret ? 0 : ml.model_id;
	{
		struct drm_wafer_device_info d2 = { 0 };
		struct drm_wafer_get_info gi = { .info_ptr = (uintptr_t)&d2, .info_size = sizeof(d2) };

		ioc(fa, DRM_IOCTL_WAFER_GET_INFO, &gi);
		wt_ok(d2.sram_bytes_free + ml.sram_needed <= info.sram_bytes_free,
		      "GET_INFO sram_bytes_free drops by at least sram_needed after MODEL_LOAD "
		      "(%" PRIu64 " -> %" PRIu64 ")", (uint64_t)info.sram_bytes_free,
		      (uint64_t)d2.sram_bytes_free);
	}

	test_model_load_beside(fa, fb, &b, *model_id);
	bo_free(fa, &b);
}

void test_model_unload_invalid(int fa, int fb, uint32_t model)
{
	struct drm_wafer_model_unload u;

	u = (struct drm_wafer_model_unload){ .model_id = model, .pad = 1 };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), -EINVAL, "MODEL_UNLOAD pad != 0");
	u = (struct drm_wafer_model_unload){ .model_id = 0 };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), -EINVAL, "MODEL_UNLOAD model_id 0");
	u = (struct drm_wafer_model_unload){ .model_id = model + 1 };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), -ENOENT, "MODEL_UNLOAD wrong model_id");
	u = (struct drm_wafer_model_unload){ .model_id = 0xffffffffu };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), -ENOENT,
	       "MODEL_UNLOAD model_id 0xffffffff");
	u = (struct drm_wafer_model_unload){ .model_id = model };
	expect(ioc(fb, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), -ENOENT,
	       "MODEL_UNLOAD another file's model (isolation)");
}

/*
 * MODEL_LOAD of userspace built before expert_first / expert_count: the
 * 64-byte struct (its own ioctl number) loads whole layers, and the
 * kernel writes back no byte past it.
 */
void test_model_load_v1(int fd, struct bo *b)
{
	struct ml_v1 {
		uint8_t b[offsetof(struct drm_wafer_model_load, expert_first)];
	};
	struct {
		struct drm_wafer_model_load ml;
		uint64_t guard;
	} a;
	struct drm_wafer_model_unload u = { 0 };
	int ret;

	_Static_assert(sizeof(struct ml_v1) == 64, "the older MODEL_LOAD");
	memset(&a, POISON, sizeof(a));
	a.ml = (struct drm_wafer_model_load){ .bo_handle = b->handle, .blob_size = blob_len };
	memset(&a.ml.expert_first, POISON, 8);
	ret = ioc(fd, DRM_IOWR(DRM_COMMAND_BASE + DRM_WAFER_MODEL_LOAD, struct ml_v1), &a.ml);
	expect(ret, 0, "MODEL_LOAD with the 64-byte struct of older userspace (before "
	       "expert_first), the bytes after it poisoned");
	wt_ok(!ret && a.ml.model_id && a.ml.n_layers == N_LAYERS &&
	      a.ml.expert_first == POISON32 && a.ml.expert_count == POISON32 &&
	      a.guard == POISON64,
	      "its output: model %u, %u layers, nothing written past 64 bytes", a.ml.model_id,
	      a.ml.n_layers);
	u.model_id = a.ml.model_id;
	if (!ret)
		expect(ioc(fd, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), 0,
		       "MODEL_UNLOAD the model the 64-byte struct loaded");
}

/*
 * Two models of one file at once, each with its own context: each decodes
 * as the in-process reference does (as it does alone), and unloading the
 * second leaves the first and the job it has queued (behind a vgem fence
 * when vgem is there) running.
 */
void test_two_models(int fa, uint32_t ctx, struct bo *in, struct bo *out)
{
	uint32_t m2, ctx2, so = 0, fence = 0, got;
	struct drm_wafer_model_unload u = { 0 };
	struct drm_wafer_ctx_destroy d = { 0 };
	uint64_t seq = 0;
	struct bo o2 = { 0 };
	int ret, st = 0;

	m2 = load_model(fa, &ret);
	ctx2 = ret ? 0 : ctx_new(fa, m2, 2, 64, &ret);
	expect(ret, 0, "CTX_CREATE on the file's second model");
	got = ctx2 ? decode_check(fa, ctx2, 1, in, out, 0) : 0;
	wt_ok(got == NDECODE, "greedy decode on a second model beside the first matches "
	      "in-process firmware-sim (first mismatch at %u)", got);
	got = decode_check(fa, ctx, 3, in, out, 0);
	wt_ok(got == NDECODE, "greedy decode on the first model with the second loaded matches "
	      "(first mismatch at %u)", got);
	/* A job of the first model in flight, or queued behind a fence. */
	memcpy(in->map, ref_tok, sizeof(ref_tok));
	ret = bo_new(fa, &o2, 4096);
	if (!ret && vgem_fd >= 0)
		ret = vgem_syncobj(fa, &so, &fence);
	if (!ret) {
		struct drm_wafer_job j = { .ctx_id = ctx, .slot = 3, .n_tokens = 1, .top_k = TOPK,
			.in_handle = in->handle, .out_handle = o2.handle,
			.in_syncobjs = so ? (uintptr_t)&so : 0, .in_syncobj_count = so ? 1 : 0 };

		ret = submit(fa, &j, &seq);
	}
	expect(ret, 0, "SUBMIT on the first model before the second's unload");
	d.ctx_id = ctx2;
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_DESTROY, &d), 0, "CTX_DESTROY the second model's context");
	u.model_id = m2;
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), 0,
	       "MODEL_UNLOAD the second model while the first has a job queued");
	if (fence)
		vgem_signal(fence);
	ret = ret ? ret : wait_job(fa, seq, 60, &st);
	expect(ret ? ret : st, 0, "WAIT the first model's job after the second's unload");
	wt_ok(!ret && ((struct drm_wafer_token_result *)o2.map)->argmax == ref_tok[1],
	      "the first model's job result is right (argmax %u, reference %u)",
	      ret ? 0 : ((struct drm_wafer_token_result *)o2.map)->argmax, ref_tok[1]);
	ctx_new(fa, m2, 1, 16, &ret);
	expect(ret, -ENOENT, "CTX_CREATE on the unloaded second model");
	bo_free(fa, &o2);
	if (so)
		syncobj_free(fa, so);
	got = decode_check(fa, ctx, 3, in, out, 0);
	wt_ok(got == NDECODE, "greedy decode on the first model after the second's unload "
	      "matches (first mismatch at %u)", got);
}
