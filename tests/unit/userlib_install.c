// SPDX-License-Identifier: MIT
/*
 * `make install` into a scratch prefix: the CLI runs from there, and the
 * systemd unit wafer-serve.service names it, passes `systemd-analyze
 * verify` without a word, and its hardening keeps `systemd-analyze
 * security` at an exposure below 5 ("OK" or better).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wt_util.h"

/* Runs @cmd; its output (stdout and stderr) in @out. Returns the exit status. */
static int sh(const char *cmd, char *out, size_t n)
{
	size_t got = 0, r;
	FILE *p = popen(cmd, "r");
	int st;

	if (!p)
		return -1;
	while (got + 1 < n && (r = fread(out + got, 1, n - 1 - got, p)) > 0)
		got += r;
	out[got] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int main(void)
{
	static char out[65536], cmd[2048], unit[1024], want[1024];
	char dir[] = "/tmp/wafer-install.XXXXXX";
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";
	const char *level;
	double exposure;

	if (!wt_ok(mkdtemp(dir) != NULL, "a scratch prefix"))
		return wt_done();
	snprintf(cmd, sizeof(cmd), "env -u MAKEFLAGS -u MAKELEVEL make -s --no-print-directory "
		 "install BUILD=%s PREFIX=%s/usr UDEVRULESDIR=%s/udev SYSTEMDUNITDIR=%s/systemd "
		 "2>&1", build, dir, dir, dir);
	if (!wt_ok(sh(cmd, out, sizeof(out)) == 0, "make install into %s", dir))
		wt_diag("%s", out);
	snprintf(cmd, sizeof(cmd), "%s/usr/bin/wafer serve --help 2>&1", dir);
	wt_ok(sh(cmd, out, sizeof(out)) == 0 && strstr(out, "usage: wafer serve"),
	      "the installed CLI runs: wafer serve --help");
	snprintf(unit, sizeof(unit), "%s/systemd/wafer-serve.service", dir);
	snprintf(cmd, sizeof(cmd), "cat %s 2>&1", unit);
	snprintf(want, sizeof(want), "ExecStart=%s/usr/bin/wafer serve ", dir);
	wt_ok(sh(cmd, out, sizeof(out)) == 0 && strstr(out, want) && strstr(out, "User=wafer") &&
	      strstr(out, "ProtectSystem=strict") && strstr(out, "NoNewPrivileges=yes"),
	      "the unit is installed and runs the installed CLI as user wafer, hardened");
	snprintf(cmd, sizeof(cmd), "systemd-analyze verify %s 2>&1", unit);
	if (!wt_ok(sh(cmd, out, sizeof(out)) == 0 && !out[0],
		   "systemd-analyze verify: no error, no warning"))
		wt_diag("%s", out);
	snprintf(cmd, sizeof(cmd), "systemd-analyze security --offline=yes %s 2>&1", unit);
	sh(cmd, out, sizeof(out));
	level = strstr(out, "Overall exposure level for wafer-serve.service: ");
	exposure = level ? atof(level + strlen("Overall exposure level for wafer-serve.service: ")) :
		99;
	wt_ok(exposure < 5.0, "systemd-analyze security: exposure %.1f (below 5: OK)", exposure);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	system(cmd);
	return wt_done();
}
