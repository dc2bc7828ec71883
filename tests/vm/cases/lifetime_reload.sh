# Load/unload cycles (20 by default): odd ones bare, even ones with a client
# that loads the shared model and checks a short decode
# (tests/vm/progs/lifetime_client.c); every fifth client also tries to
# remove the module while its file is open, which must fail and leave the
# device working.  Every rmmod after a cycle must succeed.
# Knob: WAFER_RELOAD_CYCLES (default 20, 10 on the debug kernel, which takes
# ~5-8 s each).
# The debug kernel's checkers see these paths in lifetime and every debug
# case's module unload: stock only, for test time.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
client=$build/tests/vm/lifetime_client
[ -x "$client" ] || die "$client missing: run make"
cycles=${WAFER_RELOAD_CYCLES:-20}
# 10 on the debug kernel: each path its detectors watch is taken 20 times.
[ "${WAFER_VM_KERNEL:-stock}" != debug ] || cycles=${WAFER_RELOAD_CYCLES:-10}
held=$((cycles / 10))
t0=$(date +%s)
out=$("$vm" --no-module --timeout 1800 -- bash -c '
	set -u
	bare=0 clients=0 held=0 t0=$(date +%s%N) ms_bare=0 ms_client=0
	for i in $(seq 1 "$2"); do
		tc=$(date +%s%N)
		insmod "$WAFER_MODULE" || { echo "cycle $i: insmod failed"; exit 1; }
		if [ $((i % 2)) = 1 ]; then
			bare=$((bare + 1))
		elif [ $((i % 10)) = 0 ]; then
			"$1" hold >"/tmp/client.$i" 2>&1 ||
				{ echo "cycle $i:"; cat "/tmp/client.$i"; exit 1; }
			held=$((held + 1))
		else
			"$1" run >"/tmp/client.$i" 2>&1 ||
				{ echo "cycle $i:"; cat "/tmp/client.$i"; exit 1; }
			clients=$((clients + 1))
		fi
		rmmod wafer || { echo "cycle $i: rmmod failed"; exit 1; }
		tc=$((($(date +%s%N) - tc) / 1000000))
		if [ $((i % 2)) = 1 ]; then
			ms_bare=$((ms_bare + tc))
		else
			ms_client=$((ms_client + tc))
		fi
	done
	! grep -h "^not ok" /tmp/client.* || exit 1
	echo "# reload loop: $((($(date +%s%N) - t0) / 1000000)) ms;" \
		"per cycle: bare $((ms_bare / (bare ? bare : 1))) ms," \
		"with a client $((ms_client / (clients + held ? clients + held : 1))) ms"
	echo "reload cycles: $((bare + clients + held)) ($bare bare, $clients with a client," \
		"$held with rmmod refused while in use)"
' _ "$client" "$cycles") || { printf '%s\n' "${out:-}"; die "the reload loop failed"; }
printf '%s\n' "$out"
expect_contains "$out" "^reload cycles: $cycles \($((cycles - cycles / 2)) bare, $((cycles / 2 - held)) with a client, $held with rmmod refused while in use\)\$"
echo "# $cycles reload cycles took $(($(date +%s) - t0)) s with the VM boot"
