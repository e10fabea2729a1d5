// Bootstrap, set-up and dispatch of the communicator. The algorithms are in
// shm_ops.cc (one host) and inter_host_ops.cc (across hosts, over the
// Transport of transport.h); roll_call.cc names lost ranks.
#include "lib/collectives/communicator.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/collectives/comm_impl.h"
#include "lib/collectives/gate.h"
#include "lib/collectives/shm_sweep.h"
#include "lib/collectives/wire.h"
#include "lib/device/tree_files.h"
#include "lib/log/log.h"

namespace neuron::collectives {
namespace {

constexpr uint64_t kSegmentMagic = 0x4e43435345474d31ull;

using wire::BootHello;

// The most shared memory one host's segment may take (8 TiB).
constexpr uint64_t kMaxSegmentBytes = uint64_t{8} << 40;

// Ranks in different network namespaces are on different hosts even when
// the host name is the same (a test cluster of namespaces, containers).
std::string HostKey(const std::string& name) {
  struct stat st{};
  if (stat("/proc/self/ns/net", &st) != 0) return name;
  return absl::StrCat(name, "/net:", st.st_ino);
}

// One id per running kernel, the same in every namespace and container on
// it: ranks with the same id share its CPUs even when they are on different
// hosts of ours (a namespace test cluster, containers on one machine).
// Empty where the kernel does not say.
std::string MachineId() {
  absl::StatusOr<std::string> id = device::ReadTrimmed("/proc/sys/kernel/random/boot_id");
  return id.ok() ? *id : "";
}

std::string HostName() {
  char buf[256] = {};
  gethostname(buf, sizeof(buf) - 1);
  return buf;
}

}  // namespace

absl::Status NrtError(NRT_STATUS code, const std::string& message) {
  const std::string text = absl::StrCat(nrt_get_status_name(code), ": ", message);
  switch (code) {
    case NRT_TIMEOUT: return absl::DeadlineExceededError(text);
    case NRT_INVALID: return absl::InvalidArgumentError(text);
    case NRT_RESOURCE: return absl::ResourceExhaustedError(text);
    default: return absl::InternalError(text);
  }
}

NRT_STATUS NrtStatusOf(const absl::Status& status) {
  if (status.ok()) return NRT_SUCCESS;
  const std::string msg(status.message());
  const size_t colon = msg.find(':');
  NRT_STATUS code;
  if (colon != std::string::npos &&
      nrt_parse_status(msg.substr(0, colon).c_str(), &code) == 0) {
    return code;
  }
  return NRT_FAILURE;
}

std::string ValidateGroups(const Groups& groups, int world) {
  if (groups.empty()) return "";
  std::vector<int> seen(static_cast<size_t>(world), -1);
  for (size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].empty()) return absl::StrCat("replica group ", g, " is empty");
    if (groups[g].size() != groups[0].size()) {
      return absl::StrCat("replica group ", g, " has ", groups[g].size(),
                          " members, group 0 has ", groups[0].size(),
                          " (groups must be the same size)");
    }
    for (int r : groups[g]) {
      if (r < 0 || r >= world) {
        return absl::StrCat("replica group ", g, " names rank ", r,
                            ", outside 0..", world - 1);
      }
      if (seen[static_cast<size_t>(r)] >= 0) {
        return absl::StrCat("rank ", r, " is in replica group ",
                            seen[static_cast<size_t>(r)], " and group ", g);
      }
      seen[static_cast<size_t>(r)] = static_cast<int>(g);
    }
  }
  for (int r = 0; r < world; ++r) {
    if (seen[static_cast<size_t>(r)] < 0) {
      return absl::StrCat("rank ", r, " is in no replica group");
    }
  }
  return "";
}

Communicator::Impl::~Impl() {
  if (shm != nullptr) munmap(shm, shm_size);
  if (boot_fd >= 0) close(boot_fd);
  for (int fd : boot_fds) if (fd >= 0) close(fd);
  if (!control.empty()) SayGoodbye();
  transport.reset();
  for (int fd : control) if (fd >= 0) close(fd);
  if (data_listen_fd >= 0) close(data_listen_fd);
  if (opt.listen_fd >= 0 && rank == 0) close(opt.listen_fd);
}

absl::Status Communicator::Impl::Lost(int peer, const std::string& why) {
  // The rank may come from a peer (a verdict, the segment's word): one
  // outside the world is reported as such, never used as an index.
  if (peer < 0 || peer >= world) {
    return NrtError(NRT_TIMEOUT, absl::StrCat("a rank was lost (another rank named rank ", peer,
                                              ", outside 0..", world - 1, ")"));
  }
  // Across hosts the roll call finds out who is really gone.
  if (!control.empty()) return RollCall(peer, why.empty() ? "was lost" : why);
  if (header != nullptr) {
    int32_t expected = 0;
    header->lost.compare_exchange_strong(expected, peer + 1);
    const int32_t first = header->lost.load();
    if (first != peer + 1 || why.empty()) {
      return NrtError(NRT_TIMEOUT,
                      absl::StrCat("rank ", first - 1,
                                   " lost (detected by another rank)"));
    }
  }
  return NrtError(NRT_TIMEOUT, absl::StrCat("rank ", peer, " lost: ", why));
}

