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

#include "wdrv_drv.h"
#include "wdrv_heartbeat.h"
#include "wdrv_job.h"

/* A period far longer than the firmware's idle beat, even under emulation. */
#define WDRV_HEARTBEAT_MIN_MS	3000

static unsigned long hb_period(void)
{
	return msecs_to_jiffies(max(wdrv_job_timeout_ms, WDRV_HEARTBEAT_MIN_MS));
}

/* Idle: a command processor that runs must have beaten since the last look. */
static bool hb_device_idle(struct wdrv_device *wdev)
{
	return !wdrv_job_queue_inflight(wdev) && !wdrv_fw_ctrl_busy(&wdev->fw);
}

static void wdrv_heartbeat_work(struct work_struct *work)
{
	struct wdrv_heartbeat *hb = container_of(to_delayed_work(work),
						  struct wdrv_heartbeat, work);
	struct wdrv_device *wdev = container_of(hb, struct wdrv_device, hb);
	bool idle;
	u32 beat, resets;
	int idx;

	/* Unplugged: the firmware is stopped with the device. */
	if (!drm_dev_enter(&wdev->drm, &idx))
		return;
	idle = hb_device_idle(wdev);
	beat = wdrv_fw_read_reg(&wdev->fw, WFW_REG_HEARTBEAT);
	resets = wdrv_fw_read_reg(&wdev->fw, WFW_REG_RESET_COUNT);
	if (hb->idle && idle && beat == hb->beat && resets == hb->resets) {
		hb->stalls++;
		wdrv_job_fw_fault(wdev, "the heartbeat stopped");
		idle = false;	/* one recovery per stop */
	}
	hb->beat = beat;
	hb->resets = resets;
	hb->idle = idle;
	drm_dev_exit(idx);
	queue_delayed_work(system_wq, &hb->work, hb_period());
}

/**
 * wdrv_heartbeat_start() - start watching the firmware's heartbeat
 * @wdev: the device, its firmware and job queue up
 */
void wdrv_heartbeat_start(struct wdrv_device *wdev)
{
	INIT_DELAYED_WORK(&wdev->hb.work, wdrv_heartbeat_work);
	queue_delayed_work(system_wq, &wdev->hb.work, hb_period());
}

/**
 * wdrv_heartbeat_stop() - stop watching (before the firmware goes)
 * @wdev: the device
 */
void wdrv_heartbeat_stop(struct wdrv_device *wdev)
{
	cancel_delayed_work_sync(&wdev->hb.work);
}

/**
 * wdrv_heartbeat_show() - debugfs "heartbeat"
 * @wdev: the device
 * @m: where to print
 */
void wdrv_heartbeat_show(struct wdrv_device *wdev, struct seq_file *m)
{
	seq_printf(m, "beat: %u\nstalls: %u\n",
		   wdrv_fw_read_reg(&wdev->fw, WFW_REG_HEARTBEAT), READ_ONCE(wdev->hb.stalls));
}
