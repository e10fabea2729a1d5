// The collectives and send/recv parts of the C API: the global
// communicator, barrier, all-gather, prepared collectives
// (nrta_cc_prepare + RunCollective), NEFFs loaded with
// nrt_load_collectives, and async send/recv between cores of one process
// and of two processes. Ranks are forked processes on 127.0.0.1, each
// holding its own core (NEURON_RT_VISIBLE_CORES=rank).
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "lib/log/log.h"
#include "lib/nrt/api_state.h"
#include "nrt/nrt.h"
#include "nrt/nrt_async.h"
#include "nrt/nrt_async_sendrecv.h"
#include "nrt/nrt_experimental.h"
#include "tests/nrt/nrt_test_env.h"
#include "tests/runtime/test_neff.h"

namespace {

using Clock = std::chrono::steady_clock;

// Inside a rank: print what failed and end the rank with 1.
#define RANK_CHECK(cond)                                                              \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      std::fprintf(stderr, "rank %d: %s:%d: %s failed (last error: %s)\n", rank,    \
                   __FILE__, __LINE__, #cond, nrt_get_last_error());                  \
      return 1;                                                                       \
    }                                                                                 \
  } while (0)

// A TCP port on 127.0.0.1 free now (and, with `span` > 1, the next ones).
int FreePorts(int span = 1) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(sa);
    bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa));
    getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
    const int port = ntohs(sa.sin_port);
    close(fd);
    bool all_free = port + span <= 65535;
    for (int k = 1; k < span && all_free; ++k) {
      const int f = socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in b = sa;
      b.sin_addr.s_addr = htonl(INADDR_ANY);
      b.sin_port = htons(static_cast<uint16_t>(port + k));
      all_free = bind(f, reinterpret_cast<sockaddr*>(&b), sizeof(b)) == 0;
      close(f);
    }
    if (all_free) return port;
  }
  return 0;
}

// Forks `n` ranks running body(rank) with NEURON_RT_ROOT_COMM_ID set to a
// free loopback port and the rank's own core; returns their exit codes
// (-1: killed after the limit, a hang).
std::vector<int> RunRanks(int n, const std::function<int(int)>& body) {
  const std::string root = "127.0.0.1:" + std::to_string(FreePorts());
  std::fflush(stdout);
  std::fflush(stderr);
  std::vector<pid_t> pids;
  for (int r = 0; r < n; ++r) {
    const pid_t pid = fork();
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      setenv("NEURON_RT_ROOT_COMM_ID", root.c_str(), 1);
      setenv("NEURON_RT_VISIBLE_CORES", std::to_string(r).c_str(), 1);
      const int rc = body(r);
      nrt_close();
      std::fflush(stdout);
      std::fflush(stderr);
      _exit(rc);
    }
    pids.push_back(pid);
  }
  std::vector<int> codes(static_cast<size_t>(n), -1);
  const Clock::time_point limit = Clock::now() + std::chrono::seconds(120);
  int left = n;
  while (left > 0) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      for (int r = 0; r < n; ++r) {
        if (pids[r] == pid) {
          codes[r] = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
          --left;
        }
      }
      continue;
    }
    if (pid < 0 || Clock::now() > limit) {
      for (int r = 0; r < n; ++r) {
        if (codes[r] == -1) kill(pids[r], SIGKILL);
      }
      for (int r = 0; r < n; ++r) {
        if (codes[r] == -1) waitpid(pids[r], &status, 0);
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return codes;
}

void ExpectAllPassed(const std::vector<int>& codes) {
  for (size_t r = 0; r < codes.size(); ++r) EXPECT_EQ(codes[r], 0) << "rank " << r;
}

// Polls until `done` or a generous limit (a hang fails, it does not block).
template <typename F>
bool WaitFor(F done) {
  const Clock::time_point limit = Clock::now() + std::chrono::seconds(60);
  while (!done()) {
    if (Clock::now() > limit) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Runs a prepared collective as the async COLLECTIVES unit does: holding
// the runtime, then freeing the context.
NRT_STATUS RunPrepared(nrt_cc_context_t* ctx) {
  NRT_STATUS s;
  {
    neuron::nrt_api::RuntimeRef rt("test");
    s = neuron::nrt_api::RunCollective(ctx);
  }
  neuron::nrt_api::FreeCollective(ctx);
  return s;
}

nrt_tensor_t* HostTensor(size_t bytes, const char* name) {
  nrt_tensor_t* t = nullptr;
  if (nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_HOST, -1, bytes, name, &t) != NRT_SUCCESS) return nullptr;
  return t;
}

constexpr char kAllReduceHlo[] = R"(HloModule allreduce
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[6] parameter(0)
  ROOT sum = f32[6] all-reduce(x), replica_groups={{0,1}}, to_apply=add
}
)";

