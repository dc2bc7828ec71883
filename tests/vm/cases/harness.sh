# tests/vm/run itself: the command's exit status comes back, stdout and
# stderr are kept apart, the command runs in the caller's directory, and it
# works with stdin redirected from /dev/null and with stdin closed (as CI).
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
rc=0
"$vm" -- sh -c 'exit 7' </dev/null || rc=$?
[ "$rc" = 7 ] || die "exit status 7 came back as $rc"
out=$("$vm" -- sh -c 'echo to-out; echo to-err >&2' 2>/dev/null 0<&-)
[ "$out" = to-out ] || die "stdout was '$out'"
err=$("$vm" -- sh -c 'echo to-out; echo to-err >&2' 2>&1 >/dev/null 0<&-)
expect_contains "$err" '^to-err$'
out=$(cd "$repo/tests" && "$vm" -- pwd)
[ "$out" = "$repo/tests" ] || die "ran in '$out', not $repo/tests"
out=$("$vm" -- sh -c 'echo hi > "$WAFER_RESULTS/f" && cat "$WAFER_RESULTS/f"')
[ "$out" = hi ] || die "results directory not writable: '$out'"
