// SPDX-License-Identifier: MIT
/*
 * conformance: SUBMIT through io_uring.
 */
#include "conformance.h"

/*
 * CQE res of one DRM_WAFER_URING_CMD_SUBMIT of @j with @tail in bytes
 * 72-79 of the command area: the job's layer and pad (older userspace had
 * to leave them zero).
 */
static int uring_submit_tail(int fd, const struct drm_wafer_job *j, uint64_t tail)
{
	struct drm_wafer_job t = *j;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	int res;

	memcpy(&t.layer, &tail, sizeof(tail));
	if (io_uring_queue_init(4, &ring, IORING_SETUP_SQE128))
		return -1000;
	sqe = io_uring_get_sqe(&ring);
	wt_uring_prep_submit(sqe, fd, &t, 1);
	io_uring_submit(&ring);
	res = io_uring_wait_cqe(&ring, &cqe) ? -1001 : cqe->res;
	if (res > -1000)
		io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
	return res;
}

void test_uring(int fa)
{
	static const struct {
		uint64_t tail;
		int want;
		const char *name;
	} c[] = {
		{ 0, 0, "valid, command area bytes 72-79 (layer, pad) zero" },
		{ 1, -EINVAL, "layer 1 (byte 72) without DRM_WAFER_JOB_LAYER" },
		{ 1ull << 56, -EINVAL, "pad (byte 79) non-zero" },
	};
	size_t i;

	if (!wt_ok(sizeof(struct drm_wafer_job) == 80 &&
		   offsetof(struct drm_wafer_job, layer) == 72,
		   "drm_wafer_job is 80 bytes, layer at 72 (the SQE128 command area)"))
		return;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		expect(uring_submit_tail(fa, &job_base, c[i].tail), c[i].want,
		       "io_uring SUBMIT %s", c[i].name);
}
