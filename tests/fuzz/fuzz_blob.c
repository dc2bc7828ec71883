// SPDX-License-Identifier: MIT
/*
 * fuzz_blob.c - libFuzzer harness for the model blob validator, the
 * section binds and the forward pass on whatever they accept.
 *
 * Input byte 0 picks a mode:
 *   0       the rest of the input is the blob, as is;
 *   1..3    a valid built-in template (tests/common/wt_tinyblob.h: int8,
 *           int4 + checksum + KV int8, activation-in/out layer range) with
 *           the rest of the input applied as patches: each 3-byte record
 *           (offset lo, offset hi, value) XORs one byte; a record with
 *           offset 0xffff truncates the blob by value bytes.
 * The templates give the fuzzer deep coverage without a corpus (make test
 * runs it as "-seed=1 -runs=N" with no corpus directory).
 *
 * Whatever wfs_model_parse() accepts is bound the way a device does it
 * (each section copied into its own exact-size heap buffer, so ASan sees
 * any out-of-bounds read) and run for two positions with both KV widths:
 * any weight bits are legal, so the kernels must stay free of undefined
 * behaviour on garbage weights and activations (UBSan aborts otherwise).
 * With bit 4 of byte 0 set it is then loaded on a device (asic, 2 stages
 * of 256 KiB) with LOAD_MODEL, through the device's own tables, as the
 * layer range (0: whole), part and expert fields the input's last bytes
 * give, and unloaded: every completion valid, no device fault.
 *
 * Longer runs:  build/tests/fuzz/fuzz_blob -max_total_time=600 -jobs=4 CORPUS_DIR
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/device_harness.h"
#include "wfs_forward.h"
#include "wt_tinyblob.h"

#define CTX	2

static void *dup_exact(const void *p, size_t n)
{
	void *q = malloc(n ? n : 1);

	if (q && n)
		memcpy(q, p, n);
	return q;
}

static void run_model(const uint8_t *blob, struct wfs_model_info *info,
		      const uint8_t *data, size_t size)
{
	struct wfs_embed_view ev;
	struct wfs_head_view hv;
	struct wfs_layer_view lv[4];
	struct wfs_section_range r;
	struct wfs_topk_entry topk[WFS_TOPK_MAX];
	void *sec[4 + 2] = { 0 }, *kv[4] = { 0 }, *act, *ls, *hs;
	uint32_t l, pos, am, nl = info->n_layers < 4 ? info->n_layers : 4;
	int ok = 1;

	info->kv_bits = size && (data[size - 1] & 1) ? 8 : 16;
	act = calloc(1, wfs_act_bytes(info));
	ls = calloc(1, wfs_layer_scratch_bytes(info, CTX));
	hs = calloc(1, wfs_head_scratch_bytes(info));
	if (info->embed.size) {
		sec[4] = dup_exact(blob + info->embed.offset, info->embed.size);
		ok &= !wfs_embed_bind(info, sec[4], info->embed.size, &ev);
	}
	if (info->head.size) {
		sec[5] = dup_exact(blob + info->head.offset, info->head.size);
		ok &= !wfs_head_bind(info, sec[5], info->head.size, &hv);
	}
	for (l = 0; l < nl && ok; l++) {
		ok &= !wfs_model_layer_section(info, blob, l, &r);
		sec[l] = dup_exact(blob + r.offset, r.size);
		kv[l] = calloc(1, wfs_kv_bytes(info, CTX));
		ok &= !wfs_layer_bind(info, sec[l], r.size, l, &lv[l]);
		/* binding with a wrong index or size must fail */
		ok &= wfs_layer_bind(info, sec[l], r.size, l + 1, &lv[l]) != 0;
	}
	if (!ok)
		__builtin_trap();	/* parse accepted what bind rejects */
	for (pos = 0; pos < CTX; pos++) {
		if (info->input_kind == WFS_IO_TOKENS) {
			uint32_t tok = size > pos ? data[pos] : 0;

			if (wfs_embed(&ev, tok, act) && tok < info->vocab_size)
				__builtin_trap();
			if (tok >= info->vocab_size)
				wfs_embed(&ev, 0, act);
		} else {
			/* garbage activation record from "another device" */
			size_t n = wfs_act_bytes(info);
			size_t i;

			for (i = 0; i < n; i++)
				((uint8_t *)act)[i] = size ? data[i % size] : 0;
			if (size > 4 && (data[1] & 1))
				((struct wfs_act_hdr *)act)->dim = info->dim;
		}
		for (l = 0; l < nl; l++)
			wfs_layer_forward(&lv[l], kv[l], pos, act, ls);
		if (info->output_kind == WFS_IO_TOKENS) {
			wfs_head(&hv, act, size > 2 ? data[2] : 5, topk, &am, hs);
			if (am >= info->vocab_size)
				__builtin_trap();
		}
	}
	for (l = 0; l < 6; l++)
		free(sec[l]);
	for (l = 0; l < 4; l++)
		free(kv[l]);
	free(act);
	free(ls);
	free(hs);
}

