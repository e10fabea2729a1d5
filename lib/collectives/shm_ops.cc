// The shared-memory algorithms for groups on one host. Each rank owns
// `nbuf` staging and result slots of `chunk` bytes in the segment; a step
// writes a slot, publishes a flag, and reads the peers' slots of the same
// step. Slots are reused round-robin, so a rank may run up to nbuf steps
// ahead of its slowest reader (the pipeline).
//
//  direct:    (small all-reduce) every rank publishes its whole input and
//             reduces all of them itself: one flag round, the latency path.
//  pipelined: (large all-reduce, reduce-scatter) per chunk, every rank
//             reduces its own slice from the peers' staging slots, then
//             copies the peers' reduced slices: reduce-scatter + all-gather.
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "absl/strings/str_cat.h"
#include "lib/collectives/comm_impl.h"

namespace neuron::collectives {
namespace {

// Pauses before a waiter sleeps. The latency path spins long (its peers
// are a cache-line transfer away, and a futex wake-up costs far more than
// the operation); bulk transfers sleep early so a waiting rank does not
// take CPU from the peer it waits for when ranks outnumber cores.
constexpr int kSpins = 2000;        // about 50 us

// The futex word is the low half of the 64-bit counter (little-endian).
uint32_t* FutexWord(std::atomic<uint64_t>* v) { return reinterpret_cast<uint32_t*>(v); }

inline void Relax() {
#if defined(__x86_64__)
  _mm_pause();
#endif
}

// A process that exited (or is a zombie awaiting its parent) is gone.
bool Alive(int pid) {
  if (pid <= 0) return true;
  if (kill(pid, 0) != 0 && errno == ESRCH) return false;
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  FILE* f = std::fopen(path, "r");
  if (f == nullptr) return true;  // no /proc: trust kill()
  char buf[512] = {};
  const size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  const char* paren = std::strrchr(buf, ')');
  if (n == 0 || paren == nullptr || paren[1] == 0) return true;
  return paren[2] != 'Z' && paren[2] != 'X';
}

inline size_t Ceil(size_t a, size_t b) { return (a + b - 1) / b; }

// Messages this large do not stay in cache: their output is written with
// non-temporal stores, which skip reading each line before writing it.
constexpr size_t kStreamBytes = 8u << 20;
constexpr size_t kStreamBlock = 16u << 10;

// memcpy with non-temporal stores (dst need not be aligned). The caller
// issues the store fence once its last copy is done: a fence per copy
// would wait for every block's stores to drain.
void StreamCopy(char* dst, const char* src, size_t n) {
#if defined(__AVX__)
  const size_t head = std::min(n, (32 - reinterpret_cast<uintptr_t>(dst) % 32) % 32);
  std::memcpy(dst, src, head);
  size_t i = head;
  for (; i + 128 <= n; i += 128) {
    const __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 32));
    const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 64));
    const __m256i d = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 96));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i), a);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i + 32), b);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i + 64), c);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i + 96), d);
  }
  std::memcpy(dst + i, src + i, n - i);
#else
  std::memcpy(dst, src, n);
#endif
}

#define RETURN_IF_ERROR(expr)           \
  do {                                  \
    absl::Status _st = (expr);          \
    if (!_st.ok()) return _st;          \
  } while (0)

}  // namespace

void Publish(Counter& c, uint64_t v) {
  c.value.store(v, std::memory_order_seq_cst);
  if (c.waiters.load(std::memory_order_seq_cst) != 0) {
    syscall(SYS_futex, FutexWord(&c.value), FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0);
  }
}

RankFlags* Communicator::Impl::Flags(int r) const {
  return reinterpret_cast<RankFlags*>(shm + kSegmentHeaderBytes) + peers[r].local;
}

char* Communicator::Impl::Staging(int r, uint64_t s) const {
  return shm + data_offset + static_cast<size_t>(peers[r].local) * 2 * nbuf * chunk +
         (s % nbuf) * chunk;
}

