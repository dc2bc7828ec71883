/* SPDX-License-Identifier: MIT */
/*
 * wt_dev.h - test helpers for talking to the wafer driver directly through
 * its uapi (the VM tier's programs): open, buffers, the shared model.
 */
#ifndef WT_DEV_H
#define WT_DEV_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "drm/wafer_accel.h"

struct wt_bo {
	uint32_t handle;
	size_t size;
	void *map;
};

/* The shared model, packed, loaded, with a context, plus the reference. */
struct wt_dev_model {
	void *blob;
	size_t blob_len;
	uint32_t model_id;
	uint32_t ctx_id;
	uint64_t sram_needed;
	uint64_t kv_bytes;
	uint32_t n_layers;
	uint32_t model_flags;
	uint32_t act_size;
};

struct io_uring_sqe;
struct wfs_topk_entry;

/* ioctl returning 0 or -errno. */
int wt_ioctl(int fd, unsigned long req, void *arg);
int wt_dev_open(int index);
int wt_bo_new(int fd, struct wt_bo *b, size_t size);
/* Absolute CLOCK_MONOTONIC deadline @ms from now, in ns. */
int64_t wt_deadline_ms(int64_t ms);
/* Waits for @seqno; returns the ioctl's error or the job's status. */
int wt_wait_job(int fd, uint64_t seqno, uint64_t *device_ns);
/* Packs stories260K (int8/int4, group 32) and loads it, with a context of
 * @slots x @ctx_len.  Returns 0 or -errno. */
int wt_dev_load_model(int fd, unsigned int wbits, uint32_t slots, uint32_t ctx_len,
		      struct wt_dev_model *m);
/* The same with MODEL_LOAD's layer range (0, 0: the whole model). */
int wt_dev_load_range(int fd, unsigned int wbits, uint32_t layer_first,
		      uint32_t layer_count, uint32_t slots, uint32_t ctx_len,
		      struct wt_dev_model *m);
/* Fills @sqe (the first of an SQE128 pair) with DRM_WAFER_URING_CMD_SUBMIT
 * of @job on @fd; callers add flags such as IOSQE_FIXED_FILE afterwards. */
void wt_uring_prep_submit(struct io_uring_sqe *sqe, int fd, const struct drm_wafer_job *job,
			  uint64_t user_data);
/* Whether result @r is position @pos with the reference's @argmax and its
 * @k top-k pairs @ref (tokens and logits, bit for bit). */
int wt_result_matches(const struct drm_wafer_token_result *r, uint32_t pos, uint32_t argmax,
		      const struct wfs_topk_entry *ref, uint32_t k);
/* Jobs device 0 holds now (debugfs "jobs"), or ~0u when unreadable. */
unsigned int wt_debugfs_inflight(void);
/* The number after "key:" in /proc/self/fdinfo/fd, or -1. */
long long wt_fdinfo(int fd, const char *key);
/* Arms firmware fault @what ("hang", "drop", ...) on device @dev (debugfs
 * inject_fault, fault_inject=1): 0 or -errno. */
int wt_inject_fault(int dev, const char *what);
/* The syscall @pid sleeps in and its second argument (/proc/PID/syscall:
 * "nr args..."): the nr, or -1 when unreadable or running. */
long wt_syscall_of(pid_t pid, unsigned long long *arg1);
/* Whether @pid sleeps in the ioctl @req. */
int wt_in_ioctl(pid_t pid, unsigned long req);
/* Top-k pairs of the decode helpers below. */
#define WT_DECODE_TOPK	4
/* The reference: @n greedy positions from token 1 of stories260K (int8),
 * as firmware-sim decodes them in process.  Returns 0 or -errno. */
int wt_decode_reference(uint32_t n, uint32_t *expect);
/* A fresh file on device 0 loads stories260K (int8) and decodes @n <= 256
 * greedy positions in one job: 0 if they are @expect, -EBADMSG if not, or
 * the error that stopped it. */
int wt_decode_fresh(uint32_t n, const uint32_t *expect);
/* The same on /dev/accel/accel@index. */
int wt_decode_fresh_on(int index, uint32_t n, const uint32_t *expect);
/* The accel node index of platform device wafer.@dev (it changes when the
 * device is unbound and bound while an old file pins its minor), or
 * -ENOENT while it has none. */
int wt_accel_index(int dev);
/* Pointer to result @i of records carrying @k pairs at @off in @b. */
const struct drm_wafer_token_result *wt_result(const struct wt_bo *b, size_t off,
					       uint32_t k, uint32_t i);

#endif /* WT_DEV_H */
