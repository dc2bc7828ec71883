/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * wafer tracepoints: a job's submit, start (posted to the firmware),
 * completion and timeout.  perf/trace-cmd: -e 'wafer:*'.
 *
 * checkpatch --strict flags the TRACE_EVENT layout (open-ended lines,
 * alignment); it is the layout every kernel trace header uses.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM wafer

#if !defined(WDRV_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define WDRV_TRACE_H

#include <linux/tracepoint.h>

DECLARE_EVENT_CLASS(wafer_job_event,
	TP_PROTO(unsigned int dev, u32 cookie),
	TP_ARGS(dev, cookie),
	TP_STRUCT__entry(
		__field(unsigned int, dev)
		__field(u32, cookie)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->cookie = cookie;
	),
	TP_printk("dev=%u job=%u", __entry->dev, __entry->cookie)
);

DEFINE_EVENT(wafer_job_event, wafer_job_start,
	TP_PROTO(unsigned int dev, u32 cookie),
	TP_ARGS(dev, cookie)
);

DEFINE_EVENT(wafer_job_event, wafer_job_timeout,
	TP_PROTO(unsigned int dev, u32 cookie),
	TP_ARGS(dev, cookie)
);

TRACE_EVENT(wafer_job_submit,
	TP_PROTO(unsigned int dev, u32 cookie, u32 ctx, u32 slot, u32 pos, u32 n_tokens),
	TP_ARGS(dev, cookie, ctx, slot, pos, n_tokens),
	TP_STRUCT__entry(
		__field(unsigned int, dev)
		__field(u32, cookie)
		__field(u32, ctx)
		__field(u32, slot)
		__field(u32, pos)
		__field(u32, n_tokens)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->cookie = cookie;
		__entry->ctx = ctx;
		__entry->slot = slot;
		__entry->pos = pos;
		__entry->n_tokens = n_tokens;
	),
	TP_printk("dev=%u job=%u ctx=%u slot=%u pos=%u tokens=%u", __entry->dev,
		  __entry->cookie, __entry->ctx, __entry->slot, __entry->pos,
		  __entry->n_tokens)
);

TRACE_EVENT(wafer_job_complete,
	TP_PROTO(unsigned int dev, u32 cookie, int status, u64 device_ns),
	TP_ARGS(dev, cookie, status, device_ns),
	TP_STRUCT__entry(
		__field(unsigned int, dev)
		__field(u32, cookie)
		__field(int, status)
		__field(u64, device_ns)
	),
	TP_fast_assign(
		__entry->dev = dev;
		__entry->cookie = cookie;
		__entry->status = status;
		__entry->device_ns = device_ns;
	),
	TP_printk("dev=%u job=%u status=%d device_ns=%llu", __entry->dev,
		  __entry->cookie, __entry->status, __entry->device_ns)
);

#endif /* WDRV_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE wdrv_trace
#include <trace/define_trace.h>