class CollectivesApiTest : public neuron::testing::NrtTestEnv {
 protected:
  void SetUp() override { StartEnv(); }
  void TearDown() override {
    EndEnv({"NEURON_RT_ROOT_COMM_ID", "NEURON_RT_ASYNC_SENDRECV_EXPERIMENTAL_ENABLED",
            "NEURON_RT_ASYNC_SENDRECV_BOOTSTRAP_PORT", "NEURON_RT_EXEC_TIMEOUT"});
  }
  void EnableSendRecv(int span) {
    setenv("NEURON_RT_ASYNC_SENDRECV_EXPERIMENTAL_ENABLED", "1", 1);
    base_port_ = FreePorts(span);
    setenv("NEURON_RT_ASYNC_SENDRECV_BOOTSTRAP_PORT", std::to_string(base_port_).c_str(), 1);
  }
  int base_port_ = 0;
};

TEST_F(CollectivesApiTest, BarrierAndAllGatherAcrossTwoProcesses) {
  ExpectAllPassed(RunRanks(2, [](int rank) {
    RANK_CHECK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", "") == NRT_SUCCESS);
    RANK_CHECK(nrt_build_global_comm(0, rank, 2) == NRT_SUCCESS);
    RANK_CHECK(nrt_build_global_comm(0, rank, 2) == NRT_SUCCESS);  // the same: a no-op
    RANK_CHECK(nrt_cc_global_comm_init(0, rank, 2) == NRT_SUCCESS);
    RANK_CHECK(nrt_build_global_comm(0, rank, 4) == NRT_INVALID);
    RANK_CHECK(std::strstr(nrt_get_last_error(), "already") != nullptr);
    RANK_CHECK(nrt_barrier(0, rank, 2) == NRT_SUCCESS);
    // Every rank's input, in rank order.
    uint8_t in[40], out[80];
    for (int i = 0; i < 40; ++i) in[i] = static_cast<uint8_t>(rank * 100 + i);
    std::memset(out, 0xee, sizeof out);
    RANK_CHECK(nrt_all_gather(0, rank, 2, sizeof in, in, out) == NRT_SUCCESS);
    for (int r = 0; r < 2; ++r) {
      for (int i = 0; i < 40; ++i) RANK_CHECK(out[r * 40 + i] == static_cast<uint8_t>(r * 100 + i));
    }
    // In place: the input is this rank's block of the output.
    uint32_t both[2] = {0, 0};
    both[rank] = 7u + static_cast<uint32_t>(rank);
    RANK_CHECK(nrt_all_gather(0, rank, 2, 4, &both[rank], both) == NRT_SUCCESS);
    RANK_CHECK(both[0] == 7u && both[1] == 8u);
    RANK_CHECK(nrt_all_gather(0, 1 - rank, 2, 4, in, out) == NRT_INVALID);
    RANK_CHECK(nrt_barrier(0, rank, 2) == NRT_SUCCESS);
    return 0;
  }));
}

