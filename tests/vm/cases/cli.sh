# The wafer CLI finds the devices through libwafer: list (text and --json),
# info (text and --json).  wafer top for any user: while a root `wafer run`
# decodes, root sees its process (fdinfo) and the per-stage rows (debugfs);
# user nobody gets the device's counters from sysfs and is told the stage
# rows need debugfs, with no process of its own shown, and exits 0.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
models=${WAFER_MODELS:-$repo/../shared/models}
wafer=$build/bin/wafer
out=$("$vm" --params num_devices=2 -- bash -c "
	$wafer list; $wafer list --json | jq -r '.[].name'")
printf '%s\n' "$out"
expect_contains "$out" '^accel0  /dev/accel/accel0  wafer '
expect_contains "$out" '^accel1  /dev/accel/accel1  wafer '
[ "$(grep -c '^accel[01]$' <<<"$out")" = 2 ] || die "wafer list --json: expected accel0 and accel1"
out=$("$vm" -- bash -c "
	$wafer info -d 0
	$wafer info --backend kernel -d 0 --json | jq -r '.device.name, .stages'
	echo '=== top'
	$wafer run $models/stories260K.bin -z $models/tok512.bin -n 512 --backend kernel \
		>/dev/null 2>&1 &
	pid=\$!
	echo \"run pid \$pid\"
	# top samples once the run decodes (its first jobs done), not while it loads
	for _ in \$(seq 300); do
		[ \"\$(cat /sys/bus/platform/devices/wafer.0/jobs_completed)\" -gt 0 ] && break
		sleep 0.1
	done
	$wafer top -n 1 -i 300 || echo \"top rc=\$?\"
	echo '=== top-nobody'
	setpriv --reuid=65534 --regid=65534 --clear-groups $wafer top -n 1 -i 300 2>&1 ||
		echo \"nobody rc=\$?\"
	wait \$pid || echo \"run rc=\$?\"
")
printf '%s\n' "$out"
section() { printf '%s\n' "$out" | awk -v s="=== $1" '$0 == s { on = 1; next } /^=== / { on = 0 } on'; }
expect_contains "$out" '^device: +accel0'
expect_contains "$out" '^accel0$'
top=$(section top)
pid=$(sed -n 's/^run pid //p' <<<"$top")
expect_contains "$top" '^wafer top: accel0 '
expect_contains "$top" "^ +$pid wafer +1 +[0-9]+ +[0-9.]+\$"
expect_contains "$top" '^stage layers'
nobody=$(section top-nobody)
expect_contains "$nobody" '^wafer top: accel0 +interval [0-9]+ ms +jobs [0-9]+'
expect_contains "$nobody" '^stages: per-stage rows need debugfs'
expect_contains "$nobody" 'none of the processes this user may inspect has it open'
! grep -qE '^(top|nobody|run) rc=' <<<"$out" || die "a command failed"
