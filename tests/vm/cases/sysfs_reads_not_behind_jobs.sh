# Readers of the firmware-backed sysfs counters while seconds of jobs are
# queued (tests/vm/progs/sysfs_reads_not_behind_jobs.c): never in uninterruptible
# sleep, all done while the jobs are still in flight (none waits for the
# firmware), and the counters exact once the jobs are done.
# The debug kernel's checkers see these paths in soak (its reader loops the
# sysfs counters under load) and control_not_behind_load: stock only, for test
# time.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/sysfs_reads_not_behind_jobs
[ -x "$prog" ] || die "$prog missing: run make"
"$vm" -- "$prog" --jobs 48 --tokens 64
