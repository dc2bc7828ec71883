// SPDX-License-Identifier: MIT
/*
 * test_blob.c - model blob format: the packer's output, the validator's
 * rejections (one per rule), bit-flip sweeps, section binds and the size
 * helpers the device sizes its SRAM with.
 *
 * With WAFER_FUZZ_CORPUS=DIR set it also writes fuzz seeds for
 * tests/fuzz/fuzz_blob.c (mode byte + blob) into DIR.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wfs_forward.h"
#include "wfs_pack.h"
#include "wt_tinyblob.h"
#include "wt_util.h"

static uint8_t tmpl[WT_TINY_MAX];
static size_t tlen;
static uint8_t work[WT_TINY_MAX];

static struct wfs_blob_header *hdr(void)
{
	return (struct wfs_blob_header *)work;
}

static struct wfs_section_entry *entry(unsigned int i)
{
	return (struct wfs_section_entry *)(work + hdr()->section_table_offset) + i;
}

static struct wfs_tensor_desc *desc(unsigned int s, unsigned int t)
{
	return (struct wfs_tensor_desc *)(work + entry(s)->offset +
					  sizeof(struct wfs_section_header)) + t;
}

static int parse_work(size_t len)
{
	struct wfs_model_info info;

	return wfs_model_parse(work, len, &info);
}

#define REJECT(expect, what, stmt) do {					\
		int r_;							\
		memcpy(work, tmpl, tlen);				\
		stmt;							\
		r_ = parse_work(tlen);					\
		wt_ok(expect ? r_ == (expect) : r_ < 0,		\
		      "rejects %s (%d)", what, r_);			\
	} while (0)

static void test_rejects(void)
{
	REJECT(-WFS_EINVAL, "bad magic", hdr()->magic ^= 1);
	REJECT(-WFS_EPROTO, "other major version", hdr()->version_major = 2);
	REJECT(0, "header_size != 256", hdr()->header_size = 260);
	REJECT(-WFS_EOPNOTSUPP, "unknown flag (weight streaming bit)", hdr()->flags |= 1u << 3);
	REJECT(-WFS_EINVAL, "non-zero reserved header word", hdr()->reserved[34] = 1);
	REJECT(-WFS_EINVAL, "checksum without the flag", hdr()->checksum = 1);
	REJECT(-WFS_EINVAL, "total_size != length", hdr()->total_size += 64);
	REJECT(-WFS_EINVAL, "dim 0", hdr()->dim = 0);
	REJECT(-WFS_EINVAL, "n_heads not dividing dim", hdr()->n_heads = 3);
	REJECT(-WFS_EINVAL, "head_size inconsistent", hdr()->head_size = 2);
	REJECT(-WFS_EINVAL, "n_kv_heads not dividing n_heads", hdr()->n_kv_heads = 3);
	REJECT(-WFS_EINVAL, "n_kv_heads > n_heads", hdr()->n_kv_heads = 4);
	REJECT(-WFS_EINVAL, "vocab 0", hdr()->vocab_size = 0);
	REJECT(-WFS_EINVAL, "vocab above limit", hdr()->vocab_size = WFS_MAX_VOCAB + 1);
	REJECT(-WFS_EINVAL, "n_layers 0", hdr()->n_layers = 0);
	REJECT(-WFS_EINVAL, "layer range beyond total_layers", hdr()->first_layer = 1);
	REJECT(-WFS_EINVAL, "activation input at layer 0", hdr()->input_kind = WFS_IO_ACT);
	REJECT(-WFS_EINVAL, "unknown output kind", hdr()->output_kind = 7);
	REJECT(-WFS_EINVAL, "experts in a dense blob", hdr()->n_experts = 8);
	REJECT(-WFS_EINVAL, "MoE ffn kind without the flag", hdr()->ffn_kind = WFS_FFN_MOE);
	REJECT(-WFS_EOPNOTSUPP, "unknown ffn kind", hdr()->ffn_kind = 2);
	REJECT(-WFS_EINVAL, "n_sections mismatch", hdr()->n_sections += 1);
	REJECT(-WFS_EFAULT, "misaligned section table", hdr()->section_table_offset += 8);
	REJECT(-WFS_EFAULT, "section table beyond the blob", hdr()->section_table_offset = 1ULL << 40);
	REJECT(-WFS_EINVAL, "section kind out of order", entry(0)->kind = WFS_SEC_LAYER);
	REJECT(-WFS_EINVAL, "layer index out of order", entry(1)->index = 1);
	REJECT(-WFS_EINVAL, "section entry reserved word", entry(1)->reserved[0] = 1);
	REJECT(-WFS_EFAULT, "misaligned section", entry(1)->offset += 8);
	REJECT(-WFS_EFAULT, "overlapping sections", entry(1)->offset -= 64);
	REJECT(-WFS_EFAULT, "section beyond the blob", entry(3)->size += 64);
	REJECT(-WFS_EFAULT, "section size overflow", entry(3)->size = ~0ULL - 32);
	REJECT(-WFS_EINVAL, "section size != its header", entry(1)->size -= 64);
	REJECT(-WFS_EINVAL, "section magic", *(uint32_t *)(work + entry(2)->offset) ^= 1);
	REJECT(-WFS_EINVAL, "tensor role swapped", desc(1, 1)->role = WFS_T_WK);
	REJECT(-WFS_EINVAL, "tensor rows", desc(1, 2)->rows = 8);
	REJECT(-WFS_EINVAL, "matrix qtype s16", desc(1, 1)->qtype = WFS_QT_S16);
	REJECT(-WFS_EINVAL, "norm qtype int8", desc(1, 0)->qtype = WFS_QT_INT8);
	REJECT(-WFS_EINVAL, "group size 0", desc(1, 1)->group_size = 0);
	REJECT(-WFS_EINVAL, "group size 257", desc(1, 1)->group_size = 257);
	REJECT(-WFS_EINVAL, "odd group size for int4", { desc(1, 1)->qtype = WFS_QT_INT4; desc(1, 1)->group_size = 3; });
	REJECT(-WFS_ERANGE, "scale_exp out of range", desc(1, 1)->scale_exp = 300);
	REJECT(-WFS_EINVAL, "rope table with a scale", desc(1, 9)->scale_offset = 64);
	REJECT(-WFS_EFAULT, "misaligned tensor data", desc(1, 1)->data_offset += 2);
	REJECT(-WFS_EFAULT, "tensor data beyond its section", desc(1, 8)->data_offset = entry(1)->size);
	REJECT(-WFS_EFAULT, "tensor regions out of order", desc(1, 1)->data_offset = desc(1, 0)->data_offset);
	REJECT(-WFS_EFAULT, "scales overlapping data", desc(1, 1)->scale_offset = desc(1, 1)->data_offset);
	REJECT(-WFS_EINVAL, "tensor reserved word", desc(2, 1)->reserved[1] = 5);
}

/* Every truncation and every bit flip of the metadata; payload flips pass. */
static void test_sweeps(void)
{
	struct wfs_model_info info;
	size_t len, i, payload_bad = 0, flips = 0;
	int b;

	for (len = 0; len < tlen; len++)
		if (!wfs_model_parse(tmpl, len, &info))
			break;
	wt_ok(len == tlen, "every truncation (0..%zu bytes) is rejected", tlen - 1);

	for (i = 0; i < tlen; i++) {
		for (b = 0; b < 8; b++) {
			int r;
			size_t s, in_payload = 0;

			memcpy(work, tmpl, tlen);
			work[i] ^= (uint8_t)(1 << b);
			r = parse_work(tlen);
			flips++;
			/* payload = a tensor's data or scales */
			memcpy(work, tmpl, tlen);
			for (s = 0; s < hdr()->n_sections; s++) {
				unsigned int t, nt = s == 0 ? 1 : s == 3 ? 2 : 10;

				for (t = 0; t < nt; t++) {
					struct wfs_tensor_desc *d = desc(s, t);
					size_t base = entry(s)->offset;

					if (i >= base + d->data_offset &&
					    i < base + (d->scale_offset ? d->scale_offset :
							d->data_offset + 64))
						in_payload = 1;
					if (d->scale_offset && i >= base + d->scale_offset &&
					    i < base + d->scale_offset + 64)
						in_payload = 1;
				}
			}
			if (in_payload && r)
				payload_bad++;
		}
	}
	wt_ok(!payload_bad, "%zu single-bit flips: every flip inside tensor payload still parses (payload is not interpreted)", flips);
}

