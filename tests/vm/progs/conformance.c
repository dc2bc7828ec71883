// SPDX-License-Identifier: MIT
/*
 * VM test: uapi conformance of the wafer DRM accel driver.
 *
 * For every ioctl (GET_INFO, BO_CREATE, BO_INFO, MODEL_LOAD, MODEL_UNLOAD,
 * CTX_CREATE, CTX_DESTROY, SUBMIT, WAIT), PRIME export/import and mmap of
 * a BO: the valid use, then each invalid field as its own named case that
 * expects its documented errno.  Output structs are poisoned (0xA5) first
 * and every output byte is checked.  Handles and ids of another open file
 * must not work (isolation).  After the invalid cases the shared model still
 * decodes correctly (compared with firmware-sim run in this process).
 *
 * Jobs that must stay queued (WAIT -ETIME, the in-flight limit, closing a
 * file with queued jobs) wait on an in-syncobj holding a vgem fence that the
 * test signals itself (vgem must be loaded; conformance.sh does it).
 *
 * Usage: conformance [main|limits|nospc]
 *   main    every case that runs with the default module parameters
 *   limits  per-file limits; run with small max_file_bo_mib,
 *           max_file_contexts and max_file_inflight
 *   nospc   MODEL_LOAD -ENOSPC; run with stages=1 sram_kib=64
 *
 * One "ok - " / "not ok - " line per case; exits 1 if any case failed.
 * CONFORMANCE.md maps every case to its errno.
 *
 * Each ioctl group's cases are in conformance/<group>.c (conformance.h
 * lists them); this file packs the model, runs the groups in order and
 * holds the flows that span them: a dma-heap output, a queued job outliving
 * its context, teardown, and closing a file with a job still queued.
 */
#include "conformance/conformance.h"

static int setup_blobs(void)
{
	struct wfs_pack_opts po = { .wbits = 8, .group_size = 32 };
	struct wfs_pack_opts pc = { .wbits = 8, .group_size = 32, .checksum = 1 };
	struct wfs_topk_entry tk[TOPK];
	struct wt_model ref;
	struct wfs_ckpt ck;
	uint32_t pos;

	if (wfs_ckpt_load(wt_model_path("stories260K.bin"), &ck) ||
	    wfs_pack(&ck, &po, &blob, &blob_len) || wfs_pack(&ck, &pc, &blob_ck, &blob_ck_len))
		return -1;
	if (wt_model_open(&ref, blob, blob_len, 64, 0))
		return -1;
	ref_tok[0] = 1;	/* BOS */
	for (pos = 0; pos < NDECODE; pos++)
		ref_tok[pos + 1] = wt_model_step(&ref, ref_tok[pos], pos, TOPK, tk);
	wt_model_close(&ref);
	return 0;
}

