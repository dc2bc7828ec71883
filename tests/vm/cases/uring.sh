# Job submission by io_uring uring_cmd: results identical to in-process,
# error completions, and a process killed with 64 commands in flight.
. "$(dirname "$0")/../lib.sh"
"$vm" -- "$build/tests/vm/uring_submit" 24
