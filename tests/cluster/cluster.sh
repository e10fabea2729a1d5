#!/usr/bin/env bash
# A test cluster of N "hosts" on one machine: one network namespace per host
# (NAME-h0 .. NAME-h{N-1}), each with an eth0 veth whose other end sits on a
# bridge in a switch namespace (NAME-sw). Nothing is added to the root
# namespace, so the cluster's traffic never leaves it and two clusters never
# see each other. Needs root (or CAP_NET_ADMIN + CAP_SYS_ADMIN).
#
# CLI:
#   cluster.sh up NAME N [--rate RATE]  make it; RATE (e.g. 2gbit) shapes both
#                                       ends of every link with tbf
#   cluster.sh down NAME                remove it and end its processes (idempotent)
#   cluster.sh exec NAME I CMD...       run CMD on host I (own hostname NAME-hI)
#   cluster.sh addr NAME I              print host I's address
#   cluster.sh cut NAME I | heal NAME I take host I's link down / up
#   cluster.sh loss NAME I PCT          drop PCT% (0: none) of host I's incoming
#                                       packets; exit 3 where no firewall tool works
#   cluster.sh mpirun NAME ARGS...      mpirun from host 0 with the flags below,
#                                       e.g. -np 4 --host NAME-h0,NAME-h1,...
#   cluster.sh mpirun-flags             those flags, one a line: netns-rsh as the
#                                       remote shell, eth0 only, root allowed
# `up` exits 77 with one line saying why when namespaces cannot be made.
# Libraries, tools and file systems are the machine's: every host sees the
# same files, as hosts sharing an NFS home would.
#
# Library: `source tests/cluster/cluster.sh`, then cluster_up NAME N ... (the
# same commands as cluster_* functions, returning instead of exiting).
# cluster_up removes what it made when it fails half way; after it succeeds
# the caller owns the cluster and must `trap 'cluster_down NAME' EXIT` (if the
# caller has no EXIT trap yet, cluster_up installs one that downs every
# cluster this shell made, so a caller that dies early leaves nothing).
#
# Addresses: host I is 10.X.0.(I+1)/24, X = 16 + (cksum of NAME mod 200),
# so clusters of different names usually differ in logs; they are isolated
# L2 networks either way, so equal X is harmless.

_CLUSTER_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
_CLUSTER_MADE=()

_cluster_err() { echo "cluster: $*" >&2; }

# The second octet for NAME.
_cluster_net() {
  local sum
  sum=$(printf '%s' "$1" | cksum | cut -d' ' -f1)
  echo $((16 + sum % 200))
}

cluster_addr() {
  local name="$1" i="$2"
  echo "10.$(_cluster_net "$name").0.$((i + 1))"
}

# Hosts of a cluster, from the namespaces that exist.
cluster_size() {
  local n=0
  while [ -e "/run/netns/$1-h$n" ]; do n=$((n + 1)); done
  echo "$n"
}

_cluster_ns_ok() {  # NAME I: host I exists
  if [ ! -e "/run/netns/$1-h$2" ]; then
    _cluster_err "no host $2 in cluster $1 (namespace $1-h$2 does not exist)"
    return 1
  fi
}

# Every process that runs in one of NAME's namespaces, killed (SIGKILL):
# only what this cluster's callers started can be in there.
_cluster_kill_procs() {
  local name="$1" ns pids
  for ns in /run/netns/"$name"-h* /run/netns/"$name"-sw; do
    [ -e "$ns" ] || continue
    pids=$(ip netns pids "$(basename "$ns")" 2>/dev/null) || continue
    # shellcheck disable=SC2086
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null
  done
  return 0
}

cluster_down() {
  local name="$1" ns
  [ -n "$name" ] || { _cluster_err "down: NAME is required"; return 2; }
  _cluster_kill_procs "$name"
  # Deleting a namespace deletes the veth ends in it, and so both ends.
  for ns in /run/netns/"$name"-h* /run/netns/"$name"-sw; do
    [ -e "$ns" ] && ip netns del "$(basename "$ns")" 2>/dev/null
  done
  return 0
}

_cluster_down_made() {
  local n
  for n in "${_CLUSTER_MADE[@]}"; do cluster_down "$n"; done
}

# tbf on DEV in NS at RATE: the burst must hold a tick's worth of bytes at
# the rate (HZ may be 100) and at least one 64 KiB GSO packet.
_cluster_shape() {
  local ns="$1" dev="$2" rate="$3"
  ip netns exec "$ns" tc qdisc replace dev "$dev" root tbf rate "$rate" \
    burst 4mbit latency 50ms
}

