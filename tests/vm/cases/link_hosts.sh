# wafer-vm: stock-only
# (stock only: two debug guests under TCG cost minutes; the debug tier sees
# the link's driver paths through `link`)
# wafer-vm: two-hosts
#
# The link between two hosts: the pool's pair of guests joined by QEMU's
# -netdev socket on 127.0.0.1 (tests/run, "The pool and kept guests"), each
# with wafer.ko and Soft-RoCE on its virtio-net (tests/vm/rxe-up), host A
# ("$vm" --) receiving, host B ("$vm" --peer --) sending:
#
# - 40 records from host B land in host A's slots bit for bit and read the
#   same through A's wafer device's import of the slots, each slot's
#   syncobj signalled, every credit back across the wire;
# - `wafer bench --link` between the hosts, beside perftest's ib_write_lat
#   and ib_write_bw on the same link (the figures of docs/PERF.md);
# - a dead host: B's NIC goes down (no disconnect reaches A) while A waits
#   for its next record; A's receiver fails at its timeout naming 10.9.1.2.
#   B's NIC comes back up only once A's receiver has ended (the case
#   creates $gone, which B's command waits for), and the pair is kept.
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/link
wafer=$build/bin/wafer
[ -x "$prog" ] && [ -x "$wafer" ] || die "$prog or $wafer missing: run make"
recv_out=$(mktemp) send_out=$(mktemp)
gone=$(mktemp -u "$repo/build/vm/link_hosts.XXXXXX")
trap 'rm -f "$recv_out" "$send_out" "$gone"' EXIT
perf='ib_write_lat -d rxe0 -R -F -s 2 -n 100
ib_write_lat -d rxe0 -R -F -s 65536 -n 100
ib_write_bw -d rxe0 -R -F -s 2 -n 100
ib_write_bw -d rxe0 -R -F -s 65536 -n 100'
sizes=2,64,1024,4096,65536,1048576

"$vm" --timeout 600 -- bash -c '
	'"$repo"'/tests/vm/rxe-up || exit 125
	echo "host A: $(rdma link show rxe0/1)"
	# Generous: host B may still be setting up.
	LINK_TIMEOUT_MS=60000 '"$prog"' recv $WAFER_HOST_ADDR 7471 --drm --slots 4 --bytes 8192 || exit 1
	timeout 300 '"$wafer"' bench --link-serve $WAFER_HOST_ADDR:7480 --count 1 --timeout 60000 || exit 1
	# Each perftest pair on a port of its own: a client must never reach
	# the server of the pair before while that one is still closing.
	port=18515
	while read -r cmd; do
		port=$((port + 1))
		timeout 120 $cmd -p $port >/dev/null 2>&1 ||
			{ echo "host A: $cmd -p $port failed ($?)"; exit 1; }
	done <<<"'"$perf"'"
	LINK_TIMEOUT_MS=10000 '"$prog"' recv $WAFER_HOST_ADDR 7472 | sed "s/^/dead host: /"
	' >"$recv_out" 2>&1 &
rpid=$!
"$vm" --timeout 600 --peer -- bash -c '
	'"$repo"'/tests/vm/rxe-up || exit 125
	echo "host B: $(rdma link show rxe0/1)"
	a=$WAFER_PEER_ADDR
	# Generous: host A sets up its slots on a busy machine meanwhile.
	export LINK_TIMEOUT_MS=60000
	# retry CMD...: until host A serves it (a minute at most).
	retry() {
		for _ in $(seq 30); do out=$("$@" 2>&1) && break; sleep 2; done
		printf "%s\n" "$out"
	}
	retry '"$prog"' send $a 7471 --count 40 --len 5000
	retry '"$wafer"' bench --link $a:7480 --iters 50 --sizes '"$sizes"'
	port=18515
	while read -r cmd; do
		port=$((port + 1))
		retry timeout 60 $cmd -p $port $a | sed -n "/#bytes/,/^-/p" | sed "s/^/perftest: /"
	done <<<"'"$perf"'"
	for _ in $(seq 30); do
		'"$prog"' send $a 7472 --count 10 --stall-after 3 >/tmp/s 2>&1 &
		spid=$!
		for _ in $(seq 20); do
			grep -q stalling /tmp/s && break 2
			kill -0 $spid 2>/dev/null || break
			sleep 0.5
		done
		sleep 2
	done
	ip link set eth0 down
	echo "host B: NIC down with 3 records sent"
	while [ ! -e '"$gone"' ]; do sleep 1; done
	ip link set eth0 up
	kill -KILL $spid 2>/dev/null
	wait
	'"$repo"'/tests/vm/rxe-up >/dev/null' >"$send_out" 2>&1 &
spid=$!
rrc=0
wait "$rpid" || rrc=$?
: >"$gone"
src=0
wait "$spid" || src=$?
out="$(cat "$send_out")
$(cat "$recv_out")"
[ "$rrc" = 0 ] || { printf '%s\n' "$out"; die "host A failed"; }
[ "$src" = 0 ] || { printf '%s\n' "$out"; die "host B failed"; }
printf '%s\n' "$out"
! grep -q '^not ok' <<<"$out" || die "a check failed"
num='[0-9]+\.[0-9]+'
expect_contains "$out" '^host A: .*state ACTIVE.*netdev eth0'
expect_contains "$out" '^host B: .*state ACTIVE.*netdev eth0'
expect_contains "$out" '^ok - sent 40 records of 5000 bytes, every credit back'
expect_contains "$out" '^accepted 10\.9\.1\.2:[0-9]+: 4 slots of 8192 bytes'
expect_contains "$out" '^ok - 40 of 40 records bit-exact in their slots'
expect_contains "$out" '^ok - 40 of 40 slot syncobjs signalled on arrival'
expect_contains "$out" '^ok - 40 of 40 records read the same through the device'
expect_contains "$out" '^link to 10\.9\.1\.1:7480: RDMA verbs, 16 slots of 1048576 bytes'
for s in ${sizes//,/ }; do
	expect_contains "$out" "^ +$s +$num +$num +$num$"
done
expect_contains "$out" "^perftest:  2 +100 +$num"
expect_contains "$out" "^perftest:  65536 +100 +$num"
expect_contains "$out" '^host B: NIC down with 3 records sent'
expect_contains "$out" '^dead host: ok - 3 of 3 records bit-exact in their slots'
expect_contains "$out" '^dead host: closed: link from peer 10\.9\.1\.2:[0-9]+: no record within 10000 ms'
