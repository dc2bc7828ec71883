// SPDX-License-Identifier: MIT
/*
 * files.c - uapi_fuzz: closing and reopening files, fork, signals.
 */
#include "uapi_fuzz.h"

int open_file(int fi)
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

void op_reopen(struct tctx *t, int fi)
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
void op_fork(struct tctx *t, int fi, int fd, unsigned int gen)
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

void op_signal(struct tctx *t)
{
	int to = (int)rn(t, nthreads);

	if (to != t->idx && threads[to].th)
		pthread_kill(threads[to].th, SIGUSR1);
	count(OP_SIGNAL, 0);
}
