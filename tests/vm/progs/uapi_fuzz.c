// SPDX-License-Identifier: MIT
/*
 * VM test: structure-aware fuzzer of the wafer uapi.
 *
 * Several threads share 2-3 open files of /dev/accel/accel0 (with --devices
 * N, file i is of accel(i % N), so PRIME buffers, syncobjs and their fences
 * cross devices: jobs of one device read BOs of another and wait for its
 * jobs, as the devices of a layer-range chain do) and a pool of
 * live and stale objects per file (BO handles including closed ones, mmaps,
 * the model id, context ids including destroyed ones, seqnos, syncobjs,
 * PRIME fds).  Each iteration picks an operation (every wafer ioctl, DRM
 * core GEM/PRIME/syncobj ioctls, mmap/munmap/touch of BOs, io_uring
 * submission of jobs on SQE128 and plain rings, signals that interrupt
 * waits, closing and reopening a file, fork + a child using the inherited
 * fd), builds a valid-looking argument, then mutates 0-3 fields with
 * boundary values (0, 1, -1, U32_MAX, U64_MAX, sizes near the page and the
 * BO size, overflowing and misaligned offsets, flag and padding bits, bad
 * user pointers, handles of other files and stale handles).
 *
 * Results are counted per (operation, errno) and printed as a table.  A
 * result that is certainly wrong is a failure ("not ok"): success although
 * a documented-invalid field (padding, unknown flag bits, a size or count
 * outside its documented range, a misaligned offset) was passed; -EFAULT
 * from an ioctl whose argument holds no user pointer; a BO whose BO_INFO
 * right after BO_CREATE gives another size (or -ENOENT) while no GEM_CLOSE
 * of its file ran in between; the program hanging.
 * Other surprising errnos are printed as "# unexpected" lines.
 *
 * Afterwards the device must still work: everything is closed, the SRAM
 * each device reports free is back to its value before the run, no job is in
 * flight (debugfs), and the shared model, loaded fresh, decodes greedily
 * exactly as firmware-sim does in this process.
 *
 * Usage: uapi_fuzz [--seed N] [--iters N] [--time SECONDS] [--threads N]
 *                  [--files N] [--devices N] [--trace]
 *   --iters  operations in total (default 3000; 0 with --time: unbounded)
 *   --time   stop after this many seconds as well
 *   --trace  print every operation (with --threads 1 the sequence of
 *            operations is a function of the seed: a reproducer)
 */
#include <errno.h>
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

enum op {
	OP_GET_INFO, OP_BO_CREATE, OP_BO_INFO, OP_GEM_CLOSE, OP_MMAP, OP_MUNMAP,
	OP_TOUCH, OP_MODEL_LOAD, OP_MODEL_UNLOAD, OP_DRAIN, OP_CTX_CREATE,
	OP_CTX_DESTROY, OP_SUBMIT, OP_WAIT, OP_SYNC_CREATE, OP_SYNC_DESTROY,
	OP_SYNC_MISC, OP_PRIME_EXPORT, OP_PRIME_IMPORT, OP_PRIME_MISC,
	OP_URING, OP_URING_CQE, OP_URING_RESET, OP_REOPEN, OP_FORK, OP_SIGNAL,
	OP_BAD_IOCTL, OP_READ_INFO, OP_COUNT
};

static const char *const op_name[OP_COUNT] = {
	"GET_INFO", "BO_CREATE", "BO_INFO", "GEM_CLOSE", "mmap", "munmap",
	"touch", "MODEL_LOAD", "MODEL_UNLOAD", "drain+unload", "CTX_CREATE",
	"CTX_DESTROY", "SUBMIT", "WAIT", "SYNCOBJ_CREATE", "SYNCOBJ_DESTROY",
	"syncobj misc", "PRIME export", "PRIME import", "dma-buf misc",
	"uring submit", "uring CQE", "uring ring reset", "close+reopen", "fork",
	"signal", "unknown ioctl", "fdinfo/debugfs",
};

/* Relative weights of the operations. */
static const int op_weight[OP_COUNT] = {
	[OP_GET_INFO] = 3, [OP_BO_CREATE] = 8, [OP_BO_INFO] = 4, [OP_GEM_CLOSE] = 4,
	[OP_MMAP] = 6, [OP_MUNMAP] = 4, [OP_TOUCH] = 4, [OP_MODEL_LOAD] = 5,
	[OP_MODEL_UNLOAD] = 2, [OP_DRAIN] = 1, [OP_CTX_CREATE] = 6,
	[OP_CTX_DESTROY] = 3, [OP_SUBMIT] = 20, [OP_WAIT] = 10,
	[OP_SYNC_CREATE] = 3, [OP_SYNC_DESTROY] = 2, [OP_SYNC_MISC] = 4,
	[OP_PRIME_EXPORT] = 3, [OP_PRIME_IMPORT] = 3, [OP_PRIME_MISC] = 2,
	[OP_URING] = 12, [OP_URING_RESET] = 1, [OP_REOPEN] = 1, [OP_FORK] = 1,
	[OP_SIGNAL] = 1, [OP_BAD_IOCTL] = 2, [OP_READ_INFO] = 2,
};

/* ---- the object pool ---- */

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

static struct file_slot files[MAX_FILES];
/*
 * GEM handle numbers are per file and reused lowest first, and any thread
 * may GEM_CLOSE any number (a stale or made-up one): the BO another thread
 * just created, whose number a third thread's BO_CREATE then takes.  Each
 * file's closes are counted as they start and as they end, so that a
 * thread can tell that none ran between its BO_CREATE and BO_INFO (the
 * handle is still its BO: a wrong size is then the driver's bug).
 */
static atomic_ulong closes_begun[MAX_FILES], closes_ended[MAX_FILES];
/* BO_CREATE's size checks: made, skipped (a close overlapped), and of the
 * skipped, those whose handle had meanwhile become another BO. */
static atomic_long size_checks, size_skips, size_reused;
static struct map_rec maps[NMAP];
static struct prime_rec primes[NPRIME];
static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;

static int nfiles = 3, nthreads = 4, ndevs = 1, trace;
static uint64_t seed = 1;
static long iters_max = 3000;
static double time_max;
static atomic_long iters_done;
static atomic_int stop_flag;
static double t_start;
static struct drm_wafer_device_info dinfo;
static void *blob;
static size_t blob_len;
static uint8_t *scratch;	/* RW page, PROT_NONE page, RO page */
static uintptr_t unmapped_addr;

static atomic_long counts[OP_COUNT][MAX_ERRNO + 1];
static atomic_long status_counts[MAX_ERRNO + 1];	/* job statuses */
static atomic_int sure_bugs, unexpected;
static pthread_mutex_t print_mu = PTHREAD_MUTEX_INITIALIZER;

/* ---- per thread ---- */

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

static struct tctx threads[MAX_THREADS];
static __thread sigjmp_buf *volatile guard;

static uint64_t rnd(struct tctx *t)
{
	return wt_rng_u64(&t->rng);
}

static uint64_t rn(struct tctx *t, uint64_t n)
{
	return n ? rnd(t) % n : 0;
}

static int pct(struct tctx *t, int p)
{
	return (int)rn(t, 100) < p;
}

static double now(void)
{
	return wt_now();
}

static int raw_ioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) ? -errno : 0;
}

static const char *ename(int e)
{
	const char *s;

	if (e == 0)
		return "0";
	s = strerrorname_np(e);
	return s ? s : "E?";
}

static void tlog(struct tctx *t, enum op op, int file, int ret, const char *fmt, ...)
{
	struct log_ent *l = &t->log[t->log_n++ % LOGN];
	va_list ap;

	l->op = op;
	l->file = file;
	l->ret = ret;
	va_start(ap, fmt);
	vsnprintf(l->what, sizeof(l->what), fmt, ap);
	va_end(ap);
	if (trace) {
		pthread_mutex_lock(&print_mu);
		printf("# T%d %s f%d %s -> %s\n", t->idx, op_name[op], file, l->what,
		       ename(-ret));
		pthread_mutex_unlock(&print_mu);
	}
}

static void count(enum op op, int ret)
{
	int e = ret < 0 ? -ret : 0;

	atomic_fetch_add(&counts[op][e > MAX_ERRNO ? MAX_ERRNO : e], 1);
}

static void dump_log(struct tctx *t)
{
	unsigned int i, n = t->log_n < LOGN ? t->log_n : LOGN;

	for (i = t->log_n - n; i < t->log_n; i++) {
		struct log_ent *l = &t->log[i % LOGN];

		printf("#   T%d[%u] %s f%d %s -> %s\n", t->idx, i, op_name[l->op], l->file,
		       l->what, ename(-l->ret));
	}
}

/* A result that is certainly a driver bug: a failure, with the op log. */
static void sure_bug(struct tctx *t, enum op op, int ret, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&print_mu);
	printf("# BUG: T%d %s returned %s: ", t->idx, op_name[op], ename(-ret));
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n# last operations of T%d (seed %" PRIu64 "):\n", t->idx, seed);
	if (atomic_fetch_add(&sure_bugs, 1) < 5)
		dump_log(t);
	fflush(stdout);
	pthread_mutex_unlock(&print_mu);
}

/* A surprising errno: reported, not a failure by itself. */
static void odd(struct tctx *t, enum op op, int ret, const char *fmt, ...)
{
	va_list ap;
	int n = atomic_fetch_add(&unexpected, 1);

	if (n >= 40)
		return;
	pthread_mutex_lock(&print_mu);
	printf("# unexpected: T%d %s returned %s: ", t->idx, op_name[op], ename(-ret));
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (n < 3)
		dump_log(t);
	fflush(stdout);
	pthread_mutex_unlock(&print_mu);
}

/* ---- value generators ---- */

static uint64_t v_id(struct tctx *t, uint64_t cur)
{
	static const uint64_t v[] = { 0, 1, 2, 3, 0x7fffffff, 0x80000000, 0xfffffffe,
				      0xffffffff, 0x10000, 255, 256 };

	switch (rn(t, 4)) {
	case 0: return cur + 1;
	case 1: return rn(t, 64);
	case 2: return (uint32_t)rnd(t);
	default: return v[rn(t, sizeof(v) / sizeof(v[0]))];
	}
}

static uint64_t v_small(struct tctx *t, uint64_t cur, uint64_t lim)
{
	static const uint64_t v[] = { 0, 1, 2, 31, 32, 33, 255, 256, 257, 511, 512, 513,
				      4095, 4096, 4097, 0x7fffffff, 0x80000000, 0xffffffff };

	switch (rn(t, 5)) {
	case 0: return cur + 1;
	case 1: return cur - 1;
	case 2: return lim + rn(t, 3) - 1;
	case 3: return (uint32_t)rnd(t);
	default: return v[rn(t, sizeof(v) / sizeof(v[0]))];
	}
}

static uint64_t v_off(struct tctx *t, uint64_t cur, uint64_t size)
{
	static const uint64_t v[] = { 0, 1, 2, 3, 4, 6, 7, 8, PAGE - 8, PAGE - 4, PAGE,
				      PAGE + 4, UINT64_MAX, UINT64_MAX - 3, UINT64_MAX - 7,
				      UINT64_MAX - PAGE + 1, 1ull << 63, 1ull << 32,
				      1ull << 40, 0xffffffff };

	switch (rn(t, 6)) {
	case 0: return cur + 1 + rn(t, 7);
	case 1: return size - rn(t, 16);
	case 2: return size + rn(t, 16);
	case 3: return rnd(t);
	case 4: return cur ^ (1ull << rn(t, 64));
	default: return v[rn(t, sizeof(v) / sizeof(v[0]))];
	}
}