TEST_F(CollectivesApiTest, PreparedCollectivesGiveEveryRanksData) {
  ExpectAllPassed(RunRanks(2, [](int rank) {
    RANK_CHECK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", "") == NRT_SUCCESS);
    RANK_CHECK(nrt_cc_global_comm_init(0, rank, 2) == NRT_SUCCESS);
    uint32_t group[2] = {0, 1};
    // Each rank holds one core (NEURON_RT_VISIBLE_CORES=rank): its vnc 0.
    nrt_cc_comm_t comm{group, static_cast<uint32_t>(rank), 2, static_cast<uint32_t>(rank), 2, 0};
    // All-reduce (sum) of two tensor pairs, one on the device.
    nrt_tensor_t *a = nullptr, *b = HostTensor(12, "b"), *a_out = nullptr, *b_out = HostTensor(12, "bo");
    RANK_CHECK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 32, "a", &a) == NRT_SUCCESS);
    RANK_CHECK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 32, "ao", &a_out) == NRT_SUCCESS);
    float av[8], bv[3];
    for (int i = 0; i < 8; ++i) av[i] = static_cast<float>((rank + 1) * 10 + i);
    for (int i = 0; i < 3; ++i) bv[i] = static_cast<float>(rank == 0 ? i : 100 * i);
    RANK_CHECK(nrt_tensor_write(a, av, 0, sizeof av) == NRT_SUCCESS);
    RANK_CHECK(nrt_tensor_write(b, bv, 0, sizeof bv) == NRT_SUCCESS);
    nrt_tensor_t* ins[2] = {a, b};
    nrt_tensor_t* outs[2] = {a_out, b_out};
    nrt_tensor_list_t in_list{ins, 2}, out_list{outs, 2};
    nrt_cc_context_t* ctx = nullptr;
    RANK_CHECK(nrta_cc_prepare(&comm, &in_list, &out_list, NRT_DTYPE_FLOAT32, NRT_OP_ADD,
                               NRT_CC_ALLREDUCE, &ctx) == NRT_SUCCESS);
    RANK_CHECK(neuron::nrt_api::CollectiveContextCore(ctx) == rank);
    RANK_CHECK(RunPrepared(ctx) == NRT_SUCCESS);
    float got[8];
    RANK_CHECK(nrt_tensor_read(a_out, got, 0, sizeof got) == NRT_SUCCESS);
    for (int i = 0; i < 8; ++i) RANK_CHECK(got[i] == static_cast<float>(10 + i + 20 + i));
    RANK_CHECK(nrt_tensor_read(b_out, got, 0, 12) == NRT_SUCCESS);
    for (int i = 0; i < 3; ++i) RANK_CHECK(got[i] == static_cast<float>(101 * i));

    // Max over int32, reduce-scatter: rank r keeps block r.
    nrt_tensor_t* rs_in = HostTensor(16, "rs");
    nrt_tensor_t* rs_out = HostTensor(8, "rso");
    const int32_t rs[4] = {rank == 0 ? 5 : -5, rank == 0 ? -1 : 9, 3 * rank, 40 - rank};
    RANK_CHECK(nrt_tensor_write(rs_in, rs, 0, sizeof rs) == NRT_SUCCESS);
    nrt_tensor_list_t rs_ins{&rs_in, 1}, rs_outs{&rs_out, 1};
    RANK_CHECK(nrta_cc_prepare(&comm, &rs_ins, &rs_outs, NRT_DTYPE_INT32, NRT_OP_MAX,
                               NRT_CC_REDUCESCATTER, &ctx) == NRT_SUCCESS);
    RANK_CHECK(RunPrepared(ctx) == NRT_SUCCESS);
    int32_t rs_got[2];
    RANK_CHECK(nrt_tensor_read(rs_out, rs_got, 0, 8) == NRT_SUCCESS);
    const int32_t want[4] = {5, 9, 3, 40};
    RANK_CHECK(rs_got[0] == want[2 * rank] && rs_got[1] == want[2 * rank + 1]);

    // All-gather of u16: member order.
    nrt_tensor_t* ag_in = HostTensor(4, "ag");
    nrt_tensor_t* ag_out = HostTensor(8, "ago");
    const uint16_t ag[2] = {static_cast<uint16_t>(rank + 1), static_cast<uint16_t>(rank + 11)};
    RANK_CHECK(nrt_tensor_write(ag_in, ag, 0, sizeof ag) == NRT_SUCCESS);
    nrt_tensor_list_t ag_ins{&ag_in, 1}, ag_outs{&ag_out, 1};
    RANK_CHECK(nrta_cc_prepare(&comm, &ag_ins, &ag_outs, NRT_DTYPE_UINT16, NRT_OP_ADD,
                               NRT_CC_ALLGATHER, &ctx) == NRT_SUCCESS);
    RANK_CHECK(RunPrepared(ctx) == NRT_SUCCESS);
    uint16_t ag_got[4];
    RANK_CHECK(nrt_tensor_read(ag_out, ag_got, 0, 8) == NRT_SUCCESS);
    RANK_CHECK(ag_got[0] == 1 && ag_got[1] == 11 && ag_got[2] == 2 && ag_got[3] == 12);

    // This rank claiming another's place in the group.
    nrt_cc_comm_t wrong = comm;
    wrong.rank = 1 - rank;
    RANK_CHECK(nrta_cc_prepare(&wrong, &in_list, &out_list, NRT_DTYPE_FLOAT32, NRT_OP_ADD,
                               NRT_CC_ALLREDUCE, &ctx) == NRT_INVALID);
    RANK_CHECK(ctx == nullptr);
    for (nrt_tensor_t* t : {a, b, a_out, b_out, rs_in, rs_out, ag_in, ag_out}) nrt_tensor_free(&t);
    return 0;
  }));
}

