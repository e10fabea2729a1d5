#!/usr/bin/env bash
# The command-line convention every tool and subcommand shares: an unknown
# option, an option missing its value and a stray operand each give exit 2
# with exactly two lines on stderr (the error naming the option, then
# "Try 'TOOL [SUB] --help'."), nothing on stdout; --help goes to stdout
# with exit 0; --version too.
# Last line: "check: N passed, N failed".
set -uo pipefail
source "$(dirname "$0")/lib/check.sh"

work="$(mktemp -d "${TMPDIR:-/tmp}/usage-errors.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# usage_error "TOOL [SUB]" NEEDLE ARGS...: exit 2, two lines, the first
# naming NEEDLE, the second the hint for "TOOL [SUB]".
usage_error() {
  local cmd="$1" needle="$2"; shift 2
  local tool="${cmd%% *}" sub=""
  [ "$cmd" != "$tool" ] && sub="${cmd#* }"
  "$BUILD_DIR/$tool" ${sub:+$sub} "$@" >"$work/out" 2>"$work/err"
  local rc=$? lines first second
  lines=$(wc -l <"$work/err")
  first="$(sed -n 1p "$work/err")" second="$(sed -n 2p "$work/err")"
  if [ "$rc" = 2 ] && [ "$lines" = 2 ] && [ ! -s "$work/out" ] &&
     [[ "$first" == "$tool: error: "*"$needle"* ]] && [ "$second" = "Try '$cmd --help'." ]; then
    pass "$cmd $*: usage error naming $needle"
  else
    fail "$cmd $*: exit $rc, stdout $(wc -c <"$work/out") bytes, stderr: $(cat "$work/err")"
  fi
}

for cmd in neuron-exec neuron-load neuron-ls neuron-allreduce "neuron-compile compile" \
           "neuron-compile list-operators" "neuron-dump show" "neuron-dump upload"; do
  usage_error "$cmd" "--no-such-option" --no-such-option
  tool="${cmd%% *}"
  sub="${cmd#"$tool"}"
  if "$BUILD_DIR/$tool" $sub --help >"$work/out" 2>"$work/err" && [ ! -s "$work/err" ] &&
     grep -q "^usage: $cmd " "$work/out"; then
    pass "$cmd --help"
  else
    fail "$cmd --help: $(head -3 "$work/err")"
  fi
  if "$BUILD_DIR/$tool" $sub --version >"$work/out" 2>&1 && grep -q "^$tool (neuron-tools) " "$work/out"; then
    pass "$cmd --version"
  else
    fail "$cmd --version: $(head -3 "$work/out")"
  fi
done
usage_error neuron-exec "'-c' needs a value" model.neff -c
usage_error neuron-exec "unexpected argument 'b.neff'" a.neff b.neff
usage_error neuron-exec "--iterations '0'" a.neff --iterations=0
usage_error neuron-exec "-n 'x'" a.neff -pjnx
usage_error neuron-load "no NEFF or HLO module given" --json
usage_error neuron-ls "unexpected argument 'extra'" -w -- extra
usage_error neuron-allreduce "-d 'fp8'" -r 2 -d fp8
usage_error neuron-allreduce "unknown collective 'bogus'" -r 2 bogus
usage_error "neuron-compile compile" "missing the model FILE" -O2
usage_error neuron-compile "give a command"
usage_error neuron-compile "unknown command 'frobnicate'" frobnicate
usage_error neuron-dump "unknown command 'frobnicate'" frobnicate
usage_error "neuron-dump upload" "--to" x
usage_error "neuron-dump show" "give a FILE" --json

echo "check: $passed passed, $failed failed"
[ "$failed" = 0 ]