static uint64_t v_size(struct tctx *t, uint64_t cur)
{
	uint64_t max = dinfo.max_bo_size;
	static const uint64_t v[] = { 0, 1, PAGE - 1, PAGE, PAGE + 1, UINT64_MAX,
				      UINT64_MAX - PAGE + 1, UINT64_MAX - PAGE + 2,
				      1ull << 62, 1ull << 63, 0xffffffff, 0x100000000ull };

	switch (rn(t, 5)) {
	case 0: return max + rn(t, 3) - 1;
	case 1: return max + PAGE;
	case 2: return cur ^ (1ull << rn(t, 64));
	case 3: return rnd(t);
	default: return v[rn(t, sizeof(v) / sizeof(v[0]))];
	}
}

static uint64_t v_flags(struct tctx *t)
{
	static const uint64_t v[] = { 1, 2, 3, 0x80000000, 0xffffffff, 0x100, 0x10000 };

	return pct(t, 50) ? 1ull << rn(t, 32) : v[rn(t, sizeof(v) / sizeof(v[0]))];
}

static uint64_t v_nonzero(struct tctx *t)
{
	uint64_t x = pct(t, 50) ? 1ull << rn(t, 64) : rnd(t);

	return x ? x : 1;
}

static uint32_t v_nonzero32(struct tctx *t)
{
	uint32_t x = pct(t, 50) ? 1u << rn(t, 32) : (uint32_t)rnd(t);

	return x ? x : 1;
}

/* A user pointer the kernel will only read: fine to aim anywhere. */
static uint64_t v_rptr(struct tctx *t, uint64_t good)
{
	switch (rn(t, 9)) {
	case 0: return 0;
	case 1: return (uintptr_t)scratch + PAGE;		/* PROT_NONE */
	case 2: return unmapped_addr;
	case 3: return KADDR;
	case 4: return UINT64_MAX - rn(t, 8);
	case 5: return NONCANON;
	case 6: return (uintptr_t)scratch + PAGE - 4;		/* straddles */
	case 7: return good + 1 + rn(t, 3);			/* misaligned */
	default: return (uintptr_t)scratch + 2 * PAGE;	/* read-only: fine */
	}
}

/* ---- pool helpers (pool_mu held) ---- */

static struct bo_rec *pick_bo_locked(struct tctx *t, int fi, uint64_t min_size, int usable,
				     int allow_huge)
{
	struct file_slot *f = &files[fi];
	int i, start = (int)rn(t, NBO);

	for (i = 0; i < NBO; i++) {
		struct bo_rec *b = &f->bo[(start + i) % NBO];

		if (!b->handle || (b->huge && !allow_huge))
			continue;
		if (usable && (!b->live || b->huge || b->blob || b->size < min_size))
			continue;
		return b;
	}
	return NULL;
}

/* A BO handle for file @fi: mostly its own live ones, sometimes stale,
 * foreign or made up.  *size gets the BO's size (0 if unknown). */
static uint32_t pick_handle(struct tctx *t, int fi, uint64_t min_size, uint64_t *size,
			    int *kind, int allow_huge)
{
	struct bo_rec *b = NULL;
	uint32_t h = 0;
	int r = (int)rn(t, 100);

	*size = 0;
	*kind = 0;
	pthread_mutex_lock(&pool_mu);
	if (r < 82) {
		b = pick_bo_locked(t, fi, min_size, 1, 0);
	} else if (r < 90) {
		b = pick_bo_locked(t, fi, 0, 0, allow_huge);
		*kind = 1;
	} else if (r < 96) {
		b = pick_bo_locked(t, (fi + 1 + (int)rn(t, nfiles - 1)) % nfiles, 0, 0,
				   allow_huge);
		*kind = 2;
	}
	if (b) {
		h = b->handle;
		*size = b->size;
	} else {
		h = (uint32_t)v_id(t, 0);
		*kind = 3;
	}
	pthread_mutex_unlock(&pool_mu);
	return h;
}

static void add_bo(int fi, unsigned int gen, uint32_t handle, uint64_t size,
		   uint64_t mmap_off, int imported, int blob_bo)
{
	struct file_slot *f = &files[fi];
	struct bo_rec *b;
	int i;

	pthread_mutex_lock(&pool_mu);
	if (f->gen != gen) {
		pthread_mutex_unlock(&pool_mu);
		return;
	}
	/* Re-importing gives the same handle: update it in place. */
	for (i = 0; i < NBO; i++)
		if (f->bo[i].handle == handle && f->bo[i].live)
			break;
	if (i == NBO) {
		/* Prefer a dead record's place. */
		for (i = 0; i < NBO; i++)
			if (!f->bo[(f->bo_next + i) % NBO].live)
				break;
		i = (f->bo_next + (i == NBO ? 0 : i)) % NBO;
		f->bo_next = i + 1;
	}
	b = &f->bo[i];
	b->handle = handle;
	b->size = size;
	b->mmap_off = mmap_off;
	b->live = 1;
	b->imported = imported;
	b->huge = size > (64ull << 20);
	b->blob = blob_bo;
	pthread_mutex_unlock(&pool_mu);
}

static void kill_bo(int fi, unsigned int gen, uint32_t handle)
{
	struct file_slot *f = &files[fi];
	int i;

	pthread_mutex_lock(&pool_mu);
	if (f->gen == gen) {
		for (i = 0; i < NBO; i++)
			if (f->bo[i].handle == handle)
				f->bo[i].live = 0;
		if (f->blob_bo == handle)
			f->blob_bo = 0;
	}
	pthread_mutex_unlock(&pool_mu);
}

static struct ctx_rec pick_ctx(struct tctx *t, int fi, int *kind)
{
	struct ctx_rec c = { 0 };
	int i, start = (int)rn(t, NCTX), r = (int)rn(t, 100), src = fi;

	*kind = 0;
	if (r >= 88 && r < 94) {
		src = (fi + 1 + (int)rn(t, nfiles - 1)) % nfiles;
		*kind = 2;
	}
	pthread_mutex_lock(&pool_mu);
	for (i = 0; i < NCTX; i++) {
		struct ctx_rec *x = &files[src].ctx[(start + i) % NCTX];

		if (!x->id)
			continue;
		if (r < 80 && !x->live)
			continue;
		if (r >= 80 && r < 88 && x->live)
			continue;
		c = *x;
		break;
	}
	pthread_mutex_unlock(&pool_mu);
	if (r >= 80 && r < 88)
		*kind = 1;
	if (!c.id || r >= 94) {
		c.id = (uint32_t)v_id(t, 0);
		c.slots = 1 + (uint32_t)rn(t, 4);
		c.ctx_len = 16;
		*kind = 3;
	}
	return c;
}

static uint32_t pick_sync(struct tctx *t, int fi, int fenced_only)
{
	struct file_slot *f = &files[fi];
	uint32_t h = 0;
	int i, start = (int)rn(t, NSYNC);

	if (pct(t, 8))
		return (uint32_t)v_id(t, 0);
	if (pct(t, 5))
		f = &files[(fi + 1) % nfiles];
	pthread_mutex_lock(&pool_mu);
	for (i = 0; i < NSYNC; i++) {
		struct sync_rec *s = &f->sync[(start + i) % NSYNC];

		if (!s->handle || (fenced_only && (!s->live || !s->fenced) && pct(t, 90)))
			continue;
		h = s->handle;
		break;
	}
	pthread_mutex_unlock(&pool_mu);
	return h;
}

static void set_sync(int fi, unsigned int gen, uint32_t h, int live, int fenced)
{
	struct file_slot *f = &files[fi];
	int i;

	pthread_mutex_lock(&pool_mu);
	if (f->gen == gen) {
		for (i = 0; i < NSYNC; i++)
			if (f->sync[i].handle == h)
				break;
		if (i == NSYNC) {
			if (!live)
				goto out;
			i = f->sync_next++ % NSYNC;
		}
		f->sync[i].handle = h;
		f->sync[i].live = live;
		f->sync[i].fenced = fenced;
	}
out:
	pthread_mutex_unlock(&pool_mu);
}

static void add_seq(int fi, unsigned int gen, uint64_t s)
{
	pthread_mutex_lock(&pool_mu);
	if (files[fi].gen == gen) {
		files[fi].seq[files[fi].seq_next++ % NSEQ] = s;
		if (s > files[fi].last_seq)
			files[fi].last_seq = s;
	}
	pthread_mutex_unlock(&pool_mu);
}

static void add_map(void *addr, size_t len, int blob_bo)
{
	int i;

	pthread_mutex_lock(&pool_mu);
	for (i = 0; i < NMAP; i++)
		if (!maps[i].live)
			break;
	if (i == NMAP) {
		pthread_mutex_unlock(&pool_mu);
		munmap(addr, len);
		return;
	}
	maps[i].addr = addr;
	maps[i].len = len;
	maps[i].live = 1;
	maps[i].blob = blob_bo;
	pthread_mutex_unlock(&pool_mu);
}

static void add_prime(int fd, uint64_t size, int syncfile)
{
	int i;

	pthread_mutex_lock(&pool_mu);
	for (i = 0; i < NPRIME; i++)
		if (!primes[i].live)
			break;
	if (i == NPRIME) {
		pthread_mutex_unlock(&pool_mu);
		close(fd);
		return;
	}
	primes[i].fd = fd;
	primes[i].size = size;
	primes[i].live = 1;
	primes[i].syncfile = syncfile;
	pthread_mutex_unlock(&pool_mu);
}

/* Takes a live prime fd out of the pool (the caller closes it). */
static int take_prime(struct tctx *t, uint64_t *size)
{
	int i, start = (int)rn(t, NPRIME), fd = -1;

	pthread_mutex_lock(&pool_mu);
	for (i = 0; i < NPRIME; i++) {
		struct prime_rec *p = &primes[(start + i) % NPRIME];

		if (p->live) {
			p->live = 0;
			fd = p->fd;
			*size = p->size;
			break;
		}
	}
	pthread_mutex_unlock(&pool_mu);
	return fd;
}

/* A dma-buf or sync_file fd number from the pool (may be closed meanwhile). */
static int peek_prime(struct tctx *t, int want_sync, uint64_t *size)
{
	int i, start = (int)rn(t, NPRIME), fd = -1;

	pthread_mutex_lock(&pool_mu);
	for (i = 0; i < NPRIME; i++) {
		struct prime_rec *p = &primes[(start + i) % NPRIME];

		if (p->live && p->syncfile == want_sync) {
			fd = p->fd;
			*size = p->size;
			break;
		}
	}
	pthread_mutex_unlock(&pool_mu);
	return fd;
}

/* ---- file slots ---- */

static int file_get(int fi, unsigned int *gen)
{
	pthread_rwlock_rdlock(&files[fi].rw);
	pthread_mutex_lock(&pool_mu);
	*gen = files[fi].gen;
	pthread_mutex_unlock(&pool_mu);
	return files[fi].fd;
}

static void file_put(int fi)
{
	pthread_rwlock_unlock(&files[fi].rw);
}

/* ---- SIGSEGV/SIGBUS guard for touching mappings ---- */

