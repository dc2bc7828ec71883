// SPDX-License-Identifier: MIT
/* wafer_versions(): the uAPI and firmware ABI libwafer was built against. */
#include "drm/wafer_accel.h"
#include "wafer.h"
#include "wfw_abi.h"

void wafer_versions(struct wafer_versions *v)
{
	v->uapi = DRM_WAFER_API_VERSION;
	v->fw_abi_major = WFW_ABI_MAJOR;
	v->fw_abi_minor = WFW_ABI_MINOR;
}
