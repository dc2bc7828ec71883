# Load: 16 processes on 4 devices (several per device, each with its own
# context), submitting by io_uring, by ioctl SUBMIT + WAIT (some with
# out-syncobjs) and both on one file; every result verified against
# firmware-sim, every job completed exactly once, the devices idle and their
# jobs_completed counters exact afterwards.  Then the same with firmware
# hangs, lost and corrupt completions injected meanwhile (short job
# timeout): every job correct or failed with a documented error, none lost
# or doubled, every device working after.  Prints jobs/s and p50/p99, and
# what tests/vm/run says of the guest (a kernel-log report fails the case).
# The debug kernel's checkers see these paths in soak (tenants on several
# devices by ioctl and io_uring, hangs injected): stock only, for test time.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
params='num_devices=4 stages=5 sram_kib=512'
# The debug kernel (KASAN, lockdep...) under TCG is several times slower:
# fewer jobs, and a job timeout (also that of the fault-injection control
# command, queued behind the load) its jobs do not hit by slowness alone.
jobs=100 timeout_ms=1000
[ "${WAFER_VM_KERNEL:-stock}" = debug ] && jobs=50 timeout_ms=3000

# One boot, the module loaded twice (with fault injection the second time):
# booting is most of the time this takes.
rc=0
out=$("$vm" --no-module --timeout 900 -- sh -c "
	insmod \"\$WAFER_MODULE\" $params || exit 125
	$build/tests/vm/load --procs 16 --devices 4 --jobs $jobs --deadline 600 || rc=1
	rmmod wafer || exit 125
	insmod \"\$WAFER_MODULE\" $params fault_inject=1 job_timeout_ms=$timeout_ms || exit 125
	$build/tests/vm/load --procs 12 --devices 3 --jobs $jobs --faults 3 --deadline 600 || rc=1
	rmmod wafer || exit 125
	exit \${rc:-0}" 2>&1) || rc=$?
printf '%s\n' "$out"
[ "$rc" = 0 ] || die "load exited with $rc"
[ "$(grep -Ec '^# [0-9]+ jobs in .* jobs/s' <<<"$out")" = 2 ] || die "expected two load runs"
