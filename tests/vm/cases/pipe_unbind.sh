# A member device of a libwafer multi-device backend unbound (sysfs) under
# a running `wafer run --backend kernel`: a 3-device pipeline (-d 0-2) and
# an attention-FFN pair (--afd 0:1), each by ioctl and by io_uring, device
# 1 unbound once it has completed 8 of the run's jobs.  Every run fails
# (exit 1) with "No such device" within its bound (no hang: each run is
# given 120 s); after binding the device again the same command prints
# exactly what one in-process device prints (device 1 comes back as
# accel1 or, while the old device is still held, under a new minor), and
# the kernel logs no warning (tests/vm/run's check of the guest log).
# The debug kernel's checkers see these paths in chain (a device of a pipeline
# unbound under queued work): stock only, for test time.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
models=${WAFER_MODELS:-$repo/../shared/models}
wafer=$build/bin/wafer
common="$models/stories260K.bin -z $models/tok512.bin -t 0 --backend kernel"
# Tokens of the run after the bind: it proves the members work again and
# agree with one device; the debug kernel's detectors watch the unbind, the
# bind and a chain's first jobs over the new device, which 12 tokens take.
after=40
[ "${WAFER_VM_KERNEL:-stock}" != debug ] || after=12

# name|arguments (device 1 is accelN)
runs=(
	"pipe-ioctl|-d 0,N,2 --submit ioctl"
	"pipe-uring|-d 0,N,2 --submit uring"
	"afd-ioctl|--afd 0:N --submit ioctl"
	"afd-uring|--afd 0:N --submit uring"
)

script='set -e
insmod "$WAFER_MODULE" num_devices=3
c=/sys/bus/platform/devices/wafer.1/jobs_completed
# Device 1 minor: accel1, and after a bind again only once the old device
# was released, which the io_uring of an exited process may still delay.
minor() {
	n=$(ls /sys/bus/platform/devices/wafer.1/accel)
	n=${n#accel}
	for i in $(seq 100); do [ -e /dev/accel/accel$n ] && break; sleep 0.1; done
}'
for r in "${runs[@]}"; do
	IFS='|' read -r name args <<<"$r"
	script+="
minor
args=\$(echo '$args' | sed \"s/N/\$n/\")
base=\$(cat \$c)
rc=0
timeout 120 $wafer run $common -n 512 \$args >/dev/null 2>\"\$WAFER_RESULTS/$name.err\" &
pid=\$!
i=0
while [ \"\$(cat \$c)\" -lt \$((base + 8)) ] && kill -0 \$pid 2>/dev/null && [ \$i -lt 2400 ]; do
	sleep 0.05
	i=\$((i + 1))
done
kill -0 \$pid 2>/dev/null || echo \"=== $name-raced\"
echo wafer.1 >/sys/bus/platform/drivers/wafer/unbind
wait \$pid || rc=\$?
echo \"=== $name-rc\"; echo \$rc
echo \"=== $name-err\"; cat \"\$WAFER_RESULTS/$name.err\"
echo wafer.1 >/sys/bus/platform/drivers/wafer/bind
minor
args=\$(echo '$args' | sed \"s/N/\$n/\")
echo \"=== $name-again\"; echo \"\$args\"
echo \"=== $name-after\"
$wafer run $common -n $after \$args 2>\"\$WAFER_RESULTS/$name.after\" ||
	{ echo \"=== $name-after-failed\"; cat \"\$WAFER_RESULTS/$name.after\"; }"
done
script+='
rmmod wafer'
vm_out=$("$vm" --no-module -- sh -c "$script") || { printf '%s\n' "$vm_out"; die "the guest failed"; }

section() { printf '%s\n' "$vm_out" | awk -v s="=== $1" '$0 == s { on = 1; next } /^=== / { on = 0 } on'; }

want=$("$wafer" run $models/stories260K.bin -z $models/tok512.bin -t 0 -n "$after" --backend inproc 2>/dev/null)
[ -n "$want" ] || die "the inproc backend printed nothing"
for r in "${runs[@]}"; do
	IFS='|' read -r name args <<<"$r"
	printf '%s\n' "$vm_out" | grep -qx "=== $name-raced" &&
		die "$name: the run ended before device 1 was unbound (the guest ran it too fast for this check)"
	rc=$(section "$name-rc")
	[ "$rc" = 1 ] || die "$name: exit status $rc after the unbind, not 1 (124: it hung until timeout)
$(section "$name-err")"
	expect_contains "$(section "$name-err")" '^wafer run: generating: .*No such device$'
	[ "$(section "$name-after")" = "$want" ] ||
		die "$name: the run after binding device 1 again differs from one in-process device
$(section "$name-after-failed")"
	echo "$name ($args): device 1 unbound mid-run: exit 1, $(section "$name-err" | tail -1 | sed 's/^wafer run: generating: //'); bound again as accel$(section "$name-again" | grep -oE '[0-9]+' | sed -n 2p): the next run matches"
done
