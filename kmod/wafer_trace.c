// SPDX-License-Identifier: GPL-2.0-only
/* wafer tracepoints: instantiated here, declared in wafer_trace.h. */
#define CREATE_TRACE_POINTS
#include "wafer_trace.h"
