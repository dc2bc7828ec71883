// SPDX-License-Identifier: MIT
/*
 * VM test (fault_inject=1): a control command that times out while the
 * firmware still reads its buffer.
 *
 * The firmware is made to pause the next LOAD_MODEL after it mapped the
 * blob and before it reads it (inject_fault "pause_load"), until a reset
 * begins.  MODEL_LOAD then times out (-ETIMEDOUT), which resets the
 * device, and only then does the firmware read the blob.  The driver must
 * keep the blob and its DMA window until the firmware is past the command:
 * the late read must find the blob intact (the firmware's log shows the
 * blob passing its check, the reset then dropping the load; on the debug
 * kernel KASAN sees no use after free), and the dropped load must not keep
 * the device from loading: another file loads and decodes exactly as
 * firmware-sim does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wt_dev.h"
#include "wt_util.h"

#define TOKENS	8
#define FW_LOG	"/sys/kernel/debug/accel/wafer.0/fw_log"

/* Whether the firmware's log has @first and, after it, @then. */
static int log_has_after(const char *first, const char *then)
{
	char line[512];
	int seen = 0, found = 0;
	FILE *f = fopen(FW_LOG, "r");

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		if (strstr(line, first))
			seen = 1;
		else if (seen && strstr(line, then))
			found = 1;
	}
	fclose(f);
	return found;
}

int main(void)
{
	uint32_t expect[TOKENS];
	struct wt_dev_model m;
	double t0, t1;
	int fd, ret, i;

	if (wt_decode_reference(TOKENS, expect)) {
		printf("not ok - setup: the reference decode\n");
		return 1;
	}
	fd = wt_dev_open(0);
	if (!wt_ok(fd >= 0, "open (%d)", fd))
		return wt_done();

	ret = wt_inject_fault(0, "pause_load");
	wt_ok(!ret, "the next LOAD_MODEL will pause until a reset (%d)", ret);
	t0 = wt_now();
	ret = wt_dev_load_model(fd, 8, 1, 64, &m);
	t1 = wt_now();
	wt_ok(ret == -ETIMEDOUT, "MODEL_LOAD of the paused load: -ETIMEDOUT (%d) after %.1f s",
	      ret, t1 - t0);
	free(m.blob);

	/* The reset that the timeout caused lets the firmware go on. */
	for (i = 0; i < 600 && !log_has_after("load goes on", "dropped by the reset"); i++)
		usleep(100000);
	wt_ok(log_has_after("load goes on", "dropped by the reset") &&
	      !log_has_after("load goes on", "rejected"),
	      "once the reset began the firmware read the blob, found it intact, and the reset dropped the load (%.1f s)",
	      wt_now() - t1);

	ret = wt_decode_fresh(TOKENS, expect);
	wt_ok(!ret, "a fresh file loads the model and decodes exactly (%d)", ret);
	close(fd);
	return wt_done();
}
