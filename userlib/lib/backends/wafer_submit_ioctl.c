// SPDX-License-Identifier: MIT
/*
 * The ioctl submission path: DRM_IOCTL_WAFER_SUBMIT per job, and
 * DRM_IOCTL_WAFER_WAIT on the oldest outstanding seqno to reap.  Jobs of a
 * file complete in submission order per slot; waiting oldest-first returns
 * every completion exactly once.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <xf86drm.h>

#include "../wafer_internal.h"
#include "wafer_submit.h"

/**
 * struct ioctl_path - state of the ioctl path
 * @fd: device file
 * @seqno: outstanding seqnos, a ring of @cap entries
 * @user_data: their user data
 * @head: oldest entry
 * @count: entries
 * @cap: ring capacity (a power of two)
 * @v1: the driver predates drm_wafer_job.layer (no DRM_WAFER_CAP_LAYER_PARTS):
 *	its SUBMIT takes the old 80-byte struct, the seqno at byte 72
 */
struct ioctl_path {
	int fd;
	int v1;
	uint64_t *seqno;
	uint64_t *user_data;
	unsigned int head;
	unsigned int count;
	unsigned int cap;
};

/* DRM_IOCTL_WAFER_SUBMIT of a driver before drm_wafer_job.layer. */
struct submit_v1 {
	unsigned char job[offsetof(struct drm_wafer_job, layer)];
	uint64_t seqno;
};

#define SUBMIT_V1	DRM_IOWR(DRM_COMMAND_BASE + DRM_WAFER_SUBMIT, struct submit_v1)

_Static_assert(sizeof(struct submit_v1) == 80 && sizeof(struct drm_wafer_submit) == 88,
	       "SUBMIT: the old and the new size differ");

/* One SUBMIT, in the layout the driver takes: 0 or -errno. */
static int submit_one(const struct ioctl_path *p, const struct drm_wafer_job *j,
		      uint64_t *seqno)
{
	struct drm_wafer_submit s = { .job = *j };
	struct submit_v1 o;

	if (p->v1) {
		memcpy(o.job, j, sizeof(o.job));
		if (drmIoctl(p->fd, SUBMIT_V1, &o))
			return -errno;
		*seqno = o.seqno;
		return 0;
	}
	if (drmIoctl(p->fd, DRM_IOCTL_WAFER_SUBMIT, &s))
		return -errno;
	*seqno = s.seqno;
	return 0;
}

static int grow(struct ioctl_path *p)
{
	unsigned int cap = p->cap ? p->cap * 2 : 64, i;
	uint64_t *s = malloc(cap * sizeof(*s)), *u = malloc(cap * sizeof(*u));

	if (!s || !u) {
		free(s);
		free(u);
		return wafer_set_error(-ENOMEM, "out of memory for the job queue");
	}
	for (i = 0; i < p->count; i++) {
		s[i] = p->seqno[(p->head + i) & (p->cap - 1)];
		u[i] = p->user_data[(p->head + i) & (p->cap - 1)];
	}
	free(p->seqno);
	free(p->user_data);
	p->seqno = s;
	p->user_data = u;
	p->head = 0;
	p->cap = cap;
	return 0;
}

static int ioctl_init(int fd, const struct wafer_info *info, void **priv)
{
	struct ioctl_path *p = calloc(1, sizeof(*p));

	if (!p)
		return wafer_set_error(-ENOMEM, "out of memory");
	p->fd = fd;
	p->v1 = !(info->caps & WAFER_CAP_LAYER_PARTS);
	*priv = p;
	return 0;
}

static void ioctl_fini(void *priv)
{
	struct ioctl_path *p = priv;

	if (!p)
		return;
	free(p->seqno);
	free(p->user_data);
	free(p);
}

static int ioctl_submit(void *priv, const struct drm_wafer_job *jobs,
			const uint64_t *user_data, unsigned int n)
{
	struct ioctl_path *p = priv;
	unsigned int i;
	int ret = 0;

	for (i = 0; i < n; i++) {
		uint64_t seqno = 0;

		if (p->count == p->cap && (ret = grow(p)))
			break;
		ret = submit_one(p, &jobs[i], &seqno);
		if (ret) {
			wafer_set_error(ret, "DRM_IOCTL_WAFER_SUBMIT failed: %s", strerror(-ret));
			break;
		}
		p->seqno[(p->head + p->count) & (p->cap - 1)] = seqno;
		p->user_data[(p->head + p->count) & (p->cap - 1)] = user_data[i];
		p->count++;
	}
	return i ? (int)i : ret;
}

static int ioctl_reap(void *priv, struct wafer_completion *out, unsigned int max,
		      unsigned int min, uint64_t deadline_ns)
{
	struct ioctl_path *p = priv;
	unsigned int n = 0;

	while (n < max && p->count) {
		unsigned int slot = p->head & (p->cap - 1);
		/* Past the @min-th completion, only take what is already done. */
		struct drm_wafer_wait w = {
			.seqno = p->seqno[slot],
			.timeout_ns = n < min ? (int64_t)deadline_ns : 0,
		};

		if (drmIoctl(p->fd, DRM_IOCTL_WAFER_WAIT, &w)) {
			if (errno == ETIME || errno == ETIMEDOUT)
				break;
			return n ? (int)n : wafer_set_error(-errno,
				"DRM_IOCTL_WAFER_WAIT on job %llu failed: %s",
				(unsigned long long)w.seqno, strerror(errno));
		}
		out[n].user_data = p->user_data[slot];
		out[n].status = w.status;
		out[n].device_ns = w.device_ns;
		/* 0 from a kernel whose struct ends before it. */
		out[n].done_ns = w.done_ns;
		n++;
		p->head++;
		p->count--;
	}
	return (int)n;
}

const struct wafer_submit_ops wafer_submit_ioctl = {
	.name = "ioctl",
	.init = ioctl_init,
	.fini = ioctl_fini,
	.submit = ioctl_submit,
	.reap = ioctl_reap,
};
