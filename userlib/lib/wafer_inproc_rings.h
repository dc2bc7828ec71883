/* SPDX-License-Identifier: MIT */
/*
 * wafer_inproc_rings.h - bringing up the command and completion rings of a
 * firmware-sim device in this process through its registers (wfw_abi.h).
 * Shared by wafer_inproc_hw.c and tests/unit/device_harness.h.
 */
#ifndef WAFER_INPROC_RINGS_H
#define WAFER_INPROC_RINGS_H

#include "wfs_device.h"
#include "wfw_abi.h"

/*
 * Program both rings' bases and sizes, unmask every interrupt and enable.
 * After create (and after a hardware reset) the indices are 0.  Returns 0,
 * or -EIO if the device did not report itself enabled.
 */
int wip_rings_enable(struct wfs_device *dev, const struct wfw_cmd *cmdq, u32 cmd_entries,
		     const struct wfw_cpl *cplq, u32 cpl_entries);

#endif /* WAFER_INPROC_RINGS_H */
