# Processes killed mid-job (tests/vm/progs/lifetime_kill.c): children with
# their own file, model, context and BOs and jobs in flight by ioctl, by
# io_uring, asleep in WAIT, or all three, are SIGKILLed at seeded random
# moments; the device must drop everything of theirs, still decode
# correctly, and the module must unload (the harness's rmmod).
# Knob: WAFER_KILL_SEED (default 1).
# The debug kernel's checkers see these paths in soak (processes killed
# mid-job by ioctl and io_uring): stock only, for test time.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
prog=$build/tests/vm/lifetime_kill
[ -x "$prog" ] || die "$prog missing: run make"
# The debug kernel: half the rounds (each variant once; ~30 s a round there).
rounds=8
[ "${WAFER_VM_KERNEL:-stock}" != debug ] || rounds=4
"$vm" -- "$prog" --seed "${WAFER_KILL_SEED:-1}" --rounds "$rounds"
# A victim with seconds of work queued (64 jobs of 64 tokens): the GET_INFO
# taken before the kill waits behind all of it, and must not be mistaken for
# a stuck firmware (which reset the device: 0 models, jobs failed).
"$vm" -- "$prog" --seed "${WAFER_KILL_SEED:-1}" --rounds 1 --variant 0 --pipeline 64 --tokens 64
