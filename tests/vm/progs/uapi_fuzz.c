// SPDX-License-Identifier: MIT
/*
 * VM test: structure-aware fuzzer of the wafer uapi.
 *
 * Several threads share 2-3 open files of /dev/accel/accel0 (with --devices
 * N, file i is of accel(i % N), so PRIME buffers, syncobjs and their fences
 * cross devices: jobs of one device read BOs of another and wait for its
 * jobs, as the devices of a layer-range chain do) and a pool of
 * live and stale objects per file (BO handles including closed ones, mmaps,
 * the model id, context ids including destroyed ones, seqnos, syncobjs,
 * PRIME fds).  Each iteration picks an operation (every wafer ioctl, DRM
 * core GEM/PRIME/syncobj ioctls, mmap/munmap/touch of BOs, io_uring
 * submission of jobs on SQE128 and plain rings, signals that interrupt
 * waits, closing and reopening a file, fork + a child using the inherited
 * fd), builds a valid-looking argument, then mutates 0-3 fields with
 * boundary values (0, 1, -1, U32_MAX, U64_MAX, sizes near the page and the
 * BO size, overflowing and misaligned offsets, flag and padding bits, bad
 * user pointers, handles of other files and stale handles).
 *
 * Results are counted per (operation, errno) and printed as a table.  A
 * result that is certainly wrong is a failure ("not ok"): success although
 * a documented-invalid field (padding, unknown flag bits, a size or count
 * outside its documented range, a misaligned offset) was passed; -EFAULT
 * from an ioctl whose argument holds no user pointer; a BO whose BO_INFO
 * right after BO_CREATE gives another size (or -ENOENT) while no GEM_CLOSE
 * of its file ran in between; the program hanging.
 * Other surprising errnos are printed as "# unexpected" lines.
 *
 * Afterwards the device must still work: everything is closed, the SRAM
 * each device reports free is back to its value before the run, no job is in
 * flight (debugfs), and the shared model, loaded fresh, decodes greedily
 * exactly as firmware-sim does in this process.
 *
 * Usage: uapi_fuzz [--seed N] [--iters N] [--time SECONDS] [--threads N]
 *                  [--files N] [--devices N] [--trace]
 *   --iters  operations in total (default 3000; 0 with --time: unbounded)
 *   --time   stop after this many seconds as well
 *   --trace  print every operation (with --threads 1 the sequence of
 *            operations is a function of the seed: a reproducer)
 */
#include "uapi_fuzz/uapi_fuzz.h"

/* Relative weights of the operations. */
static const int op_weight[OP_COUNT] = {
	[OP_GET_INFO] = 3, [OP_BO_CREATE] = 8, [OP_BO_INFO] = 4, [OP_GEM_CLOSE] = 4,
	[OP_MMAP] = 6, [OP_MUNMAP] = 4, [OP_TOUCH] = 4, [OP_MODEL_LOAD] = 5,
	[OP_MODEL_UNLOAD] = 2, [OP_DRAIN] = 1, [OP_CTX_CREATE] = 6,
	[OP_CTX_DESTROY] = 3, [OP_SUBMIT] = 20, [OP_WAIT] = 10,
	[OP_SYNC_CREATE] = 3, [OP_SYNC_DESTROY] = 2, [OP_SYNC_MISC] = 4,
	[OP_PRIME_EXPORT] = 3, [OP_PRIME_IMPORT] = 3, [OP_PRIME_MISC] = 2,
	[OP_URING] = 12, [OP_URING_RESET] = 1, [OP_REOPEN] = 1, [OP_FORK] = 1,
	[OP_SIGNAL] = 1, [OP_BAD_IOCTL] = 2, [OP_READ_INFO] = 2,
};

static enum op pick_op(struct tctx *t)
{
	static int total;
	int i, r;

	if (!total)
		for (i = 0; i < OP_COUNT; i++)
			total += op_weight[i];
	r = (int)rn(t, (uint64_t)total);
	for (i = 0; i < OP_COUNT; i++) {
		r -= op_weight[i];
		if (r < 0)
			return (enum op)i;
	}
	return OP_GET_INFO;
}

