// SPDX-License-Identifier: MIT
/*
 * VM test: one model across N devices.  Device i of N loads
 * layers [i * L / N, (i + 1) * L / N) of stories260K (MODEL_LOAD's layer
 * range); the activation records between devices live in BOs device i
 * exports and device i + 1 imports (PRIME); device i + 1's job waits for
 * device i's through a syncobj both files share, so every job of every
 * device is queued before the first completes and userspace waits only
 * at the end.  SEQ sequences each run a prefill of PREFILL positions and
 * DECODE one-token steps: every result must be bit-identical to device 0
 * running the whole model, for N = 2 .. --devices, through the SUBMIT
 * ioctl or (--uring) io_uring.
 *
 * With --fault DEV (module loaded with fault_inject=1 and a short
 * job_timeout_ms) the next job of device DEV hangs during one prefill step
 * of the longest chain: it times out, every job downstream of a failed
 * job fails with -ECANCELED (its in-fence carries the error), every job
 * whose inputs all succeeded completes, and the chain then runs the whole
 * workload again bit-identical to one device.
 *
 * With --unbind DEV, device DEV is unbound (sysfs) while the whole
 * workload of the longest chain is queued: its jobs complete or fail with
 * -ENODEV, every job downstream of a failed one fails with -ECANCELED, the
 * others complete; after DEV is bound again a fresh chain is bit-identical.
 *
 * --only runs the longest chain alone (the debug kernel's shorter run).
 *
 * chain [--devices N] [--only] [--bits 8|4] [--uring] [--fault DEV]
 *       [--unbind DEV]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <liburing.h>

#include "wt_dev.h"
#include "wt_util.h"

#define SEQ	4
#define PREFILL	21
#define DECODE	6
#define NPOS	(PREFILL + DECODE)
#define CTX	64
#define TOPK	4
#define REC	DRM_WAFER_RESULT_SIZE(TOPK)
#define MAXDEV	8
#define LAYERS	5	/* stories260K */

struct dev {
	int fd;
	struct wt_dev_model m;
	struct wt_bo out;	/* OUT_ACT records, or the results (last) */
	uint32_t in_handle;	/* this file's handle of the input BO */
	uint32_t out_sync;	/* this file's syncobj its jobs signal */
	uint32_t in_sync;	/* the previous device's syncobj, imported */
	uint64_t seqno[SEQ * (1 + DECODE)];
	int status[SEQ * (1 + DECODE)];
	int jobs;
};

static uint32_t tokens[SEQ][NPOS];
static const uint8_t *golden_ref;	/* one device's results */
static int use_uring;
static struct io_uring ring;

static int syncobj_create(int fd, uint32_t *h)
{
	struct drm_syncobj_create c = { 0 };
	int ret = wt_ioctl(fd, DRM_IOCTL_SYNCOBJ_CREATE, &c);

	*h = c.handle;
	return ret;
}

/* @handle of file @from, as a handle of file @to (PRIME for BOs). */
static int bo_share(int from, uint32_t handle, int to, uint32_t *out)
{
	struct drm_prime_handle p = { .handle = handle, .flags = DRM_CLOEXEC | DRM_RDWR };
	int ret = wt_ioctl(from, DRM_IOCTL_PRIME_HANDLE_TO_FD, &p);

	if (ret)
		return ret;
	p.handle = 0;
	ret = wt_ioctl(to, DRM_IOCTL_PRIME_FD_TO_HANDLE, &p);
	close(p.fd);
	*out = p.handle;
	return ret;
}

/* The same drm_syncobj, in another file: exported and imported by fd. */
static int syncobj_share(int from, uint32_t handle, int to, uint32_t *out)
{
	struct drm_syncobj_handle p = { .handle = handle };
	int ret = wt_ioctl(from, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &p);

	if (ret)
		return ret;
	p.handle = 0;
	ret = wt_ioctl(to, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &p);
	close(p.fd);
	*out = p.handle;
	return ret;
}

static void chain_down(struct dev *d, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (d[i].out.map)
			munmap(d[i].out.map, d[i].out.size);
		free(d[i].m.blob);
		if (d[i].fd >= 0)
			close(d[i].fd);
	}
}