char* Communicator::Impl::Result(int r, uint64_t s) const {
  return Staging(r, s) + nbuf * chunk;
}

absl::Status Communicator::Impl::WaitFlag(Counter RankFlags::*which,
                                          const std::vector<int>& ranks,
                                          int skip, uint64_t target, int spins) {
  if (spins == 0) spins = kSpins;
  for (int r : ranks) {
    if (r == skip) continue;
    Counter& c = Flags(r)->*which;
    std::atomic<uint64_t>& v = c.value;
    uint64_t seen = v.load(std::memory_order_acquire);
    for (int i = 0; i < spins && seen < target; ++i) {
      if (oversubscribed) sched_yield();
      else Relax();
      seen = v.load(std::memory_order_acquire);
    }
    auto next_check = net::Clock::now();
    while (seen < target) {
      if (opt.one_thread_per_core) {
        for (int i = 0; i < 256 && seen < target; ++i) {
          Relax();
          seen = v.load(std::memory_order_acquire);
        }
      } else {
        // Sleep until published, at most 1 ms between liveness checks.
        c.waiters.fetch_add(1, std::memory_order_seq_cst);
        seen = v.load(std::memory_order_seq_cst);
        if (seen < target) {
          timespec ts{0, 1000000};
          syscall(SYS_futex, FutexWord(&v), FUTEX_WAIT, static_cast<uint32_t>(seen), &ts,
                  nullptr, 0);
        }
        c.waiters.fetch_sub(1, std::memory_order_seq_cst);
        seen = v.load(std::memory_order_acquire);
      }
      if (seen >= target) break;
      if (header->lost.load(std::memory_order_relaxed) != 0) {
        return Lost(header->lost.load() - 1, "");
      }
      const auto now = net::Clock::now();
      if (now >= deadline) {
        return Lost(r, absl::StrCat("no progress within ", opt.timeout_s,
                                    " s (NEURON_RT_EXEC_TIMEOUT)"));
      }
      if (now >= next_check) {
        if (!Alive(peers[r].pid)) {
          return Lost(r, absl::StrCat("process ", peers[r].pid, " exited"));
        }
        // Across hosts: answer a roll call even while waiting on this host.
        if (!control.empty()) {
          absl::Status st = CheckControl();
          if (!st.ok()) return st;
        }
        next_check = now + std::chrono::milliseconds(2);
      }
    }
    // A rank that posted step t has finished every step before t it read.
    if (which == &RankFlags::posted) {
      uint64_t& known = known_done[peers[r].local];
      if (seen - 1 > known) known = seen - 1;
    }
  }
  return absl::OkStatus();
}

absl::Status Communicator::Impl::BeginWrite(uint64_t s,
                                            const std::vector<int>& readers) {
  const size_t slot = s % nbuf;
  return WaitReaders(slot_readers[slot], slot_step[slot], s, readers);
}

// The slot's previous contents (written at step last_step - 1) must have
// been read by everyone who was to read them. Only ranks that read a step
// are waited for, and they store `done` for it, so ranks that sit out
// operations never hold this up.
absl::Status Communicator::Impl::WaitReaders(std::vector<int>& last,
                                             uint64_t& last_step, uint64_t s,
                                             const std::vector<int>& readers) {
  const uint64_t need = last_step;
  for (int r : last) {
    if (r == rank || need == 0) continue;
    uint64_t& known = known_done[peers[r].local];
    if (known >= need) continue;
    known = std::max(known, Flags(r)->done.value.load(std::memory_order_acquire));
    if (known >= need) continue;
    const std::vector<int> one{r};
    RETURN_IF_ERROR(WaitFlag(&RankFlags::done, one, rank, need));
    known = need;
  }
  last.assign(readers.begin(), readers.end());
  last_step = s + 1;
  return absl::OkStatus();
}

// Elements per member per pipeline step: the chunk split among the group,
// kept to whole cache lines.
static size_t SubChunk(size_t chunk, size_t g, size_t es) {
  size_t c = std::max<size_t>(1, chunk / (g * es));
  const size_t line = 64 / es;
  if (c >= line) c -= c % line;
  return c;
}

