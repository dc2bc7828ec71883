# wafer-vm: stock-only
# (the debug kernel is built without RDMA and udmabuf: tests/setup/debug.config)
#
# The link between two hosts: two guests joined by QEMU's -netdev socket on
# 127.0.0.1 (tests/vm/run --net-socket), each with wafer.ko and Soft-RoCE
# on its virtio-net (tests/vm/rxe-up eth0).  The receiver's guest imports
# its slots into its wafer device; 40 records from the other guest land bit
# for bit in the slots and through the device's import, each slot's
# syncobj signalled, every credit back across the wire.
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/link
[ -x "$prog" ] || die "$prog missing: run make"
port=$((20000 + $$ % 20000))
# Generous: the other guest boots meanwhile (TCG, a shared machine).
export LINK_TIMEOUT_MS=60000
recv_out=$(mktemp) send_out=$(mktemp)
trap 'rm -f "$recv_out" "$send_out"' EXIT
"$vm" --mem 1024 --net-socket "listen:$port" -- bash -c '
	'"$repo"'/tests/vm/rxe-up eth0 10.9.1.1/24 || exit 125
	echo "host A: $(rdma link show rxe0/1)"
	'"$prog"' recv 10.9.1.1 7471 --drm --slots 4 --bytes 8192' >"$recv_out" 2>&1 &
rpid=$!
sleep 5
"$vm" --mem 1024 --net-socket "connect:$port" -- bash -c '
	'"$repo"'/tests/vm/rxe-up eth0 10.9.1.2/24 || exit 125
	echo "host B: $(rdma link show rxe0/1)"
	# Until host A listens (it may still be booting).
	for i in $(seq 60); do
		out=$('"$prog"' send 10.9.1.1 7471 --count 40 --len 5000) && break
		case $out in *resolving*|*connecting*) sleep 3 ;; *) break ;; esac
	done
	printf "%s\n" "$out"
	case $out in "ok - "*) exit 0 ;; *) exit 1 ;; esac' >"$send_out" 2>&1 || src=$?
rrc=0
wait "$rpid" || rrc=$?
out="$(cat "$send_out")
$(cat "$recv_out")"
[ "${src:-0}" = 0 ] && [ "$rrc" = 0 ] || { printf '%s\n' "$out"; die "link between guests failed"; }
printf '%s\n' "$out"
! grep -q '^not ok' <<<"$out" || die "a check failed"
expect_contains "$out" '^host A: .*state ACTIVE.*netdev eth0'
expect_contains "$out" '^host B: .*state ACTIVE.*netdev eth0'
expect_contains "$out" '^ok - sent 40 records of 5000 bytes, every credit back'
expect_contains "$out" '^accepted 10\.9\.1\.2:[0-9]+: 4 slots of 8192 bytes'
expect_contains "$out" '^ok - 40 of 40 records bit-exact in their slots'
expect_contains "$out" '^ok - 40 of 40 slot syncobjs signalled on arrival'
expect_contains "$out" '^ok - 40 of 40 records read the same through the device'
