// The libfabric transport: one reliable-datagram (FI_EP_RDM) endpoint per
// rank, tagged messages, one completion queue. The same code runs over EFA
// on an instance and over tcp;ofi_rxm anywhere else.
//
// A transfer is cut into chunks of NEURON_RT_CC_CHUNK_SIZE bytes (or the
// provider's eager size, where smaller), with up to
// NEURON_RT_CC_CHANNEL_BUFFER_N chunks' worth in flight each way. Every chunk
// is its own message whose tag carries the sender and a per-pair sequence
// number, so matching never depends on the provider's ordering. Waits
// sleep in poll(2) on the completion queue's descriptor (when the provider
// has one), so a waiting rank does not take the CPU of the rank it waits
// for; small transfers first poll a short while, yielding the CPU between
// reads.
#include "lib/collectives/transport.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <poll.h>
#include <sched.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>

#include "absl/strings/str_cat.h"
#include "lib/collectives/tcp_transport.h"
#include "lib/collectives/wire.h"
#include "lib/log/log.h"

namespace neuron::collectives {
namespace {

// libfabric is opened at run time: a host without it still runs (over the
// TCP mesh), and the library adds no dependency to libnrt.so.1. These are
// the only functions it exports that we call; the rest are inline wrappers
// around the providers' operation tables.
struct FabricApi {
  decltype(&::fi_getinfo) getinfo = nullptr;
  decltype(&::fi_freeinfo) freeinfo = nullptr;
  decltype(&::fi_dupinfo) dupinfo = nullptr;
  decltype(&::fi_fabric) fabric = nullptr;
  decltype(&::fi_strerror) strerror = nullptr;
};

// The ofi_rxm providers send messages up to FI_OFI_RXM_BUFFER_SIZE eagerly
// and larger ones by rendezvous, a round trip each, which halved the
// throughput of a rate-limited link here (0.54 of 2 Gbit/s, 0.84 eager);
// unless the user set it, it is raised to kEagerBytes and messages are cut
// to that size.
constexpr size_t kEagerBytes = 64 * 1024;

// How long a transfer of at most kEagerBytes each way per step (the latency
// algorithms' steps) keeps reading the completion queue after its last
// progress before it sleeps: waking from poll(2) costs more than such a
// message takes to arrive (8 B across 2 namespace hosts: 12.6 -> 6.9 us).
// Between reads the rank yields, so a rank with work to do gets the CPU.
constexpr auto kLatencyPoll = std::chrono::microseconds(50);

const FabricApi* Api() {
  static const FabricApi* api = []() -> const FabricApi* {
    setenv("FI_OFI_RXM_BUFFER_SIZE", std::to_string(kEagerBytes).c_str(), /*overwrite=*/0);
    void* lib = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return nullptr;
    static FabricApi a;
    a.getinfo = reinterpret_cast<decltype(a.getinfo)>(dlsym(lib, "fi_getinfo"));
    a.freeinfo = reinterpret_cast<decltype(a.freeinfo)>(dlsym(lib, "fi_freeinfo"));
    a.dupinfo = reinterpret_cast<decltype(a.dupinfo)>(dlsym(lib, "fi_dupinfo"));
    a.fabric = reinterpret_cast<decltype(a.fabric)>(dlsym(lib, "fi_fabric"));
    a.strerror = reinterpret_cast<decltype(a.strerror)>(dlsym(lib, "fi_strerror"));
    if (!a.getinfo || !a.freeinfo || !a.dupinfo || !a.fabric || !a.strerror) return nullptr;
    return &a;
  }();
  return api;
}

constexpr uint32_t kApiVersion = FI_VERSION(1, 9);
constexpr int kRankBits = 20;  // tag: sequence << kRankBits | sender rank
constexpr int kWaitMs = 20;    // longest sleep between checks of the hooks

// Providers in the order we prefer them; others (except those that cannot
// leave the host) come after, in libfabric's order.
constexpr std::array<std::string_view, 6> kPreferred = {
    "efa", "verbs;ofi_rxm", "tcp;ofi_rxm", "tcp", "sockets", "udp;ofi_rxd"};

bool CrossesHosts(std::string_view prov) {
  return prov != "shm" && prov.find("ofi_hook") == std::string_view::npos &&
         prov != "ofi_mrail";
}

int Preference(std::string_view prov) {
  for (size_t i = 0; i < kPreferred.size(); ++i) {
    if (prov == kPreferred[i]) return static_cast<int>(i);
  }
  return static_cast<int>(kPreferred.size());
}

fi_info* Hints() {
  fi_info* hints = Api()->dupinfo(nullptr);
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_TAGGED;
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->domain_attr->mr_mode =
      FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
  hints->domain_attr->threading = FI_THREAD_DOMAIN;
  return hints;
}

// The best provider's info for an endpoint on `node` (an address of this
// host; the provider binds to it), or without a node when the provider
// does not speak IP (EFA). Caller frees the list `*all`.
fi_info* BestInfo(const char* node, fi_info** all) {
  *all = nullptr;
  if (Api() == nullptr) return nullptr;
  fi_info* hints = Hints();
  int rc = node != nullptr ? Api()->getinfo(kApiVersion, node, nullptr, FI_SOURCE, hints, all)
                           : -FI_ENODATA;
  fi_info* best = nullptr;
  auto pick = [&]() {
    for (fi_info* i = *all; i != nullptr; i = i->next) {
      const std::string_view prov = i->fabric_attr->prov_name;
      if (!CrossesHosts(prov)) continue;
      if (best == nullptr || Preference(prov) < Preference(best->fabric_attr->prov_name)) {
        best = i;
      }
    }
  };
  if (rc == 0) pick();
  if (best == nullptr) {
    if (*all != nullptr) Api()->freeinfo(*all);
    *all = nullptr;
    if (Api()->getinfo(kApiVersion, nullptr, nullptr, 0, hints, all) == 0) pick();
  }
  Api()->freeinfo(hints);
  return best;
}

struct Op {
  fi_context2 ctx;  // first: the provider's completion gives back its address
  bool send = false;
  int peer = -1;
  size_t step = 0;    // of the pipeline
  size_t offset = 0;  // in the step's buffer
  size_t len = 0;
};

class FabricTransport : public Transport {
 public:
  FabricTransport(const TransportSetup& setup) : setup_(setup) {}
  ~FabricTransport() override { Close(); }

