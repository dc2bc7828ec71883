// SPDX-License-Identifier: MIT
/*
 * conformance: SUBMIT.
 */
#include "conformance.h"

struct drm_wafer_job job_base;

int submit(int fd, const struct drm_wafer_job *j, uint64_t *seqno)
{
	struct drm_wafer_submit s = { .job = *j, .seqno = POISON64 };
	int ret = ioc(fd, DRM_IOCTL_WAFER_SUBMIT, &s);

	if (seqno)
		*seqno = s.seqno;
	return ret;
}

/* A job that must be rejected; if it was accepted, reap it. */
void reject(int fd, const struct drm_wafer_job *j, int want, const char *name)
{
	uint64_t seqno;
	int ret = submit(fd, j, &seqno);

	expect(ret, want, "SUBMIT %s", name);
	if (!ret)
		wait_job(fd, seqno, 60, NULL);
}

/* The producer of test_wait_submit(): submits once @tid sleeps in SUBMIT. */
struct wait_submit_producer {
	int fd;
	pid_t tid;
	uint32_t sync;
	int slept;	/* out: the waiting thread was seen asleep in an ioctl */
	int ret;	/* out: the producer's SUBMIT */
};

/* Whether thread @tid sleeps (state S) in ioctl(2). */
static int asleep_in_ioctl(pid_t tid)
{
	char path[64], buf[256], *p;
	int nr = -1, ok;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	ok = fscanf(f, "%d", &nr) == 1 && nr == SYS_ioctl;
	fclose(f);
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	return ok && p && p[1] == ' ' && p[2] == 'S';
}

static void *wait_submit_produce(void *arg)
{
	struct wait_submit_producer *pr = arg;
	struct drm_wafer_job j = job_base;
	int i;

	for (i = 0; i < 400 && !pr->slept; i++) {
		pr->slept = asleep_in_ioctl(pr->tid);
		usleep(10000);
	}
	j.out_syncobj = pr->sync;
	pr->ret = submit(pr->fd, &j, NULL);
	return NULL;
}

/*
 * DRM_WAFER_JOB_WAIT_SUBMIT: an in-syncobj with no fence is waited for
 * until a job puts one there (another thread here, as another device's
 * submission from io_uring's worker would), or 5 s (-ETIME).
 */
static void test_wait_submit(int fa, uint32_t sync_sig, uint32_t sync_nofence)
{
	struct wait_submit_producer pr = { .fd = fa, .tid = (pid_t)syscall(SYS_gettid) };
	struct drm_wafer_job j = job_base;
	pthread_t th;
	uint64_t seq;
	int ret, st;

	j.flags |= DRM_WAFER_JOB_WAIT_SUBMIT;
	reject(fa, &j, -EINVAL, "WAIT_SUBMIT without in-syncobjs");
	j.in_syncobjs = (uintptr_t)&sync_nofence;
	j.in_syncobj_count = 1;
	reject(fa, &j, -ETIME, "WAIT_SUBMIT on an in-syncobj no job fills (5 s)");
	j.in_syncobjs = (uintptr_t)&sync_sig;
	ret = submit(fa, &j, &seq);
	if (!ret)
		ret = wait_job(fa, seq, 60, &st);
	expect(ret ? ret : st, 0, "SUBMIT WAIT_SUBMIT on a signalled in-syncobj");

	if (syncobj_new(fa, 0, &pr.sync))
		return;
	j.in_syncobjs = (uintptr_t)&pr.sync;
	if (pthread_create(&th, NULL, wait_submit_produce, &pr)) {
		wt_ok(0, "pthread_create for the WAIT_SUBMIT producer");
		syncobj_free(fa, pr.sync);
		return;
	}
	ret = submit(fa, &j, &seq);
	pthread_join(th, NULL);
	wt_ok(pr.slept, "WAIT_SUBMIT: the submission slept until another thread's job "
	      "filled its in-syncobj");
	expect(pr.ret, 0, "SUBMIT of the job that fills the in-syncobj");
	if (!ret)
		ret = wait_job(fa, seq, 60, &st);
	expect(ret ? ret : st, 0, "SUBMIT WAIT_SUBMIT on an in-syncobj filled while it waits");
	syncobj_free(fa, pr.sync);

	j = (struct drm_wafer_job){ .ctx_id = job_base.ctx_id, .slot = 3,
				    .flags = DRM_WAFER_JOB_NOP | DRM_WAFER_JOB_WAIT_SUBMIT,
				    .in_syncobjs = (uintptr_t)&sync_sig, .in_syncobj_count = 1 };
	ret = submit(fa, &j, &seq);
	if (!ret)
		ret = wait_job(fa, seq, 60, &st);
	expect(ret ? ret : st, 0, "SUBMIT NOP with WAIT_SUBMIT");
}

