// SPDX-License-Identifier: MIT
/*
 * wafer bench: measured tokens/s and submission cost, every available
 * backend in one run, printed as three tables:
 *
 *   single sequence      greedy decode, one job per token, waiting for each:
 *                        host tokens/s and modelled tokens/s (the jobs'
 *                        modelled latencies, summed: the decode serialises)
 *   concurrent sequences B sequences in one context of B KV slots; each step
 *                        submits B jobs in one batch and reaps B completions:
 *                        aggregate host tokens/s and modelled tokens/s (tokens
 *                        over the device's modelled makespan, see below)
 *   submission cost      no-op jobs (WAFER_JOB_NOP: the device completes them
 *                        at once, so only submission and completion are
 *                        measured) in batches of 1, 8, 32, 128 per path
 *                        (kernel: ioctl and io_uring, whose device fd is
 *                        registered, IOSQE_FIXED_FILE; inproc for reference):
 *                        jobs/s, p50/p99 of each job's submit -> reap host
 *                        latency (a batch is reaped by one wait for all of
 *                        it, so a job's is its batch's), and the submitting
 *                        process's CPU time per
 *                        job (user + system, and system alone; io-wq workers
 *                        are threads of the process and count), with the
 *                        io_uring / ioctl ratio of CPU time per job
 *   devices              the model split over N = 1..--devices devices (a
 *                        pipeline, wafer_open_pipeline()): modelled latency of
 *                        one sequence's token and what each device added,
 *                        modelled aggregate tokens/s of B = 16 and 64
 *                        sequences in lockstep and in M micro-batches kept
 *                        in flight (cli_bench_mb.c), host tokens/s of the
 *                        latter, each against N = 1 in lockstep; every
 *                        sequence's tokens checked against it run alone; N
 *                        where the model does not fit say so, and the first
 *                        N that fits is named
 *   chain                with --chain, instead of the backends above: the
 *                        single-sequence and concurrent tables on a chain of
 *                        `wafer node` devices over RDMA links (the same
 *                        wafer_open_chain() as wafer run --chain); modelled
 *                        figures from the chain's completions
 *   weight streaming     the same device with the model resident and with its
 *                        weights streamed from host memory (--stream-weights
 *                        on): modelled tokens/s of B = 1, 4, 16 sequences
 *                        each way; streaming pays the weights' reads once per
 *                        pass, which the sequences in flight share (the
 *                        amortisation curve)
 *
 * Modelled aggregate throughput needs the device's modelled clock, because
 * jobs in flight together overlap in the pipeline (a job's own latency does
 * not say by how much).  wafer_dev_stats() reports the makespan where the
 * backend has it (inproc: the firmware's; kernel: a sysfs attribute if the
 * driver exposes one).  Otherwise, for the kernel backend, it is estimated
 * from the per-stage modelled busy time in debugfs: per step, the first job
 * runs unobstructed (its latency L0) and each further one adds the busiest
 * stage's time, so makespan = sum(L0) + (B-1)/B * busy(bottleneck); such
 * figures are marked '~'.
 *
 * Without MODEL.bin a synthetic checkpoint of stories260K's shape (random
 * weights) is used: the device's work does not depend on weight values.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_bench.h"
#include "cli_stats.h"

#define MAX_B		64
#define MAX_AXIS	8
#define MAX_STAGES	256
#define MAX_AFD		4
#define RES_SIZE	WAFER_RESULT_SIZE(0)

static const unsigned int batch_sizes[] = { 1, 2, 4, 8, 16 };
static const unsigned int submit_batches[] = { 1, 8, 32, 128 };
/* Sequences of the device axis: one alone, and enough to hide link hops. */
static const unsigned int axis_b[] = { 1, 16, 64 };
/* Sequences of the weight streaming rows. */
static const unsigned int stream_b[] = { 1, 4, 16 };

#define N_B	(sizeof(batch_sizes) / sizeof(batch_sizes[0]))
#define N_SUB	(sizeof(submit_batches) / sizeof(submit_batches[0]))
#define N_AXB	(sizeof(axis_b) / sizeof(axis_b[0]))
#define N_STB	(sizeof(stream_b) / sizeof(stream_b[0]))

/**
 * struct bench_args - parsed command line
 * @model: checkpoint, or NULL for the synthetic one
 * @index: kernel device, -1 for the first
 * @kernel: run the kernel backend (-1: if a device exists)
 * @inproc: run the inproc backend
 * @conv: conversion options
 * @tokens: decode steps per sequence
 * @sub_jobs: jobs per submission-cost measurement
 * @quick: --quick
 * @devices: longest chain of the device axis (0: no device axis)
 * @micro: --micro-batches: micro-batches of the device axis (0: N, the
 *	devices of the row)
 * @member: inproc options of each device of the axis (--profile, --stages,
 *	--sram-kib)
 * @tokenizer: -z: the speculative section (needs MODEL.bin)
 * @draft_tokens: --draft-tokens: its K
 * @draft_stages: --draft-stages: the wse3p rows' draft device's stages (0: as
 *	few as hold the draft)
 * @afd: --afd A:F (each with its --afd-profiles PA:PF): the AFD rows
 * @n_afd: their count
 * @chain: --chain: the model on a chain of `wafer node` devices instead of
 *	the local backends (@chain.chain NULL: none)
 */
struct bench_args {
	const char *model;
	int index;
	int kernel;
	int inproc;
	struct wafer_convert_opts conv;
	unsigned int tokens;
	unsigned int sub_jobs;
	int quick;
	unsigned int devices;
	unsigned int micro;
	struct wafer_open_opts member;
	const char *tokenizer;
	unsigned int draft_tokens;
	unsigned int draft_stages;
	struct cli_devices afd[MAX_AFD];
	unsigned int n_afd;
	struct cli_devices chain;
};

/* How a modelled figure was obtained. */
enum mkind { M_NONE, M_DEVICE, M_SUM, M_EST };

/**
 * struct decode_res - one decode measurement
 * @backend: "kernel" / "inproc"
 * @submit: submission path
 * @b: sequences
 * @tokens: tokens decoded, all sequences
 * @host_ns: host time
 * @model_ns: modelled device time (0: unknown)
 * @kind: how @model_ns was obtained
 * @moe: MoE models: each layer's expert load imbalance over these tokens
 *	(busiest routed expert / the mean), space separated; else empty
 */
struct decode_res {
	const char *backend;
	const char *submit;
	unsigned int b;
	unsigned int tokens;
	uint64_t host_ns;
	uint64_t model_ns;
	enum mkind kind;
	char moe[96];
};

/**
 * struct sub_res - one submission-cost measurement
 * @backend: "kernel" / "inproc"
 * @submit: submission path
 * @batch: jobs per wafer_submit
 * @jobs: jobs measured
 * @host_ns: host time, all of them
 * @p50_ns: median submit -> reap latency
 * @p99_ns: 99th percentile
 * @cpu_ns: CPU time of the process (user + system), all of them
 * @submit_ns: the submitting thread's CPU time inside wafer_submit()
 * @reap_ns: ... and inside wafer_reap() (completions, and the wait)
 * @error: non-zero: the path is unavailable (message in @why)
 * @why: reason
 */
struct sub_res {
	const char *backend;
	const char *submit;
	unsigned int batch;
	unsigned int jobs;
	uint64_t host_ns;
	uint64_t p50_ns;
	uint64_t p99_ns;
	uint64_t cpu_ns;
	uint64_t submit_ns;
	uint64_t reap_ns;
	int error;
	char why[160];
};

/**
 * struct axis_res - one row of the device axis
 * @backend: "kernel" / "inproc"
 * @n: devices
 * @split: layers per device, "2+2+1"
 * @why: empty, or why the model did not load
 * @r: figures for each axis_b[] sequence count, the batch in lockstep
 * @mb: the same in @m micro-batches kept in flight (cli_bench_mb.c)
 * @m: micro-batches of @mb, per axis_b[] count
 * @nofit: per axis_b[] count, non-zero: its context did not fit
 * @afd: an attention-FFN disaggregation row: @backend is "afd A:F", the
 *	same model on @afd[0] attention and @afd[1] FFN devices, against the
 *	inproc rows' first N
 */
struct axis_res {
	const char *backend;
	unsigned int n;
	unsigned int afd[2];
	char split[64];
	char why[200];
	struct decode_res r[N_AXB];
	struct decode_res mb[N_AXB];
	unsigned int m[N_AXB];
	int nofit[N_AXB];
};

/**
 * struct bench - everything measured
 * @single: single-sequence rows
 * @n_single: their count
 * @agg: concurrent rows
 * @n_agg: their count
 * @sub: submission-cost rows
 * @n_sub: their count
 * @devs: one description line per backend
 * @n_devs: their count
 * @axis: device-axis rows
 * @n_axis: their count
 * @res: weight streaming section: resident rows, per backend and stream_b[]
 * @str: the same with the weights streamed
 * @n_str: backends with streaming rows
 * @ref: the device axis's reference: each of its sequences run alone on
 *	the axis's first N that fits, axis_b[N_AXB - 1] x tokens (NULL: not
 *	yet run for this backend)
 * @checked: device-axis sequences whose tokens equalled the reference
 */
