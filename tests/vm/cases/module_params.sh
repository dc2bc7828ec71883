# Out-of-range num_devices, job_timeout_ms and stage_workers are refused at load time with
# a message in the kernel log naming the parameter; the bounds themselves
# load and read back; 64 devices (one host's bound) come up, their memory
# printed; a device whose SRAM would take more than half of the
# guest's available memory is refused with a message; wse3 loads only
# scaled down (its 44 GB refused with a message); the test-only debugfs triggers
# exist only with fault_inject=1.  All in one guest (the module loaded and
# unloaded by the command); then, on the stock kernel, once through the
# harness, which must report a failed load instead of running the command.
# The debug kernel's checkers see these paths in every debug case (the module
# loads and unloads; the parameters' checks are the same code on both
# kernels): stock only, for test time.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
out=$("$vm" --no-module -- bash -c '
	set -u
	m=$WAFER_MODULE dbg=/sys/kernel/debug/accel/wafer.0
	fail() { echo "FAILED: $*"; exit 1; }
	for p in num_devices=0 num_devices=65 job_timeout_ms=0 job_timeout_ms=3600001 \
		stage_workers=-2 stage_workers=1025; do
		dmesg -C
		! insmod "$m" "$p" 2>/dev/null || fail "$p loaded"
		dmesg | grep -q "wafer: ${p%%=*}=${p#*=} is out of range" ||
			fail "no message for $p: $(dmesg | tail -n 3)"
		echo "refused: $p"
	done
	# The bounds themselves load and read back.
	for p in job_timeout_ms=1 job_timeout_ms=3600000; do
		insmod "$m" "$p" || fail "$p did not load"
		[ "$(cat /sys/module/wafer/parameters/job_timeout_ms)" = "${p#*=}" ] ||
			fail "$p reads back as $(cat /sys/module/wafer/parameters/job_timeout_ms)"
		rmmod wafer || fail "rmmod after $p"
		echo "loaded: $p"
	done
	for p in stage_workers=-1 stage_workers=0 stage_workers=1024; do
		insmod "$m" "$p" || fail "$p did not load"
		[ "$(cat /sys/module/wafer/parameters/stage_workers)" = "${p#*=}" ] ||
			fail "$p reads back as $(cat /sys/module/wafer/parameters/stage_workers)"
		rmmod wafer || fail "rmmod after $p"
		echo "loaded: $p"
	done
	# 64 devices of 16 stages x 64 KiB (at the default 64 MiB each, 64 would
	# need 4 GiB); what each takes beyond its SRAM is printed.
	avail() { awk "/^MemAvailable:/ { print \$2 }" /proc/meminfo; }
	a0=$(avail)
	insmod "$m" num_devices=64 sram_kib=64 || fail "64 devices did not load"
	[ -c /dev/accel/accel63 ] || fail "no /dev/accel/accel63"
	a1=$(avail)
	rmmod wafer || fail "rmmod after 64 devices"
	echo "loaded: 64 devices, $(( (a0 - a1) / 64 )) KiB each (1024 KiB of it SRAM)"
	# 16 x 64 MiB = 1 GiB of SRAM: more than half of what a guest has free.
	dmesg -C
	insmod "$m" sram_kib=65536 || fail "insmod sram_kib=65536"
	dmesg | grep -q "device 0: its SRAM (1024 MiB: stages x sram_kib) exceeds half of" ||
		fail "no message for 1 GiB of SRAM: $(dmesg | tail -n 3)"
	! [ -e /dev/accel/accel0 ] || fail "a device of 1 GiB SRAM came up"
	rmmod wafer || fail "rmmod after the refused 1 GiB device"
	echo "refused: a device of 1 GiB SRAM"
	# wse3 at full size (44 GB): the device is refused with a message (its
	# probe fails, the module stays, as with any probe error); scaled, it runs.
	dmesg -C
	insmod "$m" profile=wse3 || fail "insmod profile=wse3"
	dmesg | grep -q "profile wse3: stages x SRAM per stage exceed" ||
		fail "no message for profile=wse3: $(dmesg | tail -n 3)"
	! [ -e /dev/accel/accel0 ] || fail "a wse3 device of 44 GB came up"
	rmmod wafer || fail "rmmod after the refused wse3"
	insmod "$m" profile=wse3 sram_kib=1024 || fail "profile=wse3 sram_kib=1024 did not load"
	p=$(cat /sys/class/accel/accel0/device/profile)
	[ "$p" = wse3 ] || fail "profile reads $p"
	rmmod wafer || fail "rmmod after wse3"
	echo "loaded: wse3 with 1 MiB stages; its device refused at 44 GB"
	insmod "$m" || fail "no load with defaults"
	[ -e $dbg/jobs ] || fail "no $dbg/jobs"
	! [ -e $dbg/inject_warn ] && ! [ -e $dbg/inject_fault ] ||
		fail "inject_warn or inject_fault exists without fault_inject=1"
	rmmod wafer || fail "rmmod after defaults"
	insmod "$m" fault_inject=1 || fail "fault_inject=1 did not load"
	[ -e $dbg/inject_warn ] && [ -e $dbg/inject_fault ] ||
		fail "inject_warn or inject_fault missing with fault_inject=1"
	rmmod wafer || fail "rmmod after fault_inject=1"
	echo "module_params: ok"
' 2>&1) || { printf '%s\n' "$out"; die "module parameters"; }
printf '%s\n' "$out"
expect_contains "$out" '^module_params: ok$'
expect_contains "$out" '^loaded: wse3 with 1 MiB stages'
expect_contains "$out" '^loaded: 64 devices'
expect_contains "$out" '^refused: a device of 1 GiB SRAM'

# The harness's refusal is the same on both kernels, and a failed command
# stops its kept guest (a reboot: ~75 s on the debug kernel).
[ "${WAFER_VM_KERNEL:-stock}" != debug ] || exit 0
rc=0
out=$("$vm" --params num_devices=0 -- echo ran 2>&1) || rc=$?
[ "$rc" != 0 ] || die "num_devices=0 loaded through the harness"
expect_contains "$out" "insmod .*num_devices=0"
! grep -q '^ran$' <<<"$out" || die "the harness ran the command after a failed load"
