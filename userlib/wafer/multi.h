/* SPDX-License-Identifier: MIT */
/*
 * wafer/multi.h - several devices opened as one: a pipeline (a model's
 * layers split across them, activations handed from device to device) and
 * attention-FFN disaggregation (attention and FFN parts on two groups).
 *
 * Part of the public API; include "wafer.h", which includes every topic.
 */
#ifndef WAFER_H_MULTI
#define WAFER_H_MULTI

#include "device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --------------------------------------------------------- pipelines -- */

/**
 * Most devices in a pipeline or attention-FFN group opened on one host (a
 * `-d` list; the driver's num_devices bound is the same).
 */
#define WAFER_PIPE_MAX_DEVICES	64
/**
 * Most devices in one chain spanning hosts (each host's share at most
 * WAFER_PIPE_MAX_DEVICES): the seed model's ~80 one-layer stages fit.
 */
#define WAFER_CHAIN_MAX_DEVICES	128

/**
 * struct wafer_pipe_opts - wafer_open_pipeline() parameters
 * @n_devices: members, 1..WAFER_PIPE_MAX_DEVICES
 * @devices: each member's wafer_open() options; all members must get the
 *	same backend (for the inproc backend each entry makes a new device,
 *	with its own profile, stages and SRAM)
 * @split: NULL to split automatically (wafer_split_layers()); else
 *	@n_devices layer counts, each >= 1, in member order, summing to the
 *	model's layers (checked when the model is loaded)
 */
struct wafer_pipe_opts {
	unsigned int n_devices;
	const struct wafer_open_opts *devices;
	const unsigned int *split;
};

/**
 * wafer_open_pipeline() - open several devices as one
 * @po: members and split
 * @out: receives the pipeline, a struct wafer_dev like any other
 *
 * Everything that takes a device takes a pipeline.  A model loaded on it is
 * split into contiguous layer ranges, one per member (the first holds the
 * embedding, the last the classifier); a job runs on each member in turn,
 * its activations passed on in buffers shared between neighbours (PRIME on
 * the kernel backend), so results are bit-identical to one device running
 * the whole model.  Buffers of the pipeline are usable by every member.
 * Kernel members submit by ioctl unless a member's @submit says otherwise:
 * then all parts of a job are queued at once, each member's job waiting
 * for the previous member's through a shared syncobj, and a token crosses
 * the members with no return to userspace (with io_uring, whose commands
 * may be issued out of order, the library posts each part when the
 * previous one completed, as it does in process).
 * wafer_query() reports the members combined: stages and free SRAM summed,
 * limits the smallest member's; jobs take at most WAFER_PIPE_MAX_TOKENS
 * tokens (wafer_generate() splits a longer prompt).  A member that fails
 * (its reap returns an error other than -EAGAIN, -EINTR, -ETIME,
 * -ETIMEDOUT: a device gone, a broken completion ring) fails every job it
 * holds once, each reaped with that error as its status; the jobs before
 * it fail likewise as they reach it, those past it complete as they would
 * have, and a job submitted later whose model has a part on it completes
 * with the error at once.  -EEXIST (a kernel member's io_uring ring reaped
 * by another thread than the one that first used it) is wafer_reap()'s
 * error and fails nothing.  Destroying a buffer, context or model of the
 * pipeline waits for the jobs in flight that use it (in-process members
 * move a job on from their own threads), at most its job timeout.
 *
 * Return: 0 or a negative errno (-EINVAL: bad options, mixed backends; a
 * member's wafer_open() error).
 */
int wafer_open_pipeline(const struct wafer_pipe_opts *po, struct wafer_dev **out);

/* Devices in each group of wafer_open_afd(). */
#define WAFER_AFD_MAX_GROUP	8
/* Most tokens of one of its micro-batches (wafer_afd_opts.micro_batch_tokens). */
#define WAFER_AFD_MAX_MB	64

/**
 * struct wafer_afd_opts - the two groups of an attention-FFN disaggregation
 * @n_attn: devices for the attention parts, 1..WAFER_AFD_MAX_GROUP
 * @attn: their options (each its own profile, stages, SRAM)
 * @n_ffn: devices for the FFN parts, 1..WAFER_AFD_MAX_GROUP
 * @ffn: their options
 * @micro_batch_tokens: most tokens of one micro-batch, 1..WAFER_AFD_MAX_MB
 *	(0: 16).  Smaller micro-batches give a prefill more of them to keep
 *	both groups busy, at more steps (and link hops) per token; results are
 *	the same
 * @polled: move each micro-batch from member to member in wafer_reap()
 *	rather than from the members' completion threads; what kernel
 *	members (which have no such thread) always do; results are the same
 * @n_expert: expert parallelism (in process, or kernel devices with
 *	WAFER_CAP_EXPERT_PARALLEL; 0: none): devices holding the
 *	routed experts of every MoE layer, 1..WAFER_AFD_MAX_GROUP, each a
 *	contiguous range of them (E / n_expert, the first E % n_expert one
 *	more); the FFN devices keep the norm, router and shared experts (the
 *	"home"), and each MoE layer's FFN runs in two exchanges with the
 *	expert devices (dispatch: the normed activations out, the experts'
 *	W1/W3 units back; the home's one SwiGLU over all of them; combine:
 *	the units out, each device's s64 sum of its experts' gated W2 back),
 *	bit for bit the unsplit model.  The model must have experts and at
 *	least @n_expert routed experts a layer (wafer_model_load() fails
 *	otherwise, nothing loaded)
 * @expert: their options
 */
