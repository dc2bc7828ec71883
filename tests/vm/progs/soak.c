// SPDX-License-Identifier: MIT
/*
 * VM test: soak.  For --secs seconds every device has a tenant:
 * a process that opens the device (every other one receives the file by
 * SCM_RIGHTS from a helper that opened it and closed its copy), loads the
 * model (retrying -EBUSY while a killed predecessor's jobs drain) and forks
 * submitters sharing the file, each with its own context: one by ioctl
 * (SUBMIT + WAIT, some jobs with out-syncobjs), one by io_uring, one mixing
 * both.  Each pipelines BATCH jobs per context, every result checked against
 * firmware-sim in process (outputs poisoned before each submit); a quarter
 * of the batches end with a job the firmware rejects at intake (a token
 * outside the vocabulary: -EINVAL), done at once in the firmware.  Tenants
 * end by themselves after a few seconds (the file closed, every other one
 * unloading first) and are replaced.  Meanwhile a supervisor SIGKILLs
 * tenants with their submitters, or single submitters (up to MAX_KILLS
 * each), mid-flight, injects
 * hangs (debugfs inject_fault: a job outlives job_timeout_ms and the device
 * resets), a reader loops GET_INFO and the sysfs counters of every device,
 * and once a device is unbound under its running tenant (which must stop
 * on -ENODEV with every job accounted for) and bound again.
 *
 * Invariants (the harness adds: no kernel-log report, no kmemleak leak):
 *  - every job of a process that was not killed completed exactly once with
 *    a status: 0 with correct results, -EINVAL for exactly the rejected
 *    jobs, or an error a reset (-ETIMEDOUT, -EIO, -ECANCELED) or the unbind
 *    (-ENODEV, that device only) explains;
 *    one WAIT per seqno (the second is -ENOENT), one CQE per user_data and
 *    none for a job not in flight, out-syncobj status equal to the job's.
 *    Counted per job in shared memory by the supervisor; jobs of killed
 *    processes are excluded (their outcomes are nobody's to see);
 *  - per context in order: once the last job of a batch completed, every
 *    earlier one of the batch has signalled (WAIT with a deadline in the
 *    past succeeds, its out-syncobj is signalled), also when the last is a
 *    rejected one (with timeline_signal_locked() signalling done jobs out of
 *    order this fails at once); io_uring jobs are taken
 *    into the batch only once their fence is in the syncobj, so the order
 *    of submission is known;
 *  - afterwards every device holds no job (debugfs, bounded poll), loads
 *    the model again and decodes exactly as firmware-sim does;
 *  - SUnreclaim is back to its starting level within a tolerance (see
 *    slab_tolerance_kib()); kmemleak in the harness is the precise check;
 *  - every action happened: kills, hangs with resets, fd passing,
 *    voluntary closes, the unbind, reader operations without error.
 *
 * Usage: soak [--secs S] [--seed N] [--unbind DEV]
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/sync_file.h>
#include <liburing.h>

#include "wfs_pack.h"
#include "wt_dev.h"
#include "wt_model.h"
#include "wt_util.h"

#define TOPK		4
#define PROMPTS		8
#define PLEN		4
#define CTX_LEN		8
#define BATCH		4
#define NSUB		3		/* submitters per tenant: ioctl, uring, mixed */
#define MAX_DEV		8
#define MAX_TENANTS	256
#define MAX_SUBS	(MAX_TENANTS * NSUB)
#define MAX_JOBS	4096		/* per submitter; it stops there */
#define DECODE_N	16
/*
 * Tenant kills and submitter kills each at most this many: more add no
 * path but leave few jobs counted on a slow guest (a debug run at 2 jobs/s
 * once counted no io_uring job at all).
 */
#define MAX_KILLS	4
#define RES_BYTES	(PLEN * DRM_WAFER_RESULT_SIZE(TOPK))

enum how { HOW_IOCTL, HOW_URING };
enum { MODE_IOCTL, MODE_URING, MODE_MIXED };
static const char *const mode_name[] = { "ioctl", "uring", "mixed" };
/* Exit statuses of submitters and tenants. */
enum { EX_OK = 0, EX_FAIL = 1, EX_NODEV = 2 };

struct jrec {
	int16_t status;
	uint8_t done;		/* outcomes seen: must end at 1 */
	uint8_t how : 1;
	uint8_t bad : 1;	/* rejected at intake: -EINVAL */
};

struct sub_rec {
	int tenant, mode, killed, njobs, order_checked;
	pid_t pid;
	struct jrec job[MAX_JOBS];
};

struct tenant_rec {
	pid_t pid;
	int dev, killed, passed, closed_ok, unplugged, exited;
	int nodev_subs;		/* submitters that stopped on -ENODEV */
	int ok_subs;		/* submitters done (time up) before the unbind */
	int killed_subs;	/* submitters the supervisor killed alone */
	int64_t t_end;		/* when its submitters stop */
	int64_t t_cap;		/* the run's end when it started */
	int64_t life_ns;	/* its time from its model's load on */
};

/* Shared between every process (MAP_SHARED | MAP_ANONYMOUS). */
struct shared {
	int stop;
	int unplugged[MAX_DEV];		/* set before the unbind, cleared after bind */
	int bind_gen[MAX_DEV];		/* bumped at each unbind */
	int ntenants, nsubs;
	long reader_ops, reader_errs, reader_last_err, reader_max_ms, ctrl_eio;
	struct tenant_rec tenant[MAX_TENANTS];
	struct sub_rec sub[MAX_SUBS];
};

static struct shared *sh;
static int ndev, secs = 60, unbind_dev = 1;
/* The last row has a token outside the vocabulary: the firmware rejects it. */
static uint32_t prompt[PROMPTS + 1][PLEN], ref_arg[PROMPTS][PLEN];
static struct wfs_topk_entry ref_topk[PROMPTS][PLEN][TOPK];
static int64_t hard_deadline;	/* nothing may wait past it */

static int64_t now_ns(void)
{
	return wt_deadline_ms(0);
}

/* --------------------------------------------------------- submitter -- */

struct job {
	int idx, prompt, slot, bad;
	enum how how;
	uint32_t syncobj;	/* 0: none */
	uint64_t seqno;
	int resolved, refused;
};

struct submitter {
	int id, fd, dev, mode;
	uint32_t ctx_id, sync[BATCH];
	struct wt_bo in, out;
	struct io_uring ring;
	struct sub_rec *rec;
	struct wt_rng rng;
	struct job b[BATCH];
	int n, uring_left, nodev;
};

static int sfail(const struct submitter *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int sfail(const struct submitter *s, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "# submitter %d (device %d, %s): %s\n", s->id, s->dev,
		mode_name[s->mode], msg);
	return -1;
}