/* Loads the ranges and wires the BOs and syncobjs; 0 or -errno. */
static int chain_up(struct dev *d, int n, unsigned int bits)
{
	struct wt_bo tok;
	int i, ret = 0;

	memset(d, 0, sizeof(*d) * n);
	for (i = 0; i < n; i++)
		d[i].fd = -1;
	for (i = 0; i < n && !ret; i++) {
		uint32_t first = (uint32_t)i * LAYERS / n;
		uint32_t count = (uint32_t)(i + 1) * LAYERS / n - first;
		size_t rec = i == n - 1 ? REC : 0;

		d[i].fd = wt_dev_open(wt_accel_index(i));
		if (d[i].fd < 0)
			return d[i].fd;
		ret = wt_dev_load_range(d[i].fd, bits, first, count, SEQ, CTX, &d[i].m);
		if (!ret && d[i].m.n_layers != count)
			ret = -EPROTO;
		if (!ret)
			ret = wt_bo_new(d[i].fd, &d[i].out, (size_t)SEQ * NPOS *
					(rec ? rec : d[i].m.act_size));
		if (!ret)
			ret = syncobj_create(d[i].fd, &d[i].out_sync);
		if (!ret && i)
			ret = bo_share(d[i - 1].fd, d[i - 1].out.handle, d[i].fd,
				       &d[i].in_handle);
		if (!ret && i)
			ret = syncobj_share(d[i - 1].fd, d[i - 1].out_sync, d[i].fd,
					    &d[i].in_sync);
	}
	if (ret)
		return ret;
	ret = wt_bo_new(d[0].fd, &tok, sizeof(tokens));
	if (ret)
		return ret;
	memcpy(tok.map, tokens, sizeof(tokens));
	munmap(tok.map, tok.size);
	d[0].in_handle = tok.handle;
	return 0;
}

/*
 * io_uring issues SQEs in any order (a command may go to an io-wq
 * worker): a job would take its in-syncobj's fence before the previous
 * device's job is queued, and two jobs of one sequence could reach a
 * device out of position order.  So the SQEs of one sequence, all its
 * steps through all devices, are one link chain (@link: another follows);
 * sequences run side by side.  A command after a link is issued long after
 * its SQE went back to the ring: IOSQE_ASYNC has io_uring copy it at submit
 * (Linux 6.11-6.13 would read the ring's SQE, which the next sequence reuses).
 */
static int submit(struct dev *d, struct drm_wafer_job *j, int link)
{
	static int after_link;
	struct drm_wafer_submit s = { .job = *j };
	struct io_uring_sqe *sqe;
	int ret;

	if (!use_uring) {
		ret = wt_ioctl(d->fd, DRM_IOCTL_WAFER_SUBMIT, &s);
		d->seqno[d->jobs++] = s.seqno;
		return ret;
	}
	sqe = io_uring_get_sqe(&ring);
	if (!sqe)
		return -EBUSY;
	wt_uring_prep_submit(sqe, d->fd, j, (uint64_t)d->jobs++);
	if (after_link)
		sqe->flags |= IOSQE_ASYNC;
	after_link = link;
	if (link) {
		sqe->flags |= IOSQE_IO_LINK;
		return 0;
	}
	return io_uring_submit(&ring) >= 1 ? 0 : -EIO;
}

/* Device @i's job for sequence @s at @pos (@n positions). */
static int chain_job(struct dev *d, int n, int i, int s, uint32_t pos, uint32_t n_pos,
		     int link)
{
	size_t at = (size_t)s * NPOS + pos;
	int last = i == n - 1;
	struct drm_wafer_job j = {
		.ctx_id = d[i].m.ctx_id, .slot = (uint32_t)s, .start_pos = pos,
		.n_tokens = n_pos, .in_handle = d[i].in_handle,
		.out_handle = d[i].out.handle, .out_syncobj = d[i].out_sync,
	};

	j.in_offset = i ? at * d[i - 1].m.act_size : at * sizeof(uint32_t);
	j.out_offset = last ? at * REC : at * d[i].m.act_size;
	j.flags = (i ? DRM_WAFER_JOB_IN_ACT : 0) | (last ? 0 : DRM_WAFER_JOB_OUT_ACT);
	if (last) {
		j.top_k = TOPK;
		j.flags |= n_pos > 1 ? DRM_WAFER_JOB_ALL_POSITIONS : 0;
	}
	if (i) {
		j.in_syncobjs = (uintptr_t)&d[i].in_sync;
		j.in_syncobj_count = 1;
	}
	return submit(&d[i], &j, link);
}

