// SPDX-License-Identifier: MIT
/*
 * The model packer, firmware-sim/tools/wfs_pack.c, compiled into libwafer
 * as it is (the converter behind wafer_convert() uses it): libwafer.a and
 * libwafer.so must be self-contained, and the packer is host code with no
 * other home in the library build.  Programs that also link wfs_pack.o
 * directly (the test programs) never pull this member out of libwafer.a,
 * since it defines nothing else.
 */
#include "wfs_pack.c"