struct bench {
	struct decode_res single[2];
	unsigned int n_single;
	struct decode_res agg[2 * N_B];
	unsigned int n_agg;
	struct sub_res sub[3 * N_SUB + 1];
	unsigned int n_sub;
	char devs[2][256];
	unsigned int n_devs;
	struct axis_res axis[2 * MAX_AXIS + MAX_AFD + 1];
	unsigned int n_axis;
	struct decode_res res[2][N_STB];
	struct decode_res str[2][N_STB];
	unsigned int n_str;
	uint32_t *ref;
	unsigned int checked;
};

static int fail(const char *what)
{
	fprintf(stderr, "wafer bench: %s: %s\n", what, wafer_last_error());
	return -1;
}

/* ------------------------------------------------------------ model -- */

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1Dull;
}

/*
 * A llama2.c checkpoint of stories260K's shape with random weights, in a
 * memfd: returns its fd (path /proc/self/fd/N) or -1.
 */
static int synthetic_model(char *path, size_t len)
{
	const int dim = 64, hidden = 172, layers = 5, heads = 8, kv_heads = 4;
	const int vocab = 512, seq_len = 512, kv_dim = dim * kv_heads / heads;
	const int32_t hdr[7] = { dim, hidden, layers, heads, kv_heads, vocab, seq_len };
	/* llama2.c order: tok_emb, rms_att, wq, wk, wv, wo, rms_ffn, w1, w2, w3,
	 * rms_final, freq_cis_real, freq_cis_imag (shared classifier). */
	const size_t sizes[] = {
		(size_t)vocab * dim, (size_t)layers * dim, (size_t)layers * dim * dim,
		(size_t)layers * kv_dim * dim, (size_t)layers * kv_dim * dim,
		(size_t)layers * dim * dim, (size_t)layers * dim,
		(size_t)layers * hidden * dim, (size_t)layers * dim * hidden,
		(size_t)layers * hidden * dim, (size_t)dim,
		(size_t)seq_len * (dim / heads) / 2, (size_t)seq_len * (dim / heads) / 2,
	};
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	float buf[1024];
	size_t i, k, left;
	int fd = memfd_create("wafer-bench-model", MFD_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "wafer bench: memfd_create: %s\n", strerror(errno));
		return -1;
	}
	if (write(fd, hdr, sizeof(hdr)) != (ssize_t)sizeof(hdr))
		goto err;
	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		/* RMS norm weights 1, matrices uniform in +-1/sqrt(dim)-ish. */
		int norm = k == 1 || k == 6 || k == 10;

		for (left = sizes[k]; left; ) {
			size_t n = left < 1024 ? left : 1024;

			for (i = 0; i < n; i++)
				buf[i] = norm ? 1.0f : (float)((double)(rng_next(&rng) >> 11) /
							       (double)(1ull << 53) - 0.5) * 0.25f;
			if (write(fd, buf, n * sizeof(float)) != (ssize_t)(n * sizeof(float)))
				goto err;
			left -= n;
		}
	}
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
err:
	fprintf(stderr, "wafer bench: writing the synthetic model: %s\n", strerror(errno));
	close(fd);
	return -1;
}

/* ---------------------------------------------------------- helpers -- */

/* Submits all @n jobs (the device may take them in parts); 0 or -1. */
static int submit_all(struct wafer_dev *dev, const struct wafer_job *jobs, unsigned int n)
{
	unsigned int done = 0;

	while (done < n) {
		int r = wafer_submit(dev, jobs + done, n - done);

		if (r <= 0)
			return fail("submitting jobs");
		done += (unsigned int)r;
	}
	return 0;
}

/*
 * Reaps @n completions into @cpl[0..n), waiting for all of them at once as
 * a batch submitter does (io_uring then wakes us once, not per job);
 * @when[i], if @when, is the host time the reap that returned @cpl[i] came
 * back.  0, or -1 (message printed) on a reap error or timeout, or a job
 * with a non-zero status (@what names the jobs).
 */
static int reap_all(struct wafer_dev *dev, struct wafer_completion *cpl, unsigned int n,
		    uint64_t *when, const char *what)
{
	unsigned int got = 0, i;

	while (got < n) {
		int r = wafer_reap(dev, cpl + got, n - got, n - got, -1);
		uint64_t tr = cli_now_ns();

		if (r <= 0)
			return fail(r ? "reaping completions" : "waiting for a job (timed out)");
		for (i = got; i < got + (unsigned int)r; i++) {
			if (cpl[i].status) {
				fprintf(stderr, "wafer bench: %s failed: %s\n", what,
					wafer_strerror(cpl[i].status));
				return -1;
			}
			if (when)
				when[i] = tr;
		}
		got += (unsigned int)r;
	}
	return 0;
}

/**
 * struct run_bufs - what one measurement submits to
 * @ctx: a context of the model
 * @in: token ids
 * @out: results
 */
struct run_bufs {
	struct wafer_ctx *ctx;
	struct wafer_bo *in;
	struct wafer_bo *out;
};

/* A context of @slots x @ctx_len and the two buffers; 0 or -1 (message printed). */
static int bufs_create(struct wafer_dev *dev, struct wafer_model *m, unsigned int slots,
		       unsigned int ctx_len, size_t in_size, size_t out_size, struct run_bufs *rb)
{
	memset(rb, 0, sizeof(*rb));
	if (wafer_ctx_create(m, slots, ctx_len, &rb->ctx))
		return fail("creating the context");
	if (wafer_bo_create(dev, in_size, &rb->in) || wafer_bo_create(dev, out_size, &rb->out))
		return fail("allocating buffers");
	return 0;
}

/* Frees what bufs_create() made, also after it failed. */
static void bufs_destroy(struct run_bufs *rb)
{
	wafer_bo_destroy(rb->out);
	wafer_bo_destroy(rb->in);
	wafer_ctx_destroy(rb->ctx);
}

/* Max over stages of the modelled busy time, from debugfs; 0 if unreadable. */
static uint64_t debugfs_bottleneck(int index, uint64_t *per_stage, int *n)
{
	static struct cli_stage_row rows[MAX_STAGES];
	char err[256];
	uint64_t max = 0;
	int i, got = cli_read_stages(index, rows, MAX_STAGES, err, sizeof(err));

	*n = got > 0 ? got : 0;
	for (i = 0; i < *n; i++) {
		per_stage[i] = rows[i].modelled_busy_ns;
		if (per_stage[i] > max)
			max = per_stage[i];
	}
	return max;
}

/* ----------------------------------------------------------- decode -- */

/*
 * Greedy decode of @b sequences for @steps positions each; every step
 * submits the @b jobs in one batch and reaps @b completions.
 */
static int decode(struct wafer_dev *dev, struct wafer_model *m, unsigned int b,
		  unsigned int steps, struct decode_res *r)
{
	static uint64_t busy0[MAX_STAGES], busy1[MAX_STAGES];
	struct wafer_completion cpl[MAX_B];
	struct wafer_job jobs[MAX_B];
	struct wafer_dev_stats s0, s1;
	struct cli_experts x0 = { 0 }, x1;
	struct run_bufs rb;
	uint32_t tok[MAX_B], *ids;
	uint64_t t0, sum_dev = 0, sum_first = 0;
	unsigned int vocab = wafer_model_get_info(m)->vocab_size, pos, i;
	int kernel = !strcmp(wafer_backend_name(dev), "kernel"), n0 = 0, n1 = 0, ret = -1;

	if (bufs_create(dev, m, b, steps, (size_t)b * steps * 4, (size_t)b * RES_SIZE, &rb))
		goto out;
	ids = wafer_bo_map(rb.in);
	for (i = 0; i < b; i++)	/* distinct sequences: BOS, or a different first token */
		tok[i] = i ? (3 + 37 * i) % vocab : WAFER_TOKEN_BOS;
	wafer_dev_stats(dev, &s0);
	cli_experts_take(dev, m, 0, &x0);
	if (kernel && !s0.modelled_makespan_ns)
		debugfs_bottleneck(wafer_device_index(dev), busy0, &n0);
	t0 = cli_now_ns();
	for (pos = 0; pos < steps; pos++) {
		uint64_t first = UINT64_MAX;

		for (i = 0; i < b; i++) {
			ids[i * steps + pos] = tok[i];
			jobs[i] = (struct wafer_job){
				.ctx = rb.ctx, .slot = i, .start_pos = pos, .n_tokens = 1,
				.in = rb.in, .in_offset = (uint64_t)(i * steps + pos) * 4,
				.out = rb.out, .out_offset = (uint64_t)i * RES_SIZE, .user_data = i,
			};
		}
		if (submit_all(dev, jobs, b) || reap_all(dev, cpl, b, NULL, "a decode job"))
			goto out;
		for (i = 0; i < b; i++) {
			sum_dev += cpl[i].device_ns;
			if (cpl[i].device_ns < first)
				first = cpl[i].device_ns;
		}
		sum_first += first;
		for (i = 0; i < b; i++)
			tok[i] = wafer_result(rb.out, (uint64_t)i * RES_SIZE, 0, 0)->argmax;
	}
	r->host_ns = cli_now_ns() - t0;
	r->b = b;
	r->tokens = b * steps;
	r->kind = M_NONE;
	r->model_ns = 0;
	wafer_dev_stats(dev, &s1);
	cli_experts_take(dev, m, 0, &x1);
	cli_experts_imbalance(&x0, &x1, r->moe, sizeof(r->moe));
	cli_experts_free(&x1);
	if (s1.modelled_makespan_ns > s0.modelled_makespan_ns) {
		r->model_ns = s1.modelled_makespan_ns - s0.modelled_makespan_ns;
		r->kind = M_DEVICE;
	} else if (b == 1) {
		r->model_ns = sum_dev;	/* one job at a time: latencies add up */
		r->kind = M_SUM;
	} else if (kernel && n0) {
		uint64_t max = 0;

		debugfs_bottleneck(wafer_device_index(dev), busy1, &n1);
		for (i = 0; i < (unsigned int)n0 && i < (unsigned int)n1; i++)
			if (busy1[i] - busy0[i] > max)
				max = busy1[i] - busy0[i];
		if (max) {
			r->model_ns = sum_first + max / b * (b - 1);
			r->kind = M_EST;
		}
	}
	ret = 0;
out:
	cli_experts_free(&x0);
	bufs_destroy(&rb);
	return ret;
}

