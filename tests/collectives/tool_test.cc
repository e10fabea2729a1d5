// neuron-allreduce end to end: usage errors, checks of every type and
// reduction, JSON, a failed check, launchers (explicit variables over
// loopback "hosts", mpirun when installed) and a rank killed mid-run.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "gtest/gtest.h"
#include "lib/collectives/dtype.h"
#include "tests/collectives/rank_harness.h"
#include "tests/support/tool_runner.h"

extern char** environ;

namespace neuron::collectives {
namespace {

using neuron::testing::RunTool;
using neuron::testing::ToolOptions;
using neuron::testing::ToolResult;

constexpr const char* kTool = "neuron-allreduce";

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(NeuronAllreduce, UsageErrors) {
  const std::vector<std::vector<std::string>> bad = {
      {},
      {"allr"},
      {"-r", "2", "bogus"},
      {"-r", "2", "allr", "allg"},
      {"-r", "0"},
      {"-r", "x"},
      {"-r"},
      {"-r", "2", "-d", "fp8"},
      {"-r", "2", "-f", "2", "-i", "4"},
      {"-r", "2", "-f", "1"},
      {"-r", "2", "-b", "1MB", "-e", "1kb"},
      {"-r", "2", "-b", "12xyz"},
      {"-r", "2", "-t", "p500"},
      {"-r", "2", "--op", "avg"},
      {"-r", "2", "-c", "sometimes"},
      {"-r", "2", "--frobnicate"},
      {"-r", "2", "-N", "2"},
  };
  for (const auto& args : bad) {
    ToolResult r = RunTool(kTool, args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.exit_code, 2) << joined << r.err;
    EXPECT_TRUE(Has(r.err, "neuron-allreduce: error: ")) << joined << r.err;
    EXPECT_FALSE(r.signaled);
  }
  ToolResult help = RunTool(kTool, {"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(Has(help.out, "usage: neuron-allreduce"));
  EXPECT_EQ(RunTool(kTool, {"--version"}).exit_code, 0);
}

TEST(NeuronAllreduce, LauncherVariables) {
  ToolOptions o;
  o.env = {{"NEURON_RANK", "0"}, {"NEURON_WORLD_SIZE", "2"}};
  auto t0 = std::chrono::steady_clock::now();
  ToolResult r = RunTool(kTool, {"allr", "-b", "8", "-e", "8"}, o);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Has(r.err, "NEURON_RT_ROOT_COMM_ID is not set")) << r.err;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5);

  o.env = {{"NEURON_RANK", "3"}, {"NEURON_WORLD_SIZE", "2"}};
  r = RunTool(kTool, {"allr"}, o);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Has(r.err, "NEURON_RANK=3")) << r.err;
  o.env = {{"NEURON_RANK", "1"}};
  EXPECT_EQ(RunTool(kTool, {"allr"}, o).exit_code, 2);
  o.env = {{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}};
  o.unset_env = {"SLURM_PROCID", "SLURM_NTASKS"};
  r = RunTool(kTool, {"-r", "4", "allr"}, o);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(Has(r.err, "Open MPI")) << r.err;
  o.env = {{"NEURON_RT_ROOT_COMM_ID", "not-an-address"}};
  r = RunTool(kTool, {"-r", "2", "allr", "-b", "8", "-e", "8"}, o);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Has(r.err, "NEURON_RT_ROOT_COMM_ID")) << r.err;
}

TEST(NeuronAllreduce, EveryTypeAndReductionChecksClean) {
  for (DataType t : kAllDataTypes) {
    for (ReduceOp op : kAllReduceOps) {
      ToolResult r = RunTool(kTool, {"-r", "2", "allr", "-b", "8", "-e", "300kb", "-f", "6",
                                     "-c", "random", "-d", DataTypeName(t), "--op",
                                     ReduceOpName(op), "-n", "2", "-w", "1"});
      ASSERT_EQ(r.exit_code, 0) << DataTypeName(t) << " " << ReduceOpName(op) << r.err;
      EXPECT_TRUE(Has(r.out, "Avg bus bandwidth:\t"));
    }
  }
}

