# Soak (tests/vm/progs/soak.c): for WAFER_SOAK_SECS (default 60)
# three devices each have a tenant process whose submitters share its file
# (some files passed by SCM_RIGHTS) and submit by ioctl and io_uring, some
# batches ending in a job the firmware rejects at intake; the supervisor
# SIGKILLs tenants and submitters mid-flight, injects hangs that reset the
# devices, a reader loops GET_INFO and the sysfs counters, and one device is
# unbound under its tenant and bound again.  Every job of a process not
# killed completes exactly once with an allowed status, the fences of each
# context signal in order, every device ends idle and decodes exactly, and
# SUnreclaim returns to its start (within a tolerance).  A guest too slow
# for every action to happen in that time gets up to twice as long.
# Knobs: WAFER_SOAK_SECS, WAFER_SOAK_SEED (default 1).
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/soak
[ -x "$prog" ] || die "$prog missing: run make"
secs=${WAFER_SOAK_SECS:-60}
# The debug kernel under TCG is several times slower: a job timeout that
# valid jobs (and control commands queued behind a hang) do not hit by
# slowness alone, as in load.sh.
timeout_ms=2000
[ "${WAFER_VM_KERNEL:-stock}" = debug ] && timeout_ms=3000
rc=0
out=$("$vm" --timeout $((secs + 600)) \
	--params "num_devices=3 fault_inject=1 job_timeout_ms=$timeout_ms" -- \
	"$prog" --secs "$secs" --seed "${WAFER_SOAK_SEED:-1}") || rc=$?
printf '%s\n' "$out"
[ "$rc" = 0 ] || die "soak exited with $rc"
expect_contains "$out" '^# [0-9]+ jobs/s'
