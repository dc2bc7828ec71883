// SPDX-License-Identifier: MIT
/*
 * device_header.c - wfs_model_check_header(), the firmware's header check a
 * driver runs on a blob's first bytes before copying it: it accepts every
 * header the firmware's full validator (wfs_model_parse()) accepts, so a
 * good blob is never refused early, and it refuses garbage, a header whose
 * total_size is not the blob's length and each one-bit flip of the header
 * the full validator refuses for a header field (not for the sections,
 * which it cannot see).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wfs_model.h"
#include "wt_tinyblob.h"
#include "wt_util.h"

static uint8_t blob[WT_TINY_MAX];
static uint8_t work[WT_TINY_MAX];

static int check(const uint8_t *b, size_t len)
{
	struct wfs_blob_header h;

	memcpy(&h, b, sizeof(h));
	return wfs_model_check_header(&h, len, NULL);
}

int main(void)
{
	struct wfs_model_info info;
	size_t len = wt_tiny_build(blob, WT_TINY_INT8);
	unsigned int bit, early = 0, missed = 0, both = 0;
	const char *why = NULL;
	struct wfs_blob_header h;
	int p, c;

	wt_ok(len > sizeof(h) && wfs_model_parse(blob, len, &info) == 0 && check(blob, len) == 0,
	      "a valid blob's header passes (%zu bytes)", len);
	memcpy(&h, blob, sizeof(h));
	wt_ok(wfs_model_check_header(&h, len - 8, &why) != 0 &&
	      wfs_model_check_header(&h, len + 8, NULL) != 0,
	      "total_size other than the blob's length refused");
	wt_ok(wfs_model_check_header(&h, sizeof(h) - 1, NULL) != 0,
	      "a length shorter than the header refused");
	memset(work, 0xa5, sizeof(work));
	wt_ok(check(work, len) != 0, "a garbage header refused");

	/* Every one-bit flip of the header against the full validator. */
	for (bit = 0; bit < 8 * sizeof(h); bit++) {
		memcpy(work, blob, len);
		work[bit / 8] ^= 1u << (bit % 8);
		p = wfs_model_parse(work, len, &info);
		c = check(work, len);
		if (c && !p)
			early++;	/* refused a header the firmware takes */
		both += c && p;
		missed += !c && p;
	}
	wt_ok(!early, "no flip the full validator accepts is refused early (%u of %zu)",
	      early, 8 * sizeof(h));
	wt_ok(both > 8 * sizeof(h) / 2,
	      "%u of the %u flips the full validator refuses are refused from the header alone (%u left to the sections)",
	      both, both + missed, missed);
	return wt_done();
}
