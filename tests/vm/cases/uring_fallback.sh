# With io_uring disabled by sysctl, libwafer falls back to the ioctl path
# (same text), and asking for io_uring explicitly fails with a clear message.
# wafer-vm: stock-only
# It sets the kernel.io_uring_disabled sysctl: a guest of its own.
# wafer-vm: own-guest
. "$(dirname "$0")/../lib.sh"
models=$(cd "$repo/.." && pwd)/shared/models
run="$build/bin/wafer run $models/stories260K.bin -z $models/tok512.bin -n 24"
out=$("$vm" -- bash -c "
	$run --backend inproc > \$WAFER_RESULTS/inproc 2>/dev/null || exit 1
	sysctl -q kernel.io_uring_disabled=2 || exit 1
	$run > \$WAFER_RESULTS/auto 2> \$WAFER_RESULTS/auto.err || exit 1
	cmp \$WAFER_RESULTS/inproc \$WAFER_RESULTS/auto && echo same-text
	grep -o 'submit [a-z]*' \$WAFER_RESULTS/auto.err | head -n 1
	$run --submit uring > /dev/null 2> \$WAFER_RESULTS/uring.err && echo uring-ran
	cat \$WAFER_RESULTS/uring.err
")
printf '%s\n' "$out"
expect_contains "$out" '^same-text$'
expect_contains "$out" 'ioctl'
expect_contains "$out" 'io_uring'
if grep -q '^uring-ran$' <<<"$out"; then
	die "--submit uring ran with io_uring disabled"
fi
