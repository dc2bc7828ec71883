// SPDX-License-Identifier: MIT
/*
 * submit.c - uapi_fuzz: SUBMIT and WAIT: jobs built valid-looking, then mutated.
 */
#include "uapi_fuzz.h"

/* The documented-invalid field of job @j that SUBMIT must refuse, or NULL. */
const char *job_invalid(const struct drm_wafer_job *j)
{
	if (j->flags & ~DRM_WAFER_JOB_FLAGS)
		return "unknown flags";
	if (!(j->flags & DRM_WAFER_JOB_TIMES) && (j->times_offset || j->times_len))
		return "times_offset / times_len without TIMES";
	if (j->in_syncobj_count > dinfo.max_in_syncobjs)
		return "in_syncobj_count > max_in_syncobjs";
	if (j->in_syncobj_count && !j->in_syncobjs)
		return "in_syncobjs NULL with a count";
	if ((j->flags & DRM_WAFER_JOB_WAIT_SUBMIT) && !j->in_syncobj_count)
		return "WAIT_SUBMIT without in-syncobjs";
	if (j->pad)
		return "pad != 0";
	if (j->layer && !(j->flags & DRM_WAFER_JOB_LAYER))
		return "layer without DRM_WAFER_JOB_LAYER";
	/* The fuzzer's blob is dense: no model of it is expert-parallel. */
	if (j->layer >> DRM_WAFER_XPHASE_SHIFT)
		return "an expert phase on a model without expert-parallel parts";
	if ((j->flags & DRM_WAFER_JOB_NOP) &&
		 (j->flags & ~DRM_WAFER_JOB_WAIT_SUBMIT) != DRM_WAFER_JOB_NOP)
		return "NOP with other flags";
	if ((j->flags & DRM_WAFER_JOB_NOP) && (j->n_tokens || j->start_pos || j->top_k))
		return "NOP with n_tokens, start_pos or top_k";
	if ((j->flags & DRM_WAFER_JOB_NOP) &&
		 (j->in_handle || j->out_handle || j->in_offset || j->out_offset))
		return "NOP with a buffer";
	if (j->flags & DRM_WAFER_JOB_NOP)
		return NULL;	/* the rest describes work, which a NOP has none of */
	if (!j->n_tokens || j->n_tokens > dinfo.max_tokens_per_job)
		return "n_tokens outside 1..max_tokens_per_job";
	if (j->top_k > DRM_WAFER_MAX_TOPK)
		return "top_k > DRM_WAFER_MAX_TOPK";
	if (j->in_offset & 3)
		return "in_offset not 4-byte aligned";
	if (j->out_offset & 7)
		return "out_offset not 8-byte aligned";
	if ((j->flags & DRM_WAFER_JOB_IN_ACT) && (j->in_offset & 63))
		return "IN_ACT in_offset not 64-byte aligned";
	if ((j->flags & DRM_WAFER_JOB_OUT_ACT) && (j->out_offset & 63))
		return "OUT_ACT out_offset not 64-byte aligned";
	if ((j->flags & DRM_WAFER_JOB_OUT_ACT) &&
		 (j->top_k || (j->flags & DRM_WAFER_JOB_ALL_POSITIONS)))
		return "OUT_ACT with top_k or ALL_POSITIONS";
	if ((j->flags & DRM_WAFER_JOB_IN_ACT) && (j->flags & DRM_WAFER_JOB_NOT_BEFORE))
		return "NOT_BEFORE with IN_ACT (records carry their time)";
	if ((uint64_t)j->start_pos + j->n_tokens > 0xffffffffull)
		return "start_pos + n_tokens wraps";
	return NULL;
}

void build_job(struct tctx *t, int fi, struct drm_wafer_job *j, uint32_t *arr,
	       struct job_exp *e)
{
	int ckind, ikind, okind, m = nmut(t);
	struct ctx_rec c = pick_ctx(t, fi, &ckind);
	uint64_t isz, osz, olen, ilen;
	uint32_t maxn, i;

