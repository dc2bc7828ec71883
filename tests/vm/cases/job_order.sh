# Fences of one file signal in submission order (tests/vm/progs/job_order.c):
# a job the firmware rejects at intake, queued behind long jobs (and behind
# a job that hangs until recovery), signals only after them.
# The debug kernel's checkers see these paths in conformance and soak (fences
# of rejected jobs and of resets): stock only, for test time.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/job_order
[ -x "$prog" ] || die "$prog missing: run make"
"$vm" -- "$prog" reject
# A TCG guest sharing the host's cores with another took over 2.5 s for a
# 192-token job (CI, stock kernel; the debug kernel is slower still): the
# hang mode's long job is 64 tokens, under a timeout it does not hit by
# slowness alone on either kernel.
"$vm" --params "fault_inject=1 job_timeout_ms=4000" -- "$prog" hang
