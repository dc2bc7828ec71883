// SPDX-License-Identifier: MIT
/*
 * VM test: load.  PROCS processes x JOBS jobs on DEVICES devices, several
 * processes per device, submitting in mixed modes:
 *
 *  - uring: IORING_OP_URING_CMD, status and device time from the CQE32;
 *  - ioctl: DRM_IOCTL_WAFER_SUBMIT + DRM_IOCTL_WAFER_WAIT on the seqno;
 *    every fourth job also carries an out-syncobj, waited for with
 *    DRM_IOCTL_SYNCOBJ_WAIT, whose fence status must match WAIT's;
 *  - mixed: both, alternating, on the same file.
 *
 * A device holds one model, owned by the file that loaded it, so the
 * processes of a device share that file (opened and loaded before fork);
 * each creates its own context, buffers, ring and syncobjs in it.  Every
 * process keeps BATCH jobs in flight, each on its own KV slot.
 *
 * Checked:
 *  - every job completes exactly once: one CQE per user_data (a CQE for a
 *    job not in flight, or any CQE after the last, fails); one successful
 *    WAIT per seqno (waiting again is -ENOENT); ioctl seqnos of a device
 *    are unique across its processes;
 *  - every successful job's results equal firmware-sim's run in-process
 *    (the output is poisoned before each submit, so stale results fail);
 *  - afterwards every device holds no job (debugfs "in flight: 0") and its
 *    sysfs jobs_completed grew by exactly the jobs that ran on it;
 *  - with --faults R (module parameters fault_inject=1 and a short
 *    job_timeout_ms): R rounds of firmware faults (hang, drop, corrupt,
 *    rotating over the devices) are injected while the load runs; every
 *    job then completes exactly once, correct or with -ETIMEDOUT, -EIO or
 *    -ECANCELED (the errors the driver documents for a reset), every fault
 *    injected makes its device reset, and every device works afterwards.
 *
 * Prints jobs/s and p50/p99 submit-to-completion latency per mode.  The
 * whole run is bounded by --deadline: a stuck job fails the test with a
 * message instead of hanging it.
 *
 * Usage: load [--procs N] [--jobs M] [--devices D] [--batch B]
 *             [--faults R] [--deadline S]
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/sync_file.h>
#include <liburing.h>

#include "wt_dev.h"
#include "wt_model.h"
#include "wt_util.h"

#define TOPK		4
#define PROMPTS		8
#define PLEN		4
#define CTX_LEN		8
#define MAX_PROCS	64
#define MAX_DEVICES	16
#define MAX_BATCH	32
#define RES_BYTES	(PLEN * DRM_WAFER_RESULT_SIZE(TOPK))

enum mode { MODE_URING, MODE_IOCTL, MODE_MIXED };
static const char *const mode_name[] = { "uring", "ioctl", "mixed" };
/* How one job was submitted. */
enum how { HOW_URING, HOW_IOCTL };

/* One job's outcome, in memory shared with the parent. */
struct rec {
	float lat_ms;
	int32_t status;
	uint64_t seqno;		/* ioctl jobs: the file's seqno */
	uint8_t how;
	uint8_t submitted;
	uint8_t done;		/* completions seen: must end at 1 */
	uint8_t dev;
};

struct opts {
	int procs, jobs, devices, batch, faults, deadline_s;
};

static struct opts o = { .procs = 16, .jobs = 200, .batch = 8, .deadline_s = 600 };
static uint32_t prompt[PROMPTS][PLEN];
static uint32_t ref_arg[PROMPTS][PLEN];
static struct wfs_topk_entry ref_topk[PROMPTS][PLEN][TOPK];
static int64_t deadline_ns;	/* CLOCK_MONOTONIC, for the workers */
static int *progress;		/* shared: jobs completed per worker */
/* shared: [0] workers set up (or failed to), [1] set when they may submit */
static int *start;

