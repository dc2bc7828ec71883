# MODEL_LOAD refuses a blob that could never fit the device's SRAM before
# copying it, and charges its copy of a valid blob to the caller's memory
# cgroup (cgroup v2, mounted here); the device runs stage worker threads
# only for a loaded model (tests/vm/progs/load_memory_bounded.c).
# It creates memory cgroups: a guest of its own.
# wafer-vm: own-guest
# The debug kernel's checkers see these paths in fault_inject and conformance
# (MODEL_LOAD's allocations and refusals): stock only, for test time.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/load_memory_bounded
[ -x "$prog" ] || die "$prog missing: run make"
"$vm" -- sh -c "mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup; exec $prog"
