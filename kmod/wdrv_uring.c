// SPDX-License-Identifier: GPL-2.0-only
/*
 * wafer io_uring front end.
 *
 * IORING_OP_URING_CMD with cmd_op DRM_WAFER_URING_CMD_SUBMIT carries the
 * same struct drm_wafer_job as DRM_IOCTL_WAFER_SUBMIT in an SQE128's command
 * area.  The job is queued exactly as the ioctl queues it; when its finished
 * fence signals, the command completes from task work with the job's status
 * as the CQE's res and, on CQE32 rings, its modelled device time in
 * big_cqe[0] (its modelled completion time, with DRM_WAFER_JOB_DONE_NS).
 *
 * io_uring first issues a command inline, from the submitting task with
 * IO_URING_F_NONBLOCK: the job is then submitted without sleeping
 * (wdrv_job_submit()'s @nowait) and only what would have had to wait
 * returns -EAGAIN, which io_uring retries blocking from an io-wq worker.
 * The file counts the three outcomes (fdinfo: drm-wafer-uring-*).
 *
 * Exactly-once completion: the fence callback and cancellation (the ring
 * going away, e.g. its process exiting) race through
 * dma_fence_remove_callback(): cancellation completes the command only if
 * it removed the callback before it ran; otherwise the callback's task work
 * does.  The job itself still runs (and is freed) in either case.
 */
#include <linux/dma-fence.h>
#include <linux/io_uring/cmd.h>
#include <linux/io_uring_types.h>
#include <linux/string.h>

#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_print.h>
#include <drm/wafer_accel.h>

#include "wdrv_drv.h"
#include "wdrv_job.h"
#include "wdrv_uring.h"

/* Bytes of command area in an SQE128 (its second half plus sqe->cmd). */
#define WDRV_URING_CMD_AREA	80

/**
 * struct wdrv_uring_pdu - a submitted command's state, in its inline pdu
 * @cb: on the job's finished fence
 * @result: the job's result (reference held)
 *
 * Kept in io_uring_cmd's pdu (32 bytes) rather than allocated: one
 * allocation and free less per command.
 */
struct wdrv_uring_pdu {
	struct dma_fence_cb cb;
	struct wdrv_job_result *result;
};

static struct wdrv_uring_pdu *cmd_pdu(struct io_uring_cmd *ioucmd)
{
	return io_uring_cmd_to_pdu(ioucmd, struct wdrv_uring_pdu);
}

static struct io_uring_cmd *pdu_cmd(struct wdrv_uring_pdu *pdu)
{
	return container_of((void *)pdu, struct io_uring_cmd, pdu);
}

/*
 * Posts the CQE and drops the command's reference on the result, read
 * first: once io_uring_cmd_done() returns the command (and its pdu) may be
 * reused.  io_uring_cmd_done() also takes the command off the cancelable
 * list, under the ring's lock, so a cancellation cannot see it after.
 */
static void req_complete(struct io_uring_cmd *ioucmd, int status, u64 device_ns,
			 unsigned int issue_flags)
{
	struct wdrv_job_result *r = cmd_pdu(ioucmd)->result;

	io_uring_cmd_done(ioucmd, status, device_ns, issue_flags);
	wdrv_job_result_put(r);
}

static void wdrv_uring_task_done(struct io_uring_cmd *ioucmd, unsigned int issue_flags)
{
	struct wdrv_job_result *r = cmd_pdu(ioucmd)->result;

	req_complete(ioucmd, r->finished->error,
		     r->cqe_done_ns ? r->done_ns : r->device_ns, issue_flags);
}

/*
 * Completes from task work.  Lazily: on a DEFER_TASKRUN ring whose task
 * waits for N completions, io_uring wakes it once the N-th is queued, not
 * at the first (io_uring falls back to a wake per command in a link).
 */
static void complete_in_task(struct io_uring_cmd *ioucmd)
{
	io_uring_cmd_do_in_task_lazy(ioucmd, wdrv_uring_task_done);
}

/* Runs where the fence signals (may be atomic): defer to task work. */
static void wdrv_uring_fence_cb(struct dma_fence *f, struct dma_fence_cb *cb)
{
	complete_in_task(pdu_cmd(container_of(cb, struct wdrv_uring_pdu, cb)));
}

static int wdrv_uring_cancel(struct io_uring_cmd *ioucmd, unsigned int issue_flags)
{
	struct wdrv_uring_pdu *pdu = cmd_pdu(ioucmd);

	/* Lost the race: the fence callback's task work completes it. */
	if (!dma_fence_remove_callback(pdu->result->finished, &pdu->cb))
		return 0;
	req_complete(ioucmd, -ECANCELED, 0, issue_flags);
	return 0;
}

/*
 * The command area of @ioucmd's own SQE.  From Linux 6.11 (5eff57fa9f3a)
 * until d10f19dff56e ("io_uring/uring_cmd: unconditionally copy SQEs at
 * prep time", 6.14; not in Debian's 6.12) io_uring copies a command's SQE
 * into req->async_data when its inline issue returns -EAGAIN but leaves
 * ioucmd->sqe on the ring's SQE, which userspace may have reused by the
 * time an io-wq worker issues the command again: the worker would run
 * another command's job under this one's user_data (uapi_fuzz saw it).  A
 * blocking issue is either that retry or an IOSQE_ASYNC command, whose SQE
 * io_uring copied to the same place at prep: read the copy.  (A linked
 * command is first issued when its predecessor completes, from the ring's
 * SQE on those kernels: nothing a driver can do; docs/DRIVER.md,
 * "Submission and completion", tells users what to do instead.)
 */
