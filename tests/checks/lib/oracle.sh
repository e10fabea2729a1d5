# Sourced by the checks that compare against the numpy oracle in
# ../shared/oracle: `oracle_setup NAME` ends the check with a notice (and a
# "0 passed, 0 failed" summary) where the oracle or numpy is missing, else
# gives it simulated cores of its own in a temporary directory ($work),
# apart from the test jobs running beside it, removed on exit.
source "$(dirname "${BASH_SOURCE[0]}")/check.sh"

oracle_setup() {
  local name="$1"
  if [ ! -f "$ROOT/../shared/oracle/hlo_ref.py" ] || ! /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
    echo "NOTICE: ../shared/oracle or /usr/bin/python3 numpy is missing; $name test not run"
    echo "0 passed, 0 failed"
    exit 0
  fi
  work="$(mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  export NEURON_SIM_ROOT="$work/sim"
}
