// SPDX-License-Identifier: MIT
/*
 * Driver core of the in-process backend: brings a firmware-sim device up
 * and talks to it only through the firmware ABI (wfw_abi.h), with the
 * host half kmod/wdrv_fw.c uses too (wfw_host.h): DMA callbacks over
 * registered host regions (wafer_inproc_dma.c), a command ring the host
 * produces, a completion ring drained from the interrupt callback, control
 * commands waited for by cookie.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wafer_inproc_hw.h"
#include "../wafer_internal.h"
#include "wfs_ring.h"
#include "wfw_host.h"

/* Jobs' cookies are their table index + 1. */

static u32 rd(struct wip_hw *h, u32 off)
{
	return wfs_device_mmio_read32(h->dev, off);
}

static void wr(struct wip_hw *h, u32 off, u32 val)
{
	wfs_device_mmio_write32(h->dev, off, val);
}

/*
 * Hands a completion to the control waiter, the job queue or (a hook set)
 * @hooked, for irq() to pass on after unlocking; caller holds lock.
 */
static void dispatch(struct wip_hw *h, const struct wfw_cpl *c, struct wafer_completion *hooked,
		     unsigned int *n_hooked)
{
	uint64_t idx = c->cookie - 1;
	struct wafer_completion wc;

	if (c->cookie & WFW_HOST_COOKIE_CTRL) {
		if (h->ctrl_cookie && c->cookie == h->ctrl_cookie) {
			h->ctrl_cpl = *c;
			h->ctrl_done = 1;
			h->ctrl_cookie = 0;
		}
		return;
	}
	if (idx >= h->max_jobs || h->done_count >= h->max_jobs) {
		h->fault = 1;
		return;
	}
	wc = (struct wafer_completion){
		.user_data = h->job_ud[idx], .status = c->status, .device_ns = c->device_ns,
		.done_ns = c->opcode == WFW_OP_RUN_JOB ? c->value : 0,
	};
	if (h->hook)
		hooked[(*n_hooked)++] = wc;
	else
		h->done[(h->done_head + h->done_count++) % h->max_jobs] = wc;
	h->job_free[h->n_free++] = (unsigned int)idx;
}

/*
 * The emulated interrupt (a firmware thread, serialised): ack first, then
 * drain, so a completion posted meanwhile raises another call.
 */
static void irq(void *ctx)
{
	struct wip_hw *h = ctx;
	u32 status = wfw_host_irq_ack(h->dev), tail;
	struct wafer_completion hooked[WIP_CPL_ENTRIES];
	unsigned int n_hooked = 0, i;

	tail = rd(h, WFW_REG_CPL_TAIL);
	pthread_mutex_lock(&h->lock);
	if (status & WFW_IRQ_FAULT)
		h->fault = 1;
	if (!wfs_ring_indices_valid(h->cpl_head, tail, WIP_CPL_ENTRIES)) {
		h->fault = 1;
		tail = h->cpl_head;
	}
	while (h->cpl_head != tail) {
		struct wfw_cpl c;

		/* A lost completion leaves a job waiting for good: a fault. */
		if (wfw_host_cpl_take(h->cplq, WIP_CPL_ENTRIES, &h->cpl_head, h->cpl_seq,
				      &c) != WFW_HOST_CPL_OK) {
			h->fault = 1;
			continue;
		}
		h->cpl_seq = c.seq;
		dispatch(h, &c, hooked, &n_hooked);
	}
	tail = h->cpl_head;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
	wr(h, WFW_REG_CPL_HEAD, tail);
	for (i = 0; i < n_hooked; i++)
		h->hook(h->hook_arg, &hooked[i]);
}

void wip_hw_set_hook(struct wip_hw *h, void (*hook)(void *arg, const struct wafer_completion *c),
		     void *arg)
{
	pthread_mutex_lock(&h->lock);
	h->hook_arg = arg;
	h->hook = hook;
	pthread_mutex_unlock(&h->lock);
}

int wip_hw_region_add(struct wip_hw *h, void *p, uint64_t len)
{
	if (wip_dma_add(&h->dma, p, len))
		return wafer_set_error(-ENOMEM, "inproc: more than %d buffers", WIP_MAX_REGIONS);
	return 0;
}

void wip_hw_region_del(struct wip_hw *h, void *p)
{
	wip_dma_del(&h->dma, p);
}

/* Copies @n commands into the ring; caller holds post_lock.  Returns 0 or -EBUSY. */
static int put(struct wip_hw *h, const struct wfw_cmd *cmds, unsigned int n)
{
	return wfw_host_put(h->dev, h->cmdq, WIP_CMD_ENTRIES, &h->cmd_tail, cmds, n);
}

