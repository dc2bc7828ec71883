/* SPDX-License-Identifier: MIT */
/*
 * device_harness.h - a minimal userspace "driver" for firmware-sim device
 * tests and the command fuzzer: host memory regions behind checked DMA
 * callbacks, the two rings, an IRQ handler, submit/poll helpers.
 *
 * Header-only (static functions) so both tests/unit/device_*.c and
 * tests/fuzz/fuzz_cmd.c can use it.  Device addresses are plain pointers,
 * every DMA access checked against the registered regions, and the rings
 * are brought up, by libwafer's inproc pieces (userlib/lib/backends/
 * wafer_inproc_dma.c, firmware-sim/host/wfw_host.c; the fuzzer builds them in).
 * Unlike libwafer's driver core (wafer_inproc_hw.c) this one hands the
 * tests the raw completions, any ring size and hardware resets.
 */
#ifndef DEVICE_HARNESS_H
#define DEVICE_HARNESS_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/backends/wafer_inproc_dma.h"
#include "wfw_host.h"
#include "wfs_device.h"
#include "wfw_abi.h"

#define DH_STASH	8192
#define DH_CTL_ENTRIES	16

struct dh {
	struct wfs_device *dev;
	pthread_mutex_t lock;	/* Protects irqs */
	pthread_cond_t cond;
	struct wip_dma dma;
	uint64_t irqs;
	struct wfw_cmd *cmdq;
	uint32_t cmd_size;
	uint32_t cmd_tail;
	struct wfw_cmd *ctlq;	/* the control ring (ABI 1.8) */
	uint32_t ctl_tail;
	struct wfw_cpl *cplq;
	uint32_t cpl_size;
	uint32_t cpl_head;
	struct wfw_cpl stash[DH_STASH];
	uint32_t stash_head;
	uint32_t stash_tail;
	uint64_t bad_checks;
	uint64_t next_cookie;
};

/*
 * struct wfs_device_config.stage_workers of the devices dh_init() creates:
 * a test may set it; DH_WORKERS_DEFAULT takes WAFER_STAGE_WORKERS from the
 * environment (as libwafer does), auto when unset.
 */
#define DH_WORKERS_DEFAULT	INT32_MIN
static int dh_stage_workers = DH_WORKERS_DEFAULT;

static inline int dh_workers(void)
{
	const char *e = getenv("WAFER_STAGE_WORKERS");

	if (dh_stage_workers != DH_WORKERS_DEFAULT)
		return dh_stage_workers;
	if (!e || !*e || !strcmp(e, "auto"))
		return WFS_STAGE_WORKERS_AUTO;
	return atoi(e);
}

static inline void *dh_alloc(size_t n)
{
	return wip_dma_alloc(n);
}

/* Regions beyond WIP_MAX_REGIONS are not added (the device sees a fault). */
static inline void dh_region_add(struct dh *h, void *p, uint64_t len)
{
	wip_dma_add(&h->dma, p, len);
}

static inline void dh_region_del(struct dh *h, void *p)
{
	wip_dma_del(&h->dma, p);
}