static int64_t now_ns(void)
{
	return wt_deadline_ms(0);
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return x < y ? -1 : x > y;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Errors the driver documents for jobs caught by a device reset. */
static int allowed_status(int status)
{
	return !status || (o.faults && (status == -ETIMEDOUT || status == -EIO ||
					status == -ECANCELED));
}

/* Results of prompt @p at @off in @out equal the reference's. */
static int result_ok(const struct wt_bo *out, size_t off, int p)
{
	int pos;

	for (pos = 0; pos < PLEN; pos++)
		if (!wt_result_matches(wt_result(out, off, TOPK, pos), pos, ref_arg[p][pos],
				       ref_topk[p][pos], TOPK))
			return 0;
	return 1;
}

/* ------------------------------------------------------------ worker -- */

struct slot {
	int job;		/* -1: free */
	int prompt;
	enum how how;
	int use_sync;
	int64_t t_sub;
	uint64_t seqno;
	uint32_t syncobj;
};

struct worker {
	int id, fd, dev;
	enum mode mode;
	uint32_t ctx_id;
	struct wt_bo in, out;
	struct io_uring ring;
	int have_ring;
	struct slot slot[MAX_BATCH];
	struct rec *rec;
	int uring_inflight, ioctl_inflight, done;
	uint64_t last_seqno;
};

static int fail(const struct worker *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(const struct worker *w, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* One write: the workers' messages must not interleave. */
	fprintf(stderr, "# worker %d (device %d, %s): %s\n", w->id, w->dev,
		mode_name[w->mode], msg);
	return -1;
}

static int submit(struct worker *w, int s, int job)
{
	struct slot *sl = &w->slot[s];
	int p = (job * 5 + w->id) % PROMPTS;
	struct drm_wafer_job j = {
		.ctx_id = w->ctx_id, .slot = s, .n_tokens = PLEN,
		.flags = DRM_WAFER_JOB_ALL_POSITIONS, .top_k = TOPK,
		.in_handle = w->in.handle, .in_offset = p * PLEN * 4,
		.out_handle = w->out.handle, .out_offset = (size_t)s * RES_BYTES,
	};

	sl->job = job;
	sl->prompt = p;
	sl->how = w->mode == MODE_URING ? HOW_URING : w->mode == MODE_IOCTL ? HOW_IOCTL :
		  job & 1 ? HOW_IOCTL : HOW_URING;
	sl->use_sync = sl->how == HOW_IOCTL && job % 4 == 0;
	w->rec[job].how = sl->how;
	w->rec[job].dev = w->dev;
	w->rec[job].submitted = 1;
	/* Poison: a job reported successful must have written its results. */
	memset((char *)w->out.map + j.out_offset, 0xa5, RES_BYTES);
	sl->t_sub = now_ns();
	if (sl->how == HOW_URING) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);

		if (!sqe)
			return fail(w, "no free SQE");
		wt_uring_prep_submit(sqe, w->fd, &j, (uint64_t)job + 1);
		w->uring_inflight++;
		return 1; /* one SQE to submit */
	} else {
		struct drm_wafer_submit sub = { .job = j };
		int ret;

		if (sl->use_sync)
			sub.job.out_syncobj = sl->syncobj;
		ret = wt_ioctl(w->fd, DRM_IOCTL_WAFER_SUBMIT, &sub);
		if (ret)
			return fail(w, "SUBMIT of job %d: %d", job, ret);
		/* Seqnos of a file only grow; ours are a subsequence. */
		if (sub.seqno <= w->last_seqno)
			return fail(w, "SUBMIT returned seqno %llu after %llu",
				    (unsigned long long)sub.seqno,
				    (unsigned long long)w->last_seqno);
		w->last_seqno = sl->seqno = w->rec[job].seqno = sub.seqno;
		w->ioctl_inflight++;
		return 0;
	}
}

/* Records the one completion of the job in slot @s. */
static int complete(struct worker *w, int s, int status, uint64_t device_ns)
{
	struct slot *sl = &w->slot[s];
	struct rec *r = &w->rec[sl->job];

	if (r->done++)
		return fail(w, "job %d completed twice", sl->job);
	r->lat_ms = (now_ns() - sl->t_sub) / 1e6;
	r->status = status;
	if (!allowed_status(status))
		return fail(w, "job %d (%s) completed with %d", sl->job,
			    sl->how == HOW_URING ? "uring" : "ioctl", status);
	if (!status && !device_ns)
		return fail(w, "job %d succeeded in 0 ns of device time", sl->job);
	if (!status && !result_ok(&w->out, (size_t)s * RES_BYTES, sl->prompt))
		return fail(w, "job %d (%s, prompt %d) succeeded with wrong results", sl->job,
			    sl->how == HOW_URING ? "uring" : "ioctl", sl->prompt);
	if (sl->how == HOW_URING)
		w->uring_inflight--;
	else
		w->ioctl_inflight--;
	sl->job = -1;
	w->done++;
	__atomic_store_n(&progress[w->id], w->done, __ATOMIC_RELAXED);
	return 0;
}

