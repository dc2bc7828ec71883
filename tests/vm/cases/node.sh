# wafer-vm: stock-only
# (stock only for time: a udmabuf slot PRIME-imported into the device and
# syncobjs signalled on arrival are the debug tier's through `link`; range
# loads and jobs reading BOs imported from another device through `chain`)
# `wafer node` and `wafer run --chain` in one guest: two node processes,
# each owning one kernel device, over the one Soft-RoCE device
# (tests/vm/rxe-up); the model's layers split over them, jobs carried by
# the RDMA link (records in udmabuf slots PRIME-imported into each device),
# control messages over TCP (docs/SCALE-OUT.md).
#
# - greedy text over the chain equals one in-process device's, int8, int4
#   with a prompt, an MoE model, an uneven --split;
# - hostile control peers, each refused or closed with the reason (to the
#   peer and in the node's log): garbage, another version, a device the
#   node does not own, a field out of range after a good hello, silence;
# - a node killed mid-run, the last member then the first: the run fails
#   by itself (no hang) naming the dead node's host, port and device; the
#   surviving node frees its device and the restarted node joins a new
#   chain (named by a JSON file after the first kill) whose text is again
#   the one device's, the run ending with status 0 (else it prints why);
# - wafer bench --chain prints its single and concurrent figures, and
#   wafer serve --chain answers a completion with the in-process text;
# - a node stopped (SIGSTOP: hung, its connections open) mid-run: the run
#   fails by itself naming it, the node that does not answer HEALTH, not
#   the member the client waits on;
# - a device held by a session whose client is connected: a new chain is
#   refused at once ("in another chain"); as soon as that client hangs up
#   a new chain runs (its HELLO waits for a session still leaving).
. "$(dirname "$0")/../lib.sh"
models=${WAFER_MODELS:-$repo/../shared/models}
wafer=$build/bin/wafer
common="$models/stories260K.bin -z $models/tok512.bin -t 0"
a=10.9.0.1
chain="--chain $a:7471:0,$a:7472:1"

# name|arguments|the chain's own (the text is one in-process device's with the arguments)
runs=(
	"int8|--quant int8 -n 100|"
	"int4-prompt|--quant int4 -n 64 -i 'Once upon a time, a dog'|"
	"moe-split|--quant int8 -n 64 --moe 4,2|--split 4,1"
)
after="--quant int8 -n 40"
body='{"model":"stories260K","prompt":"Once upon a time","max_tokens":24,"temperature":0}'

script='set -u
'"$repo"'/tests/vm/rxe-up || exit 125
insmod "$WAFER_MODULE" num_devices=2 || exit 1
w='"$wafer"' a='"$a"'
# node LOG DEVICE PORT: a node in the background, once it listens.  LOG is
# appended to (a restarted node keeps its earlier lines), so only this
# start of it counts: an earlier "listening" would let the next run
# connect before the restarted node listens (connection refused).
node() {
	local from=$(( $(wc -l <$1 2>/dev/null || echo 0) + 1 ))
	$w node -d $2 --listen $a --port $3 --timeout 5000 >>$1 2>&1 &
	for _ in $(seq 100); do
		tail -n +$from $1 | grep -q "listening on $a:$3" && return 0
		kill -0 $! 2>/dev/null || break
		sleep 0.2
	done
	echo "node did not listen:"; tail -n +$from $1; return 1
}
# peer NAME FORMATS...: a hostile control peer (each FORMAT a printf format of
# bytes); what the node answered, printable
peer() {
	name=$1; shift
	exec 3<>/dev/tcp/$a/7471
	for b in "$@"; do printf "$b" >&3; done
	echo "=== hostile-$name"; timeout 10 cat <&3 2>&1 | tr -c "[:print:]" "."; echo
	exec 3<&-
}
# hdr VERSION TYPE LEN: a control header (this end speaks node version 2)
hdr() { echo "WNOD\\x$1\\x00\\x$2\\x00\\x$3\\x00\\x00\\x00\\x00\\x00\\x00\\x00"; }
# killrun NAME PID [STOP]: a run ended mid-way by killing a node (STOP: by
# stopping it, then continuing it once the run ended)
killrun() {
	local sig=${3:-KILL}
	timeout 120 $w run '"$common"' --quant int8 -n 400 '"$chain"' >/tmp/$1.out 2>/tmp/$1.err &
	run=$!
	for _ in $(seq 600); do [ $(wc -c </tmp/$1.out) -gt 40 ] && break; sleep 0.1; done
	t0=$(date +%s%N); kill -$sig $2
	[ $sig = KILL ] && wait $2 2>/dev/null
	wait $run; rc=$?; t1=$(date +%s%N)
	[ $sig = STOP ] && kill -CONT $2
	echo "=== $1"; echo "rc $rc after the $sig: $(( (t1 - t0) / 1000000 )) ms"; cat /tmp/$1.err
}
# freed LOG N: waits until LOG says "left the chain" more than N times
freed() {
	for _ in $(seq 300); do
		[ $(grep -c "left the chain" $1) -gt $2 ] && return 0; sleep 0.1
	done
}
printf "{\"version\": 1, \"members\": [{\"host\": \"$a\", \"port\": 7471, \"devices\": 0},\n  {\"host\": \"$a\", \"port\": 7472, \"devices\": \"1\"}]}\n" >/tmp/chain.json
node /tmp/nA 0 7471 && nA=$!
node /tmp/nB 1 7472 && nB=$!'
for r in "${runs[@]}"; do
	IFS='|' read -r name args own <<<"$r"
	script+="