/* Job-related operations go mostly to the file holding the model. */
static int pick_file(struct tctx *t, enum op op)
{
	int i, fi = (int)rn(t, nfiles);

	if ((op == OP_SUBMIT || op == OP_URING || op == OP_WAIT || op == OP_CTX_CREATE ||
	     op == OP_CTX_DESTROY || op == OP_FORK) && pct(t, 75)) {
		pthread_mutex_lock(&pool_mu);
		for (i = 0; i < nfiles; i++)
			if (files[i].model_id)
				fi = i;
		pthread_mutex_unlock(&pool_mu);
	}
	return fi;
}

static int should_stop(void)
{
	if (atomic_load(&stop_flag))
		return 1;
	if (time_max > 0 && now() - t_start >= time_max)
		return 1;
	return 0;
}

static void *worker(void *arg)
{
	struct tctx *t = arg;

	ring_setup(t);
	while (!should_stop()) {
		long n = atomic_fetch_add(&iters_done, 1);
		enum op op;
		unsigned int gen;
		int fi, fd;

		if (iters_max && n >= iters_max)
			break;
		op = pick_op(t);
		fi = pick_file(t, op);
		atomic_store(&t->cur_op, op);
		t->op_t0 = now();
		if (op == OP_REOPEN) {
			op_reopen(t, fi);
		} else if (op == OP_MUNMAP) {
			op_munmap(t);
		} else if (op == OP_TOUCH) {
			op_touch(t);
		} else if (op == OP_PRIME_MISC) {
			op_prime_misc(t);
		} else if (op == OP_URING_RESET) {
			op_uring_reset(t);
		} else if (op == OP_SIGNAL) {
			op_signal(t);
		} else {
			fd = file_get(fi, &gen);
			switch (op) {
			case OP_GET_INFO: op_get_info(t, fi, fd); break;
			case OP_BO_CREATE: op_bo_create(t, fi, fd, gen); break;
			case OP_BO_INFO: op_bo_info(t, fi, fd); break;
			case OP_GEM_CLOSE: op_gem_close(t, fi, fd, gen); break;
			case OP_MMAP: op_mmap(t, fi, fd); break;
			case OP_MODEL_LOAD: op_model_load(t, fi, fd, gen); break;
			case OP_MODEL_UNLOAD: op_model_unload(t, fi, fd, gen); break;
			case OP_DRAIN: op_drain(t, fi, fd, gen); break;
			case OP_CTX_CREATE: op_ctx_create(t, fi, fd, gen); break;
			case OP_CTX_DESTROY: op_ctx_destroy(t, fi, fd, gen); break;
			case OP_SUBMIT: op_submit(t, fi, fd, gen); break;
			case OP_WAIT: op_wait(t, fi, fd); break;
			case OP_SYNC_CREATE: op_sync_create(t, fi, fd, gen); break;
			case OP_SYNC_DESTROY: op_sync_destroy(t, fi, fd, gen); break;
			case OP_SYNC_MISC: op_sync_misc(t, fi, fd, gen); break;
			case OP_PRIME_EXPORT: op_prime_export(t, fi, fd); break;
			case OP_PRIME_IMPORT: op_prime_import(t, fi, fd, gen); break;
			case OP_URING: op_uring(t, fi, fd); break;
			case OP_FORK: op_fork(t, fi, fd, gen); break;
			case OP_BAD_IOCTL: op_bad_ioctl(t, fi, fd); break;
			case OP_READ_INFO: op_read_info(t, fi, fd); break;
			default: break;
			}
			file_put(fi);
		}
		atomic_store(&t->cur_op, -1);
		atomic_fetch_add(&t->progress, 1);
	}
	if (t->ring_ok) {
		reap(t, 1);
		io_uring_queue_exit(&t->ring);
		t->ring_ok = 0;
	}
	return NULL;
}

/* Reports a thread stuck in one operation (a hang in the driver). */
static void *watchdog(void *arg)
{
	long last[MAX_THREADS] = { 0 };
	double since[MAX_THREADS];
	int i, reported = 0;

	(void)arg;
	for (i = 0; i < nthreads; i++)
		since[i] = now();
	while (!atomic_load(&stop_flag)) {
		sleep(1);
		for (i = 0; i < nthreads; i++) {
			long p = atomic_load(&threads[i].progress);
			int op = atomic_load(&threads[i].cur_op);

			if (p != last[i] || op < 0) {
				last[i] = p;
				since[i] = now();
				continue;
			}
			if (now() - since[i] > 300) {
				printf("# HANG: giving up: the driver did not return in 300 s\n");
				printf("not ok - fuzzing finished (hang)\n");
				fflush(stdout);
				_exit(1);
			}
			if (now() - since[i] > 120 && !(reported & (1 << i))) {
				reported |= 1 << i;
				pthread_mutex_lock(&print_mu);
				printf("# HANG: T%d stuck in %s for %.0f s; its last operations:\n",
				       i, op_name[op], now() - since[i]);
				dump_log(&threads[i]);
				fflush(stdout);
				pthread_mutex_unlock(&print_mu);
				atomic_fetch_add(&sure_bugs, 1);
			}
		}
	}
	return NULL;
}

