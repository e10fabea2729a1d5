# Sourced by each check script: where the tree and the build are, and the
# PASS/FAIL lines with their counts, whose summary ("check: N passed, N
# failed") scripts/test reads.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/out}"
passed=0 failed=0
pass() { passed=$((passed + 1)); echo "PASS $*"; }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }
