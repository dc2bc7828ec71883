# Unbinding the device under a client with mapped BOs and jobs in flight
# (io_uring and ioctl): jobs fail with -ENODEV, the file closes cleanly,
# the module stays loaded while in use and unloads after; rebinding works.
. "$(dirname "$0")/../lib.sh"
"$vm" -- "$build/tests/vm/lifetime"

# 50 load/unload cycles: odd ones bare, even ones with a client that loads
# the shared model and checks a decode (tests/vm/progs/lifetime_client.c);
# every fifth client also tries to remove the module while its file is open,
# which must fail and leave the device working.  Every rmmod after must work.
client=$build/tests/vm/lifetime_client
[ -x "$client" ] || die "$client missing: run make"
t0=$(date +%s)
out=$("$vm" --no-module --timeout 1500 -- bash -c '
	set -u
	bare=0 clients=0 held=0
	for i in $(seq 1 50); do
		insmod "$WAFER_MODULE" num_devices=2 || { echo "cycle $i: insmod failed"; exit 1; }
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
	done
	grep -h "^not ok" /tmp/client.* && exit 1
	echo "reload cycles: $((bare + clients + held)) ($bare bare, $clients with a client, $held with rmmod refused while in use)"
' _ "$client") || { printf '%s\n' "${out:-}"; die "the reload loop failed"; }
printf '%s\n' "$out"
expect_contains "$out" '^reload cycles: 50 \(25 bare, 20 with a client, 5 with rmmod refused while in use\)$'
echo "# 50 reload cycles took $(($(date +%s) - t0)) s (VM boot included)"
