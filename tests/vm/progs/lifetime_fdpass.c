// SPDX-License-Identifier: MIT
/*
 * VM test: a device file shared between processes.
 *
 * Everything a wafer file owns (BO handles, the model, contexts, job
 * seqnos and their results) belongs to the struct file, not to the process
 * that opened it (kmod/wdrv_drv.c wdrv_open/postclose, wdrv_model.c,
 * wdrv_wait.c).  So:
 *
 *  1. SCM_RIGHTS: a sender loads the model, creates a context and BOs,
 *     runs a job and submits one more, then passes the fd over a UNIX
 *     socket to an unrelated process (exec'd, not holding the device).
 *     The receiver uses the sender's handles and context, submits by ioctl
 *     and io_uring while the sender closes its copy and exits, waits on the
 *     sender's unwaited seqno, and checks every result against
 *     firmware-sim.  Its seqnos continue the sender's, the sender's waited
 *     seqno is gone (-ENOENT), fdinfo names the same client, and the model
 *     stays loaded until the receiver closes.  Another file sees none of it.
 *  2. fork: a child submits on the inherited fd, the parent waits on the
 *     child's seqno and both read the result; the child's own WAIT then
 *     says -ENOENT (one result per file).  With io_uring too.
 *  3. fork, the parent exits first: the orphaned child waits on the
 *     parent's job, submits its own, and the model lives until it exits.
 *
 * Usage: lifetime_fdpass
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <liburing.h>

#include "wt_dev.h"
#include "wt_model.h"
#include "wt_util.h"

#define TOPK	4
#define N	8		/* tokens per job: a greedy sequence, prefilled */
#define SLOTS	8		/* one slot and one output region per job */
#define RS	DRM_WAFER_RESULT_SIZE(TOPK)

/* What the sender tells the receiver along with the fd. */
struct handoff {
	uint32_t model_id, ctx_id, in_handle, out_handle;
	uint64_t waited_seqno, pending_seqno;	/* pending: submitted, not waited */
	uint32_t pending_slot;
	uint32_t expect[N];
	char client_id[32];
};

static uint32_t expect[N];

static int get_info(int fd, struct drm_wafer_device_info *info)
{
	struct drm_wafer_get_info gi = { .info_ptr = (uintptr_t)info,
					 .info_size = sizeof(*info) };

	memset(info, 0, sizeof(*info));
	return wt_ioctl(fd, DRM_IOCTL_WAFER_GET_INFO, &gi);
}

/* "drm-client-id" of @fd from /proc/self/fdinfo, or "". */
static void client_id(int fd, char *buf, size_t len)
{
	char path[64], line[128];
	FILE *f;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "drm-client-id:", 14))
			snprintf(buf, len, "%s", line + 14 + strspn(line + 14, " \t"));
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
}

static struct drm_wafer_job job_for(uint32_t ctx, uint32_t in, uint32_t out, uint32_t slot)
{
	return (struct drm_wafer_job){ .ctx_id = ctx, .slot = slot, .n_tokens = N,
		.flags = DRM_WAFER_JOB_ALL_POSITIONS, .top_k = TOPK, .in_handle = in,
		.out_handle = out, .out_offset = (uint64_t)slot * N * RS };
}

/* Zeroes @slot's results so that a stale result cannot pass the check. */
static void clear_slot(void *out, uint32_t slot)
{
	memset((char *)out + (size_t)slot * N * RS, 0, (size_t)N * RS);
}

/* Whether @slot's results are the greedy sequence, position by position. */
static int slot_ok(const void *out, uint32_t slot, const uint32_t *want)
{
	uint32_t p;

	for (p = 0; p < N; p++) {
		const struct drm_wafer_token_result *r =
			(const void *)((const char *)out + ((size_t)slot * N + p) * RS);

		if (r->position != p || r->argmax != want[p] || r->top_k != TOPK)
			return 0;
	}
	return 1;
}

static int submit(int fd, const struct drm_wafer_job *j, uint64_t *seqno)
{
	struct drm_wafer_submit s = { .job = *j };
	int ret = wt_ioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &s);

	*seqno = s.seqno;
	return ret;
}

