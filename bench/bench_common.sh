# Shared by the benchmarks (bench/exec_*.sh, bench/load.sh, ...): where
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

# min A B: the smaller number; an empty argument (a failed run) is skipped.
min() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (b == "") print a; else print (a == "" || b < a) ? b : a }'
}

# mpi_local_time NP ITERS WARMUP BYTES: Open MPI's MPI_Allreduce time (us,
# the slowest rank's) for NP ranks on this host, at its best: its shared
# memory transport with the single-copy mechanism (CMA: faster for large
# messages here) and without it (copy in and out: faster for some mid-sized
# ones); needs $SCRATCH/mpi_allreduce built from bench/peers/mpi_allreduce.c.
mpi_local_time() {
  local np="$1" mech t best=""
  shift
  for mech in cma none; do
    t=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np "$np" \
      --oversubscribe --mca btl_vader_single_copy_mechanism "$mech" \
      "$SCRATCH/mpi_allreduce" "$@" 2>/dev/null | awk '{ print $2 }')
    best=$(min "$best" "$t")
  done
  echo "$best"
}

# verdict OK_EXPR: "met" or "NOT met" for an awk condition.
verdict() { awk "BEGIN { exit !($1) }" && echo met || echo "NOT met"; }

# A field of neuron-exec --json output: json_field FILE PY_EXPR (d = the doc).
json_field() { /usr/bin/python3 -c "import json,sys; d=json.load(open('$1')); print($2)"; }

# numpy as the peer, with OpenBLAS at full speed: the environment may preset
# OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE, which halve its speed on this CPU
# (reference/build-notes.md); they are removed for this command only.
numpy_peer() { env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /usr/bin/python3 "$@"; }

# The 3-layer, 1024-wide MLP at batch 256 that bench/exec_mlp*.sh run:
# mlp_hlo TYPE prints it with every array of element type TYPE.
mlp_hlo() {
  sed "s/T\[/$1[/g" <<'HLO'
HloModule mlp
ENTRY main {
  x = T[256,1024] parameter(0)
  w1 = T[1024,1024] parameter(1)
  b1 = T[1024] parameter(2)
  w2 = T[1024,1024] parameter(3)
  b2 = T[1024] parameter(4)
  w3 = T[1024,1024] parameter(5)
  b3 = T[1024] parameter(6)
  zero = T[] constant(0)
  zeros = T[256,1024] broadcast(zero), dimensions={}
  d1 = T[256,1024] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb1 = T[256,1024] broadcast(b1), dimensions={1}
  a1 = T[256,1024] add(d1, bb1)
  h1 = T[256,1024] maximum(a1, zeros)
  d2 = T[256,1024] dot(h1, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb2 = T[256,1024] broadcast(b2), dimensions={1}
  a2 = T[256,1024] add(d2, bb2)
  h2 = T[256,1024] maximum(a2, zeros)
  d3 = T[256,1024] dot(h2, w3), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb3 = T[256,1024] broadcast(b3), dimensions={1}
  ROOT out = T[256,1024] add(d3, bb3)
}
HLO
}
