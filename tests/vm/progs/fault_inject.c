// SPDX-License-Identifier: MIT
/*
 * VM test (debug kernel: CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC): every
 * allocation on the driver's paths can fail, and the call then fails
 * cleanly and leaves nothing behind.
 *
 * Systematic, like syzkaller: for each operation and n = 1, 2, ..., the
 * n-th slab or page allocation the calling task makes during the operation
 * fails (/proc/<tid>/fail-nth); the sweep ends at the first n the operation
 * no longer reaches.  After each injected fault the call returned 0 (the
 * failure was absorbed, e.g. by a fallback) or a clean errno, and the
 * driver's state is as before (no model, no context, no job in flight, no
 * BO memory charged, no syncobj fence).  After each sweep the device still
 * runs the shared model like the in-process reference.
 *
 * Operations: file open, GET_INFO, BO_CREATE, BO_INFO, mmap of a BO and
 * touching its pages, MODEL_LOAD, CTX_CREATE, SUBMIT, WAIT, SUBMIT with in-
 * and out-syncobjs, and io_uring SUBMIT: the submitting task's part (the
 * driver submits inline there, without sleeping; what fails says -EAGAIN
 * and io_uring hands the command to an io-wq worker) and, separately, the
 * worker's part (IOSQE_ASYNC), injected through the worker's own fail-nth.  The firmware threads are checked to allocate
 * nothing while contexts are created and jobs run; model load, whose
 * command processor starts the stage workers, is swept like the rest.  Not
 * reachable: the scheduler's and the driver's work items (run_job,
 * free_job, context release) run in shared kworkers.  At the end kmemleak
 * must report nothing from wafer or drm.
 *
 * Exits 77 when the kernel has no fault injection (the stock kernel).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>

#include "wt_dev.h"
#include "wt_model.h"
#include "wt_util.h"

#define FAILSLAB	"/sys/kernel/debug/failslab/"
#define FAIL_PAGE	"/sys/kernel/debug/fail_page_alloc/"
#define KMEMLEAK	"/sys/kernel/debug/kmemleak"

#define TOPK		4
#define NTOK		4
#define SLOTS		2
#define CTX_LEN		64
#define BO_PAGES	16
/* A sweep that has not ended by then is broken. */
#define MAX_NTH		20000
/* Check failures a sweep reports before giving up on that operation. */
#define MAX_BAD		5

static int fd;			/* holds the model and its context */
static struct wt_dev_model m;
static struct wt_bo in, out, out_a;
static uint32_t ref_arg[NTOK];
static struct wfs_topk_entry ref_topk[NTOK][TOPK];
static int self_nth = -1;	/* this thread's fail-nth, kept open */
static uint64_t last_seqno;	/* last seqno a SUBMIT on fd returned */
static struct io_uring ring;
static unsigned long total_faults, total_sites, total_iters;

/* ioctl once (no EINTR/EAGAIN retry, as it may run with a fault armed). */
static int xioctl(int f, unsigned long req, void *arg)
{
	return ioctl(f, req, arg) ? -errno : 0;
}

static int write_file(const char *path, const char *val)
{
	int f = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;
	int err;

	if (f < 0)
		return -errno;
	n = write(f, val, strlen(val));
	err = errno;
	close(f);
	return n < 0 ? -err : 0;
}

