# 16 processes x 200 io_uring jobs at once, each on its own device, every
# result verified against firmware-sim in-process; prints jobs/s and p99.
. "$(dirname "$0")/../lib.sh"
"$vm" --params 'num_devices=16 stages=5 sram_kib=512' -- "$build/tests/vm/uring_stress" 16 200