/* Every job queued before any wait; then each job's status. */
static int chain_run(struct dev *d, int n)
{
	int s, i, k, step, bad = 0, total = 0;
	struct io_uring_cqe *cqe;

	if (use_uring) {
		for (s = 0; s < SEQ; s++) {
			for (step = 0; step <= DECODE; step++) {
				for (i = 0; i < n; i++) {
					bad += !!chain_job(d, n, i, s,
							   step ? PREFILL + step - 1 : 0,
							   step ? 1 : PREFILL,
							   step < DECODE || i < n - 1);
					total++;
				}
			}
		}
	} else {
		for (step = 0; step <= DECODE; step++) {
			for (s = 0; s < SEQ; s++) {
				for (i = 0; i < n; i++)
					bad += !!chain_job(d, n, i, s,
							   step ? PREFILL + step - 1 : 0,
							   step ? 1 : PREFILL, 0);
			}
		}
	}
	if (use_uring) {
		for (k = 0; k < total; k++) {
			if (io_uring_wait_cqe(&ring, &cqe)) {
				bad++;
				break;
			}
			if (cqe->res)
				wt_diag("CQE %llu: %d", (unsigned long long)cqe->user_data, cqe->res);
			bad += cqe->res != 0;
			io_uring_cqe_seen(&ring, cqe);
		}
		return bad;
	}
	for (i = 0; i < n; i++) {
		for (k = 0; k < d[i].jobs; k++) {
			d[i].status[k] = wt_wait_job(d[i].fd, d[i].seqno[k], NULL);
			bad += d[i].status[k] != 0;
		}
		d[i].jobs = 0;
	}
	return bad;
}

/*
 * One prefill step with device @dev's next job hung: which jobs fail, and
 * how.  The status of each job: 0 iff every job upstream of it succeeded,
 * else -ECANCELED, except those of @dev itself (the hung one times out,
 * those the reset dropped fail with -EIO).
 */
static void chain_fault(struct dev *d, int n, int dev)
{
	int s, i, upstream_ok, bad = 0, failed = 0, cancelled = 0, ret;

	ret = wt_inject_fault(dev, "hang");
	if (!wt_ok(!ret, "arm a hang on device %d (%d)", dev, ret))
		return;
	for (s = 0; s < SEQ; s++) {
		for (i = 0; i < n; i++)
			bad += !!chain_job(d, n, i, s, 0, PREFILL, 0);
	}
	for (i = 0; i < n; i++) {
		for (s = 0; s < d[i].jobs; s++)
			d[i].status[s] = wt_wait_job(d[i].fd, d[i].seqno[s], NULL);
	}
	for (s = 0; s < SEQ; s++) {
		upstream_ok = 1;
		for (i = 0; i < n; i++) {
			int st = d[i].status[s];

			if (i == dev && s == 0 && st != -ETIMEDOUT)
				bad++;
			else if (i == dev && s && st && st != -EIO)
				bad++;
			else if (i != dev && st != (upstream_ok ? 0 : -ECANCELED))
				bad++;
			failed += i == dev && st;
			cancelled += st == -ECANCELED;
			upstream_ok = upstream_ok && !st;
		}
	}
	for (i = 0; i < n; i++)
		d[i].jobs = 0;
	wt_ok(!bad, "a hang on device %d of %d: it times out, %d of its jobs fail, %d jobs downstream are cancelled, the rest complete (%d wrong)",
	      dev, n, failed, cancelled, bad);
}

/*
 * Device @dev unbound with the chain's workload queued: the statuses obey
 * the rule above, whatever had completed by then.  Binds it again.
 */
