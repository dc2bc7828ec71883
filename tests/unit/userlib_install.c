// SPDX-License-Identifier: MIT
/*
 * `make install` into a scratch prefix: the CLI runs from there, and the
 * systemd units wafer-serve.service and wafer-node.service name it, pass `systemd-analyze
 * verify` without a word, and their hardening keeps `systemd-analyze
 * security` at an exposure below 5 ("OK" or better).  The installed
 * libwafer.so exports exactly the functions wafer.h and wafer_link.h declare (none of its
 * internals or firmware-sim's), and a program built against the prefix
 * with `pkg-config wafer` runs on it and prints what the same program
 * linked with the static libraries prints (tests/unit/install/so_client.c).
 * The unit's account comes with it: its sysusers.d entry makes user and
 * group wafer (systemd-sysusers --dry-run), /etc/default/wafer-serve (and
 * wafer-node) is
 * installed, names only the unit's settings, and is kept when it exists;
 * the man pages render and the bash completion loads from the prefix.
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

/*
 * The functions wafer.h and wafer_link.h declare against the dynamic symbols @dir's
 * libwafer.so.0 defines (the version node, type A, aside): 1 if they are
 * the same names, else 0 with diff's output in @out.
 */
static int exports_match(const char *dir, char *out, size_t n)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd),
		 "cat userlib/wafer.h userlib/wafer_link.h | cc -E -P -Iuserlib - | grep -oE '\\bwafer_[a-z0-9_]+ *\\(' | "
		 "sed 's/ *($//' | sort -u >%s/declared && "
		 "nm -D --defined-only %s/usr/lib/libwafer.so.0 | "
		 "awk '$2 != \"A\" { sub(/@.*/, \"\", $3); print $3 }' | sort -u >%s/exported && "
		 "diff %s/declared %s/exported 2>&1", dir, dir, dir, dir, dir);
	return sh(cmd, out, n) == 0;
}

/* so_client built against @dir's prefix and run: its output in @out; 1 if it worked. */
static int client_shared(const char *dir, const char *model, const char *tok, char *out,
			 size_t n)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd),
		 "PKG_CONFIG_PATH=%s/usr/lib/pkgconfig; export PKG_CONFIG_PATH; "
		 "cc -std=c11 -Wall -Wextra -Werror -o %s/so_client tests/unit/install/so_client.c "
		 "$(pkg-config --cflags --libs wafer) 2>&1 && "
		 "LD_LIBRARY_PATH=%s/usr/lib %s/so_client %s %s 2>&1", dir, dir, dir, dir, model, tok);
	return sh(cmd, out, n) == 0;
}

/* The same program linked with the build's static libraries. */
static int client_static(const char *dir, const char *build, const char *model, const char *tok,
			 char *out, size_t n)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd),
		 "cc -std=c11 -Wall -Wextra -Werror -Iuserlib -o %s/so_client_static "
		 "tests/unit/install/so_client.c %s/lib/libwafer.a %s/lib/libwfsim.a "
		 "$(pkg-config --libs libdrm liburing numa json-c) -lpthread -lm 2>&1 && "
		 "%s/so_client_static %s %s 2>&1", dir, build, build, dir, model, tok);
	return sh(cmd, out, n) == 0;
}

static char out[65536], out2[65536], cmd[2048];

/* make install into a scratch prefix; the installed CLI runs. */
static void test_install_runs(const char *dir, const char *build)
{
	snprintf(cmd, sizeof(cmd), "env -u MAKEFLAGS -u MAKELEVEL make -s --no-print-directory "
		 "install BUILD=%s PREFIX=%s/usr UDEVRULESDIR=%s/udev SYSTEMDUNITDIR=%s/systemd "
		 "SYSUSERSDIR=%s/sysusers SYSCONFDIR=%s/etc 2>&1", build, dir, dir, dir, dir, dir);
	if (!wt_ok(sh(cmd, out, sizeof(out)) == 0, "make install into %s", dir))
		wt_diag("%s", out);
	snprintf(cmd, sizeof(cmd), "%s/usr/bin/wafer serve --help 2>&1", dir);
	wt_ok(sh(cmd, out, sizeof(out)) == 0 && strstr(out, "usage: wafer serve"),
	      "the installed CLI runs: wafer serve --help");
}

