# SPDX-License-Identifier: MIT
# Sourced by tests/vm/cases/*.sh: each case is a host-side script that boots
# the VM through tests/vm/run as it needs and exits 0 on success.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$repo"
vm=$repo/tests/vm/run
build=$repo/${BUILD:-build}

die() { printf 'FAILED: %s\n' "$*" >&2; exit 1; }

# expect_contains TEXT PATTERN: fails unless TEXT matches the ERE PATTERN.
expect_contains() {
	grep -Eq -- "$2" <<<"$1" || die "expected /$2/ in output:
$1"
}
