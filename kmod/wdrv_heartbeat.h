/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wafer heartbeat: notices a firmware that stopped while no job was in
 * flight (a stopped job is caught by its timeout).
 */
#ifndef WDRV_HEARTBEAT_H
#define WDRV_HEARTBEAT_H

struct seq_file;
struct wdrv_device;

void wdrv_heartbeat_start(struct wdrv_device *wdev);
void wdrv_heartbeat_stop(struct wdrv_device *wdev);
void wdrv_heartbeat_show(struct wdrv_device *wdev, struct seq_file *m);

#endif /* WDRV_HEARTBEAT_H */
