// SPDX-License-Identifier: MIT
/*
 * wafer top: live utilisation of a kernel device, from what the driver
 * exposes:
 *
 *   /sys/class/accel/accelN/device/{busy_ns,jobs_completed,tokens,...}
 *                                          (world-readable)
 *   /proc/PID/fdinfo/FD                    (per process: the caller's own, or
 *                                           all for root; cli_top_procs.c)
 *   /sys/kernel/debug/accel/wafer.M/stages (root, debugfs; wafer.M: the
 *                                           platform device)
 *   /sys/kernel/debug/accel/wafer.M/experts (MoE models, through libwafer)
 *
 * Every interval it prints the deltas: jobs/s, tokens/s, the bottleneck
 * stage's utilisation, per process its modelled busy share and jobs in
 * flight and, where debugfs is readable, per stage utilisation = modelled
 * busy time gained / the interval, tokens/s, SRAM use and FIFO high-water;
 * with an MoE model, per layer the tokens/s each expert ran and the load
 * imbalance (busiest routed expert / the mean).  An in-process device lives
 * in its server: --url reads a wafer serve's /metrics instead
 * (cli_top_serve.c).  On a terminal the screen is redrawn; otherwise one
 * block per interval.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_stats.h"
#include "cli_top.h"

#define SYSFS_ACCEL	"/sys/class/accel"
#define DEBUGFS_ROOT	"/sys/kernel/debug"
#define MAX_STAGES	256
#define TOP_MAX_MODELS	4	/* the firmware's WFW_MAX_MODELS */

int cli_sysfs_u64(int index, const char *attr, uint64_t *out)
{
	unsigned long long v;
	char path[PATH_MAX];
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), SYSFS_ACCEL "/accel%d/device/%s", index, attr);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	if (fscanf(f, "%llu", &v) == 1)
		*out = v;
	else
		ret = -EIO;
	fclose(f);
	return ret;
}

/* debugfs names the device's directory after the platform device (wafer.M). */
static int stages_path(int index, char *path, size_t len, char *err, size_t errlen)
{
	char link[PATH_MAX], target[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(link, sizeof(link), SYSFS_ACCEL "/accel%d/device", index);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0) {
		int e = errno;

		snprintf(err, errlen, "%s: %s (is accel%d a wafer device?)", link, strerror(e),
			 index);
		return -e;
	}
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (strlen(base) > 64) {
		snprintf(err, errlen, "%s: unexpected device name", link);
		return -ENAMETOOLONG;
	}
	if (access(DEBUGFS_ROOT "/accel", F_OK)) {
		int e = errno;

		snprintf(err, errlen, "%s/accel: %s: debugfs is not mounted "
			 "(mount -t debugfs none %s) or not readable (run as root)",
			 DEBUGFS_ROOT, strerror(e), DEBUGFS_ROOT);
		return -e;
	}
	snprintf(path, len, DEBUGFS_ROOT "/accel/%.64s/stages", base);
	return 0;
}

