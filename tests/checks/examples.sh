#!/usr/bin/env bash
# Every example of README.md and of the man pages runs as written on the
# simulated device (tests/checks/lib/extract_examples.py says what counts as
# one). Each document's examples run in order, in a scratch folder of their
# own holding the files they name (examples/README.md lists them), with the
# tools on PATH and out/ beside them as in a checkout; an example exits 0
# unless it says "# fails". Examples a document marks "not run here" (two
# hosts, an S3 store) are listed as skipped.
# Last line: "check: N passed, N failed".
set -uo pipefail
source "$(dirname "$0")/lib/check.sh"
BUILD_DIR="$(cd "$BUILD_DIR" && pwd)"  # the examples run in other folders
skipped=0

work="$(mktemp -d "${TMPDIR:-/tmp}/examples.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# Open MPI refuses root (CI) and more ranks than cores unless told.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export PATH="$BUILD_DIR:$PATH"
# The README's examples write bundles with numpy: where the python3 that
# comes first lacks it, Debian's (python3-numpy) stands in.
if ! python3 -c 'import numpy' 2>/dev/null && /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
  mkdir -p "$work/python" && ln -s /usr/bin/python3 "$work/python/python3"
  export PATH="$work/python:$PATH"
fi
unset NEURON_RT_VISIBLE_CORES NEURON_SIM_INSTANCE_TYPE NEURON_CC_FLAGS
# Simulated cores of our own: other test jobs run beside this one and may
# hold the default device tree as another instance type.
export NEURON_SIM_ROOT="$work/sim"

# The files the examples name: models from examples/, their NEFFs, inputs
# that fit them and results to compare with.
fixtures="$work/fixtures"
make_fixtures() {
  mkdir -p "$fixtures" && cd "$fixtures" || return 1
  cp "$ROOT"/examples/*.hlo . &&
  cp mlp.hlo m.hlo && cp mlp.hlo model.hlo && cp attention.hlo bert.hlo &&
  for hlo in *.hlo; do neuron-compile compile "$hlo" -o "${hlo%.hlo}.neff" || return 1; done &&
  neuron-compile compile mlp.hlo --enable-fast-loading-neuron-binaries -o fast.neff &&
  # A binary HloModuleProto: the program a NEFF carries is one.
  mkdir unpacked && tail -c +1025 mlp.neff | zstd -dq | tar x -C unpacked program.pb &&
  mv unpacked/program.pb model.hlo.pb && rmdir unpacked &&
  /usr/bin/python3 - <<'EOF' &&
import numpy as np
rng = np.random.default_rng(0)
np.save("x.npy", rng.standard_normal((8, 16), dtype=np.float32))   # mlp.hlo's x
for rank in range(4):                                               # step.hlo's x
    np.save(f"batch{rank}.npy", rng.standard_normal((8, 16), dtype=np.float32))
np.savez("weights.npz", **{"params/dense/kernel": np.ones((2, 3), np.float32),  # flax_dense.hlo's
                           "params/dense/bias": np.zeros(3, np.uint16)})
EOF
  neuron-exec m.neff --random-inputs --output '#0=want.npy' >/dev/null
}
if ! (make_fixtures) >"$work/fixtures.log" 2>&1; then
  fail "the examples' files: $(tail -3 "$work/fixtures.log")"
  echo "check: $passed passed, $failed failed"
  exit 1
fi

/usr/bin/python3 "$ROOT/tests/checks/lib/extract_examples.py" "$ROOT" >"$work/examples.tsv" ||
  { fail "extracting the examples"; echo "check: $passed passed, $failed failed"; exit 1; }
[ "$(wc -l <"$work/examples.tsv")" -ge 20 ] && pass "$(wc -l <"$work/examples.tsv") examples found" ||
  fail "only $(wc -l <"$work/examples.tsv") examples found"

# One document's examples in order, in one shell, so an `export` or a file
# one example makes reaches the next.
run_document() {
  local doc="$1" dir="$work/run/${1//\//_}"
  mkdir -p "$dir" && cp -a "$fixtures/." "$dir/" && cd "$dir" || return
  ln -s "$BUILD_DIR" out && ln -s "$ROOT/examples" examples && ln -s "$ROOT/scripts" scripts
  export HOME="$dir/home" && mkdir -p "$HOME"
  local where expect command rc
  while IFS=$'\t' read -r where expect command; do
    [ "${where%%:*}" = "$doc" ] || continue
    case "$expect" in
      skip:*) skipped=$((skipped + 1)); echo "SKIP $where: ${expect#skip:}: $command"; continue ;;
    esac
    if [[ "$command" == export\ * ]]; then
      eval "$command"
      continue
    fi
    timeout 300 bash -c "$command" >"$dir/last.log" 2>&1 </dev/null
    rc=$?
    if [ "$expect" = fail ]; then
      if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$rc" -lt 128 ]; then
        pass "$where fails as it says: $command"
      else
        fail "$where should fail (exit $rc): $command"
      fi
    elif [ "$rc" = 0 ]; then
      pass "$where: $command"
    else
      fail "$where exits $rc: $command: $(tail -2 "$dir/last.log" | tr '\n' ' ' | head -c 400)"
    fi
  done <"$work/examples.tsv"
}

for doc in $(cut -f1 "$work/examples.tsv" | cut -d: -f1 | uniq); do
  # A subshell per document: its exports and folder stay its own; the
  # counts come back through a file.
  (run_document "$doc"; echo "$passed $failed $skipped" >"$work/counts") | tee -a "$work/all.log"
  read -r passed failed skipped <"$work/counts"
done
echo "examples skipped as their documents mark them: $skipped"
echo "check: $passed passed, $failed failed"
[ "$failed" = 0 ]