/* The out-syncobj's fence says what WAIT said: signalled, same error. */
static int check_syncobj(struct worker *w, struct slot *sl, int status)
{
	struct drm_syncobj_handle h = {
		.handle = sl->syncobj, .fd = -1,
		.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE,
	};
	struct sync_file_info info = { 0 };
	int ret = wt_ioctl(w->fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h);

	if (ret)
		return fail(w, "exporting the out-syncobj of job %d: %d", sl->job, ret);
	ret = wt_ioctl(h.fd, SYNC_IOC_FILE_INFO, &info);
	close(h.fd);
	if (ret || info.status != (status ? status : 1))
		return fail(w, "job %d: WAIT status %d, its out-fence status %d (%d)",
			    sl->job, status, info.status, ret);
	return 0;
}

/* WAITs for the ioctl job in slot @s until @deadline: 1 done, 0 not yet. */
static int reap_ioctl(struct worker *w, int s, int64_t deadline)
{
	struct slot *sl = &w->slot[s];
	struct drm_wafer_wait wt = { .seqno = sl->seqno, .timeout_ns = deadline };
	struct drm_wafer_wait again = { .seqno = sl->seqno };
	int ret = wt_ioctl(w->fd, DRM_IOCTL_WAFER_WAIT, &wt);

	if (ret == -ETIME)
		return 0;
	if (ret)
		return fail(w, "WAIT for seqno %llu (job %d): %d",
			    (unsigned long long)sl->seqno, sl->job, ret);
	/* Reported once: the seqno is forgotten after. */
	ret = wt_ioctl(w->fd, DRM_IOCTL_WAFER_WAIT, &again);
	if (ret != -ENOENT)
		return fail(w, "second WAIT for seqno %llu (job %d): %d, want -ENOENT",
			    (unsigned long long)sl->seqno, sl->job, ret);
	if (sl->use_sync && check_syncobj(w, sl, wt.status))
		return -1;
	return complete(w, s, wt.status, wt.device_ns) ? -1 : 1;
}

static int reap_cqe(struct worker *w, struct io_uring_cqe *cqe)
{
	uint64_t ud = cqe->user_data;
	int s;

	for (s = 0; s < o.batch; s++)
		if (w->slot[s].job >= 0 && w->slot[s].how == HOW_URING &&
		    (uint64_t)w->slot[s].job + 1 == ud)
			break;
	if (s == o.batch)
		return fail(w, "CQE (res %d) for user_data %llu, not in flight", cqe->res,
			    (unsigned long long)ud);
	return complete(w, s, cqe->res, cqe->big_cqe[0]);
}

/* Reaps what completed; blocks (up to the deadline) when nothing did. */
static int reap(struct worker *w)
{
	struct io_uring_cqe *cqe;
	int s, n = 0, ret, oldest = -1;

	while (w->uring_inflight && !io_uring_peek_cqe(&w->ring, &cqe)) {
		ret = reap_cqe(w, cqe);
		io_uring_cqe_seen(&w->ring, cqe);
		if (ret)
			return -1;
		n++;
	}
	for (s = 0; s < o.batch; s++) {
		if (w->slot[s].job < 0 || w->slot[s].how != HOW_IOCTL)
			continue;
		ret = reap_ioctl(w, s, 0);
		if (ret < 0)
			return -1;
		n += ret;
		if (!ret && (oldest < 0 || w->slot[s].seqno < w->slot[oldest].seqno))
			oldest = s;
	}
	if (n)
		return 0;
	if (now_ns() > deadline_ns)
		return fail(w, "deadline: %d uring and %d ioctl jobs still in flight",
			    w->uring_inflight, w->ioctl_inflight);
	if (w->uring_inflight) {
		/* Both kinds in flight: poll the ioctl ones every millisecond. */
		int64_t left = w->ioctl_inflight ? 1000000 : deadline_ns - now_ns() + 1000000;
		struct __kernel_timespec ts = { .tv_sec = left / 1000000000,
						.tv_nsec = left % 1000000000 };

		ret = io_uring_wait_cqe_timeout(&w->ring, &cqe, &ts);
		if (ret && ret != -ETIME && ret != -EINTR)
			return fail(w, "waiting for a CQE: %d", ret);
		return 0;
	}
	if (oldest < 0)
		return fail(w, "nothing in flight and nothing reaped");
	if (w->slot[oldest].use_sync) {
		struct drm_syncobj_wait sw = {
			.handles = (uintptr_t)&w->slot[oldest].syncobj,
			.count_handles = 1, .timeout_nsec = deadline_ns,
		};

		ret = wt_ioctl(w->fd, DRM_IOCTL_SYNCOBJ_WAIT, &sw);
		if (ret == -ETIME)
			return 0; /* the deadline check above reports it */
		if (ret)
			return fail(w, "SYNCOBJ_WAIT for job %d: %d", w->slot[oldest].job, ret);
		/* Signalled: WAIT must have the result now, without waiting. */
		ret = reap_ioctl(w, oldest, 0);
		if (!ret)
			return fail(w, "job %d: out-fence signalled, WAIT says not done",
				    w->slot[oldest].job);
		return ret < 0 ? -1 : 0;
	}
	return reap_ioctl(w, oldest, deadline_ns) < 0 ? -1 : 0;
}

