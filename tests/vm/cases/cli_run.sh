# `wafer run` on the shared model through the kernel driver prints exactly
# what the in-process backend prints (the same firmware-sim code inside
# wafer.ko), int8 and int4, with and without a prompt; `--submit uring`
# either matches too or, until io_uring submission exists, fails clearly.
. "$(dirname "$0")/../lib.sh"
models=${WAFER_MODELS:-$repo/../shared/models}
wafer=$build/bin/wafer
common="$models/stories260K.bin -z $models/tok512.bin -t 0"

runs=(
	"int8|--quant int8 -n 256"
	"int4|--quant int4 -n 256"
	"int8-prompt|--quant int8 -n 96 -i 'Once upon a time, a dog'"
	"int4-keep8|--quant int4 --keep-int8 --group 16 -n 64"
)

# One VM boot runs every kernel-backend command; outputs go to files.
script='set -e'
for r in "${runs[@]}"; do
	name=${r%%|*} args=${r#*|}
	script+="
$wafer run $common $args --backend kernel --submit ioctl >\"\$WAFER_RESULTS/$name.out\" 2>\"\$WAFER_RESULTS/$name.err\""
done
script+="
for f in \"\$WAFER_RESULTS\"/*.out; do echo \"=== \$(basename \"\$f\")\"; cat \"\$f\"; done
echo '=== uring'
rc=0; $wafer run $common -n 32 --backend kernel --submit uring >\"\$WAFER_RESULTS/uring.txt\" 2>&1 || rc=\$?
echo \"rc=\$rc\"; cat \"\$WAFER_RESULTS/uring.txt\"
echo '=== stats'; cat \"\$WAFER_RESULTS/int8.err\""
vm_out=$("$vm" -- sh -c "$script")

section() { printf '%s\n' "$vm_out" | awk -v s="=== $1" '$0 == s { on = 1; next } /^=== / { on = 0 } on'; }

for r in "${runs[@]}"; do
	name=${r%%|*} args=${r#*|}
	want=$(eval "\"$wafer\" run $common $args --backend inproc" 2>/dev/null)
	got=$(section "$name.out")
	[ -n "$want" ] || die "$name: the inproc backend printed nothing"
	if [ "$got" != "$want" ]; then
		diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | head -20
		die "$name: kernel backend output differs from inproc"
	fi
	echo "$name: kernel == inproc ($(printf '%s' "$got" | wc -c) bytes)"
done

uring=$(section uring)
if printf '%s\n' "$uring" | grep -q '^rc=0$'; then
	want=$("$wafer" run $common -n 32 --backend inproc 2>/dev/null)
	expect_contains "$uring" "$(printf '%s' "$want" | head -1 | cut -c1-40)"
else
	expect_contains "$uring" 'io_uring'
fi
stats=$(section stats)
printf '%s\n' "$stats"
expect_contains "$stats" '^wafer: backend kernel .*submit ioctl'
expect_contains "$stats" '^achieved tok/s: [0-9.]+$'
expect_contains "$stats" '^wafer: modelled device tok/s: [0-9.]+'