static void deadline_ts(struct timespec *ts, uint64_t deadline_ns)
{
	ts->tv_sec = (time_t)(deadline_ns / 1000000000ull);
	ts->tv_nsec = (long)(deadline_ns % 1000000000ull);
}

int wip_hw_ctrl(struct wip_hw *h, struct wfw_cmd *cmd, struct wfw_cpl *cpl, int timeout_ms)
{
	uint64_t deadline = wafer_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	struct timespec ts;
	int ret;

	pthread_mutex_lock(&h->ctrl_mutex);
	pthread_mutex_lock(&h->lock);
	cmd->cookie = WFW_HOST_COOKIE_CTRL | ++h->ctrl_seq;
	h->ctrl_cookie = cmd->cookie;
	h->ctrl_done = 0;
	pthread_mutex_unlock(&h->lock);

	if (h->ctlq) {
		/* Served before the jobs in the command ring. */
		ret = wfw_host_put_ctl(h->dev, h->ctlq, WIP_CTL_ENTRIES, &h->ctl_tail, cmd, 1);
	} else {
		pthread_mutex_lock(&h->post_lock);
		ret = put(h, cmd, 1);
		pthread_mutex_unlock(&h->post_lock);
	}
	if (!ret)
		wfs_device_doorbell(h->dev);

	deadline_ts(&ts, deadline);
	pthread_mutex_lock(&h->lock);
	while (!ret && !h->ctrl_done && !h->fault)
		if (pthread_cond_timedwait(&h->cond, &h->lock, &ts) == ETIMEDOUT)
			ret = -ETIMEDOUT;
	if (!ret && !h->ctrl_done)
		ret = -EIO;
	h->ctrl_cookie = 0;
	if (!ret)
		*cpl = h->ctrl_cpl;
	pthread_mutex_unlock(&h->lock);
	pthread_mutex_unlock(&h->ctrl_mutex);
	if (ret) {
		memset(cpl, 0, sizeof(*cpl));
		cpl->status = ret;
		return wafer_set_error(ret, "inproc: firmware command %u %s", cmd->opcode,
				       ret == -ETIMEDOUT ? "timed out" :
				       ret == -EBUSY ? "found the command ring full" :
				       "failed: the device faulted");
	}
	return cpl->status;
}

int wip_hw_post_jobs(struct wip_hw *h, struct wfw_cmd *cmds, const uint64_t *user_data,
		     unsigned int n)
{
	unsigned int i;
	int ret = 0;

	pthread_mutex_lock(&h->lock);
	if (n > h->n_free)
		n = h->n_free;
	for (i = 0; i < n; i++) {
		unsigned int idx = h->job_free[--h->n_free];

		h->job_ud[idx] = user_data[i];
		cmds[i].cookie = (uint64_t)idx + 1;
	}
	pthread_mutex_unlock(&h->lock);
	if (!n)
		return 0;
	pthread_mutex_lock(&h->post_lock);
	ret = put(h, cmds, n);
	pthread_mutex_unlock(&h->post_lock);
	if (ret) {
		pthread_mutex_lock(&h->lock);
		for (i = 0; i < n; i++)
			h->job_free[h->n_free++] = (unsigned int)(cmds[i].cookie - 1);
		pthread_mutex_unlock(&h->lock);
		return ret;
	}
	wfs_device_doorbell(h->dev);
	return (int)n;
}

int wip_hw_reap(struct wip_hw *h, struct wafer_completion *out, unsigned int max,
		unsigned int min, uint64_t deadline_ns)
{
	struct timespec ts;
	unsigned int n = 0;
	int ret = 0;

	deadline_ts(&ts, deadline_ns);
	pthread_mutex_lock(&h->lock);
	while (h->done_count < min && !h->fault &&
	       h->done_count + h->n_free < h->max_jobs &&
	       pthread_cond_timedwait(&h->cond, &h->lock, &ts) != ETIMEDOUT)
		;
	while (n < max && h->done_count) {
		out[n++] = h->done[h->done_head];
		h->done_head = (h->done_head + 1) % h->max_jobs;
		h->done_count--;
	}
	if (!n && h->fault)
		ret = -EIO;
	pthread_mutex_unlock(&h->lock);
	if (ret)
		return wafer_set_error(ret, "inproc: the device faulted (fault register 0x%x)",
				       rd(h, WFW_REG_FAULT));
	return (int)n;
}