/*
 * DRM_IOCTL_WAFER_SUBMIT as userspace built before drm_wafer_job.layer
 * sends it: an 80-byte struct, the seqno at byte 72.  It still runs, and
 * the seqno comes back where that userspace reads it.
 */
struct submit_v1 {
	unsigned char job[72];
	uint64_t seqno;
};

#define SUBMIT_V1	DRM_IOWR(DRM_COMMAND_BASE + DRM_WAFER_SUBMIT, struct submit_v1)

static void test_submit_v1(int fa)
{
	struct submit_v1 s;
	int ret, st = -1;

	memcpy(s.job, &job_base, sizeof(s.job));
	s.seqno = POISON64;
	ret = ioc(fa, SUBMIT_V1, &s);
	expect(ret, 0, "SUBMIT of the old 80-byte size (seqno at byte 72)");
	ret = ret ? ret : wait_job(fa, s.seqno, 60, &st);
	expect(ret ? ret : st, 0, "WAIT for the old-size SUBMIT's seqno %" PRIu64,
	       (uint64_t)s.seqno);
	memcpy(s.job, &job_base, sizeof(s.job));
	memcpy(s.job + offsetof(struct drm_wafer_job, flags), &(uint32_t){ 0x20 }, 4);
	expect(ioc(fa, SUBMIT_V1, &s), -EINVAL, "SUBMIT of the old size, flags 0x20");
}

