# wafer-vm: stock-only
# (figures, and the debug kernel is built without RDMA: tests/setup/debug.config)
#
# `wafer bench --link-loopback` beside perftest on the same Soft-RoCE device
# (tests/vm/rxe-up): libwafer's link (latency: half a record's round trip
# with its credit; bandwidth: every slot in flight) and ib_write_lat /
# ib_write_bw at 2 and 65536 bytes.  Checks that every row is there and is
# a number; the figures are for docs/SCALE-OUT.md, not thresholds.
. "$(dirname "$0")/../lib.sh"
wafer=$build/bin/wafer
[ -x "$wafer" ] || die "$wafer missing: run make"
out=$("$vm" --no-module -- bash -c '
	set -u
	'"$repo"'/tests/vm/rxe-up || exit 125
	a=10.9.0.1 rc=0
	# perftest: a server, then its client (rdma_cm connects them).
	perf() {
		"$@" >/tmp/perf.srv 2>&1 &
		sleep 2
		"$@" $a 2>&1 | sed -n "/#bytes/,/^-/p" | sed "s/^/perftest: /" || rc=1
		wait $! || rc=1
	}
	perf ib_write_lat -d rxe0 -R -F -s 2 -n 200
	perf ib_write_lat -d rxe0 -R -F -s 65536 -n 200
	perf ib_write_bw -d rxe0 -R -F -s 2 -n 200
	perf ib_write_bw -d rxe0 -R -F -s 65536 -n 200
	'"$wafer"' bench --link-loopback $a --iters 100 --sizes 2,64,1024,4096,65536,1048576 || rc=1
	'"$repo"'/tests/vm/rxe-up --down
	exit $rc') || { printf '%s\n' "$out"; die "link bench failed"; }
printf '%s\n' "$out"
num='[0-9]+\.[0-9]+'
for s in 2 64 1024 4096 65536 1048576; do
	expect_contains "$out" "^ +$s +$num +$num +$num$"
done
expect_contains "$out" '^link to 10\.9\.0\.1:[0-9]+: RDMA verbs, 16 slots of 1048576 bytes'
expect_contains "$out" "^perftest:  2 +200 +$num"
expect_contains "$out" "^perftest:  65536 +200 +$num"
