// SPDX-License-Identifier: MIT
/*
 * VM test (fault_inject=1, a short job_timeout_ms): device resets racing
 * control commands.
 *
 * While threads loop GET_INFO on their own files, read the sysfs counters
 * that ask the firmware, and create and destroy contexts, the main thread
 * makes jobs hang (debugfs inject_fault) so that they outlive the timeout
 * and the device is reset, several times.  Control commands must neither
 * fail because a reset happened meanwhile (they are held off across it, or
 * sent again when they change nothing) nor leave state the driver does not
 * know about: afterwards GET_INFO counts exactly the contexts the driver
 * handed out, the model unloads, the device is empty, and another load
 * decodes exactly as firmware-sim does.
 *
 * Usage: reset_control_race [--rounds N]
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "wt_dev.h"
#include "wt_util.h"

#define TOPK	4
#define TOKENS	8	/* positions the final decode checks */

static const char *const sysfs_attrs[] = { "tokens", "modelled_makespan_ns",
	"bottleneck_busy_ns", "jobs_completed", "busy_ns" };

static volatile int stop;
static int main_fd;
static uint32_t main_model;

struct poller {
	pthread_t t;
	unsigned long ops, errors;
	int last_err;
};

static int get_info(int fd, struct drm_wafer_device_info *info)
{
	struct drm_wafer_get_info gi = { .info_ptr = (uintptr_t)info,
					 .info_size = sizeof(*info) };

	memset(info, 0, sizeof(*info));
	return wt_ioctl(fd, DRM_IOCTL_WAFER_GET_INFO, &gi);
}

static int read_sysfs(const char *attr)
{
	char path[128], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/class/accel/accel0/device/%s", attr);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	return n > 0 ? 0 : n < 0 ? -errno : -ENODATA;
}

static void count(struct poller *p, int ret)
{
	p->ops++;
	if (ret) {
		p->errors++;
		p->last_err = ret;
	}
}

/* GET_INFO on a file of its own, and the sysfs counters, until stopped. */
static void *info_loop(void *arg)
{
	struct drm_wafer_device_info info;
	struct poller *p = arg;
	int fd = wt_dev_open(0);
	unsigned int i = 0;

	if (fd < 0) {
		count(p, fd);
		return NULL;
	}
	while (!stop) {
		count(p, get_info(fd, &info));
		count(p, read_sysfs(sysfs_attrs[i++ % 5]));
	}
	close(fd);
	return NULL;
}

/* Creates and destroys contexts on the main file's model until stopped. */
static void *ctx_loop(void *arg)
{
	struct poller *p = arg;

	while (!stop) {
		struct drm_wafer_ctx_create cc = { .model_id = main_model, .kv_slots = 1,
						   .ctx_len = 16 };
		struct drm_wafer_ctx_destroy cd = { 0 };
		int ret = wt_ioctl(main_fd, DRM_IOCTL_WAFER_CTX_CREATE, &cc);

		count(p, ret);
		if (ret)
			continue;
		cd.ctx_id = cc.ctx_id;
		count(p, wt_ioctl(main_fd, DRM_IOCTL_WAFER_CTX_DESTROY, &cd));
	}
	return NULL;
}

static int run_one(int fd, const struct wt_dev_model *m, const struct wt_bo *in,
		   const struct wt_bo *out, uint32_t n, uint32_t flags)
{
	struct drm_wafer_submit sub = { .job = {
		.ctx_id = m->ctx_id, .n_tokens = n, .top_k = TOPK, .flags = flags,
		.in_handle = in->handle, .out_handle = out->handle } };
	int ret = wt_ioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &sub);

	return ret ? ret : wt_wait_job(fd, sub.seqno, NULL);
}