static void run_main(void)
{
	int fa = open_dev(), fb = open_dev(), fc, ret;
	uint32_t model = 0, ctx, got;
	struct bo in, out, heap_out = { 0 };

	test_get_info(fa);
	test_bos(fa, fb);
	test_model_load(fa, fb, &model);
	if (!model)
		return;
	test_model_unload_invalid(fa, fb, model);
	ctx = test_ctx(fa, fb, model);
	if (!ctx || bo_new(fa, &in, 4096) || bo_new(fa, &out, 4096)) {
		wt_ok(0, "context and job buffers");
		return;
	}
	test_submit(fa, fb, ctx, &in, &out);
	test_uring(fa);
	test_not_before(fa, &in);
	test_wait(fa, fb);
	if (vgem_fd >= 0)
		test_wait_queued(fa);
	else
		wt_ok(0, "vgem is not loaded: the queued-job WAIT cases did not run");

	/* The valid flow after all of the above. */
	got = decode_check(fa, ctx, 1, &in, &out, 0);
	wt_ok(got == NDECODE, "greedy decode of %d tokens after the invalid cases matches "
	      "in-process firmware-sim (first mismatch at %u)", NDECODE, got);
	test_two_models(fa, ctx, &in, &out);

	/* A job writing into an imported system dma-heap buffer. */
	{
		int heap = open("/dev/dma_heap/system", O_RDWR | O_CLOEXEC);
		struct dma_heap_allocation_data al = { .len = 4096, .fd_flags = O_RDWR | O_CLOEXEC };
		struct drm_wafer_bo_info bi = { 0 };

		if (heap >= 0 && !ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &al) &&
		    !prime_import(fa, (int)al.fd, &heap_out.handle)) {
			bi.handle = heap_out.handle;
			ioc(fa, DRM_IOCTL_WAFER_BO_INFO, &bi);
			heap_out.size = bi.size;
			heap_out.map = mmap(NULL, bi.size, PROT_READ | PROT_WRITE, MAP_SHARED, fa,
					    bi.mmap_offset);
			if (heap_out.map == MAP_FAILED)
				heap_out.map = NULL;
			got = heap_out.map ? decode_check(fa, ctx, 2, &in, &heap_out, 64) : 0;
			wt_ok(got == NDECODE, "greedy decode into an imported dma-heap BO matches "
			      "(first mismatch at %u)", got);
			bo_free(fa, &heap_out);
			close((int)al.fd);
		} else {
			wt_diag("no system dma-heap: imported output BO not tested");
		}
		if (heap >= 0)
			close(heap);
	}

	/* A queued job keeps its context and buffers alive. */
	if (vgem_fd >= 0) {
		uint32_t ctx2 = ctx_new(fa, model, 1, 16, &ret), so = 0, fence = 0;
		struct drm_wafer_ctx_destroy d = { .ctx_id = ctx2 };
		struct bo o2;
		uint64_t seq = 0;
		int st = 0;

		memcpy(in.map, ref_tok, sizeof(ref_tok));
		if (!ret)
			ret = bo_new(fa, &o2, 4096);
		if (!ret)
			ret = vgem_syncobj(fa, &so, &fence);
		if (!ret) {
			struct drm_wafer_job j = { .ctx_id = ctx2, .n_tokens = 1, .top_k = TOPK,
				.in_handle = in.handle, .out_handle = o2.handle,
				.in_syncobjs = (uintptr_t)&so, .in_syncobj_count = 1 };

			ret = submit(fa, &j, &seq);
		}
		expect(ret, 0, "SUBMIT on a fresh context behind an unsignalled fence");
		expect(ioc(fa, DRM_IOCTL_WAFER_CTX_DESTROY, &d), 0,
		       "CTX_DESTROY while its job is queued");
		expect(gem_close(fa, o2.handle), 0, "GEM_CLOSE the queued job's output BO");
		o2.handle = 0;
		vgem_signal(fence);
		ret = ret ? ret : wait_job(fa, seq, 60, &st);
		expect(ret ? ret : st, 0, "WAIT the job whose context and output handle are gone");
		wt_ok(o2.map && ((struct drm_wafer_token_result *)o2.map)->argmax == ref_tok[1],
		      "its result is right (argmax %u, reference %u)",
		      o2.map ? ((struct drm_wafer_token_result *)o2.map)->argmax : 0, ref_tok[1]);
		bo_free(fa, &o2);
		syncobj_free(fa, so);
	}

	/* Teardown: unload is refused while a context exists. */
	{
		struct drm_wafer_model_unload u = { .model_id = model };
		struct drm_wafer_ctx_destroy d = { .ctx_id = ctx };

		expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), -EBUSY,
		       "MODEL_UNLOAD while a context of the model exists");
		expect(ioc(fa, DRM_IOCTL_WAFER_CTX_DESTROY, &d), 0, "CTX_DESTROY the last context");
		expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), 0, "MODEL_UNLOAD valid");
		expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), -ENOENT, "MODEL_UNLOAD twice");
		ctx_new(fa, model, 1, 16, &ret);
		expect(ret, -ENOENT, "CTX_CREATE on an unloaded model");
	}
	bo_free(fa, &in);
	bo_free(fa, &out);

	/* Another file loads the model once the first unloaded it. */
	model = load_model(fb, &ret);
	expect(ret, 0, "MODEL_LOAD from the other file after the owner unloaded");
	if (!ret) {
		struct drm_wafer_model_unload u = { .model_id = model };

		expect(ioc(fb, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u), 0, "MODEL_UNLOAD by the other file");
	}

	/* Closing a file whose job is still queued behind an unsignalled fence. */
	fc = open_dev();
	model = load_model(fc, &ret);
	ctx = model ? ctx_new(fc, model, 1, 16, &ret) : 0;
	if (vgem_fd >= 0 && ctx && !bo_new(fc, &in, 4096) && !bo_new(fc, &out, 4096)) {
		struct drm_wafer_job j = { .ctx_id = ctx, .n_tokens = 1, .top_k = TOPK,
			.in_handle = in.handle, .out_handle = out.handle, .in_syncobj_count = 1 };
		uint32_t so, fence;
		uint64_t seq;

		memcpy(in.map, ref_tok, sizeof(ref_tok));
		ret = vgem_syncobj(fc, &so, &fence);
		j.in_syncobjs = (uintptr_t)&so;
		if (!ret)
			ret = submit(fc, &j, &seq);
		expect(ret, 0, "SUBMIT behind an unsignalled fence, then close the file");
		munmap(in.map, in.size);
		munmap(out.map, out.size);
		close(fc);
		vgem_signal(fence);
		usleep(500000);
		model = load_model(fa, &ret);
		expect(ret, 0, "MODEL_LOAD after a file closed with a queued job (its model is "
		       "released)");
	} else {
		wt_ok(0, "close with a queued job: setup (%s)", ename(ret));
		close(fc);
		model = load_model(fa, &ret);
	}

	/* And the device still works from a fresh state. */
	if (model) {
		ctx = ctx_new(fa, model, 2, 64, &ret);
		if (ctx && !bo_new(fa, &in, 4096) && !bo_new(fa, &out, 4096)) {
			got = decode_check(fa, ctx, 1, &in, &out, 0);
			wt_ok(got == NDECODE, "final greedy decode of %d tokens matches (%u)", NDECODE,
			      got);
			bo_free(fa, &in);
			bo_free(fa, &out);
		} else {
			wt_ok(0, "final context and buffers (%s)", ename(ret));
		}
	} else {
		wt_ok(0, "final decode: no model loaded (%s)", ename(ret));
	}
	close(fa);
	close(fb);
	test_layer_range();
	test_layer_parts();
	test_expert_parallel();
}

