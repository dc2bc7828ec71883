# The harness must fail a run whose kernel log shows a WARNING: the driver's
# test-only debugfs trigger makes one on purpose.  Stock kernel only: the
# detector is the host's scan of the guest's log, the same for both kernels.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
rc=0
out=$("$vm" --params fault_inject=1 -- sh -c 'echo 1 > /sys/kernel/debug/accel/wafer.0/inject_warn' 2>&1) || rc=$?
printf '%s\n' "$out"
[ "$rc" != 0 ] || die "a WARN in the guest went unnoticed"
expect_contains "$out" 'kernel log has reports'
expect_contains "$out" 'WARNING: .*inject_warn'
# Without the trigger the same run is clean.
"$vm" --params fault_inject=1 -- sh -c 'echo 0 > /sys/kernel/debug/accel/wafer.0/inject_warn'
