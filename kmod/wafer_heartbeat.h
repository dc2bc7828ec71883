/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wafer heartbeat: notices a firmware that stopped while no job was in
 * flight (a stopped job is caught by its timeout).
 */
#ifndef WAFER_HEARTBEAT_H
#define WAFER_HEARTBEAT_H

struct seq_file;
struct wafer_device;

void wafer_heartbeat_start(struct wafer_device *wdev);
void wafer_heartbeat_stop(struct wafer_device *wdev);
void wafer_heartbeat_show(struct wafer_device *wdev, struct seq_file *m);

#endif /* WAFER_HEARTBEAT_H */
