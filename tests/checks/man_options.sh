#!/usr/bin/env bash
# Every tool's (and subcommand's) --help, generated from its option table,
# lists the same options as its man page documents with mdoc .Fl entries:
# the .It Fl items of the section below, or every .Fl of a subsection that
# documents its options in prose. --help, -h, --version and -V, which every
# table has, are left out of the comparison.
# Last line: "check: N passed, N failed".
set -uo pipefail
source "$(dirname "$0")/lib/check.sh"

builtins='^(-h|--help|--version|-V)$'

# help_options TOOL [SUB]: the option spellings of the help's option rows.
help_options() {
  "$BUILD_DIR/$1" ${2:+"$2"} --help |
    awk '/^  -|^      -/ {
           sub(/^ +/, ""); sub(/  .*/, "")
           n = split($0, names, ", ")
           for (i = 1; i <= n; i++) { split(names[i], w, /[ [=]/); print w[1] }
         }' | grep -Ev "$builtins" | sort -u
}

# man_options PAGE MACRO TITLE MODE: the .Fl spellings of the section
# (MACRO Sh) or subsection (MACRO Ss) TITLE: MODE items takes .It lines,
# MODE all every line.
man_options() {
  awk -v macro=".$2" -v title="$3" -v mode="$4" '
    $1 == ".Sh" || ($1 == ".Ss" && macro == ".Ss") {
      t = $0; sub(/^\.S[hs] /, "", t); inside = ($1 == macro && t == title); next
    }
    inside && $1 ~ /^\./ && (mode == "all" || $1 == ".It") {
      for (i = 1; i < NF; i++) {
        if (($i == "Fl" || $i == ".Fl") && $(i + 1) ~ /^-?[A-Za-z]/) print "-" $(i + 1)
      }
    }' "$ROOT/man/$1.1" | grep -Ev "$builtins" | sort -u
}

# compare TOOL SUB MACRO TITLE MODE
compare() {
  local tool="$1" sub="$2" name="$1${2:+ $2}" help man
  help="$(help_options "$tool" "$sub")"
  if [ "$3" = none ]; then man=""; else man="$(man_options "$tool" "$3" "$4" "$5")"; fi
  if [ "$help" = "$man" ]; then
    pass "$name: --help and $tool(1) list the same $(echo $help | wc -w) options"
  else
    fail "$name: --help and $tool(1) differ: $(diff <(echo "$help") <(echo "$man") |
      sed -n 's/^</only in --help:/p; s/^>/only in the man page:/p' | tr '\n' ' ')"
  fi
}

compare neuron-exec "" Sh DESCRIPTION items
compare neuron-load "" Sh DESCRIPTION items
compare neuron-ls "" Sh DESCRIPTION items
compare neuron-allreduce "" Sh DESCRIPTION items
compare neuron-compile "" none
compare neuron-compile compile Sh OPTIONS items
compare neuron-compile list-operators Sh COMMANDS all
compare neuron-dump "" Ss "Runtime hand-off" all
compare neuron-dump show Ss show all
compare neuron-dump upload Ss upload all

# The comparison can fail: a made-up option is caught.
if [ "$(man_options neuron-exec Sh DESCRIPTION items)" != "$(help_options neuron-exec; echo --made-up)" ]; then
  pass "a difference is detected"
else
  fail "a made-up option went unnoticed"
fi

echo "check: $passed passed, $failed failed"
[ "$failed" = 0 ]
