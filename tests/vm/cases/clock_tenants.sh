# One file's modelled times (an activation record's t_ns past the latest
# modelled time, and the latest floor and t_ns the uapi allows) leave
# another file's modelled clock where it would be without them
# (tests/vm/progs/clock_tenants.c).
# The debug kernel's checkers see these paths in conformance (IN_ACT records
# and NOT_BEFORE floors refused and run): stock only, for test time.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/clock_tenants
[ -x "$prog" ] || die "$prog missing: run make"
"$vm" -- "$prog"