absl::Status Communicator::Impl::Bootstrap() {
  StartOp();
  if (rank == 0 && opt.secret.empty()) {
    static std::once_flag said;
    std::call_once(said, [] {
      NEURON_LOG(NRT, kInfo,
                 "this job is unauthenticated (no NEURON_TOOLS_JOB_SECRET): connections that "
                 "are not ranks are ignored, but a process that knows the protocol could take "
                 "a rank's place");
    });
  }
  BootHello mine{};
  mine.magic = wire::kBootHelloMagic;
  mine.rank = static_cast<uint32_t>(rank);
  mine.world = static_cast<uint32_t>(world);
  mine.pid = static_cast<uint32_t>(getpid());
  const std::string name = opt.host_addr.empty() ? HostName() : opt.host_addr;
  const std::string host = opt.host_addr.empty() ? HostKey(name) : opt.host_addr;
  std::snprintf(mine.host, sizeof(mine.host), "%s", host.c_str());
  std::snprintf(mine.name, sizeof(mine.name), "%s", name.c_str());
  std::snprintf(mine.machine, sizeof(mine.machine), "%s", MachineId().c_str());
  mine.arena_bytes = (opt.arena_bytes + 4095) & ~uint64_t{4095};
  if (mine.arena_bytes > wire::kMaxArenaBytes) {
    return NrtError(NRT_INVALID, absl::StrCat("an arena of ", opt.arena_bytes,
                                              " bytes is more than the 1 TiB a rank may share"));
  }

  auto root = net::ParseHostPort(opt.root_comm_id);
  if (!root.ok() && !(rank == 0 && opt.listen_fd >= 0)) {
    return NrtError(NRT_INVALID,
                    absl::StrCat("NEURON_RT_ROOT_COMM_ID: ", root.status().message()));
  }
  sockaddr_in self{};
  self.sin_family = AF_INET;
  if (!opt.host_addr.empty()) {
    auto a = net::ParseHost(opt.host_addr);
    if (!a.ok()) {
      return NrtError(NRT_INVALID, absl::StrCat("NEURON_HOST_ADDR: ", a.status().message()));
    }
    self = *a;
  }
  // The TCP listener other hosts' ranks connect to, on the interface the
  // job uses: NEURON_HOST_ADDR, else the one that reaches rank 0.
  auto listen_data = [&](in_addr_t route) -> absl::Status {
    sockaddr_in at = self;
    if (opt.host_addr.empty()) at.sin_addr.s_addr = route;
    at.sin_port = 0;
    auto lfd = net::Listen(at);
    if (!lfd.ok()) return NrtError(NRT_RESOURCE, std::string(lfd.status().message()));
    data_listen_fd = *lfd;
    mine.data_port = ntohs(net::LocalAddr(data_listen_fd).sin_port);
    return absl::OkStatus();
  };

  wire::RankTable table;
  table.ranks.resize(static_cast<size_t>(world));
  if (rank == 0) {
    int listen_fd = opt.listen_fd;
    if (listen_fd < 0) {
      auto l = net::Listen(*root);
      if (!l.ok()) {
        return NrtError(NRT_INVALID, absl::StrCat("NEURON_RT_ROOT_COMM_ID=",
                                                  opt.root_comm_id, ": ",
                                                  l.status().message()));
      }
      listen_fd = *l;
      opt.listen_fd = listen_fd;
    }
    const in_addr_t route = net::LocalAddr(listen_fd).sin_addr.s_addr;
    if (absl::Status st = listen_data(route); !st.ok()) return st;
    mine.data_ip = opt.host_addr.empty()
                       ? (root.ok() ? root->sin_addr.s_addr : route)
                       : self.sin_addr.s_addr;
    table.ranks[0] = mine;
    boot_fds.assign(static_cast<size_t>(world), -1);
    std::vector<bool> joined(static_cast<size_t>(world), false);
    std::vector<std::string> joined_from(static_cast<size_t>(world));
    joined[0] = true;
    const std::string where = opt.root_comm_id.empty()
                                  ? net::FormatAddr(net::LocalAddr(listen_fd))
                                  : opt.root_comm_id;
    GateOptions g;
    g.what = absl::StrCat("rank 0's bootstrap listener at ", where);
    g.secret = opt.secret;
    g.magic = wire::kBootHelloMagic;
    g.hello_bytes = sizeof(BootHello);
    Gate gate(listen_fd, g);
    for (int n = 1; n < world; ++n) {
      auto a = gate.Next(deadline);
      if (!a.ok()) {
        std::vector<int> missing;
        for (int r = 0; r < world; ++r) if (!joined[r]) missing.push_back(r);
        // Tell the ranks that did join which are missing.
        std::vector<uint32_t> notice{static_cast<uint32_t>(missing.size())};
        notice.insert(notice.end(), missing.begin(), missing.end());
        for (int r = 1; r < world; ++r) {
          if (boot_fds[r] >= 0) {
            (void)net::SendAll(boot_fds[r], notice.data(), notice.size() * 4,
                               net::Clock::now() + std::chrono::milliseconds(200));
          }
        }
        return NrtError(NRT_TIMEOUT,
                        absl::StrCat(missing.size() == 1 ? "rank " : "ranks ",
                                     absl::StrJoin(missing, ","), " did not join within ",
                                     opt.timeout_s, " s (NEURON_RT_EXEC_TIMEOUT) at ", where,
                                     "; host unknown: it never connected", gate.Strays()));
      }
      const std::string from = net::FormatAddr(a->from);
      auto h = wire::ParseBootHello(a->hello, world);
      std::string bad;
      if (!h.ok()) {
        bad = std::string(h.status().message());
      } else if (h->rank == 0) {
        bad = "a second rank 0 joined";
      } else if (joined[h->rank]) {
        bad = absl::StrCat("rank ", h->rank, " joined twice (from ", joined_from[h->rank],
                           " and ", from, ")",
                           opt.secret.empty()
                               ? ": two processes with one rank, or a stranger that knows the "
                                 "protocol (NEURON_TOOLS_JOB_SECRET keeps strangers out)"
                               : "");
      }
      if (!bad.empty()) {
        close(a->fd);
        return NrtError(NRT_INVALID, absl::StrCat(bad, " (connection from ", from, ")"));
      }
      joined[h->rank] = true;
      joined_from[h->rank] = from;
      table.ranks[h->rank] = *h;
      boot_fds[h->rank] = a->fd;
    }
    std::random_device rd;
    nonce = (static_cast<uint64_t>(rd()) << 32) ^ rd() ^ static_cast<uint64_t>(getpid());
    table.nonce = nonce;
    const std::string bytes = wire::SerializeRankTable(table);
    for (int r = 1; r < world; ++r) {
      const uint32_t none = 0;  // ranks missing
      absl::Status st = net::SendAll(boot_fds[r], &none, sizeof(none), deadline);
      if (st.ok()) st = net::SendAll(boot_fds[r], bytes.data(), bytes.size(), deadline);
      if (!st.ok()) return Lost(r, "closed its bootstrap connection");
    }
    // Everyone joined: later connections are refused by the kernel, not
    // left in a backlog nobody reads.
    if (opt.listen_fd >= 0) close(opt.listen_fd);
    opt.listen_fd = -1;
  } else {
    const sockaddr_in* bind_addr = opt.host_addr.empty() ? nullptr : &self;
    auto fd = net::Connect(*root, deadline, bind_addr);
    if (!fd.ok()) {
      return NrtError(NRT_TIMEOUT,
                      absl::StrCat("cannot reach rank 0 at NEURON_RT_ROOT_COMM_ID=",
                                   opt.root_comm_id, ": ", fd.status().message()));
    }
    boot_fd = *fd;
    const in_addr_t route = net::LocalAddr(boot_fd).sin_addr.s_addr;
    if (absl::Status st = listen_data(route); !st.ok()) return st;
    mine.data_ip = opt.host_addr.empty() ? route : self.sin_addr.s_addr;
    // Rank 0 gives up at its deadline, a little before ours.
    const net::Deadline later = deadline + std::chrono::seconds(1);
    const std::string listener = absl::StrCat("rank 0 at NEURON_RT_ROOT_COMM_ID=", opt.root_comm_id);
    absl::Status st = Identify(boot_fd, opt.secret,
                               std::string(reinterpret_cast<const char*>(&mine), sizeof(mine)),
                               deadline, listener);
    if (!st.ok()) {
      return NrtError(absl::IsDeadlineExceeded(st) ? NRT_TIMEOUT : NRT_INVALID,
                      std::string(st.message()));
    }
    uint32_t missing = 0;
    st = net::RecvAll(boot_fd, &missing, sizeof(missing), later);
    if (st.ok() && missing > 0 && missing < static_cast<uint32_t>(world)) {
      std::vector<uint32_t> who(missing);
      if (net::RecvAll(boot_fd, who.data(), missing * 4, later).ok()) {
        return NrtError(NRT_TIMEOUT,
                        absl::StrCat(missing == 1 ? "rank " : "ranks ",
                                     absl::StrJoin(who, ","), " did not join within ",
                                     opt.timeout_s, " s (NEURON_RT_EXEC_TIMEOUT) at ",
                                     opt.root_comm_id,
                                     "; host unknown: it never connected to rank 0"));
      }
    }
    if (st.ok() && missing != 0) {
      st = absl::DataLossError(absl::StrCat("it says ", missing, " ranks are missing"));
    }
    std::string bytes(sizeof(uint64_t) + sizeof(BootHello) * table.ranks.size(), '\0');
    if (st.ok()) st = net::RecvAll(boot_fd, bytes.data(), bytes.size(), deadline);
    if (st.ok()) {
      auto t = wire::ParseRankTable(bytes, world);
      if (t.ok()) table = *std::move(t);
      else st = t.status();
    }
    if (!st.ok()) {
      return NrtError(absl::IsDeadlineExceeded(st) ? NRT_TIMEOUT : NRT_INVALID,
                      absl::StrCat("rank 0 at ", opt.root_comm_id,
                                   " did not complete the bootstrap (",
                                   st.message(), "; is every rank started with the same world size?)"));
    }
    nonce = table.nonce;
  }

  peers.resize(static_cast<size_t>(world));
  std::vector<std::string> hosts;  // distinct keys, in rank order
  int nlocal = 0;
  for (int r = 0; r < world; ++r) {
    const BootHello& t = table.ranks[r];
    Peer& p = peers[r];
    p.pid = static_cast<int>(t.pid);
    p.host.assign(t.host, strnlen(t.host, sizeof(t.host)));
    p.name.assign(t.name, strnlen(t.name, sizeof(t.name)));
    p.data_addr.sin_family = AF_INET;
    p.data_addr.sin_addr.s_addr = t.data_ip;
    p.data_addr.sin_port = htons(static_cast<uint16_t>(t.data_port));
    p.arena_bytes = t.arena_bytes;
    auto it = std::find(hosts.begin(), hosts.end(), p.host);
    p.host_id = static_cast<int>(it - hosts.begin());
    if (it == hosts.end()) hosts.push_back(p.host);
    if (p.host == host) p.local = nlocal++;
    machine_ranks += strncmp(t.machine, mine.machine, sizeof(mine.machine)) == 0;
  }
  // Without a boot id, only this host's ranks are known to share its CPUs.
  if (mine.machine[0] == '\0') machine_ranks = nlocal;
  nhosts = static_cast<int>(hosts.size());
  return absl::OkStatus();
}

