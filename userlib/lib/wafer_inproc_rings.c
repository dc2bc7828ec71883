// SPDX-License-Identifier: MIT
/* Ring bring-up of a firmware-sim device in this process (see wafer_inproc_rings.h). */
#include <errno.h>
#include <stdint.h>

#include "wafer_inproc_rings.h"

int wip_rings_enable(struct wfs_device *dev, const struct wfw_cmd *cmdq, u32 cmd_entries,
		     const struct wfw_cpl *cplq, u32 cpl_entries)
{
	uint64_t cb = (uint64_t)(uintptr_t)cmdq, pb = (uint64_t)(uintptr_t)cplq;

	wfs_device_mmio_write32(dev, WFW_REG_CMD_BASE_LO, (u32)cb);
	wfs_device_mmio_write32(dev, WFW_REG_CMD_BASE_HI, (u32)(cb >> 32));
	wfs_device_mmio_write32(dev, WFW_REG_CMD_SIZE, cmd_entries);
	wfs_device_mmio_write32(dev, WFW_REG_CPL_BASE_LO, (u32)pb);
	wfs_device_mmio_write32(dev, WFW_REG_CPL_BASE_HI, (u32)(pb >> 32));
	wfs_device_mmio_write32(dev, WFW_REG_CPL_SIZE, cpl_entries);
	wfs_device_mmio_write32(dev, WFW_REG_IRQ_MASK, WFW_IRQ_ALL);
	wfs_device_mmio_write32(dev, WFW_REG_CTRL, WFW_CTRL_ENABLE);
	return (wfs_device_mmio_read32(dev, WFW_REG_STATUS) & WFW_STATUS_ENABLED) ? 0 : -EIO;
}