void test_submit(int fa, int fb, uint32_t ctx, struct bo *in, struct bo *out)
{
	struct drm_wafer_job j;
	struct drm_wafer_submit s;
	uint32_t foreign_bo = 0, foreign_sync = 0, sync_sig, sync_nofence, many[65];
	uint32_t *syncs_ro;
	uint64_t seq1, seq2;
	void *unmapped;
	int ret, st, i;

	memcpy(in->map, ref_tok, sizeof(ref_tok));
	job_base = (struct drm_wafer_job){ .ctx_id = ctx, .slot = 0, .start_pos = 0,
		.n_tokens = 1, .top_k = TOPK, .in_handle = in->handle, .out_handle = out->handle };

	/* Valid, with poisoned seqno; consecutive seqnos. */
	memset(&s, POISON, sizeof(s));
	s.job = job_base;
	ret = ioc(fa, DRM_IOCTL_WAFER_SUBMIT, &s);
	expect(ret, 0, "SUBMIT valid");
	seq1 = s.seqno;
	wt_ok(!ret && s.seqno != POISON64 && s.seqno > 0 && !memcmp(&s.job, &job_base, sizeof(j)),
	      "SUBMIT output: seqno %" PRIu64 ", job untouched", (uint64_t)s.seqno);
	ret = submit(fa, &job_base, &seq2);
	wt_ok(!ret && seq2 == seq1 + 1, "SUBMIT seqnos increase by one (%" PRIu64 ", %" PRIu64 ")",
	      seq1, seq2);
	wait_job(fa, seq1, 60, NULL);
	wait_job(fa, seq2, 60, &st);

#define BAD(field, value, want, name) do { j = job_base; j.field = (value); \
		reject(fa, &j, (want), (name)); } while (0)
	BAD(flags, 0x20, -EINVAL, "flags 0x20 (unknown)");
	BAD(flags, DRM_WAFER_JOB_TIMES, -EINVAL, "TIMES without times_len");
	BAD(flags, DRM_WAFER_JOB_IN_ACT, -EINVAL,
	    "flags IN_ACT on a model whose layers start it (it takes token ids)");
	j = job_base;
	j.flags = DRM_WAFER_JOB_OUT_ACT;
	j.top_k = 0;
	reject(fa, &j, -EINVAL, "flags OUT_ACT on a model whose layers end it (it gives results)");
	BAD(flags, 0x80000000u, -EINVAL, "flags 0x80000000");
	BAD(flags, DRM_WAFER_JOB_LAYER, -EINVAL, "flags LAYER on a model of whole layers");
	BAD(layer, 1, -EINVAL, "layer 1 without DRM_WAFER_JOB_LAYER");
	BAD(pad, 1, -EINVAL, "pad != 0");
	test_submit_v1(fa);
	BAD(times_len, 8, -EINVAL, "times_len without TIMES");
	BAD(ctx_id, 0, -ENOENT, "ctx_id 0");
	BAD(ctx_id, 0xffffffffu, -ENOENT, "ctx_id never created");
	BAD(n_tokens, 0, -EINVAL, "n_tokens 0");
	BAD(n_tokens, 0xffffffffu, -EINVAL, "n_tokens 0xffffffff");
	BAD(top_k, DRM_WAFER_MAX_TOPK + 1, -EINVAL, "top_k MAX_TOPK + 1");
	BAD(top_k, 0xffffffffu, -EINVAL, "top_k 0xffffffff");
	BAD(slot, 4, -EINVAL, "slot == kv_slots");
	BAD(slot, 0xffffffffu, -EINVAL, "slot 0xffffffff");
	BAD(start_pos, 64, -EINVAL, "start_pos == ctx_len");
	BAD(start_pos, 0xffffffffu, -EINVAL, "start_pos 0xffffffff (start_pos + n_tokens wraps u32)");
	j = job_base;
	j.start_pos = 60;
	j.n_tokens = 5;
	reject(fa, &j, -EINVAL, "start_pos + n_tokens == ctx_len + 1");
	j = job_base;
	j.n_tokens = 65;
	reject(fa, &j, -EINVAL, "n_tokens ctx_len + 1");
	if (info.max_tokens_per_job >= 1 && info.max_tokens_per_job < 64) {
		j = job_base;
		j.n_tokens = info.max_tokens_per_job + 1;
		reject(fa, &j, -EINVAL, "n_tokens max_tokens_per_job + 1");
	} else {
		wt_ok(info.max_tokens_per_job >= 64,
		      "SUBMIT n_tokens max_tokens_per_job + 1 -> -EINVAL (max_tokens_per_job %u "
		      "is above ctx_len 64: covered by n_tokens ctx_len + 1)",
		      info.max_tokens_per_job);
	}
	BAD(in_offset, 2, -EINVAL, "in_offset 2 (not 4-byte aligned)");
	BAD(out_offset, 4, -EINVAL, "out_offset 4 (not 8-byte aligned)");
	BAD(in_offset, in->size, -EINVAL, "in_offset at the input BO's end");
	j = job_base;
	j.in_offset = in->size - 4;
	j.n_tokens = 2;
	reject(fa, &j, -EINVAL, "in tokens run past the input BO (offset size-4, 2 tokens)");
	BAD(in_offset, ~3ull, -EINVAL, "in_offset 2^64-4 (offset + length wraps)");
	BAD(out_offset, out->size - 8, -EINVAL, "result runs past the output BO");
	BAD(out_offset, ~7ull, -EINVAL, "out_offset 2^64-8 (offset + length wraps)");
	j = job_base;
	j.flags = DRM_WAFER_JOB_ALL_POSITIONS;
	j.n_tokens = 64;
	j.top_k = DRM_WAFER_MAX_TOPK;	/* 64 x 272 bytes > the 4 KiB output BO */
	reject(fa, &j, -EINVAL, "ALL_POSITIONS results larger than the output BO");
	BAD(in_handle, 0, -ENOENT, "in_handle 0");
	BAD(in_handle, 0xfffffff0u, -ENOENT, "in_handle never created");
	BAD(out_handle, 0xfffffff0u, -ENOENT, "out_handle never created");
	{
		struct drm_wafer_bo_create c = { .size = 4096 };

		for (i = 0; i < 80; i++)
			if (!ioc(fb, DRM_IOCTL_WAFER_BO_CREATE, &c))
				foreign_bo = c.handle;
	}
	BAD(in_handle, foreign_bo, -ENOENT, "another file's in_handle (isolation)");
	BAD(out_handle, foreign_bo, -ENOENT, "another file's out_handle (isolation)");

	/* NOP: a context's slot and nothing else; completed at once. */
	{
		const struct drm_wafer_job nop = { .ctx_id = ctx, .slot = 3,
						   .flags = DRM_WAFER_JOB_NOP };
		struct drm_wafer_wait w = { 0 };
		uint64_t seq;

		ret = submit(fa, &nop, &seq);
		expect(ret, 0, "SUBMIT NOP (context and slot only)");
		if (!ret) {
			w = (struct drm_wafer_wait){ .seqno = seq, .timeout_ns = deadline(60) };
			ret = ioc(fa, DRM_IOCTL_WAFER_WAIT, &w);
		}
		wt_ok(!ret && w.status == 0 && w.device_ns == 0,
		      "SUBMIT NOP completes with status 0 and no device time (wait %d, status %d, "
		      "%" PRIu64 " ns)", ret, w.status, (uint64_t)w.device_ns);
#define NOP_BAD(field, value, name) do { j = nop; j.field = (value); \
		reject(fa, &j, -EINVAL, (name)); } while (0)
		NOP_BAD(n_tokens, 1, "NOP with n_tokens 1");
		NOP_BAD(start_pos, 1, "NOP with start_pos 1");
		NOP_BAD(top_k, 1, "NOP with top_k 1");
		NOP_BAD(in_handle, in->handle, "NOP with an input BO");
		NOP_BAD(out_handle, out->handle, "NOP with an output BO");
		NOP_BAD(out_offset, 8, "NOP with out_offset 8");
		NOP_BAD(flags, DRM_WAFER_JOB_NOP | DRM_WAFER_JOB_ALL_POSITIONS,
			"NOP with ALL_POSITIONS");
		NOP_BAD(flags, DRM_WAFER_JOB_NOP | DRM_WAFER_JOB_IN_ACT, "NOP with IN_ACT");
		NOP_BAD(slot, 4, "NOP on slot == kv_slots");
