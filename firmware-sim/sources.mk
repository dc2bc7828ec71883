# SPDX-License-Identifier: MIT
# firmware-sim source lists and include paths, shared by Kbuild (wafer.ko)
# and the top-level Makefile (build/lib/libwfsim.a).  Paths are relative to
# firmware-sim/.
#
# Layers, lowest first (README.md): a layer's files see only their own
# folder and the layers before it (WFS_INC_<layer>), so an #include of a
# higher layer's header does not compile; tests/lint/layers checks the rest
# (no include or call circle, no reach across a layer).
#   abi      the firmware ABI and the device's interface to a driver
#   os       OS glue: the only build-specific code
#   model    blob format, profiles, timing, placement (shared with libwafer)
#   compute  the integer numerics: kernels, forward pass, MoE
#   device   the simulated device: command processor, rings, workers, SRAM
#   host     the host's half of the ABI, for the drivers of the device
WFS_LAYERS := abi os model compute device host

WFS_abi_SRCS := abi/wfs_ring.c
WFS_model_SRCS := model/wfs_qfmt.c model/wfs_model.c model/wfs_profile.c \
	model/wfs_timing.c model/wfs_place.c model/wfs_part.c
WFS_compute_SRCS := compute/wfs_math.c compute/wfs_simd.c compute/wfs_simd_x86.c \
	compute/wfs_forward.c compute/wfs_moe.c compute/wfs_moe_ep.c
WFS_device_SRCS := device/wfs_log.c device/wfs_sram.c device/wfs_hw.c \
	device/wfs_sync.c device/wfs_cpl.c device/wfs_fifo.c device/wfs_mblock.c \
	device/wfs_room.c device/wfs_xplace.c device/wfs_moe_ep_part.c \
	device/wfs_load.c device/wfs_ctx.c device/wfs_job.c device/wfs_stage.c \
	device/wfs_workers.c device/wfs_info.c device/wfs_loadq.c device/wfs_cmd.c device/wfs_device.c

# WFS_COMMON_SRCS: freestanding device code, compiled into both builds.
# WFS_KERNEL_SRCS: kernel-only glue (kthreads, locks, memory).
# WFS_USER_SRCS:   userspace-only glue (pthreads, malloc).
WFS_COMMON_SRCS := $(WFS_abi_SRCS) $(WFS_model_SRCS) $(WFS_compute_SRCS) \
	$(WFS_device_SRCS)
# WFW_HOST_SRCS: the host's half of the firmware ABI, for the drivers of
# the device (wafer.ko, libwafer's in-process backend, the unit tests).
WFW_HOST_SRCS := host/wfw_host.c
WFS_KERNEL_SRCS := os/wfs_os_kernel.c
WFS_USER_SRCS := os/wfs_os_user.c
# WFS_PACK_SRCS: the host-side blob packer (userspace only, in libwafer).
WFS_PACK_SRCS := model/wfs_pack.c

# The folders each layer's files see: its own and those of the layers
# below.  libwafer sees the ABI, the host's half of it and the model layer
# (WFS_INC_LIBWAFER); wafer.ko's driver the same.
WFS_INC_abi := abi
WFS_INC_os := $(WFS_INC_abi) os
WFS_INC_model := $(WFS_INC_os) model
WFS_INC_compute := $(WFS_INC_model) compute
WFS_INC_device := $(WFS_INC_compute) device
WFS_INC_host := $(WFS_INC_device) host
WFS_INC_LIBWAFER := abi model host
