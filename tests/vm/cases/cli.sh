# The wafer CLI finds the devices through libwafer.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
out=$("$vm" --params num_devices=2 -- "$build/bin/wafer" list)
printf '%s\n' "$out"
expect_contains "$out" '^accel0  /dev/accel/accel0  wafer '
expect_contains "$out" '^accel1  /dev/accel/accel1  wafer '
out=$("$vm" -- "$build/bin/wafer" info -d 0)
expect_contains "$out" '^device: +accel0'
