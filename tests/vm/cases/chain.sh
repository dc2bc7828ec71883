# One model across 2..5 devices (tests/vm/progs/chain.c): layer
# ranges loaded with MODEL_LOAD's layer_first/layer_count, activation
# records in BOs shared with PRIME, each device's job waiting for the
# previous device's through a shared syncobj, all queued before the first
# completes; every result identical to one device, int8 and int4, through
# the SUBMIT ioctl and io_uring.  Then, with fault injection, a hang on
# the middle device of five: it times out, the jobs downstream of a failed
# one are cancelled (-ECANCELED), and the chain works again after; the
# same with the fourth device unbound under a queued workload (-ENODEV).
# On the stock kernel also over devices of mixed profiles (profile=asic,
# wafer,...): the same results.
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/chain
[ -x "$prog" ] || die "$prog missing: run make"
# A job timeout the hung job reaches soon and healthy ones never do.
timeout_ms=1000 only= runs=16
# The debug kernel checks the same paths (PRIME between devices, the
# in-fences, GET_INFO at load, unbind) on the five-device chain alone.
# Its guest has 1 GiB, less free under KASAN than five devices of 64 MiB
# of SRAM and a sixth while the unbound one is still held: 16 MiB each.
sram=
[ "${WAFER_VM_KERNEL:-stock}" = debug ] && timeout_ms=3000 only=--only runs=4 sram=sram_kib=1024
# Stock: a boot with mixed profiles (asic, wafer, ...), the five-device chain.
mixed=
if [ "${WAFER_VM_KERNEL:-stock}" != debug ]; then
	runs=$((runs + 1))
	mixed='insmod "$WAFER_MODULE" num_devices=5 profile=asic,wafer,asic,wafer,asic || exit 125
	p=$(cat /sys/class/accel/accel*/device/profile | tr "\n" ,)
	[ "$p" = asic,wafer,asic,wafer,asic, ] || { echo "FAILED: profiles $p"; rc=1; }
	echo "profiles: $p"
	'"$prog"' --only --bits 8 || rc=1
	rmmod wafer || exit 125'
fi
out=$("$vm" --no-module -- sh -c "
	insmod \"\$WAFER_MODULE\" num_devices=5 $sram || exit 125
	rc=0
	$prog $only --bits 8 || rc=1
	$prog $only --bits 4 --uring || rc=1
	rmmod wafer || exit 125
	insmod \"\$WAFER_MODULE\" num_devices=5 $sram fault_inject=1 job_timeout_ms=$timeout_ms || exit 125
	$prog $only --bits 8 --devices 5 --fault 2 || rc=1
	$prog $only --bits 4 --devices 5 --unbind 3 || rc=1
	rmmod wafer || exit 125
	$mixed
	exit \$rc") || { printf '%s\n' "$out"; die "chain failed"; }
printf '%s\n' "$out"
[ "$(grep -c '^ok - [0-9] devices: all' <<<"$out")" = "$runs" ] ||
	die "expected $runs chain runs"
expect_contains "$out" '^ok - a hang on device 2 of 5'
expect_contains "$out" '^ok - after the unbind: '
