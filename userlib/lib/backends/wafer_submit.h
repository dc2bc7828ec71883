/* SPDX-License-Identifier: MIT */
/*
 * wafer_submit.h - submission paths of the kernel backend.
 *
 * The kernel backend validates jobs, turns them into struct drm_wafer_job
 * and hands whole batches to one of these:
 *
 *   wafer_submit_ioctl  DRM_IOCTL_WAFER_SUBMIT per job, DRM_IOCTL_WAFER_WAIT
 *                       to reap (wafer_submit_ioctl.c); always available
 *   wafer_submit_uring  IORING_OP_URING_CMD, DRM_WAFER_URING_CMD_SUBMIT, one
 *                       io_uring_submit per batch, completions from the CQ
 *                       (wafer_uring.c)
 *
 * A path keeps its own state (seqno queue, ring) behind @priv.  Jobs the
 * path accepted must each produce exactly one completion from @reap.
 */
#ifndef WAFER_SUBMIT_H
#define WAFER_SUBMIT_H

#include <stdint.h>

#include "drm/wafer_accel.h"
#include "wafer.h"

/**
 * struct wafer_submit_ops - one submission path
 * @name: "ioctl" or "uring"
 * @init: set up on device file @fd (GET_INFO answer in @info); *@priv gets
 *	the state.  -EOPNOTSUPP when the path is unavailable (the caller may
 *	fall back), with wafer_last_error() saying why.
 * @fini: release the state
 * @submit: queue @n jobs (user_data[i] goes with jobs[i]); return the
 *	number queued (a prefix), or -errno if none was (-EAGAIN/-EBUSY: the
 *	in-flight limit)
 * @reap: up to @max completions, waiting until @min arrived or the absolute
 *	CLOCK_MONOTONIC @deadline_ns passed; return the count or -errno
 */
struct wafer_submit_ops {
	const char *name;
	int (*init)(int fd, const struct wafer_info *info, void **priv);
	void (*fini)(void *priv);
	int (*submit)(void *priv, const struct drm_wafer_job *jobs,
		      const uint64_t *user_data, unsigned int n);
	int (*reap)(void *priv, struct wafer_completion *out, unsigned int max,
		    unsigned int min, uint64_t deadline_ns);
};

extern const struct wafer_submit_ops wafer_submit_ioctl;
extern const struct wafer_submit_ops wafer_submit_uring;

#endif /* WAFER_SUBMIT_H */
