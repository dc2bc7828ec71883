// SPDX-License-Identifier: MIT
/*
 * A member of a pipeline (wafer_open_pipeline()) that fails, in process.
 *
 * A member's fatal reap error completes every job it holds once, with that
 * error as the status; the jobs upstream of it complete with it as they
 * reach it (each job crosses every member of its model), a reap after that
 * does not wait for them, a job submitted later completes with the error
 * at once, and the pipeline closes (run under valgrind or ASan for "frees
 * everything").  Pipelines of 2 and 3 members, the failing member first,
 * in the middle and last, hooked (the members' completion threads move the
 * jobs on) and polled (the caller's reap does, as with kernel members;
 * here the hooks are taken away before the first job).  Two ways to fail a
 * member: the firmware's FAULT_INJECT (a corrupted completion: the
 * in-process driver core's reap says -EIO, as a device whose completion
 * ring broke), and a member whose reap says -ENODEV (a kernel device
 * unplugged), which is then never reaped again and whose late completions
 * (hooked: the device still runs) are dropped.  Transient reap results
 * (-EAGAIN, -EINTR, -ETIME, -ETIMEDOUT every other call) fail nothing: the
 * records are byte-identical to a clean run's; -EEXIST (a polled member's
 * io_uring ring reaped from another thread) is the reap's error and fails
 * nothing.  wafer_close() while a failed member still runs jobs, and with
 * jobs in flight that nobody reaped (their objects destroyed first), frees
 * everything and uses nothing freed.
 */
#include <errno.h>
#include <string.h>

#include "lib/backends/wafer_pipe.h"	/* wafer_inproc_fault(), the pipeline polled */
#include "wafer.h"
#include "wfw_abi.h"
#include "wt_fault.h"
#include "wt_util.h"

static const char *model;

static const struct wafer_convert_opts conv = { .wbits = 8, .group_size = 32 };

/*
 * The caller's reap moves the jobs on, as with kernel members: the
 * members' hooks taken away before any job ran.
 */
static void make_polled(struct wafer_dev *dev)
{
	struct pipe *p = pipe_of(dev);
	unsigned int k;

	for (k = 0; k < p->ch.n; k++)
		p->ch.m[k]->ops->set_cpl_hook(p->ch.m[k], NULL, NULL);
	p->ch.hooked = 0;
}

static int rig_open(struct wt_rig *r, unsigned int n, int polled)
{
	struct wafer_open_opts o[3];
	struct wafer_pipe_opts po = { .n_devices = n, .devices = o };
	int ret;

	memset(r, 0, sizeof(*r));
	wt_rig_members(o, 3);
	ret = wafer_open_pipeline(&po, &r->dev);
	if (ret)
		wt_diag("rig: %s", wafer_last_error());
	else if (polled)
		make_polled(r->dev);
	return ret ? ret : wt_rig_load(r, model, &conv);
}

static const char *place_name(unsigned int n, unsigned int victim)
{
	return !victim ? "first" : victim + 1 == n ? "last" : "middle";
}

/* A pipeline of @n, hooked or @polled, and a clean batch; 0 or -1 (reported). */
static int rig_clean(struct wt_rig *r, unsigned int n, int polled, int inject)
{
	int ok;

	wafer_inproc_fault_inject = inject;
	ok = !rig_open(r, n, polled);
	wafer_inproc_fault_inject = 0;
	ok = ok && wt_fault_batch_was(r, 0, 0, 0);
	if (!ok) {
		wt_ok(0, "pipeline of %u %s: a clean batch (%s)", n, wt_mode_name(polled),
		      wafer_last_error());
		wt_rig_close(r);
	}
	return ok ? 0 : -1;
}

/*
 * Member @victim's firmware corrupts its next completion: the batch after
 * that, and the one after it, complete with -EIO, every job once (none
 * got past the victim: its first completion of the batch was the bad one).
 */
static void firmware_fault(unsigned int n, int polled, unsigned int victim)
{
	struct wafer_completion c;
	struct wt_rig r;
	int ok;

	if (rig_clean(&r, n, polled, 1))
		return;
	ok = !wafer_inproc_fault(wafer_pipe_member(r.dev, victim), WFW_FAULT_CORRUPT_NEXT_CPL);
	wt_ok(ok, "pipeline of %u %s: the %s member's fault armed (%s)", n, wt_mode_name(polled),
	      place_name(n, victim), ok ? "ok" : wafer_last_error());
	if (ok) {
		wt_ok(wt_fault_batch_was(&r, 100, -EIO, 0), "%u %s, %s member fails: every job "
		      "of the batch completes once, with -EIO", n, wt_mode_name(polled),
		      place_name(n, victim));
		wt_ok(wt_fault_batch_was(&r, 200, -EIO, 0), "%u %s, %s member failed: a later "
		      "batch completes at once, with -EIO", n, wt_mode_name(polled),
		      place_name(n, victim));
		wt_ok(wafer_reap(r.dev, &c, 1, 1, WT_FAULT_REAP_MS) == 0,
		      "then a reap gives 0: nothing in flight");
	}
	wt_rig_close(&r);
}

/*
 * A member whose reap says -ENODEV: the jobs fail with it; it is not
 * reaped again.  Hooked, its completions may finish jobs before a reap
 * learns it.
 */
