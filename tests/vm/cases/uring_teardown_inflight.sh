# io_uring rings closed, and their processes exited, with commands in flight
# while their jobs complete, some at once (tests/vm/progs/uring_teardown_inflight.c):
# cancellation racing completion; on the debug kernel KASAN watches the
# driver's per-command request.  Knob: WAFER_URING_TEARDOWN_SEED (default 1).
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/uring_teardown_inflight
[ -x "$prog" ] || die "$prog missing: run make"
"$vm" -- "$prog" --seed "${WAFER_URING_TEARDOWN_SEED:-1}" --iters 60 --procs 4