absl::Status Communicator::Impl::SocketBarrier(bool ok) {
  if (world == 1) return ok ? absl::OkStatus() : NrtError(NRT_FAILURE, "set-up failed");
  // Message: int32 status (-1 ok, else the failing/lost rank).
  int32_t mine = ok ? -1 : rank;
  if (rank == 0) {
    int32_t verdict = mine;
    for (int r = 1; r < world; ++r) {
      int32_t got = -1;
      absl::Status st = RecvBoot(boot_fds[r], &got, sizeof(got), deadline);
      // A rank speaks only for itself: any other value is outside the
      // protocol, and that rank is the one to blame.
      if (!st.ok() || (got != -1 && got != r)) got = r;
      if (verdict < 0 && got >= 0) verdict = got;
      if (!st.ok()) break;
    }
    for (int r = 1; r < world; ++r) {
      (void)net::SendAll(boot_fds[r], &verdict, sizeof(verdict), deadline);
    }
    if (verdict >= 0) return Lost(verdict, "did not reach the barrier");
    return absl::OkStatus();
  }
  // Rank 0 gives up on a missing rank at the deadline and then tells the
  // others which; they wait a little longer so they hear it.
  const net::Deadline later = deadline + std::chrono::seconds(1);
  absl::Status st = net::SendAll(boot_fd, &mine, sizeof(mine), later);
  int32_t verdict = -1;
  if (st.ok()) st = RecvBoot(boot_fd, &verdict, sizeof(verdict), later);
  if (!st.ok()) {
    return Lost(0, absl::IsDeadlineExceeded(st) ? "no answer to the barrier"
                                                : "its bootstrap connection closed");
  }
  if (verdict < -1 || verdict >= world) {
    return NrtError(NRT_INVALID, absl::StrCat("rank 0's barrier verdict names rank ", verdict,
                                              ", outside 0..", world - 1));
  }
  if (verdict >= 0) return Lost(verdict, "did not reach the barrier");
  return absl::OkStatus();
}

