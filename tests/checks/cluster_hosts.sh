#!/usr/bin/env bash
# Multi-host collectives on a namespace test cluster (tests/cluster/cluster.sh):
# the cluster itself; neuron-allreduce across 4 hosts started by hand (every
# type and reduction, all-gather, reduce-scatter), through mpirun, with two
# ranks a host, and through its own --hosts; neuron-exec's HLO collectives
# across hosts against one host; the faults a job must survive with a clear
# error (a cut link, killed ranks, a stalled rank, a rank that never joins);
# and lost packets. Needs root; elsewhere it prints a NOTICE and counts
# nothing. Last line: "check: N passed, N failed".
set -uo pipefail
source "$(dirname "$0")/lib/check.sh"
# shellcheck source=tests/cluster/cluster.sh
source "$ROOT/tests/cluster/cluster.sh"
finish() { echo "check: $passed passed, $failed failed"; exit $((failed > 0)); }

for tool in neuron-allreduce neuron-exec neuron-compile collectives_stranger; do
  if [ ! -x "$BUILD_DIR/$tool" ]; then
    echo "NOTICE: $BUILD_DIR/$tool not built; cluster checks skipped"
    finish
  fi
done

# The tools run from copies in a directory of this run, whose path is the
# marker that finds every process the checks started (pgrep -f).
work="$(mktemp -d "${TMPDIR:-/tmp}/cluster-hosts.XXXXXX")"
NAME="ch$$"
cleanup() {
  # Quiet: the shell reports the background jobs this ends, after the
  # summary line that must stay last.
  exec 2>/dev/null
  cluster_down "$NAME"
  cluster_down "${NAME}x"
  pkill -9 -f "$work/bin/"
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$work/bin"
# neuron-exec opens libnrt.so.1 next to itself, as an installed tool does.
cp "$BUILD_DIR/neuron-allreduce" "$BUILD_DIR/neuron-exec" "$BUILD_DIR/libnrt.so.1" "$BUILD_DIR/collectives_stranger" "$work/bin/"
AR="$work/bin/neuron-allreduce"
EXEC="$work/bin/neuron-exec"

cluster_up "$NAME" 4
rc=$?
if [ "$rc" = 77 ]; then
  echo "NOTICE: no namespace cluster here (see the line above); cluster checks skipped"
  finish
elif [ "$rc" != 0 ]; then
  fail "cluster.sh up $NAME 4 (exit $rc)"
  finish
fi
pass "cluster.sh up: 4 hosts"
A=()
for i in 0 1 2 3; do A[i]=$(cluster_addr "$NAME" "$i"); done

# --- the cluster itself -----------------------------------------------------

# reachable CLUSTER FROM TO: a TCP connect from host FROM to host TO answers
# (refused counts: the host is there), within 2 s.
reachable() {
  local err
  err=$(cluster_exec "$1" "$2" timeout 2 bash -c "echo > /dev/tcp/$(cluster_addr "$1" "$3")/9" 2>&1) ||
    [[ "$err" == *refused* ]]
}

ok=1
for i in 0 1 2 3; do
  for j in 0 1 2 3; do
    [ "$i" = "$j" ] && continue
    reachable "$NAME" "$i" "$j" || { ok=0; fail "host $i cannot reach host $j"; }
  done
done
[ "$ok" = 1 ] && pass "every host reaches every other"
if [ "$(cluster_exec "$NAME" 2 hostname)" = "$NAME-h2" ]; then
  pass "cluster.sh exec: host 2's hostname is $NAME-h2"
else
  fail "cluster.sh exec: hostname is '$(cluster_exec "$NAME" 2 hostname)'"
fi
cluster_cut "$NAME" 2
if reachable "$NAME" 0 2; then fail "host 2 is reachable after cut"; else pass "cut: host 2 unreachable"; fi
cluster_heal "$NAME" 2
healed=0
for _ in 1 2 3 4 5; do reachable "$NAME" 0 2 && { healed=1; break; }; sleep 0.5; done
[ "$healed" = 1 ] && pass "heal: host 2 reachable again" || fail "host 2 unreachable after heal"

# A second cluster: up adds nothing to this namespace, down removes all.
links_before="$(ip -o link show | awk -F': ' '{print $2}' | sort)"
if cluster_up "${NAME}x" 2 --rate 2gbit; then
  links_during="$(ip -o link show | awk -F': ' '{print $2}' | sort)"
  [ "$links_during" = "$links_before" ] && pass "up adds no link to the root namespace" ||
    fail "up added links to the root namespace: $(comm -13 <(echo "$links_before") <(echo "$links_during") | tr '\n' ' ')"
  qdisc="$(cluster_exec "${NAME}x" 1 tc qdisc show dev eth0)"
  [[ "$qdisc" == *tbf*rate\ 2Gbit* ]] && pass "--rate 2gbit: tbf on the host's link" || fail "--rate: qdisc is '$qdisc'"
  # A process on a host (not a job of this shell: down kills it).
  (cluster_exec "${NAME}x" 1 sleep 300 >/dev/null 2>&1 &)
  sleeper=""
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    sleeper="$(ip netns pids "${NAME}x-h1")"
    [ -n "$sleeper" ] && break
    sleep 0.1
  done
  cluster_down "${NAME}x"
  cluster_down "${NAME}x" && pass "down is idempotent" || fail "a second down failed"
  sleep 0.1
  left="$(ip netns list | grep -c "^${NAME}x-")"
  links_after="$(ip -o link show | awk -F': ' '{print $2}' | sort)"
  if [ "$left" = 0 ] && [ "$links_after" = "$links_before" ] && [ -n "$sleeper" ] &&
     ! kill -0 $sleeper 2>/dev/null; then
    pass "down leaves no namespace, link or process behind"
  else
    fail "down left $left namespace(s), links $(comm -3 <(echo "$links_before") <(echo "$links_after") | tr '\n' ' ')"
  fi
else
  fail "cluster.sh up ${NAME}x 2 --rate 2gbit"
fi

# --- jobs started by hand ---------------------------------------------------

port=$(cluster_base_port)
# A port of its own for each job's rank 0 (sets $port; not in a subshell).
next_port() { port=$((port + 1)); }

# start_ranks DIR WORLD PER_HOST [VAR=VALUE...] -- TOOL ARGS...: rank r on
# host r/PER_HOST, each with its rank variables and its host's address;
# output in DIR/rR.{out,err}, exit status in DIR/rR.rc and the time it
# ended in DIR/rR.end (both written by the rank's wrapper). A rank listed
# in SKIP_RANKS is not started. Sets PIDS (the wrappers).
start_ranks() {
  local dir="$1" world="$2" per_host="$3"
  shift 3
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  mkdir -p "$dir"
  local root r h
  next_port
  root="${A[0]}:$port"
  PIDS=()
  for ((r = 0; r < world; r++)); do
    [[ " ${SKIP_RANKS:-} " == *" $r "* ]] && continue
    h=$((r / per_host))
    cluster_exec "$NAME" "$h" env NEURON_RT_ROOT_COMM_ID="$root" NEURON_RANK="$r" \
      NEURON_WORLD_SIZE="$world" NEURON_HOST_ADDR="${A[h]}" "${vars[@]}" \
      sh -c '"$@" >"$0.out" 2>"$0.err"; rc=$?; date +%s.%N >"$0.end"; echo $rc >"$0.rc"' \
      "$dir/r$r" timeout -k 2 120 "$@" &
    PIDS+=($!)
  done
}

wait_ranks() { local p; for p in "${PIDS[@]}"; do wait "$p"; done; }

# Every rank of DIR exited 0 and rank 0's JSON has rows, none with a wrong
# element; else prints what the ranks said and fails.
ranks_clean() {
  local dir="$1" world="$2" r bad=""
  for ((r = 0; r < world; r++)); do
    [ "$(cat "$dir/r$r.rc" 2>/dev/null)" = 0 ] || bad+=" rank $r exited $(cat "$dir/r$r.rc" 2>/dev/null);"
  done
  local rows wrong
  rows=$(grep -o '"#wrong":[0-9]*' "$dir/r0.out" 2>/dev/null | wc -l)
  wrong=$(grep -o '"#wrong":[0-9]*' "$dir/r0.out" 2>/dev/null | grep -vc ':0$')
  ((rows > 0)) || bad+=" rank 0 printed no checked row;"
  ((wrong == 0)) || bad+=" $wrong row(s) with wrong elements;"
  [ -z "$bad" ] && return 0
  echo "   $bad"
  for ((r = 0; r < world; r++)); do
    sed "s/^/   rank $r: /" "$dir/r$r.err" 2>/dev/null | tail -5
  done
  return 1
}

# job LABEL WORLD PER_HOST ARGS...: one checked neuron-allreduce job.
job() {
  local label="$1" world="$2" per_host="$3"
  shift 3
  local dir="$work/$label"
  start_ranks "$dir" "$world" "$per_host" NEURON_RT_EXEC_TIMEOUT=30 -- "$AR" "$@" \
    -N $((world / per_host)) -c random --json -n 1 -w 0
  wait_ranks
  ranks_clean "$dir" "$world"
}

# Every type and every reduction, 4 hosts x 1 rank.
types="uint8 int8 uint16 int16 uint32 int32 uint64 int64 fp16 bf16 fp32 fp64"
bad=""
for t in $types; do
  for op in sum prod max min; do
    job "allr-$t-$op" 4 1 allr -b 8 -e 192kb -f 24 -d "$t" --op "$op" >"$work/allr-$t-$op.log" ||
      bad+=" $t/$op"
  done
done
if [ -z "$bad" ]; then
  pass "allr 4 hosts x 1 rank: 12 types x 4 reductions, 0 wrong"
else
  fail "allr 4 hosts x 1 rank:$bad"
  for f in "$work"/allr-*.log; do [ -s "$f" ] && { echo "  $(basename "$f" .log):"; cat "$f"; }; done | head -60
fi
# jobs WORLD PER_HOST FIRST FACTOR "OP TYPE REDUCTION"...: one checked job
# each, from FIRST bytes to 1 MB by FACTOR.
jobs() {
  local world="$1" per="$2" first="$3" factor="$4" spec op t red where
  shift 4
  where="4 hosts x $per rank$([ "$per" = 1 ] || echo s)"
  for spec in "$@"; do
    read -r op t red <<<"$spec"
    if job "x$per-$op-$t-$red" "$world" "$per" "$op" -b "$first" -e 1MB -f "$factor" \
      -d "$t" --op "$red"; then
      pass "$op $t $red $where: 0 wrong"
    else
      fail "$op $t $red $where"
    fi
  done
}
jobs 4 1 64 16 "allg fp32 sum" "allg bf16 sum" "redsct fp32 sum" "redsct int32 max" \
  "redsct bf16 prod"
# 4 hosts x 2 ranks: groups span hosts with two ranks on each.
jobs 8 2 8 32 "allr fp32 sum" "allr int64 max" "allr bf16 prod" "allg fp16 sum" "redsct fp32 min"
# Hosts that are namespaces of one kernel share its CPUs: rank 0 counts
# every rank of the job as on its machine (they decide whether waiters yield).
start_ranks "$work/machine" 8 2 NEURON_RT_LOG_LEVEL=INFO NEURON_RT_EXEC_TIMEOUT=30 -- \
  "$AR" allr -N 4 -b 8 -e 8 -n 1 -w 0
wait_ranks
if grep -q "8 rank(s) on this machine's CPUs" "$work/machine/r0.err"; then
  pass "4 hosts x 2 ranks in one kernel: rank 0 counts 8 ranks on its machine"
else
  fail "4 hosts x 2 ranks in one kernel: rank 0 said: $(grep -m1 'collectives across' "$work/machine/r0.err")"
fi

# --- strangers ---------------------------------------------------------------

# stranger HOST ADDR PORT WORLD SECONDS KIND...: from HOST, strangers of
# each KIND (collectives_stranger: scan, garbage as an HTTP request, idle,
# drip as a hello a byte at a time, forged as a well-formed hello claiming
# rank 1 of WORLD) at ADDR:PORT, again and again (background; sets SPID).
stranger() {
  local host="$1" addr="$2" to_port="$3" world="$4" seconds="$5"
  shift 5
  cluster_exec "$NAME" "$host" "$work/bin/collectives_stranger" "$addr" "$to_port" "$world" "$seconds" "$@" \
    >/dev/null 2>&1 &
  SPID=$!
}
# 2- and 4-host jobs while host 3 pesters rank 0's port from before the job
# starts until after it ends, without and with the job's secret. The other
# ranks start 2 s after rank 0 (as ranks of different hosts do), so the
# strangers reach rank 0 while it waits for them. A forged hello is in the
# jobs with a secret only: without one nothing tells it from the rank it
# claims.
for hosts in 2 4; do
  for secret in "" cluster-hosts-secret; do
    label="strangers$hosts${secret:+-secret}"
    what="allr $hosts hosts with strangers at rank 0's port${secret:+ (job secret, forged hellos too)}"
    stranger 3 "${A[0]}" $((port + 1)) "$hosts" 10 scan garbage idle drip ${secret:+forged}
    start_ranks "$work/$label" "$hosts" 1 NEURON_RT_EXEC_TIMEOUT=30 ${secret:+NEURON_TOOLS_JOB_SECRET=$secret} \
      -- sh -c '[ "$NEURON_RANK" = 0 ] || sleep 2; exec "$@"' sh \
      "$AR" allr -N "$hosts" -b 8 -e 1MB -f 16 -c random --json -n 1 -w 0
    wait_ranks
    kill "$SPID" 2>/dev/null
    wait "$SPID" 2>/dev/null
    if ranks_clean "$work/$label" "$hosts" && grep -q "ignored a connection from ${A[3]}" "$work/$label/r0.err"; then
      pass "$what: 0 wrong, $(grep -c "ignored a connection" "$work/$label/r0.err") stray(s) logged"
    else
      fail "$what (rank 0 logged $(grep -c "ignored a connection" "$work/$label/r0.err") strays)"
    fi
  done
done

# --- through mpirun ---------------------------------------------------------

# mpi_job LABEL NP PER_HOST ARGS...: the same job started by mpirun on host
# 0 through netns-rsh, ranks from OMPI_COMM_WORLD_*.
mpi_job() {
  local label="$1" np="$2" per_host="$3"
  shift 3
  local dir="$work/$label"
  mkdir -p "$dir"
  next_port
  timeout -k 2 120 "$ROOT/tests/cluster/cluster.sh" mpirun "$NAME" -np "$np" \
    --host "$(cluster_hostlist "$NAME" $((np / per_host)) "$per_host")" \
    -x NEURON_RT_ROOT_COMM_ID="${A[0]}:$port" -x NEURON_RT_EXEC_TIMEOUT=30 \
    "$AR" "$@" -N $((np / per_host)) -c random --json -n 1 -w 0 >"$dir/r0.out" 2>"$dir/r0.err"
  echo $? >"$dir/r0.rc"
  ranks_clean "$dir" 1
}
if mpi_job mpi-allr 4 1 allr -b 8 -e 1MB -f 32 -d fp32; then
  pass "mpirun via netns-rsh: allr fp32 4 hosts x 1 rank, 0 wrong"
else
  fail "mpirun via netns-rsh: allr fp32 4 hosts x 1 rank"
fi
if mpi_job mpi-x2 8 2 allr -b 8 -e 1MB -f 32 -d bf16 --op max; then
  pass "mpirun via netns-rsh: allr bf16 max 4 hosts x 2 ranks, 0 wrong"
else
  fail "mpirun via netns-rsh: allr bf16 max 4 hosts x 2 ranks"
fi

# neuron-allreduce --hosts: it runs mpirun itself (flags from cluster.sh).
hosts_job() {
  local label="$1" np="$2"
  shift 2
  local dir="$work/$label"
  mkdir -p "$dir"
  next_port
  cluster_exec "$NAME" 0 env NEURON_RT_ROOT_COMM_ID="${A[0]}:$port" NEURON_RT_EXEC_TIMEOUT=30 \
    NEURON_MPIRUN_ARGS="$(cluster_mpirun_flags | tr '\n' ' ')" \
    timeout -k 2 120 "$AR" -r "$np" -N 4 "$@" -c random --json -n 1 -w 0 \
    >"$dir/r0.out" 2>"$dir/r0.err"
  echo $? >"$dir/r0.rc"
  ranks_clean "$dir" 1
}
if hosts_job hosts-4 4 allr -b 8 -e 1MB -f 32 -d fp32 --hosts "$NAME-h0" "$NAME-h1" "$NAME-h2" "$NAME-h3" &&
   grep -q '"nnodes":4' "$work/hosts-4/r0.out"; then
  pass "neuron-allreduce --hosts: 4 hosts x 1 rank, 0 wrong"
else
  fail "neuron-allreduce --hosts: 4 hosts x 1 rank"
fi
printf '# the cluster\n%s slots=2\n\n%s\n%s   # third\n%s\n' "$NAME-h0" "$NAME-h1" "$NAME-h2" "$NAME-h3" >"$work/hostsfile"
if hosts_job hosts-8 8 allr -b 8 -e 1MB -f 32 -d fp32 --algorithm ring --hosts-file "$work/hostsfile" &&
   grep -q '"nranks":8' "$work/hosts-8/r0.out"; then
  pass "neuron-allreduce --hosts-file: 4 hosts x 2 ranks, 0 wrong"
else
  fail "neuron-allreduce --hosts-file: 4 hosts x 2 ranks"
fi

# --- neuron-exec: HLO collectives across hosts ------------------------------

cat >"$work/cc.hlo" <<'EOF'
HloModule cc
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
mx {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] maximum(a, b)
}
ENTRY main {
  p = s32[64] parameter(0)
  f = f32[64] convert(p)
  sum = f32[64] all-reduce(f), replica_groups={}, to_apply=add
  pairs = f32[64] all-reduce(f), replica_groups={{0,2},{1,3}}, to_apply=add
  max = s32[64] all-reduce(p), replica_groups={}, to_apply=mx
  gathered = f32[256] all-gather(f), replica_groups={}, dimensions={0}
  scattered = f32[16] reduce-scatter(f), replica_groups={}, dimensions={0}, to_apply=add
  id = u32[] replica-id()
  ROOT t = (f32[64], f32[64], s32[64], f32[256], f32[16], u32[]) tuple(sum, pairs, max, gathered, scattered, id)
}
EOF
export NEURON_SIM_INSTANCE_TYPE=trn1.32xlarge NEURON_RT_LOG_LEVEL=ERROR
if "$BUILD_DIR/neuron-compile" compile "$work/cc.hlo" --output "$work/cc.neff" >"$work/compile.log" 2>&1; then
  # Integer-valued inputs: every sum is exact, so the order of a reduction
  # cannot change a byte and one host and four must agree exactly.
  NEURON_SIM_ROOT="$work/sim-one" timeout 120 "$EXEC" "$work/cc.neff" -r 4 --random-inputs --seed 7 \
    --output-dir "$work/exec-one" >"$work/exec-one.log" 2>&1
  one_rc=$?
  start_ranks "$work/exec-hosts" 4 1 NEURON_RT_EXEC_TIMEOUT=30 NEURON_LOCAL_RANK=0 -- \
    sh -c 'NEURON_SIM_ROOT='"$work"'/sim-$(hostname) exec "$@"' sh \
    "$EXEC" "$work/cc.neff" --random-inputs --seed 7 --output-dir "$work/exec-hosts"
  wait_ranks
  bad=""
  [ "$one_rc" = 0 ] || bad+=" neuron-exec -r 4 exited $one_rc ($(tail -2 "$work/exec-one.log"));"
  for r in 0 1 2 3; do
    rc=$(cat "$work/exec-hosts/r$r.rc")
    [ "$rc" = 0 ] || bad+=" rank $r exited $rc ($(tail -2 "$work/exec-hosts/r$r.err"));"
  done
  files=0
  for f in "$work"/exec-one/rank*/out*.npy; do
    [ -e "$f" ] || continue
    g="$work/exec-hosts/${f#"$work/exec-one/"}"
    files=$((files + 1))
    cmp -s "$f" "$g" || bad+=" ${f#"$work/exec-one/"} differs;"
  done
  [ "$files" = 24 ] || bad+=" $files result files on one host (want 4 ranks x 6);"
  if [ -z "$bad" ]; then
    pass "neuron-exec 4 hosts x 1 rank: 24 results byte-equal to neuron-exec -r 4"
  else
    fail "neuron-exec across hosts:$bad"
  fi
