#!/usr/bin/env bash
# Bash completion generated from the tools' option tables: sourced in bash,
# the completion function offers options, subcommands, option values and
# files as a shell user would see them; scripts/install puts one file per
# tool into PREFIX/share/bash-completion/completions, and again on a second
# run (idempotent).
# Last line: "check: N passed, N failed".
set -uo pipefail
source "$(dirname "$0")/lib/check.sh"

work="$(mktemp -d "${TMPDIR:-/tmp}/completion.XXXXXX")"
trap 'rm -rf "$work"' EXIT
TOOLS=(neuron-allreduce neuron-compile neuron-dump neuron-exec neuron-load neuron-ls)

# complete FILE WORD...: sources FILE in a fresh bash, completes the last
# WORD of the command line WORD... and prints COMPREPLY one a line, sorted.
complete_words() {
  local file="$1"; shift
  (cd "$work" && bash --norc --noprofile -c '
    source "$1"; shift
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
    fn="_${1//-/_}"
    "$fn"
    printf "%s\n" "${COMPREPLY[@]}" | sort' _ "$file" "$@")
}

# expect NAME FILE "WANTED..." WORD...: every wanted word is offered.
expect() {
  local name="$1" file="$2" wanted="$3"; shift 3
  local got missing=""
  got="$(complete_words "$file" "$@" 2>&1)"
  for w in $wanted; do
    grep -qxF -- "$w" <<<"$got" || missing+=" $w"
  done
  if [ -z "$missing" ]; then pass "$name"; else fail "$name: missing$missing; got: $(echo $got)"; fi
}

# refuse NAME FILE "UNWANTED..." WORD...: no unwanted word is offered.
refuse() {
  local name="$1" file="$2" unwanted="$3"; shift 3
  local got extra=""
  got="$(complete_words "$file" "$@" 2>&1)"
  for w in $unwanted; do
    grep -qxF -- "$w" <<<"$got" && extra+=" $w"
  done
  if [ -z "$extra" ]; then pass "$name"; else fail "$name: offered$extra"; fi
}

for t in "${TOOLS[@]}"; do
  if "$BUILD_DIR/$t" --bash-completion >"$work/$t.bash" 2>"$work/err" && bash -n "$work/$t.bash"; then
    pass "$t --bash-completion is a bash script"
  else
    fail "$t --bash-completion: $(cat "$work/err")"
  fi
done
mkdir -p "$work/models" && touch "$work/model.hlo" "$work/models/a.neff"

expect "neuron-exec long options" "$work/neuron-exec.bash" "--input --iterations --quiet" neuron-exec --
expect "neuron-exec options by prefix" "$work/neuron-exec.bash" "--input --iterations" neuron-exec --i
refuse "neuron-exec options by prefix only" "$work/neuron-exec.bash" "--quiet" neuron-exec --i
expect "neuron-exec short options" "$work/neuron-exec.bash" "-i -n -q -j" neuron-exec x.neff -
refuse "hidden options are not offered" "$work/neuron-exec.bash" "--bash-completion" neuron-exec --
expect "neuron-exec operand: files" "$work/neuron-exec.bash" "model.hlo models" neuron-exec mo
expect "neuron-exec --output-dir: directories" "$work/neuron-exec.bash" "models" neuron-exec --output-dir m
refuse "neuron-exec --output-dir: no files" "$work/neuron-exec.bash" "model.hlo" neuron-exec --output-dir m
expect "neuron-compile subcommands" "$work/neuron-compile.bash" "compile list-operators" neuron-compile ""
expect "neuron-compile compile options" "$work/neuron-compile.bash" "--target --optlevel -lnc --quiet" \
  neuron-compile compile model.hlo -
expect "neuron-compile --target values" "$work/neuron-compile.bash" "trn1 trn1n" neuron-compile compile --target trn1
refuse "neuron-compile --target values match the prefix" "$work/neuron-compile.bash" "inf2" neuron-compile compile --target trn
expect "neuron-compile --target=value" "$work/neuron-compile.bash" "inf2 trn2" neuron-compile compile --target = ""
refuse "subcommand options stay in their subcommand" "$work/neuron-compile.bash" "--target" neuron-compile --
expect "neuron-dump subcommands" "$work/neuron-dump.bash" "show upload" neuron-dump ""
expect "neuron-dump show options" "$work/neuron-dump.bash" "--json" neuron-dump show x --j
expect "neuron-dump upload options" "$work/neuron-dump.bash" "--to --part-size --delete-after" neuron-dump upload --
expect "neuron-dump hand-off options" "$work/neuron-dump.bash" "--local-output-dir --neff-name" neuron-dump --
expect "neuron-allreduce collectives" "$work/neuron-allreduce.bash" "allr allg redsct sendrecv permute" neuron-allreduce -r 2 ""
expect "neuron-allreduce -d values" "$work/neuron-allreduce.bash" "fp16 fp32 fp64" neuron-allreduce -d fp
expect "neuron-ls --output-format values" "$work/neuron-ls.bash" "json table" neuron-ls --output-format ""
expect "neuron-load options" "$work/neuron-load.bash" "--cores --json --quiet --help --version" neuron-load --

# scripts/install puts them in place, the same on a second run.
prefix="$work/prefix"
for run in first second; do
  if "$ROOT/scripts/install" --prefix "$prefix" --build-dir "$BUILD_DIR" --no-ldconfig >"$work/install.log" 2>&1; then
    pass "install ($run run)"
  else
    fail "install ($run run): $(tail -3 "$work/install.log")"
  fi
done
for t in "${TOOLS[@]}"; do
  installed="$prefix/share/bash-completion/completions/$t"
  if cmp -s "$installed" "$work/$t.bash"; then pass "installed $t completion"; else fail "no or another $installed"; fi
done
expect "the installed completion works" "$prefix/share/bash-completion/completions/neuron-dump" "show upload" neuron-dump ""
# The installed instance check runs the installed tools (and their
# libnrt.so.1 from $prefix/lib) on a simulated device of its own.
if env -u NEURON_RT_VISIBLE_CORES NEURON_SIM_ROOT="$work/ic-sim" \
    "$prefix/bin/neuron-instance-check" >"$work/ic.out" 2>&1 &&
    [ "$(tail -1 "$work/ic.out")" = "instance-check: all steps passed" ]; then
  pass "the installed neuron-instance-check passes on the installed tools"
else
  fail "installed neuron-instance-check: $(tail -2 "$work/ic.out")"
fi
leftovers="$(find "$prefix" -name '.install.*' | head -3)"
[ -z "$leftovers" ] && pass "install leaves no temporary files" || fail "temporary files left: $leftovers"

echo "check: $passed passed, $failed failed"
[ "$failed" = 0 ]
