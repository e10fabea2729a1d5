#!/usr/bin/env bash
# A full disk: every file the tools write (pictures included) appears whole
# or not at all. On a 1 MiB tmpfs filled to the last block (in a private
# mount namespace, so the mount goes away with this script even if it is
# killed), each tool fails with exit 1 and one line naming the file, leaves
# no partial or temporary file, and keeps what an earlier run wrote. Needs
# root (CI is); elsewhere it skips with a NOTICE.
# Last line: "check: N passed, N failed".
set -uo pipefail
source "$(dirname "$0")/lib/check.sh"
skip() {
  echo "NOTICE: full-disk checks skipped: $*"
  echo "check: 0 passed, 0 failed"
  exit 0
}

if [ -z "${FULL_DISK_INSIDE:-}" ]; then
  [ "$(id -u)" = 0 ] || skip "not root (tmpfs mounts need it)"
  command -v unshare >/dev/null || skip "no unshare(1)"
  unshare -m --propagation private true 2>/dev/null || skip "the kernel refuses a private mount namespace"
  FULL_DISK_INSIDE=1 exec unshare -m --propagation private bash "$0" "$@"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/full-disk.XXXXXX")"
disk="$work/disk"
mkdir -p "$disk"
trap 'umount "$disk" 2>/dev/null; rm -rf "$work"' EXIT
export NEURON_SIM_ROOT="$work/sim"  # cores of our own, apart from other tests
mount -t tmpfs -o size=1m tmpfs "$disk" || skip "cannot mount a tmpfs"

neff="$work/mlp.neff"
"$BUILD_DIR/neuron-compile" compile "$ROOT/examples/mlp.hlo" -o "$neff" >"$work/log" 2>&1 ||
  { fail "compile the model: $(tail -1 "$work/log")"; echo "check: $passed passed, $failed failed"; exit 1; }

# What an earlier run left, then fill the disk to the last block.
mkdir -p "$disk/outs"
printf old >"$disk/outs/out0.npy"
printf old >"$disk/report.json"
dd if=/dev/zero of="$disk/fill" bs=4k status=none 2>/dev/null
dd if=/dev/zero of="$disk/fill2" bs=1 status=none 2>/dev/null
before="$(cd "$disk" && find . | sort)"

# expect_full NAME FILE-NAMED -- COMMAND...: exit 1, one error line naming
# the file and the full disk, and the disk's contents unchanged.
expect_full() {
  local name="$1" named="$2"
  shift 3
  "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  local after
  after="$(cd "$disk" && find . | sort)"
  if [ "$rc" != 1 ]; then
    fail "$name: exit $rc, expected 1: $(tail -2 "$work/err")"
  elif ! grep -q "$named" "$work/err" || ! grep -q "No space left on device" "$work/err"; then
    fail "$name: the error does not name '$named' and the full disk: $(cat "$work/err")"
  elif [ "$after" != "$before" ]; then
    fail "$name: the disk changed: $(diff <(echo "$before") <(echo "$after") | tail -3)"
  elif [ "$(cat "$disk/outs/out0.npy")" != old ] || [ "$(cat "$disk/report.json")" != old ]; then
    fail "$name: an earlier file was overwritten"
  else
    pass "$name"
  fi
}

expect_full "neuron-compile -o on a full disk" "$disk/mlp.neff" -- \
  "$BUILD_DIR/neuron-compile" compile "$ROOT/examples/mlp.hlo" -o "$disk/mlp.neff"
expect_full "neuron-exec --output-dir on a full disk" "$disk/outs/out0.npy" -- \
  "$BUILD_DIR/neuron-exec" "$neff" --random-inputs --output-dir "$disk/outs"
expect_full "neuron-exec -o on a full disk" "$disk/y.npy" -- \
  "$BUILD_DIR/neuron-exec" "$neff" --random-inputs -o "#0=$disk/y.npy"
expect_full "neuron-allreduce --report-to-json-file on a full disk" "$disk/report.json" -- \
  "$BUILD_DIR/neuron-allreduce" -r 2 -b 64 -e 64 -n 2 -w 1 --report-to-json-file "$disk/report.json"
expect_full "neuron-exec --plot on a full disk" "$disk/latency.svg" -- \
  "$BUILD_DIR/neuron-exec" "$neff" --random-inputs -n 20 --plot "$disk/latency.svg"
expect_full "neuron-allreduce --plot on a full disk" "$disk/allreduce.svg" -- \
  "$BUILD_DIR/neuron-allreduce" -r 2 -b 64 -e 64 -n 2 -w 1 --plot "$disk/allreduce.svg"

# With room again, the same runs write whole files.
rm -f "$disk/fill" "$disk/fill2"
if "$BUILD_DIR/neuron-exec" "$neff" --random-inputs --output-dir "$disk/outs" >/dev/null 2>"$work/err" &&
   [ "$(head -c 6 "$disk/outs/out0.npy" | tail -c 5)" = NUMPY ]; then
  pass "neuron-exec --output-dir with room writes whole .npy files"
else
  fail "neuron-exec --output-dir with room: $(tail -1 "$work/err")"
fi

echo "check: $passed passed, $failed failed"
[ "$failed" = 0 ]