  std::string Name() const override { return absl::StrCat("libfabric ", provider_); }

  // Opens the endpoint; its name is then published by Connect.
  absl::Status Open() {
    const std::string node =
        setup_.addrs.empty() ? "" : inet_ntoa(setup_.addrs[setup_.rank].sin_addr);
    info_ = BestInfo(node.empty() || node == "0.0.0.0" ? nullptr : node.c_str(), &all_);
    if (Api() == nullptr) return absl::NotFoundError("libfabric.so.1 is not installed");
    if (info_ == nullptr) return absl::NotFoundError("libfabric has no provider for this host");
    provider_ = info_->fabric_attr->prov_name;
    need_mr_ = (info_->domain_attr->mr_mode & FI_MR_LOCAL) != 0;
    int rc = Api()->fabric(info_->fabric_attr, &fabric_, nullptr);
    if (rc == 0) rc = fi_domain(fabric_, info_, &domain_, nullptr);
    if (rc != 0) return Error("cannot open the fabric", rc);
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    cq_attr.size = 4 * std::max<size_t>(setup_.channel_buffers, 2);
    cq_attr.wait_obj = FI_WAIT_FD;
    if (fi_cq_open(domain_, &cq_attr, &cq_, nullptr) == 0) {
      can_wait_ = fi_control(&cq_->fid, FI_GETWAIT, &wait_fd_) == 0 && wait_fd_ >= 0;
    } else {
      cq_attr.wait_obj = FI_WAIT_NONE;
      rc = fi_cq_open(domain_, &cq_attr, &cq_, nullptr);
      if (rc != 0) return Error("cannot open a completion queue", rc);
    }
    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    av_attr.count = static_cast<size_t>(setup_.world);
    rc = fi_av_open(domain_, &av_attr, &av_, nullptr);
    if (rc == 0) rc = fi_endpoint(domain_, info_, &ep_, nullptr);
    if (rc == 0) rc = fi_ep_bind(ep_, &av_->fid, 0);
    if (rc == 0) rc = fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV);
    if (rc == 0) rc = fi_enable(ep_);
    if (rc != 0) return Error("cannot open an endpoint", rc);
    std::array<char, 256> name{};
    size_t len = name.size();
    rc = fi_getname(&ep_->fid, name.data(), &len);
    if (rc != 0) return Error("cannot read the endpoint's address", rc);
    name_.assign(name.data(), len);
    max_msg_ = info_->ep_attr->max_msg_size ? info_->ep_attr->max_msg_size : (1u << 30);
    if (provider_.find("ofi_rxm") != std::string::npos) {
      uint64_t eager = kEagerBytes;
      if (const char* v = getenv("FI_OFI_RXM_BUFFER_SIZE")) eager = std::strtoull(v, nullptr, 10);
      if (eager >= 4096) max_msg_ = std::min<size_t>(max_msg_, eager);
    }
    return absl::OkStatus();
  }

