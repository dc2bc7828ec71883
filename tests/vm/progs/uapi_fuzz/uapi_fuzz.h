// SPDX-License-Identifier: MIT
/*
 * uapi_fuzz.h - what the uapi fuzzer's files share: the object pool, the
 * per-thread state and the operations (one file per ioctl group in
 * tests/vm/progs/uapi_fuzz/, driven by tests/vm/progs/uapi_fuzz.c).
 */
#ifndef UAPI_FUZZ_H
#define UAPI_FUZZ_H

#include <execinfo.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/dma-buf.h>
#include <linux/sync_file.h>
#include <liburing.h>
#include <xf86drm.h>
#include "drm/wafer_accel.h"
#include "wfs_pack.h"
#include "wt_dev.h"
#include "wt_model.h"
#include "wt_util.h"
#define MAX_FILES	3
#define MAX_THREADS	16
#define NBO		40
#define NCTX		24
#define NSEQ		48
#define NSYNC		24
#define NMAP		48
#define NPRIME		16
#define LOGN		48
#define PAGE		4096ull
#define KADDR		0xffff888000000000ull
#define NONCANON	0x8000000000000000ull
#define MAX_ERRNO	160
#define URING_ENTRIES	16
#define TOPK_CHECK	4
#define NCHECK		16
#define MUT(cond, field, val, kind) do { if (cond) { field = (val); } } while (0)

enum op {
	OP_GET_INFO, OP_BO_CREATE, OP_BO_INFO, OP_GEM_CLOSE, OP_MMAP, OP_MUNMAP,
	OP_TOUCH, OP_MODEL_LOAD, OP_MODEL_UNLOAD, OP_DRAIN, OP_CTX_CREATE,
	OP_CTX_DESTROY, OP_SUBMIT, OP_WAIT, OP_SYNC_CREATE, OP_SYNC_DESTROY,
	OP_SYNC_MISC, OP_PRIME_EXPORT, OP_PRIME_IMPORT, OP_PRIME_MISC,
	OP_URING, OP_URING_CQE, OP_URING_RESET, OP_REOPEN, OP_FORK, OP_SIGNAL,
	OP_BAD_IOCTL, OP_READ_INFO, OP_COUNT
};

struct bo_rec {
	uint32_t handle;
	uint64_t size;
	uint64_t mmap_off;
	int live, imported, huge, blob;
};

struct ctx_rec {
	uint32_t id, slots, ctx_len;
	int live;
};

struct sync_rec {
	uint32_t handle;
	int live, fenced;
};

struct file_slot {
	pthread_rwlock_t rw;	/* read: using fd; write: close/reopen */
	int fd;
	unsigned int gen;
	struct bo_rec bo[NBO];
	unsigned int bo_next;
	struct ctx_rec ctx[NCTX];
	unsigned int ctx_next;
	/* model_id: the latest load; prev_model_id: the one before (a device holds several) */
	uint32_t model_id, prev_model_id, stale_model_id;
	uint32_t blob_bo;	/* BO holding the valid blob, 0 if none */
	uint64_t seq[NSEQ];
	unsigned int seq_next;
	uint64_t last_seq;
	struct sync_rec sync[NSYNC];
	unsigned int sync_next;
};

struct map_rec {
	void *addr;
	size_t len;
	int live, blob;
};

struct prime_rec {
	int fd;
	uint64_t size;
	int live, syncfile;
};

struct log_ent {
	enum op op;
	int file, ret;
	char what[120];
};

struct uring_slot {
	int used;
	const char *invalid;	/* a documented-invalid field was set */
	int fault_ok;		/* a bad in_syncobjs pointer may give -EFAULT */
	int plain;		/* submitted on a ring without SQE128 */
	int not_ours;		/* fd not (certainly) a device file */
	char sub[200];		/* how it was submitted, for a BUG report */
};

struct tctx {
	int idx;
	pthread_t th;
	struct wt_rng rng;
	struct io_uring ring;
	int ring_ok, ring_flags, ring_fixed, pending;
	unsigned int fixed_gen[MAX_FILES];	/* file generations registered */
	struct uring_slot us[256];
	uint32_t usync[256][72];	/* in_syncobjs of commands in flight */
	unsigned int us_next;
	struct log_ent log[LOGN];
	unsigned int log_n;
	atomic_int cur_op;
	atomic_long progress;
	double op_t0;
};

/* What a built (and mutated) job is expected to do. */
struct job_exp {
	const char *invalid;	/* a documented-invalid field: must not succeed */
	int fault_ok;		/* in_syncobjs may be a bad pointer */
	char what[400];
};

extern const char *const op_name[OP_COUNT];
extern struct file_slot files[MAX_FILES];
extern atomic_ulong closes_begun[MAX_FILES], closes_ended[MAX_FILES];
extern atomic_long size_checks, size_skips, size_reused;
extern struct map_rec maps[NMAP];
extern struct prime_rec primes[NPRIME];
extern pthread_mutex_t pool_mu;
extern int nfiles, nthreads, ndevs, trace;
extern uint64_t seed;
extern long iters_max;
extern double time_max;
extern atomic_long iters_done;
extern atomic_int stop_flag;
extern double t_start;
extern struct drm_wafer_device_info dinfo;
extern void *blob;
extern size_t blob_len;
extern uint8_t *scratch;
extern uintptr_t unmapped_addr;
extern atomic_long counts[OP_COUNT][MAX_ERRNO + 1];
extern atomic_long status_counts[MAX_ERRNO + 1];
extern atomic_int sure_bugs, unexpected;
extern pthread_mutex_t print_mu;
extern struct tctx threads[MAX_THREADS];
extern __thread sigjmp_buf *volatile guard;

