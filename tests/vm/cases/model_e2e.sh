# The shared model through the ioctl path (BO, MODEL_LOAD, CTX_CREATE,
# SUBMIT, WAIT) gives results identical to firmware-sim in-process: decode,
# prefill with every position, and many slots in flight; int8 and int4.
# The kernel's stages on one kthread each (stage_workers=0) and on a pool of
# one kthread (stage_workers=1): the same results (the default is a pool of
# one kthread per vCPU).
# Stock-only: the debug tier runs model_e2e itself after trinity (int8 and
# int4), and its paths in load and conformance.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
"$vm" -- "$build/tests/vm/model_e2e" int8 48
"$vm" -- "$build/tests/vm/model_e2e" int4 48
# Both sides of the SIMD switch: the kernel's scalar code (wafer.simd=0)
# against firmware-sim in process with its AVX2 kernels, and the kernel's
# AVX2 kernels against the in-process scalar code (WAFER_SIMD=0); TCG's
# -cpu max has AVX2.  Equal bit for bit.
"$vm" -- sh -c 'grep -qw avx2 /proc/cpuinfo || echo "note: the guest has no AVX2"
	echo 0 >/sys/module/wafer/parameters/simd && "$0" int8 24' "$build/tests/vm/model_e2e"
"$vm" -- env WAFER_SIMD=0 "$build/tests/vm/model_e2e" int4 24
"$vm" --params stage_workers=0 -- "$build/tests/vm/model_e2e" int8 24
"$vm" --params stage_workers=1 -- "$build/tests/vm/model_e2e" int4 24
