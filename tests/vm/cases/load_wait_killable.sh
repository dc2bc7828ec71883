# A MODEL_LOAD waiting for the device (behind another file's
# DESTROY_CONTEXT queued behind its jobs) dies on SIGKILL while those jobs
# are still in flight (tests/vm/progs/load_wait_killable.c).
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/load_wait_killable
[ -x "$prog" ] || die "$prog missing: run make"
"$vm" -- "$prog"
