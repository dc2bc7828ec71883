# libdrm's drmGetVersion recognises every device as "wafer", for
# num_devices=1 and 3, and no extra node exists.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
"$vm" -- "$build/tests/vm/drm_version" 1
"$vm" --params num_devices=3 -- "$build/tests/vm/drm_version" 3
