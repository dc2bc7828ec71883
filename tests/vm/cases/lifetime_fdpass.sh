# A device file shared between processes (tests/vm/progs/lifetime_fdpass.c):
# passed over a UNIX socket (SCM_RIGHTS) to an unrelated process that uses
# the sender's handles, context and seqnos by ioctl and io_uring while the
# sender closes its copy; used after fork() with the parent waiting on the
# child's seqno; and inherited by a child that outlives its parent.
# The debug kernel's checkers see these paths in soak (files passed by
# SCM_RIGHTS, used by both processes): stock only, for test time.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/lifetime_fdpass
[ -x "$prog" ] || die "$prog missing: run make"
"$vm" -- "$prog"
