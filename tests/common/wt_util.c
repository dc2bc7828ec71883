// SPDX-License-Identifier: MIT
/* wt_util.c - see wt_util.h */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "wt_util.h"

static int wt_nfail, wt_npass;

int wt_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", cond ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (cond)
		wt_npass++;
	else
		wt_nfail++;
	return cond;
}

void wt_vdiag(const char *fmt, va_list ap)
{
	printf("# ");
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
}

void wt_diag(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	wt_vdiag(fmt, ap);
	va_end(ap);
}

int wt_failures(void)
{
	return wt_nfail;
}

int wt_done(void)
{
	printf("# %d passed, %d failed\n", wt_npass, wt_nfail);
	return wt_nfail ? 1 : 0;
}

void wt_rng_seed(struct wt_rng *r, uint64_t seed)
{
	r->s = seed;
}

uint64_t wt_rng_u64(struct wt_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int64_t wt_rng_range(struct wt_rng *r, int64_t lo, int64_t hi)
{
	uint64_t span = (uint64_t)(hi - lo) + 1;

	if (!span)
		return (int64_t)wt_rng_u64(r);
	return lo + (int64_t)(wt_rng_u64(r) % span);
}

double wt_rng_unit(struct wt_rng *r)
{
	return (double)(wt_rng_u64(r) >> 11) / 9007199254740992.0;
}

double wt_rng_gauss(struct wt_rng *r)
{
	double u = wt_rng_unit(r) + 1e-300, v = wt_rng_unit(r);

	return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

const char *wt_model_path(const char *name)
{
	static char buf[4096];
	const char *dir = getenv("WAFER_MODELS");

	snprintf(buf, sizeof(buf), "%s/%s",
		 dir && *dir ? dir : "../shared/models", name);
	if (access(buf, R_OK) == 0)
		return buf;
	return NULL;
}

int wt_capture(const char *cmd, char *out, size_t max)
{
	size_t n = 0, r;
	FILE *p = popen(cmd, "r");

	if (!p)
		return -1;
	while (n + 1 < max && (r = fread(out + n, 1, max - 1 - n, p)) > 0)
		n += r;
	out[n] = '\0';
	return pclose(p);
}

int wt_capture_err(const char *cmd, char *out, char *err, size_t max)
{
	char full[4096], path[] = "/tmp/wt_capture_XXXXXX";
	int fd = mkstemp(path), rc = -1;
	ssize_t n;

	if (fd < 0)
		return -1;
	if ((size_t)snprintf(full, sizeof(full), "%s 2>%s", cmd, path) < sizeof(full))
		rc = wt_capture(full, out, max);
	if (err) {
		n = read(fd, err, max - 1);
		err[n > 0 ? n : 0] = '\0';
	}
	close(fd);
	unlink(path);
	return rc;
}

double wt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double wt_cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void *wt_alloc(size_t n)
{
	void *p = NULL;

	if (posix_memalign(&p, 64, n ? n : 64))
		return NULL;
	memset(p, 0, n);
	return p;
}

int wt_sysfs_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

int wt_threads_named(const char *dir, const char *prefix)
{
	char path[512], comm[32];
	struct dirent *d;
	DIR *dp = opendir(dir);
	FILE *f;
	int n = 0;

	if (!dp)
		return -errno;
	while ((d = readdir(dp))) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "%s/%s/comm", dir, d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) &&
		    !strncmp(comm, prefix, strlen(prefix)))
			n++;
		fclose(f);
	}
	closedir(dp);
	return n;
}

unsigned int wt_free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	unsigned int p = 0;

	if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, l) &&
	    !getsockname(fd, (struct sockaddr *)&a, &l))
		p = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return p;
}