/* One io_uring command on @fd; returns its CQE's res. */
static int uring_job(int fd, const struct drm_wafer_job *j)
{
	struct io_uring ring;
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	int res;

	if (io_uring_queue_init(4, &ring, IORING_SETUP_SQE128))
		return -1000;
	sqe = io_uring_get_sqe(&ring);
	if (!sqe)
		return -1002;
	wt_uring_prep_submit(sqe, fd, j, 0);
	io_uring_submit(&ring);
	res = io_uring_wait_cqe(&ring, &cqe) ? -1001 : cqe->res;
	io_uring_queue_exit(&ring);
	return res;
}

static void *map_bo(int fd, uint32_t handle, size_t *size)
{
	struct drm_wafer_bo_info i = { .handle = handle };
	void *p;

	if (wt_ioctl(fd, DRM_IOCTL_WAFER_BO_INFO, &i))
		return NULL;
	p = mmap(NULL, i.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, i.mmap_offset);
	*size = i.size;
	return p == MAP_FAILED ? NULL : p;
}

/* A file with the model, a context of SLOTS x N and the input/output BOs. */
struct setup {
	int fd;
	struct wt_dev_model m;
	struct wt_bo in, out;
};

static int setup(struct setup *s)
{
	int ret;

	s->fd = wt_dev_open(0);
	if (s->fd < 0)
		return s->fd;
	ret = wt_dev_load_model(s->fd, 8, SLOTS, N, &s->m);
	if (!ret)
		ret = wt_bo_new(s->fd, &s->in, N * 4);
	if (!ret)
		ret = wt_bo_new(s->fd, &s->out, (size_t)SLOTS * N * RS);
	if (ret)
		return ret;
	((uint32_t *)s->in.map)[0] = 1;
	memcpy((uint32_t *)s->in.map + 1, expect, (N - 1) * 4);
	free(s->m.blob);
	s->m.blob = NULL;
	return 0;
}

/*
 * Whether a fresh file can load the model (and unload it: it closes) with
 * @others models of other files on the device beside it (a device holds
 * several): -EBUSY if the device then holds another number.
 */
static int model_free(unsigned int others)
{
	struct drm_wafer_device_info info;
	struct wt_dev_model m;
	int fd = wt_dev_open(0), ret;

	if (fd < 0)
		return fd;
	ret = wt_dev_load_model(fd, 8, 1, N, &m);
	if (!ret)
		ret = get_info(fd, &info);
	if (!ret && info.models_loaded != others + 1)
		ret = -EBUSY;
	free(m.blob);
	close(fd);
	return ret;
}

/* ------------------------------------------------ 1. SCM_RIGHTS passing -- */

static int send_fd(int sock, int fd, const struct handoff *h)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = (void *)h, .iov_len = sizeof(*h) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == (ssize_t)sizeof(*h) ? 0 : -1;
}

static int recv_fd(int sock, struct handoff *h)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = h, .iov_len = sizeof(*h) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	int fd;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != (ssize_t)sizeof(*h))
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

/*
 * The sender, a child of main that opens the device after the fork: runs
 * one job and waits for it, submits another, passes the fd, and once the
 * receiver has jobs in flight closes everything and exits.
 */
static int sender(int sock)
{
	struct drm_wafer_job j;
	struct handoff h = { 0 };
	struct setup s;
	char c;
	int ret;

	ret = setup(&s);
	if (!wt_ok(!ret, "sender: model, context and BOs (%d)", ret))
		return 1;
	clear_slot(s.out.map, 0);
	j = job_for(s.m.ctx_id, s.in.handle, s.out.handle, 0);
	ret = submit(s.fd, &j, &h.waited_seqno);
	if (!ret)
		ret = wt_wait_job(s.fd, h.waited_seqno, NULL);
	wt_ok(!ret && slot_ok(s.out.map, 0, expect), "sender: its own job is right (%d)", ret);
	h.pending_slot = 1;
	clear_slot(s.out.map, 1);
	j = job_for(s.m.ctx_id, s.in.handle, s.out.handle, 1);
	ret = submit(s.fd, &j, &h.pending_seqno);
	h.model_id = s.m.model_id;
	h.ctx_id = s.m.ctx_id;
	h.in_handle = s.in.handle;
	h.out_handle = s.out.handle;
	memcpy(h.expect, expect, sizeof(expect));
	client_id(s.fd, h.client_id, sizeof(h.client_id));
	ret = ret ? ret : send_fd(sock, s.fd, &h);
	wt_ok(!ret, "sender: fd %d sent with handles, context %u, seqno %llu pending, client %s",
	      s.fd, h.ctx_id, (unsigned long long)h.pending_seqno, h.client_id);
	/* Close our copy while the receiver's jobs are in flight. */
	if (read(sock, &c, 1) != 1)
		return 1;
	munmap(s.in.map, s.in.size);
	munmap(s.out.map, s.out.size);
	ret = close(s.fd);
	wt_ok(!ret, "sender: closed its copy and exits");
	return wt_failures() ? 1 : 0;
}