int cli_read_stages(int index, struct cli_stage_row *rows, unsigned int max,
			  char *err, size_t errlen)
{
	char path[PATH_MAX], *text;
	size_t len = 0, cap = 1 << 16;
	FILE *f;
	int ret = stages_path(index, path, sizeof(path), err, errlen);

	if (ret)
		return ret;
	f = fopen(path, "re");
	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	text = malloc(cap + 1);
	if (!text) {
		fclose(f);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	len = fread(text, 1, cap, f);
	if (ferror(f)) {
		ret = -EIO;
		snprintf(err, errlen, "%s: read error", path);
	}
	fclose(f);
	text[len] = '\0';
	if (!ret) {
		ret = cli_stages_parse(text, rows, max);
		if (ret < 0) {
			ret = -EPROTO;
			snprintf(err, errlen, "%s: not a stages table", path);
		}
	}
	free(text);
	return ret;
}

/**
 * struct sample - one reading
 * @t_ns: CLOCK_MONOTONIC when read
 * @busy_ns: sysfs busy_ns
 * @jobs: sysfs jobs_completed
 * @tokens: sysfs tokens (0: not exposed)
 * @bottleneck_ns: sysfs bottleneck_busy_ns (0: not exposed)
 * @n: stages (-1: debugfs not readable, said in @stage_err)
 * @st: per stage
 * @stage_err: why there are no stage rows
 * @n_procs: processes with the device open (-1: /proc not readable)
 * @procs: them
 * @x: expert load of each model the device holds, in the firmware's order
 *	(empty: a dense model, or unreadable)
 * @n_x: models read
 */
struct sample {
	uint64_t t_ns;
	uint64_t busy_ns;
	uint64_t jobs;
	uint64_t tokens;
	uint64_t bottleneck_ns;
	int n;
	struct cli_stage_row st[MAX_STAGES];
	char stage_err[512];
	int n_procs;
	struct cli_top_proc procs[CLI_TOP_PROCS];
	struct cli_experts x[TOP_MAX_MODELS];
	unsigned int n_x;
};

static void experts_free(struct sample *s)
{
	unsigned int i;

	for (i = 0; i < TOP_MAX_MODELS; i++)
		cli_experts_free(&s->x[i]);
	s->n_x = 0;
}

/* Every model's expert load (debugfs experts: a section each). */
static void experts_take(struct wafer_dev *dev, struct sample *s)
{
	int ret;

	experts_free(s);
	while (dev && s->n_x < TOP_MAX_MODELS) {
		ret = cli_experts_take(dev, NULL, s->n_x, &s->x[s->n_x]);
		if (ret < 0) {
			cli_experts_free(&s->x[s->n_x]);
			break;
		}
		s->n_x++;
	}
}

static int take(int index, struct wafer_dev *dev, struct sample *s)
{
	char err[sizeof(s->stage_err) - 16];
	int ret;

	experts_take(dev, s);

	s->t_ns = cli_now_ns();
	ret = cli_sysfs_u64(index, "busy_ns", &s->busy_ns);
	if (!ret)
		ret = cli_sysfs_u64(index, "jobs_completed", &s->jobs);
	if (ret) {
		fprintf(stderr, "wafer top: %s/accel%d/device/busy_ns, jobs_completed: %s\n",
			SYSFS_ACCEL, index, strerror(-ret));
		return ret;
	}
	/* newer drivers only: absent stays 0 */
	s->tokens = 0;
	s->bottleneck_ns = 0;
	cli_sysfs_u64(index, "tokens", &s->tokens);
	cli_sysfs_u64(index, "bottleneck_busy_ns", &s->bottleneck_ns);
	s->n = cli_read_stages(index, s->st, MAX_STAGES, err, sizeof(err));
	if (s->n < 0) {
		snprintf(s->stage_err, sizeof(s->stage_err), "%s", err);
		s->n = -1;
	}
	s->n_procs = cli_top_procs("/proc", index, s->procs, CLI_TOP_PROCS);
	return 0;
}

static uint64_t delta(uint64_t now, uint64_t before)
{
	return now > before ? now - before : 0;	/* counters reset with the device */
}

static void bar(char *out, double frac, int width)
{
	int i, fill = (int)(frac * width + 0.5);

	for (i = 0; i < width; i++)
		out[i] = i < fill ? '#' : '.';
	out[width] = '\0';
}

/*
 * Per MoE layer of model @k: imbalance over the interval and since the
 * model loaded, then each expert's tokens/s; with several MoE models, a
 * line naming the model (the device's k-th, in the firmware's order) first.
 */
static void print_experts(const struct sample *a, const struct sample *b, unsigned int k,
			  double dt)
{
	const struct cli_experts *prev = k < a->n_x ? &a->x[k] : NULL, *cur = &b->x[k];
	struct cli_experts d;
	unsigned int i, moe = 0;

	for (i = 0; i < b->n_x; i++)
		moe += b->x[i].n > 0;
	if (!cur->n || cli_experts_since(prev, cur, &d))
		return;
	if (moe > 1)
		printf("model %u of the device (firmware order):\n", k + 1);
	printf("MoE layer  max/mean interval  since load  tokens/s per expert (sN: shared)");
	for (i = 0; i < d.n; i++) {
		const struct wafer_expert_load *e = &d.e[i];

		if (!i || e->layer != d.e[i - 1].layer)
			printf("\n%9u  %17.2f  %10.2f ", e->layer,
			       wafer_expert_imbalance(d.e, d.n, e->layer),
			       wafer_expert_imbalance(cur->e, cur->n, e->layer));
		printf(" %s%u %.1f", e->shared ? "s" : "", e->expert, e->tokens / dt);
	}
	printf("\n");
	cli_experts_free(&d);
}

/* Per process: modelled busy time of its files gained / the interval. */
static void print_procs(const struct sample *a, const struct sample *b, double dt)
{
	int i, k;

	if (b->n_procs < 0) {
		printf("processes: /proc not readable\n");
		return;
	}
	printf("%7s %-16s %5s %8s %10s\n", "pid", "command", "files", "inflight",
	       "busy%");
	for (i = 0; i < b->n_procs; i++) {
		const struct cli_top_proc *p = &b->procs[i];
		uint64_t before = p->engine_ns;

		for (k = 0; k < a->n_procs; k++)
			if (a->procs[k].pid == p->pid)
				before = a->procs[k].engine_ns;
		printf("%7d %-16s %5u %8u %10.4f\n", p->pid, p->comm, p->files, p->inflight,
		       delta(p->engine_ns, before) / 1e9 / dt * 100);
	}
	if (!b->n_procs)
		printf("        (none of the processes this user may inspect has it open)\n");
}

/* Stage @stage's busy time in the fdinfo of the processes in @s, summed. */
static uint64_t procs_stage_ns(const struct sample *s, unsigned int stage)
{
	uint64_t ns = 0;
	int i;

	for (i = 0; i < s->n_procs; i++)
		if (stage < s->procs[i].stages)
			ns += s->procs[i].stage_ns[stage];
	return ns;
}

/*
 * Without debugfs: each stage's busy time from the fdinfo of the processes
 * this user may read (drm-engine-stage<N>: their jobs that asked for chunk
 * times), over the interval.
 */
static void print_procs_stages(const struct sample *a, const struct sample *b, double dt)
{
	unsigned int stages = 0, s;
	char graph[24];
	double util;
	int i;

	for (i = 0; i < b->n_procs; i++)
		if (b->procs[i].stages > stages)
			stages = b->procs[i].stages;
	if (!stages)
		return;
	printf("stage    util%%  %-20s  (fdinfo of the processes above)\n", "busy (modelled)");
	for (s = 0; s < stages; s++) {
		util = delta(procs_stage_ns(b, s), procs_stage_ns(a, s)) / 1e9 / dt;
		bar(graph, util > 1 ? 1 : util, 20);
		printf("%5u %8.4f  %s\n", s, util * 100, graph);
	}
}

static void print_stages(const struct sample *a, const struct sample *b, double dt)
{
	int i;

	if (b->n < 0) {
		printf("stages: per-stage rows need debugfs: %s\n", b->stage_err);
		print_procs_stages(a, b, dt);
		return;
	}
	printf("stage layers     util%%  %-20s   tokens/s  sram used/size KiB  fifo_hw\n",
	       "busy (modelled)");
	for (i = 0; i < b->n; i++) {
		const struct cli_stage_row *r = &b->st[i], *o = i < a->n ? &a->st[i] : r;
		double util = delta(r->modelled_busy_ns, o->modelled_busy_ns) / 1e9 / dt;
		char layers[32], graph[24];

		if (r->n_layers)
			snprintf(layers, sizeof(layers), "%u-%u%s%s", r->first_layer,
				 r->first_layer + r->n_layers - 1, r->embed ? "E" : "",
				 r->head ? "H" : "");
		else
			snprintf(layers, sizeof(layers), "-%s%s", r->embed ? "E" : "",
				 r->head ? "H" : "");
		bar(graph, util > 1 ? 1 : util, 20);
		printf("%5u %-7s %8.4f  %s %10.1f  %8llu/%-8llu  %7llu\n", r->stage, layers,
		       util * 100, graph, delta(r->tokens, o->tokens) / dt,
		       (unsigned long long)r->sram_used >> 10,
		       (unsigned long long)r->sram_size >> 10, (unsigned long long)r->fifo_hw);
	}
}

static void print_block(int index, const struct sample *a, const struct sample *b, int tty)
{
	double dt = (double)delta(b->t_ns, a->t_ns) / 1e9;
	uint64_t tokens = delta(b->tokens, a->tokens);
	int i;

	if (dt <= 0)
		dt = 1e-9;
	/* without sysfs tokens: the stages' count (every token passes each) */
	for (i = 0; !b->tokens && i < b->n && i < a->n; i++)
		tokens = delta(b->st[i].tokens, a->st[i].tokens) > tokens ?
			 delta(b->st[i].tokens, a->st[i].tokens) : tokens;
	if (tty)
		fputs("\033[H\033[2J", stdout);
	printf("wafer top: accel%d  interval %.0f ms  jobs %llu (%.1f/s)  tokens %llu (%.1f/s)  "
	       "modelled job time %.3f ms\n", index, dt * 1e3,
	       (unsigned long long)delta(b->jobs, a->jobs), delta(b->jobs, a->jobs) / dt,
	       (unsigned long long)tokens, tokens / dt,
	       delta(b->busy_ns, a->busy_ns) / 1e6);
	if (b->bottleneck_ns)
		printf("bottleneck stage busy (modelled) %.4f%% of the interval\n",
		       delta(b->bottleneck_ns, a->bottleneck_ns) / 1e9 / dt * 100);
	print_procs(a, b, dt);
	print_stages(a, b, dt);
	for (i = 0; i < (int)b->n_x; i++)
		print_experts(a, b, (unsigned int)i, dt);
	if (!tty)
		printf("\n");
	fflush(stdout);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: wafer top [-d N] [-n ITERATIONS] [-i INTERVAL_MS]\n"
		"       wafer top --backend inproc [--url URL] [-n ITERATIONS] [-i INTERVAL_MS]\n"
		"Live utilisation of a wafer device, like top or nvidia-smi dmon.\n"
		"  -d, --device N        /dev/accel/accelN (default: the first wafer device)\n"
		"  -n, --iterations N    stop after N intervals (default: run until killed)\n"
		"  -i, --interval MS     sampling interval, 10..3600000 (default 1000)\n"
		"  -b, --backend kernel|inproc  kernel (default): the device's counters;\n"
		"                        inproc: a device simulated inside a wafer serve\n"
		"                        process, read from its /metrics (--url)\n"
		"  --url URL             a running wafer serve (default\n"
		"                        http://127.0.0.1:8000): slots, queue, tok/s, and\n"
		"                        its devices' modelled time against host time\n"
		"  -h, --help            this text\n"
		"Any user: jobs, tokens and the bottleneck stage from sysfs, and per\n"
		"process (the user's own; root: all) its modelled busy share and jobs in\n"
		"flight from /proc/PID/fdinfo.  Where debugfs is readable (root), per\n"
		"stage too: utilisation is the stage's modelled busy time gained per\n"
		"interval of host time.  With an MoE model loaded: per layer, each\n"
		"expert's tokens/s and the load imbalance over the interval (busiest\n"
		"routed expert / the mean).\n");
}