static void dh_irq(void *ctx)
{
	struct dh *h = ctx;
	u32 st = wfs_device_mmio_read32(h->dev, WFW_REG_IRQ_STATUS);

	wfs_device_mmio_write32(h->dev, WFW_REG_IRQ_ACK, st);
	pthread_mutex_lock(&h->lock);
	h->irqs++;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

static inline u32 dh_rd(struct dh *h, u32 off)
{
	return wfs_device_mmio_read32(h->dev, off);
}

static inline void dh_wr(struct dh *h, u32 off, u32 v)
{
	wfs_device_mmio_write32(h->dev, off, v);
}

/* cfg may be NULL (defaults); its dma/irq fields are overridden. */
static inline int dh_init(struct dh *h, const struct wfs_device_config *cfg,
			  uint32_t cmd_size, uint32_t cpl_size)
{
	struct wfs_device_config c;
	int ret;

	memset(h, 0, sizeof(*h));
	wip_dma_init(&h->dma);
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->cond, NULL);
	h->cmd_size = cmd_size;
	h->cpl_size = cpl_size;
	h->cmdq = dh_alloc((size_t)cmd_size * sizeof(struct wfw_cmd));
	h->cplq = dh_alloc((size_t)cpl_size * sizeof(struct wfw_cpl));
	h->ctlq = dh_alloc(DH_CTL_ENTRIES * sizeof(struct wfw_cmd));
	h->next_cookie = 1;
	if (!h->cmdq || !h->cplq || !h->ctlq)
		return -ENOMEM;
	dh_region_add(h, h->cmdq, (uint64_t)cmd_size * sizeof(struct wfw_cmd));
	dh_region_add(h, h->cplq, (uint64_t)cpl_size * sizeof(struct wfw_cpl));
	dh_region_add(h, h->ctlq, DH_CTL_ENTRIES * sizeof(struct wfw_cmd));
	if (cfg)
		c = *cfg;
	else
		memset(&c, 0, sizeof(c));
	if (!cfg)
		c.numa_node = -1;
	c.stage_workers = dh_workers();
	c.dma = &wip_dma_ops;
	c.dma_ctx = &h->dma;
	c.irq = dh_irq;
	c.irq_ctx = h;
	ret = wfs_device_create(&c, &h->dev);
	if (ret)
		return ret;
	if (wfw_host_has_ctl_ring(h->dev))
		wfw_host_set_ctl_ring(h->dev, (uint64_t)(uintptr_t)h->ctlq, DH_CTL_ENTRIES);
	return wfw_host_enable_rings(h->dev, (uint64_t)(uintptr_t)h->cmdq, h->cmd_size,
				     (uint64_t)(uintptr_t)h->cplq, h->cpl_size);
}

static inline void dh_fini(struct dh *h)
{
	wfs_device_destroy(h->dev);
	free(h->cmdq);
	free(h->cplq);
	free(h->ctlq);
	pthread_cond_destroy(&h->cond);
	pthread_mutex_destroy(&h->lock);
	wip_dma_fini(&h->dma);
}

/* Move completions from the ring to the stash; returns how many. */
static inline uint32_t dh_drain(struct dh *h)
{
	u32 tail = dh_rd(h, WFW_REG_CPL_TAIL), n = 0;

	while (h->cpl_head != tail &&
	       h->stash_tail - h->stash_head < DH_STASH) {
		struct wfw_cpl c = h->cplq[h->cpl_head & (h->cpl_size - 1)];

		if (c.check != wfw_cpl_check(&c))
			h->bad_checks++;
		h->stash[h->stash_tail++ % DH_STASH] = c;
		h->cpl_head++;
		n++;
	}
	if (n)
		dh_wr(h, WFW_REG_CPL_HEAD, h->cpl_head);
	return n;
}

static inline void dh_reset_host(struct dh *h)
{
	h->cmd_tail = 0;
	h->ctl_tail = 0;
	h->cpl_head = 0;
	h->stash_head = h->stash_tail = 0;
}

/* Hardware reset: the device zeroes its ring indices; so do we. */
static inline void dh_hw_reset(struct dh *h, int full)
{
	wfs_device_reset(h->dev, full);
	dh_reset_host(h);
}

/* Writes @cmd at the tail and rings the doorbell (the ring has room). */
static inline void dh_post(struct dh *h, const struct wfw_cmd *cmd)
{
	h->cmdq[h->cmd_tail & (h->cmd_size - 1)] = *cmd;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	h->cmd_tail++;
	dh_wr(h, WFW_REG_CMD_TAIL, h->cmd_tail);
	wfs_device_doorbell(h->dev);
}

/*
 * Puts @cmd in the control ring, which the device serves before the
 * command ring: -EAGAIN if it is full.
 */
static inline int dh_post_ctl(struct dh *h, struct wfw_cmd *cmd)
{
	if (!cmd->cookie)
		cmd->cookie = h->next_cookie++;
	if (wfw_host_put_ctl(h->dev, h->ctlq, DH_CTL_ENTRIES, &h->ctl_tail, cmd, 1))
		return -EAGAIN;
	wfs_device_doorbell(h->dev);
	return 0;
}

/* Submit without waiting: -EAGAIN if the command ring is full. */
static inline int dh_try_submit(struct dh *h, const struct wfw_cmd *cmd)
{
	if (h->cmd_tail - dh_rd(h, WFW_REG_CMD_HEAD) >= h->cmd_size)
		return -EAGAIN;
	dh_post(h, cmd);
	return 0;
}