/* Fault-injection attributes: see Documentation/fault-injection/. */
static int fi_setup(int on)
{
	static const struct { const char *path, *on, *off; } knobs[] = {
		/* The driver allocates with GFP_KERNEL: fail those too. */
		{ FAILSLAB "ignore-gfp-wait", "N", "Y" },
		{ FAIL_PAGE "ignore-gfp-wait", "N", "Y" },
		/* GFP_HIGHUSER (shmem pages) and order-0 pages too. */
		{ FAIL_PAGE "ignore-gfp-highmem", "N", "Y" },
		{ FAIL_PAGE "min-order", "0", "1" },
		/* Only fail-nth injects: never at random. */
		{ FAILSLAB "probability", "0", "0" },
		{ FAIL_PAGE "probability", "0", "0" },
		/* Quiet: hundreds of messages could wrap the kernel log the harness scans. */
		{ FAILSLAB "verbose", "0", "2" },
		{ FAIL_PAGE "verbose", "0", "2" },
	};
	unsigned int i;
	int ret;

	for (i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
		ret = write_file(knobs[i].path, on ? knobs[i].on : knobs[i].off);
		if (ret) {
			wt_diag("%s: %s", knobs[i].path, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

static int nth_open(pid_t tid)
{
	char path[64];

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/fail-nth", (int)getpid(), (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/thread-self/fail-nth");
	return open(path, O_RDWR | O_CLOEXEC);
}

/* pread/pwrite on an open fd: no allocation of their own to count. */
static int nth_set(int nfd, unsigned long n)
{
	char b[24];
	int len = snprintf(b, sizeof(b), "%lu", n);

	return pwrite(nfd, b, len, 0) == len ? 0 : -errno;
}

static long nth_get(int nfd)
{
	char b[24] = { 0 };

	if (pread(nfd, b, sizeof(b) - 1, 0) <= 0)
		return -1;
	return strtol(b, NULL, 10);
}

static void arm(unsigned int n)
{
	nth_set(self_nth, n);
}

/* Disarms; returns how many of the n countdown steps were left (0: injected). */
static long disarm(void)
{
	long left = nth_get(self_nth);

	nth_set(self_nth, 0);
	return left;
}

/* Result of one armed operation. */
struct outcome {
	int ret;	/* 0 or the -errno the operation reported */
	long left;	/* fail-nth left afterwards: 0 = the fault was injected */
	int bad;	/* a check failed (diagnosed already) */
};

static void bad(struct outcome *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void bad(struct outcome *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	wt_vdiag(fmt, ap);
	va_end(ap);
	o->bad = 1;
}

static int get_info(int f, struct drm_wafer_device_info *info)
{
	struct drm_wafer_get_info gi = { .info_ptr = (uintptr_t)info,
					 .info_size = sizeof(*info) };

	memset(info, 0, sizeof(*info));
	return xioctl(f, DRM_IOCTL_WAFER_GET_INFO, &gi);
}

/* Value of "key:" in /proc/self/fdinfo/f, or "" (static buffer). */
static const char *fdinfo(int f, const char *key)
{
	static char val[128];
	char path[64], line[256];
	size_t kl = strlen(key);
	FILE *fp;

	val[0] = 0;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", f);
	fp = fopen(path, "r");
	if (!fp)
		return val;
	while (fgets(line, sizeof(line), fp)) {
		if (!strncmp(line, key, kl) && line[kl] == ':') {
			snprintf(val, sizeof(val), "%s", line + kl + 1 + strspn(line + kl + 1, " \t"));
			val[strcspn(val, "\n")] = 0;
		}
	}
	fclose(fp);
	return val;
}

static void gem_close(int f, uint32_t h)
{
	struct drm_gem_close c = { .handle = h };

	xioctl(f, DRM_IOCTL_GEM_CLOSE, &c);
}

/* The prefill job: NTOK tokens from position 0 of @slot, every position. */
static struct drm_wafer_job prefill_job(uint32_t slot, const struct wt_bo *o)
{
	return (struct drm_wafer_job){ .ctx_id = m.ctx_id, .slot = slot, .n_tokens = NTOK,
		.flags = DRM_WAFER_JOB_ALL_POSITIONS, .top_k = TOPK,
		.in_handle = in.handle, .out_handle = o->handle };
}

/* The results in @o are the reference's for every position. */
static int results_ok(const struct wt_bo *o)
{
	uint32_t pos;

	for (pos = 0; pos < NTOK; pos++)
		if (!wt_result_matches(wt_result(o, 0, TOPK, pos), pos, ref_arg[pos],
				       ref_topk[pos], TOPK))
			return 0;
	return 1;
}

/* No job is left anywhere: debugfs, GET_INFO and the file's fdinfo agree. */
static int idle_ok(struct outcome *o, const char *what)
{
	struct drm_wafer_device_info info;
	unsigned int dbg, i;
	const char *fi;
	int ret = get_info(fd, &info);

	/* debugfs lists jobs until the scheduler frees them, a little later. */
	for (i = 0; (dbg = wt_debugfs_inflight()) && dbg != ~0u && i < 3000; i++)
		usleep(10000);

	fi = fdinfo(fd, "drm-wafer-jobs-inflight");
	if (ret || info.jobs_inflight || dbg || strcmp(fi, "0")) {
		bad(o, "%s: jobs left behind: GET_INFO %d/%u, debugfs %u, fdinfo '%s'", what,
		    ret, info.jobs_inflight, dbg, fi);
		return 0;
	}
	return 1;
}

/* Runs the prefill job on the model's context; 1 if every result matches. */
static int model_runs(void)
{
	struct drm_wafer_submit sub = { .job = prefill_job(0, &out) };
	int ret;

	memset(out.map, 0xff, out.size);
	ret = xioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &sub);
	if (!ret) {
		last_seqno = sub.seqno;
		ret = wt_wait_job(fd, sub.seqno, NULL);
	}
	if (ret)
		wt_diag("prefill job: %d", ret);
	return !ret && results_ok(&out);
}

/* ---- the sweep ---- */

typedef void (*op_fn)(unsigned int n, struct outcome *o);

static void sweep(const char *name, op_fn op)
{
	unsigned int n, sites = 0, slab = 0, faults = 0, enomem = 0, absorbed = 0, other = 0;
	unsigned int nbad = 0;
	int other_err = 0;
	double t0 = wt_now();
	int done = 0;

	for (n = 1; n <= MAX_NTH && nbad < MAX_BAD; n++) {
		struct outcome o = { .left = -1 };

		op(n, &o);
		nbad += o.bad;
		if (o.left < 0) {
			wt_diag("%s: n=%u: fail-nth unreadable", name, n);
			nbad++;
			break;
		}
		if (o.left > 0) {
			/* Not reached: the operation made n - left fault-able calls. */
			sites = n - o.left;
			if (o.ret) {
				wt_diag("%s: fails with %d without a fault", name, o.ret);
				nbad++;
			}
			done = 1;
			break;
		}
		faults++;
		if (!o.ret) {
			absorbed++;
		} else if (o.ret == -ENOMEM) {
			enomem++;
		} else {
			other++;
			other_err = o.ret;
		}
	}
	if (done && sites) {
		/* Once more, counting slab allocations only: the rest are pages. */
		struct outcome o = { .left = -1 };

		write_file(FAIL_PAGE "min-order", "99");
		op(MAX_NTH, &o);
		write_file(FAIL_PAGE "min-order", "0");
		nbad += o.bad;
		slab = o.left > 0 ? MAX_NTH - o.left : 0;
		slab = slab < sites ? slab : sites;
	}
	total_faults += faults;
	total_sites += sites;
	total_iters += n;
	wt_ok(done && !nbad, "%s: %u injection points (%u slab, %u page), %u faults injected: "
	      "%u -ENOMEM, %u other errno (last %d), %u absorbed (call succeeded); %.1f s",
	      name, sites, slab, sites - slab, faults, enomem, other, other_err, absorbed,
	      wt_now() - t0);
}

static void device_check(const char *after)
{
	wt_ok(model_runs(), "after %s: the device runs the model like the reference", after);
}

/* ---- operations ---- */

static void op_open(unsigned int n, struct outcome *o)
{
	struct drm_wafer_device_info info;
	int f;

	arm(n);
	f = open("/dev/accel/accel0", O_RDWR | O_CLOEXEC);
	o->ret = f < 0 ? -errno : 0;
	o->left = disarm();
	if (o->ret && o->ret != -ENOMEM)
		bad(o, "open: n=%u: %s", n, strerror(-o->ret));
	if (f >= 0) {
		if (get_info(f, &info) || info.api_version != DRM_WAFER_API_VERSION)
			bad(o, "open: n=%u: the file opened does not work", n);
		close(f);
	}
}

static void op_get_info(unsigned int n, struct outcome *o)
{
	struct drm_wafer_device_info info;
	struct drm_wafer_get_info gi = { .info_ptr = (uintptr_t)&info,
					 .info_size = sizeof(info) };

	memset(&info, 0, sizeof(info));
	arm(n);
	o->ret = xioctl(fd, DRM_IOCTL_WAFER_GET_INFO, &gi);
	o->left = disarm();
	if (o->ret && o->ret != -ENOMEM)
		bad(o, "GET_INFO: n=%u: %d", n, o->ret);
	if (!o->ret && (info.api_version != DRM_WAFER_API_VERSION || info.models_loaded != 1 ||
			info.contexts != 1))
		bad(o, "GET_INFO: n=%u: succeeded with api %u, %u models, %u contexts", n,
		    info.api_version, info.models_loaded, info.contexts);
}

static int bo_fd = -1;		/* a file holding no BOs between operations */
static char bo_mem[128];	/* its fdinfo memory figures with no BOs */

static void bo_mem_ok(struct outcome *o, const char *what, unsigned int n)
{
	char now[128];

	snprintf(now, sizeof(now), "%s/%s", fdinfo(bo_fd, "drm-total-memory"),
		 fdinfo(bo_fd, "drm-resident-memory"));
	if (strcmp(now, bo_mem))
		bad(o, "%s: n=%u: BO memory left behind: fdinfo %s, was %s", what, n, now, bo_mem);
}

static void op_bo_create(unsigned int n, struct outcome *o)
{
	struct drm_wafer_bo_create c = { .size = BO_PAGES * 4096 };
	struct drm_wafer_bo_info bi = { 0 };

	arm(n);
	o->ret = xioctl(bo_fd, DRM_IOCTL_WAFER_BO_CREATE, &c);
	o->left = disarm();
	if (o->ret && o->ret != -ENOMEM)
		bad(o, "BO_CREATE: n=%u: %d", n, o->ret);
	if (!o->ret) {
		bi.handle = c.handle;
		if (xioctl(bo_fd, DRM_IOCTL_WAFER_BO_INFO, &bi) || bi.size != c.size)
			bad(o, "BO_CREATE: n=%u: the BO created is broken", n);
		gem_close(bo_fd, c.handle);
	}
	bo_mem_ok(o, "BO_CREATE", n);
}

static void op_bo_info(unsigned int n, struct outcome *o)
{
	struct drm_wafer_bo_create c = { .size = BO_PAGES * 4096 };
	struct drm_wafer_bo_info bi = { 0 }, bi2 = { 0 };

	if (xioctl(bo_fd, DRM_IOCTL_WAFER_BO_CREATE, &c)) {
		bad(o, "BO_INFO: setup");
		return;
	}
	bi.handle = bi2.handle = c.handle;
	arm(n);
	o->ret = xioctl(bo_fd, DRM_IOCTL_WAFER_BO_INFO, &bi);
	o->left = disarm();
	if (o->ret && o->ret != -ENOMEM)
		bad(o, "BO_INFO: n=%u: %d", n, o->ret);
	if (xioctl(bo_fd, DRM_IOCTL_WAFER_BO_INFO, &bi2) ||
	    (!o->ret && (bi.size != bi2.size || bi.mmap_offset != bi2.mmap_offset)))
		bad(o, "BO_INFO: n=%u: inconsistent answers", n);
	gem_close(bo_fd, c.handle);
	bo_mem_ok(o, "BO_INFO", n);
}

static sigjmp_buf touch_jmp;

static void on_fault(int sig)
{
	siglongjmp(touch_jmp, sig);
}

/* A fresh BO mapped and written page by page (shmem pages, page tables). */
static void op_bo_mmap(unsigned int n, struct outcome *o)
{
	struct drm_wafer_bo_create c = { .size = BO_PAGES * 4096 };
	struct drm_wafer_bo_info bi = { 0 };
	volatile uint32_t *p;
	int sig, i;

	if (xioctl(bo_fd, DRM_IOCTL_WAFER_BO_CREATE, &c)) {
		bad(o, "mmap: setup");
		return;
	}
	bi.handle = c.handle;
	if (xioctl(bo_fd, DRM_IOCTL_WAFER_BO_INFO, &bi)) {
		bad(o, "mmap: setup");
		gem_close(bo_fd, c.handle);
		return;
	}
	arm(n);
	p = mmap(NULL, bi.size, PROT_READ | PROT_WRITE, MAP_SHARED, bo_fd, bi.mmap_offset);
	o->ret = p == MAP_FAILED ? -errno : 0;
	sig = p == MAP_FAILED ? 0 : sigsetjmp(touch_jmp, 1);
	if (!sig && p != MAP_FAILED)
		for (i = 0; i < BO_PAGES; i++)
			p[i * 1024] = 0xa5a50000u + i;
	o->left = disarm();
	if (sig)
		bad(o, "mmap: n=%u: signal %d touching the mapping", n, sig);
	if (o->ret && o->ret != -ENOMEM)
		bad(o, "mmap: n=%u: %s", n, strerror(-o->ret));
	if (o->ret) {
		/* The BO maps fine once memory is there. */
		p = mmap(NULL, bi.size, PROT_READ | PROT_WRITE, MAP_SHARED, bo_fd,
			 bi.mmap_offset);
		if (p == MAP_FAILED) {
			bad(o, "mmap: n=%u: the BO no longer maps: %s", n, strerror(errno));
		} else {
			p[0] = 0xa5a50000u;
			munmap((void *)p, bi.size);
		}
	} else if (!sig) {
		for (i = 0; i < BO_PAGES; i++)
			if (p[i * 1024] != 0xa5a50000u + i)
				break;
		if (i < BO_PAGES)
			bad(o, "mmap: n=%u: page %d reads back 0x%x", n, i, p[i * 1024]);
		munmap((void *)p, bi.size);
	} else {
		munmap((void *)p, bi.size);
	}
	gem_close(bo_fd, c.handle);
	bo_mem_ok(o, "mmap", n);
}

static struct drm_wafer_device_info base_info;	/* GET_INFO before an operation */
static uint32_t blob_handle;

static void state_ok(struct outcome *o, const char *what, unsigned int n)
{
	struct drm_wafer_device_info now;
	int ret = get_info(fd, &now);

	if (ret || now.models_loaded != base_info.models_loaded ||
	    now.contexts != base_info.contexts ||
	    now.sram_bytes_free != base_info.sram_bytes_free)
		bad(o, "%s: n=%u: state changed: %d, models %u (was %u), contexts %u (was %u), "
		    "SRAM free %llu (was %llu)", what, n, ret, now.models_loaded,
		    base_info.models_loaded, now.contexts, base_info.contexts,
		    (unsigned long long)now.sram_bytes_free,
		    (unsigned long long)base_info.sram_bytes_free);
}

static void op_model_load(unsigned int n, struct outcome *o)
{
	struct drm_wafer_model_load ml = { .bo_handle = blob_handle, .blob_size = m.blob_len };
	struct drm_wafer_model_unload mu = { 0 };

	arm(n);
	o->ret = xioctl(fd, DRM_IOCTL_WAFER_MODEL_LOAD, &ml);
	o->left = disarm();
	if (o->ret && o->ret != -ENOMEM)
		bad(o, "MODEL_LOAD: n=%u: %d", n, o->ret);
	if (!o->ret) {
		struct drm_wafer_device_info info;

		if (get_info(fd, &info) || info.models_loaded != 1)
			bad(o, "MODEL_LOAD: n=%u: succeeded but the device has %u models", n,
			    info.models_loaded);
		mu.model_id = ml.model_id;
		if (xioctl(fd, DRM_IOCTL_WAFER_MODEL_UNLOAD, &mu))
			bad(o, "MODEL_LOAD: n=%u: the model loaded does not unload", n);
	}
	state_ok(o, "MODEL_LOAD", n);
}

/* Context destruction finishes in a work item: wait for the count. */
static int contexts_back(void)
{
	struct drm_wafer_device_info now;
	int i;

	for (i = 0; i < 3000; i++) {
		if (get_info(fd, &now))
			return 0;
		if (now.contexts == base_info.contexts &&
		    now.sram_bytes_free == base_info.sram_bytes_free)
			return 1;
		usleep(10000);
	}
	return 0;
}

static void op_ctx_create(unsigned int n, struct outcome *o)
{
	struct drm_wafer_ctx_create cc = { .model_id = m.model_id, .kv_slots = SLOTS,
					   .ctx_len = CTX_LEN };
	struct drm_wafer_ctx_destroy cd = { 0 };

	arm(n);
	o->ret = xioctl(fd, DRM_IOCTL_WAFER_CTX_CREATE, &cc);
	o->left = disarm();
	if (o->ret && o->ret != -ENOMEM)
		bad(o, "CTX_CREATE: n=%u: %d", n, o->ret);
	if (!o->ret) {
		cd.ctx_id = cc.ctx_id;
		if (xioctl(fd, DRM_IOCTL_WAFER_CTX_DESTROY, &cd) || !contexts_back())
			bad(o, "CTX_CREATE: n=%u: the context created does not go away", n);
	}
	state_ok(o, "CTX_CREATE", n);
}

/* After a failed SUBMIT: no job, and no seqno was used up. */
static void submit_failed_ok(struct outcome *o, const char *what, unsigned int n)
{
	struct drm_wafer_wait w = { .seqno = last_seqno + 1 };
	int ret;

	idle_ok(o, what);
	ret = xioctl(fd, DRM_IOCTL_WAFER_WAIT, &w);
	if (ret != -EINVAL)
		bad(o, "%s: n=%u: WAIT for the next seqno says %d, not -EINVAL", what, n, ret);
}

static void op_submit(unsigned int n, struct outcome *o)
{
	struct drm_wafer_submit sub = { .job = prefill_job(0, &out) };
	int ret;

	memset(out.map, 0xff, out.size);
	arm(n);
	o->ret = xioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &sub);
	o->left = disarm();
	if (o->ret) {
		if (o->ret != -ENOMEM)
			bad(o, "SUBMIT: n=%u: %d", n, o->ret);
		submit_failed_ok(o, "SUBMIT", n);
		return;
	}
	last_seqno = sub.seqno;
	ret = wt_wait_job(fd, sub.seqno, NULL);
	if (ret || !results_ok(&out))
		bad(o, "SUBMIT: n=%u: the job submitted fails (%d) or is wrong", n, ret);
	idle_ok(o, "SUBMIT");
}

static void op_wait(unsigned int n, struct outcome *o)
{
	struct drm_wafer_submit sub = { .job = prefill_job(0, &out) };
	struct drm_wafer_wait w = { 0 };
	int ret;

	memset(out.map, 0xff, out.size);
	ret = xioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &sub);
	if (ret) {
		bad(o, "WAIT: setup: %d", ret);
		return;
	}
	last_seqno = sub.seqno;
	w.seqno = sub.seqno;
	w.timeout_ns = wt_deadline_ms(120000);
	arm(n);
	o->ret = xioctl(fd, DRM_IOCTL_WAFER_WAIT, &w);
	o->left = disarm();
	if (o->ret && o->ret != -ENOMEM)
		bad(o, "WAIT: n=%u: %d", n, o->ret);
	/* A failed WAIT leaves the result to be waited for again. */
	ret = o->ret ? wt_wait_job(fd, sub.seqno, NULL) : w.status;
	if (ret || !results_ok(&out))
		bad(o, "WAIT: n=%u: the job's status %d or results are wrong", n, ret);
	idle_ok(o, "WAIT");
}

static uint32_t sync_a, sync_stub, sync_out;

static int syncobj_new(uint32_t flags, uint32_t *h)
{
	struct drm_syncobj_create c = { .flags = flags };
	int ret = xioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c);

	*h = c.handle;
	return ret;
}