absl::Status Communicator::Impl::SetupShm() {
  const int me_local = peers[rank].local;
  int nlocal = 0, leader = -1;
  for (int r = 0; r < world; ++r) {
    if (peers[r].local >= 0) {
      if (leader < 0) leader = r;
      ++nlocal;
    }
  }
  chunk = std::max<size_t>(4096, opt.chunk_bytes) & ~size_t{63};
  nbuf = std::max<uint64_t>(2, opt.channel_buffers);
  small_bytes = opt.small_bytes ? opt.small_bytes : 64 * 1024;
  small_bytes = std::min(small_bytes, chunk);
  slot_readers.assign(nbuf, {});
  slot_step.assign(nbuf, 0);
  // The latency path spins about 2.5 ms before sleeping, unless the ranks
  // on this machine (this host's, and other hosts' sharing its kernel)
  // outnumber its CPUs: then a spinning rank only delays the peer it waits
  // for, so waiters yield the CPU (to that peer, when it is runnable on this
  // CPU) a few hundred times, then sleep.
  // (The machine's CPUs, not this process's affinity: launchers pin ranks.)
  const int cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  oversubscribed = machine_ranks > std::max(cpus, 1);
  latency_spins = oversubscribed ? 200 : 100000;
  known_done.assign(static_cast<size_t>(nlocal), 0);
  // A rank drives its own transfers (it is its network proxy): pinned to
  // one CPU of the low-latency list, or, with NEURON_RT_ONE_THREAD_PER_CORE,
  // to a CPU of its own by its index on the host.
  if (!opt.cpu_affinity.empty() || opt.one_thread_per_core) {
    cpu_set_t set;
    CPU_ZERO(&set);
    const int cpu = !opt.cpu_affinity.empty()
                        ? opt.cpu_affinity[static_cast<size_t>(me_local) % opt.cpu_affinity.size()]
                        : me_local % std::max(cpus, 1);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof(set), &set);
  }
  if (nlocal <= 1) {
    // Every rank joins the three barriers of the set-up below, whatever its
    // host's rank count.
    for (int i = 0; i < 3; ++i) {
      absl::Status st = SocketBarrier(true);
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  }

  const size_t flags_bytes = (sizeof(RankFlags) * nlocal + 4095) & ~size_t{4095};
  data_offset = kSegmentHeaderBytes + flags_bytes;
  shm_size = data_offset + nlocal * 2 * nbuf * chunk;
  std::string error;
  for (int r = 0; r < world; ++r) {
    if (peers[r].local < 0 || peers[r].arena_bytes == 0) continue;
    peers[r].arena_offset = shm_size;
    // Each arena is at most 1 TiB (wire.cc); their sum must fit too.
    if (__builtin_add_overflow(shm_size, peers[r].arena_bytes, &shm_size) ||
        shm_size > kMaxSegmentBytes) {
      error = absl::StrCat("the arenas of this host's ranks add up to more than ",
                           kMaxSegmentBytes >> 40, " TiB of shared memory (rank ", r,
                           " asks for ", peers[r].arena_bytes, " bytes)");
      break;
    }
  }
  // Every rank of the host derives the name from the leader's pid.
  const std::string segment =
      SegmentName(peers[leader].pid, static_cast<unsigned long long>(nonce), leader);
  const char* name = segment.c_str();
  if (rank == leader) SweepStaleSegments();
  if (rank == leader && error.empty()) {
    const int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(shm_size)) != 0) {
      error = absl::StrCat("cannot create shared memory ", name, " (",
                           shm_size >> 20, " MiB): ", std::strerror(errno));
    }
    if (fd >= 0) close(fd);
  }
  absl::Status st = SocketBarrier(error.empty());
  if (!st.ok() || !error.empty()) {
    if (rank == leader) shm_unlink(name);
    return error.empty() ? st : NrtError(NRT_RESOURCE, error);
  }
  const int fd = shm_open(name, O_RDWR, 0600);
  if (fd >= 0) {
    // Populated now so no operation pays for first touch.
    void* p = mmap(nullptr, shm_size, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_POPULATE, fd, 0);
    close(fd);
    if (p != MAP_FAILED) shm = static_cast<char*>(p);
  }
  if (shm == nullptr) {
    error = absl::StrCat("cannot map shared memory ", name, ": ", std::strerror(errno));
  }
  st = SocketBarrier(error.empty());
  if (rank == leader) shm_unlink(name);  // nothing is left behind
  if (!error.empty()) return NrtError(NRT_RESOURCE, error);
  if (!st.ok()) return st;
  header = reinterpret_cast<SegmentHeader*>(shm);
  if (rank == leader) {
    header->magic = kSegmentMagic;
    header->nlocal = static_cast<uint32_t>(nlocal);
  }
  return SocketBarrier(true);
}

