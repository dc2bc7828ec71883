// SPDX-License-Identifier: MIT
/*
 * wfw_host.c - the host's half of the firmware ABI (see wfw_host.h).
 */
#include "wfw_host.h"

#include "wfs_os.h"
#include "wfs_ring.h"

int wfw_host_enable_rings(struct wfs_device *dev, u64 cmd_addr, u32 cmd_entries,
			  u64 cpl_addr, u32 cpl_entries)
{
	wfs_device_mmio_write32(dev, WFW_REG_CMD_BASE_LO, (u32)cmd_addr);
	wfs_device_mmio_write32(dev, WFW_REG_CMD_BASE_HI, (u32)(cmd_addr >> 32));
	wfs_device_mmio_write32(dev, WFW_REG_CMD_SIZE, cmd_entries);
	wfs_device_mmio_write32(dev, WFW_REG_CPL_BASE_LO, (u32)cpl_addr);
	wfs_device_mmio_write32(dev, WFW_REG_CPL_BASE_HI, (u32)(cpl_addr >> 32));
	wfs_device_mmio_write32(dev, WFW_REG_CPL_SIZE, cpl_entries);
	wfs_device_mmio_write32(dev, WFW_REG_IRQ_MASK, WFW_IRQ_ALL);
	wfs_device_mmio_write32(dev, WFW_REG_CTRL, WFW_CTRL_ENABLE);
	if (!(wfs_device_mmio_read32(dev, WFW_REG_STATUS) & WFW_STATUS_ENABLED))
		return -WFS_EIO;
	return 0;
}

int wfw_host_has_ctl_ring(struct wfs_device *dev)
{
	u32 abi = wfs_device_mmio_read32(dev, WFW_REG_ABI_VERSION);

	return WFW_ABI_VERSION_MAJOR(abi) == WFW_ABI_MAJOR &&
	       WFW_ABI_VERSION_MINOR(abi) >= WFW_ABI_MINOR_CTL_RING;
}

void wfw_host_set_ctl_ring(struct wfs_device *dev, u64 addr, u32 entries)
{
	wfs_device_mmio_write32(dev, WFW_REG_CTL_BASE_LO, (u32)addr);
	wfs_device_mmio_write32(dev, WFW_REG_CTL_BASE_HI, (u32)(addr >> 32));
	wfs_device_mmio_write32(dev, WFW_REG_CTL_SIZE, entries);
}

/* Copies @n commands to a ring whose registers are @head_reg, @tail_reg. */
static int ring_put(struct wfs_device *dev, u32 head_reg, u32 tail_reg,
		    struct wfw_cmd *ring, u32 entries, u32 *tail,
		    const struct wfw_cmd *cmds, u32 n)
{
	u32 head = wfs_device_mmio_read32(dev, head_reg), i;

	if (wfs_ring_space(head, *tail, entries) < n)
		return -WFS_EBUSY;
	for (i = 0; i < n; i++)
		WFS_MEMCPY(&ring[wfs_ring_slot(*tail + i, entries)], &cmds[i], sizeof(cmds[i]));
	/* The descriptors must be visible before the tail that publishes them. */
	wfs_os_wmb();
	*tail += n;
	wfs_device_mmio_write32(dev, tail_reg, *tail);
	return 0;
}

int wfw_host_put(struct wfs_device *dev, struct wfw_cmd *ring, u32 entries, u32 *tail,
		 const struct wfw_cmd *cmds, u32 n)
{
	return ring_put(dev, WFW_REG_CMD_HEAD, WFW_REG_CMD_TAIL, ring, entries, tail, cmds, n);
}

int wfw_host_put_ctl(struct wfs_device *dev, struct wfw_cmd *ring, u32 entries, u32 *tail,
		     const struct wfw_cmd *cmds, u32 n)
{
	return ring_put(dev, WFW_REG_CTL_HEAD, WFW_REG_CTL_TAIL, ring, entries, tail, cmds, n);
}

enum wfw_host_cpl wfw_host_cpl_take(const struct wfw_cpl *ring, u32 entries, u32 *head,
				    u32 last_seq, struct wfw_cpl *out)
{
	WFS_MEMCPY(out, &ring[wfs_ring_slot(*head, entries)], sizeof(*out));
	(*head)++;
	if (wfw_cpl_check(out) != out->check || !(out->flags & WFW_CPL_F_VALID))
		return WFW_HOST_CPL_CORRUPT;
	return out->seq == last_seq + 1 ? WFW_HOST_CPL_OK : WFW_HOST_CPL_LOST;
}

u32 wfw_host_irq_ack(struct wfs_device *dev)
{
	u32 status = wfs_device_mmio_read32(dev, WFW_REG_IRQ_STATUS);

	wfs_device_mmio_write32(dev, WFW_REG_IRQ_ACK, status);
	return status;
}
