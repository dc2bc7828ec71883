# Job submission by io_uring uring_cmd: results identical to in-process,
# error completions, and a process killed with 64 commands in flight.
# The debug kernel's checkers see these paths in uring_teardown_inflight,
# conformance and soak (io_uring submission): stock only, for test time.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
"$vm" -- "$build/tests/vm/uring_submit" 24
