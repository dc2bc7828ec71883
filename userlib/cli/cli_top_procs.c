// SPDX-License-Identifier: MIT
/*
 * wafer top's process table: the processes with a wafer device open, from
 * /proc/PID/fd (which files are /dev/accel/accelN) and their fdinfo, which
 * the driver fills (drm-engine-wafer: the file's modelled busy time,
 * drm-engine-stage<N>: each stage's share, drm-wafer-jobs-inflight).  Any user reads them for the processes it may
 * ptrace (its own; root: all), no debugfs needed.  A file open on several
 * descriptors (dup, fork, SCM_RIGHTS) counts once, by drm-client-id.
 */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_top.h"

/*
 * The fdinfo of one file into @p (zeroed first; @client its drm-client-id):
 * 0 when it is a wafer file, else -1.
 */
static int read_fdinfo(const char *path, unsigned long long *client, struct cli_top_proc *p)
{
	char line[256], drv[64] = "";
	unsigned long long v;
	unsigned int stage;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	*client = 0;
	memset(p, 0, sizeof(*p));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "drm-driver: %63s", drv) == 1)
			continue;
		if (sscanf(line, "drm-client-id: %llu", &v) == 1)
			*client = v;
		else if (sscanf(line, "drm-engine-wafer: %llu", &v) == 1)
			p->engine_ns = v;
		else if (sscanf(line, "drm-engine-stage%u: %llu", &stage, &v) == 2 &&
			 stage < CLI_TOP_STAGES) {
			p->stage_ns[stage] = v;
			if (stage >= p->stages)
				p->stages = stage + 1;
		} else if (sscanf(line, "drm-wafer-jobs-inflight: %llu", &v) == 1)
			p->inflight = (unsigned int)v;
	}
	fclose(f);
	return strcmp(drv, "wafer") ? -1 : 0;
}

static void read_comm(const char *proc, const char *pid, char *comm, size_t len)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%.3900s/%.32s/comm", proc, pid);
	f = fopen(path, "re");
	comm[0] = '\0';
	if (f) {
		if (fgets(comm, (int)len, f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
}

/* One process's wafer files on accel@index, into @p; 1 if it has any. */
static int scan_pid(const char *proc, const char *pid, int index, struct cli_top_proc *p)
{
	char dir[PATH_MAX], link[PATH_MAX], target[PATH_MAX], want[64];
	unsigned long long seen[CLI_TOP_CLIENTS], client;
	unsigned int n_seen = 0, i;
	struct cli_top_proc file;
	struct dirent *e;
	ssize_t n;
	DIR *d;

	snprintf(dir, sizeof(dir), "%.3900s/%.32s/fd", proc, pid);
	d = opendir(dir);
	if (!d)
		return 0;	/* gone, or not ours to read */
	snprintf(want, sizeof(want), "/dev/accel/accel%d", index);
	memset(p, 0, sizeof(*p));
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (snprintf(link, sizeof(link), "%s/%.32s", dir, e->d_name) >= (int)sizeof(link))
			continue;
		n = readlink(link, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		if (strcmp(target, want))
			continue;
		if (snprintf(link, sizeof(link), "%s/%.32s/fdinfo/%.32s", proc, pid, e->d_name) >=
		    (int)sizeof(link))
			continue;
		if (read_fdinfo(link, &client, &file))
			continue;
		for (i = 0; i < n_seen && seen[i] != client; i++)
			;
		if (i < n_seen)
			continue;
		if (n_seen < CLI_TOP_CLIENTS)
			seen[n_seen++] = client;
		p->files++;
		p->engine_ns += file.engine_ns;
		p->inflight += file.inflight;
		for (i = 0; i < file.stages; i++)
			p->stage_ns[i] += file.stage_ns[i];
		if (file.stages > p->stages)
			p->stages = file.stages;
	}
	closedir(d);
	if (!p->files)
		return 0;
	p->pid = atoi(pid);
	read_comm(proc, pid, p->comm, sizeof(p->comm));
	return 1;
}

int cli_top_procs(const char *proc, int index, struct cli_top_proc *out, unsigned int max)
{
	int self = strcmp(proc, "/proc") ? -1 : getpid();
	unsigned int n = 0;
	struct dirent *e;
	DIR *d = opendir(proc);

	if (!d)
		return -1;
	while ((e = readdir(d)) && n < max) {
		/* not wafer top itself: it opens the device for the expert counters */
		if (!isdigit((unsigned char)e->d_name[0]) || atoi(e->d_name) == self)
			continue;
		n += scan_pid(proc, e->d_name, index, &out[n]);
	}
	closedir(d);
	return (int)n;
}
