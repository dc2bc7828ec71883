# The orphaned model: a victim with more work queued than the closing
# file's bounded wait for idle (2 x job_timeout_ms + 1 s) is SIGKILLed.
# The driver must not forget its model while the firmware still holds it:
# once the victim's jobs are done another file must load the model and
# decode exactly (tests/vm/progs/lifetime_kill.c's checks).
# The debug kernel's checkers see these paths in soak (tenants killed with
# jobs in flight): stock only, for test time.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/lifetime_kill
[ -x "$prog" ] || die "$prog missing: run make"
# The debug kernel under TCG can take over a second for one job: a timeout
# its jobs do not hit by slowness alone (the queue still outlasts the wait).
timeout_ms=1000
[ "${WAFER_VM_KERNEL:-stock}" != debug ] || timeout_ms=2500
# The victim queues 250 jobs: within max_file_inflight's default (256).
"$vm" --params "job_timeout_ms=$timeout_ms" -- \
	"$prog" --seed 1 --rounds 1 --variant 0 --pipeline 250 --tokens 16
