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
 *
 * Longer runs:  build/tests/fuzz/fuzz_blob -max_total_time=600 -jobs=4 CORPUS_DIR
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t tmpl[WT_TINY_NVARIANTS][WT_TINY_MAX];
	static size_t tlen[WT_TINY_NVARIANTS];
	struct wfs_model_info info;
	uint8_t *blob;
	size_t len, i;
	unsigned int mode;

	if (!tlen[0])
		for (i = 0; i < WT_TINY_NVARIANTS; i++)
			tlen[i] = wt_tiny_build(tmpl[i], i);
	if (!size)
		return 0;
	mode = data[0] % (WT_TINY_NVARIANTS + 1);
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
	if (!wfs_model_parse(blob, len, &info))
		run_model(blob, &info, data, size);
	/* the length given must be the length checked */
	if (len > 0 && !wfs_model_parse(blob, len - 1, &info))
		__builtin_trap();
	free(blob);
	return 0;
}