static void on_fault(int sig, siginfo_t *si, void *uc)
{
	void *bt[32];
	char msg[128];
	int n;

	(void)uc;
	if (guard)
		siglongjmp(*guard, 1);
	n = snprintf(msg, sizeof(msg), "# uapi_fuzz crashed: signal %d at %p; backtrace:\n",
		     sig, si->si_addr);
	if (write(1, msg, (size_t)n) < 0)
		_exit(3);
	n = backtrace(bt, 32);
	backtrace_symbols_fd(bt, n, 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void on_usr1(int sig)
{
	(void)sig;
}

/* Copies @len bytes to/from @p; returns 0 or -EFAULT if it faulted. */
static int guarded_copy(void *dst, const void *src, size_t len)
{
	sigjmp_buf jb;

	if (sigsetjmp(jb, 1)) {
		guard = NULL;
		return -EFAULT;
	}
	guard = &jb;
	__asm__ volatile("" ::: "memory");
	memcpy(dst, src, len);
	__asm__ volatile("" ::: "memory");
	guard = NULL;
	return 0;
}

/* ---- operations ---- */

#define MUT(cond, field, val, kind) do { if (cond) { field = (val); } } while (0)

static int nmut(struct tctx *t)
{
	int r = (int)rn(t, 100);

	return r < 45 ? 0 : r < 75 ? 1 : r < 92 ? 2 : 3;
}

static void op_get_info(struct tctx *t, int fi, int fd)
{
	static __thread uint8_t buf[4096];
	struct drm_wafer_get_info gi = { .info_ptr = (uintptr_t)buf, .info_size = sizeof(dinfo) };
	const char *invalid = NULL;
	int m = nmut(t), ptr_bad = 0, ret;

	while (m--) {
		switch (rn(t, 3)) {
		case 0:
			/* Was pad: a model of this file, a stale one or any value. */
			pthread_mutex_lock(&pool_mu);
			gi.model_id = pct(t, 40) ? files[fi].model_id :
				      pct(t, 50) ? files[fi].stale_model_id : v_nonzero32(t);
			pthread_mutex_unlock(&pool_mu);
			break;
		case 1: {
			static const uint32_t s[] = { 0, 1, 7, 8, 13, 95, 96, 97, 4096, 0xffffffff };

			gi.info_size = s[rn(t, 10)];
			break;
		}
		default:
			/* Only addresses nothing of ours can live at: the kernel writes. */
			switch (rn(t, 6)) {
			case 0: gi.info_ptr = 0; break;
			case 1: gi.info_ptr = (uintptr_t)scratch + PAGE; break;
			case 2: gi.info_ptr = (uintptr_t)scratch + 2 * PAGE; break;
			case 3: gi.info_ptr = KADDR; break;
			case 4: gi.info_ptr = (uintptr_t)scratch + PAGE - 8 - rn(t, 40); break;
			default: gi.info_ptr = NONCANON; break;
			}
			ptr_bad = 1;
		}
	}
	if (gi.info_size < 8)
		invalid = "info_size < 8";
	if (!gi.info_ptr)
		invalid = "info_ptr NULL";
	ret = raw_ioctl(fd, DRM_IOCTL_WAFER_GET_INFO, &gi);
	count(OP_GET_INFO, ret);
	tlog(t, OP_GET_INFO, fi, ret, "ptr %#" PRIx64 " size %u model %u", gi.info_ptr,
	     gi.info_size, gi.model_id);
	if (!ret && invalid)
		sure_bug(t, OP_GET_INFO, ret, "accepted %s", invalid);
	if (ret == -EFAULT && !ptr_bad)
		sure_bug(t, OP_GET_INFO, ret, "-EFAULT with a valid 4 KiB info_ptr");
	if (ret == -ENOENT && !gi.model_id)
		sure_bug(t, OP_GET_INFO, ret, "-ENOENT without a model_id");
	if (ret && ret != -EINVAL && ret != -EFAULT && ret != -EINTR && ret != -ENOENT)
		odd(t, OP_GET_INFO, ret, "info_size %u", gi.info_size);
}

static int gem_close(int fi, int fd, struct drm_gem_close *c)
{
	int ret;

	atomic_fetch_add(&closes_begun[fi], 1);
	ret = raw_ioctl(fd, DRM_IOCTL_GEM_CLOSE, c);
	atomic_fetch_add(&closes_ended[fi], 1);
	return ret;
}

static void op_bo_create(struct tctx *t, int fi, int fd, unsigned int gen)
{
	struct drm_wafer_bo_create c = { 0 };
	struct drm_wafer_bo_info i = { 0 };
	const char *invalid = NULL;
	static const uint64_t sz[] = { 1, 4, 64, 4095, 4096, 4097, 8192, 12288, 65536,
				       1 << 20 };
	unsigned long begun, ended;
	int m = nmut(t), ret, sure, wrong;

	c.size = pct(t, 85) ? sz[rn(t, 10)] : 1 + rn(t, 1 << 18);
	while (m--) {
		if (pct(t, 30)) {
			c.flags = (uint32_t)v_flags(t);
			invalid = "flags != 0";
		} else {
			c.size = v_size(t, c.size);
		}
	}
	if (!c.size)
		invalid = invalid ? invalid : "size 0";
	if (c.size > dinfo.max_bo_size)
		invalid = invalid ? invalid : "size > max_bo_size";
	/* Big valid BOs cost nothing until touched; allow a few. */
	if (!invalid && c.size > (64ull << 20) && pct(t, 70))
		c.size = PAGE;
	/* ended, then begun: equal means no close of this file in flight now */
	ended = atomic_load(&closes_ended[fi]);
	begun = atomic_load(&closes_begun[fi]);
	ret = raw_ioctl(fd, DRM_IOCTL_WAFER_BO_CREATE, &c);
	count(OP_BO_CREATE, ret);
	tlog(t, OP_BO_CREATE, fi, ret, "size %#" PRIx64 " flags %#x -> handle %u", c.size,
	     c.flags, ret ? 0 : c.handle);
	if (!ret && invalid)
		sure_bug(t, OP_BO_CREATE, ret, "accepted %s (size %#" PRIx64 ", flags %#x)",
			 invalid, c.size, c.flags);
	if (ret == -EFAULT)
		sure_bug(t, OP_BO_CREATE, ret, "no user pointer in the argument");
	if (ret && ret != -EINVAL && ret != -EDQUOT && ret != -ENOMEM)
		odd(t, OP_BO_CREATE, ret, "size %#" PRIx64, c.size);
	if (ret)
		return;
	i.handle = c.handle;
	ret = raw_ioctl(fd, DRM_IOCTL_WAFER_BO_INFO, &i);
	/* no close began since before BO_CREATE: c.handle is still this BO */
	sure = ended == begun && atomic_load(&closes_begun[fi]) == begun;
	if (sure && ret == -ENOENT)
		sure_bug(t, OP_BO_CREATE, 0, "BO_INFO -ENOENT for the handle %u just created, "
			 "no GEM_CLOSE since", c.handle);
	if (ret)
		return;
	wrong = i.size != ((c.size + PAGE - 1) & ~(PAGE - 1));
	if (sure) {
		atomic_fetch_add(&size_checks, 1);
		if (wrong)
			sure_bug(t, OP_BO_CREATE, 0, "BO_INFO size %#llx for a %#llx-byte BO, "
				 "no GEM_CLOSE since", (unsigned long long)i.size,
				 (unsigned long long)c.size);
	} else {
		atomic_fetch_add(&size_skips, 1);
		if (wrong)
			atomic_fetch_add(&size_reused, 1);
	}
	add_bo(fi, gen, c.handle, i.size, i.mmap_offset, 0, 0);
}

static void op_bo_info(struct tctx *t, int fi, int fd)
{
	struct drm_wafer_bo_info i = { 0 };
	uint64_t size;
	int kind, ret;

	i.handle = pick_handle(t, fi, 0, &size, &kind, 1);
	if (pct(t, 15))
		i.pad = v_nonzero32(t);
	if (pct(t, 10))
		i.size = rnd(t), i.mmap_offset = rnd(t);	/* out fields: ignored */
	ret = raw_ioctl(fd, DRM_IOCTL_WAFER_BO_INFO, &i);
	count(OP_BO_INFO, ret);
	tlog(t, OP_BO_INFO, fi, ret, "handle %u (kind %d) pad %u", i.handle, kind, i.pad);
	if (!ret && i.pad)
		sure_bug(t, OP_BO_INFO, ret, "accepted pad %#x", i.pad);
	if (!ret && (i.size == 0 || (i.mmap_offset & (PAGE - 1))))
		sure_bug(t, OP_BO_INFO, ret, "size %#llx mmap_offset %#llx",
			 (unsigned long long)i.size, (unsigned long long)i.mmap_offset);
	if (ret == -EFAULT)
		sure_bug(t, OP_BO_INFO, ret, "no user pointer in the argument");
	if (ret && ret != -EINVAL && ret != -ENOENT && ret != -ENOMEM)
		odd(t, OP_BO_INFO, ret, "handle %u", i.handle);
}

static void op_gem_close(struct tctx *t, int fi, int fd, unsigned int gen)
{
	struct drm_gem_close c = { 0 };
	uint64_t size;
	int kind, ret;

	c.handle = pick_handle(t, fi, 0, &size, &kind, 1);
	if (pct(t, 10))
		c.pad = v_nonzero32(t);
	ret = gem_close(fi, fd, &c);
	count(OP_GEM_CLOSE, ret);
	tlog(t, OP_GEM_CLOSE, fi, ret, "handle %u (kind %d)", c.handle, kind);
	if (!ret)
		kill_bo(fi, gen, c.handle);
	if (ret == -EFAULT)
		sure_bug(t, OP_GEM_CLOSE, ret, "no user pointer in the argument");
}

static void op_mmap(struct tctx *t, int fi, int fd)
{
	struct bo_rec b = { 0 };
	struct bo_rec *pb;
	uint64_t off, len;
	int prot = PROT_READ | PROT_WRITE, flags = MAP_SHARED, m = nmut(t), ret;
	const char *invalid = NULL;
	void *p;

	pthread_mutex_lock(&pool_mu);
	pb = pick_bo_locked(t, pct(t, 90) ? fi : (int)rn(t, nfiles), 0, pct(t, 80), 1);
	if (pb)
		b = *pb;
	pthread_mutex_unlock(&pool_mu);
	if (!b.handle || !b.mmap_off)
		return;
	off = b.mmap_off;
	len = b.huge ? PAGE * (1 + rn(t, 4)) : b.size;
	if (b.huge)
		invalid = NULL;	/* shorter than the BO is allowed */
	while (m--) {
		switch (rn(t, 5)) {
		case 0: {
			static const int64_t d[] = { (int64_t)PAGE, -(int64_t)PAGE, 1, -1,
						     (int64_t)(PAGE * 2) };
			off += (uint64_t)d[rn(t, 5)];
			break;
		}
		case 1: {
			uint64_t l[] = { PAGE, b.size + PAGE, b.size - 1, b.size + 1,
					 1ull << 40, 0, b.size * 2 };
			len = l[rn(t, 7)];
			if (len > b.size && !b.huge)
				invalid = "length beyond the BO";
			break;
		}
		case 2:
			flags = MAP_PRIVATE;
			if (!b.imported)
				invalid = "MAP_PRIVATE of a shmem BO (COW)";
			break;
		case 3: {
			static const int pr[] = { PROT_READ, PROT_WRITE, PROT_NONE,
						  PROT_READ | PROT_EXEC };
			prot = pr[rn(t, 4)];
			break;
		}
		default:
			off = rnd(t) & ~(PAGE - 1);
		}
	}
	p = mmap(NULL, len, prot, flags, fd, (off_t)off);
	ret = p == MAP_FAILED ? -errno : 0;
	count(OP_MMAP, ret);
	tlog(t, OP_MMAP, fi, ret, "handle %u off %#" PRIx64 " (bo %#" PRIx64 ") len %#" PRIx64
	     " prot %d flags %d", b.handle, off, b.mmap_off, len, prot, flags);
	if (ret)
		return;
	if (invalid && off == b.mmap_off && len > (b.size + PAGE - 1) / PAGE * PAGE) {
		/* The record may be stale (handle and offset reused): ask. */
		struct drm_wafer_bo_info i = { .handle = b.handle };

		if (!raw_ioctl(fd, DRM_IOCTL_WAFER_BO_INFO, &i) && i.mmap_offset == off &&
		    i.size < len)
			odd(t, OP_MMAP, ret, "%s: mapped %#" PRIx64 " bytes of a %#llx-byte BO",
			    invalid, len, (unsigned long long)i.size);
	}
	else if (invalid && flags == MAP_PRIVATE && !b.imported)
		odd(t, OP_MMAP, ret, "%s", invalid);
	add_map(p, len, b.blob);
}

static void op_munmap(struct tctx *t)
{
	int i, start = (int)rn(t, NMAP);
	void *addr = NULL;
	size_t len = 0;

	pthread_mutex_lock(&pool_mu);
	for (i = 0; i < NMAP; i++) {
		struct map_rec *m = &maps[(start + i) % NMAP];

		if (!m->live)
			continue;
		if (m->len > PAGE && pct(t, 30)) {
			/* Unmap a tail part, keep the head. */
			size_t keep = PAGE * (1 + rn(t, m->len / PAGE - 1));

			addr = (char *)m->addr + keep;
			len = m->len - keep;
			m->len = keep;
		} else {
			addr = m->addr;
			len = m->len;
			m->live = 0;
		}
		break;
	}
	pthread_mutex_unlock(&pool_mu);
	if (!addr)
		return;
	i = munmap(addr, len) ? -errno : 0;
	count(OP_MUNMAP, i);
	tlog(t, OP_MUNMAP, -1, i, "%p + %#zx", addr, len);
}

static void op_touch(struct tctx *t)
{
	int i, start = (int)rn(t, NMAP), ret;
	uint8_t tmp[64];
	struct map_rec m = { 0 };
	size_t at;

	pthread_mutex_lock(&pool_mu);
	for (i = 0; i < NMAP; i++)
		if (maps[(start + i) % NMAP].live) {
			m = maps[(start + i) % NMAP];
			break;
		}
	pthread_mutex_unlock(&pool_mu);
	if (!m.live)
		return;
	/* Another thread may unmap it meanwhile: the copy is guarded. */
	at = rn(t, m.len > 64 ? m.len - 64 : 1) & ~3ull;
	if (m.blob || pct(t, 50)) {
		ret = guarded_copy(tmp, (char *)m.addr + at, sizeof(tmp));
	} else {
		for (i = 0; i < 16; i++)	/* token ids: mostly < vocab */
			((uint32_t *)tmp)[i] = pct(t, 90) ? (uint32_t)rn(t, 512) :
							     (uint32_t)rnd(t);
		ret = guarded_copy((char *)m.addr + at, tmp, sizeof(tmp));
	}
	count(OP_TOUCH, ret);
	tlog(t, OP_TOUCH, -1, ret, "%p + %#zx", m.addr, at);
}

/* Creates a BO holding the valid blob in file @fi. */
static uint32_t make_blob_bo(int fi, int fd, unsigned int gen, int corrupt, struct tctx *t)
{
	struct wt_bo b;
	int n;

	if (wt_bo_new(fd, &b, blob_len))
		return 0;
	memcpy(b.map, blob, blob_len);
	for (n = corrupt ? 1 + (int)rn(t, 3) : 0; n > 0; n--) {
		size_t at = pct(t, 60) ? rn(t, 512) : rn(t, blob_len);

		((uint8_t *)b.map)[at] ^= (uint8_t)(1u << rn(t, 8));
	}
	munmap(b.map, b.size);
	if (!corrupt) {
		add_bo(fi, gen, b.handle, b.size, 0, 0, 1);
		pthread_mutex_lock(&pool_mu);
		if (files[fi].gen == gen)
			files[fi].blob_bo = b.handle;
		pthread_mutex_unlock(&pool_mu);
	}
	return b.handle;
}

/* MODEL_LOAD flags: weight streaming (valid) or a mutated value. */
static void load_flags(struct tctx *t, struct drm_wafer_model_load *ml)
{
	ml->flags = pct(t, 40) ? DRM_WAFER_LOAD_STREAM : (uint32_t)v_flags(t);
}

/* A load succeeded: the file's latest model; the one before stays loaded. */
static void note_model(int fi, unsigned int gen, uint32_t id)
{
	pthread_mutex_lock(&pool_mu);
	if (files[fi].gen == gen) {
		if (files[fi].model_id)
			files[fi].prev_model_id = files[fi].model_id;
		files[fi].model_id = id;
	}
	pthread_mutex_unlock(&pool_mu);
}

static void op_model_load(struct tctx *t, int fi, int fd, unsigned int gen)
{
	struct drm_wafer_model_load ml = { 0 };
	const char *invalid = NULL;
	uint32_t tmp_bo = 0;
	uint64_t size;
	int m = pct(t, 50) ? 0 : nmut(t), kind = 0, corrupt = pct(t, 10), ret;

	pthread_mutex_lock(&pool_mu);
	ml.bo_handle = files[fi].blob_bo;
	pthread_mutex_unlock(&pool_mu);
	if (corrupt) {
		tmp_bo = make_blob_bo(fi, fd, gen, 1, t);
		ml.bo_handle = tmp_bo;
	} else if (!ml.bo_handle) {
		ml.bo_handle = make_blob_bo(fi, fd, gen, 0, t);
	}
	ml.blob_size = blob_len;
	while (m--) {
		switch (rn(t, 6)) {
		case 0:
			if (pct(t, 50)) {
				load_flags(t, &ml);
			} else if (pct(t, 50)) {
				/* A layer part (valid mostly) or a mutated one. */
				ml.part = pct(t, 60) ? (uint32_t)rn(t, DRM_WAFER_PART_MAX + 1) :
				       (uint32_t)v_small(t, ml.part, DRM_WAFER_PART_MAX);
			} else if (pct(t, 50)) {
				/* Expert groups: the fuzzer's blob is dense (-EINVAL). */
				ml.expert_group = pct(t, 50) ? v_nonzero32(t) :
					(uint32_t)v_small(t, ml.expert_group,
							  DRM_WAFER_MAX_EXPERT_GROUP);
			} else {
				/* A shard's experts (a dense blob has none: -EINVAL). */
				ml.expert_first = pct(t, 50) ? (uint32_t)rn(t, 5) : v_nonzero32(t);
				ml.expert_count = pct(t, 50) ? (uint32_t)rn(t, 5) : v_nonzero32(t);
				if (pct(t, 50))
					ml.part = DRM_WAFER_PART_XSHARD;
			}
			break;
		case 5:	/* a layer range, often a valid one of the 5 layers */
			ml.layer_first = pct(t, 70) ? (uint32_t)rn(t, 5) : (uint32_t)rnd(t);
			ml.layer_count = pct(t, 70) ? (uint32_t)rn(t, 6) : (uint32_t)rnd(t);
			break;
		case 1:
			ml.bo_offset = v_off(t, 0, blob_len);
			break;
		case 2:
			ml.blob_size = v_off(t, blob_len, blob_len);
			break;
		case 3:
			ml.bo_handle = pick_handle(t, fi, 0, &size, &kind, 0);
			break;
		default:
			ml.sram_needed = rnd(t);	/* out fields: ignored */
			ml.model_id = (uint32_t)rnd(t);
		}
	}
	/* Judged on the final value: a later mutation may have made it valid. */
	if (ml.flags & ~DRM_WAFER_LOAD_FLAGS)
		invalid = "unknown flags";
	if (ml.bo_offset & 7)
		invalid = "bo_offset not 8-byte aligned";
	if (ml.layer_first && !ml.layer_count)
		invalid = "layer_first without layer_count";
	else if (ml.layer_count && (uint64_t)ml.layer_first + ml.layer_count > 5)
		invalid = "layer range outside the 5-layer blob";
	if (!ml.blob_size)
		invalid = "blob_size 0";
	if (ml.part > DRM_WAFER_PART_MAX)
		invalid = "part > DRM_WAFER_PART_MAX";
	else if (ml.part && (ml.flags & DRM_WAFER_LOAD_STREAM))
		invalid = "a layer part with LOAD_STREAM";
	if (ml.expert_group)
		invalid = ml.expert_group > DRM_WAFER_MAX_EXPERT_GROUP ?
			  "expert_group > DRM_WAFER_MAX_EXPERT_GROUP" :
			  "expert_group on a dense model";
	if (ml.part == DRM_WAFER_PART_XHOME || ml.part == DRM_WAFER_PART_XSHARD)
		invalid = "an expert-parallel part of a dense model";
	else if (ml.expert_first || ml.expert_count)
		invalid = "expert_first / expert_count on a part other than XSHARD";
	ret = raw_ioctl(fd, DRM_IOCTL_WAFER_MODEL_LOAD, &ml);
	count(OP_MODEL_LOAD, ret);
	tlog(t, OP_MODEL_LOAD, fi, ret, "bo %u off %#" PRIx64 " size %#" PRIx64
	     " flags %#x part %#x expert_group %#x experts %u+%u layers %u+%u corrupt %d"
	     " -> id %u", ml.bo_handle, ml.bo_offset, ml.blob_size, ml.flags, ml.part,
	     ml.expert_group, ml.expert_first, ml.expert_count, ml.layer_first,
	     ml.layer_count, corrupt, ret ? 0 : ml.model_id);
	if (!ret && invalid)
		sure_bug(t, OP_MODEL_LOAD, ret, "accepted %s", invalid);
	if (ret == -EFAULT)
		sure_bug(t, OP_MODEL_LOAD, ret, "no user pointer in the argument");
	/* A second load may succeed: -ENOSPC, -EMFILE, -EBUSY are its limits. */
	if (ret && ret != -EINVAL && ret != -ENOENT && ret != -EBUSY && ret != -ENOSPC &&
	    ret != -EMFILE && ret != -EPROTO && ret != -EOPNOTSUPP && ret != -EBADMSG &&
	    ret != -ENOMEM && ret != -EINTR)
		odd(t, OP_MODEL_LOAD, ret, "bo %u size %#" PRIx64, ml.bo_handle, ml.blob_size);
	if (!ret)
		note_model(fi, gen, ml.model_id);
	if (tmp_bo) {
		struct drm_gem_close c = { .handle = tmp_bo };

		gem_close(fi, fd, &c);
	}
}

static int do_unload(struct tctx *t, int fi, int fd, unsigned int gen, enum op op, int mutate)
{
	struct drm_wafer_model_unload u = { 0 };
	int ret;

	pthread_mutex_lock(&pool_mu);
	u.model_id = files[fi].model_id;
	if (files[fi].prev_model_id && pct(t, 40))
		u.model_id = files[fi].prev_model_id;
	if (!u.model_id || pct(t, 10))
		u.model_id = files[(fi + (int)rn(t, nfiles)) % nfiles].stale_model_id;
	pthread_mutex_unlock(&pool_mu);
	if (mutate && pct(t, 15))
		u.pad = v_nonzero32(t);
	if (mutate && pct(t, 10))
		u.model_id = (uint32_t)v_id(t, u.model_id);
	ret = raw_ioctl(fd, DRM_IOCTL_WAFER_MODEL_UNLOAD, &u);
	count(op, ret);
	tlog(t, op, fi, ret, "model %u pad %#x", u.model_id, u.pad);
	if (!ret && u.pad)
		sure_bug(t, op, ret, "accepted pad %#x", u.pad);
	if (!ret && !u.model_id)
		sure_bug(t, op, ret, "accepted model id 0");
	if (ret == -EFAULT)
		sure_bug(t, op, ret, "no user pointer in the argument");
	if (ret && ret != -EINVAL && ret != -ENOENT && ret != -EBUSY && ret != -EINTR &&
	    ret != -ERESTART)
		odd(t, op, ret, "model %u", u.model_id);
	if (!ret) {
		pthread_mutex_lock(&pool_mu);
		if (files[fi].gen == gen && files[fi].prev_model_id == u.model_id) {
			files[fi].stale_model_id = u.model_id;
			files[fi].prev_model_id = 0;
		}
		if (files[fi].gen == gen && files[fi].model_id == u.model_id) {
			files[fi].stale_model_id = u.model_id;
			files[fi].model_id = files[fi].prev_model_id;
			files[fi].prev_model_id = 0;
		}
		pthread_mutex_unlock(&pool_mu);
	}
	return ret;
}

static int destroy_ctx(struct tctx *t, int fi, int fd, unsigned int gen, uint32_t id,
		       uint32_t pad, enum op op)
{
	struct drm_wafer_ctx_destroy d = { .ctx_id = id, .pad = pad };
	int ret = raw_ioctl(fd, DRM_IOCTL_WAFER_CTX_DESTROY, &d), i;

	count(op, ret);
	tlog(t, op, fi, ret, "ctx %u pad %#x", id, pad);
	if (!ret && pad)
		sure_bug(t, op, ret, "accepted pad %#x", pad);
	if (ret == -EFAULT)
		sure_bug(t, op, ret, "no user pointer in the argument");
	if (ret && ret != -EINVAL && ret != -ENOENT)
		odd(t, op, ret, "ctx %u", id);
	if (!ret) {
		pthread_mutex_lock(&pool_mu);
		if (files[fi].gen == gen)
			for (i = 0; i < NCTX; i++)
				if (files[fi].ctx[i].id == id)
					files[fi].ctx[i].live = 0;
		pthread_mutex_unlock(&pool_mu);
	}
	return ret;
}

static void op_model_unload(struct tctx *t, int fi, int fd, unsigned int gen)
{
	do_unload(t, fi, fd, gen, OP_MODEL_UNLOAD, 1);
}

/* Destroys every context of the file, then unloads: lets the model move. */
static void op_drain(struct tctx *t, int fi, int fd, unsigned int gen)
{
	uint32_t ids[NCTX];
	int i, n = 0;

	pthread_mutex_lock(&pool_mu);
	for (i = 0; i < NCTX; i++)
		if (files[fi].ctx[i].live)
			ids[n++] = files[fi].ctx[i].id;
	pthread_mutex_unlock(&pool_mu);
	for (i = 0; i < n; i++)
		destroy_ctx(t, fi, fd, gen, ids[i], 0, OP_CTX_DESTROY);
	do_unload(t, fi, fd, gen, OP_DRAIN, 0);
}

static void op_ctx_create(struct tctx *t, int fi, int fd, unsigned int gen)
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

static void op_ctx_destroy(struct tctx *t, int fi, int fd, unsigned int gen)
{
	int kind;
	struct ctx_rec c = pick_ctx(t, fi, &kind);

	destroy_ctx(t, fi, fd, gen, c.id, pct(t, 10) ? v_nonzero32(t) : 0,
		    OP_CTX_DESTROY);
}

/* What a built (and mutated) job is expected to do. */
struct job_exp {
	const char *invalid;	/* a documented-invalid field: must not succeed */
	int fault_ok;		/* in_syncobjs may be a bad pointer */
	char what[400];
};

/* The documented-invalid field of job @j that SUBMIT must refuse, or NULL. */
static const char *job_invalid(const struct drm_wafer_job *j)
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

static void build_job(struct tctx *t, int fi, struct drm_wafer_job *j, uint32_t *arr,
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

static void check_job_ret(struct tctx *t, enum op op, int ret, const struct job_exp *e)
{
	if (!ret && e->invalid)
		sure_bug(t, op, ret, "accepted a job with %s: %s", e->invalid, e->what);
	if (ret == -EFAULT && !e->fault_ok)
		sure_bug(t, op, ret, "-EFAULT without a bad user pointer: %s", e->what);
	if (ret && ret != -EINVAL && ret != -ENOENT && ret != -EBUSY && ret != -EFAULT &&
	    ret != -ENOMEM && ret != -EINTR)
		odd(t, op, ret, "%s", e->what);
}

static void note_status(struct tctx *t, enum op op, int status, const char *what)
{
	int e = status < 0 ? -status : 0;

	atomic_fetch_add(&status_counts[e > MAX_ERRNO ? MAX_ERRNO : e], 1);
	/* No fault is injected: a timeout or reset means the device hung. */
	if (status == -ETIMEDOUT || status == -EIO || status == -ENODEV)
		odd(t, op, status, "job status (device reset?) %s", what);
}

static void op_submit(struct tctx *t, int fi, int fd, unsigned int gen)
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

static void op_wait(struct tctx *t, int fi, int fd)
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

static void op_sync_create(struct tctx *t, int fi, int fd, unsigned int gen)
{
	struct drm_syncobj_create c = { 0 };
	int ret;

	if (pct(t, 70))
		c.flags = DRM_SYNCOBJ_CREATE_SIGNALED;
	if (pct(t, 10))
		c.flags = (uint32_t)v_flags(t);
	ret = raw_ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c);
	count(OP_SYNC_CREATE, ret);
	tlog(t, OP_SYNC_CREATE, fi, ret, "flags %#x -> %u", c.flags, ret ? 0 : c.handle);
	if (!ret)
		set_sync(fi, gen, c.handle, 1, !!(c.flags & DRM_SYNCOBJ_CREATE_SIGNALED));
}

static void op_sync_destroy(struct tctx *t, int fi, int fd, unsigned int gen)
{
	struct drm_syncobj_destroy d = { .handle = pick_sync(t, fi, 0) };
	int ret;

	if (pct(t, 10))
		d.pad = v_nonzero32(t);
	ret = raw_ioctl(fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
	count(OP_SYNC_DESTROY, ret);
	tlog(t, OP_SYNC_DESTROY, fi, ret, "handle %u", d.handle);
	if (!ret)
		set_sync(fi, gen, d.handle, 0, 0);
}

/* Signal, reset, wait, export/import as fd and sync_file. */
static void op_sync_misc(struct tctx *t, int fi, int fd, unsigned int gen)
{
	uint32_t h[4];
	int ret = 0, what = (int)rn(t, 7), i, n = 1 + (int)rn(t, 3);
	uint64_t dummy;

	for (i = 0; i < 4; i++)
		h[i] = pick_sync(t, fi, what == 2);
	switch (what) {
	case 0: {
		struct drm_syncobj_array a = { .handles = (uintptr_t)h, .count_handles = n };

		if (pct(t, 15))
			a.handles = v_rptr(t, (uintptr_t)h);
		ret = raw_ioctl(fd, DRM_IOCTL_SYNCOBJ_SIGNAL, &a);
		if (!ret)
			for (i = 0; i < n; i++)
				set_sync(fi, gen, h[i], 1, 1);
		break;
	}
	case 1: {
		struct drm_syncobj_array a = { .handles = (uintptr_t)h, .count_handles = n };

		ret = raw_ioctl(fd, DRM_IOCTL_SYNCOBJ_RESET, &a);
		if (!ret)
			for (i = 0; i < n; i++)
				set_sync(fi, gen, h[i], 1, 0);
		break;
	}
	case 2: {
		struct drm_syncobj_wait w = { .handles = (uintptr_t)h, .count_handles = n,
					      .timeout_nsec = wt_deadline_ms((int64_t)rn(t, 50)) };

		if (pct(t, 50))
			w.flags |= DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL;
		if (pct(t, 20))
			w.flags |= DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT;
		ret = raw_ioctl(fd, DRM_IOCTL_SYNCOBJ_WAIT, &w);
		break;
	}
	case 3:
	case 4: {
		struct drm_syncobj_handle e = { .handle = h[0] };

		if (what == 4)
			e.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE;
		if (pct(t, 10))
			e.flags = (uint32_t)v_flags(t);
		ret = raw_ioctl(fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &e);
		if (!ret)
			add_prime(e.fd, 0, what == 4 ? 2 : 1);
		break;
	}
	case 5: {
		/* Import a syncobj fd or a sync_file into this (maybe another) file. */
		int want = pct(t, 50) ? 1 : 2;
		struct drm_syncobj_handle im = { .fd = peek_prime(t, want, &dummy) };

		if (im.fd < 0)
			im.fd = pct(t, 50) ? -1 : fd;
		if (want == 2) {
			im.flags = DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE;
			im.handle = h[0];
		}
		ret = raw_ioctl(fd, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &im);
		if (!ret)
			set_sync(fi, gen, im.handle, 1, 1);
		break;
	}
	default: {
		/* sync_file info of an exported job fence: fence names. */
		struct sync_fence_info fi_arr[4];
		struct sync_file_info info = { 0 };
		int sfd = peek_prime(t, 2, &dummy);

		if (sfd < 0)
			return;
		info.num_fences = 4;
		info.sync_fence_info = (uintptr_t)fi_arr;
		ret = raw_ioctl(sfd, SYNC_IOC_FILE_INFO, &info);
		break;
	}
	}
	count(OP_SYNC_MISC, ret);
	tlog(t, OP_SYNC_MISC, fi, ret, "kind %d handles %u %u", what, h[0], h[1]);
}

static void op_prime_export(struct tctx *t, int fi, int fd)
{
	struct drm_prime_handle p = { .flags = DRM_CLOEXEC | (pct(t, 70) ? DRM_RDWR : 0) };
	uint64_t size;
	int kind, ret;

	p.handle = pick_handle(t, fi, 0, &size, &kind, 1);
	if (pct(t, 10))
		p.flags = (uint32_t)v_flags(t);
	ret = raw_ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p);
	count(OP_PRIME_EXPORT, ret);
	tlog(t, OP_PRIME_EXPORT, fi, ret, "handle %u (kind %d) flags %#x", p.handle, kind,
	     p.flags);
	if (ret == -EFAULT)
		sure_bug(t, OP_PRIME_EXPORT, ret, "no user pointer in the argument");
	if (!ret)
		add_prime(p.fd, size, 0);
}

static void op_prime_import(struct tctx *t, int fi, int fd, unsigned int gen)
{
	struct drm_prime_handle p = { 0 };
	struct drm_wafer_bo_info i = { 0 };
	uint64_t size = 0;
	int ret;

	p.fd = peek_prime(t, 0, &size);
	if (p.fd < 0 || pct(t, 10)) {
		int v[] = { -1, fd, 0, 1 << 20 };

		p.fd = v[rn(t, 4)];
	}
	ret = raw_ioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p);
	count(OP_PRIME_IMPORT, ret);
	tlog(t, OP_PRIME_IMPORT, fi, ret, "fd %d -> handle %u", p.fd, ret ? 0 : p.handle);
	if (ret == -EFAULT)
		sure_bug(t, OP_PRIME_IMPORT, ret, "no user pointer in the argument");
	if (ret)
		return;
	i.handle = p.handle;
	if (!raw_ioctl(fd, DRM_IOCTL_WAFER_BO_INFO, &i))
		add_bo(fi, gen, p.handle, i.size, i.mmap_offset, 1, 0);
}

/* mmap of the dma-buf itself, DMA_BUF_IOCTL_SYNC, closing it. */
static void op_prime_misc(struct tctx *t)
{
	uint64_t size = 0;
	int ret = 0, what = (int)rn(t, 3), fd;

	if (what == 0) {
		fd = take_prime(t, &size);
		if (fd < 0)
			return;
		ret = close(fd) ? -errno : 0;
	} else if (what == 1) {
		struct dma_buf_sync s = { .flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW };

		fd = peek_prime(t, 0, &size);
		if (fd < 0)
			return;
		if (pct(t, 20))
			s.flags = v_flags(t);
		ret = raw_ioctl(fd, DMA_BUF_IOCTL_SYNC, &s);
		if (!ret && (s.flags & DMA_BUF_SYNC_START)) {
			s.flags = (s.flags & ~DMA_BUF_SYNC_START) | DMA_BUF_SYNC_END;
			ioctl(fd, DMA_BUF_IOCTL_SYNC, &s);
		}
	} else {
		void *p;
		uint64_t len;

		fd = peek_prime(t, 0, &size);
		if (fd < 0 || !size || size > (64ull << 20))
			return;
		len = pct(t, 80) ? size : size + PAGE;
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			 pct(t, 85) ? 0 : (off_t)PAGE);
		ret = p == MAP_FAILED ? -errno : 0;
		if (!ret)
			add_map(p, len, 0);
	}
	count(OP_PRIME_MISC, ret);
	tlog(t, OP_PRIME_MISC, -1, ret, "kind %d", what);
}