TEST_F(CollectivesApiTest, LoadCollectivesRunsAnHloAllReduceOverTwoRanks) {
  absl::StatusOr<std::string> neff = neuron::testing::BuildTestNeff(kAllReduceHlo);
  ASSERT_TRUE(neff.ok()) << neff.status();
  const std::string bytes = *neff;
  ExpectAllPassed(RunRanks(2, [&bytes](int rank) {
    RANK_CHECK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", "") == NRT_SUCCESS);
    nrt_model_t* model = nullptr;
    // No global communicator yet: this load builds it.
    RANK_CHECK(nrt_load_collectives(bytes.data(), bytes.size(), 0, -1, rank, 2, &model) ==
               NRT_SUCCESS);
    nrt_tensor_info_array_t* info = nullptr;
    RANK_CHECK(nrt_get_model_tensor_info(model, &info) == NRT_SUCCESS);
    RANK_CHECK(info->tensor_count == 2);
    const std::string in_name = info->tensor_array[0].name, out_name = info->tensor_array[1].name;
    nrt_free_model_tensor_info(info);
    nrt_tensor_t *x = nullptr, *sum = nullptr;
    RANK_CHECK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 24, "x", &x) == NRT_SUCCESS);
    RANK_CHECK(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, 24, "sum", &sum) == NRT_SUCCESS);
    float xs[6];
    for (int i = 0; i < 6; ++i) xs[i] = static_cast<float>(rank == 0 ? i : 1000 + 10 * i);
    RANK_CHECK(nrt_tensor_write(x, xs, 0, sizeof xs) == NRT_SUCCESS);
    nrt_tensor_set_t *ins = nullptr, *outs = nullptr;
    RANK_CHECK(nrt_allocate_tensor_set(&ins) == NRT_SUCCESS);
    RANK_CHECK(nrt_allocate_tensor_set(&outs) == NRT_SUCCESS);
    RANK_CHECK(nrt_add_tensor_to_tensor_set(ins, in_name.c_str(), x) == NRT_SUCCESS);
    RANK_CHECK(nrt_add_tensor_to_tensor_set(outs, out_name.c_str(), sum) == NRT_SUCCESS);
    for (int round = 0; round < 2; ++round) {
      RANK_CHECK(nrt_execute(model, ins, outs) == NRT_SUCCESS);
      float got[6];
      RANK_CHECK(nrt_tensor_read(sum, got, 0, sizeof got) == NRT_SUCCESS);
      for (int i = 0; i < 6; ++i) RANK_CHECK(got[i] == static_cast<float>(i + 1000 + 10 * i));
    }
    // The communicator the load built is the global one.
    RANK_CHECK(nrt_barrier(0, rank, 2) == NRT_SUCCESS);
    RANK_CHECK(nrt_build_global_comm(0, rank, 3) == NRT_INVALID);
    nrt_destroy_tensor_set(&ins);
    nrt_destroy_tensor_set(&outs);
    nrt_tensor_free(&x);
    nrt_tensor_free(&sum);
    RANK_CHECK(nrt_unload(model) == NRT_SUCCESS);
    return 0;
  }));
}