uint64_t Communicator::Impl::AllReduceSteps(size_t count, size_t es,
                                            size_t g) const {
  if (g <= 1 || count == 0) return 0;
  if (count * es <= small_bytes) return 1;
  return Ceil(Ceil(count, g), SubChunk(chunk, g, es));
}

uint64_t Communicator::Impl::ReduceScatterSteps(size_t count, size_t es,
                                                size_t g) const {
  if (g <= 1 || count == 0) return 0;
  return Ceil(count, SubChunk(chunk, g, es));
}

uint64_t Communicator::Impl::CopySteps(size_t bytes, size_t g) const {
  if (g <= 1 || bytes == 0) return 0;
  return Ceil(bytes, chunk);
}

absl::Status Communicator::Impl::ShmAllReduce(const GroupView& v, const char* in,
                                              char* out, size_t count,
                                              DataType type, ReduceOp op) {
  const size_t es = DataTypeSize(type), g = v.members.size();
  const size_t bytes = count * es;
  if (g == 1 || count == 0) {
    if (out != in && bytes) std::memmove(out, in, bytes);
    return absl::OkStatus();
  }
  const std::vector<int>& m = v.members;
  if (bytes <= kInlineBytes) {  // flag and data in one cache line
    const uint64_t s = step++;
    const size_t at = (s & 1) * kInlineBytes;
    RETURN_IF_ERROR(WaitReaders(inline_readers[s & 1], inline_step[s & 1], s, m));
    Counter& mine = Flags(rank)->posted;
    std::memcpy(mine.payload + at, in, bytes);
    Publish(mine, s + 1);
    RETURN_IF_ERROR(WaitFlag(&RankFlags::posted, m, rank, s + 1, latency_spins));
    Reduce2(out, Flags(m[0])->posted.payload + at, Flags(m[1])->posted.payload + at, count,
            type, op);
    for (size_t j = 2; j < g; ++j) {
      ReduceInto(out, Flags(m[j])->posted.payload + at, count, type, op);
    }
    Publish(Flags(rank)->done, s + 1);
    return absl::OkStatus();
  }
  if (bytes <= small_bytes) {
    const uint64_t s = step++;
    RETURN_IF_ERROR(BeginWrite(s, m));
    std::memcpy(Staging(rank, s), in, bytes);
    Publish(Flags(rank)->posted, s + 1);
    RETURN_IF_ERROR(WaitFlag(&RankFlags::posted, m, rank, s + 1, latency_spins));
    Reduce2(out, Staging(m[0], s), Staging(m[1], s), count, type, op);
    for (size_t j = 2; j < g; ++j) ReduceInto(out, Staging(m[j], s), count, type, op);
    Publish(Flags(rank)->done, s + 1);
    return absl::OkStatus();
  }
  if (peers[rank].arena_bytes > 0) {
    bool done = false;
    RETURN_IF_ERROR(ZeroCopyAllReduce(v, in, out, count, type, op, &done));
    if (done) return absl::OkStatus();
  }
  return PipelinedAllReduce(v, in, out, count, type, op);
}

