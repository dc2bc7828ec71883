# Resets racing control commands (tests/vm/progs/reset_control_race.c):
# hung jobs reset the device while other threads loop GET_INFO, read the
# sysfs counters and create and destroy contexts; no control command fails
# because of a reset or leaves state behind the driver's back, and the
# device loads and decodes exactly afterwards.
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/reset_control_race
[ -x "$prog" ] || die "$prog missing: run make"
"$vm" --params 'fault_inject=1 job_timeout_ms=1000' -- "$prog" --rounds 4
