// The compile cache's staging: a compile killed between creating its
// staging directory and renaming it into place leaves the directory; the
// next store into the cache removes it once its writer is gone, and leaves
// a running compile's alone.
#include "lib/compiler/cache.h"

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "lib/support/writer_tag.h"
#include "tests/support/tool_runner.h"

namespace neuron::compiler {
namespace {

namespace fs = std::filesystem;

// The writer tag of a process of this host that has exited.
std::string DeadWriterTag() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  const std::string mine = WriterTag();
  return mine.substr(0, mine.find('.') + 1) + std::to_string(child);
}

TEST(CompileCache, StoresSweepWhatKilledCompilesLeft) {
  const std::string root = testing::MakeTempDir();
  CompileCache cache(root, "2.0");
  const std::string key = CompileCache::Key("2.0", {}, "module");
  const fs::path dir = fs::path(cache.EntryDir(key)).parent_path();
  fs::create_directories(dir);
  const std::string dead = DeadWriterTag();
  const fs::path staging = dir / (".tmp-" + key + "-" + dead + "-0000abcd");
  const fs::path evicted = dir / (".evicted-" + dead + "-00001234");
  const fs::path running = dir / (".tmp-" + key + "-" + WriterTag() + "-0000beef");
  for (const fs::path& d : {staging, evicted, running}) {
    fs::create_directory(d);
    std::ofstream(d / "model.neff") << "partial";
  }

  ASSERT_TRUE(cache.StoreSuccess(CompileCache::Key("2.0", {}, "other"), "neff", "log").ok());
  EXPECT_FALSE(fs::exists(staging));
  EXPECT_FALSE(fs::exists(evicted));
  EXPECT_TRUE(fs::exists(running)) << "a running compile's staging was removed";
  EXPECT_EQ(cache.Lookup(CompileCache::Key("2.0", {}, "other")).kind, CacheEntry::kSuccess);
}

}  // namespace
}  // namespace neuron::compiler