TEST_F(CollectivesApiTest, BadArgumentsAreRefusedWithAReason) {
  // Before nrt_init (NRT_CLOSED when an earlier test closed a runtime).
  const NRT_STATUS before = nrt_build_global_comm(0, 0, 2);
  EXPECT_TRUE(before == NRT_UNINITIALIZED || before == NRT_CLOSED) << before;
  ASSERT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_SUCCESS) << nrt_get_last_error();
  EXPECT_EQ(nrt_build_global_comm(0, 2, 2), NRT_INVALID);
  EXPECT_EQ(nrt_build_global_comm(0, 0, 0), NRT_INVALID);
  EXPECT_EQ(nrt_barrier(0, 0, 1), NRT_SUCCESS);  // alone: nothing to wait for
  uint8_t in[3] = {1, 2, 3}, out[3] = {};
  ASSERT_EQ(nrt_all_gather(0, 0, 1, 3, in, out), NRT_SUCCESS);
  EXPECT_EQ(std::memcmp(in, out, 3), 0);
  EXPECT_EQ(nrt_all_gather(0, 0, 1, 3, nullptr, out), NRT_INVALID);

  nrt_tensor_t* a = HostTensor(16, "a");
  nrt_tensor_t* b = HostTensor(16, "b");
  nrt_tensor_t* c = HostTensor(32, "c");
  nrt_tensor_list_t ins{&a, 1}, outs{&b, 1}, big{&c, 1};
  uint32_t group2[2] = {0, 1};
  uint32_t group1[1] = {0};
  nrt_cc_comm_t two{group2, 0, 2, 0, 2, 0};
  nrt_cc_comm_t one{group1, 0, 1, 0, 1, 0};
  nrt_cc_context_t* ctx = nullptr;
  auto prepare = [&](nrt_cc_comm_t* comm, nrt_tensor_list_t* i, nrt_tensor_list_t* o, nrt_dtype_t dt,
                     nrt_op_type_t op, nrt_cc_op_type_t cc) {
    ctx = nullptr;
    return nrta_cc_prepare(comm, i, o, dt, op, cc, &ctx);
  };
  EXPECT_EQ(prepare(&two, &ins, &outs, NRT_DTYPE_FLOAT32, NRT_OP_ADD, NRT_CC_ALLREDUCE), NRT_INVALID);
  EXPECT_NE(std::string(nrt_get_last_error()).find("global communicator"), std::string::npos);
  EXPECT_EQ(prepare(&one, &ins, &outs, NRT_DTYPE_FLOAT32, NRT_OP_FMA, NRT_CC_ALLREDUCE), NRT_INVALID);
  EXPECT_NE(std::string(nrt_get_last_error()).find("FMA"), std::string::npos);
  EXPECT_EQ(prepare(&one, &ins, &outs, NRT_DTYPE_FLOAT32, NRT_OP_INVALID, NRT_CC_ALLREDUCE),
            NRT_INVALID);
  EXPECT_EQ(prepare(&one, &ins, &outs, NRT_DTYPE_INVALID, NRT_OP_ADD, NRT_CC_ALLREDUCE), NRT_INVALID);
  EXPECT_EQ(prepare(&one, &ins, &outs, NRT_DTYPE_FP8_E4, NRT_OP_ADD, NRT_CC_ALLREDUCE), NRT_INVALID);
  EXPECT_NE(std::string(nrt_get_last_error()).find("fp8"), std::string::npos);
  EXPECT_EQ(prepare(&one, &ins, &outs, NRT_DTYPE_FLOAT32, NRT_OP_ADD,
                    static_cast<nrt_cc_op_type_t>(9)),
            NRT_INVALID);
  EXPECT_EQ(prepare(&one, &ins, &big, NRT_DTYPE_FLOAT32, NRT_OP_ADD, NRT_CC_ALLREDUCE), NRT_INVALID);
  EXPECT_NE(std::string(nrt_get_last_error()).find("'c'"), std::string::npos);
  EXPECT_EQ(prepare(&one, nullptr, &outs, NRT_DTYPE_FLOAT32, NRT_OP_ADD, NRT_CC_ALLREDUCE),
            NRT_INVALID);
  nrt_tensor_list_t two_ins{&a, 1};
  nrt_tensor_t* pair[2] = {b, c};
  nrt_tensor_list_t two_outs{pair, 2};
  EXPECT_EQ(prepare(&one, &two_ins, &two_outs, NRT_DTYPE_FLOAT32, NRT_OP_ADD, NRT_CC_ALLREDUCE),
            NRT_INVALID);
  nrt_cc_comm_t out_of_group{group1, 1, 1, 0, 1, 0};
  EXPECT_EQ(prepare(&out_of_group, &ins, &outs, NRT_DTYPE_FLOAT32, NRT_OP_ADD, NRT_CC_ALLREDUCE),
            NRT_INVALID);
  uint32_t twice[2] = {0, 0};
  nrt_cc_comm_t repeated{twice, 0, 2, 0, 2, 0};
  EXPECT_EQ(prepare(&repeated, &ins, &outs, NRT_DTYPE_FLOAT32, NRT_OP_ADD, NRT_CC_ALLREDUCE),
            NRT_INVALID);
  nrt_cc_comm_t bad_core{group1, 0, 1, 0, 1, 7};
  EXPECT_EQ(prepare(&bad_core, &ins, &outs, NRT_DTYPE_FLOAT32, NRT_OP_ADD, NRT_CC_ALLREDUCE),
            NRT_INVALID);
  EXPECT_EQ(nrta_cc_prepare(&one, &ins, &outs, NRT_DTYPE_FLOAT32, NRT_OP_ADD, NRT_CC_ALLREDUCE,
                            nullptr),
            NRT_INVALID);
  // A group of one is a copy; fp8 moves through an all-gather.
  const float v[4] = {1.5f, -2, 3, 4};
  ASSERT_EQ(nrt_tensor_write(a, v, 0, sizeof v), NRT_SUCCESS);
  ASSERT_EQ(prepare(&one, &ins, &outs, NRT_DTYPE_FLOAT32, NRT_OP_MIN, NRT_CC_ALLREDUCE), NRT_SUCCESS)
      << nrt_get_last_error();
  ASSERT_EQ(RunPrepared(ctx), NRT_SUCCESS);
  float got[4];
  ASSERT_EQ(nrt_tensor_read(b, got, 0, sizeof got), NRT_SUCCESS);
  EXPECT_EQ(std::memcmp(got, v, sizeof v), 0);
  ASSERT_EQ(prepare(&one, &ins, &outs, NRT_DTYPE_FP8_E5, NRT_OP_ADD, NRT_CC_ALLGATHER), NRT_SUCCESS)
      << nrt_get_last_error();
  neuron::nrt_api::FreeCollective(ctx);
  // Single-device loads need no communicator.
  absl::StatusOr<std::string> neff = neuron::testing::BuildTestNeff(neuron::testing::kAddHlo);
  ASSERT_TRUE(neff.ok());
  nrt_model_t* model = nullptr;
  ASSERT_EQ(nrt_load_collectives(neff->data(), neff->size(), 0, -1, 0, 1, &model), NRT_SUCCESS)
      << nrt_get_last_error();
  EXPECT_EQ(nrt_unload(model), NRT_SUCCESS);
  for (nrt_tensor_t* t : {a, b, c}) nrt_tensor_free(&t);
}