/* Waits for the syncobj's fence (0), or -EINVAL when it has none. */
static int syncobj_wait(uint32_t h, int64_t timeout_ns)
{
	struct drm_syncobj_wait w = { .handles = (uintptr_t)&h, .count_handles = 1,
				      .timeout_nsec = timeout_ns };

	return xioctl(fd, DRM_IOCTL_SYNCOBJ_WAIT, &w);
}

/*
 * Job B waits for job A (through A's out-syncobj) and a signalled stub
 * syncobj, and puts its fence in another syncobj.
 */
static void op_submit_sync(unsigned int n, struct outcome *o)
{
	struct drm_wafer_submit a = { .job = prefill_job(1, &out_a) };
	struct drm_wafer_submit b = { .job = prefill_job(0, &out) };
	struct drm_syncobj_array reset = { .handles = (uintptr_t)&sync_out, .count_handles = 1 };
	uint32_t deps[2] = { sync_a, sync_stub };
	int ret;

	memset(out.map, 0xff, out.size);
	memset(out_a.map, 0xff, out_a.size);
	a.job.out_syncobj = sync_a;
	b.job.in_syncobjs = (uintptr_t)deps;
	b.job.in_syncobj_count = 2;
	b.job.out_syncobj = sync_out;
	if (xioctl(fd, DRM_IOCTL_SYNCOBJ_RESET, &reset) ||
	    xioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &a)) {
		bad(o, "SUBMIT+syncobjs: setup");
		return;
	}
	last_seqno = a.seqno;
	arm(n);
	o->ret = xioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &b);
	o->left = disarm();
	ret = wt_wait_job(fd, a.seqno, NULL);
	if (ret || !results_ok(&out_a))
		bad(o, "SUBMIT+syncobjs: n=%u: job A fails (%d) or is wrong", n, ret);
	if (o->ret) {
		if (o->ret != -ENOMEM)
			bad(o, "SUBMIT+syncobjs: n=%u: %d", n, o->ret);
		submit_failed_ok(o, "SUBMIT+syncobjs", n);
		ret = syncobj_wait(sync_out, 0);
		if (ret != -EINVAL)
			bad(o, "SUBMIT+syncobjs: n=%u: the out-syncobj got a fence (%d)", n, ret);
		return;
	}
	last_seqno = b.seqno;
	ret = wt_wait_job(fd, b.seqno, NULL);
	if (ret || !results_ok(&out))
		bad(o, "SUBMIT+syncobjs: n=%u: job B fails (%d) or is wrong", n, ret);
	ret = syncobj_wait(sync_out, wt_deadline_ms(120000));
	if (ret)
		bad(o, "SUBMIT+syncobjs: n=%u: the out-syncobj does not signal (%d)", n, ret);
	idle_ok(o, "SUBMIT+syncobjs");
}

