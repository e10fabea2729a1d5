#!/usr/bin/env bash
# The layout of docs/architecture.md holds: GN's visibility refuses a
# dependency outside the plan (a tool on another tool's internals, a tool on
# a library that admits only other tools), and lib/ never includes from
# tools/. Each refusal is tried in a copy of the tree's GN files with one
# probe target added, after the unmodified copy is shown to generate.
# Last line: "check: N passed, N failed".
set -uo pipefail
source "$(dirname "$0")/lib/check.sh"

work="$(mktemp -d "${TMPDIR:-/tmp}/layout.XXXXXX")"
trap 'rm -rf "$work"' EXIT

if ! command -v gn >/dev/null; then
  fail "gn is not installed"
  echo "check: $passed passed, $failed failed"
  exit 1
fi

# A fresh copy of every GN file (sources need not exist for `gn gen`).
copy_tree() {
  rm -rf "$work/tree" && mkdir -p "$work/tree"
  (cd "$ROOT" && git ls-files -z '.gn' '*.gn' '*.gni') |
    (cd "$ROOT" && xargs -0 cp --parents -t "$work/tree")
}

copy_tree
if (cd "$work/tree" && gn gen out >"$work/log" 2>&1); then
  pass "the tree's GN files generate as they are"
else
  fail "the unmodified copy does not generate: $(head -3 "$work/log")"
fi

# refused DIR DEP: a target in DIR that depends on DEP makes `gn gen` fail
# because DIR is not in DEP's visibility list.
refused() {
  local dir="$1" dep="$2"
  copy_tree
  printf '\ngroup("layout_probe") {\n  deps = [ "%s" ]\n}\n' "$dep" >>"$work/tree/$dir/BUILD.gn"
  if (cd "$work/tree" && gn gen out >"$work/log" 2>&1); then
    fail "//$dir may depend on $dep"
  elif grep -q "not in .*visibility list" "$work/log"; then
    pass "//$dir may not depend on $dep"
  else
    fail "//$dir on $dep: gn gen failed for another reason: $(head -3 "$work/log")"
  fi
}

# A tool's internals belong to that tool and its tests.
refused tools/neuron-ls //tools/neuron-allreduce:allreduce_tool
refused tools/neuron-exec //tools/neuron-dump:dump_tool
refused lib/support //tools/neuron-dump:dump_tool
refused tests/compiler //tools/neuron-allreduce:allreduce_tool
# Libraries that serve the runtime admit only the tools that need them.
refused tools/neuron-ls //lib/dump
refused tools/neuron-ls //lib/compiler
refused tools/neuron-compile //lib/collectives
refused tools/neuron-allreduce //lib/collectives:executor_collectives

# lib/ is below tools/: no library includes a tool's header.
hits="$(cd "$ROOT" && grep -rln '#include "tools/' lib 2>/dev/null)"
if [ -z "$hits" ]; then
  pass "nothing in lib/ includes from tools/"
else
  fail "lib/ includes from tools/: $hits"
fi

echo "check: $passed passed, $failed failed"
[ "$failed" = 0 ]