static inline int dh_submit(struct dh *h, const struct wfw_cmd *cmd)
{
	int spins = 0;

	while (h->cmd_tail - dh_rd(h, WFW_REG_CMD_HEAD) >= h->cmd_size) {
		if (!dh_drain(h))
			usleep(20);
		if (++spins > 2000000)
			return -ETIMEDOUT;
	}
	dh_post(h, cmd);
	return 0;
}

static inline uint64_t dh_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Next completion, waiting up to timeout_ms.  Returns 1, or 0 on timeout. */
static inline int dh_poll(struct dh *h, struct wfw_cpl *out, int timeout_ms)
{
	uint64_t deadline = dh_now_ms() + (uint64_t)timeout_ms;

	for (;;) {
		struct timespec ts;
		uint64_t irqs;

		pthread_mutex_lock(&h->lock);
		irqs = h->irqs;
		pthread_mutex_unlock(&h->lock);
		dh_drain(h);
		if (h->stash_head != h->stash_tail) {
			*out = h->stash[h->stash_head++ % DH_STASH];
			return 1;
		}
		if (dh_now_ms() >= deadline)
			return 0;
		/* Bounded wait: an IRQ between drain and wait is not lost. */
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 2000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&h->lock);
		if (h->irqs == irqs)
			pthread_cond_timedwait(&h->cond, &h->lock, &ts);
		pthread_mutex_unlock(&h->lock);
	}
}

/* Submit and wait for its completion (no other command outstanding). */
static inline int dh_exec(struct dh *h, struct wfw_cmd *cmd,
			  struct wfw_cpl *cpl, int timeout_ms)
{
	if (!cmd->cookie)
		cmd->cookie = h->next_cookie++;
	if (dh_submit(h, cmd))
		return -ETIMEDOUT;
	if (!dh_poll(h, cpl, timeout_ms))
		return -ETIMEDOUT;
	return cpl->cookie == cmd->cookie ? 0 : -EPROTO;
}

/*
 * LOAD_MODEL with @xfirst/@xcount (expert_first/expert_count of an
 * expert-parallel part, 1.7); else as dh_load_group() below.
 */
static inline int dh_load_experts(struct dh *h, void *blob, uint64_t len, u32 flags,
				  u32 first, u32 count, u32 part, u32 group,
				  u32 xfirst, u32 xcount, struct wfw_cpl *cpl)
{
	struct wfw_cmd c;

	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_LOAD_MODEL;
	c.load.addr = (uint64_t)(uintptr_t)blob;
	c.load.len = len;
	c.load.flags = flags;
	c.load.layer_first = first;
	c.load.layer_count = count;
	c.load.part = part;
	c.load.expert_group = group;
	c.load.expert_first = xfirst;
	c.load.expert_count = xcount;
	if (dh_exec(h, &c, cpl, 30000))
		return -ETIMEDOUT;
	return cpl->status;
}

/*
 * LOAD_MODEL of layers [@first, +@count) (0, 0: all) of the blob, part
 * @part (WFW_PART_*), with WFW_LOAD_* @flags and @group routed experts per
 * expert group placed across the stages (ABI 1.6; 0: the firmware's
 * choice, local unless the layers do not fit with their experts).
 */
static inline int dh_load_group(struct dh *h, void *blob, uint64_t len, u32 flags,
				u32 first, u32 count, u32 part, u32 group,
				struct wfw_cpl *cpl)
{
	return dh_load_experts(h, blob, len, flags, first, count, part, group, 0, 0, cpl);
}

/* dh_load_group() without expert groups asked for. */
static inline int dh_load_range(struct dh *h, void *blob, uint64_t len, u32 flags,
				u32 first, u32 count, u32 part, struct wfw_cpl *cpl)
{
	return dh_load_group(h, blob, len, flags, first, count, part, 0, cpl);
}

/* LOAD_MODEL with WFW_LOAD_* @flags (WFW_LOAD_STREAM: weight streaming). */
static inline int dh_load_flags(struct dh *h, void *blob, uint64_t len,
				u32 flags, struct wfw_cpl *cpl)
{
	return dh_load_range(h, blob, len, flags, 0, 0, 0, cpl);
}

static inline int dh_load(struct dh *h, void *blob, uint64_t len,
			  struct wfw_cpl *cpl)
{
	return dh_load_flags(h, blob, len, 0, cpl);
}

