// SPDX-License-Identifier: MIT
/*
 * VM test helper for the load/unload loop (tests/vm/cases/lifetime.sh): one
 * client of a freshly loaded wafer.ko.
 *
 *   lifetime_client run   open the device, load the shared model, run a
 *                         short decode and check it against firmware-sim;
 *   lifetime_client hold  the same, then, with the file still open, try to
 *                         remove the module (delete_module and rmmod): both
 *                         must refuse, and the device must still decode.
 *
 * Exits 0 iff every check passed; the caller's rmmod must then succeed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wt_dev.h"
#include "wt_model.h"
#include "wt_util.h"

#define TOPK	4
#define STEPS	3

/* Decodes STEPS tokens greedily from token 1; 0 iff all match @ref. */
static int decode_check(int fd, const struct wt_dev_model *m, const void *blob, size_t len)
{
	struct wfs_topk_entry topk[TOPK];
	struct wt_model ref;
	struct wt_bo in, out;
	uint32_t tok = 1, pos;
	int ret;

	ret = wt_bo_new(fd, &in, 4096);
	if (!ret)
		ret = wt_bo_new(fd, &out, 4096);
	if (ret)
		return ret;
	if (wt_model_open(&ref, blob, len, 16, 0))
		return -EINVAL;
	for (pos = 0; pos < STEPS && !ret; pos++) {
		struct drm_wafer_submit sub = { 0 };
		const struct drm_wafer_token_result *r;
		uint32_t expect = wt_model_step(&ref, tok, pos, TOPK, topk);

		((uint32_t *)in.map)[pos] = tok;
		sub.job = (struct drm_wafer_job){ .ctx_id = m->ctx_id, .start_pos = pos,
			.n_tokens = 1, .top_k = TOPK, .in_handle = in.handle,
			.in_offset = pos * 4, .out_handle = out.handle,
			.out_offset = pos * DRM_WAFER_RESULT_SIZE(TOPK) };
		ret = wt_ioctl(fd, DRM_IOCTL_WAFER_SUBMIT, &sub);
		if (!ret)
			ret = wt_wait_job(fd, sub.seqno, NULL);
		if (ret)
			break;
		r = wt_result(&out, 0, TOPK, pos);
		if (!wt_result_matches(r, pos, expect, topk, TOPK))
			ret = -EBADMSG;
		if (ret)
			wt_diag("pos %u: argmax %u vs %u", pos, r->argmax, expect);
		tok = expect;
	}
	wt_model_close(&ref);
	return ret;
}

/* Runs "rmmod wafer"; returns its exit status, its output in @buf. */
static int run_rmmod(char *buf, size_t len)
{
	FILE *p = popen("rmmod wafer 2>&1", "r");
	size_t n;
	int st;

	if (!p)
		return -1;
	n = fread(buf, 1, len - 1, p);
	buf[n] = 0;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int main(int argc, char **argv)
{
	int hold = argc > 1 && !strcmp(argv[1], "hold");
	struct wt_dev_model m;
	char out[512];
	int fd, ret, st;

	if (argc < 2 || (!hold && strcmp(argv[1], "run"))) {
		fprintf(stderr, "usage: lifetime_client run|hold\n");
		return 2;
	}
	fd = wt_dev_open(0);
	ret = fd < 0 ? fd : wt_dev_load_model(fd, 8, 1, 16, &m);
	if (!wt_ok(!ret, "open and load the model (%d)", ret))
		return wt_done();
	ret = decode_check(fd, &m, m.blob, m.blob_len);
	wt_ok(!ret, "%d decode steps match firmware-sim (%d)", STEPS, ret);
	if (hold) {
		/* The kernel says EWOULDBLOCK for a module still referenced. */
		ret = syscall(SYS_delete_module, "wafer", O_NONBLOCK) ? -errno : 0;
		wt_ok(ret == -EWOULDBLOCK || ret == -EBUSY,
		      "delete_module refuses while the file is open (%d)", ret);
		st = run_rmmod(out, sizeof(out));
		wt_ok(st != 0 && strstr(out, "in use"),
		      "rmmod refuses while the file is open (status %d: %s)", st,
		      strtok(out, "\n") ? out : "");
		/* A fresh model on the same file: the device must be intact. */
		ret = wt_ioctl(fd, DRM_IOCTL_WAFER_CTX_DESTROY,
			       &(struct drm_wafer_ctx_destroy){ .ctx_id = m.ctx_id });
		if (!ret)
			ret = wt_ioctl(fd, DRM_IOCTL_WAFER_MODEL_UNLOAD,
				       &(struct drm_wafer_model_unload){ .model_id = m.model_id });
		free(m.blob);
		if (!ret)
			ret = wt_dev_load_model(fd, 8, 1, 16, &m);
		if (!ret)
			ret = decode_check(fd, &m, m.blob, m.blob_len);
		wt_ok(!ret, "after the refused unloads the device reloads and decodes (%d)", ret);
	}
	free(m.blob);
	close(fd);
	return wt_done();
}
