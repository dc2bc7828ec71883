// SPDX-License-Identifier: MIT
/*
 * conformance: a job's NOT_BEFORE floor and DONE_NS.
 */
#include "conformance.h"

/* Job @j submitted and waited for: 0 or -errno; WAIT's output in @w. */
static int run_wait(int fd, const struct drm_wafer_job *j, struct drm_wafer_wait *w)
{
	uint64_t seq;
	int ret = submit(fd, j, &seq);

	memset(w, POISON, sizeof(*w));
	w->seqno = seq;
	w->timeout_ns = deadline(60);
	w->flags = 0;
	return ret ? ret : ioc(fd, DRM_IOCTL_WAFER_WAIT, w);
}

/* One token id at @off of the input BO, then the floor @t (NOT_BEFORE). */
static struct drm_wafer_job floor_job(struct bo *in, uint64_t off, uint64_t t)
{
	struct drm_wafer_job j = job_base;

	memcpy((char *)in->map + off, &ref_tok[0], sizeof(ref_tok[0]));
	memcpy((char *)in->map + off + sizeof(ref_tok[0]), &t, sizeof(t));
	j.in_offset = off;
	j.flags = DRM_WAFER_JOB_NOT_BEFORE;
	return j;
}

/* io_uring with CQE32: the CQE's res, and big_cqe[0] in *@big. */
static int uring_big(int fd, const struct drm_wafer_job *j, uint64_t *big)
{
	struct io_uring_params p = { .flags = IORING_SETUP_SQE128 | IORING_SETUP_CQE32 };
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	int res;

	if (io_uring_queue_init_params(4, &ring, &p))
		return -1000;
	wt_uring_prep_submit(io_uring_get_sqe(&ring), fd, j, 1);
	io_uring_submit(&ring);
	res = io_uring_wait_cqe(&ring, &cqe) ? -1001 : cqe->res;
	if (res > -1000) {
		*big = cqe->big_cqe[0];
		io_uring_cqe_seen(&ring, cqe);
	}
	io_uring_queue_exit(&ring);
	return res;
}

/*
 * DRM_WAFER_JOB_NOT_BEFORE: a floor after the token ids delays the job to
 * it and never advances it; WAIT's done_ns; DRM_WAFER_JOB_DONE_NS puts the
 * completion time in the CQE.  Floors a second past the device's clock
 * make the effect exact whatever ran before.
 */
void test_not_before(int fa, struct bo *in)
{
	uint64_t off = in->size - 64, f, big = 0;
	struct drm_wafer_wait a, b;
	struct drm_wafer_job j;
	int ret;

	ret = run_wait(fa, &job_base, &a);
	wt_ok(!ret && !a.status && a.done_ns != POISON64 && a.device_ns > 0 &&
	      a.done_ns >= a.device_ns, "WAIT output: done_ns %" PRIu64 " (the completion on "
	      "the device's clock, past its device_ns %" PRIu64 ")", (uint64_t)a.done_ns,
	      (uint64_t)a.device_ns);
	f = a.done_ns + 1000000000ull;
	j = floor_job(in, off, f);
	ret = run_wait(fa, &j, &b);
	expect(ret ? ret : b.status, 0, "SUBMIT NOT_BEFORE a second past the device's clock");
	wt_ok(!ret && b.done_ns - b.device_ns == f, "NOT_BEFORE: the job started at its floor "
	      "(done_ns - device_ns = floor)");
	j = floor_job(in, off, 1);
	ret = run_wait(fa, &j, &a);
	wt_ok(!ret && !a.status && a.done_ns - a.device_ns == b.done_ns, "NOT_BEFORE 1: an "
	      "earlier floor leaves the slot's rule (it starts where the last job ended)");
	j = job_base;
	j.flags = DRM_WAFER_JOB_NOT_BEFORE;
	j.in_offset = in->size - 8;
	reject(fa, &j, -EINVAL, "NOT_BEFORE whose floor runs past the input BO (1 token at "
	       "its last 8 bytes)");
	j = floor_job(in, off, DRM_WAFER_NOT_BEFORE_MAX + 1);
	ret = run_wait(fa, &j, &b);
	expect(ret ? ret : b.status, -EINVAL, "WAIT status of a NOT_BEFORE job whose floor is "
	       "past DRM_WAFER_NOT_BEFORE_MAX (checked by the device)");
	j = (struct drm_wafer_job){ .ctx_id = job_base.ctx_id,
				    .flags = DRM_WAFER_JOB_NOP | DRM_WAFER_JOB_NOT_BEFORE };
	reject(fa, &j, -EINVAL, "NOP with NOT_BEFORE");
	j.flags = DRM_WAFER_JOB_NOP | DRM_WAFER_JOB_DONE_NS;
	reject(fa, &j, -EINVAL, "NOP with DONE_NS");
	f = a.done_ns + 1000000000ull;
	j = floor_job(in, off, f);
	j.flags |= DRM_WAFER_JOB_DONE_NS;
	ret = uring_big(fa, &j, &big);
	expect(ret, 0, "io_uring SUBMIT NOT_BEFORE with DONE_NS");
	wt_ok(!ret && big > f && big - f < 1000000000ull, "io_uring DONE_NS: big_cqe[0] is the "
	      "completion time (past the floor by the job's device time)");
}