/*
 * A systemd unit (wafer-@name.service) runs the installed CLI's `wafer
 * @name`, hardened, and systemd finds no fault in it.
 */
static void test_service_unit(const char *dir, const char *name)
{
	static char unit[1024], want[1024], what[128];
	const char *level;
	double exposure;

	snprintf(unit, sizeof(unit), "%s/systemd/wafer-%s.service", dir, name);
	snprintf(cmd, sizeof(cmd), "cat %s 2>&1", unit);
	snprintf(want, sizeof(want), "ExecStart=%s/usr/bin/wafer %s ", dir, name);
	wt_ok(sh(cmd, out, sizeof(out)) == 0 && strstr(out, want) && strstr(out, "User=wafer") &&
	      strstr(out, "ProtectSystem=strict") && strstr(out, "NoNewPrivileges=yes"),
	      "wafer-%s.service is installed and runs the installed CLI as user wafer, hardened",
	      name);
	snprintf(cmd, sizeof(cmd), "systemd-analyze verify %s 2>&1", unit);
	if (!wt_ok(sh(cmd, out, sizeof(out)) == 0 && !out[0],
		   "systemd-analyze verify wafer-%s.service: no error, no warning", name))
		wt_diag("%s", out);
	snprintf(cmd, sizeof(cmd), "systemd-analyze security --offline=yes %s 2>&1", unit);
	sh(cmd, out, sizeof(out));
	snprintf(what, sizeof(what), "Overall exposure level for wafer-%s.service: ", name);
	level = strstr(out, what);
	exposure = level ? atof(level + strlen(what)) : 99;
	wt_ok(exposure < 5.0, "systemd-analyze security wafer-%s.service: exposure %.1f "
	      "(below 5: OK)", name, exposure);
}

/* The unit's account, its settings file, the man pages and the completion. */
static void test_service_extras(const char *dir, const char *build)
{
	static const char *const pages[] = { "wafer", "wafer-list", "wafer-info", "wafer-run",
					     "wafer-bench", "wafer-top", "wafer-plan",
					     "wafer-serve", "wafer-convert", "wafer-node" };
	unsigned int i, ok = 1;
	char var[64];
	const char *p;

	snprintf(cmd, sizeof(cmd), "mkdir -p %s/root/etc && systemd-sysusers --root=%s/root "
		 "--dry-run %s/sysusers/wafer.conf 2>&1", dir, dir, dir);
	wt_ok(sh(cmd, out, sizeof(out)) == 0 && strstr(out, "Creating group 'wafer'") &&
	      strstr(out, "Creating user 'wafer'"),
	      "sysusers.d/wafer.conf makes group and user wafer (systemd-sysusers --dry-run)");
	snprintf(cmd, sizeof(cmd), "cat %s/etc/default/wafer-serve 2>&1", dir);
	wt_ok(sh(cmd, out, sizeof(out)) == 0 && strstr(out, "WAFER_MODEL="),
	      "/etc/default/wafer-serve is installed");
	snprintf(cmd, sizeof(cmd), "cat %s/systemd/wafer-serve.service", dir);
	sh(cmd, out2, sizeof(out2));
	for (p = strstr(out, "WAFER_"); p; p = strstr(p + 1, "WAFER_")) {
		snprintf(var, sizeof(var), "Environment=%.*s=", (int)strcspn(p, "="), p);
		if (!strstr(out2, var)) {
			wt_diag("%s is not a setting of the unit", var + 12);
			ok = 0;
		}
	}
	wt_ok(ok && strstr(out2, "EnvironmentFile=-/etc/default/wafer-serve"),
	      "the unit reads /etc/default/wafer-serve, which names only the unit's settings");
	snprintf(cmd, sizeof(cmd), "cat %s/etc/default/wafer-node 2>&1", dir);
	wt_ok(sh(cmd, out, sizeof(out)) == 0 && strstr(out, "WAFER_NODE_DEVICES="),
	      "/etc/default/wafer-node is installed");
	snprintf(cmd, sizeof(cmd), "cat %s/systemd/wafer-node.service", dir);
	sh(cmd, out2, sizeof(out2));
	for (ok = 1, p = strstr(out, "WAFER_"); p; p = strstr(p + 1, "WAFER_")) {
		snprintf(var, sizeof(var), "Environment=%.*s=", (int)strcspn(p, "="), p);
		if (!strstr(out2, var)) {
			wt_diag("%s is not a setting of wafer-node.service", var + 12);
			ok = 0;
		}
	}
	wt_ok(ok && strstr(out2, "EnvironmentFile=-/etc/default/wafer-node"),
	      "wafer-node.service reads /etc/default/wafer-node, which names only its settings");
	/* an admin's settings survive a second make install */
	snprintf(cmd, sizeof(cmd), "echo WAFER_PORT=9 >%s/etc/default/wafer-serve && "
		 "env -u MAKEFLAGS -u MAKELEVEL make -s --no-print-directory install BUILD=%s "
		 "PREFIX=%s/usr UDEVRULESDIR=%s/udev SYSTEMDUNITDIR=%s/systemd "
		 "SYSUSERSDIR=%s/sysusers SYSCONFDIR=%s/etc >/dev/null 2>&1 && "
		 "cat %s/etc/default/wafer-serve", dir, build, dir, dir, dir, dir, dir, dir);
	wt_ok(sh(cmd, out, sizeof(out)) == 0 && !strcmp(out, "WAFER_PORT=9\n"),
	      "make install keeps an existing /etc/default/wafer-serve");
	for (i = 0, ok = 1; i < sizeof(pages) / sizeof(pages[0]); i++) {
		snprintf(cmd, sizeof(cmd), "MANWIDTH=80 man -l %s/usr/share/man/man1/%s.1 "
			 "2>/dev/null | grep -A1 '^NAME' | grep -q '%s - '", dir, pages[i],
			 pages[i]);
		if (sh(cmd, out, sizeof(out))) {
			wt_diag("man page %s.1 missing or without its NAME", pages[i]);
			ok = 0;
		}
	}
	wt_ok(ok, "the 9 man pages are installed and render with their NAME");
	snprintf(cmd, sizeof(cmd), "bash -c 'source %s/usr/share/bash-completion/completions/"
		 "wafer && complete -p wafer' 2>&1", dir);
	wt_ok(sh(cmd, out, sizeof(out)) == 0 && strstr(out, "-F _wafer wafer"),
	      "the installed bash completion loads: %.60s", out);
}