static void test_checksum(void)
{
	struct wfs_model_info info;
	uint8_t *b = malloc(WT_TINY_MAX);
	size_t len = wt_tiny_build(b, WT_TINY_INT4);
	int r;

	wt_ok(wfs_model_parse(b, len, &info) == 0 && (info.flags & WFS_MF_CHECKSUM) &&
	      info.kv_bits == 8, "int4 template with checksum and int8 KV parses");
	b[len - 100] ^= 0x10;
	r = wfs_model_parse(b, len, &info);
	wt_ok(r == -WFS_EBADMSG, "checksum catches a payload flip (%d)", r);
	free(b);
}

static void test_range(void)
{
	struct wfs_model_info info;
	uint8_t *b = malloc(WT_TINY_MAX);
	size_t len = wt_tiny_build(b, WT_TINY_RANGE);

	wt_ok(wfs_model_parse(b, len, &info) == 0 && info.first_layer == 1 &&
	      info.input_kind == WFS_IO_ACT && info.output_kind == WFS_IO_ACT &&
	      !info.embed.size && !info.head.size && info.n_sections == 2,
	      "layer-range template (layers 1..2 of 4, activations in/out) parses");
	free(b);
}

static void test_binds(void)
{
	struct wfs_model_info info;
	struct wfs_layer_view lv;
	struct wfs_embed_view ev;
	struct wfs_head_view hv;
	struct wfs_section_range r;
	uint8_t *sec;
	int ret;

	memcpy(work, tmpl, tlen);
	wfs_model_parse(work, tlen, &info);
	sec = wt_alloc(4096 + 64);
	wt_ok(wfs_model_layer_section(&info, work, 1, &r) == 0 && r.offset == entry(2)->offset,
	      "wfs_model_layer_section finds layer 1");
	wt_ok(wfs_model_layer_section(&info, work, 2, &r) == -WFS_EINVAL,
	      "wfs_model_layer_section rejects layer 2 of 2");
	wfs_model_layer_section(&info, work, 1, &r);
	memcpy(sec, work + r.offset, r.size);
	wt_ok(wfs_layer_bind(&info, sec, r.size, 1, &lv) == 0 && lv.kv_bits == 16 &&
	      lv.wq.n_groups == 2 && lv.w2.n_groups == 4,
	      "layer bind on an aligned copy");
	wt_ok(wfs_layer_bind(&info, sec, r.size, 0, &lv) == -WFS_EINVAL, "layer bind checks the index");
	wt_ok(wfs_layer_bind(&info, sec, r.size - 64, 1, &lv) < 0, "layer bind checks the size");
	memmove(sec + 4, sec, r.size);
	wt_ok(wfs_layer_bind(&info, sec + 4, r.size, 1, &lv) == -WFS_EINVAL, "layer bind rejects a misaligned copy");
	memmove(sec, sec + 4, r.size);
	info.kv_bits = 12;
	wt_ok(wfs_layer_bind(&info, sec, r.size, 1, &lv) == -WFS_EINVAL, "layer bind rejects kv_bits 12");
	info.kv_bits = 8;
	ret = wfs_layer_bind(&info, sec, r.size, 1, &lv);
	wt_ok(!ret && lv.kv_stride == 16 && wfs_kv_stride(&info) == 16,
	      "kv_bits 8 override: 16-byte KV records (2 exps + 4 K + 4 V, padded)");
	wt_ok(wfs_embed_bind(&info, sec, r.size, &ev) < 0, "embed bind rejects a layer section");
	memcpy(sec, work + info.head.offset, info.head.size);
	wt_ok(wfs_head_bind(&info, sec, info.head.size, &hv) == 0 && hv.vocab == 7, "head bind");
	memcpy(sec, work + info.embed.offset, info.embed.size);
	wt_ok(wfs_embed_bind(&info, sec, info.embed.size, &ev) == 0, "embed bind");
	free(sec);
}

