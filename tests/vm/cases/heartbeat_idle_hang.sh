# A firmware that stops while no job is in flight (inject_fault "stall": the
# command processor stops beating and taking commands) is noticed by the
# driver's heartbeat watch, which resets the device; the device works after.
# Nothing here sends the firmware a command while it is stopped, so only the
# heartbeat can notice.
# The debug kernel's checkers see these paths in reset_control_race and soak
# (the device reset): stock only, for test time.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
out=$("$vm" --params 'fault_inject=1 job_timeout_ms=1000' -- sh -c '
	d=/sys/kernel/debug/accel/wafer.0
	r0=$(sed -n "s/^resets: //p" $d/jobs)
	echo stall > $d/inject_fault || exit 1
	i=0
	while [ "$(sed -n "s/^resets: //p" $d/jobs)" = "$r0" ] && [ $i -lt 600 ]; do
		sleep 0.1; i=$((i + 1))
	done
	cat $d/heartbeat
	grep -E "^resets" $d/jobs
	'"$build"'/tests/vm/model_e2e int8 4 >/dev/null && echo "model_e2e ok"')
printf '%s\n' "$out"
expect_contains "$out" '^stalls: 1$'
expect_contains "$out" '^resets: 1$'
expect_contains "$out" '^model_e2e ok$'
