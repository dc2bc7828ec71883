# `wafer run -d LIST` on the kernel driver with num_devices=5: the shared
# model split over 5 devices (one layer each), over 0,2,3 and by an explicit
# --split, prints exactly what one device prints and what the in-process
# pipeline prints, int8 and int4, submitting by ioctl and by io_uring
# (libwafer's pipeline: layer ranges, activation buffers exported and
# imported with PRIME between neighbours; the parts wait for each other on
# syncobjs on both paths: through io_uring a part may be issued before the
# one it waits for, and the driver waits for that one's submission,
# DRM_WAFER_JOB_WAIT_SUBMIT).  `wafer info -d
# 0-4 -m` shows a layer on each device; `wafer bench --devices 5` prints the
# device axis.  A hang injected on the middle device fails the run with the
# timeout (both paths) and the next run matches again.  `wafer run -d 0-4
# --trace` records the same modelled timeline through the kernel (ioctl,
# io_uring) as in process: a process per device, links between them; the
# 5-device runs' modelled tok/s equals the in-process pipeline's (device 0
# waits for the last device's previous token: NOT_BEFORE and done_ns).
# Attention-FFN disaggregation on kernel devices (`wafer run --afd A:F
# --backend kernel`: layer-part models, DRM_WAFER_JOB_LAYER jobs, the
# micro-batches moved from device to device by the caller's reap) and MoE
# expert groups through MODEL_LOAD.expert_group (--expert-group, one
# device and -d 0-4) print exactly what one in-process device prints, and
# the in-process AFD prints it too; `wafer info --afd 0:1 -b kernel -m`
# shows the parts on accel devices.  Expert parallelism on kernel devices
# (`--afd 0:1 --expert-devices N --backend kernel`: the expert-parallel
# home on accel1, the shards on accel2.., DRM_WAFER_PART_XHOME / XSHARD
# and five phase jobs a MoE layer) prints what one in-process device does.
# Stock-only: the driver paths (range loads, IN_ACT/OUT_ACT jobs, PRIME
# between devices, several devices) are the debug tier's through `chain`;
# layer parts and expert groups through conformance (test_layer_parts).
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
models=${WAFER_MODELS:-$repo/../shared/models}
wafer=$build/bin/wafer
common="$models/stories260K.bin -z $models/tok512.bin -t 0"

# name|devices|submission|arguments
runs=(
	"int8-1|-d 0|ioctl|--quant int8 -n 200"
	"int8-5|-d 0-4|ioctl|--quant int8 -n 200"
	"int8-5-uring|-d 0-4|uring|--quant int8 -n 200"
	"int4-3|-d 0,2,3|uring|--quant int4 -n 128 -i 'Once upon a time, a dog'"
	"int4-split|-d 1-2 --split 4,1|ioctl|--quant int4 -n 128 -i 'Once upon a time, a dog'"
	# layer parts (--afd) and expert groups
	"afd-1-1|--afd 0:1|ioctl|--quant int8 -n 200"
	"afd-2-2-uring|--afd 0-1:2-3|uring|--quant int4 -n 128 -i 'Once upon a time, a dog'"
	"afd-mb4|--afd 0:1-2 --afd-micro-batch 4|uring|--quant int8 -n 96 -i 'Once upon a time'"
	"afd-moe-xgroup|--afd 0-1:2|ioctl|--quant int8 -n 128 --moe 4,2 --expert-group 1"
	# expert parallelism: the routed experts on accel2 and accel3
	"afd-ep2|--afd 0:1 --expert-devices 2|ioctl|--quant int8 -n 128 --moe 4,2,1"
	"afd-ep3-uring|--afd 0:1 --expert-devices 3|uring|--quant int4 -n 96 --moe 6,3 --moe-gate sigmoid -i 'Once upon a time'"
	"moe-xgroup|-d 0|ioctl|--quant int8 -n 128 --moe 4,2 --expert-group 2"
	"moe-xgroup-5|-d 0-4|uring|--quant int8 -n 128 --moe 4,2,1 --expert-group 1"
)
trace_args="--quant int8 -n 40 -i 'Once upon a time' -d 0-4"

script='set -e
insmod "$WAFER_MODULE" num_devices=5'
for r in "${runs[@]}"; do
	IFS='|' read -r name devs submit args <<<"$r"
	script+="
$wafer run $common $args $devs --backend kernel --submit $submit >\"\$WAFER_RESULTS/$name.out\" 2>\"\$WAFER_RESULTS/$name.err\""
done
script+="
echo '=== afd-err'; cat \"\$WAFER_RESULTS/afd-2-2-uring.err\"
echo '=== ep-err'; cat \"\$WAFER_RESULTS/afd-ep2.err\"
echo '=== afd-info'; $wafer info --afd 0:1 -b kernel -m $models/stories260K.bin"
for submit in ioctl uring; do
	script+="