// Two cores of this process: connect, move bytes, the pending limit, and a
// peer closing under a posted receive.
TEST_F(CollectivesApiTest, SendRecvBetweenTwoCoresOfOneProcess) {
  EnableSendRecv(2);
  ASSERT_NE(base_port_, 0);
  ASSERT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_SUCCESS) << nrt_get_last_error();
  ASSERT_EQ(nrt_async_sendrecv_init(0), NRT_SUCCESS) << nrt_get_last_error();
  ASSERT_EQ(nrt_async_sendrecv_init(1), NRT_SUCCESS) << nrt_get_last_error();
  EXPECT_EQ(nrt_async_sendrecv_init(1), NRT_FAILURE);
  EXPECT_EQ(nrt_async_sendrecv_init(9), NRT_INVALID);  // not a core of this runtime
  nrt_async_sendrecv_comm_t *send = nullptr, *recv = nullptr;
  ASSERT_EQ(nrt_async_sendrecv_connect("127.0.0.1", 1, 0, &send), NRT_SUCCESS);
  ASSERT_EQ(nrt_async_sendrecv_accept("127.0.0.1", 0, 1, &recv), NRT_SUCCESS);
  bool send_up = false, recv_up = false;
  ASSERT_TRUE(WaitFor([&] {
    EXPECT_EQ(nrt_async_sendrecv_test_comm(send, &send_up), NRT_SUCCESS) << nrt_get_last_error();
    EXPECT_EQ(nrt_async_sendrecv_test_comm(recv, &recv_up), NRT_SUCCESS) << nrt_get_last_error();
    return send_up && recv_up;
  }));

  // 3 MiB from a device tensor into a larger host tensor, at an offset.
  const size_t kBytes = 3u << 20;
  nrt_tensor_t *src = nullptr, *dst = HostTensor(kBytes + 64, "dst");
  ASSERT_EQ(nrt_tensor_allocate(NRT_TENSOR_PLACEMENT_DEVICE, 0, kBytes, "src", &src), NRT_SUCCESS);
  std::vector<uint8_t> pattern(kBytes);
  for (size_t i = 0; i < kBytes; ++i) pattern[i] = static_cast<uint8_t>(i * 7 + (i >> 12));
  ASSERT_EQ(nrt_tensor_write(src, pattern.data(), 0, kBytes), NRT_SUCCESS);
  nrt_async_sendrecv_request_t *sr = nullptr, *rr = nullptr;
  ASSERT_EQ(nrt_async_sendrecv_recv_tensor(dst, 16, kBytes + 48, recv, &rr), NRT_SUCCESS);
  nrt_async_sendrecv_request_t* bad = nullptr;
  EXPECT_EQ(nrt_async_sendrecv_send_tensor(src, 0, 8, recv, &bad), NRT_INVALID);  // wrong side
  EXPECT_EQ(nrt_async_sendrecv_send_tensor(src, 8, kBytes, send, &bad), NRT_INVALID);  // past the end
  ASSERT_EQ(nrt_async_sendrecv_send_tensor(src, 0, kBytes, send, &sr), NRT_SUCCESS);
  bool sdone = false, rdone = false;
  size_t ssize = 0, rsize = 0;
  ASSERT_TRUE(WaitFor([&] {
    if (!sdone) {
      EXPECT_EQ(nrt_async_sendrecv_test_request(sr, &sdone, &ssize), NRT_SUCCESS);
    }
    if (!rdone) {
      EXPECT_EQ(nrt_async_sendrecv_test_request(rr, &rdone, &rsize), NRT_SUCCESS);
    }
    return sdone && rdone;
  }));
  EXPECT_EQ(ssize, kBytes);
  EXPECT_EQ(rsize, kBytes);
  EXPECT_EQ(nrt_async_sendrecv_flush(1), NRT_SUCCESS);
  std::vector<uint8_t> got(kBytes);
  ASSERT_EQ(nrt_tensor_read(dst, got.data(), 16, kBytes), NRT_SUCCESS);
  EXPECT_TRUE(got == pattern);
  EXPECT_EQ(nrt_async_sendrecv_test_request(rr, &rdone, &rsize), NRT_INVALID_HANDLE);  // freed

  // Pending limit: receives wait for sends, so they stay in flight.
  int max_pending = 0;
  ASSERT_EQ(nrt_async_sendrecv_get_max_num_pending_request(&max_pending), NRT_SUCCESS);
  ASSERT_GT(max_pending, 0);
  nrt_tensor_t* small_src = HostTensor(8 * max_pending, "ss");
  nrt_tensor_t* small_dst = HostTensor(8 * max_pending, "sd");
  std::vector<uint64_t> values(max_pending);
  for (int i = 0; i < max_pending; ++i) values[i] = 0x1000 + i * 3;
  ASSERT_EQ(nrt_tensor_write(small_src, values.data(), 0, 8 * max_pending), NRT_SUCCESS);
  std::vector<nrt_async_sendrecv_request_t*> recvs(max_pending), sends(max_pending);
  for (int i = 0; i < max_pending; ++i) {
    ASSERT_EQ(nrt_async_sendrecv_recv_tensor(small_dst, 8 * i, 8, recv, &recvs[i]), NRT_SUCCESS);
  }
  nrt_async_sendrecv_request_t* extra = nullptr;
  EXPECT_EQ(nrt_async_sendrecv_recv_tensor(small_dst, 0, 8, recv, &extra), NRT_RESOURCE);
  EXPECT_NE(std::string(nrt_get_last_error()).find("in flight"), std::string::npos);
  for (int i = 0; i < max_pending; ++i) {
    ASSERT_EQ(nrt_async_sendrecv_send_tensor(small_src, 8 * i, 8, send, &sends[i]), NRT_SUCCESS);
  }
  for (int i = 0; i < max_pending; ++i) {
    for (auto* r : {sends[i], recvs[i]}) {
      bool d = false;
      size_t n = 0;
      ASSERT_TRUE(WaitFor([&] {
        EXPECT_EQ(nrt_async_sendrecv_test_request(r, &d, &n), NRT_SUCCESS) << nrt_get_last_error();
        return d;
      }));
      EXPECT_EQ(n, 8u);
    }
  }
  std::vector<uint64_t> received(max_pending);
  ASSERT_EQ(nrt_tensor_read(small_dst, received.data(), 0, 8 * max_pending), NRT_SUCCESS);
  EXPECT_EQ(received, values);

  // The sending core closes under a posted receive: it fails, no hang.
  ASSERT_EQ(nrt_async_sendrecv_recv_tensor(small_dst, 0, 8, recv, &rr), NRT_SUCCESS);
  EXPECT_EQ(nrt_async_sendrecv_close(0), NRT_SUCCESS) << nrt_get_last_error();
  NRT_STATUS last = NRT_SUCCESS;
  rdone = false;
  ASSERT_TRUE(WaitFor([&] {
    last = nrt_async_sendrecv_test_request(rr, &rdone, &rsize);
    return rdone || last != NRT_SUCCESS;
  }));
  EXPECT_EQ(last, NRT_FAILURE);
  EXPECT_NE(std::string(nrt_get_last_error()).find("closed"), std::string::npos)
      << nrt_get_last_error();
  EXPECT_EQ(nrt_async_sendrecv_send_tensor(src, 0, 8, send, &sr), NRT_INVALID_HANDLE);  // closed
  EXPECT_EQ(nrt_async_sendrecv_recv_tensor(small_dst, 0, 8, recv, &rr), NRT_FAILURE);
  EXPECT_EQ(nrt_async_sendrecv_close(1), NRT_SUCCESS) << nrt_get_last_error();
  EXPECT_EQ(nrt_async_sendrecv_flush(1), NRT_FAILURE);  // no longer initialized
  for (nrt_tensor_t* t : {src, dst, small_src, small_dst}) nrt_tensor_free(&t);
}

