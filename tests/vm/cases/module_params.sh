# Out-of-range num_devices is refused at load time with a clear message,
# and the harness reports the failed load instead of running the command.
. "$(dirname "$0")/../lib.sh"
for n in 0 17; do
	rc=0
	out=$("$vm" --params "num_devices=$n" -- true 2>&1) || rc=$?
	[ "$rc" != 0 ] || die "num_devices=$n loaded"
	expect_contains "$out" "insmod .*num_devices=$n"
done
# 16 devices with 1 MiB SRAM stages (16 x 64 MiB would crowd a debug guest).
"$vm" --params 'num_devices=16 sram_kib=1024' -- test -c /dev/accel/accel15
