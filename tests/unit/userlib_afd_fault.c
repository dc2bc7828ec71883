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
 * nothing.  A submit a member refuses
 * with -EIO fails that one micro-batch's job; the other jobs and the next
 * batch complete with 0.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/wafer_backend.h"	/* wafer_inproc_fault(), a member's ops */
#include "wafer.h"
#include "wfw_abi.h"
#include "wt_util.h"

#define NJOBS	5		/* a prefill of 3 micro-batches and 4 decode steps */
#define PREFILL	40
#define CTX	64
#define TOPK	4
#define REC	WAFER_RESULT_SIZE(TOPK)
#define NREC	(PREFILL + NJOBS)
#define REAP_MS	20000

static const char *model;

static const struct wafer_convert_opts dense = { .wbits = 8, .group_size = 32 };
static const struct wafer_convert_opts moe = { .wbits = 8, .group_size = 32,
					       .moe = { .n_experts = 4, .top_k = 2,
							.n_shared = 1 } };

/** struct rig - a device with a model, a context of NJOBS slots and buffers */
struct rig {
	struct wafer_dev *dev;
	struct wafer_model *m;
	struct wafer_ctx *ctx;
	struct wafer_bo *in, *res;
};

static int rig_open(struct rig *r, unsigned int na, unsigned int nf, unsigned int ne,
		    int polled, const struct wafer_convert_opts *conv)
{
	struct wafer_open_opts o[8];
	struct wafer_afd_opts ao = { .n_attn = na, .attn = o, .n_ffn = nf, .ffn = o + na,
				     .n_expert = ne, .expert = o + na + nf, .polled = polled };
	unsigned int i;
	int ret;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < 8; i++)
		o[i] = (struct wafer_open_opts){ .backend = WAFER_BACKEND_INPROC,
						 .profile = "asic", .stages = 2 };
	ret = wafer_open_afd(&ao, &r->dev);
	ret = ret ? ret : wafer_model_load_file(r->dev, model, conv, &r->m);
	ret = ret ? ret : wafer_ctx_create(r->m, NJOBS, CTX, &r->ctx);
	ret = ret ? ret : wafer_bo_create(r->dev, 4096, &r->in);
	ret = ret ? ret : wafer_bo_create(r->dev, (size_t)NREC * REC, &r->res);
	if (ret)
		wt_diag("rig: %s", wafer_last_error());
	return ret;
}

/* Everything destroyed, as wafer_close() wants, also on a failed member. */
static void rig_close(struct rig *r)
{
	wafer_bo_destroy(r->in);
	wafer_bo_destroy(r->res);
	wafer_ctx_destroy(r->ctx);
	wafer_model_unload(r->m);
	wafer_close(r->dev);
	memset(r, 0, sizeof(*r));
}

/* Slot 0's prefill of every position (3 micro-batches), slots 1.. one token. */
static int submit_batch(struct rig *r, uint64_t ud0)
{
	uint32_t *ids = wafer_bo_map(r->in);
	struct wafer_job j[NJOBS];
	unsigned int i;

	for (i = 0; i < PREFILL + NJOBS; i++)
		ids[i] = i ? 3 + (i * 41) % 500 : 1;
	j[0] = (struct wafer_job){ .ctx = r->ctx, .n_tokens = PREFILL, .top_k = TOPK,
				   .in = r->in, .out = r->res, .flags = WAFER_JOB_ALL_POSITIONS,
				   .user_data = ud0 };
	for (i = 1; i < NJOBS; i++)
		j[i] = (struct wafer_job){ .ctx = r->ctx, .slot = i, .n_tokens = 1,
					   .top_k = TOPK, .in = r->in,
					   .in_offset = 4ull * (PREFILL + i), .out = r->res,
					   .out_offset = (uint64_t)(PREFILL + i) * REC,
					   .user_data = ud0 + i };
	return wafer_submit(r->dev, j, NJOBS);
}

/**
 * struct tally - what reaping a batch gave
 * @n: completions
 * @twice: user_data outside the batch or seen twice
 * @st: each job's status
 */
struct tally {
	unsigned int n, twice;
	int st[NJOBS];
};

/* Reaps the batch of @ud0 until every job came or a reap gave none. */
static struct tally reap_batch(struct rig *r, uint64_t ud0)
{
	struct wafer_completion c[NJOBS];
	struct tally t = { 0 };
	unsigned int seen = 0, i, b;
	int n;

	while (t.n < NJOBS) {
		n = wafer_reap(r->dev, c, NJOBS, 1, REAP_MS);
		if (n <= 0) {
			wt_diag("reap: %d (%s)", n, n < 0 ? wafer_last_error() : "none");
			break;
		}
		for (i = 0; i < (unsigned int)n; i++) {
			b = (unsigned int)(c[i].user_data - ud0);
			if (b >= NJOBS || (seen & 1u << b)) {
				t.twice++;
				continue;
			}
			seen |= 1u << b;
			t.st[b] = c[i].status;
		}
		t.n += (unsigned int)n;
	}
	return t;
}