/* ---- io_uring ---- */

static void ring_setup(struct tctx *t)
{
	int r = (int)rn(t, 10), fds[MAX_FILES], i;

	t->ring_flags = r < 7 ? IORING_SETUP_SQE128 | IORING_SETUP_CQE32 :
			r < 9 ? IORING_SETUP_SQE128 : 0;
	t->ring_ok = !io_uring_queue_init(URING_ENTRIES, &t->ring, t->ring_flags);
	t->pending = 0;
	t->ring_fixed = 0;
	memset(t->us, 0, sizeof(t->us));
	if (!t->ring_ok)
		return;
	/* Fixed files: the fds of now; a reopen later leaves them stale. */
	pthread_mutex_lock(&pool_mu);
	for (i = 0; i < nfiles; i++) {
		fds[i] = files[i].fd;
		t->fixed_gen[i] = files[i].gen;
	}
	pthread_mutex_unlock(&pool_mu);
	t->ring_fixed = !io_uring_register_files(&t->ring, fds, nfiles);
}

/*
 * How long a wait for all of a thread's commands may take: long enough for
 * a job queued behind other threads' jobs, each of which may run until the
 * job timeout (5 s) on a loaded debug guest, and still a bound, so a lost
 * completion is reported rather than waited for.  (The debug kernel
 * once ran past the 10 s this was, in a full check on a loaded host.)
 */