/* libwafer.so.0 exports exactly the functions of its public headers. */
static void test_exports(const char *dir)
{
	if (!wt_ok(exports_match(dir, out, sizeof(out)),
		   "libwafer.so.0 exports exactly the functions wafer.h and wafer_link.h declare"))
		wt_diag("< declared only, > exported only:\n%s", out);
}

/* A client built against the prefix runs, shared and static, with the same output. */
static void test_clients(const char *dir, const char *build)
{
	char *model, *tok;

	/* wt_model_path() returns a static buffer. */
	model = wt_model_path("stories260K.bin") ? strdup(wt_model_path("stories260K.bin")) : NULL;
	tok = wt_model_path("tok512.bin") ? strdup(wt_model_path("tok512.bin")) : NULL;
	if (wt_ok(model && tok, "the shared model and tokenizer")) {
		if (!wt_ok(client_shared(dir, model, tok, out, sizeof(out)),
			   "a program built with pkg-config wafer against the prefix runs on "
			   "libwafer.so"))
			wt_diag("%s", out);
		if (!wt_ok(client_static(dir, build, model, tok, out2, sizeof(out2)),
			   "the same program linked with libwafer.a runs"))
			wt_diag("%s", out2);
		wt_ok(out[0] && !strcmp(out, out2),
		      "both print the same greedy continuation (%zu bytes)", strlen(out));
	}
	free(model);
	free(tok);
}

int main(void)
{
	char dir[] = "/tmp/wafer-install.XXXXXX";
	const char *build = getenv("BUILD") ? getenv("BUILD") : "build";

	if (!wt_ok(mkdtemp(dir) != NULL, "a scratch prefix"))
		return wt_done();
	test_install_runs(dir, build);
	test_service_unit(dir, "serve");
	test_service_unit(dir, "node");
	test_service_extras(dir, build);
	test_exports(dir);
	test_clients(dir, build);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	system(cmd);
	return wt_done();
}