static void test_stories(void)
{
	const char *path = wt_model_path("stories260K.bin");
	struct wfs_pack_opts o = { .wbits = 4, .group_size = 32, .cls_bits = 8,
				   .embed_bits = 8, .checksum = 1 };
	struct wfs_model_info info;
	struct wfs_ckpt c;
	void *b;
	size_t len;
	unsigned int l, aligned = 1;
	struct wfs_section_range r;

	if (!path || wfs_ckpt_load(path, &c)) {
		wt_ok(0, "stories260K.bin loads");
		return;
	}
	if (!wt_ok(wfs_pack(&c, &o, &b, &len) == 0 && wfs_model_parse(b, len, &info) == 0,
		   "stories260K int4 (embedding/classifier int8, checksum) packs and parses")) {
		wfs_ckpt_free(&c);
		return;
	}
	wt_diag("stories260K int4/int8 blob: %zu bytes", len);
	wt_ok(info.dim == 64 && info.hidden_dim == 172 && info.n_layers == 5 &&
	      info.n_heads == 8 && info.n_kv_heads == 4 && info.kv_dim == 32 &&
	      info.vocab_size == 512 && info.norm_eps_q40 == 10995116 &&
	      (info.flags & WFS_MF_TIED_CLS), "dims as in the checkpoint");
	for (l = 0; l < info.n_layers; l++) {
		wfs_model_layer_section(&info, b, l, &r);
		aligned &= r.offset % 64 == 0 && r.size % 64 == 0;
	}
	wt_ok(aligned && info.embed.offset % 64 == 0 && info.head.offset % 64 == 0,
	      "sections 64-byte aligned (embed %llu B, layer %llu B, head %llu B)",
	      (unsigned long long)info.embed.size,
	      (unsigned long long)info.max_layer_section,
	      (unsigned long long)info.head.size);
	wt_ok(wfs_act_bytes(&info) == 320 && wfs_kv_stride(&info) == 144 &&
	      wfs_kv_bytes(&info, 512) == 512 * 144,
	      "act 320 B, KV 144 B/position (int16), %llu B layer scratch at ctx 512, %llu B head scratch",
	      (unsigned long long)wfs_layer_scratch_bytes(&info, 512),
	      (unsigned long long)wfs_head_scratch_bytes(&info));
	wt_ok(wfs_layer_macs(&info) == 64ULL * (128 + 64 + 516) &&
	      wfs_layer_attn_macs(&info, 9) == 2 * 64 * 10 &&
	      wfs_head_macs(&info) == 512 * 64, "MAC counts");
	free(b);
	o.first_layer = 2;
	o.n_layers = 2;
	wt_ok(wfs_pack(&c, &o, &b, &len) == 0 && wfs_model_parse(b, len, &info) == 0 &&
	      info.input_kind == WFS_IO_ACT && info.output_kind == WFS_IO_ACT &&
	      info.first_layer == 2 && info.total_layers == 5,
	      "layer range 2..3 of 5 packs as an activation-in/out blob");
	free(b);
	wfs_ckpt_free(&c);
}