#define URING_REAP_ALL_S	60

static void reap(struct tctx *t, int wait_all)
{
	struct io_uring_cqe *cqe;
	double deadline = now() + URING_REAP_ALL_S;

	while (t->pending > 0) {
		struct __kernel_timespec ts = { .tv_nsec = 50 * 1000 * 1000 };
		int ret;

		if (wait_all)
			ret = io_uring_wait_cqe_timeout(&t->ring, &cqe, &ts);
		else
			ret = io_uring_peek_cqe(&t->ring, &cqe);
		if (ret == -EINTR || (ret == -ETIME && wait_all && now() < deadline))
			continue;
		if (ret)
			break;
		{
			struct uring_slot *s = &t->us[cqe->user_data & 255];
			int res = cqe->res;

			count(OP_URING_CQE, res);
			tlog(t, OP_URING_CQE, -1, res, "user_data %llu",
			     (unsigned long long)cqe->user_data);
			if (s->used) {
				struct job_exp e = { .invalid = s->invalid,
						     .fault_ok = s->fault_ok };

				snprintf(e.what, sizeof(e.what), "uring user_data %llu%s, submitted as: %.200s",
					 (unsigned long long)cqe->user_data,
					 s->plain ? " (ring without SQE128)" : "", s->sub);
				if (s->not_ours)
					;	/* /dev/null's uring_cmd says 0, etc. */
				else if (s->plain && res >= 0)
					sure_bug(t, OP_URING_CQE, res,
						 "a uring command on a ring without SQE128 ran");
				else if (res != -EBADF && res != -EOPNOTSUPP &&
					 res != -ECANCELED)
					check_job_ret(t, OP_URING_CQE, res, &e);
				s->used = 0;
			}
			io_uring_cqe_seen(&t->ring, cqe);
			t->pending--;
		}
	}
	if (wait_all && t->pending > 0 && now() >= deadline)
		odd(t, OP_URING_CQE, -ETIME, "%d uring commands not completed after %d s",
		    t->pending, URING_REAP_ALL_S);
}