static const void *uring_cmd_area(struct io_uring_cmd *ioucmd, unsigned int issue_flags)
{
#ifdef WDRV_URING_STALE_SQE	/* Kbuild: Linux 6.11 to 6.13 */
	struct io_kiocb *req = cmd_to_io_kiocb(ioucmd);

	if (!(issue_flags & IO_URING_F_NONBLOCK) && req->async_data)
		return io_uring_sqe_cmd(req->async_data);
#endif
	return io_uring_sqe_cmd(ioucmd->sqe);
}

/* Counts how a submission went: inline, retried from a worker, or blocking. */
static void count_issue(struct wdrv_file *wfile, bool nowait, int ret)
{
	if (!nowait)
		atomic64_inc(&wfile->uring_blocking);
	else if (ret == -EAGAIN)
		atomic64_inc(&wfile->uring_punted);
	else
		atomic64_inc(&wfile->uring_inline);
}

/**
 * wdrv_uring_cmd() - file_operations.uring_cmd of the accel node
 * @ioucmd: the command
 * @issue_flags: IO_URING_F_*
 *
 * Return: -EIOCBQUEUED once the job is queued (the CQE follows), or a
 * negative errno: -EINVAL without SQE128, for an unknown cmd_op or non-zero
 * bytes after the job in the command area, -EAGAIN when called
 * non-blocking and submitting would sleep (io_uring retries from a
 * worker), -ENODEV after unplug, or whatever DRM_IOCTL_WAFER_SUBMIT would
 * return for the job.
 */
int wdrv_uring_cmd(struct io_uring_cmd *ioucmd, unsigned int issue_flags)
{
	struct drm_file *file = ioucmd->file->private_data;
	struct drm_device *dev = file->minor->dev;
	bool nowait = issue_flags & IO_URING_F_NONBLOCK;
	struct wdrv_uring_pdu *pdu = cmd_pdu(ioucmd);
	struct drm_wafer_job job;
	const u8 *area;
	int idx, ret;

	if (issue_flags & IO_URING_F_CANCEL)
		return wdrv_uring_cancel(ioucmd, issue_flags);
	if (ioucmd->cmd_op != DRM_WAFER_URING_CMD_SUBMIT) {
		drm_dbg(dev, "uring_cmd: unknown cmd_op 0x%x\n", ioucmd->cmd_op);
		return -EINVAL;
	}
	if (!(issue_flags & IO_URING_F_SQE128)) {
		drm_dbg(dev, "uring_cmd: the ring needs IORING_SETUP_SQE128\n");
		return -EINVAL;
	}
	/* uring_inline=0: the old way, every command through io-wq. */
	if (nowait && !READ_ONCE(wdrv_uring_inline)) {
		count_issue(to_wafer_file(file), nowait, -EAGAIN);
		return -EAGAIN;
	}
	BUILD_BUG_ON(sizeof(job) > WDRV_URING_CMD_AREA);
	/* One copy: userspace may rewrite the SQE while we validate. */
	area = uring_cmd_area(ioucmd, issue_flags);
	memcpy(&job, area, sizeof(job));
	if (job.flags & DRM_WAFER_JOB_WAIT_SUBMIT) {
		/* The wait sleeps: io-wq's worker does it, outside drm_dev_enter(). */
		ret = nowait ? -EAGAIN : wdrv_job_wait_submitted(file, &job);
		if (ret) {
			count_issue(to_wafer_file(file), nowait, ret);
			return ret;
		}
	}
	if (!drm_dev_enter(dev, &idx))
		return -ENODEV;
	/*
	 * The area past the job is reserved: zero, so it can carry fields
	 * later (the job's layer and pad came so: the job fills it now).
	 */
	if (memchr_inv(area + sizeof(job), 0, WDRV_URING_CMD_AREA - sizeof(job))) {
		drm_dbg(dev, "uring_cmd: non-zero bytes past the job in the command area\n");
		ret = -EINVAL;
		goto out;
	}

	/* A cancel between marking and adding the callback finds it unlinked. */
	INIT_LIST_HEAD(&pdu->cb.node);
	ret = wdrv_job_submit(file, &job, NULL, &pdu->result, nowait);
	if (ret)
		goto out;
	/*
	 * Cancelable before the callback can run: once it may have run, its
	 * task work may have completed the command, and marking it then would
	 * leave a completed command on the ring's cancelable list.
	 */
	io_uring_cmd_mark_cancelable(ioucmd, issue_flags);
	/*
	 * Already done (a NOP can be): complete from task work as the callback
	 * would, not from inside the issue, which may be io_uring's inline one.
	 */
	if (dma_fence_add_callback(pdu->result->finished, &pdu->cb, wdrv_uring_fence_cb))
		complete_in_task(ioucmd);
	ret = -EIOCBQUEUED;
out:
	count_issue(to_wafer_file(file), nowait, ret);
	drm_dev_exit(idx);
	return ret;
}
