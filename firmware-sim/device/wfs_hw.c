// SPDX-License-Identifier: MIT
/*
 * wfs_hw.c - register block, interrupt delivery and fault latching (see
 * wfs_hw.h).
 */
#include "wfs_hw.h"

u32 wfs_reg_get(struct wfs_hw *hw, u32 off)
{
	return wfs_os_load32(&hw->regs[off / 4]);
}

void wfs_reg_set(struct wfs_hw *hw, u32 off, u32 val)
{
	wfs_os_store32(&hw->regs[off / 4], val);
}

void wfs_reg_update(struct wfs_hw *hw, u32 off, u32 set, u32 clear)
{
	u32 *p = &hw->regs[off / 4];
	u32 old = wfs_os_load32(p), cur;

	for (;;) {
		cur = wfs_os_cmpxchg32(p, old, (old | set) & ~clear);
		if (cur == old)
			break;
		old = cur;
	}
}

/*
 * Deliver the interrupt from a firmware thread.  Calls are serialised with
 * irq_running; a raise that finds another thread delivering leaves
 * irq_kick set, and the deliverer loops until no kick is left.
 */
static void irq_deliver(struct wfs_hw *hw)
{
	if (!hw->irq)
		return;
	wfs_os_xchg32(&hw->irq_kick, 1);
	for (;;) {
		if (wfs_os_cmpxchg32(&hw->irq_running, 0, 1) != 0)
			return;
		while (wfs_os_xchg32(&hw->irq_kick, 0)) {
			if (wfs_reg_get(hw, WFW_REG_IRQ_STATUS) &
			    wfs_reg_get(hw, WFW_REG_IRQ_MASK))
				hw->irq(hw->irq_ctx);
		}
		wfs_os_store32(&hw->irq_running, 0);
		if (!wfs_os_load32(&hw->irq_kick))
			return;
	}
}

void wfs_raise_irq(struct wfs_hw *hw, u32 bits)
{
	wfs_reg_update(hw, WFW_REG_IRQ_STATUS, bits, 0);
	irq_deliver(hw);
}

void wfs_raise_irq_deferred(struct wfs_hw *hw, u32 bits)
{
	wfs_reg_update(hw, WFW_REG_IRQ_STATUS, bits, 0);
	wfs_os_store32(&hw->irq_kick, 1);
	wfs_os_event_signal(hw->kick);
}

void wfs_set_fault(struct wfs_hw *hw, u32 fault)
{
	wfs_reg_update(hw, WFW_REG_FAULT, fault, 0);
	wfs_reg_update(hw, WFW_REG_STATUS, WFW_STATUS_FAULT, 0);
	wfs_log_printf(&hw->log, 1, "fault 0x%x: command processing halted until reset",
		       fault);
	wfs_raise_irq_deferred(hw, WFW_IRQ_FAULT);
}

void wfs_hw_kick(struct wfs_hw *hw)
{
	wfs_os_event_signal(hw->kick);
}
