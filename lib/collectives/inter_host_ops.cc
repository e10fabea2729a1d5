// The algorithms for groups that span hosts. They see only group members
// and the Transport's duplex exchange (Xfer); the choice between them is
// ChooseInterHost in communicator.cc.
//
//  ring: reduce-scatter then all-gather around a ring; each link carries
//        2(g-1)/g of the data: the bandwidth algorithm.
//  rdh:  recursive doubling (small: whole vectors, log2 g rounds) or
//        recursive halving reduce-scatter + doubling all-gather (larger),
//        with the ranks beyond a power of two folded in first: the latency
//        algorithm.
//  hier: shared-memory reduce-scatter inside each host, an all-reduce of
//        each slice across hosts (ring or rdh, among the ranks holding the
//        same slice), shared-memory all-gather: inter-host traffic is 1/L
//        of the ring's with L ranks per host. With N ranks per network
//        proxy, one rank of every N carries its share's slices.
// Every block is reduced on one rank and copied to the others, so all
// ranks end with the same bits.
#include <algorithm>
#include <cstring>
#include <vector>

#include "lib/collectives/comm_impl.h"

namespace neuron::collectives {
namespace {

#define RETURN_IF_ERROR(expr)  \
  do {                         \
    absl::Status _st = (expr); \
    if (!_st.ok()) return _st; \
  } while (0)

inline size_t Mod(long a, long g) { return static_cast<size_t>(((a % g) + g) % g); }

}  // namespace

absl::Status Communicator::Impl::Xfer(int to, const void* sbuf, size_t sbytes,
                                      int from, void* rbuf, size_t rbytes, int stream) {
  if (!broken.ok()) return broken;
  absl::Status st = transport->Exchange(to, sbuf, sbytes, from, rbuf, rbytes, stream);
  if (!st.ok() && broken.ok()) broken = st;
  if (st.ok() && to >= 0) network_bytes += sbytes;
  return st;
}

absl::Status Communicator::Impl::XferReducing(int to, const void* sbuf, size_t sbytes, int from,
                                              void* rbuf, char* into, size_t count, DataType type,
                                              ReduceOp op) {
  if (!broken.ok()) return broken;
  const size_t es = DataTypeSize(type);
  char* received = static_cast<char*>(rbuf);
  absl::Status st = transport->ExchangeInPieces(
      to, sbuf, sbytes, from, rbuf, count * es, kCollectiveStream, [&](size_t offset, size_t bytes) {
        // Pieces are whole chunks, so they hold whole elements.
        ReduceInto(into + offset, received + offset, bytes / es, type, op);
      });
  if (!st.ok() && broken.ok()) broken = st;
  if (st.ok() && to >= 0) network_bytes += sbytes;
  return st;
}

absl::Status Communicator::Impl::RingAllReduceBody(const GroupView& v, const char* in,
                                                   char* out, size_t count, DataType type,
                                                   ReduceOp op) {
  const size_t es = DataTypeSize(type), g = v.members.size();
  if (g == 1 || count == 0) {
    if (in != out && count) std::memmove(out, in, count * es);
    return absl::OkStatus();
  }
  const long me = v.me, G = static_cast<long>(g);
  const int next = v.members[Mod(me + 1, G)], prev = v.members[Mod(me - 1, G)];
  auto off = [&](size_t b) { return count * b / g; };
  auto len = [&](size_t b) { return off(b + 1) - off(b); };
  // One pipeline of 2(g-1) steps, so a chunk travels on as soon as it is
  // reduced or has landed, across the step boundaries. The reduce-scatter
  // receives into two scratch halves in turn and reduces each piece with
  // the input's block into the output as it lands: block me ends whole
  // there; the all-gather receives the reduced blocks straight into place.
  // So every output byte is written once, and no copy of the input comes
  // first: step 0 sends from the input.
  const size_t half = (count / g + 1) * es;
  scratch.resize(std::max(scratch.size(), 2 * half));
  std::vector<PipelineStep> steps;
  std::vector<const char*> reduce_with;
  std::vector<char*> reduce_into;
  for (long k = 0; k < G - 1; ++k) {  // reduce-scatter
    const size_t sb = Mod(me - k - 1, G), rb = Mod(me - k - 2, G);
    steps.push_back({(k == 0 ? in : out) + off(sb) * es, len(sb) * es,
                     scratch.data() + static_cast<size_t>(k % 2) * half, len(rb) * es});
    reduce_with.push_back(in + off(rb) * es);
    reduce_into.push_back(out + off(rb) * es);
  }
  for (long k = 0; k < G - 1; ++k) {  // all-gather
    const size_t sb = Mod(me - k, G), rb = Mod(me - k - 1, G);
    steps.push_back({out + off(sb) * es, len(sb) * es, out + off(rb) * es, len(rb) * es});
  }
  if (!broken.ok()) return broken;
  absl::Status st = transport->RingPipeline(
      next, prev, steps, kCollectiveStream, [&](size_t step, size_t offset, size_t bytes) {
        if (step >= reduce_into.size()) return;
        // Pieces are whole chunks, so they hold whole elements.
        Reduce2(reduce_into[step] + offset, reduce_with[step] + offset,
                static_cast<const char*>(steps[step].recv) + offset, bytes / es, type, op);
      });
  if (!st.ok() && broken.ok()) broken = st;
  if (st.ok()) {
    for (const PipelineStep& s : steps) network_bytes += s.send_bytes;
  }
  return st;
}

absl::Status Communicator::Impl::RdhAllReduceBody(const GroupView& v, char* out,
                                                  size_t count, DataType type,
                                                  ReduceOp op) {
  const size_t es = DataTypeSize(type), bytes = count * es;
  const int g = static_cast<int>(v.members.size()), me = v.me;
  if (g == 1 || count == 0) return absl::OkStatus();
  int pof2 = 1;
  while (pof2 * 2 <= g) pof2 *= 2;
  const int rem = g - pof2;
  scratch.resize(std::max(scratch.size(), bytes));
  char* tmp = scratch.data();
  auto real = [&](int newrank) {  // member index of a folded rank
    return newrank < rem ? newrank * 2 + 1 : newrank + rem;
  };
  // Fold: the first 2*rem members pair up; the even one hands its vector
  // to the odd one and waits for the result.
  int newrank;
  if (me < 2 * rem) {
    if (me % 2 == 0) {
      const int odd = v.members[static_cast<size_t>(me + 1)];
      RETURN_IF_ERROR(Xfer(odd, out, bytes, -1, nullptr, 0));
      return Xfer(-1, nullptr, 0, odd, out, bytes);
    }
    RETURN_IF_ERROR(XferReducing(-1, nullptr, 0, v.members[static_cast<size_t>(me - 1)], tmp, out, count,
                                 type, op));
    newrank = me / 2;
  } else {
    newrank = me - rem;
  }
  if (bytes <= rdh_doubling_bytes || count < static_cast<size_t>(pof2)) {
    for (int mask = 1; mask < pof2; mask <<= 1) {  // whole vectors
      const int partner = v.members[static_cast<size_t>(real(newrank ^ mask))];
      RETURN_IF_ERROR(Xfer(partner, out, bytes, partner, tmp, bytes));
      ReduceInto(out, tmp, count, type, op);
    }
  } else {
    auto off = [&](int b) { return count * static_cast<size_t>(b) / static_cast<size_t>(pof2); };
    int lo = 0, hi = pof2;  // blocks this rank still reduces
    for (int mask = pof2 / 2; mask >= 1; mask >>= 1) {  // recursive halving
      const int partner = v.members[static_cast<size_t>(real(newrank ^ mask))];
      const int mid = (lo + hi) / 2;
      const bool upper = (newrank & mask) != 0;
      const int keep_lo = upper ? mid : lo, keep_hi = upper ? hi : mid;
      const int send_lo = upper ? lo : mid, send_hi = upper ? mid : hi;
      // The half sent and the half reduced into are disjoint.
      RETURN_IF_ERROR(XferReducing(partner, out + off(send_lo) * es, (off(send_hi) - off(send_lo)) * es,
                                   partner, tmp, out + off(keep_lo) * es, off(keep_hi) - off(keep_lo),
                                   type, op));
      lo = keep_lo, hi = keep_hi;
    }
    for (int mask = 1; mask < pof2; mask <<= 1) {  // recursive doubling
      const int partner = v.members[static_cast<size_t>(real(newrank ^ mask))];
      const int base = newrank & ~(mask - 1), other = base ^ mask;
      RETURN_IF_ERROR(Xfer(partner, out + off(base) * es, (off(base + mask) - off(base)) * es,
                           partner, out + off(other) * es,
                           (off(other + mask) - off(other)) * es));
    }
  }
  if (me < 2 * rem) {  // unfold: the odd member returns the result
    RETURN_IF_ERROR(Xfer(v.members[static_cast<size_t>(me - 1)], out, bytes, -1, nullptr, 0));
  }
  return absl::OkStatus();
}

absl::Status Communicator::Impl::HierAllReduce(const GroupView& v, const char* in,
                                               char* out, size_t count,
                                               DataType type, ReduceOp op) {
  const size_t es = DataTypeSize(type);
  // Every member's index among its host's members, and the hosts in group
  // order (by host id, computed once at set-up).
  std::vector<int> hosts, index_on_host(v.members.size()), seen(static_cast<size_t>(nhosts), 0);
  for (size_t i = 0; i < v.members.size(); ++i) {
    const int h = peers[v.members[i]].host_id;
    if (seen[static_cast<size_t>(h)] == 0) hosts.push_back(h);
    index_on_host[i] = seen[static_cast<size_t>(h)]++;
  }
  const int mine = peers[rank].host_id;
  const int my_index = index_on_host[static_cast<size_t>(v.me)];
  const size_t l = static_cast<size_t>(seen[static_cast<size_t>(mine)]);
  // NEURON_RT_RANKS_PER_NETWORK_PROXY: n consecutive ranks of a host share
  // one proxy, the first of them, which alone talks to the other hosts
  // (n: the largest divisor of l up to the setting, so every share is
  // whole and every rank takes the same steps).
  size_t n = std::min<size_t>(std::max<uint64_t>(1, opt.ranks_per_proxy), l);
  while (l % n != 0) --n;
  const int proxy_index = static_cast<int>(static_cast<size_t>(my_index) / n * n);
  // This host's members, my share's members, and the rail: the members of
  // every host with the index of my share's proxy, hosts in group order.
  GroupView local, share, rail;
  local.local = share.local = true;
  rail.local = false;
  for (const int h : hosts) {
    for (size_t i = 0; i < v.members.size(); ++i) {
      const int r = v.members[i];
      if (peers[r].host_id != h) continue;
      if (h == mine) {
        if (r == rank) local.me = static_cast<int>(local.members.size());
        local.members.push_back(r);
        if (index_on_host[i] >= proxy_index &&
            index_on_host[i] < proxy_index + static_cast<int>(n)) {
          if (r == rank) share.me = static_cast<int>(share.members.size());
          share.members.push_back(r);
        }
      }
      if (index_on_host[i] == proxy_index) {
        if (r == rank) rail.me = static_cast<int>(rail.members.size());
        rail.members.push_back(r);
      }
    }
  }
  const size_t blk = (count + l - 1) / l;
  // Whole blocks: pad the input when the count does not split evenly.
  const char* src = in;
  char* dst = out;
  if (blk * l != count) {
    hier_scratch.resize(2 * blk * l * es);
    char* padded = hier_scratch.data();
    std::memcpy(padded, in, count * es);
    std::memset(padded + count * es, 0, (blk * l - count) * es);
    src = padded;
    dst = padded + blk * l * es;
  }
  slice.resize(blk * es);
  RETURN_IF_ERROR(ShmReduceScatter(local, src, slice.data(), blk, type, op));
  // The share's slices are adjacent: the proxy reduces them across hosts
  // as one region and hands the result back.
  const size_t region_count = blk * n;
  char* reg = slice.data();
  if (n > 1) {
    region.resize(region_count * es);
    reg = region.data();
    RETURN_IF_ERROR(ShmAllGather(share, slice.data(), reg, blk * es));
  }
  if (share.me == 0) {
    const bool rdh = region_count * es <= rdh_bytes && opt.algorithm != "ring";
    RETURN_IF_ERROR(rdh ? RdhAllReduceBody(rail, reg, region_count, type, op)
                        : RingAllReduceBody(rail, reg, reg, region_count, type, op));
  }
  if (n > 1) {
    RETURN_IF_ERROR(ShmBroadcast(share, reg, reg, region_count * es, 0));
  }
  RETURN_IF_ERROR(ShmAllGather(local, reg + static_cast<size_t>(share.me) * blk * es, dst,
                               blk * es));
  if (dst != out) std::memcpy(out, dst, count * es);
  return absl::OkStatus();
}

absl::Status Communicator::Impl::RingReduceScatter(const GroupView& v,
                                                   const char* in, char* out,
                                                   size_t count, DataType type,
                                                   ReduceOp op) {
  const size_t es = DataTypeSize(type), g = v.members.size();
  step += ReduceScatterSteps(count, es, g);
  const size_t block = count * es;
  if (g == 1 || count == 0) {
    if (out != in && count) std::memmove(out, in, block);
    return absl::OkStatus();
  }
  const long me = v.me, G = static_cast<long>(g);
  const int next = v.members[Mod(me + 1, G)], prev = v.members[Mod(me - 1, G)];
  scratch.resize(std::max(scratch.size(), block * (g + 1)));
  char* work = scratch.data() + block;  // a copy of in, reduced in place
  char* recv = scratch.data();
  std::memcpy(work, in, block * g);
  for (long k = 0; k < G - 1; ++k) {
    const size_t sb = Mod(me - k - 1, G), rb = Mod(me - k - 2, G);
    RETURN_IF_ERROR(XferReducing(next, work + sb * block, block, prev, recv, work + rb * block, count,
                                 type, op));
  }
  std::memcpy(out, work + static_cast<size_t>(me) * block, block);
  return absl::OkStatus();
}

absl::Status Communicator::Impl::RingAllGather(const GroupView& v, const char* in,
                                               char* out, size_t bytes) {
  const size_t g = v.members.size();
  step += CopySteps(bytes, g);
  if (bytes == 0) return absl::OkStatus();
  const long me = v.me, G = static_cast<long>(g);
  if (out + me * bytes != in) std::memmove(out + me * bytes, in, bytes);
  const int next = v.members[Mod(me + 1, G)], prev = v.members[Mod(me - 1, G)];
  for (long k = 0; k < G - 1; ++k) {
    const size_t sb = Mod(me - k, G), rb = Mod(me - k - 1, G);
    RETURN_IF_ERROR(Xfer(next, out + sb * bytes, bytes, prev, out + rb * bytes, bytes));
  }
  return absl::OkStatus();
}

absl::Status Communicator::Impl::RingBroadcast(const GroupView& v, const char* in,
                                               char* out, size_t bytes, int root) {
  const size_t g = v.members.size();
  step += CopySteps(bytes, g);
  if (v.me == root && out != in && bytes) std::memmove(out, in, bytes);
  if (g == 1 || bytes == 0) return absl::OkStatus();
  if (v.me != root) {
    return Xfer(-1, nullptr, 0, v.members[static_cast<size_t>(root)], out, bytes);
  }
  for (size_t j = 0; j < g; ++j) {
    if (static_cast<int>(j) == root) continue;
    RETURN_IF_ERROR(Xfer(v.members[j], in, bytes, -1, nullptr, 0));
  }
  return absl::OkStatus();
}

}  // namespace neuron::collectives
