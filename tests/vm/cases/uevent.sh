# The module binds a platform device and registers /dev/accel/accel0.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
out=$("$vm" -- cat /sys/class/accel/accel0/device/uevent)
printf '%s\n' "$out"
expect_contains "$out" '^DRIVER=wafer$'
expect_contains "$out" '^MODALIAS=platform:wafer$'