  const std::string& provider() const { return provider_; }
  const std::string& name() const { return name_; }

  // Enters every rank's endpoint name into the address vector.
  absl::Status Connect(const std::vector<std::string>& names) {
    addrs_.assign(names.size(), FI_ADDR_UNSPEC);
    for (size_t r = 0; r < names.size(); ++r) {
      // fi_av_insert reads as many bytes as this provider's addresses have.
      if (names[r].size() != name_.size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "rank ", r, " gave a libfabric ", provider_, " endpoint name of ", names[r].size(),
            " bytes, this rank's has ", name_.size()));
      }
      if (fi_av_insert(av_, names[r].data(), 1, &addrs_[r], 0, nullptr) != 1) {
        return absl::InternalError(
            absl::StrCat("libfabric ", provider_, " cannot address rank ", r));
      }
    }
    send_seq_.assign(names.size(), 0);
    recv_seq_.assign(names.size(), 0);
    return absl::OkStatus();
  }

  absl::Status AddRegion(const void* base, size_t bytes) override {
    if (bytes == 0 || domain_ == nullptr) return absl::OkStatus();
    fid_mr* mr = nullptr;
    const int rc = fi_mr_reg(domain_, base, bytes, FI_SEND | FI_RECV, 0, next_key_++, 0, &mr,
                             nullptr);
    if (rc != 0) {
      // Where the provider needs no registration, transfers go without.
      return need_mr_ ? Error("cannot register device memory", rc) : absl::OkStatus();
    }
    ++stats_.registrations;
    regions_.push_back({static_cast<const char*>(base), bytes, mr});
    return absl::OkStatus();
  }

  absl::Status Exchange(int to, const void* sbuf, size_t sbytes, int from,
                        void* rbuf, size_t rbytes, int stream) override {
    return ExchangeInPieces(to, sbuf, sbytes, from, rbuf, rbytes, stream, nullptr);
  }

  // Each received message (a chunk) is a piece.
  absl::Status ExchangeInPieces(int to, const void* sbuf, size_t sbytes, int from, void* rbuf,
                                size_t rbytes, int stream,
                                const std::function<void(size_t, size_t)>& on_received) override {
    const std::vector<PipelineStep> one{{sbuf, sbytes, rbuf, rbytes}};
    const std::function<void(size_t, size_t, size_t)> piece =
        [&](size_t, size_t offset, size_t bytes) { on_received(offset, bytes); };
    return RunSteps(to, from, one, stream, on_received ? &piece : nullptr);
  }

  absl::Status RingPipeline(int to, int from, const std::vector<PipelineStep>& steps, int stream,
                            const std::function<void(size_t, size_t, size_t)>& on_received) override {
    return RunSteps(to, from, steps, stream, &on_received);
  }

 private:
  struct Side {
    char* buf = nullptr;
    size_t bytes = 0;
    int peer = -1;
    size_t posted = 0, done = 0;  // bytes
    fid_mr* mr = nullptr;
    void* desc = nullptr;
  };
  // A pipeline step as the transport tracks it.
  struct Step {
    Side send, recv;
    std::vector<bool> landed;  // the receive's messages handed over
    size_t handed = 0;         // bytes handed over from the start, with no gap
  };
  struct Region {
    const char* base;
    size_t bytes;
    fid_mr* mr;
  };

  absl::Status Error(const char* what, int rc) {
    return absl::InternalError(absl::StrCat("libfabric ", provider_, ": ", what, ": ",
                                            Api()->strerror(-rc)));
  }

  // A buffer inside a region registered once uses that region's key; any
  // other is registered for this transfer alone, as on the device where
  // each tensor needs its own registration. Providers that need no
  // registration (tcp) still get one, so both modes do the same work here
  // as on EFA; a refusal is then ignored.
  absl::Status Register(Side& s) {
    if (s.bytes == 0) return absl::OkStatus();
    for (const Region& r : regions_) {
      if (s.buf >= r.base && s.buf + s.bytes <= r.base + r.bytes) {
        s.desc = fi_mr_desc(r.mr);
        ++stats_.region_hits;
        return absl::OkStatus();
      }
    }
    const int rc = fi_mr_reg(domain_, s.buf, s.bytes, FI_SEND | FI_RECV, 0, next_key_++, 0,
                             &s.mr, nullptr);
    if (rc != 0) {
      s.mr = nullptr;
      return need_mr_ ? Error("cannot register a buffer", rc) : absl::OkStatus();
    }
    ++stats_.registrations;
    s.desc = fi_mr_desc(s.mr);
    return absl::OkStatus();
  }
  void Unregister(Side& s) {
    if (s.mr != nullptr) fi_close(&s.mr->fid);
    s.mr = nullptr;
    s.desc = nullptr;
  }

  // A message: a chunk (NEURON_RT_CC_CHUNK_SIZE), or less where the
  // provider sends less in one go.
  // A multiple of 64 bytes, so every piece holds whole elements of any type.
  size_t ChunkBytes() const {
    const size_t bytes = std::min<size_t>(std::max<uint64_t>(setup_.chunk_bytes, 4096), max_msg_);
    return std::max<size_t>(bytes / 64 * 64, 64);
  }
  // Messages in flight each way: NEURON_RT_CC_CHANNEL_BUFFER_N chunks' worth,
  // at most kMaxInflight messages.
  int InflightLimit() const {
    static constexpr uint64_t kMaxInflight = 32;
    const uint64_t chunk = std::max<uint64_t>(setup_.chunk_bytes, 4096);
    const uint64_t msgs = std::max<uint64_t>(setup_.channel_buffers, 1) * (chunk / ChunkBytes());
    return static_cast<int>(std::min(msgs, std::max<uint64_t>(kMaxInflight,
                                                              setup_.channel_buffers)));
  }

  // NEURON_RT_CC_STREAM_SPLIT: stream 0 gets W0/(W0+W1) of the messages in
  // flight, the other stream the rest; each keeps at least one.
  int StreamInflightLimit(int stream) const {
    const int total = InflightLimit();
    const uint64_t w0 = setup_.stream_weights[0], w1 = setup_.stream_weights[1];
    const int first = static_cast<int>(
        std::clamp<uint64_t>(total * w0 / std::max<uint64_t>(w0 + w1, 1), 1,
                             static_cast<uint64_t>(std::max(total - 1, 1))));
    return stream == 0 ? first : std::max(total - first, 1);
  }

  // Posts the messages of s up to byte `upto` that the stream's in-flight
  // limit allows; -FI_EAGAIN just waits for room.
  absl::Status Post(Side& s, bool send, int stream, size_t step, size_t upto, int& inflight) {
    const int limit = StreamInflightLimit(stream);
    while (s.posted < s.bytes && inflight < limit) {
      const size_t n = std::min(ChunkBytes(), s.bytes - s.posted);
      if (s.posted + n > upto) break;
      Op* op = NewOp(send, s.peer);
      op->step = step;
      op->offset = s.posted;
      op->len = n;
      ssize_t rc;
      if (send) {
        const uint64_t tag = (send_seq_[s.peer] << kRankBits) | static_cast<uint64_t>(setup_.rank);
        rc = fi_tsend(ep_, s.buf + s.posted, n, s.desc, addrs_[s.peer], tag, &op->ctx);
        if (rc == 0) ++send_seq_[s.peer];
      } else {
        const uint64_t tag = (recv_seq_[s.peer] << kRankBits) | static_cast<uint64_t>(s.peer);
        rc = fi_trecv(ep_, s.buf + s.posted, n, s.desc, addrs_[s.peer], tag, 0, &op->ctx);
        if (rc == 0) ++recv_seq_[s.peer];
      }
      if (rc == -FI_EAGAIN) {
        FreeOp(op);
        break;
      }
      if (rc != 0) {
        FreeOp(op);
        return Error(send ? "cannot send" : "cannot post a receive", static_cast<int>(rc));
      }
      s.posted += n;
      ++inflight;
      stats_.max_inflight[stream] = std::max(stats_.max_inflight[stream], inflight);
      inflight_.push_back(op);
    }
    return absl::OkStatus();
  }

  // Registers the steps' buffers, runs them, and after a failure closes the
  // endpoint: posted buffers may belong to the caller no longer, so nothing
  // may be written into them later.
  absl::Status RunSteps(int to, int from, const std::vector<PipelineStep>& in, int stream,
                        const std::function<void(size_t, size_t, size_t)>* on_received) {
    if (broken_) return absl::InternalError("the fabric endpoint was closed after a failure");
    const size_t chunk = ChunkBytes();
    std::vector<Step> steps(in.size());
    size_t total = 0;
    for (size_t j = 0; j < in.size(); ++j) {
      Step& s = steps[j];
      s.send = {static_cast<char*>(const_cast<void*>(in[j].send)), to < 0 ? 0 : in[j].send_bytes,
                to};
      s.recv = {static_cast<char*>(in[j].recv), from < 0 ? 0 : in[j].recv_bytes, from};
      s.landed.assign((s.recv.bytes + chunk - 1) / chunk, false);
      total += s.send.bytes + s.recv.bytes;
    }
    if (total == 0) return absl::OkStatus();
    absl::Status st;
    for (Step& s : steps) {
      if (st.ok()) st = Register(s.send);
      if (st.ok()) st = Register(s.recv);
    }
    if (st.ok()) st = Pump(steps, std::clamp(stream, 0, kTransportStreams - 1), on_received);
    for (Step& s : steps) {
      Unregister(s.send);
      Unregister(s.recv);
    }
    if (!st.ok()) {
      broken_ = true;
      Close();
    }
    return st;
  }

  // Posts and completes the steps' messages in order. Step j's receive is
  // posted once step j-2's was handed over whole (so the two may share a
  // buffer); step j's message i goes once step j-1's message i was handed
  // over (both sides cut steps into the same chunks).
  absl::Status Pump(std::vector<Step>& steps, int stream,
                    const std::function<void(size_t, size_t, size_t)>* on_received) {
    const size_t chunk = ChunkBytes();
    size_t next_send = 0, next_recv = 0;  // the steps now posting
    int sending = 0, receiving = 0;       // messages in flight
    auto pending = [&] {
      return std::any_of(steps.begin(), steps.end(), [](const Step& s) {
        return s.send.done < s.send.bytes || s.recv.done < s.recv.bytes;
      });
    };
    auto blamed = [&] {  // the peer a stall is charged to: the sender first
      for (const Step& s : steps) {
        if (s.recv.done < s.recv.bytes) return s.recv.peer;
      }
      for (const Step& s : steps) {
        if (s.send.done < s.send.bytes) return s.send.peer;
      }
      return -1;
    };
    const bool latency = std::all_of(steps.begin(), steps.end(), [](const Step& s) {
      return s.send.bytes <= kEagerBytes && s.recv.bytes <= kEagerBytes;
    });
    auto last_check = net::Clock::now();
    auto last_progress = last_check;
    while (pending()) {
      absl::Status st;
      for (; st.ok() && next_recv < steps.size(); ++next_recv) {
        Step& s = steps[next_recv];
        if (next_recv >= 2 && steps[next_recv - 2].handed < steps[next_recv - 2].recv.bytes) break;
        st = Post(s.recv, false, stream, next_recv, s.recv.bytes, receiving);
        if (s.recv.posted < s.recv.bytes) break;
      }
      for (; st.ok() && next_send < steps.size(); ++next_send) {
        Step& s = steps[next_send];
        const size_t ready = next_send == 0 ? s.send.bytes : steps[next_send - 1].handed;
        st = Post(s.send, true, stream, next_send, ready, sending);
        if (s.send.posted < s.send.bytes) break;
      }
      if (!st.ok()) return st;
      std::array<fi_cq_tagged_entry, 16> done;
      ssize_t n = fi_cq_read(cq_, done.data(), done.size());
      if (n == -FI_EAGAIN) {
        const auto now = net::Clock::now();
        if (now - last_check >= std::chrono::milliseconds(kWaitMs)) {
          last_check = now;
          st = setup_.hooks.check();
          if (!st.ok()) return st;
          if (now >= *setup_.hooks.deadline) return setup_.hooks.lost(blamed(), "no progress");
        }
        // Sleep on the queue's file descriptor, once libfabric agrees that
        // nothing is pending that only another read would progress.
        fid* fids[1] = {&cq_->fid};
        if (setup_.spin) continue;
        if (latency && now - last_progress < kLatencyPoll) {
          sched_yield();
          continue;
        }
        if (can_wait_ && fi_trywait(fabric_, fids, 1) == FI_SUCCESS) {
          pollfd p{wait_fd_, POLLIN, 0};
          poll(&p, 1, kWaitMs);
        } else if (!can_wait_) {
          std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
        continue;
      }
      if (n == -FI_EAVAIL) {
        fi_cq_err_entry err{};
        fi_cq_readerr(cq_, &err, 0);
        Op* op = static_cast<Op*>(err.op_context);
        const int peer = op != nullptr ? op->peer : -1;
        if (op != nullptr) Retire(op);
        return setup_.hooks.lost(peer, absl::StrCat("libfabric ", provider_, " reported ",
                                                    Api()->strerror(err.err)));
      }
      if (n < 0) return Error("cannot read the completion queue", static_cast<int>(n));
      last_progress = net::Clock::now();
      for (ssize_t i = 0; i < n; ++i) {
        Op* op = static_cast<Op*>(done[i].op_context);
        const size_t j = op->step, offset = op->offset, len = op->len;
        const bool sent = op->send;
        const int peer = op->peer;
        Retire(op);
        // A receive completes with what arrived: both ends cut the same
        // chunks, so anything shorter is a peer outside the protocol.
        if (!sent && done[i].len != len) {
          return setup_.hooks.lost(peer, absl::StrCat("it sent a ", done[i].len, "-byte message where ",
                                                      len, " bytes were due"));
        }
        Step& s = steps[j];
        if (sent) {
          s.send.done += len;
          --sending;
          continue;
        }
        s.recv.done += len;
        --receiving;
        if (on_received != nullptr) (*on_received)(j, offset, len);
        s.landed[offset / chunk] = true;
        while (s.handed < s.recv.bytes && s.landed[s.handed / chunk]) {
          s.handed = std::min(s.handed + chunk, s.recv.bytes);
        }
      }
    }
    return absl::OkStatus();
  }

  Op* NewOp(bool send, int peer) {
    Op* op;
    if (free_.empty()) {
      op = new Op;
    } else {
      op = free_.back();
      free_.pop_back();
    }
    op->send = send;
    op->peer = peer;
    return op;
  }
  void FreeOp(Op* op) { free_.push_back(op); }
  void Retire(Op* op) {
    auto it = std::find(inflight_.begin(), inflight_.end(), op);
    if (it != inflight_.end()) inflight_.erase(it);
    FreeOp(op);
  }

  TransportStats Stats() const override {
    TransportStats s = stats_;
    for (int i = 0; i < kTransportStreams; ++i) s.inflight_limit[i] = StreamInflightLimit(i);
    const char* via = setup_.p2p ? "p2p" : "dma-buf";
    s.memory = regions_.empty()
                   ? absl::StrCat("registered per transfer (", via, ")")
                   : absl::StrCat(regions_.size(), " device-memory region(s) registered once (",
                                  via, ")");
    return s;
  }

  void Close() {
    for (Region& r : regions_) fi_close(&r.mr->fid);
    regions_.clear();
    if (ep_ != nullptr) fi_close(&ep_->fid);
    if (av_ != nullptr) fi_close(&av_->fid);
    if (cq_ != nullptr) fi_close(&cq_->fid);
    if (domain_ != nullptr) fi_close(&domain_->fid);
    if (fabric_ != nullptr) fi_close(&fabric_->fid);
    if (all_ != nullptr) Api()->freeinfo(all_);
    ep_ = nullptr, av_ = nullptr, cq_ = nullptr, domain_ = nullptr, fabric_ = nullptr;
    all_ = nullptr, info_ = nullptr;
    for (Op* op : inflight_) delete op;
    for (Op* op : free_) delete op;
    inflight_.clear();
    free_.clear();
  }

  TransportSetup setup_;
  fi_info* all_ = nullptr;
  fi_info* info_ = nullptr;  // within all_
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_cq* cq_ = nullptr;
  fid_av* av_ = nullptr;
  fid_ep* ep_ = nullptr;
  std::string provider_, name_;
  bool need_mr_ = false, can_wait_ = false, broken_ = false;
  int wait_fd_ = -1;  // the completion queue's, when it has one
  size_t max_msg_ = 0;
  std::vector<fi_addr_t> addrs_;
  std::vector<uint64_t> send_seq_, recv_seq_;
  std::vector<Op*> inflight_, free_;
  std::vector<Region> regions_;
  TransportStats stats_;
  // Keys for registrations: unique, as providers that choose none need.
  uint64_t next_key_ = 1;
};

}  // namespace

