# Structure-aware uapi fuzzer (tests/vm/progs/uapi_fuzz.c and uapi_fuzz/): 4 threads on 3
# files of two devices (num_devices=2: file 1 is accel1's, so BOs, syncobjs and
# fences cross devices) with live and stale handles, mutated ioctl, mmap,
# PRIME, syncobj and io_uring arguments, fork, close/reopen; afterwards the
# device must still decode the shared model exactly as firmware-sim does,
# and the guest kernel log must be clean.  Two boots: default parameters,
# and small per-file limits with a short job timeout (the debug kernel,
# ten times slower, runs the first only: the limits' paths are those of
# conformance's limits run there).
#
# Knobs: WAFER_FUZZ_SEED (default 1), WAFER_FUZZ_ITERS (operations per
# boot; default 15000, about 25 s under TCG; 4000 on the debug kernel), WAFER_FUZZ_TIME (seconds per boot; alone it
# means "run that long"), e.g.
#   WAFER_FUZZ_TIME=300 WAFER_TEST_FILTER=uapi_fuzz tests/run vm
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/uapi_fuzz
[ -x "$prog" ] || die "$prog missing: run make"
seed=${WAFER_FUZZ_SEED:-1}
args=()
timeout=900
if [ -n "${WAFER_FUZZ_TIME:-}" ]; then
	args+=(--time "$WAFER_FUZZ_TIME")
	timeout=$((WAFER_FUZZ_TIME + 600))
fi
iters=15000
[ "${WAFER_VM_KERNEL:-stock}" != debug ] || iters=4000
if [ -n "${WAFER_FUZZ_ITERS:-}" ] || [ -z "${WAFER_FUZZ_TIME:-}" ]; then
	args+=(--iters "${WAFER_FUZZ_ITERS:-$iters}")
fi
rc=0
# Two devices: file 1 is accel1's, so BOs, syncobjs and fences cross devices.
"$vm" --timeout "$timeout" --params num_devices=2 -- "$prog" --seed "$seed" --devices 2 \
	"${args[@]}" || rc=1
[ "${WAFER_VM_KERNEL:-stock}" = debug ] ||
	"$vm" --timeout "$timeout" \
		--params 'max_file_bo_mib=8 max_file_contexts=2 max_file_inflight=4 job_timeout_ms=2000' \
		-- "$prog" --seed "$((seed + 1))" "${args[@]}" || rc=1
exit $rc