echo '=== $name.out'; \$w run $common $args $chain $own 2>/tmp/$name.err
echo '=== $name.err'; cat /tmp/$name.err"
done
script+='
peer garbage "GET / HTTP/1.0\r\n\r\n"
peer version "$(hdr 01 01 08)" "\x01\x00\x00\x00\x00\x00\x00\x00"
peer device "$(hdr 02 01 08)" "\x01\x00\x00\x00\x05\x00\x00\x00"
peer field "$(hdr 02 01 08)" "\x01\x00\x00\x00\x00\x00\x00\x00" "$(hdr 02 07 0c)" \
	"\x41\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00"
peer silent
echo "=== bench"; $w bench --chain "$a:7471:0,$a:7472:1" --quick --tokens 4 2>/tmp/bench.err
echo "=== bench.rc $?"; echo "=== bench.err"; cat /tmp/bench.err
body='"'$body'"'
$w serve '"$models/stories260K.bin -z $models/tok512.bin"' --chain /tmp/chain.json --slots 2 \
	--host $a --port 8000 >/tmp/serve.out 2>/tmp/serve.err &
srv=$!
for _ in $(seq 300); do curl -sf http://$a:8000/health >/dev/null && break; sleep 0.2; done
echo "=== serve"; curl -s -d "$body" http://$a:8000/v1/completions; echo
kill -TERM $srv; wait $srv; echo "=== serve.rc $?"
echo "=== serve.err"; cat /tmp/serve.out /tmp/serve.err
fa=$(grep -c "left the chain" /tmp/nA) fb=$(grep -c "left the chain" /tmp/nB)
killrun stop-first $nA STOP
freed /tmp/nA $fa; freed /tmp/nB $fb
killrun kill-last $nB
node /tmp/nB 1 7472 && nB=$!
# the new chain named by a JSON file
echo "=== after-last.out"; $w run '"$common $after"' --chain /tmp/chain.json 2>/tmp/after-last.err
echo "=== after-last.rc $?"
echo "=== after-last.err"; cat /tmp/after-last.err
killrun kill-first $nA
node /tmp/nA 0 7471 && nA=$!
echo "=== after-first.out"; $w run '"$common $after $chain"' 2>/tmp/after-first.err
echo "=== after-first.rc $?"
echo "=== after-first.err"; cat /tmp/after-first.err
# device 1 held by a session whose client is connected (a HELLO,
# answered): a chain started meanwhile is refused at once; once that
# client hangs up, a chain started at once runs (the run does not inherit
# its socket)
exec 3<>/dev/tcp/$a/7472
printf "$(hdr 02 01 08)\x01\x00\x00\x00\x01\x00\x00\x00" >&3
timeout 10 head -c 16 <&3 >/dev/null
$w run '"$common $after $chain"' >/dev/null 2>/tmp/busy.err 3<&-
echo "=== busy.rc $?"
echo "=== busy.err"; cat /tmp/busy.err
exec 3<&-
$w run '"$common $after $chain"' >/tmp/held.out 2>/tmp/held.err
echo "=== held.rc $?"
echo "=== held.out"; cat /tmp/held.out
echo "=== held.err"; cat /tmp/held.err
echo "=== log-A"; cat /tmp/nA
echo "=== log-B"; cat /tmp/nB
kill $nA $nB; wait
'"$repo"'/tests/vm/rxe-up --down
rmmod wafer'
vm_out=$("$vm" --no-module -- bash -c "$script") || { printf '%s\n' "$vm_out"; die "the guest failed"; }
printf '%s\n' "$vm_out"