else
  fail "neuron-compile cc.hlo: $(tail -3 "$work/compile.log")"
fi
unset NEURON_SIM_INSTANCE_TYPE NEURON_RT_LOG_LEVEL

# --- faults -----------------------------------------------------------------

TIMEOUT=5
now() { date +%s.%N; }
# The pids of host I's ranks, or with no I every host's: the tool's own
# processes, not their wrappers, which then record how the tool ended.
rank_pids() {
  local p
  for p in $(if [ -n "${1:-}" ]; then ip netns pids "$NAME-h$1"; else pgrep -f "$work/bin/"; fi); do
    [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$AR" ] && echo "$p"
  done
}

# fault_check LABEL KIND: 4 hosts x 1 rank, an endless all-reduce; rank 2
# (host 2) meets KIND (cut, kill, stop, absent) once the job runs. Every
# other rank must fail within TIMEOUT + 2 s with NRT_TIMEOUT, naming rank 2
# and its address, and leave no process behind.
fault_check() {
  local label="$1" kind="$2" dir="$work/fault-$2" t0 victim=""
  local SKIP_RANKS=""
  [ "$kind" = absent ] && SKIP_RANKS=2
  t0=$(now)
  start_ranks "$dir" 4 1 NEURON_RT_EXEC_TIMEOUT=$TIMEOUT -- \
    "$AR" allr -N 4 -b 1MB -e 1MB -n 100000000 -w 0 -d fp32
  if [ "$kind" != absent ]; then
    sleep 2  # mid-run: set up and some thousand iterations in
    victim="$(rank_pids 2)"
    if [ -z "$victim" ]; then
      fail "$label: rank 2 is not running before the fault ($(cat "$dir/r2.err" 2>/dev/null | tail -2))"
    fi
    for r in 0 1 3; do
      [ -e "$dir/r$r.rc" ] && fail "$label: rank $r ended before the fault: $(tail -2 "$dir/r$r.err")"
    done
    t0=$(now)
    case "$kind" in
      cut) cluster_cut "$NAME" 2 ;;
      kill) kill -KILL $victim ;;
      stop) kill -STOP $victim ;;
    esac
  fi
  # Survivors: wait for them, at most TIMEOUT + 10 s.
  local deadline r
  deadline=$(awk -v t="$t0" -v d=$((TIMEOUT + 10)) 'BEGIN { printf "%.3f", t + d }')
  for r in 0 1 3; do
    while [ ! -e "$dir/r$r.rc" ] && awk -v n="$(now)" -v d="$deadline" 'BEGIN { exit !(n < d) }'; do
      sleep 0.1
    done
  done
  local bad="" took rc err
  for r in 0 1 3; do
    if [ ! -e "$dir/r$r.rc" ]; then
      bad+=" rank $r still running $((TIMEOUT + 10)) s after the fault;"
      continue
    fi
    rc=$(cat "$dir/r$r.rc")
    took=$(awk -v a="$t0" -v b="$(cat "$dir/r$r.end")" 'BEGIN { printf "%.1f", b - a }')
    err="$(cat "$dir/r$r.err")"
    [ "$rc" != 0 ] || bad+=" rank $r exited 0;"
    [[ "$err" == *NRT_TIMEOUT* ]] || bad+=" rank $r: no NRT_TIMEOUT;"
    grep -qE 'rank(\(s\))? ([0-9]+,)*2\b' <<<"$err" || bad+=" rank $r does not name rank 2;"
    # A rank that never connected has no known host: it must say so.
    if [ "$kind" = absent ]; then
      grep -qF "never connected" <<<"$err" || bad+=" rank $r does not say rank 2 never connected;"
    else
      grep -qF "${A[2]}" <<<"$err" || bad+=" rank $r does not name ${A[2]};"
    fi
    awk -v t="$took" -v l=$((TIMEOUT + 2)) 'BEGIN { exit !(t <= l) }' ||
      bad+=" rank $r took ${took} s;"
  done
  # Nothing of the job left (a stopped rank is ours to end).
  sleep 0.5
  local left
  if [ "$kind" = stop ]; then
    kill -CONT $victim 2>/dev/null
    kill -KILL $victim 2>/dev/null
  fi
  [ "$kind" = cut ] && sleep 2  # the isolated rank times out on its own
  left="$(rank_pids | tr '\n' ' ')"
  [ -z "$left" ] || bad+=" left running: pid(s) $left;"
  # shellcheck disable=SC2086
  [ -n "$left" ] && kill -9 $left 2>/dev/null
  [ "$kind" = cut ] && cluster_heal "$NAME" 2
  wait_ranks
  if [ -z "$bad" ]; then
    pass "fault $label: ranks 0 1 3 fail with NRT_TIMEOUT naming rank 2$([ "$kind" = absent ] || echo " (${A[2]})") within $((TIMEOUT + 2)) s"
  else
    fail "fault $label:$bad"
    for r in 0 1 3; do
      echo "   rank $r (exit $(cat "$dir/r$r.rc" 2>/dev/null), $(awk -v a="$t0" -v b="$(cat "$dir/r$r.end" 2>/dev/null || echo 0)" 'BEGIN { printf "%.1f", b - a }') s) said:"
      sed 's/^/     /' "$dir/r$r.err" | tail -4
    done
  fi
}
# neuron-exec running the collectives NEFF in a loop: when rank 2's ranks
# are killed, every other rank's execution fails and its core dump names the
# lost rank and its host.
exec_fault_check() {
  local dir="$work/exec-fault" r bad="" victim
  [ -e "$work/cc.neff" ] || { fail "exec fault: no cc.neff (compile failed above)"; return; }
  start_ranks "$dir" 4 1 NEURON_RT_EXEC_TIMEOUT=$TIMEOUT NEURON_LOCAL_RANK=0 NEURON_TOOLS_PROGRESS=always -- \
    sh -c 'NEURON_SIM_ROOT='"$work"'/sim-$(hostname) \
      NEURON_RT_LOCAL_CORE_DUMP_DIRECTORY='"$dir"'/dumps-$(hostname) exec "$@"' sh \
    "$EXEC" "$work/cc.neff" --random-inputs -n 100000000
  # Rank 2 is killed mid-execution, not during set-up: once every rank is
  # past its warm-up (which needs all of them) and timing executions, as
  # its progress line says. A loaded machine takes longer than a fixed
  # sleep to get there.
  local waited ready
  for ((waited = 0; waited < 600; waited++)); do
    ready=1
    for r in 0 1 2 3; do grep -qs "benchmark on" "$dir/r$r.err" || ready=0; done
    ((ready)) && break
    sleep 0.1
  done
  sleep 1
  victim="$(ip netns pids "$NAME-h2" | while read -r p; do
    [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$EXEC" ] && echo "$p"; done)"
  if [ -z "$victim" ]; then
    fail "exec fault: rank 2 is not running ($(tail -2 "$dir/r2.err" 2>/dev/null))"
  fi
  # shellcheck disable=SC2086
  kill -KILL $victim 2>/dev/null
  wait_ranks
  for r in 0 1 3; do
    [ "$(cat "$dir/r$r.rc" 2>/dev/null)" != 0 ] || bad+=" rank $r exited 0;"
    local host="$NAME-h$r"
    if ! "$BUILD_DIR/neuron-dump" show "$dir/dumps-$host"/*.zst 2>&1 |
      grep -qs "rank 2 (host .*${A[2]}"; then
      bad+=" rank $r's core dump does not name rank 2 and ${A[2]};"
    fi
  done
  if [ -z "$bad" ]; then
    pass "fault under neuron-exec: every survivor's core dump names rank 2 (${A[2]})"
  else
    fail "exec fault:$bad"
    for r in 0 1 3; do sed "s/^/   rank $r: /" "$dir/r$r.err" | tail -3; done
  fi
}
exec_fault_check
# Two ranks a host (the hierarchical path, whose ranks also wait on each
# other in shared memory): host 2's ranks 4 and 5 are killed; the six others
# fail naming both and their host.
hier_fault_check() {
  local dir="$work/fault-hier" r bad="" victims err
  start_ranks "$dir" 8 2 NEURON_RT_EXEC_TIMEOUT=$TIMEOUT -- \
    "$AR" allr -N 4 -b 1MB -e 1MB -n 100000000 -w 0 -d fp32 --show-algorithm
  sleep 3
  victims="$(rank_pids 2)"
  [ -n "$victims" ] || fail "hier fault: host 2's ranks are not running"
  # shellcheck disable=SC2086
  kill -KILL $victims 2>/dev/null
  wait_ranks
  for r in 0 1 2 3 6 7; do
    err="$(cat "$dir/r$r.err" 2>/dev/null)"
    [ "$(cat "$dir/r$r.rc" 2>/dev/null)" != 0 ] || bad+=" rank $r exited 0;"
    grep -qE "ranks 4,5 \(host [^)]*${A[2]//./\\.}\)" <<<"$err" ||
      bad+=" rank $r does not name ranks 4,5 and ${A[2]};"
  done
  if [ -z "$bad" ]; then
    pass "fault 4 hosts x 2 ranks (hier), host 2 killed: six survivors name ranks 4,5 (${A[2]})"
  else
    fail "hier fault:$bad"
    for r in 0 1 2 3 6 7; do sed "s/^/   rank $r: /" "$dir/r$r.err" | tail -2; done
  fi
}
hier_fault_check
fault_check "link cut" cut
fault_check "ranks killed" kill
fault_check "rank stalled" stop
fault_check "rank never joins" absent

# --- lost packets -----------------------------------------------------------

cluster_loss "$NAME" 1 2
rc=$?
if [ "$rc" = 3 ]; then
  echo "NOTICE: cannot drop packets here (see the line above); loss check skipped"
elif [ "$rc" != 0 ]; then
  fail "cluster.sh loss $NAME 1 2 (exit $rc)"
else
  if job loss-allr 4 1 allr -b 8 -e 4MB -f 8 -d fp32 && job loss-x2 8 2 allr -b 8 -e 4MB -f 8 -d int32 --op max; then
    pass "2% packet loss on host 1: allr 4x1 and 4x2, 0 wrong"
  else
    fail "allr under 2% packet loss on host 1"
  fi
  cluster_loss "$NAME" 1 0
fi

finish