static void print_summary(double secs)
{
	long total = 0;
	int o, e;

	printf("# per-operation results (errno: count), seed %" PRIu64 ", %d threads, "
	       "%d files, %.1f s\n", seed, nthreads, nfiles, secs);
	for (o = 0; o < OP_COUNT; o++) {
		long n = 0;
		char line[1024];
		size_t at = 0;

		for (e = 0; e <= MAX_ERRNO; e++)
			n += atomic_load(&counts[o][e]);
		if (!n)
			continue;
		total += o == OP_URING_CQE ? 0 : n;
		for (e = 0; e <= MAX_ERRNO && at < sizeof(line) - 32; e++) {
			long c = atomic_load(&counts[o][e]);

			if (c)
				at += (size_t)snprintf(line + at, sizeof(line) - at, " %s:%ld",
						       ename(e), c);
		}
		printf("#   %-16s %7ld %s\n", op_name[o], n, line);
	}
	{
		char line[512];
		size_t at = 0;

		for (e = 0; e <= MAX_ERRNO; e++) {
			long c = atomic_load(&status_counts[e]);

			if (c)
				at += (size_t)snprintf(line + at, sizeof(line) - at, " %s:%ld",
						       ename(e), c);
		}
		printf("#   %-16s %7s %s\n", "job status", "", line);
	}
	printf("# %ld operations (+ sub-operations), %.0f ops/s\n", total,
	       secs > 0 ? total / secs : 0);
	printf("# BO_CREATE's size checked by BO_INFO %ld times; not checked %ld times (a "
	       "GEM_CLOSE of the file overlapped), %ld of them finding another BO's size there\n",
	       atomic_load(&size_checks), atomic_load(&size_skips), atomic_load(&size_reused));
}

