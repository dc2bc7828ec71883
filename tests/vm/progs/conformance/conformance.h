// SPDX-License-Identifier: MIT
/*
 * conformance.h - what the conformance program's groups share: one file
 * per ioctl group in tests/vm/progs/conformance/, run by
 * tests/vm/progs/conformance.c.
 */
#ifndef CONFORMANCE_H
#define CONFORMANCE_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <liburing.h>
#include <xf86drm.h>

#include "drm/wafer_accel.h"
#include "wafer.h"
#include "wfs_model.h"
#include "wfs_pack.h"
#include "wt_dev.h"
#include "wt_model.h"
#include "wt_util.h"

#define TOPK		4
#define POISON		0xA5
#define POISON32	0xA5A5A5A5u
#define POISON64	0xA5A5A5A5A5A5A5A5ull
#define NDECODE		24

/* vgem's uapi (not shipped in libdrm's headers). */
struct vgem_fence_attach {
	uint32_t handle;
	uint32_t flags;
	uint32_t out_fence;
	uint32_t pad;
};

struct vgem_fence_signal {
	uint32_t fence;
	uint32_t flags;
};

#define VGEM_FENCE_WRITE	0x1
#define VGEM_IOCTL_FENCE_ATTACH	DRM_IOWR(DRM_COMMAND_BASE + 0x1, struct vgem_fence_attach)
#define VGEM_IOCTL_FENCE_SIGNAL	DRM_IOW(DRM_COMMAND_BASE + 0x2, struct vgem_fence_signal)

#define N_LAYERS	5	/* of the test model */

struct bo {
	uint32_t handle;
	uint64_t size;
	uint64_t offset;
	void *map;
};

struct delayed_signal {
	pthread_t thread;
	uint32_t fence;
	int ms;
};

/* common.c */
int ioc(int fd, unsigned long req, void *arg);
const char *ename(int e);
int expect(int got, int want, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int64_t now_ns(void);
int64_t deadline(int seconds);
int looks_like_kernel_ptr(uint64_t v);
int open_dev(void);
int bo_new(int fd, struct bo *b, uint64_t size);
int gem_close(int fd, uint32_t handle);
void bo_free(int fd, struct bo *b);
int syncobj_new(int fd, uint32_t flags, uint32_t *h);
void syncobj_free(int fd, uint32_t h);
int prime_export(int fd, uint32_t handle, uint32_t flags, int *out);
int prime_import(int fd, int dmabuf, uint32_t *handle);
extern struct drm_wafer_device_info info;
extern void *blob, *blob_ck;
extern size_t blob_len, blob_ck_len;
extern uint32_t ref_tok[NDECODE + 1];
extern int vgem_fd;
void vgem_open(void);
int vgem_syncobj(int fd, uint32_t *syncobj, uint32_t *fence_id);
void vgem_signal(uint32_t fence_id);
void *delayed_signal_fn(void *arg);
uint32_t load_model(int fd, int *err);
uint32_t ctx_new(int fd, uint32_t model, uint32_t slots, uint32_t len, int *err);
int wait_job(int fd, uint64_t seqno, int seconds, int *status);
uint32_t decode_check(int fd, uint32_t ctx, uint32_t slot, struct bo *in,
		      struct bo *out, uint64_t out_off);
long param(const char *name);

/* info.c */
int info_of(int fd, uint32_t id, struct drm_wafer_device_info *d);
void test_get_info(int fd);

/* bo.c */
void test_bos(int fa, int fb);

/* model.c */
int model_load_poisoned(int fd, uint32_t bo, uint64_t offset, uint32_t first,
			uint32_t count, struct drm_wafer_model_load *ml);
void test_model_load(int fa, int fb, uint32_t *model_id);
void test_model_unload_invalid(int fa, int fb, uint32_t model);
void test_model_load_v1(int fd, struct bo *b);
void test_two_models(int fa, uint32_t ctx, struct bo *in, struct bo *out);

/* ctx.c */
uint32_t test_ctx(int fa, int fb, uint32_t model);

/* submit.c */
extern struct drm_wafer_job job_base;
int submit(int fd, const struct drm_wafer_job *j, uint64_t *seqno);
void reject(int fd, const struct drm_wafer_job *j, int want, const char *name);
void test_submit(int fa, int fb, uint32_t ctx, struct bo *in, struct bo *out);

/* uring.c */
void test_uring(int fa);

/* not_before.c */
void test_not_before(int fa, struct bo *in);

/* wait.c */
void test_wait(int fa, int fb);
void test_wait_queued(int fa);

/* limits.c */
void test_limits(void);

/* layers.c */
void test_layer_range(void);
void test_layer_parts(void);

/* ep.c */
void test_expert_parallel(void);

#endif
