#!/usr/bin/env bash
# libnrt as its users get it: install into an empty prefix, then build each
# tests/nrt/c/*.c program with nothing but `pkg-config --cflags --libs nrt`
# (C99, -Wall -Wextra -Werror) and run it, plain and under ASan+UBSan; a
# client that dlopen()s libnrt.so.1 and resolves every public function; the
# exported symbols against the headers' functions; the library's
# dependencies; the headers from C++; and the README's example program.
# Last line: "check: N passed, N failed".
set -uo pipefail
source "$(dirname "$0")/lib/check.sh"
CC="${CC:-cc}"
CXX="${CXX:-c++}"

if [ ! -f "$BUILD_DIR/libnrt.so.1" ]; then
  echo "NOTICE: $BUILD_DIR/libnrt.so.1 not built; libnrt checks skipped"
  echo "check: 0 passed, 0 failed"
  exit 0
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/nrt-c-api.XXXXXX")"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"

if "$ROOT/scripts/install" --prefix "$prefix" --build-dir "$BUILD_DIR" --no-ldconfig >"$work/install.log" 2>&1; then
  pass "install into an empty prefix"
else
  fail "install: $(tail -3 "$work/install.log")"
  echo "check: $passed passed, $failed failed"
  exit 1
fi
flags="$(pkg-config --cflags --libs nrt)" && pass "pkg-config nrt: $flags" || fail "pkg-config nrt"

# The models the programs run, compiled by the installed neuron-compile.
mkdir -p "$work/models"
for hlo in "$ROOT"/tests/nrt/c/models/*.hlo; do
  name="$(basename "$hlo" .hlo)"
  "$prefix/bin/neuron-compile" compile "$hlo" --output "$work/models/$name.neff" \
    >"$work/compile-$name.log" 2>&1 || fail "neuron-compile $name: $(tail -1 "$work/compile-$name.log")"
done

# The public functions, as declared in the installed headers.
funcs="$work/functions.txt"
cat "$prefix"/include/nrt/*.h |
  grep -oE '^[A-Za-z_][A-Za-z0-9_ *]*[ *](nrta?_[a-z0-9_]+)\(' |
  grep -oE 'nrta?_[a-z0-9_]+\($' | tr -d '(' | sort -u >"$funcs"

# run_program NAME BINARY [ARGS...]: in its own directory and device tree.
run_program() {
  local name="$1" bin="$2"
  shift 2
  local dir="$work/run-$name"
  mkdir -p "$dir/sim"
  if (cd "$dir" && NEURON_SIM_ROOT="$dir/sim" NEURON_RT_LOG_LEVEL=ERROR timeout 300 "$bin" "$@") \
      >"$dir/out.log" 2>&1; then
    pass "$name: $(tail -1 "$dir/out.log")"
  else
    fail "$name (exit $?):"
    tail -15 "$dir/out.log"
  fi
}

c_flags=(-std=c99 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror)
asan_flags=(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
# A sanitizer build's library (scripts/test --sanitize) needs the sanitizer
# runtimes, which must come first in the process: there every program is
# built with them, and only the plain build is held to "libc only".
sanitized=0
readelf -d "$prefix/lib/libnrt.so.1" | grep -q 'libasan' && sanitized=1
preload=""
if [ "$sanitized" = 1 ]; then
  echo "NOTICE: libnrt.so.1 is a sanitizer build; its C programs run under ASan only"
  # Programs built as users build them get the runtime preloaded instead.
  preload="$("$CC" -print-file-name=libasan.so)"
fi
# A port nothing listens on now, for the programs that open sockets.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

for src in "$ROOT"/tests/nrt/c/*.c; do
  name="$(basename "$src" .c)"
  [ "$name" = dlopen_all ] && continue
  # shellcheck disable=SC2086
  if [ "$sanitized" = 1 ]; then
    :
  elif "$CC" "${c_flags[@]}" "$src" -o "$work/$name" $flags 2>"$work/cc-$name.log"; then
    run_program "$name" "$work/$name" "$work/models" "$(free_port)"
  else
    fail "$name does not build:"; head -20 "$work/cc-$name.log"
  fi
  # shellcheck disable=SC2086
  if "$CC" "${c_flags[@]}" "${asan_flags[@]}" "$src" -o "$work/$name.asan" $flags \
      2>"$work/cc-$name-asan.log"; then
    ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 run_program "$name-asan" "$work/$name.asan" "$work/models" "$(free_port)"
  else
    fail "$name does not build with ASan:"; head -20 "$work/cc-$name-asan.log"
  fi
done

# Core indices count from the first visible core, as libnrt documents:
# with NEURON_RT_VISIBLE_CORES=1 the program's vnc 0 is logical core 1.
if [ -x "$work/core" ]; then
  run_program core-visible-core-1 env NEURON_RT_VISIBLE_CORES=1 "$work/core" "$work/models"
fi

# Bindings load the library by name and resolve each function.
dlopen_flags=("${c_flags[@]}")
[ "$sanitized" = 1 ] && dlopen_flags+=("${asan_flags[@]}")
if "$CC" "${dlopen_flags[@]}" -I"$prefix/include" "$ROOT/tests/nrt/c/dlopen_all.c" -o "$work/dlopen_all" -ldl \
    2>"$work/cc-dlopen.log"; then
  LD_LIBRARY_PATH="$prefix/lib" run_program dlopen_all "$work/dlopen_all" "$work/models" "$funcs"
else
  fail "dlopen_all does not build:"; head -20 "$work/cc-dlopen.log"
fi

# Exports: exactly the headers' functions, nothing else.
nm -D --defined-only "$prefix/lib/libnrt.so.1" | awk '{print $3}' | sed 's/@.*//' | sort -u >"$work/exports.txt"
if diff "$funcs" "$work/exports.txt" >"$work/exports.diff"; then
  pass "exports: the $(wc -l <"$funcs") functions of the headers and nothing else"
