// SPDX-License-Identifier: MIT
/*
 * conformance: GET_INFO.
 */
#include "conformance.h"

/* GET_INFO of the file's model @id (0: its first); its model members. */
int info_of(int fd, uint32_t id, struct drm_wafer_device_info *d)
{
	struct drm_wafer_get_info gi = { .info_ptr = (uintptr_t)d, .info_size = sizeof(*d),
					 .model_id = id };

	memset(d, 0, sizeof(*d));
	return ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi);
}

void test_get_info(int fd)
{
	unsigned char page[4096];
	struct drm_wafer_get_info gi;
	struct drm_wafer_device_info *d = (void *)page;
	uint64_t known = DRM_WAFER_CAP_URING_SUBMIT | DRM_WAFER_CAP_INT4 | DRM_WAFER_CAP_INT8 |
			 DRM_WAFER_CAP_ALL_POSITIONS | DRM_WAFER_CAP_PRIME |
			 DRM_WAFER_CAP_WEIGHT_STREAM | DRM_WAFER_CAP_NOT_BEFORE |
			 DRM_WAFER_CAP_LAYER_PARTS | DRM_WAFER_CAP_EXPERT_GROUPS |
			 DRM_WAFER_CAP_EXPERT_PARALLEL;
	void *unmapped;
	size_t i;
	int ret, ok;

	/* Valid, with a 4 KiB buffer: exactly sizeof(info) written. */
	memset(page, POISON, sizeof(page));
	gi = (struct drm_wafer_get_info){ .info_ptr = (uintptr_t)page, .info_size = sizeof(page) };
	ret = ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi);
	expect(ret, 0, "GET_INFO valid, info_size 4096");
	memcpy(&info, page, sizeof(info));
	wt_ok(gi.info_size == sizeof(info) && gi.model_id == 0,
	      "GET_INFO info_size out is sizeof(info) %zu (got %u)", sizeof(info), gi.info_size);
	for (ok = 1, i = sizeof(info); i < sizeof(page); i++)
		ok &= page[i] == POISON;
	wt_ok(ok, "GET_INFO writes nothing beyond sizeof(info)");
	for (ok = 1, i = 0; i + 4 <= sizeof(info); i += 4) {
		uint32_t w;

		memcpy(&w, page + i, 4);
		if (w == POISON32) {
			wt_diag("GET_INFO: word at offset %zu still holds the poison", i);
			ok = 0;
		}
	}
	wt_ok(ok, "GET_INFO every output word written (no poison left in sizeof(info))");
	ok = !looks_like_kernel_ptr(d->caps) && !looks_like_kernel_ptr(d->sram_bytes_per_stage) &&
	     !looks_like_kernel_ptr(d->sram_bytes_free) && !looks_like_kernel_ptr(d->clock_hz) &&
	     !looks_like_kernel_ptr(d->max_bo_size);
	wt_ok(ok, "GET_INFO no kernel pointer in the output");
	wt_ok(d->size == sizeof(info) && d->api_version == DRM_WAFER_API_VERSION,
	      "GET_INFO size %u == %zu, api_version %u == %d", d->size, sizeof(info),
	      d->api_version, DRM_WAFER_API_VERSION);
	wt_ok(!(d->caps & ~known) && (d->caps & DRM_WAFER_CAP_PRIME),
	      "GET_INFO caps 0x%" PRIx64 " only known bits, PRIME set", (uint64_t)d->caps);
	wt_ok(d->profile <= DRM_WAFER_PROFILE_LPU && d->stages > 0 &&
	      d->sram_bytes_per_stage > 0 && d->clock_hz > 0 && d->macs_per_cycle > 0 &&
	      d->numa_node >= -1,
	      "GET_INFO profile %u, %u stages x %" PRIu64 " bytes, clock %" PRIu64
	      ", macs %u, numa %d plausible", d->profile, d->stages,
	      (uint64_t)d->sram_bytes_per_stage, (uint64_t)d->clock_hz, d->macs_per_cycle,
	      d->numa_node);
	wt_ok(d->sram_bytes_free > 0 &&
	      d->sram_bytes_free <= (uint64_t)d->stages * d->sram_bytes_per_stage,
	      "GET_INFO sram_bytes_free %" PRIu64 " in 1..stages*sram (%" PRIu64 ")",
	      (uint64_t)d->sram_bytes_free, (uint64_t)(d->stages * d->sram_bytes_per_stage));
	wt_ok(d->max_bo_size > 0 && d->max_models >= 1 && d->max_contexts >= 1 &&
	      d->max_inflight_jobs >= 1 && d->job_timeout_ms >= 1,
	      "GET_INFO limits: max_bo_size %" PRIu64 ", models %u, contexts %u, inflight %u, "
	      "timeout %u ms", (uint64_t)d->max_bo_size, d->max_models, d->max_contexts,
	      d->max_inflight_jobs, d->job_timeout_ms);
	wt_ok(d->max_tokens_per_job >= 1,
	      "GET_INFO max_tokens_per_job >= 1 (got %u)", d->max_tokens_per_job);
	wt_ok(d->max_in_syncobjs >= 1,
	      "GET_INFO max_in_syncobjs >= 1 (got %u)", d->max_in_syncobjs);

	/* The limits and sizes it reports are the module parameters in force. */
	{
		long bo_mib = param("max_file_bo_mib"), nctx = param("max_file_contexts");
		long infl = param("max_file_inflight"), tmo = param("job_timeout_ms");
		long kib = param("sram_kib"), nst = param("stages");

		/* Per-device lists: empty (unparsed, < 0) when not given. */
		kib = kib < 0 ? 0 : kib;
		nst = nst < 0 ? 0 : nst;

		wt_ok(bo_mib < 0 || d->max_bo_size == (uint64_t)bo_mib << 20,
		      "GET_INFO max_bo_size == max_file_bo_mib MiB (%ld)", bo_mib);
		wt_ok(nctx < 0 || d->max_contexts == (uint32_t)nctx,
		      "GET_INFO max_contexts == max_file_contexts (%ld)", nctx);
		wt_ok(infl < 0 || d->max_inflight_jobs == (uint32_t)infl,
		      "GET_INFO max_inflight_jobs == max_file_inflight (%ld)", infl);
		wt_ok(tmo < 0 || d->job_timeout_ms == (uint32_t)tmo,
		      "GET_INFO job_timeout_ms == job_timeout_ms parameter (%ld)", tmo);
		wt_ok(nst <= 0 || d->stages == (uint32_t)nst,
		      "GET_INFO stages == stages parameter (%ld)", nst);
		wt_ok(kib <= 0 ? !(d->sram_bytes_per_stage & 1023) :
		      d->sram_bytes_per_stage == (uint64_t)kib << 10,
		      "GET_INFO sram_bytes_per_stage %" PRIu64 " == sram_kib parameter (%ld KiB; "
		      "0: the profile's, whole KiB)", (uint64_t)d->sram_bytes_per_stage, kib);
	}

	/* Size negotiation: 8 bytes in, 8 written. */
	memset(page, POISON, sizeof(page));
	gi = (struct drm_wafer_get_info){ .info_ptr = (uintptr_t)page, .info_size = 8 };
	ret = ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi);
	for (ok = 1, i = 8; i < sizeof(page); i++)
		ok &= page[i] == POISON;
	expect(ret, 0, "GET_INFO info_size 8 (an old binary)");
	wt_ok(ok && gi.info_size == 8 && d->size == sizeof(info),
	      "GET_INFO info_size 8: 8 bytes written, size field %u, info_size out %u",
	      d->size, gi.info_size);
	memset(page, POISON, sizeof(page));
	gi = (struct drm_wafer_get_info){ .info_ptr = (uintptr_t)page, .info_size = 13 };
	ret = ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi);
	for (ok = 1, i = 13; i < sizeof(page); i++)
		ok &= page[i] == POISON;
	wt_ok(!ret && ok && gi.info_size == 13,
	      "GET_INFO info_size 13 (unaligned): exactly 13 bytes written (%d)", ret);

	gi = (struct drm_wafer_get_info){ .info_ptr = (uintptr_t)page, .info_size = sizeof(info),
					  .model_id = 1 };
	expect(ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi), -ENOENT,
	       "GET_INFO model_id 1 of a file that holds no model");
	gi.model_id = 0xffffffffu;
	expect(ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi), -ENOENT, "GET_INFO model_id 0xffffffff");
	ret = info_of(fd, 0, d);
	wt_ok(!ret && d->model_id == 0 && d->model_sram_bytes == 0 && d->model_layers == 0 &&
	      d->device_max_models >= d->max_models && d->max_models >= 1,
	      "GET_INFO without a model: model_id 0, model members 0, device_max_models %u >= "
	      "max_models %u", d->device_max_models, d->max_models);
	gi = (struct drm_wafer_get_info){ .info_ptr = (uintptr_t)page, .info_size = 0 };
	expect(ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi), -EINVAL, "GET_INFO info_size 0");
	gi = (struct drm_wafer_get_info){ .info_ptr = (uintptr_t)page, .info_size = 7 };
	expect(ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi), -EINVAL, "GET_INFO info_size 7 (< 8)");
	gi = (struct drm_wafer_get_info){ .info_ptr = 0, .info_size = sizeof(info) };
	expect(ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi), -EINVAL, "GET_INFO info_ptr NULL");
	unmapped = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(unmapped, 4096);
	gi = (struct drm_wafer_get_info){ .info_ptr = (uintptr_t)unmapped,
					  .info_size = sizeof(info) };
	expect(ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi), -EFAULT, "GET_INFO info_ptr unmapped");
	unmapped = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	gi = (struct drm_wafer_get_info){ .info_ptr = (uintptr_t)unmapped,
					  .info_size = sizeof(info) };
	expect(ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi), -EFAULT, "GET_INFO info_ptr read-only");
	munmap(unmapped, 4096);
	gi = (struct drm_wafer_get_info){ .info_ptr = 0xffff800000000000ull,
					  .info_size = sizeof(info) };
	expect(ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi), -EFAULT, "GET_INFO info_ptr kernel address");
	gi = (struct drm_wafer_get_info){ .info_ptr = (uintptr_t)page, .info_size = 0xffffffffu };
	memset(page, POISON, sizeof(page));
	ret = ioc(fd, DRM_IOCTL_WAFER_GET_INFO, &gi);
	wt_ok(!ret && gi.info_size == sizeof(info) && page[sizeof(info)] == POISON,
	      "GET_INFO info_size 0xffffffff writes only sizeof(info) (%d, out %u)", ret,
	      gi.info_size);

	/* An ioctl number past the table. */
	{
		struct drm_wafer_get_info x = { 0 };

		expect(ioc(fd, DRM_IOWR(DRM_COMMAND_BASE + DRM_WAFER_WAIT + 1,
					struct drm_wafer_get_info), &x), -EINVAL,
		       "driver ioctl nr 0x%x (unknown)", DRM_WAFER_WAIT + 1);
	}
}