static int status_allowed(const struct submitter *s, const struct job *j, int status)
{
	if (status == -EINVAL || (j->bad && !status))
		return j->bad && status;
	if (status == -ENODEV)
		return sh->unplugged[s->dev];
	return !status || status == -ETIMEDOUT || status == -EIO || status == -ECANCELED;
}

/* Records the one outcome of batch job @j. */
static int outcome(struct submitter *s, struct job *j, int status, uint64_t device_ns)
{
	struct jrec *r = &s->rec->job[j->idx];

	j->resolved = 1;
	r->status = (int16_t)status;
	if (r->done++)
		return sfail(s, "job %d completed twice", j->idx);
	if (status == -ENODEV)
		s->nodev = 1;
	if (!status_allowed(s, j, status))
		return sfail(s, "job %d (%s) completed with %d", j->idx,
			     j->how == HOW_URING ? "uring" : "ioctl", status);
	if (!status && !device_ns)
		return sfail(s, "job %d succeeded in 0 ns of device time", j->idx);
	for (int pos = 0; !status && !j->bad && pos < PLEN; pos++)
		if (!wt_result_matches(wt_result(&s->out, (size_t)j->slot * RES_BYTES, TOPK, pos),
				       pos, ref_arg[j->prompt][pos], ref_topk[j->prompt][pos], TOPK))
			return sfail(s, "job %d (prompt %d) succeeded with wrong results",
				     j->idx, j->prompt);
	return 0;
}

/* Whether @syncobj's fence is in it: 1, 0 (none yet) or -errno. */
static int fence_status(int fd, uint32_t syncobj, int *status)
{
	struct drm_syncobj_handle h = { .handle = syncobj, .fd = -1,
		.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE };
	struct sync_file_info info = { 0 };
	int ret = wt_ioctl(fd, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &h);

	if (ret == -EINVAL)
		return 0;
	if (ret)
		return ret;
	ret = wt_ioctl(h.fd, SYNC_IOC_FILE_INFO, &info);
	close(h.fd);
	if (status)
		*status = info.status;	/* 1 signalled, 0 pending, <0 error */
	return ret ? ret : 1;
}

/* Takes the CQE of an io_uring job of the batch: -1 on a stray one. */
static int take_cqe(struct submitter *s, struct io_uring_cqe *cqe)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (s->b[i].how == HOW_URING && !s->b[i].resolved &&
		    (uint64_t)s->b[i].idx + 1 == cqe->user_data)
			break;
	if (i == s->n)
		return sfail(s, "CQE (res %d) for user_data %llu, not in flight", cqe->res,
			     (unsigned long long)cqe->user_data);
	s->uring_left--;
	return outcome(s, &s->b[i], cqe->res, cqe->big_cqe[0]);
}

/* Reaps CQEs, waiting up to @wait_ns for the first: 1 got some, 0 none. */
static int reap_cqes(struct submitter *s, int64_t wait_ns)
{
	struct __kernel_timespec ts = { .tv_sec = wait_ns / 1000000000,
					.tv_nsec = wait_ns % 1000000000 };
	struct io_uring_cqe *cqe;
	int got = 0, ret;

	if (!s->uring_left)
		return 0;
	ret = wait_ns ? io_uring_wait_cqe_timeout(&s->ring, &cqe, &ts)
		      : io_uring_peek_cqe(&s->ring, &cqe);
	while (!ret) {
		ret = take_cqe(s, cqe);
		io_uring_cqe_seen(&s->ring, cqe);
		if (ret)
			return -1;
		got = 1;
		ret = s->uring_left ? io_uring_peek_cqe(&s->ring, &cqe) : -EAGAIN;
	}
	if (ret != -EAGAIN && ret != -ETIME && ret != -EINTR)
		return sfail(s, "waiting for CQEs: %d", ret);
	return got;
}

/* Submits batch job @i; 0, or -1 (failed) or 1 (refused: unplugged). */
static int submit_one(struct submitter *s, int i)
{
	struct job *j = &s->b[i];
	struct drm_wafer_job dj = {
		.ctx_id = s->ctx_id, .slot = i, .n_tokens = PLEN,
		.flags = DRM_WAFER_JOB_ALL_POSITIONS, .top_k = TOPK,
		.in_handle = s->in.handle, .out_handle = s->out.handle,
		.out_offset = (size_t)i * RES_BYTES,
	};
	struct drm_syncobj_array reset = { .handles = (uintptr_t)&s->sync[i], .count_handles = 1 };
	int ret;

	*j = (struct job){ .idx = s->rec->njobs, .slot = i,
			   .prompt = (int)wt_rng_range(&s->rng, 0, PROMPTS - 1) };
	/*
	 * Now and then the last of a batch is rejected at intake: done at once
	 * in the firmware, its fence must still wait for the earlier jobs.
	 * Always in a submitter's first batch, so that a slow guest's few
	 * batches have some.
	 */
	j->bad = i == BATCH - 1 && (s->rec->njobs < BATCH || !wt_rng_range(&s->rng, 0, 3));
	if (j->bad)
		j->prompt = PROMPTS;
	j->how = s->mode == MODE_IOCTL ? HOW_IOCTL : s->mode == MODE_URING ? HOW_URING :
		 (enum how)wt_rng_range(&s->rng, 0, 1);
	/* io_uring jobs always: their fence in the syncobj tells they are queued. */
	if (j->how == HOW_URING || wt_rng_range(&s->rng, 0, 1))
		j->syncobj = s->sync[i];
	dj.in_offset = (uint64_t)j->prompt * PLEN * 4;
	dj.out_syncobj = j->syncobj;
	ret = j->syncobj ? wt_ioctl(s->fd, DRM_IOCTL_SYNCOBJ_RESET, &reset) : 0;
	if (ret == -ENODEV && sh->unplugged[s->dev])
		return 1;
	if (ret)
		return sfail(s, "SYNCOBJ_RESET: %d", ret);
	memset((char *)s->out.map + dj.out_offset, 0xa5, RES_BYTES);
	s->rec->job[j->idx].how = j->how;
	s->rec->job[j->idx].bad = j->bad;
	if (j->how == HOW_IOCTL) {
		struct drm_wafer_submit sub = { .job = dj };

		ret = wt_ioctl(s->fd, DRM_IOCTL_WAFER_SUBMIT, &sub);
		if (ret == -ENODEV && sh->unplugged[s->dev])
			return 1;
		if (ret)
			return sfail(s, "SUBMIT: %d", ret);
		j->seqno = sub.seqno;
	} else {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&s->ring);

		if (!sqe)
			return sfail(s, "no free SQE");
		wt_uring_prep_submit(sqe, s->fd, &dj, (uint64_t)j->idx + 1);
		ret = io_uring_submit(&s->ring);
		if (ret != 1)
			return sfail(s, "io_uring_submit: %d", ret);
		s->uring_left++;
	}
	s->rec->njobs++;
	s->n = i + 1;
	return 0;
}

