# Weight streaming through the kernel: on devices whose SRAM
# cannot hold stories260K resident (profile=asic stages=1: int8 does not fit
# in 384 KiB, int4 not in 352 KiB), `wafer run` (--stream-weights auto, the
# default) streams the layers' weights from host memory, says so, and prints
# exactly what the in-process backend prints with the model resident on its
# default device: int8 and int4, ioctl and io_uring, with and without a
# prompt.  --stream-weights off is -ENOSPC; where even the streaming window
# does not fit both errors are named.  `wafer info` shows the store and that
# the model's weights stream; `wafer bench --backend kernel` runs B = 1, 4,
# 16 sequences in flight with the weights streamed (and resident) through
# the kernel and prints the amortisation rows.
# The debug kernel's checkers see these paths in conformance (a streamed model
# loaded and unloaded); the streamed jobs take the job paths soak and chain
# exercise: stock only, for test time.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
models=${WAFER_MODELS:-$repo/../shared/models}
wafer=$build/bin/wafer
common="$models/stories260K.bin -z $models/tok512.bin -t 0"

# Tokens per run: every token streams every layer's weights through the
# kernel the same way, so the debug kernel (whose detectors watch the
# kernel's side: the store's BOs, the jobs, ioctl and io_uring) takes each
# path in fewer of them (with a prompt: its 9 tokens, then 8 generated).
n=200 n_prompt=96
[ "${WAFER_VM_KERNEL:-stock}" != debug ] || n=24 n_prompt=16
# SRAM KiB|name|submission|arguments
runs=(
	"384|int8|ioctl|--quant int8 -n $n"
	"384|int8-prompt-uring|uring|--quant int8 -n $n_prompt -i 'Once upon a time, a dog'"
	"352|int4|ioctl|--quant int4 -n $n"
	"352|int4-prompt-uring|uring|--quant int4 -n $n_prompt -i 'Once upon a time, a dog'"
)
extra_384="
$wafer info -m $models/stories260K.bin >\"\$WAFER_RESULTS/info.out\" 2>&1 || echo \"info rc=\$?\" >>\"\$WAFER_RESULTS/info.out\"
$wafer run $common --quant int8 -n 16 --stream-weights off --backend kernel >/dev/null 2>\"\$WAFER_RESULTS/off.err\" && echo 'off: rc=0' >>\"\$WAFER_RESULTS/off.err\" || true
$wafer bench $models/stories260K.bin --quant int4 --backend kernel --quick --devices 0 >\"\$WAFER_RESULTS/bench.out\" 2>\"\$WAFER_RESULTS/bench.err\" || echo \"bench rc=\$?\" >>\"\$WAFER_RESULTS/bench.out\""
extra_352="
$wafer run $common --quant int8 -n 16 --backend kernel >/dev/null 2>\"\$WAFER_RESULTS/nofit.err\" && echo 'nofit: rc=0' >>\"\$WAFER_RESULTS/nofit.err\" || true"

for kib in 384 352; do
	script='set -e'
	for r in "${runs[@]}"; do
		IFS='|' read -r k name submit args <<<"$r"
		[ "$k" = "$kib" ] || continue
		script+="
$wafer run $common $args --backend kernel --submit $submit >\"\$WAFER_RESULTS/$name.out\" 2>\"\$WAFER_RESULTS/$name.err\""
	done
	extra=extra_$kib
	script+="${!extra}
for f in \"\$WAFER_RESULTS\"/*.out \"\$WAFER_RESULTS\"/*.err; do echo \"=== \$(basename \"\$f\")\"; cat \"\$f\"; done"
	out=$("$vm" --params "profile=asic stages=1 sram_kib=$kib" -- sh -c "$script")
	eval "vm_out_$kib=\$out"
done

section() {
	local v=vm_out_$1
	printf '%s\n' "${!v}" | awk -v s="=== $2" '$0 == s { on = 1; next } /^=== / { on = 0 } on'
}

for r in "${runs[@]}"; do
	IFS='|' read -r kib name submit args <<<"$r"
	want=$(eval "\"$wafer\" run $common $args --backend inproc" 2>/dev/null)
	got=$(section "$kib" "$name.out")
	[ -n "$want" ] || die "$name: the inproc backend printed nothing"
	if [ "$got" != "$want" ]; then
		diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | head -20
		section "$kib" "$name.err"
		die "$name: the kernel's streamed output differs from the in-process resident one"
	fi
	expect_contains "$(section "$kib" "$name.err")" \
		'^weights:  streamed from host memory.*does not fit resident'
	echo "$name: kernel, asic/1 x $kib KiB, streamed ($submit) == inproc resident ($(printf '%s' "$got" | wc -c) bytes)"
done

info=$(section 384 info.out)
printf '%s\n' "$info" | grep -E '^(caps|stream|weights):' || true
expect_contains "$info" '^caps: .*weight-stream'
expect_contains "$info" '^stream:   weights from host memory at 64 B/cycle, 500 cycles latency$'
expect_contains "$info" '^weights:  streamed from host memory'
off=$(section 384 off.err)
expect_contains "$off" 'does not fit'
! grep -q 'rc=0' <<<"$off" || die "--stream-weights off loaded a model that does not fit"
echo "off: $(head -1 <<<"$off")"
nofit=$(section 352 nofit.err)
expect_contains "$nofit" 'does not fit.*streaming the weights: .*does not fit'
! grep -q 'rc=0' <<<"$nofit" || die "int8 in 352 KiB loaded although not even streaming fits"
echo "no fit even streamed: $(head -1 <<<"$nofit")"

bench=$(section 384 bench.out)
! grep -q 'bench rc=' <<<"$bench" || { section 384 bench.err | tail -5; die "wafer bench failed"; }
rows=$(printf '%s\n' "$bench" | awk '/^weight streaming/ { on = 1; next } on && /^  kernel/')
printf '%s\n' "$bench" | awk '/^weight streaming/ { on = 1 } on'
[ "$(wc -l <<<"$rows")" -eq 3 ] || die "wafer bench: no kernel rows for B = 1, 4, 16 streamed"
# Streaming costs modelled time; B = 16 in flight shares the passes.
awk '{ r = $3; s = $4; gsub(/~/, "", r); gsub(/~/, "", s)
	if (r == "n/a" || s == "n/a" || s + 0 >= r + 0) bad = 1
	if ($2 == 1) s1 = s; if ($2 == 16) s16 = s }
	END { exit bad || !(s16 + 0 > s1 + 0) }' <<<"$rows" ||
	die "wafer bench: streamed not below resident, or B = 16 not above B = 1"