absl::StatusOr<std::vector<int>> Communicator::Impl::ConnectMesh(int channel) {
  std::vector<int> fds(static_cast<size_t>(world), -1);
  auto fail = [&](absl::Status st) {
    for (int fd : fds) if (fd >= 0) close(fd);
    return st;
  };
  auto tune = [](int fd) {
    const int big = 4 << 20;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
  };
  for (int r = 0; r < rank; ++r) {
    auto fd = net::Connect(peers[r].data_addr, deadline, nullptr);
    if (!fd.ok()) {
      return fail(NrtError(NRT_TIMEOUT, absl::StrCat("cannot connect to rank ", r, " (",
                                                     HostOf(r), "): ", fd.status().message())));
    }
    fds[r] = *fd;
    wire::MeshHello hello{};
    hello.magic = wire::kMeshHelloMagic;
    hello.rank = rank;
    hello.channel = channel;
    absl::Status st = Identify(*fd, opt.secret,
                               std::string(reinterpret_cast<const char*>(&hello), sizeof(hello)),
                               deadline, absl::StrCat("rank ", r, " (", HostOf(r), ")"));
    if (!st.ok()) {
      return fail(NrtError(absl::IsDeadlineExceeded(st) ? NRT_TIMEOUT : NRT_INVALID,
                           std::string(st.message())));
    }
    tune(*fd);
  }
  if (rank + 1 >= world) return fds;
  GateOptions g;
  g.what = absl::StrCat("rank ", rank, "'s listener at ",
                        net::FormatAddr(net::LocalAddr(data_listen_fd)));
  g.secret = opt.secret;
  g.magic = wire::kMeshHelloMagic;
  g.hello_bytes = sizeof(wire::MeshHello);
  Gate gate(data_listen_fd, g);
  for (int n = rank + 1; n < world; ++n) {
    auto a = gate.Next(deadline);
    if (!a.ok()) {
      std::vector<int> missing;
      for (int r = rank + 1; r < world; ++r) if (fds[r] < 0) missing.push_back(r);
      return fail(NrtError(NRT_TIMEOUT, absl::StrCat(missing.size() == 1 ? "rank " : "ranks ",
                                                     absl::StrJoin(missing, ","),
                                                     " did not connect to rank ", rank, " within ",
                                                     opt.timeout_s, " s (NEURON_RT_EXEC_TIMEOUT)",
                                                     gate.Strays())));
    }
    auto h = wire::ParseMeshHello(a->hello, rank, world, channel);
    std::string bad = h.ok() ? "" : std::string(h.status().message());
    if (h.ok() && fds[h->rank] >= 0) bad = absl::StrCat("rank ", h->rank, " connected twice");
    if (!bad.empty()) {
      close(a->fd);
      return fail(NrtError(NRT_INVALID, absl::StrCat(bad, " (connection from ",
                                                     net::FormatAddr(a->from), ")")));
    }
    fds[h->rank] = a->fd;
    tune(a->fd);
  }
  return fds;
}

absl::StatusOr<std::vector<std::string>> Communicator::Impl::BootAllGather(
    const std::string& mine) {
  // A step of its own: each rank comes here after opening its fabric, which
  // took seconds on a loaded machine, so the wait starts now.
  StartOp();
  // Rank 0 gives up on a missing rank at the deadline and calls the roll;
  // the others wait a little longer so they are still there to answer it.
  const net::Deadline until = rank == 0 ? deadline : deadline + std::chrono::seconds(1);
  // Message: u32 length, bytes; rank 0 answers with every rank's, in order.
  std::vector<std::string> all(static_cast<size_t>(world));
  auto recv_blob = [&](int fd, std::string* out) {
    uint32_t n = 0;
    absl::Status st = RecvBoot(fd, &n, sizeof(n), until);
    if (st.ok() && n > (1u << 20)) st = absl::DataLossError("blob too large");
    if (st.ok()) {
      out->resize(n);
      st = RecvBoot(fd, out->data(), n, until);
    }
    return st;
  };
  auto send_blob = [&](int fd, const std::string& b) {
    const uint32_t n = static_cast<uint32_t>(b.size());
    absl::Status st = net::SendAll(fd, &n, sizeof(n), until);
    if (st.ok()) st = net::SendAll(fd, b.data(), n, until);
    return st;
  };
  auto why = [&](const absl::Status& st) {
    return absl::IsDeadlineExceeded(st)
               ? absl::StrCat("sent nothing for ", opt.timeout_s,
                              " s of the set-up (NEURON_RT_EXEC_TIMEOUT)")
               : std::string("left during set-up");
  };
  if (opt.on_setup_stage) opt.on_setup_stage(rank, "endpoint exchange");
  if (rank == 0) {
    all[0] = mine;
    for (int r = 1; r < world; ++r) {
      absl::Status st = recv_blob(boot_fds[r], &all[r]);
      if (!st.ok()) return Lost(r, why(st));
    }
    for (int r = 1; r < world; ++r) {
      for (const std::string& b : all) {
        absl::Status st = send_blob(boot_fds[r], b);
        if (!st.ok()) return Lost(r, why(st));
      }
    }
    return all;
  }
  absl::Status st = send_blob(boot_fd, mine);
  for (int r = 0; st.ok() && r < world; ++r) st = recv_blob(boot_fd, &all[r]);
  if (!st.ok()) return Lost(0, why(st));
  return all;
}

