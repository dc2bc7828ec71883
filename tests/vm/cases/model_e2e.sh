# The shared model through the ioctl path (BO, MODEL_LOAD, CTX_CREATE,
# SUBMIT, WAIT) gives results identical to firmware-sim in-process: decode,
# prefill with every position, and many slots in flight; int8 and int4.
. "$(dirname "$0")/../lib.sh"
"$vm" -- "$build/tests/vm/model_e2e" int8 48
"$vm" -- "$build/tests/vm/model_e2e" int4 48