/* Waits until uring job @i is on the timeline (its fence in the syncobj). */
static int uring_queued(struct submitter *s, int i)
{
	struct job *j = &s->b[i];
	int ret;

	for (;;) {
		int done = j->resolved;

		ret = fence_status(s->fd, j->syncobj, NULL);
		if (ret == -ENODEV && sh->unplugged[s->dev])
			break;
		if (ret < 0)
			return sfail(s, "exporting the out-syncobj of job %d: %d", j->idx, ret);
		if (ret)
			return 0;
		/* Its CQE came and still no fence: it was refused at submission. */
		if (done)
			break;
		if (reap_cqes(s, 200000) < 0)
			return -1;
		if (now_ns() > hard_deadline)
			return sfail(s, "job %d never reached the timeline", j->idx);
	}
	/* Unplugged: the CQE tells how it ended, whether it was queued or not. */
	if (!j->resolved) {
		j->syncobj = 0;
		return 0;
	}
	if (s->rec->job[j->idx].status != -ENODEV)
		return sfail(s, "uring job %d refused with %d", j->idx,
			     s->rec->job[j->idx].status);
	j->refused = 1;
	return 1;
}

/* WAIT for ioctl job @j until @deadline: 1 resolved, 0 not yet, -1. */
static int wait_ioctl(struct submitter *s, struct job *j, int64_t deadline)
{
	struct drm_wafer_wait w = { .seqno = j->seqno, .timeout_ns = deadline };
	struct drm_wafer_wait again = { .seqno = j->seqno };
	int ret = wt_ioctl(s->fd, DRM_IOCTL_WAFER_WAIT, &w);

	if (ret == -ETIME)
		return 0;
	/* Unplugged: WAIT itself fails, which is the job's outcome. */
	if (ret == -ENODEV && sh->unplugged[s->dev])
		return outcome(s, j, ret, 0) ? -1 : 1;
	if (ret)
		return sfail(s, "WAIT for seqno %llu (job %d): %d",
			     (unsigned long long)j->seqno, j->idx, ret);
	ret = wt_ioctl(s->fd, DRM_IOCTL_WAFER_WAIT, &again);
	if (ret != -ENOENT && !(ret == -ENODEV && sh->unplugged[s->dev]))
		return sfail(s, "second WAIT for job %d: %d, want -ENOENT", j->idx, ret);
	return outcome(s, j, w.status, w.device_ns) ? -1 : 1;
}

/* Resolves batch job @i, waiting for it up to the hard deadline. */
static int resolve(struct submitter *s, int i)
{
	struct job *j = &s->b[i];
	int ret;

	if (j->how == HOW_IOCTL)
		return wait_ioctl(s, j, hard_deadline) == 1 ? 0 : -1;
	while (!j->resolved) {
		ret = reap_cqes(s, 100000000);
		if (ret < 0)
			return -1;
		if (!j->resolved && now_ns() > hard_deadline)
			return sfail(s, "no CQE for job %d", j->idx);
	}
	return 0;
}

/* Once the last job of the batch is done, every earlier one has signalled. */
static int check_order(struct submitter *s, int last)
{
	struct drm_syncobj_wait sw = { .count_handles = 1, .timeout_nsec = 0 };
	int i, ret;

	for (i = 0; i < last && !s->nodev; i++) {
		struct job *j = &s->b[i];

		if (j->resolved && !j->syncobj)
			continue;
		if (j->how == HOW_IOCTL && !j->resolved) {
			ret = wait_ioctl(s, j, 0);
			if (ret < 0)
				return -1;
			if (!ret)
				return sfail(s, "job %d done, earlier job %d (ioctl) of its "
					     "context not", s->b[last].idx, j->idx);
		}
		if (!j->syncobj)
			continue;
		sw.handles = (uintptr_t)&j->syncobj;
		ret = wt_ioctl(s->fd, DRM_IOCTL_SYNCOBJ_WAIT, &sw);
		if (ret == -ENODEV && sh->unplugged[s->dev])
			break;
		if (ret == -ETIME)
			return sfail(s, "job %d done, the fence of earlier job %d (%s) of its "
				     "context not signalled", s->b[last].idx, j->idx,
				     j->how == HOW_URING ? "uring" : "ioctl");
		if (ret)
			return sfail(s, "SYNCOBJ_WAIT for job %d: %d", j->idx, ret);
	}
	s->rec->order_checked += !s->nodev;
	return 0;
}

/* The out-fence says what the job's outcome said. */
static int check_fence(struct submitter *s, const struct job *j)
{
	int st = 0, want = s->rec->job[j->idx].status, ret;

	if (!j->syncobj || j->refused || s->nodev)
		return 0;
	ret = fence_status(s->fd, j->syncobj, &st);
	if (ret == -ENODEV && sh->unplugged[s->dev])
		return 0;
	if (ret != 1 || st != (want ? want : 1))
		return sfail(s, "job %d: status %d, its out-fence %d (%d)", j->idx, want, st, ret);
	return 0;
}

/* One batch: submitted in a known order, the last awaited, then the rest. */
static int run_batch(struct submitter *s)
{
	int i, ret, last = -1;

	s->n = 0;
	for (i = 0; i < BATCH; i++) {
		ret = submit_one(s, i);
		if (ret < 0)
			return -1;
		if (ret)
			break;
		if (s->b[i].how == HOW_URING) {
			ret = uring_queued(s, i);
			if (ret < 0)
				return -1;
			if (ret)
				break;
		}
		last = i;
	}
	if (last >= 0 && (resolve(s, last) || check_order(s, last)))
		return -1;
	for (i = 0; i < s->n; i++)
		if (!s->b[i].resolved && resolve(s, i))
			return -1;
	for (i = 0; i < s->n; i++)
		if (check_fence(s, &s->b[i]))
			return -1;
	return i < BATCH || s->nodev;
}

/*
 * A control command that changes device state fails with -EIO when a
 * reset overtakes it (reset_control_race): sent again, a bounded number of
 * times; the final checks see whether it left anything behind.
 */
static int ctrl_retry(int fd, unsigned long req, void *arg)
{
	int i, ret = -EIO;

	for (i = 0; i < 5 && ret == -EIO; i++) {
		ret = wt_ioctl(fd, req, arg);
		if (ret == -EIO)
			__atomic_fetch_add(&sh->ctrl_eio, 1, __ATOMIC_RELAXED);
	}
	return ret;
}

