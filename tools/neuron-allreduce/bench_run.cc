#include "tools/neuron-allreduce/bench_run.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/support/atomic_file.h"
#include "lib/support/cli.h"
#include "lib/support/npy.h"
#include "lib/support/parse.h"
#include "lib/support/progress.h"
#include "tools/neuron-allreduce/bench_plot.h"

namespace neuron::collectives {
namespace {

constexpr const char* kTool = "neuron-allreduce";
constexpr double kGB = 1073741824.0;  // nccom-test's GB/s are 2^30 bytes/s
// The most per-iteration times a size keeps for its percentiles.
constexpr size_t kMaxTimedSamples = 65536;

struct Shape {
  uint64_t count = 0;      // elements in the table's count column
  uint64_t in_elems = 0;   // per rank
  uint64_t out_elems = 0;  // per rank
};

Shape ShapeFor(BenchOp op, uint64_t size, size_t es, int world) {
  Shape s;
  const uint64_t elems = size / es;
  const uint64_t w = static_cast<uint64_t>(world);
  switch (op) {
    case BenchOp::kAllGather:
      s.count = elems / w * w;
      s.in_elems = s.count / w;
      s.out_elems = s.count;
      break;
    case BenchOp::kReduceScatter:
      s.count = elems / w * w;
      s.in_elems = s.count;
      s.out_elems = s.count / w;
      break;
    default:
      s.count = s.in_elems = s.out_elems = elems;
  }
  return s;
}

double BusFactor(BenchOp op, int r) {
  switch (op) {
    case BenchOp::kAllReduce: return 2.0 * (r - 1) / r;
    case BenchOp::kAllGather:
    case BenchOp::kReduceScatter: return static_cast<double>(r - 1) / r;
    default: return 1.0;
  }
}

uint64_t Mix(uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

struct Buffer {
  char* data = nullptr;
  size_t bytes = 0;
  bool owned = true;
  ~Buffer() {
    if (owned) std::free(data);
  }
  void Use(char* at, size_t n) {  // memory of the communicator's arena
    data = at;
    bytes = n;
    owned = false;
  }
  void Reserve(size_t n) {
    bytes = std::max<size_t>(n, 64);
    data = static_cast<char*>(std::aligned_alloc(4096, (bytes + 4095) & ~size_t{4095}));
    if (data == nullptr) throw std::bad_alloc();
    std::memset(data, 0, bytes);  // first touch now, not while timing
  }
};

void Fill(const BenchFlags& f, int rank, uint64_t first, uint64_t n, char* out) {
  for (uint64_t i = 0; i < n; ++i) {
    StoreFromDouble(out, i, f.type, BenchInputValue(f, rank, first + i));
  }
}

double Percentile(std::vector<double> v, int p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t k = static_cast<size_t>((p * v.size() + 99) / 100);
  if (k > 0) --k;
  return v[std::min(k, v.size() - 1)];
}

bool SameElement(const char* a, const char* b, size_t i, DataType t) {
  const size_t es = DataTypeSize(t);
  if (std::memcmp(a + i * es, b + i * es, es) == 0) return true;
  return IsFloat(t) && LoadAsDouble(a, i, t) == LoadAsDouble(b, i, t);
}

std::string SaveNpy(const std::string& path, const char* data, uint64_t elems,
                    DataType t) {
  npy::Array a;
  a.descr = DataTypeNpyDescr(t);
  a.shape = {static_cast<int64_t>(elems)};
  a.data.assign(data, data + elems * DataTypeSize(t));
  absl::Status st = npy::WriteFile(path, a);
  return st.ok() ? path : std::string(st.message());
}

struct Row {
  uint64_t size = 0, count = 0;
  double avg_us = 0, algbw = 0, busbw = 0;
  std::vector<double> stat_us;
  int iters = 0;
  uint64_t wrong = 0;
  std::string algorithm;
};

std::string JsonReport(const BenchFlags& f, const std::vector<Row>& rows,
                       double avg_busbw, int world, int hosts,
                       const std::string& transport, const TransportStats& net) {
  std::string j = "{\"results\":[";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    absl::StrAppendFormat(&j, "%s{\"size(B)\":%u,\"count(elems)\":%u,\"type\":\"%s\",",
                          i ? "," : "", r.size, r.count, DataTypeName(f.type));
    absl::StrAppendFormat(&j, "\"algbw(GB/s)\":%.6g,\"busbw(GB/s)\":%.6g,\"time:avg(us)\":%.6g",
                          r.algbw, r.busbw, r.avg_us);
    for (size_t s = 0; s < f.stats.size(); ++s) {
      if (f.stats[s] == "avg") continue;
      absl::StrAppendFormat(&j, ",\"time:%s(us)\":%.6g", f.stats[s], r.stat_us[s]);
    }
    absl::StrAppendFormat(&j, ",\"iters\":%d", r.iters);
    if (f.check != CheckMode::kNone) absl::StrAppendFormat(&j, ",\"#wrong\":%u", r.wrong);
    if (f.show_algorithm) absl::StrAppendFormat(&j, ",\"algorithm\":\"%s\"", r.algorithm);
    j += "}";
  }
  absl::StrAppendFormat(&j,
                        "],\"avg_busbw(GB/s)\":%.6g,\"gb_bytes\":1073741824,\"op\":\"%s\","
                        "\"reduction\":\"%s\",\"nranks\":%d,\"nnodes\":%d,"
                        "\"transport\":\"%s\"",
                        avg_busbw, BenchOpName(f.op), ReduceOpName(f.reduce), world, hosts,
                        transport);
  if (hosts > 1) {
    // Rank 0's transport: what NEURON_RT_CC_STREAM_SPLIT and the
    // registration variables made of it.
    absl::StrAppendFormat(&j,
                          ",\"network\":{\"inflight_limit\":[%d,%d],\"max_inflight\":[%d,%d],"
                          "\"registrations\":%u,\"region_hits\":%u,\"memory\":\"%s\"}",
                          net.inflight_limit[0], net.inflight_limit[1], net.max_inflight[0],
                          net.max_inflight[1], net.registrations, net.region_hits, net.memory);
  }
  j += "}\n";
  return j;
}

constexpr uint64_t Page(uint64_t n) { return (n + 4095) & ~uint64_t{4095}; }

}  // namespace

uint64_t BenchArenaBytes(const BenchFlags& f, int world) {
  if (f.op != BenchOp::kAllReduce || world < 2) return 0;
  uint64_t in = 0, out = 0;
  for (uint64_t s : BenchSizes(f)) {
    const Shape sh = ShapeFor(f.op, s, DataTypeSize(f.type), world);
    in = std::max(in, sh.in_elems * DataTypeSize(f.type));
    out = std::max(out, sh.out_elems * DataTypeSize(f.type));
  }
  const uint64_t total = Page(std::max<uint64_t>(in, 1)) + Page(std::max<uint64_t>(out, 1));
  // Keep the segment modest: the arenas of every rank of a host live in it.
  return total * static_cast<uint64_t>(world) <= (uint64_t{4} << 30) ? total : 0;
}

double BenchInputValue(const BenchFlags& f, int rank, uint64_t i) {
  if (f.check == CheckMode::kNone) return 0;  // nccom-test: zero-filled
  if (f.check == CheckMode::kAllOnes) return 1;
  const uint64_t h = Mix(f.seed * 0x100000001b3ull ^ (static_cast<uint64_t>(rank) << 44) ^ i);
  const bool is_signed = IsFloat(f.type) || f.type == DataType::kS8 ||
                         f.type == DataType::kS16 || f.type == DataType::kS32 ||
                         f.type == DataType::kS64;
  // Small integers: exact in every type, so any summation order agrees.
  const bool reduces = f.op == BenchOp::kAllReduce || f.op == BenchOp::kReduceScatter;
  if (reduces && f.reduce == ReduceOp::kProd) return 1.0 + static_cast<double>(h & 1);
  if (reduces && f.reduce == ReduceOp::kSum) {
    return is_signed ? static_cast<double>(h % 8) - 4 : static_cast<double>(h % 8);
  }
  return is_signed ? static_cast<double>(h % 201) - 100 : static_cast<double>(h % 201);
}

int RunBenchRank(Communicator& comm, const BenchFlags& given, const RunEnv& env) {
  BenchFlags f = given;
  if (f.stats.empty()) f.stats = {"avg", "p50"};  // the median beside the mean
  const int me = comm.rank(), world = comm.world();
  const size_t es = DataTypeSize(f.type);
  const std::vector<uint64_t> sizes = BenchSizes(f);
  uint64_t max_in = 0, max_out = 0;
  for (uint64_t s : sizes) {
    const Shape sh = ShapeFor(f.op, s, es, world);
    max_in = std::max(max_in, sh.in_elems * es);
    max_out = std::max(max_out, sh.out_elems * es);
  }
  Buffer in, out, expected, tmp;
  if (char* arena = comm.Arena()) {
    in.Use(arena, max_in);
    out.Use(arena + Page(std::max<uint64_t>(max_in, 1)), max_out);
  } else {
    in.Reserve(max_in);
    out.Reserve(max_out);
    // The buffers are this rank's device memory (registered once with the
    // fabric under NEURON_RT_REGISTER_HBM_MR).
    for (const Buffer* b : {&in, &out}) {
      absl::Status st = comm.AddDeviceMemory(b->data, b->bytes);
      if (!st.ok()) {
        PrintError(kTool, absl::StrCat("rank ", me, ": ", st.message()));
        return kExitFailure;
      }
    }
  }
  const bool check = f.check != CheckMode::kNone;
  if (check) {
    expected.Reserve(max_out);
    tmp.Reserve(4096 * 8);
  }
  std::vector<std::pair<int, int>> ring;
  for (int r = 0; r < world; ++r) ring.emplace_back(r, (r + 1) % world);
  const int partner = (me ^ 1) < world ? (me ^ 1) : me;
  const char* op_name = BenchOpName(f.op);
  // Percentiles the user asked for (-t) time each iteration from a barrier;
  // the default median times the back-to-back iterations one by one.
  const bool per_iter = std::any_of(given.stats.begin(), given.stats.end(),
                                    [](const std::string& s) { return s != "avg"; });

  std::vector<Row> rows;
  uint64_t total_wrong = 0;
  std::string failure;
  // Rank 0 shows the sweep; the others stay silent.
  std::optional<Progress> sweep;
  if (me == 0) sweep.emplace(absl::StrCat(op_name, " sweep"), sizes.size());
  for (uint64_t size : sizes) {
    if (sweep) sweep->Update(rows.size(), absl::StrCat(FormatBytes(size), " messages"));
    const Shape sh = ShapeFor(f.op, size, es, world);
    const size_t in_bytes = sh.in_elems * es;
    const size_t out_bytes = sh.out_elems * es;
    Fill(f, me, 0, sh.in_elems, in.data);
    auto once = [&]() -> absl::Status {
      switch (f.op) {
        case BenchOp::kAllReduce:
          return comm.AllReduce(in.data, out.data, sh.in_elems, f.type, f.reduce);
        case BenchOp::kAllGather:
          return comm.AllGather(in.data, out.data, sh.in_elems, f.type);
        case BenchOp::kReduceScatter:
          return comm.ReduceScatter(in.data, out.data, sh.out_elems, f.type, f.reduce);
        case BenchOp::kSendRecv:
          return comm.SendRecv(in.data, partner, out.data, partner, in_bytes);
        case BenchOp::kPermute:
          return comm.Permute(in.data, out.data, in_bytes, ring);
      }
      return absl::OkStatus();
    };
    using Clock = std::chrono::steady_clock;
    absl::Status st;
    // The fastest warm-up estimates one iteration (the first may carry
    // one-off set-up); without -n the count follows from it. Every rank runs
    // the same number of warm-ups, then takes the slowest rank's estimate.
    double fastest = 0;
    const int warmups = f.iters == 0 ? std::max(f.warmup, 1) : f.warmup;
    for (int i = 0; i < warmups && st.ok(); ++i) {
      const auto t0 = Clock::now();
      st = once();
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      fastest = i == 0 ? s : std::min(fastest, s);
    }
    int iters = f.iters;
    if (iters == 0 && st.ok()) {
      st = comm.AllReduce(&fastest, &fastest, 1, DataType::kF64, ReduceOp::kMax);
      iters = AutoIterations(fastest);
    }
    // Per-iteration times: every one up to kMaxTimedSamples, beyond that a
    // uniform sample (so -n 100000000 neither allocates nor all-reduces
    // gigabytes). The same seed on every rank picks the same iterations,
    // which keeps the element-wise maximum across ranks meaningful.
    std::vector<double> times;
    times.reserve(std::min<size_t>(static_cast<size_t>(iters), kMaxTimedSamples) + 1);
    std::minstd_rand pick(12345);
    auto keep = [&](int i, double us) {
      if (times.size() < kMaxTimedSamples) {
        times.push_back(us);
        return;
      }
      const size_t j = pick() % (static_cast<size_t>(i) + 1);
      if (j < kMaxTimedSamples) times[j] = us;
    };
    if (st.ok() && per_iter) {
      for (int i = 0; i < iters && st.ok(); ++i) {
        if (env.execution_barrier) st = comm.Barrier();
        const auto t0 = Clock::now();
        if (st.ok()) st = once();
        keep(i, std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      }
    } else if (st.ok()) {
      if (env.execution_barrier) st = comm.Barrier();
      const auto t0 = Clock::now();
      auto last = t0;
      for (int i = 0; i < iters && st.ok(); ++i) {
        st = once();
        const auto now = Clock::now();
        keep(i, std::chrono::duration<double, std::micro>(now - last).count());
        last = now;
      }
      // The last element: this rank's average over the whole loop.
      times.push_back(std::chrono::duration<double, std::micro>(last - t0).count() / iters);
    }
    // The slowest rank's time counts.
    if (st.ok()) {
      st = comm.AllReduce(times.data(), times.data(), times.size(), DataType::kF64,
                          ReduceOp::kMax);
    }
    if (!st.ok()) {
      PrintError(kTool, absl::StrCat("rank ", me, ": ", op_name, " of ", size,
                                     " bytes: ", st.message()));
      return kExitFailure;
    }
    Row row;
    row.size = size;
    row.count = sh.count;
    row.iters = iters;
    if (per_iter) {
      double sum = 0;
      for (double t : times) sum += t;
      row.avg_us = sum / static_cast<double>(times.size());
    } else {
      row.avg_us = times.back();  // the slowest rank's loop average
      times.pop_back();
    }
    for (const std::string& s : f.stats) {
      int p = 0;
      row.stat_us.push_back(s == "avg" ? row.avg_us
                                       : Percentile(times, (absl::SimpleAtoi(s.substr(1), &p), p)));
    }
    row.algbw = row.avg_us > 0 ? static_cast<double>(size) / kGB / (row.avg_us * 1e-6) : 0;
    row.busbw = row.algbw * BusFactor(f.op, world);
    if (f.show_algorithm) {
      row.algorithm = comm.AlgorithmFor(op_name, in_bytes);
      if (f.op == BenchOp::kSendRecv || f.op == BenchOp::kPermute) {
        row.algorithm = world == 1 ? "local" : comm.hosts() > 1 ? "p2p" : "direct";
      }
    }
    if (check) {
      // Expected values, from every rank's (recomputable) inputs.
      char* e = expected.data;
      const size_t block = 4096;
      auto fold = [&](uint64_t first, uint64_t n, char* dst) {
        Fill(f, 0, first, n, dst);
        for (int r = 1; r < world; ++r) {
          Fill(f, r, first, n, tmp.data);
          ReduceInto(dst, tmp.data, n, f.type, f.reduce);
        }
      };
      for (uint64_t i = 0; i < sh.out_elems; i += block) {
        const uint64_t n = std::min<uint64_t>(block, sh.out_elems - i);
        switch (f.op) {
          case BenchOp::kAllReduce: fold(i, n, e + i * es); break;
          case BenchOp::kReduceScatter: fold(me * sh.out_elems + i, n, e + i * es); break;
          case BenchOp::kAllGather: {
            const uint64_t r = i / sh.in_elems, k = i % sh.in_elems;
            const uint64_t m = std::min(n, sh.in_elems - k);
            Fill(f, static_cast<int>(r), k, m, e + i * es);
            if (m < n) i -= block - m;  // continue at the next rank's block
            break;
          }
          case BenchOp::kSendRecv: Fill(f, partner, i, n, e + i * es); break;
          case BenchOp::kPermute: Fill(f, (me + world - 1) % world, i, n, e + i * es); break;
        }
      }
      if (env.inject_error && me == 0 && out_bytes > 0) out.data[0] ^= 0x5a;
      uint64_t wrong = 0;
      if (std::memcmp(out.data, e, out_bytes) != 0) {
        for (uint64_t i = 0; i < sh.out_elems; ++i) {
          if (!SameElement(out.data, e, i, f.type)) ++wrong;
        }
      }
      if (wrong > 0) {
        const std::string base = absl::StrCat("neuron-allreduce-", op_name, "-", size,
                                              "B-rank", me);
        const std::string a = SaveNpy(base + "-input.npy", in.data, sh.in_elems, f.type);
        const std::string b = SaveNpy(base + "-output.npy", out.data, sh.out_elems, f.type);
        const std::string c = SaveNpy(base + "-expected.npy", e, sh.out_elems, f.type);
        PrintError(kTool, absl::StrCat("rank ", me, ": ", wrong, " wrong element(s) at ", size,
                                       " bytes; saved ", a, ", ", b, ", ", c));
      }
      row.wrong = wrong;
      st = comm.AllReduce(&row.wrong, &row.wrong, 1, DataType::kU64, ReduceOp::kSum);
      if (!st.ok()) {
        PrintError(kTool, absl::StrCat("rank ", me, ": ", st.message()));
        return kExitFailure;
      }
      total_wrong += row.wrong;
    }
    rows.push_back(row);
  }
  absl::Status st = comm.Barrier();
  if (!st.ok()) {
    PrintError(kTool, absl::StrCat("rank ", me, ": ", st.message()));
    return kExitFailure;
  }
  if (me != 0) return total_wrong ? kExitFailure : kExitOk;

  double bus_sum = 0;
  for (const Row& r : rows) bus_sum += r.busbw;
  const double avg_busbw = rows.empty() ? 0 : bus_sum / static_cast<double>(rows.size());
  const TransportStats net = comm.NetworkStats();
  const std::string json = JsonReport(f, rows, avg_busbw, world, comm.hosts(),
                                       comm.TransportName(), net);
  if (!f.json_file.empty()) {
    if (absl::Status s = WriteFileAtomically(f.json_file, json); !s.ok()) {
      PrintError(kTool, std::string(s.message()));
      return kExitFailure;
    }
  }
  if (!f.plot_file.empty()) {
    // The picture draws what the report says, read back as any report is.
    absl::StatusOr<BenchReport> run = ParseBenchReport(json);
    absl::Status s = run.ok() ? WriteBenchPlot(f.plot_file, *run, env.compared) : run.status();
    if (!s.ok()) {
      PrintError(kTool, std::string(s.message()));
      return kExitFailure;
    }
  }
  if (f.json) {
    std::fputs(json.c_str(), stdout);
  } else {
    std::string out_text = absl::StrFormat(
        "# %s: %d rank(s) on %d host(s)%s, %s, %s, iters %s, warmup %d; GB/s = 2^30 bytes/s\n",
        op_name, world, comm.hosts(),
        comm.hosts() > 1 ? absl::StrCat(" over ", comm.TransportName()) : std::string(),
        (f.op == BenchOp::kAllReduce || f.op == BenchOp::kReduceScatter)
            ? absl::StrCat("op ", ReduceOpName(f.reduce))
            : std::string("no reduction"),
        f.check == CheckMode::kNone ? "unchecked (zero inputs)"
                                    : f.check == CheckMode::kRandom ? "checked (random)"
                                                                    : "checked (all_ones)",
        f.iters > 0 ? absl::StrCat(f.iters)
                    : absl::StrFormat("%d-%d per size (about %g s each)", kAutoMinIterations,
                                      kAutoMaxIterations, kAutoIterationSeconds),
        f.warmup);
    if (f.show_algorithm) {
      absl::StrAppendFormat(
          &out_text, "# barrier before each size%s: %s\n", per_iter ? " and iteration" : "",
          !env.execution_barrier
              ? "none (NEURON_RT_DISABLE_EXECUTION_BARRIER)"
              : comm.BarrierKind() == "socket"
                    ? "through rank 0's socket"
                    : "on shared-memory flags (NEURON_RT_ENABLE_HW_EXECUTION_BARRIER)");
    }
    if (f.show_algorithm && comm.hosts() > 1 && !net.memory.empty()) {
      absl::StrAppendFormat(&out_text,
                            "# network: in flight at most %d (collectives) + %d (point-to-point), "
                            "most used %d + %d; memory %s, %u registrations, %u transfers in "
                            "registered regions\n",
                            net.inflight_limit[0], net.inflight_limit[1], net.max_inflight[0],
                            net.max_inflight[1], net.memory, net.registrations, net.region_hits);
    }
    absl::StrAppendFormat(&out_text, "%12s  %12s  %6s", "size(B)", "count(elems)", "type");
    for (const std::string& s : f.stats) {
      absl::StrAppendFormat(&out_text, "  %12s", absl::StrCat("time:", s, "(us)"));
    }
    absl::StrAppendFormat(&out_text, "  %11s  %11s  %6s", "algbw(GB/s)", "busbw(GB/s)", "#wrong");
    if (f.show_algorithm) absl::StrAppendFormat(&out_text, "  %s", "algorithm");
    out_text += "\n";
    for (const Row& r : rows) {
      absl::StrAppendFormat(&out_text, "%12u  %12u  %6s", r.size, r.count, DataTypeName(f.type));
      for (double v : r.stat_us) absl::StrAppendFormat(&out_text, "  %12.2f", v);
      absl::StrAppendFormat(&out_text, "  %11.3f  %11.3f  %6s", r.algbw, r.busbw,
                            check ? absl::StrCat(r.wrong) : "N/A");
      if (f.show_algorithm) absl::StrAppendFormat(&out_text, "  %s", r.algorithm);
      out_text += "\n";
    }
    absl::StrAppendFormat(&out_text, "Avg bus bandwidth:\t%.4fGB/s\n", avg_busbw);
    std::fputs(out_text.c_str(), stdout);
  }
  std::fflush(stdout);
  if (total_wrong > 0) {
    std::fprintf(stderr, "%llu errors found - test failed\n",
                 static_cast<unsigned long long>(total_wrong));
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace neuron::collectives