	memset(j, 0, sizeof(*j));
	memset(e, 0, sizeof(*e));
	j->ctx_id = c.id;
	j->slot = (uint32_t)rn(t, c.slots ? c.slots : 1);
	maxn = c.ctx_len ? c.ctx_len : 1;
	j->n_tokens = 1 + (uint32_t)rn(t, pct(t, 85) ? (maxn < 8 ? maxn : 8) : maxn);
	j->start_pos = (uint32_t)rn(t, maxn - j->n_tokens + 1);
	j->flags = pct(t, 20) ? DRM_WAFER_JOB_ALL_POSITIONS : 0;
	/* A floor after the token ids (whatever the BO holds there). */
	j->flags |= pct(t, 10) ? DRM_WAFER_JOB_NOT_BEFORE : 0;
	j->flags |= pct(t, 10) ? DRM_WAFER_JOB_DONE_NS : 0;
	j->top_k = (uint32_t)rn(t, DRM_WAFER_MAX_TOPK + 1);
	ilen = (uint64_t)j->n_tokens * 4 + (j->flags & DRM_WAFER_JOB_NOT_BEFORE ? 8 : 0);
	j->in_handle = pick_handle(t, fi, ilen, &isz, &ikind, 0);
	if (isz >= ilen)
		j->in_offset = rn(t, (isz - ilen) / 4 + 1) * 4;
	olen = (uint64_t)(j->flags & DRM_WAFER_JOB_ALL_POSITIONS ? j->n_tokens : 1) *
	       DRM_WAFER_RESULT_SIZE(j->top_k);
	j->out_handle = pick_handle(t, fi, olen, &osz, &okind, 0);
	if (osz >= olen)
		j->out_offset = rn(t, (osz - olen) / 8 + 1) * 8;
	if (pct(t, 20)) {
		j->in_syncobj_count = 1 + (uint32_t)rn(t, 4);
		for (i = 0; i < j->in_syncobj_count; i++)
			arr[i] = pick_sync(t, fi, 1);
		j->in_syncobjs = (uintptr_t)arr;
	}
	if (pct(t, 15))
		j->out_syncobj = pick_sync(t, fi, 0);
	if (pct(t, 10)) {	/* a NOP: context and slot only (mutations add the rest) */
		j->flags = DRM_WAFER_JOB_NOP;
		j->n_tokens = j->start_pos = j->top_k = 0;
		j->in_handle = j->out_handle = 0;
		j->in_offset = j->out_offset = 0;
	}
	while (m--) {
		switch (rn(t, 17)) {
		case 0: j->ctx_id = (uint32_t)v_id(t, j->ctx_id); break;
		case 1: j->slot = (uint32_t)v_small(t, j->slot, c.slots); break;
		case 2: j->start_pos = (uint32_t)v_small(t, j->start_pos, c.ctx_len); break;
		case 3: j->n_tokens = (uint32_t)v_small(t, j->n_tokens, c.ctx_len); break;
		case 4:
			j->flags = pct(t, 20) ? j->flags ^ DRM_WAFER_JOB_NOP : (uint32_t)v_flags(t);
			break;
		case 5: j->top_k = (uint32_t)v_small(t, j->top_k, DRM_WAFER_MAX_TOPK); break;
		case 6: j->in_handle = (uint32_t)v_id(t, j->in_handle); break;
		case 7: j->out_handle = (uint32_t)v_id(t, j->out_handle); break;
		case 8: j->in_offset = v_off(t, j->in_offset, isz); break;
		case 9: j->out_offset = v_off(t, j->out_offset, osz); break;
		case 10:
			j->in_syncobjs = v_rptr(t, (uintptr_t)arr);
			if (!j->in_syncobj_count)
				j->in_syncobj_count = 1;
			if (j->in_syncobjs != (uintptr_t)scratch + 2 * PAGE &&
			    (j->in_syncobjs < (uintptr_t)arr ||
			     j->in_syncobjs > (uintptr_t)arr + 8))
				e->fault_ok = 1;
			break;
		case 11: {
			static const uint32_t cn[] = { 0, 1, 63, 64, 65, 128, 0x80000000,
						       0xffffffff };
			j->in_syncobj_count = cn[rn(t, 8)];
			if (!j->in_syncobjs && pct(t, 50))
				j->in_syncobjs = (uintptr_t)arr;
			break;
		}
		case 12: j->out_syncobj = (uint32_t)v_id(t, j->out_syncobj); break;
		case 13:	/* activation records in and/or out (layer ranges) */
			j->flags |= (uint32_t)(1 + rn(t, 3)) << 1;
			if (pct(t, 50))
				j->top_k = 0;
			break;
		case 14:	/* a floor (on any input), or done_ns in the CQE */
			j->flags |= pct(t, 50) ? DRM_WAFER_JOB_NOT_BEFORE : DRM_WAFER_JOB_DONE_NS;
			break;
		case 15:	/* a layer part's job, a stray layer, or pad */
			if (pct(t, 50))
				j->flags |= DRM_WAFER_JOB_LAYER;
			if (pct(t, 80))
				j->layer = (uint32_t)v_small(t, j->layer, 5);
			else
				j->pad = v_nonzero32(t);
			/* An expert phase (bits 24..31), 1..5 valid on EP parts only. */
			if (pct(t, 20))
				j->layer |= (uint32_t)rn(t, 7) << DRM_WAFER_XPHASE_SHIFT;
			break;
		default: j->times_len = (uint32_t)v_nonzero(t); break;
		}
	}
	/*
	 * WAIT_SUBMIT on a syncobj without a fence sleeps 5 s before -ETIME:
	 * fuzz only its refusal without in-syncobjs (conformance runs it).
	 */
	if (j->in_syncobj_count)
		j->flags &= ~DRM_WAFER_JOB_WAIT_SUBMIT;
	/* arr has room for 72 handles: make the ones past those we set fail. */
	for (i = 4; i < 72; i++)
		arr[i] = 0xfffffff0u;
	if (j->in_syncobjs == (uintptr_t)scratch + 2 * PAGE)
		e->fault_ok = 0;	/* readable zeros: -ENOENT, not -EFAULT */
	e->invalid = job_invalid(j);
	if (!j->in_syncobj_count)
		e->fault_ok = 0;
	snprintf(e->what, sizeof(e->what),
		 "ctx %u(k%d) slot %u pos %u n %u fl %#x k %u in %u(k%d)+%#" PRIx64
		 " out %u(k%d)+%#" PRIx64 " sync %#" PRIx64 "x%u out %u times %u+%u",
		 j->ctx_id, ckind, j->slot, j->start_pos, j->n_tokens, j->flags, j->top_k,
		 j->in_handle, ikind, (uint64_t)j->in_offset, j->out_handle, okind,
		 (uint64_t)j->out_offset, (uint64_t)j->in_syncobjs, j->in_syncobj_count,
		 j->out_syncobj, j->times_offset, j->times_len);
}

