/* SPDX-License-Identifier: MIT */
/*
 * wafer_members.h - the objects of the backends built of other devices
 * (the pipeline, wafer_pipe.c; attention-FFN disaggregation, wafer_afd.c)
 * made of their members' objects: their wafer_info, buffers every member
 * can use, their counters.  How work runs on the members is wafer_chain.h.
 */
#ifndef WAFER_MEMBERS_H
#define WAFER_MEMBERS_H

#include "../wafer_backend.h"

#define MIN_NZ(a, b)	((a) == 0 ? (b) : (b) == 0 ? (a) : (a) < (b) ? (a) : (b))

/*
 * @n members' wafer_info combined into @i: member 0's, stages and free SRAM
 * summed, caps and limits the smallest, "mixed" profiles, job timeouts
 * summed (a job waits on every member in turn).
 */
void wafer_members_info(struct wafer_info *i, struct wafer_dev *const *m, unsigned int n);

/*
 * A buffer of @bo->size bytes allocated on member 0 (@on[0]) and a view on
 * every other (@on[k]); @bo maps @on[0].  On failure none is left.
 */
int wafer_members_bo_create(struct wafer_dev *const *m, unsigned int n, struct wafer_bo *bo,
			    struct wafer_bo **on);
void wafer_members_bo_destroy(struct wafer_bo **on, unsigned int n);

/*
 * The members' counters: jobs, tokens and the modelled clock are those of
 * the last member that ran jobs (every job ends there, and the members
 * share one timeline through their activation records); busy time summed,
 * the bottleneck and the expert load imbalance the worst member's.
 */
int wafer_members_stats(struct wafer_dev *const *m, unsigned int n, struct wafer_dev_stats *st);

#endif /* WAFER_MEMBERS_H */