static void op_uring_reset(struct tctx *t);

static void op_uring(struct tctx *t, int fi, int fd)
{
	int n = 1 + (int)rn(t, 6), i, ret, plain, linked = 0;
	uint32_t arr[72];

	if (t->ring_ok && t->ring_fixed && pct(t, 30)) {
		/* A registered file was closed: the ring keeps it (and maybe the
		 * model) alive; let it go now and then. */
		pthread_mutex_lock(&pool_mu);
		for (i = 0; i < nfiles && t->fixed_gen[i] == files[i].gen; i++)
			;
		pthread_mutex_unlock(&pool_mu);
		if (i < nfiles)
			op_uring_reset(t);
	}
	if (!t->ring_ok)
		ring_setup(t);
	if (!t->ring_ok)
		return;
	plain = !(t->ring_flags & IORING_SETUP_SQE128);
	if (t->pending + n > URING_ENTRIES)
		reap(t, 1);
	if (t->pending + n > URING_ENTRIES)
		return;
	for (i = 0; i < n; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&t->ring);
		struct drm_wafer_job j;
		struct job_exp e;
		unsigned int slot = t->us_next++ & 255;
		uint32_t cmd_op = DRM_WAFER_URING_CMD_SUBMIT;
		int sfd = fd, fixed = 0, not_ours = 0;

		if (!sqe)
			break;
		build_job(t, fi, &j, arr, &e);
		/* The handles are read at issue, maybe after this frame returned. */
		if (j.in_syncobjs >= (uintptr_t)arr && j.in_syncobjs < (uintptr_t)(arr + 72)) {
			memcpy(t->usync[slot], arr, sizeof(arr));
			j.in_syncobjs = (uintptr_t)t->usync[slot] +
					(j.in_syncobjs - (uintptr_t)arr);
		}
		if (pct(t, 5)) {
			uint32_t v[] = { 0, 2, 0xffffffff, 0x80000001 };

			cmd_op = v[rn(t, 4)];
			e.invalid = "unknown cmd_op";
		}
		if (t->ring_fixed && pct(t, 30)) {
			sfd = fi;
			fixed = 1;
			pthread_mutex_lock(&pool_mu);
			not_ours = t->fixed_gen[fi] != files[fi].gen;
			pthread_mutex_unlock(&pool_mu);
		} else if (pct(t, 4)) {
			int v[] = { -1, 0, 1 << 20, files[(fi + 1) % nfiles].fd };

			sfd = v[rn(t, 4)];
			not_ours = 1;
		}
		memset(sqe, 0, plain ? 64 : 128);
		sqe->opcode = IORING_OP_URING_CMD;
		sqe->fd = sfd;
		sqe->flags = (fixed ? IOSQE_FIXED_FILE : 0) |
			     (pct(t, 10) ? IOSQE_ASYNC : 0) |
			     (i + 1 < n && pct(t, 15) ? IOSQE_IO_LINK : 0);
		linked |= sqe->flags & IOSQE_IO_LINK;
		sqe->cmd_op = cmd_op;
		if (!plain)
			memcpy(sqe->cmd, &j, sizeof(j));
		else
			memcpy(sqe->cmd, &j, 16);
		sqe->user_data = slot;
		t->us[slot].used = 1;
		t->us[slot].invalid = plain ? "ring without SQE128" : e.invalid;
		t->us[slot].fault_ok = e.fault_ok;
		t->us[slot].plain = plain;
		t->us[slot].not_ours = not_ours;
		snprintf(t->us[slot].sub, sizeof(t->us[slot].sub), "sqe %u fd %d%s op %#x fl %#x %.150s",
			 slot, sfd, fixed ? "(fixed)" : "", cmd_op, sqe->flags, e.what);
		tlog(t, OP_URING, fi, 0, "%s", t->us[slot].sub);
	}
	ret = io_uring_submit(&t->ring);
	count(OP_URING, ret < 0 ? ret : 0);
	if (ret > 0)
		t->pending += ret;
	if (ret < 0) {
		tlog(t, OP_URING, fi, ret, "io_uring_submit");
		odd(t, OP_URING, ret, "io_uring_submit");
	}
	/*
	 * Linux 6.11-6.13 issue a linked command from its ring SQE when its
	 * predecessor completes (see kmod/wdrv_uring.c): keep the batch's SQEs
	 * unused until all of it completed, as docs/DRIVER.md tells users to.
	 */
	reap(t, linked || pct(t, 70));
}

static void op_uring_reset(struct tctx *t)
{
	/* Tearing down with commands in flight cancels them. */
	if (t->ring_ok) {
		if (pct(t, 50))
			reap(t, 0);
		tlog(t, OP_URING_RESET, -1, 0, "exit with %d pending", t->pending);
		io_uring_queue_exit(&t->ring);
		t->ring_ok = 0;
	}
	count(OP_URING_RESET, 0);
	ring_setup(t);
}

/* ---- files ---- */

static int open_file(int fi)
{
	struct file_slot *f = &files[fi];
	int fd = wt_dev_open(fi % ndevs), i;

	pthread_mutex_lock(&pool_mu);
	f->fd = fd;
	f->gen++;
	for (i = 0; i < NBO; i++)
		f->bo[i].live = 0;
	for (i = 0; i < NCTX; i++)
		f->ctx[i].live = 0;
	for (i = 0; i < NSYNC; i++)
		f->sync[i].live = 0;
	if (f->model_id)
		f->stale_model_id = f->model_id;
	f->model_id = 0;
	f->prev_model_id = 0;
	f->blob_bo = 0;
	/* Keep a few of the old file's seqnos: stale ones. */
	for (i = 0; i < NSEQ; i++)
		if (i % 8)
			f->seq[i] = 0;
	f->last_seq = 0;
	pthread_mutex_unlock(&pool_mu);
	/* Two job buffers to start with (tokens 0: valid input). */
	for (i = 0; fd >= 0 && i < 2; i++) {
		struct drm_wafer_bo_create c = { .size = 64 << 10 };
		struct drm_wafer_bo_info bi = { 0 };

		if (ioctl(fd, DRM_IOCTL_WAFER_BO_CREATE, &c))
			break;
		bi.handle = c.handle;
		if (!ioctl(fd, DRM_IOCTL_WAFER_BO_INFO, &bi))
			add_bo(fi, f->gen, c.handle, bi.size, bi.mmap_offset, 0, 0);
	}
	return fd;
}

static void op_reopen(struct tctx *t, int fi)
{
	int ret;

	/* Closing the model's file leaves the device without one for a while
	 * (its mappings and rings keep it open): not too often. */
	pthread_mutex_lock(&pool_mu);
	ret = files[fi].model_id && pct(t, 75);
	pthread_mutex_unlock(&pool_mu);
	if (ret)
		return;
	pthread_rwlock_wrlock(&files[fi].rw);
	close(files[fi].fd);
	ret = open_file(fi);
	pthread_rwlock_unlock(&files[fi].rw);
	count(OP_REOPEN, ret < 0 ? ret : 0);
	tlog(t, OP_REOPEN, fi, ret < 0 ? ret : 0, "fd %d", ret);
	if (ret < 0) {
		sure_bug(t, OP_REOPEN, ret, "reopening the device failed");
		atomic_store(&stop_flag, 1);
	}
}