static int enable(struct wip_hw *h)
{
	size_t ctl_bytes = WIP_CTL_ENTRIES * sizeof(struct wfw_cmd);

	if (wfw_host_has_ctl_ring(h->dev)) {
		h->ctlq = wip_dma_alloc(ctl_bytes);
		if (!h->ctlq)
			return wafer_set_error(-ENOMEM, "inproc: out of memory for the control ring");
		wip_hw_region_add(h, h->ctlq, ctl_bytes);
		wfw_host_set_ctl_ring(h->dev, (uint64_t)(uintptr_t)h->ctlq, WIP_CTL_ENTRIES);
	}
	if (wfw_host_enable_rings(h->dev, (uint64_t)(uintptr_t)h->cmdq, WIP_CMD_ENTRIES,
				  (uint64_t)(uintptr_t)h->cplq, WIP_CPL_ENTRIES))
		return wafer_set_error(-EIO, "inproc: enabling the rings failed (fault 0x%x)",
				       rd(h, WFW_REG_FAULT));
	return 0;
}

int wip_hw_init(struct wip_hw *h, struct wfs_device_config *cfg, unsigned int max_jobs)
{
	size_t cmd_bytes = WIP_CMD_ENTRIES * sizeof(struct wfw_cmd);
	size_t cpl_bytes = WIP_CPL_ENTRIES * sizeof(struct wfw_cpl);
	pthread_condattr_t ca;
	unsigned int i;
	u32 abi;
	int ret;

	memset(h, 0, sizeof(*h));
	wip_dma_init(&h->dma);
	pthread_mutex_init(&h->lock, NULL);
	pthread_mutex_init(&h->post_lock, NULL);
	pthread_mutex_init(&h->ctrl_mutex, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&h->cond, &ca);
	pthread_condattr_destroy(&ca);
	h->max_jobs = max_jobs;
	h->cmdq = wip_dma_alloc(cmd_bytes);
	h->cplq = wip_dma_alloc(cpl_bytes);
	h->job_ud = calloc(max_jobs, sizeof(*h->job_ud));
	h->job_free = calloc(max_jobs, sizeof(*h->job_free));
	h->done = calloc(max_jobs, sizeof(*h->done));
	if (!h->cmdq || !h->cplq || !h->job_ud || !h->job_free || !h->done) {
		wip_hw_fini(h);
		return wafer_set_error(-ENOMEM, "inproc: out of memory for the rings");
	}
	for (i = 0; i < max_jobs; i++)
		h->job_free[h->n_free++] = max_jobs - 1 - i;
	wip_hw_region_add(h, h->cmdq, cmd_bytes);
	wip_hw_region_add(h, h->cplq, cpl_bytes);

	cfg->dma = &wip_dma_ops;
	cfg->dma_ctx = &h->dma;
	cfg->irq = irq;
	cfg->irq_ctx = h;
	ret = wfs_device_create(cfg, &h->dev);
	if (ret) {
		wip_hw_fini(h);
		return wafer_set_error(ret, "inproc: creating the simulated device failed "
				       "(profile '%s', %u stages, %llu bytes SRAM%s)",
				       cfg->profile ? cfg->profile : "wafer", cfg->stages,
				       (unsigned long long)cfg->sram_bytes,
				       ret == -E2BIG ? ": stages x SRAM per stage exceed the "
				       "simulator's 1 GiB, give fewer stages or less SRAM" : "");
	}
	abi = rd(h, WFW_REG_ABI_VERSION);
	if (WFW_ABI_VERSION_MAJOR(abi) != WFW_ABI_MAJOR) {
		wip_hw_fini(h);
		return wafer_set_error(-ENODEV, "inproc: firmware ABI %u.%u, libwafer speaks %u.x",
				       WFW_ABI_VERSION_MAJOR(abi), WFW_ABI_VERSION_MINOR(abi),
				       WFW_ABI_MAJOR);
	}
	ret = enable(h);
	if (ret)
		wip_hw_fini(h);
	return ret;
}

void wip_hw_fini(struct wip_hw *h)
{
	/* The device's threads stop first, so nothing touches the rings after. */
	wfs_device_destroy(h->dev);
	h->dev = NULL;
	free(h->cmdq);
	free(h->ctlq);
	free(h->cplq);
	free(h->job_ud);
	free(h->job_free);
	free(h->done);
	pthread_cond_destroy(&h->cond);
	pthread_mutex_destroy(&h->ctrl_mutex);
	pthread_mutex_destroy(&h->post_lock);
	pthread_mutex_destroy(&h->lock);
	wip_dma_fini(&h->dma);
}