section() { printf '%s\n' "$vm_out" | awk -v s="=== $1" '$0 == s { on = 1; next } /^=== / { on = 0 } on'; }

same() { # same NAME ARGS: section NAME.out is one in-process device's text
	local want got
	want=$(eval "\"$wafer\" run $common $2 --backend inproc" 2>/dev/null)
	got=$(section "$1.out")
	[ -n "$want" ] || die "$1: the inproc backend printed nothing"
	if [ "$got" != "$want" ]; then
		diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | head -20
		section "$1.err"
		die "$1: the chain over two nodes differs from one in-process device"
	fi
	echo "ok - $1: the chain over two nodes == one in-process device ($(printf '%s' "$got" | wc -c) bytes)"
}
for r in "${runs[@]}"; do
	IFS='|' read -r name args own <<<"$r"
	same "$name" "$args"
done
expect_contains "$(section int8.err)" "^wafer: chain $a:7471:0,$a:7472:1 "
logA=$(section log-A)
logB=$(section log-B)
expect_contains "$logA" 'loaded layers 0\.\.2 \+embed$'
expect_contains "$logB" 'loaded layers 3\.\.4 \+head$'
expect_contains "$logA" 'loaded layers 0\.\.3 \+embed$'
expect_contains "$logB" 'loaded layers 4\.\.4 \+head$'

h() { section "hostile-$1"; }
expect_contains "$(h garbage)" 'bad magic 0x20544547 \(not a wafer node peer\)'
expect_contains "$(h version)" 'peer speaks node version 1, this end 2'
expect_contains "$(h device)" 'HELLO: device 5 is not one of this node.s'
expect_contains "$(h field)" 'closed: CTX: ctx 65 out of range \(1\.\.64\)'
expect_contains "$(h silent)" 'connected and sent no hello in time'
for m in 'bad magic 0x20544547' 'peer speaks node version 1' 'device 5 is not one' \
	'closed: CTX: ctx 65 out of range' 'sent no hello in time'; do
	expect_contains "$logA" "$m"
done
echo "ok - hostile control peers are refused or closed, with the reason to the peer and in the log"

for k in last:7472:1 first:7471:0; do
	IFS=: read -r side port dev <<<"$k"
	out=$(section "kill-$side")
	rc=$(sed -n 's/^rc \([0-9]*\) .*/\1/p' <<<"$out")
	[ "$rc" != 0 ] || die "kill-$side: the run went on after its node died"
	[ "$rc" != 124 ] || die "kill-$side: the run hung until timeout(1) ended it"
	expect_contains "$out" "node $a:$port device $dev"
	echo "ok - kill-$side: $(head -1 <<<"$out"), the error names node $a:$port device $dev"
	rc=$(printf '%s\n' "$vm_out" | sed -n "s/^=== after-$side\.rc //p")
	if [ "$rc" != 0 ] || [ -z "$(section "after-$side.err")" ]; then
		section "after-$side.err"
		die "after-$side: the run after the restart ended with status '$rc'$(
			[ -n "$(section "after-$side.err")" ] || echo ' and printed no error')"
	fi
	same "after-$side" "$after"
