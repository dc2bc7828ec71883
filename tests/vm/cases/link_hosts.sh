# wafer-vm: stock-only
# (the debug kernel is built without RDMA and udmabuf: tests/setup/debug.config)
#
# The link between two hosts: two guests joined by QEMU's -netdev socket on
# 127.0.0.1 (tests/vm/run --net-socket), each with wafer.ko and Soft-RoCE
# on its virtio-net (tests/vm/rxe-up eth0), booted once for all of:
#
# - 40 records from host B land in host A's slots bit for bit and read the
#   same through A's wafer device's import of the slots, each slot's
#   syncobj signalled, every credit back across the wire;
# - `wafer bench --link` between the hosts, beside perftest's ib_write_lat
#   and ib_write_bw on the same link (the figures of docs/SCALE-OUT.md);
# - a dead host: B powers off (no disconnect reaches A) while A waits for
#   its next record; A's receiver fails at its timeout naming 10.9.1.2.
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/link
wafer=$build/bin/wafer
[ -x "$prog" ] && [ -x "$wafer" ] || die "$prog or $wafer missing: run make"
port=$((20000 + $$ % 20000))
recv_out=$(mktemp) send_out=$(mktemp)
trap 'rm -f "$recv_out" "$send_out"' EXIT
perf='ib_write_lat -d rxe0 -R -F -s 2 -n 100
ib_write_lat -d rxe0 -R -F -s 65536 -n 100
ib_write_bw -d rxe0 -R -F -s 2 -n 100
ib_write_bw -d rxe0 -R -F -s 65536 -n 100'
sizes=2,64,1024,4096,65536,1048576

"$vm" --mem 1024 --timeout 600 --net-socket "listen:$port" -- bash -c '
	'"$repo"'/tests/vm/rxe-up eth0 10.9.1.1/24 || exit 125
	echo "host A: $(rdma link show rxe0/1)"
	# Generous: host B may still be booting.
	LINK_TIMEOUT_MS=60000 '"$prog"' recv 10.9.1.1 7471 --drm --slots 4 --bytes 8192 || exit 1
	timeout 300 '"$wafer"' bench --link-serve 10.9.1.1:7480 --count 1 --timeout 60000 || exit 1
	while read -r cmd; do timeout 120 $cmd >/dev/null 2>&1 || exit 1; done <<<"'"$perf"'"
	LINK_TIMEOUT_MS=10000 '"$prog"' recv 10.9.1.1 7472 | sed "s/^/dead host: /"
	' >"$recv_out" 2>&1 &
rpid=$!
sleep 5
# Host B ends by powering off: its tests/vm/run reports a guest that did
# not finish, which is the point; its output up to there is what counts.
"$vm" --mem 1024 --timeout 600 --net-socket "connect:$port" -- bash -c '
	'"$repo"'/tests/vm/rxe-up eth0 10.9.1.2/24 || exit 125
	echo "host B: $(rdma link show rxe0/1)"
	# Generous: host A sets up its slots on a busy machine meanwhile.
	export LINK_TIMEOUT_MS=60000
	# retry CMD...: until host A serves it (a minute at most).
	retry() {
		for _ in $(seq 30); do out=$("$@" 2>&1) && break; sleep 2; done
		printf "%s\n" "$out"
	}
	retry '"$prog"' send 10.9.1.1 7471 --count 40 --len 5000
	retry '"$wafer"' bench --link 10.9.1.1:7480 --iters 50 --sizes '"$sizes"'
	while read -r cmd; do
		retry $cmd 10.9.1.1 | sed -n "/#bytes/,/^-/p" | sed "s/^/perftest: /"
	done <<<"'"$perf"'"
	for _ in $(seq 30); do
		'"$prog"' send 10.9.1.1 7472 --count 10 --stall-after 3 >/tmp/s 2>&1 &
		for _ in $(seq 20); do
			grep -q stalling /tmp/s && break 2
			kill -0 $! 2>/dev/null || break
			sleep 0.5
		done
		sleep 2
	done
	echo "host B: powering off with 3 records sent"
	sync
	echo o >/proc/sysrq-trigger
	sleep 30' >"$send_out" 2>&1 || true
rrc=0
wait "$rpid" || rrc=$?
out="$(cat "$send_out")
$(cat "$recv_out")"
[ "$rrc" = 0 ] || { printf '%s\n' "$out"; die "host A failed"; }
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
expect_contains "$out" '^host B: powering off with 3 records sent'
expect_contains "$out" '^dead host: ok - 3 of 3 records bit-exact in their slots'
expect_contains "$out" '^dead host: closed: link from peer 10\.9\.1\.2:[0-9]+: no record within 10000 ms'