static int worker_setup(struct worker *w, uint32_t model_id)
{
	struct drm_wafer_ctx_create cc = {
		.model_id = model_id, .kv_slots = o.batch, .ctx_len = CTX_LEN,
	};
	int s, ret;

	ret = wt_ioctl(w->fd, DRM_IOCTL_WAFER_CTX_CREATE, &cc);
	if (ret)
		return fail(w, "CTX_CREATE: %d", ret);
	w->ctx_id = cc.ctx_id;
	if (wt_bo_new(w->fd, &w->in, sizeof(prompt)) ||
	    wt_bo_new(w->fd, &w->out, (size_t)o.batch * RES_BYTES))
		return fail(w, "BO_CREATE failed");
	memcpy(w->in.map, prompt, sizeof(prompt));
	if (w->mode != MODE_IOCTL) {
		ret = io_uring_queue_init(2 * o.batch, &w->ring,
					  IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
		if (ret)
			return fail(w, "io_uring_queue_init: %d", ret);
		w->have_ring = 1;
	}
	for (s = 0; s < o.batch; s++) {
		struct drm_syncobj_create sc = { 0 };

		w->slot[s].job = -1;
		if (w->mode == MODE_URING)
			continue;
		ret = wt_ioctl(w->fd, DRM_IOCTL_SYNCOBJ_CREATE, &sc);
		if (ret)
			return fail(w, "SYNCOBJ_CREATE: %d", ret);
		w->slot[s].syncobj = sc.handle;
	}
	return 0;
}

static void worker_teardown(struct worker *w)
{
	struct drm_wafer_ctx_destroy cd = { .ctx_id = w->ctx_id };
	struct drm_gem_close gc = { 0 };
	int s;

	for (s = 0; s < o.batch; s++) {
		struct drm_syncobj_destroy sd = { .handle = w->slot[s].syncobj };

		if (sd.handle)
			wt_ioctl(w->fd, DRM_IOCTL_SYNCOBJ_DESTROY, &sd);
	}
	if (w->have_ring)
		io_uring_queue_exit(&w->ring);
	/* The file outlives us (shared): give back what we made in it. */
	munmap(w->in.map, w->in.size);
	munmap(w->out.map, w->out.size);
	gc.handle = w->in.handle;
	wt_ioctl(w->fd, DRM_IOCTL_GEM_CLOSE, &gc);
	gc.handle = w->out.handle;
	wt_ioctl(w->fd, DRM_IOCTL_GEM_CLOSE, &gc);
	wt_ioctl(w->fd, DRM_IOCTL_WAFER_CTX_DESTROY, &cd);
}

/* One process: 0 when every job completed once, correct or as allowed. */
static int worker_run(struct worker *w, uint32_t model_id)
{
	int next = 0, s, n, ret = 0;

	ret = worker_setup(w, model_id);
	/* Set up: wait for the others, and for round 0's faults to be armed. */
	__atomic_add_fetch(&start[0], 1, __ATOMIC_RELAXED);
	if (ret)
		return 1;
	while (!__atomic_load_n(&start[1], __ATOMIC_ACQUIRE))
		usleep(1000);
	while (w->done < o.jobs && !ret) {
		for (s = 0, n = 0; s < o.batch && next < o.jobs && n >= 0; s++) {
			if (w->slot[s].job >= 0)
				continue;
			ret = submit(w, s, next++);
			if (ret < 0)
				break;
			n += ret;
		}
		if (ret < 0)
			break;
		if (n && (ret = io_uring_submit(&w->ring)) != n) {
			ret = fail(w, "io_uring_submit: %d of %d", ret, n);
			break;
		}
		ret = reap(w);
	}
	if (!ret && w->have_ring) {
		struct __kernel_timespec ts = { .tv_nsec = 50000000 };
		struct io_uring_cqe *cqe;

		/* Nothing more may complete. */
		if (io_uring_wait_cqe_timeout(&w->ring, &cqe, &ts) != -ETIME)
			ret = fail(w, "a CQE after the last job (user_data %llu, res %d)",
				   (unsigned long long)cqe->user_data, cqe->res);
	}
	worker_teardown(w);
	return ret || w->done != o.jobs;
}

/* ------------------------------------------------------------ parent -- */

static long long read_ll(const char *path, const char *key)
{
	char line[256], fmt[64];
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	snprintf(fmt, sizeof(fmt), "%s: %%lld", key);
	while (fgets(line, sizeof(line), f))
		if (key ? sscanf(line, fmt, &v) == 1 : sscanf(line, "%lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* "resets", "timeouts" or "in flight" from the device's debugfs jobs file. */
static long long dbg_jobs(int dev, const char *key)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/kernel/debug/accel/wafer.%d/jobs", dev);
	return read_ll(path, key);
}

static long long jobs_completed(int dev)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/class/accel/accel%d/device/jobs_completed", dev);
	return read_ll(path, NULL);
}

static int workers_on(int dev)
{
	return (o.procs - dev + o.devices - 1) / o.devices;
}

/* Jobs the running workers of @dev have left. */
static int dev_left(int dev)
{
	int w, left = 0;

	for (w = dev; w < o.procs; w += o.devices)
		left += o.jobs - __atomic_load_n(&progress[w], __ATOMIC_RELAXED);
	return left;
}

static const char *const fault_kind[] = { "hang", "drop", "corrupt" };

/*
 * Arms round @r's faults: one on every device (the kinds rotate) or, with
 * @busy_only, on every device still busy enough: while each of its
 * workers has two windows of jobs left, so a job is sure to be posted (and
 * caught) after the fault is armed.
 */
static int arm_round(int r, int busy_only, int *armed, long long *before, int *injected)
{
	int d, ret = 0;

	for (d = 0; d < o.devices; d++) {
		const char *k = fault_kind[(d + r) % 3];

		armed[d] = 0;
		if (busy_only && dev_left(d) < workers_on(d) * 2 * o.batch) {
			wt_diag("round %d: device %d has %d jobs left, too few to arm a %s",
				r, d, dev_left(d), k);
			continue;
		}
		before[d] = dbg_jobs(d, "resets");
		ret = wt_inject_fault(d, k);
		/*
		 * The control command queues behind the jobs; under a slow
		 * kernel it may outlive its timeout (twice job_timeout_ms), which
		 * resets the device: a fault too, but not the one asked for.
		 */
		if (ret == -ETIMEDOUT) {
			wt_diag("round %d: inject %s on device %d timed out (the device "
				"resets)", r, k, d);
			ret = 0;
			continue;
		}
		if (!wt_ok(!ret, "round %d: inject %s on device %d (%d)", r, k, d, ret))
			break;
		armed[d] = 1;
		++*injected;
	}
	return ret;
}

/* Each device armed in round @r must reset (its workers wait for it). */
static int wait_round(int r, const int *armed, const long long *before, int *fired_hangs)
{
	int d, ret = 0;

	for (d = 0; d < o.devices && !ret; d++) {
		const char *k = fault_kind[(d + r) % 3];

		if (!armed[d])
			continue;
		while (dbg_jobs(d, "resets") <= before[d] && dev_left(d) &&
		       now_ns() < deadline_ns)
			usleep(2000);
		ret = !wt_ok(dbg_jobs(d, "resets") > before[d],
			     "round %d: device %d reset after the %s", r, d, k);
		*fired_hangs += !ret && !strcmp(k, "hang");
	}
	return ret;
}

/*
 * R rounds of faults.  Round 0 was armed on every device before the
 * workers started submitting; the later rounds arm the devices still busy
 * enough.
 */
static int inject_faults(int *armed, long long *before, int *injected, int *fired_hangs)
{
	int r, ret = wait_round(0, armed, before, fired_hangs);

	for (r = 1; r < o.faults && !ret; r++) {
		ret = arm_round(r, 1, armed, before, injected);
		if (!ret)
			ret = wait_round(r, armed, before, fired_hangs);
	}
	return ret;
}

/* One job through the parent's own context: the device still works. */
static int device_works(int fd, uint32_t ctx_id)
{
	struct drm_wafer_submit sub = { .job = {
		.ctx_id = ctx_id, .n_tokens = PLEN, .flags = DRM_WAFER_JOB_ALL_POSITIONS,
		.top_k = TOPK } };
	struct wt_bo in, out;
	int ret;

	if (wt_bo_new(fd, &in, sizeof(prompt)) || wt_bo_new(fd, &out, RES_BYTES))
		return -ENOMEM;
	memcpy(in.map, prompt, sizeof(prompt));
	memset(out.map, 0xa5, RES_BYTES);
	sub.job.in_handle = in.handle;
	sub.job.out_handle = out.handle;
	ret = wt_ioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &sub);
	if (!ret)
		ret = wt_wait_job(fd, sub.seqno, NULL);
	if (!ret && !result_ok(&out, 0, 0))
		ret = -EBADMSG;
	munmap(in.map, in.size);
	munmap(out.map, out.size);
	return ret;
}

static void percentiles(const struct rec *rec, size_t n, int how, const char *name)
{
	float *lat = malloc(n * sizeof(*lat));
	size_t i, k = 0;

	if (!lat)
		return;
	for (i = 0; i < n; i++)
		if (rec[i].done == 1 && (how < 0 || rec[i].how == how))
			lat[k++] = rec[i].lat_ms;
	if (k) {
		qsort(lat, k, sizeof(*lat), cmp_float);
		wt_diag("%-5s %6zu jobs: latency p50 %7.2f ms, p99 %7.2f ms, max %7.2f ms",
			name, k, lat[k / 2], lat[k * 99 / 100], lat[k - 1]);
	}
	free(lat);
}

static void usage(void)
{
	fprintf(stderr, "usage: load [--procs N] [--jobs M] [--devices D] [--batch B] "
		"[--faults ROUNDS] [--deadline SECONDS]\n");
	exit(2);
}

static void parse(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "procs", required_argument, NULL, 'p' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "devices", required_argument, NULL, 'd' },
		{ "batch", required_argument, NULL, 'b' },
		{ "faults", required_argument, NULL, 'f' },
		{ "deadline", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'p': o.procs = atoi(optarg); break;
		case 'j': o.jobs = atoi(optarg); break;
		case 'd': o.devices = atoi(optarg); break;
		case 'b': o.batch = atoi(optarg); break;
		case 'f': o.faults = atoi(optarg); break;
		case 't': o.deadline_s = atoi(optarg); break;
		default: usage();
		}
	}
	if (optind != argc || o.procs < 1 || o.procs > MAX_PROCS || o.jobs < 1 ||
	    o.batch < 1 || o.batch > MAX_BATCH || o.devices < 0 || o.faults < 0 ||
	    o.deadline_s < 1)
		usage();
}

