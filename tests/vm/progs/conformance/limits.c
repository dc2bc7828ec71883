// SPDX-License-Identifier: MIT
/*
 * conformance: the per-file limits (the program's limits mode).
 */
#include "conformance.h"

/*
 * max_file_models: the file holding @model loads up to the limit, one more
 * is -EMFILE, another file still loads, an unload frees a place.
 */
static void test_limit_models(int fa, int fb)
{
	long lim = param("max_file_models");
	struct drm_wafer_model_unload u = { 0 };
	uint32_t extra[4] = { 0 }, other;
	int ret, n;

	if (lim < 1 || lim > 4 || lim >= (long)info.device_max_models) {
		wt_ok(0, "limits: run with max_file_models in 1..3 (is %ld)", lim);
		return;
	}
	wt_ok(info.max_models == (uint32_t)lim,
	      "GET_INFO max_models == max_file_models (%ld, got %u)", lim, info.max_models);
	for (n = 1, ret = 0; n < lim && !ret; n++)
		extra[n] = load_model(fa, &ret);
	expect(ret, 0, "MODEL_LOAD max_models (%ld) models in one file", lim);
	load_model(fa, &ret);
	expect(ret, -EMFILE, "MODEL_LOAD one model over max_file_models");
	other = load_model(fb, &ret);
	expect(ret, 0, "MODEL_LOAD in another file (max_file_models is per file)");
	u.model_id = other;
	if (other)
		ioc(fb, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u);
	for (n = 1; n < lim; n++) {
		u.model_id = extra[n];
		if (extra[n])
			ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u);
	}
	extra[1] = lim > 1 ? load_model(fa, &ret) : 0;
	if (lim > 1)
		expect(ret, 0, "MODEL_LOAD after MODEL_UNLOAD freed a place");
	u.model_id = extra[1];
	if (extra[1])
		ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u);
}