/* The receiver: exec'd by a child of main, so it never had the device. */
static int receiver(int sock)
{
	struct drm_wafer_device_info info;
	struct drm_wafer_job j;
	struct handoff h;
	size_t in_size, out_size;
	uint64_t seq_ioctl, seqno;
	void *in, *out;
	char cid[32];
	int fd, other, ret, res;

	fd = recv_fd(sock, &h);
	if (!wt_ok(fd >= 0, "receiver: got an fd"))
		return 1;
	memcpy(expect, h.expect, sizeof(expect));
	client_id(fd, cid, sizeof(cid));
	wt_ok(cid[0] && !strcmp(cid, h.client_id),
	      "receiver: the same DRM client as the sender (%s vs %s)", cid, h.client_id);
	/* The sender's handles are the file's: they map here. */
	in = map_bo(fd, h.in_handle, &in_size);
	out = map_bo(fd, h.out_handle, &out_size);
	if (!wt_ok(in && out && ((uint32_t *)in)[0] == 1,
		   "receiver: maps the sender's BOs by handle"))
		return 1;
	clear_slot(out, 2);
	clear_slot(out, 3);
	j = job_for(h.ctx_id, h.in_handle, h.out_handle, 2);
	ret = submit(fd, &j, &seq_ioctl);
	wt_ok(!ret && seq_ioctl > h.pending_seqno,
	      "receiver: SUBMIT on the sender's context, seqno %llu follows the sender's %llu (%d)",
	      (unsigned long long)seq_ioctl, (unsigned long long)h.pending_seqno, ret);
	/* Jobs in flight: the sender may close now, before the uring command. */
	if (write(sock, "c", 1) != 1)
		return 1;
	j = job_for(h.ctx_id, h.in_handle, h.out_handle, 3);
	res = uring_job(fd, &j);
	wt_ok(res == 0 && slot_ok(out, 3, expect), "receiver: io_uring job right (%d)", res);
	ret = wt_wait_job(fd, seq_ioctl, NULL);
	wt_ok(!ret && slot_ok(out, 2, expect), "receiver: ioctl job right (%d)", ret);
	ret = wt_wait_job(fd, h.pending_seqno, NULL);
	wt_ok(!ret && slot_ok(out, h.pending_slot, expect),
	      "receiver: WAIT on the sender's pending seqno, and its result is right (%d)", ret);
	ret = wt_wait_job(fd, h.waited_seqno, NULL);
	wt_ok(ret == -ENOENT, "receiver: the sender's waited seqno is gone (%d)", ret);

	/* Wait for the sender to be gone (the socket's other end closes). */
	while (read(sock, cid, 1) > 0)
		;
	ret = get_info(fd, &info);
	wt_ok(!ret && info.models_loaded == 1 && info.contexts == 1,
	      "receiver: the sender exited, the model and context live on (%u, %u)",
	      info.models_loaded, info.contexts);
	clear_slot(out, 4);
	j = job_for(h.ctx_id, h.in_handle, h.out_handle, 4);
	ret = submit(fd, &j, &seqno);
	if (!ret)
		ret = wt_wait_job(fd, seqno, NULL);
	wt_ok(!ret && slot_ok(out, 4, expect), "receiver: a job after the sender exited (%d)",
	      ret);

	/* Another file of the device owns none of it. */
	other = wt_dev_open(0);
	j = job_for(h.ctx_id, h.in_handle, h.out_handle, 5);
	ret = other < 0 ? other : submit(other, &j, &seqno);
	wt_ok(ret == -ENOENT, "receiver: another file cannot use the context (%d)", ret);
	ret = other < 0 ? other : wt_wait_job(other, seq_ioctl, NULL);
	wt_ok(ret == -EINVAL, "receiver: nor wait on this file's seqnos (%d)", ret);
	/* A device holds several models: another file's loads beside this one's. */
	ret = model_free(1);
	wt_ok(!ret, "receiver: another file loads a model beside this file's (%d)", ret);
	if (other >= 0)
		close(other);

	munmap(in, in_size);
	munmap(out, out_size);
	close(fd);
	ret = model_free(0);
	wt_ok(!ret, "receiver: after its close, another file loads the model (%d)", ret);
	return wt_failures() ? 1 : 0;
}

