// SPDX-License-Identifier: MIT
/*
 * wfs_cpl.c - ring configuration and completion posting (see
 * wfs_cpl.h).
 */
#include "wfs_cpl.h"
#include "wfs_ring.h"

/* Value a corrupted completion's fields are XORed with / set to. */
#define CPL_CORRUPT_COOKIE	0xa5a5a5a55a5a5a5aull
#define CPL_CORRUPT_STATUS	0x7ead0000

static u64 reg_addr(struct wfs_hw *hw, u32 lo, u32 hi)
{
	return ((u64)wfs_reg_get(hw, hi) << 32) | wfs_reg_get(hw, lo);
}

int wfs_cpl_enable_rings(struct wfs_hw *hw, struct wfs_cpl_state *r)
{
	u32 cmd_size = wfs_reg_get(hw, WFW_REG_CMD_SIZE);
	u32 cpl_size = wfs_reg_get(hw, WFW_REG_CPL_SIZE);
	u64 cmd_base = reg_addr(hw, WFW_REG_CMD_BASE_LO, WFW_REG_CMD_BASE_HI);
	u64 cpl_base = reg_addr(hw, WFW_REG_CPL_BASE_LO, WFW_REG_CPL_BASE_HI);

	if (!wfs_ring_size_valid(cmd_size, WFW_RING_MAX_ENTRIES) ||
	    !wfs_ring_size_valid(cpl_size, WFW_RING_MAX_ENTRIES) ||
	    !cmd_base || !cpl_base ||
	    !WFS_IS_ALIGNED(cmd_base, (u64)WFW_RING_ALIGN) ||
	    !WFS_IS_ALIGNED(cpl_base, (u64)WFW_RING_ALIGN))
		return -WFS_EINVAL;
	wfs_os_mutex_lock(r->lock);
	r->cmd_base = cmd_base;
	r->cpl_base = cpl_base;
	r->cmd_size = cmd_size;
	r->cpl_size = cpl_size;
	wfs_os_mutex_unlock(r->lock);
	return 0;
}

void wfs_cpl_cmd_ring(struct wfs_cpl_state *r, u64 *base, u32 *size)
{
	wfs_os_mutex_lock(r->lock);
	*base = r->cmd_base;
	*size = r->cmd_size;
	wfs_os_mutex_unlock(r->lock);
}

void wfs_cpl_reset(struct wfs_cpl_state *r)
{
	wfs_os_mutex_lock(r->lock);
	r->cpl_tail = 0;
	r->cpl_head_seen = 0;
	r->cpl_seq = 0;
	r->cpl_reserved = 0;
	r->faults_armed = 0;
	wfs_os_mutex_unlock(r->lock);
}

int wfs_cpl_reserve(struct wfs_hw *hw, struct wfs_cpl_state *r)
{
	u32 head, used;
	int ret = 0;

	wfs_os_mutex_lock(r->lock);
	head = wfs_reg_get(hw, WFW_REG_CPL_HEAD);
	if (!wfs_ring_advance_valid(r->cpl_head_seen, head, r->cpl_tail)) {
		ret = -WFS_EIO;
	} else {
		r->cpl_head_seen = head;
		used = wfs_ring_count(head, r->cpl_tail) + r->cpl_reserved;
		if (used >= r->cpl_size)
			ret = -WFS_EAGAIN;
		else
			r->cpl_reserved++;
	}
	wfs_os_mutex_unlock(r->lock);
	if (ret == -WFS_EIO)
		wfs_set_fault(hw, WFW_FAULT_CPL_HEAD);
	return ret;
}

void wfs_cpl_unreserve(struct wfs_cpl_state *r)
{
	wfs_os_mutex_lock(r->lock);
	if (r->cpl_reserved)
		r->cpl_reserved--;
	wfs_os_mutex_unlock(r->lock);
}

void wfs_cpl_post(struct wfs_hw *hw, struct wfs_cpl_state *r, struct wfw_cpl *c,
		  int is_job)
{
	u32 drop = 0, corrupt = 0;
	int ret;

	wfs_os_mutex_lock(r->lock);
	if (r->cpl_reserved)
		r->cpl_reserved--;
	if (is_job) {
		drop = r->faults_armed & (1u << WFW_FAULT_DROP_NEXT_CPL);
		corrupt = r->faults_armed & (1u << WFW_FAULT_CORRUPT_NEXT_CPL);
		r->faults_armed &= ~(drop | corrupt);
	}
	c->flags = WFW_CPL_F_VALID;
	c->seq = ++r->cpl_seq;	/* a dropped record leaves a gap */
	if (drop) {
		wfs_os_mutex_unlock(r->lock);
		wfs_log_printf(&hw->log, 1, "fault injection: dropped completion of cookie 0x%llx",
			       (unsigned long long)c->cookie);
		return;
	}
	c->check = wfw_cpl_check(c);
	if (corrupt) {
		c->cookie ^= CPL_CORRUPT_COOKIE;
		c->status = CPL_CORRUPT_STATUS;
	}
	ret = hw->dma.write(hw->dma_ctx,
			    wfs_ring_entry_addr(r->cpl_base, r->cpl_tail,
						r->cpl_size, sizeof(*c)),
			    c, sizeof(*c));
	if (!ret) {
		r->cpl_tail++;
		wfs_reg_set(hw, WFW_REG_CPL_TAIL, r->cpl_tail);
	}
	wfs_os_mutex_unlock(r->lock);
	if (ret) {
		wfs_set_fault(hw, WFW_FAULT_CPL_DMA);
		return;
	}
	if (corrupt)
		wfs_log_printf(&hw->log, 1, "fault injection: corrupted completion seq %u",
			       c->seq);
	wfs_raise_irq(hw, WFW_IRQ_CPL);
	/* A job's table entry is free: a RUN_JOB the CP holds may go. */
	if (is_job)
		wfs_hw_kick(hw);
}

void wfs_cpl_arm_fault(struct wfs_cpl_state *r, u32 fault)
{
	wfs_os_mutex_lock(r->lock);
	if (fault == WFW_FAULT_NONE)
		r->faults_armed = 0;
	else if (fault == WFW_FAULT_DROP_NEXT_CPL || fault == WFW_FAULT_CORRUPT_NEXT_CPL)
		r->faults_armed |= 1u << fault;
	wfs_os_mutex_unlock(r->lock);
}
