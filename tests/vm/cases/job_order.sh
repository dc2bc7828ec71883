# Fences of one file signal in submission order (tests/vm/progs/job_order.c):
# a job the firmware rejects at intake, queued behind long jobs (and behind
# a job that hangs until recovery), signals only after them.
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/job_order
[ -x "$prog" ] || die "$prog missing: run make"
"$vm" -- "$prog" reject
# A TCG guest sharing the host's cores with another can take over a second
# for one long job (the debug kernel several): a timeout its jobs, and the
# fault-injection command queued behind them, do not hit by slowness alone.
timeout_ms=2500
[ "${WAFER_VM_KERNEL:-stock}" != debug ] || timeout_ms=4000
"$vm" --params "fault_inject=1 job_timeout_ms=$timeout_ms" -- "$prog" hang
