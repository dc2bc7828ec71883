// SPDX-License-Identifier: MIT
/*
 * ctx.c - uapi_fuzz: CTX_CREATE and CTX_DESTROY.
 */
#include "uapi_fuzz.h"

void op_ctx_create(struct tctx *t, int fi, int fd, unsigned int gen)
{
	struct drm_wafer_ctx_create c = { 0 };
	const char *invalid = NULL;
	int m = nmut(t), ret, i;

	pthread_mutex_lock(&pool_mu);
	c.model_id = files[fi].model_id;
	if (!c.model_id || pct(t, 8))
		c.model_id = files[(int)rn(t, nfiles)].stale_model_id;
	pthread_mutex_unlock(&pool_mu);
	c.kv_slots = pct(t, 80) ? 1 + (uint32_t)rn(t, 4) : 1 + (uint32_t)rn(t, 256);
	c.ctx_len = pct(t, 80) ? 8 + (uint32_t)rn(t, 120) : 1 + (uint32_t)rn(t, 512);
	while (m--) {
		switch (rn(t, 5)) {
		case 0:
			c.model_id = (uint32_t)v_id(t, c.model_id);
			break;
		case 1:
			c.kv_slots = (uint32_t)v_small(t, c.kv_slots, 256);
			break;
		case 2:
			c.ctx_len = (uint32_t)v_small(t, c.ctx_len, 512);
			break;
		case 3:
			if (pct(t, 50)) {
				c.flags = (uint32_t)v_flags(t);
				invalid = "flags != 0";
			} else {
				c.pad = v_nonzero32(t);
				invalid = "pad != 0";
			}
			break;
		default:
			c.kv_bytes = rnd(t);
			c.ctx_id = (uint32_t)rnd(t);
		}
	}
	if (!c.kv_slots || c.kv_slots > 256)
		invalid = invalid ? invalid : "kv_slots outside 1..256";
	if (!c.ctx_len)
		invalid = invalid ? invalid : "ctx_len 0";
	ret = raw_ioctl(fd, DRM_IOCTL_WAFER_CTX_CREATE, &c);
	count(OP_CTX_CREATE, ret);
	tlog(t, OP_CTX_CREATE, fi, ret, "model %u slots %u len %u flags %#x pad %#x -> ctx %u",
	     c.model_id, c.kv_slots, c.ctx_len, c.flags, c.pad, ret ? 0 : c.ctx_id);
	if (!ret && invalid)
		sure_bug(t, OP_CTX_CREATE, ret, "accepted %s (slots %u, ctx_len %u)", invalid,
			 c.kv_slots, c.ctx_len);
	if (ret == -EFAULT)
		sure_bug(t, OP_CTX_CREATE, ret, "no user pointer in the argument");
	if (ret && ret != -EINVAL && ret != -ENOENT && ret != -EMFILE && ret != -ENOSPC &&
	    ret != -ENOMEM)
		odd(t, OP_CTX_CREATE, ret, "model %u slots %u ctx_len %u", c.model_id,
		    c.kv_slots, c.ctx_len);
	if (ret)
		return;
	pthread_mutex_lock(&pool_mu);
	if (files[fi].gen == gen) {
		struct file_slot *f = &files[fi];

		for (i = 0; i < NCTX; i++)
			if (!f->ctx[(f->ctx_next + i) % NCTX].live)
				break;
		i = (f->ctx_next + (i == NCTX ? 0 : i)) % NCTX;
		f->ctx_next = i + 1;
		f->ctx[i].id = c.ctx_id;
		f->ctx[i].slots = c.kv_slots;
		f->ctx[i].ctx_len = c.ctx_len;
		f->ctx[i].live = 1;
	}
	pthread_mutex_unlock(&pool_mu);
}

void op_ctx_destroy(struct tctx *t, int fi, int fd, unsigned int gen)
{
	int kind;
	struct ctx_rec c = pick_ctx(t, fi, &kind);

	destroy_ctx(t, fi, fd, gen, c.id, pct(t, 10) ? v_nonzero32(t) : 0,
		    OP_CTX_DESTROY);
}