static void chain_unbind(struct dev *d, int n, int dev)
{
	char name[32];
	int s, i, k, step, bad = 0, gone = 0, cancelled = 0, ret;

	for (step = 0; step <= DECODE; step++) {
		for (s = 0; s < SEQ; s++) {
			for (i = 0; i < n; i++)
				bad += !!chain_job(d, n, i, s, step ? PREFILL + step - 1 : 0,
						   step ? 1 : PREFILL, 0);
		}
	}
	snprintf(name, sizeof(name), "wafer.%d", dev);
	ret = wt_sysfs_write("/sys/bus/platform/drivers/wafer/unbind", name);
	wt_ok(!ret && !bad, "unbind %s with %d jobs queued on the chain (%d)", name,
	      n * SEQ * (1 + DECODE), ret);
	for (i = 0; i < n; i++) {
		for (k = 0; k < d[i].jobs; k++)
			d[i].status[k] = wt_wait_job(d[i].fd, d[i].seqno[k], NULL);
	}
	/*
	 * WAIT on the unbound device says -ENODEV whether or not its job had
	 * run, so: upstream jobs complete, the unbound device's are 0 or
	 * -ENODEV, downstream ones 0 or -ECANCELED, and every completed job
	 * of the last device (job k is step k / SEQ of sequence k % SEQ) gave
	 * the results one device gives.
	 */
	for (k = 0; k < SEQ * (1 + DECODE); k++) {
		int step = k / SEQ, sq = k % SEQ;
		uint32_t pos = step ? PREFILL + step - 1 : 0, np = step ? 1 : PREFILL;
		size_t at = ((size_t)sq * NPOS + pos) * REC;

		for (i = 0; i < n; i++) {
			int st = d[i].status[k];

			if (i < dev ? st : i == dev ? st && st != -ENODEV :
			    st && st != -ECANCELED)
				bad++;
			gone += st == -ENODEV;
			cancelled += st == -ECANCELED;
		}
		if (!d[n - 1].status[k] &&
		    memcmp((uint8_t *)d[n - 1].out.map + at, golden_ref + at, np * REC))
			bad++;
	}
	for (i = 0; i < n; i++)
		d[i].jobs = 0;
	wt_ok(!bad, "after the unbind: %d jobs of %s gone (-ENODEV), %d downstream cancelled, the rest completed with the right results (%d wrong)",
	      gone, name, cancelled, bad);
	ret = wt_sysfs_write("/sys/bus/platform/drivers/wafer/bind", name);
	wt_ok(!ret, "bind %s again (%d)", name, ret);
}

int main(int argc, char **argv)
{
	struct dev d[MAXDEV];
	struct wt_rng r;
	unsigned int bits = 8;
	size_t total = (size_t)SEQ * NPOS * REC;
	uint8_t *golden = malloc(total);
	int max = 5, only = 0, fault = -1, unbind = -1, n, s, p, i, ret;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--devices") && i + 1 < argc)
			max = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--bits") && i + 1 < argc)
			bits = (unsigned int)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--uring"))
			use_uring = 1;
		else if (!strcmp(argv[i], "--only"))
			only = 1;
		else if (!strcmp(argv[i], "--fault") && i + 1 < argc)
			fault = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--unbind") && i + 1 < argc)
			unbind = atoi(argv[++i]);
	}
	if (max > MAXDEV || max > LAYERS)
		max = LAYERS;
	if (use_uring && io_uring_queue_init(256, &ring, IORING_SETUP_SQE128)) {
		printf("not ok - io_uring with SQE128\n");
		return 1;
	}
	wt_rng_seed(&r, 11);
	for (s = 0; s < SEQ; s++) {
		tokens[s][0] = 1;
		for (p = 1; p < NPOS; p++)
			tokens[s][p] = (uint32_t)wt_rng_range(&r, 3, 511);
	}
	wt_diag("int%u, %s, %d sequences x (prefill %d + %d steps)", bits,
		use_uring ? "io_uring" : "SUBMIT ioctl", SEQ, PREFILL, DECODE);

	ret = chain_up(d, 1, bits);
	ret = ret ? ret : chain_run(d, 1);
	if (!wt_ok(!ret, "the whole model on device 0 (%d)", ret))
		return wt_done();
	memcpy(golden, d[0].out.map, total);
	golden_ref = golden;
	chain_down(d, 1);

	for (n = only ? max : 2; n <= max; n++) {
		double t0 = wt_now();

		ret = chain_up(d, n, bits);
		if (!wt_ok(!ret, "%d devices: layer ranges loaded, BOs and syncobjs shared (%d)",
			   n, ret)) {
			chain_down(d, n);
			continue;
		}
		if (fault >= 0 && n == max)
			chain_fault(d, n, fault);
		if (unbind >= 0 && n == max) {
			chain_unbind(d, n, unbind);
			chain_down(d, n);
			ret = chain_up(d, n, bits);
			wt_ok(!ret, "%d devices again, %d rebound: ranges loaded (%d)", n, unbind, ret);
		}
		ret = chain_run(d, n);
		wt_ok(!ret && !memcmp(d[n - 1].out.map, golden, total),
		      "%d devices: all %d jobs completed and every result is identical to one device (%d failed, %.2f s)",
		      n, n * SEQ * (1 + DECODE), ret, wt_now() - t0);
		chain_down(d, n);
	}
	if (use_uring)
		io_uring_queue_exit(&ring);
	free(golden);
	return wt_done();
}
