# A file that waits on out-syncobjs and never calls WAIT retains a bounded
# number of results (tests/vm/progs/job_results.c): DRM_WAFER_MAX_UNWAITED.
# The debug kernel's checkers see these paths in conformance (the
# unwaited-results limit among the per-file limits): stock only, for test
# time.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/job_results
[ -x "$prog" ] || die "$prog missing: run make"
"$vm" -- "$prog"
