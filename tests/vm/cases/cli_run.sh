# `wafer run` on the shared model through the kernel driver prints exactly
# what the in-process backend prints (the same firmware-sim code inside
# wafer.ko), int8 and int4, with and without a prompt, submitting by ioctl
# and by io_uring; the same for mixture-of-experts models upcycled on the
# fly (--moe), whose unit-gated top-k = E runs also print the
# dense model's text; `wafer run --expert-load` gives the firmware's
# per-expert token counts of a top-2-of-4 + shared model through the kernel
# (debugfs experts) equal to the in-process ones, and `wafer run --trace`
# records the same modelled timeline (the firmware's chunk times) through
# the kernel as in process.
# Stock-only: its driver paths (MODEL_LOAD, SUBMIT by ioctl and io_uring, WAIT)
# are the debug tier's through model_e2e after trinity, load and conformance.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
models=${WAFER_MODELS:-$repo/../shared/models}
wafer=$build/bin/wafer
common="$models/stories260K.bin -z $models/tok512.bin -t 0"

# name|submission|arguments
runs=(
	"int8|ioctl|--quant int8 -n 256"
	"int4|ioctl|--quant int4 -n 256"
	"int8-prompt|ioctl|--quant int8 -n 96 -i 'Once upon a time, a dog'"
	"int4-keep8|ioctl|--quant int4 --keep-int8 --group 16 -n 64"
	"int8-uring|uring|--quant int8 -n 256"
	"int4-prompt-uring|uring|--quant int4 -n 64 -i 'Once upon a time, a dog'"
	"moe-unit|ioctl|--quant int8 -n 256 --moe 4,4 --moe-gate unit"
	"moe-int4-unit|uring|--quant int4 -n 256 --moe 3,3,1 --moe-gate unit"
	"moe-top2|ioctl|--quant int8 -n 128 --moe 4,2"
	"moe-sigmoid|uring|--quant int8 -n 128 --moe 2,2,1 --moe-gate sigmoid"
)
trace_args="--quant int8 -n 40 -i 'Once upon a time'"
experts_args="--quant int8 -n 128 --moe 4,2,1 -i 'Once upon a time'"

# One VM boot runs every kernel-backend command; outputs go to files.
script='set -e'
for r in "${runs[@]}"; do
	IFS='|' read -r name submit args <<<"$r"
	script+="
$wafer run $common $args --backend kernel --submit $submit >\"\$WAFER_RESULTS/$name.out\" 2>\"\$WAFER_RESULTS/$name.err\""
done
for submit in ioctl uring; do
	script+="
$wafer run $common $trace_args --backend kernel --submit $submit --trace \"\$WAFER_RESULTS/trace-$submit.json\" >/dev/null 2>\"\$WAFER_RESULTS/trace-$submit.err\"
echo '=== trace-$submit'; cat \"\$WAFER_RESULTS/trace-$submit.json\"; echo; echo '=== trace-$submit-jobs'; grep -oE 'trace of [0-9]+ jobs' \"\$WAFER_RESULTS/trace-$submit.err\" || true"
done
script+="
$wafer run $common $experts_args --backend kernel --expert-load \"\$WAFER_RESULTS/experts.txt\" >/dev/null 2>\"\$WAFER_RESULTS/experts.err\" || echo \"wafer run rc=\$?\" >>\"\$WAFER_RESULTS/experts.err\"
echo '=== experts'; cat \"\$WAFER_RESULTS/experts.txt\" || true
echo '=== experts-err'; cat \"\$WAFER_RESULTS/experts.err\""
script+="
for f in \"\$WAFER_RESULTS\"/*.out; do echo \"=== \$(basename \"\$f\")\"; cat \"\$f\"; done
echo '=== stats'; cat \"\$WAFER_RESULTS/int8.err\"
echo '=== stats-uring'; cat \"\$WAFER_RESULTS/int8-uring.err\""
vm_out=$("$vm" -- sh -c "$script")

section() { printf '%s\n' "$vm_out" | awk -v s="=== $1" '$0 == s { on = 1; next } /^=== / { on = 0 } on'; }

for r in "${runs[@]}"; do
	IFS='|' read -r name submit args <<<"$r"
	want=$(eval "\"$wafer\" run $common $args --backend inproc" 2>/dev/null)
	got=$(section "$name.out")
	[ -n "$want" ] || die "$name: the inproc backend printed nothing"
	if [ "$got" != "$want" ]; then
		diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | head -20
		die "$name: kernel backend output differs from inproc"
	fi
	echo "$name: kernel ($submit) == inproc ($(printf '%s' "$got" | wc -c) bytes)"
