# While one file keeps the device full of jobs, another file's GET_INFO,
# context create and destroy, model load and unload and every sysfs read
# finish while most of those jobs are still to run, and a garbage streamed
# blob is refused without being copied (tests/vm/progs/control_not_behind_jobs.c).
# The debug kernel's checkers see these paths in control_not_behind_load (the
# control waiters) and soak: stock only, for test time.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/control_not_behind_jobs
[ -x "$prog" ] || die "$prog missing: run make"
# A long job timeout: the jobs' pace is what the case measures against,
# and a loaded host must not turn a slow job into a reset.
"$vm" --params 'job_timeout_ms=30000' -- "$prog" --tokens 128
