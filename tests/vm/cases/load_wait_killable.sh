# A MODEL_LOAD does not wait for another file's jobs, nor for its
# DESTROY_CONTEXT (once queued behind them under the model lock): it
# completes while most of those jobs are still in flight
# (tests/vm/progs/load_wait_killable.c).
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/load_wait_killable
[ -x "$prog" ] || die "$prog missing: run make"
"$vm" -- "$prog"
