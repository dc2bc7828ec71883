// SPDX-License-Identifier: GPL-2.0-only
/*
 * wafer heartbeat.  The firmware's command processor bumps HEARTBEAT on
 * every pass of its loop, at least every 100 ms while idle.  A job that
 * stops is caught by its timeout, but a firmware that stops while no job
 * is in flight would go unnoticed until the next user waits on it.  So a
 * delayed work samples the register: a heartbeat that did not move over a
 * whole period that began and ended with the device idle (no job, no
 * control command under way) and without a reset means the firmware is
 * dead, and the device is recovered like after any other firmware fault.
 */
#include <linux/jiffies.h>
#include <linux/minmax.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/workqueue.h>

#include <drm/drm_drv.h>

#include "wafer_drv.h"
#include "wafer_heartbeat.h"
#include "wafer_job.h"

/* A period far longer than the firmware's idle beat, even under emulation. */
#define WAFER_HEARTBEAT_MIN_MS	3000

static unsigned long hb_period(void)
{
	return msecs_to_jiffies(max(wafer_job_timeout_ms, WAFER_HEARTBEAT_MIN_MS));
}

/* Idle: a command processor that runs must have beaten since the last look. */
static bool hb_device_idle(struct wafer_device *wdev)
{
	return !wafer_job_queue_inflight(wdev) && !mutex_is_locked(&wdev->fw.ctrl_lock);
}

static void wafer_heartbeat_work(struct work_struct *work)
{
	struct wafer_heartbeat *hb = container_of(to_delayed_work(work),
						  struct wafer_heartbeat, work);
	struct wafer_device *wdev = container_of(hb, struct wafer_device, hb);
	bool idle;
	u32 beat, resets;
	int idx;

	/* Unplugged: the firmware is stopped with the device. */
	if (!drm_dev_enter(&wdev->drm, &idx))
		return;
	idle = hb_device_idle(wdev);
	beat = wafer_fw_read_reg(&wdev->fw, WFW_REG_HEARTBEAT);
	resets = wafer_fw_read_reg(&wdev->fw, WFW_REG_RESET_COUNT);
	if (hb->idle && idle && beat == hb->beat && resets == hb->resets) {
		hb->stalls++;
		wafer_job_fw_fault(wdev, "the heartbeat stopped");
		idle = false;	/* one recovery per stop */
	}
	hb->beat = beat;
	hb->resets = resets;
	hb->idle = idle;
	drm_dev_exit(idx);
	queue_delayed_work(system_wq, &hb->work, hb_period());
}

/**
 * wafer_heartbeat_start() - start watching the firmware's heartbeat
 * @wdev: the device, its firmware and job queue up
 */
void wafer_heartbeat_start(struct wafer_device *wdev)
{
	INIT_DELAYED_WORK(&wdev->hb.work, wafer_heartbeat_work);
	queue_delayed_work(system_wq, &wdev->hb.work, hb_period());
}

/**
 * wafer_heartbeat_stop() - stop watching (before the firmware goes)
 * @wdev: the device
 */
void wafer_heartbeat_stop(struct wafer_device *wdev)
{
	cancel_delayed_work_sync(&wdev->hb.work);
}

/**
 * wafer_heartbeat_show() - debugfs "heartbeat"
 * @wdev: the device
 * @m: where to print
 */
void wafer_heartbeat_show(struct wafer_device *wdev, struct seq_file *m)
{
	seq_printf(m, "beat: %u\nstalls: %u\n",
		   wafer_fw_read_reg(&wdev->fw, WFW_REG_HEARTBEAT), READ_ONCE(wdev->hb.stalls));
}
