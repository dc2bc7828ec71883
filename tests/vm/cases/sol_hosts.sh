# wafer-vm: stock-only
# (stock only: two debug guests with 40 devices each cost minutes; the debug
# tier sees the same driver paths through `link` and `chain`)
# wafer-vm: two-hosts
#
# The seed's shape over hosts, one layer per device: `wafer convert
# --synthetic sol` (80 layers, 256 experts, top-10, one shared) over a chain
# of 80 kernel devices, 40 of wafer.ko on each of the pool's pair of guests
# (num_devices=40, one 384 KiB stage each: smaller than the blob's layer
# range + 1 MiB, so each loads its layer alone), a `wafer node` on each,
# the chain opened from host A (tests/vm/progs/sol_chain, libwafer's
# wafer_open_chain() as `wafer run --chain` opens it; the model loaded once:
# each member's LOAD carries its layer's part of the 16 MB blob, all sent
# before the first answer is read):
#
# - its greedy token ids and text (a prompt, a few tokens) are one
#   in-process device's, bit for bit;
# - its modelled decode rate with B = 8 sequences in flight (wt_rate.c, as
#   tests/unit/userlib_sol measures in process) is `wafer plan`'s for the
#   same shape on 80 devices within 5 %; both printed;
# - in one host, no node: the first 8 layers (`--layers 8`) over 8 of host
#   A's kernel devices as a local pipeline (`-d 0-7`: syncobjs and PRIME
#   between devices of one kernel) print one in-process device's text
#   (stock-only as well: bit-exactness is libwafer's and the firmware's;
#   the driver's paths of a pipeline are the debug tier's through `chain`).
#
# Each host's job is a script in $work (the guests see the host's root);
# host B's node serves until the case creates $done.
. "$(dirname "$0")/../lib.sh"
models=${WAFER_MODELS:-$repo/../shared/models}
wafer=$build/bin/wafer
prog=$build/tests/vm/sol_chain
[ -x "$prog" ] && [ -x "$wafer" ] || die "$prog or $wafer missing: run make"
work=$(mktemp -d "$repo/build/vm/sol_hosts.XXXXXX")
b_out=$(mktemp)
trap 'rm -rf "$work" "$b_out"' EXIT
done=$work/done
blob=$work/sol.blob
blob8=$work/sol8.blob
args8="$blob8 -z $models/tok512.bin -t 0 -n 6 -i 'Once upon a time'"
chain=10.9.1.1:7471:0-39,10.9.1.2:7471:0-39

t0=$(date +%s)
"$wafer" convert --synthetic sol "$blob" --group 4 2>/dev/null || die "convert --synthetic sol"
"$wafer" convert --synthetic sol --layers 8 "$blob8" --group 4 2>/dev/null ||
	die "convert --synthetic sol --layers 8"
want=$("$prog" "$blob" "$models/tok512.bin" inproc 1 | grep -a '^greedy: ')
want8=$(eval "\"$wafer\" run $args8 --backend inproc" 2>/dev/null)
[ -n "$want" ] && [ -n "$want8" ] || die "the inproc backend printed nothing"

cat >"$work/common.sh" <<EOF
$repo/tests/vm/rxe-up || exit 125
insmod "\$WAFER_MODULE" num_devices=40 stages=1 sram_kib=384 || exit 1
# this host's node over its 40 devices, in the background, once it listens
$wafer node -d 0-39 --listen \$WAFER_HOST_ADDR --port 7471 >/tmp/node.log 2>&1 &
n=\$!
for _ in \$(seq 300); do
	grep -q "listening on" /tmp/node.log && break
	kill -0 \$n 2>/dev/null || { cat /tmp/node.log; exit 1; }
	sleep 0.2
done
EOF
cat >"$work/b.sh" <<EOF
. $work/common.sh
while [ ! -e $done ] && kill -0 \$n 2>/dev/null; do sleep 1; done
kill \$n; wait \$n
echo "=== log-B"; cat /tmp/node.log
rmmod wafer
EOF
cat >"$work/a.sh" <<EOF
. $work/common.sh
# host B sets up meanwhile: wait until its node answers (a probe it logs and drops)
for _ in \$(seq 300); do
	(exec 3<>/dev/tcp/\$WAFER_PEER_ADDR/7471) 2>/dev/null && break
	sleep 1
done
s=\$(date +%s)
echo "=== chain"; $prog $blob $models/tok512.bin $chain 8
echo "=== time: \$(( \$(date +%s) - s )) s for the chain in guest A"
kill \$n; wait \$n
echo "=== k8.out"; $wafer run $args8 -d 0-7 2>/tmp/k8.err
echo "=== k8.err"; cat /tmp/k8.err
echo "=== log-A"; cat /tmp/node.log
rmmod wafer
EOF

"$vm" --no-module --timeout 1200 --peer -- bash "$work/b.sh" >"$b_out" 2>&1 &
bpid=$!
out=$("$vm" --no-module --timeout 1200 -- bash "$work/a.sh" 2>&1) ||
	{ : >"$done"; wait "$bpid"; printf '%s\n' "$out"; cat "$b_out"; die "host A failed"; }
: >"$done"
wait "$bpid" || { printf '%s\n' "$out"; cat "$b_out"; die "host B failed"; }
out="$out
$(cat "$b_out")"
printf '%s\n' "$out"

section() { printf '%s\n' "$out" | awk -v s="=== $1" '$0 == s { on = 1; next } /^=== / { on = 0 } on'; }
got=$(section chain | grep -a '^greedy: ')
[ -n "$want" ] || die "one in-process device printed no greedy text"
if [ "$got" != "$want" ]; then
	printf 'one device: %s\nthe chain:  %s\n' "$want" "$got"
	die "the chain of 80 devices over two hosts differs from one in-process device"
fi
echo "ok - 80 kernel devices over two hosts == one in-process device: ${got#greedy: }"
expect_contains "$(section log-A)" 'loaded layers 0\.\.0 \+embed$'
expect_contains "$(section log-A)" 'loaded layers 39\.\.39$'
expect_contains "$(section log-B)" 'loaded layers 40\.\.40$'
expect_contains "$(section log-B)" 'loaded layers 79\.\.79 \+head$'
got8=$(section k8.out)
if [ "$got8" != "$want8" ]; then
	diff <(printf '%s\n' "$want8") <(printf '%s\n' "$got8") | head -20
	section k8.err
	die "8 layers over 8 kernel devices of one host differ from one in-process device"
fi
expect_contains "$(section k8.err)" 'pipeline of 8 kernel devices'
echo "ok - 8 layers over 8 kernel devices of host A == one in-process device"
rate=$(section chain)
expect_contains "$rate" '^ok - 80 devices over the chain, B = 8: run [0-9]+ tok/s, plan [0-9]+ tok/s'
! grep -aq '^not ok' <<<"$rate" || die "the rate check failed"
echo "sol_hosts: $(( $(date +%s) - t0 )) s in all"
