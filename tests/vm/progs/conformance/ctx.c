// SPDX-License-Identifier: MIT
/*
 * conformance: CTX_CREATE and CTX_DESTROY.
 */
#include "conformance.h"

uint32_t test_ctx(int fa, int fb, uint32_t model)
{
	struct drm_wafer_ctx_create c;
	struct drm_wafer_ctx_destroy d;
	uint32_t ctx, ctx2;
	int ret;

	memset(&c, POISON, sizeof(c));
	c.model_id = model;
	c.kv_slots = 4;
	c.ctx_len = 64;
	c.flags = 0;
	c.pad = 0;
	ret = ioc(fa, DRM_IOCTL_WAFER_CTX_CREATE, &c);
	expect(ret, 0, "CTX_CREATE 4 slots x 64");
	wt_ok(!ret && c.ctx_id && c.ctx_id != POISON32 && c.kv_bytes != POISON64 && c.kv_bytes &&
	      c.pad == 0 && c.model_id == model && c.kv_slots == 4 && c.ctx_len == 64,
	      "CTX_CREATE output: ctx_id %u, kv_bytes %" PRIu64 ", inputs untouched", c.ctx_id,
	      (uint64_t)c.kv_bytes);
	ctx = ret ? 0 : c.ctx_id;

#define CC(m, s, l, f, p) (struct drm_wafer_ctx_create){ .model_id = (m), .kv_slots = (s), \
		.ctx_len = (l), .flags = (f), .pad = (p) }
	c = CC(model, 1, 16, 1, 0);
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_CREATE, &c), -EINVAL, "CTX_CREATE flags 0x1");
	c = CC(model, 1, 16, 0, 1);
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_CREATE, &c), -EINVAL, "CTX_CREATE pad != 0");
	c = CC(model, 0, 16, 0, 0);
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_CREATE, &c), -EINVAL, "CTX_CREATE kv_slots 0");
	c = CC(model, 257, 16, 0, 0);
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_CREATE, &c), -EINVAL, "CTX_CREATE kv_slots 257");
	c = CC(model, 0xffffffffu, 16, 0, 0);
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_CREATE, &c), -EINVAL, "CTX_CREATE kv_slots 0xffffffff");
	c = CC(model, 1, 0, 0, 0);
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_CREATE, &c), -EINVAL, "CTX_CREATE ctx_len 0");
	c = CC(model, 1, ((const struct wfs_blob_header *)blob)->seq_len + 1, 0, 0);
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_CREATE, &c), -EINVAL,
	       "CTX_CREATE ctx_len the model's max + 1 (%u)", c.ctx_len);
	c = CC(model, 1, 0xffffffffu, 0, 0);
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_CREATE, &c), -EINVAL, "CTX_CREATE ctx_len 0xffffffff");
	c = CC(model, 256, ((const struct wfs_blob_header *)blob)->seq_len, 0, 0);
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_CREATE, &c), -ENOSPC,
	       "CTX_CREATE 256 slots x %u (KV cache larger than SRAM)", c.ctx_len);
	c = CC(model + 1, 1, 16, 0, 0);
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_CREATE, &c), -ENOENT, "CTX_CREATE wrong model_id");
	c = CC(0, 1, 16, 0, 0);
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_CREATE, &c), -ENOENT, "CTX_CREATE model_id 0");
	c = CC(model, 1, 16, 0, 0);
	expect(ioc(fb, DRM_IOCTL_WAFER_CTX_CREATE, &c), -ENOENT,
	       "CTX_CREATE on another file's model (isolation)");

	/* CTX_DESTROY */
	ctx2 = ctx_new(fa, model, 1, 16, &ret);
	expect(ret, 0, "CTX_CREATE 1 slot x 16");
	d = (struct drm_wafer_ctx_destroy){ .ctx_id = ctx2, .pad = 1 };
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_DESTROY, &d), -EINVAL, "CTX_DESTROY pad != 0");
	d = (struct drm_wafer_ctx_destroy){ .ctx_id = 0 };
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_DESTROY, &d), -ENOENT, "CTX_DESTROY ctx_id 0");
	d = (struct drm_wafer_ctx_destroy){ .ctx_id = 0xffffffffu };
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_DESTROY, &d), -ENOENT, "CTX_DESTROY ctx_id 0xffffffff");
	d = (struct drm_wafer_ctx_destroy){ .ctx_id = ctx2 };
	expect(ioc(fb, DRM_IOCTL_WAFER_CTX_DESTROY, &d), -ENOENT,
	       "CTX_DESTROY another file's context (isolation)");
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_DESTROY, &d), 0, "CTX_DESTROY valid");
	expect(ioc(fa, DRM_IOCTL_WAFER_CTX_DESTROY, &d), -ENOENT, "CTX_DESTROY twice");
	return ctx;
}
