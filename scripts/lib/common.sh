# Shared by scripts/demo, scripts/test and the benchmarks: install what is
# missing (idempotent; fast when nothing is), then build.
# Usage: source scripts/lib/common.sh; ensure_deps; build_tree out [gn args]

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# Debian packages the build, the tests and the benchmarks need.
DEPS=(
  generate-ninja ninja-build g++ pkg-config
  libabsl-dev libprotobuf-dev protobuf-compiler
  libcurl4-openssl-dev libzstd-dev zlib1g-dev libssl-dev
  libgtest-dev libgmock-dev nlohmann-json3-dev
  libopenblas-dev libopenblas-serial-dev libdnnl-dev
  mandoc
  clang-14 libclang-rt-14-dev
  python3 python3-numpy
  openmpi-bin
)

ensure_deps() {
  local missing=()
  local p
  for p in "${DEPS[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$p")
    fi
  done
  ((${#missing[@]} == 0)) && return 0
  echo "setup: installing ${missing[*]}" >&2
  local sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=120 update -qq >&2 || true
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=120 \
    install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# build_tree DIR [GN_ARGS]: (re)generates DIR when its args changed, then builds.
build_tree() {
  local dir="$1" args="${2:-}"
  local jobs
  jobs="$(nproc 2>/dev/null || echo 2)"
  if [ ! -f "$ROOT/$dir/build.ninja" ] || [ "$(cat "$ROOT/$dir/.gn-args" 2>/dev/null)" != "$args" ]; then
    (cd "$ROOT" && gn gen "$dir" --args="$args" >/dev/null) || return 1
    printf '%s' "$args" > "$ROOT/$dir/.gn-args"
  fi
  ninja -C "$ROOT/$dir" -j "$jobs" ${NINJA_TARGETS:-} | grep -v '^\[' >&2
  return "${PIPESTATUS[0]}"
}
