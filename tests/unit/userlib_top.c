// SPDX-License-Identifier: MIT
/*
 * wafer top's readers apart from the device (userlib/cli/cli_top_procs.c,
 * cli_top_http.c), on a /proc tree made here: the processes holding
 * /dev/accel/accelN and their wafer files' fdinfo (a file on two
 * descriptors counted once, another driver's file and another device's
 * node left out, a process whose fd directory cannot be read skipped), and
 * Prometheus samples read back by name and label set.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli_top.h"
#include "wt_util.h"

static char root[] = "/tmp/wafer-top-proc.XXXXXX";

static void put(const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void dir(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	mkdir(path, 0755);
}

/* fd @fd of @pid: a link to @node with fdinfo @info. */
static void fd(const char *pid, int fd, const char *node, const char *info)
{
	char path[512], rel[128];

	snprintf(path, sizeof(path), "%s/%s/fd/%d", root, pid, fd);
	if (symlink(node, path))
		perror(path);
	snprintf(rel, sizeof(rel), "%s/fdinfo/%d", pid, fd);
	put(rel, info);
}

static void process(const char *pid, const char *comm)
{
	char rel[128];

	dir(pid);
	snprintf(rel, sizeof(rel), "%s/fd", pid);
	dir(rel);
	snprintf(rel, sizeof(rel), "%s/fdinfo", pid);
	dir(rel);
	snprintf(rel, sizeof(rel), "%s/comm", pid);
	put(rel, comm);
}

#define WAFER_FILE(id, ns, inflight)						\
	"pos:\t0\nflags:\t02100002\ndrm-driver:\twafer\ndrm-client-id:\t" id	\
	"\ndrm-engine-wafer:\t" ns " ns\ndrm-wafer-jobs-inflight:\t" inflight "\n"

static void test_procs(void)
{
	struct cli_top_proc p[8];
	char cmd[600];
	int n, i, a = -1, b = -1;

	process("100", "wafer\n");
	fd("100", 3, "/dev/accel/accel0", WAFER_FILE("7", "1500", "2"));
	fd("100", 4, "/dev/accel/accel0", WAFER_FILE("7", "1500", "2"));	/* dup of 3 */
	fd("100", 5, "/dev/accel/accel0", WAFER_FILE("8", "500", "1")
	   "drm-engine-stage0:\t300 ns\ndrm-engine-stage2:\t200 ns\n");
	fd("100", 8, "/dev/accel/accel0", WAFER_FILE("12", "0", "0")
	   "drm-engine-stage2:\t5 ns\ndrm-engine-stage64:\t9 ns\n");
	fd("100", 6, "/dev/null", "pos:\t0\n");
	process("200", "serve\n");
	fd("200", 3, "/dev/accel/accel1", WAFER_FILE("9", "999", "4"));	/* another device */
	fd("200", 7, "/dev/accel/accel0", WAFER_FILE("10", "42", "0"));
	process("300", "other\n");
	fd("300", 3, "/dev/accel/accel0", "drm-driver:\tivpu\ndrm-client-id:\t11\n");
	process("400", "hidden\n");
	snprintf(cmd, sizeof(cmd), "%s/400/fd", root);
	chmod(cmd, 0);
	dir("self");	/* not a pid */

	n = cli_top_procs(root, 0, p, 8);
	for (i = 0; i < n; i++) {
		if (p[i].pid == 100)
			a = i;
		if (p[i].pid == 200)
			b = i;
	}
	wt_ok(n == 2, "accel0: the two processes with wafer files on it (%d)", n);
	wt_ok(a >= 0 && p[a].files == 3 && p[a].engine_ns == 2000 && p[a].inflight == 3 &&
	      !strcmp(p[a].comm, "wafer"),
	      "pid 100: three files (a dup counted once), 2000 ns busy, 3 jobs in flight, 'wafer'");
	wt_ok(a >= 0 && p[a].stages == 3 && p[a].stage_ns[0] == 300 && p[a].stage_ns[1] == 0 &&
	      p[a].stage_ns[2] == 205,
	      "pid 100: drm-engine-stage<N> summed over its files, a stage past the most ignored");
	wt_ok(b >= 0 && p[b].stages == 0, "pid 200: no stage keys, no stages");
	wt_ok(b >= 0 && p[b].files == 1 && p[b].engine_ns == 42 && !strcmp(p[b].comm, "serve"),
	      "pid 200: its accel0 file only (not its accel1 one)");
	n = cli_top_procs(root, 1, p, 8);
	wt_ok(n == 1 && p[0].pid == 200 && p[0].engine_ns == 999 && p[0].inflight == 4,
	      "accel1: pid 200's file");
	wt_ok(cli_top_procs(root, 0, p, 1) == 1, "at most @max processes");
	wt_ok(cli_top_procs("/nonexistent-proc", 0, p, 8) == -1, "an unreadable /proc: -1");
	chmod(cmd, 0755);
}

static void test_prom(void)
{
	static const char text[] =
		"# HELP wafer_serve_slots Sequence slots.\n"
		"# TYPE wafer_serve_slots gauge\n"
		"wafer_serve_slots 16\n"
		"wafer_serve_slots_in_use 3\n"
		"wafer_serve_requests_total{code=\"2xx\"} 12\n"
		"wafer_serve_requests_total{code=\"4xx\"} 1\n"
		"wafer_serve_member_jobs_total{member=\"1\",device=\"inproc\"} 7\n"
		"wafer_serve_device_makespan_seconds_total 0.000002650\n";
	double v = -1;
	int ret = cli_prom_value(text, "wafer_serve_slots", NULL, &v);

	wt_ok(!ret && v == 16, "a sample without labels, not its longer-named sibling (%g)", v);
	wt_ok(!cli_prom_value(text, "wafer_serve_requests_total", "code=\"4xx\"", &v) && v == 1,
	      "a sample by its label set");
	wt_ok(!cli_prom_value(text, "wafer_serve_member_jobs_total",
			      "member=\"1\",device=\"inproc\"", &v) && v == 7,
	      "two labels");
	wt_ok(!cli_prom_value(text, "wafer_serve_device_makespan_seconds_total", NULL, &v) &&
	      v > 2.64e-6 && v < 2.66e-6, "a fraction");
	wt_ok(cli_prom_value(text, "wafer_serve_requests_total", NULL, &v) == -1 &&
	      cli_prom_value(text, "wafer_serve_queue_depth", NULL, &v) == -1,
	      "a labelled sample asked without labels, and an absent one: -1");
}

int main(void)
{
	char cmd[600];

	if (!wt_ok(mkdtemp(root) != NULL, "a scratch /proc"))
		return wt_done();
	test_procs();
	test_prom();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	if (system(cmd))
		wt_diag("could not remove %s", root);
	return wt_done();
}
