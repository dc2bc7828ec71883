# SPDX-License-Identifier: MIT
# firmware-sim source lists, shared by Kbuild (wafer.ko) and the top-level
# Makefile (build/lib/libwfsim.a).  Paths are relative to firmware-sim/.
#
# WFS_COMMON_SRCS: freestanding device code, compiled into both builds.
# WFS_KERNEL_SRCS: kernel-only glue (kthreads, locks, memory).
# WFS_USER_SRCS:   userspace-only glue (pthreads, malloc).
WFS_COMMON_SRCS :=
WFS_KERNEL_SRCS :=
WFS_USER_SRCS :=