/* common.c */
uint64_t rnd(struct tctx *t);
uint64_t rn(struct tctx *t, uint64_t n);
int pct(struct tctx *t, int p);
double now(void);
int raw_ioctl(int fd, unsigned long req, void *arg);
const char *ename(int e);
void tlog(struct tctx *t, enum op op, int file, int ret, const char *fmt, ...);
void count(enum op op, int ret);
void dump_log(struct tctx *t);
void sure_bug(struct tctx *t, enum op op, int ret, const char *fmt, ...);
void odd(struct tctx *t, enum op op, int ret, const char *fmt, ...);
uint64_t v_id(struct tctx *t, uint64_t cur);
uint64_t v_small(struct tctx *t, uint64_t cur, uint64_t lim);
uint64_t v_off(struct tctx *t, uint64_t cur, uint64_t size);
uint64_t v_size(struct tctx *t, uint64_t cur);
uint64_t v_flags(struct tctx *t);
uint64_t v_nonzero(struct tctx *t);
uint32_t v_nonzero32(struct tctx *t);
uint64_t v_rptr(struct tctx *t, uint64_t good);
void on_fault(int sig, siginfo_t *si, void *uc);
void on_usr1(int sig);
int guarded_copy(void *dst, const void *src, size_t len);
int nmut(struct tctx *t);

/* pool.c */
struct bo_rec *pick_bo_locked(struct tctx *t, int fi, uint64_t min_size, int usable,
			      int allow_huge);
uint32_t pick_handle(struct tctx *t, int fi, uint64_t min_size, uint64_t *size,
		     int *kind, int allow_huge);
void add_bo(int fi, unsigned int gen, uint32_t handle, uint64_t size,
	    uint64_t mmap_off, int imported, int blob_bo);
void kill_bo(int fi, unsigned int gen, uint32_t handle);
struct ctx_rec pick_ctx(struct tctx *t, int fi, int *kind);
uint32_t pick_sync(struct tctx *t, int fi, int fenced_only);
void set_sync(int fi, unsigned int gen, uint32_t h, int live, int fenced);
void add_seq(int fi, unsigned int gen, uint64_t s);
void add_map(void *addr, size_t len, int blob_bo);
void add_prime(int fd, uint64_t size, int syncfile);
int take_prime(struct tctx *t, uint64_t *size);
int peek_prime(struct tctx *t, int want_sync, uint64_t *size);
int file_get(int fi, unsigned int *gen);
void file_put(int fi);

/* info.c */
void op_get_info(struct tctx *t, int fi, int fd);
void op_bad_ioctl(struct tctx *t, int fi, int fd);
void op_read_info(struct tctx *t, int fi, int fd);
int get_info(int fd, struct drm_wafer_device_info *info);

/* bo.c */
int gem_close(int fi, int fd, struct drm_gem_close *c);
void op_bo_create(struct tctx *t, int fi, int fd, unsigned int gen);
void op_bo_info(struct tctx *t, int fi, int fd);
void op_gem_close(struct tctx *t, int fi, int fd, unsigned int gen);
void op_mmap(struct tctx *t, int fi, int fd);
void op_munmap(struct tctx *t);
void op_touch(struct tctx *t);

/* model.c */
uint32_t make_blob_bo(int fi, int fd, unsigned int gen, int corrupt, struct tctx *t);
void load_flags(struct tctx *t, struct drm_wafer_model_load *ml);
void note_model(int fi, unsigned int gen, uint32_t id);
void op_model_load(struct tctx *t, int fi, int fd, unsigned int gen);
int do_unload(struct tctx *t, int fi, int fd, unsigned int gen, enum op op, int mutate);
int destroy_ctx(struct tctx *t, int fi, int fd, unsigned int gen, uint32_t id,
		uint32_t pad, enum op op);
void op_model_unload(struct tctx *t, int fi, int fd, unsigned int gen);
void op_drain(struct tctx *t, int fi, int fd, unsigned int gen);

/* ctx.c */
void op_ctx_create(struct tctx *t, int fi, int fd, unsigned int gen);
void op_ctx_destroy(struct tctx *t, int fi, int fd, unsigned int gen);

/* submit.c */
const char *job_invalid(const struct drm_wafer_job *j);
void build_job(struct tctx *t, int fi, struct drm_wafer_job *j, uint32_t *arr,
	       struct job_exp *e);
void check_job_ret(struct tctx *t, enum op op, int ret, const struct job_exp *e);
void note_status(struct tctx *t, enum op op, int status, const char *what);
void op_submit(struct tctx *t, int fi, int fd, unsigned int gen);
void op_wait(struct tctx *t, int fi, int fd);

/* sync.c */
void op_sync_create(struct tctx *t, int fi, int fd, unsigned int gen);
void op_sync_destroy(struct tctx *t, int fi, int fd, unsigned int gen);
void op_sync_misc(struct tctx *t, int fi, int fd, unsigned int gen);

/* prime.c */
void op_prime_export(struct tctx *t, int fi, int fd);
void op_prime_import(struct tctx *t, int fi, int fd, unsigned int gen);
void op_prime_misc(struct tctx *t);

/* uring.c */
void ring_setup(struct tctx *t);
void reap(struct tctx *t, int wait_all);
void op_uring(struct tctx *t, int fi, int fd);
void op_uring_reset(struct tctx *t);

/* files.c */
int open_file(int fi);
void op_reopen(struct tctx *t, int fi);
void op_fork(struct tctx *t, int fi, int fd, unsigned int gen);
void op_signal(struct tctx *t);

#endif