// Uses the peers' buffers in their arenas: everyone publishes where its
// buffers are, then reduces its slice straight from the peers' inputs into
// every member's output. No staging copy, no gather pass. Falls back (done = false) unless every member's buffers are
// in its arena; the steps consumed are the same either way.
absl::Status Communicator::Impl::ZeroCopyAllReduce(const GroupView& v, const char* in,
                                                   char* out, size_t count,
                                                   DataType type, ReduceOp op,
                                                   bool* done) {
  const size_t es = DataTypeSize(type), g = v.members.size(), bytes = count * es;
  const std::vector<int>& m = v.members;
  for (int r : m) {
    if (peers[r].arena_bytes == 0) return absl::OkStatus();  // same on all
  }
  const uint64_t s0 = step;
  const uint64_t steps = AllReduceSteps(count, es, g);
  char* arena = ArenaOf(rank);
  const char* end = arena + peers[rank].arena_bytes;
  const bool mine_ok = in != out && in >= arena && in + bytes <= end && out >= arena &&
                       out + bytes <= end;
  uint64_t where[3] = {mine_ok ? 1u : 0u, static_cast<uint64_t>(in - arena),
                       static_cast<uint64_t>(out - arena)};
  Counter& entered = Flags(rank)->entered;
  std::memcpy(entered.payload, where, sizeof(where));
  Publish(entered, s0 + 1);
  RETURN_IF_ERROR(WaitFlag(&RankFlags::entered, m, rank, s0 + 1));
  const char* ins[64];
  char* outs[64];
  for (size_t j = 0; j < g; ++j) {
    uint64_t w[3];
    std::memcpy(w, Flags(m[j])->entered.payload, sizeof(w));
    if (w[0] == 0 || g > 64) return absl::OkStatus();  // someone cannot
    // Offsets another process wrote: bounded by its arena before use.
    const uint64_t arena_bytes = peers[m[j]].arena_bytes;
    if (w[0] != 1 || !InArena(w[1], bytes, arena_bytes) || !InArena(w[2], bytes, arena_bytes)) {
      return Lost(m[j], absl::StrCat("it published zero-copy buffers at offsets ", w[1], " and ",
                                     w[2], " for ", bytes, " bytes, outside its ", arena_bytes,
                                     "-byte arena"));
    }
    ins[j] = ArenaOf(m[j]) + w[1];
    outs[j] = ArenaOf(m[j]) + w[2];
  }
  *done = true;
  step += steps;
  const size_t csub = SubChunk(chunk, g, es);
  const size_t me = static_cast<size_t>(v.me);
  auto lo_of = [&](size_t j, uint64_t k) {
    return std::min(count * (j + 1) / g, count * j / g + k * csub);
  };
  auto hi_of = [&](size_t j, uint64_t k) {
    return std::min(count * (j + 1) / g, count * j / g + (k + 1) * csub);
  };
  const bool stream = bytes >= kStreamBytes;
  alignas(64) char block[kStreamBlock];
  const size_t per_block = kStreamBlock / es;
  // Each member reduces its slice once, in a cache-resident block, and
  // writes it straight into every member's output: every byte of the inputs
  // is read once and every byte of the outputs written once.
  for (uint64_t k = 0; k < steps; ++k) {
    const size_t lo = lo_of(me, k), n = hi_of(me, k) - lo;
    for (size_t b = 0; b < n; b += per_block) {
      const size_t bn = std::min(per_block, n - b);
      const size_t at = (lo + b) * es;
      Reduce2(block, ins[0] + at, ins[1] + at, bn, type, op);
      for (size_t j = 2; j < g; ++j) ReduceInto(block, ins[j] + at, bn, type, op);
      for (size_t j = 0; j < g; ++j) {
        char* dst = (j == me ? out : outs[j]) + at;
        if (stream) {
          StreamCopy(dst, block, bn * es);
        } else {
          std::memcpy(dst, block, bn * es);
        }
      }
    }
  }
#if defined(__AVX__)
  if (stream) _mm_sfence();  // our streamed slices visible before we say done
#endif
  // Every member has read our input and written its slices of our output.
  Publish(Flags(rank)->done, s0 + steps);
  return WaitFlag(&RankFlags::done, m, rank, s0 + steps);
}

