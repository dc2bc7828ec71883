# `wafer run --draft` on the kernel driver with num_devices=2: the target on
# accel0, a draft model (int4, early:4, a 3-layer checkpoint of the same
# vocabulary) beside it on accel0 (two models on one kernel device, the
# default where it fits), on accel1 (--draft-device 1) or none (ngram),
# submitting by ioctl and by io_uring: stdout equals the in-process plain
# greedy run byte for byte, int8 and int4 targets, with and without a
# prompt; stderr carries the acceptance, tokens per verify and the plain
# run's figures.  The draft beside the target on accel0 proposes exactly
# what the same draft on its own device does: the acceptance figures agree.  The verify jobs (K + 1
# positions, a result each) and the jobs that go back to the first rejected
# position pass through the driver unchanged.
# Stock-only: the driver paths (two devices, ALL_POSITIONS jobs, submit by
# ioctl and io_uring) are the debug tier's through conformance and chain.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
models=${WAFER_MODELS:-$repo/../shared/models}
wafer=$build/bin/wafer
common="$models/stories260K.bin -z $models/tok512.bin -t 0"

# A checkpoint of the model's first 3 layers (llama2.c v0, shared classifier),
# where the guest can read it (the host's root is shared read-only).
trunc=$build/tests/vm/spec-3layers.bin
python3 - "$models/stories260K.bin" "$trunc" <<'EOF'
import struct, sys
src = open(sys.argv[1], 'rb').read()
dim, hid, nl, nh, nkv, voc, seq = struct.unpack('7i', src[:28])
kv, keep, f = dim * nkv // nh, 3, 4
out, off = [struct.pack('7i', dim, hid, keep, nh, nkv, voc, seq)], 28
def take(n, per_layer=True):
    global off
    total = n * nl if per_layer else n
    out.append(src[off:off + (n * keep if per_layer else n) * f])
    off += total * f
take(voc * dim, False)
for n in (dim, dim * dim, kv * dim, kv * dim, dim * dim, dim, hid * dim, dim * hid, hid * dim):
    take(n)
take(dim, False)
take(seq * (dim // nh), False)
open(sys.argv[2], 'wb').write(b''.join(out))
EOF

# name|submission|arguments (the draft beside the model on accel0 unless
# --draft-device says)
runs=(
	"ngram|ioctl|--quant int8 -n 100 --draft ngram --draft-tokens 4"
	"int4|uring|--quant int8 -n 100 --draft int4 --draft-tokens 4 --draft-device 1 --no-plain"
	"int4b|uring|--quant int8 -n 100 --draft int4 --draft-tokens 4 --no-plain"
	"file|ioctl|--quant int8 -n 64 -i 'Once upon a time, a dog' --draft $trunc --draft-tokens 2 --no-plain"
	"int4t|uring|--quant int4 -n 80 -i 'Once upon a time, a dog' --draft early:4 --draft-tokens 5"
)

script='set -e
insmod "$WAFER_MODULE" num_devices=2'
for r in "${runs[@]}"; do
	IFS='|' read -r name submit args <<<"$r"
	script+="
$wafer run $common $args -d 0 --submit $submit >\"\$WAFER_RESULTS/$name.out\" 2>\"\$WAFER_RESULTS/$name.err\""
done
script+="
for f in \"\$WAFER_RESULTS\"/*.out \"\$WAFER_RESULTS\"/*.err; do echo \"=== \$(basename \"\$f\")\"; cat \"\$f\"; done
# the draft's device was left empty
echo '=== info1'; $wafer info -d 1
# two models side by side on one kernel device
echo '=== info2'; $wafer info -d 0 -m $models/stories260K.bin -m $models/stories260K.bin -q int4
echo '=== info0'; $wafer info -d 0
rmmod wafer"
vm_out=$("$vm" --no-module -- sh -c "$script") || { printf '%s\n' "$vm_out"; die "the guest failed"; }

section() { printf '%s\n' "$vm_out" | awk -v s="=== $1" '$0 == s { on = 1; next } /^=== / { on = 0 } on'; }

for r in "${runs[@]}"; do
	IFS='|' read -r name submit args <<<"$r"
	plain=${args%% --draft *}
	want=$(eval "\"$wafer\" run $common $plain --backend inproc" 2>/dev/null)
	got=$(section "$name.out")
	err=$(section "$name.err")
	[ -n "$want" ] || die "$name: the inproc backend printed nothing"
	if [ "$got" != "$want" ]; then
		printf '%s\n' "$err"
		diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | head -20
		die "$name: kernel --draft ($submit) differs from in-process plain decoding"
	fi
	expect_contains "$err" "^wafer: backend kernel \\(accel0, submit $submit\\)"
	expect_contains "$err" '^wafer: speculative decoding, draft .*acceptance [0-9.]+ %.* tokens per verify$'
	case $args in *--no-plain*) ;; *) expect_contains "$err" '^wafer: plain decoding: .*; text identical \(greedy\)$' ;; esac
	case $args in
	*ngram*) ;;
	*--draft-device*) expect_contains "$err" "^wafer: draft on accel1 \\(submit $submit\\)$" ;;
	*) expect_contains "$err" '^wafer: draft beside the model on its kernel device$' ;;
	esac
	echo "$name: kernel --draft ($submit) == in-process plain ($(printf '%s' "$got" | wc -c) bytes); $(grep -o 'acceptance.*' <<<"$err")"
done
# The int4 draft beside its target (int4b), on a device of its own (int4)
# and beside it in process: the same proposals, so the same acceptance.
acc() { grep -o 'acceptance [0-9.]* %.*tokens per verify'; }
acc_own=$(section int4.err | acc)
acc_beside=$(section int4b.err | acc)
acc_inproc=$("$wafer" run $common --quant int8 -n 100 --draft int4 --draft-tokens 4 --no-plain \
	--backend inproc 2>&1 >/dev/null | acc)
[ -n "$acc_own" ] && [ "$acc_own" = "$acc_beside" ] && [ "$acc_inproc" = "$acc_beside" ] ||
	die "the int4 draft beside its target accepts differently: beside '$acc_beside', own device '$acc_own', in process '$acc_inproc'"
echo "int4 draft beside the target on accel0 == on accel1 == in process: $acc_beside"
expect_contains "$(section info2)" '^models: +2 loaded side by side, [0-9]+ KiB of SRAM free$'
expect_contains "$(section info0)" '^now: +0 models loaded, 0 contexts'
expect_contains "$(section info1)" '^now: +0 models loaded, 0 contexts'