/*
 * Set while the io-wq worker's part is swept: IOSQE_ASYNC has io_uring
 * issue the command from a worker (blocking), as it does when the inline
 * issue says -EAGAIN.
 */
static int uring_async;

static void uring_prep(void)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	struct drm_wafer_job j = prefill_job(0, &out);

	if (!sqe)
		return;
	memset(sqe, 0, 2 * sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = DRM_WAFER_URING_CMD_SUBMIT;
	if (uring_async)
		sqe->flags |= IOSQE_ASYNC;
	memcpy(sqe->cmd, &j, sizeof(j));
}

/* Checks a uring command's completion @res (or the submit error). */
static void uring_check(struct outcome *o, const char *what, unsigned int n, int res)
{
	if (!res) {
		if (!results_ok(&out))
			bad(o, "%s: n=%u: the job completed with wrong results", what, n);
	} else if (res != -ENOMEM && res != -EAGAIN && res != -ECANCELED) {
		bad(o, "%s: n=%u: completion %d", what, n, res);
	}
	idle_ok(o, what);
}

/*
 * The submitting task: io_uring_enter and reaping the completion, on a new
 * ring each time (a used ring recycles its requests and allocates nothing).
 * The driver's uring_cmd submits inline here without sleeping; an
 * allocation that fails says -EAGAIN and io_uring retries the command from
 * an io-wq worker (unarmed: the fault is absorbed), whose own part
 * op_uring_worker sweeps.
 */
