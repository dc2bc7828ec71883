# SPDX-License-Identifier: MIT
# firmware-sim source lists, shared by Kbuild (wafer.ko) and the top-level
# Makefile (build/lib/libwfsim.a).  Paths are relative to firmware-sim/.
#
# WFS_COMMON_SRCS: freestanding device code, compiled into both builds.
# WFS_KERNEL_SRCS: kernel-only glue (kthreads, locks, memory).
# WFS_USER_SRCS:   userspace-only glue (pthreads, malloc).
WFS_COMMON_SRCS := wfs_math.c wfs_simd.c wfs_simd_x86.c wfs_model.c wfs_moe.c \
	wfs_moe_ep.c wfs_moe_ep_part.c \
	wfs_forward.c wfs_part.c wfs_xplace.c
WFS_COMMON_SRCS += wfs_ring.c wfs_sram.c wfs_profile.c wfs_timing.c \
	wfs_log.c wfs_place.c wfs_hw.c wfs_sync.c wfs_cpl.c \
	wfs_fifo.c wfs_load.c wfs_ctx.c wfs_job.c wfs_stage.c wfs_workers.c \
	wfs_info.c wfs_cmd.c wfs_device.c
# WFW_HOST_SRCS: the host's half of the firmware ABI, for the drivers of
# the device (wafer.ko, libwafer's in-process backend, the unit tests).
WFW_HOST_SRCS := wfw_host.c
WFS_KERNEL_SRCS := wfs_os_kernel.c
WFS_USER_SRCS := wfs_os_user.c