/* A device of @profile (@stages, @sram per stage: 0 = the profile's), 64-entry rings. */
static inline struct dh *dh_new(const char *profile, u32 stages, uint64_t sram)
{
	struct wfs_device_config cfg;
	struct dh *h = calloc(1, sizeof(*h));

	memset(&cfg, 0, sizeof(cfg));
	cfg.numa_node = -1;
	cfg.profile = profile;
	cfg.stages = stages;
	cfg.sram_bytes = sram;
	if (!h || dh_init(h, &cfg, 64, 64)) {
		free(h);
		return NULL;
	}
	return h;
}

/* Returns the context id (> 0) or a negative status. */
static inline int64_t dh_ctx_create(struct dh *h, u32 slots, u32 ctx_len,
				    struct wfw_cpl *cpl)
{
	struct wfw_cmd c;

	memset(&c, 0, sizeof(c));
	c.opcode = WFW_OP_CREATE_CONTEXT;
	c.ctx.slots = slots;
	c.ctx.ctx_len = ctx_len;
	if (dh_exec(h, &c, cpl, 10000))
		return -ETIMEDOUT;
	return cpl->status ? cpl->status : (int64_t)cpl->result0;
}

static inline void dh_job_cmd(struct wfw_cmd *c, u32 ctx, u32 slot, u32 pos,
			      u32 n, const u32 *in, void *out, u32 out_len,
			      u16 topk, u16 flags, u64 cookie)
{
	memset(c, 0, sizeof(*c));
	c->opcode = WFW_OP_RUN_JOB;
	c->cookie = cookie;
	c->job.ctx_id = ctx;
	c->job.slot = slot;
	c->job.start_pos = pos;
	c->job.n_tokens = n;
	c->job.in_addr = (uint64_t)(uintptr_t)in;
	c->job.out_addr = (uint64_t)(uintptr_t)out;
	c->job.out_len = out_len;
	c->job.topk = topk;
	c->job.flags = flags;
}

static inline int dh_simple(struct dh *h, u16 op, struct wfw_cpl *cpl)
{
	struct wfw_cmd c;

	memset(&c, 0, sizeof(c));
	c.opcode = op;
	if (dh_exec(h, &c, cpl, 10000))
		return -ETIMEDOUT;
	return cpl->status;
}

/*
 * A command that writes @len bytes to @out (GET_INFO, GET_STATS,
 * GET_SRAM_MAP...) for @model, from @index: its status (@cpl filled).
 */
static inline int dh_read_cmd(struct dh *h, u16 op, u32 model, u32 index, void *out,
			      u32 len, struct wfw_cpl *cpl)
{
	struct wfw_cmd c;

	memset(&c, 0, sizeof(c));
	memset(out, 0, len);
	dh_region_add(h, out, len);
	c.opcode = op;
	c.model = model;
	c.buf.addr = (uint64_t)(uintptr_t)out;
	c.buf.len = len;
	c.buf.index = index;
	if (dh_exec(h, &c, cpl, 10000))
		cpl->status = -ETIMEDOUT;
	dh_region_del(h, out);
	return cpl->status;
}

/* GET_INFO of @model (0: the device's first model, or none). */
static inline int dh_info_model(struct dh *h, u32 model, struct wfw_info *info)
{
	struct wfw_cpl cpl;

	return dh_read_cmd(h, WFW_OP_GET_INFO, model, 0, info, sizeof(*info), &cpl);
}

static inline int dh_info(struct dh *h, struct wfw_info *info)
{
	return dh_info_model(h, 0, info);
}

/* READ_LOG from the oldest byte kept into @buf: bytes read or -errno. */
static inline int dh_read_log(struct dh *h, char *buf, u32 len)
{
	struct wfw_cmd c;
	struct wfw_cpl cpl;

	memset(buf, 0, len);
	memset(&c, 0, sizeof(c));
	dh_region_add(h, buf, len);
	c.opcode = WFW_OP_READ_LOG;
	c.buf.addr = (uint64_t)(uintptr_t)buf;
	c.buf.len = len - 1;
	dh_exec(h, &c, &cpl, 5000);
	dh_region_del(h, buf);
	return cpl.status ? cpl.status : (int)cpl.result0;
}

#endif /* DEVICE_HARNESS_H */