TEST_F(CollectivesApiTest, SendRecvLimitsTimeoutsAndTheExperimentalSwitch) {
  ASSERT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_SUCCESS);
  EXPECT_EQ(nrt_async_sendrecv_init(0), NRT_FAILURE);  // not enabled
  EXPECT_NE(std::string(nrt_get_last_error()).find("EXPERIMENTAL_ENABLED"), std::string::npos);
  nrt_close();

  EnableSendRecv(2);
  setenv("NEURON_RT_EXEC_TIMEOUT", "1", 1);
  ASSERT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_SUCCESS);
  ASSERT_EQ(nrt_async_sendrecv_init(0), NRT_SUCCESS) << nrt_get_last_error();
  int max_comms = 0;
  ASSERT_EQ(nrt_async_sendrecv_get_max_num_communicators_per_lnc(&max_comms), NRT_SUCCESS);
  ASSERT_GT(max_comms, 1);
  // Core 1 never starts send/recv: the connection times out.
  nrt_async_sendrecv_comm_t* lonely = nullptr;
  ASSERT_EQ(nrt_async_sendrecv_connect("127.0.0.1", 1, 0, &lonely), NRT_SUCCESS);
  NRT_STATUS s = NRT_SUCCESS;
  bool up = false;
  ASSERT_TRUE(WaitFor([&] {
    s = nrt_async_sendrecv_test_comm(lonely, &up);
    return s != NRT_SUCCESS || up;
  }));
  EXPECT_EQ(s, NRT_TIMEOUT);
  EXPECT_FALSE(up);
  nrt_async_sendrecv_request_t* req = nullptr;
  nrt_tensor_t* t = HostTensor(8, "t");
  EXPECT_EQ(nrt_async_sendrecv_send_tensor(t, 0, 8, lonely, &req), NRT_FAILURE);
  // The communicator limit counts that one too.
  std::vector<nrt_async_sendrecv_comm_t*> comms(max_comms - 1);
  for (auto& c : comms) ASSERT_EQ(nrt_async_sendrecv_accept("127.0.0.1", 1, 0, &c), NRT_SUCCESS);
  nrt_async_sendrecv_comm_t* extra = nullptr;
  EXPECT_EQ(nrt_async_sendrecv_accept("127.0.0.1", 1, 0, &extra), NRT_RESOURCE);
  EXPECT_EQ(nrt_async_sendrecv_connect("127.0.0.1", 1, 0, &extra), NRT_RESOURCE);
  EXPECT_EQ(nrt_async_sendrecv_connect("127.0.0.1", 1, 1, &extra), NRT_FAILURE);  // core 1 not started
  EXPECT_EQ(nrt_async_sendrecv_connect("", 1, 0, &extra), NRT_INVALID);
  // Unconnected communicators make close fail, and the core stays closed.
  EXPECT_EQ(nrt_async_sendrecv_close(0), NRT_FAILURE);
  EXPECT_NE(std::string(nrt_get_last_error()).find("never connected"), std::string::npos);
  EXPECT_EQ(nrt_async_sendrecv_test_comm(lonely, &up), NRT_INVALID_HANDLE);
  EXPECT_EQ(nrt_async_sendrecv_init(0), NRT_FAILURE);
  nrt_tensor_free(&t);
  nrt_close();  // clears it
  ASSERT_EQ(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", ""), NRT_SUCCESS);
  EXPECT_EQ(nrt_async_sendrecv_init(0), NRT_SUCCESS) << nrt_get_last_error();
  // nrt_close also ends send/recv left open.
}

