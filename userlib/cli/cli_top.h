/* SPDX-License-Identifier: MIT */
/* wafer top's sources apart from debugfs: fdinfo of processes, a server's /metrics. */
#ifndef CLI_TOP_H
#define CLI_TOP_H

#include <stddef.h>
#include <stdint.h>

#define CLI_TOP_CLIENTS	64	/* distinct files of a process counted */
#define CLI_TOP_PROCS	64	/* processes shown */
#define CLI_TOP_STAGES	64	/* stages a device has at most (the driver's) */

/**
 * struct cli_top_proc - a process's wafer files on one device
 * @pid: the process
 * @comm: its name
 * @files: distinct files (drm-client-id) it holds on the device
 * @engine_ns: their drm-engine-wafer, summed: modelled busy ns
 * @inflight: their drm-wafer-jobs-inflight, summed
 * @stage_ns: their drm-engine-stage<N>, summed: each stage's modelled busy
 *	time for jobs that asked for their chunk times
 * @stages: one past the highest stage with such time (0: none)
 */
struct cli_top_proc {
	int pid;
	char comm[32];
	unsigned int files;
	uint64_t engine_ns;
	unsigned int inflight;
	uint64_t stage_ns[CLI_TOP_STAGES];
	unsigned int stages;
};

/*
 * The processes under @proc (normally "/proc") with accel@index open, at
 * most @max into @out; their count, or -1 when @proc cannot be read.
 * Processes the caller may not inspect are left out, and under /proc the
 * caller itself.
 */
int cli_top_procs(const char *proc, int index, struct cli_top_proc *out, unsigned int max);

/*
 * GET @url ("http://HOST[:PORT][/PATH]", PATH / or none: /metrics) into a
 * malloc'd NUL-terminated @body; 0, or -1 with the reason in @err.
 */
int cli_http_get(const char *url, char **body, char *err, size_t errlen);

/*
 * The value of Prometheus sample @name{@labels} in @text (@labels NULL: the
 * sample without labels; else the label set exactly as the server wrote
 * it, e.g. member="0",device="inproc"); 0, or -1 when absent.
 */
int cli_prom_value(const char *text, const char *name, const char *labels, double *out);

/*
 * wafer top on a running wafer serve's /metrics at @url: @iters blocks (0:
 * until killed) @interval_ms apart; the exit status.
 */
int cli_top_serve(const char *url, long iters, long interval_ms, int tty);

#endif /* CLI_TOP_H */