static void run_nospc(void)
{
	int fa = open_dev(), ret;
	struct drm_wafer_model_load ml;
	struct bo b;

	ret = bo_new(fa, &b, blob_len);
	if (!expect(ret, 0, "BO for the model blob"))
		return;
	memcpy(b.map, blob, blob_len);
	ret = model_load_poisoned(fa, b.handle, 0, 0, 0, &ml);
	expect(ret, -ENOSPC, "MODEL_LOAD a model larger than SRAM (%u x %" PRIu64 " bytes)",
	       info.stages, (uint64_t)info.sram_bytes_per_stage);
	wt_ok(ml.sram_needed != POISON64 && ml.sram_needed > info.sram_bytes_per_stage,
	      "MODEL_LOAD -ENOSPC sets sram_needed (%" PRIu64 ")", (uint64_t)ml.sram_needed);
	wt_ok(ml.model_id == POISON32 || ml.model_id == 0,
	      "MODEL_LOAD -ENOSPC leaves model_id untouched or zero (0x%x)", ml.model_id);
	ml = (struct drm_wafer_model_load){ .bo_handle = b.handle, .blob_size = blob_len,
					    .flags = DRM_WAFER_LOAD_STREAM };
	expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -ENOSPC,
	       "MODEL_LOAD DRM_WAFER_LOAD_STREAM where even the streaming window does not fit");
	wt_ok(ml.sram_needed > info.sram_bytes_per_stage,
	      "MODEL_LOAD streaming -ENOSPC sets sram_needed (%" PRIu64 ")",
	      (uint64_t)ml.sram_needed);
	bo_free(fa, &b);
	/* The failed load left nothing behind: a CTX_CREATE finds no model. */
	ctx_new(fa, 1, 1, 16, &ret);
	expect(ret, -ENOENT, "CTX_CREATE after a failed MODEL_LOAD");
	close(fa);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "main";
	struct drm_wafer_get_info gi = { .info_ptr = (uintptr_t)&info, .info_size = sizeof(info) };
	int fd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (setup_blobs()) {
		printf("not ok - packing the shared model / in-process reference\n");
		return 1;
	}
	fd = open_dev();
	if (ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi)) {
		printf("not ok - GET_INFO: %s\n", strerror(errno));
		return 1;
	}
	close(fd);
	vgem_open();
	if (vgem_fd < 0)
		wt_diag("vgem not found: load it (modprobe vgem) for the queued-job cases");

	if (!strcmp(mode, "main")) {
		run_main();
	} else if (!strcmp(mode, "limits")) {
		test_limits();
	} else if (!strcmp(mode, "nospc")) {
		run_nospc();
	} else {
		fprintf(stderr, "usage: conformance [main|limits|nospc]\n");
		return 2;
	}
	return wt_done();
}
