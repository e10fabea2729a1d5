// gtest main shared by every test binary.
//
// Core dumps are on by default (NEURON_RT_LOCAL_CORE_DUMP_DIRECTORY,
// under /tmp), and many tests make executions fail on purpose: each test
// process points the dumps at a directory of its own, removed at exit, so
// the suite leaves nothing behind. Tools the tests start inherit it (see
// tool_runner.cc); tests about dumps set their own.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base ? base : "/tmp") + "/neuron-test-dumps-XXXXXX";
  static std::string dump_root;
  if (mkdtemp(tmpl.data()) != nullptr) {
    dump_root = tmpl;
    setenv("NEURON_RT_LOCAL_CORE_DUMP_DIRECTORY", (dump_root + "/dt-%d-cid-%c").c_str(), 1);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(dump_root, ec);
    });
  }
  return RUN_ALL_TESTS();
}
