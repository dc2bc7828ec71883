// SPDX-License-Identifier: MIT
/*
 * conformance: WAIT.
 */
#include "conformance.h"

void test_wait(int fa, int fb)
{
	struct drm_wafer_wait w;
	uint64_t seq;
	int ret;

	ret = submit(fa, &job_base, &seq);
	expect(ret, 0, "SUBMIT for WAIT");
	memset(&w, POISON, sizeof(w));
	w.seqno = seq;
	w.timeout_ns = deadline(60);
	w.flags = 0;
	ret = ioc(fa, DRM_IOCTL_WAFER_WAIT, &w);
	expect(ret, 0, "WAIT valid");
	wt_ok(!ret && w.status == 0 && w.device_ns != POISON64 && w.device_ns > 0 &&
	      w.flags == 0 && w.seqno == seq,
	      "WAIT output: status %d, device_ns %" PRIu64 ", inputs untouched", w.status,
	      (uint64_t)w.device_ns);
	w = (struct drm_wafer_wait){ .seqno = seq, .timeout_ns = deadline(1) };
	expect(ioc(fa, DRM_IOCTL_WAFER_WAIT, &w), -ENOENT, "WAIT the same seqno twice");

	ret = submit(fa, &job_base, &seq);
	w = (struct drm_wafer_wait){ .seqno = seq, .timeout_ns = deadline(60), .flags = 1 };
	expect(ioc(fa, DRM_IOCTL_WAFER_WAIT, &w), -EINVAL, "WAIT flags 0x1");
	w = (struct drm_wafer_wait){ .seqno = 0, .timeout_ns = deadline(1) };
	expect(ioc(fa, DRM_IOCTL_WAFER_WAIT, &w), -EINVAL, "WAIT seqno 0");
	w = (struct drm_wafer_wait){ .seqno = seq + 1, .timeout_ns = deadline(1) };
	expect(ioc(fa, DRM_IOCTL_WAFER_WAIT, &w), -EINVAL, "WAIT seqno never issued (last + 1)");
	w = (struct drm_wafer_wait){ .seqno = ~0ull, .timeout_ns = deadline(1) };
	expect(ioc(fa, DRM_IOCTL_WAFER_WAIT, &w), -EINVAL, "WAIT seqno 2^64-1");
	w = (struct drm_wafer_wait){ .seqno = seq, .timeout_ns = deadline(1) };
	expect(ioc(fb, DRM_IOCTL_WAFER_WAIT, &w), -EINVAL,
	       "WAIT another file's seqno (isolation: this file never issued it)");
	/* A deadline in the past on a completed job still reports it. */
	wait_job(fa, seq, 60, NULL);	/* consume */
	{
		struct drm_wafer_job j = job_base;
		struct drm_syncobj_wait sw = { .count_handles = 1 };
		uint32_t so = 0;

		syncobj_new(fa, 0, &so);
		j.out_syncobj = so;
		ret = submit(fa, &j, &seq);
		sw.handles = (uintptr_t)&so;
		sw.timeout_nsec = deadline(60);
		if (!ret)
			ret = ioc(fa, DRM_IOCTL_SYNCOBJ_WAIT, &sw);
		w = (struct drm_wafer_wait){ .seqno = seq, .timeout_ns = 0 };
		if (!ret)
			ret = ioc(fa, DRM_IOCTL_WAFER_WAIT, &w);
		expect(ret ? ret : w.status, 0, "WAIT deadline 0 on a completed job");
		syncobj_free(fa, so);
	}
}

/* WAIT on jobs that stay queued behind a vgem fence. */
void test_wait_queued(int fa)
{
	struct drm_wafer_job j = job_base;
	struct drm_wafer_wait w;
	struct delayed_signal ds;
	uint32_t so, fence;
	uint64_t seq, seq2;
	int64_t t0;
	int ret, ret2, st;

	ret = vgem_syncobj(fa, &so, &fence);
	if (!wt_ok(!ret, "vgem fence in a syncobj (%s)", ename(ret)))
		return;
	j.in_syncobjs = (uintptr_t)&so;
	j.in_syncobj_count = 1;
	ret = submit(fa, &j, &seq);
	expect(ret, 0, "SUBMIT behind an unsignalled in-syncobj");
	ret = submit(fa, &job_base, &seq2);
	expect(ret, 0, "SUBMIT a second job behind it (same file, in order)");

	memset(&w, POISON, sizeof(w));
	w.seqno = seq;
	w.flags = 0;
	w.timeout_ns = now_ns() + 50000000;
	t0 = now_ns();
	ret = ioc(fa, DRM_IOCTL_WAFER_WAIT, &w);
	expect(ret, -ETIME, "WAIT deadline 50 ms ahead on a queued job");
	wt_ok(now_ns() - t0 >= 40000000, "WAIT -ETIME returned after the deadline (%.1f ms)",
	      (now_ns() - t0) / 1e6);
	wt_ok((w.status == (int32_t)POISON32 || w.status == 0) &&
	      (w.device_ns == POISON64 || w.device_ns == 0),
	      "WAIT -ETIME output: status and device_ns untouched or zero");
	w = (struct drm_wafer_wait){ .seqno = seq, .timeout_ns = 0 };
	expect(ioc(fa, DRM_IOCTL_WAFER_WAIT, &w), -ETIME, "WAIT deadline 0 on a queued job");
	w = (struct drm_wafer_wait){ .seqno = seq, .timeout_ns = now_ns() - 1000000000ll };
	expect(ioc(fa, DRM_IOCTL_WAFER_WAIT, &w), -ETIME, "WAIT deadline 1 s in the past");
	w = (struct drm_wafer_wait){ .seqno = seq2, .timeout_ns = 0 };
	expect(ioc(fa, DRM_IOCTL_WAFER_WAIT, &w), -ETIME,
	       "WAIT deadline 0 on the job queued behind the blocked one");

	/*
	 * INT64_MIN, the furthest past, on the second job: a watchdog signals
	 * the fence after 1.5 s in case the WAIT blocks.
	 */
	ds.fence = fence;
	ds.ms = 1500;
	pthread_create(&ds.thread, NULL, delayed_signal_fn, &ds);
	w = (struct drm_wafer_wait){ .seqno = seq2, .timeout_ns = INT64_MIN };
	t0 = now_ns();
	ret2 = ioc(fa, DRM_IOCTL_WAFER_WAIT, &w);
	expect(ret2, -ETIME, "WAIT deadline INT64_MIN on a queued job (took %.0f ms)",
	       (now_ns() - t0) / 1e6);
	pthread_join(ds.thread, NULL);

	/* After the fence signals, both complete; -ETIME did not consume them. */
	ret = wait_job(fa, seq, 60, &st);
	expect(ret ? ret : st, 0, "WAIT after -ETIME, once the in-fence signalled");
	if (ret2) {
		ret = wait_job(fa, seq2, 60, &st);
		expect(ret ? ret : st, 0, "WAIT the job queued behind it");
	}
	syncobj_free(fa, so);
}
