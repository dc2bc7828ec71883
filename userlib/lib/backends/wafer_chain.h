/* SPDX-License-Identifier: MIT */
/*
 * wafer_chain.h - the machinery the backends built of other devices run
 * their jobs on (the pipeline, wafer_pipe.h; attention-FFN disaggregation,
 * wafer_afd.h): the members, the steps each holds, how a step's
 * completion comes back, what a member that fails ends, and how an object
 * is drained of the steps that use it before it goes.
 *
 * A client (the pipeline, the AFD device) embeds a struct wafer_chain and
 * keeps its own records of what runs where.  It posts steps to member k
 * with wafer_chain_post(); the chain hands their completions back to its
 * @completed op, and a member's failure to its @failed op, always with
 * the chain's lock held.  A member is stepped through three operations
 * only, so that one on another host (its backend a link) can be one:
 *
 *   submit        takes steps (struct wafer_job_hw, buffers the member can
 *                 see) and says how many it took;
 *   reap          returns completions (struct wafer_completion, the
 *                 step's user_data and status, the modelled device_ns and
 *                 done_ns), or an error: wafer_chain_fatal() says whether
 *                 the member is gone (a device that died, a link that
 *                 broke); the steps it holds will then not complete;
 *   set_cpl_hook  optional: the member calls wafer_chain_hook() from its
 *                 own thread for each completion (a link's receiving
 *                 thread), and its reap then only says whether it failed.
 *
 * Either every member is hooked (they move the work on themselves, the
 * caller's reap only waits) or the chain is polled (the caller's reap
 * collects completions and posts the next steps).
 */
#ifndef WAFER_CHAIN_H
#define WAFER_CHAIN_H

#include <pthread.h>

#include "../wafer_backend.h"

/* Members of a chain at most: a whole chain's, local or not. */
#define WAFER_CHAIN_MAX		WAFER_CHAIN_MAX_DEVICES
/* Completions one reap of a member collects at most (a client's records). */
#define WAFER_CHAIN_REAP_MAX	256

/*
 * How often a wait on hooked members asks their reaps whether one failed:
 * a member that fails calls no hook, only its reap says so.
 */
#define WAFER_CHAIN_CHECK_NS	10000000ull

struct wafer_chain;

/**
 * struct wafer_chain_gone - an object of the device being destroyed
 * @bo: a buffer, or NULL
 * @ctx: else a context's id, or 0
 * @model: else a model's id
 */
struct wafer_chain_gone {
	const struct wafer_bo *bo;
	uint32_t ctx, model;
};

/**
 * struct wafer_chain_ops - what the client does for the chain (lock held)
 * @completed: member @k completed steps @c[0..n): move them on
 * @failed: member @k failed with @err (already dead: it takes no more
 *	steps, its late completions are dropped): end what it holds
 * @running: the client's work in flight that uses @g's object: how many
 *	still run (wafer_chain_drain())
 */
struct wafer_chain_ops {
	void (*completed)(struct wafer_chain *ch, unsigned int k,
			  const struct wafer_completion *c, unsigned int n);
	void (*failed)(struct wafer_chain *ch, unsigned int k, int err);
	unsigned int (*running)(struct wafer_chain *ch, const struct wafer_chain_gone *g);
};

/** struct wafer_chain_hook - a member's completion hook's argument */
struct wafer_chain_hook {
	struct wafer_chain *ch;
	unsigned int k;
};

/**
 * struct wafer_chain - the members and their steps
 * @ops: the client's
 * @n: members
 * @m: the members
 * @hook: the hooks' arguments
 * @hooked: every member hands its completions to wafer_chain_hook()
 *	(inproc); else the chain is polled (the caller's reap moves it on)
 * @busy: per member, steps it holds (what a polled reap waits for)
 * @dead: per member, 0, or the fatal error its reap returned
 *	(wafer_chain_fail())
 * @closing: wafer_chain_close() began: the hooks move nothing on any more
 * @lock: guards the chain and the client's records (hooks run on the
 *	members' threads)
 * @cond: signalled when the client finished something (wafer_chain_wait())
 */
struct wafer_chain {
	const struct wafer_chain_ops *ops;
	unsigned int n;
	struct wafer_dev *m[WAFER_CHAIN_MAX];
	struct wafer_chain_hook hook[WAFER_CHAIN_MAX];
	int hooked;
	unsigned int busy[WAFER_CHAIN_MAX];
	int dead[WAFER_CHAIN_MAX];
	int closing;
	pthread_mutex_t lock;
	pthread_cond_t cond;
};

/* wafer_chain.c: members. */
int wafer_chain_init(struct wafer_chain *ch, const struct wafer_chain_ops *ops);
/* Hooks every member where each can (and not @polled): sets @hooked. */
void wafer_chain_hook_members(struct wafer_chain *ch, int polled);
/* Stops the hooks, closes the members (joining their threads). */
void wafer_chain_close(struct wafer_chain *ch);

/* wafer_chain_step.c: steps, completions, failures (lock held). */
int wafer_chain_post(struct wafer_chain *ch, unsigned int k, const struct wafer_job_hw *j,
		     unsigned int n);
void wafer_chain_hook(void *arg, const struct wafer_completion *c);
int wafer_chain_reap(struct wafer_chain *ch, unsigned int k, unsigned int min,
		     uint64_t until_ns);
void wafer_chain_check(struct wafer_chain *ch);
int wafer_chain_fatal(int ret);
void wafer_chain_fail(struct wafer_chain *ch, unsigned int k, int err);
int wafer_chain_dead(const struct wafer_chain *ch, unsigned int n);
void wafer_chain_wait(struct wafer_chain *ch, uint64_t deadline_ns, int (*done)(void *arg),
		      uint64_t (*retry_ns)(void *arg), void *arg);

/* wafer_chain_drain.c: objects destroyed while steps use them. */
int wafer_chain_uses(const struct wafer_job_hw *j, uint32_t model,
		     const struct wafer_chain_gone *g);
void wafer_chain_drain(struct wafer_chain *ch, struct wafer_chain_gone g, uint32_t timeout_ms);

/* wafer_chain_times.c: the members' one modelled timeline. */
unsigned int wafer_chain_stage0(const struct wafer_chain *ch, unsigned int k);
uint64_t wafer_chain_rec_t_ns(const void *rec);

#endif /* WAFER_CHAIN_H */
