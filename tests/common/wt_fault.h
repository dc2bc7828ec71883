/* SPDX-License-Identifier: MIT */
/*
 * wt_fault.h - tests of a device built of members (a pipeline, AFD) whose
 * members fail: a device with a model, a context and buffers; a batch of
 * jobs and what reaping it gave; a member's operations wrapped to make its
 * reap or submit fail.
 */
#ifndef WT_FAULT_H
#define WT_FAULT_H

#include <stdint.h>

#include "lib/wafer_backend.h"	/* a member's ops */
#include "wafer.h"

#define WT_FAULT_NJOBS		5	/* a prefill of several tokens and 4 decode steps */
#define WT_FAULT_PREFILL	40
#define WT_FAULT_CTX		64
#define WT_FAULT_TOPK		4
#define WT_FAULT_REC		WAFER_RESULT_SIZE(WT_FAULT_TOPK)
#define WT_FAULT_NREC		(WT_FAULT_PREFILL + WT_FAULT_NJOBS)
#define WT_FAULT_REAP_MS	20000

/** struct wt_rig - a device with a model, a context of WT_FAULT_NJOBS slots and buffers */
struct wt_rig {
	struct wafer_dev *dev;
	struct wafer_model *m;
	struct wafer_ctx *ctx;
	struct wafer_bo *in, *res;
};

/* The shared model these tests load (stories260K.bin), or NULL if missing. */
const char *wt_fault_model(void);
/* @n members' options: in-process devices of the asic profile, 2 stages. */
void wt_rig_members(struct wafer_open_opts *o, unsigned int n);
/* @r->dev opened: the model at @model, the context and buffers; 0 or -errno (said). */
int wt_rig_load(struct wt_rig *r, const char *model, const struct wafer_convert_opts *conv);
/* Everything destroyed, as wafer_close() wants, also on a failed member. */
void wt_rig_close(struct wt_rig *r);

/* Slot 0's prefill of every position, slots 1.. one token; user_data @ud0... */
int wt_fault_submit(struct wt_rig *r, uint64_t ud0);

/**
 * struct wt_tally - what reaping a batch gave
 * @n: completions
 * @twice: user_data outside the batch or seen twice
 * @st: each job's status
 */
struct wt_tally {
	unsigned int n, twice;
	int st[WT_FAULT_NJOBS];
};

/* Reaps the batch of @ud0 until every job came or a reap gave none. */
struct wt_tally wt_fault_reap(struct wt_rig *r, uint64_t ud0);
/* Every job once, each with status @want (or 0, if @or_ok). */
int wt_fault_all_were(const struct wt_tally *t, int want, int or_ok);
/* One batch on @r: every job once with status @want (or 0), nothing left in flight. */
int wt_fault_batch_was(struct wt_rig *r, uint64_t ud0, int want, int or_ok);

/*
 * Member @k's reap says -EEXIST (the caller's error: a polled kernel
 * member's io_uring ring reaped by another thread than the one that used
 * it first) for the first reap of a batch, whose return is *@ret; then it
 * works.  Whether the batch then completed with 0, every job once.
 */
int wt_fault_foreign(struct wt_rig *r, unsigned int k, int *ret);

/*
 * wafer_close() with a batch in flight, nothing reaped: member @victim's
 * firmware faulted first (-1: none), the batch submitted, then everything
 * destroyed (as wafer_close() wants) while the members still run it, and
 * closed.  Whether the batch went in; what is used after it was freed is
 * for valgrind or ASan to find.
 */
int wt_fault_close_unreaped(struct wt_rig *r, int victim);

/* "polled" or "hooked": who moves the jobs from member to member. */
const char *wt_mode_name(int polled);

/**
 * struct wt_flaky - a member's operations wrapped by the test
 * @real: its backend's
 * @ops: the wrapper's (@real with @reap and @submit replaced)
 * @dev: the member
 * @reap_err: non-zero: every reap says so
 * @transient: every other reap returns one of the transient results
 *	(-EAGAIN, -EINTR, -ETIME, -ETIMEDOUT in turn)
 * @submit_fail: the submit of this number (1: the first) says -EIO
 * @reaps: reaps so far
 * @reaps_dead: reaps after the first @reap_err
 * @submits: submits so far
 */
struct wt_flaky {
	const struct wafer_backend_ops *real;
	struct wafer_backend_ops ops;
	struct wafer_dev *dev;
	int reap_err;
	int transient;
	unsigned int submit_fail;
	unsigned int reaps, reaps_dead, submits;
};

/* The one member wrapped at a time. */
extern struct wt_flaky wt_fl;

/* Member @k of @dev runs through the wrapper, set up as @f says. */
void wt_flaky_wrap(struct wafer_dev *dev, unsigned int k, struct wt_flaky f);
/* The member's own operations back (before wafer_close()). */
void wt_flaky_unwrap(void);

#endif