static int submitter_setup(struct submitter *s, uint32_t model_id)
{
	struct drm_wafer_ctx_create cc = { .model_id = model_id, .kv_slots = BATCH,
					   .ctx_len = CTX_LEN };
	int i, ret;

	ret = ctrl_retry(s->fd, DRM_IOCTL_WAFER_CTX_CREATE, &cc);
	if (!ret) {
		s->ctx_id = cc.ctx_id;
		ret = wt_bo_new(s->fd, &s->in, sizeof(prompt));
	}
	if (!ret)
		ret = wt_bo_new(s->fd, &s->out, BATCH * RES_BYTES);
	for (i = 0; i < BATCH && !ret; i++) {
		struct drm_syncobj_create sc = { 0 };

		ret = wt_ioctl(s->fd, DRM_IOCTL_SYNCOBJ_CREATE, &sc);
		s->sync[i] = sc.handle;
	}
	if (ret == -ENODEV && sh->unplugged[s->dev])
		return 1;
	if (ret)
		return sfail(s, "setup: %d", ret);
	memcpy(s->in.map, prompt, sizeof(prompt));
	if (s->mode != MODE_IOCTL) {
		ret = io_uring_queue_init(4 * BATCH, &s->ring,
					  IORING_SETUP_SQE128 | IORING_SETUP_CQE32);
		if (ret)
			return sfail(s, "io_uring_queue_init: %d", ret);
	}
	return 0;
}

/* A submitter process: batches until its tenant's time is up. */
static int submitter_main(int fd, int dev, int mode, int id, uint32_t model_id)
{
	const int64_t *t_end = &sh->tenant[sh->sub[id].tenant].t_end;
	struct submitter s = { .id = id, .fd = fd, .dev = dev, .mode = mode,
			       .rec = &sh->sub[id] };
	struct drm_wafer_ctx_destroy cd = { 0 };
	int ret;

	wt_rng_seed(&s.rng, 0x50a4 + id);
	ret = submitter_setup(&s, model_id);
	if (ret)
		return ret < 0 ? EX_FAIL : EX_NODEV;
	while (!ret && !__atomic_load_n(&sh->stop, __ATOMIC_RELAXED) &&
	       now_ns() < __atomic_load_n(t_end, __ATOMIC_RELAXED) &&
	       s.rec->njobs + BATCH <= MAX_JOBS)
		ret = run_batch(&s);
	if (ret < 0)
		return EX_FAIL;
	if (mode != MODE_IOCTL) {
		struct __kernel_timespec ts = { .tv_nsec = 20000000 };
		struct io_uring_cqe *cqe;

		if (io_uring_wait_cqe_timeout(&s.ring, &cqe, &ts) != -ETIME) {
			sfail(&s, "a CQE after the last job (user_data %llu)",
			      (unsigned long long)cqe->user_data);
			return EX_FAIL;
		}
		io_uring_queue_exit(&s.ring);
	}
	/* The file outlives us (shared with the tenant): give the context back. */
	cd.ctx_id = s.ctx_id;
	ret = wt_ioctl(fd, DRM_IOCTL_WAFER_CTX_DESTROY, &cd);
	if (ret && !(ret == -ENODEV && sh->unplugged[dev])) {
		sfail(&s, "CTX_DESTROY: %d", ret);
		return EX_FAIL;
	}
	return s.nodev || ret ? EX_NODEV : EX_OK;
}

/* ------------------------------------------------------------ tenant -- */

static void *blob;
static size_t blob_len;

/* A helper opens accel@node, passes the file over a socket and closes it. */
static int open_passed(int node)
{
	char cbuf[CMSG_SPACE(sizeof(int))], c = 0;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int sv[2], fd = -EBADMSG, st;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -errno;
	pid = fork();
	if (pid == 0) {
		int f = wt_dev_open(node);

		if (f < 0)
			_exit(1);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &f, sizeof(int));
		_exit(sendmsg(sv[1], &mh, 0) == 1 && !close(f) ? 0 : 1);
	}
	close(sv[1]);
	if (pid > 0 && recvmsg(sv[0], &mh, 0) == 1 && (cm = CMSG_FIRSTHDR(&mh)) &&
	    cm->cmsg_type == SCM_RIGHTS)
		memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	close(sv[0]);
	if (pid > 0)
		waitpid(pid, &st, 0);
	return fd;
}

/* MODEL_LOAD, retrying -EBUSY while a killed predecessor's jobs drain. */
static int load_model(int fd, uint32_t *model_id)
{
	struct drm_wafer_model_load ml = { .blob_size = blob_len };
	int64_t until = wt_deadline_ms(60000);
	struct wt_bo b;
	int ret = wt_bo_new(fd, &b, blob_len);

	if (ret)
		return ret;
	memcpy(b.map, blob, blob_len);
	munmap(b.map, b.size);
	ml.bo_handle = b.handle;
	do {
		ret = ctrl_retry(fd, DRM_IOCTL_WAFER_MODEL_LOAD, &ml);
		if (ret == -EBUSY)
			usleep(50000);
	} while (ret == -EBUSY && now_ns() < until);
	*model_id = ml.model_id;
	return ret;
}

/* Waits for the tenant's submitters: whether each ended as it may. */
static int reap_submitters(int t, const pid_t *pid, const int *id, int n, int *killed)
{
	int i, st, ok = 1;

	for (i = 0; i < n; i++) {
		struct sub_rec *r = &sh->sub[id[i]];

		if (waitpid(pid[i], &st, 0) != pid[i])
			st = -1;
		if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL && r->killed) {
			++*killed;
			sh->tenant[t].killed_subs++;
			continue;
		}
		/* Time up: its CTX_DESTROY succeeded, so before any unbind. */
		if (WIFEXITED(st) && WEXITSTATUS(st) == EX_OK) {
			sh->tenant[t].ok_subs++;
			continue;
		}
		if (WIFEXITED(st) && WEXITSTATUS(st) == EX_NODEV && sh->unplugged[sh->tenant[t].dev]) {
			sh->tenant[t].nodev_subs++;
			continue;
		}
		fprintf(stderr, "# tenant %d: submitter %d ended with %#x\n", t, id[i], st);
		ok = 0;
	}
	return ok;
}

static int tenant_submitters(int t, int fd, uint32_t model_id, int *killed)
{
	pid_t pid[NSUB];
	int id[NSUB], i;

	for (i = 0; i < NSUB; i++) {
		id[i] = __atomic_fetch_add(&sh->nsubs, 1, __ATOMIC_RELAXED);
		if (id[i] >= MAX_SUBS)
			return 0;
		sh->sub[id[i]].tenant = t;
		sh->sub[id[i]].mode = i;
		pid[i] = fork();
		if (pid[i] == 0)
			_exit(submitter_main(fd, sh->tenant[t].dev, i, id[i], model_id));
		sh->sub[id[i]].pid = pid[i];
		if (pid[i] < 0)
			return 0;
	}
	return reap_submitters(t, pid, id, NSUB, killed);
}

/*
 * A tenant's time starts once its model is loaded, so that a slow guest's
 * tenants still submit (a load under KASAN and TCG can take seconds), and
 * ends by the run's end; unless the supervisor, about to unbind its device
 * under it, has already moved its end.
 */