std::string BestFabricProvider() {
  fi_info* all = nullptr;
  fi_info* best = BestInfo(nullptr, &all);
  std::string name = best != nullptr ? best->fabric_attr->prov_name : "";
  if (all != nullptr) Api()->freeinfo(all);
  return name;
}

absl::StatusOr<std::unique_ptr<Transport>> MakeInterHostTransport(
    const TransportSetup& setup) {
  // Every rank tries libfabric and says what it got ("F<provider>\0<name>"
  // or "T<why>"); the job uses libfabric only when every rank has the same
  // provider, else the TCP mesh.
  auto fabric = std::make_unique<FabricTransport>(setup);
  absl::Status opened = fabric->Open();
  wire::EndpointBlob own;
  own.fabric = opened.ok();
  if (opened.ok()) {
    own.provider = fabric->provider();
    own.name = fabric->name();
  } else {
    own.why = std::string(opened.message());
  }
  auto all = setup.all_gather(wire::SerializeEndpointBlob(own));
  if (!all.ok()) return all.status();
  bool same = true;
  std::string why;  // the first rank's reason for the fallback
  std::vector<std::string> names;
  for (size_t r = 0; r < all->size(); ++r) {
    auto blob = wire::ParseEndpointBlob((*all)[r]);
    if (!blob.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("rank ", r, " described its endpoint as ", blob.status().message()));
    }
    if (!blob->fabric) {
      why = absl::StrCat("rank ", r, ": ", blob->why);
    } else if (!opened.ok() || blob->provider != fabric->provider()) {
      why = absl::StrCat("rank ", r, " has provider ", blob->provider, ", not that of the others");
    }
    if (!why.empty()) {
      same = false;
      break;
    }
    names.push_back(blob->name);
  }
  if (same) {
    absl::Status st = fabric->Connect(names);
    if (!st.ok()) return st;
    return std::unique_ptr<Transport>(std::move(fabric));
  }
  fabric.reset();
  if (setup.rank == 0) {
    const char* asked = getenv("FI_PROVIDER");
    NEURON_LOG(NRT, kWarn, "collectives across hosts use TCP, not libfabric%s: %s",
               asked ? absl::StrCat(" (FI_PROVIDER=", asked, ")") : std::string(), why);
  }
  auto fds = setup.tcp_mesh();
  if (!fds.ok()) return fds.status();
  return MakeTcpTransport(std::move(*fds), setup.hooks, setup.spin);
}

}  // namespace neuron::collectives