int main(int argc, char **argv)
{
	struct drm_wafer_device_info base, now;
	struct poller p[3] = { 0 };
	struct drm_wafer_model_unload mu = { 0 };
	struct drm_wafer_ctx_destroy cd = { 0 };
	unsigned int rounds = 4, r, i;
	uint32_t expect[TOKENS];
	struct wt_dev_model m;
	struct wt_bo in, out;
	int ret;

	for (i = 1; i < (unsigned int)argc; i++)
		if (!strcmp(argv[i], "--rounds") && i + 1 < (unsigned int)argc)
			rounds = (unsigned int)strtoul(argv[++i], NULL, 0);
	main_fd = wt_dev_open(0);
	if (wt_decode_reference(TOKENS, expect) || main_fd < 0 || get_info(main_fd, &base) ||
	    wt_dev_load_model(main_fd, 8, 1, 16, &m) || wt_bo_new(main_fd, &in, 4096) ||
	    wt_bo_new(main_fd, &out, 4096)) {
		printf("not ok - setup\n");
		return 1;
	}
	main_model = m.model_id;
	((uint32_t *)in.map)[0] = 1;
	for (i = 0; i < 3; i++)
		pthread_create(&p[i].t, NULL, i < 2 ? info_loop : ctx_loop, &p[i]);

	for (r = 0; r < rounds; r++) {
		ret = wt_inject_fault(0, "hang");
		if (!wt_ok(!ret, "round %u: inject hang (%d)", r, ret))
			break;
		ret = run_one(main_fd, &m, &in, &out, 1, 0);
		wt_ok(ret == -ETIMEDOUT, "round %u: the hung job times out (%d)", r, ret);
		ret = run_one(main_fd, &m, &in, &out, 1, 0);
		wt_ok(!ret && wt_result(&out, 0, TOPK, 0)->argmax == expect[0],
		      "round %u: the next job is correct (%d)", r, ret);
	}
	stop = 1;
	for (i = 0; i < 3; i++)
		pthread_join(p[i].t, NULL);
	wt_ok(!p[0].errors && !p[1].errors && p[0].ops && p[1].ops,
	      "GET_INFO and sysfs reads never failed across resets (%lu/%lu errors of "
	      "%lu/%lu, last %d/%d)", p[0].errors, p[1].errors, p[0].ops, p[1].ops,
	      p[0].last_err, p[1].last_err);
	wt_diag("context create/destroy: %lu calls, %lu failed (last %d)", p[2].ops,
		p[2].errors, p[2].last_err);

	/*
	 * CTX_DESTROY hands the firmware's DESTROY_CONTEXT to the device's
	 * ordered work queue, which a thread looping create/destroy can outrun
	 * (seen on the debug kernel): let the queued destroys drain first.
	 */
	for (i = 0; i < 600; i++) {
		ret = get_info(main_fd, &now);
		if (ret || now.contexts <= 1)
			break;
		usleep(10000);
	}
	wt_ok(!ret && now.models_loaded == 1 && now.contexts == 1,
	      "the firmware holds the model and exactly the one live context (%d: %u, %u; "
	      "%u polls)", ret, now.models_loaded, now.contexts, i);
	cd.ctx_id = m.ctx_id;
	mu.model_id = m.model_id;
	ret = wt_ioctl(main_fd, DRM_IOCTL_WAFER_CTX_DESTROY, &cd);
	if (!ret)
		ret = wt_ioctl(main_fd, DRM_IOCTL_WAFER_MODEL_UNLOAD, &mu);
	wt_ok(!ret, "the model unloads (%d)", ret);
	ret = get_info(main_fd, &now);
	wt_ok(!ret && !now.models_loaded && !now.contexts &&
	      now.sram_bytes_free == base.sram_bytes_free,
	      "the device is empty again (%d: %u models, %u contexts, SRAM free %llu of %llu)",
	      ret, now.models_loaded, now.contexts, (unsigned long long)now.sram_bytes_free,
	      (unsigned long long)base.sram_bytes_free);
	ret = wt_decode_fresh(TOKENS, expect);
	wt_ok(!ret, "another file loads the model and decodes %u positions exactly (%d)",
	      TOKENS, ret);
	munmap(in.map, in.size);
	munmap(out.map, out.size);
	free(m.blob);
	close(main_fd);
	return wt_done();
}
