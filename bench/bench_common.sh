# Shared by the runtime benchmarks (bench/exec_*.sh, bench/load.sh): where
# the build is, building what a script needs, and a scratch directory.
# Sourced, not run. NEURON_OUT picks the build directory (default out).
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT/${NEURON_OUT:-out}"

# Builds the tools and bench programs a script names (the whole tree via
# scripts/build when the build directory does not exist yet).
bench_build() {
  [ -f "$OUT/build.ninja" ] || NEURON_QUIET=1 "$ROOT/scripts/build" >/dev/null
  ninja -C "$OUT" "$@" >/dev/null
}

# Installs the Debian packages a benchmark's peers need, where missing.
bench_packages() {
  local need=() p sudo=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
  done
  ((${#need[@]})) || return 0
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=120 update -qq >&2 || true
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=120 \
    install -y -qq --no-install-recommends "${need[@]}" >&2
}

# A scratch directory removed on exit, and a simulated device of its own.
SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/neuron-bench.XXXXXX")"
trap 'rm -rf "$SCRATCH"' EXIT
export NEURON_SIM_ROOT="$SCRATCH/sim"

# ratio A B: A/B with two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# verdict OK_EXPR: "met" or "NOT met" for an awk condition.
verdict() { awk "BEGIN { exit !($1) }" && echo met || echo "NOT met"; }

# A field of neuron-exec --json output: json_field FILE PY_EXPR (d = the doc).
json_field() { /usr/bin/python3 -c "import json,sys; d=json.load(open('$1')); print($2)"; }

# numpy as the peer, with OpenBLAS at full speed: the environment may preset
# OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE, which halve its speed on this CPU
# (reference/build-notes.md); they are removed for this command only.
numpy_peer() { env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 "$@"; }