absl::Status Communicator::Impl::SetupTransport() {
  if (nhosts <= 1) {
    close(data_listen_fd);  // no other host will connect
    data_listen_fd = -1;
    return absl::OkStatus();
  }
  // Each step of the set-up across hosts waits at most the timeout: a
  // loaded machine spent most of it on the steps before.
  StartOp();
  auto mesh = ConnectMesh(0);
  if (!mesh.ok()) return mesh.status();
  control = std::move(*mesh);
  for (int fd : control) if (fd >= 0) net::Tune(fd);
  answered.assign(static_cast<size_t>(world), false);
  left.assign(static_cast<size_t>(world), false);
  TransportSetup setup;
  setup.rank = rank;
  setup.world = world;
  for (const Peer& p : peers) setup.addrs.push_back(p.data_addr);
  setup.chunk_bytes = opt.chunk_bytes;
  setup.channel_buffers = opt.channel_buffers;
  setup.all_gather = [this](const std::string& b) { return BootAllGather(b); };
  setup.tcp_mesh = [this]() { return ConnectMesh(1); };
  setup.hooks.check = [this]() { return CheckControl(); };
  setup.hooks.lost = [this](int peer, const std::string& why) { return Lost(peer, why); };
  setup.hooks.deadline = &deadline;
  setup.spin = opt.one_thread_per_core;
  setup.stream_weights[0] = opt.stream_split[0];
  setup.stream_weights[1] = opt.stream_split[1];
  setup.p2p = opt.p2p_registration;
  auto t = MakeInterHostTransport(setup);
  if (!t.ok()) return t.status();
  transport = std::move(*t);
  // Every connection is made: later ones are refused by the kernel.
  close(data_listen_fd);
  data_listen_fd = -1;
  if (opt.register_device_memory && shm != nullptr && peers[rank].arena_bytes > 0) {
    absl::Status st = transport->AddRegion(ArenaOf(rank), peers[rank].arena_bytes);
    if (!st.ok()) return st;
  }
  if (rank == 0) {
    NEURON_LOG(NRT, kInfo,
               "collectives across %d hosts over %s, %d rank(s) per network proxy, "
               "%d rank(s) on this machine's CPUs%s",
               nhosts, transport->Name(), static_cast<int>(std::max<uint64_t>(1, opt.ranks_per_proxy)),
               machine_ranks, oversubscribed ? " (more than it has: waiters yield)" : "");
  }
  if (opt.on_setup_stage) opt.on_setup_stage(rank, "last barrier");
  StartOp();  // a step of its own, as the endpoint exchange
  return SocketBarrier(true);
}

absl::StatusOr<const GroupView*> Communicator::Impl::View(const Groups& groups) {
  if (groups.empty() && !world_view.members.empty()) return &world_view;
  GroupView& v = groups.empty() ? world_view : group_view;
  v.members.clear();
  if (opt.validate_groups) {
    const std::string why = ValidateGroups(groups, world);
    if (!why.empty()) {
      return NrtError(NRT_INVALID,
                      absl::StrCat("malformed replica groups: ", why,
                                   " (NEURON_RT_ENABLE_RG_VALIDATION)"));
    }
  }
  if (groups.empty()) {
    for (int r = 0; r < world; ++r) v.members.push_back(r);
    v.me = rank;
  } else {
    int found = 0;
    v.me = 0;
    for (const Group& g : groups) {
      for (size_t i = 0; i < g.size(); ++i) {
        if (g[i] < 0 || g[i] >= world) {
          return NrtError(NRT_INVALID,
                          absl::StrCat("replica group names rank ", g[i],
                                       ", outside 0..", world - 1));
        }
        if (g[i] == rank) {
          ++found;
          v.members = g;
          v.me = static_cast<int>(i);
        }
      }
    }
    if (found != 1) {
      return NrtError(NRT_INVALID,
                      absl::StrCat("rank ", rank, " is in ", found,
                                   " replica groups, must be in exactly one"));
    }
    std::set<int> unique(v.members.begin(), v.members.end());
    if (unique.size() != v.members.size()) {
      return NrtError(NRT_INVALID, "a replica group names a rank twice");
    }
  }
  v.local = true;
  for (int r : v.members) {
    if (peers[r].local < 0) v.local = false;
  }
  if (header == nullptr && v.members.size() > 1) v.local = false;
  return &v;
}

// ---- public API ----

Communicator::Communicator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Communicator::~Communicator() = default;

