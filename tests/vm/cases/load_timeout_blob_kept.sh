# A DMA window must not outlive its memory: a MODEL_LOAD that times out
# while the firmware has yet to read its blob (inject_fault "pause_load");
# the firmware reads it once the reset the timeout causes begins, and must
# find it intact (tests/vm/progs/load_timeout_blob_kept.c).
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/load_timeout_blob_kept
[ -x "$prog" ] || die "$prog missing: run make"
"$vm" --params 'fault_inject=1 job_timeout_ms=2000' -- "$prog"