static void op_uring_submitter(unsigned int n, struct outcome *o)
{
	struct io_uring_cqe *cqe;
	int ret, wret = 0, res = 0;

	io_uring_queue_exit(&ring);
	if (io_uring_queue_init(8, &ring, IORING_SETUP_SQE128)) {
		bad(o, "uring submitter: a new ring");
		return;
	}
	memset(out.map, 0xff, out.size);
	uring_prep();
	arm(n);
	ret = io_uring_submit(&ring);
	if (ret == 1) {
		wret = io_uring_wait_cqe(&ring, &cqe);
		if (!wret) {
			res = cqe->res;
			io_uring_cqe_seen(&ring, cqe);
		}
	}
	o->left = disarm();
	if (ret != 1) {
		/* Not submitted: the SQE is still queued; submit it without a fault. */
		o->ret = ret < 0 ? ret : -EIO;
		if (o->ret != -ENOMEM && o->ret != -EAGAIN)
			bad(o, "uring submitter: n=%u: io_uring_submit %d", n, ret);
		if (!io_uring_sq_ready(&ring)) {
			bad(o, "uring submitter: n=%u: the SQE was consumed by a failed submit", n);
			return;
		}
		ret = io_uring_submit(&ring);
		wret = ret == 1 ? io_uring_wait_cqe(&ring, &cqe) : -EIO;
		res = wret ? wret : cqe->res;
		if (!wret)
			io_uring_cqe_seen(&ring, cqe);
		if (res)
			bad(o, "uring submitter: n=%u: resubmitted without a fault: %d", n, res);
	} else if (wret) {
		/* Submitted, but waiting failed: reap it now. */
		o->ret = wret;
		if (wret != -ENOMEM && wret != -EINTR)
			bad(o, "uring submitter: n=%u: io_uring_wait_cqe %d", n, wret);
		wret = io_uring_wait_cqe(&ring, &cqe);
		res = wret ? wret : cqe->res;
		if (!wret)
			io_uring_cqe_seen(&ring, cqe);
	} else {
		o->ret = res;
	}
	uring_check(o, "uring SUBMIT (submitting task)", n, res);
}