absl::Status Communicator::Impl::PipelinedAllReduce(const GroupView& v, const char* in,
                                                    char* out, size_t count,
                                                    DataType type, ReduceOp op) {
  const size_t es = DataTypeSize(type), g = v.members.size();
  const std::vector<int>& m = v.members;
  const size_t csub = SubChunk(chunk, g, es);
  const uint64_t steps = AllReduceSteps(count, es, g);
  const uint64_t s0 = step;
  step += steps;
  const size_t me = static_cast<size_t>(v.me);
  auto lo_of = [&](size_t j, uint64_t k) {
    return std::min(count * (j + 1) / g, count * j / g + k * csub);
  };
  auto hi_of = [&](size_t j, uint64_t k) {
    return std::min(count * (j + 1) / g, count * j / g + (k + 1) * csub);
  };
  const bool in_place = in == out;
  const char* srcs[64];
  for (uint64_t k = 0; k < steps; ++k) {
    const uint64_t s = s0 + k;
    RETURN_IF_ERROR(BeginWrite(s, m));
    char* st = Staging(rank, s);
    for (size_t j = 0; j < g; ++j) {
      if (j == me && !in_place) continue;
      const size_t lo = lo_of(j, k), hi = hi_of(j, k);
      if (hi > lo) std::memcpy(st + j * csub * es, in + lo * es, (hi - lo) * es);
    }
    Publish(Flags(rank)->posted, s + 1);
    RETURN_IF_ERROR(WaitFlag(&RankFlags::posted, m, rank, s + 1));
    const size_t lo = lo_of(me, k), n = hi_of(me, k) - lo;
    if (n > 0) {
      for (size_t j = 0; j < g && j < 64; ++j) {
        srcs[j] = (j == me && !in_place) ? in + lo * es
                                          : Staging(m[j], s) + me * csub * es;
      }
      char* dst = out + lo * es;
      Reduce2(dst, srcs[0], srcs[1], n, type, op);
      for (size_t j = 2; j < g; ++j) {
        ReduceInto(dst, j < 64 ? srcs[j] : Staging(m[j], s) + me * csub * es, n,
                   type, op);
      }
      std::memcpy(Result(rank, s), dst, n * es);
    }
    Publish(Flags(rank)->reduced, s + 1);
    RETURN_IF_ERROR(WaitFlag(&RankFlags::reduced, m, rank, s + 1));
    for (size_t j = 0; j < g; ++j) {
      if (j == me) continue;
      const size_t jl = lo_of(j, k), jh = hi_of(j, k);
      if (jh > jl) std::memcpy(out + jl * es, Result(m[j], s), (jh - jl) * es);
    }
    Publish(Flags(rank)->done, s + 1);
  }
  return absl::OkStatus();
}

absl::Status Communicator::Impl::ShmReduceScatter(const GroupView& v,
                                                  const char* in, char* out,
                                                  size_t count, DataType type,
                                                  ReduceOp op) {
  const size_t es = DataTypeSize(type), g = v.members.size();
  if (g == 1 || count == 0) {
    if (out != in && count) std::memmove(out, in, count * es);
    return absl::OkStatus();
  }
  const std::vector<int>& m = v.members;
  const size_t csub = SubChunk(chunk, g, es);
  const uint64_t steps = ReduceScatterSteps(count, es, g);
  const uint64_t s0 = step;
  step += steps;
  const size_t me = static_cast<size_t>(v.me);
  for (uint64_t k = 0; k < steps; ++k) {
    const uint64_t s = s0 + k;
    const size_t lo = k * csub, n = std::min(count, lo + csub) - lo;
    RETURN_IF_ERROR(BeginWrite(s, m));
    char* st = Staging(rank, s);
    for (size_t j = 0; j < g; ++j) {
      std::memcpy(st + j * csub * es, in + (j * count + lo) * es, n * es);
    }
    Publish(Flags(rank)->posted, s + 1);
    RETURN_IF_ERROR(WaitFlag(&RankFlags::posted, m, rank, s + 1));
    char* dst = out + lo * es;
    Reduce2(dst, Staging(m[0], s) + me * csub * es,
            Staging(m[1], s) + me * csub * es, n, type, op);
    for (size_t j = 2; j < g; ++j) {
      ReduceInto(dst, Staging(m[j], s) + me * csub * es, n, type, op);
    }
    Publish(Flags(rank)->done, s + 1);
  }
  return absl::OkStatus();
}

