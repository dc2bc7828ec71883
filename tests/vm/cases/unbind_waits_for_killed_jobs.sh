# A device unbound while a job its closed file left is still queued behind
# in-fences is torn down only once that job, its context and its model are
# released (tests/vm/progs/unbind_waits_for_killed_jobs.c); the fences are
# vgem's, loaded in the guest.  Before, the job freed itself after the
# teardown, into the destroyed scheduler and firmware: KASAN on the debug
# kernel, a panic on the stock one.
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/unbind_waits_for_killed_jobs
[ -x "$prog" ] || die "$prog missing: run make"
# job_timeout_ms=1000: the child's close gives up on its job after 3 s,
# before vgem's fences time out (10 s).
"$vm" --params 'job_timeout_ms=1000' -- sh -c "modprobe -d \"\$WAFER_MODULES_ROOT\" -S \"\$(uname -r)\" vgem || echo '# modprobe vgem failed'; exec '$prog'"