int main(int argc, char **argv)
{
	int fd[MAX_DEVICES], avail, d, w, p, pos, failed = 0, injected = 0, hangs = 0, ij = 0;
	int armed[MAX_DEVICES];
	long long before[MAX_DEVICES];
	long long completed0[MAX_DEVICES], timeouts0 = 0, timeouts1 = 0;
	struct drm_wafer_device_info info = { .size = sizeof(info) };
	struct drm_wafer_get_info gi = { .info_ptr = (uintptr_t)&info,
					 .info_size = sizeof(info) };
	struct wt_dev_model m[MAX_DEVICES];
	pid_t pid[MAX_PROCS];
	size_t total, i, n_sub = 0, n_ok = 0, n_err = 0, n_lost = 0, n_dup = 0, n_st[3] = { 0 };
	struct wt_model ref;
	struct rec *rec;
	uint64_t *seq;
	double t0, t1;

	parse(argc, argv);
	for (avail = 0; avail < MAX_DEVICES; avail++) {
		int f = wt_dev_open(avail);

		if (f < 0)
			break;
		close(f);
	}
	if (!o.devices)
		o.devices = (o.procs + 3) / 4 < avail ? (o.procs + 3) / 4 : avail;
	if (o.devices < 1 || o.devices > avail || o.devices > o.procs) {
		printf("not ok - %d devices asked for, %d present, %d processes\n",
		       o.devices, avail, o.procs);
		return 1;
	}
	deadline_ns = wt_deadline_ms(o.deadline_s * 1000ll);

	/* Each device's model, loaded by the file its processes share. */
	for (d = 0; d < o.devices; d++) {
		fd[d] = wt_dev_open(d);
		if (fd[d] < 0 || wt_dev_load_model(fd[d], 8, 1, CTX_LEN, &m[d]) ||
		    wt_ioctl(fd[d], DRM_IOCTL_WAFER_GET_INFO, &gi)) {
			printf("not ok - setup of device %d\n", d);
			return 1;
		}
	}
	/* Contexts and jobs in flight count against the shared file. */
	w = (o.procs + o.devices - 1) / o.devices;
	if (w + 1 > (int)info.max_contexts || w * o.batch > (int)info.max_inflight_jobs) {
		printf("not ok - %d processes x %d jobs per device exceed the file's limits "
		       "(%u contexts, %u jobs in flight)\n", w, o.batch, info.max_contexts,
		       info.max_inflight_jobs);
		return 1;
	}
	wt_diag("%d processes x %d jobs, %d devices, %d in flight per process, job timeout "
		"%u ms, %d fault rounds", o.procs, o.jobs, o.devices, o.batch,
		info.job_timeout_ms, o.faults);

	/* The reference, once, before forking: the packed blob is the same. */
	for (p = 0; p < PROMPTS; p++) {
		if (wt_model_open(&ref, m[0].blob, m[0].blob_len, CTX_LEN, 0))
			return 1;
		for (pos = 0; pos < PLEN; pos++) {
			prompt[p][pos] = pos ? 3 + (p * 37 + pos * 101) % 500 : 1;
			ref_arg[p][pos] = wt_model_step(&ref, prompt[p][pos], pos, TOPK,
							ref_topk[p][pos]);
		}
		wt_model_close(&ref);
	}

	total = (size_t)o.procs * o.jobs;
	rec = mmap(NULL, total * sizeof(*rec), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	progress = mmap(NULL, (MAX_PROCS + 2) * sizeof(*progress), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	start = progress + MAX_PROCS;
	seq = malloc(total * sizeof(*seq));
	if (rec == MAP_FAILED || progress == MAP_FAILED || !seq)
		return 1;
	for (d = 0; d < o.devices; d++) {
		completed0[d] = jobs_completed(d);
		timeouts0 += dbg_jobs(d, "timeouts");
	}

	t0 = wt_now();
	for (w = 0; w < o.procs; w++) {
		pid[w] = fork();
		if (pid[w] < 0)
			return 1;
		if (pid[w] == 0) {
			/* Devices get every mode: worker w runs on device w % D. */
			struct worker wk = {
				.id = w, .dev = w % o.devices, .fd = fd[w % o.devices],
				.mode = (enum mode)((w / o.devices) % 3),
				.rec = rec + (size_t)w * o.jobs,
			};

			int ret = worker_run(&wk, m[wk.dev].model_id);

			/* Nothing left to submit, failed or not (for the injector). */
			__atomic_store_n(&progress[w], o.jobs, __ATOMIC_RELAXED);
			_exit(ret);
		}
	}
	/*
	 * Every worker set up before any submits (forking a dozen takes seconds
	 * on the debug kernel, long enough for the first to finish theirs), and
	 * round 0's faults armed before the first job.
	 */
	while (__atomic_load_n(&start[0], __ATOMIC_RELAXED) < o.procs && now_ns() < deadline_ns)
		usleep(2000);
	if (o.faults)
		ij = arm_round(0, 0, armed, before, &injected);
	__atomic_store_n(&start[1], 1, __ATOMIC_RELEASE);
	if (o.faults && !ij)
		ij = inject_faults(armed, before, &injected, &hangs);
	/* Bounded: past the deadline (plus the workers' own grace) kill them. */
	for (p = 0; p < o.procs;) {
		int status;
		pid_t r = waitpid(-1, &status, WNOHANG);

		if (r > 0) {
			for (w = 0; w < o.procs && pid[w] != r; w++)
				;
			if (w < o.procs && (!WIFEXITED(status) || WEXITSTATUS(status))) {
				wt_diag("worker %d failed (status %#x)", w, status);
				failed++;
			}
			if (w < o.procs)
				pid[w] = 0;
			p++;
			continue;
		}
		if (now_ns() > deadline_ns + 30000000000ll) {
			for (w = 0; w < o.procs; w++)
				if (pid[w] > 0)
					kill(pid[w], SIGKILL);
			printf("not ok - the load did not finish within its %d s deadline "
			       "(%d of %d workers still running)\n", o.deadline_s,
			       o.procs - p, o.procs);
			return 1;
		}
		usleep(5000);
	}
	t1 = wt_now();
	wt_ok(!failed, "%d processes x %d jobs (uring, ioctl, mixed) on %d devices: every "
	      "worker saw each of its jobs complete once, as allowed (%d failed)",
	      o.procs, o.jobs, o.devices, failed);

	/* The parent's own count, from what the workers recorded. */
	for (i = 0; i < total; i++) {
		n_sub += rec[i].submitted;
		n_lost += rec[i].submitted && !rec[i].done;
		n_dup += rec[i].done > 1;
		if (rec[i].done == 1) {
			n_ok += !rec[i].status;
			n_err += !!rec[i].status;
			n_st[0] += rec[i].status == -ETIMEDOUT;
			n_st[1] += rec[i].status == -EIO;
			n_st[2] += rec[i].status == -ECANCELED;
		}
	}
	if (n_err)
		wt_diag("errors: %zu -ETIMEDOUT, %zu -EIO, %zu -ECANCELED", n_st[0], n_st[1],
			n_st[2]);
	wt_ok(n_sub == total && !n_lost && !n_dup && n_ok + n_err == total,
	      "%zu jobs: %zu submitted, %zu correct, %zu failed with an error, %zu lost, "
	      "%zu completed twice", total, n_sub, n_ok, n_err, n_lost, n_dup);
	if (!o.faults)
		wt_ok(n_ok == total, "without faults every job succeeded (%zu of %zu)", n_ok, total);

	for (d = 0; d < o.devices; d++) {
		size_t k = 0, dup = 0, dev_ok = 0, dev_total = 0;
		long long done = jobs_completed(d) - completed0[d], inflight;
		int64_t until = wt_deadline_ms(30000);

		/* ioctl seqnos of one file: one job each, across its processes. */
		for (i = 0; i < total; i++) {
			if (!rec[i].submitted || rec[i].dev != d)
				continue;
			dev_total++;
			dev_ok += rec[i].done == 1 && !rec[i].status;
			if (rec[i].how == HOW_IOCTL)
				seq[k++] = rec[i].seqno;
		}
		qsort(seq, k, sizeof(*seq), cmp_u64);
		for (i = 1; i < k; i++)
			dup += seq[i] == seq[i - 1];
		wt_ok(!dup, "device %d: %zu ioctl seqnos, %zu duplicates", d, k, dup);
		/* Finished jobs are freed asynchronously: give it a moment. */
		while ((inflight = dbg_jobs(d, "in flight")) != 0 && now_ns() < until)
			usleep(10000);
		wt_ok(!inflight, "device %d: debugfs shows %lld jobs in flight", d, inflight);
		/*
		 * It counts the firmware's completions: every job without
		 * faults; with them, exactly the correct ones (the jobs a reset
		 * failed never completed, and one that completed must not be
		 * reported failed).
		 */
		wt_ok(done == (long long)dev_ok && (o.faults || dev_ok == dev_total),
		      "device %d: jobs_completed grew by %lld: %zu jobs submitted, %zu correct",
		      d, done, dev_total, dev_ok);
		timeouts1 += dbg_jobs(d, "timeouts");
		if (o.faults)
			wt_inject_fault(d, "none"); /* a fault armed too late to fire */
		p = device_works(fd[d], m[d].ctx_id);
		wt_ok(!p, "device %d works afterwards (%d)", d, p);
	}
	if (!o.faults)
		wt_ok(timeouts1 == timeouts0, "no job timed out (%lld)", timeouts1 - timeouts0);
	else
		/*
		 * A hang may also be swept up by another reset (a corrupt
		 * completion can reset twice, the second time late), but the
		 * first, on a device with no fault before it, times out.
		 */
		wt_ok(!ij && injected > 0 && hangs > 0 && timeouts1 > timeouts0,
		      "faults injected during the load: %d (%d hangs), each followed by a reset "
		      "of its device; %lld job timeouts", injected, hangs, timeouts1 - timeouts0);

	wt_diag("%zu jobs in %.2f s: %.0f jobs/s (TCG guest)", n_ok + n_err, t1 - t0,
		(n_ok + n_err) / (t1 - t0));
	percentiles(rec, total, -1, "all");
	percentiles(rec, total, HOW_URING, "uring");
	percentiles(rec, total, HOW_IOCTL, "ioctl");
	for (d = 0; d < o.devices; d++)
		close(fd[d]);
	return wt_done();
}
