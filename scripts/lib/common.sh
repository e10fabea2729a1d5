# Shared by scripts/demo, scripts/test and the benchmarks: install what is
# missing (idempotent; fast when nothing is), then build.
# Usage: source scripts/lib/common.sh; ensure_deps; build_tree out [gn args]

ROOT="$(cd -P "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# Debian packages the build, the tests and the benchmarks need.
DEPS=(
  generate-ninja ninja-build g++ pkg-config
  libabsl-dev libprotobuf-dev protobuf-compiler
  libcurl4-openssl-dev libzstd-dev zlib1g-dev libssl-dev libzip-dev
  libgtest-dev libgmock-dev nlohmann-json3-dev
  libopenblas-dev libopenblas-serial-dev libdnnl-dev
  mandoc dpkg-dev jq zstd util-linux time
  clang-14 libclang-rt-14-dev
  python3 python3-numpy
  openmpi-bin
  libfabric-dev iproute2 nftables
  libplplot-dev chromium
  nodejs
)

ensure_deps() {
  local missing=()
  local p
  for p in "${DEPS[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$p")
    fi
  done
  # The S3 upload tests run a local S3 server from npm. Debian ships npm
  # apart from nodejs; a nodejs from elsewhere (NodeSource) bundles its own.
  command -v npm >/dev/null 2>&1 || missing+=(npm)
  ((${#missing[@]} == 0)) && { ensure_pic_sources; return; }
  echo "setup: installing ${missing[*]}" >&2
  local sudo=()
  [ "$(id -u)" = 0 ] || sudo=(sudo)
  "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=120 update -qq >&2 || true
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=120 \
    install -y -qq --no-install-recommends "${missing[@]}" >&2 || return 1
  ensure_pic_sources
}

# libnrt.so.1 links Abseil and protobuf statically, but Debian builds their
# archives as position-dependent code, and four of their objects use the
# local-exec TLS model no shared object may contain. Those four are rebuilt
# from Debian's own source packages (the versions installed, fetched with
# apt-get source into third_party/debian-src/) as PIC (build/third_party).
PIC_SOURCE_DIR="$ROOT/third_party/debian-src"
ensure_pic_sources() {
  local pkg version stamp tmp
  for pkg in abseil:libabsl-dev protobuf:libprotobuf-dev; do
    version="$(dpkg-query -W -f='${source:Version}' "${pkg#*:}")"
    stamp="$PIC_SOURCE_DIR/${pkg%%:*}/.debian-version"
    [ "$(cat "$stamp" 2>/dev/null)" = "$version" ] && continue
    echo "setup: fetching Debian's ${pkg%%:*} $version source (PIC objects for libnrt)" >&2
    tmp="$(mktemp -d)"
    mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial"
    echo 'deb-src http://deb.debian.org/debian bookworm main' >"$tmp/sources.list"
    echo 'deb-src http://deb.debian.org/debian-security bookworm-security main' >>"$tmp/sources.list"
    local apt=(apt-get -qq -o "Dir::Etc::SourceList=$tmp/sources.list" -o Dir::Etc::SourceParts=/dev/null
               -o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache=$tmp/cache"
               -o APT::Sandbox::User=root)
    if ! "${apt[@]}" update >&2 ||
       ! (cd "$tmp" && "${apt[@]}" source --download-only "${pkg%%:*}=$version" >&2) ||
       ! (cd "$tmp" && dpkg-source -x ./*.dsc src >/dev/null 2>"$tmp/unpack.log"); then
      cat "$tmp/unpack.log" >&2 2>/dev/null
      rm -rf "$tmp"
      echo "setup: cannot fetch Debian's ${pkg%%:*} $version source" >&2
      return 1
    fi
    rm -rf "${PIC_SOURCE_DIR:?}/${pkg%%:*}"
    mkdir -p "$PIC_SOURCE_DIR"
    mv "$tmp/src" "$PIC_SOURCE_DIR/${pkg%%:*}"
    echo "$version" >"$stamp"
    rm -rf "$tmp"
  done
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
