#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (out.fuzz/) and runs each briefly
# from a seed corpus. Last line: "N passed, N failed" (one per fuzzer).
# FUZZ_SECONDS sets the run time per fuzzer (default 8).
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
seconds="${FUZZ_SECONDS:-8}"
dir="$ROOT/out.fuzz"
if ! command -v clang++-14 >/dev/null; then
  echo "NOTICE: clang-14 is missing; fuzzers not run"
  echo "0 passed, 0 failed"
  exit 0
fi
if [ ! -f "$dir/build.ninja" ]; then
  (cd "$ROOT" && gn gen out.fuzz --args='use_clang=true' >/dev/null) || { echo "0 passed, 1 failed"; exit 1; }
fi
if ! ninja -C "$dir" -j "$(nproc)" fuzzers >"$dir/build.log" 2>&1; then
  tail -20 "$dir/build.log"
  echo "0 passed, 1 failed"
  exit 1
fi
passed=0 failed=0
for fuzzer in "$dir"/*_fuzzer; do
  [ -x "$fuzzer" ] || continue
  name="$(basename "$fuzzer")"
  corpus="$dir/corpus/$name"
  mkdir -p "$corpus"
  # Seeds: a few small real inputs for the format the fuzzer reads.
  case "$name" in
    hlo_text*) find "$ROOT/../shared/hlo" -name '*.hlo' -size -4k 2>/dev/null | head -40 | xargs -r cp -t "$corpus" ;;
    hlo_proto*) find "$ROOT/../shared/hlo" -name '*.pb' -size -64k 2>/dev/null | xargs -r cp -t "$corpus" ;;
  esac
  if "$fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 \
       -artifact_prefix="$dir/$name-" \
       -print_final_stats=0 "$corpus" >"$dir/$name.log" 2>&1; then
    echo "fuzz $name: ok ($(grep -o 'Done [0-9]* runs' "$dir/$name.log" | tail -1))"
    passed=$((passed + 1))
  else
    echo "FAILED fuzz $name: crash; see $dir/$name.log"
    grep -m5 -E 'ERROR|SUMMARY|Test unit written' "$dir/$name.log"
    failed=$((failed + 1))
  fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" = 0 ]