/* The device still runs the shared model exactly as firmware-sim does. */
static void final_check(const uint64_t *sram_free0)
{
	struct wfs_topk_entry ref_topk[NCHECK][TOPK_CHECK];
	uint32_t toks[NCHECK + 1], ref_arg[NCHECK], pos;
	struct drm_wafer_device_info info;
	struct wt_dev_model m;
	struct wt_model ref;
	struct wt_bo in, out;
	double t0 = now();
	int fd, ret, ok, d;
	unsigned int left = 0;

	/* Rings torn down release their files from a work item: retry. */
	do {
		fd = wt_dev_open(0);
		if (fd < 0)
			break;
		ret = wt_dev_load_model(fd, 8, 2, 64, &m);
		if (ret == -EBUSY) {
			free(m.blob);
			close(fd);
			usleep(200000);
		}
	} while (ret == -EBUSY && now() - t0 < 30);
	if (!wt_ok(fd >= 0 && !ret, "after fuzzing: MODEL_LOAD + CTX_CREATE of the shared "
		   "model on a fresh file (%d, %.1f s)", fd < 0 ? fd : ret, now() - t0))
		return;
	if (wt_model_open(&ref, m.blob, m.blob_len, 64, 0) ||
	    wt_bo_new(fd, &in, (NCHECK + 1) * 4) ||
	    wt_bo_new(fd, &out, (size_t)NCHECK * DRM_WAFER_RESULT_SIZE(TOPK_CHECK))) {
		wt_ok(0, "after fuzzing: reference and job buffers");
		return;
	}
	toks[0] = 1;
	for (pos = 0; pos < NCHECK; pos++) {
		ref_arg[pos] = wt_model_step(&ref, toks[pos], pos, TOPK_CHECK, ref_topk[pos]);
		toks[pos + 1] = ref_arg[pos];
	}
	memcpy(in.map, toks, sizeof(toks));
	ok = 1;
	for (pos = 0; pos < NCHECK && ok; pos++) {
		struct drm_wafer_submit s = { .job = {
			.ctx_id = m.ctx_id, .slot = 0, .start_pos = pos, .n_tokens = 1,
			.top_k = TOPK_CHECK, .in_handle = in.handle, .out_handle = out.handle,
			.in_offset = pos * 4 } };
		const struct drm_wafer_token_result *r = wt_result(&out, 0, TOPK_CHECK, 0);

		ret = wt_ioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &s);
		if (!ret)
			ret = wt_wait_job(fd, s.seqno, NULL);
		ok = !ret && wt_result_matches(r, pos, ref_arg[pos], ref_topk[pos], TOPK_CHECK);
		if (!ok)
			wt_diag("pos %u: ret %d argmax %u reference %u", pos, ret, r->argmax,
				ref_arg[pos]);
	}
	wt_ok(ok, "after fuzzing: greedy decode of %d tokens matches in-process firmware-sim",
	      NCHECK);
	{
		struct drm_wafer_submit s = { .job = {
			.ctx_id = m.ctx_id, .slot = 1, .start_pos = 0, .n_tokens = NCHECK,
			.flags = DRM_WAFER_JOB_ALL_POSITIONS, .top_k = TOPK_CHECK,
			.in_handle = in.handle, .out_handle = out.handle } };

		ret = wt_ioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &s);
		if (!ret)
			ret = wt_wait_job(fd, s.seqno, NULL);
		ok = !ret;
		for (pos = 0; pos < NCHECK && ok; pos++) {
			const struct drm_wafer_token_result *r =
				wt_result(&out, 0, TOPK_CHECK, pos);

			ok = r->position == pos && r->argmax == ref_arg[pos];
		}
		wt_ok(ok, "after fuzzing: prefill of %d positions in one job matches (%d)",
		      NCHECK, ret);
	}
	wt_model_close(&ref);
	munmap(in.map, in.size);
	munmap(out.map, out.size);
	free(m.blob);
	close(fd);

	/* Everything closed: SRAM is free again and no job is left. */
	for (d = 0; d < ndevs; d++) {
		t0 = now();
		do {
			left = wt_debugfs_inflight();
			fd = wt_dev_open(d);
			ret = fd < 0 ? fd : get_info(fd, &info);
			if (fd >= 0)
				close(fd);
			if (!ret && info.sram_bytes_free == sram_free0[d] &&
			    (left == 0 || left == ~0u))
				break;
			usleep(200000);
		} while (now() - t0 < 15);
		wt_ok(!ret && info.sram_bytes_free == sram_free0[d],
		      "after everything closed SRAM free of accel%d is back to %llu (%llu)", d,
		      (unsigned long long)sram_free0[d], (unsigned long long)info.sram_bytes_free);
	}
	wt_ok(left == 0 || left == ~0u, "no job in flight afterwards (debugfs: %d)", (int)left);
}

/* File 0 starts with the model loaded and a context of 4 x 64. */
static void seed_model(void)
{
	struct file_slot *f = &files[0];
	struct drm_wafer_model_load ml = { .blob_size = blob_len };
	struct drm_wafer_ctx_create cc = { .kv_slots = 4, .ctx_len = 64 };

	ml.bo_handle = make_blob_bo(0, f->fd, f->gen, 0, NULL);
	if (wt_ioctl(f->fd, DRM_IOCTL_WAFER_MODEL_LOAD, &ml)) {
		wt_diag("initial MODEL_LOAD failed: %s", strerror(errno));
		return;
	}
	f->model_id = ml.model_id;
	cc.model_id = ml.model_id;
	if (wt_ioctl(f->fd, DRM_IOCTL_WAFER_CTX_CREATE, &cc))
		return;
	f->ctx[0].id = cc.ctx_id;
	f->ctx[0].slots = cc.kv_slots;
	f->ctx[0].ctx_len = cc.ctx_len;
	f->ctx[0].live = 1;
	f->ctx_next = 1;
}

