// SPDX-License-Identifier: GPL-2.0-only
/* wafer tracepoints: instantiated here, declared in wdrv_trace.h. */
#define CREATE_TRACE_POINTS
#include "wdrv_trace.h"