TEST(NeuronAllreduce, TableColumnsAndEveryCollective) {
  ToolResult r = RunTool(kTool, {"-r", "2", "allr", "-b", "8", "-e", "1MB", "-f", "4", "-c",
                                 "random", "-d", "fp32", "-t", "avg", "p50", "p99",
                                 "--show-algorithm", "-n", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* col : {"size(B)", "count(elems)", "type", "time:avg(us)", "time:p50(us)",
                          "time:p99(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong",
                          "algorithm", "2^30", "direct", "zero-copy"}) {
    EXPECT_TRUE(Has(r.out, col)) << col << "\n" << r.out;
  }
  for (const char* op : {"allg", "redsct", "sendrecv", "permute"}) {
    for (const char* n : {"2", "3"}) {
      r = RunTool(kTool, {"-r", n, op, "-b", "4", "-e", "200kb", "-f", "7", "-c", "random",
                          "-d", "bf16", "-n", "2", "-w", "1"});
      EXPECT_EQ(r.exit_code, 0) << op << " -r " << n << r.err;
      EXPECT_TRUE(Has(r.out, " 0\n")) << r.out;
    }
  }
  // Unchecked runs say N/A; all_ones works.
  r = RunTool(kTool, {"-r", "2", "allr", "-b", "1kb", "-e", "1kb"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(Has(r.out, "N/A"));
  r = RunTool(kTool, {"-r", "3", "allr", "-b", "1kb", "-e", "4kb", "-c", "all_ones"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(NeuronAllreduce, JsonOutputs) {
  const std::string dir = neuron::testing::MakeTempDir();
  ToolResult r = RunTool(kTool, {"-r", "2", "allr", "-b", "1kb", "-e", "4kb", "-f", "2", "--json",
                                 "--report-to-json-file", dir + "/r.json", "-c", "random"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("{\"results\":[{\"size(B)\":1024,", 0), 0u) << r.out;
  EXPECT_TRUE(Has(r.out, "\"busbw(GB/s)\":"));
  EXPECT_TRUE(Has(r.out, "\"#wrong\":0"));
  std::ifstream f(dir + "/r.json");
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_EQ(ss.str(), r.out);
  r = RunTool(kTool, {"-r", "2", "allr", "--report-to-json-file", "/nonexistent/dir/x.json",
                      "-b", "8", "-e", "8"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Has(r.err, "/nonexistent/dir/x.json")) << r.err;
}

TEST(NeuronAllreduce, FailedCheckSavesTensorsAndFails) {
  ToolOptions o;
  o.cwd = neuron::testing::MakeTempDir();
  o.env = {{"NEURON_ALLREDUCE_INJECT_ERROR", "1"}};
  ToolResult r = RunTool(kTool, {"-r", "2", "allr", "-b", "64", "-e", "64", "-c", "random",
                                 "-d", "fp32"}, o);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Has(r.err, "1 errors found - test failed")) << r.err;
  for (const char* part : {"input", "output", "expected"}) {
    const std::string path = o.cwd + "/neuron-allreduce-allr-64B-rank0-" + part + ".npy";
    EXPECT_TRUE(std::filesystem::exists(path)) << path;
  }
  EXPECT_FALSE(std::filesystem::exists(o.cwd + "/neuron-allreduce-allr-64B-rank1-input.npy"));
}

// Starts the tool without waiting; output goes to files.
struct Spawned {
  pid_t pid = -1;
  std::string out, err;
};

Spawned Spawn(const std::vector<std::string>& args,
              const std::map<std::string, std::string>& env, const std::string& dir,
              const std::string& name) {
  Spawned s;
  s.out = dir + "/" + name + ".out";
  s.err = dir + "/" + name + ".err";
  std::vector<std::string> envs;
  for (char** e = environ; *e; ++e) {
    if (std::string(*e).rfind("NEURON_", 0) != 0) envs.push_back(*e);
  }
  for (const auto& [k, v] : env) envs.push_back(k + "=" + v);
  std::vector<std::string> argv = {neuron::testing::ToolDir() + "/" + kTool};
  argv.insert(argv.end(), args.begin(), args.end());
  s.pid = fork();
  if (s.pid == 0) {
    const int o = open(s.out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = open(s.err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(o, 1);
    dup2(e, 2);
    std::vector<char*> av, ev;
    for (auto& a : argv) av.push_back(a.data());
    for (auto& a : envs) ev.push_back(a.data());
    av.push_back(nullptr);
    ev.push_back(nullptr);
    execve(av[0], av.data(), ev.data());
    _exit(127);
  }
  return s;
}

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Waits for pid up to `limit` seconds; its exit code, or -1 after killing it.
int WaitFor(pid_t pid, double limit) {
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > limit) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

TEST(NeuronAllreduce, ThreeHostsWithExplicitVariables) {
  const std::string dir = neuron::testing::MakeTempDir();
  const std::string root = "127.0.0.1:" + std::to_string(testing::FreePort());
  std::vector<Spawned> ranks;
  for (int r = 0; r < 3; ++r) {
    ranks.push_back(Spawn({"allr", "-N", "3", "-b", "8", "-e", "1MB", "-f", "16", "-c", "random",
                           "-d", "fp32", "--show-algorithm", "-n", "3"},
                          {{"NEURON_RANK", std::to_string(r)},
                           {"NEURON_WORLD_SIZE", "3"},
                           {"NEURON_HOST_ADDR", "127.0.0." + std::to_string(r + 1)},
                           {"NEURON_RT_ROOT_COMM_ID", root},
                           {"NEURON_RT_EXEC_TIMEOUT", "20"}},
                          dir, "rank" + std::to_string(r)));
  }
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(WaitFor(ranks[r].pid, 60), 0) << Slurp(ranks[r].err);
  }
  const std::string table = Slurp(ranks[0].out);
  EXPECT_TRUE(Has(table, "3 rank(s) on 3 host(s)")) << table;
  EXPECT_TRUE(Has(table, "ring")) << table;
}

std::vector<pid_t> ChildrenOf(pid_t parent) {
  std::vector<pid_t> kids;
  DIR* d = opendir("/proc");
  if (d == nullptr) return kids;
  while (dirent* e = readdir(d)) {
    const pid_t pid = std::atoi(e->d_name);
    if (pid <= 0) continue;
    const std::string stat = Slurp("/proc/" + std::to_string(pid) + "/stat");
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream rest(stat.substr(paren + 2));
    char state;
    pid_t ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) kids.push_back(pid);
  }
  closedir(d);
  return kids;
}

TEST(NeuronAllreduce, KilledRankEndsTheRunWithTimeoutNamingIt) {
  const std::string dir = neuron::testing::MakeTempDir();
  const int timeout = 3;
  Spawned tool = Spawn({"-r", "3", "allr", "-b", "256kb", "-e", "256kb", "-n", "100000000",
                        "-w", "0", "-d", "fp32"},
                       {{"NEURON_RT_EXEC_TIMEOUT", std::to_string(timeout)}}, dir, "tool");
  std::vector<pid_t> kids;
  for (int i = 0; i < 500 && kids.size() < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    kids = ChildrenOf(tool.pid);
  }
  ASSERT_EQ(kids.size(), 3u);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const pid_t victim = kids[1];
  kill(victim, SIGKILL);
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = WaitFor(tool.pid, timeout + 10);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(rc, 1);
  EXPECT_LE(took, timeout + 2.0);
  const std::string err = Slurp(tool.err);
  // The launcher names the rank it lost; every other rank names the same.
  const std::string killed = "(pid " + std::to_string(victim) + ") was killed by signal 9";
  const size_t at = err.find(killed);
  ASSERT_NE(at, std::string::npos) << err;
  const size_t start = err.rfind("rank ", at);
  const std::string lost = err.substr(start, at - start - 1);  // "rank N"
  int named = 0;
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);) {
    if (Has(line, "NRT_TIMEOUT") && Has(line, lost + " lost")) ++named;
  }
  EXPECT_EQ(named, 2) << err;
  for (pid_t k : kids) EXPECT_NE(kill(k, 0), 0) << "pid " << k << " is still running";
}

TEST(NeuronAllreduce, UnderMpirun) {
  if (system("command -v mpirun >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "NOTICE: mpirun is not installed (Debian openmpi-bin); skipping";
  }
  const std::string dir = neuron::testing::MakeTempDir();
  const std::string root = "127.0.0.1:" + std::to_string(testing::FreePort());
  const std::string cmd =
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 mpirun "
      "--oversubscribe -np 4 -x NEURON_RT_ROOT_COMM_ID=" + root + " " +
      neuron::testing::ToolDir() + "/neuron-allreduce allr -b 8 -e 1MB -f 32 -c random "
      "-d fp32 -n 2 -w 1 > " + dir + "/out 2> " + dir + "/err";
  const int rc = system(cmd.c_str());
  EXPECT_EQ(rc, 0) << Slurp(dir + "/err");
  EXPECT_TRUE(Has(Slurp(dir + "/out"), "4 rank(s) on 1 host(s)")) << Slurp(dir + "/out");
}

}  // namespace
}  // namespace neuron::collectives