done
expect_contains "$logA" 'left the chain; the device is free'
echo "ok - the surviving node freed its device; the restarted node joined a new chain"

# A stopped node (hung, its connections open) is named: it answers no HEALTH.
out=$(section stop-first)
rc=$(sed -n 's/^rc \([0-9]*\) .*/\1/p' <<<"$out")
[ "$rc" != 0 ] || die "stop-first: the run went on while its first node was stopped"
[ "$rc" != 124 ] || die "stop-first: the run hung until timeout(1) ended it"
expect_contains "$out" "node $a:7471 device 0: no answer to HEALTH in [0-9]+ ms \(the node hung\?\)"
echo "ok - stop-first: $(head -1 <<<"$out"), the error names the stopped node: $(grep -o 'node [^ ]* device 0: no answer[^;]*' <<<"$out" | head -1)"

# A chain started while a connected client holds a device is refused at
# once; started as soon as that client hangs up, it runs.
rc=$(printf '%s\n' "$vm_out" | sed -n "s/^=== busy\.rc //p")
[ "$rc" = 1 ] || die "busy: a chain started while device 1 was held ended with status '$rc'"
expect_contains "$(section busy.err)" "device 1 is in another chain"
rc=$(printf '%s\n' "$vm_out" | sed -n "s/^=== held\.rc //p")
if [ "$rc" != 0 ]; then
	section held.err
	die "held: the chain started when device 1's client hung up ended with status '$rc'"
fi
same held "$after"
echo "ok - held: refused while the holder was connected ($(grep -o 'device 1 is in another chain' <<<"$(section busy.err)" | head -1)), ran once it hung up$(grep -o '; device 1 was freed after [0-9]* ms' <<<"$logB" | tail -1)"

# wafer bench --chain: the single and concurrent tables, modelled figures from the chain.
b=$(section bench)
[ "$(printf '%s\n' "$vm_out" | sed -n "s/^=== bench\.rc //p")" = 0 ] || { section bench.err; die "bench --chain failed"; }
expect_contains "$b" '^  chain: wafer nodes over RDMA links, [0-9]+ stages in all'
expect_contains "$b" '^  chain +link +4 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+$'
expect_contains "$b" '^  chain +link +8 +32 +[0-9.]+ +[0-9.]+x +[0-9.]+ +[0-9.]+x$'
echo "ok - bench --chain: $(grep -E '^  chain +link +8 ' <<<"$b")"

# wafer serve --chain: one completion, the in-process server's text.
norm() { sed -e 's/"id":"[^"]*",//' -e 's/"created":[0-9]*,//'; }
got=$(section serve | norm)
[ "$(printf '%s\n' "$vm_out" | sed -n "s/^=== serve\.rc //p")" = 0 ] || { section serve.err; die "serve --chain did not exit 0 on SIGTERM"; }
hout=$(mktemp)
"$wafer" serve "$models/stories260K.bin" -z "$models/tok512.bin" --slots 2 --backend inproc \
	--port 0 >"$hout" 2>/dev/null &
hpid=$!
for _ in $(seq 100); do grep -q 'listening on' "$hout" && break; sleep 0.1; done
port=$(sed -n 's/.*listening on http:.*:\([0-9]*\)$/\1/p' "$hout")
want=
[ -z "$port" ] || want=$(curl -s -d "$body" "http://127.0.0.1:$port/v1/completions" | norm)
kill -TERM "$hpid"; wait "$hpid"; rm -f "$hout"
[ -n "$port" ] || die "the host's inproc server did not start"
expect_contains "$want" '"finish_reason":"(stop|length)"'
if [ "$got" != "$want" ]; then
	printf 'want %s\n got %s\n' "$want" "$got"
	section serve.err
	die "serve --chain: the completion differs from the in-process server's"
fi
echo "ok - serve --chain: a completion == the in-process server's ($(grep -o '"text":"[^"]*"' <<<"$got" | head -c 80)...)"
