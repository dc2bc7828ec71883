/* SPDX-License-Identifier: MIT */
/*
 * libwafer: the userspace library for wafer accelerators.
 *
 * Layers, one header each under wafer/, each using only the ones above it
 * (this header includes them all):
 *
 *   device.h     versions; errors; devices: find, open (backend "kernel" =
 *                /dev/accel/accelN through the DRM driver, or "inproc" =
 *                firmware-sim linked into this process), query
 *   multi.h      several devices opened as one: a pipeline (a model's
 *                layers split across them, activations handed from device
 *                to device), attention-FFN disaggregation
 *   model.h      buffers the device reads job inputs from and writes
 *                results to; models (a llama2.c checkpoint converted and
 *                loaded into stage SRAM); contexts (KV cache for a number
 *                of sequences, "slots")
 *   job.h        submit many, reap completions (batch-friendly)
 *   text.h       llama2.c's tokenizer, byte for byte; greedy /
 *                temperature / top-p sampling over a result's top-k;
 *                generation: prompt in, pieces streamed to a callback
 *   batch.h      continuous batching (wafer serve)
 *   spec.h       speculative decoding
 *   trace.h      timeline traces (Chrome trace events)
 *   plan.h       projections (wafer plan)
 *
 * Errors: every call that can fail returns 0 (or a count) on success and a
 * negative errno value on failure; wafer_strerror() names the code and
 * wafer_last_error() says, for the calling thread, what exactly was wrong.
 * Functions returning a pointer return NULL only where documented.
 *
 * Threads: the library has no global state besides the per-thread error
 * message.  Objects of one device may be used from several threads, but
 * wafer_submit()/wafer_reap() on one device must not run concurrently.
 */
#ifndef WAFER_H
#define WAFER_H

#include "wafer/device.h"
#include "wafer/multi.h"
#include "wafer/model.h"
#include "wafer/job.h"
#include "wafer/text.h"
#include "wafer/batch.h"
#include "wafer/spec.h"
#include "wafer/trace.h"
#include "wafer/plan.h"

#endif /* WAFER_H */