static void reap_enodev(unsigned int n, int polled, unsigned int victim)
{
	struct wt_rig r;

	if (rig_clean(&r, n, polled, 0))
		return;
	wt_flaky_wrap(r.dev, victim, (struct wt_flaky){ .reap_err = -ENODEV });
	wt_ok(wt_fault_batch_was(&r, 100, -ENODEV, !polled), "%u %s, the %s member's reap says "
	      "-ENODEV: every job of the batch completes once, with -ENODEV%s", n,
	      wt_mode_name(polled), place_name(n, victim),
	      polled ? "" : " (or 0: the hooks finished it first)");
	wt_ok(wt_fault_batch_was(&r, 200, -ENODEV, 0), "%u %s: a later batch completes with "
	      "-ENODEV", n, wt_mode_name(polled));
	wt_ok(wt_fl.reaps >= 1 && !wt_fl.reaps_dead, "%u %s: the failed member is not reaped "
	      "again (%u reaps, %u after the error)", n, wt_mode_name(polled), wt_fl.reaps,
	      wt_fl.reaps_dead);
	wt_flaky_unwrap();
	wt_rig_close(&r);
}

/* Transient reap results fail nothing: the records of a clean run. */
static void reap_transient(unsigned int n, int polled, unsigned int victim)
{
	static uint8_t want[WT_FAULT_NREC * WT_FAULT_REC];
	struct wt_rig r;
	int ok;

	if (rig_clean(&r, n, polled, 0))
		return;
	memcpy(want, wafer_bo_map(r.res), sizeof(want));
	memset(wafer_bo_map(r.res), 0, sizeof(want));
	wt_flaky_wrap(r.dev, victim, (struct wt_flaky){ .transient = 1 });
	ok = wt_fault_batch_was(&r, 100, 0, 0) && !memcmp(want, wafer_bo_map(r.res), sizeof(want));
	wt_flaky_unwrap();
	wt_ok(ok && wt_fl.reaps >= (polled ? 2u : 1u), "%u %s: the %s member's reap says -EAGAIN, "
	      "-EINTR, -ETIME, -ETIMEDOUT every other call (%u calls): every job completes "
	      "with 0, the records a clean run's", n, wt_mode_name(polled), place_name(n, victim),
	      wt_fl.reaps);
	wt_rig_close(&r);
}

/*
 * The caller's error, -EEXIST (a polled kernel member's io_uring ring
 * reaped by another thread than the one that used it first), fails
 * nothing: the reap says it, and once the member's reap works the batch
 * completes with 0.
 */
static void reap_foreign(unsigned int n, unsigned int victim)
{
	struct wt_rig r;
	int ok, ret = 0;

	if (rig_clean(&r, n, 1, 0))
		return;
	ok = wt_fault_foreign(&r, victim, &ret);
	wt_ok(ok && ret == -EEXIST, "%u polled: the %s member's reap says -EEXIST (the "
	      "caller's): the reap returns it (%d), nothing fails; then every job completes "
	      "with 0", n, place_name(n, victim), ret);
	wt_rig_close(&r);
}

/*
 * wafer_close() while a member still runs jobs: the first member's reap
 * says -ENODEV (its device still runs the batch, its hook may still be
 * called), the jobs complete with it, then everything is destroyed and
 * closed at once (valgrind: nothing used after it was freed, nothing lost).
 * Objects in use by jobs the caller did not reap are the caller's error
 * (wafer_close()), so every job is reaped first.
 */
static void close_inflight(unsigned int n, int polled)
{
	struct wt_tally t = { 0 };
	struct wt_rig r;
	int ok;

	if (rig_clean(&r, n, polled, 0))
		return;
	wt_flaky_wrap(r.dev, 0, (struct wt_flaky){ .reap_err = -ENODEV });
	ok = wt_fault_submit(&r, 100) == WT_FAULT_NJOBS;
	if (ok)
		t = wt_fault_reap(&r, 100);
	ok = ok && wt_fault_all_were(&t, -ENODEV, !polled);
	wt_flaky_unwrap();
	wt_rig_close(&r);
	wt_ok(ok, "%u %s: the first member's reap says -ENODEV while it runs a batch: every job "
	      "completes with it%s, and wafer_close() while the member still runs them", n,
	      wt_mode_name(polled), polled ? "" : " (or 0)");
}

/*
 * wafer_close() with a batch in flight, nothing reaped, its objects
 * destroyed first; with @victim's firmware faulted (-1: none).  Hooked, a
 * member's completion thread would post a job's next part with what was
 * destroyed.
 */
static void close_unreaped(unsigned int n, int polled, int victim)
{
	struct wt_rig r;

	if (rig_clean(&r, n, polled, 1))
		return;
	wt_ok(wt_fault_close_unreaped(&r, victim), "%u %s: everything destroyed and closed with "
	      "a batch in flight%s%s", n, wt_mode_name(polled),
	      victim < 0 ? "" : ", the faulted member ",
	      victim < 0 ? "" : place_name(n, (unsigned int)victim));
}

/* Every case on a pipeline of @n, hooked or @polled. */
static void cases(unsigned int n, int polled)
{
	unsigned int v;

	for (v = 0; v < n; v++) {
		firmware_fault(n, polled, v);
		reap_enodev(n, polled, v);
		reap_transient(n, polled, v);
		if (polled)
			reap_foreign(n, v);
	}
	close_inflight(n, polled);
	close_unreaped(n, polled, -1);
	close_unreaped(n, polled, (int)n - 1);
}

int main(void)
{
	int polled;

	model = wt_fault_model();
	if (!wt_ok(model != NULL, "shared model found"))
		return wt_done();
	for (polled = 0; polled < 2; polled++) {
		cases(2, polled);
		cases(3, polled);
	}
	return wt_done();
}
