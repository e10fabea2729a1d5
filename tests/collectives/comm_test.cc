// The communicator across forked ranks: every operation, element type and
// reduction against plain arithmetic; replica groups; the TCP path between
// loopback "hosts"; and what happens when a rank dies or stalls.
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <new>
#include <string>
#include <string_view>
#include <thread>

#include "gtest/gtest.h"
#include "lib/collectives/communicator.h"
#include "lib/collectives/dtype.h"
#include "tests/collectives/rank_harness.h"

namespace neuron::collectives {
namespace {

using testing::JobOptions;
using testing::RankResult;
using testing::RunJob;

bool Signed(DataType t) {
  return IsFloat(t) || t == DataType::kS8 || t == DataType::kS16 ||
         t == DataType::kS32 || t == DataType::kS64;
}

// Small integers, exact in every type, so the order of a reduction cannot
// change the result.
double Val(int rank, size_t i, DataType t, ReduceOp op) {
  uint64_t h = (static_cast<uint64_t>(rank) * 1000003u + i) * 0x9e3779b97f4a7c15ull;
  h ^= h >> 29;
  if (op == ReduceOp::kProd) return 1.0 + static_cast<double>(h & 1);
  if (op == ReduceOp::kSum) return static_cast<double>(h % 8) - (Signed(t) ? 4 : 0);
  return static_cast<double>(h % 201) - (Signed(t) ? 100 : 0);
}

std::vector<char> Make(DataType t, int rank, size_t n, ReduceOp op, size_t first = 0) {
  std::vector<char> v(n * DataTypeSize(t) + 1);
  for (size_t i = 0; i < n; ++i) StoreFromDouble(v.data(), i, t, Val(rank, first + i, t, op));
  return v;
}

double Fold(ReduceOp op, double a, double b) {
  switch (op) {
    case ReduceOp::kSum: return a + b;
    case ReduceOp::kProd: return a * b;
    case ReduceOp::kMax: return a > b ? a : b;
    case ReduceOp::kMin: return a < b ? a : b;
  }
  return a;
}

// Counts elements of `got` that differ from `want` (as doubles).
int Mismatches(const char* what, const char* got, const std::vector<double>& want,
               DataType t) {
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    std::vector<char> w(8);
    StoreFromDouble(w.data(), 0, t, want[i]);
    if (LoadAsDouble(got, i, t) != LoadAsDouble(w.data(), 0, t)) {
      if (bad++ < 3) {
        std::fprintf(stderr, "%s %s [%zu]: got %g want %g\n", what, DataTypeName(t), i,
                     LoadAsDouble(got, i, t), want[i]);
      }
    }
  }
  return bad;
}

#define CHECK_OK(expr)                                                        \
  do {                                                                        \
    absl::Status _st = (expr);                                                \
    if (!_st.ok()) {                                                          \
      std::fprintf(stderr, "%s: %s\n", #expr, std::string(_st.message()).c_str()); \
      return 1;                                                               \
    }                                                                         \
  } while (0)

// Every operation on the group `members` (this rank at index `me`).
int CheckGroup(Communicator& c, const Groups& groups, const std::vector<int>& m,
               int me, const std::vector<DataType>& types,
               const std::vector<size_t>& sizes) {
  const int g = static_cast<int>(m.size());
  int bad = 0;
  for (DataType t : types) {
    const size_t es = DataTypeSize(t);
    for (ReduceOp op : kAllReduceOps) {
      for (size_t n : sizes) {
        // All-reduce, out of place, then in place.
        std::vector<char> in = Make(t, m[me], n, op), out(n * es + 1);
        std::vector<double> want(n);
        for (size_t i = 0; i < n; ++i) {
          want[i] = Val(m[0], i, t, op);
          for (int j = 1; j < g; ++j) want[i] = Fold(op, want[i], Val(m[j], i, t, op));
        }
        CHECK_OK(c.AllReduce(in.data(), out.data(), n, t, op, groups));
        bad += Mismatches("allreduce", out.data(), want, t);
        CHECK_OK(c.AllReduce(in.data(), in.data(), n, t, op, groups));
        bad += Mismatches("allreduce in place", in.data(), want, t);
        // Reduce-scatter: n elements per member.
        std::vector<char> rin = Make(t, m[me], n * g, op), rout(n * es + 1);
        std::vector<double> rwant(n);
        for (size_t i = 0; i < n; ++i) {
          const size_t k = static_cast<size_t>(me) * n + i;
          rwant[i] = Val(m[0], k, t, op);
          for (int j = 1; j < g; ++j) rwant[i] = Fold(op, rwant[i], Val(m[j], k, t, op));
        }
        CHECK_OK(c.ReduceScatter(rin.data(), rout.data(), n, t, op, groups));
        bad += Mismatches("reduce-scatter", rout.data(), rwant, t);
      }
    }
    for (size_t n : sizes) {
      const ReduceOp any = ReduceOp::kMax;
      std::vector<char> in = Make(t, m[me], n, any), out(n * es * g + 1);
      std::vector<double> want;
      for (int j = 0; j < g; ++j) {
        for (size_t i = 0; i < n; ++i) want.push_back(Val(m[j], i, t, any));
      }
      CHECK_OK(c.AllGather(in.data(), out.data(), n, t, groups));
      bad += Mismatches("all-gather", out.data(), want, t);
      const int root = g - 1;
      std::vector<char> bout(n * es + 1);
      std::vector<double> bwant(n);
      for (size_t i = 0; i < n; ++i) bwant[i] = Val(m[root], i, t, any);
      CHECK_OK(c.Broadcast(in.data(), bout.data(), n, t, root, groups));
      bad += Mismatches("broadcast", bout.data(), bwant, t);
    }
  }
  return bad;
}

// Permute (a ring over the world) and pairwise send/recv.
int CheckPointToPoint(Communicator& c, const std::vector<size_t>& sizes) {
  const int w = c.world(), r = c.rank();
  int bad = 0;
  std::vector<std::pair<int, int>> ring;
  for (int i = 0; i < w; ++i) ring.emplace_back(i, (i + 1) % w);
  for (size_t n : sizes) {
    const DataType t = DataType::kS32;
    std::vector<char> in = Make(t, r, n, ReduceOp::kMax), out(n * 4 + 1);
    std::vector<double> want(n);
    for (size_t i = 0; i < n; ++i) want[i] = Val((r + w - 1) % w, i, t, ReduceOp::kMax);
    CHECK_OK(c.Permute(in.data(), out.data(), n * 4, ring));
    bad += Mismatches("permute", out.data(), want, t);
    // Only rank 0 -> 1: everyone else receives zeros.
    CHECK_OK(c.Permute(in.data(), out.data(), n * 4, {{0, 1}}));
    for (size_t i = 0; i < n; ++i) want[i] = r == 1 ? Val(0, i, t, ReduceOp::kMax) : 0;
    bad += Mismatches("permute 0->1", out.data(), want, t);
    const int partner = (r ^ 1) < w ? (r ^ 1) : r;
    CHECK_OK(c.SendRecv(in.data(), partner, out.data(), partner, n * 4));
    for (size_t i = 0; i < n; ++i) want[i] = Val(partner, i, t, ReduceOp::kMax);
    bad += Mismatches("sendrecv", out.data(), want, t);
  }
  return bad;
}

std::vector<DataType> AllTypes() {
  return std::vector<DataType>(std::begin(kAllDataTypes), std::end(kAllDataTypes));
}

JobOptions SmallChunks(int world) {
  JobOptions o;
  o.base.world = world;
  o.base.timeout_s = 20;
  o.base.chunk_bytes = 16 * 1024;  // many pipeline steps, slots reused
  o.base.channel_buffers = 3;
  o.base.small_bytes = 4096;
  return o;
}

int WholeWorld(Communicator& c, const std::vector<DataType>& types,
               const std::vector<size_t>& sizes) {
  std::vector<int> all;
  for (int r = 0; r < c.world(); ++r) all.push_back(r);
  return CheckGroup(c, {}, all, c.rank(), types, sizes) + CheckPointToPoint(c, sizes);
}

void ExpectAllZero(const std::vector<RankResult>& results) {
  for (size_t r = 0; r < results.size(); ++r) {
    EXPECT_EQ(results[r].exit_code, 0) << "rank " << r << " (see its messages above)";
  }
}

TEST(Communicator, EveryOperationTypeAndReductionOnTwoRanks) {
  const std::vector<size_t> sizes = {0, 1, 3, 1000, 5001, 40001};
  ExpectAllZero(RunJob(SmallChunks(2), [&](Communicator& c) {
    return WholeWorld(c, AllTypes(), sizes) ? 1 : 0;
  }));
}

TEST(Communicator, EveryOperationTypeAndReductionOnFourRanks) {
  const std::vector<size_t> sizes = {0, 1, 7, 1023, 30001};
  ExpectAllZero(RunJob(SmallChunks(4), [&](Communicator& c) {
    return WholeWorld(c, AllTypes(), sizes) ? 1 : 0;
  }));
}

TEST(Communicator, DefaultChunksAndLatencyPath) {
  JobOptions o;
  o.base.world = 3;
  o.base.timeout_s = 20;
  const std::vector<size_t> sizes = {2, 4097, 1 << 20};
  ExpectAllZero(RunJob(o, [&](Communicator& c) {
    return WholeWorld(c, {DataType::kF32, DataType::kBF16}, sizes) ? 1 : 0;
  }));
}

TEST(Communicator, ReplicaGroupsRunIndependently) {
  const std::vector<size_t> sizes = {1, 999, 20000};
  ExpectAllZero(RunJob(SmallChunks(4), [&](Communicator& c) {
    const int r = c.rank();
    // Two pairs, then the world in reverse order.
    const Groups pairs = {{0, 2}, {3, 1}};
    const std::vector<int>& mine = pairs[r % 2 == 0 ? 0 : 1];
    const int me = mine[0] == r ? 0 : 1;
    int bad = CheckGroup(c, pairs, mine, me, {DataType::kF32, DataType::kS8}, sizes);
    const Groups reversed = {{3, 2, 1, 0}};
    bad += CheckGroup(c, reversed, reversed[0], 3 - r, {DataType::kF16}, sizes);
    return bad ? 1 : 0;
  }));
}

TEST(Communicator, ThreeHostsOnLoopbackAddressesUseTcp) {
  JobOptions o = SmallChunks(6);
  o.host_addr = {"127.0.0.1", "127.0.0.1", "127.0.0.2",
                 "127.0.0.2", "127.0.0.3", "127.0.0.3"};
  const std::vector<size_t> sizes = {0, 1, 1001, 30000};
  ExpectAllZero(RunJob(o, [&](Communicator& c) {
    if (c.hosts() != 3) {
      std::fprintf(stderr, "rank %d sees %d hosts\n", c.rank(), c.hosts());
      return 1;
    }
    // Two ranks on each host: shared memory inside, libfabric across.
    if (c.AlgorithmFor("allr", 1 << 20) != "hier") return 2;
    if (c.TransportName().rfind("libfabric ", 0) != 0) {
      std::fprintf(stderr, "transport: %s\n", c.TransportName().c_str());
      return 4;
    }
    int bad = WholeWorld(c, {DataType::kF32, DataType::kBF16, DataType::kS32,
                             DataType::kU8}, sizes);
    // Groups within a host take shared memory, groups across hosts TCP.
    const Groups same_host = {{0, 1}, {2, 3}, {4, 5}};
    const Groups across = {{0, 2, 4}, {1, 3, 5}};
    const int r = c.rank();
    if (c.AlgorithmFor("allr", 1 << 20, same_host) != "pipelined") return 3;
    // One rank per host in a group: rdh for latency, ring for bandwidth.
    if (c.AlgorithmFor("allr", 64, across) != "rdh") return 5;
    if (c.AlgorithmFor("allr", 1 << 20, across) != "ring") return 6;
    bad += CheckGroup(c, same_host, same_host[r / 2], r % 2, {DataType::kF32}, sizes);
    bad += CheckGroup(c, across, across[r % 2], r / 2, {DataType::kF32}, sizes);
    return bad ? 1 : 0;
  }));
}

// Each inter-host algorithm, forced, on layouts that stress it: a power of
// two and not (rdh folds the extra ranks), several ranks a host (hier) and
// unequal shares of the hosts (hier falls back to ring).
TEST(Communicator, EveryInterHostAlgorithmMatchesPlainArithmetic) {
  struct Layout {
    std::vector<std::string> hosts;
    const char* hier_becomes;
  };
  const std::vector<Layout> layouts = {
      {{"127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"}, "ring"},
      {{"127.0.0.1", "127.0.0.1", "127.0.0.2", "127.0.0.2"}, "hier"},
      {{"127.0.0.1", "127.0.0.2", "127.0.0.2", "127.0.0.3", "127.0.0.3", "127.0.0.3"}, "ring"},
  };
  const std::vector<size_t> sizes = {0, 3, 1001, 20000};
  for (const Layout& layout : layouts) {
    for (const std::string algorithm : {"ring", "rdh", "hier"}) {
      SCOPED_TRACE(algorithm + " on " + std::to_string(layout.hosts.size()) + " ranks");
      JobOptions o = SmallChunks(static_cast<int>(layout.hosts.size()));
      o.host_addr = layout.hosts;
      o.base.algorithm = algorithm;
      const std::string want = algorithm == "hier" ? layout.hier_becomes : algorithm;
      ExpectAllZero(RunJob(o, [&](Communicator& c) {
        if (c.AlgorithmFor("allr", 4096) != want) {
          std::fprintf(stderr, "rank %d: %s, not %s\n", c.rank(),
                       c.AlgorithmFor("allr", 4096).c_str(), want.c_str());
          return 2;
        }
        std::vector<int> all;
        for (int r = 0; r < c.world(); ++r) all.push_back(r);
        return CheckGroup(c, {}, all, c.rank(), {DataType::kF32, DataType::kBF16, DataType::kS32},
                          sizes) ? 1 : 0;
      }));
    }
  }
  EXPECT_TRUE(IsInterHostAlgorithm("auto"));
  EXPECT_FALSE(IsInterHostAlgorithm("mesh"));
}

// NEURON_RT_RANKS_PER_NETWORK_PROXY: one rank of every N on a host talks to
// the other hosts (N rounded down to a divisor of the host's ranks), and
// the results stay exact.
TEST(Communicator, RanksShareANetworkProxy) {
  for (uint64_t per_proxy : {1, 2, 3, 4}) {
    SCOPED_TRACE("ranks per proxy " + std::to_string(per_proxy));
    JobOptions o = SmallChunks(8);
    o.host_addr = {"127.0.0.1", "127.0.0.1", "127.0.0.1", "127.0.0.1",
                   "127.0.0.2", "127.0.0.2", "127.0.0.2", "127.0.0.2"};
    o.base.ranks_per_proxy = per_proxy;
    const int n = per_proxy == 3 ? 2 : static_cast<int>(per_proxy);
    ExpectAllZero(RunJob(o, [&](Communicator& c) {
      std::vector<int> all;
      for (int r = 0; r < c.world(); ++r) all.push_back(r);
      int bad = CheckGroup(c, {}, all, c.rank(), {DataType::kF32, DataType::kS32},
                           {1, 7, 1001, 20000});
      // Only the all-reduce takes the proxies (the other operations' rings
      // include every rank).
      const bool proxy = (c.rank() % 4) % n == 0;
      const uint64_t before = c.NetworkBytesSent();
      std::vector<float> v(1 << 18, 1.0f);
      if (!c.AllReduce(v.data(), v.data(), v.size(), DataType::kF32, ReduceOp::kSum).ok()) ++bad;
      const uint64_t sent = c.NetworkBytesSent() - before;
      if ((sent > 0) != proxy || v[0] != 8.0f) {
        std::fprintf(stderr, "rank %d sent %llu bytes across hosts (proxy: %d), got %g\n",
                     c.rank(), static_cast<unsigned long long>(sent), proxy, v[0]);
        bad += 1;
      }
      return bad ? 1 : 0;
    }));
  }
}

// Where libfabric has no provider (FI_PROVIDER names none), the job falls
// back to its own TCP mesh, and says so.
TEST(Communicator, NoFabricProviderFallsBackToTcp) {
  JobOptions o = SmallChunks(3);
  o.host_addr = {"127.0.0.1", "127.0.0.2", "127.0.0.3"};
  setenv("FI_PROVIDER", "no-such-provider", 1);
  auto results = RunJob(o, [&](Communicator& c) {
    if (c.TransportName() != "tcp") {
      std::fprintf(stderr, "transport: %s\n", c.TransportName().c_str());
      return 2;
    }
    return WholeWorld(c, {DataType::kF32, DataType::kS8}, {1, 1001, 20000}) ? 1 : 0;
  });
  unsetenv("FI_PROVIDER");
  ExpectAllZero(results);
}

TEST(Communicator, AllReduceReadsPeersArenasInPlace) {
  JobOptions o;
  o.base.world = 3;
  o.base.timeout_s = 20;
  const size_t n = (9u << 20) / 4 + 13;  // past the streaming threshold
  o.base.arena_bytes = 2 * n * 4 + 8192;
  ExpectAllZero(RunJob(o, [&](Communicator& c) {
    char* arena = c.Arena();
    if (arena == nullptr) return 1;
    float* in = reinterpret_cast<float*>(arena);
    float* out = reinterpret_cast<float*>(arena + ((n * 4 + 4095) & ~size_t{4095}));
    std::vector<float> outside(n);
    int bad = 0;
    for (size_t count : {n, size_t{70000}, size_t{5}}) {
      for (int variant = 0; variant < 3; ++variant) {  // arena, in place, mixed
        // Mixed: one rank's output is outside its arena, so all fall back.
        float* dst = variant == 0 ? out : variant == 1 ? in : c.rank() == 1 ? outside.data() : out;
        for (size_t i = 0; i < count; ++i) in[i] = static_cast<float>((i * 7 + c.rank()) % 13);
        CHECK_OK(c.AllReduce(in, dst, count, DataType::kF32, ReduceOp::kSum));
        for (size_t i = 0; i < count; ++i) {
          float want = 0;
          for (int r = 0; r < 3; ++r) want += static_cast<float>((i * 7 + r) % 13);
          if (dst[i] != want && bad++ < 3) {
            std::fprintf(stderr, "variant %d count %zu [%zu]: %g != %g\n", variant, count, i,
                         dst[i], want);
          }
        }
      }
    }
    return bad ? 1 : 0;
  }));
}

TEST(Communicator, PermuteWhereSomePartnersShareAHost) {
  // Rank 1 has both partners on its host, rank 2 one on each.
  JobOptions o = SmallChunks(4);
  o.host_addr = {"127.0.0.1", "127.0.0.1", "127.0.0.1", "127.0.0.2"};
  ExpectAllZero(RunJob(o, [](Communicator& c) {
    return CheckPointToPoint(c, {1, 5000, 40000}) ? 1 : 0;
  }));
}

// Ranks loop all-reduces until one fails; 42 when it failed with
// NRT_TIMEOUT naming `lost`.
// Runs all-reduces until one fails; 42 when it is NRT_TIMEOUT naming the
// lost rank (and its host, when given).
// With ready_dir, each rank leaves a file there after its first success.
int LoopUntilLost(Communicator& c, int lost, const std::string& host = "",
                  const std::string& ready_dir = "") {
  std::vector<float> buf(1 << 18, 1.0f);
  for (bool first = true;; first = false) {
    absl::Status st = c.AllReduce(buf.data(), buf.data(), buf.size(), DataType::kF32,
                                  ReduceOp::kMax);
    if (st.ok() && first && !ready_dir.empty()) {
      std::fclose(std::fopen((ready_dir + "/" + std::to_string(c.rank())).c_str(), "w"));
    }
    if (st.ok()) continue;
    const std::string msg(st.message());
    std::fprintf(stderr, "rank %d: %s\n", c.rank(), msg.c_str());
    const bool names = msg.find("rank " + std::to_string(lost) + " ") != std::string::npos &&
                       msg.find(host) != std::string::npos;
    return NrtStatusOf(st) == NRT_TIMEOUT && names ? 42 : 1;
  }
}

// Waits (up to 20 s) until every rank left its file in dir, then sends
// `sig` to the victim; returns when it did, in seconds since `start`.
double SignalWhenReady(const std::string& dir, const std::vector<pid_t>& pids, int victim,
                       int sig, std::chrono::steady_clock::time_point start) {
  for (int i = 0; i < 2000; ++i) {
    int ready = 0;
    for (size_t r = 0; r < pids.size(); ++r) {
      ready += access((dir + "/" + std::to_string(r)).c_str(), F_OK) == 0;
    }
    if (ready == static_cast<int>(pids.size())) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pids[static_cast<size_t>(victim)], sig);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A fresh directory for the ranks' ready files, removed at the end.
struct ReadyDir {
  ReadyDir() {
    char templ[] = "/tmp/ready-XXXXXX";
    path = mkdtemp(templ) ? templ : "/tmp";
  }
  ~ReadyDir() { if (path != "/tmp") std::filesystem::remove_all(path); }
  std::string path;
};

// How late past the kill a rank may end and still count as ended by its
// timeout rather than by the job's limit (10x the timeout): loaded CI
// machines took 1.5x the timeout plus scheduling delay.
constexpr double kTimeoutSlack = 3;

TEST(Communicator, KilledRankEndsEveryOtherRankWithTimeout) {
  JobOptions o;
  o.base.world = 3;
  o.base.timeout_s = 3;
  o.limit_s = 30;
  double killed_at = 0;
  const auto start = std::chrono::steady_clock::now();
  ReadyDir ready;
  o.while_running = [&](const std::vector<pid_t>& pids) {
    killed_at = SignalWhenReady(ready.path, pids, 2, SIGKILL, start);
  };
  auto results = RunJob(o, [&](Communicator& c) { return LoopUntilLost(c, 2, "", ready.path); });
  EXPECT_EQ(results[2].exit_code, 128 + SIGKILL);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(results[r].exit_code, 42) << "rank " << r;
    EXPECT_LE(results[r].seconds, killed_at + kTimeoutSlack * o.base.timeout_s) << "rank " << r;
  }
}

// The timeout also bounds the set-up of 4 hosts (libfabric's discovery
// alone took over 3 s on a loaded machine): 5 s leaves room for it.
TEST(Communicator, KilledRankOnAnotherHostIsNamedByEveryRank) {
  JobOptions o;
  o.base.world = 4;  // a ring of 4: rank 0 is not linked to rank 2 in it
  o.base.timeout_s = 5;
  o.limit_s = 30;
  o.host_addr = {"127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4"};
  double killed_at = 0;
  const auto start = std::chrono::steady_clock::now();
  ReadyDir ready;
  o.while_running = [&](const std::vector<pid_t>& pids) {
    killed_at = SignalWhenReady(ready.path, pids, 2, SIGKILL, start);
  };
  auto results = RunJob(o, [&](Communicator& c) {
    return LoopUntilLost(c, 2, "(host 127.0.0.3", ready.path);
  });
  EXPECT_EQ(results[2].exit_code, 128 + SIGKILL);
  for (int r : {0, 1, 3}) {
    EXPECT_EQ(results[r].exit_code, 42) << "rank " << r;
    EXPECT_LE(results[r].seconds, killed_at + kTimeoutSlack * o.base.timeout_s) << "rank " << r;
  }
}

TEST(Communicator, StalledRankEndsEveryOtherRankWithTimeout) {
  JobOptions o;
  o.base.world = 3;
  o.base.timeout_s = 2;
  o.limit_s = 30;
  ReadyDir ready;
  o.while_running = [&](const std::vector<pid_t>& pids) {
    SignalWhenReady(ready.path, pids, 1, SIGSTOP, std::chrono::steady_clock::now());
    std::this_thread::sleep_for(std::chrono::milliseconds(4500));
    kill(pids[1], SIGKILL);
  };
  auto results = RunJob(o, [&](Communicator& c) { return LoopUntilLost(c, 1, "", ready.path); });
  EXPECT_EQ(results[0].exit_code, 42);
  EXPECT_EQ(results[2].exit_code, 42);
}

// A stopped rank on another host keeps its connections open: only the
// roll call tells it from the neighbours that wait for it. The timeout also
// bounds the set-up (bootstrap, mesh, libfabric), which took over 2 s on a
// loaded machine: 5 s leaves room for it.
TEST(Communicator, StalledRankOnAnotherHostIsNamedByEveryRank) {
  JobOptions o;
  o.base.world = 4;
  o.base.timeout_s = 5;
  o.limit_s = 30;
  o.kill_when_alone = {1};
  o.host_addr = {"127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.4"};
  double stopped_at = 0;
  const auto start = std::chrono::steady_clock::now();
  ReadyDir ready;
  o.while_running = [&](const std::vector<pid_t>& pids) {
    stopped_at = SignalWhenReady(ready.path, pids, 1, SIGSTOP, start);
  };
  auto results = RunJob(o, [&](Communicator& c) {
    return LoopUntilLost(c, 1, "(host 127.0.0.2", ready.path);
  });
  for (int r : {0, 2, 3}) {
    EXPECT_EQ(results[r].exit_code, 42) << "rank " << r;
    EXPECT_LE(results[r].seconds, stopped_at + kTimeoutSlack * o.base.timeout_s) << "rank " << r;
  }
}

// Ranks killed in the middle of the set-up across hosts (while the ranks
// exchange their endpoints, or before the last barrier) are named by every
// survivor, and no survivor names a rank that is still there: a rank that
// waits on its bootstrap connection still answers the roll call. Four
// hosts of `per_host` ranks; every rank of the third host dies at `stage`.
void ExpectLossDuringSetUpNamed(const std::string& stage, int per_host) {
  JobOptions o;
  o.base.world = 4 * per_host;
  // The set-up of eight ranks took over 8 s on a loaded machine; killed
  // ranks are found when their connections close, long before this.
  o.base.timeout_s = 20;
  o.limit_s = 90;
  for (int r = 0; r < o.base.world; ++r) {
    o.host_addr.push_back("127.0.0." + std::to_string(r / per_host + 1));
  }
  const int victim_host = 2;
  // The host's ranks die together: the first to reach the stage kills its
  // host-mates as well (each dying on its own at the stage let a mate that
  // had not reached it yet see the other's loss and end with an error).
  // The ranks' pids, which the parent learns, in memory the ranks share.
  const size_t pid_bytes = sizeof(std::atomic<pid_t>) * static_cast<size_t>(o.base.world);
  void* shared = mmap(nullptr, pid_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shared, MAP_FAILED);
  auto* pids = new (shared) std::atomic<pid_t>[static_cast<size_t>(o.base.world)]();
  o.while_running = [pids](const std::vector<pid_t>& running) {
    for (size_t r = 0; r < running.size(); ++r) pids[r].store(running[r]);
  };
  o.base.on_setup_stage = [=](int rank, std::string_view reached) {
    if (reached != stage || rank / per_host != victim_host) return;
    for (int mate = victim_host * per_host; mate < (victim_host + 1) * per_host; ++mate) {
      if (mate == rank) continue;
      for (int wait = 0; wait < 1000 && pids[mate].load() == 0; ++wait) usleep(1000);
      if (pids[mate].load() > 0) kill(pids[mate].load(), SIGKILL);
    }
    raise(SIGKILL);
  };
  const auto results = RunJob(o, [](Communicator&) { return 0; });
  munmap(shared, pid_bytes);
  std::string expected = per_host == 1 ? "rank 2" : "ranks 4,5";
  expected += " (host 127.0.0.3)";
  for (int r = 0; r < o.base.world; ++r) {
    const RankResult& got = results[static_cast<size_t>(r)];
    if (r / per_host == victim_host) {
      EXPECT_EQ(got.exit_code, 128 + SIGKILL) << "rank " << r << " at " << stage;
      continue;
    }
    EXPECT_EQ(got.exit_code, 100) << "rank " << r << " at " << stage;
    // "ranks 4,5 (host 127.0.0.3) lost: silent at the roll call after ..."
    const size_t lost = got.error.find(" lost: ");
    ASSERT_NE(lost, std::string::npos) << "rank " << r << " at " << stage << ": " << got.error;
    const std::string named = got.error.substr(0, lost);
    EXPECT_EQ(named.substr(named.size() - std::min(named.size(), expected.size())), expected)
        << "rank " << r << " at " << stage << ": " << got.error;
    EXPECT_EQ(named.find("(host "), named.rfind("(host "))
        << "rank " << r << " names more than one host at " << stage << ": " << got.error;
  }
}

TEST(Communicator, RankKilledWhileEndpointsAreExchangedIsNamedByEverySurvivor) {
  ExpectLossDuringSetUpNamed("endpoint exchange", 1);
}

TEST(Communicator, HostKilledWhileEndpointsAreExchangedIsNamedByEverySurvivor) {
  ExpectLossDuringSetUpNamed("endpoint exchange", 2);
}

TEST(Communicator, HostKilledBeforeTheLastBarrierIsNamedByEverySurvivor) {
  ExpectLossDuringSetUpNamed("last barrier", 2);
}

TEST(Communicator, RootCommIdProblemsFailAtOnce) {
  CommOptions o;
  o.world = 2;
  o.rank = 1;
  o.timeout_s = 1;
  auto c = Communicator::Create(o);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(std::string(c.status().message()).find("NEURON_RT_ROOT_COMM_ID"), std::string::npos);
  EXPECT_EQ(NrtStatusOf(c.status()), NRT_INVALID);

  for (const char* bad : {"nonsense", "127.0.0.1", "127.0.0.1:99999", ":80",
                          "no-such-host.invalid:1234"}) {
    o.root_comm_id = bad;
    c = Communicator::Create(o);
    ASSERT_FALSE(c.ok()) << bad;
    EXPECT_NE(std::string(c.status().message()).find("NEURON_RT_ROOT_COMM_ID"),
              std::string::npos) << c.status();
  }
  // Nobody listens: a timeout within NEURON_RT_EXEC_TIMEOUT, not a hang.
  o.root_comm_id = "127.0.0.1:" + std::to_string(testing::FreePort());
  const auto t0 = std::chrono::steady_clock::now();
  c = Communicator::Create(o);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(NrtStatusOf(c.status()), NRT_TIMEOUT) << c.status();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 3.0);
}

// NEURON_RT_EXEC_TIMEOUT far past any job: bounded before it is added to
// the clock, where it would wrap into a deadline in the past.
TEST(Communicator, HugeTimeoutDoesNotWrap) {
  JobOptions o;
  o.base.world = 2;
  o.base.timeout_s = ~uint64_t{0};
  auto results = RunJob(o, [](Communicator& c) {
    float v = 1;
    return c.AllReduce(&v, &v, 1, DataType::kF32, ReduceOp::kSum).ok() && v == 2 &&
                   c.Barrier().ok()
               ? 0
               : 1;
  });
  ExpectAllZero(results);
}

TEST(Communicator, MalformedReplicaGroups) {
  EXPECT_EQ(ValidateGroups({}, 4), "");
  EXPECT_EQ(ValidateGroups({{0, 1}, {2, 3}}, 4), "");
  EXPECT_NE(ValidateGroups({{0, 1}, {1, 2}}, 4), "");  // rank twice, 3 missing
  EXPECT_NE(ValidateGroups({{0, 1}, {2}}, 3), "");     // unequal sizes
  EXPECT_NE(ValidateGroups({{0, 1}, {}}, 2), "");      // empty group
  EXPECT_NE(ValidateGroups({{0, 4}}, 2), "");          // out of range
  EXPECT_NE(ValidateGroups({{0, -1}}, 2), "");
  EXPECT_NE(ValidateGroups({{0}}, 2), "");             // rank 1 in none

  CommOptions o;
  o.validate_groups = true;
  auto c = Communicator::Create(o);
  ASSERT_TRUE(c.ok()) << c.status();
  float x = 1, y = 0;
  absl::Status st = (*c)->AllReduce(&x, &y, 1, DataType::kF32, ReduceOp::kSum, {{0}, {1}});
  EXPECT_EQ(NrtStatusOf(st), NRT_INVALID) << st;
  EXPECT_NE(std::string(st.message()).find("NEURON_RT_ENABLE_RG_VALIDATION"), std::string::npos);
  // Without validation the local checks still refuse what cannot run.
  o.validate_groups = false;
  c = Communicator::Create(o);
  ASSERT_TRUE(c.ok());
  st = (*c)->AllReduce(&x, &y, 1, DataType::kF32, ReduceOp::kSum, {{0, 0}});
  EXPECT_EQ(NrtStatusOf(st), NRT_INVALID) << st;
  st = (*c)->AllReduce(&x, &y, 1, DataType::kF32, ReduceOp::kSum, {{0}});
  EXPECT_TRUE(st.ok()) << st;
  EXPECT_EQ(y, 1.0f);
  st = (*c)->Permute(&x, &y, 4, {{0, 5}});
  EXPECT_EQ(NrtStatusOf(st), NRT_INVALID);
}

}  // namespace
}  // namespace neuron::collectives
