// SPDX-License-Identifier: MIT
/* The CLI's clock: host time of run, bench and top figures. */
#include <time.h>

#include "cli.h"

uint64_t cli_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