/* Up to @max ids of the entries of @dir (/proc or /proc/self/task) whose
 * comm starts with @prefix. */
static int find_by_comm(const char *dir, const char *prefix, pid_t *ids, int max)
{
	char path[300], comm[32];
	struct dirent *de;
	int n = 0;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max) {
		FILE *fp;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "%s/%s/comm", dir, de->d_name);
		fp = fopen(path, "r");
		if (!fp)
			continue;
		if (fgets(comm, sizeof(comm), fp) && !strncmp(comm, prefix, strlen(prefix)))
			ids[n++] = (pid_t)atoi(de->d_name);
		fclose(fp);
	}
	closedir(d);
	return n;
}

/* io-wq workers of this process (comm "iou-wrk-<pid>"). */
static int find_workers(pid_t *tids, int max)
{
	return find_by_comm("/proc/self/task", "iou-wrk-", tids, max);
}

/* One uring command run to completion without faults; returns its res. */
static int uring_run(void)
{
	struct io_uring_cqe *cqe;
	int res;

	uring_prep();
	if (io_uring_submit(&ring) != 1 || io_uring_wait_cqe(&ring, &cqe))
		return -EIO;
	res = cqe->res;
	io_uring_cqe_seen(&ring, cqe);
	return res;
}

/*
 * The io-wq worker: the driver's uring_cmd runs there.  Every worker of
 * ours is armed; the one that ran the command is the one whose count moved.
 */
static void op_uring_worker(unsigned int n, struct outcome *o)
{
	pid_t tids[8];
	int nfd[8], nw, i, try, res = 0;
	long left;

	uring_async = 1;

	for (try = 0; try < 3; try++) {
		nw = find_workers(tids, 8);
		if (!nw) {
			/* Idle workers exit after a while: start one. */
			uring_run();
			nw = find_workers(tids, 8);
		}
		for (i = 0; i < nw; i++) {
			nfd[i] = nth_open(tids[i]);
			if (nfd[i] >= 0)
				nth_set(nfd[i], n);
		}
		memset(out.map, 0xff, out.size);
		res = uring_run();
		o->left = -1;
		for (i = 0; i < nw; i++) {
			if (nfd[i] < 0)
				continue;
			left = nth_get(nfd[i]);
			nth_set(nfd[i], 0);
			close(nfd[i]);
			if (left >= 0 && left != (long)n)
				o->left = left;
		}
		if (o->left >= 0)
			break;
		/* A worker we did not arm ran it: check and try again. */
		uring_check(o, "uring SUBMIT (io-wq worker)", n, res);
	}
	uring_async = 0;
	o->ret = res;
	if (o->left < 0)
		bad(o, "uring worker: n=%u: no armed worker ran the command (%d workers)", n, nw);
	uring_check(o, "uring SUBMIT (io-wq worker)", n, res);
}

/* ---- firmware threads ---- */

/* Kernel threads of the simulated devices (comm "wfs-..."). */
static int find_fw_threads(pid_t *pids, int max)
{
	return find_by_comm("/proc", "wfs-", pids, max);
}

/* Fresh model and context on fd (after the MODEL_LOAD sweep). */
static int reload_model(void)
{
	struct drm_wafer_model_load ml = { .bo_handle = blob_handle, .blob_size = m.blob_len };
	struct drm_wafer_ctx_create cc = { .kv_slots = SLOTS, .ctx_len = CTX_LEN };
	int ret = xioctl(fd, DRM_IOCTL_WAFER_MODEL_LOAD, &ml);

	if (ret)
		return ret;
	m.model_id = ml.model_id;
	cc.model_id = ml.model_id;
	ret = xioctl(fd, DRM_IOCTL_WAFER_CTX_CREATE, &cc);
	m.ctx_id = cc.ctx_id;
	return ret;
}

