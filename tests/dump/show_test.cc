// neuron-dump show on NEFFs (ours, and one laid out like the real
// compiler's: gzip'd tar, packaging 1, unknown feature bits), input-dump
// manifests, and input that is none of these.
#include <fstream>

#include "gtest/gtest.h"
#include "lib/neff/header.h"
#include "nlohmann/json.hpp"
#include "tests/neff/test_archives.h"
#include "tests/runtime/test_neff.h"
#include "tests/support/tool_runner.h"

namespace neuron::dump {
namespace {

using testing::RunTool;
using testing::ToolResult;

std::string Write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// A NEFF as the real neuronx-cc writes it: packaging 1 (tar.gz + sha256).
std::string RealCompilerNeff() {
  const std::string payload = neff_test::Gzip(neff_test::RawTar({
      {"neff.json", '0', R"({"version": "2.0"})"},
      {"kelf-a.json", '0', "{}"},
      {"sg00/def.json", '0', R"({"var": {}})"},
      {"sg01/def.json", '0', R"({"var": {}})"},
  }));
  neff::Header h;
  h.pkg_version = neff::kPkgTgzSha256;
  h.data_size = payload.size();
  h.version_major = 2;
  h.version_minor = 0;
  h.build_version = "2.15.128.0+56dc5a86";
  h.num_tpb = 2;
  h.name = "bert_graph";
  h.requested_tpb_count = 2;
  h.tpb_per_node[0] = 2;
  h.feature_bits = 0x100;
  h.lnc_size = 2;
  for (int i = 0; i < 16; ++i) h.uuid[i] = static_cast<uint8_t>(i);
  return *neff::EncodeHeader(h) + payload;
}

TEST(Show, OurNeffWithManifestAndOperators) {
  const std::string dir = testing::MakeTempDir();
  const std::string f = Write(dir + "/add.neff", *testing::BuildTestNeff(testing::kAddHlo));
  ToolResult r = RunTool("neuron-dump", {"show", "--json", f});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kind"], "neff");
  EXPECT_EQ(j["header"]["name"], "add");
  EXPECT_EQ(j["manifest"]["inputs"].size(), 2u);
  EXPECT_EQ(j["operators"]["add"], 1);
  // Options go after the operands too (GNU style), with the same result.
  ToolResult after = RunTool("neuron-dump", {"show", f, "--json"});
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.out, r.out);
  r = RunTool("neuron-dump", {"show", f});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("neff.json"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("operators"), std::string::npos) << r.out;
}

TEST(Show, LoadableHereSaysWhyNot) {
  const std::string dir = testing::MakeTempDir();
  const std::string neff = *testing::BuildTestNeff(testing::kAddHlo);
  testing::TestNeffOptions trn2;
  trn2.target = "trn2";
  trn2.lnc = 2;
  struct Case {
    std::string name, bytes;
    bool loadable;
    const char* because;
  };
  const Case cases[] = {
      {"ok.neff", neff, true, ""},
      {"trn2.neff", *testing::BuildTestNeff(testing::kAddHlo, trn2), false,
       "compiled for trn2, this device is trn1 (trn1.2xlarge; set NEURON_SIM_INSTANCE_TYPE=trn2"},
      {"cut.neff", neff.substr(0, neff.size() - 100), false, "truncated"},
      // Cut inside the header: still described as a NEFF, not refused.
      {"head.neff", neff.substr(0, 927), false, "NEFF is truncated: 927 bytes"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    ToolResult r = RunTool("neuron-dump", {"show", "--json", Write(dir + "/" + c.name, c.bytes)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["loadable_here"], c.loadable) << r.out;
    if (!c.loadable) {
      EXPECT_NE(j.value("not_loadable_because", "").find(c.because), std::string::npos) << r.out;
    }
  }
  // On a simulated trn2 the trn2 NEFF is the loadable one.
  testing::ToolOptions on_trn2;
  on_trn2.env["NEURON_SIM_INSTANCE_TYPE"] = "trn2.48xlarge";
  ToolResult r = RunTool("neuron-dump", {"show", "--json", dir + "/trn2.neff"}, on_trn2);
  EXPECT_EQ(nlohmann::json::parse(r.out)["loadable_here"], true) << r.out;
}

TEST(Show, RealCompilerNeffHeaderAndMembers) {
  const std::string dir = testing::MakeTempDir();
  const std::string f = Write(dir + "/real.neff", RealCompilerNeff());
  ToolResult r = RunTool("neuron-dump", {"show", f});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("built by    2.15.128.0+56dc5a86"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("LNC         2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0x100"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sg01/def.json"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("loadable    no"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("00010203-0405-0607-0809-0a0b0c0d0e0f"), std::string::npos) << r.out;
  // Also from stdin.
  testing::ToolOptions o;
  o.stdin_data = RealCompilerNeff();
  r = RunTool("neuron-dump", {"show", "--json", "-"}, o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["header"]["lnc_size"], 2);
}

TEST(Show, BadInputIsOneErrorLine) {
  const std::string dir = testing::MakeTempDir();
  const std::string neff = RealCompilerNeff();
  const std::vector<std::string> bad = {
      "", "not anything", std::string("\x28\xb5\x2f\xfd garbage", 12), neff.substr(0, 1024),
      neff.substr(0, 1100), R"({"format": "neuron-input-dump"})", std::string(5000, '\xff')};
  for (size_t i = 0; i < bad.size(); ++i) {
    const std::string f = Write(dir + "/bad" + std::to_string(i), bad[i]);
    ToolResult r = RunTool("neuron-dump", {"show", f});
    EXPECT_FALSE(r.signaled) << i;
    if (r.exit_code == 0) {
      EXPECT_NE(r.out.find("NEFF"), std::string::npos) << i;  // header readable, members not
    } else {
      EXPECT_EQ(r.exit_code, 1) << i;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << i << ": " << r.err;
      EXPECT_NE(r.err.find(f), std::string::npos) << r.err;
    }
  }
  ToolResult r = RunTool("neuron-dump", {"show", dir + "/missing"});
  EXPECT_EQ(r.exit_code, 1);
  r = RunTool("neuron-dump", {"show"});
  EXPECT_EQ(r.exit_code, 2);
}

}  // namespace
}  // namespace neuron::dump