#undef NOP_BAD
	}

	/* Syncobjs. */
	syncobj_new(fa, DRM_SYNCOBJ_CREATE_SIGNALED, &sync_sig);
	syncobj_new(fa, 0, &sync_nofence);
	for (i = 0; i < 8; i++)
		syncobj_new(fb, DRM_SYNCOBJ_CREATE_SIGNALED, &foreign_sync);
	for (i = 0; i < 65; i++)
		many[i] = sync_sig;
	j = job_base;
	j.in_syncobjs = (uintptr_t)many;
	j.in_syncobj_count = 1;
	{
		uint64_t seq;

		ret = submit(fa, &j, &seq);
		if (!ret)
			ret = wait_job(fa, seq, 60, &st);
		expect(ret ? ret : st, 0, "SUBMIT one signalled in-syncobj");
	}
	if (info.max_in_syncobjs >= 1 && info.max_in_syncobjs <= 64) {
		uint64_t seq;

		j.in_syncobj_count = info.max_in_syncobjs;
		ret = submit(fa, &j, &seq);
		if (!ret)
			ret = wait_job(fa, seq, 60, &st);
		expect(ret ? ret : st, 0, "SUBMIT in_syncobj_count == max_in_syncobjs (%u)",
		       info.max_in_syncobjs);
	}
	j.in_syncobj_count = info.max_in_syncobjs + 1;
	{
		char name[96];

		snprintf(name, sizeof(name), "in_syncobj_count max_in_syncobjs + 1 (%u)",
			 info.max_in_syncobjs + 1);
		reject(fa, &j, -EINVAL, name);
	}
	j.in_syncobj_count = 65;
	reject(fa, &j, -EINVAL, "in_syncobj_count 65");
	j.in_syncobj_count = 0xffffffffu;
	reject(fa, &j, -EINVAL, "in_syncobj_count 0xffffffff");
	j = job_base;
	j.in_syncobj_count = 1;
	j.in_syncobjs = 0;
	reject(fa, &j, -EINVAL, "in_syncobjs NULL with count 1");
	unmapped = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(unmapped, 4096);
	j.in_syncobjs = (uintptr_t)unmapped;
	reject(fa, &j, -EFAULT, "in_syncobjs unmapped");
	j.in_syncobjs = 0xffff800000000000ull;
	reject(fa, &j, -EFAULT, "in_syncobjs kernel address");
	/* The last handle of the array on an unmapped page. */
	syncs_ro = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap((char *)syncs_ro + 4096, 4096);
	syncs_ro[1023] = sync_sig;
	j.in_syncobjs = (uintptr_t)&syncs_ro[1023];
	j.in_syncobj_count = 2;
	reject(fa, &j, -EFAULT, "in_syncobjs array crosses into an unmapped page");
	munmap(syncs_ro, 4096);
	j = job_base;
	j.in_syncobjs = (uintptr_t)many;
	j.in_syncobj_count = 0;
	many[0] = 0xfffffff0u;
	{
		uint64_t seq;

		ret = submit(fa, &j, &seq);
		if (!ret)
			wait_job(fa, seq, 60, NULL);
		expect(ret, 0, "SUBMIT in_syncobjs set with count 0 (ignored)");
	}
	j.in_syncobj_count = 1;
	reject(fa, &j, -ENOENT, "in-syncobj handle never created");
	many[0] = foreign_sync;
	reject(fa, &j, -ENOENT, "another file's in-syncobj (isolation)");
	many[0] = sync_nofence;
	reject(fa, &j, -EINVAL, "in-syncobj with no fence (drm_syncobj_find_fence)");
	many[0] = sync_sig;
	test_wait_submit(fa, sync_sig, sync_nofence);
	j = job_base;
	j.out_syncobj = 0xfffffff0u;
	reject(fa, &j, -ENOENT, "out_syncobj never created");
	j.out_syncobj = foreign_sync;
	reject(fa, &j, -ENOENT, "another file's out_syncobj (isolation)");
	{
		uint32_t outs;
		uint64_t seq;
		struct drm_syncobj_wait w = { 0 };

		syncobj_new(fa, 0, &outs);
		j.out_syncobj = outs;
		ret = submit(fa, &j, &seq);
		w.handles = (uintptr_t)&outs;
		w.count_handles = 1;
		w.timeout_nsec = deadline(60);
		if (!ret)
			ret = ioc(fa, DRM_IOCTL_SYNCOBJ_WAIT, &w);
		expect(ret, 0, "SUBMIT out_syncobj receives a fence that signals");
		if (!ret)
			expect(wait_job(fa, seq, 60, &st) ? -1 : st, 0,
			       "WAIT after the out_syncobj signalled");
		syncobj_free(fa, outs);
	}

	/* Job errors reported by WAIT's status: a token id outside the vocabulary. */
	{
		uint64_t seq;

		((uint32_t *)in->map)[40] = 0x7fffffff;
		j = job_base;
		j.in_offset = 40 * 4;
		ret = submit(fa, &j, &seq);
		expect(ret, 0, "SUBMIT a token id >= vocab_size (checked by the device)");
		if (!ret) {
			ret = wait_job(fa, seq, 60, &st);
			expect(ret ? ret : st, -EINVAL, "WAIT status of that job");
		}
		memcpy(in->map, ref_tok, sizeof(ref_tok));
	}
	syncobj_free(fa, sync_sig);
	syncobj_free(fa, sync_nofence);
}