/* A child uses the inherited fd (shared drm_file) and exits or is killed. */
static void op_fork(struct tctx *t, int fi, int fd, unsigned int gen)
{
	struct drm_wafer_submit s;
	struct drm_wafer_bo_create bc = { .size = PAGE * (1 + rn(t, 4)) };
	struct drm_wafer_ctx_destroy cd = { 0 };
	struct drm_wafer_wait w = { 0 };
	struct job_exp e;
	uint32_t arr[72];
	int how = (int)rn(t, 4), uring = pct(t, 40), close_first = pct(t, 20);
	int ctxk, status = 0, ret;
	double t0;
	pid_t pid;

	(void)gen;
	build_job(t, fi, &s.job, arr, &e);
	if (s.job.in_syncobjs == (uintptr_t)arr)
		s.job.in_syncobj_count = 0;
	cd.ctx_id = pick_ctx(t, fi, &ctxk).id;
	pid = fork();
	if (pid < 0) {
		count(OP_FORK, -errno);
		return;
	}
	if (pid == 0) {
		struct io_uring r;
		int k;

		ioctl(fd, DRM_IOCTL_WAFER_BO_CREATE, &bc);
		for (k = 0; k < 3; k++)
			if (!ioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &s)) {
				w.seqno = s.seqno;
				w.timeout_ns = wt_deadline_ms(k == 0 ? 20 : 0);
				ioctl(fd, DRM_IOCTL_WAFER_WAIT, &w);
			}
		if (how == 1)
			ioctl(fd, DRM_IOCTL_WAFER_CTX_DESTROY, &cd);
		if (uring && !io_uring_queue_init(8, &r, IORING_SETUP_SQE128)) {
			for (k = 0; k < 8; k++) {
				struct io_uring_sqe *sqe = io_uring_get_sqe(&r);

				if (!sqe)
					break;
				wt_uring_prep_submit(sqe, fd, &s.job, k);
			}
			io_uring_submit(&r);
			/* Exit with the commands in flight: they are cancelled. */
		}
		if (close_first)
			close(fd);
		if (how == 2)
			raise(SIGKILL);
		_exit(0);
	}
	t0 = now();
	if (how == 3) {
		usleep((useconds_t)rn(t, 3000));
		kill(pid, SIGKILL);
	}
	for (;;) {
		ret = waitpid(pid, &status, WNOHANG);
		if (ret == pid || (ret < 0 && errno != EINTR))
			break;
		if (now() - t0 > 60) {
			odd(t, OP_FORK, -ETIME, "child %d still running after 60 s: killing it",
			    pid);
			kill(pid, SIGKILL);
			t0 = now() + 1e9;
		}
		usleep(2000);
	}
	ret = WIFEXITED(status) ? -WEXITSTATUS(status) : 0;
	count(OP_FORK, ret);
	tlog(t, OP_FORK, fi, ret, "how %d uring %d close %d job %s", how, uring, close_first,
	     e.what);
}

static void op_signal(struct tctx *t)
{
	int to = (int)rn(t, nthreads);

	if (to != t->idx && threads[to].th)
		pthread_kill(threads[to].th, SIGUSR1);
	count(OP_SIGNAL, 0);
}

/* Unknown driver ioctl numbers and mismatched size encodings. */
static void op_bad_ioctl(struct tctx *t, int fi, int fd)
{
	static __thread uint8_t buf[256];
	unsigned int nr = DRM_COMMAND_BASE + (unsigned int)rn(t, 0x20);
	unsigned int size = (unsigned int)rn(t, 200);
	unsigned long req;
	int ret;

	memset(buf, 0, sizeof(buf));
	/* Known numbers with odd sizes act on a zero-extended struct. */
	if (nr <= DRM_COMMAND_BASE + DRM_WAFER_WAIT && pct(t, 70))
		nr = DRM_COMMAND_BASE + 0x9 + (unsigned int)rn(t, 0x16);
	/* Random bytes only where no handler reads them (GET_INFO would write
	 * to a random address). */
	if (nr > DRM_COMMAND_BASE + DRM_WAFER_WAIT && pct(t, 50)) {
		for (ret = 0; ret < (int)sizeof(buf); ret++)
			buf[ret] = pct(t, 80) ? 0 : (uint8_t)rnd(t);
	}
	switch (rn(t, 4)) {
	case 0: req = _IOC(_IOC_READ | _IOC_WRITE, DRM_IOCTL_BASE, nr, size); break;
	case 1: req = _IOC(_IOC_WRITE, DRM_IOCTL_BASE, nr, size); break;
	case 2: req = _IOC(_IOC_NONE, DRM_IOCTL_BASE, nr, 0); break;
	default: req = _IOC(_IOC_READ, DRM_IOCTL_BASE, nr, size); break;
	}
	ret = raw_ioctl(fd, req, pct(t, 10) ? NULL : buf);
	count(OP_BAD_IOCTL, ret);
	tlog(t, OP_BAD_IOCTL, fi, ret, "req %#lx", req);
	if (!ret)
		odd(t, OP_BAD_IOCTL, ret, "unknown driver ioctl nr %#x accepted", nr);
}

/* fdinfo of a device fd, debugfs and sysfs: readers racing the jobs. */
static void op_read_info(struct tctx *t, int fi, int fd)
{
	static const char *const paths[] = {
		"/sys/kernel/debug/accel/wafer.0/jobs",
		"/sys/kernel/debug/accel/wafer.0/stages",
		"/sys/kernel/debug/accel/wafer.0/sram_map",
		"/sys/kernel/debug/accel/wafer.0/fw_log",
		"/sys/class/accel/accel0/device/busy_ns",
		"/sys/class/accel/accel0/device/jobs_completed",
		"/sys/class/accel/accel0/device/stages",
		NULL,
	};
	char path[128], buf[4096];
	int n = (int)rn(t, 8), rfd, ret = 0;

	if (!paths[n])
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	else
		snprintf(path, sizeof(path), "%s", paths[n]);
	rfd = open(path, O_RDONLY | O_CLOEXEC);
	if (rfd < 0) {
		ret = -errno;
	} else {
		while (read(rfd, buf, sizeof(buf)) > 0)
			;
		close(rfd);
	}
	count(OP_READ_INFO, ret);
	tlog(t, OP_READ_INFO, fi, ret, "%s", path);
}

/* ---- driver ---- */

static enum op pick_op(struct tctx *t)
{
	static int total;
	int i, r;

	if (!total)
		for (i = 0; i < OP_COUNT; i++)
			total += op_weight[i];
	r = (int)rn(t, (uint64_t)total);
	for (i = 0; i < OP_COUNT; i++) {
		r -= op_weight[i];
		if (r < 0)
			return (enum op)i;
	}
	return OP_GET_INFO;
}

/* Job-related operations go mostly to the file holding the model. */
static int pick_file(struct tctx *t, enum op op)
{
	int i, fi = (int)rn(t, nfiles);

	if ((op == OP_SUBMIT || op == OP_URING || op == OP_WAIT || op == OP_CTX_CREATE ||
	     op == OP_CTX_DESTROY || op == OP_FORK) && pct(t, 75)) {
		pthread_mutex_lock(&pool_mu);
		for (i = 0; i < nfiles; i++)
			if (files[i].model_id)
				fi = i;
		pthread_mutex_unlock(&pool_mu);
	}
	return fi;
}

static int should_stop(void)
{
	if (atomic_load(&stop_flag))
		return 1;
	if (time_max > 0 && now() - t_start >= time_max)
		return 1;
	return 0;
}

static void *worker(void *arg)
{
	struct tctx *t = arg;

	ring_setup(t);
	while (!should_stop()) {
		long n = atomic_fetch_add(&iters_done, 1);
		enum op op;
		unsigned int gen;
		int fi, fd;

		if (iters_max && n >= iters_max)
			break;
		op = pick_op(t);
		fi = pick_file(t, op);
		atomic_store(&t->cur_op, op);
		t->op_t0 = now();
		if (op == OP_REOPEN) {
			op_reopen(t, fi);
		} else if (op == OP_MUNMAP) {
			op_munmap(t);
		} else if (op == OP_TOUCH) {
			op_touch(t);
		} else if (op == OP_PRIME_MISC) {
			op_prime_misc(t);
		} else if (op == OP_URING_RESET) {
			op_uring_reset(t);
		} else if (op == OP_SIGNAL) {
			op_signal(t);
		} else {
			fd = file_get(fi, &gen);
			switch (op) {
			case OP_GET_INFO: op_get_info(t, fi, fd); break;
			case OP_BO_CREATE: op_bo_create(t, fi, fd, gen); break;
			case OP_BO_INFO: op_bo_info(t, fi, fd); break;
			case OP_GEM_CLOSE: op_gem_close(t, fi, fd, gen); break;
			case OP_MMAP: op_mmap(t, fi, fd); break;
			case OP_MODEL_LOAD: op_model_load(t, fi, fd, gen); break;
			case OP_MODEL_UNLOAD: op_model_unload(t, fi, fd, gen); break;
			case OP_DRAIN: op_drain(t, fi, fd, gen); break;
			case OP_CTX_CREATE: op_ctx_create(t, fi, fd, gen); break;
			case OP_CTX_DESTROY: op_ctx_destroy(t, fi, fd, gen); break;
			case OP_SUBMIT: op_submit(t, fi, fd, gen); break;
			case OP_WAIT: op_wait(t, fi, fd); break;
			case OP_SYNC_CREATE: op_sync_create(t, fi, fd, gen); break;
			case OP_SYNC_DESTROY: op_sync_destroy(t, fi, fd, gen); break;
			case OP_SYNC_MISC: op_sync_misc(t, fi, fd, gen); break;
			case OP_PRIME_EXPORT: op_prime_export(t, fi, fd); break;
			case OP_PRIME_IMPORT: op_prime_import(t, fi, fd, gen); break;
			case OP_URING: op_uring(t, fi, fd); break;
			case OP_FORK: op_fork(t, fi, fd, gen); break;
			case OP_BAD_IOCTL: op_bad_ioctl(t, fi, fd); break;
			case OP_READ_INFO: op_read_info(t, fi, fd); break;
			default: break;
			}
			file_put(fi);
		}
		atomic_store(&t->cur_op, -1);
		atomic_fetch_add(&t->progress, 1);
	}
	if (t->ring_ok) {
		reap(t, 1);
		io_uring_queue_exit(&t->ring);
		t->ring_ok = 0;
	}
	return NULL;
}

/* Reports a thread stuck in one operation (a hang in the driver). */
static void *watchdog(void *arg)
{
	long last[MAX_THREADS] = { 0 };
	double since[MAX_THREADS];
	int i, reported = 0;

	(void)arg;
	for (i = 0; i < nthreads; i++)
		since[i] = now();
	while (!atomic_load(&stop_flag)) {
		sleep(1);
		for (i = 0; i < nthreads; i++) {
			long p = atomic_load(&threads[i].progress);
			int op = atomic_load(&threads[i].cur_op);

			if (p != last[i] || op < 0) {
				last[i] = p;
				since[i] = now();
				continue;
			}
			if (now() - since[i] > 300) {
				printf("# HANG: giving up: the driver did not return in 300 s\n");
				printf("not ok - fuzzing finished (hang)\n");
				fflush(stdout);
				_exit(1);
			}
			if (now() - since[i] > 120 && !(reported & (1 << i))) {
				reported |= 1 << i;
				pthread_mutex_lock(&print_mu);
				printf("# HANG: T%d stuck in %s for %.0f s; its last operations:\n",
				       i, op_name[op], now() - since[i]);
				dump_log(&threads[i]);
				fflush(stdout);
				pthread_mutex_unlock(&print_mu);
				atomic_fetch_add(&sure_bugs, 1);
			}
		}
	}
	return NULL;
}

