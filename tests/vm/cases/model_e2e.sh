# The shared model through the ioctl path (BO, MODEL_LOAD, CTX_CREATE,
# SUBMIT, WAIT) gives results identical to firmware-sim in-process: decode,
# prefill with every position, and many slots in flight; int8 and int4.
# Stock-only: the debug tier runs model_e2e itself after trinity (int8 and
# int4), and its paths in load and conformance.
# wafer-vm: stock-only
. "$(dirname "$0")/../lib.sh"
"$vm" -- "$build/tests/vm/model_e2e" int8 48
"$vm" -- "$build/tests/vm/model_e2e" int4 48
