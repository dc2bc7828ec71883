// SPDX-License-Identifier: MIT
/*
 * A member of an AFD device (wafer_open_afd()) that fails, in process.
 *
 * A member's fatal reap error completes every micro-batch it holds, and
 * every job they belong to once, with that error as the status; a reap
 * after that does not wait for them, a job submitted later completes with
 * the error too, and the device closes (run under valgrind or ASan for
 * "frees everything").  Two ways to fail a member: the firmware's
 * FAULT_INJECT (a corrupted completion: the in-process driver core stops
 * taking completions and its reap says -EIO, as a device whose completion
 * ring broke), on an FFN, an attention and an expert member, hooked and
 * polled; and a member whose reap says -ENODEV (a kernel device unplugged),
 * whose reap is then never called again and whose late completions
 * (hooked: the device still runs) are dropped.  Transient reap results
 * (-EAGAIN, -EINTR, -ETIME, -ETIMEDOUT every other call) fail nothing: the
 * records are byte-identical to a clean run; -EEXIST (a polled member's
 * io_uring ring reaped from another thread) is the reap's error and fails
 * nothing.  A submit a member refuses with -EIO fails that one
 * micro-batch's job; the other jobs and the next batch complete with 0.
 * wafer_close() with jobs nobody reaped (their objects destroyed first)
 * uses nothing freed.
 */
#include <errno.h>
#include <string.h>

#include "lib/wafer_backend.h"	/* wafer_inproc_fault() */
#include "wafer.h"
#include "wfw_abi.h"
#include "wt_fault.h"		/* a batch: a prefill of 3 micro-batches, 4 decode steps */
#include "wt_util.h"

static const char *model;

static const struct wafer_convert_opts dense = { .wbits = 8, .group_size = 32 };
static const struct wafer_convert_opts moe = { .wbits = 8, .group_size = 32,
					       .moe = { .n_experts = 4, .top_k = 2,
							.n_shared = 1 } };

static int rig_open(struct wt_rig *r, unsigned int na, unsigned int nf, unsigned int ne,
		    int polled, const struct wafer_convert_opts *conv)
{
	struct wafer_open_opts o[8];
	struct wafer_afd_opts ao = { .n_attn = na, .attn = o, .n_ffn = nf, .ffn = o + na,
				     .n_expert = ne, .expert = o + na + nf, .polled = polled };
	int ret;

	memset(r, 0, sizeof(*r));
	wt_rig_members(o, 8);
	ret = wafer_open_afd(&ao, &r->dev);
	if (ret)
		wt_diag("rig: %s", wafer_last_error());
	return ret ? ret : wt_rig_load(r, model, conv);
}

/*
 * Member @victim's firmware corrupts its next completion: the batch after
 * that, and the one after it, complete with -EIO, every job once.
 */
static void firmware_fault(unsigned int na, unsigned int nf, unsigned int ne, int polled,
			   unsigned int victim, const char *what)
{
	struct wafer_completion c;
	struct wt_rig r;
	int ok;

	wafer_inproc_fault_inject = 1;
	ok = !rig_open(&r, na, nf, ne, polled, ne ? &moe : &dense);
	wafer_inproc_fault_inject = 0;
	ok = ok && wt_fault_batch_was(&r, 0, 0, 0);
	ok = ok && !wafer_inproc_fault(wafer_pipe_member(r.dev, victim),
				       WFW_FAULT_CORRUPT_NEXT_CPL);
	wt_ok(ok, "--afd %u:%u%s%.0u %s: a clean batch, then the %s's fault armed (%s)", na, nf,
	      ne ? " --expert-devices " : "", ne, wt_mode_name(polled), what,
	      ok ? "ok" : wafer_last_error());
	if (!ok) {
		wt_rig_close(&r);
		return;
	}
	wt_ok(wt_fault_batch_was(&r, 100, -EIO, 0), "%s %s fails: every job of the batch "
	      "completes once, with -EIO", wt_mode_name(polled), what);
	wt_ok(wt_fault_batch_was(&r, 200, -EIO, 0), "%s %s failed: a later batch completes at "
	      "once, with -EIO", wt_mode_name(polled), what);
	wt_ok(wafer_reap(r.dev, &c, 1, 1, WT_FAULT_REAP_MS) == 0,
	      "then a reap gives 0: nothing in flight");
	wt_rig_close(&r);
}

/*
 * A member whose reap says -ENODEV: its jobs fail with it; it is not reaped
 * again.  Hooked, its completions may finish jobs before a reap learns it.
 */
static void reap_enodev(int polled, unsigned int victim, const char *what)
{
	struct wt_rig r;
	int ok = !rig_open(&r, 1, 1, 0, polled, &dense) && wt_fault_batch_was(&r, 0, 0, 0);

	if (!wt_ok(ok, "--afd 1:1 %s: a clean batch (%s)", wt_mode_name(polled),
		   ok ? "ok" : wafer_last_error())) {
		wt_rig_close(&r);
		return;
	}
	wt_flaky_wrap(r.dev, victim, (struct wt_flaky){ .reap_err = -ENODEV });
	wt_ok(wt_fault_batch_was(&r, 100, -ENODEV, !polled), "%s %s's reap says -ENODEV: every "
	      "job of the batch completes once, with -ENODEV%s", wt_mode_name(polled), what,
	      polled ? "" : " (or 0: its hook finished it first)");
	wt_ok(wt_fault_batch_was(&r, 200, -ENODEV, 0), "%s: a later batch completes with -ENODEV",
	      wt_mode_name(polled));
	wt_ok(wt_fl.reaps >= 1 && !wt_fl.reaps_dead, "%s: the failed member is not reaped again "
	      "(%u reaps, %u after the error)", wt_mode_name(polled), wt_fl.reaps,
	      wt_fl.reaps_dead);
	wt_flaky_unwrap();
	wt_rig_close(&r);
}