/* Every job once, each with status @want (or 0, if @or_ok). */
static int all_were(const struct tally *t, int want, int or_ok)
{
	unsigned int i;

	if (t->n != NJOBS || t->twice)
		return 0;
	for (i = 0; i < NJOBS; i++)
		if (t->st[i] != want && (!or_ok || t->st[i]))
			return 0;
	return 1;
}

/* One batch on @r: every job once with status @want (or 0), nothing left in flight. */
static int batch_was_or(struct rig *r, uint64_t ud0, int want, int or_ok)
{
	struct tally t;

	if (submit_batch(r, ud0) != NJOBS)
		return 0;
	t = reap_batch(r, ud0);
	return all_were(&t, want, or_ok) && !wafer_inflight(r->dev);
}

static int batch_was(struct rig *r, uint64_t ud0, int want)
{
	return batch_was_or(r, ud0, want, 0);
}

static const char *mode_name(int polled)
{
	return polled ? "polled" : "hooked";
}

/*
 * Member @victim's firmware corrupts its next completion: the batch after
 * that, and the one after it, complete with -EIO, every job once.
 */
static void firmware_fault(unsigned int na, unsigned int nf, unsigned int ne, int polled,
			   unsigned int victim, const char *what)
{
	struct wafer_completion c;
	struct rig r;
	int ok;

	wafer_inproc_fault_inject = 1;
	ok = !rig_open(&r, na, nf, ne, polled, ne ? &moe : &dense);
	wafer_inproc_fault_inject = 0;
	ok = ok && batch_was(&r, 0, 0);
	ok = ok && !wafer_inproc_fault(wafer_pipe_member(r.dev, victim),
				       WFW_FAULT_CORRUPT_NEXT_CPL);
	wt_ok(ok, "--afd %u:%u%s%.0u %s: a clean batch, then the %s's fault armed (%s)", na, nf,
	      ne ? " --expert-devices " : "", ne, mode_name(polled), what,
	      ok ? "ok" : wafer_last_error());
	if (!ok) {
		rig_close(&r);
		return;
	}
	wt_ok(batch_was(&r, 100, -EIO), "%s %s fails: every job of the batch completes once, "
	      "with -EIO", mode_name(polled), what);
	wt_ok(batch_was(&r, 200, -EIO), "%s %s failed: a later batch completes at once, with -EIO",
	      mode_name(polled), what);
	wt_ok(wafer_reap(r.dev, &c, 1, 1, REAP_MS) == 0, "then a reap gives 0: nothing in flight");
	rig_close(&r);
}

/**
 * struct flaky - a member's operations wrapped by the test
 * @real: its backend's
 * @ops: the wrapper's (@real with @reap and @submit replaced)
 * @dev: the member
 * @reap_err: non-zero: every reap says so (a fatal error)
 * @transient: every other reap returns one of the transient results
 * @submit_fail: the submit of this number (1: the first) says -EIO
 * @reaps: reaps so far
 * @reaps_dead: reaps after the first @reap_err
 * @submits: submits so far
 */
static struct flaky {
	const struct wafer_backend_ops *real;
	struct wafer_backend_ops ops;
	struct wafer_dev *dev;
	int reap_err;
	int transient;
	unsigned int submit_fail;
	unsigned int reaps, reaps_dead, submits;
} fl;

static int flaky_reap(struct wafer_dev *dev, struct wafer_completion *out, unsigned int max,
		      unsigned int min, uint64_t deadline_ns)
{
	static const int soft[] = { -EAGAIN, -EINTR, -ETIME, -ETIMEDOUT };

	fl.reaps++;
	if (fl.reap_err) {
		fl.reaps_dead += fl.reaps > 1;
		return fl.reap_err;
	}
	if (fl.transient && fl.reaps % 2)
		return soft[fl.reaps / 2 % 4];
	return fl.real->reap(dev, out, max, min, deadline_ns);
}

static int flaky_submit(struct wafer_dev *dev, const struct wafer_job_hw *jobs, unsigned int n)
{
	if (++fl.submits == fl.submit_fail)
		return wafer_set_error(-EIO, "test: submit %u refused", fl.submits);
	return fl.real->submit(dev, jobs, n);
}

/* Member @k of @dev runs through the wrapper, set up as @f says. */
static void flaky_wrap(struct wafer_dev *dev, unsigned int k, struct flaky f)
{
	fl = f;
	fl.dev = wafer_pipe_member(dev, k);
	fl.real = fl.dev->ops;
	fl.ops = *fl.real;
	fl.ops.reap = flaky_reap;
	fl.ops.submit = flaky_submit;
	fl.dev->ops = &fl.ops;
}

/* The member's own operations back (before wafer_close()). */
static void flaky_unwrap(void)
{
	fl.dev->ops = fl.real;
}

/*
 * A member whose reap says -ENODEV: its jobs fail with it; it is not reaped
 * again.  Hooked, its completions may finish jobs before a reap learns it.
 */
