# The seed model's layers through the kernel, one per device: `wafer convert
# --synthetic sol --layers 8` (256 experts, top-10, one shared; 1.6 MB)
# over num_devices=8 kernel devices of one 384 KiB stage, each loading its
# layer's range of a blob larger than its SRAM + 1 MiB, prints exactly what
# one in-process device prints; greedy.  (All 80 layers over 64 devices
# take ~9 minutes under TCG: tests/unit/userlib_sol runs them in process.)
# Stock-only: bit-exactness is libwafer's and the firmware's; the driver's
# paths of a chain are the debug tier's through `chain`.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
models=${WAFER_MODELS:-$repo/../shared/models}
wafer=$build/bin/wafer
out=$("$vm" --no-module -- bash -c "
set -e
b=\$WAFER_RESULTS/sol.blob
args=\"\$b -z $models/tok512.bin -t 0 -n 6 -i 'Once upon a time'\"
$wafer convert --synthetic sol --layers 8 \$b --group 4 2>/dev/null
insmod \"\$WAFER_MODULE\" num_devices=8 stages=1 sram_kib=384
eval $wafer run \$args --backend inproc > \$WAFER_RESULTS/one.txt 2>/dev/null
eval $wafer run \$args -d 0-7 > \$WAFER_RESULTS/k8.txt 2>\$WAFER_RESULTS/k8.err ||
	{ cat \$WAFER_RESULTS/k8.err; exit 1; }
grep -q 'pipeline of 8 kernel devices' \$WAFER_RESULTS/k8.err
echo \"one device: \$(od -An -tx1 \$WAFER_RESULTS/one.txt | tr -d '\n' | cut -c1-96)\"
cmp \$WAFER_RESULTS/one.txt \$WAFER_RESULTS/k8.txt && echo 'sol_pipe: 8 kernel devices print it'
rmmod wafer
" 2>&1) || { printf '%s\n' "$out"; die "the guest failed"; }
printf '%s\n' "$out"
expect_contains "$out" '^sol_pipe: 8 kernel devices print it$'
