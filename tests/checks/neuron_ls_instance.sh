#!/usr/bin/env bash
# neuron-ls on a faked real instance: in a private mount namespace, tmpfs
# over /sys/devices/virtual (the driver's class devices without the
# simulator's files, mode 0400 core_count and connected_devices, DMI) and
# /sys/bus/pci/devices (numa_node, local_cpulist), and the driver's ioctls
# answered by tests/checks/lib/fake_neuron_driver.c through LD_PRELOAD.
# neuron-ls must show the driver's BDF, the PCI NUMA node and CPU affinity
# and the process holding cores; as a normal user one line says what needs
# root, and nothing reads as 0. Needs root (CI is) and a C compiler;
# elsewhere it skips with a NOTICE.
# Last line: "check: N passed, N failed".
set -uo pipefail
source "$(dirname "$0")/lib/check.sh"
skip() {
  echo "NOTICE: neuron-ls instance checks skipped: $*"
  echo "check: 0 passed, 0 failed"
  exit 0
}

if [ -z "${LS_INSTANCE_INSIDE:-}" ]; then
  [ "$(id -u)" = 0 ] || skip "not root (tmpfs mounts need it)"
  command -v unshare >/dev/null || skip "no unshare(1)"
  command -v setpriv >/dev/null || skip "no setpriv(1) to run as a normal user"
  command -v "${CC:-cc}" >/dev/null || skip "no C compiler for the fake driver"
  unshare -m --propagation private true 2>/dev/null || skip "the kernel refuses a private mount namespace"
  LS_INSTANCE_INSIDE=1 exec unshare -m --propagation private bash "$0" "$@"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/ls-instance.XXXXXX")"
chmod 755 "$work"
holder=""
trap '[ -n "$holder" ] && kill "$holder" 2>/dev/null; rm -rf "$work"' EXIT
"${CC:-cc}" -shared -fPIC -O1 -o "$work/fake_driver.so" "$ROOT/tests/checks/lib/fake_neuron_driver.c" -ldl ||
  skip "cannot build the fake driver"
mount -t tmpfs tmpfs /sys/devices/virtual || skip "cannot mount a tmpfs over /sys/devices/virtual"
mount -t tmpfs tmpfs /sys/bus/pci/devices || skip "cannot mount a tmpfs over /sys/bus/pci/devices"

bdfs=(0000:10:1c.0 0000:a0:1d.0)
cpus=(0-31,64-95 32-63,96-127)
for d in 0 1; do
  dev=/sys/devices/virtual/neuron_device/neuron$d
  mkdir -p "$dev/info/architecture"
  printf 2 >"$dev/core_count"
  printf '%d\n' $((1 - d)) >"$dev/connected_devices"
  chmod 400 "$dev/core_count" "$dev/connected_devices"
  echo Trn1 >"$dev/info/architecture/instance_type"
  mkdir -p "/sys/bus/pci/devices/${bdfs[$d]}"
  echo "$d" >"/sys/bus/pci/devices/${bdfs[$d]}/numa_node"
  echo "${cpus[$d]}" >"/sys/bus/pci/devices/${bdfs[$d]}/local_cpulist"
done
mkdir -p /sys/devices/virtual/dmi/id
echo "Amazon EC2" >/sys/devices/virtual/dmi/id/sys_vendor
echo trn1.32xlarge >/sys/devices/virtual/dmi/id/product_name
echo i-0123456789abcdef0 >/sys/devices/virtual/dmi/id/board_asset_tag

# A process holding both cores of device 1; its command is read from
# /proc, so wait until the forked shell has become sleep.
sleep 300 &
holder=$!
for _ in $(seq 100); do
  [ "$(tr '\0' ' ' <"/proc/$holder/cmdline" 2>/dev/null)" = "sleep 300 " ] && break
  sleep 0.05
done

# An AddressSanitizer build's runtime must come first among the preloads.
asan_runtime=$(ldd "$BUILD_DIR/neuron-ls" 2>/dev/null | awk '/libasan/ { print $3; exit }')

ls_run() {  # ls_run [as-nobody] ARGS...: stdout to $work/out, stderr to $work/err
  local prefix=()
  if [ "${1:-}" = as-nobody ]; then
    prefix=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    shift
  fi
  env -u NEURON_SIM_ROOT FAKE_NEURON_BDFS="${bdfs[*]}" FAKE_NEURON_APPS="1:$holder:3" \
    LD_PRELOAD="${asan_runtime:+$asan_runtime:}$work/fake_driver.so" "${prefix[@]}" "$BUILD_DIR/neuron-ls" "$@" \
    >"$work/out" 2>"$work/err"
}
has() { grep -qF -- "$1" "$work/out"; }

ls_run
rc=$?
if [ "$rc" != 0 ] || [ -s "$work/err" ]; then
  fail "as root: exit $rc, stderr: $(head -2 "$work/err")"
elif ! has "| 0      | 2      | 0-1      | 32 GB  | 1         | 0000:10:1c.0 | 0-31,64-95   | 0    |" ||
     ! has "| 1      | 2      | 2-3      | 32 GB  | 0         | 0000:a0:1d.0 | 32-63,96-127 | 1    |"; then
  fail "as root: the table lacks the driver's BDF, the PCI NUMA node and CPU affinity: $(cat "$work/out")"
elif ! has "| $holder " || ! has "sleep 300" || ! has "instance-type: trn1.32xlarge" ||
     ! has "instance-id: i-0123456789abcdef0"; then
  fail "as root: the holder or the instance from DMI is missing: $(cat "$work/out")"
else
  pass "as root: BDF from the driver, NUMA node and CPU affinity from /sys/bus/pci, the holder, DMI"
fi

ls_run as-nobody
rc=$?
if [ "$rc" != 0 ]; then
  fail "as nobody: exit $rc: $(head -2 "$work/err")"
elif [ "$(wc -l <"$work/err")" != 1 ] || ! grep -q "readable by root only" "$work/err"; then
  fail "as nobody: expected one line saying what needs root, got: $(cat "$work/err")"
elif ! has "| 0      | 2      | 0-1      | 32 GB  | NA        | 0000:10:1c.0 |"; then
  fail "as nobody: cores should come from the catalog, links NA (never 0): $(cat "$work/out")"
else
  pass "as nobody: one line for the root-only files, the catalog's cores, links NA"
fi

ls_run as-nobody -j
if ! has '"connected_to": null' || ! has '"nc_count": 2' || has '"nc_count": 0'; then
  fail "as nobody, -j: unknown links must be null and cores 2: $(head -12 "$work/out")"
else
  pass "as nobody, -j: unknown links are null, never 0"
fi

# Without the driver's nodes (a container without --device): one line.
env -u NEURON_SIM_ROOT "$BUILD_DIR/neuron-ls" >"$work/out" 2>"$work/err"
rc=$?
if [ "$rc" != 0 ] || [ "$(wc -l <"$work/err")" != 1 ] ||
   ! grep -q "cannot open '/dev/neuron0'.*(and 1 more devices): PCI BDF, NUMA node, CPU affinity and processes unknown" "$work/err"; then
  fail "without /dev/neuronN: exit $rc, expected one line naming /dev/neuron0: $(cat "$work/err")"
else
  pass "without /dev/neuronN: one line naming the node"
fi

echo "check: $passed passed, $failed failed"
[ "$failed" = 0 ]