static int wait_child(pid_t pid, const char *what)
{
	int st = 0;

	waitpid(pid, &st, 0);
	return wt_ok(WIFEXITED(st) && !WEXITSTATUS(st), "%s exited cleanly (%#x)", what, st);
}

static void scm_rights(void)
{
	pid_t snd, rcv;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		wt_ok(0, "socketpair");
		return;
	}
	snd = fork();
	if (snd == 0) {
		close(sv[1]);
		_exit(sender(sv[0]));
	}
	rcv = fork();
	if (rcv == 0) {
		char arg[16];

		close(sv[0]);
		snprintf(arg, sizeof(arg), "%d", sv[1]);
		execl("/proc/self/exe", "lifetime_fdpass", "--receiver", arg, (char *)NULL);
		_exit(127);
	}
	close(sv[0]);
	close(sv[1]);
	wait_child(snd, "the sender");
	wait_child(rcv, "the receiver");
}

/* ---------------------------------------------------------- 2. fork -- */

static void fork_shared(void)
{
	struct drm_wafer_job j;
	struct setup s;
	uint64_t seqno = 0;
	int ret, p2c[2], c2p[2];
	pid_t pid;

	ret = setup(&s);
	if (!wt_ok(!ret, "fork: model, context and BOs (%d)", ret) || pipe(p2c) || pipe(c2p))
		return;
	clear_slot(s.out.map, 0);
	clear_slot(s.out.map, 1);
	pid = fork();
	if (pid == 0) {
		char c;

		close(c2p[0]);
		close(p2c[1]);
		j = job_for(s.m.ctx_id, s.in.handle, s.out.handle, 0);
		ret = submit(s.fd, &j, &seqno);
		if (ret || write(c2p[1], &seqno, sizeof(seqno)) != sizeof(seqno))
			_exit(2);
		/* The parent has waited for it: the result is in our mapping too. */
		if (read(p2c[0], &c, 1) != 1)
			_exit(3);
		wt_ok(slot_ok(s.out.map, 0, expect), "fork child: sees the result");
		ret = wt_wait_job(s.fd, seqno, NULL);
		wt_ok(ret == -ENOENT, "fork child: its seqno was consumed by the parent's WAIT (%d)",
		      ret);
		j = job_for(s.m.ctx_id, s.in.handle, s.out.handle, 1);
		ret = uring_job(s.fd, &j);
		wt_ok(!ret && slot_ok(s.out.map, 1, expect),
		      "fork child: io_uring on the inherited fd (%d)", ret);
		_exit(wt_failures() ? 1 : 0);
	}
	/* Only the child writes: its exit ends our read. */
	close(c2p[1]);
	close(p2c[0]);
	ret = read(c2p[0], &seqno, sizeof(seqno)) == sizeof(seqno) ? 0 : -EIO;
	if (!ret)
		ret = wt_wait_job(s.fd, seqno, NULL);
	wt_ok(!ret && slot_ok(s.out.map, 0, expect),
	      "fork parent: WAIT on the child's seqno %llu, result right (%d)",
	      (unsigned long long)seqno, ret);
	if (write(p2c[1], "w", 1) != 1)
		ret = -EIO;
	wait_child(pid, "the fork child");
	wt_ok(slot_ok(s.out.map, 1, expect), "fork parent: sees the child's io_uring result");
	close(p2c[1]);
	close(c2p[0]);
	munmap(s.in.map, s.in.size);
	munmap(s.out.map, s.out.size);
	close(s.fd);
	ret = model_free(0);
	wt_ok(!ret, "fork: both closed, another file loads the model (%d)", ret);
}