static int unload_model(void)
{
	struct drm_wafer_ctx_destroy cd = { .ctx_id = m.ctx_id };
	struct drm_wafer_model_unload mu = { .model_id = m.model_id };
	int ret = xioctl(fd, DRM_IOCTL_WAFER_CTX_DESTROY, &cd);

	return ret ? ret : xioctl(fd, DRM_IOCTL_WAFER_MODEL_UNLOAD, &mu);
}

/*
 * The firmware threads create contexts, run jobs and raise the completion
 * "interrupt" without allocating (the completion path must not): counted
 * with a large fail-nth on every firmware thread.
 */
static void fw_threads_check(void)
{
	static const unsigned long big = 1000000000ul;
	struct drm_wafer_ctx_destroy cd = { .ctx_id = m.ctx_id };
	struct drm_wafer_ctx_create cc = { .model_id = m.model_id,
					   .kv_slots = SLOTS, .ctx_len = CTX_LEN };
	char path[64];
	pid_t pids[256];
	int nfd[256], n, i, ok, uret;
	unsigned long used = 0;

	n = find_fw_threads(pids, 256);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "/proc/%d/fail-nth", (int)pids[i]);
		nfd[i] = open(path, O_RDWR | O_CLOEXEC);
		if (nfd[i] >= 0)
			nth_set(nfd[i], big);
	}
	ok = !xioctl(fd, DRM_IOCTL_WAFER_CTX_DESTROY, &cd) &&
	     !xioctl(fd, DRM_IOCTL_WAFER_CTX_CREATE, &cc);
	m.ctx_id = cc.ctx_id;
	ok = ok && model_runs();
	uret = uring_run();
	ok = ok && !uret && results_ok(&out);
	for (i = 0; i < n; i++) {
		long left;

		if (nfd[i] < 0)
			continue;
		left = nth_get(nfd[i]);
		nth_set(nfd[i], 0);
		close(nfd[i]);
		if (left >= 0)
			used += big - left;
	}
	wt_ok(ok, "context, ioctl and uring jobs with the firmware threads armed");
	wt_ok(n > 1 && !used, "the %d firmware threads made %lu fault-able allocations meanwhile",
	      n, used);
}

/* Stage workers of device 0: one per stage, or the pool's (stage_workers). */
static int stage_workers(void)
{
	return wt_threads_named("/proc", "wfs-st0.") + wt_threads_named("/proc", "wfs-pw0.");
}

/*
 * Model load is the one firmware step that allocates: the command
 * processor starts the stage workers (one per stage the model occupies, or
 * the pool's).  Each of those allocations fails in turn: the load fails
 * with -ENOMEM and leaves no worker and no model behind, and the sweep ends
 * at the first load that succeeds.
 */
static void fw_load_sweep(void)
{
	char path[64];
	pid_t cp;
	int nfd, n, ret = 0, left_workers = 0, ok = 1;
	long left;
	unsigned int k;

	if (!wt_ok(!unload_model() && find_by_comm("/proc", "wfs-cp0.", &cp, 1) == 1,
		   "unload; the command processor of device 0"))
		return;
	snprintf(path, sizeof(path), "/proc/%d/fail-nth", (int)cp);
	nfd = open(path, O_RDWR | O_CLOEXEC);
	for (k = 1; nfd >= 0 && k <= 64; k++) {
		nth_set(nfd, k);
		ret = reload_model();
		left = nth_get(nfd);
		nth_set(nfd, 0);
		if (!ret)
			break;
		n = stage_workers();
		if (ret != -ENOMEM || left != 0 || n != 0) {
			ok = 0;
			left_workers = n;
			break;
		}
	}
	if (nfd >= 0)
		close(nfd);
	n = stage_workers();
	wt_ok(nfd >= 0 && ok && !ret && n > 0,
	      "MODEL_LOAD with the command processor's n-th allocation failed, n < %u: -ENOMEM and no stage worker left (last %d, workers %d); then it loads (%d workers)",
	      k, ret, left_workers, n);
	wt_ok(model_runs(), "and the model runs like the reference");
}

/* ---- kmemleak ---- */

/* Unreferenced objects kmemleak reports whose trace mentions wafer or drm. */
static int kmemleak_ours(void)
{
	char line[512], block[4096];
	size_t bl = 0;
	int ours = 0, total = 0, mentions = 0;
	FILE *fp;

	/* An object is reported once a second scan finds it unchanged. */
	if (write_file(KMEMLEAK, "scan") || write_file(KMEMLEAK, "scan"))
		return -1;
	fp = fopen(KMEMLEAK, "r");
	if (!fp)
		return -1;
	block[0] = 0;
	for (;;) {
		int end = !fgets(line, sizeof(line), fp);

		if (end || !strncmp(line, "unreferenced object", 19)) {
			if (bl && mentions) {
				ours++;
				if (ours <= 3)
					printf("%s", block);
			}
			total += !!bl;
			bl = 0;
			mentions = 0;
			block[0] = 0;
			if (end)
				break;
		}
		if (strstr(line, "wafer") || strstr(line, "drm") || strstr(line, "wfs_"))
			mentions = 1;
		if (bl + strlen(line) + 2 < sizeof(block))
			bl += (size_t)snprintf(block + bl, sizeof(block) - bl, "# %s", line);
	}
	fclose(fp);
	wt_diag("kmemleak: %d unreferenced objects, %d from wafer/drm", total, ours);
	return ours;
}