$wafer run $common $trace_args --submit $submit --trace \"\$WAFER_RESULTS/trace-$submit.json\" >/dev/null 2>\"\$WAFER_RESULTS/trace-$submit.err\"
echo '=== trace-$submit'; cat \"\$WAFER_RESULTS/trace-$submit.json\"; echo; echo '=== trace-$submit-jobs'; grep -oE 'trace of [0-9]+ jobs' \"\$WAFER_RESULTS/trace-$submit.err\" || true"
done
script+="
for f in \"\$WAFER_RESULTS\"/*.out; do echo \"=== \$(basename \"\$f\")\"; cat \"\$f\"; done
echo '=== run-err'; cat \"\$WAFER_RESULTS/int8-5-uring.err\"
echo '=== run-err-ioctl'; cat \"\$WAFER_RESULTS/int8-5.err\"
echo '=== info'; $wafer info -d 0-4 -m $models/stories260K.bin
echo '=== bench'; $wafer bench $models/stories260K.bin --quick --backend kernel --devices 5
rmmod wafer
# A hang on the middle device: the step fails with its timeout, then works.
insmod \"\$WAFER_MODULE\" num_devices=5 fault_inject=1 job_timeout_ms=1000
for s in ioctl uring; do
	echo hang >/sys/kernel/debug/accel/wafer.2/inject_fault
	if $wafer run $common -n 40 -d 0-4 --submit \$s >/dev/null 2>\"\$WAFER_RESULTS/hang.err\"; then
		echo \"FAILED: a run through a hung device succeeded\"; exit 1
	fi
	echo \"=== hang-\$s\"; cat \"\$WAFER_RESULTS/hang.err\"
	echo \"=== after-\$s\"; $wafer run $common -n 40 -d 0-4 --submit \$s 2>/dev/null
done
rmmod wafer"
vm_out=$("$vm" --no-module -- sh -c "$script") || { printf '%s\n' "$vm_out"; die "the guest failed"; }

section() { printf '%s\n' "$vm_out" | awk -v s="=== $1" '$0 == s { on = 1; next } /^=== / { on = 0 } on'; }

for r in "${runs[@]}"; do
	IFS='|' read -r name devs submit args <<<"$r"
	want=$(eval "\"$wafer\" run $common $args --backend inproc" 2>/dev/null)
	inproc=$(eval "\"$wafer\" run $common $args --backend inproc $devs" 2>/dev/null)
	got=$(section "$name.out")
	[ -n "$want" ] || die "$name: the inproc backend printed nothing"
	[ "$inproc" = "$want" ] || die "$name: the in-process pipeline over $devs differs from one device"
	if [ "$got" != "$want" ]; then
		diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | head -20
		die "$name: the kernel pipeline over $devs differs from one in-process device"
	fi
	echo "$name: kernel $devs ($submit) == inproc $devs == one device ($(printf '%s' "$got" | wc -c) bytes)"
done

err=$(section afd-err)
expect_contains "$err" '^wafer: attention-FFN disaggregation over 2 \+ 2 kernel devices:'
expect_contains "$err" '^  kernel 0 +attention \(and KV\) '
expect_contains "$err" '^  kernel 3 +FFN '
info=$(section afd-info)
expect_contains "$info" '^devices: +attention-FFN disaggregation over 1 \+ 1 kernel devices$'
expect_contains "$info" 'attention \+embed'
expect_contains "$info" 'FFN +\+head'
echo "afd: the runs and wafer info name the kernel devices and their parts"
err=$(section ep-err)
expect_contains "$err" '^wafer: attention-FFN disaggregation over 1 \+ 1 kernel devices, routed experts over 2 more:'
expect_contains "$err" '^  kernel 2 +routed experts '
expect_contains "$err" '^  accel3 +layers +0-4 +routed experts 2-3 '
echo "afd-ep: the expert devices are accel2 and accel3, each with its experts"

err=$(section run-err)
printf '%s\n' "$err"
expect_contains "$err" '^wafer: pipeline of 5 kernel devices \(submit uring\)'
for i in 0 1 2 3 4; do
	expect_contains "$err" "^  accel$i +layers +$i-$i "
done
# Both paths: the parts wait for each other on syncobjs in the driver.
for i in 1 2 3 4; do
	expect_contains "$err" "^  accel$i .*\\(waits in the driver\\)\$"
done
err=$(section run-err-ioctl)
expect_contains "$err" '^wafer: pipeline of 5 kernel devices \(submit ioctl\)'
for i in 1 2 3 4; do
	expect_contains "$err" "^  accel$i .*\\(waits in the driver\\)\$"