static void start_life(struct tenant_rec *tr)
{
	int64_t end = now_ns() + tr->life_ns, cap = tr->t_cap;

	__atomic_compare_exchange_n(&tr->t_end, &cap, end < cap ? end : cap, 0,
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* A tenant process: open (maybe passed), load, submitters, close. */
static void tenant_main(int t)
{
	struct tenant_rec *tr = &sh->tenant[t];
	struct drm_wafer_model_unload mu = { 0 };
	int node = wt_accel_index(tr->dev), fd, ret, killed = 0, ok;

	setpgid(0, 0);
	fd = node < 0 ? node : tr->passed ? open_passed(node) : wt_dev_open(node);
	ret = fd < 0 ? fd : load_model(fd, &mu.model_id);
	if ((ret == -ENODEV || ret == -ENOENT) && sh->unplugged[tr->dev])
		_exit(EX_NODEV);
	if (ret) {
		fprintf(stderr, "# tenant %d (device %d): open/load: %d\n", t, tr->dev, ret);
		_exit(EX_FAIL);
	}
	start_life(tr);
	ok = tenant_submitters(t, fd, mu.model_id, &killed);
	/* Every other tenant unloads before closing; the rest leave it to close. */
	if (ok && !killed && t % 2 == 0) {
		ret = wt_ioctl(fd, DRM_IOCTL_WAFER_MODEL_UNLOAD, &mu);
		if (ret && !(ret == -ENODEV && sh->unplugged[tr->dev])) {
			fprintf(stderr, "# tenant %d: MODEL_UNLOAD: %d\n", t, ret);
			ok = 0;
		}
	}
	tr->closed_ok = !close(fd) && ok;
	_exit(!ok ? EX_FAIL : sh->unplugged[tr->dev] ? EX_NODEV : EX_OK);
}

/* ------------------------------------------------------------ reader -- */

static const char *const attrs[] = { "tokens", "modelled_makespan_ns",
	"bottleneck_busy_ns", "jobs_completed", "busy_ns" };

static int read_attr(int dev, const char *attr)
{
	char path[128], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/bus/platform/devices/wafer.%d/%s", dev, attr);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return n > 0 ? 0 : n < 0 ? -errno : -ENODATA;
}

static int get_info(int fd, struct drm_wafer_device_info *info)
{
	struct drm_wafer_get_info gi = { .info_ptr = (uintptr_t)info,
					 .info_size = sizeof(*info) };

	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	return wt_ioctl(fd, DRM_IOCTL_WAFER_GET_INFO, &gi);
}

/*
 * An error is expected while the device is (or was, for an old file)
 * unbound: at the op's start (@was_unplugged; a reader descheduled for the
 * whole rebind sees it bound again by the time it counts) or now.
 */
static void reader_count(int dev, int gen, int was_unplugged, int ret, int64_t t_op)
{
	long ms = (long)((now_ns() - t_op) / 1000000);

	if (ms > sh->reader_max_ms)
		sh->reader_max_ms = ms;
	__atomic_fetch_add(&sh->reader_ops, 1, __ATOMIC_RELAXED);
	if (!ret || ((ret == -ENODEV || ret == -ENOENT) &&
		     (was_unplugged || sh->unplugged[dev] || gen != sh->bind_gen[dev])))
		return;
	__atomic_fetch_add(&sh->reader_errs, 1, __ATOMIC_RELAXED);
	sh->reader_last_err = ret;
}

/* GET_INFO on a file of each device and its sysfs counters, until stopped. */
static void reader_main(void)
{
	struct drm_wafer_device_info info;
	int fd[MAX_DEV], fdgen[MAX_DEV], d, ret;
	unsigned int i = 0;

	for (d = 0; d < ndev; d++)
		fd[d] = -1;
	while (!__atomic_load_n(&sh->stop, __ATOMIC_RELAXED)) {
		for (d = 0; d < ndev; d++, i++) {
			int gen = sh->bind_gen[d], un = sh->unplugged[d], node;
			int64_t t_op = now_ns();

			if (fd[d] < 0) {
				node = wt_accel_index(d);
				fd[d] = node < 0 ? node : wt_dev_open(node);
				fdgen[d] = gen;
			}
			ret = fd[d] < 0 ? fd[d] : get_info(fd[d], &info);
			reader_count(d, fd[d] < 0 ? gen : fdgen[d], un, ret, t_op);
			if (ret && fd[d] >= 0)
				close(fd[d]);
			if (ret)
				fd[d] = -1;
			t_op = now_ns();
			un = sh->unplugged[d];
			reader_count(d, gen, un, read_attr(d, attrs[i % 5]), t_op);
		}
		usleep(5000);
	}
	_exit(0);
}

/* -------------------------------------------------------- supervisor -- */

struct sup {
	struct wt_rng rng;
	int cur[MAX_DEV];		/* running tenant per device, -1 none */
	int64_t t_end;
	long long resets0[MAX_DEV], resets_acc;
	int tenant_kills, sub_kills, hangs, hang_lost, unbinds, started, failed;
	pid_t reader;
};

static long long read_key(const char *path, const char *key)
{
	char line[256], fmt[64];
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	snprintf(fmt, sizeof(fmt), "%s: %%lld", key);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, fmt, &v) == 1)
			break;
	fclose(f);
	return v;
}

static long long dbg_jobs(int dev, const char *key)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/kernel/debug/accel/wafer.%d/jobs", dev);
	return read_key(path, key);
}

static long meminfo_kib(const char *key)
{
	return (long)read_key("/proc/meminfo", key);
}

static int start_tenant(struct sup *s, int dev)
{
	int t = sh->ntenants;
	int64_t life_ms = (int64_t)wt_rng_range(&s->rng, 3000, 10000);
	pid_t pid;

	if (t >= MAX_TENANTS) {
		s->cur[dev] = -1;
		return 0;
	}
	sh->ntenants++;
	sh->tenant[t] = (struct tenant_rec){ .dev = dev, .passed = t % 2, .t_end = s->t_end,
		.t_cap = s->t_end, .life_ns = life_ms * 1000000 };
	pid = fork();
	if (pid == 0)
		tenant_main(t);
	if (pid < 0)
		return -1;
	setpgid(pid, pid);
	sh->tenant[t].pid = pid;
	s->cur[dev] = t;
	s->started++;
	return 0;
}

/* Notes a reaped tenant; starts the next on its device. */
static void tenant_ended(struct sup *s, pid_t pid, int st)
{
	int t, d;

	for (t = 0; t < sh->ntenants && sh->tenant[t].pid != pid; t++)
		;
	if (t == sh->ntenants)
		return;	/* an orphaned submitter or helper (we are the subreaper) */
	sh->tenant[t].exited = 1;
	d = sh->tenant[t].dev;
	if (!(WIFSIGNALED(st) && sh->tenant[t].killed) &&
	    !(WIFEXITED(st) && (WEXITSTATUS(st) == EX_OK ||
				(WEXITSTATUS(st) == EX_NODEV && sh->tenant[t].unplugged)))) {
		wt_diag("tenant %d (device %d) ended with %#x", t, d, st);
		s->failed++;
	}
	if (s->cur[d] == t) {
		s->cur[d] = -1;
		if (!sh->stop && !sh->unplugged[d] && start_tenant(s, d))
			s->failed++;
	}
}