static void write_seeds(void)
{
	const char *dir = getenv("WAFER_FUZZ_CORPUS");
	char path[4096];
	uint8_t *b = malloc(WT_TINY_MAX + 1);
	int v;

	if (!dir || !*dir)
		return;
	for (v = 0; v < WT_TINY_NVARIANTS; v++) {
		size_t len = wt_tiny_build(b + 1, v);
		FILE *f;

		b[0] = 0;	/* mode 0: raw blob */
		snprintf(path, sizeof(path), "%s/tiny-%d.bin", dir, v);
		f = fopen(path, "wb");
		wt_ok(f && fwrite(b, len + 1, 1, f) == 1, "seed %s", path);
		if (f)
			fclose(f);
	}
	free(b);
}

int main(void)
{
	struct wfs_model_info info;
	int v, ok = 1;

	for (v = 0; v < WT_TINY_NVARIANTS; v++) {
		uint8_t *b = malloc(WT_TINY_MAX);

		ok &= wfs_model_parse(b, wt_tiny_build(b, v), &info) == 0;
		free(b);
	}
	wt_ok(ok, "the %d built-in tiny templates parse", WT_TINY_NVARIANTS);
	tlen = wt_tiny_build(tmpl, WT_TINY_INT8);
	test_rejects();
	test_sweeps();
	test_checksum();
	test_range();
	test_binds();
	test_stories();
	write_seeds();
	return wt_done();
}
