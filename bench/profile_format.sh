#!/usr/bin/env bash
# Profile file formats: one device profile of SPANS per-instruction spans
# (default 2,000,000; 3000 distinct HLO instructions with their args, two
# cores) written through lib/profile's Trace as Trace Event JSON and as
# Perfetto's protobuf trace (NEURON_SIM_PROFILE_FORMAT=json|pftrace), in
# one run: the time to record the spans and to write the file (best of
# ROUNDS, order alternating), the file's size, and JSON / pftrace for each.
# Usage: bench/profile_format.sh [SPANS] [ROUNDS]
set -euo pipefail
source "$(dirname "$0")/bench_common.sh"
spans="${1:-2000000}"
rounds="${2:-3}"
bench_build profile_format

{
  read -r _ json_rec json_write json_bytes
  read -r _ pf_rec pf_write pf_bytes
} < <("$OUT/profile_format" "$spans" "$SCRATCH" "$rounds")
mb() { awk -v b="$1" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }
sum() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a + b }'; }
printf '%-30s %12s %12s %12s %14s\n' "$spans spans, best of $rounds" "record s" "write s" "total s" "size"
printf '%-30s %12s %12s %12s %14s\n' "json (Trace Event JSON)" "$json_rec" "$json_write" \
  "$(sum "$json_rec" "$json_write")" "$(mb "$json_bytes")"
printf '%-30s %12s %12s %12s %14s\n' "pftrace (Perfetto protobuf)" "$pf_rec" "$pf_write" \
  "$(sum "$pf_rec" "$pf_write")" "$(mb "$pf_bytes")"
printf '%-30s %12s %12s %12s %14s\n' "json / pftrace" "$(ratio "$json_rec" "$pf_rec")x" \
  "$(ratio "$json_write" "$pf_write")x" \
  "$(ratio "$(sum "$json_rec" "$json_write")" "$(sum "$pf_rec" "$pf_write")")x" \
  "$(ratio "$json_bytes" "$pf_bytes")x"
echo "bytes per span: json $(awk -v b="$json_bytes" -v n="$spans" 'BEGIN { printf "%.0f", b / n }')," \
  "pftrace $(awk -v b="$pf_bytes" -v n="$spans" 'BEGIN { printf "%.0f", b / n }')"
