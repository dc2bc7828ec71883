# Log lines a user can trigger at will are not one per request: 40 MODEL_LOADs
# of a model too large for the device (tests/vm/progs/log_rate_limited.c)
# back to back leave a rate-limited burst in the kernel log, not one line
# (or two) each.
# The debug kernel's checkers see these paths in conformance (the same
# refusals, each logged): stock only, for test time.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
n=40
out=$("$vm" --params 'stages=1 sram_kib=64' -- sh -c "
	before=\$(dmesg | grep -c wafer)
	$build/tests/vm/log_rate_limited $n || exit 1
	echo \"log lines: \$((\$(dmesg | grep -c wafer) - before))\"")
printf '%s\n' "$out"
lines=$(sed -n 's/^log lines: //p' <<<"$out")
[ -n "$lines" ] || die "no count"
[ "$lines" -le $((n / 2)) ] || die "$n failing requests left $lines kernel log lines"