static void reap(struct sup *s)
{
	pid_t pid;
	int st;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0)
		if (pid != s->reader)
			tenant_ended(s, pid, st);
		else if (!WIFEXITED(st) || WEXITSTATUS(st))
			s->failed++;
}

static int has_jobs(struct sup *s, int t);

/* SIGKILLs a running tenant with its submitters, or one submitter: whether it did. */
static int kill_some(struct sup *s, int whole)
{
	int d0 = (int)wt_rng_range(&s->rng, 0, ndev - 1), d, t = -1, i;

	for (i = 0; i < ndev && t < 0; i++) {
		d = (d0 + i) % ndev;
		if (!sh->unplugged[d] && s->cur[d] >= 0 && has_jobs(s, s->cur[d]))
			t = s->cur[d];
	}
	if (t < 0)
		return 0;
	if (whole) {
		sh->tenant[t].killed = 1;
		kill(-sh->tenant[t].pid, SIGKILL);
		s->tenant_kills++;
		return 1;
	}
	for (i = sh->nsubs - 1; i >= 0; i--) {
		struct sub_rec *r = &sh->sub[i];

		if (r->tenant == t && r->pid > 0 && !r->killed && r->njobs) {
			r->killed = 1;
			kill(r->pid, SIGKILL);
			s->sub_kills++;
			return 1;
		}
	}
	return 0;
}

static void inject_hang(struct sup *s)
{
	int d = (int)wt_rng_range(&s->rng, 0, ndev - 1), ret;

	if (sh->unplugged[d])
		return;
	ret = wt_inject_fault(d, "hang");
	/*
	 * Queued behind jobs it may time out itself (that resets the device
	 * too), or be failed by the reset of an earlier hang (-EIO: it never ran).
	 */
	if (ret == -ETIMEDOUT || ret == -EIO)
		s->hang_lost++;
	else if (!wt_ok(!ret, "inject hang on device %d (%d)", d, ret))
		s->failed++;
	else
		s->hangs++;
}

/* Waits (reaping) until @pred holds or @ms pass: whether it held. */
static int wait_until(struct sup *s, int (*pred)(struct sup *, int), int arg, int ms)
{
	int64_t until = wt_deadline_ms(ms);

	for (;;) {
		reap(s);
		if (pred(s, arg))
			return 1;
		if (now_ns() > until)
			return 0;
		usleep(20000);
	}
}

static int tenant_gone(struct sup *s, int t)
{
	(void)s;
	return sh->tenant[t].exited;
}

static int node_back(struct sup *s, int d)
{
	int node = wt_accel_index(d), fd;

	(void)s;
	fd = node < 0 ? -1 : wt_dev_open(node);
	if (fd >= 0)
		close(fd);
	return fd >= 0;
}

static int has_jobs(struct sup *s, int t)
{
	int i, n = 0;

	(void)s;
	/*
	 * A tenant killed whole stays its device's current one until reaped:
	 * neither killed again nor unbound under (it would stop, but not on
	 * -ENODEV, and the unbind check would fail).
	 */
	if (sh->tenant[t].killed)
		return 0;
	for (i = 0; i < sh->nsubs; i++)
		n += sh->sub[i].tenant == t && sh->sub[i].pid > 0 ? sh->sub[i].njobs : 0;
	return n >= 2 * BATCH;
}

/* Prints where a process is in the kernel ("# " lines), for a failed wait. */
static void show_stack(const char *who, pid_t pid)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stack", (int)pid);
	f = fopen(path, "r");
	if (!f) {
		printf("# %s %d: no %s (%s)\n", who, (int)pid, path, strerror(errno));
		return;
	}
	printf("# %s %d, its kernel stack:\n", who, (int)pid);
	while (fgets(line, sizeof(line), f))
		printf("#   %s", line);
	fclose(f);
}

/* Tenant @t and its submitters still alive, where each waits. */
static void show_tenant(int t)
{
	int i;

	show_stack("tenant", sh->tenant[t].pid);
	for (i = 0; i < sh->nsubs; i++)
		if (sh->sub[i].tenant == t && sh->sub[i].pid > 0 && kill(sh->sub[i].pid, 0) == 0)
			show_stack("submitter", sh->sub[i].pid);
	fflush(stdout);	/* before the next fork() copies the buffer */
}

/*
 * Unbinds device @d under its running tenant, which must stop by itself
 * (-ENODEV) with every job accounted for, then binds it again: 0, or -1
 * when that failed.  1: no tenant with jobs there yet (one being
 * restarted, or a slow guest), to be tried again; @last: fail then.
 */
static int unbind_cycle(struct sup *s, int d, int last)
{
	char name[32];
	int t = s->cur[d], ret;

	if (t >= 0 && sh->tenant[t].killed)
		t = -1;	/* killed, not yet reaped: wait for the next */
	/* It must still be running when the device goes. */
	if (t >= 0)
		__atomic_store_n(&sh->tenant[t].t_end, hard_deadline, __ATOMIC_RELAXED);
	if (t < 0 || !wait_until(s, has_jobs, t, 10000)) {
		if (!last)
			return 1;
		return wt_ok(0, "device %d: a running tenant to unbind under", d) - 1;
	}
	snprintf(name, sizeof(name), "wafer.%d", d);
	s->resets_acc += dbg_jobs(d, "resets") - s->resets0[d];
	sh->tenant[t].unplugged = 1;
	sh->unplugged[d] = 1;
	sh->bind_gen[d]++;
	ret = wt_sysfs_write("/sys/bus/platform/drivers/wafer/unbind", name);
	wt_ok(!ret, "unbind %s under tenant %d (%d)", name, t, ret);
	ret = !ret && wait_until(s, tenant_gone, t, 60000);
	/*
	 * Those of its submitters not killed before, nor done before (their
	 * time up: on a slow guest all three may be), stop on -ENODEV.
	 */
	wt_ok(ret && (sh->tenant[t].nodev_subs > 0 || sh->tenant[t].ok_subs > 0) &&
	      sh->tenant[t].nodev_subs + sh->tenant[t].killed_subs + sh->tenant[t].ok_subs == NSUB,
	      "tenant %d stopped by itself after the unbind, %d of its %d submitters on -ENODEV "
	      "(%d killed before, %d done before)", t, sh->tenant[t].nodev_subs, NSUB,
	      sh->tenant[t].killed_subs, sh->tenant[t].ok_subs);
	if (!ret) {
		show_tenant(t);
		sh->tenant[t].killed = 1;
		kill(-sh->tenant[t].pid, SIGKILL);
		wait_until(s, tenant_gone, t, 60000);
	}
	ret = wt_sysfs_write("/sys/bus/platform/drivers/wafer/bind", name) || !ret;
	ret = !wt_ok(!ret && wait_until(s, node_back, d, 30000),
		     "%s bound again, its node opens", name);
	s->resets0[d] = dbg_jobs(d, "resets");
	sh->unplugged[d] = 0;
	s->unbinds++;
	return ret || start_tenant(s, d) ? -1 : 0;
}

