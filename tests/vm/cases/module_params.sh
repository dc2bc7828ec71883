# Out-of-range num_devices and job_timeout_ms are refused at load time (with
# a message in the kernel log), and the harness reports the failed load instead of
# running the command.
. "$(dirname "$0")/../lib.sh"
for p in num_devices=0 num_devices=17 job_timeout_ms=0 job_timeout_ms=3600001; do
	rc=0
	out=$("$vm" --params "$p" -- true 2>&1) || rc=$?
	[ "$rc" != 0 ] || die "$p loaded"
	expect_contains "$out" "insmod .*$p"
done
# The lower bound itself loads and reads back.
"$vm" --params 'job_timeout_ms=1' -- sh -c 'test "$(cat /sys/module/wafer/parameters/job_timeout_ms)" = 1'
# 16 devices with 1 MiB SRAM stages (16 x 64 MiB would crowd a debug guest).
"$vm" --params 'num_devices=16 sram_kib=1024' -- test -c /dev/accel/accel15
# The test-only debugfs triggers exist only with fault_inject=1.
dbg=/sys/kernel/debug/accel/wafer.0
"$vm" -- sh -c "test -e $dbg/jobs && ! test -e $dbg/inject_warn && ! test -e $dbg/inject_fault" ||
	die "inject_warn or inject_fault exists without fault_inject=1"
"$vm" --params fault_inject=1 -- test -e "$dbg/inject_warn" -a -e "$dbg/inject_fault"
