# libwafer's host-to-host link (userlib/wafer_link.h) between two processes
# of one guest over Soft-RoCE (rxe on a dummy netdev, tests/vm/rxe-up):
#
# - round trip: 40 records of 5000 bytes through 4 slots of 8 KiB (udmabuf
#   imports: the receiver says rxe cannot register a dma-buf), each
#   bit-exact in the receiver's slot, read the same through the device's
#   PRIME import of the slot (udmabuf), its syncobj signalled on arrival;
#   credits flow (the sender gets every one back, 10 times round the ring);
# - hostile senders, each closed with a message naming the peer and what
#   was wrong, the held slot untouched: garbage for a hello, another
#   version (refused, the sender is told why), a silent peer (closed at
#   the timeout), then after one good record: a replayed sequence, a
#   skipped one, a slot out of range, the wrong slot, an empty one, and a
#   write longer than the slot (refused by the NIC: nothing lands in any
#   slot; a peer that passed the hello can otherwise write into a free slot,
#   which is never delivered: docs/SCALE-OUT.md);
# - dead peers, bounded by the link's timeout: a sender that hangs (the
#   receiver: no record within the timeout), a sender killed (the
#   receiver: disconnected), a receiver that holds every slot (the sender:
#   no credit within the timeout);
# - `wafer bench --link-loopback`: both ends of the benchmark in one process,
#   a row per size (the figures between two hosts are link_hosts').
#
# On the debug kernel too: the only case whose kernel paths are a foreign
# dma-buf PRIME-imported into wafer.ko (udmabuf's), mmap of that import,
# its syncobjs signalled from userspace on arrival, and rxe's queue pairs
# and memory registrations torn down by refusals, errors and kills.  There
# 12 records go round the ring 3 times, the benchmark takes 3 iterations
# and the link's timeout is 12 s.
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/link
wafer=$build/bin/wafer
[ -x "$prog" ] && [ -x "$wafer" ] || die "$prog or $wafer missing: run make"
# The debug kernel under TCG takes seconds to start a peer and connect it:
# the link's timeout there is long enough for the receiver's next accept.
records=40 iters=10 tmo=4000
[ "${WAFER_VM_KERNEL:-stock}" != debug ] || records=12 iters=3 tmo=12000
out=$("$vm" -- bash -c '
	set -u
	'"$repo"'/tests/vm/rxe-up || exit 125
	p='"$prog"' a=10.9.0.1 rc=0
	export LINK_TIMEOUT_MS='"$tmo"'
	# start_recv LOG ARGS...: a receiver in the background, once listening.
	start_recv() {
		log=$1; shift
		$p recv $a "$@" >"$log" 2>&1 &
		rpid=$!
		for _ in $(seq 100); do grep -q listening "$log" && return 0; sleep 0.2; done
		echo "receiver did not listen:"; cat "$log"; return 1
	}
	echo "== round trip"
	start_recv /tmp/r1 7471 --drm --slots 4 --bytes 8192 || rc=1
	$p send $a 7471 --count '"$records"' --len 5000 || rc=1
	wait $rpid || rc=1
	cat /tmp/r1
	echo "== hostile"
	start_recv /tmp/r2 7472 --accepts 8 --hold --drm || rc=1
	for m in garbage version silent replay skip slot wrongslot empty; do
		echo "-- $m"
		$p hostile $a 7472 $m || rc=1
	done
	wait $rpid || true
	cat /tmp/r2
	start_recv /tmp/r6 7476 --hold || rc=1
	$p hostile $a 7476 overlong || rc=1
	wait $rpid || true
	sed "s/^/overlong: /" /tmp/r6
	echo "== dead peers"
	start_recv /tmp/r3 7473 || rc=1
	$p send $a 7473 --count 10 --stall-after 3 >/tmp/s3 2>&1 &
	spid=$!
	wait $rpid || true
	kill $spid; wait $spid 2>/dev/null
	sed "s/^/hung: /" /tmp/r3
	start_recv /tmp/r4 7474 || rc=1
	$p send $a 7474 --count 10 --stall-after 3 >/tmp/s4 2>&1 &
	spid=$!
	while ! grep -q stalling /tmp/s4; do sleep 0.2; done
	kill -KILL $spid
	wait $rpid || true
	sed "s/^/killed: /" /tmp/r4
	start_recv /tmp/r5 7475 --hold --slots 2 || rc=1
	echo "-- receiver holding every slot"
	$p send $a 7475 --count 6 && rc=1
	kill $rpid 2>/dev/null; wait $rpid 2>/dev/null
	echo "== loopback bench"
	'"$wafer"' bench --link-loopback $a --iters '"$iters"' --sizes 2,65536 || rc=1
	'"$repo"'/tests/vm/rxe-up --down
	exit $rc') || { printf "%s\n" "$out"; die "link failed"; }
printf '%s\n' "$out"
! grep -q '^not ok' <<<"$out" || die "a check failed"
! grep -q 'was overwritten' <<<"$out" || die "a bad record overwrote a held slot"
expect_contains "$out" "^ok - sent $records records of 5000 bytes, every credit back"
expect_contains "$out" "^ok - $records of $records records bit-exact in their slots"
expect_contains "$out" "^ok - $records of $records slot syncobjs signalled on arrival"
expect_contains "$out" "^ok - $records of $records records read the same through the device"
expect_contains "$out" '^ok - slot 3 is a PRIME import on the device \(8192 bytes\)'
expect_contains "$out" '^slots: udmabuf import \(rxe0 cannot register a dma-buf: .+\)$'
peer='link from peer 10\.9\.0\.1:[0-9]+'
expect_contains "$out" "^refused: $peer: refused: bad magic 0x20544547"
expect_contains "$out" "^refused: $peer: refused: peer speaks link version 2, this end 1$"
# The refusal is sent before the hang-up, but on Soft-RoCE the hang-up can
# overtake it (in about one run in six): the sender then reads only that.
expect_contains "$out" "^hostile version: link to peer 10\.9\.0\.1:7472: (refused the hello: peer speaks link version 2|disconnected)"
expect_contains "$out" "^refused: $peer: connected and sent no hello within $tmo ms"
expect_contains "$out" "^closed: $peer: replayed sequence 0 \(expected 1\)"
expect_contains "$out" "^closed: $peer: skipped to sequence 2 \(expected 1\)"
expect_contains "$out" "^closed: $peer: record for slot 200 out of range \(4 slots\)"
expect_contains "$out" "^closed: $peer: sequence 1 in slot 2 \(expected slot 1\)"
expect_contains "$out" "^closed: $peer: record length 0 out of range"
# Longer than the slot's registration: the NIC refuses it, nothing lands.
expect_contains "$out" "^hostile overlong: link to peer 10\.9\.0\.1:7476: RDMA write failed: remote access error"
expect_contains "$out" "^overlong: closed: $peer: the queue pair failed"
expect_contains "$out" "^overlong: free slots written but not delivered: 0"
expect_contains "$out" "^hung: closed: $peer: no record within $tmo ms"
expect_contains "$out" "^killed: closed: $peer: disconnected"
expect_contains "$out" "^send failed: link to peer 10\.9\.0\.1:7475: no credit returned within $tmo ms"
num='[0-9]+\.[0-9]+'
expect_contains "$out" '^link to 10\.9\.0\.1:[0-9]+: RDMA verbs, 16 slots of 1048576 bytes'
for s in 2 65536; do
	expect_contains "$out" "^ +$s +$num +$num +$num$"
done