static void usage(void)
{
	fprintf(stderr, "usage: uapi_fuzz [--seed N] [--iters N] [--time S] [--threads N] "
			"[--files N] [--devices N] [--trace]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct wfs_pack_opts po = { .wbits = 8, .group_size = 32 };
	struct sigaction sa = { 0 };
	struct wfs_ckpt ck;
	pthread_t wd;
	uint64_t sram_free0[MAX_FILES];
	double secs;
	int i, fd, time_set = 0, iters_set = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters_max = strtol(argv[++i], NULL, 0), iters_set = 1;
		else if (!strcmp(argv[i], "--time") && i + 1 < argc)
			time_max = strtod(argv[++i], NULL), time_set = 1;
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			nthreads = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--files") && i + 1 < argc)
			nfiles = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--devices") && i + 1 < argc)
			ndevs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--trace"))
			trace = 1;
		else
			usage();
	}
	if (time_set && !iters_set)
		iters_max = 0;
	if (nthreads < 1 || nthreads > MAX_THREADS || nfiles < 2 || nfiles > MAX_FILES ||
	    ndevs < 1 || ndevs > nfiles)
		usage();
	setvbuf(stdout, NULL, _IOLBF, 0);

	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;	/* no SA_RESTART: interrupts waits */
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	scratch = mmap(NULL, 3 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (scratch == MAP_FAILED)
		return 1;
	memset(scratch, 0, 3 * PAGE);
	mprotect(scratch + PAGE, PAGE, PROT_NONE);
	mprotect(scratch + 2 * PAGE, PAGE, PROT_READ);
	{
		void *p = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		unmapped_addr = (uintptr_t)p;
		munmap(p, PAGE);
	}

	if (wfs_ckpt_load(wt_model_path("stories260K.bin"), &ck) ||
	    wfs_pack(&ck, &po, &blob, &blob_len)) {
		printf("not ok - pack the shared model (stories260K.bin)\n");
		return 1;
	}
	wfs_ckpt_free(&ck);

	for (i = ndevs - 1; i >= 0; i--) {	/* device 0's answer stays in dinfo */
		fd = wt_dev_open(i);
		if (fd < 0 || get_info(fd, &dinfo)) {
			printf("not ok - open and query /dev/accel/accel%d (%d)\n", i, fd);
			return 1;
		}
		close(fd);
		sram_free0[i] = dinfo.sram_bytes_free;
	}
	wt_diag("uapi_fuzz: seed %" PRIu64 ", %ld ops%s, %.0f s max, %d threads, %d files on "
		"%d device%s; device: max_bo %llu, contexts %u, inflight %u, timeout %u ms, "
		"SRAM free %llu", seed, iters_max, iters_max ? "" : " (unbounded)", time_max,
		nthreads, nfiles, ndevs, ndevs > 1 ? "s" : "",
		(unsigned long long)dinfo.max_bo_size, dinfo.max_contexts,
		dinfo.max_inflight_jobs, dinfo.job_timeout_ms,
		(unsigned long long)sram_free0[0]);

	for (i = 0; i < nfiles; i++) {
		pthread_rwlockattr_t a;

		pthread_rwlockattr_init(&a);
		pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
		pthread_rwlock_init(&files[i].rw, &a);
		if (open_file(i) < 0) {
			printf("not ok - open file %d\n", i);
			return 1;
		}
	}

	seed_model();
	t_start = now();
	for (i = 0; i < nthreads; i++) {
		threads[i].idx = i;
		atomic_store(&threads[i].cur_op, -1);
		wt_rng_seed(&threads[i].rng, seed * 0x9e3779b97f4a7c15ull + (uint64_t)i * 7919);
	}
	for (i = 0; i < nthreads; i++)
		pthread_create(&threads[i].th, NULL, worker, &threads[i]);
	pthread_create(&wd, NULL, watchdog, NULL);
	for (i = 0; i < nthreads; i++)
		pthread_join(threads[i].th, NULL);
	atomic_store(&stop_flag, 1);
	pthread_join(wd, NULL);
	secs = now() - t_start;

	/* Close everything the pool holds. */
	for (i = 0; i < NMAP; i++)
		if (maps[i].live)
			munmap(maps[i].addr, maps[i].len);
	for (i = 0; i < NPRIME; i++)
		if (primes[i].live)
			close(primes[i].fd);
	for (i = 0; i < nfiles; i++)
		close(files[i].fd);

	print_summary(secs);
	wt_ok(atomic_load(&sure_bugs) == 0,
	      "%ld fuzz operations (seed %" PRIu64 ") with no certain driver bug (%d; %d "
	      "unexpected errnos reported)", iters_max && atomic_load(&iters_done) > iters_max ?
	      iters_max : (long)atomic_load(&iters_done), seed,
	      atomic_load(&sure_bugs), atomic_load(&unexpected));
	final_check(sram_free0);
	free(blob);
	return wt_done();
}
