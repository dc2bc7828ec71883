// SPDX-License-Identifier: MIT
/*
 * A chain's steps (see wafer_chain.h): posting them to a member, their
 * completions back to the client, a member that fails, and the caller's
 * wait on hooked members.  Everything here runs with the chain's lock
 * held, but wafer_chain_hook(), which takes it.
 *
 * A member whose reap returns a fatal error (wafer_chain_fatal(): a device
 * that died, a completion ring or a link that broke) will not complete the
 * steps it holds: it is dead from then on.  It takes no more steps, it is
 * not reaped again, and its late completions (its hook may still be
 * called) are dropped: their work is over and the client's records may
 * hold other work by then.  The client's @failed op ends what it holds,
 * as the kernel driver completes every job of a device that died with
 * -ENODEV or -EIO; the client fails later work that would reach it.
 */
#include <errno.h>
#include <time.h>

#include "wafer_chain.h"

/* Gives @n steps to member @k; how many it took, or its -errno. */
int wafer_chain_post(struct wafer_chain *ch, unsigned int k, const struct wafer_job_hw *j,
		     unsigned int n)
{
	int ret = ch->m[k]->ops->submit(ch->m[k], j, n);

	if (ret > 0)
		ch->busy[k] += (unsigned int)ret;
	return ret;
}

/* Member @k completed @c[0..n): no longer its, the client's to move on. */
static void completed(struct wafer_chain *ch, unsigned int k, const struct wafer_completion *c,
		      unsigned int n)
{
	ch->busy[k] -= n < ch->busy[k] ? n : ch->busy[k];
	ch->ops->completed(ch, k, c, n);
}

/* A hooked member's completion, from its own thread. */
void wafer_chain_hook(void *arg, const struct wafer_completion *c)
{
	struct wafer_chain_hook *h = arg;
	struct wafer_chain *ch = h->ch;

	pthread_mutex_lock(&ch->lock);
	/*
	 * A dead member's work is over already; a closing chain's members go
	 * one by one, so nothing is posted to them any more.
	 */
	if (!ch->dead[h->k] && !ch->closing)
		completed(ch, h->k, c, 1);
	pthread_mutex_unlock(&ch->lock);
}

/*
 * An error other than a wait that ran out (-ETIME, -ETIMEDOUT), was
 * interrupted (-EINTR) or found nothing yet (-EAGAIN), which the next reap
 * may answer, and other than the caller's -EEXIST: a kernel member's
 * io_uring ring reaped by another thread than the one that first used it
 * (wafer_uring.c), which that thread still can (the reap returns it,
 * nothing fails).  The rest (a device gone, a completion ring that broke)
 * will not complete what the member holds.
 */
int wafer_chain_fatal(int ret)
{
	return ret < 0 && ret != -EAGAIN && ret != -EINTR && ret != -ETIME &&
	       ret != -ETIMEDOUT && ret != -EEXIST;
}

/* Member @k failed with @err: it is dead, the client ends what it holds. */
void wafer_chain_fail(struct wafer_chain *ch, unsigned int k, int err)
{
	if (ch->dead[k])
		return;
	ch->dead[k] = err;
	ch->busy[k] = 0;	/* nothing to wait for there */
	ch->ops->failed(ch, k, err);
}

/* The first dead one of members [0, @n), its error; or 0. */
int wafer_chain_dead(const struct wafer_chain *ch, unsigned int n)
{
	unsigned int k;

	for (k = 0; k < n; k++)
		if (ch->dead[k])
			return ch->dead[k];
	return 0;
}

/*
 * Reaps member @k (waiting until @until_ns for @min) and hands what it
 * completed to the client.  A fatal error fails the member and what it
 * holds; a transient one is no completion yet.  A hooked member's reap
 * returns no completions (the hook has them): it only says whether the
 * member failed.  Returns the completions, or the caller's error (-EEXIST,
 * wafer_chain_fatal()).
 */
int wafer_chain_reap(struct wafer_chain *ch, unsigned int k, unsigned int min,
		     uint64_t until_ns)
{
	struct wafer_completion c[WAFER_CHAIN_REAP_MAX];
	int n;

	if (ch->dead[k])
		return 0;	/* its reap would say the same again */
	n = ch->m[k]->ops->reap(ch->m[k], c, WAFER_CHAIN_REAP_MAX, min, until_ns);
	if (wafer_chain_fatal(n))
		wafer_chain_fail(ch, k, n);
	if (n > 0)
		completed(ch, k, c, (unsigned int)n);
	return n == -EEXIST ? n : n > 0 ? n : 0;
}

/* Hooked members: whether one failed (its hook says nothing then, its reap does). */
void wafer_chain_check(struct wafer_chain *ch)
{
	unsigned int k;

	for (k = 0; k < ch->n; k++)
		wafer_chain_reap(ch, k, 0, 0);
}

/*
 * Hooked members move the work on themselves: until @done(@arg) or
 * @deadline_ns, asks their reaps whether one failed (wafer_chain_check())
 * and waits for the client's signal on @cond, WAFER_CHAIN_CHECK_NS at most
 * (or what @retry_ns(@arg) says, when given).
 */
void wafer_chain_wait(struct wafer_chain *ch, uint64_t deadline_ns, int (*done)(void *arg),
		      uint64_t (*retry_ns)(void *arg), void *arg)
{
	struct timespec ts;
	uint64_t now, until;

	for (;;) {
		wafer_chain_check(ch);
		if (done(arg))
			return;
		now = wafer_now_ns();
		if (now >= deadline_ns)
			return;
		until = now + (retry_ns ? retry_ns(arg) : WAFER_CHAIN_CHECK_NS);
		if (until > deadline_ns)
			until = deadline_ns;
		ts = (struct timespec){ .tv_sec = (time_t)(until / 1000000000ull),
					.tv_nsec = (long)(until % 1000000000ull) };
		pthread_cond_timedwait(&ch->cond, &ch->lock, &ts);
	}
}