/* Whether every kind of action the supervisor takes has happened yet. */
static int actions_done(struct sup *s, int did_unbind)
{
	long long resets = s->resets_acc;
	int d;

	for (d = 0; d < ndev; d++)
		if (!sh->unplugged[d])
			resets += dbg_jobs(d, "resets") - s->resets0[d];
	return s->tenant_kills && s->sub_kills && s->hangs && resets > 0 && did_unbind;
}

/*
 * Until the deadline: kills, hangs, one unbind; tenants restart when reaped.
 * A guest too slow for every action to happen in time (a kill needs a
 * tenant with jobs in flight, a reset a job behind an injected hang) gets
 * more time, 10 s at a time, up to twice the run's length.
 */
static void supervise(struct sup *s)
{
	int64_t t_unbind = wt_deadline_ms(secs * 400ll);
	int64_t t_unbind_last = wt_deadline_ms(secs * 800ll);
	int64_t t_last = wt_deadline_ms(secs * 2000ll);
	int did_unbind = unbind_dev >= ndev, ret;

	/*
	 * Each action in turn (on a random device), so that each happens: a
	 * kill that finds no tenant with jobs enough is tried again (a few
	 * times) before the plan moves on.
	 */
	static const char plan[] = "khsh.k.h";
	unsigned int step = 0, tries = 0;

	while (s->failed < 10) {
		char r = plan[step % (sizeof(plan) - 1)];
		int done = 1;

		if (now_ns() >= s->t_end) {
			if (s->t_end >= t_last || actions_done(s, did_unbind))
				break;
			s->t_end += 10 * 1000000000ll;
		}

		usleep((unsigned int)wt_rng_range(&s->rng, 300, 1200) * 1000);
		reap(s);
		if (!did_unbind && now_ns() > t_unbind) {
			ret = unbind_cycle(s, unbind_dev, now_ns() > t_unbind_last);
			did_unbind = ret != 1;
			s->failed += ret < 0;
			continue;
		}
		if (r == 'k' && s->tenant_kills < MAX_KILLS)
			done = kill_some(s, 1);
		else if (r == 's' && s->sub_kills < MAX_KILLS)
			done = kill_some(s, 0);
		else if (r == 'h')
			inject_hang(s);
		if (done || ++tries == 8) {
			step++;
			tries = 0;
		}
	}
}

static int all_gone(struct sup *s, int unused)
{
	int t;

	(void)unused;
	for (t = 0; t < sh->ntenants; t++)
		if (!sh->tenant[t].exited || kill(-sh->tenant[t].pid, 0) == 0)
			return 0;
	return !s->reader;
}

/* Stops everything; the processes left must end by themselves. */
static void wind_down(struct sup *s)
{
	int st, t;

	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
	if (s->reader > 0 && waitpid(s->reader, &st, 0) == s->reader) {
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			s->failed++;
		s->reader = 0;
	}
	if (!wt_ok(wait_until(s, all_gone, 0, 120000), "every tenant and submitter ended")) {
		for (t = 0; t < sh->ntenants; t++)
			if (!sh->tenant[t].exited)
				kill(-sh->tenant[t].pid, SIGKILL);
		wait_until(s, all_gone, 0, 30000);
	}
}

struct tally {
	long jobs, counted, excluded, ok, st_timedout, st_io, st_canceled, st_nodev, st_inval;
	long lost, dup, bad, uring, ioctl, order_checks;
};

/* The supervisor's own count over every job of the processes not killed. */
static int account(struct tally *c)
{
	int i, k;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < sh->nsubs && i < MAX_SUBS; i++) {
		const struct sub_rec *r = &sh->sub[i];
		const struct tenant_rec *tr = &sh->tenant[r->tenant];

		c->jobs += r->njobs;
		if (r->killed || tr->killed) {
			c->excluded += r->njobs;
			continue;
		}
		c->order_checks += r->order_checked;
		for (k = 0; k < r->njobs; k++) {
			const struct jrec *j = &r->job[k];

			c->counted++;
			c->lost += !j->done;
			c->dup += j->done > 1;
			c->uring += j->how == HOW_URING;
			c->ioctl += j->how == HOW_IOCTL;
			if (j->done != 1)
				continue;
			c->ok += !j->status;
			c->st_timedout += j->status == -ETIMEDOUT;
			c->st_io += j->status == -EIO;
			c->st_canceled += j->status == -ECANCELED;
			c->st_nodev += j->status == -ENODEV;
			c->st_inval += j->status == -EINVAL;
			/* A rejected job never succeeds, a valid one is never rejected. */
			c->bad += j->bad ? !j->status : j->status == -EINVAL;
			c->bad += j->status && j->status != -ETIMEDOUT && j->status != -EIO &&
				  j->status != -ECANCELED && j->status != -EINVAL &&
				  !(j->status == -ENODEV && tr->unplugged);
		}
	}
	return !c->lost && !c->dup && !c->bad;
}

static int kasan_kernel(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[256];
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, " kasan_quarantine_reduce") != NULL;
	if (f)
		fclose(f);
	return found;
}

/*
 * SUnreclaim may end this much above its start.  Without KASAN: 3 MiB
 * (runs ended 0.7-1 MiB above, whatever their job count: slabs kept
 * partially filled), so a leak of 1.5 KiB per job (a job's own structures)
 * shows over a 60 s run of 1500 jobs (the run's figures are printed).  KASAN keeps freed objects in
 * its quarantine, up to 1/32 of memory, so add that there: kmemleak is
 * the precise check on that kernel.
 */
static long slab_tolerance_kib(void)
{
	return 3072 + (kasan_kernel() ? meminfo_kib("MemTotal") / 32 : 0);
}

static long settled_sunreclaim(long target)
{
	long v = -1;
	int i;

	for (i = 0; i < 50; i++) {
		wt_sysfs_write("/proc/sys/vm/drop_caches", "3");
		v = meminfo_kib("SUnreclaim");
		if (v <= target)
			break;
		usleep(200000);
	}
	return v;
}

