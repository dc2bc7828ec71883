// SPDX-License-Identifier: MIT
/*
 * VM test: the shared model end to end through the kernel driver's ioctl
 * path, compared bit for bit with firmware-sim run in this process.
 *
 * Packs ../shared/models/stories260K.bin (int8 or int4), loads it through a
 * BO with DRM_IOCTL_WAFER_MODEL_LOAD, creates a context, and:
 *  - decodes greedily from BOS one job per token, checking every argmax and
 *    top-k (token, logit) pair against the in-process forward pass;
 *  - prefills the same tokens as one job with DRM_WAFER_JOB_ALL_POSITIONS on
 *    another slot, checking every position;
 *  - decodes several slots with all their jobs in flight together (the
 *    file's jobs run in submission order), checking each against the
 *    reference.
 *
 * Usage: model_e2e [int8|int4] [tokens]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wt_dev.h"
#include "wt_model.h"
#include "wt_util.h"

#define TOPK		8
#define SLOTS		4

static int fd;

static const struct drm_wafer_token_result *result_at(const struct wt_bo *out, size_t off, int i)
{
	return wt_result(out, off, TOPK, i);
}

int main(int argc, char **argv)
{
	const char *quant = argc > 1 ? argv[1] : "int8";
	uint32_t n = argc > 2 ? (uint32_t)atoi(argv[2]) : 48;
	unsigned int wbits = strcmp(quant, "int4") ? 8 : 4;
	struct drm_wafer_device_info info = { 0 };
	struct drm_wafer_get_info gi = { .info_ptr = (uintptr_t)&info, .info_size = sizeof(info) };
	struct wt_dev_model m;
	struct wfs_topk_entry (*ref_topk)[TOPK];
	struct wt_model ref;
	struct wt_bo in, out;
	uint32_t *toks, *ref_arg, pos, s;
	uint64_t device_ns = 0;
	int ret, ok;

	if (n < 2 || n > 200) {
		fprintf(stderr, "tokens must be 2..200\n");
		return 2;
	}
	fd = wt_dev_open(0);
	if (fd < 0 || wt_ioctl(fd, DRM_IOCTL_WAFER_GET_INFO, &gi)) {
		printf("not ok - open and query /dev/accel/accel0: %s\n", strerror(-fd));
		return 1;
	}
	wt_ok(info.api_version == DRM_WAFER_API_VERSION && info.stages > 0,
	      "GET_INFO: api %u, %u stages x %llu KiB", info.api_version, info.stages,
	      (unsigned long long)info.sram_bytes_per_stage >> 10);
	ret = wt_dev_load_model(fd, wbits, SLOTS, 256, &m);
	if (!wt_ok(!ret, "MODEL_LOAD %s blob of %zu bytes and CTX_CREATE %d x 256 (%d), "
		   "SRAM %llu bytes, KV %llu bytes", quant, m.blob_len, SLOTS, ret,
		   (unsigned long long)m.sram_needed, (unsigned long long)m.kv_bytes))
		return wt_done();
	/* Reference: greedy decode in-process, recording every step. */
	toks = calloc(n + 1, sizeof(*toks));
	ref_arg = calloc(n, sizeof(*ref_arg));
	ref_topk = calloc(n, sizeof(*ref_topk));
	if (!toks || !ref_arg || !ref_topk || wt_model_open(&ref, m.blob, m.blob_len, 256, 0)) {
		printf("not ok - in-process reference setup\n");
		return 1;
	}
	toks[0] = 1; /* BOS */
	for (pos = 0; pos < n; pos++) {
		ref_arg[pos] = wt_model_step(&ref, toks[pos], pos, TOPK, ref_topk[pos]);
		toks[pos + 1] = ref_arg[pos];
	}

	if (wt_bo_new(fd, &in, (n + 1) * 4) ||
	    wt_bo_new(fd, &out, (size_t)SLOTS * n * DRM_WAFER_RESULT_SIZE(TOPK))) {
		printf("not ok - job buffers\n");
		return 1;
	}
	memcpy(in.map, toks, (n + 1) * 4);

	/* Decode one token per job on slot 0. */
	ok = 1;
	for (pos = 0; pos < n && ok; pos++) {
		struct drm_wafer_submit sub = { .job = {
			.ctx_id = m.ctx_id, .slot = 0, .start_pos = pos, .n_tokens = 1,
			.top_k = TOPK, .in_handle = in.handle, .out_handle = out.handle,
			.in_offset = pos * 4, .out_offset = 0 } };
		uint64_t ns = 0;

		ret = wt_ioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &sub);
		if (!ret)
			ret = wt_wait_job(fd, sub.seqno, &ns);
		device_ns += ns;
		ok = !ret && wt_result_matches(result_at(&out, 0, 0), pos, ref_arg[pos], ref_topk[pos], TOPK);
		if (!ok)
			wt_diag("pos %u: ret %d, device argmax %u, reference %u", pos, ret,
				result_at(&out, 0, 0)->argmax, ref_arg[pos]);
	}
	wt_ok(ok, "greedy decode of %u tokens one job each matches in-process firmware-sim "
	      "(argmax and top-%d logits), modelled %.1f us/token", n, TOPK,
	      device_ns / 1000.0 / n);

	/* Prefill the same tokens in one job, results for every position. */
	{
		struct drm_wafer_submit sub = { .job = {
			.ctx_id = m.ctx_id, .slot = 1, .start_pos = 0, .n_tokens = n,
			.flags = DRM_WAFER_JOB_ALL_POSITIONS, .top_k = TOPK,
			.in_handle = in.handle, .out_handle = out.handle } };

		ret = wt_ioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &sub);
		if (!ret)
			ret = wt_wait_job(fd, sub.seqno, NULL);
		ok = !ret;
		for (pos = 0; pos < n && ok; pos++)
			ok = wt_result_matches(result_at(&out, 0, pos), pos, ref_arg[pos], ref_topk[pos], TOPK);
		wt_ok(ok, "prefill of %u positions in one job matches (%d, first mismatch at %u)",
		      n, ret, ok ? n : pos - 1);
	}

	/* Slots 0..SLOTS-1 re-run from scratch with all their jobs in flight at once. */
	{
		uint64_t last[SLOTS];

		ret = 0;
		for (pos = 0; pos < n && !ret; pos++) {
			for (s = 0; s < SLOTS && !ret; s++) {
				struct drm_wafer_submit sub = { .job = {
					.ctx_id = m.ctx_id, .slot = s, .start_pos = pos,
					.n_tokens = 1, .top_k = TOPK, .in_handle = in.handle,
					.out_handle = out.handle, .in_offset = pos * 4,
					.out_offset = ((size_t)s * n + pos) * DRM_WAFER_RESULT_SIZE(TOPK) } };

				ret = wt_ioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &sub);
				last[s] = sub.seqno;
			}
		}
		for (s = 0; s < SLOTS && !ret; s++)
			ret = wt_wait_job(fd, last[s], NULL);
		ok = !ret;
		for (s = 0; s < SLOTS && ok; s++)
			for (pos = 0; pos < n && ok; pos++)
				ok = wt_result_matches(result_at(&out, 0, s * n + pos), pos,
						       ref_arg[pos], ref_topk[pos], TOPK);
		wt_ok(ok, "%d slots x %u jobs submitted before any wait all match (%d)",
		      SLOTS, n, ret);
	}

	wt_model_close(&ref);
	close(fd);
	return wt_done();
}
