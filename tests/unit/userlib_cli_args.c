// SPDX-License-Identifier: MIT
/*
 * The wafer CLI's number and list arguments: a value with trailing junk
 * (8x), a fraction or an exponent where an integer is wanted (8.5, 1e3), a
 * sign, a device range running backwards (2-0), and a --chain that is
 * not HOST[:PORT]:DEVICES,... (or a JSON file that does not read) are refused with exit
 * status 2 and a message naming the flag and the value, in wafer run,
 * serve, bench and plan; the same flags with a valid value parse (checked
 * by following them with --help, which exits 0 once the options before it
 * were read).  Nothing here opens a device or a model.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "wt_util.h"

static const char *build;

/**
 * struct bad_arg - an argument the CLI must refuse
 * @cmd: subcommand
 * @flag: the flag, as the message names it
 * @good: a valid value
 * @bad: the value refused
 */
struct bad_arg {
	const char *cmd;
	const char *flag;
	const char *good;
	const char *bad;
};

static const struct bad_arg args[] = {
	{ "run", "-n", "8", "8x" },
	{ "run", "-n", "8", "8.5" },
	{ "run", "-n", "8", "1e1" },
	{ "run", "-n", "8", "-8" },
	{ "run", "-s", "42", "42x" },
	{ "run", "-s", "42", "1e3" },
	{ "run", "-t", "0.8", "0.8x" },
	{ "run", "-p", "0.9", "0.9x" },
	{ "run", "--stages", "4", "4x" },
	{ "run", "--draft-tokens", "4", "4x" },
	{ "run", "-d", "0-2", "2-0" },
	{ "run", "-d", "0-2", "0-2x" },
	{ "serve", "--max-tokens", "64", "64x" },
	{ "serve", "--max-tokens", "64", "6 4" },
	{ "serve", "--port", "8080", "8080x" },
	{ "serve", "--slots", "4", "4x" },
	{ "serve", "--slots", "4", "-4" },
	{ "serve", "-d", "0-2", "2-0" },
	{ "serve", "-d", "0,1", "0,,1" },
	{ "bench", "--tokens", "8", "8x" },
	{ "bench", "--jobs", "16", "16x" },
	{ "bench", "--devices", "2", "2x" },
	{ "bench", "-d", "0", "0x" },
	{ "run", "--chain", "10.9.0.1:7471:0,10.9.0.1:7472:1", "10.9.0.1:0," },
	{ "serve", "--chain", "10.9.0.1:7471:0-1", "10.9.0.1:7471:1-0" },
	{ "serve", "--chain", "h:0+2", "h" },
	{ "bench", "--chain", "h:7471:0,h:7472:1", "h:0:1" },
	{ "bench", "--chain", "h:0", "/nonexistent/chain.json" },
	{ "plan", "--devices", "4", "4x" },
	{ "plan", "--batch", "4", "4x" },
};

#define ERR_MAX	8192

/* Runs wafer @cmd @flag @val [--help]: its exit status; stderr into @err (ERR_MAX). */
static int wafer(const char *cmd, const char *flag, const char *val, int help, char *err)
{
	char line[1024], out[ERR_MAX];
	int st;

	snprintf(line, sizeof(line), "%s/bin/wafer %s %s '%s'%s", build, cmd, flag, val,
		 help ? " --help" : "");
	st = wt_capture_err(line, out, err, ERR_MAX);
	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int main(void)
{
	char err[ERR_MAX], want[256];
	unsigned int i;

	build = getenv("BUILD") ? getenv("BUILD") : "build";
	for (i = 0; i < sizeof(args) / sizeof(args[0]); i++) {
		const struct bad_arg *a = &args[i];
		int st = wafer(a->cmd, a->flag, a->good, 1, err);

		wt_ok(st == 0, "wafer %s %s %s parses (--help after it exits %d)", a->cmd, a->flag,
		      a->good, st);
		st = wafer(a->cmd, a->flag, a->bad, 1, err);
		snprintf(want, sizeof(want), "bad value '%s' for %s", a->bad, a->flag);
		wt_ok(st == 2 && strstr(err, want),
		      "wafer %s %s '%s' is refused: exit %d, \"%s\" in the message", a->cmd, a->flag,
		      a->bad, st, want);
		if (!strstr(err, want))
			wt_diag("stderr: %.200s", err);
	}
	return wt_done();
}