absl::StatusOr<std::unique_ptr<Communicator>> Communicator::Create(
    const CommOptions& options) {
  if (options.world < 1 || options.rank < 0 || options.rank >= options.world) {
    return NrtError(NRT_INVALID, absl::StrCat("rank ", options.rank,
                                              " is outside a world of ",
                                              options.world));
  }
  auto impl = std::make_unique<Impl>();
  impl->opt = options;
  if (!options.secret_error.empty()) return NrtError(NRT_INVALID, options.secret_error);
  // Seconds far beyond any job would overflow the clock's nanoseconds.
  impl->opt.timeout_s = std::clamp<uint64_t>(options.timeout_s, 1, net::kMaxTimeoutSeconds);
  impl->rank = options.rank;
  impl->world = options.world;
  if (options.world > 1) {
    if (options.root_comm_id.empty() && !(options.rank == 0 && options.listen_fd >= 0)) {
      return NrtError(NRT_INVALID,
                      "NEURON_RT_ROOT_COMM_ID is not set: a job of several ranks "
                      "needs the host:port where rank 0 listens (for example "
                      "NEURON_RT_ROOT_COMM_ID=127.0.0.1:45654 on one host)");
    }
    absl::Status st = impl->Bootstrap();
    if (st.ok()) st = impl->SetupShm();
    if (st.ok()) st = impl->SetupTransport();
    if (!st.ok()) return st;
    impl->setting_up = false;
  } else {
    impl->peers.resize(1);
    impl->peers[0].local = 0;
    impl->peers[0].pid = getpid();
    impl->peers[0].arena_bytes = 0;  // one rank: nothing to share
    absl::Status st = impl->SetupShm();
    if (!st.ok()) return st;
  }
  return std::unique_ptr<Communicator>(new Communicator(std::move(impl)));
}

int Communicator::rank() const { return impl_->rank; }
int Communicator::world() const { return impl_->world; }
int Communicator::hosts() const { return impl_->nhosts; }
char* Communicator::Arena() const {
  const Impl& m = *impl_;
  if (m.shm == nullptr || m.peers[m.rank].arena_bytes == 0) return nullptr;
  return m.ArenaOf(m.rank);
}

absl::Status Communicator::AllReduce(const void* in, void* out, size_t count,
                                     DataType type, ReduceOp op,
                                     const Groups& groups) {
  auto vv = impl_->View(groups);
  if (!vv.ok()) return vv.status();
  const GroupView* v = *vv;
  impl_->StartOp();
  const char* i = static_cast<const char*>(in);
  char* o = static_cast<char*>(out);
  if (v->local) return impl_->ShmAllReduce(*v, i, o, count, type, op);
  Impl& m = *impl_;
  const size_t es = DataTypeSize(type);
  const InterHostAlgorithm a = m.ChooseInterHost(groups, count * es);
  if (a == InterHostAlgorithm::kHier) return m.HierAllReduce(*v, i, o, count, type, op);
  m.step += m.AllReduceSteps(count, es, v->members.size());
  // The ring reads the input where it lies; buffers that overlap only in
  // part are copied first.
  const bool apart = o == i || o + count * es <= i || i + count * es <= o;
  if (a == InterHostAlgorithm::kRing && apart) return m.RingAllReduceBody(*v, i, o, count, type, op);
  if (o != i && count) std::memmove(o, i, count * es);
  return a == InterHostAlgorithm::kRdh ? m.RdhAllReduceBody(*v, o, count, type, op)
                                       : m.RingAllReduceBody(*v, o, o, count, type, op);
}

absl::Status Communicator::AllGather(const void* in, void* out, size_t count,
                                     DataType type, const Groups& groups) {
  auto vv = impl_->View(groups);
  if (!vv.ok()) return vv.status();
  const GroupView* v = *vv;
  impl_->StartOp();
  const size_t bytes = count * DataTypeSize(type);
  const char* i = static_cast<const char*>(in);
  char* o = static_cast<char*>(out);
  return v->local ? impl_->ShmAllGather(*v, i, o, bytes)
                  : impl_->RingAllGather(*v, i, o, bytes);
}

absl::Status Communicator::ReduceScatter(const void* in, void* out, size_t count,
                                         DataType type, ReduceOp op,
                                         const Groups& groups) {
  auto vv = impl_->View(groups);
  if (!vv.ok()) return vv.status();
  const GroupView* v = *vv;
  impl_->StartOp();
  const char* i = static_cast<const char*>(in);
  char* o = static_cast<char*>(out);
  return v->local ? impl_->ShmReduceScatter(*v, i, o, count, type, op)
                  : impl_->RingReduceScatter(*v, i, o, count, type, op);
}

absl::Status Communicator::Broadcast(const void* in, void* out, size_t count,
                                     DataType type, int root,
                                     const Groups& groups) {
  auto vv = impl_->View(groups);
  if (!vv.ok()) return vv.status();
  const GroupView* v = *vv;
  if (root < 0 || root >= static_cast<int>(v->members.size())) {
    return NrtError(NRT_INVALID, absl::StrCat("broadcast root ", root,
                                              " is outside the group of ",
                                              v->members.size()));
  }
  impl_->StartOp();
  const size_t bytes = count * DataTypeSize(type);
  const char* i = static_cast<const char*>(in);
  char* o = static_cast<char*>(out);
  return v->local ? impl_->ShmBroadcast(*v, i, o, bytes, root)
                  : impl_->RingBroadcast(*v, i, o, bytes, root);
}

absl::Status Communicator::Permute(const void* in, void* out, size_t bytes,
                                   const std::vector<std::pair<int, int>>& pairs) {
  int to = -1, from = -1;
  std::vector<int> sources(impl_->world, 0), targets(impl_->world, 0);
  for (const auto& [s, t] : pairs) {
    if (s < 0 || s >= impl_->world || t < 0 || t >= impl_->world) {
      return NrtError(NRT_INVALID, absl::StrCat("permute pair (", s, ",", t,
                                                ") names a rank outside 0..",
                                                impl_->world - 1));
    }
    if (++sources[s] > 1 || ++targets[t] > 1) {
      return NrtError(NRT_INVALID, absl::StrCat("permute pair (", s, ",", t,
                                                ") repeats a source or target"));
    }
    if (s == impl_->rank) to = t;
    if (t == impl_->rank) from = s;
  }
  return SendRecv(in, to, out, from, bytes);
}