/* The single-sequence figure: modelled time is the sum of the latencies. */
static int single(struct wafer_dev *dev, struct wafer_model *m, unsigned int steps,
		  struct decode_res *r)
{
	struct cli_experts x0 = { 0 }, x1;
	struct wafer_completion c;
	struct run_bufs rb;
	uint64_t t0, sum = 0;
	uint32_t *ids, token = WAFER_TOKEN_BOS;
	unsigned int pos;
	int ret = -1;

	if (bufs_create(dev, m, 1, steps, (size_t)steps * 4, RES_SIZE, &rb))
		goto out;
	ids = wafer_bo_map(rb.in);
	cli_experts_take(dev, m, 0, &x0);
	t0 = cli_now_ns();
	for (pos = 0; pos < steps; pos++) {
		struct wafer_job j = {
			.ctx = rb.ctx, .slot = 0, .start_pos = pos, .n_tokens = 1,
			.in = rb.in, .in_offset = (uint64_t)pos * 4, .out = rb.out,
		};
		int n;

		ids[pos] = token;
		if (submit_all(dev, &j, 1))
			goto out;
		n = wafer_reap(dev, &c, 1, 1, -1);
		if (n != 1 || c.status) {
			if (n == 1)
				fprintf(stderr, "wafer bench: a decode job failed: %s\n",
					wafer_strerror(c.status));
			else
				fail("waiting for a decode job");
			goto out;
		}
		sum += c.device_ns;
		token = wafer_result(rb.out, 0, 0, 0)->argmax;
	}
	r->host_ns = cli_now_ns() - t0;
	r->b = 1;
	r->tokens = steps;
	r->model_ns = sum;
	r->kind = M_SUM;
	cli_experts_take(dev, m, 0, &x1);
	cli_experts_imbalance(&x0, &x1, r->moe, sizeof(r->moe));
	cli_experts_free(&x1);
	ret = 0;
out:
	cli_experts_free(&x0);
	bufs_destroy(&rb);
	return ret;
}

/* --------------------------------------------------- submission cost -- */

/* User and system CPU time of the whole process so far (ns). */
static uint64_t process_cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)(ru.ru_stime.tv_sec + ru.ru_utime.tv_sec) * 1000000000ull +
	       (uint64_t)(ru.ru_stime.tv_usec + ru.ru_utime.tv_usec) * 1000;
}

