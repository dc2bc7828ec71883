# uapi conformance: every ioctl's valid use and each invalid field as its own
# named case with its documented errno, isolation between files, poisoned
# outputs, per-file limits, and the shared model still decoding correctly
# afterwards (tests/vm/progs/conformance.c and its ioctl groups in
# tests/vm/progs/conformance/; the table is in
# tests/vm/CONFORMANCE.md).  vgem is loaded in the guest: its fences keep
# jobs queued for the WAIT -ETIME, in-flight limit and close-while-queued
# cases.  Three boots: default parameters, small per-file limits, and SRAM
# too small for the model (-ENOSPC); on the debug kernel the first only.
# Afterwards the table is checked against what the runs printed
# (tests/vm/conformance-table), so it cannot go stale.
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/conformance
[ -x "$prog" ] || die "$prog missing: run make"
# The guest shares the host's root: modprobe vgem from the booted kernel's
# cached modules.
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() {
	"$vm" "$@" -- sh -c "modprobe -d \"\$WAFER_MODULES_ROOT\" -S \"\$(uname -r)\" vgem || echo '# modprobe vgem failed'; exec '$prog' \"\$0\"" "$mode" | tee "$out/$mode"
}
rc=0
# The expert-parallel cases load four models in one file: the device's
# every slot, which max_file_models keeps from one file by default.
mode=main run --params 'max_file_models=4' || rc=1
runs=(main="$out/main")
# The per-file limits and -ENOSPC are values the driver compares, the same
# code on both kernels: the debug kernel (a command there costs ~40 s) runs
# the main mode, whose every invalid field walks an error path under KASAN,
# lockdep and kmemleak.
if [ "${WAFER_VM_KERNEL:-stock}" != debug ]; then
	mode=limits run --params 'max_file_bo_mib=4 max_file_contexts=3 max_file_inflight=3 max_file_models=2' || rc=1
	mode=nospc run --params 'stages=1 sram_kib=64' || rc=1
	runs+=(limits="$out/limits" nospc="$out/nospc")
fi
tests/vm/conformance-table "${runs[@]}" || rc=1
exit $rc