done

stats=$(section stats)
printf '%s\n' "$stats"
expect_contains "$stats" '^wafer: backend kernel .*submit ioctl'
expect_contains "$(section stats-uring)" '^wafer: backend kernel .*submit uring'
expect_contains "$stats" '^achieved tok/s: [0-9.]+$'
expect_contains "$stats" '^wafer: modelled device tok/s: [0-9.]+'

# MoE: unit gates over every expert are the dense model, bit for bit.
[ "$(section moe-unit.out)" = "$(section int8.out)" ] ||
	die "--moe 4,4 --moe-gate unit: not the dense int8 text"
[ "$(section moe-int4-unit.out)" = "$(section int4.out)" ] ||
	die "--quant int4 --moe 3,3,1 --moe-gate unit: not the dense int4 text"
echo "moe: unit-gated top-k = E on the kernel == dense (int8, int4)"

# The trace: the modelled events (pid 0: the device's chunk times) of the
# kernel's run equal the in-process run's, in ns from the first (the
# kernel's device clock started with the runs before); each job has its
# host event.
modelled='[.traceEvents[] | select(.ph == "X" and .pid == 0)] | (map(.ts) | min) as $t0 | map(.ts = ((.ts - $t0) * 1000 | round))'
t=$(mktemp -d "$build/vm/trace.XXXXXX")
trap 'rm -rf "$t"' EXIT
eval "\"$wafer\" run $common $trace_args --backend inproc --trace \"$t/inproc.json\"" >/dev/null 2>&1 ||
	die "wafer run --trace (inproc) failed"
jq -S -c "$modelled" "$t/inproc.json" >"$t/inproc.ev" || die "the in-process trace is not JSON"
# In process with one thread per stage: the same timeline as the default pool.
eval "WAFER_STAGE_WORKERS=0 \"$wafer\" run $common $trace_args --backend inproc --trace \"$t/inproc0.json\"" \
	>/dev/null 2>&1 || die "wafer run --trace (inproc, WAFER_STAGE_WORKERS=0) failed"
jq -S -c "$modelled" "$t/inproc0.json" >"$t/inproc0.ev" || die "the in-process trace (0) is not JSON"
cmp -s "$t/inproc.ev" "$t/inproc0.ev" ||
	die "the in-process modelled timeline differs with WAFER_STAGE_WORKERS=0"
for submit in ioctl uring; do
	section "trace-$submit" >"$t/$submit.json"
	jq -S -c "$modelled" "$t/$submit.json" >"$t/$submit.ev" ||
		die "the kernel's trace ($submit) is not JSON"
	[ "$(jq length "$t/$submit.ev")" -gt 0 ] || die "no modelled events in the kernel's trace ($submit)"
	cmp -s "$t/inproc.ev" "$t/$submit.ev" ||
		die "the kernel's modelled timeline ($submit) differs from the in-process one"
	jobs=$(section "trace-$submit-jobs" | grep -oE '[0-9]+')
	host=$(jq '[.traceEvents[] | select(.pid == 1000 and .ph == "X")] | length' "$t/$submit.json")
	[ -n "$jobs" ] && [ "$host" = "$jobs" ] ||
		die "trace ($submit): $host host events for ${jobs:-?} jobs"
	echo "trace: kernel ($submit) == inproc, $(jq length "$t/$submit.ev") modelled events, $jobs jobs"
done

# The expert counters: the kernel's (debugfs) == in process, entry for entry.
eval "\"$wafer\" run $common $experts_args --backend inproc --expert-load \"$t/experts.txt\"" \
	>/dev/null 2>&1 || die "wafer run --expert-load (inproc) failed"
section experts >"$t/experts-kernel.txt"
[ "$(wc -l <"$t/experts.txt")" -gt 1 ] || die "no expert counters in process"
if ! cmp -s "$t/experts.txt" "$t/experts-kernel.txt"; then
	diff "$t/experts.txt" "$t/experts-kernel.txt" | head -20
	section experts-err
	die "the kernel's expert counters differ from the in-process ones"
fi
expect_contains "$(section experts-err)" '^wafer: expert load max/mean by layer: [0-9.]+( [0-9.]+){4}$'
echo "experts: kernel == inproc, $(($(wc -l <"$t/experts.txt") - 1)) entries"
