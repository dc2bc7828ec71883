# Unbinding the device under a client with mapped BOs and jobs in flight
# (io_uring and ioctl): jobs fail with -ENODEV, the file closes cleanly,
# the module stays loaded while in use and unloads after; rebinding works.
. "$(dirname "$0")/../lib.sh"
"$vm" -- "$build/tests/vm/lifetime"