absl::Status Communicator::Impl::ShmAllGather(const GroupView& v, const char* in,
                                              char* out, size_t bytes) {
  const size_t g = v.members.size(), me = static_cast<size_t>(v.me);
  if (bytes == 0) return absl::OkStatus();
  if (out + me * bytes != in) std::memmove(out + me * bytes, in, bytes);
  if (g == 1) return absl::OkStatus();
  const std::vector<int>& m = v.members;
  const uint64_t steps = CopySteps(bytes, g);
  const uint64_t s0 = step;
  step += steps;
  for (uint64_t k = 0; k < steps; ++k) {
    const uint64_t s = s0 + k;
    const size_t lo = k * chunk, n = std::min(bytes, lo + chunk) - lo;
    RETURN_IF_ERROR(BeginWrite(s, m));
    std::memcpy(Staging(rank, s), out + me * bytes + lo, n);
    Publish(Flags(rank)->posted, s + 1);
    RETURN_IF_ERROR(WaitFlag(&RankFlags::posted, m, rank, s + 1));
    for (size_t j = 0; j < g; ++j) {
      if (j != me) std::memcpy(out + j * bytes + lo, Staging(m[j], s), n);
    }
    Publish(Flags(rank)->done, s + 1);
  }
  return absl::OkStatus();
}

absl::Status Communicator::Impl::ShmBroadcast(const GroupView& v, const char* in,
                                              char* out, size_t bytes, int root) {
  const size_t g = v.members.size();
  const bool am_root = v.me == root;
  if (am_root && out != in && bytes) std::memmove(out, in, bytes);
  if (g == 1 || bytes == 0) return absl::OkStatus();
  const std::vector<int>& m = v.members;
  const int root_rank = m[static_cast<size_t>(root)];
  const std::vector<int> from{root_rank};
  const uint64_t steps = CopySteps(bytes, g);
  const uint64_t s0 = step;
  step += steps;
  for (uint64_t k = 0; k < steps; ++k) {
    const uint64_t s = s0 + k;
    const size_t lo = k * chunk, n = std::min(bytes, lo + chunk) - lo;
    if (am_root) {
      RETURN_IF_ERROR(BeginWrite(s, m));
      std::memcpy(Staging(rank, s), in + lo, n);
      Publish(Flags(rank)->posted, s + 1);
    } else {
      RETURN_IF_ERROR(WaitFlag(&RankFlags::posted, from, rank, s + 1));
      std::memcpy(out + lo, Staging(root_rank, s), n);
    }
    Publish(Flags(rank)->done, s + 1);
  }
  return absl::OkStatus();
}

absl::Status Communicator::Impl::ShmSendRecv(const char* in, int to, char* out,
                                             int from, size_t bytes) {
  if (from == -1 && bytes) std::memset(out, 0, bytes);
  if (bytes == 0) return absl::OkStatus();
  const uint64_t steps = CopySteps(bytes, 2);
  const uint64_t s0 = step;
  step += steps;
  if (to < 0 && from < 0) return absl::OkStatus();
  const std::vector<int> readers{to}, sources{from};
  for (uint64_t k = 0; k < steps; ++k) {
    const uint64_t s = s0 + k;
    const size_t lo = k * chunk, n = std::min(bytes, lo + chunk) - lo;
    if (to >= 0) {
      RETURN_IF_ERROR(BeginWrite(s, readers));
      std::memcpy(Staging(rank, s), in + lo, n);
      Publish(Flags(rank)->posted, s + 1);
    }
    if (from >= 0) {
      RETURN_IF_ERROR(WaitFlag(&RankFlags::posted, sources, rank, s + 1));
      std::memcpy(out + lo, Staging(from, s), n);
    }
    Publish(Flags(rank)->done, s + 1);
  }
  return absl::OkStatus();
}

absl::Status Communicator::Impl::ShmBarrier() {
  const uint64_t epoch = ++barrier_epoch;
  Publish(Flags(rank)->barrier, epoch);
  std::vector<int> all;
  for (int r = 0; r < world; ++r) all.push_back(r);
  return WaitFlag(&RankFlags::barrier, all, rank, epoch);
}

}  // namespace neuron::collectives