struct wafer_afd_opts {
	unsigned int n_attn;
	const struct wafer_open_opts *attn;
	unsigned int n_ffn;
	const struct wafer_open_opts *ffn;
	unsigned int micro_batch_tokens;
	int polled;
	unsigned int n_expert;
	const struct wafer_open_opts *expert;
};

/**
 * wafer_open_afd() - open in-process devices as one, each layer split into
 *	its attention part and its FFN part (attention-FFN disaggregation,
 *	MegaScale-Infer's ping-pong pipeline)
 * @o: the groups
 * @out: receives the device, a struct wafer_dev like any other
 *
 * A model loaded on it puts the attention part of every layer (with the
 * KV cache; the first range also the embedding) on the attention devices,
 * contiguous layer ranges, and the FFN part (the last range also the
 * classifier) on the FFN devices.  A job is cut into micro-batches of up
 * to @o->micro_batch_tokens (16) tokens; each goes attention, FFN,
 * attention, FFN ... through the
 * layers, activations passed back and forth in buffers both groups share,
 * while the next micro-batch (of the job, or of another job in flight)
 * keeps the other group busy.  Results are bit-identical to one device
 * running whole layers.  The members are in process unless their options
 * ask for WAFER_BACKEND_KERNEL (every member the same backend; AUTO is
 * in process): kernel devices (WAFER_CAP_LAYER_PARTS) share the buffers
 * through PRIME and the caller's wafer_reap() moves each micro-batch from
 * member to member; the results are the same bit for bit.  Jobs take at
 * most 64 tokens (WAFER_JOB_TIMES: a record per micro-batch and layer
 * part); weights are resident.  A member that fails (its reap returns an
 * error other than -EAGAIN, -EINTR, -ETIME, -ETIMEDOUT: a device gone, a
 * broken completion ring) fails every job in flight once, each reaped
 * with that error as its status, and every job submitted later likewise:
 * each job needs every member.  -EEXIST (a polled member's io_uring ring
 * reaped by another thread than the one that first used it) is
 * wafer_reap()'s error and fails nothing.  Destroying a buffer, context or
 * model of the device waits for the jobs in flight that use it (hooked
 * members move them on from their own threads), at most its job timeout.
 *
 * Return: 0 or a negative errno (-EINVAL: bad groups, mixed backends; a
 * member's wafer_open() error).
 */
int wafer_open_afd(const struct wafer_afd_opts *o, struct wafer_dev **out);

/** Most tokens of one job through a pipeline. */
#define WAFER_PIPE_MAX_TOKENS	128

/** wafer_pipe_size() - members of a pipeline; 1 for a single device. */
unsigned int wafer_pipe_size(const struct wafer_dev *dev);

/**
 * wafer_pipe_member() - the @i-th member of a pipeline
 * @dev: pipeline or device (a device is its own member 0)
 * @i: index, < wafer_pipe_size()
 *
 * For wafer_query(), wafer_dev_stats() and the like; objects of the
 * pipeline must not be used with a member directly.
 *
 * Return: the member, or NULL if @i is out of range.
 */
struct wafer_dev *wafer_pipe_member(struct wafer_dev *dev, unsigned int i);

/**
 * wafer_split_layers() - the automatic split of a model across devices
 * @n_layers: layers of the model
 * @n_devices: devices, 1..WAFER_PIPE_MAX_DEVICES
 * @capacity: each device's SRAM bytes (weights go where there is room), or
 *	NULL for devices of one kind
 * @out: @n_devices layer counts, contiguous in device order
 *
 * One layer per device when there are at least as many devices as layers
 * (the devices beyond get 0); else layers in proportion to @capacity
 * (largest remainder, every device at least one).
 *
 * Return: the number of devices used (those with a count > 0), or -EINVAL.
 */
int wafer_split_layers(unsigned int n_layers, unsigned int n_devices,
		       const uint64_t *capacity, unsigned int *out);

#ifdef __cplusplus
}
#endif

#endif /* WAFER_H_MULTI */
