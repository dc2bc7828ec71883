# Allocation fault injection (failslab, fail_page_alloc, fail-nth) on every
# allocation the driver's paths make: BO create/mmap, model load, context
# create, submit by ioctl and io_uring, syncobjs.  Needs the debug kernel;
# skipped (77) on a kernel without fault injection.
# It sets failslab and fail_page_alloc attributes: a guest of its own.
# wafer-vm: own-guest
. "$(dirname "$0")/../lib.sh"
skip() {
	echo "SKIP: the guest kernel has no allocation fault injection (use the debug kernel)"
	exit 77
}
# Debian's kernel is built without it: its config says so without a boot.
if [ "${WAFER_VM_KERNEL:-stock}" = stock ]; then
	cache=$("$repo/tests/setup/setup" --print-cache)
	grep -qx 'CONFIG_FAILSLAB=y' "$cache"/root/boot/config-"$(cat "$cache/krelease")" || skip
fi
rc=0
# The harness (tests/vm/run) scans the kernel log for reports: it must not
# have wrapped since the command began (a kept guest's log starts empty, so
# the mark is the command's own).
out=$("$vm" -- sh -c "echo wafer-fault-inject-begins >/dev/kmsg
	$build/tests/vm/fault_inject; rc=\$?
	dmesg | grep -q wafer-fault-inject-begins || { echo 'not ok - the kernel log wrapped'; rc=1; }
	exit \$rc") || rc=$?
printf '%s\n' "$out"
[ "$rc" != 77 ] || skip
[ "$rc" = 0 ] || die "fault_inject exited $rc"
expect_contains "$out" '^ok - MODEL_LOAD: [1-9][0-9]* injection points'
expect_contains "$out" '^ok - SUBMIT: [1-9][0-9]* injection points'
expect_contains "$out" '^ok - uring SUBMIT \(io-wq worker\): [1-9][0-9]* injection points'
if grep -q '^not ok' <<<"$out"; then die "failed checks"; fi