void check_job_ret(struct tctx *t, enum op op, int ret, const struct job_exp *e)
{
	if (!ret && e->invalid)
		sure_bug(t, op, ret, "accepted a job with %s: %s", e->invalid, e->what);
	if (ret == -EFAULT && !e->fault_ok)
		sure_bug(t, op, ret, "-EFAULT without a bad user pointer: %s", e->what);
	if (ret && ret != -EINVAL && ret != -ENOENT && ret != -EBUSY && ret != -EFAULT &&
	    ret != -ENOMEM && ret != -EINTR)
		odd(t, op, ret, "%s", e->what);
}

void note_status(struct tctx *t, enum op op, int status, const char *what)
{
	int e = status < 0 ? -status : 0;

	atomic_fetch_add(&status_counts[e > MAX_ERRNO ? MAX_ERRNO : e], 1);
	/* No fault is injected: a timeout or reset means the device hung. */
	if (status == -ETIMEDOUT || status == -EIO || status == -ENODEV)
		odd(t, op, status, "job status (device reset?) %s", what);
}

void op_submit(struct tctx *t, int fi, int fd, unsigned int gen)
{
	struct drm_wafer_submit s;
	struct job_exp e;
	uint32_t arr[72];
	int ret;

	build_job(t, fi, &s.job, arr, &e);
	s.seqno = pct(t, 10) ? rnd(t) : 0;
	ret = raw_ioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &s);
	count(OP_SUBMIT, ret);
	tlog(t, OP_SUBMIT, fi, ret, "%s -> seq %" PRIu64, e.what, ret ? 0 : (uint64_t)s.seqno);
	check_job_ret(t, OP_SUBMIT, ret, &e);
	if (!ret) {
		add_seq(fi, gen, s.seqno);
		if (s.job.out_syncobj)
			set_sync(fi, gen, s.job.out_syncobj, 1, 1);
	}
}

