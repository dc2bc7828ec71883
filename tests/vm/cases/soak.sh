# Issue 11 soak (tests/vm/progs/soak.c): for WAFER_SOAK_SECS (default 60)
# three devices each have a tenant process whose submitters share its file
# (some files passed by SCM_RIGHTS) and submit by ioctl and io_uring; the
# supervisor SIGKILLs tenants and submitters mid-flight, injects hangs that
# reset the devices, a reader loops GET_INFO and sysfs counters, and one
# device is unbound under its tenant and bound again.  Every job of a
# process not killed completes exactly once with an allowed status, the
# fences of each context signal in order, every device ends idle and
# decodes exactly, SUnreclaim returns to its start (within a tolerance).
# Knobs: WAFER_SOAK_SECS, WAFER_SOAK_SEED (default 1).
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/soak
[ -x "$prog" ] || die "$prog missing: run make"
secs=${WAFER_SOAK_SECS:-60}
out=$("$vm" --timeout $((secs + 600)) --params 'num_devices=3 fault_inject=1 job_timeout_ms=2000' -- \
	"$prog" --secs "$secs" --seed "${WAFER_SOAK_SEED:-1}") || { printf '%s\n' "$out"; die "soak failed"; }
printf '%s\n' "$out"
expect_contains "$out" '^# [0-9.]+ jobs/s'
