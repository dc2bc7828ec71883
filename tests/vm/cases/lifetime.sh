# Unbinding the device under a client with mapped BOs and jobs in flight
# (io_uring and ioctl): jobs fail with -ENODEV, the file closes cleanly,
# the module stays loaded while in use and unloads after; rebinding works.
. "$(dirname "$0")/../lib.sh"
"$vm" -- "$build/tests/vm/lifetime"
# Load/unload cycles with and without a client in between.
"$vm" --no-module -- sh -c '
	for i in 1 2 3 4 5 6 7 8 9 10; do
		insmod "$WAFER_MODULE" num_devices=2 || exit 1
		[ $((i % 2)) = 0 ] && build/bin/wafer list >/dev/null
		rmmod wafer || exit 1
	done'