/* This thread's CPU time so far (ns): exact, unlike getrusage()'s split. */
static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Where a submitter's CPU goes, from a pass of its own after the measured
 * one (reading a thread's CPU clock is a system call, three a batch, which
 * would weigh on the measured pass's total): the thread's CPU time inside
 * the submit and the reap calls of @nb-job batches, @njobs jobs in all.
 */
static int subcost_split(struct wafer_dev *dev, const struct wafer_job *jobs, unsigned int nb,
			 unsigned int njobs, struct wafer_completion *cpl, struct sub_res *r)
{
	unsigned int done;

	for (done = 0; done < njobs; done += nb) {
		uint64_t t0 = thread_cpu_ns(), t1;

		if (submit_all(dev, jobs, nb))
			return -1;
		t1 = thread_cpu_ns();
		if (reap_all(dev, cpl, nb, NULL, "a no-op job"))
			return -1;
		r->submit_ns += t1 - t0;
		r->reap_ns += thread_cpu_ns() - t1;
	}
	return 0;
}

/* Passes the measured jobs of a submission-cost row are split into. */
#define SUB_PARTS	8

/**
 * struct sub_path - one submit path's submission-cost row in the making
 * @dev: its device (file)
 * @ctx: a context of @batch slots
 * @jobs: a batch of no-op jobs, on slots 0..batch-1 (jobs of one slot
 *	would be ordered, by io_uring links, behind each other)
 * @cpl: their completions
 * @when: when each completion was reaped
 * @lat: each measured job's latency
 * @r: the row
 */
struct sub_path {
	struct wafer_dev *dev;
	struct wafer_ctx *ctx;
	struct wafer_job *jobs;
	struct wafer_completion *cpl;
	uint64_t *when;
	uint64_t *lat;
	struct sub_res *r;
};

static void sub_path_free(struct sub_path *p)
{
	wafer_ctx_destroy(p->ctx);
	free(p->lat);
	free(p->when);
	free(p->jobs);
	free(p->cpl);
}

/* Sets @p up for @njobs jobs in batches of @batch and runs one unmeasured batch. */
static int sub_path_init(struct sub_path *p, struct wafer_dev *dev, struct wafer_model *m,
			 unsigned int batch, unsigned int njobs, struct sub_res *r)
{
	unsigned int i;

	memset(p, 0, sizeof(*p));
	memset(r, 0, sizeof(*r));
	p->dev = dev;
	p->r = r;
	r->backend = wafer_backend_name(dev);
	r->submit = wafer_submit_name(dev);
	r->batch = batch;
	p->cpl = calloc(batch, sizeof(*p->cpl));
	p->jobs = calloc(batch, sizeof(*p->jobs));
	p->when = calloc(batch, sizeof(*p->when));
	p->lat = calloc(njobs, sizeof(*p->lat));
	if (!p->cpl || !p->jobs || !p->when || !p->lat) {
		fprintf(stderr, "wafer bench: %s\n", strerror(ENOMEM));
		return -1;
	}
	if (wafer_ctx_create(m, batch, 1, &p->ctx))
		return fail("creating the context");
	for (i = 0; i < batch; i++)
		p->jobs[i] = (struct wafer_job){ .ctx = p->ctx, .slot = i, .flags = WAFER_JOB_NOP,
						 .user_data = i };
	/* First-use costs stay out of the figures. */
	if (submit_all(dev, p->jobs, batch) || reap_all(dev, p->cpl, batch, NULL, "a no-op job"))
		return -1;
	return 0;
}

/* @nbatches measured batches more of @p's row: host and process CPU time, latencies. */
static int sub_path_pass(struct sub_path *p, unsigned int nbatches)
{
	struct sub_res *r = p->r;
	uint64_t t0 = cli_now_ns(), cpu0 = process_cpu_ns();
	unsigned int k, i;

	for (k = 0; k < nbatches; k++) {
		uint64_t ts = cli_now_ns();

		if (submit_all(p->dev, p->jobs, r->batch) ||
		    reap_all(p->dev, p->cpl, r->batch, p->when, "a no-op job"))
			return -1;
		for (i = 0; i < r->batch; i++)
			p->lat[r->jobs + i] = p->when[i] - ts;
		r->jobs += r->batch;
	}
	r->cpu_ns += process_cpu_ns() - cpu0;
	r->host_ns += cli_now_ns() - t0;
	return 0;
}

/* The row's percentiles, then the submit/reap split from a pass of a quarter as many jobs. */
static int sub_path_finish(struct sub_path *p)
{
	struct sub_res *r = p->r;
	/* Whole batches, at least one. */
	unsigned int nsplit = (r->jobs / 4 + r->batch - 1) / r->batch * r->batch;

	r->p50_ns = cli_percentile(p->lat, r->jobs, 50);
	r->p99_ns = cli_percentile(p->lat, r->jobs, 99);
	if (subcost_split(p->dev, p->jobs, r->batch, nsplit, p->cpl, r))
		return -1;
	r->submit_ns = r->submit_ns * r->jobs / nsplit;
	r->reap_ns = r->reap_ns * r->jobs / nsplit;
	return 0;
}

/*
 * A row per batch size for each of @n submit paths (@dev[i], @m[i]): the
 * measured jobs of a batch size go in SUB_PARTS passes, the paths taking
 * turns (in the opposite order every other pass), so that a ratio between
 * two rows compares the same stretch of a noisy host, not two stretches a
 * minute apart.
 */
static int run_subcost(struct bench *bn, const struct bench_args *a, struct wafer_dev **dev,
		       struct wafer_model **m, unsigned int n)
{
	struct sub_path path[2];
	unsigned int k, i, part;
	int ret = 0;

	for (k = 0; k < N_SUB && !ret; k++) {
		unsigned int batch = submit_batches[k];
		/* At least four batches, whole ones. */
		unsigned int njobs = a->sub_jobs > 4 * batch ? a->sub_jobs : 4 * batch;
		unsigned int nb = (njobs + batch - 1) / batch;

		njobs = nb * batch;
		memset(path, 0, sizeof(path));
		for (i = 0; i < n && !ret; i++) {
			fprintf(stderr, "wafer bench: %s/%s: %u no-op jobs in batches of %u\n",
				wafer_backend_name(dev[i]), wafer_submit_name(dev[i]), njobs, batch);
			ret = sub_path_init(&path[i], dev[i], m[i], batch, njobs, &bn->sub[bn->n_sub + i]);
		}
		for (part = 0; part < SUB_PARTS && !ret; part++) {
			unsigned int share = nb * (part + 1) / SUB_PARTS - nb * part / SUB_PARTS;

			for (i = 0; i < n && !ret; i++)
				ret = sub_path_pass(&path[part % 2 ? n - 1 - i : i], share);
		}
		for (i = 0; i < n && !ret; i++)
			ret = sub_path_finish(&path[i]);
		for (i = 0; i < n; i++)
			sub_path_free(&path[i]);
		if (!ret)
			bn->n_sub += n;
	}
	return ret;
}

/* ---------------------------------------------------------- backends -- */

static int open_load_stream(const struct wafer_open_opts *o, const void *blob, size_t len,
			    int stream, struct wafer_dev **dev, struct wafer_model **m)
{
	*dev = NULL;
	*m = NULL;
	if (wafer_open(o, dev))
		return -1;
	if (wafer_model_load_stream(*dev, blob, len, stream, m)) {
		wafer_close(*dev);
		*dev = NULL;
		return -1;
	}
	return 0;
}

static int open_load(const struct wafer_open_opts *o, const void *blob, size_t len,
		     struct wafer_dev **dev, struct wafer_model **m)
{
	return open_load_stream(o, blob, len, WAFER_STREAM_OFF, dev, m);
}

static void close_dev(struct wafer_dev *dev, struct wafer_model *m)
{
	wafer_model_unload(m);
	wafer_close(dev);
}

static void describe(struct bench *bn, struct wafer_dev *dev)
{
	struct wafer_info i;

	wafer_query(dev, &i);
	if (!strcmp(wafer_backend_name(dev), "chain"))
		snprintf(bn->devs[bn->n_devs++], sizeof(bn->devs[0]),
			 "chain: wafer nodes over RDMA links, %u stages in all, %.2f GHz",
			 i.stages, i.clock_hz / 1e9);
	else if (!strcmp(wafer_backend_name(dev), "kernel"))
		snprintf(bn->devs[bn->n_devs++], sizeof(bn->devs[0]),
			 "kernel: /dev/accel/accel%d, profile %s, %u stages x %llu KiB, %.2f GHz",
			 wafer_device_index(dev), i.profile_name, i.stages,
			 (unsigned long long)i.sram_bytes_per_stage >> 10, i.clock_hz / 1e9);
	else
		snprintf(bn->devs[bn->n_devs++], sizeof(bn->devs[0]),
			 "inproc: firmware-sim in this process, profile %s, %u stages x %llu KiB, "
			 "%.2f GHz", i.profile_name, i.stages,
			 (unsigned long long)i.sram_bytes_per_stage >> 10, i.clock_hz / 1e9);
}

/* Decode figures (single + every B) on an open device. */
static int run_decode(struct bench *bn, const struct bench_args *a, struct wafer_dev *dev,
		      struct wafer_model *m)
{
	const char *be = wafer_backend_name(dev), *sp = wafer_submit_name(dev);
	struct decode_res *r = &bn->single[bn->n_single];
	struct wafer_info di;
	unsigned int k;

	fprintf(stderr, "wafer bench: %s: single sequence, %u tokens\n", be, a->tokens);
	if (single(dev, m, a->tokens, r))
		return -1;
	r->backend = be;
	r->submit = sp;
	bn->n_single++;
	wafer_query(dev, &di);
	for (k = 0; k < N_B; k++) {
		r = &bn->agg[bn->n_agg];
		/* One batch of B jobs is submitted before it is reaped (a chain: 8 at most). */
		if (di.max_inflight_jobs && batch_sizes[k] > di.max_inflight_jobs) {
			fprintf(stderr, "wafer bench: %s: %u sequences: the device takes %u jobs in "
				"flight\n", be, batch_sizes[k], di.max_inflight_jobs);
			continue;
		}
		fprintf(stderr, "wafer bench: %s: %u sequences x %u tokens\n", be,
			batch_sizes[k], a->tokens);
		if (decode(dev, m, batch_sizes[k], a->tokens, r))
			return -1;
		r->backend = be;
		r->submit = sp;
		bn->n_agg++;
	}
	return 0;
}

static int run_kernel(struct bench *bn, const struct bench_args *a, const void *blob,
		      size_t len)
{
	struct wafer_open_opts o = { .backend = WAFER_BACKEND_KERNEL, .index = a->index };
	char uring_why[160] = "";
	struct wafer_model *m[2];
	struct wafer_dev *dev[2];
	unsigned int n = 1;
	int ret;

	/* Decode on a uring file... */
	o.submit = WAFER_SUBMIT_URING;
	if (open_load(&o, blob, len, &dev[0], &m[0])) {
		snprintf(uring_why, sizeof(uring_why), "%s", wafer_last_error());
		fprintf(stderr, "wafer bench: kernel, io_uring: %s\n", uring_why);
		o.submit = WAFER_SUBMIT_IOCTL;
		if (open_load(&o, blob, len, &dev[0], &m[0]))
			return fail("opening the kernel device");
	}
	describe(bn, dev[0]);
	ret = run_decode(bn, a, dev[0], m[0]);
	/* ...and the submission cost of it beside an ioctl file's, taking turns. */
	if (!ret && !strcmp(wafer_submit_name(dev[0]), "uring")) {
		o.submit = WAFER_SUBMIT_IOCTL;
		if (!open_load(&o, blob, len, &dev[1], &m[1])) {
			n = 2;
		} else {
			/* No room for a second copy (a small device): one path after the other. */
			fprintf(stderr, "wafer bench: kernel, ioctl beside io_uring: %s; one after the other\n",
				wafer_last_error());
			ret = run_subcost(bn, a, dev, m, 1);
			close_dev(dev[0], m[0]);
			if (ret)
				return ret;
			if (open_load(&o, blob, len, &dev[0], &m[0]))
				return fail("opening the kernel device for ioctl submission");
		}
	}
	if (!ret)
		ret = run_subcost(bn, a, dev, m, n);
	while (n--)
		close_dev(dev[n], m[n]);
	if (!ret && uring_why[0]) {
		struct sub_res *r = &bn->sub[bn->n_sub++];

		memset(r, 0, sizeof(*r));
		r->backend = "kernel";
		r->submit = "uring";
		r->error = 1;
		snprintf(r->why, sizeof(r->why), "%s", uring_why);
	}
	return ret;
}

static int run_inproc(struct bench *bn, const struct bench_args *a, const void *blob,
		      size_t len)
{
	struct wafer_open_opts o = { .backend = WAFER_BACKEND_INPROC, .index = -1 };
	struct wafer_model *m;
	struct wafer_dev *dev;
	int ret;

	if (open_load(&o, blob, len, &dev, &m))
		return fail("opening the inproc device");
	describe(bn, dev);
	ret = run_decode(bn, a, dev, m);
	if (!ret)
		ret = run_subcost(bn, a, &dev, &m, 1);
	close_dev(dev, m);
	return ret;
}

/* --chain: the decode figures on the chain (no submission cost: it runs no NOP jobs). */
static int run_chain(struct bench *bn, const struct bench_args *a, const void *blob,
		     size_t len)
{
	struct wafer_model *m;
	struct wafer_dev *dev;
	int ret;

	if (cli_open(&a->chain, &dev))
		return fail("opening the chain");
	if (wafer_model_load(dev, blob, len, &m)) {
		fail("loading the model on the chain");
		wafer_close(dev);
		return -1;
	}
	describe(bn, dev);
	ret = run_decode(bn, a, dev, m);
	close_dev(dev, m);
	return ret;
}

/*
 * Weight streaming against resident on one device of a backend: B = 1, 4,
 * 16 sequences each way (@kernel: the kernel backend, else inproc).
 */
static int run_stream(struct bench *bn, const struct bench_args *a, int kernel,
		      const void *blob, size_t len)
{
	struct wafer_open_opts o = { .backend = kernel ? WAFER_BACKEND_KERNEL :
				     WAFER_BACKEND_INPROC, .index = kernel ? a->index : -1 };
	unsigned int k, s, n = bn->n_str;
	struct wafer_model *m;
	struct wafer_dev *dev;

	for (s = 0; s < 2; s++) {
		struct decode_res *row = s ? bn->str[n] : bn->res[n];

		if (open_load_stream(&o, blob, len, s ? WAFER_STREAM_ON : WAFER_STREAM_OFF,
				     &dev, &m))
			return fail(s ? "loading the model streamed" : "loading the model");
		for (k = 0; k < N_STB; k++) {
			fprintf(stderr, "wafer bench: %s: %s, %u sequences x %u tokens\n",
				kernel ? "kernel" : "inproc", s ? "streamed" : "resident",
				stream_b[k], a->tokens);
			if (decode(dev, m, stream_b[k], a->tokens, &row[k])) {
				close_dev(dev, m);
				return -1;
			}
			row[k].backend = kernel ? "kernel" : "inproc";
		}
		close_dev(dev, m);
	}
	bn->n_str++;
	return 0;
}

/* --------------------------------------------------------- devices -- */

static void split_text(struct wafer_model *m, char *buf, size_t len)
{
	struct wafer_model_part p;
	unsigned int i, n = wafer_model_parts(m);
	size_t used = 0;

	buf[0] = '\0';
	for (i = 0; i < n && !wafer_model_part(m, i, &p) && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%u", i ? "+" : "",
					 p.layer_count);
}

/* Sequence @i's first token: BOS, or a different one per sequence. */
static uint32_t axis_first(unsigned int i, unsigned int vocab)
{
	return i ? (3 + 37 * i) % vocab : WAFER_TOKEN_BOS;
}

/* The reference: each sequence of the largest B alone, in lockstep (B = 1). */
static int axis_ref(struct bench *bn, const struct bench_args *a, struct wafer_dev *dev,
		    struct wafer_model *m)
{
	unsigned int vocab = wafer_model_get_info(m)->vocab_size, i, nb = axis_b[N_AXB - 1];
	uint32_t first;

	bn->ref = calloc((size_t)nb * a->tokens, sizeof(*bn->ref));
	if (!bn->ref)
		return fail("the reference tokens");
	fprintf(stderr, "wafer bench: the reference: %u sequences, each alone\n", nb);
	for (i = 0; i < nb; i++) {
		struct cli_mb r = { .b = 1, .m = 1, .steps = a->tokens, .first = &first,
				    .tokens = bn->ref + (size_t)i * a->tokens };

		first = axis_first(i, vocab);
		if (cli_bench_micro(dev, m, &r))
			return -1;
	}
	return 0;
}

/*
 * @b sequences in @mbs micro-batches into @d, each sequence's tokens
 * checked against the reference; 0, 1 if their context does not fit, or
 * -1 said.
 */
static int axis_decode(struct bench *bn, const struct bench_args *a, struct wafer_dev *dev,
		       struct wafer_model *m, unsigned int b, unsigned int mbs,
		       struct decode_res *d)
{
	unsigned int vocab = wafer_model_get_info(m)->vocab_size, i, t;
	uint32_t first[CLI_MB_MAX_B], *tok = calloc((size_t)b * a->tokens, sizeof(*tok));
	struct cli_mb r = { .b = b, .m = mbs, .steps = a->tokens, .first = first, .tokens = tok };
	int ret = -1;

	fprintf(stderr, "wafer bench: %u sequences in %u micro-batch%s\n", b, mbs,
		mbs > 1 ? "es" : "");
	for (i = 0; i < b; i++)
		first[i] = axis_first(i, vocab);
	ret = tok ? cli_bench_micro(dev, m, &r) : -1;
	if (ret)
		goto out;
	ret = -1;
	for (i = 0; i < b; i++) {
		for (t = 0; t < a->tokens && tok[(size_t)i * a->tokens + t] ==
					     bn->ref[(size_t)i * a->tokens + t]; t++)
			;
		if (t < a->tokens) {
			fprintf(stderr, "wafer bench: sequence %u of %u in %u micro-batches: token "
				"%u is %u, alone %u\n", i, b, mbs, t, tok[(size_t)i * a->tokens + t],
				bn->ref[(size_t)i * a->tokens + t]);
			goto out;
		}
	}
	bn->checked += b;
	*d = (struct decode_res){ .b = b, .tokens = b * a->tokens, .host_ns = r.host_ns,
				  .model_ns = r.model_ns, .kind = r.model_ns ? M_DEVICE : M_NONE };
	ret = 0;
out:
	free(tok);
	return ret;
}

/* Row @r's figures on @dev: one sequence, then each B in lockstep and micro-batched. */
static int axis_figures(struct bench *bn, const struct bench_args *a, struct wafer_dev *dev,
			struct wafer_model *m, struct axis_res *r)
{
	unsigned int k, mbs;
	int ret;

	if (!bn->ref && axis_ref(bn, a, dev, m))
		return -1;
	for (k = 0; k < N_AXB; k++) {
		if (axis_b[k] == 1) {
			if (single(dev, m, a->tokens, &r->r[k]))
				return -1;
			r->mb[k] = r->r[k];
			r->m[k] = 1;
			continue;
		}
		mbs = a->micro ? a->micro : r->n;
		mbs = mbs < axis_b[k] ? mbs : axis_b[k];
		mbs = mbs < CLI_MB_MAX ? mbs : CLI_MB_MAX;
		r->m[k] = mbs;
		ret = axis_decode(bn, a, dev, m, axis_b[k], 1, &r->r[k]);
		r->nofit[k] = ret == 1;
		if (ret == 1)
			continue;
		if (ret)
			return -1;
		if (mbs == 1)
			r->mb[k] = r->r[k];
		else if (axis_decode(bn, a, dev, m, axis_b[k], mbs, &r->mb[k]))
			return -1;
	}
	return 0;
}

/* One row: the model over @n devices opened with @o. */
static int axis_row(struct bench *bn, const struct bench_args *a, const char *be,
		    const struct wafer_open_opts *o, unsigned int n, const void *blob,
		    size_t len)
{
	struct axis_res *r = &bn->axis[bn->n_axis++];
	struct wafer_pipe_opts po = { .n_devices = n, .devices = o };
	struct wafer_model *m = NULL;
	struct wafer_dev *dev = NULL;
	int ret;

	memset(r, 0, sizeof(*r));
	r->backend = be;
	r->n = n;
	fprintf(stderr, "wafer bench: %s: the model over %u device%s\n", be, n, n > 1 ? "s" : "");
	ret = n > 1 ? wafer_open_pipeline(&po, &dev) : wafer_open(o, &dev);
	if (ret)
		return fail("opening the devices");
	if (wafer_model_load(dev, blob, len, &m)) {
		snprintf(r->why, sizeof(r->why), "%s", wafer_last_error());
		wafer_close(dev);
		return 0;
	}
	split_text(m, r->split, sizeof(r->split));
	ret = axis_figures(bn, a, dev, m, r);
	close_dev(dev, m);
	return ret;
}

/* The device axis of one backend: 1..a->devices devices. */
static int run_devices(struct bench *bn, const struct bench_args *a, int kernel,
		       const void *blob, size_t len)
{
	struct wafer_device_desc d[MAX_AXIS];
	struct wafer_open_opts o[MAX_AXIS];
	unsigned int n, max = a->devices, i;
	int ret = 0, found;

	if (kernel) {
		found = wafer_list_devices(d, MAX_AXIS);
		if (found < 0)
			return fail("listing devices");
		if ((unsigned int)found < max)
			max = (unsigned int)found;
	}
	for (i = 0; i < max; i++) {
		o[i] = a->member;
		o[i].backend = kernel ? WAFER_BACKEND_KERNEL : WAFER_BACKEND_INPROC;
		o[i].index = kernel ? d[i].index : -1;
	}
	free(bn->ref);
	bn->ref = NULL;	/* each backend's own reference */
	for (n = 1; n <= max && !ret; n++)
		ret = axis_row(bn, a, kernel ? "kernel" : "inproc", o, n, blob, len);
	if (kernel) {	/* the inproc reference is kept for the AFD rows */
		free(bn->ref);
		bn->ref = NULL;
	}
	return ret;
}

/* The AFD rows' labels, "afd 1:1" or "afd 1:2 asic:wafer". */
static char afd_label[MAX_AFD][48];

/* One AFD row: the model on --afd @d's groups, against the inproc rows. */
static int afd_row(struct bench *bn, const struct bench_args *a, unsigned int i,
		   const void *blob, size_t len)
{
	struct axis_res *r = &bn->axis[bn->n_axis++];
	struct cli_devices d = a->afd[i];
	struct wafer_model_part p;
	struct wafer_model *m = NULL;
	struct wafer_dev *dev = NULL;
	unsigned int k, used = 0;
	int ret;

	memset(r, 0, sizeof(*r));
	snprintf(afd_label[i], sizeof(afd_label[i]), "afd %u:%u%s%s%s%s", d.afd[0], d.afd[1],
		 d.afd_profile[0] ? " " : "", d.afd_profile[0] ? d.afd_profile[0] : "",
		 d.afd_profile[0] ? ":" : "", d.afd_profile[0] ? d.afd_profile[1] : "");
	/* Expert parallelism: "afd 1:1 ep2", the routed experts over 2 more. */
	if (d.afd_experts)
		snprintf(afd_label[i] + strlen(afd_label[i]), sizeof(afd_label[i]) -
			 strlen(afd_label[i]), " ep%u", d.afd_experts);
	r->backend = afd_label[i];
	r->n = d.afd[0] + d.afd[1];
	r->afd[0] = d.afd[0];
	r->afd[1] = d.afd[1];
	fprintf(stderr, "wafer bench: %s\n", afd_label[i]);
	d.base = a->member;
	d.base.backend = WAFER_BACKEND_INPROC;
	if (cli_open_afd(&d, &dev))
		return fail("opening the AFD groups");
	if (wafer_model_load(dev, blob, len, &m)) {
		snprintf(r->why, sizeof(r->why), "%s", wafer_last_error());
		wafer_close(dev);
		return 0;
	}
	/* Layers of each part: "5a+5f", attention then FFN. */
	for (k = 0; k < wafer_model_parts(m) && !wafer_model_part(m, k, &p) &&
		    used < sizeof(r->split); k++)
		used += (size_t)snprintf(r->split + used, sizeof(r->split) - used, "%s%u%c",
					 k ? "+" : "", p.part == WAFER_PART_EXPERTS ?
					 p.expert_count : p.layer_count,
					 p.part == WAFER_PART_ATTN ? 'a' :
					 p.part == WAFER_PART_EXPERTS ? 'x' : 'f');
	ret = axis_figures(bn, a, dev, m, r);
	close_dev(dev, m);
	return ret;
}

/*
 * The AFD rows, after the inproc device axis (their base and reference:
 * its first N and each sequence alone on it; one device if it did not run).
 */
static int run_afd(struct bench *bn, const struct bench_args *a, const void *blob, size_t len)
{
	struct wafer_open_opts o = a->member;
	unsigned int i, k, base = 0;
	int ret = 0;

	o.backend = WAFER_BACKEND_INPROC;
	o.index = -1;
	for (k = 0; k < bn->n_axis; k++)
		base |= !strcmp(bn->axis[k].backend, "inproc") && !bn->axis[k].why[0];
	if (!base || !bn->ref) {
		free(bn->ref);
		bn->ref = NULL;
		ret = axis_row(bn, a, "inproc", &o, 1, blob, len);
	}
	for (i = 0; i < a->n_afd && !ret; i++)
		ret = afd_row(bn, a, i, blob, len);
	free(bn->ref);
	bn->ref = NULL;
	return ret;
}

/* ----------------------------------------------------------- output -- */

static double per_s(uint64_t n, uint64_t ns)
{
	return ns ? n * 1e9 / (double)ns : 0;
}

static const char *mark(enum mkind k)
{
	return k == M_EST ? "~" : "";
}

/* One B of a device-axis row, against the same B on the backend's first N. */
static void axis_line(const struct axis_res *r, const struct axis_res *base, unsigned int k)
{
	const struct decode_res *d = &r->r[k], *mb = &r->mb[k], *b0 = &base->r[k];
	double md = per_s(d->tokens, d->model_ns), mm = per_s(mb->tokens, mb->model_ns);
	double one = per_s(b0->tokens, b0->model_ns), h = per_s(mb->tokens, mb->host_ns);
	double added = (d->model_ns / (double)d->tokens - b0->model_ns / (double)b0->tokens) / 1e3;

	printf("  %-7s %2u %-10s %3u", r->backend, r->n, r->split, d->b);
	if (d->b == 1 && r->afd[0])	/* no chain: each layer crosses between the groups */
		printf(" %11.2f %9.2f %7s", d->model_ns / 1e3 / d->tokens, added, "");
	else if (d->b == 1 && r->n > base->n)
		printf(" %11.2f %9.2f %7.2f", d->model_ns / 1e3 / d->tokens, added,
		       added / (r->n - base->n));
	else if (d->b == 1)
		printf(" %11.2f %9.2f %7s", d->model_ns / 1e3 / d->tokens, added, "");
	else
		printf(" %11s %9s %7s", "", "", "");
	if (base->nofit[k]) {	/* nothing to compare with */
		printf(" %14.1f %7s %3u %14.1f %7s %11.1f %7s\n", md, "-", r->m[k], mm, "-", h, "-");
		return;
	}
	printf(" %14.1f %6.2fx %3u %14.1f %6.2fx %11.1f %6.2fx\n", md, md / one, r->m[k], mm,
	       mm / one, h, h / per_s(b0->tokens, b0->host_ns));
}

/* An AFD row, each B against the inproc rows' first N that ran. */
static void afd_line(const struct bench *bn, const struct axis_res *r)
{
	const struct axis_res *base = NULL;
	unsigned int i, k;

	for (i = 0; i < bn->n_axis && !base; i++)
		if (!strcmp(bn->axis[i].backend, "inproc") && !bn->axis[i].why[0])
			base = &bn->axis[i];
	for (k = 0; k < N_AXB; k++)
		if (r->nofit[k] || !base)
			printf("  %s %u %s the KV of %u sequences does not fit\n", r->backend, r->n,
			       r->split, axis_b[k]);
		else
			axis_line(r, base, k);
}

/* The device axis: each row against the same backend's first N that ran. */
static void print_axis(const struct bench *bn)
{
	const struct axis_res *base = NULL;
	const char *be = NULL;
	unsigned int i, k;

	printf("\ndevices (the model's layers split over N devices; B sequences, one job per "
	       "token each; us/tok: modelled latency of one sequence's token, us/hop: what each "
	       "device more added; lockstep: each step waits for all B; M micro-batches kept in "
	       "flight; host tok/s: micro-batched; x: against the first N in lockstep)\n");
	printf("  %-7s %2s %-10s %3s %11s %9s %7s %14s %7s %3s %14s %7s %11s %7s\n", "backend",
	       "N", "layers", "B", "mod. us/tok", "+us vs 1", "us/hop", "lockstep tok/s", "x",
	       "M", "micro tok/s", "x", "host tok/s", "x");
	for (i = 0; i < bn->n_axis; i++) {
		const struct axis_res *r = &bn->axis[i];

		if (r->afd[0]) {	/* against the inproc rows' first N */
			if (!r->why[0])
				afd_line(bn, r);
			else
				printf("  %s does not fit: %s\n", r->backend, r->why);
			continue;
		}
		if (r->backend != be) {
			be = r->backend;
			base = NULL;
		}
		if (r->why[0]) {
			printf("  %-7s %2u does not fit: %s\n", r->backend, r->n, r->why);
			continue;
		}
		if (!base) {
			base = r;
			if (r->n > 1)
				printf("  %-7s    the model needs %u devices of this kind\n",
				       r->backend, r->n);
		}
		for (k = 0; k < N_AXB; k++)
			if (r->nofit[k])
				printf("  %-7s %2u %-10s %3u the KV of %u sequences does not fit\n",
				       r->backend, r->n, r->split, axis_b[k], axis_b[k]);
			else
				axis_line(r, base, k);
	}
	if (bn->checked)
		printf("  every result checked: %u sequences (each N and B, lockstep and "
		       "micro-batched), each token equal to the sequence run alone\n", bn->checked);
	for (i = 0; i < bn->n_axis; i++)
		if (bn->axis[i].afd[0])
			break;
	if (i < bn->n_axis)
		printf("  afd A:F: attention-FFN disaggregation, in process: each layer's attention "
		       "part (and KV) on A devices, its FFN part on F (layers: Na attention, Nf "
		       "FFN parts), one layer part per job, micro-batches ping-ponging between "
		       "the groups; x: against the inproc rows' first N in lockstep\n");
}

/* The row of @backend/@submit at @batch, or NULL. */
static const struct sub_res *sub_row(const struct bench *bn, const char *backend,
				     const char *submit, unsigned int batch)
{
	unsigned int i;

	for (i = 0; i < bn->n_sub; i++) {
		const struct sub_res *r = &bn->sub[i];

		if (!r->error && r->batch == batch && !strcmp(r->backend, backend) &&
		    !strcmp(r->submit, submit))
			return r;
	}
	return NULL;
}

static void print_subcost(const struct bench *bn)
{
	unsigned int i, k;
	int ratios = 0;

	printf("\nsubmission cost (no-op jobs: the device completes them at once; latency = submit "
	       "-> reap of each job's batch, reaped by one wait; host time; CPU = the process's user + "
	       "system time per job; submit, reap = the submitting thread's CPU time per job in "
	       "those calls, from a pass of a quarter as many jobs after; the kernel's io_uring "
	       "and ioctl rows of a batch size take turns, in %d passes each)\n", SUB_PARTS);
	printf("  %-7s %-6s %5s %6s %10s %10s %10s %12s %10s %10s\n", "backend", "submit", "batch",
	       "jobs", "jobs/s", "p50 us", "p99 us", "cpu us/job", "submit us", "reap us");
	for (i = 0; i < bn->n_sub; i++) {
		const struct sub_res *r = &bn->sub[i];

		if (r->error) {
			printf("  %-7s %-6s unavailable: %s\n", r->backend, r->submit, r->why);
			continue;
		}
		printf("  %-7s %-6s %5u %6u %10.1f %10.1f %10.1f %12.2f %10.2f %10.2f\n", r->backend,
		       r->submit, r->batch, r->jobs, per_s(r->jobs, r->host_ns), r->p50_ns / 1e3,
		       r->p99_ns / 1e3, r->cpu_ns / 1e3 / r->jobs, r->submit_ns / 1e3 / r->jobs,
		       r->reap_ns / 1e3 / r->jobs);
	}
	for (k = 0; k < N_SUB; k++) {
		const struct sub_res *u = sub_row(bn, "kernel", "uring", submit_batches[k]);
		const struct sub_res *o = sub_row(bn, "kernel", "ioctl", submit_batches[k]);

		if (!u || !o || !o->cpu_ns)
			continue;
		if (!ratios++)
			printf("  kernel CPU time per job, io_uring / ioctl:");
		printf(" batch %u %.2fx%s", submit_batches[k],
		       ((double)u->cpu_ns / u->jobs) / ((double)o->cpu_ns / o->jobs),
		       k + 1 < N_SUB ? "," : "");
	}
	if (ratios)
		printf("\n");
}

/* Weight streaming against resident: the amortisation over B. */
static void print_stream(const struct bench *bn)
{
	unsigned int i, k;

	printf("\nweight streaming (--stream-weights on: each stage reads its layers from host "
	       "memory per pass, double-buffered; the sequences in flight share a pass) "
	       "against resident, the same device\n");
	printf("  %-7s %3s %17s %17s %13s %14s\n", "backend", "B", "resident tok/s",
	       "streamed tok/s", "str./resid.", "streamed xB=1");
	for (i = 0; i < bn->n_str; i++) {
		for (k = 0; k < N_STB; k++) {
			const struct decode_res *r = &bn->res[i][k], *s = &bn->str[i][k];
			double rm = per_s(r->tokens, r->model_ns), sm = per_s(s->tokens, s->model_ns);
			double s1 = per_s(bn->str[i][0].tokens, bn->str[i][0].model_ns);
			char rv[32], sv[32];

			snprintf(rv, sizeof(rv), "%s%.1f", mark(r->kind), rm);
			snprintf(sv, sizeof(sv), "%s%.1f", mark(s->kind), sm);
			if (!r->model_ns || !s->model_ns)
				printf("  %-7s %3u %17s %17s %13s %14s\n", r->backend, r->b,
				       r->model_ns ? rv : "n/a", s->model_ns ? sv : "n/a", "n/a",
				       "n/a");
			else
				printf("  %-7s %3u %17s %17s %12.3fx %13.2fx\n", r->backend, r->b,
				       rv, sv, sm / rm, s1 > 0 ? sm / s1 : 0.0);
		}
	}
}

/* The row's expert load column: "n/a" where the counters are unreadable. */
static const char *moe_col(const struct decode_res *r)
{
	return r->moe[0] ? r->moe : "n/a (kernel: debugfs, root)";
}

static void print_tables(const struct bench *bn, const struct bench_args *a,
			 const char *model)
{
	int moe = a->conv.moe.n_experts != 0, est = 0;
	unsigned int i, j;

	printf("wafer bench: model %s, int%u group %u, %u tokens per sequence%s\n", model,
	       a->conv.wbits, a->conv.group_size, a->tokens, a->quick ? " (--quick)" : "");
	if (moe)
		printf("  upcycled: %u experts + %u shared, top-%u in every layer; expert load "
		       "max/mean: 1.00 balanced, %.2f all tokens on top-k experts\n",
		       a->conv.moe.n_experts, a->conv.moe.n_shared, a->conv.moe.top_k,
		       (double)a->conv.moe.n_experts / a->conv.moe.top_k);
	for (i = 0; i < bn->n_devs; i++)
		printf("  %s\n", bn->devs[i]);

	printf("\nsingle sequence (greedy decode, one job per token)\n");
	printf("  %-7s %-6s %6s %12s %12s %15s %15s%s\n", "backend", "submit", "tokens",
	       "host tok/s", "host us/tok", "modelled tok/s", "modelled us/tok",
	       moe ? "  experts max/mean by layer" : "");
	for (i = 0; i < bn->n_single; i++) {
		const struct decode_res *r = &bn->single[i];

		printf("  %-7s %-6s %6u %12.1f %12.1f %15.1f %15.2f%s%s\n", r->backend, r->submit,
		       r->tokens, per_s(r->tokens, r->host_ns), r->host_ns / 1e3 / r->tokens,
		       per_s(r->tokens, r->model_ns), r->model_ns / 1e3 / r->tokens,
		       moe ? "  " : "", moe ? moe_col(r) : "");
	}

	printf("\nconcurrent sequences (one context with B KV slots; B jobs per batch, "
	       "B completions reaped per step)\n");
	printf("  %-7s %-6s %3s %6s %12s %10s %15s %10s%s\n", "backend", "submit", "B", "tokens",
	       "host tok/s", "host xB=1", "modelled tok/s", "mod. xB=1",
	       moe ? "  experts max/mean by layer" : "");
	for (i = 0; i < bn->n_agg; i++) {
		const struct decode_res *r = &bn->agg[i], *base = r;
		double h = per_s(r->tokens, r->host_ns), md = per_s(r->tokens, r->model_ns);

		for (j = 0; j < bn->n_agg; j++)
			if (bn->agg[j].backend == r->backend && bn->agg[j].b == 1)
				base = &bn->agg[j];
		est |= r->kind == M_EST;
		printf("  %-7s %-6s %3u %6u %12.1f %9.2fx", r->backend, r->submit, r->b,
		       r->tokens, h, h / per_s(base->tokens, base->host_ns));
		if (r->model_ns) {
			char v[32];

			snprintf(v, sizeof(v), "%s%.1f", mark(r->kind), md);
			printf(" %15s %9.2fx", v, md / per_s(base->tokens, base->model_ns));
		}
		else
			printf(" %15s %10s", "n/a", "n/a");
		printf("%s%s\n", moe ? "  " : "", moe ? moe_col(r) : "");
	}
	if (est)
		printf("  ~ estimated: the driver exposes no modelled makespan; sum of each step's "
		       "first-job latency + (B-1)/B x the busiest stage's modelled busy time "
		       "(debugfs stages)\n");

	if (bn->n_sub)
		print_subcost(bn);
	if (bn->n_axis)
		print_axis(bn);
	if (bn->n_str)
		print_stream(bn);
	fflush(stdout);
}

/* ------------------------------------------------------------ main -- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: wafer bench [MODEL.bin] [options]\n"
		"  MODEL.bin             llama2.c checkpoint (default: synthetic, stories260K's shape)\n"
		"  -d N                  kernel device /dev/accel/accelN (default: the first)\n"
		"  --backend kernel|inproc|all   (default all: kernel when a wafer device exists)\n"
		"  --quant int8|int4     weight format (default int8)\n"
		"  --moe E,TOPK[,SHARED] the model upcycled into experts (--moe-gate G)\n"
		"  --tokens N            decode steps per sequence (default 64; --quick 8)\n"
		"  --jobs N              jobs per submission-cost figure (default 4096; --quick 64;\n"
		"                        at least 4 batches)\n"
		"  --devices N           device axis: the model over 1..N devices (default 5;\n"
		"                        kernel: as many as exist; 0: none)\n"
		"  --micro-batches M     device axis: B sequences in M micro-batches kept in\n"
		"                        flight (default N, the row's devices; 1: lockstep only)\n"
		"  --profile P, --stages N, --sram-kib K   inproc devices of the device axis\n"
		"                        (e.g. asic with little SRAM: a model too big for one)\n"
		"  --quick               a short run, for tests\n"
		"  -z TOK.bin            with MODEL.bin: a speculative decoding section, each\n"
		"                        draft kind against plain greedy decoding per inproc\n"
		"                        profile (wafer, asic; wse3 with the draft and the\n"
		"                        target spread or packed) and, with the kernel\n"
		"                        backend, on the kernel device (-d) with the draft\n"
		"                        beside the target; fails if a row's text is not\n"
		"                        plain's\n"
		"  --draft-tokens K      its tokens proposed per verify (default 4)\n"
		"  --draft-stages N      the wse3p/wse3pt rows' draft device: N stages (default:\n"
		"                        as few as hold the draft; wse3 rows: the target's 44)\n"
		"  --afd A:F             device axis: rows of the model in attention-FFN\n"
		"                        disaggregation over A attention and F FFN inproc\n"
		"                        devices (repeatable, up to 4; lists: 0:1, 0-1:2-3)\n"
		"  --afd-profiles PA:PF  the last --afd's groups' profiles (e.g. asic:wafer)\n"
		"  --expert-devices N    the last --afd's MoE layers' routed experts over N\n"
		"                        more devices (expert parallelism; with --moe)\n"
		"  --chain HOST[:PORT]:DEVICES[,...]  instead of the local backends: the\n"
		"                        single and concurrent tables on the model's layers\n"
		"                        over `wafer node`s' devices, jobs carried by RDMA\n"
		"                        links; or --chain FILE.json (as wafer run --chain)\n"
		"  --link HOST[:PORT]    the host-to-host RDMA link instead: latency and\n"
		"                        bandwidth by size (wafer bench --link --help)\n");
}

enum { OPT_BACKEND = 256, OPT_QUANT, OPT_TOKENS, OPT_JOBS, OPT_QUICK, OPT_DEVICES,
       OPT_PROFILE, OPT_STAGES, OPT_SRAM, OPT_HELP, OPT_DRAFT_TOKENS, OPT_DRAFT_STAGES, OPT_MOE,
       OPT_MOE_GATE, OPT_MICRO, OPT_AFD, OPT_AFD_PROFILES, OPT_AFD_EXPERTS, OPT_CHAIN };

static const struct option long_opts[] = {
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "quant", required_argument, NULL, OPT_QUANT },
	{ "tokens", required_argument, NULL, OPT_TOKENS },
	{ "jobs", required_argument, NULL, OPT_JOBS },
	{ "quick", no_argument, NULL, OPT_QUICK },
	{ "devices", required_argument, NULL, OPT_DEVICES },
	{ "micro-batches", required_argument, NULL, OPT_MICRO },
	{ "profile", required_argument, NULL, OPT_PROFILE },
	{ "stages", required_argument, NULL, OPT_STAGES },
	{ "sram-kib", required_argument, NULL, OPT_SRAM },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "draft-tokens", required_argument, NULL, OPT_DRAFT_TOKENS },
	{ "draft-stages", required_argument, NULL, OPT_DRAFT_STAGES },
	{ "moe", required_argument, NULL, OPT_MOE },
	{ "moe-gate", required_argument, NULL, OPT_MOE_GATE },
	{ "afd", required_argument, NULL, OPT_AFD },
	{ "afd-profiles", required_argument, NULL, OPT_AFD_PROFILES },
	{ "expert-devices", required_argument, NULL, OPT_AFD_EXPERTS },
	{ "chain", required_argument, NULL, OPT_CHAIN },
	{ NULL, 0, NULL, 0 },
};

/* An option's name as typed: "-d" or "--tokens". */
static const char *opt_name(int opt)
{
	static char buf[40];
	const struct option *o;

	for (o = long_opts; o->name; o++)
		if (o->val == opt) {
			snprintf(buf, sizeof(buf), "--%s", o->name);
			return buf;
		}
	snprintf(buf, sizeof(buf), "-%c", opt);
	return buf;
}

/*
 * One option of wafer bench: whether its value @arg is bad; -1 for an
 * option it does not know.  @tokens, @jobs: --tokens, --jobs (0: default).
 */
static int bench_opt(struct bench_args *a, int opt, const char *arg, unsigned int *tokens,
		     unsigned int *jobs)
{
	unsigned int v;
	int bad = 0;

	switch (opt) {
	case 'd':
		bad = cli_parse_index(arg, &a->index);
		a->kernel = 1;
		return bad;
	case OPT_BACKEND:
		if (!strcmp(arg, "kernel"))
			a->kernel = 1, a->inproc = 0;
		else if (!strcmp(arg, "inproc"))
			a->kernel = 0, a->inproc = 1;
		else if (!strcmp(arg, "all"))
			a->kernel = -1, a->inproc = 1;
		else
			return 1;
		return 0;
	case OPT_QUANT:
		bad = strcmp(arg, "int8") && strcmp(arg, "int4");
		a->conv.wbits = strcmp(arg, "int4") ? 8 : 4;
		return bad;
	case OPT_TOKENS:
		return cli_parse_uint(arg, 1, 4096, tokens);
	case OPT_JOBS:
		return cli_parse_uint(arg, 1, 1000000, jobs);
	case OPT_QUICK:
		a->quick = 1;
		return 0;
	case OPT_DEVICES:
		return cli_parse_uint(arg, 0, MAX_AXIS, &a->devices);
	case OPT_MICRO:
		return cli_parse_uint(arg, 1, CLI_MB_MAX, &a->micro);
	case OPT_PROFILE:
		bad = strcmp(arg, "wafer") && strcmp(arg, "asic");
		a->member.profile = arg;
		return bad;
	case OPT_STAGES:
		bad = cli_parse_uint(arg, 1, 256, &v);
		a->member.stages = v;
		return bad;
	case OPT_SRAM:
		bad = cli_parse_uint(arg, 1, 1 << 20, &v);
		a->member.sram_bytes = (uint64_t)v << 10;
		return bad;
	case 'z':
		a->tokenizer = arg;
		return 0;
	case OPT_DRAFT_TOKENS:
		return cli_parse_uint(arg, 1, WAFER_SPEC_MAX_DRAFT, &a->draft_tokens);
	case OPT_DRAFT_STAGES:
		return cli_parse_uint(arg, 1, 64, &a->draft_stages);
	case OPT_MOE:
		return cli_parse_moe(arg, &a->conv.moe);
	case OPT_MOE_GATE:
		return cli_parse_gate(arg, &a->conv.moe);
	case OPT_AFD:
		if (a->n_afd == MAX_AFD)
			return 1;
		return cli_parse_afd(arg, &a->afd[a->n_afd++]) ? 1 : 0;
	case OPT_AFD_PROFILES:
		return !a->n_afd || cli_parse_afd_profiles(arg, &a->afd[a->n_afd - 1]);
	case OPT_AFD_EXPERTS:
		return !a->n_afd || cli_parse_expert_devices(arg, &a->afd[a->n_afd - 1]);
	case OPT_CHAIN:
		return cli_parse_chain(arg, &a->chain) ? 1 : 0;
	default:
		return -1;
	}
}

static int parse(struct bench_args *a, int argc, char **argv)
{
	unsigned int tokens = 0, jobs = 0;
	int opt, bad;

	memset(a, 0, sizeof(*a));
	a->index = -1;
	a->kernel = -1;
	a->inproc = 1;
	a->conv.wbits = 8;
	a->conv.group_size = 32;
	a->conv.moe.gate = WAFER_MOE_GATE_UNIT;	/* upcycled: the dense model at top-k = E */
	a->devices = 5;
	optind = 1;
	a->draft_tokens = 4;
	while ((opt = getopt_long(argc, argv, "d:hz:", long_opts, NULL)) != -1) {
		if (opt == 'h' || opt == OPT_HELP) {
			usage(stdout);
			exit(0);
		}
		if (opt == '?') {	/* getopt named the unknown option */
			usage(stderr);
			return 2;
		}
		/* nonzero: a bad value (the parsers say -1 or 1) */
		bad = bench_opt(a, opt, optarg, &tokens, &jobs);
		if (bad) {
			fprintf(stderr, "wafer bench: bad value '%s' for %s%s%s\n", optarg,
				opt_name(opt), opt == OPT_CHAIN ? ": " : "",
				opt == OPT_CHAIN ? wafer_last_error() : "");
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc - 1) {
		fprintf(stderr, "wafer bench: at most one MODEL.bin\n");
		return 2;
	}
	a->model = optind < argc ? argv[optind] : NULL;
	if (a->chain.chain && (a->n_afd || a->tokenizer || a->index >= 0)) {
		fprintf(stderr, "wafer bench: --chain measures the chain alone (no -d, --afd or "
			"-z)\n");
		return 2;
	}
	if (a->chain.chain) {	/* the chain instead of the local backends */
		a->kernel = 0;
		a->inproc = 0;
		a->devices = 0;
	}
	if (a->tokenizer && !a->model) {
		fprintf(stderr, "wafer bench: -z needs MODEL.bin (the drafts are made from it)\n");
		return 2;
	}
	a->tokens = tokens ? tokens : a->quick ? 8 : 64;
	/*
	 * CPU time is accounted in scheduler ticks (4 ms at HZ=250) where
	 * the kernel samples it (a TCG guest): 512 jobs at 20-40 us were a
	 * handful of ticks, and the io_uring / ioctl ratio swung 0.35-1.0x.
	 */
	a->sub_jobs = jobs ? jobs : a->quick ? 64 : 4096;
	return 0;
}

int cli_cmd_bench(int argc, char **argv)
{
	static struct bench bn;
	struct bench_args a;
	char synth[64];
	const char *path, *name;
	size_t len = 0;
	void *blob = NULL;
	int ret, fd = -1, ndev, i;

	/* The link's figures are their own table (cli_bench_link.c). */
	for (i = 1; i < argc; i++)
		if (!strncmp(argv[i], "--link", 6))
			return cli_bench_link(argc, argv);
	ret = parse(&a, argc, argv);
	if (ret)
		return ret;
	if (a.kernel) {
		ndev = wafer_list_devices(NULL, 0);
		if (ndev <= 0 && a.kernel > 0) {
			fprintf(stderr, "wafer bench: the kernel backend needs a wafer device: %s\n",
				ndev < 0 ? wafer_last_error() : "none in " WAFER_ACCEL_DIR);
			return 1;
		}
		if (ndev <= 0)
			fprintf(stderr, "wafer bench: no wafer device%s%s: inproc only\n",
				ndev < 0 ? ": " : "", ndev < 0 ? wafer_last_error() : "");
		a.kernel = ndev > 0;
	}
	if (a.model) {
		path = name = a.model;
	} else {
		fd = synthetic_model(synth, sizeof(synth));
		if (fd < 0)
			return 1;
		path = synth;
		name = "synthetic (stories260K shape, random weights)";
	}
	ret = wafer_convert(path, &a.conv, &blob, &len);
	if (fd >= 0)
		close(fd);
	if (ret) {
		fail("converting the model");
		return 1;
	}
	ret = a.chain.chain ? run_chain(&bn, &a, blob, len) : 0;
	if (a.kernel)
		ret = run_kernel(&bn, &a, blob, len);
	if (!ret && a.inproc)
		ret = run_inproc(&bn, &a, blob, len);
	if (!ret && a.kernel && a.devices)
		ret = run_devices(&bn, &a, 1, blob, len);
	if (!ret && a.inproc && a.devices)
		ret = run_devices(&bn, &a, 0, blob, len);
	if (!ret && a.n_afd)
		ret = run_afd(&bn, &a, blob, len);
	if (!ret && a.kernel)
		ret = run_stream(&bn, &a, 1, blob, len);
	if (!ret && a.inproc)
		ret = run_stream(&bn, &a, 0, blob, len);
	free(blob);
	if (ret)
		return 1;
	print_tables(&bn, &a, name);
	if (a.tokenizer && (a.inproc || a.kernel) &&
	    cli_bench_spec(a.model, a.tokenizer, &a.conv, a.quick ? 48 : 128, a.draft_tokens,
			   a.draft_stages, a.inproc, a.kernel ? a.index : -2))
		return 1;
	return 0;
}