static struct dh *dev;
static u8 *dev_blob;

/* LOAD_MODEL @ld of the blob in dev_blob, then UNLOAD_MODEL if it loaded. */
static void dev_load(const struct wfw_cmd_load_model *ld)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl;

	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_LOAD_MODEL;
	c.load = *ld;
	if (dh_exec(dev, &c, &cpl, 30000) || cpl.check != wfw_cpl_check(&cpl) ||
	    cpl.status > 0)
		__builtin_trap();
	if (cpl.status)
		return;
	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_UNLOAD_MODEL;
	c.model = cpl.model;
	if (dh_exec(dev, &c, &cpl, 30000) || cpl.status)
		__builtin_trap();	/* a model without contexts unloads */
}

/* What the validator accepted, loaded through the device's tables. */
static void load_model(const uint8_t *blob, size_t len,
		       const struct wfs_model_info *info,
		       const uint8_t *data, size_t size)
{
	struct wfw_cmd_load_model ld;
	const uint8_t *t = size >= 4 ? data + size - 4 : NULL;

	if (!dev) {
		dev = dh_new("asic", 2, 256 << 10);
		dev_blob = dh_alloc(WT_TINY_MAX);
		if (!dev || !dev_blob)
			__builtin_trap();
		dh_region_add(dev, dev_blob, WT_TINY_MAX);
	}
	if (len > WT_TINY_MAX)
		return;
	memcpy(dev_blob, blob, len);
	memset(&ld, 0, sizeof(ld));
	ld.addr = (u64)(uintptr_t)dev_blob;
	ld.len = len;
	if (t)
		ld.layer_first = info->first_layer + t[0] % (info->n_layers + 1);
	if (t && t[1] % (info->n_layers + 1)) {
		ld.layer_count = t[1] % (info->n_layers + 1);
		ld.part = t[2] % (WFW_PART_MAX + 1);
		ld.flags = t[2] & 0x80 ? WFW_LOAD_STREAM : 0;
		ld.expert_group = t[3] % 4;
		ld.expert_first = (t[3] >> 2) % 4;
		ld.expert_count = (t[3] >> 4) % 4;
	} else {
		ld.layer_first = 0;
	}
	dev_load(&ld);
	if (dh_rd(dev, WFW_REG_FAULT))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t tmpl[WT_TINY_NVARIANTS][WT_TINY_MAX];
	static size_t tlen[WT_TINY_NVARIANTS];
	struct wfs_model_info info;
	uint8_t *blob;
	size_t len, i;
	unsigned int mode, on_dev;

	if (!tlen[0])
		for (i = 0; i < WT_TINY_NVARIANTS; i++)
			tlen[i] = wt_tiny_build(tmpl[i], i);
	if (!size)
		return 0;
	mode = data[0] % (WT_TINY_NVARIANTS + 1);
	on_dev = data[0] & 0x10;
	data++;
	size--;
	if (mode == 0) {
		len = size;
		blob = dup_exact(data, len);
	} else {
		len = tlen[mode - 1];
		blob = dup_exact(tmpl[mode - 1], len);
		for (i = 0; i + 3 <= size; i += 3) {
			unsigned int off = data[i] | data[i + 1] << 8;

			if (off == 0xffff)
				len -= data[i + 2] < len ? data[i + 2] : len;
			else if (len)
				blob[off % len] ^= data[i + 2];
		}
	}
	if (!blob)
		return 0;
	if (!wfs_model_parse(blob, len, &info)) {
		run_model(blob, &info, data, size);
		if (on_dev)
			load_model(blob, len, &info, data, size);
	}
	/* the length given must be the length checked */
	if (len > 0 && !wfs_model_parse(blob, len - 1, &info))
		__builtin_trap();
	free(blob);
	return 0;
}
