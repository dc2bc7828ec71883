# Issue 11: a MODEL_LOAD waiting for the device (behind another file's
# DESTROY_CONTEXT queued behind its jobs) dies on SIGKILL while those jobs
# are still in flight (tests/vm/progs/hard_killable.c).
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/hard_killable
[ -x "$prog" ] || die "$prog missing: run make"
"$vm" -- "$prog"