/* Every device idle, loadable again, decoding exactly. */
static void check_devices(struct sup *s, const uint32_t *expect)
{
	int d, ret, node;

	for (d = 0; d < ndev; d++) {
		int64_t until = wt_deadline_ms(60000);
		long long inflight;

		wt_inject_fault(d, "none");	/* a hang armed after the last job */
		while ((inflight = dbg_jobs(d, "in flight")) != 0 && now_ns() < until)
			usleep(20000);
		wt_ok(!inflight, "device %d: debugfs shows %lld jobs in flight", d, inflight);
		s->resets_acc += dbg_jobs(d, "resets") - s->resets0[d];
		node = wt_accel_index(d);
		until = wt_deadline_ms(60000);
		do {
			ret = node < 0 ? node : wt_decode_fresh_on(node, DECODE_N, expect);
			if (ret == -EBUSY)
				usleep(50000);
		} while (ret == -EBUSY && now_ns() < until);
		wt_ok(!ret, "device %d (accel%d): a fresh file loads the model and decodes %d "
		      "positions exactly (%d)", d, node, DECODE_N, ret);
	}
}

/* The packed model and the reference results of every prompt, in process. */
static int setup_reference(void)
{
	struct wfs_pack_opts po = { .wbits = 8, .group_size = 32 };
	struct wt_model ref;
	struct wfs_ckpt ck;
	int p, pos;

	if (wfs_ckpt_load(wt_model_path("stories260K.bin"), &ck))
		return -ENOENT;
	pos = wfs_pack(&ck, &po, &blob, &blob_len);
	wfs_ckpt_free(&ck);
	if (pos)
		return -EINVAL;
	for (pos = 0; pos < PLEN; pos++)
		prompt[PROMPTS][pos] = pos ? 0xffffff : 1;
	for (p = 0; p < PROMPTS; p++) {
		if (wt_model_open(&ref, blob, blob_len, CTX_LEN, 0))
			return -EINVAL;
		for (pos = 0; pos < PLEN; pos++) {
			prompt[p][pos] = pos ? 3 + (p * 37 + pos * 101) % 500 : 1;
			ref_arg[p][pos] = wt_model_step(&ref, prompt[p][pos], pos, TOPK,
							ref_topk[p][pos]);
		}
		wt_model_close(&ref);
	}
	return 0;
}

static void parse(int argc, char **argv, uint64_t *seed)
{
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--secs") && i + 1 < argc)
			secs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			*seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--unbind") && i + 1 < argc)
			unbind_dev = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: soak [--secs S] [--seed N] [--unbind DEV]\n");
			exit(2);
		}
	}
	for (ndev = 0; ndev < MAX_DEV && wt_accel_index(ndev) >= 0; ndev++)
		;
}

static void report(const struct sup *s, const struct tally *c, double dt)
{
	wt_diag("%.1f s: %ld jobs submitted, %ld of processes killed (not counted), %ld "
		"counted: %ld uring, %ld ioctl", dt, c->jobs, c->excluded, c->counted,
		c->uring, c->ioctl);
	wt_diag("statuses: %ld ok, %ld -EINVAL (rejected at intake), %ld -ETIMEDOUT, %ld -EIO, "
		"%ld -ECANCELED, %ld -ENODEV; %ld batches checked in order", c->ok, c->st_inval,
		c->st_timedout, c->st_io, c->st_canceled, c->st_nodev, c->order_checks);
	wt_diag("%.0f jobs/s (TCG guest); %d tenants (%d by a passed file), %d killed with "
		"their submitters, %d submitters killed alone; %d hangs injected (%d injections "
		"timed out or overtaken by a reset), %lld resets; %d unbind/bind; reader %ld ops",
		c->jobs / dt, s->started, (s->started + 1) / 2, s->tenant_kills, s->sub_kills,
		s->hangs, s->hang_lost, s->resets_acc, s->unbinds, sh->reader_ops);
	wt_diag("MODEL_LOAD / CTX_CREATE failed by a reset and sent again: %ld",
		sh->ctrl_eio);
}

int main(int argc, char **argv)
{
	struct sup s = { .resets_acc = 0 };
	uint32_t expect[DECODE_N];
	uint64_t seed = 1;
	struct tally c;
	long slab0, slab1, tol;
	double t0, t1;
	int d, closed = 0, t, ok;

	parse(argc, argv, &seed);
	wt_rng_seed(&s.rng, seed);
	if (ndev < 1 || setup_reference() || wt_decode_reference(DECODE_N, expect)) {
		printf("not ok - setup (%d devices)\n", ndev);
		return 1;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED || prctl(PR_SET_CHILD_SUBREAPER, 1))
		return 1;
	tol = slab_tolerance_kib();
	slab0 = settled_sunreclaim(0);
	wt_diag("seed %llu, %d s, %d devices (unbinding wafer.%d once), SUnreclaim %ld KiB "
		"at the start", (unsigned long long)seed, secs, ndev, unbind_dev, slab0);
	t0 = wt_now();
	s.t_end = wt_deadline_ms(secs * 1000ll);
	hard_deadline = wt_deadline_ms(secs * 1000ll + 240000);
	for (d = 0; d < ndev; d++) {
		s.resets0[d] = dbg_jobs(d, "resets");
		if (start_tenant(&s, d))
			return 1;
	}
	s.reader = fork();
	if (s.reader == 0)
		reader_main();
	supervise(&s);
	wind_down(&s);
	t1 = wt_now();
	wt_ok(!s.failed, "every tenant, submitter and the reader ended as it may (%d did not)",
	      s.failed);
	ok = account(&c);
	wt_ok(ok, "every counted job completed exactly once with an allowed status: "
	      "%ld lost, %ld completed twice, %ld with a status nothing explains", c.lost,
	      c.dup, c.bad);
	check_devices(&s, expect);
	report(&s, &c, t1 - t0);
	for (t = 0; t < sh->ntenants; t++)
		closed += sh->tenant[t].closed_ok;
	wt_ok(s.tenant_kills && s.sub_kills && s.hangs && s.resets_acc > 0 && s.unbinds ==
	      (unbind_dev < ndev) && closed && s.started > ndev + 1 && c.uring && c.ioctl &&
	      c.order_checks && c.st_inval && sh->reader_ops,
	      "every action happened (kills, hangs with resets, passed and closed files, "
	      "the unbind, both submission paths, rejected jobs, reader)");
	wt_ok(!sh->reader_errs, "GET_INFO and sysfs reads: %ld errors in %ld (last %ld), "
	      "the longest %ld ms", sh->reader_errs, sh->reader_ops, sh->reader_last_err,
	      sh->reader_max_ms);
	slab1 = settled_sunreclaim(slab0 + tol);
	wt_ok(slab1 >= 0 && slab1 <= slab0 + tol, "SUnreclaim %ld KiB at the end, %ld at the "
	      "start: %+ld KiB (%.1f B per job submitted), tolerance %ld KiB", slab1, slab0,
	      slab1 - slab0, c.jobs ? (slab1 - slab0) * 1024.0 / c.jobs : 0.0, tol);
	return wt_done();
}
