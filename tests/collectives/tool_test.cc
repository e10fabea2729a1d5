// neuron-allreduce end to end: usage errors, checks of every type and
// reduction, JSON, a failed check, launchers (explicit variables over
// loopback "hosts", mpirun when installed, --hosts through mpirun) and a
// rank killed mid-run; and the flags and hosts files of --hosts.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "gtest/gtest.h"
#include "lib/collectives/dtype.h"
#include "nlohmann/json.hpp"
#include "tests/collectives/rank_harness.h"
#include "tests/support/svg_text.h"
#include "tests/support/tool_runner.h"
#include "tools/neuron-allreduce/bench_flags.h"
#include "tools/neuron-allreduce/host_launch.h"

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
      {"-r", "2", "--plot-compare", "a.json"},
      {"-r", "2", "--plot", "-"},
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

// --plot draws this run beside earlier reports; stdout keeps the table.
TEST(NeuronAllreduce, PlotDrawsTheRunBesideEarlierReports) {
  const std::string dir = neuron::testing::MakeTempDir();
  const std::string before = dir + "/before.json", svg_path = dir + "/bw.svg";
  ToolResult r = RunTool(kTool, {"-r", "2", "allr", "-b", "1kb", "-e", "16kb", "-f", "4", "-n",
                                 "5", "--report-to-json-file", before});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunTool(kTool, {"-r", "2", "allr", "-b", "1kb", "-e", "16kb", "-f", "4", "-n", "5", "-d",
                      "fp32", "--plot", svg_path, "--plot-compare", before});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("# allr: 2 rank(s)", 0), 0u) << r.out;
  EXPECT_FALSE(Has(r.out, "<svg"));
  EXPECT_EQ(r.err, "");
  std::ifstream in(svg_path);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_TRUE(neuron::testing::IsWholeSvg(ss.str()));
  const std::string text = neuron::testing::SvgVisibleText(ss.str());
  EXPECT_TRUE(Has(text, "this run: allr fp32 sum, 2 ranks")) << text;
  EXPECT_TRUE(Has(text, before + ": allr uint8 sum, 2 ranks")) << text;
  EXPECT_TRUE(Has(text, "16 KiB")) << text;

  // A report that is not one fails before the sweep, naming the file.
  const std::string bad = dir + "/bad.json";
  std::ofstream(bad) << "{\"op\":\"allr\"}";
  r = RunTool(kTool, {"-r", "2", "-b", "1kb", "-e", "1kb", "--plot", dir + "/x.svg",
                      "--plot-compare", bad});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Has(r.err, "neuron-allreduce: error: --plot-compare '" + bad + "'")) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(std::filesystem::exists(dir + "/x.svg"));
  r = RunTool(kTool, {"-r", "2", "-b", "1kb", "-e", "1kb", "--plot", dir + "/none/x.svg"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Has(r.err, dir + "/none/x.svg")) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// Without -n each size runs enough iterations to be stable (a small size
// far more than a large one), and the table shows the median beside the
// mean; -n still fixes the count.
TEST(NeuronAllreduce, IterationsPerSizeAndTheMedian) {
  EXPECT_EQ(neuron::collectives::AutoIterations(1e-6), neuron::collectives::kAutoMaxIterations);
  EXPECT_EQ(neuron::collectives::AutoIterations(1e-3), 100);
  EXPECT_EQ(neuron::collectives::AutoIterations(1.0), neuron::collectives::kAutoMinIterations);
  EXPECT_EQ(neuron::collectives::AutoIterations(0), neuron::collectives::kAutoMaxIterations);

  ToolResult r = RunTool(kTool, {"-r", "2", "allr", "-b", "8", "-e", "32MB", "-f", "4096", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json rows = nlohmann::json::parse(r.out)["results"];
  ASSERT_EQ(rows.size(), 3u) << r.out;
  for (const nlohmann::json& row : rows) {
    EXPECT_GE(row["iters"].get<int>(), neuron::collectives::kAutoMinIterations) << row;
    EXPECT_LE(row["iters"].get<int>(), neuron::collectives::kAutoMaxIterations) << row;
    EXPECT_TRUE(row.contains("time:p50(us)")) << row;
    EXPECT_GT(row["time:p50(us)"].get<double>(), 0) << row;
  }
  EXPECT_GT(rows[0]["iters"].get<int>(), rows[2]["iters"].get<int>()) << r.out;

  r = RunTool(kTool, {"-r", "2", "allr", "-b", "64", "-e", "64"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "time:avg(us)  time:p50(us)")) << r.out;
  EXPECT_TRUE(Has(r.out, "per size")) << r.out;

  r = RunTool(kTool, {"-r", "2", "allr", "-b", "8", "-e", "32MB", "-f", "4096", "-n", "7", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The parsed document must outlive the loop over its member.
  const nlohmann::json report = nlohmann::json::parse(r.out);
  for (const nlohmann::json& row : report["results"]) EXPECT_EQ(row["iters"], 7);
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

// ParseBenchFlags over a command line given as words.
int Parse(std::vector<std::string> words, BenchFlags* flags) {
  words.insert(words.begin(), kTool);
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  return ParseBenchFlags(static_cast<int>(words.size()), argv.data(), flags);
}

TEST(NeuronAllreduceHosts, HostFlagsAreTheLaunchersNotTheRanks) {
  BenchFlags f;
  ASSERT_EQ(Parse({"-r", "4", "-N", "2", "-d", "fp32", "allr", "--hosts", "10.1.4.145",
                   "10.1.4.138", "-b", "8"}, &f), -1);
  EXPECT_EQ(f.hosts, (std::vector<std::string>{"10.1.4.145", "10.1.4.138"}));
  EXPECT_EQ(f.rank_args,
            (std::vector<std::string>{"-r", "4", "-N", "2", "-d", "fp32", "allr", "-b", "8"}));
  EXPECT_EQ(f.nranks, 4);
  EXPECT_EQ(f.type, DataType::kF32);
  EXPECT_EQ(f.algorithm, "auto");

  // -s, commas, --hosts=, and the collective ends the list.
  f = BenchFlags();
  ASSERT_EQ(Parse({"-r", "6", "-s", "a,b", "c", "allg", "--hosts=d,e"}, &f), -1);
  EXPECT_EQ(f.hosts, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
  EXPECT_EQ(f.op, BenchOp::kAllGather);
  EXPECT_EQ(f.rank_args, (std::vector<std::string>{"-r", "6", "allg"}));

  f = BenchFlags();
  ASSERT_EQ(Parse({"-r", "2", "--hosts-file", "/etc/h", "--algorithm", "rdh"}, &f), -1);
  EXPECT_EQ(f.hosts_file, "/etc/h");
  EXPECT_TRUE(f.hosts.empty());
  EXPECT_EQ(f.algorithm, "rdh");
  EXPECT_EQ(f.rank_args, (std::vector<std::string>{"-r", "2", "--algorithm", "rdh"}));
  f = BenchFlags();
  ASSERT_EQ(Parse({"--hosts-file=/x", "--algorithm", "hier", "-r", "2"}, &f), -1);
  EXPECT_EQ(f.hosts_file, "/x");
  EXPECT_EQ(f.algorithm, "hier");

  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{{"-r", "2", "--hosts"},
                                             {"-r", "2", "--hosts", "allr"},
                                             {"-r", "2", "-s", "-d", "fp32"},
                                             {"-r", "2", "--hosts-file"},
                                             {"-r", "2", "--algorithm", "tree"},
                                             {"-r", "2", "--algorithm"}}) {
    f = BenchFlags();
    EXPECT_EQ(Parse(bad, &f), 2) << bad.back();
  }
}

TEST(NeuronAllreduceHosts, HostsFiles) {
  auto hosts = ParseHostsFile(
      "# the cluster\n"
      "10.0.0.1\n"
      "\n"
      "   10.0.0.2 slots=2   # two of them\n"
      "\t\n"
      "node3 slots=4 max_slots=8\r\n"
      "node4#no space before the comment\n",
      "hosts");
  ASSERT_TRUE(hosts.ok()) << hosts.status();
  EXPECT_EQ(*hosts, (std::vector<std::string>{"10.0.0.1", "10.0.0.2", "node3", "node4"}));

  struct Bad { const char* text; const char* says; };
  for (const Bad& b : {Bad{"a\nb slots=x\n", "hosts:2: 'slots=x'"},
                       Bad{"a slots=0\n", "hosts:1: 'slots=0'"},
                       Bad{"a\n\nb cpus=3\n", "hosts:3: 'cpus=3'"},
                       Bad{"a b\n", "hosts:1: 'b'"},
                       Bad{"a\nb\na slots=2\n", "hosts:3: host 'a' is listed twice"},
                       Bad{"# nothing\n\n", "hosts: names no host"},
                       Bad{"", "hosts: names no host"}}) {
    auto r = ParseHostsFile(b.text, "hosts");
    ASSERT_FALSE(r.ok()) << b.text;
    EXPECT_TRUE(Has(std::string(r.status().message()), b.says)) << r.status();
  }
  const std::string dir = neuron::testing::MakeTempDir();
  std::ofstream(dir + "/hosts") << "h1\nh2 slots=8\n";
  hosts = ReadHostsFile(dir + "/hosts");
  ASSERT_TRUE(hosts.ok()) << hosts.status();
  EXPECT_EQ(*hosts, (std::vector<std::string>{"h1", "h2"}));
  hosts = ReadHostsFile(dir + "/absent");
  ASSERT_FALSE(hosts.ok());
  EXPECT_TRUE(Has(std::string(hosts.status().message()), dir + "/absent")) << hosts.status();
}

config::EnvLookup EnvOf(std::map<std::string, std::string> vars) {
  return [vars](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(NeuronAllreduceHosts, MpirunCommandLine) {
  HostLaunch l{{"h1", "h2"}, 4, 2, "/opt/bin/neuron-allreduce", {"-r", "4", "allr", "-b", "8"}};
  const std::map<std::string, std::string> vars = {
      {"NEURON_RT_ROOT_COMM_ID", "h1:45654"},
      {"NEURON_MPIRUN", "/opt/ompi/bin/mpirun"},
      {"NEURON_MPIRUN_ARGS", " --mca plm_rsh_agent /x/netns-rsh\t--oversubscribe "}};
  const std::vector<std::string> names = {
      "PATH", "NEURON_RT_ROOT_COMM_ID", "NEURON_RT_EXEC_TIMEOUT", "NEURON_HOST_ADDR",
      "NEURON_RANK_HINT", "NEURON_MPIRUN", "NEURON_MPIRUN_ARGS", "NEURON_LOCAL_RANK",
      "NEURON_RT_EXEC_TIMEOUT"};
  auto argv = MpirunArgv(l, EnvOf(vars), names);
  ASSERT_TRUE(argv.ok()) << argv.status();
  EXPECT_EQ(*argv, (std::vector<std::string>{
                       "/opt/ompi/bin/mpirun", "--mca", "plm_rsh_agent", "/x/netns-rsh",
                       "--oversubscribe", "-np", "4", "--host", "h1:2,h2:2",
                       "-x", "NEURON_RANK_HINT", "-x", "NEURON_RT_EXEC_TIMEOUT",
                       "-x", "NEURON_RT_ROOT_COMM_ID",
                       "/opt/bin/neuron-allreduce", "-r", "4", "allr", "-b", "8"}));
  // mpirun from PATH by default; -N may be left out.
  l.nnodes = 0;
  argv = MpirunArgv(l, EnvOf({{"NEURON_RT_ROOT_COMM_ID", "h1:1"}}), {"NEURON_RT_ROOT_COMM_ID"});
  ASSERT_TRUE(argv.ok()) << argv.status();
  EXPECT_EQ((*argv)[0], "mpirun");
  EXPECT_EQ((*argv)[1], "-np");

  struct Bad { HostLaunch launch; const char* says; };
  for (const Bad& b : {Bad{{{"h1", "h2"}, 0, 0, "x", {}}, "needs -r NRANKS"},
                       Bad{{{"a", "b", "c", "d"}, 6, 0, "x", {}}, "-r 6 does not spread evenly over 4 hosts"},
                       Bad{{{"a", "b"}, 4, 3, "x", {}}, "-N 3 but 2 host(s)"},
                       Bad{{{"a", "a"}, 2, 0, "x", {}}, "'a' twice"},
                       Bad{{{"a:2"}, 2, 0, "x", {}}, "'a:2'"},
                       Bad{{{}, 2, 0, "x", {}}, "no host"}}) {
    auto r = MpirunArgv(b.launch, EnvOf(vars), names);
    ASSERT_FALSE(r.ok()) << b.says;
    EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();
    EXPECT_TRUE(Has(std::string(r.status().message()), b.says)) << r.status();
  }
  auto r = MpirunArgv(l, EnvOf({}), {});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(r.status())) << r.status();
  EXPECT_TRUE(Has(std::string(r.status().message()), "NEURON_RT_ROOT_COMM_ID is not set"));
}

TEST(NeuronAllreduceHosts, ToolLaunchesThroughMpirun) {
  ToolOptions o;
  // Command-line mistakes: exit 2, one error line.
  o.env = {{"NEURON_RT_ROOT_COMM_ID", "a:45654"}};
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"-r", "3", "allr", "--hosts", "a", "b"},
           {"allr", "--hosts", "a", "b"},
           {"-r", "2", "-N", "3", "allr", "--hosts", "a", "b"},
           {"-r", "2", "--hosts", "a", "b", "--hosts-file", "/etc/hosts"},
           {"-r", "2", "allr", "--algorithm", "tree"}}) {
    ToolResult r = RunTool(kTool, args, o);
    EXPECT_EQ(r.exit_code, 2) << args[1] << r.err;
    EXPECT_EQ(r.err.rfind("neuron-allreduce: error: ", 0), 0u) << r.err;
  }
  ToolResult r = RunTool(kTool, {"-r", "2", "allr", "--hosts", "a", "b"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(Has(r.err, "NEURON_RT_ROOT_COMM_ID is not set")) << r.err;
  r = RunTool(kTool, {"-r", "2", "allr", "--hosts-file", "/nonexistent/hosts"}, o);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Has(r.err, "/nonexistent/hosts")) << r.err;

  // The command it runs, printed by echo in mpirun's place; this process's
  // own address stays behind, and the job's secret, made here, goes by name.
  o.env = {{"NEURON_RT_ROOT_COMM_ID", "a:45654"},
           {"NEURON_MPIRUN", "echo"},
           {"NEURON_HOST_ADDR", "10.0.0.9"},
           {"NEURON_RT_EXEC_TIMEOUT", "7"}};
  o.unset_env = {"NEURON_RT_LOCAL_CORE_DUMP_DIRECTORY"};  // the harness's own
  r = RunTool(kTool, {"-r", "4", "allr", "-b", "8", "-e", "8", "--hosts", "a", "b"}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string self = std::filesystem::canonical(neuron::testing::ToolDir() + "/" + kTool);
  EXPECT_EQ(r.out, "-np 4 --host a:2,b:2 -x NEURON_RT_EXEC_TIMEOUT -x NEURON_RT_ROOT_COMM_ID "
                   "-x NEURON_TOOLS_JOB_SECRET " +
                       self + " -r 4 allr -b 8 -e 8\n");
  o.env["NEURON_MPIRUN"] = "/nonexistent/mpirun";
  r = RunTool(kTool, {"-r", "2", "allr", "--hosts", "a"}, o);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(Has(r.err, "cannot run /nonexistent/mpirun")) << r.err;
}

TEST(NeuronAllreduceHosts, HostsLocalhostUnderMpirun) {
  if (system("command -v mpirun >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "NOTICE: mpirun is not installed (Debian openmpi-bin); skipping";
  }
  ToolOptions o;
  o.env = {{"NEURON_RT_ROOT_COMM_ID", "127.0.0.1:" + std::to_string(testing::FreePort())},
           {"NEURON_MPIRUN_ARGS", "--oversubscribe --allow-run-as-root"},
           {"NEURON_RT_EXEC_TIMEOUT", "20"}};
  const std::string dir = neuron::testing::MakeTempDir();
  std::ofstream(dir + "/hosts") << "# one host, two ranks\nlocalhost slots=2\n";
  ToolResult r = RunTool("/usr/bin/timeout",
                         {"120", neuron::testing::ToolDir() + "/" + kTool, "-r", "2", "allr",
                          "-b", "8", "-e", "64kb", "-f", "8", "-c", "random", "-d", "fp32",
                          "--algorithm", "ring", "--hosts-file", dir + "/hosts", "-n", "2"}, o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "2 rank(s) on 1 host(s)")) << r.out;
}

}  // namespace
}  // namespace neuron::collectives
