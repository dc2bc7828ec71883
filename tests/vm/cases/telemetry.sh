# Telemetry: sysfs attributes, fdinfo, debugfs files and tracepoints
# reflect a real run of the shared model; debugfs experts has a section
# per model while two MoE models share the device (a draft beside its
# target).  Stock kernel only: it checks
# values; the paths behind them run on the debug kernel in
# sysfs_reads_not_behind_jobs, load and conformance.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
out=$("$vm" -- bash -c '
	set -e
	d=/sys/class/accel/accel0/device
	t=/sys/kernel/tracing
	mountpoint -q $t || mount -t tracefs tracefs $t
	# Without record-cmd, enabling the events patches only wafer.ko: the
	# comm recorder would hook sched_switch, live-patching __schedule()
	# under the other vCPU, which TCG once ran half-patched (an oops).
	echo 0 > $t/options/record-cmd
	echo 1 > $t/events/wafer/enable
	build/tests/vm/model_e2e int8 4 > /dev/null
	echo 0 > $t/events/wafer/enable
	for a in stages sram_bytes_per_stage profile wafer_numa_node fw_version busy_ns \
		jobs_completed tokens modelled_makespan_ns bottleneck_busy_ns \
		moe_imbalance_milli models max_models; do
		echo "sysfs $a=$(cat $d/$a)"
	done
	exec 3<>/dev/accel/accel0
	sed "s/^/fdinfo /" /proc/$$/fdinfo/3
	exec 3>&-
	dbg=/sys/kernel/debug/accel/wafer.0
	echo "debugfs stages rows $(grep -c "^ *[0-9]" $dbg/stages)"
	echo "debugfs fw_log lines $(wc -l < $dbg/fw_log)"
	sed -n "1p" $dbg/sram_map | sed "s/^/debugfs sram_map /"
	echo "debugfs experts $(head -1 $dbg/experts) rows $(($(wc -l < $dbg/experts) - 1))"
	grep -E "^(resets|timeouts|in flight)" $dbg/jobs | sed "s/^/debugfs jobs /"
	sed -n "1p" $dbg/models | sed "s/^/debugfs models /"
	for e in submit start complete; do
		echo "trace $e $(grep -c "wafer_job_$e:" $t/trace)"
	done
	# wafer info sees the model another process has loaded.
	m=$(cd .. && pwd)/shared/models
	build/bin/wafer run $m/stories260K.bin -z $m/tok512.bin -n 400 >/dev/null 2>&1 &
	for i in $(seq 1 100); do
		build/bin/wafer info -d 0 | grep "^now: .* 1 models loaded, 1 contexts" && break
		sleep 0.1
	done
	echo "sysfs models while running=$(cat $d/models)"
	grep -c "^ *[0-9].* yes resident$" $dbg/models | sed "s/^/debugfs models rows while running /"
	wait
	# Two MoE models on one device (an int4 draft beside its int8 target,
	# both upcycled): debugfs experts has a section for each.
	build/bin/wafer run $m/stories260K.bin -z $m/tok512.bin --moe 4,2,1 --draft int4 \
		-n 400 >/dev/null 2>&1 &
	for i in $(seq 1 300); do
		x=$(cat $dbg/experts) || x=
		[ "$(printf "%s\n" "$x" | grep -c "^model ")" -ge 2 ] && break
		sleep 0.1
	done
	printf "%s\n" "$x" | grep "^model " | sed "s/^/debugfs experts two /"
	printf "%s\n" "$x" | awk "/^model /{n++} n && /^ *[0-9]/{r[n]++}
		END{for(i=1;i<=n;i++) print \"debugfs experts section \" i \" rows \" r[i]+0}"
	wait || echo "wafer run --moe --draft rc=$?"
	build/bin/wafer info -d 0 | grep "^now:"
')
printf '%s\n' "$out"
expect_contains "$out" '^sysfs stages=16$'
expect_contains "$out" '^sysfs sram_bytes_per_stage=4194304$'
expect_contains "$out" '^sysfs profile=wafer$'
expect_contains "$out" '^sysfs wafer_numa_node=-1$'
# The firmware ABI this tree builds (firmware-sim/abi/wfw_abi.h).
abi_minor=$(awk '$2 == "WFW_ABI_MINOR" { print $3 }' "$repo/firmware-sim/abi/wfw_abi.h")
expect_contains "$out" "^sysfs fw_version=1\\.$abi_minor "
expect_contains "$out" '^sysfs busy_ns=[1-9][0-9]*$'
expect_contains "$out" '^sysfs jobs_completed=[1-9][0-9]*$'
expect_contains "$out" '^sysfs tokens=[1-9][0-9]*$'
expect_contains "$out" '^sysfs modelled_makespan_ns=[1-9][0-9]*$'
expect_contains "$out" '^sysfs bottleneck_busy_ns=[1-9][0-9]*$'
# A dense model (and none, after model_e2e): no expert load.
expect_contains "$out" '^sysfs moe_imbalance_milli=0$'
# The model table: empty after model_e2e, one model while wafer run runs.
expect_contains "$out" '^sysfs models=0$'
expect_contains "$out" '^sysfs max_models=4$'
expect_contains "$out" '^debugfs models models 0 of 4$'
expect_contains "$out" '^sysfs models while running=1$'
expect_contains "$out" '^debugfs models rows while running 1$'
expect_contains "$out" '^debugfs experts layer expert top_k +tokens rows 0$'
# Two MoE models (5 layers, 4 routed + 1 shared experts each): a section
# each, named by its model id, with all its rows.
expect_contains "$out" '^debugfs experts two model [0-9]+ fw_id 0x[0-9a-f]+ moe_layers 5$'
expect_contains "$out" '^debugfs experts section 1 rows 25$'
expect_contains "$out" '^debugfs experts section 2 rows 25$'
! grep -q '^wafer run --moe --draft rc=' <<<"$out" || die "wafer run --moe --draft failed"
expect_contains "$out" '^fdinfo drm-driver:.*wafer'
expect_contains "$out" '^fdinfo drm-engine-wafer:.*0 ns'
expect_contains "$out" '^fdinfo drm-total-memory:'
expect_contains "$out" '^debugfs stages rows 16$'
expect_contains "$out" '^debugfs fw_log lines [1-9]'
expect_contains "$out" '^debugfs sram_map stage 0:'
expect_contains "$out" '^debugfs jobs in flight: 0$'
expect_contains "$out" '^trace submit [1-9]'
expect_contains "$out" '^trace start [1-9]'
expect_contains "$out" '^trace complete [1-9]'
expect_contains "$out" '^now: +1 models loaded, 1 contexts, [0-9]+ jobs in flight$'
expect_contains "$out" '^now: +0 models loaded, 0 contexts, 0 jobs in flight$'