void op_wait(struct tctx *t, int fi, int fd)
{
	struct drm_wafer_wait w = { 0 };
	int ret, m = nmut(t);
	const char *invalid = NULL;
	uint64_t last;

	pthread_mutex_lock(&pool_mu);
	w.seqno = files[fi].seq[rn(t, NSEQ)];
	last = files[fi].last_seq;
	if (!w.seqno)
		w.seqno = last;
	if (pct(t, 40))
		w.seqno = files[fi].seq[(files[fi].seq_next + NSEQ - 1 - rn(t, 4)) % NSEQ];
	pthread_mutex_unlock(&pool_mu);
	w.timeout_ns = wt_deadline_ms(pct(t, 70) ? (int64_t)rn(t, 200) : 0);
	while (m--) {
		switch (rn(t, 4)) {
		case 0: {
			uint64_t v[] = { 0, last + 1, last + 1000, UINT64_MAX, 1ull << 63 };

			w.seqno = v[rn(t, 5)];
			break;
		}
		case 1: {
			int64_t v[] = { 0, -1, INT64_MIN, 1, wt_deadline_ms(-1000) };

			w.timeout_ns = v[rn(t, 5)];
			break;
		}
		case 2:
			w.flags = (uint32_t)v_flags(t);
			invalid = "flags != 0";
			break;
		default:
			w.status = (int32_t)rnd(t);
			w.device_ns = rnd(t);
		}
	}
	if (!w.seqno)
		invalid = invalid ? invalid : "seqno 0";
	if (w.seqno == UINT64_MAX || w.seqno == 1ull << 63)
		invalid = invalid ? invalid : "seqno never issued";
	ret = raw_ioctl(fd, DRM_IOCTL_WAFER_WAIT, &w);
	count(OP_WAIT, ret);
	tlog(t, OP_WAIT, fi, ret, "seq %" PRIu64 " (last %" PRIu64 ") deadline %" PRId64
	     " flags %#x -> status %d", (uint64_t)w.seqno, last, (int64_t)w.timeout_ns,
	     w.flags, ret ? 0 : w.status);
	if (!ret && invalid)
		sure_bug(t, OP_WAIT, ret, "accepted %s (seqno %" PRIu64 ")", invalid,
			 (uint64_t)w.seqno);
	if (ret == -EFAULT)
		sure_bug(t, OP_WAIT, ret, "no user pointer in the argument");
	if (ret && ret != -EINVAL && ret != -ENOENT && ret != -ETIME && ret != -EINTR &&
	    ret != -ERESTART)
		odd(t, OP_WAIT, ret, "seqno %" PRIu64, (uint64_t)w.seqno);
	if (!ret)
		note_status(t, OP_WAIT, w.status, "WAIT");
}