/* The lowest accelN with the wafer driver's sysfs counters (busy_ns); -1 if none. */
static int first_in_sysfs(void)
{
	int i;
	uint64_t v;

	for (i = 0; i < 64; i++)
		if (!cli_sysfs_u64(i, "busy_ns", &v))
			return i;
	return -1;
}

static int parse_count(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int cli_cmd_top(int argc, char **argv)
{
	static struct sample s[2];
	struct wafer_open_opts o = { .backend = WAFER_BACKEND_KERNEL };
	long iters = 0, interval = 1000, it;
	int index = -1, opt, tty = isatty(STDOUT_FILENO), cur = 0, ret = 0;
	struct wafer_dev *dev = NULL;
	struct timespec ts;

	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "interval", required_argument, NULL, 'i' },
		{ "backend", required_argument, NULL, 'b' },
		{ "url", required_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	enum wafer_backend backend = WAFER_BACKEND_KERNEL;
	const char *url = NULL;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "d:n:i:b:h", opts, NULL)) != -1) {
		if ((opt == 'd' && !cli_parse_index(optarg, &index)) ||
		    (opt == 'n' && !parse_count(optarg, 1, LONG_MAX, &iters)) ||
		    (opt == 'i' && !parse_count(optarg, 10, 3600000, &interval)) ||
		    (opt == 'b' && !cli_parse_backend(optarg, &backend)))
			continue;
		if (opt == 'u') {
			url = optarg;
			continue;
		}
		if (opt == 'h') {
			usage(stdout);
			return 0;
		}
		if (opt == '?') {
			usage(stderr);
			return 2;
		}
		return cli_bad_value("top", argv, optind, optarg,
				     opt == 'd' ? "a device index 0..4095" :
				     opt == 'n' ? "1 or more" :
				     opt == 'i' ? "10..3600000 ms" : "kernel or inproc");
	}
	if (optind < argc) {
		fprintf(stderr, "wafer top: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (url && index >= 0) {
		fprintf(stderr, "wafer top: -d or --url, not both (a server's devices are its "
			"own)\n");
		return 2;
	}
	if (url || backend == WAFER_BACKEND_INPROC)
		return cli_top_serve(url ? url : "http://127.0.0.1:8000", iters, interval, tty);
	if (index < 0) {
		struct wafer_device_desc d;
		int n = wafer_list_devices(&d, 1);

		/* a user without access to the nodes still reads their sysfs */
		if (n <= 0) {
			d.index = first_in_sysfs();
			n = d.index >= 0 ? 1 : n;
		}
		if (n <= 0) {
			fprintf(stderr, "wafer top: no wafer device in %s: %s\n"
				"  load the driver (modprobe wafer), or watch a wafer serve "
				"--backend inproc with wafer top --url http://HOST:PORT\n",
				WAFER_ACCEL_DIR,
				n < 0 ? wafer_last_error() : wafer_strerror(-ENOENT));
			return 1;
		}
		index = d.index;
	} else {
		char node[64];

		snprintf(node, sizeof(node), WAFER_ACCEL_DIR "/accel%d", index);
		if (access(node, F_OK)) {
			fprintf(stderr, "wafer top: %s: %s\n", node, strerror(errno));
			return 1;
		}
	}
	/* The expert counters come through libwafer; without it, none shown. */
	o.index = index;
	if (wafer_open(&o, &dev))
		dev = NULL;
	if (take(index, dev, &s[cur])) {
		ret = 1;
		goto out;
	}
	ts.tv_sec = interval / 1000;
	ts.tv_nsec = (interval % 1000) * 1000000L;
	for (it = 0; !iters || it < iters; it++) {
		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
		ts.tv_sec = interval / 1000;
		ts.tv_nsec = (interval % 1000) * 1000000L;
		if (take(index, dev, &s[!cur])) {
			ret = 1;
			goto out;
		}
		print_block(index, &s[cur], &s[!cur], tty);
		cur = !cur;
	}
out:
	experts_free(&s[0]);
	experts_free(&s[1]);
	wafer_close(dev);
	return ret;
}
