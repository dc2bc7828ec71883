# While file A's MODEL_LOAD is held in the firmware's check of its blob,
# file B's GET_INFO, context create and destroy, a debugfs and a sysfs read
# complete, and A is still in its ioctl after them; a second file's load
# reaches the firmware's load queue behind A's meanwhile (no driver lock
# holds it back); released, both loads complete
# (tests/vm/progs/control_not_behind_load.c).
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/control_not_behind_load
[ -x "$prog" ] || die "$prog missing: run make"
"$vm" --params 'fault_inject=1' -- "$prog"
