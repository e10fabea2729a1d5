#!/usr/bin/env bash
# The pictures look like pictures: neuron-allreduce --plot (a run with an
# earlier report overlaid) and neuron-exec --plot (mlp on two cores) write
# whole SVG documents naming their series and marks, and headless Chromium
# renders each to a screenshot that is not blank: a fair share of
# non-background pixels, more than two colours, and each series' colour
# present. Without chromium the rendering checks skip with a NOTICE.
# Last line: "check: N passed, N failed".
set -uo pipefail
source "$(dirname "$0")/lib/check.sh"
finish() { echo "check: $passed passed, $failed failed"; [ "$failed" = 0 ]; exit $?; }

work="$(mktemp -d "${TMPDIR:-/tmp}/plots.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export NEURON_SIM_ROOT="$work/sim"  # cores of our own, apart from other tests

# svg_says FILE WORD...: a whole SVG whose text (PLplot writes each
# character as a character reference) contains every WORD.
svg_says() {
  /usr/bin/python3 - "$@" <<'PY'
import html, re, sys
svg = open(sys.argv[1], encoding="utf-8").read()
if not re.search(r"<svg[\s>]", svg) or not svg.rstrip().endswith("</svg>"):
    sys.exit("not a whole SVG document")
text = "\n".join(html.unescape(re.sub(r"<[^>]*>", "", t))
                 for t in re.findall(r"<text[^>]*>(.*?)</text>", svg, re.S))
missing = [w for w in sys.argv[2:] if w not in text]
if missing:
    sys.exit("missing " + ", ".join(repr(w) for w in missing))
PY
}

# 1. The pictures.
A="$BUILD_DIR/neuron-allreduce"
if "$A" -r 2 allr -b 1kb -e 1MB -f 4 -n 20 --report-to-json-file "$work/before.json" \
     >"$work/log" 2>&1 &&
   "$A" -r 2 allr -b 1kb -e 1MB -f 4 -n 20 -d fp32 --plot "$work/allreduce.svg" \
     --plot-compare "$work/before.json" >"$work/out" 2>"$work/err"; then
  pass "neuron-allreduce --plot with --plot-compare"
  grep -q "^Avg bus bandwidth" "$work/out" && ! grep -q "<svg" "$work/out" &&
    pass "neuron-allreduce: the table alone on stdout" ||
    fail "neuron-allreduce stdout: $(head -c 300 "$work/out")"
  if why="$(svg_says "$work/allreduce.svg" "this run: allr fp32 sum, 2 ranks" \
            "$work/before.json: allr uint8 sum, 2 ranks" "busbw (GB/s)" \
            "time per iteration (us)" "1 MiB" 2>&1)"; then
    pass "allreduce.svg names both runs, both panels and the sizes"
  else
    fail "allreduce.svg: $why"
  fi
else
  fail "neuron-allreduce --plot: $(cat "$work/log" "$work/err" 2>/dev/null | tail -3)"
fi

neff="$work/mlp.neff"
if "$BUILD_DIR/neuron-compile" compile "$ROOT/examples/mlp.hlo" -o "$neff" >"$work/log" 2>&1 &&
   "$BUILD_DIR/neuron-exec" "$neff" --random-inputs -n 200 --cores 0-1 \
     --plot "$work/latency.svg" >"$work/out" 2>"$work/err"; then
  pass "neuron-exec -n 200 --cores 0-1 --plot"
  if why="$(svg_says "$work/latency.svg" "nc0: p50" "nc1: p50" p50 p90 p99 \
            "200 iterations per core" "latency per execution (us)" 2>&1)"; then
    pass "latency.svg names both cores and p50/p90/p99"
  else
    fail "latency.svg: $why"
  fi
else
  fail "neuron-exec --plot: $(cat "$work/log" "$work/err" 2>/dev/null | tail -3)"
fi

# 2. What a browser makes of them.
chromium="$(command -v chromium || command -v chromium-browser || true)"
if [ -z "$chromium" ]; then
  echo "NOTICE: chromium is absent; the rendering checks are skipped"
  finish
fi

# not_blank PNG R,G,B...: decodes the screenshot (zlib + struct, 8-bit RGB
# or RGBA) and wants at least 3% of pixels off the background (the most
# common colour), more than two distinct colours, and for each R,G,B a
# pixel close to it (the series' colours of lib/plot/colors.cc).
not_blank() {
  /usr/bin/python3 - "$@" <<'PY'
import struct, sys, zlib
from collections import Counter
data = open(sys.argv[1], "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit("not a PNG")
pos, idat, width = 8, b"", 0
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if kind == b"IHDR":
        width, height, depth, ctype = struct.unpack(">IIBB", body[:10])
        if depth != 8 or ctype not in (2, 6):
            sys.exit(f"unexpected PNG format: depth {depth}, colour type {ctype}")
        bpp = 3 if ctype == 2 else 4
    elif kind == b"IDAT":
        idat += body
    pos += 12 + length
raw = zlib.decompress(idat)
stride = width * bpp
rows, prev, i = [], bytearray(stride), 0
for _ in range(height):
    f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
    i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b = prev[x]
        c = prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(bytes(line))
    prev = line
pixels = Counter()
for line in rows:
    for x in range(0, stride, bpp):
        pixels[line[x:x + 3]] += 1
total = width * height
background, count = pixels.most_common(1)[0]
inked = 1 - count / total
if inked < 0.03:
    sys.exit(f"only {inked:.1%} of the pixels differ from the background")
if len(pixels) <= 2:
    sys.exit(f"only {len(pixels)} colours")
for want in sys.argv[2:]:
    r, g, b = map(int, want.split(","))
    if not any(abs(p[0] - r) + abs(p[1] - g) + abs(p[2] - b) < 40 for p in pixels):
        sys.exit(f"no pixel of the series colour {want}")
print(f"{width}x{height}, {inked:.1%} inked, {len(pixels)} colours")
PY
}

for picture in allreduce latency; do
  [ -f "$work/$picture.svg" ] || continue
  png="$work/$picture.png"
  timeout 60 "$chromium" --headless --disable-gpu --no-sandbox \
    --user-data-dir="$work/chromium-profile" --screenshot="$png" --window-size=1000,800 \
    "file://$work/$picture.svg" >"$work/chromium.log" 2>&1
  if [ ! -s "$png" ]; then
    fail "$picture: chromium made no screenshot: $(tail -2 "$work/chromium.log")"
    continue
  fi
  # The first two series colours: blue and red.
  if why="$(not_blank "$png" 31,119,180 214,39,40 2>&1)"; then
    pass "$picture.svg renders in chromium: $why"
  else
    fail "$picture.svg in chromium: $why"
  fi
  [ -n "${KEEP_PLOTS:-}" ] && cp "$work/$picture.svg" "$png" "$KEEP_PLOTS/"
done
finish