/* ---------------------------------------- 3. fork, the parent exits first -- */

static void fork_orphan(void)
{
	pid_t parent, pid;
	int pfd[2], st = 0, ret;

	if (pipe(pfd))
		return;
	parent = fork();
	if (parent == 0) {
		struct drm_wafer_job j;
		struct setup s;
		uint64_t seqno = 0;

		close(pfd[0]);
		if (setup(&s))
			_exit(2);
		pid_t me = getpid();

		clear_slot(s.out.map, 0);
		clear_slot(s.out.map, 1);
		pid = fork();
		if (pid == 0) {
			struct drm_wafer_device_info info;
			int i;

			close(pfd[1]);
			/* Wait for the parent to be gone (we are reparented to main). */
			for (i = 0; i < 6000 && getppid() == me; i++)
				usleep(10000);
			if (!wt_ok(getppid() != me, "orphan: the parent is gone"))
				_exit(1);
			seqno = 1;	/* the parent's only job */
			ret = wt_wait_job(s.fd, seqno, NULL);
			wt_ok(!ret && slot_ok(s.out.map, 0, expect),
			      "orphan: WAIT on the exited parent's job, result right (%d)", ret);
			ret = get_info(s.fd, &info);
			wt_ok(!ret && info.models_loaded == 1 && info.contexts == 1,
			      "orphan: the parent's model and context live on (%u, %u)",
			      info.models_loaded, info.contexts);
			j = job_for(s.m.ctx_id, s.in.handle, s.out.handle, 1);
			ret = submit(s.fd, &j, &seqno);
			if (!ret)
				ret = wt_wait_job(s.fd, seqno, NULL);
			wt_ok(!ret && seqno == 2 && slot_ok(s.out.map, 1, expect),
			      "orphan: its own job, seqno %llu (%d)", (unsigned long long)seqno, ret);
			j = job_for(s.m.ctx_id, s.in.handle, s.out.handle, 2);
			ret = uring_job(s.fd, &j);
			wt_ok(!ret && slot_ok(s.out.map, 2, expect), "orphan: io_uring job (%d)", ret);
			_exit(wt_failures() ? 1 : 0);
		}
		j = job_for(s.m.ctx_id, s.in.handle, s.out.handle, 0);
		ret = submit(s.fd, &j, &seqno);
		/* Tell main who the orphan is, and exit with the job in flight. */
		if (ret || seqno != 1 || write(pfd[1], &pid, sizeof(pid)) != sizeof(pid))
			_exit(3);
		_exit(0);
	}
	close(pfd[1]);
	ret = read(pfd[0], &pid, sizeof(pid)) == sizeof(pid);
	close(pfd[0]);
	waitpid(parent, &st, 0);
	if (!wt_ok(ret && WIFEXITED(st) && !WEXITSTATUS(st),
		   "orphan: the parent submitted and exited first (%#x)", st))
		return;
	wait_child(pid, "the orphan");	/* we are its subreaper */
	ret = model_free(0);
	wt_ok(!ret, "orphan: after it exits, another file loads the model (%d)", ret);
}

int main(int argc, char **argv)
{
	struct wfs_topk_entry topk[TOPK];
	struct wt_dev_model m;
	struct wt_model ref;
	int fd, i;

	/* Children print too: nothing may sit in a buffer at fork time. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "--receiver"))
		return receiver(atoi(argv[2]));

	/* The greedy sequence from token 1, by firmware-sim in-process. */
	fd = wt_dev_open(0);
	if (fd < 0 || wt_dev_load_model(fd, 8, 1, N, &m) ||
	    wt_model_open(&ref, m.blob, m.blob_len, N, 0)) {
		printf("not ok - setup\n");
		return 1;
	}
	close(fd);
	for (i = 0; i < N; i++)
		expect[i] = wt_model_step(&ref, i ? expect[i - 1] : 1, i, TOPK, topk);
	wt_model_close(&ref);
	free(m.blob);
	/* Orphans are reparented to us, so we can reap them. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);

	scm_rights();
	fork_shared();
	fork_orphan();
	return wt_done();
}