void test_limits(void)
{
	int fa = open_dev(), fb = open_dev(), ret, i, n;
	uint32_t handles[64], model, ctxs[64];
	struct drm_wafer_bo_create c;
	uint64_t limit = info.max_bo_size;
	struct bo in, out;

	/* BO quota */
	if (limit > (64ull << 20)) {
		wt_ok(0, "limits: run with max_file_bo_mib <= 64 (max_bo_size is %" PRIu64 ")",
		      limit);
	} else {
		uint64_t chunk = limit / 4;

		for (n = 0, ret = 0; n < 4 && !ret; n++) {
			c = (struct drm_wafer_bo_create){ .size = chunk };
			ret = ioc(fa, DRM_IOCTL_WAFER_BO_CREATE, &c);
			handles[n] = c.handle;
		}
		expect(ret, 0, "BO_CREATE 4 x max_bo_size/4 (the whole quota)");
		c = (struct drm_wafer_bo_create){ .size = 4096 };
		expect(ioc(fa, DRM_IOCTL_WAFER_BO_CREATE, &c), -EDQUOT,
		       "BO_CREATE one page over the file's quota");
		c = (struct drm_wafer_bo_create){ .size = limit };
		ret = ioc(fb, DRM_IOCTL_WAFER_BO_CREATE, &c);
		expect(ret, 0, "BO_CREATE max_bo_size in another file (quota is per file)");
		if (!ret)
			gem_close(fb, c.handle);
		gem_close(fa, handles[0]);
		c = (struct drm_wafer_bo_create){ .size = chunk };
		ret = ioc(fa, DRM_IOCTL_WAFER_BO_CREATE, &c);
		expect(ret, 0, "BO_CREATE after GEM_CLOSE returned quota");
		handles[0] = c.handle;
		/* An exported BO stays charged to its creator. */
		{
			int dmabuf;
			uint32_t h;

			prime_export(fa, handles[1], DRM_CLOEXEC, &dmabuf);
			prime_import(fb, dmabuf, &h);
			close(dmabuf);
			gem_close(fa, handles[1]);
			c = (struct drm_wafer_bo_create){ .size = chunk };
			expect(ioc(fa, DRM_IOCTL_WAFER_BO_CREATE, &c), -EDQUOT,
			       "BO_CREATE while an exported BO, closed here, lives in another file");
			if (c.handle && c.handle != handles[1])
				gem_close(fa, c.handle);
			gem_close(fb, h);
			c = (struct drm_wafer_bo_create){ .size = chunk };
			ret = ioc(fa, DRM_IOCTL_WAFER_BO_CREATE, &c);
			expect(ret, 0, "BO_CREATE once the importer closed it too");
			handles[1] = c.handle;
		}
		{
			struct drm_wafer_model_load ml = { .bo_handle = handles[0],
							   .blob_size = limit + 8 };

			expect(ioc(fa, DRM_IOCTL_WAFER_MODEL_LOAD, &ml), -EINVAL,
			       "MODEL_LOAD blob_size over max_bo_size");
		}
		for (i = 0; i < 4; i++)
			gem_close(fa, handles[i]);
	}

	/* Contexts */
	model = load_model(fa, &ret);
	if (!expect(ret, 0, "MODEL_LOAD (limits run)"))
		goto out;
	test_limit_models(fa, fb);
	if (info.max_contexts > 32) {
		wt_ok(0, "limits: run with max_file_contexts <= 32 (is %u)", info.max_contexts);
		ctxs[0] = ctx_new(fa, model, 1, 64, &ret);
	} else {
		for (n = 0, ret = 0; n < (int)info.max_contexts && !ret; n++)
			ctxs[n] = ctx_new(fa, model, 1, 64, &ret);
		expect(ret, 0, "CTX_CREATE max_contexts (%u) contexts", info.max_contexts);
		ctx_new(fa, model, 1, 16, &ret);
		expect(ret, -EMFILE, "CTX_CREATE one more than max_contexts");
		{
			struct drm_wafer_ctx_destroy d = { .ctx_id = ctxs[0] };

			ioc(fa, DRM_IOCTL_WAFER_CTX_DESTROY, &d);
		}
		ctxs[0] = ctx_new(fa, model, 1, 64, &ret);
		expect(ret, 0, "CTX_CREATE after CTX_DESTROY freed a place");
		for (i = 1; i < (int)info.max_contexts; i++) {
			struct drm_wafer_ctx_destroy d = { .ctx_id = ctxs[i] };

			ioc(fa, DRM_IOCTL_WAFER_CTX_DESTROY, &d);
		}
	}

	/* In-flight jobs */
	if (bo_new(fa, &in, 4096) || bo_new(fa, &out, 4096)) {
		wt_ok(0, "limits: job buffers");
		goto out;
	}
	memcpy(in.map, ref_tok, sizeof(ref_tok));
	job_base = (struct drm_wafer_job){ .ctx_id = ctxs[0], .n_tokens = 1, .top_k = TOPK,
		.in_handle = in.handle, .out_handle = out.handle };
	if (info.max_inflight_jobs > 32) {
		wt_ok(0, "limits: run with max_file_inflight <= 32 (is %u)", info.max_inflight_jobs);
	} else {
		uint32_t so, fence;
		uint64_t seqs[33], seq;
		struct drm_wafer_job j = job_base;
		int st;

		ret = vgem_syncobj(fa, &so, &fence);
		if (!wt_ok(!ret, "vgem fence in a syncobj (%s)", ename(ret)))
			goto out;
		j.in_syncobjs = (uintptr_t)&so;
		j.in_syncobj_count = 1;
		for (n = 0, ret = 0; n < (int)info.max_inflight_jobs && !ret; n++)
			ret = submit(fa, &j, &seqs[n]);
		expect(ret, 0, "SUBMIT max_inflight_jobs (%u) jobs held by an in-fence",
		       info.max_inflight_jobs);
		ret = submit(fa, &job_base, &seq);
		expect(ret, -EBUSY, "SUBMIT one job over max_inflight_jobs");
		if (!ret)
			wait_job(fa, seq, 60, NULL);
		vgem_signal(fence);
		for (i = 0, ret = 0; i < n && !ret; i++) {
			ret = wait_job(fa, seqs[i], 60, &st);
			ret = ret ? ret : st;
		}
		expect(ret, 0, "WAIT every held job once the fence signalled");
		usleep(100000);	/* jobs are freed by the scheduler after they signal */
		ret = submit(fa, &job_base, &seq);
		if (!ret)
			ret = wait_job(fa, seq, 60, &st);
		expect(ret ? ret : st, 0, "SUBMIT again once the in-flight jobs completed");
		syncobj_free(fa, so);
	}
	{
		uint32_t got = decode_check(fa, ctxs[0], 0, &in, &out, 0);

		wt_ok(got == NDECODE, "limits run: greedy decode of %d tokens matches (%u)", NDECODE,
		      got);
	}
	/*
	 * MODEL_UNLOAD right after the last CTX_DESTROY (its job just waited
	 * for): nothing of the context may still hold the model.
	 */
	{
		struct drm_wafer_ctx_destroy d = { .ctx_id = ctxs[0] };
		struct drm_wafer_model_unload u = { .model_id = model };
		int first = 0;

		ioc(fa, DRM_IOCTL_WAFER_CTX_DESTROY, &d);
		ret = ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u);
		for (i = 0; i < 20 && !ret; i++) {
			uint64_t seq;
			int st;

			model = load_model(fa, &ret);
			job_base.ctx_id = ret ? 0 : ctx_new(fa, model, 1, 64, &ret);
			if (!ret)
				ret = submit(fa, &job_base, &seq);
			if (!ret)
				ret = wait_job(fa, seq, 60, &st);
			d.ctx_id = job_base.ctx_id;
			if (!ret)
				ret = ioc(fa, DRM_IOCTL_WAFER_CTX_DESTROY, &d);
			u.model_id = model;
			if (!ret)
				ret = ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u);
			first = i;
		}
		expect(ret, 0, "MODEL_UNLOAD at once after WAIT + CTX_DESTROY, 20 rounds (stopped "
		       "at round %d)", first);
		if (ret == -EBUSY) {
			usleep(200000);
			ret = ioc(fa, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u);
			wt_diag("the same MODEL_UNLOAD 200 ms later: %s (0: the context was "
				"still being released asynchronously)", ename(ret));
		}
	}
	bo_free(fa, &in);
	bo_free(fa, &out);
out:
	close(fa);
	close(fb);
}