done

# A split decode loop's modelled time: device 0 starts each token no
# earlier than the last device finished the one before (the pipeline's
# floor, DRM_WAFER_JOB_NOT_BEFORE, from the last part's done_ns: WAIT's on
# ioctl, big_cqe[0] with DRM_WAFER_JOB_DONE_NS on io_uring), so the
# kernel's modelled tok/s equals the in-process pipeline's to the digit.
want=$(eval "\"$wafer\" run $common --quant int8 -n 200 --backend inproc -d 0-4" 2>&1 >/dev/null |
	grep -o 'modelled device tok/s: .*')
[ -n "$want" ] || die "the in-process pipeline printed no modelled tok/s"
for r in "ioctl|run-err-ioctl" "uring|run-err"; do
	IFS='|' read -r submit sec <<<"$r"
	got=$(section "$sec" | grep -o 'modelled device tok/s: .*' || true)
	[ "$got" = "$want" ] ||
		die "-d 0-4 ($submit): the kernel's $got differs from the in-process $want"
	echo "-d 0-4 ($submit): $got, as in process"
done

info=$(section info)
printf '%s\n' "$info" | sed -n '/^model:/,$p'
expect_contains "$info" '^model: .* 5 layers, int8, over 5 devices$'
expect_contains "$info" '^  accel0 +layers +0-0 +\+embed +weights +[1-9][0-9]* KiB +KV +[1-9][0-9]* KiB$'
expect_contains "$info" '^  accel4 +layers +4-4 +\+head +weights'
[ "$(grep -c '^== device [0-4] of 5$' <<<"$info")" = 5 ] || die "info: not 5 device sections"

want=$("$wafer" run $common -n 40 --backend inproc 2>/dev/null)
for s in ioctl uring; do
	expect_contains "$(section hang-$s)" '^wafer run: generating: .*Connection timed out'
	[ "$(section after-$s)" = "$want" ] || die "$s: the pipeline after the hang differs"
	echo "hang on device 2 of 5 ($s): the step failed with -ETIMEDOUT, the next run matches"
done

bench=$(section bench)
printf '%s\n' "$bench" | sed -n '/^devices/,$p'
num='[0-9]+\.[0-9]+'
for n in 1 2 3 4 5; do
	for b in 1 16 64; do
		expect_contains "$bench" "^  kernel +$n +[0-9+]+ +$b .*$num +${num}x +$num +${num}x\$"
	done
done

# The split model's trace: the modelled events (pids 0-4: the devices'
# chunk times, one timeline) of the kernel's run equal the in-process
# run's, in ns from the first (device 0's clock started with the runs
# before); every device has events, the hops between them are links, and
# each job has its host event.
modelled='[.traceEvents[] | select(.ph == "X" and .pid < 1000)] | (map(.ts) | min) as $t0 | map(.ts = ((.ts - $t0) * 1000 | round))'
t=$(mktemp -d "$build/vm/trace.XXXXXX")
trap 'rm -rf "$t"' EXIT
eval "\"$wafer\" run $common $trace_args --backend inproc --trace \"$t/inproc.json\"" >/dev/null 2>&1 ||
	die "wafer run -d 0-4 --trace (inproc) failed"
jq -S -c "$modelled" "$t/inproc.json" >"$t/inproc.ev" || die "the in-process trace is not JSON"
for submit in ioctl uring; do
	section "trace-$submit" >"$t/$submit.json"
	jq -S -c "$modelled" "$t/$submit.json" >"$t/$submit.ev" ||
		die "the kernel's trace ($submit) is not JSON"
	pids=$(jq -c '[.[].pid] | unique' "$t/$submit.ev")
	[ "$pids" = "[0,1,2,3,4]" ] || die "trace ($submit): events of devices $pids, not 0-4"
	links=$(jq '[.[] | select(.cat == "link")] | length' "$t/$submit.ev")
	[ "$links" -gt 0 ] || die "trace ($submit): no link between the devices"
	cmp -s "$t/inproc.ev" "$t/$submit.ev" ||
		die "the kernel's modelled timeline of the split model ($submit) differs from the in-process one"
	jobs=$(section "trace-$submit-jobs" | grep -oE '[0-9]+')
	host=$(jq '[.traceEvents[] | select(.pid == 1000 and .ph == "X")] | length' "$t/$submit.json")
	[ -n "$jobs" ] && [ "$host" = "$jobs" ] ||
		die "trace ($submit): $host host events for ${jobs:-?} jobs"
	echo "trace -d 0-4: kernel ($submit) == inproc, $(jq length "$t/$submit.ev") modelled events on 5 devices, $links links, $jobs jobs"
done
