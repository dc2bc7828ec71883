# `wafer run` on the shared model through the kernel driver prints exactly
# what the in-process backend prints (the same firmware-sim code inside
# wafer.ko), int8 and int4, with and without a prompt, submitting by ioctl
# and by io_uring.
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
)

# One VM boot runs every kernel-backend command; outputs go to files.
script='set -e'
for r in "${runs[@]}"; do
	IFS='|' read -r name submit args <<<"$r"
	script+="
$wafer run $common $args --backend kernel --submit $submit >\"\$WAFER_RESULTS/$name.out\" 2>\"\$WAFER_RESULTS/$name.err\""
done
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