else
  fail "exports differ from the headers (< declared only, > exported only):"
  head -20 "$work/exports.diff"
fi

# Dependencies: the C library only.
needed="$(readelf -d "$prefix/lib/libnrt.so.1" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | sort | tr '\n' ' ')"
extra="$(echo "$needed" | tr ' ' '\n' | grep -vE '^(libc\.so\.6|libm\.so\.6|libpthread\.so\.0|libdl\.so\.2|ld-linux-x86-64\.so\.2|)$' || true)"
if [ "$sanitized" = 1 ]; then
  echo "NOTICE: dependencies not checked in a sanitizer build (it needs: $needed)"
elif [ -z "$extra" ]; then
  pass "libnrt.so.1 needs only: $needed"
else
  fail "libnrt.so.1 needs more than libc: $extra"
fi
soname="$(readelf -d "$prefix/lib/libnrt.so.1" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')"
[ "$soname" = libnrt.so.1 ] && pass "SONAME libnrt.so.1" || fail "SONAME is '$soname'"

# The headers from C++.
printf '%s\n' '#include "nrt/ndebug_stream.h"' '#include "nrt/nrt.h"' '#include "nrt/nrt_async.h"' '#include "nrt/nrt_async_sendrecv.h"' \
  '#include "nrt/nrt_experimental.h"' '#include "nrt/nrt_profile.h"' '#include "nrt/nrt_status.h"' \
  '#include "nrt/nrt_sys_trace.h"' '#include "nrt/nrt_version.h"' \
  'int main() { nrt_version_t v; return nrt_get_version(&v, sizeof v) == NRT_SUCCESS ? 0 : 1; }' >"$work/cxx.cc"
# shellcheck disable=SC2086
if "$CXX" -std=c++17 -Wall -Wextra -Werror "$work/cxx.cc" -o "$work/cxx" $flags 2>"$work/cxx.log" &&
    LD_PRELOAD="$preload" "$work/cxx"; then
  pass "headers build and link from C++"
else
  fail "headers from C++:"; head -10 "$work/cxx.log"
fi

# The README's example exactly as written: its HLO, its program, its
# commands (with the installed tools first on PATH), its printed output.
readme_block() {  # the fenced block after the marker <!-- nrt-example:NAME -->
  sed -n "/<!-- nrt-example:$1 -->/,/^\`\`\`\$/p" "$ROOT/README.md" | sed '1,2d;$d'
}
readme_dir="$work/readme"
mkdir -p "$readme_dir/sim"
readme_block hlo >"$readme_dir/add_mul.hlo"
readme_block program >"$readme_dir/add.c"
readme_block build >"$readme_dir/commands.sh"
readme_block output >"$readme_dir/expected.txt"
if [ ! -s "$readme_dir/add.c" ] || [ ! -s "$readme_dir/commands.sh" ] || [ ! -s "$readme_dir/expected.txt" ]; then
  fail "README: the nrt example blocks (hlo, program, build, output) are missing"
elif (cd "$readme_dir" && PATH="$prefix/bin:$PATH" NEURON_SIM_ROOT="$readme_dir/sim" \
        NEURON_RT_LOG_LEVEL=ERROR LD_PRELOAD="$preload" ASAN_OPTIONS=detect_leaks=0 bash -e commands.sh) >"$readme_dir/out.txt" 2>"$readme_dir/err.txt"; then
  if diff "$readme_dir/expected.txt" "$readme_dir/out.txt" >/dev/null; then
    pass "README example builds, runs and prints what the README says"
  else
    fail "README example printed something else:"; diff "$readme_dir/expected.txt" "$readme_dir/out.txt" | head
  fi
else
  fail "README example commands failed:"; tail -10 "$readme_dir/err.txt"
fi

echo "check: $passed passed, $failed failed"