/* Transient reap results fail nothing: the records of a clean run. */
static void reap_transient(unsigned int ne, int polled)
{
	static uint8_t want[WT_FAULT_NREC * WT_FAULT_REC];
	struct wt_rig r;
	int ok = !rig_open(&r, 1, 1, ne, polled, ne ? &moe : &dense) &&
		 wt_fault_batch_was(&r, 0, 0, 0);

	if (ok) {
		memcpy(want, wafer_bo_map(r.res), sizeof(want));
		memset(wafer_bo_map(r.res), 0, sizeof(want));
		wt_flaky_wrap(r.dev, 1, (struct wt_flaky){ .transient = 1 });
		ok = wt_fault_batch_was(&r, 100, 0, 0) &&
		     !memcmp(want, wafer_bo_map(r.res), sizeof(want));
		wt_flaky_unwrap();
	}
	wt_ok(ok && wt_fl.reaps > 1, "--afd 1:1%s%.0u %s: the FFN member's reap says -EAGAIN, "
	      "-EINTR, -ETIME, -ETIMEDOUT every other call (%u calls): every job completes with "
	      "0, the records a clean run's", ne ? " --expert-devices " : "", ne,
	      wt_mode_name(polled), wt_fl.reaps);
	wt_rig_close(&r);
}

/*
 * The caller's error, -EEXIST (a polled kernel member's io_uring ring
 * reaped by another thread than the one that used it first), fails
 * nothing: the reap says it, and once the member's reap works the batch
 * completes with 0.
 */
static void reap_foreign(void)
{
	struct wt_rig r;
	int ok = !rig_open(&r, 1, 1, 0, 1, &dense) && wt_fault_batch_was(&r, 0, 0, 0), n = 0;

	ok = ok && wt_fault_foreign(&r, 1, &n);
	wt_ok(ok && n == -EEXIST, "--afd 1:1 polled: the FFN member's reap says -EEXIST (the "
	      "caller's): the reap returns it (%d), nothing fails; then every job completes "
	      "with 0", n);
	wt_rig_close(&r);
}

/* A submit the FFN member refuses fails that micro-batch's job only. */
static void submit_refused(int polled)
{
	struct wt_rig r;
	struct wt_tally t;
	unsigned int i, failed = 0, good = 0;
	int ok = !rig_open(&r, 1, 1, 0, polled, &dense) && wt_fault_batch_was(&r, 0, 0, 0);

	if (ok) {
		/* The 4th step to the FFN: a decode step's (the prefill's go first). */
		wt_flaky_wrap(r.dev, 1, (struct wt_flaky){ .submit_fail = 4 });
		ok = wt_fault_submit(&r, 100) == WT_FAULT_NJOBS;
		t = wt_fault_reap(&r, 100);
		for (i = 0; ok && i < WT_FAULT_NJOBS; i++) {
			failed += t.st[i] == -EIO;
			good += t.st[i] == 0;
		}
		ok = ok && t.n == WT_FAULT_NJOBS && !t.twice && failed == 1 &&
		     good == WT_FAULT_NJOBS - 1;
		ok = ok && wt_fault_batch_was(&r, 200, 0, 0);
		wt_flaky_unwrap();
	}
	wt_ok(ok, "--afd 1:1 %s: a step the FFN member refuses (-EIO) fails its job alone (%u "
	      "failed, %u ok); the next batch completes with 0", wt_mode_name(polled), failed,
	      good);
	wt_rig_close(&r);
}

/*
 * wafer_close() with a batch in flight, nothing reaped, its objects
 * destroyed first; with member @victim's firmware faulted (-1: none).
 * Hooked, a member's completion thread would post a micro-batch's next
 * step with what was destroyed.
 */
static void close_unreaped(int polled, int victim)
{
	struct wt_rig r;
	int ok;

	wafer_inproc_fault_inject = 1;
	ok = !rig_open(&r, 1, 1, 0, polled, &dense);
	wafer_inproc_fault_inject = 0;
	ok = ok && wt_fault_batch_was(&r, 0, 0, 0);
	if (!ok) {
		wt_ok(0, "--afd 1:1 %s: a clean batch (%s)", wt_mode_name(polled),
		      wafer_last_error());
		wt_rig_close(&r);
		return;
	}
	wt_ok(wt_fault_close_unreaped(&r, victim), "--afd 1:1 %s: everything destroyed and "
	      "closed with a batch in flight%s", wt_mode_name(polled),
	      victim < 0 ? "" : ", the FFN member faulted");
}

int main(void)
{
	int polled;

	model = wt_fault_model();
	if (!wt_ok(model != NULL, "shared model found"))
		return wt_done();
	for (polled = 0; polled < 2; polled++) {
		firmware_fault(1, 1, 0, polled, 1, "FFN member");
		firmware_fault(2, 2, 0, polled, polled ? 1 : 0, "attention member");
		firmware_fault(1, 1, 2, polled, 3, "expert member");
		reap_enodev(polled, 1, "the FFN member");
		reap_transient(0, polled);
		reap_transient(2, polled);
		submit_refused(polled);
		close_unreaped(polled, -1);
		close_unreaped(polled, 1);
	}
	reap_foreign();
	return wt_done();
}
