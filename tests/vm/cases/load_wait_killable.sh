# A MODEL_LOAD does not wait for another file's jobs, nor for its
# DESTROY_CONTEXT (once queued behind them under the model lock): it
# completes while most of those jobs are still in flight
# (tests/vm/progs/load_wait_killable.c).
# The debug kernel's checkers see these paths in control_not_behind_load (a
# load beside another file's work): stock only, for test time.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/load_wait_killable
[ -x "$prog" ] || die "$prog missing: run make"
"$vm" -- "$prog"