static void print_summary(double secs)
{
	long total = 0;
	int o, e;

	printf("# per-operation results (errno: count), seed %" PRIu64 ", %d threads, "
	       "%d files, %.1f s\n", seed, nthreads, nfiles, secs);
	for (o = 0; o < OP_COUNT; o++) {
		long n = 0;
		char line[1024];
		size_t at = 0;

		for (e = 0; e <= MAX_ERRNO; e++)
			n += atomic_load(&counts[o][e]);
		if (!n)
			continue;
		total += o == OP_URING_CQE ? 0 : n;
		for (e = 0; e <= MAX_ERRNO && at < sizeof(line) - 32; e++) {
			long c = atomic_load(&counts[o][e]);

			if (c)
				at += (size_t)snprintf(line + at, sizeof(line) - at, " %s:%ld",
						       ename(e), c);
		}
		printf("#   %-16s %7ld %s\n", op_name[o], n, line);
	}
	{
		char line[512];
		size_t at = 0;

		for (e = 0; e <= MAX_ERRNO; e++) {
			long c = atomic_load(&status_counts[e]);

			if (c)
				at += (size_t)snprintf(line + at, sizeof(line) - at, " %s:%ld",
						       ename(e), c);
		}
		printf("#   %-16s %7s %s\n", "job status", "", line);
	}
	printf("# %ld operations (+ sub-operations), %.0f ops/s\n", total,
	       secs > 0 ? total / secs : 0);
	printf("# BO_CREATE's size checked by BO_INFO %ld times; not checked %ld times (a "
	       "GEM_CLOSE of the file overlapped), %ld of them finding another BO's size there\n",
	       atomic_load(&size_checks), atomic_load(&size_skips), atomic_load(&size_reused));
}

static int get_info(int fd, struct drm_wafer_device_info *info)
{
	struct drm_wafer_get_info gi = { .info_ptr = (uintptr_t)info,
					 .info_size = sizeof(*info) };

	memset(info, 0, sizeof(*info));
	return wt_ioctl(fd, DRM_IOCTL_WAFER_GET_INFO, &gi);
}

/* The device still runs the shared model exactly as firmware-sim does. */
static void final_check(const uint64_t *sram_free0)
{
	struct wfs_topk_entry ref_topk[NCHECK][TOPK_CHECK];
	uint32_t toks[NCHECK + 1], ref_arg[NCHECK], pos;
	struct drm_wafer_device_info info;
	struct wt_dev_model m;
	struct wt_model ref;
	struct wt_bo in, out;
	double t0 = now();
	int fd, ret, ok, d;
	unsigned int left = 0;

	/* Rings torn down release their files from a work item: retry. */
	do {
		fd = wt_dev_open(0);
		if (fd < 0)
			break;
		ret = wt_dev_load_model(fd, 8, 2, 64, &m);
		if (ret == -EBUSY) {
			free(m.blob);
			close(fd);
			usleep(200000);
		}
	} while (ret == -EBUSY && now() - t0 < 30);
	if (!wt_ok(fd >= 0 && !ret, "after fuzzing: MODEL_LOAD + CTX_CREATE of the shared "
		   "model on a fresh file (%d, %.1f s)", fd < 0 ? fd : ret, now() - t0))
		return;
	if (wt_model_open(&ref, m.blob, m.blob_len, 64, 0) ||
	    wt_bo_new(fd, &in, (NCHECK + 1) * 4) ||
	    wt_bo_new(fd, &out, (size_t)NCHECK * DRM_WAFER_RESULT_SIZE(TOPK_CHECK))) {
		wt_ok(0, "after fuzzing: reference and job buffers");
		return;
	}
	toks[0] = 1;
	for (pos = 0; pos < NCHECK; pos++) {
		ref_arg[pos] = wt_model_step(&ref, toks[pos], pos, TOPK_CHECK, ref_topk[pos]);
		toks[pos + 1] = ref_arg[pos];
	}
	memcpy(in.map, toks, sizeof(toks));
	ok = 1;
	for (pos = 0; pos < NCHECK && ok; pos++) {
		struct drm_wafer_submit s = { .job = {
			.ctx_id = m.ctx_id, .slot = 0, .start_pos = pos, .n_tokens = 1,
			.top_k = TOPK_CHECK, .in_handle = in.handle, .out_handle = out.handle,
			.in_offset = pos * 4 } };
		const struct drm_wafer_token_result *r = wt_result(&out, 0, TOPK_CHECK, 0);

		ret = wt_ioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &s);
		if (!ret)
			ret = wt_wait_job(fd, s.seqno, NULL);
		ok = !ret && wt_result_matches(r, pos, ref_arg[pos], ref_topk[pos], TOPK_CHECK);
		if (!ok)
			wt_diag("pos %u: ret %d argmax %u reference %u", pos, ret, r->argmax,
				ref_arg[pos]);
	}
	wt_ok(ok, "after fuzzing: greedy decode of %d tokens matches in-process firmware-sim",
	      NCHECK);
	{
		struct drm_wafer_submit s = { .job = {
			.ctx_id = m.ctx_id, .slot = 1, .start_pos = 0, .n_tokens = NCHECK,
			.flags = DRM_WAFER_JOB_ALL_POSITIONS, .top_k = TOPK_CHECK,
			.in_handle = in.handle, .out_handle = out.handle } };

		ret = wt_ioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &s);
		if (!ret)
			ret = wt_wait_job(fd, s.seqno, NULL);
		ok = !ret;
		for (pos = 0; pos < NCHECK && ok; pos++) {
			const struct drm_wafer_token_result *r =
				wt_result(&out, 0, TOPK_CHECK, pos);

			ok = r->position == pos && r->argmax == ref_arg[pos];
		}
		wt_ok(ok, "after fuzzing: prefill of %d positions in one job matches (%d)",
		      NCHECK, ret);
	}
	wt_model_close(&ref);
	munmap(in.map, in.size);
	munmap(out.map, out.size);
	free(m.blob);
	close(fd);

	/* Everything closed: SRAM is free again and no job is left. */
	for (d = 0; d < ndevs; d++) {
		t0 = now();
		do {
			left = wt_debugfs_inflight();
			fd = wt_dev_open(d);
			ret = fd < 0 ? fd : get_info(fd, &info);
			if (fd >= 0)
				close(fd);
			if (!ret && info.sram_bytes_free == sram_free0[d] &&
			    (left == 0 || left == ~0u))
				break;
			usleep(200000);
		} while (now() - t0 < 15);
		wt_ok(!ret && info.sram_bytes_free == sram_free0[d],
		      "after everything closed SRAM free of accel%d is back to %llu (%llu)", d,
		      (unsigned long long)sram_free0[d], (unsigned long long)info.sram_bytes_free);
	}
	wt_ok(left == 0 || left == ~0u, "no job in flight afterwards (debugfs: %d)", (int)left);
}

/* File 0 starts with the model loaded and a context of 4 x 64. */
static void seed_model(void)
{
	struct file_slot *f = &files[0];
	struct drm_wafer_model_load ml = { .blob_size = blob_len };
	struct drm_wafer_ctx_create cc = { .kv_slots = 4, .ctx_len = 64 };

	ml.bo_handle = make_blob_bo(0, f->fd, f->gen, 0, NULL);
	if (wt_ioctl(f->fd, DRM_IOCTL_WAFER_MODEL_LOAD, &ml)) {
		wt_diag("initial MODEL_LOAD failed: %s", strerror(errno));
		return;
	}
	f->model_id = ml.model_id;
	cc.model_id = ml.model_id;
	if (wt_ioctl(f->fd, DRM_IOCTL_WAFER_CTX_CREATE, &cc))
		return;
	f->ctx[0].id = cc.ctx_id;
	f->ctx[0].slots = cc.kv_slots;
	f->ctx[0].ctx_len = cc.ctx_len;
	f->ctx[0].live = 1;
	f->ctx_next = 1;
}

static void usage(void)
{
	fprintf(stderr, "usage: uapi_fuzz [--seed N] [--iters N] [--time S] [--threads N] "
			"[--files N] [--devices N] [--trace]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct wfs_pack_opts po = { .wbits = 8, .group_size = 32 };
	struct sigaction sa = { 0 };
	struct wfs_ckpt ck;
	pthread_t wd;
	uint64_t sram_free0[MAX_FILES];
	double secs;
	int i, fd, time_set = 0, iters_set = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters_max = strtol(argv[++i], NULL, 0), iters_set = 1;
		else if (!strcmp(argv[i], "--time") && i + 1 < argc)
			time_max = strtod(argv[++i], NULL), time_set = 1;
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			nthreads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--files") && i + 1 < argc)
			nfiles = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--devices") && i + 1 < argc)
			ndevs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--trace"))
			trace = 1;
		else
			usage();
	}
	if (time_set && !iters_set)
		iters_max = 0;
	if (nthreads < 1 || nthreads > MAX_THREADS || nfiles < 2 || nfiles > MAX_FILES ||
	    ndevs < 1 || ndevs > nfiles)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);

	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;	/* no SA_RESTART: interrupts waits */
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	scratch = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (scratch == MAP_FAILED)
		return 1;
	memset(scratch, 0, 3 * PAGE);
	mprotect(scratch + PAGE, PAGE, PROT_NONE);
	mprotect(scratch + 2 * PAGE, PAGE, PROT_READ);
	{
		void *p = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		unmapped_addr = (uintptr_t)p;
		munmap(p, PAGE);
	}

	if (wfs_ckpt_load(wt_model_path("stories260K.bin"), &ck) ||
	    wfs_pack(&ck, &po, &blob, &blob_len)) {
		printf("not ok - pack the shared model (stories260K.bin)\n");
		return 1;
	}
	wfs_ckpt_free(&ck);

	for (i = ndevs - 1; i >= 0; i--) {	/* device 0's answer stays in dinfo */
		fd = wt_dev_open(i);
		if (fd < 0 || get_info(fd, &dinfo)) {
			printf("not ok - open and query /dev/accel/accel%d (%d)\n", i, fd);
			return 1;
		}
		close(fd);
		sram_free0[i] = dinfo.sram_bytes_free;
	}
	wt_diag("uapi_fuzz: seed %" PRIu64 ", %ld ops%s, %.0f s max, %d threads, %d files on "
		"%d device%s; device: max_bo %llu, contexts %u, inflight %u, timeout %u ms, "
		"SRAM free %llu", seed, iters_max, iters_max ? "" : " (unbounded)", time_max,
		nthreads, nfiles, ndevs, ndevs > 1 ? "s" : "",
		(unsigned long long)dinfo.max_bo_size, dinfo.max_contexts,
		dinfo.max_inflight_jobs, dinfo.job_timeout_ms,
		(unsigned long long)sram_free0[0]);

	for (i = 0; i < nfiles; i++) {
		pthread_rwlockattr_t a;

		pthread_rwlockattr_init(&a);
		pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		pthread_rwlock_init(&files[i].rw, &a);
		if (open_file(i) < 0) {
			printf("not ok - open file %d\n", i);
			return 1;
		}
	}

	seed_model();
	t_start = now();
	for (i = 0; i < nthreads; i++) {
		threads[i].idx = i;
		atomic_store(&threads[i].cur_op, -1);
		wt_rng_seed(&threads[i].rng, seed * 0x9e3779b97f4a7c15ull + (uint64_t)i * 7919);
	}
	for (i = 0; i < nthreads; i++)
		pthread_create(&threads[i].th, NULL, worker, &threads[i]);
	pthread_create(&wd, NULL, watchdog, NULL);
	for (i = 0; i < nthreads; i++)
		pthread_join(threads[i].th, NULL);
	atomic_store(&stop_flag, 1);
	pthread_join(wd, NULL);
	secs = now() - t_start;

	/* Close everything the pool holds. */
	for (i = 0; i < NMAP; i++)
		if (maps[i].live)
			munmap(maps[i].addr, maps[i].len);
	for (i = 0; i < NPRIME; i++)
		if (primes[i].live)
			close(primes[i].fd);
	for (i = 0; i < nfiles; i++)
		close(files[i].fd);

	print_summary(secs);
	wt_ok(atomic_load(&sure_bugs) == 0,
	      "%ld fuzz operations (seed %" PRIu64 ") with no certain driver bug (%d; %d "
	      "unexpected errnos reported)", iters_max && atomic_load(&iters_done) > iters_max ?
	      iters_max : (long)atomic_load(&iters_done), seed,
	      atomic_load(&sure_bugs), atomic_load(&unexpected));
	final_check(sram_free0);
	free(blob);
	return wt_done();
}
