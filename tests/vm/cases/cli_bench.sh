# `wafer bench --quick` in the VM prints every row of its three tables
# (kernel and inproc backends, both kernel submit paths, every B and
# submission batch, the io_uring / ioctl CPU ratio) with positive figures,
# and its speculative section (-z) a row per draft kind in process and on
# the kernel device with the draft beside the target, each with plain's
# greedy text; `wafer top` prints per-stage lines while `wafer run`
# generates in the background, and with two MoE models loaded (two wafer
# serve of a `wafer convert --moe 4,2,1` blob, after a request each) a
# block per model of a line per MoE layer with its expert load imbalance
# since the load and each expert's tokens/s.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
models=${WAFER_MODELS:-$repo/../shared/models}
wafer=$build/bin/wafer

vm_out=$("$vm" -- bash -c "
	set -e
	echo '=== bench'
	$wafer bench $models/stories260K.bin --quick -z $models/tok512.bin || echo \"bench rc=\$?\"
	echo '=== top'
	$wafer run $models/stories260K.bin -z $models/tok512.bin -n 512 --backend kernel \
		>\"\$WAFER_RESULTS/run.out\" 2>&1 &
	pid=\$!
	$wafer top -n 2 -i 200
	wait \$pid
	echo \"run rc=\$?\"
	echo '=== top-moe'
	PATH=\$PATH:/usr/sbin:/sbin; ip link set lo up
	$wafer convert $models/stories260K.bin /tmp/moe.blob --moe 4,2,1 >/dev/null 2>&1
	# two servers of the blob: two MoE models on accel0, a block each in top
	$wafer serve /tmp/moe.blob -z $models/tok512.bin --backend kernel --port 8001 \
		>/dev/null 2>\"\$WAFER_RESULTS/serve.err\" &
	srv=\$!
	for t in \$(seq 150); do curl -sf http://127.0.0.1:8001/health >/dev/null && break; sleep 0.2; done
	$wafer serve /tmp/moe.blob -z $models/tok512.bin --backend kernel --port 8002 \
		>/dev/null 2>\"\$WAFER_RESULTS/serve2.err\" &
	srv2=\$!
	for t in \$(seq 150); do curl -sf http://127.0.0.1:8002/health >/dev/null && break; sleep 0.2; done
	for port in 8001 8002; do
		curl -s -d '{\"model\":\"moe.blob\",\"prompt\":\"Once upon a time\",\"max_tokens\":40,\"temperature\":0}' \
			http://127.0.0.1:\$port/v1/completions >/dev/null || echo \"the request to \$port failed\"
	done
	$wafer top -n 1 -i 100 || echo \"top rc=\$?\"
	kill -TERM \$srv \$srv2
	wait \$srv || echo \"serve rc=\$?\"
	wait \$srv2 || echo \"serve2 rc=\$?\"
	echo '=== serve-err'
	cat \"\$WAFER_RESULTS/serve.err\" \"\$WAFER_RESULTS/serve2.err\"
	echo '=== top-errors'
	$wafer top -d 7 -n 1 -i 10 2>&1 || echo \"rc=\$?\"
")
section() { printf '%s\n' "$vm_out" | awk -v s="=== $1" '$0 == s { on = 1; next } /^=== / { on = 0 } on'; }

bench=$(section bench)
printf '%s\n' "$bench"
num='[0-9]+(\.[0-9]+)?'
pos='([1-9][0-9]*(\.[0-9]+)?|0\.[0-9]*[1-9][0-9]*)'
for be in 'kernel +uring' 'inproc +inproc'; do
	expect_contains "$bench" "^  $be +8 +$pos +$pos +$pos +$pos\$"
	for b in 1 2 4 8 16; do
		expect_contains "$bench" "^  $be +$b +[0-9]+ +$pos +${num}x +~?$pos +${num}x\$"
	done
done
# Submission cost of no-op jobs: jobs/s, p50, p99, CPU us per job, and
# the submitting thread's us per job in submit and in reap.
for path in 'kernel +uring' 'kernel +ioctl' 'inproc +inproc'; do
	for batch in 1 8 32 128; do
		expect_contains "$bench" "^  $path +$batch +[0-9]+ +$pos +$pos +$pos +$pos +$pos +$num\$"
	done
done
expect_contains "$bench" "^  kernel CPU time per job, io_uring / ioctl: batch 1 ${num}x, batch 8 ${num}x, batch 32 ${num}x, batch 128 ${num}x\$"
# The speculative section (-z): every draft kind in process (wafer, asic,
# wse3 spread, wse3p with the draft packed, wse3pt with both packed: the
# draft on a device of its own) and on the kernel device (the draft
# beside the target, two models of accel0), each row's greedy text plain's
# (the kernel's plain text the in-process one: else a DIFFERS line).
for prof in wafer asic wse3 wse3p wse3pt kernel; do
	for draft in ngram int4 early:4 early:1; do
		expect_contains "$bench" "^  $prof +$draft +$num % +$num +$num +$num +$num +$num +${num}x +$num +${num}x +same\$"
	done
done
! grep -qE '^  (wafer|asic|wse3|wse3p|wse3pt|kernel) .*(failed|DIFFERS)|^bench rc=' <<<"$bench" || die "wafer bench -z: a row failed or differs from plain"

top=$(section top)
printf '%s\n' "$top"
expect_contains "$top" '^run rc=0$'
[ "$(grep -c '^wafer top: accel0 ' <<<"$top")" = 2 ] || die "expected 2 blocks from wafer top"
# 16 stages per block, each: stage, layers, util%, bar, tokens/s, sram, fifo_hw.
rows=$(grep -cE '^ +[0-9]+ +[-0-9EH]+ +[0-9.]+ +[#.]{20} +[0-9.]+ +[0-9]+/[0-9]+ +[0-9]+$' <<<"$top")
[ "$rows" = 32 ] || die "expected 32 per-stage lines from wafer top, got $rows"
expect_contains "$(section top-errors)" 'accel7.*No such file'

moe=$(section top-moe)
printf '%s\n' "$moe"
expect_contains "$moe" '^MoE layer  max/mean interval  since load  tokens/s per expert'
# Two MoE models (a server each): a block each, named in the device's order.
[ "$(grep -cE '^model [12] of the device \(firmware order\):$' <<<"$moe")" = 2 ] ||
	{ section serve-err; die "expected a block per MoE model from wafer top"; }
# Layers 0-4 of each: interval and since-load imbalance (since load in [1, 2]
# for top-2 of 4), then s0 and the routed experts 0-3 with their tokens/s.
rows=$(grep -cE '^ +[0-4] +[0-9.]+ +(1\.[0-9]{2}|2\.00)  s0 [0-9.]+ 0 [0-9.]+ 1 [0-9.]+ 2 [0-9.]+ 3 [0-9.]+$' <<<"$moe")
[ "$rows" = 10 ] || { section serve-err; die "expected 10 MoE layer lines from wafer top (5 per model), got $rows"; }
! grep -qE '^(serve2? rc=|the request to)' <<<"$moe" || die "a server or a request failed"