// Two processes, each with its own core, both directions; then one
// process exits under the other's posted receive.
TEST_F(CollectivesApiTest, SendRecvBetweenTwoProcesses) {
  EnableSendRecv(2);
  ASSERT_NE(base_port_, 0);
  ExpectAllPassed(RunRanks(2, [](int rank) {
    RANK_CHECK(nrt_init(NRT_FRAMEWORK_TYPE_NO_FW, "", "") == NRT_SUCCESS);
    RANK_CHECK(nrt_async_sendrecv_init(rank) == NRT_SUCCESS);
    const int peer = 1 - rank;
    nrt_async_sendrecv_comm_t *send = nullptr, *recv = nullptr;
    RANK_CHECK(nrt_async_sendrecv_connect("127.0.0.1", peer, rank, &send) == NRT_SUCCESS);
    RANK_CHECK(nrt_async_sendrecv_accept("127.0.0.1", peer, rank, &recv) == NRT_SUCCESS);
    bool a = false, b = false;
    RANK_CHECK(WaitFor([&] {
      return nrt_async_sendrecv_test_comm(send, &a) == NRT_SUCCESS &&
             nrt_async_sendrecv_test_comm(recv, &b) == NRT_SUCCESS && a && b;
    }));
    const size_t kBytes = 1u << 20;
    nrt_tensor_t* out = HostTensor(kBytes, "out");
    nrt_tensor_t* in = HostTensor(kBytes, "in");
    std::vector<uint8_t> mine(kBytes), theirs(kBytes), got(kBytes);
    for (size_t i = 0; i < kBytes; ++i) {
      mine[i] = static_cast<uint8_t>(i * (rank + 3) + rank);
      theirs[i] = static_cast<uint8_t>(i * (peer + 3) + peer);
    }
    RANK_CHECK(nrt_tensor_write(out, mine.data(), 0, kBytes) == NRT_SUCCESS);
    nrt_async_sendrecv_request_t *sr = nullptr, *rr = nullptr;
    RANK_CHECK(nrt_async_sendrecv_recv_tensor(in, 0, kBytes, recv, &rr) == NRT_SUCCESS);
    RANK_CHECK(nrt_async_sendrecv_send_tensor(out, 0, kBytes, send, &sr) == NRT_SUCCESS);
    bool sd = false, rd = false;
    size_t sn = 0, rn = 0;
    RANK_CHECK(WaitFor([&] {
      if (!sd && nrt_async_sendrecv_test_request(sr, &sd, &sn) != NRT_SUCCESS) return true;
      if (!rd && nrt_async_sendrecv_test_request(rr, &rd, &rn) != NRT_SUCCESS) return true;
      return sd && rd;
    }));
    RANK_CHECK(sd && rd && sn == kBytes && rn == kBytes);
    RANK_CHECK(nrt_async_sendrecv_flush(rank) == NRT_SUCCESS);
    RANK_CHECK(nrt_tensor_read(in, got.data(), 0, kBytes) == NRT_SUCCESS);
    RANK_CHECK(got == theirs);
    if (rank == 0) {
      // Sends one last message and leaves without closing anything.
      RANK_CHECK(nrt_async_sendrecv_send_tensor(out, 0, 64, send, &sr) == NRT_SUCCESS);
      sd = false;
      RANK_CHECK(WaitFor([&] { return nrt_async_sendrecv_test_request(sr, &sd, &sn) != NRT_SUCCESS || sd; }));
      _exit(sd ? 0 : 1);
    }
    RANK_CHECK(nrt_async_sendrecv_recv_tensor(in, 0, 64, recv, &rr) == NRT_SUCCESS);
    rd = false;
    RANK_CHECK(WaitFor([&] { return nrt_async_sendrecv_test_request(rr, &rd, &rn) != NRT_SUCCESS || rd; }));
    RANK_CHECK(rd && rn == 64);
    // Rank 0 is gone: the next receive fails with a reason, no hang.
    RANK_CHECK(nrt_async_sendrecv_recv_tensor(in, 0, 64, recv, &rr) == NRT_SUCCESS);
    NRT_STATUS s = NRT_SUCCESS;
    rd = false;
    RANK_CHECK(WaitFor([&] {
      s = nrt_async_sendrecv_test_request(rr, &rd, &rn);
      return s != NRT_SUCCESS || rd;
    }));
    RANK_CHECK(s == NRT_FAILURE);
    RANK_CHECK(std::strstr(nrt_get_last_error(), "closed") != nullptr);
    RANK_CHECK(nrt_async_sendrecv_close(rank) == NRT_SUCCESS);
    nrt_tensor_free(&in);
    nrt_tensor_free(&out);
    return 0;
  }));
}

}  // namespace