cluster_up() {
  local name="" n="" rate=""
  while (($#)); do
    case "$1" in
      --rate) rate="${2:-}"; shift 2 || { _cluster_err "--rate needs a value"; return 2; } ;;
      --rate=*) rate="${1#--rate=}"; shift ;;
      -*) _cluster_err "up: unknown option $1"; return 2 ;;
      *) if [ -z "$name" ]; then name="$1"; elif [ -z "$n" ]; then n="$1"; else
           _cluster_err "up: unexpected argument $1"; return 2; fi; shift ;;
    esac
  done
  if [ -z "$name" ] || ! [[ "$n" =~ ^[0-9]+$ ]] || ((n < 1 || n > 250)); then
    _cluster_err "usage: cluster.sh up NAME N [--rate RATE] (N from 1 to 250)"
    return 2
  fi
  if ! [[ "$name" =~ ^[A-Za-z0-9][A-Za-z0-9_.]*$ ]] || ((${#name} > 24)); then
    _cluster_err "up: NAME '$name' must be letters, digits, '_' or '.', at most 24"
    return 2
  fi
  if [ "$(id -u)" != 0 ]; then
    _cluster_err "skipped: namespaces need root (uid is $(id -u))"
    return 77
  fi
  local tool
  for tool in ip tc; do
    command -v "$tool" >/dev/null || { _cluster_err "skipped: $tool (iproute2) is not installed"; return 77; }
  done
  if [ -e "/run/netns/$name-sw" ]; then
    _cluster_err "up: cluster $name exists already (cluster.sh down $name)"
    return 1
  fi
  local out
  if ! out=$(ip netns add "$name-sw" 2>&1); then
    _cluster_err "skipped: cannot make a network namespace: $out"
    return 77
  fi
  _CLUSTER_MADE+=("$name")
  if [ -z "$(trap -p EXIT)" ] && [ "${BASH_SOURCE[-1]}" != "${BASH_SOURCE[0]}" ]; then
    trap _cluster_down_made EXIT
  fi
  # From here on a failure removes the half-made cluster.
  local net i
  net=$(_cluster_net "$name")
  if ! out=$(ip -n "$name-sw" link add br0 type bridge 2>&1 &&
             ip -n "$name-sw" link set br0 up 2>&1 &&
             ip -n "$name-sw" link set lo up 2>&1); then
    cluster_down "$name"
    _cluster_err "skipped: cannot make a bridge in a namespace: $out"
    return 77
  fi
  for ((i = 0; i < n; i++)); do
    local h="$name-h$i"
    if ! out=$(ip netns add "$h" 2>&1 &&
               ip link add eth0 netns "$h" type veth peer name "h$i" netns "$name-sw" 2>&1 &&
               ip -n "$name-sw" link set "h$i" master br0 2>&1 &&
               ip -n "$name-sw" link set "h$i" up 2>&1 &&
               ip -n "$h" addr add "10.$net.0.$((i + 1))/24" dev eth0 2>&1 &&
               ip -n "$h" link set eth0 up 2>&1 &&
               ip -n "$h" link set lo up 2>&1); then
      cluster_down "$name"
      if ((i == 0)); then
        _cluster_err "skipped: cannot link a namespace to a bridge (veth): $out"
        return 77
      fi
      _cluster_err "up: host $i: $out"
      return 1
    fi
    if [ -n "$rate" ]; then
      if ! out=$({ _cluster_shape "$h" eth0 "$rate" && _cluster_shape "$name-sw" "h$i" "$rate"; } 2>&1); then
        cluster_down "$name"
        _cluster_err "up: --rate $rate: tc tbf: $out"
        return 1
      fi
    fi
  done
  return 0
}

# Runs CMD on host I with the host's own hostname (a UTS namespace of its
# own), as a process of that network namespace; stdin/stdout pass through.
cluster_exec() {
  local name="$1" i="$2"
  shift 2 || { _cluster_err "usage: cluster.sh exec NAME I CMD..."; return 2; }
  (($#)) || { _cluster_err "usage: cluster.sh exec NAME I CMD..."; return 2; }
  _cluster_ns_ok "$name" "$i" || return 1
  # shellcheck disable=SC2016  # expanded by that sh
  ip netns exec "$name-h$i" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$name-h$i" "$@"
}

cluster_cut() {
  _cluster_ns_ok "$1" "$2" || return 1
  ip -n "$1-h$2" link set eth0 down
}

cluster_heal() {
  _cluster_ns_ok "$1" "$2" || return 1
  ip -n "$1-h$2" link set eth0 up
}

# Drops PCT% of what host I receives on eth0 (random, per packet): nftables'
# numgen, else iptables' statistic match. PCT 0 removes the rule. Returns 3
# when neither tool can install it.
cluster_loss() {
  local name="$1" i="$2" pct="${3:-}"
  if ! [[ "$pct" =~ ^[0-9]+(\.[0-9]+)?$ ]] || awk -v p="$pct" 'BEGIN { exit !(p > 100) }'; then
    _cluster_err "usage: cluster.sh loss NAME I PCT (PCT from 0 to 100)"
    return 2
  fi
  _cluster_ns_ok "$name" "$i" || return 1
  local ns="$name-h$i" why=""
  # Per ten thousand, so fractions like 0.5% work with nft's integer compare.
  local bp prob
  bp=$(awk -v p="$pct" 'BEGIN { printf "%d", p * 100 + 0.5 }')
  prob=$(awk -v p="$pct" 'BEGIN { printf "%.4f", p / 100 }')
  if command -v nft >/dev/null; then
    ip netns exec "$ns" nft delete table inet cluster_loss 2>/dev/null
    ((bp == 0)) && return 0
    if why=$(ip netns exec "$ns" nft -f - 2>&1 <<EOF
table inet cluster_loss {
  chain input {
    type filter hook input priority -10; policy accept;
    iifname "eth0" numgen random mod 10000 < $bp drop
  }
}
EOF
    ); then
      return 0
    fi
    why="nft: $why"
  fi
  if command -v iptables >/dev/null; then
    while ip netns exec "$ns" iptables -D INPUT -i eth0 -m statistic --mode random \
        --probability "$prob" -j DROP 2>/dev/null; do :; done
    ip netns exec "$ns" iptables -S INPUT 2>/dev/null | grep -- '-m statistic' |
      sed 's/^-A/-D/' | while read -r rule; do
        # shellcheck disable=SC2086
        ip netns exec "$ns" iptables $rule 2>/dev/null
      done
    ((bp == 0)) && return 0
    local e
    if e=$(ip netns exec "$ns" iptables -A INPUT -i eth0 -m statistic --mode random \
             --probability "$prob" -j DROP 2>&1); then
      return 0
    fi
    why="${why:+$why; }iptables: $e"
  fi
  ((bp == 0)) && return 0
  _cluster_err "loss: cannot drop packets on $ns: ${why:-neither nft (nftables) nor iptables is installed}"
  return 3
}

# The mpirun flags that start ranks in the cluster's namespaces, one word a
# line (for mapfile), hosts given as --host NAME-h0,NAME-h1,...
# mpirun itself must run on host 0 (cluster_mpirun does): from the root
# namespace the orteds cannot connect back to it (no route; by design).
#  - netns-rsh is the "remote shell": `ip netns exec HOST` instead of ssh;
#  - OOB and the TCP BTL on eth0: Open MPI leaves lo out on its own, but a
#    host with more interfaces would offer them too;
#  - no tree spawn: mpirun starts every orted itself (works either way,
#    one hop is simpler to follow in a failure);
#  - root is allowed, and oversubscription: the "hosts" share the CPUs.
cluster_mpirun_flags() {
  printf '%s\n' --allow-run-as-root --oversubscribe \
    --mca plm_rsh_agent "$_CLUSTER_DIR/netns-rsh" \
    --mca plm_rsh_no_tree_spawn 1 \
    --mca oob_tcp_if_include eth0 \
    --mca btl_tcp_if_include eth0
}

# cluster_mpirun NAME ARGS...: mpirun (NEURON_MPIRUN, else mpirun) run on
# host 0 with cluster_mpirun_flags before ARGS.
cluster_mpirun() {
  local name="$1"
  shift
  local flags
  mapfile -t flags < <(cluster_mpirun_flags)
  cluster_exec "$name" 0 env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    "${MPIRUN:-mpirun}" "${flags[@]}" "$@"
}

# --host's value for hosts 0..N-1 with SLOTS slots each.
cluster_hostlist() {
  local name="$1" n="$2" slots="${3:-1}" i list=""
  for ((i = 0; i < n; i++)); do list+="${list:+,}$name-h$i:$slots"; done
  echo "$list"
}

# A random first port for a run's listeners, below the kernel's ephemeral
# range: a port from that range may still be held by a connection of an
# earlier job (closing, or in FIN_WAIT), and binding it then fails. The
# caller counts up from it, a port per job.
cluster_base_port() {
  local low
  read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || low=32768
  ((low > 12000)) || low=32768
  echo $((10000 + RANDOM % (low - 12000)))
}

_cluster_main() {
  local cmd="${1:-}"
  shift || true
  case "$cmd" in
    up) cluster_up "$@" ;;
    down) (($# == 1)) || { _cluster_err "usage: cluster.sh down NAME"; return 2; }
          cluster_down "$1" ;;
    exec) cluster_exec "$@" ;;
    addr) (($# == 2)) || { _cluster_err "usage: cluster.sh addr NAME I"; return 2; }
          cluster_addr "$@" ;;
    cut|heal) (($# == 2)) || { _cluster_err "usage: cluster.sh $cmd NAME I"; return 2; }
          "cluster_$cmd" "$@" ;;
    loss) (($# == 3)) || { _cluster_err "usage: cluster.sh loss NAME I PCT"; return 2; }
          cluster_loss "$@" ;;
    mpirun) cluster_mpirun "$@" ;;
    mpirun-flags) cluster_mpirun_flags ;;
    -h|--help|"") sed -n '2,/^$/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
          [ -n "$cmd" ] ;;
    *) _cluster_err "unknown command '$cmd' (up down exec addr cut heal loss mpirun)"; return 2 ;;
  esac
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  _cluster_main "$@"
  exit $?
fi