static void reap_enodev(int polled, unsigned int victim, const char *what)
{
	struct rig r;
	int ok = !rig_open(&r, 1, 1, 0, polled, &dense) && batch_was(&r, 0, 0);

	if (!wt_ok(ok, "--afd 1:1 %s: a clean batch (%s)", mode_name(polled),
		   ok ? "ok" : wafer_last_error())) {
		rig_close(&r);
		return;
	}
	flaky_wrap(r.dev, victim, (struct flaky){ .reap_err = -ENODEV });
	wt_ok(batch_was_or(&r, 100, -ENODEV, !polled), "%s %s's reap says -ENODEV: every job of "
	      "the batch completes once, with -ENODEV%s", mode_name(polled), what,
	      polled ? "" : " (or 0: its hook finished it first)");
	wt_ok(batch_was(&r, 200, -ENODEV), "%s: a later batch completes with -ENODEV",
	      mode_name(polled));
	wt_ok(fl.reaps >= 1 && !fl.reaps_dead, "%s: the failed member is not reaped again "
	      "(%u reaps, %u after the error)", mode_name(polled), fl.reaps, fl.reaps_dead);
	flaky_unwrap();
	rig_close(&r);
}

/* Transient reap results fail nothing: the records of a clean run. */
static void reap_transient(unsigned int ne, int polled)
{
	static uint8_t want[NREC * REC];
	struct rig r;
	int ok = !rig_open(&r, 1, 1, ne, polled, ne ? &moe : &dense) && batch_was(&r, 0, 0);

	if (ok) {
		memcpy(want, wafer_bo_map(r.res), sizeof(want));
		memset(wafer_bo_map(r.res), 0, sizeof(want));
		flaky_wrap(r.dev, 1, (struct flaky){ .transient = 1 });
		ok = batch_was(&r, 100, 0) && !memcmp(want, wafer_bo_map(r.res), sizeof(want));
		flaky_unwrap();
	}
	wt_ok(ok && fl.reaps > 1, "--afd 1:1%s%.0u %s: the FFN member's reap says -EAGAIN, "
	      "-EINTR, -ETIME, -ETIMEDOUT every other call (%u calls): every job completes with "
	      "0, the records a clean run's", ne ? " --expert-devices " : "", ne,
	      mode_name(polled), fl.reaps);
	rig_close(&r);
}

/*
 * The caller's error, -EEXIST (a polled kernel member's io_uring ring
 * reaped by another thread than the one that used it first), fails
 * nothing: the reap says it, and once the member's reap works the batch
 * completes with 0.
 */
static void reap_foreign(void)
{
	struct wafer_completion c[NJOBS];
	struct tally t = { 0 };
	struct rig r;
	int ok = !rig_open(&r, 1, 1, 0, 1, &dense) && batch_was(&r, 0, 0), n = 0;

	if (ok) {
		flaky_wrap(r.dev, 1, (struct flaky){ .reap_err = -EEXIST });
		ok = submit_batch(&r, 100) == NJOBS;
		n = wafer_reap(r.dev, c, NJOBS, NJOBS, REAP_MS);
		fl.reap_err = 0;
		t = reap_batch(&r, 100);
		ok = ok && all_were(&t, 0, 0) && !wafer_inflight(r.dev);
		flaky_unwrap();
	}
	wt_ok(ok && n == -EEXIST, "--afd 1:1 polled: the FFN member's reap says -EEXIST (the "
	      "caller's): the reap returns it (%d), nothing fails; then every job completes "
	      "with 0", n);
	rig_close(&r);
}

/* A submit the FFN member refuses fails that micro-batch's job only. */
static void submit_refused(int polled)
{
	struct rig r;
	struct tally t;
	unsigned int i, failed = 0, good = 0;
	int ok = !rig_open(&r, 1, 1, 0, polled, &dense) && batch_was(&r, 0, 0);

	if (ok) {
		/* The 4th step to the FFN: a decode step's (the prefill's go first). */
		flaky_wrap(r.dev, 1, (struct flaky){ .submit_fail = 4 });
		ok = submit_batch(&r, 100) == NJOBS;
		t = reap_batch(&r, 100);
		for (i = 0; ok && i < NJOBS; i++) {
			failed += t.st[i] == -EIO;
			good += t.st[i] == 0;
		}
		ok = ok && t.n == NJOBS && !t.twice && failed == 1 && good == NJOBS - 1;
		ok = ok && batch_was(&r, 200, 0);
		flaky_unwrap();
	}
	wt_ok(ok, "--afd 1:1 %s: a step the FFN member refuses (-EIO) fails its job alone (%u "
	      "failed, %u ok); the next batch completes with 0", mode_name(polled), failed, good);
	rig_close(&r);
}

int main(void)
{
	int polled;

	model = wt_model_path("stories260K.bin") ? strdup(wt_model_path("stories260K.bin")) : NULL;
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
	}
	reap_foreign();
	free((void *)model);
	return wt_done();
}
