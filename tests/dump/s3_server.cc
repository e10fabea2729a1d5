#include "tests/dump/s3_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "tests/support/tool_runner.h"

namespace neuron::testing {
namespace {

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

bool WaitForPort(int port) {
  for (int i = 0; i < 300; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    close(fd);
    if (ok) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// Cuts each of the first N connections once a little of the request has
// arrived (or 300 ms passed), then forwards the rest untouched.
constexpr const char* kDropProxy = R"JS('use strict';
const net = require('net');
const [listen, upstream, drops] = process.argv.slice(2).map(Number);
let seen = 0;
net.createServer(c => {
  if (seen++ < drops) {
    let got = 0;
    const cut = () => c.destroy();
    const timer = setTimeout(cut, 300);
    c.on('data', d => { got += d.length; if (got > 2048) { clearTimeout(timer); cut(); } });
    c.on('error', () => {});
    return;
  }
  const u = net.connect(upstream, '127.0.0.1');
  c.pipe(u); u.pipe(c);
  u.on('error', () => c.destroy()); c.on('error', () => u.destroy());
}).listen(listen, '127.0.0.1');
)JS";

}  // namespace

pid_t S3Server::Spawn(const std::vector<std::string>& argv, const std::string& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    setpgid(0, 0);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  if (pid > 0) pids_.push_back(pid);
  return pid;
}

std::unique_ptr<S3Server> S3Server::Start(std::string* why) {
  const std::string shared = SharedDir();
  const std::string proxy = shared + "/testing/sigv4-proxy.js";
  if (shared.empty() || !Exists(proxy)) {
    *why = "../shared/testing is absent; skipping the S3 upload test";
    return nullptr;
  }
  if (system("node --version >/dev/null 2>&1") != 0) {
    *why = "node is not installed; skipping the S3 upload test";
    return nullptr;
  }
  // Installed once per build directory, never in the repository.
  const std::string cache = ToolDir() + "/.npm-s3rver";
  const std::string bin = cache + "/node_modules/.bin/s3rver";
  if (!Exists(bin)) {
    const std::string cmd = absl::StrCat(
        "mkdir -p '", cache, "' && cd '", cache,
        "' && timeout 300 npm install --no-audit --no-fund --prefix . s3rver@3 >npm.log 2>&1");
    if (system(cmd.c_str()) != 0 || !Exists(bin)) {
      *why = absl::StrCat("npm could not install s3rver into ", cache,
                          " (see npm.log there); skipping the S3 upload test");
      return nullptr;
    }
  }
  std::unique_ptr<S3Server> s(new S3Server());
  s->dir_ = MakeTempDir();
  const int s3_port = FreePort(), proxy_port = FreePort();
  s->Spawn({bin, "-d", s->dir_ + "/data", "-a", "127.0.0.1", "-p", absl::StrCat(s3_port),
            "--silent", "--configure-bucket", kBucket},
           s->dir_ + "/s3rver.log");
  s->Spawn({"node", proxy, absl::StrCat(proxy_port), absl::StrCat(s3_port)},
           s->dir_ + "/proxy.log");
  if (!WaitForPort(s3_port) || !WaitForPort(proxy_port)) {
    *why = absl::StrCat("s3rver or the signing proxy did not start (logs in ", s->dir_, ")");
    return nullptr;
  }
  s->endpoint_ = absl::StrCat("http://127.0.0.1:", proxy_port);
  return s;
}

std::string S3Server::StartDroppingProxy(int drops) {
  const std::string script = dir_ + "/drop-proxy.js";
  std::ofstream(script) << kDropProxy;
  const int port = FreePort();
  const std::string upstream = endpoint_.substr(endpoint_.rfind(':') + 1);
  Spawn({"node", script, absl::StrCat(port), upstream, absl::StrCat(drops + 1)},
        dir_ + "/drop.log");
  if (!WaitForPort(port)) return "";
  // The readiness probe was the first connection: it counted as a drop.
  return absl::StrCat("http://127.0.0.1:", port);
}

S3Server::~S3Server() {
  for (pid_t pid : pids_) {
    kill(-pid, SIGTERM);
    kill(pid, SIGTERM);
  }
  for (pid_t pid : pids_) waitpid(pid, nullptr, 0);
}

}  // namespace neuron::testing