int main(void)
{
	struct sigaction sa = { .sa_handler = on_fault };
	struct drm_wafer_device_info info;
	struct wt_model ref;
	uint32_t toks[NTOK + 1];
	int have_kmemleak, ret, i;
	double t0 = wt_now();

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (access(FAILSLAB "ignore-gfp-wait", W_OK) || access(FAIL_PAGE "min-order", W_OK) ||
	    access("/proc/thread-self/fail-nth", W_OK)) {
		printf("# SKIP: this kernel has no failslab/fail_page_alloc/fail-nth "
		       "(CONFIG_FAULT_INJECTION, FAILSLAB, FAIL_PAGE_ALLOC, "
		       "FAULT_INJECTION_DEBUG_FS)\n");
		return 77;
	}
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	have_kmemleak = !access(KMEMLEAK, W_OK);

	fd = wt_dev_open(0);
	bo_fd = wt_dev_open(0);
	if (fd < 0 || bo_fd < 0 || wt_dev_load_model(fd, 8, SLOTS, CTX_LEN, &m) ||
	    wt_bo_new(fd, &in, 4096) || wt_bo_new(fd, &out, 4096) || wt_bo_new(fd, &out_a, 4096) ||
	    wt_model_open(&ref, m.blob, m.blob_len, CTX_LEN, 0) ||
	    io_uring_queue_init(8, &ring, IORING_SETUP_SQE128) ||
	    syncobj_new(0, &sync_a) || syncobj_new(DRM_SYNCOBJ_CREATE_SIGNALED, &sync_stub) ||
	    syncobj_new(0, &sync_out)) {
		printf("not ok - setup\n");
		return 1;
	}
	toks[0] = 1; /* BOS */
	for (i = 0; i < NTOK; i++) {
		ref_arg[i] = wt_model_step(&ref, toks[i], i, TOPK, ref_topk[i]);
		toks[i + 1] = ref_arg[i];
	}
	wt_model_close(&ref);
	memcpy(in.map, toks, sizeof(toks));
	/* The blob again, in a BO not mapped (so loading pins its pages). */
	{
		struct wt_bo b;

		if (wt_bo_new(fd, &b, m.blob_len)) {
			printf("not ok - blob BO\n");
			return 1;
		}
		memcpy(b.map, m.blob, m.blob_len);
		munmap(b.map, b.size);
		blob_handle = b.handle;
	}
	snprintf(bo_mem, sizeof(bo_mem), "%s/%s", fdinfo(bo_fd, "drm-total-memory"),
		 fdinfo(bo_fd, "drm-resident-memory"));
	wt_diag("an empty file's fdinfo BO memory (total/resident): %s", bo_mem);
	self_nth = nth_open(0);
	if (self_nth < 0 || fi_setup(1)) {
		printf("not ok - fault injection setup\n");
		return 1;
	}
	/* One command first, through io_uring's inline issue. */
	if (!wt_ok(!uring_run() && results_ok(&out) && model_runs(),
		   "before any fault: ioctl and uring jobs match the reference"))
		return wt_done();

	sweep("open", op_open);
	sweep("GET_INFO", op_get_info);
	sweep("BO_CREATE", op_bo_create);
	sweep("BO_INFO", op_bo_info);
	sweep("mmap and touch a new BO", op_bo_mmap);
	{
		/* Nothing charged to the file is left: its whole quota is there. */
		struct drm_wafer_bo_create c = { 0 };

		ret = get_info(bo_fd, &info);
		c.size = info.max_bo_size;
		if (!ret)
			ret = xioctl(bo_fd, DRM_IOCTL_WAFER_BO_CREATE, &c);
		wt_ok(!ret, "a BO of the whole %llu-byte quota can be created (%d)",
		      (unsigned long long)info.max_bo_size, ret);
		if (!ret)
			gem_close(bo_fd, c.handle);
	}
	device_check("the BO sweeps");

	get_info(fd, &base_info);
	sweep("CTX_CREATE", op_ctx_create);
	device_check("CTX_CREATE");
	sweep("SUBMIT", op_submit);
	device_check("SUBMIT");
	sweep("WAIT", op_wait);
	device_check("WAIT");
	sweep("SUBMIT with in- and out-syncobjs", op_submit_sync);
	device_check("SUBMIT with syncobjs");
	sweep("uring SUBMIT (submitting task)", op_uring_submitter);
	device_check("uring SUBMIT (submitting task)");
	sweep("uring SUBMIT (io-wq worker)", op_uring_worker);
	device_check("uring SUBMIT (io-wq worker)");

	ret = unload_model();
	get_info(fd, &base_info);
	if (!wt_ok(!ret && !base_info.models_loaded && !base_info.contexts,
		   "model unloaded for the MODEL_LOAD sweep (%d)", ret))
		return wt_done();
	sweep("MODEL_LOAD", op_model_load);
	ret = reload_model();
	wt_ok(!ret, "a fresh MODEL_LOAD and CTX_CREATE succeed (%d)", ret);
	device_check("MODEL_LOAD");

	fw_threads_check();
	fw_load_sweep();

	fi_setup(0);
	close(self_nth);
	io_uring_queue_exit(&ring);
	close(bo_fd);
	close(fd);
	wt_diag("total: %lu injection points, %lu faults injected, %lu iterations, %.0f s",
		total_sites, total_faults, total_iters, wt_now() - t0);
	if (have_kmemleak) {
		/* kmemleak reports objects at least 5 s old. */
		sleep(6);
		t0 = wt_now();
		ret = kmemleak_ours();
		wt_diag("kmemleak scans: %.0f s", wt_now() - t0);
		wt_ok(ret == 0, "kmemleak: no leak from wafer or drm after the sweeps (%d)", ret);
	}
	return wt_done();
}
