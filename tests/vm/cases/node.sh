# wafer-vm: stock-only
# (the debug kernel is built without RDMA and udmabuf: tests/setup/debug.config)
# `wafer node` and `wafer run --chain` in one guest: two node processes,
# each owning one kernel device, over the one Soft-RoCE device
# (tests/vm/rxe-up); the model's layers split over them, jobs carried by
# the link (records in udmabuf slots PRIME-imported into each device).
. "$(dirname "$0")/../lib.sh"
models=${WAFER_MODELS:-$repo/../shared/models}
wafer=$build/bin/wafer
common="$models/stories260K.bin -z $models/tok512.bin -t 0"
a=10.9.0.1
chain="--chain $a:7471:0,$a:7472:1"

# name|arguments
runs=(
	"int8|--quant int8 -n 200"
	"int4-prompt|--quant int4 -n 128 -i 'Once upon a time, a dog'"
)

script='set -u
'"$repo"'/tests/vm/rxe-up || exit 125
insmod "$WAFER_MODULE" num_devices=2 || exit 1
w='"$wafer"'
node() { # node LOG DEVICE PORT: a node in the background, once listening
	$w node -d $2 --listen '"$a"' --port $3 --timeout 5000 >$1 2>&1 &
	for _ in $(seq 100); do grep -q listening $1 && return 0; sleep 0.2; done
	echo "node did not listen:"; cat $1; return 1
}
node /tmp/nA 0 7471 && nA=$!
node /tmp/nB 1 7472 && nB=$!'
for r in "${runs[@]}"; do
	IFS='|' read -r name args <<<"$r"
	script+="
echo '=== $name.out'; $wafer run $common $args $chain 2>/tmp/$name.err
echo '=== $name.err'; cat /tmp/$name.err"
done
script+='
echo "=== node-logs"; cat /tmp/nA /tmp/nB
kill $nA $nB; wait
'"$repo"'/tests/vm/rxe-up --down
rmmod wafer'
vm_out=$("$vm" --no-module -- bash -c "$script") || { printf '%s\n' "$vm_out"; die "the guest failed"; }
printf '%s\n' "$vm_out"

section() { printf '%s\n' "$vm_out" | awk -v s="=== $1" '$0 == s { on = 1; next } /^=== / { on = 0 } on'; }

for r in "${runs[@]}"; do
	IFS='|' read -r name args <<<"$r"
	want=$(eval "\"$wafer\" run $common $args --backend inproc" 2>/dev/null)
	got=$(section "$name.out")
	[ -n "$want" ] || die "$name: the inproc backend printed nothing"
	if [ "$got" != "$want" ]; then
		diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | head -20
		die "$name: the chain over two nodes differs from one in-process device"
	fi
	echo "ok - $name: the chain over two nodes == one in-process device ($(printf '%s' "$got" | wc -c) bytes)"
done
