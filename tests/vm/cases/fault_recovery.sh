# Firmware hang, dropped and corrupted completions: detected, the device is
# reset, the affected job fails with an error, later jobs are correct.
# The debug kernel's checkers see these paths in soak and chain (hangs,
# timeouts and resets): stock only, for test time.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
out=$("$vm" --params 'fault_inject=1 job_timeout_ms=1000' -- \
	sh -c "$build/tests/vm/fault_recovery; rc=\$?; grep -E 'resets|timeouts' /sys/kernel/debug/accel/wafer.0/jobs; exit \$rc")
printf '%s\n' "$out"
expect_contains "$out" '^resets: [1-9]'
expect_contains "$out" '^timeouts: [1-9]'
