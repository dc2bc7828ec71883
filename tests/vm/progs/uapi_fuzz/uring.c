// SPDX-License-Identifier: MIT
/*
 * uring.c - uapi_fuzz: io_uring submission of jobs and reaping of their CQEs.
 */
#include "uapi_fuzz.h"

void ring_setup(struct tctx *t)
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

void reap(struct tctx *t, int wait_all)
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

void op_uring(struct tctx *t, int fi, int fd)
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

void op_uring_reset(struct tctx *t)
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