absl::Status Communicator::SendRecv(const void* in, int to, void* out, int from,
                                    size_t bytes) {
  Impl& m = *impl_;
  if (to >= m.world || from >= m.world) {
    return NrtError(NRT_INVALID, "send/recv peer outside the world");
  }
  m.StartOp();
  const char* i = static_cast<const char*>(in);
  char* o = static_cast<char*>(out);
  if ((to == m.rank) != (from == m.rank)) {
    return NrtError(NRT_INVALID, "a rank that sends to itself must also receive from itself");
  }
  if (to == m.rank) {
    if (o != i && bytes) std::memmove(o, i, bytes);
    return m.ShmSendRecv(i, -1, o, -2, bytes);
  }
  // One transport for the whole job, so both ends of every pair agree even
  // when a rank's two partners sit on different hosts.
  const bool local = m.header != nullptr && m.nhosts == 1;
  if (local || m.world == 1) return m.ShmSendRecv(i, to, o, from, bytes);
  m.step += m.CopySteps(bytes, 2);  // keeps the pipeline steps identical on every rank
  if (from < 0 && bytes) std::memset(o, 0, bytes);
  return m.Xfer(to, i, to >= 0 ? bytes : 0, from, o, from >= 0 ? bytes : 0,
                kPointToPointStream);
}

absl::Status Communicator::Barrier() {
  impl_->StartOp();
  if (impl_->UsesShmBarrier()) return impl_->ShmBarrier();
  return impl_->SocketBarrier(true);
}

std::string Communicator::BarrierKind() const {
  return impl_->UsesShmBarrier() ? "shared memory" : "socket";
}

std::string Communicator::AlgorithmFor(const char* op, size_t bytes,
                                       const Groups& groups) const {
  auto vv = impl_->View(groups);
  if (!vv.ok()) return "invalid";
  const GroupView* v = *vv;
  if (v->members.size() == 1) return "local";
  const std::string_view o(op);
  if (!v->local) {
    return o == "allr" ? InterHostAlgorithmName(impl_->ChooseInterHost(groups, bytes))
                       : "ring";
  }
  if (o == "allr" && bytes > impl_->small_bytes) {
    bool arenas = true;
    for (int r : v->members) arenas = arenas && impl_->peers[r].arena_bytes > 0;
    return arenas ? "zero-copy" : "pipelined";
  }
  if (o == "redsct" || o == "allr") return o == "allr" ? "direct" : "pipelined";
  return bytes > impl_->chunk ? "pipelined" : "direct";
}

uint64_t Communicator::NetworkBytesSent() const { return impl_->network_bytes; }

absl::Status Communicator::AddDeviceMemory(const void* base, size_t bytes) {
  if (!impl_->opt.register_device_memory || impl_->transport == nullptr) {
    return absl::OkStatus();
  }
  // A provider that pins what it registers may refuse a large reservation;
  // transfers then register their own buffers, as without the variable.
  absl::Status st = impl_->transport->AddRegion(base, bytes);
  if (!st.ok()) {
    NEURON_LOG(NRT, kWarn, "rank %d: %u bytes of device memory stay unregistered as one region "
               "(%s); transfers register their own buffers", impl_->rank, bytes, st.message());
  }
  return absl::OkStatus();
}

TransportStats Communicator::NetworkStats() const {
  return impl_->transport != nullptr ? impl_->transport->Stats() : TransportStats{};
}

std::string Communicator::TransportName() const {
  if (impl_->transport != nullptr) return impl_->transport->Name();
  return impl_->world == 1 ? "none" : "shared memory";
}

const char* InterHostAlgorithmName(InterHostAlgorithm a) {
  switch (a) {
    case InterHostAlgorithm::kRing: return "ring";
    case InterHostAlgorithm::kRdh: return "rdh";
    case InterHostAlgorithm::kHier: return "hier";
  }
  return "ring";
}

bool IsInterHostAlgorithm(const std::string& name) {
  return name == "auto" || name == "ring" || name == "rdh" || name == "hier";
}

InterHostAlgorithm Communicator::Impl::ChooseInterHost(const Groups& groups,
                                                       size_t bytes) const {
  // hier needs every group to span hosts with the same number of its
  // ranks on each (L >= 2): then every rank takes the same path, and the
  // shared-memory steps stay in agreement on every host.
  auto hier_fits = [&]() {
    std::vector<int> per_host(static_cast<size_t>(nhosts));
    auto fits = [&](const Group& g) {
      std::fill(per_host.begin(), per_host.end(), 0);
      for (int r : g) ++per_host[static_cast<size_t>(peers[r].host_id)];
      int spanned = 0, share = 0;
      for (int n : per_host) {
        if (n == 0) continue;
        if (share != 0 && n != share) return false;
        share = n;
        ++spanned;
      }
      return spanned >= 2 && share >= 2 && header != nullptr;
    };
    if (groups.empty()) return fits(world_view.members.empty() ? Group{} : world_view.members);
    for (const Group& g : groups) if (!fits(g)) return false;
    return true;
  };
  const std::string& forced = opt.algorithm;
  if (forced == "ring") return InterHostAlgorithm::kRing;
  if (forced == "rdh") return InterHostAlgorithm::kRdh;
  if (forced == "hier") return hier_fits() ? InterHostAlgorithm::kHier : InterHostAlgorithm::kRing;
  if (hier_fits()) return InterHostAlgorithm::kHier;
  return bytes <= rdh_bytes ? InterHostAlgorithm::kRdh : InterHostAlgorithm::kRing;
}

}  // namespace neuron::collectives
