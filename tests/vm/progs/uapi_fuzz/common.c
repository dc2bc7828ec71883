// SPDX-License-Identifier: MIT
/*
 * common.c - uapi_fuzz: randomness, logging and counting, value generators, the fault guard.
 */
#include "uapi_fuzz.h"

const char *const op_name[OP_COUNT] = {
	"GET_INFO", "BO_CREATE", "BO_INFO", "GEM_CLOSE", "mmap", "munmap",
	"touch", "MODEL_LOAD", "MODEL_UNLOAD", "drain+unload", "CTX_CREATE",
	"CTX_DESTROY", "SUBMIT", "WAIT", "SYNCOBJ_CREATE", "SYNCOBJ_DESTROY",
	"syncobj misc", "PRIME export", "PRIME import", "dma-buf misc",
	"uring submit", "uring CQE", "uring ring reset", "close+reopen", "fork",
	"signal", "unknown ioctl", "fdinfo/debugfs",
};

struct file_slot files[MAX_FILES];

/*
 * GEM handle numbers are per file and reused lowest first, and any thread
 * may GEM_CLOSE any number (a stale or made-up one): the BO another thread
 * just created, whose number a third thread's BO_CREATE then takes.  Each
 * file's closes are counted as they start and as they end, so that a
 * thread can tell that none ran between its BO_CREATE and BO_INFO (the
 * handle is still its BO: a wrong size is then the driver's bug).
 */
atomic_ulong closes_begun[MAX_FILES], closes_ended[MAX_FILES];

/* BO_CREATE's size checks: made, skipped (a close overlapped), and of the
 * skipped, those whose handle had meanwhile become another BO. */
atomic_long size_checks, size_skips, size_reused;

struct map_rec maps[NMAP];

struct prime_rec primes[NPRIME];

pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;

int nfiles = 3, nthreads = 4, ndevs = 1, trace;

uint64_t seed = 1;

long iters_max = 3000;

double time_max;

atomic_long iters_done;

atomic_int stop_flag;

double t_start;

struct drm_wafer_device_info dinfo;

void *blob;

size_t blob_len;

uint8_t *scratch;	/* RW page, PROT_NONE page, RO page */

uintptr_t unmapped_addr;

atomic_long counts[OP_COUNT][MAX_ERRNO + 1];

atomic_long status_counts[MAX_ERRNO + 1];	/* job statuses */

atomic_int sure_bugs, unexpected;

pthread_mutex_t print_mu = PTHREAD_MUTEX_INITIALIZER;

struct tctx threads[MAX_THREADS];

__thread sigjmp_buf *volatile guard;

uint64_t rnd(struct tctx *t)
{
	return wt_rng_u64(&t->rng);
}

uint64_t rn(struct tctx *t, uint64_t n)
{
	return n ? rnd(t) % n : 0;
}

int pct(struct tctx *t, int p)
{
	return (int)rn(t, 100) < p;
}

double now(void)
{
	return wt_now();
}

int raw_ioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) ? -errno : 0;
}

const char *ename(int e)
{
	const char *s;

	if (e == 0)
		return "0";
	s = strerrorname_np(e);
	return s ? s : "E?";
}

void tlog(struct tctx *t, enum op op, int file, int ret, const char *fmt, ...)
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

void count(enum op op, int ret)
{
	int e = ret < 0 ? -ret : 0;

	atomic_fetch_add(&counts[op][e > MAX_ERRNO ? MAX_ERRNO : e], 1);
}

void dump_log(struct tctx *t)
{
	unsigned int i, n = t->log_n < LOGN ? t->log_n : LOGN;

	for (i = t->log_n - n; i < t->log_n; i++) {
		struct log_ent *l = &t->log[i % LOGN];

		printf("#   T%d[%u] %s f%d %s -> %s\n", t->idx, i, op_name[l->op], l->file,
		       l->what, ename(-l->ret));
	}
}

/* A result that is certainly a driver bug: a failure, with the op log. */
void sure_bug(struct tctx *t, enum op op, int ret, const char *fmt, ...)
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
void odd(struct tctx *t, enum op op, int ret, const char *fmt, ...)
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

uint64_t v_id(struct tctx *t, uint64_t cur)
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

uint64_t v_small(struct tctx *t, uint64_t cur, uint64_t lim)
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

uint64_t v_off(struct tctx *t, uint64_t cur, uint64_t size)
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

uint64_t v_size(struct tctx *t, uint64_t cur)
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

uint64_t v_flags(struct tctx *t)
{
	static const uint64_t v[] = { 1, 2, 3, 0x80000000, 0xffffffff, 0x100, 0x10000 };

	return pct(t, 50) ? 1ull << rn(t, 32) : v[rn(t, sizeof(v) / sizeof(v[0]))];
}

uint64_t v_nonzero(struct tctx *t)
{
	uint64_t x = pct(t, 50) ? 1ull << rn(t, 64) : rnd(t);

	return x ? x : 1;
}

uint32_t v_nonzero32(struct tctx *t)
{
	uint32_t x = pct(t, 50) ? 1u << rn(t, 32) : (uint32_t)rnd(t);

	return x ? x : 1;
}

/* A user pointer the kernel will only read: fine to aim anywhere. */
uint64_t v_rptr(struct tctx *t, uint64_t good)
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

void on_fault(int sig, siginfo_t *si, void *uc)
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

void on_usr1(int sig)
{
	(void)sig;
}

/* Copies @len bytes to/from @p; returns 0 or -EFAULT if it faulted. */
int guarded_copy(void *dst, const void *src, size_t len)
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

int nmut(struct tctx *t)
{
	int r = (int)rn(t, 100);

	return r < 45 ? 0 : r < 75 ? 1 : r < 92 ? 2 : 3;
}
