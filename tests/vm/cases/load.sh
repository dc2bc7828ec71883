# Load: 16 processes on 4 devices (several per device, each with its own
# context), submitting by io_uring, by ioctl SUBMIT + WAIT (some with
# out-syncobjs) and both on one file; every result verified against
# firmware-sim, every job completed exactly once, the devices idle and their
# jobs_completed counters exact afterwards.  Then the same with firmware
# hangs, lost and corrupt completions injected meanwhile (short job
# timeout): every job correct or failed with a documented error, none lost
# or doubled, every device working after.  Prints jobs/s and p50/p99.
. "$(dirname "$0")/../lib.sh"
params='num_devices=4 stages=5 sram_kib=512'
# The debug kernel (KASAN, lockdep...) under TCG is several times slower.
jobs=100
[ "${WAFER_VM_KERNEL:-stock}" = debug ] && jobs=40

run() {
	local out rc=0
	out=$("$vm" --timeout 900 "$@") || rc=$?
	printf '%s\n' "$out"
	[ "$rc" = 0 ] || die "load $* exited with $rc"
	expect_contains "$out" '^# [0-9]+ jobs in .* jobs/s'
}

run --params "$params" -- \
	"$build/tests/vm/load" --procs 16 --devices 4 --jobs "$jobs" --deadline 600
run --params "$params fault_inject=1 job_timeout_ms=1000" -- \
	"$build/tests/vm/load" --procs 12 --devices 3 --jobs "$jobs" --faults 3 --deadline 600
