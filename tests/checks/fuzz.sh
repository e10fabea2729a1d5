#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (out.fuzz/) and runs each briefly
# from a seed corpus. Last line: "N passed, N failed" (one per fuzzer).
#
#   tests/checks/fuzz.sh                 short CI run: FUZZ_SECONDS (default 8) per fuzzer
#   tests/checks/fuzz.sh --long [SECONDS]
#                                        long run: SECONDS per fuzzer (default 300)
#   FUZZ_ONLY=npy tests/checks/fuzz.sh   only fuzzers whose name contains npy
#
# Fuzzers: neff, hlo_text, hlo_proto, npy, npz, safetensors, core_dump,
# wire (the collectives' set-up messages) (tests/fuzz/). Each
# runs with -rss_limit_mb=2048 and -malloc_limit_mb=1024, so an input that
# makes a reader allocate beyond reason fails like a crash, and with UBSan
# halting on the first report. Seeds: small corpus files for the HLO
# fuzzers, tiny .npy files and core dumps written here, and what
# tests/fuzz/seeds/<fuzzer>/ holds: bundles numpy wrote, and NEFFs
# neuron-compile made of examples/*.hlo and tests/nrt/c/models/*.hlo
# (compressed, uncompressed with --enable-fast-loading-neuron-binaries,
# trn2 with -lnc 2), so the NEFF fuzzer starts past the header checks.
# Every input under
# tests/fuzz/regressions/<fuzzer>/ is replayed first (it must pass); a
# finding is saved as out.fuzz/<fuzzer>-crash-* (or oom-*, leak-*,
# timeout-*): copy it into tests/fuzz/regressions/<fuzzer>/ with a
# descriptive name once fixed, and the GoogleTests replay it too.
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
seconds="${FUZZ_SECONDS:-8}"
if [ "${1:-}" = "--long" ]; then
  seconds="${2:-300}"
  case "$seconds" in ''|*[!0-9]*) echo "usage: $0 [--long [SECONDS]]" >&2; exit 2 ;; esac
fi
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

# Tiny .npy files (header per the NumPy format 1.0, then the data).
npy_seed() {  # file descr shape data-as-printf-escapes
  local header="{'descr': '$2', 'fortran_order': False, 'shape': $3, }"
  while [ $(( (10 + ${#header} + 1) % 64 )) != 0 ]; do header+=" "; done
  local len=$(( ${#header} + 1 ))
  printf '\x93NUMPY\x01\x00'"\\x$(printf %02x $((len % 256)))\\x$(printf %02x $((len / 256)))"'%s\n'"$4" "$header" >"$1"
}
# Tiny core dumps (man/neuron-core-dump.5), compressed with zstd.
core_dump_seed() {  # file sections-as-printf-escapes
  command -v zstd >/dev/null || return 0
  printf 'NCDUMP\x00\x01\x01\x00\x00\x00'"$2" | zstd -q -c >"$1"
}

passed=0 failed=0
for fuzzer in "$dir"/*_fuzzer; do
  [ -x "$fuzzer" ] || continue
  name="$(basename "$fuzzer")"
  case "$name" in *"${FUZZ_ONLY:-}"*) ;; *) continue ;; esac
  corpus="$dir/corpus/$name"
  regressions="$ROOT/tests/fuzz/regressions/$name"
  mkdir -p "$corpus"
  # Seeds: a few small real inputs for the format the fuzzer reads.
  case "$name" in
    hlo_text*) find "$ROOT/../shared/hlo" -name '*.hlo' -size -4k 2>/dev/null | head -40 | xargs -r cp -t "$corpus" ;;
    hlo_proto*) find "$ROOT/../shared/hlo" -name '*.pb' -size -64k 2>/dev/null | xargs -r cp -t "$corpus" ;;
    npy*)
      npy_seed "$corpus/seed-f32.npy" '<f4' '(2, 2)' '\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40'
      npy_seed "$corpus/seed-bool.npy" '|b1' '(3,)' '\x01\x00\x01'
      npy_seed "$corpus/seed-i64-scalar.npy" '<i8' '()' '\x07\x00\x00\x00\x00\x00\x00\x00'
      npy_seed "$corpus/seed-u2-empty.npy" '<u2' '(0, 4)' ''
      npy_seed "$corpus/seed-c8.npy" '<c8' '(1,)' '\x00\x00\x80\x3f\x00\x00\x00\x40' ;;
    core_dump*)
      # version 1 (in the prefix), then u32 count, sections: u32 kind, u32 meta length, u64 data length.
      core_dump_seed "$corpus/seed-info.ncdump" '\x01\x00\x00\x00''\x01\x00\x00\x00\x0f\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00''{"model":"m.x"}'
      core_dump_seed "$corpus/seed-buffer.ncdump" '\x02\x00\x00\x00''\x02\x00\x00\x00\x20\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00''{"name":"x","shape":[2,2],"b":4}\x01\x02\x03\x04''\x03\x00\x00\x00\x02\x00\x00\x00\x05\x00\x00\x00\x00\x00\x00\x00''{}log\n\n' ;;
    wire*)
      # Parser selector, world, then a message's first bytes (its magic).
      printf '\x02\x02MCCN' >"$corpus/seed-hello"
      printf '\x03\x02\x2a\x00\x00\x00\x00\x00\x00\x00MCCN' >"$corpus/seed-table"
      printf '\x05\x00Ftcp;ofi_rxm\x00\x02\x00\x30\x39\x7f\x00\x00\x01' >"$corpus/seed-endpoint"
      printf '\x08\x01DRSN\x01\x00\x00\x00\x40\x00\x00\x00\x00\x00\x00\x00' >"$corpus/seed-p2p-header" ;;
  esac
  # Committed seeds (tests/fuzz/seeds/<fuzzer>/: bundles, NEFFs).
  [ -d "$ROOT/tests/fuzz/seeds/$name" ] && cp "$ROOT/tests/fuzz/seeds/$name"/* "$corpus"/
  if [ -d "$regressions" ] && ! UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
       "$fuzzer" -rss_limit_mb=2048 -malloc_limit_mb=1024 "$regressions"/* >"$dir/$name.regressions.log" 2>&1; then
    echo "FAILED fuzz $name: a regression input fails again; see $dir/$name.regressions.log"
    grep -m5 -E 'ERROR|SUMMARY|Running:' "$dir/$name.regressions.log"
    failed=$((failed + 1))
    continue
  fi
  if UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
     "$fuzzer" -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=65536 \
       -artifact_prefix="$dir/$name-" \
       -print_final_stats=0 "$corpus" >"$dir/$name.log" 2>&1; then
    echo "fuzz $name: ok ($(grep -o 'Done [0-9]* runs' "$dir/$name.log" | tail -1) in ${seconds} s)"
    passed=$((passed + 1))
  else
    echo "FAILED fuzz $name: crash, leak, allocation beyond the limit or UB; see $dir/$name.log"
    grep -m5 -E 'ERROR|SUMMARY|Test unit written|runtime error' "$dir/$name.log"
    failed=$((failed + 1))
  fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" = 0 ]
